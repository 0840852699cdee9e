"""`--format sarif`: a SARIF 2.1.0 log, for GitHub code scanning and other SARIF viewers.

Columns are counted in Unicode code points, as everywhere in mmalint, and the run says so
(`columnKind`); every rule of the catalog is described in `tool.driver.rules`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from mmalint import __version__
from mmalint.catalog import Catalog, load_catalog
from mmalint.diagnostics import Diagnostic, Range

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
INFORMATION_URI = "https://github.com/mmalint/mmalint"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def artifact_uri(filename: str) -> str:
    """A relative path stays relative (to the directory mmalint ran in), with `/` separators."""
    path = PurePath(filename)
    if path.is_absolute():
        return "file://" + quote(path.as_posix())
    return quote(path.as_posix())


def _region(where: Range) -> dict[str, int]:
    return {
        "startLine": where.start.row,
        "startColumn": where.start.column,
        "endLine": where.end.row,
        "endColumn": where.end.column,
    }


def _location(where: Range) -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": artifact_uri(where.filename)},
            "region": _region(where),
        }
    }


def rule_descriptors(catalog: Catalog) -> list[dict[str, Any]]:
    return [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": rule.explanation, "markdown": rule.explanation},
            "help": {"text": rule.help, "markdown": rule.help},
            "helpUri": rule.url,
            "defaultConfiguration": {"level": LEVELS.get(rule.severity, "warning")},
            "properties": {"family": rule.family, "fixable": rule.fixable},
        }
        for rule in (catalog.rules[c] for c in sorted(catalog.rules))
    ]


def _result(d: Diagnostic, rule_index: dict[str, int]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": d.code or d.name,
        "level": LEVELS.get(d.severity, "warning"),
        "message": {"text": d.message},
        "locations": [_location(d.range)],
    }
    if d.code in rule_index:
        result["ruleIndex"] = rule_index[d.code]
    if d.related:
        result["relatedLocations"] = [
            {"id": i, **_location(r.range), "message": {"text": r.message}}
            for i, r in enumerate(d.related, start=1)
        ]
    if d.fix is not None:
        result["fixes"] = [
            {
                "description": {"text": f"{d.fix.message} ({d.fix.applicability})"},
                "artifactChanges": [
                    {
                        "artifactLocation": {"uri": artifact_uri(d.filename)},
                        "replacements": [
                            {"deletedRegion": _region(e.range), "insertedContent": {"text": e.content}}
                            for e in d.fix.edits
                        ],
                    }
                ],
            }
        ]
    properties: dict[str, Any] = {}
    if d.predicted_error is not None:
        properties["predictedError"] = d.predicted_error.to_json()
    elif d.unpredicted is not None:
        properties["unpredicted"] = d.unpredicted
        if d.predicted_by_operand:
            properties["predictedByOperand"] = [p.to_json() for p in d.predicted_by_operand]
    if d.help:
        properties["help"] = d.help
    if d.fix is not None:
        properties["fixApplicability"] = d.fix.applicability
    if d.worlds:
        properties["worlds"] = [dict(w) for w in d.worlds]
    if properties:
        result["properties"] = properties
    return result


def sarif_log(diagnostics: list[Diagnostic], catalog: Catalog | None = None) -> dict[str, Any]:
    catalog = catalog or load_catalog()
    rules = rule_descriptors(catalog)
    index = {r["id"]: i for i, r in enumerate(rules)}
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "mmalint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": [_result(d, index) for d in diagnostics],
            }
        ],
    }


def render(
    diagnostics: list[Diagnostic], source_lines: Callable[[str], list[str] | None], color: bool
) -> str:
    return json.dumps(sarif_log(diagnostics), indent=2) + "\n"
