"""The language server (`mmalint server`); needs the `lsp` extra (pygls, lsprotocol)."""
