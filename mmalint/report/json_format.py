"""`--format json`: one array of findings (docs/json-format.md).

The contract is a JSON Schema shipped in the package (`mmalint/schemas/`): `check.schema.json` for
the findings and `statistics.schema.json` for `--statistics --format json`. Its version is in the
schema's `$id`; the output stays a bare array, as ruff's, so no consumer breaks.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from typing import Any

from mmalint.diagnostics import Diagnostic

SCHEMA_FILES = {"check": "check.schema.json", "statistics": "statistics.schema.json"}


def schema(kind: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of `--format json` (`check`) or of `--statistics` (`statistics`)."""
    files = resources.files("mmalint").joinpath("schemas").joinpath(SCHEMA_FILES[kind])
    loaded: dict[str, Any] = json.loads(files.read_text(encoding="utf-8"))
    return loaded


def render(
    diagnostics: list[Diagnostic], source_lines: Callable[[str], list[str] | None], color: bool
) -> str:
    return json.dumps([d.to_json() for d in diagnostics], indent=2) + "\n"
