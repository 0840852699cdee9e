"""Replays: a call of a module-level function that recorded nothing, remembered by what
decided it, so that the same call in a later world of a sweep (or a later root) is answered
without running it again.

A sweep's worlds run the same code: `copy(src, dst, swizzle=128)` in jax's `gpu_test.py`, or
`is_cuda_compute_capability_at_least("10.0")`, comes back with the same result in each of a
test's 40 worlds. The world only reaches what a call records (each record carries it), so a
call that tried to record nothing is decided by the rest:

- the function and the frame it closes over: a module's own frame only, whose globals read
  the same at any time (a global rebound anywhere is unknown: `core._mutated_globals`); a
  nested function's frame may change between two calls;
- its arguments, by their facts *and* by where each fact (nested ones too) was decided, so a
  result that passes an argument's dtype on says where the caller's came from;
- the context less the world: Pallas semantics, inside a kernel, an expected failure, and
  whether a branch not certain to run is under way (stores there are not facts).

What such a call may change besides its result is replayed: the nested functions it defined
or handed to code no model knows (run blind at the end of the world, as they would have been)
and those it called (which are then not). A call that did anything else is not remembered: a
store into an object, a rebound container, a record tried (even one not new: in another world
it would be), a step of a foreign helper counted (`Calls._call_across` limits
those per run, so a later call may be cut short where this one was not), or a call cut off by
the recursion or depth guard (another stack may cut it elsewhere); so is one that raised or ran
out of budget, or whose result holds an object, class or function (mutable, or bound to the
frame of this call). A replay is also refused where a fresh run could be cut off: under a
foreign helper's step limit, during module-level code (whose globals read by position), or
where the current stack holds a function the call entered or leaves fewer levels than it used.

A replay spends no steps: the budget measures work done, and no run of the corpus meets it
(`benchmarks/work.py`, `roots.unfinished`). Each replay is asked for by a call the caller
paid a step for, and does a bounded amount: what a call entered and called is kept as sets,
and a call that left more than MAX_PENDED functions pending is not remembered (a fan-out of
helpers calling each other four times replays in linear time, and one whose every helper
leaves a function pending runs, and ends on its budget, as before).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

import libcst as cst

from mmalint.analysis.calls import Context
from mmalint.analysis.host import Args
from mmalint.analysis.values import (
    BoundMethod,
    ClassVal,
    Func,
    Instance,
    Kernel,
    Method,
    Origin,
    Partial,
    RefAt,
    Value,
)

# Values compared by identity: objects and classes (mutable), functions (bound to a frame).
_IDENTITY = (BoundMethod, ClassVal, Func, Instance, Kernel, Method, Partial, RefAt)
# The most facts a key or a result is walked for: past it the call is not remembered.
MAX_FACTS = 256
# The most functions a remembered call may leave pending (a replay costs no step: what it
# does must stay small; a fresh run pays a step for each).
MAX_PENDED = 16


@dataclass(slots=True)
class Trace:
    """What a call being remembered has done so far besides its result, its nested calls and
    replays included: sets (a fan-out of replays would make lists of them grow 4**depth),
    and the functions it left pending, up to MAX_PENDED (past them it is not remembered)."""

    entered: set[cst.CSTNode] = field(default_factory=set)
    invoked: set[cst.CSTNode] = field(default_factory=set)
    pended: list[tuple[Func, bool]] = field(default_factory=list)
    overflowed: bool = False

    def called(self, node: cst.CSTNode, complete: bool) -> None:
        self.entered.add(node)
        if complete:
            self.invoked.add(node)

    def pend(self, func: Func, handed: bool) -> None:
        if len(self.pended) >= MAX_PENDED:
            self.overflowed = True
        else:
            self.pended.append((func, handed))

    def absorb(self, inner: Trace) -> None:
        """A nested remembered call ended: what it did, this call did."""
        self.entered |= inner.entered
        self.invoked |= inner.invoked
        for func, handed in inner.pended:
            self.pend(func, handed)
        self.overflowed = self.overflowed or inner.overflowed

    def absorb_replay(self, replay: Replay) -> None:
        self.entered |= replay.entered
        self.invoked |= replay.invoked


@dataclass(frozen=True, slots=True)
class Replay:
    """What a remembered call gave and changed."""

    result: Value
    # Functions left pending a blind run: each nested def, and each function handed to code no
    # model knows (True: pending once, whoever hands it on).
    pended: tuple[tuple[Func, bool], ...]
    # Nodes, not their ids: a replay keeps what it names alive, so no id is ever another's.
    invoked: frozenset[cst.CSTNode]  # the function nodes it called with every argument known
    entered: frozenset[cst.CSTNode]  # every function node it entered (the recursion guard's view)
    depth: int  # the most calls it had under way at once below itself


def key(func: Func, args: Args, context: Context, uncertain: bool) -> Hashable | None:
    """What a call of `func` is decided by, when it can be replayed; None otherwise."""
    closure = func.closure
    if closure is None or not closure.is_module:
        return None
    values = [*args.positional, *args.keywords.values()]
    origins: list[object] = []
    for value in values:
        if not _walk(value, origins, functions=True):
            return None
    found = (
        func.node, closure, func.defaults, func.owner is not None,
        tuple(args.positional), tuple(sorted(args.keywords.items())), args.complete,
        tuple(origins), context.expected_failure, context.semantics, context.in_kernel,
        uncertain,
    )
    try:
        hash(found)
    except TypeError:
        return None
    return found


def replayable_result(value: Value) -> bool:
    """Whether a result holds only facts: nothing compared by identity at any depth."""
    return _walk(value, [], functions=False)


def _walk(value: object, origins: list[object], functions: bool) -> bool:
    """Collect where each fact of `value` was decided (`origins`), depth first; False when
    it holds more than MAX_FACTS facts or a value compared by identity, but for a module-level
    function where `functions` (an argument: the key holds it, and its frame reads the same
    at any time; a nested function's frame may not)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if len(origins) > MAX_FACTS:
            return False
        if isinstance(item, Value):
            if isinstance(item, _IDENTITY):
                if not (functions and isinstance(item, Func) and item.closure is not None
                        and item.closure.is_module):
                    return False
                origins.append(item)
                continue
            origin = item.origin
            origins.append(None if origin is None else origin.node)
            pending.extend(v for k, v in item.__dict__.items() if k != "origin")
        elif isinstance(item, Origin):
            origins.append(item.node)
        elif isinstance(item, tuple | list | frozenset | set):
            if isinstance(item, frozenset | set):
                continue  # names and the like: compared by the value's equality already
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item.values())
    return True
