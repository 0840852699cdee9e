"""Abstract values of the interpreter.

Every value is an immutable fact about what a Python expression evaluates to. Equality compares
facts only; `origin` (where the fact was decided) rides along without taking part, so two
accumulators created as float32 on different lines are equal and join to a known float32.
Anything the interpreter cannot decide is `UNKNOWN`, and rules stay silent on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import libcst as cst

from mmalint.analysis import by_root
from mmalint.analysis.dtypes import DTYPES, IR_TYPES, DTypeInfo, IrTypeInfo

if TYPE_CHECKING:
    from mmalint.analysis.source import Block, Span


@dataclass(frozen=True, eq=False)
class Origin:
    """Where a fact was decided: a node of a parsed block."""

    # Identity, not facts: two functions (or kernels, objects) are never the same value.
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    block: Block
    node: cst.CSTNode

    def span(self) -> Span:
        return self.block.span(self.node)

    def code(self) -> str:
        return self.block.code(self.node)

    def flat_code(self) -> str:
        """`code`, its whitespace runs made single spaces."""
        return self.block.flat_code(self.node)


@dataclass(frozen=True)
class Value:
    origin: Origin | None = field(default=None, compare=False, repr=False, kw_only=True)

    def with_origin(self, origin: Origin | None) -> Value:
        # A bare instance given the same fields: several times faster than dataclasses.replace
        # (and than copy.copy) on this hot path. Values are plain frozen dataclasses.
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        object.__setattr__(clone, "origin", origin)
        return clone

    @property
    def known(self) -> bool:
        return True

    def joined(self, other: Any) -> Value:
        """The join with a different value of the same kind (`join` has ruled out equality):
        what both say. A kind that keeps no partial facts joins to UNKNOWN."""
        return UNKNOWN


@dataclass(frozen=True)
class Unknown(Value):
    @property
    def known(self) -> bool:
        return False


UNKNOWN = Unknown()


class SomeInt(Unknown):
    """An int whose value is not known: the target of `for i in range(n)`. Unknown to every
    rule; indexing with it drops an axis, as any integer index does."""


SOME_INT = SomeInt()


class KnownTruth(Unknown):
    """A value of which only its truth is known: `x or y` with `x` undecided and `y` true is
    `x` or `y`, true either way (as a value, neither `True` nor `y`)."""

    truth: bool = False


class Truthy(KnownTruth):
    truth = True


class Falsy(KnownTruth):
    truth = False


TRUTHY = Truthy()
FALSY = Falsy()


@dataclass(frozen=True)
class Const(Value):
    """A Python literal: int, float, str, bool, None, Ellipsis."""

    value: Any


NONE = Const(None)
TRUE = Const(True)
FALSE = Const(False)


def _measure(value: Value, items: tuple[Value, ...]) -> None:
    """Set `size` (values inside, repeats counted) and `depth` of a container from its items',
    once, when it is built: neither is ever found by walking it."""
    size, depth = 1, 1
    for item in items:
        size += getattr(item, "size", 1)
        depth = max(depth, getattr(item, "depth", 0) + 1)
    object.__setattr__(value, "size", size)
    object.__setattr__(value, "depth", depth)


@dataclass(frozen=True)
class TupleVal(Value):
    items: tuple[Value, ...]
    is_list: bool = False
    size: int = field(default=1, init=False, compare=False, repr=False)
    depth: int = field(default=1, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        _measure(self, self.items)

    def joined(self, other: TupleVal) -> Value:
        if len(self.items) != len(other.items) or self.is_list != other.is_list:
            return UNKNOWN
        return TupleVal(tuple(join(x, y) for x, y in zip(self.items, other.items, strict=True)), self.is_list)


@dataclass(frozen=True)
class ParamSet(TupleVal):
    """`pytest.param(*values, marks=..., id=...)`: its values, and whether a mark skips the
    case (True), may skip it for a reason about the kernel (None), or does not (False)."""

    skipped: bool | None = False


@dataclass(frozen=True)
class SkipMark(Value):
    """`pytest.mark.skip(...)`, `pytest.mark.skipif(cond, ...)`: as `ParamSet.skipped`."""

    skips: bool | None


@dataclass(frozen=True)
class SetVal(Value):
    """A set or frozenset of known items, as the right side of `in` and `not in` reads it
    (`dt not in {jnp.float16, ...}` guarding a skip), and the set operators. Nothing else
    reads it: its order, when iterated, is Python's to choose, and its length counts equal
    items once; but a dict's keys (`d.keys()`, `ordered`) are distinct, in the dict's order."""

    items: tuple[Value, ...]
    ordered: bool = False
    size: int = field(default=1, init=False, compare=False, repr=False)
    depth: int = field(default=1, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        _measure(self, self.items)


@dataclass(frozen=True)
class DictVal(Value):
    """A dict with known string keys (kwargs, `dict(a=1)`, `{"a": 1}`)."""

    items: tuple[tuple[str, Value], ...]
    size: int = field(default=1, init=False, compare=False, repr=False)
    depth: int = field(default=1, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        _measure(self, tuple(v for _, v in self.items))

    def get(self, key: str) -> Value | None:
        for k, v in self.items:
            if k == key:
                return v
        return None

    def without(self, key: str) -> DictVal:
        return DictVal(tuple((k, v) for k, v in self.items if k != key), origin=self.origin)


@dataclass(frozen=True)
class MapVal(Value):
    """A dict whose keys are not all strings, each a known value, in insertion order: a table
    from an operand's dtype to its accumulator's (`{jnp.int8: jnp.int32, jnp.bfloat16:
    jnp.float32}`). Every two of its keys were decided distinct when it was built; a key is
    looked up as Python does, by hash first (`Operators.member`: `x.dtype` does not find
    `jnp.int8`, though the two are `==`)."""

    items: tuple[tuple[Value, Value], ...]
    size: int = field(default=1, init=False, compare=False, repr=False)
    depth: int = field(default=1, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        _measure(self, tuple(part for entry in self.items for part in entry))

    @property
    def keys(self) -> tuple[Value, ...]:
        return tuple(k for k, _ in self.items)


# The containers the interpreter keeps as values, which Python changes in place (as a tuple:
# `A | B` in an `isinstance` builds a union each time it runs).
CONTAINERS = (DictVal, TupleVal, MapVal, SetVal)


def changes_in_place(value: Value) -> bool:
    """Whether a value is a container Python changes in place: a list, a dict or a set (a
    tuple is not; one object that two holders share is two equal values here)."""
    return isinstance(value, DictVal | MapVal | SetVal) or (isinstance(value, TupleVal) and value.is_list)


def dict_entries(mapping: DictVal | MapVal) -> list[tuple[Value, Value]]:
    """A dict's keys (a string key as a `Const`) and values, in order."""
    if isinstance(mapping, DictVal):
        return [(Const(k), v) for k, v in mapping.items]
    return list(mapping.items)


@dataclass(frozen=True)
class DType(Value):
    """A NumPy-style dtype: `jnp.int8`, `np.dtype("int8")`, `x.dtype`."""

    name: str
    # "type" for a scalar type (`jnp.int8`), "dtype" for a `np.dtype` object (`x.dtype`,
    # `jnp.dtype(t)`): equal under ==, never the same object under `is`.
    form: str = field(default="type", compare=False)

    @property
    def info(self) -> DTypeInfo:
        return DTYPES[self.name]

    def joined(self, other: DType) -> Value:
        return dtype_union(self, other)


@dataclass(frozen=True)
class DTypeSet(Unknown):
    """A dtype that is one of `names`, but which is not known: where paths that decided
    different dtypes meet (`jnp.int8 if flag else jnp.uint8`, a helper returning one of two).

    Unknown to every model and rule that asks for a dtype, as UNKNOWN is; a model may still
    answer what every member agrees on (`jnp.issubdtype`, the bit width), and the candidates of
    an operand whose dtype nobody decided are its members (`mmalint.checks.candidates`).
    `choices` says where each was decided.
    """

    names: frozenset[str] = frozenset()
    choices: tuple[tuple[str, Origin], ...] = field(default=(), compare=False, repr=False)

    def joined(self, other: DTypeSet) -> Value:
        return dtype_union(self, other)


def dtype_names(value: Value) -> frozenset[str] | None:
    """The dtypes a value may be: one for a DType, the members of a DTypeSet, else None."""
    if isinstance(value, DType):
        return frozenset((value.name,))
    if isinstance(value, DTypeSet):
        return value.names
    return None


def dtype_union(a: Value, b: Value) -> Value:
    """The join of two dtypes (or dtype sets): the set of both, with where each was decided."""
    names_a, names_b = dtype_names(a), dtype_names(b)
    if names_a is None or names_b is None:
        return UNKNOWN
    choices: list[tuple[str, Origin]] = []
    for value in (a, b):
        if isinstance(value, DTypeSet):
            choices.extend(value.choices)
        elif isinstance(value, DType) and value.origin is not None:
            choices.append((value.name, value.origin))
    unique = tuple({id(o): (n, o) for n, o in choices}.values())
    return DTypeSet(names_a | names_b, unique)


@dataclass(frozen=True)
class DTypeClass(Value):
    """An abstract dtype class for `jnp.issubdtype`: `jnp.integer`, `jnp.floating`..."""

    name: str


@dataclass(frozen=True)
class IrType(Value):
    """An MLIR element type: `ir.F32Type.get()`, `utils.dtype_to_ir_type(jnp.int8)`."""

    name: str

    @property
    def info(self) -> IrTypeInfo:
        return IR_TYPES[self.name]


@dataclass(frozen=True)
class IrValue(Value):
    """A scalar MLIR value (`utils.c(0, i32)`, `arith.constant(i32, 0)`): typed, no signedness."""

    type: Value


LayoutKind = Literal[
    "mma_lhs", "mma_rhs", "mma_acc", "wgmma", "wgmma_8bit", "strided", "splat", "other"
]


@dataclass(frozen=True)
class Layout(Value):
    """A register layout. MMA layouts depend only on operand bit width and m_warps."""

    kind: LayoutKind
    bits: int | None = None
    m_warps: int | None = None
    # A named layout (WGMMA_LAYOUT, Layout.MMA_LHS...): jax compares layouts, not names.
    name: str | None = field(default=None, compare=False)
    built: Origin | None = field(default=None, compare=False, repr=False)  # MMALayouts(...) call
    m_warps_origin: Origin | None = field(default=None, compare=False, repr=False)

    def joined(self, other: Layout) -> Value:
        if self.kind != other.kind:
            return UNKNOWN
        return Layout(
            self.kind,
            self.bits if self.bits == other.bits else None,
            self.m_warps if self.m_warps == other.m_warps else None,
        )


@dataclass(frozen=True)
class MMALayoutsVal(Value):
    """`mgpu.MMALayouts(T, m_warps=W)` (or `.for_shape`)."""

    bits: Value
    m_warps: Value
    m_warps_origin: Origin | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Fragment(Value):
    """A Mosaic GPU `FragmentedArray`.

    Each fact is a value with its own origin: `ir_type` (an IrType), `signed` (Const True/False/
    None: the `is_signed` it was built with), `layout`, `shape` (a TupleVal), and `data_dtype`,
    the dtype of the memory it was loaded from when known (int8 data loaded unsigned...).
    """

    ir_type: Value = UNKNOWN
    signed: Value = UNKNOWN
    layout: Value = UNKNOWN
    shape: Value = UNKNOWN
    data_dtype: Value = UNKNOWN
    created: Origin | None = field(default=None, compare=False, repr=False)
    how: str = field(default="", compare=False)  # "loaded", "splatted", "converted"...
    # The layout a `to_layout` / `layout_cast` converted from, when that is known, and where.
    converted_from: Value = field(default=UNKNOWN, compare=False)
    converted_at: Origin | None = field(default=None, compare=False, repr=False)
    # How the memory it was loaded from was viewed: "plain" (row-major, as a kernel argument
    # is), "transposed" (`memref_transpose(ref, (1, 0))`, `ref.T`), or None when unknown.
    view: str | None = None

    def joined(self, other: Fragment) -> Value:
        return Fragment(
            ir_type=join(self.ir_type, other.ir_type),
            signed=join(self.signed, other.signed),
            layout=join(self.layout, other.layout),
            shape=join(self.shape, other.shape),
            data_dtype=join(self.data_dtype, other.data_dtype),
            created=self.created,
            how=self.how,
            view=self.view if self.view == other.view else None,
        )


@dataclass(frozen=True)
class Array(Value):
    """A jax/NumPy array, a Pallas in-kernel array, or a `jax.ShapeDtypeStruct`."""

    dtype: Value = UNKNOWN
    shape: Value = UNKNOWN
    layout: Value = UNKNOWN
    created: Origin | None = field(default=None, compare=False, repr=False)
    how: str = field(default="", compare=False)
    converted_from: Value = field(default=UNKNOWN, compare=False)
    converted_at: Origin | None = field(default=None, compare=False, repr=False)
    view: str | None = None  # as Fragment.view, for `plgpu.load`
    # The `SwizzleTransform` of an SMEM scratch type (`plgpu.SMEM(..., transforms=...)`), bytes.
    swizzle: int | None = field(default=None, compare=False)
    # Its `TilingTransform` (the tile shape), when every one of its transforms is known.
    tiling: tuple[int, ...] | None = field(default=None, compare=False)
    # Of a TMEM scratch type (`plgpu.TMEM`, `mgpu.TMEM`): the packing of the TMEM layout it is
    # allocated with and whether it is collective, as values with where they were decided.
    packing: Value = field(default=UNKNOWN, compare=False)
    collective: Value = field(default=UNKNOWN, compare=False)

    def joined(self, other: Array) -> Value:
        return Array(
            dtype=join(self.dtype, other.dtype),
            shape=join(self.shape, other.shape),
            layout=join(self.layout, other.layout),
            created=self.created,
            how=self.how,
            view=self.view if self.view == other.view else None,
        )


@dataclass(frozen=True)
class Ref(Value):
    """A kernel memory reference (memref, Pallas Ref): dtype and shape, no signedness.

    `view` is "plain" for a kernel's own global-memory arguments (row-major), "transposed"
    once `memref_transpose(ref, (1, 0))` / `.T` swaps its last two axes, None when unknown
    (pipeline blocks, reshapes). Loading with an MMA operand layout depends on it.
    `space` is "smem" for shared-memory scratch a kernel declares (`plgpu.SMEM`, the SMEM
    scratch of `as_gpu_kernel`), allocated row-major: its view is what wgmma reads as K- or
    MN-major, and no load rule reads it (`arrays.load_view`).
    """

    dtype: Value = UNKNOWN
    shape: Value = UNKNOWN
    view: str | None = None
    space: str | None = None
    swizzle: int | None = None  # of SMEM scratch declared with a `SwizzleTransform`, in bytes
    # The `TilingTransform` of that scratch (of the buffer as allocated: views keep it).
    tiling: tuple[int, ...] | None = None
    # A TMEM ref's (`space="tmem"`) layout: the packing (elements per 32-bit TMEM cell) of the
    # default TMEM layout it has, UNKNOWN when that is not known or it has another layout;
    # and whether it was allocated collective. Each a Const with where it was decided.
    packing: Value = UNKNOWN
    collective: Value = UNKNOWN

    def joined(self, other: Ref) -> Value:
        return Ref(dtype=join(self.dtype, other.dtype), shape=join(self.shape, other.shape),
                   view=self.view if self.view == other.view else None,
                   space=self.space if self.space == other.space else None,
                   swizzle=self.swizzle if self.swizzle == other.swizzle else None,
                   tiling=self.tiling if self.tiling == other.tiling else None,
                   packing=join(self.packing, other.packing),
                   collective=join(self.collective, other.collective))


@dataclass(frozen=True)
class TmemLayout(Value):
    """A Mosaic GPU `TMEMLayout` (`tcgen05.tmem_default_layout(packing)`...): `kind` "default"
    (the layout of a 128-row TMEM ref, what `tcgen05.mma` expects of A) or "other" (half-lane,
    scales, a Pallas `plgpu.TMEMLayout` member), with its packing when known."""

    kind: str
    packing: Value = UNKNOWN


@dataclass(frozen=True)
class Api(Value):
    """A name from outside the module: a jax module, function, class or constant.

    `name` is canonical (re-exports resolved): `jax.experimental.mosaic.gpu.mma.mma`.
    """

    name: str
    is_module: bool = False


@dataclass(frozen=True)
class ProjectModule(Value):
    """A module (or package) of the checked tree, named by an import: its attributes are its
    globals, read from its source when first asked for (`analysis/program.py`)."""

    name: str  # dotted, as imported: `kernels.common`
    path: str  # its file (`__init__.py` for a package), or the directory of a namespace package


@dataclass(frozen=True)
class Semantics(Value):
    """A Pallas lowering semantics: "lane" or "warpgroup"."""

    name: str


@dataclass(frozen=True)
class CompilerParams(Value):
    semantics: Value = UNKNOWN


@dataclass(frozen=True)
class BlockSpecVal(Value):
    """`pl.BlockSpec(block_shape, index_map)` / `plgpu.BlockSpec`: the block a kernel body sees."""

    block_shape: Value = UNKNOWN


@dataclass(frozen=True, eq=False)
class Func(Value):
    """A function of the checked module, with its defining frame (closures)."""

    # Identity, not facts: two functions (or kernels, objects) are never the same value.
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    node: cst.FunctionDef | cst.Lambda
    block: Block
    closure: Any  # interpreter.Frame; Any to keep this layer free of the interpreter
    defaults: tuple[tuple[str, Value], ...] = ()
    qualname: str = ""
    owner: Any = None  # ClassVal for methods


@dataclass(frozen=True, eq=False)
class SuperOf(Value):
    """`super()` in a method of `owner` run for `obj` (its first argument: an object, or the
    class of a class method): attributes are looked up past `owner` in `obj`'s class's order."""

    # Identity, not facts: two functions (or kernels, objects) are never the same value.
    __eq__ = object.__eq__
    __hash__ = object.__hash__
    owner: ClassVal
    obj: Value


@dataclass(frozen=True)
class Getter(Value):
    """`operator.attrgetter("dtypes.acc")` (`attribute`) or `operator.itemgetter(k)`: calling it
    with an object gives that attribute path, or item, of it (`models/stdlib.py`)."""

    path: tuple[Value, ...]
    attribute: bool


@dataclass(frozen=True)
class LiteralType(Value):
    """`typing.Literal["bf16", "s8"]`: the values it admits, which `typing.get_args` gives."""

    values: tuple[Value, ...]


@dataclass(frozen=True)
class ContextFactory(Value):
    """A generator function `@contextlib.contextmanager` made a context manager of: calling it
    makes a `GeneratorContext` (`models/stdlib.py`)."""

    func: Value


@dataclass(frozen=True)
class GeneratorContext(Value):
    """A call of a `ContextFactory`: `value` is what `with ... as x` binds, the generator's one
    yield where it is sure, else UNKNOWN."""

    value: Value


@dataclass(frozen=True, eq=False)
class ArgParser(Value):
    """An `argparse.ArgumentParser` as the code sets it up (`models/commandline.py`): the
    options each sure `add_argument` gave it, in order, and `set_defaults`' defaults. Once
    something not modelled touches it (a call under a branch, a method not modelled, code no
    model knows it is handed to), `untouched` is cleared and what it parses is not known."""

    # Identity, not facts: two functions (or kernels, objects) are never the same value.
    __eq__ = object.__eq__
    __hash__ = object.__hash__
    options: Any = field(default_factory=list)  # list[commandline.Option]
    defaults: dict[str, Value] = field(default_factory=dict)
    untouched: bool = True

    def spoil(self) -> None:
        object.__setattr__(self, "untouched", False)  # (the parser changes, as the object does)


@dataclass(frozen=True, eq=False)
class Parametrize(Value):
    """`metafunc.parametrize` of the `metafunc` a `pytest_generate_tests` hook is given for
    one test (`interpreter/fixtures.py`): each call's arguments, and whether it was sure to
    run, are collected in `calls` as the hook runs."""

    # Identity, not facts: two functions (or kernels, objects) are never the same value.
    __eq__ = object.__eq__
    __hash__ = object.__hash__
    calls: Any  # list[tuple[Args, bool]]; Any to keep this layer free of the host


@dataclass(frozen=True)
class FixtureNames(Value):
    """`metafunc.fixturenames`: it holds the test's parameters; whether it holds another name
    (a fixture's own, an autouse fixture's) is not known."""

    names: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class BoundMethod(Value):

    # Identity, not facts: two functions (or kernels, objects) are never the same value.
    __eq__ = object.__eq__
    __hash__ = object.__hash__
    func: Func
    self_value: Value


@dataclass(frozen=True, eq=False)
class ClassVal(Value):

    # Identity, not facts: two functions (or kernels, objects) are never the same value.
    __eq__ = object.__eq__
    __hash__ = object.__hash__
    name: str
    block: Block | None
    bases: tuple[Value, ...]
    attrs: Any  # dict[str, Value | lazy]; mutable on purpose while the class body runs
    keywords: tuple[tuple[str, Value], ...] = ()


# The keyword of a class `collections.namedtuple` makes (`models/stdlib.py`): its fields.
NAMEDTUPLE_FIELDS = "namedtuple fields"


@dataclass(frozen=True, eq=False)
class Instance(Value):
    """An object of a class of the module. Its attribute dict is mutable, like the object."""

    # Identity, not facts: two functions (or kernels, objects) are never the same value.
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    cls: ClassVal
    attrs: dict[str, Value] = field(default_factory=dict, compare=False, repr=False)
    # Which run made it (`by_root.making`): a root's own object, or one roots share.
    born: int = field(default_factory=by_root.making, compare=False, repr=False)

    def joined(self, other: Instance) -> Value:
        return self if self.attrs is other.attrs else UNKNOWN  # one object, read on two paths


@dataclass(frozen=True)
class EnumMember(Value):
    """A member of an enum class of the module (`Precision.INT8`): its class, its name, its
    value, and what its class mixes in (`class Precision(str, enum.Enum)`: "str", an IntEnum
    "int", None), which decides whether it equals its raw value."""

    cls: ClassVal
    name: str
    value: Value = field(compare=False)
    mixin: str | None = field(default=None, compare=False)


@dataclass(frozen=True, eq=False)
class Partial(Value):
    """`functools.partial(f, *args, **kwargs)`."""

    # Identity, not facts: two functions (or kernels, objects) are never the same value.
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    func: Value
    args: tuple[Value, ...]
    kwargs: tuple[tuple[str, Value], ...]


@dataclass(frozen=True, eq=False)
class Kernel(Value):
    """A launchable kernel: `plgpu.kernel(body, ...)`, `pl.pallas_call(body, ...)`,
    `mgpu.as_gpu_kernel(body, ...)`, or a decorator still waiting for its body (`body` None)."""

    # Identity, not facts: two functions (or kernels, objects) are never the same value.
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    api: str
    body: Value | None
    kwargs: tuple[tuple[str, Value], ...]
    self_value: Value | None = None


def join(a: Value, b: Value) -> Value:
    """The value that is true of both `a` and `b` (control-flow merge); each kind says how
    two of its values join (`Value.joined`)."""
    if a == b:
        return a
    if type(a) is not type(b):
        # A dtype on one path and a set of them on another: the set of all.
        return dtype_union(a, b)
    return a.joined(b)


def as_int(value: Value) -> int | None:
    if isinstance(value, Const) and isinstance(value.value, int) and not isinstance(
        value.value, bool
    ):
        return value.value
    return None


def as_shape(value: Value) -> tuple[int | None, ...] | None:
    """A shape tuple with unknown dims as None, or None when even the rank is unknown."""
    if isinstance(value, TupleVal):
        return tuple(as_int(v) for v in value.items)
    return None


@dataclass(frozen=True, eq=False)
class Method(Value):
    """A method of a modelled value, not yet called: `frag.astype`, `ref.at`, `kwargs.pop`."""

    # Identity, not facts: two functions (or kernels, objects) are never the same value.
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    receiver: Value
    name: str


@dataclass(frozen=True, eq=False)
class RefAt(Value):
    """`ref.at`, waiting for its index."""

    # Identity, not facts: two functions (or kernels, objects) are never the same value.
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    ref: Value


@dataclass(frozen=True)
class Registers(Value):
    """`frag.registers`: the register array of a FragmentedArray, with its element type."""

    ir_type: Value
