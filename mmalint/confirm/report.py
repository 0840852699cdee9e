"""Showing verdicts: one line per finding (the default), a rich table, a JSON array, a one-line
summary, and the exit code."""

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
        parts = [f"{self.confirmed} confirmed"]
        if self.not_reproduced:
            parts.append(f"{self.not_reproduced} not reproduced")
        if self.unconfirmed:
            parts.append(f"{self.unconfirmed} inconclusive in every tier")
        noun = "finding" if self.findings == 1 else "findings"
        return f"{self.findings} {noun}: {', '.join(parts)}"


def outcome(kinds: set[str]) -> str:
    """A finding's verdict over its tiers: not reproduced by one tier outweighs confirmations."""
    if NOT_REPRODUCED in kinds:
        return NOT_REPRODUCED
    return CONFIRMED if CONFIRMED in kinds else INCONCLUSIVE


def summarize(verdicts: Sequence[Verdict]) -> Summary:
    kinds = {index: {v.verdict for v in group} for index, group in by_finding(verdicts).items()}
    outcomes = [outcome(k) for k in kinds.values()]
    return Summary(len(kinds), outcomes.count(CONFIRMED), outcomes.count(NOT_REPRODUCED),
                   outcomes.count(INCONCLUSIVE))


def by_finding(verdicts: Sequence[Verdict]) -> dict[int, list[Verdict]]:
    """The verdicts of each finding (by its index in the input), in input order."""
    groups: dict[int, list[Verdict]] = {}
    for v in sorted(verdicts, key=lambda v: v.index):
        groups.setdefault(v.index, []).append(v)
    return groups


# The evidence shown on a finding's line; the table and --format json have all of it.
EVIDENCE_CHARS = 160


def finding_line(verdicts: Sequence[Verdict]) -> Text:
    """One finding in one line: where, the code, its verdict, each tier's, and for a finding not
    confirmed the evidence that decided it."""
    first = verdicts[0]
    verdict = outcome({v.verdict for v in verdicts})
    line = Text(f"{first.filename}:{first.location[0]}:{first.location[1]}: ")
    line.append(first.code, style="bold")
    line.append(" ")
    line.append(verdict, style=_STYLES.get(verdict, ""))
    line.append(" (" + ", ".join(f"{v.tier}: {v.verdict}" for v in verdicts) + ")", style="dim")
    if verdict != CONFIRMED:
        why = [v for v in verdicts if v.verdict == verdict][-1]  # the most thorough tier that says so
        evidence = why.evidence.splitlines()[0] if why.evidence else ""
        if len(evidence) > EVIDENCE_CHARS:
            evidence = evidence[: EVIDENCE_CHARS - 1] + "…"
        line.append(f" {why.tier}: {evidence}")
    return line


def print_concise(verdicts: Sequence[Verdict], console: Console) -> None:
    """The default report: a line per finding, then the summary."""
    for group in by_finding(verdicts).values():
        console.print(finding_line(group), soft_wrap=True, highlight=False)
    console.print(str(summarize(verdicts)), highlight=False)


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
