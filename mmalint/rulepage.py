"""A rule's page, in Markdown, from the catalog: `mmalint rule CODE` and docs/rules/CODE.md."""

from __future__ import annotations

from mmalint.catalog import Catalog, Rule


def rule_markdown(rule: Rule, catalog: Catalog) -> str:
    parts = [
        f"# {rule.code}: {rule.name}",
        "",
        f"**Severity:** {rule.severity} · **Family:** {rule.family} · **Fix:** "
        + (rule.fix_title or "none"),
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
            raised = check.exception or "nothing (wrong numbers)"
            message = f"`{check.message}`" + (" ..." if check.match == "prefix" else "") if check.message else ""
            parts.append(f"| {version} | `{check.api}` | {check.stage} | {raised} | {message} |")
    apis_missing = [
        api for api in ("plgpu.mma",)
        if any(c.rule == rule.code and c.api == api for c in catalog.checks)
        and not catalog.checks_for(api, catalog.versions[0])
    ]
    for api in apis_missing:
        parts.append(f"| {catalog.versions[0]} | `{api}` | - | AttributeError | `{api}` does not exist |")
    if rule.fix_safety:
        parts += ["", "## Fix safety", "", rule.fix_safety]
    for kind, heading in (("invalid", "Invalid"), ("valid", "Valid")):
        for example in rule.examples:
            if example.kind != kind:
                continue
            expect = ", ".join(example.expect) if example.expect else "nothing"
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
    return "\n".join(parts) + "\n"


def rules_table_markdown(catalog: Catalog) -> str:
    lines = ["| code | name | severity | summary |", "|---|---|---|---|"]
    for code in sorted(catalog.rules):
        r = catalog.rules[code]
        lines.append(f"| [{code}](rules/{code}.md) | {r.name} | {r.severity} | {r.summary} |")
    return "\n".join(lines) + "\n"
