"""The files stage: many files through the pipeline, prefilter in this process, the rest on every core.

Workers only compute (a report, and with `fix` the fixed bytes); the caller decides what to
write, so `--diff` and `--fix` share one path and no worker touches the file system.

A Jupyter notebook (`*.ipynb`, `mmalint.notebook`) is checked as the module its code cells make:
its findings say which cell they are in, and its fixes go back into those cells. A notebook that
is not one (not JSON, not nbformat 4) is that file's error, whether or not it mentions `mma`.
"""

from __future__ import annotations

import contextlib
import difflib
import os
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace

from mmalint.analysis import ProgramSpec
from mmalint.diagnostics import Diagnostic
from mmalint.discover import Discovered
from mmalint.engine import FileReport
from mmalint.inputs import UnreadableInput, read_regular
from mmalint.notebook import Notebook, NotebookError, decode_notebook, is_notebook, read_notebook
from mmalint.pipeline.file import (
    LintOptions,
    lint_bytes,
    lint_text,
    new_run,
    reaches_elsewhere,
    tree_spec,
)
from mmalint.pipeline.text import InputError, worth_running
from mmalint.settings import Settings
from mmalint.source_io import SourceText, decode, encode

# Below this many files that pass the prefilter, starting worker processes costs more than it saves.
PARALLEL_THRESHOLD = 4

FixMode = str  # "" (report only), "safe" or "unsafe"


@dataclass(frozen=True)
class FileOutcome:
    report: FileReport
    fixed: Counter[str] = field(default_factory=Counter)
    source: SourceText | None = None  # the text as read, when fixing
    fixed_text: str | None = None  # the text after fixing, when it changed
    converged: bool = True
    notebook: Notebook | None = None  # the notebook as read, when fixing one (`source`: its JSON)

    def fixed_data(self) -> bytes | None:
        if self.fixed_text is None or self.source is None:
            return None
        return encode(self.fixed_text, self.source)

    def diff(self, name: str) -> list[str]:
        """`--diff`'s unified diff of the fixes: of the file, or of each changed cell of a
        notebook (`name:cell 3`, as ruff names them)."""
        if self.source is None or self.fixed_text is None:
            return []
        if self.notebook is not None:
            return self.notebook.diff(self.fixed_text, name)
        return list(difflib.unified_diff(
            self.source.text.splitlines(keepends=True),
            self.fixed_text.splitlines(keepends=True),
            fromfile=name,
            tofile=name,
        ))


@dataclass
class RunResult:
    reports: list[FileReport] = field(default_factory=list)
    input_errors: list[str] = field(default_factory=list)
    changed: list[tuple[Discovered, FileOutcome]] = field(default_factory=list)
    fixed: Counter[str] = field(default_factory=Counter)
    not_converged: list[str] = field(default_factory=list)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for r in self.reports for d in r.diagnostics]


Job = tuple[str, bytes, Settings, LintOptions, FixMode]


def work(item: Job) -> FileOutcome:
    """One file: its report, or with a fix mode the fix loop's result.

    Nothing one file does ends the run: an exception the analysis did not expect becomes that
    file's error, and the other files' findings stand.
    """
    try:
        return _work(item)
    except Exception as exc:  # reported for this file; the run goes on
        return FileOutcome(FileReport(item[0], error=internal_error(exc)))


def internal_error(exc: BaseException | str) -> str:
    what = exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}"
    return f"internal error while checking this file ({what}); its findings are lost, please report it"


def _work(item: Job) -> FileOutcome:
    filename, data, settings, options, fix = item
    if is_notebook(filename):
        return _work_notebook(item)
    if not fix:
        return FileOutcome(lint_bytes(filename, data, settings, options))
    from mmalint.fixes.fixer import fix_text

    try:
        source = decode(data)
    except InputError as exc:
        return FileOutcome(FileReport(filename, error=str(exc)))
    result = fix_text(filename, source.text, settings, options, unsafe=fix == "unsafe")
    changed = result.text if result.text != source.text else None
    return FileOutcome(result.report, result.fixed, source, changed, result.converged)


def _work_notebook(item: Job) -> FileOutcome:
    filename, data, settings, options, fix = item
    try:
        source = decode_notebook(data)
        notebook = read_notebook(source.text)
    except NotebookError as exc:
        return FileOutcome(FileReport(filename, error=str(exc)))
    if not fix:
        if not worth_running(notebook.python.encode("utf-8"), options.report_unused_noqa):
            return FileOutcome(FileReport(filename))
        return FileOutcome(notebook.place(lint_text(filename, notebook.python, settings, options)))
    from mmalint.fixes.fixer import fix_text

    result = fix_text(filename, notebook.python, settings, options, unsafe=fix == "unsafe")
    report = notebook.place(result.report, result.text)
    try:
        fixed_json = notebook.with_python(result.text)
    except NotebookError as exc:
        read = lint_as_read(filename, FileOutcome(report, source=source, notebook=notebook), settings, options)
        return FileOutcome(replace(read, error=str(exc)), source=source, notebook=notebook)
    changed = fixed_json if fixed_json != source.text else None
    return FileOutcome(report, result.fixed if changed else Counter(), source, changed, result.converged, notebook)


def lint_as_read(filename: str, outcome: FileOutcome, settings: Settings, options: LintOptions) -> FileReport:
    """The report of the text `outcome` was fixed from, as it was read (for a file whose fixes
    were not written): a notebook's through its cells."""
    assert outcome.source is not None
    if outcome.notebook is not None:
        python = outcome.notebook.python
        return outcome.notebook.place(lint_text(filename, python, settings, options))
    return lint_text(filename, outcome.source.text, settings, options)


def _notebook_code(data: bytes) -> bytes:
    """What the prefilter reads in a notebook: its code cells (JSON escapes such as the `\\n` of
    `"x\\nmma(..."` hide a word from a scan of the bytes), or NotebookError."""
    return read_notebook(decode_notebook(data).text).python.encode("utf-8")


def _in_pool(items: list[Job], workers: int) -> list[FileOutcome]:
    """`work` over `items` on `workers` processes. A worker that dies (a native crash in a
    parser, the kernel's OOM killer) breaks the pool: the files it left unfinished are run
    again one per fresh process, so the crash costs only the file that caused it."""
    outcomes: list[FileOutcome | None] = [None] * len(items)
    try:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(work, item): i for i, item in enumerate(items)}
            for future, i in futures.items():
                with contextlib.suppress(BrokenProcessPool):
                    outcomes[i] = future.result()
    except (OSError, RuntimeError):  # no processes here (a sandbox): run them in this one
        return [o if o is not None else work(items[i]) for i, o in enumerate(outcomes)]
    for i, outcome in enumerate(outcomes):
        if outcome is None:
            outcomes[i] = _alone(items[i])
    return [o for o in outcomes if o is not None]


def _alone(item: Job) -> FileOutcome:
    """`work` on one file in a process of its own, after a crash broke the shared pool."""
    try:
        with ProcessPoolExecutor(max_workers=1) as pool:
            return pool.submit(work, item).result()
    except BrokenProcessPool:
        return FileOutcome(FileReport(item[0], error=internal_error(
            "the process analysing it died, e.g. a crash in a native parser")))


def run(
    files: Iterable[Discovered],
    settings: Settings | dict[str, Settings],
    jobs: int | None = None,
    options: LintOptions | None = None,
    fix: FixMode = "",
) -> RunResult:
    options = options or LintOptions()
    result = RunResult()
    pending: list[tuple[Discovered, Job]] = []
    files = list(files)
    read: list[tuple[Discovered, bytes, bytes, bool]] = []  # entry, data, code, prefilter's say
    for entry in files:
        try:
            data = read_regular(entry.path)
        except UnreadableInput as exc:
            result.input_errors.append(f"{entry.display}: {exc}")
            continue
        try:
            code = _notebook_code(data) if is_notebook(entry.display) else data
        except NotebookError as exc:
            result.reports.append(FileReport(entry.display, error=str(exc)))
            continue
        read.append((entry, data, code, worth_running(code, options.report_unused_noqa)))
    # The run's files are its program's checked files; those the prefilter passed are known to
    # name an MMA API, so no process scans them again.
    checked = [str(entry.path) for entry in files]
    triggered = [str(entry.path) for entry, _, _, hit in read if hit and not is_notebook(entry.display)]
    this_run = new_run()
    specs: dict[tuple[str | None, tuple[str, ...] | None], ProgramSpec] = {}
    for entry, data, code, hit in read:
        file_settings = settings[entry.display] if isinstance(settings, dict) else settings
        tree = (file_settings.project_root, file_settings.src)
        if tree not in specs:
            specs[tree] = tree_spec(file_settings, checked, run=this_run, triggered=triggered)
        file_options = replace(options, program=specs[tree]) if not is_notebook(entry.display) else options
        if not hit and not reaches_elsewhere(entry.display, code, file_options):
            result.reports.append(FileReport(entry.display))
            continue
        pending.append((entry, (entry.display, data, file_settings, file_options, fix)))
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    items = [job for _, job in pending]
    outcomes: list[FileOutcome]
    if workers > 1 and len(pending) >= PARALLEL_THRESHOLD:
        outcomes = _in_pool(items, min(workers, len(pending)))
    else:
        outcomes = [work(item) for item in items]
    for (entry, _), outcome in zip(pending, outcomes, strict=True):
        result.reports.append(outcome.report)
        result.fixed.update(outcome.fixed)
        if outcome.fixed_text is not None:
            result.changed.append((entry, outcome))
        if not outcome.converged:
            result.not_converged.append(entry.display)
    _once(result.reports)
    for report in result.reports:
        if report.error is not None:
            result.input_errors.append(f"{report.filename}: {report.error}")
    return result


def _once(reports: list[FileReport]) -> None:
    """A finding at an MMA call in a file the run does not check is reported by each checked
    file whose code reaches it: keep it once, in the first report, with the other reports'
    callers among its notes."""
    first: dict[tuple[object, ...], tuple[int, int]] = {}
    for r, report in enumerate(reports):
        if not any(d.filename != report.filename for d in report.diagnostics):
            continue
        kept: list[Diagnostic] = []
        for d in report.diagnostics:
            if d.filename == report.filename or d.code is None:
                kept.append(d)
                continue
            key = (d.code, d.filename, d.range.start, d.range.end, d.message)
            if key not in first:
                first[key] = (r, len(kept))
                kept.append(d)
                continue
            at_report, at = first[key]
            target = kept if at_report == r else list(reports[at_report].diagnostics)
            original = target[at]
            notes = original.related + tuple(n for n in d.related if n not in original.related)
            target[at] = replace(original, related=notes)
            if at_report != r:
                reports[at_report] = replace(reports[at_report], diagnostics=tuple(target))
        reports[r] = replace(report, diagnostics=tuple(kept))
