"""Where library models and the interpreter meet.

A model (`models/`) knows one library API; the interpreter (`interpreter/`) knows Python. Models
ask the interpreter for what they need through `Host` (as pytype's rewrite gives its abstract
values a `ContextType`, and mypy its plugins a `CheckerPluginInterface`), read their arguments
bound by name to the signature they were registered with (`Bound`), and register themselves in
`REGISTRY`: by canonical API name, by name pattern, and by the kind of domain value they answer
for (attributes, methods, comparisons, truth, subscripts, operators). This module imports
neither side, so neither side imports the other.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeAlias, TypeVar

import libcst as cst

from mmalint.analysis.calls import ApiUse, Context, MmaSite
from mmalint.analysis.values import UNKNOWN, ClassVal, Const, Origin, TupleVal, Value

if TYPE_CHECKING:
    from mmalint.analysis.source import Block


class Diverges(Exception):
    """A call whose every path raised or skipped: the caller's path ends there too."""


@dataclass
class Args:
    """The arguments of one call as evaluated, before any signature is applied."""

    positional: list[Value]
    keywords: dict[str, Value]
    nodes: list[cst.CSTNode | None]  # the expression of each positional arg, when written
    keyword_nodes: dict[str, cst.CSTNode]
    complete: bool = True  # False when a *args/**kwargs could not be expanded


# A scope of the interpreter. Models only hand back the one they were called in, unseen, so
# its type is the interpreter's business.
Frame: TypeAlias = Any


class Host(Protocol):
    """What a model may ask of the interpreter running it."""

    @property
    def context(self) -> Context:
        """The dynamic context of the path being run (world, expected failure, semantics...)."""
        ...

    def with_context(self, **changes: object) -> AbstractContextManager[None]:
        """Run the enclosed calls with some fields of the context changed."""
        ...

    def call_value(self, callee: Value, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        """Call a value (a user function, a class, a model...) with evaluated arguments."""
        ...

    def getattr(self, value: Value, attr: str, node: cst.CSTNode) -> Value:
        """`value.attr`, as the interpreter evaluates it."""
        ...

    def subscript(self, value: Value, index: Value, node: cst.CSTNode, block: Block) -> Value:
        """`value[index]`, as the interpreter evaluates it."""
        ...

    def truth(self, value: Value) -> bool | None:
        """`bool(value)` when decided."""
        ...

    def iterate(self, value: Value) -> list[Value] | None:
        """The items of a known iterable."""
        ...

    def mapping(self, entries: Sequence[tuple[Value, Value]]) -> Value:
        """The dict `entries` build in order (a key given twice keeps its first place and its
        last value); UNKNOWN where a key is unknown or two may or may not be the same."""
        ...

    def members(self, value: Value) -> list[Value] | None:
        """The distinct items of a set (in some order: Python's is not known), or of any
        iterable `iterate` knows; None when two of them may or may not be the same."""
        ...

    def dataclass_fields(self, cls: ClassVal) -> list[str] | None:
        """The `__init__` parameters of a `@dataclass` of the checked code; None for another
        class, or one whose fields are not known."""
        ...

    def copies_its_own_way(self, cls: ClassVal) -> bool:
        """Whether objects of the class may be copied their own way (`__copy__`,
        `__deepcopy__`, `__reduce__`...), or by a base not of the checked code."""
        ...

    def store_attribute(self, owner: Value, attr: str | None, value: Value) -> None:
        """`owner.attr = value` (`attr` None: some attribute)."""
        ...

    def note_escaped(self, values: Sequence[Value]) -> None:
        """Values handed to code nobody models: functions among them are still analysed, blind."""
        ...

    def about_the_kernel(self, test: cst.BaseExpression, frame: Frame, block: Block) -> bool:
        """Whether an undecided condition is undecided in a part that reads a dtype, element
        type, integer or shape (a skip on it may skip the very world: `interpreter/guards.py`)."""
        ...

    def method_receiver(self, frame: Frame) -> tuple[ClassVal, Value] | None:
        """`super()`'s two in the method `frame` runs: the class it is defined in and its first
        argument; None in a function that is no method, or a static one."""
        ...

    def surely_running(self) -> bool:
        """Whether the code running now is sure to run: under no branch or loop of unknown
        outcome, nor in a `try` or `with` body."""
        ...

    def record(self, site: MmaSite) -> None:
        """One call of an instruction family on the path being run."""
        ...

    def record_use(self, use: ApiUse) -> None:
        """One use of a version-dependent API on the path being run."""
        ...

    def mentions(self, word: str) -> bool:
        """Whether the module's text contains `word` (a setting that may change what a call does)."""
        ...


@dataclass(frozen=True, slots=True)
class Call:
    """Where a model is called: the call expression, its scope and its block."""

    node: cst.CSTNode
    frame: Frame
    block: Block

    @property
    def origin(self) -> Origin:
        return Origin(self.block, self.node)

    def origin_of(self, node: cst.CSTNode | None) -> Origin | None:
        """Where an argument was written, when it was."""
        return Origin(self.block, node) if node is not None else None


# ---------------------------------------------------------------------- signatures


@dataclass(frozen=True)
class Signature:
    """A model's signature, parsed once at registration: `(shape, dtype=None, *, layout)`.

    `...` stands for parameters the model does not read. Defaults are literals.
    """

    text: str
    index: dict[str, int | None]  # position of each parameter; None for keyword-only ones
    defaults: dict[str, Value]

    @classmethod
    def parse(cls, text: str) -> Signature:
        inner = text.strip()
        if not (inner.startswith("(") and inner.endswith(")")):
            raise ValueError(f"a signature is written in parentheses: {text!r}")
        index: dict[str, int | None] = {}
        defaults: dict[str, Value] = {}
        keyword_only = False
        position = 0
        for part in (p.strip() for p in inner[1:-1].split(",")):
            if not part or part == "...":
                continue
            if part == "*" or (part.startswith("*") and not part.startswith("**")):
                keyword_only = True
                continue
            if part.startswith("**"):
                continue
            name, _, default = (s.strip() for s in part.partition("="))
            if not name.isidentifier() or name in index:
                raise ValueError(f"bad parameter {part!r} in {text!r}")
            index[name] = None if keyword_only else position
            if not keyword_only:
                position += 1
            if default:
                defaults[name] = _literal(default)
        return cls(text, index, defaults)


def _literal(text: str) -> Value:
    value = ast.literal_eval(text)
    if isinstance(value, tuple):
        return TupleVal(tuple(Const(v) for v in value))
    return Const(value)


class Bound:
    """A call's arguments bound by name to a model's signature.

    `args[name]` is the argument passed for a parameter, by keyword or at its position; when it
    was not passed, the parameter's default (`UNKNOWN` without one), or `UNKNOWN` when a
    `*args`/`**kwargs` of the call could not be expanded (it may hold the argument). A
    keyword-only parameter that was not passed has its default either way.
    """

    __slots__ = ("_args", "_signature")

    def __init__(self, args: Args, signature: Signature) -> None:
        self._args = args
        self._signature = signature

    def __getitem__(self, name: str) -> Value:
        args = self._args
        found = args.keywords.get(name)
        if found is not None:
            return found
        index = self._signature.index[name]
        if index is None:
            return self._signature.defaults.get(name, UNKNOWN)
        if index < len(args.positional):
            return args.positional[index]
        return self._signature.defaults.get(name, UNKNOWN) if args.complete else UNKNOWN

    def given(self, name: str) -> bool:
        """Whether the call passed this parameter (by keyword or at its position)."""
        if name in self._args.keywords:
            return True
        index = self._signature.index[name]
        return index is not None and index < len(self._args.positional)

    def node(self, name: str) -> cst.CSTNode | None:
        """The expression written for this parameter, when there is one."""
        args = self._args
        found = args.keyword_nodes.get(name)
        if found is not None:
            return found
        index = self._signature.index[name]
        if index is not None and index < len(args.nodes):
            return args.nodes[index]
        return None

    # Models of variadic APIs (`range(*ints)`, `functools.partial(f, *args, **kw)`) read the
    # call as passed.
    @property
    def positional(self) -> list[Value]:
        return self._args.positional

    @property
    def keywords(self) -> dict[str, Value]:
        return self._args.keywords

    @property
    def keyword_nodes(self) -> dict[str, cst.CSTNode]:
        return self._args.keyword_nodes

    @property
    def complete(self) -> bool:
        return self._args.complete

    @property
    def raw(self) -> Args:
        return self._args


# ---------------------------------------------------------------------- the registry


@dataclass(frozen=True)
class TestIdioms:
    """How test code says a path ends or is meant to fail, read from the syntax before anything
    is evaluated (`self.skipTest(...)`, `with self.assertRaises(...)`)."""

    skip_methods: frozenset[str] = frozenset()  # `self.skipTest(...)`: the path ends
    skip_receivers: frozenset[str] = frozenset()  # whose skip methods those are (`self`, `pytest`)
    # Skips that hold only under a condition: run when the module defines them.
    conditional_skips: frozenset[str] = frozenset()
    # `with <dotted name>(...)`: the body is expected to fail.
    expected_failure_contexts: re.Pattern[str] | None = None
    # `self.assertRaises(E, fn, *args)`: the position of the function called to fail, by method.
    failing_call_argument: Callable[[str], int | None] = lambda name: None
    # `except E:` with one of these: the body may fail on purpose.
    expected_exceptions: frozenset[str] = frozenset()


ModelFn = Callable[[Host, Bound, Call], Value]
MethodFn = Callable[[Host, Value, Bound, Call], Value]


@dataclass(frozen=True, slots=True)
class Model:
    """A registered model: its function and the signature its arguments are bound to."""

    fn: ModelFn
    signature: Signature

    def __call__(self, host: Host, args: Args, call: Call) -> Value:
        return self.fn(host, Bound(args, self.signature), call)


@dataclass(frozen=True, slots=True)
class MethodModel:
    fn: MethodFn
    signature: Signature

    def __call__(self, host: Host, receiver: Value, args: Args, call: Call) -> Value:
        return self.fn(host, receiver, Bound(args, self.signature), call)


F = TypeVar("F")


class TypeTable(Generic[F]):
    """Entries keyed by the kind of a value, found through its class's bases once per class."""

    def __init__(self) -> None:
        self._entries: dict[type, F] = {}
        self._resolved: dict[type, F | None] = {}

    def register(self, kinds: Sequence[type], entry: F) -> None:
        for kind in kinds:
            if kind in self._entries:
                raise ValueError(f"{kind.__name__} is registered twice")
            self._entries[kind] = entry
        self._resolved.clear()

    def get(self, kind: type) -> F | None:
        try:
            return self._resolved[kind]
        except KeyError:
            found = next((self._entries[k] for k in kind.__mro__ if k in self._entries), None)
            self._resolved[kind] = found
            return found

    def kinds(self) -> Iterator[type]:
        return iter(self._entries)


AttributeFn = Callable[[Host, Value, str, cst.CSTNode], Value]
SubscriptFn = Callable[[Value, Value, cst.CSTNode, "Block"], Value]
BinaryFn = Callable[[str, Value, Value], Value]
EqualFn = Callable[[Value, Value], bool | None]
CallValueFn = Callable[[Host, Value, Args, Call], Value]
PartialFn = Callable[[Value, Args], Value | None]
Resolver = Callable[[str], Value | None]
PatternFn = Callable[[str], Model | None]


@dataclass
class Registry:
    """Every model, by canonical name, name pattern and value kind."""

    models: dict[str, Model] = field(default_factory=dict)
    patterns: list[tuple[str, PatternFn]] = field(default_factory=list)
    # What a canonical name denotes when it is not a module (a dtype, a layout constant...).
    resolvers: list[tuple[str, Resolver]] = field(default_factory=list)
    builtin_names: set[str] = field(default_factory=set)
    # Names true at run time whose `if` is taken both ways (one for the type checker).
    both_ways: set[str] = field(default_factory=set)
    attributes: TypeTable[AttributeFn] = field(default_factory=TypeTable)
    # `obj.name` on an object of the module with no such attribute: a known base class's.
    instance_attributes: dict[str, Callable[[], Value]] = field(default_factory=dict)
    methods: dict[tuple[type, str], MethodModel] = field(default_factory=dict)
    method_prefixes: list[tuple[type, str, MethodModel]] = field(default_factory=list)
    callables: TypeTable[CallValueFn] = field(default_factory=TypeTable)
    subscripts: TypeTable[SubscriptFn] = field(default_factory=TypeTable)
    binaries: list[tuple[int, type, BinaryFn]] = field(default_factory=list)
    unaries: TypeTable[bool] = field(default_factory=TypeTable)  # `-x` is x
    truthy: TypeTable[bool] = field(default_factory=TypeTable)  # always true
    # Kinds compared by their facts (`==`), and for some a function that decides first
    # (None: undecided; NotImplemented: by facts).
    equality_kinds: set[type] = field(default_factory=set)
    equalities: TypeTable[EqualFn] = field(default_factory=TypeTable)
    identities: TypeTable[EqualFn] = field(default_factory=TypeTable)  # `a is b` of one kind
    # `isinstance(obj, C)` for classes of a library, by the prefix of their canonical name.
    class_checks: list[tuple[str, Callable[[Value, str], Value]]] = field(default_factory=list)
    # `functools.partial(f, ...)` of a modelled API, or of a value of a modelled kind.
    partials: dict[str, PartialFn] = field(default_factory=dict)
    partial_kinds: TypeTable[PartialFn] = field(default_factory=TypeTable)
    # Words without which a file cannot make a call any model records (the prefilter's).
    trigger_words: list[str] = field(default_factory=list)
    tests: TestIdioms = field(default_factory=TestIdioms)
    _pattern_cache: dict[str, Model | None] = field(default_factory=dict)
    _method_cache: dict[tuple[type, str], MethodModel | None] = field(default_factory=dict)
    # The resolvers whose prefix a name starts with (77,000 lookups of a few hundred names on
    # jax's tree, each trying every prefix); emptied when a resolver is registered.
    _resolver_cache: dict[str, tuple[Resolver, ...]] = field(default_factory=dict)

    def model_for(self, name: str) -> Model | None:
        found = self.models.get(name)
        if found is not None:
            return found
        try:
            return self._pattern_cache[name]
        except KeyError:
            pass
        model = None
        for prefix, resolve in self.patterns:
            if name.startswith(prefix):
                model = resolve(name)
                if model is not None:
                    break
        self._pattern_cache[name] = model
        return model

    def resolve(self, name: str) -> Value | None:
        matching = self._resolver_cache.get(name)
        if matching is None:
            if len(self._resolver_cache) >= 4096:  # a language server reads ever more code
                self._resolver_cache.clear()
            matching = self._resolver_cache[name] = tuple(
                resolve for prefix, resolve in self.resolvers if name.startswith(prefix)
            )
        for resolve in matching:
            value = resolve(name)
            if value is not None:
                return value
        return None

    def method_for(self, kind: type, name: str) -> MethodModel | None:
        key = (kind, name)
        try:
            return self._method_cache[key]
        except KeyError:
            pass
        found: MethodModel | None = None
        for klass in kind.__mro__:
            found = self.methods.get((klass, name))
            if found is None:
                found = next(
                    (m for k, p, m in self.method_prefixes if k is klass and name.startswith(p)), None
                )
            if found is not None:
                break
        self._method_cache[key] = found
        return found

    def binary_for(self, left: Value, right: Value) -> BinaryFn | None:
        for _, kind, fn in self.binaries:
            if isinstance(left, kind) or isinstance(right, kind):
                return fn
        return None


REGISTRY = Registry()


def model(*names: str, signature: str) -> Callable[[ModelFn], ModelFn]:
    """Register a model of the APIs `names` (canonical), its arguments bound to `signature`."""
    parsed = Signature.parse(signature)

    def register(fn: ModelFn) -> ModelFn:
        for name in names:
            if name in REGISTRY.models:
                raise ValueError(f"{name} has two models")
            REGISTRY.models[name] = Model(fn, parsed)
        return fn

    return register


def pattern(prefix: str) -> Callable[[PatternFn], PatternFn]:
    """Register models of a family of names (`ir.F32Type.get`, `plgpu.Layout.MMA_LHS`): the
    function returns the model of a name starting with `prefix`, or None."""

    def register(fn: PatternFn) -> PatternFn:
        REGISTRY.patterns.append((prefix, fn))
        return fn

    return register


def resolver(prefix: str) -> Callable[[Resolver], Resolver]:
    """Register what the canonical names starting with `prefix` denote as values."""

    def register(fn: Resolver) -> Resolver:
        REGISTRY.resolvers.append((prefix, fn))
        REGISTRY._resolver_cache.clear()
        return fn

    return register


def attribute(*kinds: type) -> Callable[[AttributeFn], AttributeFn]:
    """Register the attributes of values of `kinds`."""

    def register(fn: AttributeFn) -> AttributeFn:
        REGISTRY.attributes.register(kinds, fn)
        return fn

    return register


def method(
    kind: type, *names: str, signature: str, prefix: str | None = None
) -> Callable[[MethodFn], MethodFn]:
    """Register methods of values of `kind`, by name (or by name prefix)."""
    parsed = Signature.parse(signature)

    def register(fn: MethodFn) -> MethodFn:
        entry = MethodModel(fn, parsed)
        for name in names:
            if (kind, name) in REGISTRY.methods:
                raise ValueError(f"{kind.__name__}.{name} has two models")
            REGISTRY.methods[(kind, name)] = entry
        if prefix is not None:
            REGISTRY.method_prefixes.append((kind, prefix, entry))
        REGISTRY._method_cache.clear()
        return fn

    return register


def callable_kind(*kinds: type) -> Callable[[CallValueFn], CallValueFn]:
    """Register what calling a value of `kinds` does (a kernel launch...)."""

    def register(fn: CallValueFn) -> CallValueFn:
        REGISTRY.callables.register(kinds, fn)
        return fn

    return register


def subscript(*kinds: type) -> Callable[[SubscriptFn], SubscriptFn]:
    def register(fn: SubscriptFn) -> SubscriptFn:
        REGISTRY.subscripts.register(kinds, fn)
        return fn

    return register


def binary(kind: type, precedence: int = 0) -> Callable[[BinaryFn], BinaryFn]:
    """Register `a op b` where either side is of `kind`; the highest precedence answers first."""

    def register(fn: BinaryFn) -> BinaryFn:
        REGISTRY.binaries.append((precedence, kind, fn))
        REGISTRY.binaries.sort(key=lambda entry: -entry[0])
        return fn

    return register


def value_kinds(
    *kinds: type,
    truthy: bool = False,
    unary_keeps: bool = False,
    equality: EqualFn | bool = False,
    identity: EqualFn | None = None,
) -> None:
    """Declare how values of `kinds` behave in Python's operators: always true; `-x` is `x`;
    compared by their facts (with a function that decides first, or True); `is` by a function."""
    if truthy:
        REGISTRY.truthy.register(kinds, True)
    if unary_keeps:
        REGISTRY.unaries.register(kinds, True)
    if equality is not False:
        REGISTRY.equality_kinds.update(kinds)
    if callable(equality):
        REGISTRY.equalities.register(kinds, equality)
    if identity is not None:
        REGISTRY.identities.register(kinds, identity)


def class_check(prefix: str) -> Callable[[Callable[[Value, str], Value]], Callable[[Value, str], Value]]:
    """Register `isinstance(obj, C)` for the classes whose canonical names start with `prefix`
    (the function gets the name without it)."""

    def register(fn: Callable[[Value, str], Value]) -> Callable[[Value, str], Value]:
        REGISTRY.class_checks.append((prefix, fn))
        return fn

    return register


def partial_of(*names: str, kinds: Sequence[type] = ()) -> Callable[[PartialFn], PartialFn]:
    """Register `functools.partial(f, ...)` of the APIs `names` or values of `kinds` (None: as any)."""

    def register(fn: PartialFn) -> PartialFn:
        for name in names:
            REGISTRY.partials[name] = fn
        if kinds:
            REGISTRY.partial_kinds.register(kinds, fn)
        return fn

    return register


def trigger(*patterns: str) -> None:
    """Declare regular expressions (over text) without a match of which a file cannot reach a
    call the declaring model records: the prefilter skips such files unparsed."""
    REGISTRY.trigger_words.extend(patterns)


def record_use(
    host: Host, name: str, args: Bound, call: Call, bits: int | None = None, form: str | None = None
) -> None:
    """Record a use of a version-dependent API, with the keywords it was passed."""
    keywords = tuple((k, call.origin_of(args.keyword_nodes.get(k))) for k in args.keywords)
    host.record_use(ApiUse(name, call.origin, keywords, bits, host.context, form))


__all__ = [
    "REGISTRY",
    "Args",
    "Bound",
    "Call",
    "Diverges",
    "Frame",
    "Host",
    "Model",
    "Registry",
    "Signature",
    "TestIdioms",
    "attribute",
    "binary",
    "callable_kind",
    "class_check",
    "method",
    "model",
    "partial_of",
    "pattern",
    "record_use",
    "resolver",
    "subscript",
    "trigger",
    "value_kinds",
]
