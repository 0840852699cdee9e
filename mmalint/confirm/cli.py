"""`mmalint confirm findings.json`: the command line of the reference lowering.

`add_arguments(parser)` and `run(args)` are what `mmalint confirm` wires in; `python -m
mmalint.confirm.cli` runs the same command on its own. Exit codes: 0 every finding confirmed
by at least one tier and none not reproduced, 1 otherwise, 2 bad input.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from mmalint.confirm import report
from mmalint.confirm.runner import DEFAULT_TIMEOUT, GPU_BACKENDS, confirm_findings, parse_tiers
from mmalint.confirm.signature import FindingsError, read_findings
from mmalint.confirm.verdict import TIERS, Verdict


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
    """The arguments of `mmalint confirm`."""
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
    parser.add_argument("--format", choices=("table", "json"), default="table",
                        help="table (default) or a JSON array of verdicts")
    parser.add_argument("--python", default=None,
                        help="interpreter with jax (and cupy) for the jax and gpu tiers "
                             "(default: this one)")
    parser.add_argument("--gpu-backend", choices=GPU_BACKENDS, default="auto",
                        help="gpu tier: jax kernels, the bundled CuPy kernel, or auto "
                             "(jax when it sees a GPU, else CuPy)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random test data")


def run(args: argparse.Namespace) -> int:
    """Run `mmalint confirm` for parsed `args`; returns the exit code."""
    err = Console(stderr=True)
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
    tiers = parse_tiers(args.tier)
    kwargs: dict[str, Any] = {"python": args.python, "gpu_backend": args.gpu_backend,
                              "seed": args.seed}
    if sys.stderr.isatty():
        with Progress(TextColumn("confirming"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), TextColumn("{task.description}"), console=err,
                      transient=True) as bar:
            task = bar.add_task("", total=len(findings) * len(tiers))

            def progress(done: int, total: int, verdict: Verdict) -> None:
                bar.update(task, completed=done, total=total,
                           description=f"{verdict.code} {verdict.tier}: {verdict.verdict}")

            verdicts = confirm_findings(findings, tiers, args.jobs, args.devices, args.timeout,
                                        progress, **kwargs)
    else:
        verdicts = confirm_findings(findings, tiers, args.jobs, args.devices, args.timeout,
                                    None, **kwargs)
    if args.format == "json":
        print(report.to_json(verdicts))
    else:
        report.print_table(verdicts, Console())
    return report.summarize(verdicts).exit_code


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="mmalint confirm",
        description="Confirm mmalint findings with a reference lowering (ptxas, jax, a GPU). "
                    "Never runs the checked code: each call is rebuilt from its signature.")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
