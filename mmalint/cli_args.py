"""The options of `mmalint check` that follow ruff's (`--add-noqa`, `--fix-only`, `--show-fixes`,
`--watch`...), and the rules that tie the options together before a check starts."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence

OUTPUT_FORMAT_ENV = "MMALINT_OUTPUT_FORMAT"
# ruff prints statistics as text or JSON only; SARIF and workflow commands have no place for them.
STATISTICS_FORMATS = ("full", "concise", "json")


def add_options(parser: argparse.ArgumentParser, fixes: argparse._ArgumentGroup) -> None:
    """The options beyond the report, rule and fix basics, in their groups."""
    fixes.add_argument("--fix-only", action="store_true",
                       help="apply the fixes and report nothing else: exit 0 even with findings left "
                            "(unless --exit-non-zero-on-fix and something was fixed)")
    fixes.add_argument("--show-fixes", action="store_true",
                       help="list the fixes applied (with --fix), and show each finding's fix as a diff "
                            "in --format full")
    fixes.add_argument("--fixable", action="append", metavar="CODES",
                       help="only these rule codes or prefixes may be fixed (default ALL; "
                            "configuration: `fixable`)")
    fixes.add_argument("--unfixable", action="append", metavar="CODES",
                       help="these rule codes or prefixes are never fixed (configuration: `unfixable`)")
    noqa = parser.add_argument_group("noqa")
    noqa.add_argument("--add-noqa", action="store_true",
                      help="append `# noqa: CODE` to each line with a finding (merged into a noqa "
                           "comment already there), write the files, and exit 0")
    noqa.add_argument("--ignore-noqa", action="store_true",
                      help="ignore every `# noqa` and `# mmalint: noqa` comment")
    parser.add_argument("--show-files", action="store_true",
                        help="print the files that would be checked, one per line, and exit")
    parser.add_argument("--watch", "-w", action="store_true",
                        help="check again whenever a checked file or its configuration changes "
                             "(polled every 0.5 s; Ctrl-C stops)")


def resolve_format(given: str | None, formats: Sequence[str], environ: Mapping[str, str]) -> str:
    """`--format`, else $MMALINT_OUTPUT_FORMAT (as ruff reads $RUFF_OUTPUT_FORMAT), else full."""
    if given is not None:
        return given
    value = environ.get(OUTPUT_FORMAT_ENV, "")
    if not value:
        return "full"
    if value not in formats:
        raise ValueError(f"{OUTPUT_FORMAT_ENV}={value!r}: expected one of {', '.join(formats)}")
    return value


def prepare(args: argparse.Namespace, formats: Sequence[str], environ: Mapping[str, str]) -> list[str]:
    """Settle the parsed options of `check` in place (the output format, stdin, what `--fix-only`
    implies); returns warnings, raises ValueError for options that do not go together."""
    warnings: list[str] = []
    args.format = resolve_format(args.format, formats, environ)
    if args.stdin_filename is not None:
        # ruff's rule: a stdin name means stdin, with `-` or without it.
        others = [p for p in args.paths if p != "-"]
        if others:
            warnings.append(f"ignoring {' '.join(others)}: --stdin-filename checks standard input")
        args.paths = ["-"]
    stdin = args.paths == ["-"]
    if args.fix_only:
        args.fix = True
    if args.statistics and args.format not in STATISTICS_FORMATS:
        raise ValueError(f"--statistics prints text or json, not --format {args.format}")
    if args.add_noqa:
        clash = [flag for flag, on in (("--fix-only", args.fix_only), ("--fix", args.fix), ("--diff", args.diff),
                                       ("--watch", args.watch), ("--show-files", args.show_files)) if on]
        if clash:
            raise ValueError(f"--add-noqa cannot be combined with {clash[0]}")
        if stdin:
            raise ValueError("--add-noqa writes files: it cannot read standard input")
    if args.watch and stdin:
        raise ValueError("--watch needs files to watch: it cannot read standard input")
    if args.show_files and stdin:
        raise ValueError("--show-files lists files: standard input is not one")
    return warnings
