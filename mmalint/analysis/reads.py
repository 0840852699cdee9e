"""A record of what the analysis read of the checked file, for the language server's reuse of
its last result (`lsp/incremental.py`): an edit of code that no analysis read, that names no
API nor new function, and that leaves the structure of the module as it was, cannot change
what the analysis finds.

While a `Reads` is active (`recording`), the analysis notes here:
- each block whose text it read (`Block.text`, a class's header), the interpreter's reads, not
  the relevance scan's, which reads every block and is compared by its facts instead;
- each question it asked of a whole module's text (`mentions`, the scan for mutated globals,
  a star import's `*`), which an edit anywhere could answer otherwise;
- each budget, so that what was left of each run is known: an edit that shrinks the file
  shrinks its budget, and is safe only while every run would still have ended where it did.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

# Blocks and sources (`analysis.source`), which import this module: named here by what is used.
Block = Any
SourceFile = Any


class Budget(Protocol):
    """What the record asks of a budget (`analysis.budget.Budget`, which imports this module)."""

    stops: int
    exhausted: bool

    def least_left(self) -> int: ...


@dataclass(frozen=True)
class ScanFacts:
    """What a block outside a relevance scan's relevant blocks would have to name to join
    them: an API through none of the `foreign` modules, an attribute of `qualified`, or a name
    of `bare`, `methods` (through `self.`) or `classes` (called). Plain data, for the memo."""

    foreign: frozenset[str]
    qualified: dict[str, frozenset[str]]
    bare: frozenset[str]
    methods: frozenset[str]
    classes: frozenset[str]


@dataclass(frozen=True)
class Scan:
    """What one relevance scan of a recorded module found (`relevance._relevant`)."""

    relevant: frozenset[Block]
    facts: ScanFacts


@dataclass(eq=False)
class Reads:
    blocks: set[Block] = field(default_factory=set)  # whose whole text some analysis read
    words: set[str] = field(default_factory=set)  # `word in module.text` questions asked
    mutation_scans: bool = False  # `_mutated_globals` read some module's whole text
    uses: set[str] = field(default_factory=set)  # names each of whose uses in a module's text was read
    budgets: list[Budget] = field(default_factory=list)
    sources: list[SourceFile] = field(default_factory=list)  # indexed by `check_text`, in order
    closures: list[Scan] = field(default_factory=list)  # relevance scans of those sources

    def slack(self) -> int | None:
        """The fewest steps any run of any budget had left when it ended; None when a run
        stopped early (then the result depends on the budget itself)."""
        least: int | None = None
        for budget in self.budgets:
            if budget.stops or budget.exhausted:
                return None
            left = budget.least_left()
            least = left if least is None else min(least, left)
        return least


active: Reads | None = None
_paused = 0


def block(read: Block) -> None:
    if active is not None and not _paused:
        active.blocks.add(read)


def word(asked: str) -> None:
    if active is not None:
        active.words.add(asked)


def mutation_scan() -> None:
    if active is not None:
        active.mutation_scans = True


def uses(names: Iterable[str]) -> None:
    """Every use of these names in a module's text was read (`mutations.passed_on`): an edit
    of rows that name one may change the answer."""
    if active is not None:
        active.uses.update(names)


def budget(made: Budget) -> None:
    if active is not None:
        active.budgets.append(made)


def source(indexed: SourceFile) -> None:
    if active is not None:
        active.sources.append(indexed)


@contextlib.contextmanager
def recording() -> Iterator[Reads]:
    global active
    outer, active = active, Reads()
    try:
        yield active
    finally:
        active = outer


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Reads that are not the interpreter's (the relevance scan reads every block's text)."""
    global _paused
    _paused += 1
    try:
        yield
    finally:
        _paused -= 1
