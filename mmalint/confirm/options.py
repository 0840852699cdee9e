"""The command line of `mmalint confirm`: its arguments, help and the tiers' names.

Apart from the rest of the package so that `mmalint check`, whose parser lists `confirm`,
builds it without importing rich and the tiers (0.08 s of a 0.7 s check served from the cache).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable
from typing import Literal

Tier = Literal["ptx", "jax", "gpu"]
TIERS: tuple[Tier, ...] = ("ptx", "jax", "gpu")
DEFAULT_TIMEOUT = 120.0
GPU_BACKENDS = ("auto", "jax", "cupy")

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


def parse_tiers(text: str | Iterable[str]) -> set[str]:
    """`all`, one tier, or a comma-separated list -> a set of tier names."""
    items = text.split(",") if isinstance(text, str) else list(text)
    tiers: set[str] = set()
    for item in (i.strip() for i in items):
        if item == "all":
            tiers |= set(TIERS)
        elif item:
            tiers.add(item)
    return tiers
