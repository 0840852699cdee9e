"""A rule's page, in Markdown, from the catalog: `mmalint rule CODE` and docs/rules/CODE.md."""

from __future__ import annotations

from mmalint.catalog import Catalog, Rule
from mmalint.fixes.applicability import SAFE, SOMETIMES, UNSAFE, fix_applicability

# The command that applies a rule's fix: an always-unsafe fix needs --unsafe-fixes.
_FIX_COMMAND = {
    SAFE: "`mmalint check --fix`",
    UNSAFE: "`mmalint check --fix --unsafe-fixes`",
    SOMETIMES: "`mmalint check --fix`; `--unsafe-fixes` where it is unsafe",
}

# What a check without an exception of its own stands for, by stage.
_NOT_RAISED = {
    "silent": "nothing (wrong numbers)",
    "lint": "what the arguments as passed fail first",
    "any-operand": "operands unknown: the error of their dtype",
}


def rule_markdown(rule: Rule, catalog: Catalog) -> str:
    parts = [
        f"# {rule.code}: {rule.name}",
        "",
        f"**Severity:** {rule.severity} · **Family:** {rule.family} · **Fix:** "
        + (f"{rule.fix_title} ({_FIX_COMMAND[fix_applicability(rule) or SAFE]})"
           if rule.fixable else "none (by hand)"),
        "",
        f"{rule.summary}.",
        "",
        rule.explanation,
        "",
        "## Checks in jax, per version",
        "",
        "| jax | API | stage | raises | message |",
        "|---|---|---|---|---|",
    ]
    for version in catalog.versions:
        for check in catalog.checks:
            if check.rule != rule.code or version not in check.versions:
                continue
            raised = check.exception or _NOT_RAISED.get(check.stage, "nothing (wrong numbers)")
            message = f"`{check.message_shown}`" + (" ..." if check.match == "prefix" else "") if check.message else ""
            parts.append(f"| {version} | `{check.api}` | {check.stage} | {raised} | {message} |")
    # An API the oldest jax lacks altogether (`plgpu.mma` in 0.10) fails with AttributeError.
    apis_missing = [
        api for api in dict.fromkeys(c.api for c in catalog.checks)
        if any(c.rule == rule.code and c.api == api for c in catalog.checks)
        and not catalog.checks_for(api, catalog.versions[0])
    ]
    for api in apis_missing:
        parts.append(f"| {catalog.versions[0]} | `{api}` | - | AttributeError | `{api}` does not exist |")
    if rule.fix_safety:
        heading = "Fix safety" if rule.fixable else "Why there is no automatic fix"
        parts += ["", f"## {heading}", "", rule.fix_safety]
    if not rule.fixable and rule.fix_title:
        parts += ["", f"What to do: {rule.fix_title[0].lower()}{rule.fix_title[1:]}."]
    for kind, heading in (("invalid", "Invalid"), ("valid", "Valid")):
        for example in rule.examples:
            if example.kind != kind:
                continue
            marked = [f"{code} (line {row})" for row, code, _ in example.marked]
            expect = ", ".join(marked or example.expect) if example.expect else "nothing"
            parts += [
                "",
                f"## {heading}: {example.title}",
                "",
                f"mmalint reports: {expect}",
                "",
                "```python",
                example.code.rstrip(),
                "```",
            ]
            if example.fix_diff:
                parts += ["", "The fix changes:", "", "```diff", example.fix_diff.rstrip(), "```"]
    return "\n".join(parts) + "\n"


def rules_table_markdown(catalog: Catalog, link_prefix: str = "rules/") -> str:
    lines = ["| code | name | severity | fix | summary |", "|---|---|---|---|---|"]
    for code in sorted(catalog.rules):
        r = catalog.rules[code]
        fix = fix_applicability(r) or ""
        lines.append(f"| [{code}]({link_prefix}{code}.md) | {r.name} | {r.severity} | {fix} | {r.summary} |")
    return "\n".join(lines) + "\n"
