"""Calls: user functions (binding their parameters), bound methods, partials, classes, and
the models of library APIs and domain values."""

from __future__ import annotations

import re
import sys
import weakref
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import replace
from typing import TypeVar

import libcst as cst

from mmalint.analysis import by_root
from mmalint.analysis.budget import CallTooLong
from mmalint.analysis.calls import ApiUse, Context, Entry, MmaSite, WorldBinding
from mmalint.analysis.host import REGISTRY, Args, Call, Diverges
from mmalint.analysis.interpreter import replays
from mmalint.analysis.interpreter.changes import VIEWS, dict_views
from mmalint.analysis.interpreter.core import (
    MAX_CALL_DEPTH,
    MAX_UNROLL,
    Flow,
    Frame,
    Machine,
    Summary,
    all_params,
)
from mmalint.analysis.mutations import (
    ASSIGN_OP,
    MUTATING_CALL,
    MUTATING_METHODS,
    SET_MUTATING_METHODS,
)
from mmalint.analysis.scopes import LocalNames, read_only_visit
from mmalint.analysis.scopes import dotted_name as _dotted
from mmalint.analysis.source import Block
from mmalint.analysis.values import (
    CONTAINERS,
    NONE,
    UNKNOWN,
    Api,
    ArgParser,
    Array,
    BoundMethod,
    ClassVal,
    Const,
    DictVal,
    DType,
    Func,
    Instance,
    MapVal,
    Method,
    Origin,
    Partial,
    Ref,
    SetVal,
    SuperOf,
    TupleVal,
    Value,
    join,
)

# The steps a call of another module's function that leads to no MMA call may take, and all
# calls of one such function in a world (not a root or a run: what a world finds does not depend
# on the worlds or roots before it; `Roots._run_function_root` gives each world its own).
CROSS_MODULE_STEPS = 2_000
CROSS_MODULE_STEPS_PER_FUNCTION = 4_000

# As tuples: `A | B` in an `isinstance` builds a union each time it runs (see operators.py).
_CALLABLE = (BoundMethod, Func)


class Calls(Machine):
    """Calling values: user functions with their parameters bound, methods, partials, classes, and
    what the models answer for everything else."""

    def make_function(
        self,
        node: cst.FunctionDef | cst.Lambda,
        block: Block,
        closure: Frame,
        owner: ClassVal | None = None,
    ) -> Func:
        defaults: list[tuple[str, Value]] = []
        for param in all_params(node.params):
            if param.default is not None:
                defaults.append((param.name.value, self.eval(param.default, closure, block)))
        name = node.name.value if isinstance(node, cst.FunctionDef) else "<lambda>"
        return Func(
            node, block, closure, tuple(defaults), name, owner, origin=Origin(block, node)
        )

    def local_names(self, node: cst.FunctionDef | cst.Lambda, block: Block | None = None) -> frozenset[str]:
        key = id(node)
        cached = self._local_names_cache.get(key)
        if cached is None:
            collector = LocalNames()
            for param in all_params(node.params):
                collector.names.add(param.name.value)
            if isinstance(node.params.star_arg, cst.Param):
                collector.names.add(node.params.star_arg.name.value)
            if node.params.star_kwarg is not None:
                collector.names.add(node.params.star_kwarg.name.value)
            if isinstance(node, cst.FunctionDef):
                # The names a statement binds are its own fields' (`visit_AssignTarget`...):
                # expressions need walking only for `:=`, which the block's text would show.
                walrus = block is None or ":=" in block.text
                read_only_visit(node.body, collector, expressions=walrus)
            cached = frozenset(collector.names - collector.nonlocal_names)
            self._local_names_cache[key] = cached
        return cached

    def call_function(
        self, func: Func, args: Args, call_node: cst.CSTNode, root: bool = False
    ) -> Value:
        node = func.node
        if len(self._stack) >= MAX_CALL_DEPTH or any(n is node for n in self._stack):
            self.unrepeatable += 1
            self._cut += 1
            return UNKNOWN
        if args.complete:
            self._invoked.add(id(node))
        if self._step_limit == sys.maxsize:  # a run a foreign helper's limit may cut short is not one
            self._entered.add(id(node))
        traces = self._traces
        if traces:
            traces[-1].called(node, args.complete)
        key = None
        if (
            not root and self._step_limit == sys.maxsize and self._current_module_block is None
            and node not in self._cheap
        ):
            key = replays.key(func, args, self.context, self._uncertainty > 0)
            if key is not None:
                found = self._replays.get(key)
                if found is not None and self._may_replay(found):
                    self._replay(found)
                    if by_root.active is not None:
                        by_root.entered_again(self, (node, *found.entered), self._lazy_code > 0)
                        if found.read:
                            by_root.read(self, found.read, self._lazy_code > 0)
                    return found.result
        if key is None:
            return self._run_function(func, args, root)
        unrepeatable, effects, pending, steps = (
            self.unrepeatable, self.effects, len(self._defined), self.budget.steps)
        depth, outer_deepest = len(self._stack), self._deepest
        self._deepest = depth
        trace = replays.Trace()
        traces.append(trace)
        try:
            result = self._run_function(func, args, root)
        finally:
            traces.pop()
            if traces:
                traces[-1].absorb(trace)
            deepest, self._deepest = self._deepest, max(outer_deepest, self._deepest)
        if self.budget.steps - steps < replays.MIN_STEPS:
            self._cheap.add(node)
        elif (
            self.unrepeatable == unrepeatable
            # nothing changed but functions left pending
            and self.effects - effects == len(self._defined) - pending
            and not trace.overflowed
            and not trace.tainted
            and replays.replayable_result(result)
        ):
            self._replays[key] = replays.Replay(
                result, tuple(trace.pended), frozenset(trace.invoked), frozenset(trace.entered),
                deepest - depth, self._class_epoch if trace.classes_read else None, frozenset(trace.read),
            )
        return result

    def _replay(self, found: replays.Replay) -> None:
        """What a fresh run of a remembered call would change besides its result."""
        for func, handed in found.pended:
            self._pend(func, handed)
        for node in found.invoked:
            self._invoked.add(id(node))
        for node in found.entered:
            self._entered.add(id(node))
        self._deepest = max(self._deepest, len(self._stack) + found.depth)
        if self._traces:
            self._traces[-1].absorb_replay(found)

    def _may_replay(self, found: replays.Replay) -> bool:
        """Whether a fresh run of a remembered call would run as it did: no function it
        entered is under way now (the recursion guard would cut it there), and it fits."""
        if found.epoch is not None and found.epoch != self._class_epoch:
            return False  # a class it read was stored into since
        stack = self._stack
        if len(stack) + found.depth > MAX_CALL_DEPTH:
            return False
        entered = found.entered
        return not any(n in entered for n in stack)

    def _run_function(self, func: Func, args: Args, root: bool) -> Value:
        node = func.node
        frame = Frame(self, func.closure, self.local_names(node, func.block), func.block)
        self._bind(func, args, frame)
        frame.function = node
        frame.owner = func.owner
        self._stack.append(node)
        if len(self._stack) > self._deepest:
            self._deepest = len(self._stack)
        generator = self._generators.get(id(node))
        if generator is None or generator[0] is not node:
            generator = self._generators[id(node)] = (node, "yield" in func.block.text and _generator(node))
        if generator[1]:
            frame.yields = []
            # A context manager's yield may sit in a `with` or `try` of its own (`try: yield x`
            # / `finally:`): it runs, or the `with` entering it raises.
            frame.yield_base = (self._uncertainty, None if self.context.entering is node else self._guarded)
        in_main = func.block.source is self.source
        self._in_main += in_main
        if in_main and by_root.active is not None:
            by_root.entered(self, func.block, node, self._lazy_code > 0)
        cut = self._cut
        try:
            if isinstance(node, cst.Lambda):
                return self.eval(node.body, frame, func.block)
            body = node.body
            stmts: Sequence[cst.BaseStatement | cst.BaseSmallStatement]
            if isinstance(body, cst.IndentedBlock):
                stmts = body.body
            else:
                stmts = body.body
            flow = self.exec_block(stmts, frame, func.block)
        finally:
            self._stack.pop()
            self._in_main -= in_main
            if self._cut != cut and not args.complete:
                # A call the depth or recursion guard cut short ran only part of it: the blind
                # run at the world's end (from the top of the stack) may go further.
                self._entered.discard(id(node))
        if generator[1]:
            # Calling it makes a generator and runs none of the body (which ran here for what
            # it records): not the value the body returns (`None`, then `jnp.zeros(s, None)`
            # read as float32), nor an exception. What it yields, where every yield was sure to
            # run in turn and the body ended, is an iterable of those values (as a generator
            # expression's: `for tile in candidate_tiles():`).
            yields = frame.yields
            if flow in (Flow.NORMAL, Flow.RETURN) and yields is not None and len(yields) <= MAX_UNROLL:
                return TupleVal(tuple(yields), True)
            return UNKNOWN
        if flow is Flow.RAISE and not frame.returns:
            if root:
                return UNKNOWN
            raise Diverges
        result: Value | None = None
        returns = list(frame.returns)
        if flow is Flow.NORMAL:
            returns.append(NONE)
        for value in returns:
            result = value if result is None else join(result, value)
        return result if result is not None else UNKNOWN

    def _bind(self, func: Func, args: Args, frame: Frame) -> None:
        params = func.node.params
        defaults = dict(func.defaults)
        positional = list(args.positional)
        keywords = dict(args.keywords)
        ordered = [*params.posonly_params, *params.params]
        for param in ordered:
            name = param.name.value
            if positional:
                frame.env[name] = positional.pop(0)
            elif name in keywords:
                frame.env[name] = keywords.pop(name)
            elif not args.complete:
                frame.env[name] = UNKNOWN
            else:
                frame.env[name] = defaults.get(name, UNKNOWN)
        if type(params.star_arg) is cst.Param:
            frame.env[params.star_arg.name.value] = (
                TupleVal(tuple(positional)) if args.complete else UNKNOWN
            )
        for param in params.kwonly_params:
            name = param.name.value
            if name in keywords:
                frame.env[name] = keywords.pop(name)
            elif not args.complete:
                frame.env[name] = UNKNOWN
            else:
                frame.env[name] = defaults.get(name, UNKNOWN)
        if params.star_kwarg is not None:
            frame.env[params.star_kwarg.name.value] = (
                DictVal(tuple(keywords.items())) if args.complete else UNKNOWN
            )

    def eval_args(self, node: cst.Call, frame: Frame, block: Block) -> Args:
        args = Args([], {}, [], {})
        for arg in node.args:
            if arg.star == "*":
                items = self.iterate(self.eval(arg.value, frame, block))
                if items is None:
                    args.complete = False
                else:
                    args.positional.extend(items)
                    args.nodes.extend([None] * len(items))
            elif arg.star == "**":
                mapping = self.eval(arg.value, frame, block)
                if isinstance(mapping, DictVal):
                    args.keywords.update(mapping.items)
                else:
                    args.complete = False
            elif arg.keyword is not None:
                args.keywords[arg.keyword.value] = self.eval(arg.value, frame, block)
                args.keyword_nodes[arg.keyword.value] = arg.value
            else:
                args.positional.append(self.eval(arg.value, frame, block))
                args.nodes.append(arg.value)
        return args

    def _defined_here(self, func_node: cst.Attribute, frame: Frame, block: Block) -> bool:
        receiver = self.eval(func_node.value, frame, block)
        cls = receiver.cls if isinstance(receiver, Instance) else receiver if isinstance(receiver, ClassVal) else None
        return cls is not None and isinstance(self.class_attr(cls, func_node.attr.value), Func)

    def eval_call(self, node: cst.Call, frame: Frame, block: Block) -> Value:
        func_node = node.func
        # `self.skipTest(...)`, `pytest.skip(...)`: the path ends here.
        tests = REGISTRY.tests
        if type(func_node) is cst.Attribute and func_node.attr.value in tests.skip_methods:
            receiver = _dotted(func_node.value)
            if receiver in tests.skip_receivers and not (
                func_node.attr.value in tests.conditional_skips and self._defined_here(func_node, frame, block)
            ):
                raise Diverges
        callee = self.eval(func_node, frame, block)
        args = self.eval_args(node, frame, block)
        # `self.assertRaises(Error, fn, *args)`: fn is called on purpose with failing arguments.
        at = tests.failing_call_argument(func_node.attr.value) if type(func_node) is cst.Attribute else None
        if at is not None and len(args.positional) >= 2:
            with self.with_context(expected_failure=Origin(block, node)):
                inner = Args(args.positional[at + 1 :], {}, args.nodes[at + 1 :], {}, args.complete)
                target = args.positional[at] if len(args.positional) > at else UNKNOWN
                with suppress(Diverges):
                    self.call_value(target, inner, node, frame, block)
            return UNKNOWN
        return self.call_value(callee, args, node, frame, block)

    def call_value(
        self, callee: Value, args: Args, node: cst.CSTNode, frame: Frame, block: Block
    ) -> Value:
        if isinstance(callee, BoundMethod):  # its function, with its object first
            args = Args(
                [callee.self_value, *args.positional],
                args.keywords,
                [None, *args.nodes],
                args.keyword_nodes,
                args.complete,
            )
            callee = callee.func
        if isinstance(callee, Func):
            mark = len(self._rebound)
            if callee.block.source is not block.source:
                result = self._call_across(callee, args, node, block)
            else:
                result = self.call_function(callee, args, node)
            if len(self._rebound) > mark:
                self.forget_changed(args, mark, frame)
            return result
        if isinstance(callee, Partial):
            merged = Args(
                [*callee.args, *args.positional],
                {**dict(callee.kwargs), **args.keywords},
                [*([None] * len(callee.args)), *args.nodes],
                args.keyword_nodes,
                args.complete,
            )
            return self.call_value(callee.func, merged, node, frame, block)
        if isinstance(callee, ClassVal):
            return self.instantiate(callee, args, node)
        if isinstance(callee, Instance):
            call = self.getattr(callee, "__call__", node)
            if isinstance(call, _CALLABLE):
                return self.call_value(call, args, node, frame, block)
            return UNKNOWN
        return self.call_model(callee, args, node, frame, block)

    def note_escaped(self, values: Sequence[Value]) -> None:
        """Functions handed to code we do not model still get a blind analysis at the end; a
        parser so handed may have been given any option."""
        for value in values:
            if isinstance(value, Func):
                self._pend(value, handed=True)
            elif isinstance(value, ArgParser):
                value.spoil()

    def _pend(self, func: Func, handed: bool) -> None:
        """A function to run blind at the end of the world unless called meanwhile: each
        nested def as it is defined, a function handed to code no model knows once."""
        if self._traces:
            self._traces[-1].pend(func, handed)
        if handed:
            self._handed.add(id(func))  # unknown code may call it anywhere: it runs blind
        if not (handed and func in self._defined):
            self._defined.append(func)
            self.effects += 1

    # ------------------------------------------------------------------ other modules

    def _call_across(self, func: Func, args: Args, node: cst.CSTNode, block: Block) -> Value:
        """A call of a function of another module of the checked tree.

        The first such call on a path is its entry (`Context.entry`): a finding it leads to
        says where it came from and with what ("called from ops_test.py:41 with
        dtype=int8"), and when the root has no parameter world of its own, those facts name
        the world. A function called again with the same facts in the same context is not run
        again: its summary (result, and the calls it recorded, now from this caller) is reused.
        """
        context = self.context
        entry: Entry | None = None
        if context.entry is None:
            bindings = _entry_bindings(func, args)
            entry = Entry(Origin(block, node), bindings)
            world = context.world if context.world else bindings
            context = replace(context, entry=entry, world=world)
        # A helper that leads to no MMA call (a dtype chooser, or the checked tree's library
        # internals when the tree is a library) runs within a few steps: past them its result
        # is unknown, as an API no model knows, and the caller goes on.
        # Such a helper spends at most CROSS_MODULE_STEPS_PER_FUNCTION steps in all in a world
        # (a file of jax's own calls tree_flatten a thousand times): then it is unknown. Per
        # world, so that what a world finds does not depend on the worlds before it.
        limited = self.program is not None and not self.program.leads_to_mma(func.block)
        if limited and func.owner is not None and _is_comparison(func):
            # A test case's comparison (`self.assertAllClose(out, ref)`) of another module that
            # leads to no MMA call returns None or fails: what it compares is made already, and
            # whether it fails is not known here (jax's ran to the per-call limit in each world).
            return NONE
        spent = self._foreign_spent
        if limited and spent.get(id(func.node), 0) >= CROSS_MODULE_STEPS_PER_FUNCTION:
            self.unrepeatable += 1
            self._refusals += 1
            self.note_escaped([*args.positional, *args.keywords.values()])
            return UNKNOWN
        key = _summary_key(func, args, context)
        cached = self._summaries.get(key) if key is not None else None
        if cached is not None:
            if cached.entered:  # (only while `by_root` notes)
                by_root.entered_again(self, cached.entered, self._lazy_code > 0)
                if self._traces:
                    self._traces[-1].entered_too(cached.entered, read=not self._lazy_code)
            if cached.made_by != by_root.making() and (self._step_limit != sys.maxsize or (cached.spending and (
                    cached.refused or any(spent.get(helper, 0) + steps >= CROSS_MODULE_STEPS_PER_FUNCTION
                                          for helper, steps in cached.spending)))):
                # A run of it here could end otherwise: within the step limit of the call under
                # way (a reuse spends no step of it), or with a capped helper's steps spent.
                by_root.borrowed(self, self._lazy_code > 0)
            if cached.spending:  # what its run spent of capped helpers, a reuse spends
                self.unrepeatable += 1
                for helper, steps in cached.spending:
                    spent[helper] = spent.get(helper, 0) + steps
            for site in cached.sites:
                self.record(_with_entry(site, cached.entry, entry))
            for use in cached.uses:
                self.record_use(_with_entry(use, cached.entry, entry))
            return cached.result
        saved, saved_limit = self.context, self._step_limit
        self.context = context
        marks = (len(self.sites), len(self.uses), self.effects)
        before = dict(spent) if key is not None else None
        refusals = self._refusals
        started = self.budget.steps
        if limited:
            self.unrepeatable += 1  # its steps count toward the helper's share of the root
            self._step_limit = min(saved_limit, self.budget.steps + CROSS_MODULE_STEPS)
        with by_root.capture(self) as captured:
            try:
                result = self.call_function(func, args, node)
            except CallTooLong as exc:
                if not limited or exc.limit != self._step_limit or saved_limit == self._step_limit:
                    raise
                result, key = UNKNOWN, None
            finally:
                self.context, self._step_limit = saved, saved_limit
                if limited:
                    spent[id(func.node)] = spent.get(id(func.node), 0) + self.budget.steps - started
        if key is not None and self.effects == marks[2]:
            assert before is not None
            spending = tuple((helper, steps - before.get(helper, 0)) for helper, steps in spent.items()
                             if steps != before.get(helper, 0))
            self._summaries[key] = Summary(
                result, tuple(self.sites[marks[0]:]), tuple(self.uses[marks[1]:]), entry, frozenset(captured or ()),
                spending, by_root.making(), self._refusals != refusals)
        return result


    # ------------------------------------------------------------------ models

    def call_model(self, callee: Value, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        """A call of something the module does not define: an API's model, a method of a value,
        a value of a kind that models call (a kernel). Without one the result is unknown, and
        functions passed along are still analysed, blind."""
        if isinstance(callee, Api):
            found = REGISTRY.model_for(callee.name)
            if found is not None:
                return found(self, args, Call(node, frame, block))
        elif isinstance(callee, Method):
            return self._call_method(callee, args, node, frame, block)
        else:
            calls = REGISTRY.callables.get(type(callee))
            if calls is not None:
                return calls(self, callee, args, Call(node, frame, block))
        self.note_escaped([*args.positional, *args.keywords.values()])
        return UNKNOWN

    def _call_method(self, method: Method, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        receiver, name = method.receiver, method.name
        if isinstance(receiver, CONTAINERS):
            return self._container_method(receiver, name, args, frame)
        found = REGISTRY.method_for(type(receiver), name)
        return found(self, receiver, args, Call(node, frame, block)) if found is not None else UNKNOWN

    def _container_method(
        self, receiver: DictVal | TupleVal | MapVal | SetVal, name: str, args: Args, frame: Frame
    ) -> Value:
        """Methods of dicts, lists and sets: reads of known keys, and mutations (which rebind)."""
        if isinstance(receiver, MapVal | SetVal):
            return self._keyed_method(receiver, name, args, frame)
        if name in MUTATING_METHODS:
            if isinstance(receiver, DictVal) and name == "update" and not args.positional and args.complete:
                updated = dict(receiver.items)
                updated.update(args.keywords)
                self.rebind(receiver, DictVal(tuple(updated.items())), frame)
            elif name != "pop":
                self.rebind(receiver, UNKNOWN, frame)
        if isinstance(receiver, DictVal):
            if name in ("pop", "get") and args.positional:
                key = args.positional[0]
                default = args.positional[1] if len(args.positional) > 1 else NONE
                if isinstance(key, Const) and isinstance(key.value, str):
                    found = receiver.get(key.value)
                    if name == "pop":
                        self.rebind(receiver, receiver.without(key.value), frame)
                    return found if found is not None else default
            if name == "copy":
                return receiver
            # Iterating a config table: `for name, cfg in CONFIGS.items()`.
            if name in VIEWS and not args.positional and not args.keywords:
                return dict_views(receiver)[VIEWS.index(name)]
        return UNKNOWN

    def _keyed_method(self, receiver: MapVal | SetVal, name: str, args: Args, frame: Frame) -> Value:
        """Methods of a dict keyed by values that are not all strings, and of a set: reads
        only; a mutation forgets it."""
        if name in MUTATING_METHODS or name in SET_MUTATING_METHODS:
            self.rebind(receiver, UNKNOWN, frame)
            return UNKNOWN
        plain = not args.keywords and args.complete
        if name == "copy" and plain and not args.positional:
            return receiver
        if isinstance(receiver, SetVal):
            operator = _SET_METHODS.get(name)
            if operator is None or not plain or not args.positional:
                return UNKNOWN
            result: Value = receiver
            for other in args.positional:
                items = other.items if isinstance(other, SetVal) else self.iterate(other)
                if items is None or not isinstance(result, SetVal):
                    return UNKNOWN
                result = self.set_operation(operator, result, SetVal(tuple(items)))
            return result
        if name == "get" and plain and 1 <= len(args.positional) <= 2:
            found, value = self.entry(receiver, args.positional[0])
            if found is None:
                return UNKNOWN
            return value if found else (args.positional[1] if len(args.positional) == 2 else NONE)
        if name in VIEWS and plain and not args.positional:
            return dict_views(receiver)[VIEWS.index(name)]
        return UNKNOWN


# A set's methods that give a new set, as its operators do.
_SET_METHODS = {"union": "|", "intersection": "&", "difference": "-", "symmetric_difference": "^"}


def _entry_bindings(func: Func, args: Args) -> tuple[WorldBinding, ...]:
    """The dtypes a call passes, by the callee's parameter names: `dtype=int8`, `x=int8 array`."""
    node = func.node
    names = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
    pairs = list(zip(names, args.positional, strict=False))
    pairs += [(k, v) for k, v in args.keywords.items()]
    found = []
    for name, value in pairs:
        label = _dtype_label(value)
        if label is not None and name not in ("self", "cls"):
            found.append(WorldBinding(name, label))
    return tuple(found)


def _dtype_label(value: Value) -> str | None:
    if isinstance(value, DType):
        return value.name
    if isinstance(value, Array | Ref) and isinstance(value.dtype, DType):
        return f"{value.dtype.name} {'array' if isinstance(value, Array) else 'ref'}"
    return None


# unittest's, absltest's and jax's (`JaxTestCase`) comparisons: they return None or fail. Not
# their context managers (`assertRaises`, `assertWarns`), nor a helper of the user's named so.
_COMPARISONS = frozenset({
    "assertEqual", "assertNotEqual", "assertTrue", "assertFalse", "assertIs", "assertIsNot",
    "assertIsNone", "assertIsNotNone", "assertIn", "assertNotIn", "assertIsInstance",
    "assertNotIsInstance", "assertAlmostEqual", "assertNotAlmostEqual", "assertGreater",
    "assertGreaterEqual", "assertLess", "assertLessEqual", "assertRegex", "assertNotRegex",
    "assertCountEqual", "assertMultiLineEqual", "assertSequenceEqual", "assertListEqual",
    "assertTupleEqual", "assertSetEqual", "assertDictEqual", "assertLen", "assertEmpty",
    "assertNotEmpty", "assertSameElements", "assertBetween", "assertAllClose",
    "assertArraysAllClose", "assertArraysEqual", "assertDtypesMatch", "assertMultiLineStrippedEqual",
})
# What a method of such a name that is more than a comparison holds: a skip, a store into an
# attribute or an item (`self.acc = ...`, `table[k] = ...`), a mutating method (the mutation
# scan's, `mutations.MUTATING_CALL`), a global.
_MORE_THAN_A_COMPARISON = re.compile(
    r"\bskip|(?:\.\w+|\])(?:[ \t]*\[[^\]\n]*\])?" + ASSIGN_OP + "|" + MUTATING_CALL
    + r"|\b(?:global|nonlocal|setattr)\b"
)


def _is_comparison(func: Func) -> bool:
    """Whether a method is a test case's comparison (`_COMPARISONS`) that only compares: its
    text skips nothing and stores nothing (an `assertSupported` that skips, or a helper that
    sets `self.acc_for`, is run as any method is)."""
    node = func.node
    if not isinstance(node, cst.FunctionDef) or node.name.value not in _COMPARISONS:
        return False
    # Read once a method: its text is libcst's printing of it where its block was parsed by
    # libcst (jax's `assertAllClose`: 162 calls on jax's tree, each printing the whole def).
    known = _COMPARISON_TEXTS.setdefault(func.block, {})
    found = known.get(id(node))
    if found is None or found[0] is not node:
        found = known[id(node)] = (node, _MORE_THAN_A_COMPARISON.search(func.block.code(node)) is None)
    return found[1]


# Per block, by the method node's id (the node kept alive with its verdict): `_is_comparison`.
_COMPARISON_TEXTS: weakref.WeakKeyDictionary[Block, dict[int, tuple[cst.CSTNode, bool]]] = weakref.WeakKeyDictionary()


def _summary_key(func: Func, args: Args, context: Context) -> tuple[object, ...] | None:
    """What a call of another module's function is decided by: the function, the facts of its
    arguments and where each was decided (a result or a record passes an argument's origin on:
    another caller's would say the dtype was chosen in its test), the context (less where it
    came from). None when an argument may change under the call (an object, a class) or
    cannot be hashed."""
    values = [*args.positional, *args.keywords.values()]
    if not all(_plain(v, 3) for v in values):
        return None
    origins: list[object] = []
    if not _origins(values, origins):
        return None
    key = (
        id(func.node), id(func.closure), func.defaults, func.owner is not None,
        tuple(args.positional), tuple(sorted(args.keywords.items())), args.complete,
        tuple((b.name, b.label, b.origin.node if b.origin is not None else None) for b in context.world),
        context.expected_failure, context.semantics, context.in_kernel, context.script, context.entering,
        context.entry is None,
        tuple(origins),
    )
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _origins(values: list[Value], out: list[object]) -> bool:
    """The nodes where the facts of `values` (nested ones too) were decided, depth first, and
    each dtype's form; False past `replays.MAX_FACTS` of them. A function is its own (compared
    by identity)."""
    pending: list[object] = list(values)
    while pending:
        item = pending.pop()
        if isinstance(item, Origin):
            out.append(item.node)
            if len(out) > replays.MAX_FACTS:
                return False
        elif isinstance(item, Func):
            continue
        elif isinstance(item, Value):
            if isinstance(item, DType):
                out.append(item.form)  # left out of its equality, not of a set's lookups
            pending.extend(item.__dict__.values())
        elif isinstance(item, tuple | list):
            pending.extend(item)
    return True


def _plain(value: Value, depth: int) -> bool:
    """Whether a value is all facts: no object or class whose attributes a call may set."""
    if isinstance(value, Instance | ClassVal | BoundMethod | Partial | ArgParser | SuperOf):
        return False
    if isinstance(value, TupleVal):
        return depth > 0 and all(_plain(v, depth - 1) for v in value.items)
    if isinstance(value, DictVal):
        return depth > 0 and all(_plain(v, depth - 1) for _, v in value.items)
    if isinstance(value, MapVal):
        return depth > 0 and all(_plain(k, depth - 1) and _plain(v, depth - 1) for k, v in value.items)
    if isinstance(value, SetVal):
        return depth > 0 and all(_plain(v, depth - 1) for v in value.items)
    return True


_Recorded = TypeVar("_Recorded", MmaSite, ApiUse)


def _with_entry(recorded: _Recorded, old: Entry | None, new: Entry | None) -> _Recorded:
    """A call recorded under one caller's entry, as another caller with the same facts reaches it."""
    if old is None or new is None or recorded.context.entry is not old:
        return recorded
    return replace(recorded, context=replace(recorded.context, entry=new))


def _generator(node: cst.FunctionDef | cst.Lambda) -> bool:
    """Whether a function is a generator function: a `yield` in its own body (not in a
    function or class defined there)."""
    todo: list[cst.CSTNode] = [node.body]
    while todo:
        current = todo.pop()
        if isinstance(current, cst.Yield):
            return True
        if not isinstance(current, cst.FunctionDef | cst.Lambda | cst.ClassDef):
            todo.extend(current.children)
    return False
