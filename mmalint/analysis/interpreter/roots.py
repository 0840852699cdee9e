"""Running the roots: each function that can reach a recorded call, once per parameter world
and receiver class, within its share of the budget."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass

import libcst as cst

from mmalint.analysis import by_root
from mmalint.analysis.budget import BudgetExceeded, Window
from mmalint.analysis.calls import Context, WorldBinding
from mmalint.analysis.host import Args, Diverges
from mmalint.analysis.interpreter import replays
from mmalint.analysis.interpreter.core import (
    GAVE_UP,
    Frame,
)
from mmalint.analysis.interpreter.fixtures import Fixtures
from mmalint.analysis.source import Block, BlockParseError
from mmalint.analysis.values import (
    ClassVal,
    Func,
    Instance,
    Value,
)
from mmalint.analysis.worlds import worlds_for


@dataclass(frozen=True)
class SetUp:
    """What a test's setUp gave its object (`Roots._set_up`), for the test's later worlds."""

    epoch: int  # `Machine._class_epoch` when it ran
    attrs: dict[str, Value]  # facts only
    # The function nodes it called with every argument known (nodes, not their ids: kept
    # alive, no id is ever another's).
    invoked: frozenset[cst.CSTNode]


class Roots(Fixtures):
    """Which code runs, in which worlds, within which budget."""

    def run_roots(self, roots: Sequence[Block]) -> None:
        """Run each root within an equal share of half the file's budget, so that no runaway
        root starves the others; then run again, from the start, those that ran out, sharing
        all that is left (one heavy root among light ones needs more than an equal share)."""
        unfinished = self._run_pass(roots, self.budget.share(2, run=False))
        if unfinished and not self.budget.exhausted:
            for block in self._abandoned_blocks:
                self._forget_module_block(block)
            self._replays.clear()  # a call may have read what those blocks had bound so far
            self._abandoned_blocks = []
            unfinished = self._run_pass(unfinished, self.budget.file)
        self._unfinished = self._unfinished or bool(unfinished)

    def _run_pass(self, roots: Sequence[Block], window: Window) -> list[Block]:
        """Run the roots, each in its share of `window`; those that ran out of budget."""
        unfinished: list[Block] = []
        for i, block in enumerate(roots):
            stops = self.budget.stops
            self._root_source = None if block.source is self.source else block.source
            try:
                if block.parent is None and block.kind == "stmt":
                    self._enter_root(block, self.budget.share(len(roots) - i, within=window))
                    self._script_block = block if self._root_source is not None else None
                    self.execute_module_block(block)
                elif block.kind == "def":
                    self._enter_root(block, self.budget.share(len(roots) - i, within=window, run=False))
                    self._run_function_root(block)
            except (BlockParseError, Diverges):
                pass
            except GAVE_UP as exc:
                self._note_gave_up(exc)
            finally:
                self.context = Context()
                self._stack = []
                self._root_source = None
                self._script_block = None
            if self.budget.stops != stops:
                unfinished.append(block)
        return unfinished

    def _enter_root(self, block: Block, window: Window) -> None:
        self.budget.enter(window)
        self._foreign_spent.clear()  # capped helpers: each root has their steps anew
        self._fixtures_found.clear()  # each root reads the fixtures it gets (what its runs read)
        by_root.begin(self, block, self._steps_taken, self.budget.window.end)

    def _steps_taken(self) -> int:
        return self.budget.steps

    def _forget_module_block(self, block: Block) -> None:
        """A module-level block that ran out of budget may run again (its names were unknown)."""
        module = self.module_of(block.source)
        module.executed.discard(id(block))
        for bound in block.bound_names:
            module.block_values.pop((id(block), bound), None)
            module.globals.pop(bound, None)

    def _run_function_root(self, block: Block) -> None:
        stmts = block.statements()
        node = stmts[0] if stmts else None
        if not isinstance(node, cst.FunctionDef):
            return
        if node.name.value.startswith("test") and self.program is not None and self.program.not_collected(block.source):
            return  # a test of a module pytest never collects (`collect_ignore` in a conftest)
        cls: ClassVal | None = None
        module = self.module_of(block.source)
        decorator_frame = module.frame
        class_decorators: list[tuple[cst.Decorator, Frame, Block]] = []
        if block.parent is not None:
            if block.parent.name is None:
                return
            owner = self.global_value(block.parent.name, module)
            if not isinstance(owner, ClassVal):
                return
            cls = owner
            decorator_frame = Frame(self, module.frame, frozenset(), block.parent)
            head = block.parent.statements()
            if head and isinstance(head[0], cst.ClassDef):
                class_decorators = [(d, module.frame, block.parent) for d in head[0].decorators]
        func = self.make_function(node, block, module.frame, cls)
        worlds = self.fixture_worlds(node, block, cls, worlds_for(self, node, block, decorator_frame, class_decorators))
        if self.program is not None and any(w.bindings for w in worlds) and self.program.skips_by_parameters(block.source):
            return  # a conftest hook may skip any of its worlds by their parameters: none is known to run
        is_static = any(
            isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
            for d in node.decorators
        )
        receivers: list[tuple[ClassVal | None, tuple[WorldBinding, ...]]] = [(cls, ())]
        if cls is not None and node.name.value.startswith("test"):
            # A test method runs once per concrete class that inherits it (jax's WG subclasses).
            receivers += [
                (sub, (WorldBinding("class", sub.name, sub.origin),))
                for sub in self._subclasses_inheriting(cls, node.name.value)
            ]
        is_test = cls is not None and node.name.value.startswith("test")
        root_window = self.budget.window
        set_ups: dict[int, SetUp] = {}  # by the receiver class's id: what its setUp gave
        for (receiver, class_binding), world in itertools.product(receivers, worlds):
            positional: list[Value] = []
            instance: Instance | None = None
            if receiver is not None and not is_static:
                instance = Instance(receiver)
                positional.append(instance)
            positional.extend(world.positional)
            keywords = dict(world.keywords)
            keywords.update(self.fixture_keywords(node, block, cls, len(world.positional), set(keywords),
                                                  dict(world.indirect)))
            args = Args(positional, keywords, [], {}, world.complete)
            self.context = Context(world=(*class_binding, *world.bindings))
            self._defined = []
            self._invoked = set()
            self._entered = set()
            self._handed = set()
            # Capped helpers of other modules have their steps anew in each world: a skip guard
            # a sweep's 40th world calls is decided as in its first (spent by the worlds before
            # it, it was unknown, and the world it skips reported).
            self._foreign_spent.clear()
            # Each world may use what its root has left: worlds of one root run the same code,
            # and one of them that runs away ends only its root, not the others. Once the root
            # has nothing left, its other worlds are not started: each would stop at its first
            # look at the clock, and 256 of them cost more than the root's share.
            if self.budget.spent(root_window):
                self.budget.stops += 1  # the root is unfinished: the second pass may run it
                break
            self.budget.enter(self.budget.share(1, within=root_window))
            try:
                if is_test and instance is not None:
                    # unittest runs setUp on the test's object first: what it stores on `self`
                    # (`self.prng`, dtypes, shapes) is what the test reads; a skip there ends it.
                    self._set_up(instance, node, set_ups)
                self.call_function(func, args, node, root=True)
                self._run_uninvoked()
            except Diverges:
                pass
            except RecursionError as exc:
                self._note_gave_up(exc)  # this world is too deep to follow; the next may not be
            except BudgetExceeded:
                if self.budget.exhausted:
                    raise  # the file's budget: no other world of this root will run either
            finally:
                self.context = Context()
                self._stack = []

    def _set_up(self, instance: Instance, node: cst.CSTNode, kept: dict[int, SetUp]) -> None:
        """unittest's setUp on the test's fresh object. Each world of a test runs the same
        setUp on an object of the same class, so once a run of it was decided by the object
        alone (it tried to record nothing, left nothing pending, stored into nothing but the
        object, read no other object, and stored only facts), a later world's object is given
        what it stored, and the functions it called count as called, unless a class's
        attributes were stored into since. jax's tree: 1,128 runs of setUp -> 187, 31,339
        steps fewer (3.8%), the same findings."""
        set_up = self.class_attr(instance.cls, "setUp")
        if not isinstance(set_up, Func):
            return
        found = kept.get(id(instance.cls))
        if found is not None and found.epoch == self._class_epoch:
            instance.attrs.update(found.attrs)
            self._invoked.update(id(called) for called in found.invoked)
            return
        records, effects, defined, epoch = self.records_tried, self.effects, len(self._defined), self._class_epoch
        trace = replays.Trace(given=instance.attrs)
        self._traces.append(trace)
        try:
            self.call_function(set_up, Args([instance], {}, [None], {}, True), node)
        finally:
            self._traces.pop()
            if self._traces:
                self._traces[-1].absorb(trace)
        if (
            self.records_tried == records
            and self.effects - effects == trace.stores_into_given
            and len(self._defined) == defined
            and self._class_epoch == epoch
            and not (trace.tainted or trace.overflowed or trace.pended)
            and all(replays.replayable_result(value) for value in instance.attrs.values())
        ):
            kept[id(instance.cls)] = SetUp(epoch, dict(instance.attrs), frozenset(trace.invoked))

    def _subclasses_inheriting(self, cls: ClassVal, method: str) -> list[ClassVal]:
        found = []
        source = cls.block.source if cls.block is not None else self.source
        module = self.module_of(source)
        for block in source.blocks:
            if block.kind != "class" or block.name is None or block.name == cls.name:
                continue
            try:
                sub = self.global_value(block.name, module)
            except BlockParseError:
                continue
            if not isinstance(sub, ClassVal) or sub is cls:
                continue
            chain = list(self.mro(sub))
            if cls not in chain:
                continue
            # Not if a class between them overrides the method.
            overridden = False
            for klass in chain:
                if klass is cls:
                    break
                if method in klass.attrs:
                    overridden = True
                    break
            if not overridden:
                found.append(sub)
        return found

    def _run_uninvoked(self) -> None:
        """Nested functions never called still get analysed, blind, at the end of the world.
        One that was entered, even with some argument unknown (a kernel launched with an
        output type not known), already ran there with what was known and in its context (an
        expected failure, a kernel's semantics): a blind run, outside that context, would add
        nothing but what that context rules out (jax's tree: 113,513 steps, 14%, the same
        findings). A call that a foreign helper's step limit or the depth guard may have cut
        short does not count, nor does it for a function handed to code no model knows."""
        while True:
            pending = [f for f in self._defined if id(f.node) not in self._invoked
                       and (id(f.node) not in self._entered or id(f) in self._handed)]
            if not pending:
                return
            func = pending[0]
            self._invoked.add(id(func.node))
            if self._leads_nowhere(func):
                continue
            with suppress(Diverges):
                self.call_function(func, Args([], {}, [], {}, complete=False), func.node)

    def _leads_nowhere(self, func: Func) -> bool:
        """Whether a blind run of `func` can record nothing: a function of another module of
        the tree that leads to no MMA call (`Program.leads_to_mma`, the text scan that also
        limits a call of it, `_call_across`), closing over nothing but its module's globals.
        With every argument unknown, what it could reach is what its module's text names.
        (jax's `xla_bridge.get_backend`, handed to jax's own `util.cache`, ran 34,000 steps.)
        A nested function may close over a kernel or an MMA API its maker was given: run."""
        if self.program is None or func.block.source is self.source:
            return False
        if func.closure is not self.module_of(func.block.source).frame:
            return False
        return not self.program.leads_to_mma(func.block)
