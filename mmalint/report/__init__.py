"""Reporters: diagnostics in, text out. Nothing here knows how diagnostics were found.

Each reporter's module is imported when it first reports: the text formats draw with rich,
40-50 ms to import, which a check that finds nothing (most runs of a pre-commit hook) never
needs, since they draw nothing for no diagnostic.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from mmalint.diagnostics import Diagnostic

SourceLines = Callable[[str], list[str] | None]
Reporter = Callable[[list[Diagnostic], SourceLines, bool], str]

# The formats whose report of no diagnostic is empty (tests/test_startup.py checks each): `json` is `[]`, and
# `sarif` a run with its tool and no result.
_EMPTY_WHEN_NONE = frozenset({"full", "concise", "github"})


def _reporter(name: str, module: str) -> Reporter:
    def render(diagnostics: list[Diagnostic], source_lines: SourceLines, color: bool) -> str:
        if not diagnostics and name in _EMPTY_WHEN_NONE:
            return ""
        found: Reporter = importlib.import_module(f"mmalint.report.{module}").render
        return found(diagnostics, source_lines, color)

    render.__qualname__ = render.__name__ = f"render_{name}"
    return render


REPORTERS: dict[str, Reporter] = {
    "full": _reporter("full", "full"),
    "concise": _reporter("concise", "concise"),
    "json": _reporter("json", "json_format"),
    "sarif": _reporter("sarif", "sarif"),
    "github": _reporter("github", "github"),
}

__all__ = ["REPORTERS", "Reporter", "SourceLines"]
