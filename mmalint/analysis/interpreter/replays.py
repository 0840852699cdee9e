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
  result that passes an argument's dtype on says where the caller's came from; a method's
  object (compared by identity) is left out where the method never names it (`first_unread`:
  jax's `default_transforms(self, *, swizzle, dtype)`, 493 calls);
- the context less the world: Pallas semantics, inside a kernel, an expected failure, and
  whether a branch not certain to run is under way (stores there are not facts).

What such a call may change besides its result is replayed: the nested functions it defined
or handed to code no model knows (run blind at the end of the world, as they would have been)
and those it entered, with every argument known or not (which are then not). A call that did anything else is not remembered: a
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

import re
import weakref
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import libcst as cst

from mmalint.analysis.calls import Context
from mmalint.analysis.host import Args
from mmalint.analysis.source import Block
from mmalint.analysis.values import (
    ArgParser,
    BoundMethod,
    ClassVal,
    Func,
    Instance,
    Kernel,
    Method,
    Origin,
    Partial,
    RefAt,
    SuperOf,
    Value,
)

# Values compared by identity: objects and classes (mutable), functions (bound to a frame).
_IDENTITY = (ArgParser, BoundMethod, ClassVal, Func, Instance, Kernel, Method, Partial, RefAt, SuperOf)
# The most facts a key or a result is walked for: past it the call is not remembered.
MAX_FACTS = 256
# The most functions a remembered call may leave pending, and enter (a replay costs no step:
# what it does must stay small; a fresh run pays a step for each).
MAX_PENDED = 16
MAX_ENTERED = 64
# A function whose first remembered run took fewer steps is not remembered again: writing
# down its arguments costs about what running it does (`return x` called 150,000 times).
MIN_STEPS = 16


@dataclass(slots=True)
class Trace:
    """What a call being remembered has done so far besides its result, its nested calls and
    replays included: sets (a fan-out of replays would make lists of them grow 4**depth) of
    up to MAX_ENTERED functions, and up to MAX_PENDED functions left pending; past either
    bound it is not remembered."""

    entered: set[cst.CSTNode] = field(default_factory=set)
    invoked: set[cst.CSTNode] = field(default_factory=set)
    pended: list[tuple[Func, bool]] = field(default_factory=list)
    # The checked file's top-level blocks whose values it read (only while `by_root` notes).
    read: set[Block] = field(default_factory=set)
    overflowed: bool = False
    made: set[Instance] = field(default_factory=set)  # objects made during it
    tainted: bool = False  # it read an attribute of an object made before it
    classes_read: bool = False  # it read a class's attribute (a store into one changes it)
    # The object a test's setUp is given (`roots._set_up`), by its attributes (a value read
    # from a name is a copy that shares them): reading it does not taint; stores into it are
    # counted.
    given: dict[str, Value] | None = None
    stores_into_given: int = 0

    def read_object(self, obj: Instance) -> None:
        if obj not in self.made and obj.attrs is not self.given:
            self.tainted = True

    def stored(self, obj: Instance) -> None:
        if obj.attrs is self.given:
            self.stores_into_given += 1

    def called(self, node: cst.CSTNode, complete: bool) -> None:
        if self.overflowed:
            return
        self.entered.add(node)
        if complete:
            self.invoked.add(node)
        if len(self.entered) > MAX_ENTERED:
            self._overflow()

    def pend(self, func: Func, handed: bool) -> None:
        if self.overflowed:
            return
        if len(self.pended) >= MAX_PENDED:
            self._overflow()
        else:
            self.pended.append((func, handed))

    def absorb(self, inner: Trace) -> None:
        """A nested remembered call ended: what it did, this call did."""
        self.classes_read |= inner.classes_read
        self.read |= inner.read
        if inner.overflowed:
            self._overflow()
        if self.overflowed:
            return
        self.entered |= inner.entered
        self.invoked |= inner.invoked
        for func, handed in inner.pended:
            self.pend(func, handed)
        if len(self.entered) > MAX_ENTERED:
            self._overflow()

    def absorb_replay(self, replay: Replay) -> None:
        """A call replayed within this one: what its run did, this call did."""
        self.classes_read |= replay.epoch is not None
        self.read |= replay.read
        if self.overflowed:
            return
        self.entered |= replay.entered
        self.invoked |= replay.invoked
        if len(self.entered) > MAX_ENTERED:
            self._overflow()

    def entered_too(self, items: frozenset[object], read: bool) -> None:
        """A call answered from a summary: the functions its run entered, this call entered; the
        top-level blocks it read (`by_root.capture` holds both), this call read, where `read`
        (module-level code's reads are its block's, not the call's)."""
        blocks = {item for item in items if isinstance(item, Block)}
        if read:
            self.read |= blocks
        if self.overflowed:
            return
        self.entered |= items - blocks  # type: ignore[arg-type]
        if len(self.entered) > MAX_ENTERED:
            self._overflow()

    def _overflow(self) -> None:
        """Past the bounds: not remembered, and nothing more kept."""
        self.overflowed = True
        self.entered, self.invoked, self.pended = set(), set(), []


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
    epoch: int | None  # `Machine._class_epoch` when it ran, if it read a class's attribute
    read: frozenset[Block] = frozenset()  # the checked file's top-level blocks whose values it read


def key(func: Func, args: Args, context: Context, uncertain: bool) -> Hashable | None:
    """What a call of `func` is decided by, when it can be replayed; None otherwise."""
    closure = func.closure
    if closure is None or not closure.is_module:
        return None
    facts: list[object] = []
    positional: Sequence[object] = args.positional
    if positional and isinstance(positional[0], _IDENTITY) and first_unread(func):
        positional = [None, *positional[1:]]  # `self` of a method that never reads it
    parts = (func.defaults, positional, sorted(args.keywords.items()),
             context.expected_failure, context.semantics)
    if not _facts(parts, facts, functions=True):
        return None
    found = (func.node, closure, func.owner is not None, args.complete, context.in_kernel, context.script, context.entering, uncertain,
             tuple(facts))
    try:
        hash(found)
    except TypeError:
        return None
    return found


# Words through which a function may read its first parameter without naming it.
_READS_ARGUMENTS = re.compile(r"\b(?:super|__class__|locals|vars|eval|exec)\b")
# By def block: a fact of its text (whichever parse of it the call's node is from).
_FIRST_UNREAD: weakref.WeakKeyDictionary[Block, bool] = weakref.WeakKeyDictionary()


def first_unread(func: Func) -> bool:
    """Whether a function that is its own block (a top-level def or a class's member) never
    reads its first parameter: the name is a word of the block's text once (the parameter
    itself), and nothing there reads parameters without naming them (`super()`, `locals()`)."""
    node, block = func.node, func.block
    if not isinstance(node, cst.FunctionDef) or block.kind != "def" or block.name != node.name.value:
        return False
    found = _FIRST_UNREAD.get(block)
    if found is None:
        params = [*node.params.posonly_params, *node.params.params]
        text = block.text
        found = _FIRST_UNREAD[block] = (
            bool(params)
            and len(re.findall(rf"\bdef\s+{re.escape(block.name)}\b", text)) == 1  # no def of its name in it
            and not _READS_ARGUMENTS.search(text)
            and len(re.findall(rf"\b{re.escape(params[0].name.value)}\b", text)) == 1
        )
    return found


def replayable_result(value: Value) -> bool:
    """Whether a result holds only facts: nothing compared by identity at any depth."""
    return _facts(value, [], functions=False)


# Field values written down as they are (with their type: `1`, `True` and `1.0` are equal).
_SCALARS = (str, int, float, complex, bytes, bool, type(None), type(...))


def _facts(value: object, out: list[object], functions: bool) -> bool:
    """Write down everything `value` holds, depth first: each value's kind and every field,
    the ones its equality leaves out too (`DType.form`, `Array.swizzle`) and where each fact
    was decided (its origin's node). False when it holds more than MAX_FACTS facts, something
    that cannot be hashed, or a value compared by identity, but for a module-level function
    where `functions` (an argument: its frame reads the same at any time; a nested
    function's frame may not)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if len(out) > MAX_FACTS:
            return False
        kind = type(item)
        if kind in _SCALARS:
            out.append((kind, item))
        elif isinstance(item, Value):
            if isinstance(item, _IDENTITY):
                if not (functions and isinstance(item, Func) and item.closure is not None
                        and item.closure.is_module):
                    return False
                out.append(item)
                continue
            out.append(kind)
            fields = item.__dict__
            out.append(len(fields))
            pending.extend(fields.values())
        elif isinstance(item, Origin):
            out.append(item.node)
        elif isinstance(item, tuple | list):
            out.append((kind, len(item)))
            pending.extend(item)
        elif isinstance(item, dict):
            out.append((kind, len(item)))
            for entry in item.items():
                pending.extend(entry)
        elif isinstance(item, frozenset | set):
            try:
                out.append(frozenset(item))
            except TypeError:
                return False
        elif isinstance(item, cst.CSTNode):
            out.append(item)  # a node: by identity, as libcst compares them
        else:
            return False  # an object of some other kind: what it holds is not known here
    return True
