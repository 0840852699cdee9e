"""The interpreter's state: the module's globals, the path's context, what was recorded, the
budget; and what each part of the interpreter offers the others."""

from __future__ import annotations

import bisect
import enum
import functools
import re
import sys
import weakref
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple

import libcst as cst

from mmalint.analysis import by_root, reads
from mmalint.analysis.budget import Budget, BudgetExceeded, CallTooLong
from mmalint.analysis.calls import ApiUse, Context, Entry, MmaSite
from mmalint.analysis.host import Args, Diverges
from mmalint.analysis.interpreter.bindings import last_binding, nothing_runs_between
from mmalint.analysis.interpreter.handing import BY_NAME, changed_elsewhere, holds_a_container
from mmalint.analysis.mutations import (
    AUGMENTED_OP,
    code_of,
    mutation_words,
    names_in,
    passed_on,
)
from mmalint.analysis.source import Block, BlockParseError, SourceFile, is_import_block
from mmalint.analysis.values import (
    UNKNOWN,
    Api,
    ClassVal,
    EnumMember,
    Func,
    MapVal,
    ProjectModule,
    SetVal,
    Value,
    join,
)

if TYPE_CHECKING:
    from mmalint.analysis.interpreter.replays import Replay, Trace
    from mmalint.analysis.program import Program

MAX_CALL_DEPTH = 12
MAX_UNROLL = 64

# What ends a run early without deciding anything: the file's budget, or checked code nested
# deeper than Python's stack (a block, a chain of module globals or of values).
GAVE_UP = (BudgetExceeded, RecursionError)


class Summary(NamedTuple):
    """A call into another module of the tree, as a later call with the same facts reuses it
    (`calls.Calls._call_across`)."""

    result: Value
    sites: tuple[MmaSite, ...]  # what it recorded
    uses: tuple[ApiUse, ...]
    entry: Entry | None  # where it entered the module (its records say so)
    entered: frozenset[object]  # the checked file's functions its run entered, blocks it read (`by_root.capture`)
    spending: tuple[tuple[int, int], ...]  # the steps it spent in each capped helper, by its node's id
    made_by: int  # which root's run made it (`by_root.making`)
    refused: bool  # a call of a capped helper was refused in it (its steps were spent)


class Flow(enum.Enum):
    NORMAL = 0
    RETURN = 1
    RAISE = 2  # raise, skipTest, a failed assert: the path ends
    BREAK = 3
    CONTINUE = 4


class Frame:
    """A scope: a function activation, a class body or the module."""

    def __init__(
        self,
        interp: Machine,
        parent: Frame | None,
        local_names: frozenset[str] | None,
        block: Block | None,
        is_module: bool = False,
    ) -> None:
        self.interp = interp
        self.parent = parent
        self.local_names = local_names
        self.block = block
        self.function: cst.FunctionDef | cst.Lambda | None = None  # the function it runs, if any
        self.owner: ClassVal | None = None  # the class that function is a method of: its `super()`'s
        self.is_module = is_module
        self.module: ModuleState | None = None  # a module's own frame: whose globals
        self.env: dict[str, Value] = {}
        self.returns: list[Value] = []
        # A generator function's run: what its `yield`s gave, in order (None: not one, or a
        # yield under a branch or loop not sure to run), and the uncertainty it began at.
        self.yields: list[Value] | None = None
        self.yield_base: tuple[int, int | None] = (0, 0)  # None: a yield under a `with` or `try` counts
        # One (breaks, continues) pair of environments per loop being run in this frame.
        self.loops: list[tuple[list[dict[str, Value]], list[dict[str, Value]]]] = []

    def lookup(self, name: str) -> Value:
        frame: Frame | None = self
        while frame is not None:
            if frame.is_module:
                return self.interp.global_value(name, frame.module)
            if name in frame.env:
                return frame.env[name]
            if frame.local_names is not None and name in frame.local_names:
                return UNKNOWN
            frame = frame.parent
        return self.interp.global_value(name)


class ModuleState:
    """One module of the program as this run has loaded it: its frame, the values its blocks
    bound, which blocks have run. The checked file is one; a module of the checked tree that
    its code imports is another, loaded when a name of it is first read (`analysis/program.py`)."""

    def __init__(self, interp: Machine, source: SourceFile, name: str | None) -> None:
        self.source = source
        self.name = name  # its dotted name in the tree, for relative imports (None: unknown)
        self.frame = Frame(interp, None, None, None, is_module=True)
        self.frame.module = self
        self.globals: dict[str, Value] = {}
        self.block_values: dict[tuple[int, str], Value] = {}
        self.executed: set[int] = set()
        self.executing: set[int] = set()
        self.incomplete: set[int] = set()  # blocks stopped before their end (the budget, a raise)
        self.rebound, self.attribute_stored = _mutated_globals(source)
        self.stars: list[ProjectModule] | None = None  # modules it star-imports (when first asked)
        self.library_stars: list[str] | None = None  # library modules it star-imports (canonical)
        self._chains: dict[str, Chain | None] = {}
        # Per global filled at import: how many of its statements have run, each in its turn
        # (-1 once one ran out of turn or stopped half-way); each block's place in the chains.
        self.filled: dict[str, int] = {}
        self._places: dict[int, list[tuple[str, int]]] = {}
        self.registries: dict[str, Any] = {}  # global -> how this run filled it (`registries.Fill`)
        self.stored_elsewhere: dict[str, bool] = {}  # global -> `Program.stored_by_importers`

    def chain(self, name: str) -> Chain | None:
        """The statements that fill the global `name` at import (`settling_chain`)."""
        if name not in self._chains:
            chain = self._chains[name] = settling_chain(self.source, name, name in self.rebound)
            if chain is not None:
                self.filled[name] = 0
                for i, block in enumerate(chain.blocks):
                    self._places.setdefault(id(block), []).append((name, i))
                    if id(block) in self.executed:  # ran before anyone asked
                        self._step(name, i, block)
        return self._chains[name]

    def ended(self, block: Block) -> None:
        """A module-level block ran (or stopped): the chains it is a statement of move on."""
        for name, i in self._places.get(id(block), ()):
            self._step(name, i, block)

    def _step(self, name: str, i: int, block: Block) -> None:
        """The `i`th statement of `name`'s chain ended: in its turn, or not (then -1 for good)."""
        done = self.filled[name]
        if done >= 0:
            self.filled[name] = i + 1 if done == i and id(block) not in self.incomplete else -1


def site_key(site: MmaSite) -> tuple[object, ...]:
    """What makes a recorded MMA call the same as one recorded before (`Machine.record`)."""
    origins = tuple(id(o.node) if o is not None else None for o in site.arg_origins)
    return (site.api, id(site.origin.node), site.args, origins, site.context)


def use_key(use: ApiUse) -> tuple[object, ...]:
    """Likewise for a use of a version-dependent API (`Machine.record_use`)."""
    keywords = tuple((k, id(o.node) if o is not None else None) for k, o in use.keywords)
    return (use.name, id(use.origin.node), keywords, use.element_bits, use.element_form, use.context)


class Machine(ABC):
    """The state of one interpreter run over a module; the parts (`statements`, `flow`...) are
    mixins over it, and the abstract methods below are what they call of each other."""


    def __init__(self, source: SourceFile, budget: Budget | None = None, program: Program | None = None) -> None:
        self.source = source
        self.budget = budget or Budget.for_text(source.text)
        # The checked tree, whose modules the checked file's imports may name (None: this file
        # alone, every import of a module no model knows is an unknown API).
        self.program = program
        self.main = ModuleState(self, source, program.module_name(source) if program is not None else None)
        self.module = self.main.frame
        self._modules: dict[int, ModuleState] = {id(source): self.main}  # by id of their SourceFile
        self.sites: list[MmaSite] = []
        self.uses: list[ApiUse] = []
        self.context = Context()
        self._stack: list[cst.CSTNode] = []
        self._defined: list[Func] = []
        self._invoked: set[int] = set()
        # Functions entered in this world, with or without every argument known (by id of their
        # nodes); neither kind is run blind at the world's end (`Roots._run_uninvoked`).
        self._entered: set[int] = set()
        self._cut = 0  # calls the depth or recursion guard refused so far
        self._handed: set[int] = set()  # functions handed to code no model knows (by id)
        self._rebound: list[Value] = []  # containers changed in place so far (`Changes.rebind`)
        self._local_names_cache: dict[int, frozenset[str]] = {}
        self._current_module_block: Block | None = None
        # > 0 while running code that whichever root asks first runs for all: module-level
        # code, a class member's value (`by_root`: what it records or enters is no root's own).
        self._lazy_code = 0
        # The checked file's top-level block whose module-level code is under way innermost (a
        # class member's value is its class's; None in a root's own code, another module's
        # code): the reader of what that code reads and runs (`by_root.read`, `entered`).
        self.lazy_block: Block | None = None
        self._metaclass_cache: dict[int, dict[str, Value]] = {}
        self._own_getattribute: dict[int, bool] = {}  # class -> `classes.reads_its_own_way`
        self._enum_kinds: dict[int, str | None] = {}  # class -> `classes.enum_kind`
        # (class id, member name) -> the class and what its `__init__` set on the member
        self._enum_inits: dict[tuple[int, str], tuple[ClassVal, dict[str, Value]]] = {}
        self._literals: dict[int, Value] = {}  # literal nodes live as long as their blocks
        # > 0 while running a branch or loop body whose running is not certain: stores into
        # shared mutable objects there cannot be taken as facts.
        self._uncertainty = 0
        # > 0 in a `try` or `with` body, or under `if TYPE_CHECKING`: what runs there may not
        # (an exception the analysis does not see, code only a type checker reads).
        self._guarded = 0
        self.errors: list[str] = []
        self._too_deep = False  # some run was abandoned on a RecursionError
        self._unfinished = False  # some root still ran out of budget when run the second time
        self._abandoned_blocks: list[Block] = []  # module-level blocks stopped by the budget
        self._recorded: set[tuple[object, ...]] = set()  # facts of the calls recorded so far
        self._mentions: dict[str, bool] = {}
        # The module of the root being run, when it is not the checked file's: a caller found
        # elsewhere in the tree, whose runs count only for the calls they reach in this file.
        self._root_source: SourceFile | None = None
        # A top-level statement of another file run as one of its callers (`roots._run_pass`):
        # that file runs as a script there, so its `if __name__ == "__main__":` runs.
        self._script_block: Block | None = None
        self._starring: set[tuple[int, str]] = set()  # star imports being followed
        self._in_main = 0  # calls of the checked file's functions under way
        # The step past which the call under way, of another module's helper, is cut short.
        self._step_limit = sys.maxsize
        self._foreign_spent: dict[int, int] = {}  # steps spent in each such helper, by its node, in this root
        self._refusals = 0  # calls of such helpers refused: their steps were spent
        # Summaries of calls into other modules of the tree, by the facts they were called with
        # (`calls.Calls._call_across`); and a count of what calls may change besides their
        # result (stores into objects, rebound names, functions handed on), so a call that
        # changed anything is not summarised.
        self._summaries: dict[tuple[object, ...], Summary] = {}
        self.effects = 0
        # Calls of module-level functions that recorded nothing, by what decided them
        # (`replays.py`); a count of what makes a call not worth remembering (a record tried,
        # a foreign helper's steps counted, a call cut off by the guards); what each call being
        # remembered has entered, called and left pending; the most calls under way at once
        # since the innermost remembered call began.
        self._replays: dict[Hashable, Replay] = {}
        self.unrepeatable = 0
        self.records_tried = 0  # calls and uses recorded, new or not (`roots._set_up`)
        self._traces: list[Trace] = []  # of the remembered calls under way, innermost last
        self._class_epoch = 0  # stores into a class's attributes so far
        self._cheap: set[cst.CSTNode] = set()  # functions not worth remembering (`replays.MIN_STEPS`)
        # A function node's id -> the node (kept alive) and whether it is a generator function.
        self._generators: dict[int, tuple[cst.CSTNode, bool]] = {}
        # (a test module's id, a name) -> the module (kept alive) and the fixture its tests get,
        # for the root running (`Fixtures._fixture`)
        self._fixtures_found: dict[tuple[int, str], tuple[SourceFile, tuple[cst.FunctionDef, Block] | None]] = {}
        self._deepest = 0

    def module_of(self, source: SourceFile) -> ModuleState:
        """The state of a module of this run (the checked file's, or one the program loaded)."""
        found = self._modules.get(id(source))
        if found is None:
            name = self.program.module_name(source) if self.program is not None else None
            found = self._modules[id(source)] = ModuleState(self, source, name)
        return found

    def global_value(self, name: str, module: ModuleState | None = None) -> Value:
        """A module global as code that runs after the module has loaded sees it.

        A name the module binds in several places (a constant rebound between launches, a
        redefined `def`, `global X` in a function) is the join of its bindings: the value at a
        given moment depends on execution order, so only what all bindings agree on is known.
        Inside the module-level block that binds it, the name has its current value.
        """
        module = module or self.main
        env, source = module.frame.env, module.source
        if by_root.active is not None and source is self.source:
            self._note_read(name, source)
        current = self._current_module_block
        if current is not None and current.source is not source:
            current = None  # another module's top level is running: this one has loaded
        if current is None and self.program is not None and name in source.bindings:
            stored = module.stored_elsewhere.get(name)
            if stored is None:
                stored = module.stored_elsewhere[name] = self.program.stored_by_importers(source, name)
            if stored:
                # `m.ACC = jnp.int32` in a test, `monkeypatch.setattr(m, "ACC", v)`: which
                # value code that runs after import sees depends on what ran first.
                return UNKNOWN
        mutated = name in module.rebound
        if mutated or len(source.bindings.get(name, ())) > 1:
            chain = module.chain(name)
            # (One bound again by `T |= ...` only, which code after import cannot take from
            # the chain, is the join of its bindings, as before.)
            if chain is not None and (mutated or current is not None or chain.after_import) and (
                    self.program is None or not self.program.changed_by_importers(source, name)):
                return self._settled(name, module, chain, current)
        if current is not None and name in current.bound_names and name in env:
            return env[name]
        if current is not None and name not in module.rebound:
            # Module-level code (and what it calls) runs top to bottom: the binding that counts
            # is the last one above the statement running now.
            above = [b for b in source.bindings.get(name, []) if b.end_line < current.start_line]
            if above:
                self.execute_module_block(above[-1])
                value = module.block_values.get((id(above[-1]), name))
                if value is not None:
                    if name in module.attribute_stored and not _is_module_value(value):
                        return UNKNOWN
                    if changed_elsewhere(module.source, name, value, self.program):
                        return UNKNOWN
                    return value
        if (current is None and len(source.bindings.get(name, ())) > 1 and name not in module.rebound
                and name not in module.attribute_stored):
            last = last_binding(source, name)  # code that runs once the module has loaded
            if last is not None and (self.program is None or not self.program.changed_by_importers(source, name)):
                self.execute_module_block(last)
                value = module.block_values.get((id(last), name))
                if value is not None:
                    return UNKNOWN if changed_elsewhere(module.source, name, value, self.program) else value
        cached = module.globals.get(name)
        if cached is not None:
            return UNKNOWN if changed_elsewhere(module.source, name, cached, self.program) else cached
        if name in module.rebound:
            filled = self.registry_value(module, name)  # a table its registrars fill at import
            if filled is None or changed_elsewhere(module.source, name, filled, self.program):
                return UNKNOWN
            return filled
        blocks = source.bindings.get(name)
        if not blocks:
            if name in env:
                return env[name]
            builtin = self.builtin(name)
            if builtin is not UNKNOWN:
                return builtin
            starred = self.star_imported(module, name)
            return starred if starred is not None else builtin
        values: list[Value] = []
        for block in blocks:
            self.execute_module_block(block)
            value = module.block_values.get((id(block), name))
            if value is not None:
                values.append(value)
        if not values:
            return env.get(name, UNKNOWN)
        result = values[0]
        for value in values[1:]:
            if value is not result:
                result = join(result, value)
        if name in module.attribute_stored and not _is_module_value(result):
            result = UNKNOWN  # an object whose attributes some statement sets, in an unknown order
        if all(id(b) in module.executed for b in blocks):
            module.globals[name] = result
        if changed_elsewhere(module.source, name, result, self.program):
            return UNKNOWN
        return result

    def _note_read(self, name: str, source: SourceFile) -> None:
        """A global of the checked file read (while `by_root` notes): by whom, of which of its
        top-level blocks (every binding of the name: which one's value counts depends on when)."""
        top = [block for block in source.bindings.get(name, ()) if block.parent is None]
        if top:
            by_root.read(self, top, self._lazy_code > 0)
            if self._traces and not self._lazy_code:
                self._traces[-1].read.update(top)

    def _settled(self, name: str, module: ModuleState, chain: Chain, current: Block | None) -> Value:
        """A global that top-level statements bind and change in place (a table filled at
        import: `T = {}`, `for k in K: T[k] = ...`), as the statements above the module-level
        code running now (`current`) leave it, run each in its turn; for code that runs after
        import (`current` None), as the whole module does, where nothing may have read it
        half-filled. Unknown where a statement ran out of its turn or stopped half-way. No
        module of the tree that imports this one may change it (`Program.changed_by_importers`)."""
        if current is None and not chain.after_import:
            return UNKNOWN
        upto = len(chain.blocks) if current is None else bisect.bisect_left(chain.starts, current.start_line)
        if by_root.active is not None and module.source is self.source:
            by_root.read(self, chain.blocks[:upto], self._lazy_code > 0)
            by_root.filled(self)
        done = module.filled[name]
        while 0 <= done < upto:
            block = chain.blocks[done]
            if id(block) in module.executing:
                return UNKNOWN  # under way above the reader: not yet what it leaves
            self.execute_module_block(block)
            now = module.filled[name]
            done = now if now == done + 1 else -1
        if done != upto:
            return UNKNOWN  # out of turn, stopped half-way, or a later statement ran already
        value = module.frame.env.get(name, UNKNOWN)
        if holds_a_container(value):
            # A list or dict inside the table may be changed under another name the text does
            # not tie to it (`ints = T.setdefault("int", [])`, `T["int"] = ints = []`).
            return UNKNOWN
        return value

    def execute_module_block(self, block: Block) -> None:
        module = self.module_of(block.source)
        key = id(block)
        if key in module.executed:
            return
        if key in module.executing:
            if block is not self._current_module_block:
                # Globals that read each other (`X = (Y, a)`, `Y = (X, b)`; at import, a
                # NameError): whichever a root reads first sees the other unknown.
                by_root.impure(self)
            return
        module.executing.add(key)
        # Run once per run, by whichever call reads it first: what it leaves (functions
        # pending, a stack of its own) is not that call's to replay.
        self.unrepeatable += 1
        saved_block = self._current_module_block
        self._current_module_block = block
        gave_up = False
        try:
            with self.lazy_code(block):
                if block.kind == "class":
                    self.define_class_block(block)
                else:
                    self.exec_block(block.statements(), module.frame, block)
        except (BlockParseError, Diverges):
            module.incomplete.add(key)
        except GAVE_UP as exc:
            gave_up = True
            module.incomplete.add(key)
            self._note_gave_up(exc)
            if isinstance(exc, BudgetExceeded):
                self._abandoned_blocks.append(block)
                self.unrepeatable += 1
        finally:
            self._current_module_block = saved_block
            module.executing.discard(key)
            module.executed.add(key)
            module.ended(block)
            env = module.frame.env
            for bound in block.bound_names:
                if gave_up:
                    # Stopped half-way (a branch taken, the other not yet merged): what it had
                    # bound so far is not what the module binds.
                    env[bound] = UNKNOWN
                if bound in env:
                    module.block_values[(key, bound)] = env[bound]

    @contextmanager
    def lazy_code(self, block: Block | None = None) -> Iterator[None]:
        """Running code that whichever root asks first runs for all (`_lazy_code`): module-level
        code, a class member's value. It runs as it runs at import, whatever its reader was
        doing: in no world or call of the reader's, not under the reader's branch that may not
        run nor in its `try` or `with` body (its stores are facts), nor within the step limit
        of the other module's helper that read it (which is cut short when it goes on, if past
        it); what it makes is every root's (`by_root.module_code`). Cut short anyway (the
        budget, the recursion guard), it is cut where its reader was: another reader may not be
        (`by_root.impure`). `block`: the top-level block whose code this is (`lazy_block`), if
        of the checked file."""
        saved = self.context, self._stack, self._uncertainty, self._guarded, self._step_limit
        saved_block = self.lazy_block
        self.context, self._stack, self._uncertainty, self._guarded, self._step_limit = Context(), [], 0, 0, sys.maxsize
        self.lazy_block = block if block is not None and block.parent is None and block.source is self.source else None
        self._lazy_code += 1
        try:
            with by_root.module_code():
                yield
        except GAVE_UP:
            by_root.impure(self)
            raise
        finally:
            self._lazy_code -= 1
            self.lazy_block = saved_block
            self.context, self._stack, self._uncertainty, self._guarded, self._step_limit = saved

    @contextmanager
    def guarded(self) -> Iterator[None]:
        """Running a `try` or `with` body, or the branch under `if TYPE_CHECKING` (`_guarded`)."""
        self._guarded += 1
        try:
            yield
        finally:
            self._guarded -= 1

    @contextmanager
    def with_context(self, **changes: object) -> Iterator[None]:
        saved = self.context
        self.context = replace(saved, **changes)  # type: ignore[arg-type]
        try:
            yield
        finally:
            self.context = saved

    @property
    def complete(self) -> bool:
        """Whether every root ran to its end (if only the second time), and no stack overflowed."""
        return not (self._unfinished or self._too_deep)

    def _note_gave_up(self, exc: BaseException) -> None:
        if isinstance(exc, RecursionError):
            self._too_deep = True

    def _elsewhere(self, block: Block) -> bool:
        """Whether a call recorded in `block` is not this run's to record: a root found in
        another file of the tree (a caller of the checked file) counts only for the calls it
        reaches in the checked file, or through a function of it (an op whose kernel body lives
        in a module the run does not check); that file's own run records the rest."""
        return self._root_source is not None and block.source is not self.source and not self._in_main

    def record(self, site: MmaSite) -> None:
        self.unrepeatable += 1  # in another world, or from another file, it may be new
        self.records_tried += 1
        if self._elsewhere(site.origin.block):
            return
        key = site_key(site)
        by_root.site(self, key, site, self._lazy_code > 0)
        if self._is_new(key):
            self.sites.append(site)

    def record_use(self, use: ApiUse) -> None:
        self.unrepeatable += 1
        self.records_tried += 1
        if self._elsewhere(use.origin.block):
            return
        key = use_key(use)
        by_root.use(self, key, use, self._lazy_code > 0)
        if self._is_new(key):
            self.uses.append(use)

    def _is_new(self, key: tuple[object, ...]) -> bool:
        """Whether a call is recorded with these facts for the first time. A helper called from
        many paths records the same facts on each: keeping one changes no finding (the rules
        see the same facts) and keeps a fan-out of paths from filling memory."""
        try:
            if key in self._recorded:
                return False
            self._recorded.add(key)
        except TypeError:  # a fact that cannot be hashed: keep every copy
            pass
        self.budget.record()
        return True

    def step(self) -> None:
        self.budget.step()
        if self.budget.steps > self._step_limit:
            raise CallTooLong(self._step_limit)

    def mentions(self, word: str) -> bool:
        found = self._mentions.get(word)
        if found is None:
            # Any module of the run: a test that enables a setting runs the kernel module's code.
            reads.word(word)
            found = any(word in m.source.text for m in self._modules.values())
            if found or len(self._modules) == 1:
                self._mentions[word] = found
            else:
                self.unrepeatable += 1  # a module loaded later may mention it
        return found

    # ------------------------------------------------------------------ what the parts offer

    # statements.py
    @abstractmethod
    def exec_block(self, stmts: Sequence[cst.BaseStatement | cst.BaseSmallStatement], frame: Frame,
                   block: Block) -> Flow: ...
    @abstractmethod
    def assign(self, target: cst.BaseExpression, value: Value, frame: Frame, block: Block) -> None: ...

    # flow.py
    @abstractmethod
    def exec_if(self, stmt: cst.If, frame: Frame, block: Block) -> Flow: ...
    @abstractmethod
    def exec_match(self, stmt: cst.Match, frame: Frame, block: Block) -> Flow: ...
    @abstractmethod
    def exec_for(self, stmt: cst.For, frame: Frame, block: Block) -> Flow: ...
    @abstractmethod
    def exec_while(self, stmt: cst.While, frame: Frame, block: Block) -> Flow: ...
    @abstractmethod
    def exec_with(self, stmt: cst.With, frame: Frame, block: Block) -> Flow: ...
    @abstractmethod
    def exec_try(self, stmt: cst.Try, frame: Frame, block: Block) -> Flow: ...

    # expressions.py
    @abstractmethod
    def eval(self, node: cst.BaseExpression, frame: Frame, block: Block) -> Value: ...
    @abstractmethod
    def eval_slice(self, node: cst.Subscript, frame: Frame, block: Block) -> Value: ...

    # calls.py
    @abstractmethod
    def make_function(self, node: cst.FunctionDef | cst.Lambda, block: Block, closure: Frame,
                      owner: ClassVal | None = None) -> Func: ...
    @abstractmethod
    def registry_value(self, module: ModuleState, name: str) -> Value | None: ...
    @abstractmethod
    def is_namedtuple(self, cls: ClassVal) -> bool: ...
    @abstractmethod
    def call_function(self, func: Func, args: Args, call_node: cst.CSTNode, root: bool = False) -> Value: ...
    @abstractmethod
    def call_value(self, callee: Value, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value: ...
    @abstractmethod
    def eval_call(self, node: cst.Call, frame: Frame, block: Block) -> Value: ...
    @abstractmethod
    def eval_args(self, node: cst.Call, frame: Frame, block: Block) -> Args: ...
    @abstractmethod
    def note_escaped(self, values: Sequence[Value]) -> None: ...
    @abstractmethod
    def _pend(self, func: Func, handed: bool) -> None: ...

    # changes.py
    @abstractmethod
    def rebind(self, old: Value, new: Value, frame: Frame, through: str | None = None) -> None: ...
    @abstractmethod
    def fill_in_place(self, call: cst.Call, frame: Frame, block: Block) -> bool: ...
    @abstractmethod
    def forget_changed(self, args: Args, mark: int, frame: Frame) -> None: ...

    # classes.py
    @abstractmethod
    def define_class_block(self, block: Block) -> None: ...
    @abstractmethod
    def make_class(self, node: cst.ClassDef, block: Block, frame: Frame) -> ClassVal: ...
    @abstractmethod
    def class_attr(self, cls: ClassVal, name: str) -> Value | None: ...
    @abstractmethod
    def own_attr(self, cls: ClassVal, klass: ClassVal, name: str) -> Value | None: ...
    @abstractmethod
    def reads_its_own_way(self, cls: ClassVal) -> bool: ...
    @abstractmethod
    def enum_kind(self, cls: ClassVal) -> str | None: ...
    @abstractmethod
    def about_the_kernel(self, test: cst.BaseExpression, frame: Frame, block: Block) -> bool: ...
    @abstractmethod
    def surely_running(self) -> bool: ...
    @abstractmethod
    def method_receiver(self, frame: Frame) -> tuple[ClassVal, Value] | None: ...
    @abstractmethod
    def enum_members(self, cls: ClassVal) -> list[EnumMember]: ...
    @abstractmethod
    def enum_member_attribute(self, member: EnumMember, attr: str) -> Value | None: ...
    @abstractmethod
    def mro(self, cls: ClassVal) -> Iterator[ClassVal]: ...
    @abstractmethod
    def instantiate(self, cls: ClassVal, args: Args, node: cst.CSTNode) -> Value: ...
    @abstractmethod
    def store_attribute(self, owner: Value, attr: str | None, value: Value, node: cst.CSTNode | None = None) -> None: ...
    @abstractmethod
    def dataclass_fields(self, cls: ClassVal) -> list[str] | None: ...
    @abstractmethod
    def copies_its_own_way(self, cls: ClassVal) -> bool: ...

    # statements.py
    @abstractmethod
    def star_imported(self, module: ModuleState, name: str) -> Value | None: ...
    @abstractmethod
    def project_attribute(self, module: ProjectModule, attr: str) -> Value | None: ...

    # operators.py
    @abstractmethod
    def builtin(self, name: str) -> Value: ...
    @abstractmethod
    def api_value(self, name: str, is_module: bool) -> Value: ...
    @abstractmethod
    def getattr(self, value: Value, attr: str, node: cst.CSTNode) -> Value: ...
    @abstractmethod
    def truth(self, value: Value) -> bool | None: ...
    @abstractmethod
    def compare(self, op: str, left: Value, right: Value) -> bool | None: ...
    @abstractmethod
    def binary(self, op: str | None, left: Value, right: Value, node: cst.CSTNode) -> Value: ...
    @abstractmethod
    def unary(self, op: str, operand: Value) -> Value: ...
    @abstractmethod
    def iterate(self, value: Value) -> list[Value] | None: ...
    @abstractmethod
    def subscript(self, value: Value, index: Value, node: cst.CSTNode, block: Block) -> Value: ...
    @abstractmethod
    def members(self, value: Value) -> list[Value] | None: ...
    @abstractmethod
    def mapping(self, entries: Sequence[tuple[Value, Value]]) -> Value: ...
    @abstractmethod
    def entry(self, mapping: MapVal, key: Value) -> tuple[bool | None, Value]: ...
    @abstractmethod
    def set_operation(self, op: str, left: SetVal, right: SetVal) -> Value: ...


def _mutated_globals(source: SourceFile) -> tuple[frozenset[str], frozenset[str]]:
    """Module globals that some statement rebinds or mutates in place, and those that only get
    attribute stores (mutated only if they turn out to be objects, not modules).

    Module-level code runs lazily here, so the order of a mutation relative to the reads is not
    known: such a global is unknown. Names bound only by imports are modules, and stay resolved.
    Scanned once per indexed module: each run that loads it (a program checks many files, each
    with its own run) asks again.
    """
    reads.mutation_scan()
    found = _MUTATED.get(source)
    if found is None:
        found = _MUTATED[source] = _scan_mutated_globals(source)
    return found


# An indexed module's answer, for as long as the module lives (its text and bindings are fixed).
_MUTATED: weakref.WeakKeyDictionary[SourceFile, tuple[frozenset[str], frozenset[str]]] = (
    weakref.WeakKeyDictionary()
)


def _scan_mutated_globals(source: SourceFile) -> tuple[frozenset[str], frozenset[str]]:

    def module_globals(pattern_names: set[str]) -> frozenset[str]:
        found = set()
        for name in pattern_names:
            blocks = source.bindings.get(name, [])
            if blocks and not all(is_import_block(b) for b in blocks):
                found.add(name)
        return frozenset(found)

    mutated, attribute_stores = mutation_words(source.text)
    candidates = names_in(mutated)
    return module_globals(set(candidates)), module_globals(attribute_stores - candidates)


class Chain(NamedTuple):
    """The top-level statements that bind a global and change it in place, in order."""

    blocks: tuple[Block, ...]
    starts: tuple[int, ...]  # their first rows
    # Whether code that runs after import may take the value they leave: nothing between them
    # nor any of them runs code of the module (which may read it half-filled), and none is the
    # script's main block (which a test run does not run).
    after_import: bool


def settling_chain(source: SourceFile, name: str, mutated: bool) -> Chain | None:
    """The statements that make the value at import of a global that is changed in place
    (`mutated`) or bound again by augmented assignments (`T |= {...}`), when that is all of
    them: it is bound and changed only by top-level statements (not by a function, nor under
    `global`), and no code passes it on (`f(T)`, `U = T`, `return T`) where it could be changed
    under another name. None otherwise (the global is unknown, or the join of its bindings,
    as before)."""
    reads.mutation_scan()  # decided by the whole text, as `rebound` is
    found = _CHAINS.setdefault(source, {})  # per module text: each run's modules ask again
    if name not in found:
        found[name] = _settling_chain(source, name, mutated)
    return found[name]


_CHAINS: weakref.WeakKeyDictionary[SourceFile, dict[str, Chain | None]] = weakref.WeakKeyDictionary()


def _settling_chain(source: SourceFile, name: str, mutated: bool) -> Chain | None:
    bindings = source.bindings.get(name, [])
    if not bindings or any(b.parent is not None or b.kind != "stmt" or is_import_block(b) for b in bindings):
        return None
    if not mutated and not all(augmented_binding(name).match(b.first_line) for b in bindings[1:]):
        return None  # bound again, not changed: which binding a function sees is not known
    if BY_NAME.search(code_of(source.text)):
        return None  # `globals()["T"]`, `vars()`, `exec(...)`: changed where no name says so
    if passed_on(source.text, name):
        return None  # (the whole text: a name bound to it is read wherever it is in scope)
    word = re.compile(r"(?<![\w.])" + re.escape(name) + r"\b")
    binding_ids = {id(b) for b in bindings}
    blocks: list[Block] = []
    for block in source.blocks:
        text = block.rows
        if word.search(text) is None:
            continue
        words, stored = mutation_words(text)
        changes = name in stored or name in names_in(words)
        if changes and (block.kind != "stmt" or is_import_block(block)):
            return None  # changed by a function or a class body: when is not known
        if changes and (_MAY_SKIP.search(code := code_of(text)) or any(
                word.search(body) for body in _lambda_bodies(code))):
            # Under `try` or `with` (an exception the analysis does not see may skip it), or
            # in a lambda (it runs when called, not here; a lambda that does not name it, as
            # `T[w] = lambda dt: make(dt, w)`, is only a value stored).
            return None
        if changes or id(block) in binding_ids:
            blocks.append(block)
    if not blocks:
        return None
    after_import = (
        nothing_runs_between(source, blocks)
        and not any(_calls_the_module(source, b) or _MAIN_GUARD.match(b.first_line) for b in blocks)
    )
    return Chain(tuple(blocks), tuple(b.start_line for b in blocks), after_import)


@functools.lru_cache(maxsize=1024)
def augmented_binding(name: str) -> re.Pattern[str]:
    """A row binding the global `name` by an augmented assignment (`T |= {...}`, `T += [...]`)."""
    return re.compile(r"[ \t]*" + re.escape(name) + r"[ \t]*" + AUGMENTED_OP)


_MAY_SKIP = re.compile(r"(?<![\w.])(?:try|with)\b")
_LAMBDA = re.compile(r"(?<![\w.])lambda\b")


def _lambda_bodies(code: str) -> list[str]:
    """The text of each lambda in `code` (strings blanked): from `lambda` to where its
    expression ends, a comma or closing bracket of the depth it began at, or the row's end
    outside brackets."""
    bodies = []
    for match in _LAMBDA.finditer(code):
        depth, end = 0, len(code)
        for i in range(match.end(), len(code)):
            char = code[i]
            if char in "([{":
                depth += 1
            elif char in ")]}":
                if depth == 0:
                    end = i
                    break
                depth -= 1
            elif (char == "," and depth == 0) or (char == "\n" and depth == 0):
                end = i
                break
        bodies.append(code[match.start():end])
    return bodies
_MAIN_GUARD = re.compile(r"if[ \t(]+__name__[ \t]*==|if[ \t(]+[\"']__main__[\"'][ \t]*==")


def _calls_the_module(source: SourceFile, block: Block) -> bool:
    """Whether a statement calls something the module binds (a function of its own, or one it
    made): code that may read the global half-filled, directly or not, and whose blind run
    after import reads it whole."""
    text = code_of(block.rows)
    for body in _lambda_bodies(text):
        text = text.replace(body, " " * len(body), 1)  # a lambda's calls run when it is called
    for called in re.findall(r"(?<![\w.])(\w+)[ \t]*\(", text):
        if any(not is_import_block(b) for b in source.bindings.get(called, ())):
            return True
    return False


def _is_module_value(value: Value) -> bool:
    return (isinstance(value, Api) and value.is_module) or isinstance(value, ProjectModule)


def all_params(params: cst.Parameters) -> list[cst.Param]:
    return [*params.posonly_params, *params.params, *params.kwonly_params]

def body_of(suite: cst.BaseSuite) -> Sequence[cst.BaseStatement | cst.BaseSmallStatement]:
    if isinstance(suite, cst.IndentedBlock):
        return suite.body
    assert isinstance(suite, cst.SimpleStatementSuite)
    return suite.body

def merge_envs(envs: list[dict[str, Value]]) -> dict[str, Value]:
    merged = dict(envs[0])
    for env in envs[1:]:
        for name in set(merged) | set(env):
            if name in merged and name in env:
                merged[name] = join(merged[name], env[name])
            else:
                merged[name] = UNKNOWN
    return merged

def walk_statements(suite: cst.BaseSuite) -> Iterator[cst.BaseSmallStatement | cst.BaseStatement]:
    """The small statements of a function body, not descending into nested scopes."""
    for statement in body_of(suite):
        if isinstance(statement, cst.SimpleStatementLine):
            yield from statement.body
        elif isinstance(statement, cst.If | cst.For | cst.While | cst.With | cst.Try):
            yield statement
            yield from walk_statements(statement.body)
        else:
            yield statement
