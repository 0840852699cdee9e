"""`mmalint rule CODE` (a rule's page) and `mmalint rules` (every rule, a table or JSON)."""

from __future__ import annotations

import argparse
import json
import sys

from mmalint.catalog import Catalog, load_catalog
from mmalint.cli.console import EXIT_CLEAN, wants_color
from mmalint.color import CHOICES as COLOR_CHOICES
from mmalint.color import HELP as COLOR_HELP
from mmalint.config import UsageError
from mmalint.fixes.applicability import fix_applicability


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("rule", help="explain a rule", description="Print a rule's page: what it "
                       "flags, why, what jax raises per version, its fix and its examples.")
    p.add_argument("code", metavar="CODE", help="a rule code (MMA101) or name (integer-operands-need-int32-accumulator)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text (default: Markdown, rendered on a terminal) or json")
    p.add_argument("--color", choices=COLOR_CHOICES, default="auto", help=COLOR_HELP)
    p.set_defaults(handler=_run_rule)
    q = sub.add_parser("rules", help="list all rules", description="List every rule: code, name, "
                       "severity, whether its fix is safe, unsafe or sometimes either, and summary.")
    q.add_argument("--format", choices=("text", "json"), default="text",
                   help="text (default: a table) or json (every rule with its checks and examples)")
    q.add_argument("--color", choices=COLOR_CHOICES, default="auto", help=COLOR_HELP)
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
        "fix": r.fix_title if r.fixable else None,
        "fixable": r.fixable,
        "fix_safety": r.fix_safety or None,
        "fix_applicability": fix_applicability(r),
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
    if wants_color(args, sys.stdout):
        from rich.console import Console
        from rich.markdown import Markdown

        Console(force_terminal=True).print(Markdown(text))
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
        table.add_row(code, r.name, r.severity, fix_applicability(r) or "", r.summary)
    color = wants_color(args, sys.stdout)
    Console(force_terminal=color, no_color=not color, width=200 if not color else None).print(table)
    return EXIT_CLEAN
