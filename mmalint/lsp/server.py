"""`mmalint server`: a Language Server over stdio (pygls), for editor diagnostics and fixes.

Diagnostics are published on open, on save, and on change after a short quiet period (the
debounce); each carries its code, a link to the rule page, and the notes ("accumulator created
here") as related information. Code actions: each fix (safe, or unsafe and marked so), "disable
for this line" (a `# noqa`), and `source.fixAll.mmalint` (safe fixes only, like `--fix`).

Everything goes through the same pipeline as `mmalint check` (`lint.py`, `fixes/fixer.py`) with
the settings the configuration gives for the document's path. Positions are converted from
mmalint's code-point columns to the encoding negotiated with the client (UTF-16 by default).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from mmalint import __version__
from mmalint.catalog import Catalog, load_catalog
from mmalint.diagnostics import Diagnostic, Edit, Location
from mmalint.fixes.fixer import fix_text
from mmalint.lint import LintOptions, lint_text
from mmalint.settings import Settings
from mmalint.suppress import noqa_edit, split_lines

SOURCE = "mmalint"
FIX_ALL_KIND = "source.fixAll.mmalint"
DEFAULT_DEBOUNCE_S = 0.25
SEVERITIES = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "info": lsp.DiagnosticSeverity.Information,
}

log = logging.getLogger("mmalint.lsp")


@dataclass(frozen=True)
class Published:
    """What the server last published for a document: the findings behind each diagnostic."""

    version: int | None
    text: str
    pairs: tuple[tuple[lsp.Diagnostic, Diagnostic], ...]


class Positions:
    """mmalint locations (1-based rows, 1-based code-point columns) to LSP positions."""

    def __init__(self, text: str, encoding: str) -> None:
        self.lines = [line.rstrip("\r\n") for line in split_lines(text)]
        self.encoding = encoding

    def _units(self, s: str) -> int:
        if self.encoding == lsp.PositionEncodingKind.Utf8:
            return len(s.encode("utf-8"))
        if self.encoding == lsp.PositionEncodingKind.Utf32:
            return len(s)
        return len(s.encode("utf-16-le")) // 2

    def position(self, where: Location) -> lsp.Position:
        row = where.row - 1
        if row >= len(self.lines):
            return lsp.Position(line=len(self.lines), character=0)
        line = self.lines[row]
        return lsp.Position(line=row, character=self._units(line[: max(where.column - 1, 0)]))

    def range(self, start: Location, end: Location) -> lsp.Range:
        return lsp.Range(start=self.position(start), end=self.position(end))


class MmalintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("mmalint", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.debounce_s = DEFAULT_DEBOUNCE_S
        self.options = LintOptions()
        self.published: dict[str, Published] = {}
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.catalog: Catalog = load_catalog()
        self._resolver: Any = None
        self._default_jax: str | None = None
        self.target_jax: str | None = None  # initializationOptions.target_jax: overrides config

    # ------------------------------------------------------------------ settings

    def settings_for(self, uri: str) -> Settings:
        """The settings `mmalint check` would use for this file (its nearest configuration)."""
        path = to_fs_path(uri)
        if self._default_jax is None:
            from mmalint.cli import resolve_target_jax

            self._default_jax = resolve_target_jax(self.target_jax, self.catalog)
        try:
            from mmalint import config
        except ImportError:
            return Settings(target_jax=self._default_jax)
        try:
            if self._resolver is None:
                overrides = config.Overrides(target_jax=self.target_jax)
                self._resolver = config.Resolver(overrides, self._default_jax, catalog=self.catalog)
            if path is None:
                return Settings(target_jax=self._default_jax)
            settings: Settings = self._resolver.for_path(Path(path))
            return settings
        except Exception as exc:  # a broken config must not kill the editor session
            self.window_log_message(
                lsp.LogMessageParams(type=lsp.MessageType.Warning, message=f"mmalint: configuration: {exc}")
            )
            return Settings(target_jax=self._default_jax)

    def filename(self, uri: str) -> str:
        return to_fs_path(uri) or uri

    # ------------------------------------------------------------------ diagnostics

    def to_lsp(self, uri: str, d: Diagnostic, positions: Positions) -> lsp.Diagnostic:
        message = d.message
        if (prediction := d.prediction_text()) is not None:
            message += f"\n{prediction}"
        if d.help:
            message += f"\nhelp: {d.help}"
        related = [
            lsp.DiagnosticRelatedInformation(
                location=lsp.Location(
                    uri=uri if r.range.filename == d.filename else _uri(r.range.filename),
                    range=positions.range(r.range.start, r.range.end),
                ),
                message=r.message,
            )
            for r in d.related
        ]
        return lsp.Diagnostic(
            range=positions.range(d.range.start, d.range.end),
            message=message,
            severity=SEVERITIES.get(d.severity, lsp.DiagnosticSeverity.Warning),
            code=d.code or d.name,
            code_description=lsp.CodeDescription(href=d.url) if d.url else None,
            source=SOURCE,
            related_information=related or None,
            tags=[lsp.DiagnosticTag.Unnecessary] if d.code == "MMA001" else None,
        )

    async def lint_and_publish(self, uri: str) -> None:
        document = self.workspace.get_text_document(uri)
        version, text = document.version, document.source
        settings = self.settings_for(uri)
        report = await asyncio.to_thread(
            lint_text, self.filename(uri), text, settings, self.options, self.catalog
        )
        current = self.workspace.get_text_document(uri)
        if current.version != version or current.source != text:
            return  # a newer lint is on its way
        positions = Positions(text, self.workspace.position_encoding or lsp.PositionEncodingKind.Utf16)
        pairs = tuple((self.to_lsp(uri, d, positions), d) for d in report.diagnostics)
        self.published[uri] = Published(version, text, pairs)
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=[p[0] for p in pairs])
        )

    def schedule(self, uri: str, delay: float) -> None:
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()

        async def later() -> None:
            try:
                if delay:
                    await asyncio.sleep(delay)
                await self.lint_and_publish(uri)
            except asyncio.CancelledError:
                pass
            except Exception as exc:  # report and carry on: never take the editor down
                log.exception("lint failed")
                self.window_log_message(
                    lsp.LogMessageParams(type=lsp.MessageType.Error, message=f"mmalint: {type(exc).__name__}: {exc}")
                )

        self.pending[uri] = asyncio.ensure_future(later())

    # ------------------------------------------------------------------ code actions

    def edits(self, uri: str, text: str, edits: tuple[Edit, ...]) -> lsp.WorkspaceEdit:
        positions = Positions(text, self.workspace.position_encoding or lsp.PositionEncodingKind.Utf16)
        return lsp.WorkspaceEdit(
            changes={
                uri: [lsp.TextEdit(range=positions.range(e.range.start, e.range.end), new_text=e.content) for e in edits]
            }
        )

    def quick_fixes(self, uri: str, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        published = self.published.get(uri)
        if published is None or published.text != self.workspace.get_text_document(uri).source:
            return []
        wanted = [d for d in params.context.diagnostics if d.source == SOURCE]
        pairs = [p for p in published.pairs if any(_same(p[0], w) for w in wanted)]
        if not wanted:
            pairs = [p for p in published.pairs if _overlaps(p[0].range, params.range)]
        actions: list[lsp.CodeAction] = []
        for shown, d in pairs:
            if d.fix is not None:
                unsafe = d.fix.applicability == "unsafe"
                actions.append(
                    lsp.CodeAction(
                        title=f"{d.fix.message} ({d.code})" + (" (unsafe fix)" if unsafe else ""),
                        kind=lsp.CodeActionKind.QuickFix,
                        diagnostics=[shown],
                        edit=self.edits(uri, published.text, d.fix.edits),
                        is_preferred=not unsafe,
                    )
                )
            edit = noqa_edit(published.text, d) if d.code != "MMA001" else None
            if edit is not None:
                actions.append(
                    lsp.CodeAction(
                        title=f"Disable {d.code} for this line",
                        kind=lsp.CodeActionKind.QuickFix,
                        diagnostics=[shown],
                        edit=self.edits(uri, published.text, (edit,)),
                    )
                )
        return actions

    async def fix_all(self, uri: str) -> lsp.CodeAction | None:
        document = self.workspace.get_text_document(uri)
        text = document.source
        result = await asyncio.to_thread(
            fix_text, self.filename(uri), text, self.settings_for(uri), self.options, False, self.catalog
        )
        if result.text == text:
            return None
        lines = split_lines(text)
        if text.endswith(("\n", "\r")):
            end = Location(len(lines) + 1, 1)  # the start of the line after the last newline
        else:
            end = Location(len(lines), len(lines[-1]) + 1)
        positions = Positions(text, self.workspace.position_encoding or lsp.PositionEncodingKind.Utf16)
        edit = lsp.TextEdit(range=positions.range(Location(1, 1), end), new_text=result.text)
        return lsp.CodeAction(
            title=f"mmalint: fix all ({result.fixed_count} safe fix{'es' if result.fixed_count != 1 else ''})",
            kind=FIX_ALL_KIND,
            edit=lsp.WorkspaceEdit(changes={uri: [edit]}),
        )


def _uri(filename: str) -> str:
    return Path(filename).resolve().as_uri()


def _same(a: lsp.Diagnostic, b: lsp.Diagnostic) -> bool:
    return a.code == b.code and a.range == b.range


def _overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    def key(p: lsp.Position) -> tuple[int, int]:
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def _wants(only: list[str] | None, kind: str) -> bool:
    """Whether a requested kind filter (`only`) covers `kind` (`source` covers `source.x`)."""
    if not only:
        return kind != FIX_ALL_KIND  # fix-all is a source action: only when asked for
    return any(kind == k or kind.startswith(k + ".") for k in only)


def build_server() -> MmalintServer:
    server = MmalintServer()

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: MmalintServer, params: lsp.InitializedParams) -> None:
        pass

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: MmalintServer, params: lsp.InitializeParams) -> None:
        options = params.initialization_options or {}
        if isinstance(options, dict):
            if isinstance(options.get("debounce_ms"), int | float):
                ls.debounce_s = max(0.0, float(options["debounce_ms"]) / 1000)
            ls.options = LintOptions(report_unused_noqa=bool(options.get("report_unused_noqa", False)))
            if isinstance(options.get("target_jax"), str):
                ls.target_jax = options["target_jax"]

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: MmalintServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MmalintServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, ls.debounce_s)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: MmalintServer, params: lsp.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MmalintServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        task = ls.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        ls.published.pop(uri, None)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(
            code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.SourceFixAll, FIX_ALL_KIND],
            resolve_provider=False,
        ),
    )
    async def code_action(ls: MmalintServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        uri = params.text_document.uri
        only = [str(k) for k in params.context.only] if params.context.only else None
        actions: list[lsp.CodeAction] = []
        if _wants(only, lsp.CodeActionKind.QuickFix):
            actions.extend(ls.quick_fixes(uri, params))
        if only and _wants(only, FIX_ALL_KIND):
            fix_all = await ls.fix_all(uri)
            if fix_all is not None:
                actions.append(fix_all)
        return actions

    return server


def main() -> int:
    logging.basicConfig(level=logging.WARNING)
    build_server().start_io()
    return 0
