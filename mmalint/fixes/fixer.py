"""The fix loop: lint, apply the non-overlapping fixes, lint again, until nothing changes.

Bounded like ruff's: a file whose fixes keep producing new fixes stops after MAX_ITERATIONS
passes (or as soon as a pass reproduces an earlier text) and is reported as not converged.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from mmalint.catalog import Catalog, load_catalog
from mmalint.engine import FileReport
from mmalint.fixes.apply import apply_fixes
from mmalint.pipeline.file import lint_text
from mmalint.pipeline.options import LintOptions
from mmalint.settings import Settings

MAX_ITERATIONS = 10


@dataclass(frozen=True)
class FixResult:
    text: str
    report: FileReport  # the findings left in `text`
    fixed: Counter[str] = field(default_factory=Counter)  # fixes applied, per rule code
    converged: bool = True

    @property
    def fixed_count(self) -> int:
        return sum(self.fixed.values())


def fix_text(
    filename: str,
    text: str,
    settings: Settings,
    options: LintOptions | None = None,
    unsafe: bool = False,
    catalog: Catalog | None = None,
) -> FixResult:
    catalog = catalog or load_catalog()
    options = options or LintOptions()
    fixed: Counter[str] = Counter()
    seen = {text}
    report = lint_text(filename, text, settings, options, catalog)
    for _ in range(MAX_ITERATIONS):
        result = apply_fixes(text, report.diagnostics, unsafe)
        if not result.applied or result.text == text:
            return FixResult(text, report, fixed)
        fixed.update(d.code or d.name for d in result.applied)
        text = result.text
        report = lint_text(filename, text, settings, options, catalog)
        if text in seen:
            return FixResult(text, report, fixed, converged=False)
        seen.add(text)
    return FixResult(text, report, fixed, converged=False)
