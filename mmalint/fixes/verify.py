"""Fix verification: a fix is offered only if applying it removes its finding and adds none.

The planner (`plan.py`) proposes an edit where the wrong value was decided; whether that edit is
right for every path through the code is another question. A constant shared by a parameter
sweep, or a helper that loads both int8 and bf16 operands, can be wrong for one world and right
for another: changing it fixes one finding and creates another. So each proposed fix is applied
to the text in memory and the file is checked again, with every rule enabled. The fix is kept
only if the result's findings are the old ones less (at least) this one. This makes the
`[*] N fixable` count honest and `--fix` incapable of trading one bug for another in the file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from mmalint.analysis.program import Program
from mmalint.catalog import Catalog
from mmalint.diagnostics import Diagnostic
from mmalint.fixes.apply import apply_edits
from mmalint.settings import Settings

Key = tuple[str | None, str]


def _key(d: Diagnostic) -> Key:
    return (d.code, d.message)


def _keys(diagnostics: Sequence[Diagnostic], filename: str) -> Counter[Key]:
    """The findings in the file itself (those at MMA calls elsewhere in the tree are not its
    fixes' business)."""
    return Counter(_key(d) for d in diagnostics if d.filename == filename)


def _all_rules(settings: Settings) -> Settings:
    return replace(settings, select=("ALL",), ignore=(), extend_select=(), per_file_ignores=())


def verify_fixes(
    filename: str,
    text: str,
    diagnostics: Sequence[Diagnostic],
    settings: Settings,
    catalog: Catalog,
    program: Program | None = None,
) -> list[Diagnostic]:
    """The diagnostics, each fix dropped unless checking the fixed text confirms it (in the
    checked tree, `program`, when the file was checked in it: its callers see the fix too)."""
    from mmalint.engine import check_text

    if not any(d.fix is not None for d in diagnostics):
        return list(diagnostics)
    everything = _all_rules(settings)
    if everything == settings:
        before = _keys(diagnostics, filename)
    else:
        before = _keys(check_text(filename, text, everything, catalog, program).diagnostics, filename)
    out: list[Diagnostic] = []
    # Findings that share one fix (an accumulator constant read by several kernels) produce
    # the same fixed text: check each text once.
    checked: dict[str, tuple[Counter[Key], bool]] = {}
    for d in diagnostics:
        if d.fix is None:
            out.append(d)
            continue
        fixed = apply_edits(text, d.fix.edits)
        if fixed not in checked:
            report = check_text(filename, fixed, everything, catalog, program)
            checked[fixed] = (_keys(report.diagnostics, filename), report.complete)
        after, complete = checked[fixed]
        expected = before.copy()
        expected[_key(d)] -= 1
        # A re-check cut short by its budget has not seen the whole fixed file: no verdict.
        if fixed != text and complete and not (after - expected):
            out.append(d)
        else:
            out.append(replace(d, fix=None))
    return out
