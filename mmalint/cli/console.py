"""What every command shares at its end: exit codes, error lines, whether to colour."""

from __future__ import annotations

import argparse
import os
import sys

from mmalint.color import use_color

# Like ruff's: 0 no findings, 1 findings, 2 bad usage or unreadable input.
EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def print_error(message: str) -> None:
    print(f"mmalint: error: {message}", file=sys.stderr)


def wants_color(args: argparse.Namespace, stream: object) -> bool:
    return use_color(getattr(args, "color", None), stream, os.environ)
