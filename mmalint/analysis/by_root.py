"""What each root of a checked file's analysis found and spent, apart: for the language
server's re-run of the roots an edit reaches (`lsp/rerun.py`).

One interpreter runs a file's roots in order, sharing what it evaluates; what it records is
deduplicated across them (`core.Machine.record`). A root's own records, deduplicated within the
root only, put together in the roots' order and deduplicated again, are what the whole run
recorded: so the records of one root can be replaced by those of a new run of that root alone
(`benchmarks/root_partition.py` measured that such a run records the same: 805 of 805 roots).

While a `Runs` is active (`recording`), the first interpreter that starts a root notes here
each root it starts (`begin`), each record it keeps (`site`, `use`), the blocks of the checked
file whose functions it ran, or replayed or reused a run of (`entered`, `entered_again`: an
edit inside a helper's body changes what those roots find, and no other root's), the top-level
blocks whose values it read (`read`: an edit of a module-level statement changes what the
roots that read it find, through the blocks whose module-level code read it too), and whether it ran anything
but the file's own roots (`callers`: the roots of other files that call into it), which a re-run
of one root cannot stand for. Other interpreters (fix verification's, of other texts) are not
noted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator
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
    # its block, and keeps its records: another root's run, or the block's own turn, would):
    # the top-level blocks of the checked file whose code that was (None: code no such block
    # is the reader of, another module's).
    lazy_blocks: set[Block | None] = field(default_factory=set)
    # It stored into an object it did not make (a module global's, a class): what later roots
    # read of it, and what it read of an earlier root's stores, is not its run's alone.
    shared: bool = False
    # The checked file's blocks whose functions (nested ones too) it ran, or replayed a run of.
    entered: set[Block] = field(default_factory=set)
    # The checked file's top-level blocks whose values (the globals they bind) it read, itself
    # or in a call answered from an earlier run: an edit of a module-level statement changes
    # what the roots that read it find (with what the block's own run read: `Runs.module_reads`).
    read: set[Block] = field(default_factory=set)
    borrowed: bool = False  # it reused another root's summary where a run could differ (`borrowed`)
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
    # Blocks whose functions code no block is the reader of ran (another module's code, a
    # metaclass read as text): what it made is read by roots that never enter them.
    module_entered: set[Block] = field(default_factory=set)
    # What each top-level block's own run as module-level code read of the others' values, and
    # the blocks whose functions it ran (a root that reads it reads and runs those too); values
    # read by code no block is the reader of (another module's): every root's (the functions it
    # ran: `module_entered`). A class member's value is its class's.
    module_reads: dict[Block, set[Block]] = field(default_factory=dict)
    module_ran: dict[Block, set[Block]] = field(default_factory=dict)
    read_by_all: set[Block] = field(default_factory=set)
    # Module-level code stored into an object or a class: what a root that runs after it reads
    # of the object depends on whether it ran yet, read or not.
    module_stored: bool = False
    # Module-level code, or a class member's value, was worked out where what runs depends on
    # who asks (under a branch not certain to run, or a helper's step limit): which root ran it
    # first decides what every root reads.
    impure: bool = False
    # The block of each function node entered, for the nodes a replay names.
    _node_blocks: dict[object, Block] = field(default_factory=dict)
    # The function nodes entered, and blocks read, during each summarised call under way (`capture`).
    _captures: list[set[object]] = field(default_factory=list)
    _read_marks: set[Block] = field(default_factory=set)  # every block noted read (`read`)

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
        if in_module_code:
            root.lazy_blocks.add(_lazy_block(machine))


def use(machine: object, key: Hashable, record: Any, in_module_code: bool) -> None:
    if active is not None and active.machine is machine and active.roots:
        root = active.roots[-1]
        root.keep(key, root.uses, record)
        if in_module_code:
            root.lazy_blocks.add(_lazy_block(machine))


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
    module-level code, which runs alike whichever root runs it first, it is no root's (but
    when it ran decides what a later root reads: `Runs.module_stored`)."""
    making = _making[0]
    if making == -1 and active is not None and active.machine is machine:
        active.module_stored = True
    if active is not None and active.machine is machine and active.roots and making != -1 and (
            owner_born is None or owner_born != making):
        active.roots[-1].shared = True


def filled(machine: object) -> None:
    """A global of the checked file was read as module-level statements that change it in
    place leave it (a table filled at import): a re-run of one of them would find the others'
    changes in the module's state, as module-level stores into objects (`Runs.module_stored`)."""
    if active is not None and active.machine is machine:
        active.module_stored = True


def entered(machine: object, block: Block, node: object, in_module_code: bool) -> None:
    """A function (`node`) of `block` (of the checked file) runs; `in_module_code`: for
    module-level code or a class member's value, which whichever root asks first runs for all."""
    if active is not None and active.machine is machine and active.roots:
        active._node_blocks[node] = block
        _enter(active, (node,), in_module_code, _lazy_block(machine))


def _lazy_block(machine: object) -> Block | None:
    """The top-level block of the checked file whose run as module-level code is under way
    innermost (`core.Machine.lazy_block`): what that code reads and runs is its reader's."""
    return getattr(machine, "lazy_block", None)


def _enter(runs: Runs, nodes: Iterable[object], in_module_code: bool, lazy_block: Block | None) -> None:
    known, marks = runs._node_blocks, runs._read_marks
    nodes = list(nodes)
    mine = [node for node in nodes if node in known]
    _note({known[node] for node in mine}, runs.roots[-1].entered, runs.module_ran, runs.module_entered,
          in_module_code, lazy_block)
    read_ones = [node for node in nodes if node in marks]
    if read_ones:
        _read(runs, read_ones, in_module_code, lazy_block)
    for captured in runs._captures:
        captured.update(mine)


def entered_again(machine: object, nodes: Iterable[object], in_module_code: bool) -> None:
    """A call answered from an earlier run of it (a replay, a summary of a call into another
    module): the checked file's functions among `nodes`, those its run entered, are entered,
    and the blocks among them that its run read (`read`) are read."""
    if active is not None and active.machine is machine and active.roots:
        _enter(active, nodes, in_module_code, _lazy_block(machine))


def read(machine: object, blocks: Collection[Block], in_module_code: bool) -> None:
    """A global that top-level `blocks` of the checked file bind was read: by the root under
    way, or by the run of the block whose module-level code is (`Runs.module_reads`), or by
    code whose value is every root's."""
    if active is not None and active.machine is machine and active.roots:
        active._read_marks.update(blocks)
        _read(active, blocks, in_module_code, _lazy_block(machine))


def _read(runs: Runs, blocks: Collection[Block], in_module_code: bool, lazy_block: Block | None) -> None:
    _note(blocks, runs.roots[-1].read, runs.module_reads, runs.read_by_all, in_module_code, lazy_block)
    for captured in runs._captures:
        captured.update(blocks)


def _note(
    blocks: Iterable[Block], root: set[Block], by_block: dict[Block, set[Block]], everyone: set[Block],
    in_module_code: bool, lazy_block: Block | None,
) -> None:
    """`blocks` noted as the reader's under way: the root's own code (`root`), the module-level
    code of a top-level block (`by_block`, under it), or code whose value is every root's."""
    if not in_module_code:
        root.update(blocks)
    elif lazy_block is not None:
        by_block.setdefault(lazy_block, set()).update(blocks)
    else:
        everyone.update(blocks)


def reach(seeds: Iterable[Block], edges: dict[Block, set[Block]]) -> set[Block]:
    """The blocks `seeds` read, and those what those read when they ran read, and so on."""
    found = set(seeds)
    pending = list(found)
    while pending:
        for block in edges.get(pending.pop(), ()):
            if block not in found:
                found.add(block)
                pending.append(block)
    return found


def read_statically(machine: object, block: Block) -> None:
    """A function's code was read without running it (a metaclass's `__new__`), once for all
    roots: an edit of it is every root's."""
    if active is not None and active.machine is machine:
        active.module_entered.add(block)


@contextlib.contextmanager
def capture(machine: object) -> Iterator[set[object] | None]:
    """The checked file's function nodes entered during a call whose summary later calls reuse
    (`Calls._call_across`); None while nothing is noted."""
    if active is None or active.machine is not machine or not active.roots:
        yield None
        return
    runs, captured = active, set[object]()
    runs._captures.append(captured)
    try:
        yield captured
    finally:
        runs._captures.pop()


def borrowed(machine: object, in_module_code: bool) -> None:
    """A summary another root's run made is reused where running the call again could end
    otherwise (under a helper's step limit, or past a capped helper's steps, or it was cut by
    one when made): a run of this root alone would run it. In module-level code, every root's
    reads depend on it."""
    if active is not None and active.machine is machine and active.roots:
        if in_module_code:
            active.impure = True
        else:
            active.roots[-1].borrowed = True


def impure(machine: object) -> None:
    if active is not None and active.machine is machine:
        active.impure = True


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
