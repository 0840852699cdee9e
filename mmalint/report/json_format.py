"""`--format json`: one array of findings (schema in docs/json-format.md)."""

from __future__ import annotations

import json
from collections.abc import Callable

from mmalint.diagnostics import Diagnostic


def render(
    diagnostics: list[Diagnostic], source_lines: Callable[[str], list[str] | None], color: bool
) -> str:
    return json.dumps([d.to_json() for d in diagnostics], indent=2) + "\n"
