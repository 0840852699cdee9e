"""A lint child's job run in this process, for the tests of the language server's reuse and
re-run of a document's last lint (`test_lsp_incremental.py`, `test_lsp_rerun.py`)."""

from __future__ import annotations

from pathlib import Path

from mmalint.lsp.worker import Job, Linted, run_job
from mmalint.pipeline.options import LintOptions


def lint(path: Path, text: str, memo=None) -> Linted:
    outcome = run_job(Job("lint", str(path), text, None, LintOptions(), memo=memo))
    assert isinstance(outcome, Linted), outcome
    return outcome


def same(a: Linted, b: Linted) -> bool:
    """The two answers publish the same: report, noqa edits, other files' texts."""
    return a.report == b.report and a.noqa == b.noqa and a.others == b.others
