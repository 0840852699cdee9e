"""Running the analysis of one module: its roots, its callers' roots, what they record."""

from __future__ import annotations

import functools
import re
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
    name something else (its own `wgmma` helper) gets nothing from them. A call in a method
    of a class the tree subclasses is open however its own roots decided it: they ran the
    method on an object of the class itself, and a subclass's object may read other
    attributes (`class W4A8(W8A8): weight_dtype = jnp.int4`)."""
    reported = [
        site for site in sites
        if site.origin.block.source is source or not program.is_checked(site.origin.block.source)
    ]
    open_sites = [site for site in reported if undecided is None or undecided(site) or _in_subclassed(site, program)]
    if not open_sites:
        return []
    # Toward the checked file's functions that hold an open call; a call in another file
    # (reached through this one) leaves it open which function led there.
    toward = None
    if all(site.origin.block.source is source for site in open_sites):
        toward = {site.origin.block for site in open_sites}
    return program.callers(source, toward)


def _in_subclassed(site: MmaSite, program: Program) -> bool:
    """Whether the call is in a method (or a function nested in one) of a module-level class
    that a class statement of its module, or of a file of the tree importing it, names among
    its bases (`class W4A8(W8A8):`, `class Fused(base.Op):`; a text scan: a base of the same
    name elsewhere counts too)."""
    block: Block | None = site.origin.block
    while block is not None and not (block.kind == "class" and block.parent is None):
        block = block.parent
    if block is None or block.name is None or _a_test_case(block.source.text, block.name):
        return False  # the test runner makes its objects (its subclasses' too: `roots.py`)
    name, head = block.name, _SUBCLASS_HEAD(block.name)
    return bool(head.search(block.source.text)) or program.asked_of_importers(
        block.source, f"subclasses {name}", lambda text: name in text and head.search(text) is not None)


@functools.lru_cache(maxsize=64)
def _a_test_case(text: str, name: str) -> bool:
    """Whether the module's class `name` is a unittest test case: a base, or a base's base of
    the module, named `...TestCase` (`parameterized.TestCase`, `jtu.JaxTestCase`)."""
    todo, seen = [name], set[str]()
    while todo and len(seen) < 12:
        current = todo.pop()
        seen.add(current)
        head = re.search(r"^class[ \t]+" + re.escape(current) + r"[ \t]*\(([^)]*)\)", text, re.MULTILINE)
        bases = [base.rsplit(".", 1)[-1] for base in re.findall(r"[\w.]+", head.group(1))] if head else []
        if any(base.endswith("TestCase") for base in bases):
            return True
        todo.extend(base for base in bases if base not in seen)
    return False


@functools.cache
def _SUBCLASS_HEAD(name: str) -> re.Pattern[str]:
    """A class statement with `name` (bare or as a module's attribute) among its bases."""
    return re.compile(r"^[ \t]*class[ \t]+\w+[ \t]*\([^)]*?(?<!\w)(?:\w+[ \t]*\.[ \t]*)*" + re.escape(name)
                      + r"\b(?![ \t]*[.(\[])", re.MULTILINE)
