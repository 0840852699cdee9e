"""Runs the pipeline over many files: prefilter in this process, the rest on every core.

Workers only compute (a report, and with `fix` the fixed bytes); the caller decides what to
write, so `--diff` and `--fix` share one path and no worker touches the file system.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from mmalint.analysis import may_contain_mma
from mmalint.diagnostics import Diagnostic
from mmalint.discover import Discovered
from mmalint.engine import FileReport
from mmalint.lint import LintOptions, lint_bytes
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

    def fixed_data(self) -> bytes | None:
        if self.fixed_text is None or self.source is None:
            return None
        return encode(self.fixed_text, self.source)


@dataclass
class RunResult:
    reports: list[FileReport] = field(default_factory=list)
    files_seen: int = 0
    input_errors: list[str] = field(default_factory=list)
    changed: list[tuple[Discovered, FileOutcome]] = field(default_factory=list)
    fixed: Counter[str] = field(default_factory=Counter)
    not_converged: list[str] = field(default_factory=list)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for r in self.reports for d in r.diagnostics]


Job = tuple[str, bytes, Settings, LintOptions, FixMode]


def work(item: Job) -> FileOutcome:
    """One file: its report, or with a fix mode the fix loop's result."""
    filename, data, settings, options, fix = item
    if not fix:
        return FileOutcome(lint_bytes(filename, data, settings, options))
    from mmalint.engine import InputError
    from mmalint.fixes.fixer import fix_text

    try:
        source = decode(data)
    except InputError as exc:
        return FileOutcome(FileReport(filename, error=str(exc)))
    result = fix_text(filename, source.text, settings, options, unsafe=fix == "unsafe")
    changed = result.text if result.text != source.text else None
    return FileOutcome(result.report, result.fixed, source, changed, result.converged)


def _worth_running(data: bytes, options: LintOptions) -> bool:
    return may_contain_mma(data) or (options.report_unused_noqa and b"noqa" in data.lower())


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
    for entry in files:
        result.files_seen += 1
        try:
            data = entry.path.read_bytes()
        except OSError as exc:
            result.input_errors.append(f"{entry.display}: {exc.strerror or exc}")
            continue
        if not _worth_running(data, options):
            result.reports.append(FileReport(entry.display))
            continue
        file_settings = settings[entry.display] if isinstance(settings, dict) else settings
        pending.append((entry, (entry.display, data, file_settings, options, fix)))
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    items = [job for _, job in pending]
    outcomes: list[FileOutcome]
    if workers > 1 and len(pending) >= PARALLEL_THRESHOLD:
        try:
            with ProcessPoolExecutor(max_workers=min(workers, len(pending))) as pool:
                outcomes = list(pool.map(work, items, chunksize=1))
        except (OSError, RuntimeError):
            outcomes = [work(item) for item in items]
    else:
        outcomes = [work(item) for item in items]
    for (entry, _), outcome in zip(pending, outcomes, strict=True):
        result.reports.append(outcome.report)
        result.fixed.update(outcome.fixed)
        if outcome.fixed_text is not None:
            result.changed.append((entry, outcome))
        if not outcome.converged:
            result.not_converged.append(entry.display)
    for report in result.reports:
        if report.error is not None:
            result.input_errors.append(f"{report.filename}: {report.error}")
    return result
