"""`--format sarif`: a SARIF 2.1.0 log, for GitHub code scanning and other SARIF viewers.

Columns are counted in Unicode code points, as everywhere in mmalint, and the run says so
(`columnKind`); every rule of the catalog is described in `tool.driver.rules`, with its whole
page as `help`. What GitHub does with each part decides its shape:

- GitHub shows `relatedLocations` only where the result's message links them, so each note
  ("float32 chosen here") is a line of the message, `[note](id)`.
- `fullDescription` is cut at 1024 characters by GitHub: it holds what the rule flags and why,
  and the page (`help.markdown`) holds the rest.
- `partialFingerprints` match an alert across runs: a hash of the rule, the file's path, the
  flagged code without whitespace or comments, and which occurrence of that in the file it is,
  so it survives edits that move the code to other lines.
- Paths are relative to the repository root on GitHub Actions (`GITHUB_WORKSPACE`), else to the
  directory mmalint ran in; both are `%SRCROOT%`.
- In a notebook a region's lines count within its cell, and the location (or replacement) says
  which cell in `properties.cell` (1-based among all cells, ruff's numbering): SARIF has no
  cells, and the lines of the code cells joined, which ruff gives, are no lines of the file.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from mmalint import __version__
from mmalint.catalog import Catalog, Rule, load_catalog, rule_url, rules_index_url
from mmalint.diagnostics import Diagnostic, Range
from mmalint.report.paths import workspace_from_environment, workspace_relative
from mmalint.rulepage import rule_markdown

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
SRCROOT = "%SRCROOT%"
FINGERPRINT = "mmalint/v1"
DESCRIPTION_LIMIT = 1024  # GitHub's limit for shortDescription and fullDescription


# ---------------------------------------------------------------------- paths


@dataclass(frozen=True)
class ArtifactPaths:
    """Where relative URIs start: the workspace (on GitHub Actions) or the working directory."""

    cwd: Path
    workspace: str | None = None

    @property
    def root_uri(self) -> str:
        root = Path(os.path.abspath(self.workspace or self.cwd))
        return root.as_uri().rstrip("/") + "/"

    def relative(self, filename: str) -> str | None:
        """The `/`-separated path from the root, or None for a file that must stay absolute."""
        if self.workspace:
            return workspace_relative(filename, self.workspace, self.cwd)
        path = PurePath(filename)
        return None if path.is_absolute() else path.as_posix()

    def location(self, filename: str) -> dict[str, str]:
        relative = self.relative(filename)
        if relative is not None:
            return {"uri": quote(relative), "uriBaseId": SRCROOT}
        return {"uri": Path(os.path.abspath(self.cwd / filename)).as_uri()}


def _region(where: Range) -> dict[str, int]:
    return {
        "startLine": where.start.shown_row,
        "startColumn": where.start.column,
        "endLine": where.end.shown_row,
        "endColumn": where.end.column,
    }


def _cell(where: Range) -> dict[str, Any]:
    """`properties` naming the notebook cell a region's lines count in; nothing elsewhere."""
    return {} if where.start.cell is None else {"properties": {"cell": where.start.cell}}


def _location(where: Range, paths: ArtifactPaths) -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": paths.location(where.filename),
            "region": _region(where),
        },
        **_cell(where),
    }


# ---------------------------------------------------------------------- rules


def _sections(explanation: str) -> dict[str, str]:
    """The explanation's `## Title` sections, by title."""
    sections: dict[str, str] = {}
    for block in re.split(r"^## ", explanation, flags=re.MULTILINE):
        title, _, body = block.partition("\n")
        if body.strip():
            sections[title.strip()] = body.strip()
    return sections


def _cut(text: str, limit: int) -> str:
    """`text` in at most `limit` characters, ended at a sentence where one ends late enough."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    end = max(head.rfind(". "), head.rfind(".\n"))
    if end >= limit // 2:
        return head[: end + 1]
    return head[: head.rstrip().rfind(" ")].rstrip() + "…"


def short_description(rule: Rule, limit: int = DESCRIPTION_LIMIT) -> str:
    """What the rule flags and why, within GitHub's limit: the summary, then the "What it does"
    and "Why is this bad?" sections while they fit."""
    text = rule.summary.rstrip(".") + "."
    sections = _sections(rule.explanation)
    for title in ("What it does", "Why is this bad?"):
        body = sections.get(title)
        if not body:
            continue
        candidate = f"{text}\n\n{body}"
        if len(candidate) > limit:
            if title == "What it does":
                text = _cut(candidate, limit)
            break
        text = candidate
    return text


def _precision(rule: Rule, catalog: Catalog) -> str:
    """`very-high` where jax itself raises what the rule predicts (`mmalint confirm` shows it);
    `high` where nothing raises and the rule reads what the author meant from the code (silent
    wrong numbers, MMA203/MMA204; the argument order, MMA105), which code may do on purpose."""
    checks = [c for c in catalog.checks if c.rule == rule.code]
    if checks and not any(c.raises for c in checks):
        return "high"
    return "very-high"


def _tags(rule: Rule) -> list[str]:
    # No "security": GitHub would file every finding as a security alert.
    return ["maintainability" if rule.family == "meta" else "correctness", rule.family]


def rule_descriptors(catalog: Catalog, docs_base_url: str | None = None) -> list[dict[str, Any]]:
    descriptors = []
    for rule in (catalog.rules[c] for c in sorted(catalog.rules)):
        page = rule_markdown(rule, catalog)
        short = short_description(rule)
        descriptor: dict[str, Any] = {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": _cut(rule.summary, DESCRIPTION_LIMIT)},
            "fullDescription": {"text": short, "markdown": short},
            "help": {"text": page, "markdown": page},
        }
        if (url := rule_url(rule.code, docs_base_url)) is not None:
            descriptor["helpUri"] = url
        descriptor["defaultConfiguration"] = {"level": LEVELS.get(rule.severity, "warning")}
        descriptor["properties"] = {
            "tags": _tags(rule),
            "precision": _precision(rule, catalog),
            "family": rule.family,
            "fixable": rule.fixable,
        }
        descriptors.append(descriptor)
    return descriptors


# ---------------------------------------------------------------------- results


def escape_text(text: str) -> str:
    """Plain text for a SARIF message that has embedded links: literal brackets escaped."""
    return re.sub(r"([\[\]])", r"\\\1", text)


def _message(d: Diagnostic) -> str:
    lines = [escape_text(d.message)]
    lines += [f"note: [{escape_text(r.message)}]({i})" for i, r in enumerate(d.related, start=1)]
    if (prediction := d.prediction_text()) is not None:
        lines.append(escape_text(prediction))
    if d.help:
        lines.append(f"help: {escape_text(d.help)}")
    return "\n".join(lines)


_NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def _normalized(code: str) -> str:
    """The code's tokens without comments or layout, so reformatting keeps the fingerprint."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO(code).readline)
        normalized = " ".join(t.string for t in tokens if t.type not in _NOT_CODE)
    except (tokenize.TokenError, SyntaxError):
        normalized = ""
    # A finding on a comment (MMA001's unused noqa directive) has no code to keep.
    return normalized or " ".join(code.split())


def flagged_text(d: Diagnostic, source_lines: Callable[[str], list[str] | None]) -> str | None:
    """The source text of the finding's range, or None when the file cannot be read again."""
    lines = source_lines(d.filename)
    start, end = d.range.start, d.range.end
    if lines is None or not 1 <= start.row <= end.row <= len(lines):
        return None
    if start.row == end.row:
        return lines[start.row - 1][start.column - 1 : end.column - 1]
    middle = lines[start.row : end.row - 1]
    return "".join([lines[start.row - 1][start.column - 1 :], *middle, lines[end.row - 1][: end.column - 1]])


def _fingerprints(
    diagnostics: list[Diagnostic], source_lines: Callable[[str], list[str] | None], paths: ArtifactPaths
) -> list[str]:
    seen: dict[tuple[str, str, str], int] = {}
    out = []
    for d in diagnostics:
        text = flagged_text(d, source_lines)
        key = (
            d.code or d.name,
            paths.relative(d.filename) or d.filename,
            _normalized(text) if text is not None else d.message,
        )
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        digest = hashlib.sha256("\0".join((*key, str(occurrence))).encode("utf-8"))
        out.append(digest.hexdigest())
    return out


def _result(d: Diagnostic, rule_index: dict[str, int], paths: ArtifactPaths, fingerprint: str) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": d.code or d.name,
        "level": LEVELS.get(d.severity, "warning"),
        "message": {"text": _message(d)},
        "locations": [_location(d.range, paths)],
        "partialFingerprints": {FINGERPRINT: fingerprint},
    }
    if d.code in rule_index:
        result["ruleIndex"] = rule_index[d.code]
    if d.related:
        result["relatedLocations"] = [
            {"id": i, **_location(r.range, paths), "message": {"text": r.message}}
            for i, r in enumerate(d.related, start=1)
        ]
    if d.fix is not None:
        result["fixes"] = [
            {
                "description": {"text": f"{d.fix.message} ({d.fix.applicability})"},
                "artifactChanges": [
                    {
                        "artifactLocation": paths.location(d.filename),
                        "replacements": [
                            {"deletedRegion": _region(e.range), "insertedContent": {"text": e.content}, **_cell(e.range)}
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


def sarif_log(
    diagnostics: list[Diagnostic],
    catalog: Catalog | None = None,
    *,
    source_lines: Callable[[str], list[str] | None] = lambda name: None,
    docs_base_url: str | None = None,
    paths: ArtifactPaths | None = None,
) -> dict[str, Any]:
    catalog = catalog or load_catalog()
    paths = paths or ArtifactPaths(Path.cwd())
    rules = rule_descriptors(catalog, docs_base_url)
    index = {r["id"]: i for i, r in enumerate(rules)}
    driver: dict[str, Any] = {"name": "mmalint", "version": __version__, "semanticVersion": __version__}
    if (information := rules_index_url(docs_base_url)) is not None:
        driver["informationUri"] = information
    driver["rules"] = rules
    fingerprints = _fingerprints(diagnostics, source_lines, paths)
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                "originalUriBaseIds": {SRCROOT: {"uri": paths.root_uri}},
                "columnKind": "unicodeCodePoints",
                "results": [_result(d, index, paths, f) for d, f in zip(diagnostics, fingerprints, strict=True)],
            }
        ],
    }


def render(
    diagnostics: list[Diagnostic],
    source_lines: Callable[[str], list[str] | None],
    color: bool,
    *,
    docs_base_url: str | None = None,
) -> str:
    paths = ArtifactPaths(Path.cwd(), workspace_from_environment())
    log = sarif_log(diagnostics, source_lines=source_lines, docs_base_url=docs_base_url, paths=paths)
    return json.dumps(log, indent=2) + "\n"
