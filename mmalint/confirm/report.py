"""Showing verdicts: a rich table, a JSON array, a one-line summary, and the exit code."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table
from rich.text import Text

from mmalint.confirm.verdict import CONFIRMED, INCONCLUSIVE, NOT_REPRODUCED, Verdict

_STYLES = {CONFIRMED: "bold green", NOT_REPRODUCED: "bold red", INCONCLUSIVE: "yellow"}


@dataclass(frozen=True)
class Summary:
    findings: int
    confirmed: int  # confirmed by at least one tier and not reproduced by none
    not_reproduced: int  # not reproduced by at least one tier
    unconfirmed: int  # only inconclusive verdicts

    @property
    def exit_code(self) -> int:
        """0: every finding confirmed by at least one tier and none not reproduced; else 1."""
        return 0 if self.confirmed == self.findings else 1

    def __str__(self) -> str:
        return (f"{self.findings} finding(s): {self.confirmed} confirmed, "
                f"{self.not_reproduced} not reproduced, {self.unconfirmed} inconclusive only")


def summarize(verdicts: Sequence[Verdict]) -> Summary:
    kinds: dict[int, set[str]] = {}
    for v in verdicts:
        kinds.setdefault(v.index, set()).add(v.verdict)
    not_reproduced = sum(1 for k in kinds.values() if NOT_REPRODUCED in k)
    confirmed = sum(1 for k in kinds.values() if CONFIRMED in k and NOT_REPRODUCED not in k)
    return Summary(len(kinds), confirmed, not_reproduced, len(kinds) - confirmed - not_reproduced)


def to_json(verdicts: Sequence[Verdict]) -> str:
    return json.dumps([v.to_json() for v in verdicts], indent=2, default=str)


def table(verdicts: Sequence[Verdict]) -> Table:
    grid = Table(title="mmalint confirm", show_lines=True, expand=True)
    grid.add_column("finding", ratio=2, overflow="fold")
    grid.add_column("tier", no_wrap=True)
    grid.add_column("verdict", no_wrap=True)
    grid.add_column("evidence", ratio=6, overflow="fold")
    grid.add_column("time", justify="right", no_wrap=True)
    for v in verdicts:
        finding = Text(v.code, style="bold")
        finding.append(f"\n{v.filename}:{v.location[0]}:{v.location[1]}", style="dim")
        grid.add_row(finding, v.tier, Text(v.verdict, style=_STYLES.get(v.verdict, "")),
                     Text(v.evidence), f"{v.seconds:.2f} s")
    return grid


def print_table(verdicts: Sequence[Verdict], console: Console) -> None:
    console.print(table(verdicts))
    console.print(str(summarize(verdicts)))
