"""`mmalint confirm findings.json`: the command line of the reference lowering.

`add_arguments(parser)` and `run(args)` are what `mmalint confirm` wires in; `python -m
mmalint.confirm.cli` runs the same command on its own. Exit codes: 0 every finding confirmed
by at least one tier and none not reproduced, 1 otherwise, 2 bad input.

Made for CI logs as much as for a terminal: progress goes to standard error (a bar on a
terminal, else a line per finding as it finishes), and the report is a line per finding unless
`--format table` (every tier's evidence) or `--format json` is asked for.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from mmalint.color import use_color
from mmalint.confirm import report
from mmalint.confirm.options import add_arguments, parse_tiers
from mmalint.confirm.runner import confirm_findings
from mmalint.confirm.signature import FindingsError, read_findings
from mmalint.confirm.verdict import Verdict


def run(args: argparse.Namespace) -> int:
    """Run `mmalint confirm` for parsed `args`; returns the exit code."""
    err = make_console(sys.stderr)
    try:
        stdin_text = sys.stdin.read() if args.findings == "-" else None
        findings = read_findings(args.findings, stdin_text=stdin_text)
    except FindingsError as e:
        err.print(f"[bold red]mmalint confirm: error:[/] {escape(str(e))}", highlight=False,
                  soft_wrap=True)
        return 2
    if not findings:
        err.print("mmalint confirm: no findings to confirm")
        if args.format == "json":
            print("[]")
        return 0
    verdicts = confirm_with_progress(
        findings, parse_tiers(args.tier), err, jobs=args.jobs, devices=args.devices,
        timeout=args.timeout, python=args.python, gpu_backend=args.gpu_backend, seed=args.seed)
    if args.format == "json":
        print(report.to_json(verdicts))
    else:
        show(verdicts, args.format, make_console(sys.stdout))
    return report.summarize(verdicts).exit_code


def make_console(stream: TextIO) -> Console:
    """A console on standard output or error, coloured as `mmalint.color` decides."""
    color = use_color("auto", stream, os.environ)
    return Console(stderr=stream is sys.stderr, force_terminal=True if color else None,
                   no_color=not color)


def show(verdicts: Sequence[Verdict], fmt: str, console: Console) -> None:
    """The report in a text format, `concise` or `table`, with the summary under it."""
    if fmt == "table":
        report.print_table(verdicts, console)
    else:
        report.print_concise(verdicts, console)


def confirm_with_progress(findings: list[dict[str, Any]], tiers: set[str], err: Console,
                          **options: Any) -> list[Verdict]:
    """`confirm_findings`, showing progress on `err`: a bar on a terminal; elsewhere (a CI log)
    a line per finding as its last tier finishes, so a slow run shows that it is alive."""
    if getattr(err.file, "isatty", lambda: False)():  # FORCE_COLOR in a CI log: still no bar
        with Progress(TextColumn("confirming"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), TextColumn("{task.description}"), console=err,
                      transient=True) as bar:
            task = bar.add_task("", total=len(findings) * len(tiers))

            def update(done: int, total: int, verdict: Verdict) -> None:
                bar.update(task, completed=done, total=total,
                           description=f"{verdict.code} {verdict.tier}: {verdict.verdict}")

            return confirm_findings(findings, tiers, progress=update, **options)
    pending: dict[int, list[Verdict]] = {}
    finished = 0

    def line(done: int, total: int, verdict: Verdict) -> None:
        nonlocal finished
        group = pending.setdefault(verdict.index, [])
        group.append(verdict)
        if len(group) < len(tiers):
            return
        finished += 1
        seconds = sum(v.seconds for v in group)
        err.print(f"confirm [{finished}/{len(findings)}] {verdict.filename}:{verdict.location[0]}:"
                  f"{verdict.location[1]}: {verdict.code} "
                  f"{report.outcome({v.verdict for v in group})} ({seconds:.1f} s)",
                  highlight=False, soft_wrap=True)
        err.file.flush()

    return confirm_findings(findings, tiers, progress=line, **options)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mmalint confirm")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
