"""`mgpu.FragmentedArray`: register arrays with an element type, signedness, layout and shape."""

from __future__ import annotations

import libcst as cst

from mmalint.analysis import names
from mmalint.analysis.host import (
    Bound,
    Call,
    Host,
    Model,
    ModelFn,
    Signature,
    attribute,
    binary,
    method,
    model,
    pattern,
    record_use,
    subscript,
    value_kinds,
)
from mmalint.analysis.models.arrays import (
    as_shape_value,
    index_shape,
    is_full_index,
    is_none,
    load_view,
    signed_arg,
    untiled_shape,
)
from mmalint.analysis.source import Block
from mmalint.analysis.values import (
    NONE,
    UNKNOWN,
    Array,
    Const,
    DType,
    Fragment,
    IrType,
    IrValue,
    Layout,
    Method,
    Ref,
    Registers,
    Value,
)


@model("mgpu.FragmentedArray", signature="(*, _registers, _layout, _is_signed)")
def _fragment_ctor(host: Host, args: Bound, call: Call) -> Value:
    registers = args["_registers"]
    return Fragment(
        registers.ir_type if isinstance(registers, Registers) else UNKNOWN,
        args["_is_signed"],
        args["_layout"],
        UNKNOWN,
        UNKNOWN,
        created=call.origin,
        how="built",
    )


def _load(layout_default: Layout | None, tiled: bool = False) -> ModelFn:
    def load(host: Host, args: Bound, call: Call) -> Value:
        ref = args["ref"]
        if args.given("layout"):
            layout = args["layout"]
        else:
            layout = layout_default if layout_default is not None and args.complete else UNKNOWN
        dtype = ref.dtype if isinstance(ref, Ref) else UNKNOWN
        ir_type: Value = UNKNOWN
        if isinstance(dtype, DType):
            ir_type = IrType(dtype.info.mlir, origin=dtype.origin)
        shape: Value = UNKNOWN
        view: str | None = None
        if isinstance(ref, Ref):
            shape = untiled_shape(ref.shape) if tiled else ref.shape
            if not tiled:
                view = load_view(ref, args)
        return Fragment(ir_type, signed_arg(args, "is_signed", call), layout, shape, dtype,
                        created=call.origin, how="loaded", view=view)

    return load


_LOAD = "(ref, ..., *, layout, is_signed, optimized)"
model("mgpu.FragmentedArray.load_untiled", signature=_LOAD)(_load(None))
model("mgpu.FragmentedArray.load_tiled", signature=_LOAD)(
    _load(Layout("mma_acc", None, 4, name="WGMMA_LAYOUT"), tiled=True)
)
model("mgpu.FragmentedArray.load_strided", signature=_LOAD)(_load(Layout("strided")))


@model("mgpu.FragmentedArray.splat", signature="(value, shape, layout=None, *, is_signed)")
def _splat(host: Host, args: Bound, call: Call) -> Value:
    value = args["value"]
    ir_type = value.type if isinstance(value, IrValue) else UNKNOWN
    layout = args["layout"]
    if is_none(layout):
        layout = Layout("splat")
    return Fragment(ir_type, signed_arg(args, "is_signed", call), layout, as_shape_value(args["shape"]),
                    UNKNOWN, created=call.origin, how="splatted")


@model("mgpu.FragmentedArray.broadcasted_iota", signature="(dtype, shape, dimension, layout=None, *, is_signed)")
def _iota(host: Host, args: Bound, call: Call) -> Value:
    layout = args["layout"]
    return Fragment(args["dtype"], signed_arg(args, "is_signed", call),
                    Layout("splat") if is_none(layout) else layout, as_shape_value(args["shape"]),
                    UNKNOWN, created=call.origin, how="built")


# ---------------------------------------------------------------------- from_tensor(x)
#
# No jax version has it (0.10-0.12: no `from_tensor` in `fragmented_array.py`, nor on
# `FragmentedArray`, nor in the package), but wrappers and user code do, and the mission's own
# example builds its accumulator as `fa.from_tensor(jnp.zeros((m, n), jnp.float32))`. A helper
# whose body the analysis reads is run as written (its body wins); this model is for a
# `from_tensor` it cannot read: a fragment of `x`'s dtype and shape, signed as `x`'s dtype is
# (`utils.is_signed`), in the layout passed as `layout=` (else unknown).

FROM_TENSOR = "from_tensor"
# The spellings in jax's own namespace: each is an AttributeError in every version (MMA501).
JAX_FROM_TENSOR = ("mgpu.from_tensor", "mgpu.FragmentedArray.from_tensor")
_FROM_TENSOR_SIGNATURE = "(x, ..., *, layout, is_signed)"
_UNDERSTOOD_KEYWORDS = frozenset({"layout", "is_signed"})
# Libraries whose `from_tensor` is something else (`tf.RaggedTensor.from_tensor`).
_FOREIGN_ROOTS = frozenset({"tensorflow", "tf", "torch"})
# A module that assigns jax's `from_tensor` itself (`fa.from_tensor = ...`, `setattr(...)`) has
# one after all: the call is then no AttributeError.
_MONKEYPATCHES = (".from_tensor =", ".from_tensor=", "'from_tensor'", '"from_tensor"')


def _from_tensor(host: Host, args: Bound, call: Call) -> Value:
    layout = args.keywords.get("layout", UNKNOWN)
    x = args["x"]
    understood = (
        args.complete
        and len(args.positional) == 1
        and set(args.keywords) <= _UNDERSTOOD_KEYWORDS
    )
    if not (understood and isinstance(x, Array) and isinstance(x.dtype, DType)):
        # Unknown `x` (or arguments a name cannot say the meaning of): an unknown fragment.
        return Fragment(UNKNOWN, UNKNOWN, layout, UNKNOWN, UNKNOWN, created=call.origin, how="created")
    dtype = x.dtype
    signed: Value = Const(dtype.info.is_signed, origin=dtype.origin)
    given = args.keywords.get("is_signed")
    if given is not None and given != signed:
        signed = UNKNOWN  # an `is_signed=` that says otherwise: what the helper does with it is unknown
    return Fragment(IrType(dtype.info.mlir, origin=dtype.origin), signed, layout, x.shape, UNKNOWN,
                    created=call.origin, how="created")


def _jax_from_tensor(name: str) -> ModelFn:
    def from_tensor(host: Host, args: Bound, call: Call) -> Value:
        # Read as an attribute (`fa.from_tensor(x)`): the AttributeError is raised at the call.
        # Imported by name, the `from ... import from_tensor` itself fails (an ImportError that
        # is no MMA finding), before any call.
        read = isinstance(call.node, cst.Call) and isinstance(call.node.func, cst.Attribute)
        if read and not any(host.mentions(text) for text in _MONKEYPATCHES):
            record_use(host, name, args, call)
        return _from_tensor(host, args, call)

    return from_tensor


for _name in JAX_FROM_TENSOR:
    model(_name, signature=_FROM_TENSOR_SIGNATURE)(_jax_from_tensor(_name))


_FROM_TENSOR_MODEL = Model(_from_tensor, Signature.parse(_FROM_TENSOR_SIGNATURE))


@pattern("")
def _named_from_tensor(name: str) -> Model | None:
    """`from_tensor` of a module or class the analysis cannot read (`mylib.from_tensor`,
    `wrappers.FragmentedArray.from_tensor`): the name says what it makes."""
    root = name.partition(".")[0]
    if not name.endswith("." + FROM_TENSOR) or root in _FOREIGN_ROOTS or names.is_library(name):
        return None
    return _FROM_TENSOR_MODEL


@attribute(Fragment)
def _fragment_attribute(host: Host, value: Value, attr: str, node: cst.CSTNode) -> Value:
    assert isinstance(value, Fragment)
    if attr == "mlir_dtype":
        return value.ir_type
    if attr == "is_signed":
        return value.signed
    if attr == "layout":
        return value.layout
    if attr == "shape":
        return value.shape
    if attr == "registers":
        return Registers(value.ir_type)
    return Method(value, attr)


@method(Fragment, "astype", signature="(new_dtype, *, is_signed)")
def _astype(host: Host, frag: Value, args: Bound, call: Call) -> Value:
    assert isinstance(frag, Fragment)
    return Fragment(args["new_dtype"], signed_arg(args, "is_signed", call), frag.layout, frag.shape,
                    UNKNOWN, created=call.origin, how="converted")


@method(Fragment, "to_layout", signature="(new_layout)")
def _to_layout(host: Host, frag: Value, args: Bound, call: Call) -> Value:
    assert isinstance(frag, Fragment)
    return Fragment(frag.ir_type, frag.signed, args["new_layout"], frag.shape, frag.data_dtype,
                    created=frag.created, how=frag.how, converted_from=frag.layout,
                    converted_at=call.origin)


@method(Fragment, "bitcast", signature="(elt, *, output_is_signed)")
def _bitcast(host: Host, frag: Value, args: Bound, call: Call) -> Value:
    assert isinstance(frag, Fragment)
    return Fragment(args["elt"], signed_arg(args, "output_is_signed", call), frag.layout, UNKNOWN,
                    UNKNOWN, created=call.origin, how="bitcast")


@method(Fragment, "copy", signature="(...)")
def _copy(host: Host, frag: Value, args: Bound, call: Call) -> Value:
    return frag


@method(Fragment, "reshape", "broadcast", "broadcast_minor", "broadcast_in_dim", "transpose",
        signature="(...)")
def _reshape(host: Host, frag: Value, args: Bound, call: Call) -> Value:
    assert isinstance(frag, Fragment)
    return Fragment(frag.ir_type, frag.signed, UNKNOWN, UNKNOWN, frag.data_dtype,
                    created=frag.created, how=frag.how)


@method(Fragment, "foreach", signature="(...)", prefix="store")
def _store(host: Host, frag: Value, args: Bound, call: Call) -> Value:
    return NONE


@subscript(Fragment)
def _fragment_subscript(value: Value, index: Value, node: cst.CSTNode, block: Block) -> Value:
    assert isinstance(value, Fragment)
    full = is_full_index(index)
    return Fragment(value.ir_type, value.signed, value.layout if full else UNKNOWN,
                    index_shape(value.shape, index), value.data_dtype, created=value.created,
                    how=value.how)


@binary(Fragment, precedence=1)  # `frag * array` is a fragment
def _fragment_binary(op: str, left: Value, right: Value) -> Value:
    frag = left if isinstance(left, Fragment) else right
    assert isinstance(frag, Fragment)
    return Fragment(frag.ir_type, frag.signed, frag.layout, frag.shape, UNKNOWN, created=frag.created,
                    how=frag.how)


value_kinds(Fragment, truthy=True, unary_keeps=True)
