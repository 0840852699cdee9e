"""How safe a rule's fix is, as the catalog states it: always safe, always unsafe, or sometimes.

Each fix carries its own applicability (`plan.py` decides it per finding); `mmalint rules` says
what a user can expect of a rule before any finding. The catalog's `fix_safety` text says it in
words, and its first word decides: "Safe:" (always safe), "Unsafe:" (always unsafe), anything
else ("Safe when ...; unsafe when ...") sometimes. tests/test_cli_wording.py holds the rule
examples' fixes to what this says.
"""

from __future__ import annotations

from mmalint.catalog import Rule

SAFE, UNSAFE, SOMETIMES = "safe", "unsafe", "sometimes"


def fix_applicability(rule: Rule) -> str | None:
    """"safe", "unsafe" or "sometimes" for a rule with a fix; None for a rule without one."""
    if not rule.fixable:
        return None
    text = rule.fix_safety.lstrip().lower()
    if text.startswith("safe:"):
        return SAFE
    if text.startswith("unsafe:"):
        return UNSAFE
    return SOMETIMES
