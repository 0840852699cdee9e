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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from mmalint.diagnostics import Diagnostic, FileReport
from mmalint.discover import Discovered
from mmalint.inputs import RealPaths, UnreadableInput, read_regular
from mmalint.notebook import is_notebook
from mmalint.pipeline.cache import result_key
from mmalint.runtime import batch_gc, batch_worker
from mmalint.settings import Settings
from mmalint.tree import Observed, ProgramSpec, digest, file_stamp, new_run, tree_spec

if TYPE_CHECKING:
    from mmalint.notebook import Notebook
    from mmalint.pipeline.cache import Cache
    from mmalint.pipeline.options import LintOptions
    from mmalint.source_io import SourceText

# Below this many files that pass the prefilter, starting worker processes costs more than it saves.
PARALLEL_THRESHOLD = 4

# How many of the largest files, per worker, the pool is handed before the others (`_in_pool`).
LARGEST_FIRST_PER_WORKER = 2

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
        from mmalint.source_io import encode

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
    # Per file checked with a cache: its real path, its result's key but the content hash, and
    # whether noqa comments alone make it worth running, for keeping the result of its fixed
    # text once that is written (`keep_fixed`).
    keys: dict[str, tuple[str, tuple[object, ...], bool]] = field(default_factory=dict)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for r in self.reports for d in r.diagnostics]


Job = tuple[str, bytes, Settings, "LintOptions", FixMode]


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
    from mmalint.fixes.fixer import fix_text
    from mmalint.pipeline.file import lint_bytes
    from mmalint.pipeline.text import InputError
    from mmalint.source_io import decode

    filename, data, settings, options, fix = item
    if is_notebook(filename):
        return _work_notebook(item)
    if not fix:
        return FileOutcome(lint_bytes(filename, data, settings, options))

    try:
        source = decode(data)
    except InputError as exc:
        return FileOutcome(FileReport(filename, error=str(exc)))
    result = fix_text(filename, source.text, settings, options, unsafe=fix == "unsafe")
    changed = result.text if result.text != source.text else None
    return FileOutcome(result.report, result.fixed, source, changed, result.converged)


def _work_notebook(item: Job) -> FileOutcome:
    from mmalint.fixes.fixer import fix_text
    from mmalint.notebook import NotebookError, decode_notebook, read_notebook
    from mmalint.pipeline.file import lint_text
    from mmalint.pipeline.text import worth_running

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
    from mmalint.pipeline.file import lint_text

    assert outcome.source is not None
    if outcome.notebook is not None:
        python = outcome.notebook.python
        return outcome.notebook.place(lint_text(filename, python, settings, options))
    return lint_text(filename, outcome.source.text, settings, options)


def _notebook_code(data: bytes) -> bytes:
    """What the prefilter reads in a notebook: its code cells (JSON escapes such as the `\\n` of
    `"x\\nmma(..."` hide a word from a scan of the bytes), or NotebookError."""
    from mmalint.notebook import decode_notebook, read_notebook

    return read_notebook(decode_notebook(data).text).python.encode("utf-8")


def _in_pool(
    items: list[Job], workers: int, meanwhile: Callable[[], None], done: Callable[[int, FileOutcome], None]
) -> None:
    """`work` over `items` on `workers` processes, `done` called with each outcome (in order,
    as they come) and `meanwhile` once the work is handed out. A worker that dies (a native
    crash in a parser, the kernel's OOM killer) breaks the pool: the files it left unfinished
    are run again one per fresh process, so the crash costs only the file that caused it."""
    # Loaded here, before the workers start, so that they inherit it (fork) rather than each
    # loading it again: the prefilter and the import graph did not need it. The pool itself
    # (concurrent.futures, multiprocessing: 15 ms) only a run that has one loads.
    from concurrent.futures import Future, ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    import mmalint.pipeline.file  # noqa: F401

    finished = [False] * len(items)
    started = False
    try:
        # A process started by spawn (macOS) does not inherit the parent's collector settings;
        # a worker checks a batch of files and ends (`runtime.batch_worker`).
        with ProcessPoolExecutor(max_workers=workers, initializer=batch_worker) as pool:
            submitted: dict[int, Future[FileOutcome]] = {}
            # A worker that dies while the jobs are still handed out breaks the pool there:
            # those not handed out run below, each in a process of its own, never in this one.
            with contextlib.suppress(BrokenProcessPool):
                for i in submission_order(items, workers):
                    submitted[i] = pool.submit(work, items[i])
            started = True
            meanwhile()
            for i in sorted(submitted):
                with contextlib.suppress(BrokenProcessPool):
                    outcome = submitted[i].result()
                    finished[i] = True
                    done(i, outcome)
    except (OSError, RuntimeError):  # no processes here (a sandbox): run them in this one
        if not started:
            meanwhile()
        with batch_gc():  # a batch in this process, as `-j 1` runs one
            for i, item in enumerate(items):
                if not finished[i]:
                    finished[i] = True
                    done(i, work(item))
        return
    for i, item in enumerate(items):
        if not finished[i]:
            done(i, _alone(item))


def submission_order(items: list[Job], workers: int) -> list[int]:
    """The order the pool is handed the jobs: the largest few files first (`LARGEST_FIRST_PER_WORKER`
    per worker), then the others in the run's order.

    In the run's order a large file handed out last keeps one worker busy while the others
    are idle (jax's tree: the last of its two largest test files ended 0.6 s after the other
    worker). Sorting every file by size evens that out but costs more than it saves: a
    worker's program reuses what it indexed and parsed for the files before (a directory's
    files import the same modules), and that order keeps them together.
    """
    largest = sorted(range(len(items)), key=lambda i: -len(items[i][1]))[: LARGEST_FIRST_PER_WORKER * workers]
    first = set(largest)
    return [*largest, *(i for i in range(len(items)) if i not in first)]


def _alone(item: Job) -> FileOutcome:
    """`work` on one file in a process of its own, after a crash broke the shared pool."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        with ProcessPoolExecutor(max_workers=1, initializer=batch_worker) as pool:
            return pool.submit(work, item).result()
    except BrokenProcessPool:
        return FileOutcome(FileReport(item[0], error=internal_error(
            "the process analysing it died, e.g. a crash in a native parser")))


@dataclass
class _File:
    """One file of a run, from its bytes to its outcome."""

    entry: Discovered
    data: bytes
    settings: Settings
    real: str
    hash: str = ""  # of `data`, with a cache
    key_parts: tuple[object, ...] = ()  # its result's key, but for the content hash (`result_key`)
    triggered: bool | None = None  # the prefilter's say, when known
    outcome: FileOutcome | None = None
    hit: bool = False  # the outcome is the cache's
    walked: Observed | None = None  # what deciding to check a file without an MMA word read
    stamp: list[int] | None = None  # its `file_stamp` before it was read (with a cache)
    unread: bool = False  # `hash` is its entry's, by its stamp; `data` is read if it misses


def run(
    files: Iterable[Discovered],
    settings: Settings | dict[str, Settings],
    jobs: int | None = None,
    options: LintOptions | None = None,
    fix: FixMode = "",
    cache: Cache | None = None,
) -> RunResult:
    """Every file's report (in the order of `files`), and with a fix mode the fixes. With a
    `cache`, a file whose entry still holds is not checked again (`pipeline.cache`), and each
    result computed is kept there."""
    from mmalint.pipeline.options import LintOptions

    options = options or LintOptions()
    if cache is not None:
        options = replace(options, observe=True)
    result = RunResult()
    files = list(files)
    items: list[_File] = []
    real = RealPaths()
    for entry in files:
        file_settings = settings[entry.display] if isinstance(settings, dict) else settings
        f = _File(entry, b"", file_settings, real(entry.path))
        if cache is not None:
            # Looked at before it is read: a change meanwhile shows in the next run's stamp.
            f.stamp = file_stamp(entry.path)
            trusted = cache.trusted_hash(f.real, f.stamp)
            if trusted is not None:
                f.hash, f.unread = trusted, True  # read only if its entry does not hold
                items.append(f)
                continue
        try:
            f.data = read_regular(entry.path)
        except UnreadableInput as exc:
            result.input_errors.append(f"{entry.display}: {exc}")
            continue
        f.hash = digest(f.data) if cache else ""
        items.append(f)
    reprs: dict[int, tuple[object, str]] = {}  # `result_key`'s texts of the parts the files share
    if cache is not None:
        _look_up(cache, items, options, fix, reprs)
        items = _read_misses(items, result)
        for f in items:
            if f.hit and not f.unread:
                cache.restamp(f.real, f.stamp, f.hash)
        result.keys = {f.entry.display: (f.real, f.key_parts, options.report_unused_noqa) for f in items}
    pending: list[tuple[_File, Job]] = []
    if any(f.outcome is None for f in items):
        pending = _prepare(files, items, options, fix, cache.memo_dir() if cache is not None else "")
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    jobs_of = [job for _, job in pending]
    known = {f.real: f.hash for f in items}
    kept: dict[int, FileOutcome] = {}  # id(_File) -> its outcome, as the cache gives it back

    def keep(f: _File) -> None:
        """A file's outcome is in: kept in the cache (while the pool works on the others)."""
        outcome = f.outcome
        assert outcome is not None
        if cache is not None and not f.hit:
            if outcome.fixed_text is None and outcome.converged:
                cache.save(f.real, result_key((known[f.real], *f.key_parts), reprs), bool(f.triggered), outcome.report, known,
                           stamp=f.stamp, hashed=known[f.real])
            # What a hit gives back, so that a miss and a hit print the same bytes.
            outcome = replace(outcome, report=_as_kept(outcome.report))
        kept[id(f)] = outcome

    def meanwhile() -> None:
        for f in items:
            if f.outcome is not None:
                keep(f)

    def done(i: int, computed: FileOutcome) -> None:
        f = pending[i][0]
        if f.walked is not None and computed.report.observed is not None:
            computed.report.observed.merge(f.walked)
        f.outcome = computed
        keep(f)

    if workers > 1 and len(pending) >= PARALLEL_THRESHOLD:
        _in_pool(jobs_of, min(workers, len(pending)), meanwhile, done)
    else:
        meanwhile()
        with batch_gc():
            for i, job in enumerate(jobs_of):
                done(i, work(job))
    for f in items:
        outcome = kept[id(f)]
        result.reports.append(outcome.report)
        result.fixed.update(outcome.fixed)
        if outcome.fixed_text is not None:
            result.changed.append((f.entry, outcome))
        if not outcome.converged:
            result.not_converged.append(f.entry.display)
    _once(result.reports)
    for report in result.reports:
        if report.error is not None:
            result.input_errors.append(f"{report.filename}: {report.error}")
    return result


def _read_misses(items: list[_File], result: RunResult) -> list[_File]:
    """The files taken by their stamp whose entry did not hold, read now (their hash as read);
    one that cannot be read any more is an input error, as at the start."""
    kept: list[_File] = []
    for f in items:
        if f.unread and f.outcome is None:
            try:
                f.data = read_regular(f.entry.path)
            except UnreadableInput as exc:
                result.input_errors.append(f"{f.entry.display}: {exc}")
                continue
            f.hash, f.unread = digest(f.data), False
        kept.append(f)
    return kept


def _look_up(
    cache: Cache, items: list[_File], options: LintOptions, fix: FixMode, reprs: dict[int, tuple[object, str]]
) -> None:
    """Each file's entry: its outcome when the entry still holds (and, with a fix mode, offers
    no fix to apply: fixes are computed afresh, never applied from an entry)."""
    from mmalint.pipeline.cache import Validator, decode_report

    validator = Validator(cache, frozenset(f.real for f in items), {f.real: f.hash for f in items})
    cwd = os.getcwd()
    shapes: dict[tuple[str | None, tuple[str, ...] | None], ProgramSpec] = {}  # the tree, but the run's files
    for f in items:
        tree = (f.settings.project_root, f.settings.src)
        if tree not in shapes:
            shapes[tree] = tree_spec(f.settings, run="")
        shape = shapes[tree]
        f.key_parts = (
            f.entry.display, f.real, cwd, f.settings, options.report_unused_noqa, options.ignore_noqa,
            shape.roots, shape.tree, is_notebook(f.entry.display),
        )
        found = cache.load(f.real)
        if found is None or found.get("key") != result_key((f.hash, *f.key_parts), reprs):
            continue
        f.triggered = found.get("triggered") is True
        if not validator.valid(found):
            continue
        report = decode_report(found)
        if report is None or report.filename != f.entry.display or (fix and _fixable(report, fix)):
            continue
        f.outcome = FileOutcome(report)
        f.hit = True


def _prepare(
    files: list[Discovered], items: list[_File], options: LintOptions, fix: FixMode, memo: str = ""
) -> list[tuple[_File, Job]]:
    """The prefilter and the checked tree for the files without an outcome yet: the outcome of
    those not worth running, and the jobs of the others."""
    from mmalint.notebook import NotebookError
    from mmalint.pipeline.reach import program_for, reaches_elsewhere
    from mmalint.pipeline.text import worth_running

    codes: dict[int, bytes] = {}
    for f in items:
        if f.outcome is not None:
            continue
        try:
            codes[id(f)] = _notebook_code(f.data) if is_notebook(f.entry.display) else f.data
        except NotebookError as exc:
            f.outcome = FileOutcome(FileReport(f.entry.display, error=str(exc), observed=Observed(own=f.real)))
            continue
        if f.triggered is None:
            f.triggered = worth_running(codes[id(f)], options.report_unused_noqa)
    # The run's files are its program's checked files; those the prefilter passed are known to
    # name an MMA API, so no process scans them again.
    checked = [str(entry.path) for entry in files]
    names = {str(entry.path): entry.display for entry in files}
    triggered = [str(f.entry.path) for f in items if f.triggered and not is_notebook(f.entry.display)]
    this_run = new_run()
    specs: dict[tuple[str | None, tuple[str, ...] | None], ProgramSpec] = {}
    pending: list[tuple[_File, Job]] = []
    for f in items:
        if f.outcome is not None:
            continue
        tree = (f.settings.project_root, f.settings.src)
        if tree not in specs:
            specs[tree] = tree_spec(f.settings, checked, run=this_run, triggered=triggered, memo=memo, names=names)
        file_options = replace(options, program=specs[tree]) if not is_notebook(f.entry.display) else options
        if not f.triggered:
            # Not worth running, unless it leads to an MMA call in a file the run does not
            # check: what this process read to decide it is the empty result's input.
            observed = Observed(own=f.real) if options.observe else None
            program = program_for(specs[tree]) if file_options.program is not None else None
            if program is not None:
                program.observed = observed
            try:
                elsewhere = reaches_elsewhere(f.entry.display, codes[id(f)], file_options)
            finally:
                if program is not None:
                    program.observed = None
            if not elsewhere:
                f.outcome = FileOutcome(FileReport(f.entry.display, observed=observed))
                continue
            # Its check runs because of what other files hold now: what showed it is an input
            # of its result too (a record that cannot say so keeps the result out of the cache).
            f.walked = observed
        pending.append((f, (f.entry.display, f.data, f.settings, file_options, fix)))
    return pending


def keep_fixed(cache: Cache, result: RunResult, entry: Discovered, outcome: FileOutcome) -> None:
    """Once a file's fixes are written, its entry is the fixed text's (its report is of that
    text, computed by the fix loop's last pass)."""
    from mmalint.pipeline.text import worth_running

    data = outcome.fixed_data()
    if data is None or entry.display not in result.keys or outcome.notebook is not None or not outcome.converged:
        return
    real, parts, report_unused_noqa = result.keys[entry.display]
    # The stamp of the file as written (modified just now: the next run reads it all the same).
    cache.save(real, result_key((digest(data), *parts)), worth_running(data, report_unused_noqa), outcome.report,
               stamp=file_stamp(entry.path), hashed=digest(data))


def _as_kept(report: FileReport) -> FileReport:
    from mmalint.pipeline.cache import round_trip

    return replace(round_trip(report), observed=report.observed)


def _fixable(report: FileReport, fix: FixMode) -> bool:
    """Whether `--fix` would apply one of the report's fixes (`fixes.apply.applicable`)."""
    from mmalint.fixes.apply import applicable

    return any(applicable(d.fix, fix == "unsafe") for d in report.diagnostics)


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
