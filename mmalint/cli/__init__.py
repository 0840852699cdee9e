"""The `mmalint` command: check, clean, rule, rules, confirm, server; one module per command.

Exit codes (like ruff): 0 no findings, 1 findings, 2 bad usage or unreadable input.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from mmalint import __version__
from mmalint.catalog import CatalogError
from mmalint.cli import check, clean, confirm, rules, server
from mmalint.cli.console import EXIT_CLEAN, EXIT_ERROR, print_error
from mmalint.config import UsageError
from mmalint.runtime import end_process, exit_code, traced, tune_gc


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mmalint",
        description="Static checker for MMA calls in JAX Mosaic GPU and Pallas Mosaic GPU kernels.",
    )
    parser.add_argument("--version", action="version", version=f"mmalint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    check.add_parser(sub)
    clean.add_parser(sub)
    rules.add_parsers(sub)
    confirm.add_parser(sub)
    server.add_parser(sub)
    for command in sub.choices.values():
        command.set_defaults(command_parser=command)  # for errors found after parsing
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    tune_gc()
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # the usage of the command they were given to, not the top level's (exits 2)
        getattr(args, "command_parser", parser).error(f"unrecognized arguments: {' '.join(unknown)}")
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        return handler(args)
    except UsageError as exc:
        print_error(str(exc))
        return EXIT_ERROR
    except CatalogError as exc:
        print_error(f"the rule catalog is broken: {exc}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        print_error("interrupted")
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as exc:  # no traceback reaches the user
        if os.environ.get("MMALINT_DEBUG"):
            raise
        print_error(f"internal error: {type(exc).__name__}: {exc} (set MMALINT_DEBUG=1 for the traceback; please report it)")
        return EXIT_ERROR


def run() -> NoReturn:
    """The `mmalint` command: `main`, then the end of the process (`runtime.end_process`: what
    a check holds is not freed object by object). Watched by a profiler, a tracer or a
    monitoring tool (`python -m cProfile -m mmalint`, which writes its report once the command
    returns: `runtime.traced`) the interpreter ends as usual."""
    try:
        code = main()
    except SystemExit as exc:  # argparse's usage errors, --help, --version
        code = exit_code(exc)
    if traced():
        sys.exit(code)
    end_process(code)
