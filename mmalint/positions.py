"""From where a fact was decided (a libcst node of a block) to a reported range."""

from __future__ import annotations

from mmalint.analysis.values import Origin
from mmalint.diagnostics import Location, Range


def range_of(origin: Origin) -> Range:
    """1-based rows and columns, as every reporter, the fixer and the language server use."""
    span = origin.span()
    return Range(
        span.filename,
        Location(span.start.line, span.start.column + 1),
        Location(span.end.line, span.end.column + 1),
    )
