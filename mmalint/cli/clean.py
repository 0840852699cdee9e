"""`mmalint clean`: remove the result cache; and where `check` finds it."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path

from mmalint.cli.args import add_cache_arguments
from mmalint.cli.console import EXIT_CLEAN, EXIT_ERROR, print_error
from mmalint.config import ConfigError, Overrides, Resolver, UsageError


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "clean", help="remove the result cache",
        description="Remove the result cache that `mmalint check PATH` uses (only it: a directory "
                    "marked by mmalint's CACHEDIR.TAG).",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="as given to `check` (default: .)")
    add_cache_arguments(p, no_cache=False)
    p.add_argument("--config", metavar="PATH", help="use this configuration file instead of the nearest one")
    p.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    p.set_defaults(handler=_run_clean)


def cache_dir(args: argparse.Namespace, resolver: Resolver, environ: Mapping[str, str] = os.environ) -> Path:
    """The cache directory of a run over `args.paths`: `--cache-dir`, else $MMALINT_CACHE_DIR,
    else the `cache-dir` setting of the first path's configuration, else `.mmalint_cache` in
    that path's project root (the program loader's tree), else in the working directory."""
    from mmalint.pipeline.cache import CACHE_DIR_ENV, default_dir

    if args.cache_dir:
        return Path(args.cache_dir)
    if environ.get(CACHE_DIR_ENV):
        return Path(environ[CACHE_DIR_ENV])
    paths = [p for p in (args.paths or ["."]) if p != "-"] or ["."]
    try:
        settings = resolver.for_path(Path(paths[0]))
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    if settings.cache_dir:
        return Path(settings.cache_dir)
    return default_dir(settings.project_root, os.getcwd())


def _run_clean(args: argparse.Namespace) -> int:
    from mmalint.pipeline.cache import clean

    try:
        resolver = Resolver(Overrides(), None, config_path=Path(args.config) if args.config else None,
                            isolated=args.isolated)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    directory = cache_dir(args, resolver)
    try:
        removed = clean(directory)
    except OSError as exc:
        print_error(str(exc))
        return EXIT_ERROR
    print(f"Removed {directory}" if removed else f"No cache at {directory}")
    return EXIT_CLEAN
