"""The pipeline's three stages, each a module that uses only the ones before it.

- `text`: bytes to text (PEP 263, a BOM) and the prefilter, the one "is this file worth
  running" decision;
- `file`: one file's text through the engine, fix verification and suppressions: what a user
  is shown for it (the CLI, the fixer and the language server all go through here);
- `files`: many files, on every core, with the fixes each would get.
"""
