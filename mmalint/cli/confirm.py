"""`mmalint confirm` (the reference lowering's own command, `mmalint.confirm.cli`) and
`mmalint check --confirm`, which runs it on what the check found."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from mmalint.cli.console import EXIT_CLEAN, wants_color
from mmalint.config import UsageError

if TYPE_CHECKING:
    from mmalint.pipeline.files import RunResult


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from mmalint.confirm.options import add_arguments

    p = sub.add_parser("confirm", help="confirm findings with the reference lowering (ptxas, jax, a GPU)")
    add_arguments(p)
    p.set_defaults(handler=_run_confirm)


def _run_confirm(args: argparse.Namespace) -> int:
    # Imported only here: rich and the tiers cost every other command 0.08 s to import.
    from mmalint.confirm import cli as confirm_cli

    return confirm_cli.run(args)


def confirm_findings(args: argparse.Namespace, result: RunResult) -> int:
    """`check --confirm`: run the reference lowering on what was found; progress and a line per
    finding go to stderr, so that `--format json` stays one JSON document on stdout."""
    from rich.console import Console

    from mmalint.confirm import summarize
    from mmalint.confirm.cli import confirm_with_progress, show
    from mmalint.confirm.options import parse_tiers

    findings = [d.to_json() for d in result.diagnostics if d.code and d.call is not None]
    if not findings:
        return EXIT_CLEAN
    tiers = parse_tiers(args.confirm_tier)
    if not tiers or tiers - {"ptx", "jax", "gpu"}:
        raise UsageError(f"--confirm-tier takes ptx, jax, gpu, all or a list, got {args.confirm_tier!r}")
    color = wants_color(args, sys.stderr)
    console = Console(stderr=True, force_terminal=True if color else None, no_color=not color)
    verdicts = confirm_with_progress(findings, tiers, console, jobs=args.jobs or min(os.cpu_count() or 1, 8))
    show(verdicts, "concise", console)
    return summarize(verdicts).exit_code
