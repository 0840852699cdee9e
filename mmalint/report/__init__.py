"""Reporters: diagnostics in, text out. Nothing here knows how diagnostics were found."""

from __future__ import annotations

from collections.abc import Callable

from mmalint.diagnostics import Diagnostic
from mmalint.report import concise, full, github, json_format, sarif

SourceLines = Callable[[str], list[str] | None]
Reporter = Callable[[list[Diagnostic], SourceLines, bool], str]

REPORTERS: dict[str, Reporter] = {
    "full": full.render,
    "concise": concise.render,
    "json": json_format.render,
    "sarif": sarif.render,
    "github": github.render,
}

__all__ = ["REPORTERS", "Reporter", "SourceLines"]
