"""The options of `mmalint check` (those that follow ruff's too: `--add-noqa`, `--fix-only`,
`--show-fixes`, `--watch`...), and the rules that tie the options together before a check starts."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence

from mmalint.color import CHOICES as COLOR_CHOICES
from mmalint.color import HELP as COLOR_HELP

FORMATS = ("full", "concise", "json", "sarif", "github")
OUTPUT_FORMAT_ENV = "MMALINT_OUTPUT_FORMAT"
# ruff prints statistics as text or JSON only; SARIF and workflow commands have no place for them.
STATISTICS_FORMATS = ("full", "concise", "json")


def add_check_arguments(p: argparse.ArgumentParser) -> None:
    """Every option of `mmalint check`, in the order its help lists them."""
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: .); - reads stdin")
    p.add_argument("--format", "--output-format", dest="format", choices=FORMATS, default=None,
                   help="full (default, or $MMALINT_OUTPUT_FORMAT), concise, json, sarif (SARIF 2.1.0) "
                        "or github (workflow commands)")
    p.add_argument("--select", action="append", metavar="CODES", help="rule codes or prefixes to enable (comma-separated; default ALL)")
    p.add_argument("--extend-select", action="append", metavar="CODES", help="codes to enable on top of --select")
    p.add_argument("--ignore", action="append", metavar="CODES", help="rule codes or prefixes to disable")
    p.add_argument("--target-jax", metavar="VERSION", help="the jax version to predict (default: the project's jax, see the guide's Configuration)")
    p.add_argument("--target-arch", metavar="ARCH", help="the GPU to check for: sm_80, sm_86, sm_89, sm_90, sm_90a (default), sm_100a...")
    p.add_argument("--show-settings", action="store_true", help="print the resolved settings for the first path and exit")
    p.add_argument("--confirm", action="store_true", help="then confirm the findings with the reference lowering (see `mmalint confirm`)")
    p.add_argument("--confirm-tier", default="all", metavar="TIERS", help="with --confirm: ptx, jax, gpu, all (default) or a comma-separated list")
    p.add_argument("--stdin-filename", metavar="PATH",
                   help="check standard input, under this name (for its configuration, excludes and reports)")
    p.add_argument("--show-expected-failures", action="store_true", help="report calls inside assertRaises/pytest.raises as info")
    p.add_argument("--exclude", action="append", metavar="PATTERNS", help="glob patterns of paths to skip (on top of the configuration's)")
    p.add_argument("--force-exclude", action="store_true", help="skip excluded files even when named on the command line (for pre-commit)")
    p.add_argument("--respect-gitignore", action=argparse.BooleanOptionalAction, default=None,
                   help="skip what .gitignore files ignore when walking directories (default: on)")
    p.add_argument("--config", metavar="PATH", help="use this configuration file instead of the nearest one")
    p.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    fixes = p.add_argument_group("fixes")
    fixes.add_argument("--fix", action="store_true", help="apply the safe fixes (with - : print the fixed source on stdout)")
    fixes.add_argument("--unsafe-fixes", action=argparse.BooleanOptionalAction, default=None,
                       help="also apply (and count as fixable) the fixes marked unsafe "
                            "(default: the configuration's `unsafe-fixes`, else no)")
    fixes.add_argument("--diff", action="store_true", help="write nothing: print the fixes as a unified diff; exit 1 if there is one")
    fixes.add_argument("--exit-non-zero-on-fix", action="store_true", help="with --fix: exit 1 when a fix was applied, even if nothing is left")
    p.add_argument("--report-unused-noqa", action="store_true", help="report noqa directives that suppress nothing (MMA001)")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings (input errors still exit 2)")
    p.add_argument("--output-file", "-o", metavar="PATH", help="write the report to a file instead of stdout")
    p.add_argument("--docs-url", metavar="URL", default=os.environ.get("MMALINT_DOCS_URL") or None,
                   help="where the rule pages are published (the folder holding MMA101.md), for the "
                        "links in reports; default: $MMALINT_DOCS_URL, else the pages installed "
                        "with mmalint, as file:// URIs")
    p.add_argument("--statistics", action="store_true", help="print the number of findings per rule instead of the findings")
    p.add_argument("--color", choices=COLOR_CHOICES, default="auto", help=COLOR_HELP)
    p.add_argument("--jobs", "-j", type=int, default=None, help="worker processes (default: all cores)")
    add_cache_arguments(p, no_cache=True)
    p.add_argument("--quiet", "-q", action="store_true", help="print only the findings")
    _add_ruff_options(p, fixes)


def add_cache_arguments(p: argparse.ArgumentParser, no_cache: bool) -> None:
    """Where the result cache is (`check` and `clean` find it alike)."""
    p.add_argument("--cache-dir", metavar="DIR", default=None,
                   help="where results are cached (default: $MMALINT_CACHE_DIR, else the configuration's "
                        "`cache-dir`, else .mmalint_cache in the project root, else in the working directory)")
    if no_cache:
        p.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")


def _add_ruff_options(parser: argparse.ArgumentParser, fixes: argparse._ArgumentGroup) -> None:
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


def split_codes(values: Sequence[str] | None) -> tuple[str, ...]:
    """Repeated comma-separated options (`--select A,B --select C`) as one tuple of codes."""
    items: list[str] = []
    for value in values or ():
        items.extend(v.strip() for v in value.split(",") if v.strip())
    return tuple(items)
