"""`--format json`: one array of findings (docs/json-format.md).

The contract is a JSON Schema shipped in the package (`mmalint/schemas/`): `check.schema.json` for
the findings and `statistics.schema.json` for `--statistics --format json`. Its version is in the
schema's `$id` and in every finding's `schema_version`; the output stays a bare array, as ruff's,
so no consumer breaks.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from typing import Any

from mmalint.diagnostics import Diagnostic

SCHEMA_FILES = {"check": "check.schema.json", "statistics": "statistics.schema.json"}
# The version of the findings contract: the number at the end of `check.schema.json`'s `$id`.
SCHEMA_VERSION = 1


def schema(kind: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of `--format json` (`check`) or of `--statistics` (`statistics`)."""
    files = resources.files("mmalint").joinpath("schemas").joinpath(SCHEMA_FILES[kind])
    loaded: dict[str, Any] = json.loads(files.read_text(encoding="utf-8"))
    return loaded


def render(
    diagnostics: list[Diagnostic], source_lines: Callable[[str], list[str] | None], color: bool
) -> str:
    findings = [{**d.to_json(), "schema_version": SCHEMA_VERSION} for d in diagnostics]
    return json.dumps(findings, indent=2) + "\n"
