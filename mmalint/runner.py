"""Runs the engine over many files: prefilter in this process, the rest on every core."""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from mmalint.analysis import may_contain_mma
from mmalint.discover import Discovered
from mmalint.engine import FileReport, check_bytes
from mmalint.settings import Settings

# Below this many files that pass the prefilter, starting worker processes costs more than it saves.
PARALLEL_THRESHOLD = 4


@dataclass
class RunResult:
    reports: list[FileReport] = field(default_factory=list)
    files_seen: int = 0
    input_errors: list[str] = field(default_factory=list)

    @property
    def diagnostics(self) -> list:  # type: ignore[type-arg]
        return [d for r in self.reports for d in r.diagnostics]


def _work(item: tuple[str, bytes, Settings]) -> FileReport:
    filename, data, settings = item
    return check_bytes(filename, data, settings)


def run(files: Iterable[Discovered], settings: Settings, jobs: int | None = None) -> RunResult:
    result = RunResult()
    pending: list[tuple[str, bytes, Settings]] = []
    for entry in files:
        result.files_seen += 1
        try:
            data = entry.path.read_bytes()
        except OSError as exc:
            result.input_errors.append(f"{entry.display}: {exc.strerror or exc}")
            continue
        if not may_contain_mma(data):
            result.reports.append(FileReport(entry.display))
            continue
        pending.append((entry.display, data, settings))
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    if workers > 1 and len(pending) >= PARALLEL_THRESHOLD:
        try:
            with ProcessPoolExecutor(max_workers=min(workers, len(pending))) as pool:
                result.reports.extend(pool.map(_work, pending, chunksize=1))
        except (OSError, RuntimeError):
            result.reports.extend(_work(item) for item in pending)
    else:
        result.reports.extend(_work(item) for item in pending)
    for report in result.reports:
        if report.error is not None:
            result.input_errors.append(f"{report.filename}: {report.error}")
    return result
