"""What a check is asked for beyond the rule settings: plain data that every stage reads, and
that a run answered from its cache reads without loading the stages."""

from __future__ import annotations

from dataclasses import dataclass

from mmalint.tree import ProgramSpec


@dataclass(frozen=True)
class LintOptions:
    """What the user asked for beyond the rule settings, and the checked tree the file is read
    in (`program`: None reads it alone)."""

    report_unused_noqa: bool = False
    ignore_noqa: bool = False  # `--ignore-noqa`: report the findings that noqa comments hide
    program: ProgramSpec | None = None
    # Keep a record of what each file's check reads of the tree (`FileReport.observed`), for
    # the result cache: each file is then checked by a program of its own.
    observe: bool = False
