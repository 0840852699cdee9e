"""MMA501: APIs the targeted jax version does not have, from the interpreter's API-use records."""

from __future__ import annotations

from dataclasses import dataclass

from mmalint.analysis.calls import ApiUse
from mmalint.analysis.values import Origin
from mmalint.catalog import Availability, Catalog, Rule
from mmalint.checks.rules import Note, Predicted


@dataclass(frozen=True)
class UseFinding:
    rule: Rule
    use: ApiUse
    entry: Availability
    message: str
    help: str
    origin: Origin  # where to report: the keyword, or the call
    notes: tuple[Note, ...]
    predicted: Predicted | None


def evaluate_use(use: ApiUse, catalog: Catalog, version: str) -> list[UseFinding]:
    rule = catalog.rules.get("MMA501")
    if rule is None:
        return []
    findings = []
    keywords = dict(use.keywords)
    for entry in catalog.availability:
        if not entry.matches(use.name):
            continue
        if entry.keyword is not None and entry.keyword not in keywords:
            continue
        if entry.element_bits is not None and use.element_bits != entry.element_bits:
            continue
        if entry.element_form is not None and use.element_form != entry.element_form:
            continue
        if version in entry.missing_in:
            availability = "does not exist"
            predicted: Predicted | None = Predicted(entry.exception, entry.message, version, entry.match)
        elif version in entry.ignored_in:
            availability = "is accepted and ignored"
            predicted = None
        else:
            continue
        fields = {
            "feature": entry.feature,
            "availability": availability,
            "version": version,
            "since": entry.since,
            "alternative": entry.alternative,
        }
        origin = keywords.get(entry.keyword) if entry.keyword else None
        findings.append(
            UseFinding(
                rule,
                use,
                entry,
                rule.message.format(**fields),
                rule.help.format(**fields),
                origin or use.origin,
                (),
                predicted,
            )
        )
    return findings
