"""Names the targeted jax does not have, from the interpreter's API-use records: MMA501 (an API
of some jax versions only, or of none: `fa.from_tensor`), MMA503 (an attribute of a function that
shadows its module: `mma.mma`). Each `[[availability]]` entry says which rule it belongs to."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

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
    findings = []
    keywords = dict(use.keywords)
    for entry in catalog.availability:
        rule = catalog.rules.get(entry.rule)
        if rule is None or not entry.matches(use.name):
            continue
        if entry.keyword is not None and entry.keyword not in keywords:
            continue
        if entry.element_bits is not None and use.element_bits != entry.element_bits:
            continue
        if entry.element_form is not None and use.element_form != entry.element_form:
            continue
        if version in entry.missing_in:
            availability = "does not exist"
            predicted: Predicted | None = None
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
            "others": _others(entry.missing_in, version),
            **_written(use, entry),
        }
        if version in entry.missing_in:
            predicted = Predicted(entry.exception, entry.message.format(**fields), version, entry.match)
        variant = None
        if entry.api.endswith(".*") and fields["attribute"] == fields["function"]:
            variant = "function"  # `mma.mma`: an attribute of a function, the function itself meant
        elif not entry.since:
            variant = "never"  # no jax version has it: there is no version to move to
        message, help_text = rule.variant(variant)
        origin = keywords.get(entry.keyword) if entry.keyword else None
        findings.append(
            UseFinding(
                rule,
                use,
                entry,
                message.format(**fields),
                help_text.format(**fields),
                origin or use.origin,
                (),
                predicted,
            )
        )
    return findings


def _others(missing_in: tuple[str, ...], version: str) -> str:
    """The other versions that lack it, as a sentence reads them: `0.10 or 0.12`."""
    others = [v for v in missing_in if v != version]
    if len(others) <= 1:
        return "".join(others)
    return ", ".join(others[:-1]) + " or " + others[-1]


def _written(use: ApiUse, entry: Availability) -> dict[str, str]:
    """How the call spelled the name: `written` (`mma.mma`), its `receiver` (`mma`) and
    `attribute` (`mma`), and the `function` an MMA503 entry is about (`mma` of `mgpu.mma.*`).

    For an entry of a function's attributes (`mgpu.mma.*`) that is the attribute read on the
    function itself: `mma.MMALayouts` in `mma.MMALayouts.for_shape(...)`.
    """
    node = use.origin.node
    callee = node.func if isinstance(node, cst.Call) else node
    function = entry.api.removesuffix(".*").rpartition(".")[2]
    if entry.api.endswith(".*"):
        below = use.name[len(entry.api) - 1:].split(".")
        for _ in below[1:]:
            if not isinstance(callee, cst.Attribute):
                break
            callee = callee.value
    if not isinstance(callee, cst.Attribute):
        return {"written": "", "receiver": "", "attribute": "", "function": function}
    return {
        "written": use.origin.block.code(callee),
        "receiver": use.origin.block.code(callee.value),
        "attribute": callee.attr.value,
        "function": function,
    }
