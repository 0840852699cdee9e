"""The `mmalint` command: check, rule, rules, confirm.

Exit codes (like ruff): 0 no findings, 1 findings, 2 bad usage or unreadable input.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from mmalint import __version__
from mmalint.catalog import Catalog, CatalogError, load_catalog
from mmalint.settings import Settings

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
FORMATS = ("full", "concise", "json")


class UsageError(Exception):
    """Bad command-line input: a clear message and exit code 2."""


def _error(message: str) -> None:
    print(f"mmalint: error: {message}", file=sys.stderr)


def _color(args: argparse.Namespace, stream: object) -> bool:
    if getattr(args, "color", None) == "always":
        return True
    if getattr(args, "color", None) == "never" or os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def _codes(values: Sequence[str] | None) -> tuple[str, ...]:
    items: list[str] = []
    for value in values or ():
        items.extend(v.strip() for v in value.split(",") if v.strip())
    return tuple(items)


def validate_selectors(selectors: tuple[str, ...], catalog: Catalog, option: str) -> None:
    for selector in selectors:
        if selector == "ALL":
            continue
        if not re.fullmatch(r"MMA\d{0,3}", selector) or not catalog.select((selector,)):
            raise UsageError(f"{option}: unknown rule selector {selector!r} (see `mmalint rules`)")


def resolve_target_jax(requested: str | None, catalog: Catalog) -> str:
    from mmalint.jaxversion import installed_jax_version

    if requested is not None:
        if not re.fullmatch(r"\d+\.\d+(\.\d+)*", requested):
            raise UsageError(f"--target-jax: expected a version like 0.11, got {requested!r}")
        try:
            return catalog.resolve_version(requested)
        except CatalogError as exc:
            raise UsageError(f"--target-jax: {exc}") from None
    installed = installed_jax_version()
    if installed is not None:
        try:
            return catalog.resolve_version(installed)
        except CatalogError:
            pass
    return catalog.versions[-1]


# ---------------------------------------------------------------------- check


def _add_check(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("check", help="check files for MMA bugs", description="Check Python files for bugs in Mosaic GPU and Pallas MMA calls.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: .); - reads stdin")
    p.add_argument("--format", "--output-format", dest="format", choices=FORMATS, default="full")
    p.add_argument("--select", action="append", metavar="CODES", help="rule codes or prefixes to enable (comma-separated; default ALL)")
    p.add_argument("--extend-select", action="append", metavar="CODES", help="codes to enable on top of --select")
    p.add_argument("--ignore", action="append", metavar="CODES", help="rule codes or prefixes to disable")
    p.add_argument("--target-jax", metavar="VERSION", help="the jax version to predict (default: the installed jax, else the newest known)")
    p.add_argument("--stdin-filename", metavar="PATH", help="the name of the file read from stdin")
    p.add_argument("--show-expected-failures", action="store_true", help="report calls inside assertRaises/pytest.raises as info")
    p.add_argument("--exclude", action="append", metavar="PATTERNS", help="glob patterns of paths to skip")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument("--output-file", "-o", metavar="PATH", help="write the report to a file instead of stdout")
    p.add_argument("--statistics", action="store_true", help="print the number of findings per rule")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    p.add_argument("--jobs", "-j", type=int, default=None, help="worker processes (default: all cores)")
    p.add_argument("--quiet", "-q", action="store_true", help="print only the findings")
    p.set_defaults(handler=_run_check)


def _run_check(args: argparse.Namespace) -> int:
    from mmalint.discover import discover
    from mmalint.engine import FileReport, check_text, decode_source, InputError
    from mmalint.report import REPORTERS
    from mmalint.runner import RunResult, run
    from mmalint.settings import DEFAULT_EXCLUDE

    catalog = load_catalog()
    select = _codes(args.select) or ("ALL",)
    ignore = _codes(args.ignore)
    extend = _codes(args.extend_select)
    validate_selectors(select, catalog, "--select")
    validate_selectors(ignore, catalog, "--ignore")
    validate_selectors(extend, catalog, "--extend-select")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    settings = Settings(
        select=select,
        ignore=ignore,
        extend_select=extend,
        target_jax=resolve_target_jax(args.target_jax, catalog),
        show_expected_failures=args.show_expected_failures,
        exclude=DEFAULT_EXCLUDE + _codes(args.exclude),
    )
    paths = args.paths or ["."]
    stdin_text: str | None = None
    result: RunResult
    if paths == ["-"]:
        filename = args.stdin_filename or "-"
        try:
            stdin_text = decode_source(sys.stdin.buffer.read())
        except InputError as exc:
            raise UsageError(f"stdin: {exc}") from None
        result = RunResult(files_seen=1)
        result.reports.append(check_text(filename, stdin_text, settings, catalog))
    elif "-" in paths:
        raise UsageError("`-` (stdin) cannot be combined with other paths")
    else:
        errors: list[str] = []
        files = list(discover(paths, settings.exclude, errors))
        result = run(files, settings, jobs=args.jobs)
        result.input_errors[:0] = errors

    diagnostics = sorted(result.diagnostics, key=lambda d: d.sort_key())
    cache: dict[str, list[str] | None] = {}

    def source_lines(name: str) -> list[str] | None:
        if name not in cache:
            if stdin_text is not None and name == (args.stdin_filename or "-"):
                cache[name] = stdin_text.splitlines(keepends=True)
            else:
                try:
                    cache[name] = decode_source(Path(name).read_bytes()).splitlines(keepends=True)
                except (OSError, InputError):
                    cache[name] = None
        return cache[name]

    out_stream = sys.stdout
    color = _color(args, out_stream) and not args.output_file and args.format != "json"
    text = REPORTERS[args.format](diagnostics, source_lines, color)
    if args.format in ("full", "concise") and not args.quiet:
        text += _summary(diagnostics, result)
    if args.statistics and args.format != "json":
        text += _statistics(diagnostics)
    if args.output_file:
        try:
            from mmalint.fileio import write_atomic

            write_atomic(Path(args.output_file), text.encode("utf-8"))
        except OSError as exc:
            raise UsageError(f"--output-file: {exc.strerror or exc}") from None
    else:
        out_stream.write(text)
        out_stream.flush()
    for message in result.input_errors:
        _error(message)
    if result.input_errors:
        return EXIT_ERROR
    findings = [d for d in diagnostics if d.severity in ("error", "warning")]
    if findings and not args.exit_zero:
        return EXIT_FINDINGS
    del FileReport
    return EXIT_CLEAN


def _summary(diagnostics: list, result: object) -> str:  # type: ignore[type-arg]
    n = len([d for d in diagnostics if d.severity in ("error", "warning")])
    if n == 0:
        return "All checks passed!\n"
    fixable = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability == "safe")
    text = f"Found {n} error{'s' if n != 1 else ''}."
    if fixable:
        text += f"\n[*] {fixable} fixable with the `--fix` option."
    return text + "\n"


def _statistics(diagnostics: list) -> str:  # type: ignore[type-arg]
    counts: dict[tuple[str, str], int] = {}
    for d in diagnostics:
        key = (d.code or "", d.name)
        counts[key] = counts.get(key, 0) + 1
    lines = [f"{n:>5}  {code:<7} {name}" for (code, name), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return "\n".join(lines) + ("\n" if lines else "")


# ---------------------------------------------------------------------- rule / rules


def _add_rule(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("rule", help="explain a rule")
    p.add_argument("code", metavar="CODE")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(handler=_run_rule)
    q = sub.add_parser("rules", help="list all rules")
    q.add_argument("--format", choices=("text", "json"), default="text")
    q.set_defaults(handler=_run_rules)


def _rule_json(code: str, catalog: Catalog) -> dict[str, object]:
    r = catalog.rules[code]
    return {
        "code": r.code,
        "name": r.name,
        "severity": r.severity,
        "family": r.family,
        "summary": r.summary,
        "explanation": r.explanation,
        "fix": r.fix_title or None,
        "url": r.url,
        "checks": [
            {"api": c.api, "versions": list(c.versions), "exception": c.exception or None,
             "message": c.message or None, "match": c.match}
            for c in catalog.checks if c.rule == code
        ],
        "examples": [
            {"title": e.title, "kind": e.kind, "expect": list(e.expect), "code": e.code}
            for e in r.examples
        ],
    }


def _run_rule(args: argparse.Namespace) -> int:
    from mmalint.rulepage import rule_markdown

    catalog = load_catalog()
    code = args.code.upper()
    if code not in catalog.rules:
        by_name = [c for c, r in catalog.rules.items() if r.name == args.code]
        if not by_name:
            raise UsageError(f"unknown rule {args.code!r} (see `mmalint rules`)")
        code = by_name[0]
    if args.format == "json":
        print(json.dumps(_rule_json(code, catalog), indent=2))
        return EXIT_CLEAN
    text = rule_markdown(catalog.rules[code], catalog)
    if sys.stdout.isatty() and not os.environ.get("NO_COLOR"):
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(text))
    else:
        sys.stdout.write(text)
    return EXIT_CLEAN


def _run_rules(args: argparse.Namespace) -> int:
    catalog = load_catalog()
    if args.format == "json":
        print(json.dumps([_rule_json(c, catalog) for c in sorted(catalog.rules)], indent=2))
        return EXIT_CLEAN
    from rich.console import Console
    from rich.table import Table

    table = Table(title=None, box=None, show_edge=False, pad_edge=False)
    for column in ("code", "name", "severity", "fix", "summary"):
        table.add_column(column, no_wrap=column != "summary")
    for code in sorted(catalog.rules):
        r = catalog.rules[code]
        table.add_row(code, r.name, r.severity, "yes" if r.fix_title else "", r.summary)
    color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    Console(force_terminal=color, no_color=not color, width=200 if not color else None).print(table)
    return EXIT_CLEAN


# ---------------------------------------------------------------------- confirm


def _add_confirm(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    try:
        from mmalint.confirm import cli as confirm_cli
    except ImportError:
        return
    p = sub.add_parser("confirm", help="confirm findings with the reference lowering (ptxas, jax, a GPU)")
    confirm_cli.add_arguments(p)
    p.set_defaults(handler=confirm_cli.run)


# ---------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mmalint",
        description="Static checker for MMA calls in JAX Mosaic GPU and Pallas Mosaic GPU kernels.",
    )
    parser.add_argument("--version", action="version", version=f"mmalint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_check(sub)
    _add_rule(sub)
    _add_confirm(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        return handler(args)
    except UsageError as exc:
        _error(str(exc))
        return EXIT_ERROR
    except CatalogError as exc:
        _error(f"the rule catalog is broken: {exc}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as exc:  # noqa: BLE001 - no traceback reaches the user
        if os.environ.get("MMALINT_DEBUG"):
            raise
        _error(f"internal error: {type(exc).__name__}: {exc} (set MMALINT_DEBUG=1 for the traceback; please report it)")
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
