"""What each root of a checked file's analysis found and spent, apart: for the language
server's re-run of one root after an edit of it (`lsp/rerun.py`).

One interpreter runs a file's roots in order, sharing what it evaluates; what it records is
deduplicated across them (`core.Machine.record`). A root's own records, deduplicated within the
root only, put together in the roots' order and deduplicated again, are what the whole run
recorded: so the records of one root can be replaced by those of a new run of that root alone
(`benchmarks/root_partition.py` measured that such a run records the same: 805 of 805 roots).

While a `Runs` is active (`recording`), the first interpreter that starts a root notes here
each root it starts (`begin`), each record it keeps (`site`, `use`), and whether it ran anything
but the file's own roots (`callers`: the roots of other files that call into it), which a re-run
of one root cannot stand for. Other interpreters (fix verification's, of other texts) are not
noted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

# Blocks and records (`analysis.source`, `analysis.calls`), which import nothing from here.
Block = Any


@dataclass(eq=False)
class RootRun:
    """One root's run: its records in order (each once, with its key: `core.site_key`,
    `core.use_key`), and its steps."""

    block: Block
    steps_before: int  # the budget's steps when it began
    window: int  # the steps its window gave it
    steps: int = 0  # the steps it took (set when the next begins, or the run ends)
    sites: list[tuple[Hashable, Any]] = field(default_factory=list)
    uses: list[tuple[Hashable, Any]] = field(default_factory=list)
    # It recorded in module-level code it ran first (whichever root reads a global first runs
    # its block, and keeps its records): another root's run, or the block's own turn, would.
    lazy: bool = False
    # It stored into an object it did not make (a module global's, a class): what later roots
    # read of it, and what it read of an earlier root's stores, is not its run's alone.
    shared: bool = False
    _keys: set[Hashable] = field(default_factory=set)

    def keep(self, key: Hashable, into: list[tuple[Hashable, Any]], item: Any) -> None:
        try:
            if key in self._keys:
                return
            self._keys.add(key)
        except TypeError:  # a fact that cannot be hashed: every copy is kept, as the run keeps it
            pass
        into.append((key, item))


@dataclass(eq=False)
class Runs:
    machine: object = None  # the interpreter noted
    roots: list[RootRun] = field(default_factory=list)
    callers: bool = False  # roots of other files ran too
    steps: Callable[[], int] | None = None  # the running budget's step count

    def close(self) -> None:
        """The last root's steps."""
        if self.roots and self.steps is not None:
            last = self.roots[-1]
            last.steps = self.steps() - last.steps_before


active: Runs | None = None


def begin(machine: object, block: Block, steps: Callable[[], int], window_end: int) -> None:
    if active is None:
        return
    if active.machine is None:
        active.machine = machine
    elif active.machine is not machine:
        return
    active.close()
    active.steps = steps
    _roots_begun[0] += 1
    _making[0] = _roots_begun[0]
    now = steps()
    active.roots.append(RootRun(block, now, window_end - now))


def site(machine: object, key: Hashable, record: Any, in_module_code: bool) -> None:
    if active is not None and active.machine is machine and active.roots:
        root = active.roots[-1]
        root.keep(key, root.sites, record)
        root.lazy |= in_module_code


def use(machine: object, key: Hashable, record: Any, in_module_code: bool) -> None:
    if active is not None and active.machine is machine and active.roots:
        root = active.roots[-1]
        root.keep(key, root.uses, record)
        root.lazy |= in_module_code


# The run that makes objects now (`values.Instance.born`): each root's a number of its own,
# module-level code's -1 (what it makes is every root's), 0 while nothing is noted.
_making = [0]
_roots_begun = [0]


def making() -> int:
    return _making[0]


@contextlib.contextmanager
def module_code() -> Iterator[None]:
    saved = _making[0]
    _making[0] = -1
    try:
        yield
    finally:
        _making[0] = saved


def stored(machine: object, owner_born: int | None) -> None:
    """An attribute stored into an object made by `owner_born`'s run (None: a class); by
    module-level code, which runs alike whichever root runs it first, it is no root's."""
    making = _making[0]
    if active is not None and active.machine is machine and active.roots and making != -1 and (
            owner_born is None or owner_born != making):
        active.roots[-1].shared = True


def callers(machine: object) -> None:
    if active is not None and active.machine is machine:
        active.callers = True


@contextlib.contextmanager
def recording() -> Iterator[Runs]:
    global active
    outer, active = active, Runs()
    making = _making[0]
    try:
        yield active
    finally:
        active.close()
        active = outer
        _making[0] = making


def merged(keyed: Iterable[tuple[Hashable, T]]) -> list[T]:
    """The first record of each key, in order, as one run keeps them (`core.Machine._is_new`:
    one whose key cannot be hashed is kept every time)."""
    seen: set[Hashable] = set()
    kept: list[T] = []
    for key, item in keyed:
        try:
            if key in seen:
                continue
            seen.add(key)
        except TypeError:
            pass
        kept.append(item)
    return kept
