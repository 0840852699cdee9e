"""The interpreter's state: the module's globals, the path's context, what was recorded, the
budget; and what each part of the interpreter offers the others."""

from __future__ import annotations

import enum
import re
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace

import libcst as cst

from mmalint.analysis.budget import Budget, BudgetExceeded
from mmalint.analysis.calls import ApiUse, Context, MmaSite
from mmalint.analysis.host import Args, Diverges
from mmalint.analysis.source import Block, BlockParseError, SourceFile
from mmalint.analysis.values import (
    UNKNOWN,
    Api,
    ClassVal,
    Func,
    Value,
    join,
)

MAX_CALL_DEPTH = 12
MAX_UNROLL = 64

# What ends a run early without deciding anything: the file's budget, or checked code nested
# deeper than Python's stack (a block, a chain of module globals or of values).
GAVE_UP = (BudgetExceeded, RecursionError)


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


class Machine(ABC):
    """The state of one interpreter run over a module; the parts (`statements`, `flow`...) are
    mixins over it, and the abstract methods below are what they call of each other."""


    def __init__(self, source: SourceFile, budget: Budget | None = None) -> None:
        self.source = source
        self.budget = budget or Budget.for_text(source.text)
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
        self._mentions: dict[str, bool] = {}

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
            return self.builtin(name)
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
                self.define_class_block(block)
            else:
                self.exec_block(block.statements(), self.module, block)
        except (BlockParseError, Diverges):
            pass
        except GAVE_UP as exc:
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

    def mentions(self, word: str) -> bool:
        found = self._mentions.get(word)
        if found is None:
            found = self._mentions[word] = word in self.source.text
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
    def rebind(self, old: Value, new: Value, frame: Frame) -> None: ...

    # classes.py
    @abstractmethod
    def define_class_block(self, block: Block) -> None: ...
    @abstractmethod
    def make_class(self, node: cst.ClassDef, block: Block, frame: Frame) -> ClassVal: ...
    @abstractmethod
    def class_attr(self, cls: ClassVal, name: str) -> Value | None: ...
    @abstractmethod
    def mro(self, cls: ClassVal) -> Iterator[ClassVal]: ...
    @abstractmethod
    def instantiate(self, cls: ClassVal, args: Args, node: cst.CSTNode) -> Value: ...
    @abstractmethod
    def store_attribute(self, owner: Value, attr: str | None, value: Value) -> None: ...

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
            if blocks and not all(is_import_block(b) for b in blocks):
                found.add(name)
        return frozenset(found)

    candidates: set[str] = set()
    for pattern in _MUTATIONS:
        for match in pattern.finditer(source.text):
            candidates.update(n.strip() for n in match.group(1).split(",") if n.strip())
    attribute_stores = {m.group(1) for m in _ATTRIBUTE_STORE.finditer(source.text)}
    return module_globals(candidates), module_globals(attribute_stores - candidates)

def is_import_block(block: Block) -> bool:
    first = block.text.lstrip()
    return block.kind == "stmt" and first.startswith(("import ", "from "))

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
