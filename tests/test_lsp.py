"""The language server end to end: a real LSP client (pygls) talks to `python -m mmalint server`
over stdio, as an editor does."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import _kernels as k
import pytest

pytest.importorskip("pygls", reason="the language server needs the lsp extra (pygls)")

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

TIMEOUT = 60


class Editor:
    """A minimal editor: opens documents, keeps their text, applies workspace edits."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.published: dict[str, list[lsp.PublishDiagnosticsParams]] = {}
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.changed = asyncio.Condition()

    async def wait_for(self, uri: str, predicate: Callable[[lsp.PublishDiagnosticsParams], bool]) -> lsp.PublishDiagnosticsParams:
        async def find() -> lsp.PublishDiagnosticsParams:
            async with self.changed:
                while True:
                    for params in reversed(self.published.get(uri, [])):
                        if predicate(params):
                            return params
                    await self.changed.wait()

        return await asyncio.wait_for(find(), TIMEOUT)

    def open(self, uri: str, text: str) -> None:
        self.texts[uri], self.versions[uri] = text, 1
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
        )

    def change(self, uri: str, text: str) -> int:
        self.versions[uri] += 1
        self.texts[uri] = text
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return self.versions[uri]

    def apply(self, uri: str, edit: lsp.WorkspaceEdit) -> str:
        """Apply a workspace edit the way an editor does, counting columns in UTF-16."""
        assert edit.changes is not None
        lines = self.texts[uri].splitlines(keepends=True)

        def offset(p: lsp.Position) -> int:
            before = "".join(lines[: p.line])
            line = lines[p.line] if p.line < len(lines) else ""
            units, chars = 0, 0
            while units < p.character:
                units += len(line[chars].encode("utf-16-le")) // 2
                chars += 1
            return len(before) + chars

        text = self.texts[uri]
        for e in sorted(edit.changes[uri], key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
            text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end) :]
        return text


def session(scenario: Callable[[Editor], Awaitable[None]], init: dict[str, Any] | None = None) -> None:
    async def main() -> None:
        client = LanguageClient("mmalint-test", "1")
        editor = Editor(client)

        @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        async def publish(params: lsp.PublishDiagnosticsParams) -> None:
            async with editor.changed:
                editor.published.setdefault(params.uri, []).append(params)
                editor.changed.notify_all()

        await client.start_io(sys.executable, "-m", "mmalint", "server")
        try:
            await asyncio.wait_for(
                client.initialize_async(
                    lsp.InitializeParams(
                        capabilities=lsp.ClientCapabilities(),
                        # The findings below are those of jax 0.12, whatever jax is installed.
                        initialization_options={"debounce_ms": 50, "target_jax": "0.12", **(init or {})},
                    )
                ),
                TIMEOUT,
            )
            client.initialized(lsp.InitializedParams())
            await scenario(editor)
            await asyncio.wait_for(client.shutdown_async(None), TIMEOUT)
            client.exit(None)
            server = client._server
            assert server is not None
            assert await asyncio.wait_for(server.wait(), TIMEOUT) == 0
        finally:
            server = client._server
            if server is not None and server.returncode is None:
                server.kill()  # the scenario failed before `exit`: do not wait for it
            await client.stop()

    asyncio.run(main())


def _uri(tmp_path: Path, name: str) -> str:
    return (tmp_path / name).as_uri()


# Wide characters before the call on its line: columns differ in code points and UTF-16 units.
WIDE = k.PALLAS_SWAPPED.replace(
    "  o_ref[...] = plgpu.mma(\n", "  o_ref[...] = ('😀行', plgpu.mma(\n"
).replace("      acc,\n  )\n", "      acc,\n  ))[1]\n")


def test_diagnostics_on_open_with_utf16_positions_links_and_notes(tmp_path: Path) -> None:
    uri = _uri(tmp_path, "wide.py")

    async def scenario(editor: Editor) -> None:
        editor.open(uri, WIDE)
        params = await editor.wait_for(uri, lambda p: bool(p.diagnostics))
        (d,) = params.diagnostics
        assert d.code == "MMA105" and d.source == "mmalint"
        assert d.severity == lsp.DiagnosticSeverity.Error
        assert d.code_description is not None and d.code_description.href.endswith("/docs/rules/MMA105.md")
        # `  o_ref[...] = ('😀行', ` is 22 code points but 23 UTF-16 units (the emoji is two).
        assert (d.range.start.line, d.range.start.character) == (13, 23)
        assert (d.range.end.line, d.range.end.character) == (17, 3)
        assert d.related_information and all(r.location.uri == uri for r in d.related_information)
        assert "help: call mma(acc, a, b)" in d.message

    session(scenario)


def test_change_is_debounced_and_save_republishes(tmp_path: Path) -> None:
    uri = _uri(tmp_path, "k.py")

    async def scenario(editor: Editor) -> None:
        editor.open(uri, k.PALLAS_SWAPPED)
        await editor.wait_for(uri, lambda p: len(p.diagnostics) == 1)
        before = len(editor.published[uri])
        # Several quick edits, the last one fixing the call: only the result of the last counts.
        for text in (k.PALLAS_SWAPPED + "\n", k.PALLAS_SWAPPED + "\n\n", k.PALLAS_CLEAN):
            version = editor.change(uri, text)
        clean = await editor.wait_for(uri, lambda p: p.version == version)
        assert not clean.diagnostics
        assert len(editor.published[uri]) - before == 1  # the intermediate versions were skipped
        editor.client.text_document_did_save(
            lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
        )
        await editor.wait_for(uri, lambda p: len(editor.published[uri]) - before == 2)
        editor.client.text_document_did_close(
            lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
        )

    session(scenario)


def test_quick_fix_and_noqa_actions(tmp_path: Path) -> None:
    uri = _uri(tmp_path, "wide.py")

    async def scenario(editor: Editor) -> None:
        editor.open(uri, WIDE)
        params = await editor.wait_for(uri, lambda p: bool(p.diagnostics))
        (d,) = params.diagnostics
        actions = await editor.client.text_document_code_action_async(
            lsp.CodeActionParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri),
                range=d.range,
                context=lsp.CodeActionContext(diagnostics=[d]),
            )
        )
        assert actions is not None
        by_title = {a.title: a for a in actions if isinstance(a, lsp.CodeAction)}
        fix = by_title["Move the accumulator to the first argument (MMA105)"]
        assert fix.kind == lsp.CodeActionKind.QuickFix and fix.is_preferred
        assert fix.edit is not None
        fixed = editor.apply(uri, fix.edit)
        assert "plgpu.mma(\n      acc,\n      a,\n      b,\n  ))[1]" in fixed
        noqa = by_title["Disable MMA105 for this line"]
        assert noqa.edit is not None
        silenced = editor.apply(uri, noqa.edit)
        assert "  o_ref[...] = ('😀行', plgpu.mma(  # noqa: MMA105\n" in silenced
        version = editor.change(uri, silenced)
        after = await editor.wait_for(uri, lambda p: p.version == version)
        assert not after.diagnostics

    session(scenario)


def test_fix_all_source_action_applies_safe_fixes_only(tmp_path: Path) -> None:
    uri = _uri(tmp_path, "k.py")
    text = k.PALLAS_SWAPPED + "\n\n" + k.MGPU_HELPER_ACC.split("M = N = K = 128\n", 1)[1].replace("def kernel", "def kernel2")

    async def scenario(editor: Editor) -> None:
        editor.open(uri, k.PALLAS_SWAPPED)
        await editor.wait_for(uri, lambda p: bool(p.diagnostics))
        actions = await editor.client.text_document_code_action_async(
            lsp.CodeActionParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri),
                range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0)),
                context=lsp.CodeActionContext(diagnostics=[], only=["source.fixAll"]),
            )
        )
        assert actions is not None
        (action,) = actions
        assert isinstance(action, lsp.CodeAction) and action.kind == "source.fixAll.mmalint"
        assert action.edit is not None
        assert editor.apply(uri, action.edit) == k.PALLAS_CLEAN
        # Nothing safe left to fix: no action.
        version = editor.change(uri, k.PALLAS_CLEAN)
        await editor.wait_for(uri, lambda p: p.version == version)
        none = await editor.client.text_document_code_action_async(
            lsp.CodeActionParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri),
                range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0)),
                context=lsp.CodeActionContext(diagnostics=[], only=["source.fixAll.mmalint"]),
            )
        )
        assert not none

    del text
    session(scenario)


def test_server_reads_the_project_configuration(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.mmalint]\nignore = ["MMA105"]\n')
    uri = _uri(tmp_path, "k.py")
    (tmp_path / "k.py").write_text(k.PALLAS_SWAPPED)

    async def scenario(editor: Editor) -> None:
        editor.open(uri, k.PALLAS_SWAPPED)
        params = await editor.wait_for(uri, lambda p: True)
        assert not params.diagnostics

    try:
        import mmalint.config  # noqa: F401
    except ImportError:
        pytest.skip("no configuration module yet")
    session(scenario)
