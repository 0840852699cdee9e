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
from mmalint.confirm.runner import DEFAULT_TIMEOUT, GPU_BACKENDS, confirm_findings, parse_tiers
from mmalint.confirm.signature import FindingsError, read_findings
from mmalint.confirm.verdict import TIERS, Verdict

FORMATS = ("concise", "table", "json")

# Wrapped by hand: the epilog's tables need RawDescriptionHelpFormatter, which wraps nothing.
DESCRIPTION = """\
Confirm mmalint findings with a reference lowering (ptxas, jax, a GPU). Never runs the
checked code: each call is rebuilt from its signature in the findings of
`mmalint check --format json`."""

EPILOG = """\
tiers (--tier, each finding is tried in every tier asked for):
  ptx   ptxas (CUDA toolkit): does the mma.sync instruction the call needs exist?
  jax   the installed jax on the CPU: does building and lowering the call raise the
        predicted error (or emit the wrong instruction, for the silent rules)?
  gpu   an NVIDIA GPU (jax or CuPy): run the call and its fix against NumPy.

verdicts (per finding and tier):
  confirmed       what ran shows the mistake (the predicted exception and message, the
                  instruction missing from PTX, wrong numbers next to a correct fix)
  not reproduced  what ran disagrees: it built or ran correctly, or raised something else
  inconclusive    the tier cannot decide (no GPU, no ptxas, another jax, does not apply),
                  with the reason
A finding is confirmed when some tier confirms it and none fails to reproduce it.

output: progress on standard error (a bar on a terminal, else a line per finding as it
finishes); the report on standard output: a line per finding (--format concise, the
default), --format table for every tier's evidence, or --format json.

exit codes:
  0  every finding confirmed by at least one tier, none not reproduced
  1  a finding not reproduced by some tier, or inconclusive in every tier
  2  bad input or options (unreadable file, invalid JSON, not findings)

See docs/confirm.md for what each tier builds and checks.
"""


def _devices(text: str) -> list[int]:
    try:
        devices = [int(d) for d in text.split(",") if d.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--devices takes GPU ids like 0,1, got {text!r}") from None
    if not devices or any(d < 0 for d in devices):
        raise argparse.ArgumentTypeError(f"--devices takes GPU ids like 0,1, got {text!r}")
    return devices


def _tiers(text: str) -> str:
    unknown = parse_tiers(text) - set(TIERS)
    if unknown or not parse_tiers(text):
        raise argparse.ArgumentTypeError(
            f"--tier takes ptx, jax, gpu, all or a comma-separated list, got {text!r}")
    return text


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--jobs takes a number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"--jobs takes a positive number, got {text!r}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments, description and help epilog of `mmalint confirm`."""
    parser.description = DESCRIPTION
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("findings", help="findings from `mmalint check --format json` "
                        "(a file, or - for standard input)")
    parser.add_argument("--tier", type=_tiers, default="all",
                        help="ptx, jax, gpu, all (default) or a comma-separated list")
    parser.add_argument("--jobs", "-j", type=_jobs, default=min(os.cpu_count() or 1, 8),
                        help="cases run at once (default: CPUs, at most 8)")
    parser.add_argument("--devices", type=_devices, default=None,
                        help="GPU ids to spread gpu-tier cases over, e.g. 0,1 "
                             "(default: what CUDA_VISIBLE_DEVICES allows)")
    parser.add_argument("--timeout", type=_positive, default=DEFAULT_TIMEOUT,
                        help=f"seconds per case before it is killed (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--format", choices=FORMATS, default="concise",
                        help="concise (default: a line per finding, its verdict in each tier), table "
                             "(every tier's evidence) or json (an array of verdicts)")
    parser.add_argument("--python", default=None,
                        help="interpreter with jax (and cupy) for the jax and gpu tiers "
                             "(default: this one)")
    parser.add_argument("--gpu-backend", choices=GPU_BACKENDS, default="auto",
                        help="gpu tier: jax kernels, the bundled CuPy kernel, or auto "
                             "(jax when it sees a GPU, else CuPy)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random test data")


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
