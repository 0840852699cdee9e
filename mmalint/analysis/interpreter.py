"""An abstract interpreter over one module.

It runs each function that can reach an MMA call ("roots") once per parameter world, with the
arguments it can decide, follows calls into functions of the same module (closures included),
and records every MMA call it reaches with the values passed. It never imports or executes the
checked code: values are facts (`values.py`), and what it cannot decide is `UNKNOWN`.
"""

from __future__ import annotations

import enum
import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace

import libcst as cst

from mmalint.analysis import bounds, names
from mmalint.analysis.budget import Budget, BudgetExceeded, Window
from mmalint.analysis.calls import ApiUse, Context, MmaSite, WorldBinding
from mmalint.analysis.scopes import LocalNames
from mmalint.analysis.scopes import dotted_name as _dotted
from mmalint.analysis.source import Block, BlockParseError, SourceFile
from mmalint.analysis.values import (
    FALSE,
    NONE,
    SOME_INT,
    TRUE,
    UNKNOWN,
    Api,
    Array,
    BoundMethod,
    ClassVal,
    Const,
    DictVal,
    DType,
    Fragment,
    Func,
    Instance,
    Kernel,
    Origin,
    Partial,
    Ref,
    TupleVal,
    Unknown,
    Value,
    as_int,
    join,
)

MAX_CALL_DEPTH = 12
MAX_UNROLL = 64
# What ends a run early without deciding anything: the file's budget, or checked code nested
# deeper than Python's stack (a block, a chain of module globals or of values).
_GAVE_UP = (BudgetExceeded, RecursionError)


class Flow(enum.Enum):
    NORMAL = 0
    RETURN = 1
    RAISE = 2  # raise, skipTest, a failed assert: the path ends
    BREAK = 3
    CONTINUE = 4


class Diverges(Exception):
    """A call whose every path raised or skipped: the caller's path ends there too."""


class Frame:
    """A scope: a function activation, a class body or the module."""

    def __init__(
        self,
        interp: Interpreter,
        parent: Frame | None,
        local_names: frozenset[str] | None,
        block: Block | None,
        is_module: bool = False,
    ) -> None:
        self.interp = interp
        self.parent = parent
        self.local_names = local_names
        self.block = block
        self.is_module = is_module
        self.env: dict[str, Value] = {}
        self.returns: list[Value] = []
        # One (breaks, continues) pair of environments per loop being run in this frame.
        self.loops: list[tuple[list[dict[str, Value]], list[dict[str, Value]]]] = []

    def lookup(self, name: str) -> Value:
        frame: Frame | None = self
        while frame is not None:
            if frame.is_module:
                return self.interp.global_value(name)
            if name in frame.env:
                return frame.env[name]
            if frame.local_names is not None and name in frame.local_names:
                return UNKNOWN
            frame = frame.parent
        return self.interp.global_value(name)


@dataclass
class Args:
    positional: list[Value]
    keywords: dict[str, Value]
    nodes: list[cst.CSTNode | None]  # the expression of each positional arg, when written
    keyword_nodes: dict[str, cst.CSTNode]
    complete: bool = True  # False when a *args/**kwargs could not be expanded

    def get(self, index: int, keyword: str, default: Value = UNKNOWN) -> Value:
        if keyword in self.keywords:
            return self.keywords[keyword]
        if index < len(self.positional):
            return self.positional[index]
        return default if self.complete else UNKNOWN

    def has(self, index: int, keyword: str) -> bool:
        return keyword in self.keywords or index < len(self.positional)

    def node(self, index: int, keyword: str) -> cst.CSTNode | None:
        if keyword in self.keyword_nodes:
            return self.keyword_nodes[keyword]
        if index < len(self.nodes):
            return self.nodes[index]
        return None


_KEYWORD_CONSTANTS: dict[str, Value] = {"True": TRUE, "False": FALSE, "None": NONE}
_SKIP_CALLS = frozenset({"skipTest", "skip", "fail", "skip_if_wg_semantics", "skip_if_lane_semantics"})
# jax's test helpers that skip only under one lowering semantics: run them when this module
# defines them (their condition is then known); an unseen one ends the path, to stay safe.
_CONDITIONAL_SKIPS = frozenset({"skip_if_wg_semantics", "skip_if_lane_semantics"})
_EXPECTED_FAILURE_CONTEXTS = re.compile(r"(?:^|\.)(assertRaises\w*|raises)$")
# `except` clauses that expect a failing MMA on purpose. A catch-all (`except Exception`) only
# records whatever goes wrong, so the calls it wraps are still checked.
_HANDLED_EXCEPTIONS = frozenset(
    {"ValueError", "NotImplementedError", "TypeError", "RuntimeError", "LoweringError",
     "VerificationError", "MLIRError", "UnsupportedTransferError", "JaxRuntimeError",
     "XlaRuntimeError"}
)


class Interpreter:
    """Runs the roots of one module and collects `MmaSite`s."""

    def __init__(self, source: SourceFile, budget: Budget | None = None) -> None:
        from mmalint.analysis.apis import ApiModel  # the models of jax APIs

        self.source = source
        self.budget = budget or Budget.for_text(source.text)
        self.apis = ApiModel(self)
        self.module = Frame(self, None, None, None, is_module=True)
        self.sites: list[MmaSite] = []
        self.uses: list[ApiUse] = []
        self.context = Context()
        self._stack: list[cst.CSTNode] = []
        self._executed_blocks: set[int] = set()
        self._executing_blocks: set[int] = set()
        self._defined: list[Func] = []
        self._invoked: set[int] = set()
        self._local_names_cache: dict[int, frozenset[str]] = {}
        self._current_module_block: Block | None = None
        self._metaclass_cache: dict[int, dict[str, Value]] = {}
        self._literals: dict[int, Value] = {}  # literal nodes live as long as their blocks
        # > 0 while running a branch or loop body whose running is not certain: stores into
        # shared mutable objects there cannot be taken as facts.
        self._uncertainty = 0
        self._globals: dict[str, Value] = {}
        self._block_values: dict[tuple[int, str], Value] = {}
        self._rebound_globals, self._attribute_stored = _mutated_globals(source)
        self.errors: list[str] = []
        self._too_deep = False  # some run was abandoned on a RecursionError
        self._unfinished = False  # some root still ran out of budget when run the second time
        self._abandoned_blocks: list[Block] = []  # module-level blocks stopped by the budget
        self._recorded: set[tuple[object, ...]] = set()  # facts of the calls recorded so far

    # ------------------------------------------------------------------ module globals

    def global_value(self, name: str) -> Value:
        """A module global as code that runs after the module has loaded sees it.

        A name the module binds in several places (a constant rebound between launches, a
        redefined `def`, `global X` in a function) is the join of its bindings: the value at a
        given moment depends on execution order, so only what all bindings agree on is known.
        Inside the module-level block that binds it, the name has its current value.
        """
        current = self._current_module_block
        if current is not None and name in current.bound_names and name in self.module.env:
            return self.module.env[name]
        if current is not None and name not in self._rebound_globals:
            # Module-level code (and what it calls) runs top to bottom: the binding that counts
            # is the last one above the statement running now.
            above = [b for b in self.source.bindings.get(name, []) if b.end_line < current.start_line]
            if above:
                self.execute_module_block(above[-1])
                value = self._block_values.get((id(above[-1]), name))
                if value is not None:
                    if name in self._attribute_stored and not (isinstance(value, Api) and value.is_module):
                        return UNKNOWN
                    return value
        cached = self._globals.get(name)
        if cached is not None:
            return cached
        if name in self._rebound_globals:
            return UNKNOWN
        blocks = self.source.bindings.get(name)
        if not blocks:
            if name in self.module.env:
                return self.module.env[name]
            return self.apis.builtin(name)
        values: list[Value] = []
        for block in blocks:
            self.execute_module_block(block)
            value = self._block_values.get((id(block), name))
            if value is not None:
                values.append(value)
        if not values:
            return self.module.env.get(name, UNKNOWN)
        result = values[0]
        for value in values[1:]:
            if value is not result:
                result = join(result, value)
        if name in self._attribute_stored and not (isinstance(result, Api) and result.is_module):
            result = UNKNOWN  # an object whose attributes some statement sets, in an unknown order
        if all(id(b) in self._executed_blocks for b in blocks):
            self._globals[name] = result
        return result

    def execute_module_block(self, block: Block) -> None:
        key = id(block)
        if key in self._executed_blocks or key in self._executing_blocks:
            return
        self._executing_blocks.add(key)
        saved_context, saved_stack = self.context, self._stack
        saved_block = self._current_module_block
        self.context, self._stack = Context(), []
        self._current_module_block = block
        gave_up = False
        try:
            if block.kind == "class":
                self._define_class_block(block)
            else:
                self.exec_block(block.statements(), self.module, block)
        except (BlockParseError, Diverges):
            pass
        except _GAVE_UP as exc:
            gave_up = True
            self._note_gave_up(exc)
            if isinstance(exc, BudgetExceeded):
                self._abandoned_blocks.append(block)
        finally:
            self.context, self._stack = saved_context, saved_stack
            self._current_module_block = saved_block
            self._executing_blocks.discard(key)
            self._executed_blocks.add(key)
            for bound in block.bound_names:
                if gave_up:
                    # Stopped half-way (a branch taken, the other not yet merged): what it had
                    # bound so far is not what the module binds.
                    self.module.env[bound] = UNKNOWN
                if bound in self.module.env:
                    self._block_values[(key, bound)] = self.module.env[bound]

    def _define_class_block(self, block: Block) -> None:
        stmts = block.statements()
        node = stmts[0] if stmts else None
        if not isinstance(node, cst.ClassDef):
            return
        cls = self._make_class(node, block, self.module)
        self.module.env[node.name.value] = cls
        attrs: dict[str, object] = cls.attrs
        for member in block.members:
            for member_name in member.bound_names:
                attrs.setdefault(member_name, member)

    def class_attr(self, cls: ClassVal, name: str) -> Value | None:
        """A class attribute, looked up through the bases defined in this module."""
        for klass in self._mro(cls):
            set_by_metaclass = self._metaclass_attrs(klass)
            if name in set_by_metaclass:
                return set_by_metaclass[name]
            attrs = klass.attrs
            if name not in attrs:
                continue
            entry = attrs[name]
            if isinstance(entry, Block):
                attrs[name] = UNKNOWN  # guards recursion while the member runs
                value = self._class_member_value(klass, entry, name)
                attrs[name] = value
                return value
            assert isinstance(entry, Value)
            return entry
        return None

    def _metaclass_attrs(self, cls: ClassVal) -> dict[str, Value]:
        """Attributes a metaclass of the module sets from class keywords.

        jax's Pallas tests declare `class PallasCallWGTest(PallasCallTest,
        lowering_semantics=plgpu.LoweringSemantics.Warpgroup)`, and the metaclass's `__new__`
        does `cls.LOWERING_SEMANTICS = lowering_semantics`: each class gets its own keyword's
        value, or the parameter's default.
        """
        cached = self._metaclass_cache.get(id(cls))
        if cached is not None:
            return cached
        self._metaclass_cache[id(cls)] = {}
        meta: Value | None = None
        for klass in self._mro(cls):
            meta = dict(klass.keywords).get("metaclass")
            if meta is not None:
                break
        result: dict[str, Value] = {}
        new = self.class_attr(meta, "__new__") if isinstance(meta, ClassVal) else None
        if isinstance(new, Func) and isinstance(new.node, cst.FunctionDef):
            defaults = dict(new.defaults)
            keywords = dict(cls.keywords)
            params = {p.name.value for p in new.node.params.kwonly_params}
            for statement in _walk_statements(new.node.body):
                if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
                    continue
                target, value = statement.targets[0].target, statement.value
                if (
                    isinstance(target, cst.Attribute)
                    and isinstance(value, cst.Name)
                    and value.value in params
                ):
                    result[target.attr.value] = keywords.get(value.value, defaults.get(value.value, UNKNOWN))
        self._metaclass_cache[id(cls)] = result
        return result

    def _mro(self, cls: ClassVal) -> Iterator[ClassVal]:
        seen: set[int] = set()
        todo = [cls]
        while todo:
            klass = todo.pop(0)
            if id(klass) in seen:
                continue
            seen.add(id(klass))
            yield klass
            todo.extend(b for b in klass.bases if isinstance(b, ClassVal))

    def _class_member_value(self, cls: ClassVal, member: Block, name: str) -> Value:
        try:
            stmts = member.statements()
        except BlockParseError:
            return UNKNOWN
        frame = Frame(self, self.module, frozenset(), member)
        frame.env["__class__"] = cls
        saved_context, saved_stack = self.context, self._stack
        self.context, self._stack = Context(), []
        try:
            for stmt in stmts:
                if isinstance(stmt, cst.FunctionDef):
                    frame.env[stmt.name.value] = self.make_function(stmt, member, self.module, cls)
                else:
                    self.exec_block([stmt], frame, member)
        except Diverges:
            pass
        except _GAVE_UP as exc:
            self._note_gave_up(exc)
            return UNKNOWN
        finally:
            self.context, self._stack = saved_context, saved_stack
        return frame.env.get(name, UNKNOWN)

    def _make_class(self, node: cst.ClassDef, block: Block, frame: Frame) -> ClassVal:
        bases = tuple(self.eval(arg.value, frame, block) for arg in node.bases if arg.keyword is None)
        keywords = tuple(
            (arg.keyword.value, self.eval(arg.value, frame, block))
            for arg in (*node.bases, *node.keywords)
            if arg.keyword is not None
        )
        return ClassVal(node.name.value, block, bases, {}, keywords, origin=Origin(block, node))

    # ------------------------------------------------------------------ roots

    def run_roots(self, roots: Sequence[Block]) -> None:
        """Run each root within an equal share of half the file's budget, so that no runaway
        root starves the others; then run again, from the start, those that ran out, sharing
        all that is left (one heavy root among light ones needs more than an equal share)."""
        unfinished = self._run_pass(roots, self.budget.share(2, run=False))
        if unfinished and not self.budget.exhausted:
            for block in self._abandoned_blocks:
                self._forget_module_block(block)
            self._abandoned_blocks = []
            unfinished = self._run_pass(unfinished, self.budget.file)
        self._unfinished = bool(unfinished)

    def _run_pass(self, roots: Sequence[Block], window: Window) -> list[Block]:
        """Run the roots, each in its share of `window`; those that ran out of budget."""
        unfinished: list[Block] = []
        for i, block in enumerate(roots):
            stops = self.budget.stops
            try:
                if block.parent is None and block.kind == "stmt":
                    self.budget.enter(self.budget.share(len(roots) - i, within=window))
                    self.execute_module_block(block)
                elif block.kind == "def":
                    self.budget.enter(self.budget.share(len(roots) - i, within=window, run=False))
                    self._run_function_root(block)
            except (BlockParseError, Diverges):
                pass
            except _GAVE_UP as exc:
                self._note_gave_up(exc)
            finally:
                self.context = Context()
                self._stack = []
            if self.budget.stops != stops:
                unfinished.append(block)
        return unfinished

    def _forget_module_block(self, block: Block) -> None:
        """A module-level block that ran out of budget may run again (its names were unknown)."""
        self._executed_blocks.discard(id(block))
        for bound in block.bound_names:
            self._block_values.pop((id(block), bound), None)
            self._globals.pop(bound, None)

    def _run_function_root(self, block: Block) -> None:
        from mmalint.analysis.worlds import worlds_for

        stmts = block.statements()
        node = stmts[0] if stmts else None
        if not isinstance(node, cst.FunctionDef):
            return
        cls: ClassVal | None = None
        decorator_frame = self.module
        if block.parent is not None:
            if block.parent.name is None:
                return
            owner = self.global_value(block.parent.name)
            if not isinstance(owner, ClassVal):
                return
            cls = owner
            decorator_frame = Frame(self, self.module, frozenset(), block.parent)
        func = self.make_function(node, block, self.module, cls)
        worlds = worlds_for(self, node, block, decorator_frame)
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
        for (receiver, class_binding), world in itertools.product(receivers, worlds):
            positional: list[Value] = []
            instance: Instance | None = None
            if receiver is not None and not is_static:
                instance = Instance(receiver)
                positional.append(instance)
            positional.extend(world.positional)
            args = Args(positional, dict(world.keywords), [], {}, world.complete)
            self.context = Context(world=(*class_binding, *world.bindings))
            self._defined = []
            self._invoked = set()
            # Each world may use what its root has left: worlds of one root run the same code,
            # and one of them that runs away ends only its root, not the others.
            self.budget.enter(self.budget.share(1, within=root_window))
            try:
                if is_test and instance is not None:
                    # unittest runs setUp on the test's object first: what it stores on `self`
                    # (`self.prng`, dtypes, shapes) is what the test reads; a skip there ends it.
                    self._set_up(instance, node)
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

    def _set_up(self, instance: Instance, node: cst.CSTNode) -> None:
        set_up = self.class_attr(instance.cls, "setUp")
        if isinstance(set_up, Func):
            self.call_function(set_up, Args([instance], {}, [None], {}, True), node)

    def _subclasses_inheriting(self, cls: ClassVal, method: str) -> list[ClassVal]:
        found = []
        for block in self.source.blocks:
            if block.kind != "class" or block.name is None or block.name == cls.name:
                continue
            try:
                sub = self.global_value(block.name)
            except BlockParseError:
                continue
            if not isinstance(sub, ClassVal) or sub is cls:
                continue
            chain = list(self._mro(sub))
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
        """Nested functions never called with known arguments still get analysed, blind."""
        while True:
            pending = [f for f in self._defined if id(f.node) not in self._invoked]
            if not pending:
                return
            func = pending[0]
            self._invoked.add(id(func.node))
            with suppress(Diverges):
                self.call_function(func, Args([], {}, [], {}, complete=False), func.node)

    # ------------------------------------------------------------------ functions

    def make_function(
        self,
        node: cst.FunctionDef | cst.Lambda,
        block: Block,
        closure: Frame,
        owner: ClassVal | None = None,
    ) -> Func:
        defaults: list[tuple[str, Value]] = []
        for param in _all_params(node.params):
            if param.default is not None:
                defaults.append((param.name.value, self.eval(param.default, closure, block)))
        name = node.name.value if isinstance(node, cst.FunctionDef) else "<lambda>"
        return Func(
            node, block, closure, tuple(defaults), name, owner, origin=Origin(block, node)
        )

    def local_names(self, node: cst.FunctionDef | cst.Lambda) -> frozenset[str]:
        key = id(node)
        cached = self._local_names_cache.get(key)
        if cached is None:
            collector = LocalNames()
            for param in _all_params(node.params):
                collector.names.add(param.name.value)
            if isinstance(node.params.star_arg, cst.Param):
                collector.names.add(node.params.star_arg.name.value)
            if node.params.star_kwarg is not None:
                collector.names.add(node.params.star_kwarg.name.value)
            if isinstance(node, cst.FunctionDef):
                node.body.visit(collector)
            cached = frozenset(collector.names - collector.nonlocal_names)
            self._local_names_cache[key] = cached
        return cached

    def call_function(
        self, func: Func, args: Args, call_node: cst.CSTNode, root: bool = False
    ) -> Value:
        node = func.node
        if len(self._stack) >= MAX_CALL_DEPTH or any(n is node for n in self._stack):
            return UNKNOWN
        if args.complete:
            self._invoked.add(id(node))
        frame = Frame(self, func.closure, self.local_names(node), func.block)
        self._bind(func, args, frame)
        self._stack.append(node)
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
        if isinstance(params.star_arg, cst.Param):
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

    # ------------------------------------------------------------------ context

    @contextmanager
    def with_context(self, **changes: object) -> Iterator[None]:
        saved = self.context
        self.context = replace(saved, **changes)  # type: ignore[arg-type]
        try:
            yield
        finally:
            self.context = saved

    def store_attribute(self, owner: Value, attr: str | None, value: Value) -> None:
        """`obj.attr = value`: objects of the module are mutable; class attributes are forgotten
        (they are read lazily, so the store's order relative to reads is unknown); stores into
        jax modules (monkeypatching) are ignored."""
        if isinstance(owner, Instance):
            if attr is None:
                owner.attrs.clear()
                owner.attrs["__unknown__"] = UNKNOWN
            else:
                owner.attrs[attr] = UNKNOWN if self._uncertainty else value
        elif isinstance(owner, ClassVal):
            if attr is None:
                for key in list(owner.attrs):
                    owner.attrs[key] = UNKNOWN
            else:
                owner.attrs[attr] = UNKNOWN

    @property
    def complete(self) -> bool:
        """Whether every root ran to its end (if only the second time), and no stack overflowed."""
        return not (self._unfinished or self._too_deep)

    def _note_gave_up(self, exc: BaseException) -> None:
        if isinstance(exc, RecursionError):
            self._too_deep = True

    def record(self, site: MmaSite) -> None:
        origins = tuple(id(o.node) if o is not None else None for o in site.arg_origins)
        if self._is_new((site.api, id(site.origin.node), site.args, origins, site.context)):
            self.sites.append(site)

    def record_use(self, use: ApiUse) -> None:
        keywords = tuple((k, id(o.node) if o is not None else None) for k, o in use.keywords)
        key = (use.name, id(use.origin.node), keywords, use.element_bits, use.element_form, use.context)
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

    # ------------------------------------------------------------------ statements

    def exec_block(
        self,
        stmts: Sequence[cst.BaseStatement | cst.BaseSmallStatement],
        frame: Frame,
        block: Block,
    ) -> Flow:
        for stmt in stmts:
            try:
                flow = self.exec_stmt(stmt, frame, block)
            except Diverges:
                return Flow.RAISE
            if flow is not Flow.NORMAL:
                return flow
        return Flow.NORMAL

    def exec_stmt(
        self, stmt: cst.BaseStatement | cst.BaseSmallStatement, frame: Frame, block: Block
    ) -> Flow:
        self.step()
        if isinstance(stmt, cst.SimpleStatementLine):
            return self.exec_block(stmt.body, frame, block)
        if isinstance(stmt, cst.Expr):
            self.eval(stmt.value, frame, block)
            return Flow.NORMAL
        if isinstance(stmt, cst.Assign):
            value = self.eval(stmt.value, frame, block)
            for target in stmt.targets:
                self.assign(target.target, value, frame, block)
            return Flow.NORMAL
        if isinstance(stmt, cst.AnnAssign):
            if stmt.value is not None:
                self.assign(stmt.target, self.eval(stmt.value, frame, block), frame, block)
            return Flow.NORMAL
        if isinstance(stmt, cst.AugAssign):
            current = self.eval(stmt.target, frame, block)
            right = self.eval(stmt.value, frame, block)
            op = _AUG_OPS.get(type(stmt.operator))
            value = self.apis.binary(op, current, right, stmt) if op else UNKNOWN
            self.assign(stmt.target, value, frame, block)
            return Flow.NORMAL
        if isinstance(stmt, cst.Return):
            frame.returns.append(
                self.eval(stmt.value, frame, block) if stmt.value is not None else NONE
            )
            return Flow.RETURN
        if isinstance(stmt, cst.Raise):
            return Flow.RAISE
        if isinstance(stmt, cst.Assert):
            test = self.apis.truth(self.eval(stmt.test, frame, block))
            return Flow.RAISE if test is False else Flow.NORMAL
        if isinstance(stmt, cst.Break):
            return Flow.BREAK
        if isinstance(stmt, cst.Continue):
            return Flow.CONTINUE
        if isinstance(stmt, cst.Import | cst.ImportFrom):
            self.exec_import(stmt, frame, block)
            return Flow.NORMAL
        if isinstance(stmt, cst.FunctionDef):
            self.exec_def(stmt, frame, block)
            return Flow.NORMAL
        if isinstance(stmt, cst.ClassDef):
            cls = self._make_class(stmt, block, frame)
            body_frame = Frame(self, frame, frozenset(), block)
            if isinstance(stmt.body, cst.IndentedBlock):
                for inner in stmt.body.body:
                    if isinstance(inner, cst.FunctionDef):
                        body_frame.env[inner.name.value] = self.make_function(
                            inner, block, frame, cls
                        )
                    else:
                        self.exec_stmt(inner, body_frame, block)
            cls.attrs.update(body_frame.env)
            frame.env[stmt.name.value] = cls
            return Flow.NORMAL
        if isinstance(stmt, cst.If):
            return self.exec_if(stmt, frame, block)
        if isinstance(stmt, cst.Match):
            return self.exec_match(stmt, frame, block)
        if isinstance(stmt, cst.For):
            return self.exec_for(stmt, frame, block)
        if isinstance(stmt, cst.While):
            return self.exec_while(stmt, frame, block)
        if isinstance(stmt, cst.With):
            return self.exec_with(stmt, frame, block)
        if isinstance(stmt, cst.Try):
            return self.exec_try(stmt, frame, block)
        if isinstance(stmt, cst.Del):
            return Flow.NORMAL
        # Global, Nonlocal, Pass, Match, TryStar... nothing we model changes.
        return Flow.NORMAL

    def exec_def(self, stmt: cst.FunctionDef, frame: Frame, block: Block) -> None:
        func = self.make_function(stmt, block, frame)
        if not frame.is_module:
            self._defined.append(func)
        value: Value = func
        for decorator in reversed(stmt.decorators):
            dec = self.eval(decorator.decorator, frame, block)
            value = self.call_value(dec, Args([value], {}, [stmt], {}), decorator.decorator, frame, block)
        frame.env[stmt.name.value] = value

    def exec_import(self, stmt: cst.Import | cst.ImportFrom, frame: Frame, block: Block) -> None:
        if isinstance(stmt, cst.Import):
            for alias in stmt.names:
                dotted = _dotted(alias.name)
                if dotted is None:
                    continue
                if alias.asname is not None:
                    target = alias.asname.name
                    if isinstance(target, cst.Name):
                        frame.env[target.value] = Api(names.module_for_import(dotted), True)
                else:
                    top = dotted.split(".")[0]
                    frame.env[top] = Api(names.module_for_import(top), True)
            return
        if stmt.relative or stmt.module is None:
            package = self._relative_package(len(stmt.relative), stmt.module)
        else:
            package = _dotted(stmt.module)
        if package is None or isinstance(stmt.names, cst.ImportStar):
            return
        for alias in stmt.names:
            attr = _dotted(alias.name)
            if attr is None:
                continue
            name, is_module = names.from_import(package, attr)
            bound = attr
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                bound = alias.asname.name.value
            frame.env[bound] = self.apis.api_value(name, is_module)

    def _relative_package(self, level: int, module: cst.Attribute | cst.Name | None) -> str | None:
        """`from . import utils` inside jax's own sources: resolve against the file's path."""
        parts = re.split(r"[\\/]", self.source.filename)
        if "jax" not in parts:
            return None
        start = len(parts) - 1 - parts[::-1].index("jax")
        package_parts = parts[start:-1]
        if level > 1:
            package_parts = package_parts[: len(package_parts) - (level - 1)]
        if not package_parts:
            return None
        package = ".".join(package_parts)
        if module is not None:
            sub = _dotted(module)
            if sub is None:
                return None
            package = f"{package}.{sub}"
        return package

    def exec_if(self, stmt: cst.If, frame: Frame, block: Block) -> Flow:
        test = self.eval(stmt.test, frame, block)
        truth = self.apis.truth(test)
        orelse = stmt.orelse
        else_body: Sequence[cst.BaseStatement | cst.BaseSmallStatement] = ()
        if isinstance(orelse, cst.If):
            else_body = [orelse]
        elif isinstance(orelse, cst.Else):
            else_body = _body(orelse.body)
        if isinstance(test, Api) and test.name == "typing.TYPE_CHECKING":
            # Both run for real at some point (type checker / interpreter); names bound only in
            # the runtime branch stay visible, and the typed branch wins where both bind.
            self.exec_block(else_body, frame, block)
            return self.exec_block(_body(stmt.body), frame, block)
        if truth is True:
            return self.exec_block(_body(stmt.body), frame, block)
        if truth is False:
            return self.exec_block(else_body, frame, block)
        return self.exec_branches([_body(stmt.body), else_body], frame, block)

    def exec_match(self, stmt: cst.Match, frame: Frame, block: Block) -> Flow:
        """`match mode: case "a" | "b": ...`: the case a known subject takes, else every case
        that may match (and falling through none), merged like if/elif branches."""
        subject = self.eval(stmt.subject, frame, block)
        branches: list[Sequence[cst.BaseStatement | cst.BaseSmallStatement]] = []
        for case in stmt.cases:
            pattern = case.pattern
            if isinstance(pattern, cst.MatchAs) and pattern.name is not None:
                frame.env[pattern.name.value] = subject  # `case x:` / `case ... as x:`
            decision = self._pattern_matches(pattern, subject, frame, block)
            if decision is not False and case.guard is not None:
                guard = self.apis.truth(self.eval(case.guard, frame, block))
                decision = False if guard is False else (decision if guard is True else None)
            if decision is False:
                continue
            branches.append(_body(case.body))
            if decision is True:
                break
        else:
            branches.append(())  # no case matched: the statement does nothing
        if len(branches) == 1:
            return self.exec_block(branches[0], frame, block)
        return self.exec_branches(branches, frame, block)

    def _pattern_matches(
        self, pattern: cst.MatchPattern, subject: Value, frame: Frame, block: Block
    ) -> bool | None:
        if isinstance(pattern, cst.MatchAs):
            if pattern.pattern is None:
                return True  # `case _:` and `case name:` match anything
            return self._pattern_matches(pattern.pattern, subject, frame, block)
        if isinstance(pattern, cst.MatchOr):
            results = [self._pattern_matches(p.pattern, subject, frame, block) for p in pattern.patterns]
            if any(r is True for r in results):
                return True
            return False if all(r is False for r in results) else None
        if isinstance(pattern, cst.MatchValue | cst.MatchSingleton):
            value = self.eval(pattern.value, frame, block)
            if isinstance(value, Const) and isinstance(subject, Const):
                try:
                    return bool(value.value == subject.value)
                except Exception:
                    return None
            return None
        return None  # class, sequence and mapping patterns: not decided

    def exec_branches(
        self,
        branches: Sequence[Sequence[cst.BaseStatement | cst.BaseSmallStatement]],
        frame: Frame,
        block: Block,
    ) -> Flow:
        """Run alternatives on copies of the frame and merge what falls through."""
        start = dict(frame.env)
        outcomes: list[tuple[Flow, dict[str, Value]]] = []
        self._uncertainty += 1
        try:
            for body in branches:
                frame.env = dict(start)
                outcomes.append((self.exec_block(body, frame, block), frame.env))
        finally:
            self._uncertainty -= 1
        return self._merge_outcomes(outcomes, frame)

    def _merge_outcomes(
        self, outcomes: list[tuple[Flow, dict[str, Value]]], frame: Frame
    ) -> Flow:
        """Continue with the paths that fall through; hand break/continue paths to their loop."""
        for flow, env in outcomes:
            if flow in (Flow.BREAK, Flow.CONTINUE) and frame.loops:
                frame.loops[-1][0 if flow is Flow.BREAK else 1].append(env)
        live = [env for flow, env in outcomes if flow is Flow.NORMAL]
        if live:
            frame.env = _merge_envs(live)
            return Flow.NORMAL
        flows = [flow for flow, _ in outcomes]
        frame.env = outcomes[0][1]
        if all(f is Flow.RAISE for f in flows):
            return Flow.RAISE
        if all(f in (Flow.RETURN, Flow.RAISE) for f in flows):
            return Flow.RETURN
        return Flow.BREAK if Flow.BREAK in flows else Flow.CONTINUE

    def _run_loop_body(
        self, body: Sequence[cst.BaseStatement | cst.BaseSmallStatement], frame: Frame, block: Block
    ) -> tuple[Flow, list[dict[str, Value]], list[dict[str, Value]]]:
        """One iteration: its flow, and the environments that left it by break / continue."""
        frame.loops.append(([], []))
        try:
            flow = self.exec_block(body, frame, block)
        finally:
            breaks, continues = frame.loops.pop()
        if flow is Flow.BREAK:
            breaks.append(frame.env)
        elif flow is Flow.CONTINUE:
            continues.append(frame.env)
        return flow, breaks, continues

    def exec_for(self, stmt: cst.For, frame: Frame, block: Block) -> Flow:
        iterable = self.eval(stmt.iter, frame, block)
        items = self.apis.iterate(iterable)
        body = _body(stmt.body)
        orelse = _body(stmt.orelse.body) if stmt.orelse is not None else ()
        if items is not None and len(items) <= MAX_UNROLL and not _is_range_call(stmt.iter):
            return self._exec_unrolled(stmt, items, body, orelse, frame, block)
        element: Value = UNKNOWN
        if items:
            element = items[0]
            for item in items[1:]:
                element = join(element, item)
            if not element.known and all(as_int(i) is not None for i in items):
                element = SOME_INT  # `for step in range(K_STEPS)`: some int, each time

        def bind() -> None:
            self.assign(stmt.target, element, frame, block)

        return self._exec_loop(body, orelse, frame, block, bind)

    def _exec_unrolled(
        self,
        stmt: cst.For,
        items: Sequence[Value],
        body: Sequence[cst.BaseStatement | cst.BaseSmallStatement],
        orelse: Sequence[cst.BaseStatement | cst.BaseSmallStatement],
        frame: Frame,
        block: Block,
    ) -> Flow:
        """`for dtype in (jnp.int8, jnp.float16):` runs once per item, each a named world."""
        name = _target_name(stmt.target)
        exits: list[dict[str, Value]] = []
        for item in items:
            self.assign(stmt.target, item, frame, block)
            world = (*self.context.world, *_loop_bindings(stmt.target, item, name))
            with self.with_context(world=world):
                flow, breaks, continues = self._run_loop_body(body, frame, block)
            exits.extend(breaks)
            live = ([frame.env] if flow is Flow.NORMAL else []) + continues
            if not live:
                if exits:
                    frame.env = _merge_envs(exits)
                    return Flow.NORMAL
                return flow if flow in (Flow.RETURN, Flow.RAISE) else Flow.NORMAL
            frame.env = _merge_envs(live)
        flow = self.exec_block(orelse, frame, block)
        if exits:
            frame.env = _merge_envs([frame.env, *exits] if flow is Flow.NORMAL else exits)
            return Flow.NORMAL
        return flow

    def exec_while(self, stmt: cst.While, frame: Frame, block: Block) -> Flow:
        truth = self.apis.truth(self.eval(stmt.test, frame, block))
        orelse = _body(stmt.orelse.body) if stmt.orelse is not None else ()
        if truth is False:
            return self.exec_block(orelse, frame, block)
        return self._exec_loop(_body(stmt.body), orelse, frame, block, lambda: None)

    def _exec_loop(
        self,
        body: Sequence[cst.BaseStatement | cst.BaseSmallStatement],
        orelse: Sequence[cst.BaseStatement | cst.BaseSmallStatement],
        frame: Frame,
        block: Block,
        bind_target: Callable[[], None],
    ) -> Flow:
        """A loop of unknown trip count: the body runs on entry values, then on merged ones."""
        state = dict(frame.env)
        self._uncertainty += 1
        try:
            for _ in range(2):
                frame.env = dict(state)
                bind_target()
                flow, breaks, continues = self._run_loop_body(body, frame, block)
                ends = ([frame.env] if flow is Flow.NORMAL else []) + breaks + continues
                state = _merge_envs([state, *ends])
        finally:
            self._uncertainty -= 1
        frame.env = state
        self.exec_block(orelse, frame, block)
        frame.env = _merge_envs([state, frame.env])
        return Flow.NORMAL

    def exec_with(self, stmt: cst.With, frame: Frame, block: Block) -> Flow:
        expected: Origin | None = None
        for item in stmt.items:
            expr = item.item
            if isinstance(expr, cst.Call):
                dotted = _dotted(expr.func) or ""
                if _EXPECTED_FAILURE_CONTEXTS.search(dotted):
                    expected = Origin(block, expr)
                    continue
            value = self.eval(expr, frame, block)
            if item.asname is not None:
                self.assign(item.asname.name, UNKNOWN if not isinstance(value, Unknown) else value, frame, block)
        if expected is not None:
            with self.with_context(expected_failure=expected):
                flow = self.exec_block(_body(stmt.body), frame, block)
            return Flow.NORMAL if flow is Flow.RAISE else flow
        return self.exec_block(_body(stmt.body), frame, block)

    def exec_try(self, stmt: cst.Try, frame: Frame, block: Block) -> Flow:
        handled: set[str] = set()
        for handler in stmt.handlers:
            handled.update(_handled_exception_names(handler))
        start = dict(frame.env)
        if handled and handled <= {"ImportError", "ModuleNotFoundError"}:
            # `try: import x` / `except ImportError`: assume the import works.
            flow = self.exec_block(_body(stmt.body), frame, block)
            outcomes = [(flow, frame.env)]
        else:
            if handled & _HANDLED_EXCEPTIONS:
                # The author expects the body may fail: a call inside fails on purpose.
                with self.with_context(expected_failure=Origin(block, stmt)):
                    flow = self.exec_block(_body(stmt.body), frame, block)
            else:
                flow = self.exec_block(_body(stmt.body), frame, block)
            body_env = frame.env
            if flow is Flow.NORMAL and stmt.orelse is not None:
                flow = self.exec_block(_body(stmt.orelse.body), frame, block)
                body_env = frame.env
            outcomes = [(flow, body_env)]
            raised_env = _merge_envs([start, body_env])
            for handler in stmt.handlers:
                frame.env = dict(raised_env)
                outcomes.append((self.exec_block(_body(handler.body), frame, block), frame.env))
        flow = self._merge_outcomes(outcomes, frame)
        if stmt.finalbody is not None:
            final = self.exec_block(_body(stmt.finalbody.body), frame, block)
            if final is not Flow.NORMAL:
                return final
        return flow

    # ------------------------------------------------------------------ assignment

    def assign(self, target: cst.BaseExpression, value: Value, frame: Frame, block: Block) -> None:
        if isinstance(target, cst.Name):
            frame.env[target.value] = value
        elif isinstance(target, cst.Tuple | cst.List):
            elements = target.elements
            items = self.apis.iterate(value)
            starred = [i for i, e in enumerate(elements) if isinstance(e, cst.StarredElement)]
            if items is None or (not starred and len(items) != len(elements)):
                for e in elements:
                    self.assign(e.value, UNKNOWN, frame, block)
                return
            if starred:
                star = starred[0]
                after = len(elements) - star - 1
                if len(items) < len(elements) - 1:
                    for e in elements:
                        self.assign(e.value, UNKNOWN, frame, block)
                    return
                head, middle = items[:star], items[star : len(items) - after]
                tail = items[len(items) - after :]
                for e, v in zip(elements[:star], head, strict=True):
                    self.assign(e.value, v, frame, block)
                self.assign(elements[star].value, TupleVal(tuple(middle), True), frame, block)
                for e, v in zip(elements[star + 1 :], tail, strict=True):
                    self.assign(e.value, v, frame, block)
                return
            for e, v in zip(elements, items, strict=True):
                self.assign(e.value, v, frame, block)
        elif isinstance(target, cst.StarredElement):
            self.assign(target.value, value, frame, block)
        elif isinstance(target, cst.Attribute):
            owner = self.eval(target.value, frame, block)
            self.store_attribute(owner, target.attr.value, value)
        elif isinstance(target, cst.Subscript):
            # `o_ref[...] = x` stores into a kernel ref: nothing to track. `cfg["acc"] = x` on a
            # dict or list bound to a name: follow a constant key, otherwise forget the container.
            container = self.eval(target.value, frame, block)
            if isinstance(container, DictVal | TupleVal):
                index = self._eval_slice(target, frame, block)
                updated: Value = UNKNOWN
                if (
                    isinstance(container, DictVal)
                    and isinstance(index, Const)
                    and isinstance(index.value, str)
                    and not self._uncertainty
                ):
                    entries = dict(container.items)
                    entries[index.value] = value
                    updated = DictVal(tuple(entries.items()))
                self.apis._rebind(container, updated, frame)

    # ------------------------------------------------------------------ expressions

    def eval(self, node: cst.BaseExpression, frame: Frame, block: Block) -> Value:
        self.step()
        value = self._eval(node, frame, block)
        if isinstance(value, TupleVal | DictVal) and (
            value.size > bounds.MAX_SIZE or value.depth > bounds.MAX_DEPTH
        ):
            return UNKNOWN  # `t = (t, t)` in a loop: no fact about a kernel is that large
        if value.origin is None and not isinstance(value, Unknown | Func | ClassVal):
            with suppress(TypeError):
                value = value.with_origin(Origin(block, node))
        return value

    def _eval(self, node: cst.BaseExpression, frame: Frame, block: Block) -> Value:
        if isinstance(node, cst.Name):
            keyword = _KEYWORD_CONSTANTS.get(node.value)
            return keyword if keyword is not None else frame.lookup(node.value)
        if isinstance(node, cst.Attribute):
            return self.apis.getattr(self.eval(node.value, frame, block), node.attr.value, node)
        if isinstance(node, cst.Call):
            return self.eval_call(node, frame, block)
        if isinstance(node, cst.Integer | cst.Float | cst.Imaginary | cst.SimpleString | cst.ConcatenatedString):
            # libcst evaluates literals with ast.literal_eval: worth doing once per node.
            cached = self._literals.get(id(node))
            if cached is None:
                try:
                    evaluated = node.evaluated_value
                    cached = Const(evaluated) if evaluated is not None or not isinstance(
                        node, cst.ConcatenatedString) else UNKNOWN
                except (ValueError, SyntaxError, RecursionError):  # 1,000 implicitly joined parts
                    cached = UNKNOWN
                self._literals[id(node)] = cached
            return cached
        if isinstance(node, cst.Tuple | cst.List):
            items = self._eval_elements(node.elements, frame, block)
            if items is None:
                return UNKNOWN
            return TupleVal(tuple(items), isinstance(node, cst.List))
        if isinstance(node, cst.Dict):
            entries: list[tuple[str, Value]] = []
            for element in node.elements:
                if not isinstance(element, cst.DictElement):
                    return UNKNOWN
                key = self.eval(element.key, frame, block)
                if not (isinstance(key, Const) and isinstance(key.value, str)):
                    return UNKNOWN
                entries.append((key.value, self.eval(element.value, frame, block)))
            return DictVal(tuple(entries))
        if isinstance(node, cst.BinaryOperation):
            left = self.eval(node.left, frame, block)
            right = self.eval(node.right, frame, block)
            return self.apis.binary(_BIN_OPS.get(type(node.operator)), left, right, node)
        if isinstance(node, cst.UnaryOperation):
            operand = self.eval(node.expression, frame, block)
            return self.apis.unary(type(node.operator).__name__, operand)
        if isinstance(node, cst.BooleanOperation):
            left = self.eval(node.left, frame, block)
            truth = self.apis.truth(left)
            is_and = isinstance(node.operator, cst.And)
            if truth is None:
                right = self.eval(node.right, frame, block)
                right_truth = self.apis.truth(right)
                if is_and and right_truth is False:
                    return FALSE
                if not is_and and right_truth is True:
                    return TRUE
                return UNKNOWN
            if is_and:
                return self.eval(node.right, frame, block) if truth else left
            return left if truth else self.eval(node.right, frame, block)
        if isinstance(node, cst.Comparison):
            return self._eval_comparison(node, frame, block)
        if isinstance(node, cst.IfExp):
            truth = self.apis.truth(self.eval(node.test, frame, block))
            if truth is True:
                return self.eval(node.body, frame, block)
            if truth is False:
                return self.eval(node.orelse, frame, block)
            return join(self.eval(node.body, frame, block), self.eval(node.orelse, frame, block))
        if isinstance(node, cst.Subscript):
            value = self.eval(node.value, frame, block)
            index = self._eval_slice(node, frame, block)
            return self.apis.subscript(value, index, node, block)
        if isinstance(node, cst.Lambda):
            return self.make_function(node, block, frame)
        if isinstance(node, cst.NamedExpr):
            value = self.eval(node.value, frame, block)
            self.assign(node.target, value, frame, block)
            return value
        if isinstance(node, cst.Ellipsis):
            return Const(...)
        if isinstance(node, cst.ListComp | cst.GeneratorExp | cst.SetComp):
            items = self._comprehension(node, frame, block)
            if items is None:
                return UNKNOWN
            # A generator is an iterable that is not a tuple, like a list: absl's
            # `parameters(gen)` takes it as the test cases, where a lone tuple is one case.
            return TupleVal(tuple(items), True)
        # Dict comprehensions, f-strings, await, yield, sets: not modelled.
        return UNKNOWN

    def _comprehension(
        self, node: cst.ListComp | cst.GeneratorExp | cst.SetComp, frame: Frame, block: Block
    ) -> list[Value] | None:
        """`[f(x) for x in KNOWN if cond]` over known, small iterables; None otherwise."""
        scope = Frame(self, frame, frozenset(), block)
        results: list[Value] = []

        def run(clause: cst.CompFor | None) -> bool:
            if clause is None:
                results.append(self.eval(node.elt, scope, block))
                return len(results) <= MAX_UNROLL * 4
            iterable = self.eval(clause.iter, scope, block)
            items = self.apis.iterate(iterable)
            if items is None:
                return False
            for item in items:
                self.assign(clause.target, item, scope, block)
                keep: bool | None = True
                for condition in clause.ifs:
                    keep = self.apis.truth(self.eval(condition.test, scope, block))
                    if keep is not True:
                        break
                if keep is None:
                    return False
                if keep and not run(clause.inner_for_in):
                    return False
            return True

        return results if run(node.for_in) else None

    def _eval_elements(
        self, elements: Sequence[cst.BaseElement], frame: Frame, block: Block
    ) -> list[Value] | None:
        items: list[Value] = []
        for element in elements:
            if isinstance(element, cst.StarredElement):
                inner = self.apis.iterate(self.eval(element.value, frame, block))
                if inner is None:
                    return None
                items.extend(inner)
            else:
                items.append(self.eval(element.value, frame, block))
        return items

    def _eval_slice(self, node: cst.Subscript, frame: Frame, block: Block) -> Value:
        parts: list[Value] = []
        for element in node.slice:
            inner = element.slice
            if isinstance(inner, cst.Index):
                parts.append(self.eval(inner.value, frame, block))
            else:
                assert isinstance(inner, cst.Slice)
                bounds = [
                    self.eval(b, frame, block) if b is not None else NONE
                    for b in (inner.lower, inner.upper, inner.step)
                ]
                parts.append(TupleVal((Const("slice"), *bounds)))
        if len(parts) == 1 and not isinstance(node.slice[0].comma, cst.Comma):
            return parts[0]
        return TupleVal(tuple(parts))

    def _eval_comparison(self, node: cst.Comparison, frame: Frame, block: Block) -> Value:
        left = self.eval(node.left, frame, block)
        result: Value = TRUE
        for target in node.comparisons:
            right = self.eval(target.comparator, frame, block)
            outcome = self.apis.compare(type(target.operator).__name__, left, right)
            if outcome is False:
                return FALSE
            if outcome is None:
                result = UNKNOWN
            left = right
        return result

    # ------------------------------------------------------------------ calls

    def eval_args(self, node: cst.Call, frame: Frame, block: Block) -> Args:
        args = Args([], {}, [], {})
        for arg in node.args:
            if arg.star == "*":
                items = self.apis.iterate(self.eval(arg.value, frame, block))
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
        if isinstance(func_node, cst.Attribute) and func_node.attr.value in _SKIP_CALLS:
            receiver = _dotted(func_node.value)
            if receiver in ("self", "pytest", "cls", "unittest", "absltest") and not (
                func_node.attr.value in _CONDITIONAL_SKIPS and self._defined_here(func_node, frame, block)
            ):
                raise Diverges
        callee = self.eval(func_node, frame, block)
        args = self.eval_args(node, frame, block)
        # `self.assertRaises(Error, fn, *args)`: fn is called on purpose with failing arguments.
        if (
            isinstance(func_node, cst.Attribute)
            and func_node.attr.value.startswith("assertRaises")
            and len(args.positional) >= 2
        ):
            with self.with_context(expected_failure=Origin(block, node)):
                inner = Args(args.positional[2:], {}, args.nodes[2:], {}, args.complete)
                if func_node.attr.value.endswith("Regex") or "Literal" in func_node.attr.value:
                    inner = Args(args.positional[3:], {}, args.nodes[3:], {}, args.complete)
                    target = args.positional[2] if len(args.positional) > 2 else UNKNOWN
                else:
                    target = args.positional[1]
                with suppress(Diverges):
                    self.call_value(target, inner, node, frame, block)
            return UNKNOWN
        return self.call_value(callee, args, node, frame, block)

    def call_value(
        self, callee: Value, args: Args, node: cst.CSTNode, frame: Frame, block: Block
    ) -> Value:
        if isinstance(callee, Func):
            return self.call_function(callee, args, node)
        if isinstance(callee, BoundMethod):
            bound = Args(
                [callee.self_value, *args.positional],
                args.keywords,
                [None, *args.nodes],
                args.keyword_nodes,
                args.complete,
            )
            return self.call_function(callee.func, bound, node)
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
            call = self.apis.getattr(callee, "__call__", node)
            if isinstance(call, BoundMethod | Func):
                return self.call_value(call, args, node, frame, block)
            return UNKNOWN
        return self.apis.call(callee, args, node, frame, block)

    def instantiate(self, cls: ClassVal, args: Args, node: cst.CSTNode) -> Value:
        """`Cls(...)`: a new object, initialised by the module's `__init__` or dataclass fields."""
        instance = Instance(cls)
        init = self.class_attr(cls, "__init__")
        if isinstance(init, Func):
            bound = Args([instance, *args.positional], args.keywords, [None, *args.nodes],
                         args.keyword_nodes, args.complete)
            self.call_function(init, bound, node)
            return instance
        fields = self._dataclass_fields(cls)
        if fields is None:
            if args.positional or args.keywords:
                instance.attrs["__unknown__"] = UNKNOWN
            return instance
        positional = list(args.positional)
        for name in fields:
            if positional:
                instance.attrs[name] = positional.pop(0)
            elif name in args.keywords:
                instance.attrs[name] = args.keywords[name]
            elif not args.complete:
                instance.attrs[name] = UNKNOWN
        return instance

    def _dataclass_fields(self, cls: ClassVal) -> list[str] | None:
        """The `__init__` parameters of a `@dataclass` (its annotated fields, bases first)."""
        fields: list[str] = []
        for klass in reversed(list(self._mro(cls))):
            block = klass.block
            if block is None:
                return None
            try:
                stmts = block.statements()
            except BlockParseError:
                return None
            node = stmts[0] if stmts else None
            if not isinstance(node, cst.ClassDef):
                return None
            decorated = any(
                (_dotted(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) or "")
                .endswith("dataclass")
                for d in node.decorators
            )
            if not decorated:
                if klass is cls:
                    return None
                continue
            members = [m.text for m in block.members] if block.members else [
                block.code(s) for s in (node.body.body if isinstance(node.body, cst.IndentedBlock) else [])
            ]
            for text in members:
                match = re.match(r"\s*(\w+)\s*:(?!=)\s*(?!ClassVar|typing\.ClassVar)", text)
                if match and not text.lstrip().startswith(("def ", "class ", "@")) and match.group(1) not in fields:
                    fields.append(match.group(1))
        return fields

    def note_escaped(self, values: Sequence[Value]) -> None:
        """Functions handed to code we do not model still get a blind analysis at the end."""
        for value in values:
            if isinstance(value, Func) and value not in self._defined:
                self._defined.append(value)


_MUTATIONS = (
    re.compile(r"^[ \t\f]*global[ \t]+([\w, \t]+)", re.MULTILINE),  # `global X` in a function
    re.compile(r"(?<![\w.])(\w+)[ \t]*\[[^\]\n]*\][ \t]*(?:[-+*/|&^%@]|//|\*\*|<<|>>)?=(?!=)"),
    re.compile(r"(?<![\w.])(\w+)\.(?:update|append|extend|insert|pop|popitem|setdefault|clear"
               r"|remove|add|discard|sort|reverse)\("),
    re.compile(r"\b(?:setattr|delattr)\([ \t]*(\w+)"),
    re.compile(r"^[ \t\f]*del[ \t]+(\w+)[\[.]", re.MULTILINE),
)
# `X.attr = v`: a mutation of X when X is an object of the module; on a module (a test file
# that monkeypatches `plgpu.kernel`) it changes nothing the analysis reads.
_ATTRIBUTE_STORE = re.compile(r"(?<![\w.])(\w+)\.\w+[ \t]*(?:[-+*/|&^%@]|//|\*\*|<<|>>)?=(?!=)")


def _mutated_globals(source: SourceFile) -> tuple[frozenset[str], frozenset[str]]:
    """Module globals that some statement rebinds or mutates in place, and those that only get
    attribute stores (mutated only if they turn out to be objects, not modules).

    Module-level code runs lazily here, so the order of a mutation relative to the reads is not
    known: such a global is unknown. Names bound only by imports are modules, and stay resolved.
    """

    def module_globals(pattern_names: set[str]) -> frozenset[str]:
        found = set()
        for name in pattern_names:
            blocks = source.bindings.get(name, [])
            if blocks and not all(_is_import_block(b) for b in blocks):
                found.add(name)
        return frozenset(found)

    candidates: set[str] = set()
    for pattern in _MUTATIONS:
        for match in pattern.finditer(source.text):
            candidates.update(n.strip() for n in match.group(1).split(",") if n.strip())
    attribute_stores = {m.group(1) for m in _ATTRIBUTE_STORE.finditer(source.text)}
    return module_globals(candidates), module_globals(attribute_stores - candidates)


def _is_import_block(block: Block) -> bool:
    first = block.text.lstrip()
    return block.kind == "stmt" and first.startswith(("import ", "from "))


def _handled_exception_names(handler: cst.ExceptHandler) -> set[str]:
    if handler.type is None:
        return {"Exception"}
    exprs = (
        [e.value for e in handler.type.elements]
        if isinstance(handler.type, cst.Tuple)
        else [handler.type]
    )
    return {(_dotted(e) or "?").split(".")[-1] for e in exprs}


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    return [*params.posonly_params, *params.params, *params.kwonly_params]


def _body(suite: cst.BaseSuite) -> Sequence[cst.BaseStatement | cst.BaseSmallStatement]:
    if isinstance(suite, cst.IndentedBlock):
        return suite.body
    assert isinstance(suite, cst.SimpleStatementSuite)
    return suite.body


def _merge_envs(envs: list[dict[str, Value]]) -> dict[str, Value]:
    merged = dict(envs[0])
    for env in envs[1:]:
        for name in set(merged) | set(env):
            if name in merged and name in env:
                merged[name] = join(merged[name], env[name])
            else:
                merged[name] = UNKNOWN
    return merged


def _target_name(target: cst.BaseAssignTargetExpression) -> str | None:
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, cst.Tuple):
        parts = [e.value.value for e in target.elements if isinstance(e.value, cst.Name)]
        return ", ".join(parts) if len(parts) == len(target.elements) else None
    return None


def _walk_statements(suite: cst.BaseSuite) -> Iterator[cst.BaseSmallStatement | cst.BaseStatement]:
    """The small statements of a function body, not descending into nested scopes."""
    for statement in _body(suite):
        if isinstance(statement, cst.SimpleStatementLine):
            yield from statement.body
        elif isinstance(statement, cst.If | cst.For | cst.While | cst.With | cst.Try):
            yield statement
            yield from _walk_statements(statement.body)
        else:
            yield statement


def _loop_bindings(
    target: cst.BaseAssignTargetExpression, item: Value, name: str | None
) -> tuple[WorldBinding, ...]:
    """The world a loop iteration adds: `dtype=jnp.int8`, or one binding per unpacked name."""
    if (
        isinstance(target, cst.Tuple)
        and isinstance(item, TupleVal)
        and len(target.elements) == len(item.items)
        and all(isinstance(e.value, cst.Name) for e in target.elements)
    ):
        bindings = []
        for element, value in zip(target.elements, item.items, strict=True):
            label = _label(value)
            if label is not None and isinstance(element.value, cst.Name):
                bindings.append(WorldBinding(element.value.value, label, value.origin))
        return tuple(bindings)
    label = _label(item) if name is not None else None
    if label is None or name is None:
        return ()
    return (WorldBinding(name, label, item.origin),)


def _label(value: Value) -> str | None:
    if value.origin is not None:
        try:
            return " ".join(value.origin.code().split())
        except Exception:
            return None
    if isinstance(value, Const):
        return repr(value.value)
    if isinstance(value, DType):
        return f"jnp.{value.name}"
    return None


def _is_range_call(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and _dotted(node.func) in ("range", "enumerate", "zip")


_BIN_OPS: dict[type, str] = {
    cst.Add: "+",
    cst.Subtract: "-",
    cst.Multiply: "*",
    cst.Divide: "/",
    cst.FloorDivide: "//",
    cst.Modulo: "%",
    cst.Power: "**",
    cst.MatrixMultiply: "@",
    cst.BitAnd: "&",
    cst.BitOr: "|",
    cst.BitXor: "^",
    cst.LeftShift: "<<",
    cst.RightShift: ">>",
}

_AUG_OPS: dict[type, str] = {
    cst.AddAssign: "+",
    cst.SubtractAssign: "-",
    cst.MultiplyAssign: "*",
    cst.DivideAssign: "/",
    cst.FloorDivideAssign: "//",
    cst.ModuloAssign: "%",
    cst.PowerAssign: "**",
    cst.MatrixMultiplyAssign: "@",
    cst.BitAndAssign: "&",
    cst.BitOrAssign: "|",
    cst.BitXorAssign: "^",
    cst.LeftShiftAssign: "<<",
    cst.RightShiftAssign: ">>",
}


__all__ = [
    "Args",
    "Array",
    "Fragment",
    "Frame",
    "Interpreter",
    "Kernel",
    "Ref",
]
