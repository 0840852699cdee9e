"""`mmalint server`: a Language Server over stdio (pygls), for editor diagnostics and fixes.

Diagnostics are published on open, on save, and on change after a short quiet period (the
debounce), or pulled (`textDocument/diagnostic`) by a client that can; each carries its code, a
link to the rule page, and the notes ("accumulator created here") as related information. Code
actions: each fix (unsafe ones with `unsafe_fixes` only, marked so), "disable for this line" (a
`# noqa`), and `source.fixAll.mmalint` (safe fixes, like `--fix`; unsafe too with
`unsafe_fixes`), sent as the changed lines only. Hover on a code in a `# noqa` comment, or on a
finding, shows the rule's page. A change to a configuration file (watched, or saved in the
editor) or to the settings checks every open document again.

Everything goes through the same pipeline as `mmalint check` (`pipeline/file.py`, `fixes/fixer.py`) with
the settings the configuration gives for the document's path. Positions are converted from
mmalint's code-point columns to the encoding negotiated with the client (UTF-16 by default).

The event loop only talks: every lint and fix runs in a child process (`worker.py`), which
also does all the reading from disk. Each document has at most one lint under way; a change
cancels it (its process is killed) and lints the newest text instead, so a stale result is
never published and a slow document holds one process, never the others' lints or requests.
Code actions are served from the last published analysis at once, without waiting for a lint:
after an edit, its findings are moved through the content changes made since (`changes.py`),
and a finding an edit touched is left out rather than offered at a stale position. The
stdio transport (`transport.py`) survives malformed and oversized frames.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from mmalint import __version__
from mmalint.catalog import Catalog, load_catalog
from mmalint.config import CONFIG_NAMES
from mmalint.diagnostics import Diagnostic, Edit, Location
from mmalint.lsp.changes import Change, Moves, apply_change, changed_span, lsp_offset
from mmalint.lsp.diff import line_edits
from mmalint.lsp.incremental import Memo
from mmalint.lsp.options import Problem, ServerOptions, parse_options
from mmalint.lsp.transport import serve_stdio
from mmalint.lsp.worker import Cancelled, Failed, Fixed, Job, Linted, Pool, Unreadable, WorkerDied
from mmalint.rulepage import rule_markdown
from mmalint.suppress import FILE_NOQA, LINE_NOQA, split_lines

SOURCE = "mmalint"
FIX_ALL_KIND = "source.fixAll.mmalint"
# Lints at once, whatever the number of open documents; two at least, so that one slow
# document never makes the others wait.
LINT_WORKERS = max(2, min(4, (os.cpu_count() or 2) // 2))
REQUEST_WORKERS = 2  # fix-all requests, apart from the lints so as not to queue behind them
SEVERITIES = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "info": lsp.DiagnosticSeverity.Information,
}
WATCH_ID = "mmalint-configuration"
_CODE = re.compile(r"MMA\d+")

log = logging.getLogger("mmalint.lsp")


@dataclass(frozen=True)
class Published:
    """What the server last published for a document: the findings behind each diagnostic."""

    version: int | None
    text: str
    pairs: tuple[tuple[lsp.Diagnostic, Diagnostic], ...]
    result_id: str  # for pull diagnostics: the same findings at the same places, the same id
    # The "disable for this line" edit of each finding of `pairs` (by the finding's id), as the
    # lint's child made it (None, or missing: no such action).
    noqa: dict[int, Edit | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Current:
    """The last analysis as it applies to the text the editor has now."""

    text: str
    moves: Moves | None  # None: the analysis is of this very text
    entries: tuple[tuple[lsp.Diagnostic, Diagnostic, Diagnostic], ...]  # shown now, moved, analysed


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


@dataclass(frozen=True)
class Snapshot:
    """An open document as the editor has it."""

    version: int | None
    text: str


class MmalintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("mmalint", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.catalog: Catalog = load_catalog()
        self.settings = ServerOptions()
        self.init_options: dict[str, Any] = {}
        self.published: dict[str, Published] = {}
        # Per open document, the findings its lint made at MMA calls in other files, by their
        # URI (`found_elsewhere`); and the URIs those are published under now.
        self.elsewhere: dict[str, dict[str, list[tuple[lsp.Diagnostic, Diagnostic]]]] = {}
        self.shown_elsewhere: set[str] = set()
        self.texts: dict[str, str] = {}  # each open document's text as its tracked changes make it
        # Each open document's last lint, for the next to reuse (`incremental.py`); None: it cannot.
        self.memos: dict[str, Memo | None] = {}
        self.since: dict[str, list[Change]] = {}  # content changes since the published analysis
        self.analysed = asyncio.Condition()  # a lint has ended (published or not)
        self.pull = False  # the client pulls diagnostics: none are pushed
        self.watching: str | None = None  # the explicit configuration file the watchers include
        self.background: set[asyncio.Task[None]] = set()
        self.pending: dict[str, asyncio.Task[None]] = {}  # at most one lint per document
        self.linting: dict[str, Snapshot] = {}  # the text a pending lint has started on
        self.shown: set[str] = set()  # problems already shown once: not again on each keystroke
        self.shut_down = threading.Event()
        self.lints = Pool(LINT_WORKERS)
        self.requests = Pool(REQUEST_WORKERS)

    # ------------------------------------------------------------------ settings and messages

    def configure(self, raw: Any, where: str) -> None:
        """Settings from `raw` on top of the initialization options (an editor's unset ones are null)."""
        if isinstance(raw, dict) and where != "initializationOptions":
            raw = {**self.init_options, **{key: value for key, value in raw.items() if value is not None}}
        elif isinstance(raw, dict):
            self.init_options = dict(raw)
        self.settings, problems = parse_options(raw, self.catalog, where)
        for problem in problems:
            self.tell(problem)

    def later(self, coroutine: Any) -> None:
        """Run a coroutine on the loop, holding it until it ends."""
        task = asyncio.ensure_future(coroutine)
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    async def pull_settings(self) -> None:
        """The `mmalint` section through `workspace/configuration`, then everything checked again."""
        try:
            result = await self.workspace_configuration_async(
                lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="mmalint")])
            )
        except Exception as exc:  # a client that cannot answer: keep what we have
            self.tell(Problem(lsp.MessageType.Log, f"mmalint: workspace/configuration failed: {exc}"))
            return
        if result and result[0] is not None:
            self.configure(result[0], "settings.mmalint")
            await self.reconfigured()

    async def watch(self) -> None:
        """Ask the client to report changes to configuration files (if it can)."""
        workspace = self.client_capabilities.workspace
        watched = None if workspace is None else workspace.did_change_watched_files
        if watched is None or not watched.dynamic_registration:
            return
        watchers = [lsp.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_NAMES]
        if (explicit := self.config_path()) is not None:
            watchers.append(lsp.FileSystemWatcher(glob_pattern=explicit))
        try:
            if self.watching is not None:
                await self.client_unregister_capability_async(
                    lsp.UnregistrationParams(
                        unregisterations=[lsp.Unregistration(id=WATCH_ID, method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)]
                    )
                )
            await self.client_register_capability_async(
                lsp.RegistrationParams(
                    registrations=[
                        lsp.Registration(
                            id=WATCH_ID,
                            method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=lsp.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
                        )
                    ]
                )
            )
        except Exception as exc:
            self.tell(Problem(lsp.MessageType.Log, f"mmalint: could not watch the configuration files: {exc}"))
            return
        self.watching = explicit or ""

    def config_path(self) -> str | None:
        """The explicit configuration file, absolute (a relative one is from the workspace root)."""
        if self.settings.config is None:
            return None
        path = Path(self.settings.config).expanduser()
        if not path.is_absolute() and self.workspace.root_path:
            path = Path(self.workspace.root_path) / path
        return str(path.absolute())

    def is_config(self, uri: str) -> bool:
        filename = self.filename(uri)
        return Path(filename).name in CONFIG_NAMES or filename == self.config_path()

    async def reconfigured(self) -> None:
        """Check every open document again, and have a pulling client pull again."""
        if self.watching is not None and self.watching != (self.config_path() or ""):
            await self.watch()
        self.memos.clear()  # the new settings deserve a lint of their own, not the last result
        for uri in list(self.workspace.text_documents):
            if not self.is_config(uri):
                self.schedule(uri, 0)
        workspace = self.client_capabilities.workspace
        if self.pull and workspace is not None and workspace.diagnostics is not None and workspace.diagnostics.refresh_support:
            try:
                await self.workspace_diagnostic_refresh_async(None)
            except Exception as exc:
                self.tell(Problem(lsp.MessageType.Log, f"mmalint: workspace/diagnostic/refresh failed: {exc}"))

    def tell(self, problem: Problem, show: bool = True) -> None:
        """Log a problem; show an error or warning too, once (not again on each keystroke)."""
        log.warning("%s", problem.message)
        shown = problem.type in (lsp.MessageType.Error, lsp.MessageType.Warning)
        if show and shown and problem.message not in self.shown:
            self.shown.add(problem.message)
            self.window_show_message(lsp.ShowMessageParams(type=problem.type, message=problem.message))
        if self.settings.logs(problem.type):
            self.window_log_message(lsp.LogMessageParams(type=problem.type, message=problem.message))

    def filename(self, uri: str) -> str:
        return to_fs_path(uri) or uri

    def snapshot(self, uri: str) -> Snapshot | None:
        """The document if the editor has it open; never read from disk (not on this loop)."""
        document = self.workspace.text_documents.get(unquote(uri))
        return None if document is None else Snapshot(document.version, document.source)

    def job(self, kind: Literal["lint", "fix"], uri: str, snapshot: Snapshot | None) -> Job:
        memo = self.memos.get(uri) if kind == "lint" and snapshot is not None else None
        return Job(
            kind,
            self.filename(uri),
            None if snapshot is None else snapshot.text,
            self.settings.target_jax,
            self.settings.lint,
            select=self.settings.select,
            ignore=self.settings.ignore,
            config_path=self.config_path(),
            unsafe=self.settings.unsafe_fixes,
            overlays=self.buffers(uri),
            memo=memo,
        )

    def buffers(self, uri: str) -> tuple[tuple[str, str], ...]:
        """The other open documents of files on disk, as the checked tree reads them."""
        own = unquote(uri)
        found = []
        for other, document in self.workspace.text_documents.items():
            if other == own or not other.startswith("file:"):
                continue
            found.append((self.filename(other), document.source))
        return tuple(found)

    def encoding(self) -> str:
        return self.workspace.position_encoding or lsp.PositionEncodingKind.Utf16

    def track(self, uri: str, changes: Sequence[lsp.TextDocumentContentChangeEvent]) -> None:
        """Record a didChange's content changes, as offsets, since the published analysis."""
        now = self.snapshot(uri)
        old = self.texts.get(uri)
        if now is None or old is None:
            return
        text, found = old, []
        for event in changes:
            text, change = apply_change(text, event, self.encoding())
            found.append(change)
        if text != now.text:  # not the text pygls made of them: one span from the texts themselves
            found = [changed_span(old, now.text)]
        self.texts[uri] = now.text
        self.since.setdefault(uri, []).extend(found)

    def stop(self) -> None:
        """Cancel every lint and kill every child process."""
        for task in self.pending.values():
            task.cancel()
        self.pending.clear()
        self.linting.clear()
        self.lints.close()
        self.requests.close()

    async def run(self, job: Job, pool: Pool) -> Linted | Fixed | None:
        """A job's result from a child process; None (and a logged message) if it gave none."""
        timeout = self.settings.lint_timeout_s
        try:
            outcome = await pool.run(job, timeout)
        except TimeoutError:
            self.tell(Problem(lsp.MessageType.Warning, f"mmalint: stopped checking {job.filename} after {timeout:g} s"))
            return None
        except WorkerDied as exc:
            self.tell(Problem(lsp.MessageType.Error, f"mmalint: {job.filename}: {exc} (please report it)"))
            return None
        if isinstance(outcome, Cancelled):
            return None
        if isinstance(outcome, Unreadable):
            self.tell(Problem(lsp.MessageType.Warning, f"mmalint: {job.filename}: {outcome.reason}"), show=False)
            return None
        if isinstance(outcome, Failed):
            self.tell(Problem(lsp.MessageType.Error, f"mmalint: {job.filename}: internal error: {outcome.error} (please report it)"), show=False)
            return None
        for note in outcome.notes:
            self.tell(Problem(lsp.MessageType.Warning, note))
        return outcome

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

    async def lint_and_publish(self, uri: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        snapshot = self.snapshot(uri)
        if snapshot is not None:
            self.linting[uri] = snapshot
        outcome = await self.run(self.job("lint", uri, snapshot), self.lints)
        if not isinstance(outcome, Linted):
            return
        if snapshot is not None and self.snapshot(uri) is not None:
            # The newest lint that ended: the next one reuses it if the edit since allows.
            self.memos[uri] = outcome.memo
        if snapshot is not None and self.snapshot(uri) != snapshot:
            return  # changed meanwhile (its own lint has replaced this one): not for publishing
        published = self.analysis(uri, outcome, None if snapshot is None else snapshot.version)
        self.published[uri] = published
        if snapshot is not None:
            self.texts[uri], self.since[uri] = snapshot.text, []
        if not self.pull:
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, version=published.version, diagnostics=[p[0] for p in published.pairs])
            )

    def analysis(self, uri: str, outcome: Linted, version: int | None) -> Published:
        positions = Positions(outcome.text, self.encoding())
        own = self.filename(uri)
        diagnostics = outcome.report.diagnostics
        kept = [i for i, d in enumerate(diagnostics) if d.filename == own or d.code is None]
        pairs = tuple((self.to_lsp(uri, diagnostics[i], positions), diagnostics[i]) for i in kept)
        noqa = {id(diagnostics[i]): outcome.noqa[i] for i in kept} if len(outcome.noqa) == len(diagnostics) else {}
        self.found_elsewhere(uri, outcome)
        digest = hashlib.sha256(repr([p[0] for p in pairs]).encode()).hexdigest()[:16]
        return Published(version, outcome.text, pairs, digest, noqa)

    def found_elsewhere(self, uri: str, outcome: Linted | None) -> None:
        """Findings at MMA calls in other files that this document's code reaches (a test
        open, its kernel module not): published under that file's URI while it is not open
        (open, its own lint shows them, with this document among its callers)."""
        if outcome is None:
            self.elsewhere.pop(uri, None)
        else:
            own = self.filename(uri)
            texts = dict(outcome.others)
            found: dict[str, list[tuple[lsp.Diagnostic, Diagnostic]]] = {}
            for d in outcome.report.diagnostics:
                if d.code is None or d.filename == own or d.filename not in texts:
                    continue
                other = _uri(d.filename)
                positions = Positions(texts[d.filename], self.encoding())
                found.setdefault(other, []).append((self.to_lsp(other, d, positions), d))
            self.elsewhere[uri] = found
        if self.pull:
            return
        wanted: dict[str, list[lsp.Diagnostic]] = {}
        for contributions in self.elsewhere.values():
            for other, pairs in contributions.items():
                if self.snapshot(other) is not None:
                    continue
                items = wanted.setdefault(other, [])
                items.extend(p[0] for p in pairs if all(not _same(p[0], q) for q in items))
        for other in self.shown_elsewhere - set(wanted):
            if self.snapshot(other) is None:
                self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=other, diagnostics=[]))
        for other, items in wanted.items():
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=other, diagnostics=items))
        self.shown_elsewhere = set(wanted)

    async def pulled(self, uri: str, previous: str | None) -> lsp.DocumentDiagnosticReport:
        """The findings for the document's current text: from the analysis of it, made if need be."""
        if self.snapshot(uri) is None:  # not open: a lint of the file as it is on disk
            outcome = await self.run(self.job("lint", uri, None), self.requests)
            if not isinstance(outcome, Linted):
                return lsp.RelatedFullDocumentDiagnosticReport(items=[])
            published = self.analysis(uri, outcome, None)
        else:
            found = await self.analysed_now(uri)
            if found is None:
                return lsp.RelatedFullDocumentDiagnosticReport(items=[])
            published = found
        if previous is not None and previous == published.result_id:
            return lsp.RelatedUnchangedDocumentDiagnosticReport(result_id=published.result_id)
        return lsp.RelatedFullDocumentDiagnosticReport(
            items=[p[0] for p in published.pairs], result_id=published.result_id
        )

    async def analysed_now(self, uri: str) -> Published | None:
        """The analysis of the document's current text, waiting for (or starting) its lint;
        None if the document closes or its lint gives nothing."""
        started = False
        deadline = asyncio.get_running_loop().time() + self.settings.lint_timeout_s + 10
        async with self.analysed:
            while True:
                now, published = self.snapshot(uri), self.published.get(uri)
                if now is None:
                    return None
                if published is not None and published.text == now.text:
                    return published
                if uri not in self.pending:
                    if started:
                        return None  # the lint ended without a result (and said why)
                    self.schedule(uri, 0)
                    started = True
                left = deadline - asyncio.get_running_loop().time()
                if left <= 0:
                    return None
                try:
                    await asyncio.wait_for(self.analysed.wait(), left)
                except TimeoutError:
                    return None

    async def ended(self) -> None:
        async with self.analysed:
            self.analysed.notify_all()

    def cancel(self, uri: str) -> None:
        """Drop the document's lint; one in progress loses its process (a true cancel)."""
        task = self.pending.pop(uri, None)
        self.linting.pop(uri, None)
        if task is not None:
            task.cancel()

    def schedule(self, uri: str, delay: float, again: bool = True) -> None:
        """Lint the document's current text after `delay`, instead of anything still under way;
        unless `again` is false and the lint under way is of that very text (a save)."""
        now = self.snapshot(uri)
        if not again and now is not None and uri in self.pending and self.linting.get(uri) == now:
            return
        self.cancel(uri)

        async def later() -> None:
            try:
                await self.lint_and_publish(uri, delay)
            except asyncio.CancelledError:
                pass
            except Exception as exc:  # report and carry on: never take the editor down
                log.exception("lint failed")
                self.tell(Problem(lsp.MessageType.Error, f"mmalint: {type(exc).__name__}: {exc}"), show=False)
            finally:
                if self.pending.get(uri) is task:
                    del self.pending[uri]
                    self.linting.pop(uri, None)
                self.later(self.ended())

        task = self.pending[uri] = asyncio.ensure_future(later())

    # ------------------------------------------------------------------ code actions

    def edits(self, uri: str, text: str, edits: tuple[Edit, ...]) -> lsp.WorkspaceEdit:
        positions = Positions(text, self.encoding())
        return lsp.WorkspaceEdit(
            changes={
                uri: [lsp.TextEdit(range=positions.range(e.range.start, e.range.end), new_text=e.content) for e in edits]
            }
        )

    def current(self, uri: str) -> Current | None:
        """The last analysis moved onto the current text; None if there is none to move."""
        published, snapshot = self.published.get(uri), self.snapshot(uri)
        if published is None or snapshot is None:
            return None
        if published.text == snapshot.text:
            return Current(snapshot.text, None, tuple((shown, d, d) for shown, d in published.pairs))
        if self.texts.get(uri) != snapshot.text:
            return None  # changes we did not see: nothing rather than a guess
        moves = Moves(published.text, snapshot.text, tuple(self.since.get(uri, ())))
        positions = Positions(snapshot.text, self.encoding())
        entries = []
        for _, d in published.pairs:
            if (moved := moves.diagnostic(d)) is not None:
                entries.append((self.to_lsp(uri, moved, positions), moved, d))
        return Current(snapshot.text, moves, tuple(entries))

    def quick_fixes(self, uri: str, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        current = self.current(uri)
        if current is None:
            return []  # no analysis yet: nothing to offer rather than a wait
        published = self.published[uri]
        wanted = [d for d in params.context.diagnostics if d.source == SOURCE]
        entries = [e for e in current.entries if any(_same(e[0], w) for w in wanted)]
        if not wanted:
            entries = [e for e in current.entries if _overlaps(e[0].range, params.range)]
        actions: list[lsp.CodeAction] = []
        for shown, d, analysed in entries:
            if d.fix is not None and (d.fix.applicability != "unsafe" or self.settings.unsafe_fixes):
                unsafe = d.fix.applicability == "unsafe"
                actions.append(
                    lsp.CodeAction(
                        title=f"{d.fix.message} ({d.code})" + (" (unsafe fix)" if unsafe else ""),
                        kind=lsp.CodeActionKind.QuickFix,
                        diagnostics=[shown],
                        edit=self.edits(uri, current.text, d.fix.edits),
                        is_preferred=not unsafe,
                    )
                )
            # Found in the analysed text (it knows the statement's rows), then moved.
            edit = published.noqa.get(id(analysed))
            if edit is not None and current.moves is not None:
                edit = current.moves.edit(edit)
            if edit is not None:
                actions.append(
                    lsp.CodeAction(
                        title=f"Disable {d.code} for this line",
                        kind=lsp.CodeActionKind.QuickFix,
                        diagnostics=[shown],
                        edit=self.edits(uri, current.text, (edit,)),
                    )
                )
        return actions

    def hover(self, uri: str, position: lsp.Position) -> lsp.Hover | None:
        """The rule page of the code under the cursor in a `# noqa`, else of the finding there."""
        snapshot = self.snapshot(uri)
        if snapshot is None:
            return None
        lines = split_lines(snapshot.text)
        if position.line >= len(lines):
            return None
        line = lines[position.line].rstrip("\r\n")
        column = lsp_offset(line, lsp.Position(line=0, character=position.character), self.encoding())
        for hash_at in (i for i, c in enumerate(line) if c == "#"):
            if (directive := LINE_NOQA.match(line, hash_at)) is not None:
                end = directive.end()
            elif (directive := FILE_NOQA.match(line[hash_at:])) is not None:
                end = hash_at + directive.end()
            else:
                continue
            for code in _CODE.finditer(line, hash_at, end):
                if code.start() <= column <= code.end() and code.group(0) in self.catalog.rules:
                    positions = Positions(snapshot.text, self.encoding())
                    row = position.line + 1
                    return self.rule_hover(
                        code.group(0),
                        lsp.Range(
                            start=positions.position(_at(row, code.start())), end=positions.position(_at(row, code.end()))
                        ),
                    )
        current = self.current(uri)
        for shown, d, _ in () if current is None else current.entries:
            if d.code in self.catalog.rules and _overlaps(shown.range, lsp.Range(start=position, end=position)):
                return self.rule_hover(d.code, shown.range)
        return None

    def rule_hover(self, code: str, where: lsp.Range) -> lsp.Hover:
        page = rule_markdown(self.catalog.rules[code], self.catalog)
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=page), range=where)

    async def fix_all(self, uri: str) -> lsp.CodeAction | None:
        snapshot = self.snapshot(uri)
        outcome = await self.run(self.job("fix", uri, snapshot), self.requests)
        if not isinstance(outcome, Fixed) or outcome.fixed_text == outcome.text:
            return None
        if snapshot is not None and self.snapshot(uri) != snapshot:
            return None  # the edit would be for a text the editor no longer has
        count = outcome.fixed_count
        which = "" if self.settings.unsafe_fixes else "safe "
        return lsp.CodeAction(
            title=f"mmalint: fix all ({count} {which}fix{'es' if count != 1 else ''})",
            kind=FIX_ALL_KIND,
            edit=self.edits(uri, outcome.text, line_edits(self.filename(uri), outcome.text, outcome.fixed_text)),
        )


def _at(row: int, index: int) -> Location:
    """The location of code-point `index` (0-based) on 1-based `row`."""
    return Location(row, index + 1)


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
        ls.lints.warm()  # the first lint and the first fix-all do not wait for a process
        ls.requests.warm()
        ls.later(ls.watch())
        workspace = ls.client_capabilities.workspace
        if workspace is not None and workspace.configuration:
            ls.later(ls.pull_settings())

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: MmalintServer, params: lsp.InitializeParams) -> None:
        ls.configure(params.initialization_options, "initializationOptions")
        document = params.capabilities.text_document
        ls.pull = document is not None and document.diagnostic is not None

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: MmalintServer, params: lsp.DidChangeConfigurationParams) -> None:
        workspace = ls.client_capabilities.workspace
        if workspace is not None and workspace.configuration:
            await ls.pull_settings()  # the notification's own settings may be null (VS Code's are)
            return
        settings = params.settings
        if isinstance(settings, dict) and "mmalint" in settings:
            ls.configure(settings["mmalint"], "settings.mmalint")
            await ls.reconfigured()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(ls: MmalintServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        if any(ls.is_config(change.uri) for change in params.changes):
            await ls.reconfigured()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: MmalintServer, params: lsp.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.texts[uri], ls.since[uri] = params.text_document.text, []
        ls.schedule(uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MmalintServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.track(params.text_document.uri, params.content_changes)
        ls.schedule(params.text_document.uri, ls.settings.debounce_s)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: MmalintServer, params: lsp.DidSaveTextDocumentParams) -> None:
        if ls.is_config(params.text_document.uri):
            await ls.reconfigured()  # saved in the editor: whether or not the client watches files
            return
        ls.schedule(params.text_document.uri, 0, again=False)
        # The other open documents may call into it, or be called from it (the checked tree
        # is one program): they are checked again too, after the usual pause.
        for other in list(ls.workspace.text_documents):
            if other != unquote(params.text_document.uri) and other.startswith("file:") and not ls.is_config(other):
                ls.schedule(other, ls.settings.debounce_s, again=False)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MmalintServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.cancel(uri)
        ls.published.pop(uri, None)
        ls.memos.pop(uri, None)
        ls.texts.pop(uri, None)
        ls.since.pop(uri, None)
        if not ls.pull:
            ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        ls.found_elsewhere(uri, None)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: MmalintServer, params: lsp.HoverParams) -> lsp.Hover | None:
        return ls.hover(params.text_document.uri, params.position)

    @server.feature(
        lsp.TEXT_DOCUMENT_DIAGNOSTIC,
        lsp.DiagnosticOptions(identifier=SOURCE, inter_file_dependencies=True, workspace_diagnostics=False),
    )
    async def diagnostic(ls: MmalintServer, params: lsp.DocumentDiagnosticParams) -> lsp.DocumentDiagnosticReport:
        return await ls.pulled(params.text_document.uri, params.previous_result_id)

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

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: MmalintServer, params: None) -> None:
        ls.shut_down.set()
        ls.stop()

    @server.feature(lsp.EXIT)
    def exit(ls: MmalintServer, params: None) -> None:
        ls.stop()

    return server


def main() -> int:
    logging.basicConfig(level=logging.WARNING)
    server = build_server()
    try:
        return serve_stdio(server, server.shut_down, server.stop)
    finally:
        server.stop()
