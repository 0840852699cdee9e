"""Running the analysis of one module: its roots, its callers' roots, what they record."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mmalint.analysis import (
    by_root,
    models,  # noqa: F401  (registers every model: the interpreter asks them)
)
from mmalint.analysis.budget import Budget
from mmalint.analysis.calls import ApiUse, MmaSite
from mmalint.analysis.interpreter import Interpreter
from mmalint.analysis.program import Program
from mmalint.analysis.relevance import relevant
from mmalint.analysis.source import Block, SourceFile


def find_roots(source: SourceFile, program: Program | None = None) -> list[Block]:
    """The blocks worth running: those that mention an MMA API, those that import from the
    checked tree a name leading to one (`program`), and those that call them
    (`relevance.relevant`)."""
    imported = None
    if program is not None:
        imported = lambda block: program.leading_imports(source, block)  # noqa: E731
    return list(relevant(source, imported).blocks)


@dataclass(frozen=True)
class Analysis:
    sites: list[MmaSite]  # every MMA call, once per path that reaches it
    uses: list[ApiUse]  # every use of a version-dependent API, likewise
    # False when some run stopped early (budget, stack): the paths it did not take are unknown
    complete: bool = True


def analyze(
    source: SourceFile,
    budget: Budget | None = None,
    program: Program | None = None,
    undecided: Callable[[MmaSite], bool] | None = None,
) -> Analysis:
    """The MMA calls and version-dependent API uses reachable in the module, within `budget`
    (by default, the file's own: `Budget.for_text`).

    With the checked tree (`program`), imports of its modules are followed, and the roots of
    other files that lead to this file's MMA calls (its callers: tests, ops) run too, each
    recording only what it reaches here; the budget grows by their size. `undecided` says of
    a call what its own roots left open (by default every call): callers are looked for toward
    the functions that hold such calls, and not at all when there is none.
    """
    if program is None:
        interp = Interpreter(source, budget)
        interp.run_roots(find_roots(source))
        return Analysis(interp.sites, interp.uses, interp.complete)
    with program.checking(source):
        interp = Interpreter(source, budget, program)
        interp.run_roots(find_roots(source, program))
        callers = callers_of(source, program, interp.sites, undecided)
        if callers:
            # At most half the file's own budget again: the callers of a library module can
            # be many times its size (jax's layout inference and its tests, of a lowering).
            interp.budget.grow(min(sum(len(caller.text) for caller, _ in callers), len(source.text) // 2))
            by_root.callers(interp)
            interp.run_roots([block for _, blocks in callers for block in blocks])
    return Analysis(interp.sites, interp.uses, interp.complete)


def callers_of(
    source: SourceFile,
    program: Program,
    sites: list[MmaSite],
    undecided: Callable[[MmaSite], bool] | None = None,
) -> list[tuple[SourceFile, tuple[Block, ...]]]:
    """The roots of other files to run after the file's own recorded `sites` (while
    `program.checking(source)`): only for a file whose own roots reach an MMA call it reports
    (in it, or in a file the run does not check) that they leave open; a file whose MMA words
    name something else (its own `wgmma` helper) gets nothing from them."""
    reported = [
        site for site in sites
        if site.origin.block.source is source or not program.is_checked(site.origin.block.source)
    ]
    open_sites = [site for site in reported if undecided is None or undecided(site)]
    if not open_sites:
        return []
    # Toward the checked file's functions that hold an open call; a call in another file
    # (reached through this one) leaves it open which function led there.
    toward = None
    if all(site.origin.block.source is source for site in open_sites):
        toward = {site.origin.block for site in open_sites}
    return program.callers(source, toward)
