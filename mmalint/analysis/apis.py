"""Models of the jax, NumPy and Python APIs the interpreter understands.

Each model maps abstract arguments to an abstract result and records where facts were decided.
An API without a model returns `UNKNOWN`; functions passed to it are still analysed, blind.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import libcst as cst

from mmalint.analysis import bounds, names
from mmalint.analysis.calls import ApiUse, MmaSite, SiteOperand
from mmalint.analysis.dtypes import DTYPE_CLASSES, IR_TYPE_CLASSES, IR_TYPES, lookup_dtype
from mmalint.analysis.values import (
    FALSE,
    NONE,
    TRUE,
    UNKNOWN,
    Api,
    Array,
    BlockSpecVal,
    BoundMethod,
    ClassVal,
    CompilerParams,
    Const,
    DictVal,
    DType,
    DTypeClass,
    Fragment,
    Func,
    Instance,
    IrType,
    IrValue,
    Kernel,
    Layout,
    LayoutKind,
    Method,
    MMALayoutsVal,
    Origin,
    Partial,
    Ref,
    RefAt,
    Registers,
    Semantics,
    SomeInt,
    TupleVal,
    Unknown,
    Value,
    as_int,
    join,
)

if TYPE_CHECKING:
    from mmalint.analysis.interpreter import Args, Frame, Interpreter
    from mmalint.analysis.source import Block

Handler = Callable[["Args", cst.CSTNode, "Frame", "Block"], Value]

MMA_APIS = frozenset({"mgpu.mma", "plgpu.mma"})

_NAMED_LAYOUTS: dict[str, tuple[LayoutKind, int | None, int | None]] = {
    # WGMMA_LAYOUT is the m_warps=4 MMA accumulator layout (jax compares them equal).
    "mgpu.WGMMA_LAYOUT": ("mma_acc", None, 4),
    "mgpu.WGMMA_LAYOUT_8BIT": ("wgmma_8bit", 8, None),
    "plgpu.Layout.WGMMA": ("mma_acc", None, 4),
    "plgpu.Layout.WGMMA_8BIT": ("wgmma_8bit", 8, None),
}

_DTYPE_NAMESPACES = ("jnp.", "np.", "ml_dtypes.", "jax.dtypes.")

_SEMANTICS = {"Lane": "lane", "Warpgroup": "warpgroup"}


def _origin(block: Block, node: cst.CSTNode) -> Origin:
    return Origin(block, node)


class ApiModel:
    """The API models, bound to one interpreter."""

    def __init__(self, interp: Interpreter) -> None:
        self.interp = interp
        self.handlers: dict[str, Handler] = {}
        # Without jax_enable_x64, jax turns 64-bit dtypes into 32-bit ones; the setting can also
        # come from the environment, so a 64-bit jax dtype is known only where the file enables it.
        self.x64 = "enable_x64" in interp.source.text
        self._register()

    def jax_dtype(self, dtype: Value) -> Value:
        """The dtype a jax array really gets for a requested dtype."""
        if isinstance(dtype, DType) and dtype.info.bits == 64 and not self.x64:
            return UNKNOWN
        if isinstance(dtype, DType) and dtype.name == "complex128" and not self.x64:
            return UNKNOWN
        return dtype

    # ------------------------------------------------------------------ names

    def builtin(self, name: str) -> Value:
        if name in _BUILTINS:
            return Api(f"builtins.{name}")
        return UNKNOWN

    def api_value(self, name: str, is_module: bool) -> Value:
        """The value a canonical name denotes: a dtype, a layout constant, or the API itself."""
        if is_module:
            return Api(name, True)
        for prefix in _DTYPE_NAMESPACES:
            if name.startswith(prefix):
                attr = name[len(prefix) :]
                info = lookup_dtype(attr)
                if info is not None and attr not in ("dtype",):
                    return DType(info.name)
                if attr in DTYPE_CLASSES:
                    return DTypeClass(attr)
        if name in _NAMED_LAYOUTS:
            kind, bits, m_warps = _NAMED_LAYOUTS[name]
            return Layout(kind, bits, m_warps, name=name.split(".", 1)[1])
        if name.startswith(("plgpu.LoweringSemantics.", "mgpu.LoweringSemantics.")):
            member = name.rsplit(".", 1)[1]
            if member in _SEMANTICS:
                return Semantics(_SEMANTICS[member])
        if name in ("typing.TYPE_CHECKING", "TYPE_CHECKING"):
            return Api("typing.TYPE_CHECKING")
        return Api(name)

    # ------------------------------------------------------------------ attributes

    def getattr(self, value: Value, attr: str, node: cst.CSTNode) -> Value:
        if isinstance(value, Api):
            if value.is_module:
                name, is_module = names.attribute(value.name, attr)
                return self.api_value(name, is_module)
            return self.api_value(f"{value.name}.{attr}", False)
        if isinstance(value, DType):
            info = value.info
            if attr == "itemsize":
                return Const(max(info.bits // 8, 1))
            if attr == "name":
                return Const(info.name)
            if attr in ("type", "dtype"):
                return value
            if attr == "kind":
                return Const({"int": "i", "uint": "u", "bool": "b", "float": "f", "complex": "c"}[info.kind])
            return UNKNOWN
        if isinstance(value, IrType):
            if attr == "width":
                return Const(value.info.bits)
            return UNKNOWN
        if isinstance(value, IrValue):
            return value.type if attr == "type" else UNKNOWN
        if isinstance(value, MMALayoutsVal):
            if attr in ("lhs", "rhs", "acc"):
                bits = as_int(value.bits)
                m_warps = as_int(value.m_warps)
                kinds: dict[str, LayoutKind] = {"lhs": "mma_lhs", "rhs": "mma_rhs", "acc": "mma_acc"}
                kind = kinds[attr]
                return Layout(
                    kind,
                    bits if attr != "acc" else None,
                    m_warps,
                    name=f"MMALayouts.{attr}",
                    built=value.origin,
                    m_warps_origin=value.m_warps_origin,
                )
            return UNKNOWN
        if isinstance(value, Fragment):
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
        if isinstance(value, Array | Ref):
            # Arrays and refs answer alike; `x.at[idx]` is a view of a ref or `.set(...)` of an array.
            if attr == "dtype":
                return _as_dtype_object(value.dtype)
            if attr == "shape":
                return value.shape
            if attr == "ndim":
                return _len_of(value.shape)
            if attr == "T":
                if isinstance(value, Ref):
                    return Ref(value.dtype, _reversed_shape(value.shape), view=_transposed_view(value, None))
                return Array(value.dtype, _reversed_shape(value.shape), UNKNOWN, value.created, value.how)
            if attr == "at":
                return RefAt(value)
            return Method(value, attr)
        if isinstance(value, Instance):
            if attr in value.attrs:
                return value.attrs[attr]
            found = self.interp.class_attr(value.cls, attr)
            if isinstance(found, Func):
                if found.owner is None:
                    return found
                return BoundMethod(found, value)
            if found is not None:
                return found
            return self._unresolved_instance_attr(value, attr)
        if isinstance(value, ClassVal):
            found = self.interp.class_attr(value, attr)
            return found if found is not None else UNKNOWN
        if isinstance(value, RefAt) and isinstance(value.ref, Array):
            return Method(value, attr)
        if isinstance(value, CompilerParams):
            return value.semantics if attr == "lowering_semantics" else UNKNOWN
        if isinstance(value, BlockSpecVal):
            return value.block_shape if attr == "block_shape" else UNKNOWN
        if isinstance(value, DictVal | TupleVal):
            return Method(value, attr)
        if isinstance(value, Unknown):
            return Method(value, attr) if attr in _UNKNOWN_RECEIVER_METHODS else UNKNOWN
        return UNKNOWN

    def _unresolved_instance_attr(self, value: Instance, attr: str) -> Value:
        # Test classes built on jax's PallasTest call `self.kernel(...)` / `self.pallas_call(...)`,
        # thin wrappers of plgpu.kernel / pl.pallas_call whose definition may live elsewhere.
        if attr == "kernel":
            return Kernel("plgpu.kernel", None, (("compiler_params", UNKNOWN),))
        if attr == "pallas_call":
            return Api("pl.pallas_call.unknown_params")
        return UNKNOWN

    # ------------------------------------------------------------------ operators

    def truth(self, value: Value) -> bool | None:
        if isinstance(value, Const):
            try:
                return bool(value.value)
            except Exception:
                return None
        if isinstance(value, TupleVal):
            return bool(value.items)
        if isinstance(value, DictVal):
            return bool(value.items)
        if isinstance(value, Api) and value.name == "typing.TYPE_CHECKING":
            return True
        if isinstance(
            value,
            DType | DTypeClass | IrType | Layout | MMALayoutsVal | Func | ClassVal | Kernel
            | Semantics | CompilerParams | Ref | Fragment | IrValue,
        ):
            return True
        return None

    def compare(self, op: str, left: Value, right: Value) -> bool | None:
        if op in ("Equal", "NotEqual"):
            eq = self._equal(left, right)
            if eq is None:
                return None
            return eq if op == "Equal" else not eq
        if op in ("Is", "IsNot"):
            same: bool | None
            if isinstance(left, Const) and isinstance(right, Const):
                same = left.value is right.value or (
                    left.value is None and right.value is None
                )
            elif _is_none(left) or _is_none(right):
                other = right if _is_none(left) else left
                same = False if other.known and not isinstance(other, Unknown | Instance) else None
                if _is_none(left) and _is_none(right):
                    same = True
            elif isinstance(left, DType) and isinstance(right, DType):
                # `np.dtype("int8") is jnp.int8` is False: a dtype object is not a scalar type.
                same = left.form == right.form and left.name == right.name
            elif isinstance(left, Semantics) and isinstance(right, Semantics):
                same = left.name == right.name
            else:
                same = None
            if same is None:
                return None
            return same if op == "Is" else not same
        if op in ("In", "NotIn"):
            items = self.iterate(right)
            if items is None:
                if isinstance(right, Const) and isinstance(right.value, str) and isinstance(
                    left, Const
                ):
                    try:
                        found = left.value in right.value
                    except TypeError:
                        return None
                    return found if op == "In" else not found
                return None
            results = [self._equal(left, item) for item in items]
            if any(r is True for r in results):
                found_any = True
            elif all(r is False for r in results):
                found_any = False
            else:
                return None
            return found_any if op == "In" else not found_any
        if isinstance(left, Const) and isinstance(right, Const):
            fn = {
                "LessThan": operator.lt,
                "GreaterThan": operator.gt,
                "LessThanEqual": operator.le,
                "GreaterThanEqual": operator.ge,
            }.get(op)
            if fn is None:
                return None
            try:
                return bool(fn(left.value, right.value))
            except Exception:
                return None
        return None

    def _equal(self, left: Value, right: Value) -> bool | None:
        if isinstance(left, Unknown) or isinstance(right, Unknown):
            return None
        if isinstance(left, DType) and isinstance(right, Const) and isinstance(right.value, str):
            info = lookup_dtype(right.value)
            return info is not None and info.name == left.name
        if isinstance(right, DType) and isinstance(left, Const) and isinstance(left.value, str):
            return self._equal(right, left)
        comparable = (Const, DType, DTypeClass, IrType, Semantics, Layout, TupleVal)
        if isinstance(left, comparable) and isinstance(right, comparable):
            if type(left) is not type(right):
                if isinstance(left, Const) and left.value is None:
                    return False
                if isinstance(right, Const) and right.value is None:
                    return False
                if isinstance(left, Const) or isinstance(right, Const):
                    return False
                return False
            if isinstance(left, TupleVal) and isinstance(right, TupleVal):
                if len(left.items) != len(right.items):
                    return False
                parts = [self._equal(a, b) for a, b in zip(left.items, right.items, strict=True)]
                if any(p is False for p in parts):
                    return False
                return True if all(p is True for p in parts) else None
            if (
                isinstance(left, Layout)
                and isinstance(right, Layout)
                and left.kind == right.kind
                and None in (left.bits, right.bits, left.m_warps, right.m_warps)
            ):
                return None
            if isinstance(left, Const) and isinstance(right, Const):
                try:
                    return bool(left.value == right.value)
                except Exception:
                    return None
            return left == right
        if isinstance(left, Api) and isinstance(right, Api) and not (left.is_module or right.is_module):
            return True if left.name == right.name else None
        return None

    def binary(self, op: str | None, left: Value, right: Value, node: cst.CSTNode) -> Value:
        if op is None:
            return UNKNOWN
        if isinstance(left, Const) and isinstance(right, Const):
            fn = _CONST_OPS.get(op)
            if fn is None:
                return UNKNOWN
            try:
                if op == "**" and isinstance(right.value, int) and abs(right.value) > 64:
                    return UNKNOWN
                if not bounds.affordable(op, left.value, right.value):
                    return UNKNOWN  # priced before it is done: `'a' * 10**9`, `1 << 10**10`
                result = fn(left.value, right.value)
            except Exception:
                return UNKNOWN
            if isinstance(result, int) and abs(result) > 1 << 64:
                return UNKNOWN
            return Const(result)
        if isinstance(left, TupleVal) and isinstance(right, TupleVal) and op == "+":
            return TupleVal(left.items + right.items, left.is_list)
        if isinstance(left, TupleVal) and isinstance(right, Const) and op == "*":
            count = right.value
            if isinstance(count, int) and 0 <= count * len(left.items) <= 256:
                return TupleVal(left.items * count, left.is_list)
            return UNKNOWN
        if isinstance(left, Fragment):
            return Fragment(left.ir_type, left.signed, left.layout, left.shape, UNKNOWN,
                            created=left.created, how=left.how)
        if isinstance(right, Fragment):
            return Fragment(right.ir_type, right.signed, right.layout, right.shape, UNKNOWN,
                            created=right.created, how=right.how)
        if isinstance(left, Array) or isinstance(right, Array):
            return _array_binary(op, left, right)
        return UNKNOWN

    def unary(self, op: str, operand: Value) -> Value:
        if op == "Not":
            truth = self.truth(operand)
            return UNKNOWN if truth is None else Const(not truth)
        if isinstance(operand, Const) and isinstance(operand.value, int | float):
            if op == "Minus":
                return Const(-operand.value)
            if op == "Plus":
                return operand
            if op == "BitInvert" and isinstance(operand.value, int):
                return Const(~operand.value)
        if isinstance(operand, Fragment | Array):
            return operand
        return UNKNOWN

    def iterate(self, value: Value) -> list[Value] | None:
        if isinstance(value, TupleVal):
            return list(value.items)
        if isinstance(value, DictVal):
            return [Const(k) for k, _ in value.items]
        return None

    def subscript(self, value: Value, index: Value, node: cst.CSTNode, block: Block) -> Value:
        if isinstance(value, TupleVal):
            i = as_int(index)
            if i is not None:
                if -len(value.items) <= i < len(value.items):
                    return value.items[i]
                return UNKNOWN
            if isinstance(index, TupleVal) and index.items and index.items[0] == Const("slice"):
                bounds = [b.value if isinstance(b, Const) else ... for b in index.items[1:]]
                ints = [b for b in bounds if b is None or isinstance(b, int)]
                if len(ints) == len(bounds):
                    lo, hi, step = ([*ints, None, None, None])[:3]
                    return TupleVal(value.items[slice(lo, hi, step)], value.is_list)
            return UNKNOWN
        if isinstance(value, DictVal) and isinstance(index, Const) and isinstance(index.value, str):
            found = value.get(index.value)
            return found if found is not None else UNKNOWN
        if isinstance(value, Ref):
            return Array(value.dtype, index_shape(value.shape, index), UNKNOWN,
                         created=_origin(block, node), how="read")
        if isinstance(value, RefAt):
            ref = value.ref
            if isinstance(ref, Ref):
                return Ref(ref.dtype, index_shape(ref.shape, index), view=_indexed_view(ref, index))
            if isinstance(ref, Array):
                return value
            return UNKNOWN
        if isinstance(value, Array):
            return Array(value.dtype, index_shape(value.shape, index), UNKNOWN,
                         created=value.created, how=value.how)
        if isinstance(value, Fragment):
            full = _is_full_index(index)
            return Fragment(value.ir_type, value.signed, value.layout if full else UNKNOWN,
                            index_shape(value.shape, index), value.data_dtype,
                            created=value.created, how=value.how)
        return UNKNOWN

    # ------------------------------------------------------------------ calls

    def call(
        self, callee: Value, args: Args, node: cst.CSTNode, frame: Frame, block: Block
    ) -> Value:
        if isinstance(callee, Api):
            handler = self.handlers.get(callee.name)
            if handler is None:
                handler = self._pattern_handler(callee.name)
            if handler is not None:
                return handler(args, node, frame, block)
            self.interp.note_escaped([*args.positional, *args.keywords.values()])
            return UNKNOWN
        if isinstance(callee, Method):
            return self._call_method(callee, args, node, frame, block)
        if isinstance(callee, Kernel):
            return self._call_kernel(callee, args, node, frame, block)
        self.interp.note_escaped([*args.positional, *args.keywords.values()])
        return UNKNOWN

    def _pattern_handler(self, name: str) -> Handler | None:
        # `ir.F32Type.get()`, `ir.Float8E4M3FNType.get()`...
        if name.startswith("ir.") and name.endswith(".get"):
            cls = name[3:-4]
            if cls in IR_TYPE_CLASSES:
                ir_name = IR_TYPE_CLASSES[cls]
                return lambda args, node, frame, block: IrType(ir_name)
        if name.startswith("ir.") and name.endswith(".isinstance"):
            cls = name[3:-11]
            return lambda args, node, frame, block: _ir_isinstance(args.get(0, "other"), cls)
        # `ir.IntegerType(t)` casts; the type is unchanged.
        if name.startswith("ir.") and name[3:] in (*IR_TYPE_CLASSES, "IntegerType", "FloatType", "Type"):
            return lambda args, node, frame, block: args.get(0, "cast_from")
        # `plgpu.Layout.MMA_LHS(dtype)`, `plgpu.Layout.WG_STRIDED(...)`...
        if name.startswith("plgpu.Layout."):
            member = name[len("plgpu.Layout.") :]

            def layout(args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
                if member.startswith("MMA_"):
                    self._use(name, args, node, block)
                return _pallas_layout(member, args, block, node)

            return layout
        return None

    def _register(self) -> None:
        h = self.handlers
        for ns in ("jnp", "np"):
            h[f"{ns}.dtype"] = self._dtype
            h[f"{ns}.issubdtype"] = self._issubdtype
            default = "float32" if ns == "jnp" else "float64"
            jax_ns = ns == "jnp"
            for creator in ("zeros", "ones", "empty"):
                h[f"{ns}.{creator}"] = self._creator(0, 1, default, jax_ns)
            h[f"{ns}.full"] = self._creator(0, 2, None, jax_ns)
            for like in ("zeros_like", "ones_like", "empty_like"):
                h[f"{ns}.{like}"] = self._like(dtype_index=1, jax_ns=jax_ns)
            h[f"{ns}.full_like"] = self._like(dtype_index=2, jax_ns=jax_ns)
            for conv in ("array", "asarray"):
                h[f"{ns}.{conv}"] = self._like(dtype_index=1, same_dtype=False, jax_ns=jax_ns)
            for keep in ("transpose", "swapaxes", "pad", "concatenate", "stack", "reshape",
                         "broadcast_to", "flip", "roll", "tile", "repeat", "squeeze",
                         "expand_dims", "moveaxis"):
                h[f"{ns}.{keep}"] = self._keeps_dtype
            h[f"{ns}.arange"] = self._arange
            h[f"{ns}.dot"] = self._dot
            h[f"{ns}.matmul"] = self._dot
        h["jnp.promote_types"] = self._promote_types
        h["jnp.result_type"] = self._result_type
        h["lax.collapse"] = self._keeps_dtype
        h["lax.reshape"] = self._keeps_dtype
        h["lax.transpose"] = self._keeps_dtype
        h["jax.dtypes.itemsize_bits"] = self._bits_of_dtype
        h["jax.dtypes.bit_width"] = self._bits_of_dtype
        h["jax.ShapeDtypeStruct"] = self._shape_dtype_struct
        h["mgpu.ShapeDtypeStruct"] = self._shape_dtype_struct
        for fn in ("uniform", "normal", "truncated_normal"):
            h[f"jax.random.{fn}"] = self._random(dtype_default="float32")
        h["jax.random.randint"] = self._random(dtype_default="int32", dtype_index=4)
        h["jax.random.bits"] = self._random(dtype_default="uint32", dtype_index=2)
        # NumPy's generators: `np.random.default_rng(seed)` (jax's tests keep it as self.prng)
        # and the legacy module functions. Arrays of the `size` shape, float64 or int64.
        for ctor in ("default_rng", "RandomState", "Generator"):
            h[f"np.random.{ctor}"] = self._numpy_rng
        for owner in (_NUMPY_RNG, "np.random"):
            for fn in ("uniform", "normal"):
                h[f"{owner}.{fn}"] = self._numpy_random("float64", size_index=2)
            for fn in ("standard_normal", "random", "random_sample"):
                h[f"{owner}.{fn}"] = self._numpy_random("float64", size_index=0, dtype_index=1)
            for fn in ("integers", "randint"):
                h[f"{owner}.{fn}"] = self._numpy_random("int64", size_index=2, dtype_index=3)
            for fn in ("rand", "randn"):
                h[f"{owner}.{fn}"] = self._numpy_random("float64", size_index=None)
        # mlir / mosaic utils
        h["ir.IntegerType.get_signless"] = self._integer_type
        h["mgpu.utils.dtype_to_ir_type"] = self._dtype_to_ir_type
        h["jax.mlir.dtype_to_ir_type"] = self._dtype_to_ir_type
        h["mgpu.utils.is_signed"] = self._is_signed
        h["mgpu.utils.bitwidth"] = self._bitwidth(1)
        h["mgpu.utils.bytewidth"] = self._bitwidth(8)
        h["mgpu.utils.c"] = self._constant(value_index=0, type_index=1, type_kw="ty")
        h["arith.constant"] = self._constant(value_index=1, type_index=0, type_kw="result")
        h["mgpu.utils.memref_transpose"] = self._memref_transpose
        h["mgpu.utils.memref_slice"] = self._memref_slice
        h["mgpu.utils.tile_shape"] = self._tile_shape
        for fn in ("memref_fold", "memref_unfold", "memref_unsqueeze"):
            h[f"mgpu.utils.{fn}"] = self._memref_same_dtype
        for ds in ("pl.ds", "pl.dslice", "mgpu.utils.ds", "plgpu.ds"):
            h[ds] = self._dynamic_slice
        h["mgpu.utils.memref_reshape"] = self._memref_reshape
        # Mosaic GPU
        h["mgpu.MMALayouts"] = self._mma_layouts
        h["mgpu.MMALayouts.for_shape"] = self._mma_layouts_for_shape
        h["mgpu.FragmentedArray"] = self._fragment_ctor
        h["mgpu.FragmentedArray.load_untiled"] = self._load(layout_default=None, how="loaded")
        h["mgpu.FragmentedArray.load_tiled"] = self._load(
            layout_default=Layout("mma_acc", None, 4, name="WGMMA_LAYOUT"), how="loaded", tiled=True
        )
        h["mgpu.FragmentedArray.load_strided"] = self._load(
            layout_default=Layout("strided"), how="loaded"
        )
        h["mgpu.FragmentedArray.splat"] = self._splat
        h["mgpu.FragmentedArray.broadcasted_iota"] = self._iota
        h["mgpu.WGStridedFragLayout"] = lambda a, n, f, b: Layout("strided")
        h["mgpu.WGStridedFragLayout.from_shaped_type"] = lambda a, n, f, b: Layout("strided")
        h["mgpu.WGSplatFragLayout"] = lambda a, n, f, b: Layout("splat")
        h["mgpu.TiledLayout"] = lambda a, n, f, b: Layout("other")
        h["mgpu.mma"] = self._mma("mgpu.mma")
        h["mgpu.as_gpu_kernel"] = self._as_gpu_kernel
        # Pallas
        h["plgpu.mma"] = self._mma("plgpu.mma")
        h["plgpu.layout_cast"] = self._layout_cast
        h["plgpu.load"] = self._pallas_load
        h["plgpu.kernel"] = self._kernel_factory("plgpu.kernel")
        h["pl.pallas_call"] = self._kernel_factory("pl.pallas_call")
        h["pl.pallas_call.unknown_params"] = self._kernel_factory("pl.pallas_call", blind=True)
        h["plgpu.emit_pipeline"] = self._kernel_factory("plgpu.emit_pipeline")
        h["plgpu.CompilerParams"] = self._compiler_params
        for spec in ("pl.BlockSpec", "plgpu.BlockSpec"):
            h[spec] = lambda a, n, f, b: BlockSpecVal(a.get(0, "block_shape", NONE))
        for scratch in ("plgpu.SMEM", "plgpu.GMEM", "plgpu.ACC", "plgpu.TMEM", "pl.MemoryRef"):
            h[scratch] = self._scratch
        h["pl.run_scoped"] = self._run_scoped
        h["pl.when"] = self._when
        h["mgpu.utils.when"] = self._when
        for loop in ("plgpu.nd_loop", "pl.loop", "plgpu.dynamic_scheduling_loop", "pl.core_map",
                     "mgpu.utils.fori", "plgpu.kernel.body"):
            h[loop] = self._blind_decorator
        h["lax.fori_loop"] = self._fori_loop
        # Python
        h["functools.partial"] = self._partial
        h["functools.cache"] = lambda a, n, f, b: a.get(0, "user_function")
        h["functools.lru_cache"] = self._lru_cache
        h["itertools.product"] = self._product
        h["plgpu.transpose_ref"] = self._transpose_ref
        h["plgpu.as_torch_kernel"] = self._as_torch_kernel
        h["functools.wraps"] = lambda a, n, f, b: Api("builtins.identity_decorator")
        h["builtins.identity_decorator"] = lambda a, n, f, b: a.get(0, "f")
        h["jax.jit"] = self._jit
        h["jax.named_call"] = self._jit
        h["dataclasses.replace"] = self._dataclass_replace
        h["pytest.param"] = lambda a, n, f, b: TupleVal(tuple(a.positional))
        for name in _BUILTINS:
            handler = getattr(self, f"_builtin_{name}", None)
            if handler is not None:
                h[f"builtins.{name}"] = handler
        h["math.prod"] = self._math(lambda *xs: math.prod(xs))
        h["math.ceil"] = self._math(math.ceil)
        h["math.gcd"] = self._math(math.gcd)
        h["math.lcm"] = self._math(math.lcm)

    # ------------------------------------------------------------------ dtype helpers

    def _dtype(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        given = args.get(0, "dtype")
        d = _to_dtype(given)
        if isinstance(d, DType):
            # `jnp.dtype("int8")` decides the dtype right here; `jnp.dtype(dtype)` passes on where
            # `dtype` was decided (a parameter world, a constant...).
            origin = _origin(block, node) if isinstance(given, Const) else d.origin
            return DType(d.name, "dtype", origin=origin)
        return d

    def _issubdtype(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        d = _to_dtype(args.get(0, "arg1"))
        cls = args.get(1, "arg2")
        if not isinstance(d, DType):
            return UNKNOWN
        if isinstance(cls, DTypeClass):
            return Const(d.info.kind in DTYPE_CLASSES[cls.name])
        other = _to_dtype(cls)
        if isinstance(other, DType):
            return Const(other.name == d.name)
        return UNKNOWN

    def _bits_of_dtype(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        d = _to_dtype(args.get(0, "dtype"))
        return Const(d.info.bits) if isinstance(d, DType) else UNKNOWN

    def _creator(self, shape_index: int, dtype_index: int, default: str | None, jax_ns: bool) -> Handler:
        def handler(args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
            dtype = _to_dtype(args.get(dtype_index, "dtype", NONE))
            if _is_none(dtype):
                if default is None or not args.complete:
                    dtype = UNKNOWN
                else:
                    dtype = DType(default, origin=_origin(block, node))
            if jax_ns:
                dtype = self.jax_dtype(dtype)
            shape = _as_shape_value(args.get(shape_index, "shape"))
            # A constant array in a Pallas kernel lowers to a splat: it takes any layout.
            layout: Value = Layout("splat") if self.interp.context.in_kernel and jax_ns else UNKNOWN
            return Array(dtype, shape, layout, created=_origin(block, node), how="created")

        return handler

    def _like(self, dtype_index: int, same_dtype: bool = True, jax_ns: bool = False) -> Handler:
        def handler(args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
            src = args.get(0, "a" if same_dtype else "object")
            dtype = _to_dtype(args.get(dtype_index, "dtype", NONE))
            shape: Value = UNKNOWN
            if isinstance(src, Array | Ref):
                shape = src.shape
            if _is_none(dtype):
                dtype = src.dtype if isinstance(src, Array | Ref) else UNKNOWN
            if jax_ns:
                dtype = self.jax_dtype(dtype)
            return Array(dtype, shape, UNKNOWN, created=_origin(block, node), how="created")

        return handler

    def _keeps_dtype(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        """`jnp.transpose(x)`, `jnp.pad(x, ...)`, `lax.collapse(x, ...)`: x's dtype, new shape."""
        src = args.get(0, "a")
        if isinstance(src, TupleVal):  # jnp.concatenate([x, y]), jnp.stack((x, y))
            dtypes = {i.dtype for i in src.items if isinstance(i, Array)}
            dtype = dtypes.pop() if len(dtypes) == 1 and all(isinstance(i, Array) for i in src.items) else UNKNOWN
        else:
            dtype = src.dtype if isinstance(src, Array) else UNKNOWN
        return Array(dtype, UNKNOWN, UNKNOWN, created=_origin(block, node), how="created")

    def _promote_types(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        return _promoted([args.get(0, "a"), args.get(1, "b")], _origin(block, node))

    def _result_type(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        if args.keywords or not args.complete or not args.positional:
            return UNKNOWN
        parts = [v.dtype if isinstance(v, Array | Ref) else v for v in args.positional]
        return _promoted(parts, _origin(block, node))

    def _arange(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        dtype = _to_dtype(args.keywords.get("dtype", NONE))
        return Array(UNKNOWN if _is_none(dtype) else dtype, UNKNOWN, UNKNOWN,
                     created=_origin(block, node), how="created")

    def _dot(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        preferred = _to_dtype(args.keywords.get("preferred_element_type", NONE))
        if isinstance(preferred, DType):
            return Array(preferred, UNKNOWN, UNKNOWN, created=_origin(block, node), how="computed")
        return _array_binary("@", args.get(0, "a"), args.get(1, "b"))

    def _shape_dtype_struct(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        return Array(
            _to_dtype(args.get(1, "dtype")),
            _as_shape_value(args.get(0, "shape")),
            UNKNOWN,
            created=_origin(block, node),
            how="declared",
        )

    def _random(self, dtype_default: str, dtype_index: int = 2) -> Handler:
        def handler(args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
            dtype = _to_dtype(args.get(dtype_index, "dtype", NONE))
            if _is_none(dtype):
                dtype = DType(dtype_default, origin=_origin(block, node)) if args.complete else UNKNOWN
            dtype = self.jax_dtype(dtype)
            return Array(dtype, _as_shape_value(args.get(1, "shape")), UNKNOWN,
                         created=_origin(block, node), how="created")

        return handler

    def _numpy_rng(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        return Api(_NUMPY_RNG)

    def _numpy_random(self, default: str, size_index: int | None, dtype_index: int | None = None) -> Handler:
        """`rng.uniform(lo, hi, size)`, `rng.integers(lo, hi, size, dtype)`, `np.random.randn(*dims)`."""

        def handler(args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
            dtype: Value = NONE
            if dtype_index is not None:
                dtype = _to_dtype(args.get(dtype_index, "dtype", NONE))
            if _is_none(dtype):
                dtype = DType(default, origin=_origin(block, node)) if args.complete else UNKNOWN
            shape: Value = UNKNOWN
            if size_index is None:
                if args.complete and not args.keywords:
                    shape = _as_shape_value(TupleVal(tuple(args.positional)))
            else:
                size = args.get(size_index, "size", NONE)
                if not _is_none(size):  # no size: a scalar, not an array of a shape
                    shape = _as_shape_value(size)
            return Array(dtype, shape, UNKNOWN, created=_origin(block, node), how="created")

        return handler

    # ------------------------------------------------------------------ MLIR helpers

    def _integer_type(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        width = as_int(args.get(0, "width"))
        if width is None or f"i{width}" not in IR_TYPES:
            return UNKNOWN
        return IrType(f"i{width}")

    def _dtype_to_ir_type(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        d = _to_dtype(args.get(0, "dtype"))
        if not isinstance(d, DType):
            return UNKNOWN
        # The type inherits where the dtype was decided: that is where a fix belongs.
        return IrType(d.info.mlir, origin=d.origin)

    def _is_signed(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        d = _to_dtype(args.get(0, "dtype"))
        if not isinstance(d, DType):
            return UNKNOWN
        return Const(d.info.is_signed, origin=_origin(block, node))

    def _bitwidth(self, divisor: int) -> Handler:
        def handler(args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
            t = args.get(0, "ty")
            if isinstance(t, IrType):
                return Const(max(t.info.bits // divisor, 1) if divisor > 1 else t.info.bits)
            return UNKNOWN

        return handler

    def _constant(self, value_index: int, type_index: int, type_kw: str) -> Handler:
        def handler(args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
            t = args.get(type_index, type_kw)
            if isinstance(t, IrType):
                return IrValue(t, origin=_origin(block, node))
            return IrValue(UNKNOWN, origin=_origin(block, node))

        return handler

    def _memref_transpose(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        ref = args.get(0, "ref")
        if not isinstance(ref, Ref):
            return UNKNOWN
        perm = args.get(1, "permutation")
        shape: Value = UNKNOWN
        if isinstance(ref.shape, TupleVal) and isinstance(perm, TupleVal):
            idx = [as_int(p) for p in perm.items]
            if all(i is not None and 0 <= i < len(ref.shape.items) for i in idx) and len(idx) == len(
                ref.shape.items
            ):
                shape = TupleVal(tuple(ref.shape.items[i] for i in idx if i is not None))
        return Ref(ref.dtype, shape, view=_transposed_view(ref, perm))

    def _memref_slice(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        ref = args.get(0, "ref")
        if not isinstance(ref, Ref):
            return UNKNOWN
        index = args.get(1, "index")
        return Ref(ref.dtype, index_shape(ref.shape, index), view=_indexed_view(ref, index))

    def _tile_shape(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        """`mgpu.tile_shape((m, k), (8, 64))` -> (m // 8, k // 64, 8, 64)."""
        shape = args.get(0, "shape")
        tiling = args.get(1, "tiling")
        if not (isinstance(shape, TupleVal) and isinstance(tiling, TupleVal)):
            return UNKNOWN
        dims = [as_int(d) for d in shape.items]
        tiles = [as_int(t) for t in tiling.items]
        if None in tiles or len(tiles) > len(dims):
            return UNKNOWN
        lead = dims[: len(dims) - len(tiles)]
        tiled = dims[len(dims) - len(tiles):]
        outer: list[int | None] = []
        for d, t in zip(tiled, tiles, strict=True):
            outer.append(d // t if d is not None and t and d % t == 0 else None)
        return TupleVal(tuple(Const(x) if x is not None else UNKNOWN for x in (*lead, *outer, *tiles)))

    def _dynamic_slice(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        """`pl.ds(start, size)` / `mgpu.ds(base, length)`: a slice of known length."""
        size = args.get(1, "size" if "size" in args.keywords else "length")
        if not args.has(1, "size") and not args.has(1, "length"):
            # `pl.ds(n)` is `pl.ds(0, n)`.
            size = args.get(0, "start")
        stride = args.get(2, "stride", Const(1))
        if as_int(stride) != 1:
            return TupleVal((Const("ds"), size, stride))
        return TupleVal((Const("ds"), size))

    def _memref_same_dtype(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        ref = args.get(0, "ref")
        return Ref(ref.dtype, UNKNOWN) if isinstance(ref, Ref) else UNKNOWN

    def _memref_reshape(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        ref = args.get(0, "ref")
        return Ref(ref.dtype, _as_shape_value(args.get(1, "shape"))) if isinstance(ref, Ref) else UNKNOWN

    # ------------------------------------------------------------------ Mosaic GPU

    def _mma_layouts(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        element = args.get(0, "element_type")
        bits: Value = UNKNOWN
        form: str | None = None
        if isinstance(element, IrType):
            bits, form = Const(element.info.bits), "ir"
        else:
            d = _to_dtype(element)
            if isinstance(d, DType):
                bits, form = Const(d.info.bits), "dtype"
        m_warps = args.get(1, "m_warps", Const(4))
        m_warps_node = args.node(1, "m_warps")
        m_warps_origin = _origin(block, m_warps_node) if m_warps_node is not None else None
        self._use("mgpu.MMALayouts", args, node, block, as_int(bits), form)
        return MMALayoutsVal(bits, m_warps, m_warps_origin, origin=_origin(block, node))

    def _use(self, name: str, args: Args, node: cst.CSTNode, block: Block, bits: int | None = None,
             form: str | None = None) -> None:
        keywords = tuple(
            (k, _origin(block, n) if (n := args.keyword_nodes.get(k)) is not None else None)
            for k in args.keywords
        )
        self.interp.record_use(
            ApiUse(name, _origin(block, node), keywords, bits, self.interp.context, form)
        )

    def _mma_layouts_for_shape(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        self._use("mgpu.MMALayouts.for_shape", args, node, block)
        element = args.get(0, "element_type")
        bits: Value = UNKNOWN
        if isinstance(element, IrType):
            bits = Const(element.info.bits)
        elif isinstance(d := _to_dtype(element), DType):
            bits = Const(d.info.bits)
        m = as_int(args.get(1, "m"))
        n = as_int(args.get(2, "n"))
        origin = _origin(block, node)
        if m is None or n is None:
            return MMALayoutsVal(bits, UNKNOWN, origin=origin)
        for m_warps in (4, 2, 1):
            if m % (m_warps * 16) == 0 and n % ((4 // m_warps) * 8) == 0:
                return MMALayoutsVal(bits, Const(m_warps), origin=origin)
        return MMALayoutsVal(bits, UNKNOWN, origin=origin)

    def _signed_arg(self, args: Args, keyword: str, node: cst.CSTNode, block: Block) -> Value:
        """The `is_signed=` a fragment is built with: None (jax's default) when not passed."""
        if keyword in args.keywords:
            return args.keywords[keyword]
        if not args.complete:
            return UNKNOWN
        return Const(None, origin=_origin(block, node))

    def _load(self, layout_default: Layout | None, how: str, tiled: bool = False) -> Handler:
        def handler(args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
            ref = args.get(0, "ref")
            layout = args.keywords.get("layout")
            if layout is None:
                layout = layout_default if layout_default is not None and args.complete else UNKNOWN
            dtype = ref.dtype if isinstance(ref, Ref) else UNKNOWN
            ir_type: Value = UNKNOWN
            if isinstance(dtype, DType):
                ir_type = IrType(dtype.info.mlir, origin=dtype.origin)
            shape: Value = UNKNOWN
            view: str | None = None
            if isinstance(ref, Ref):
                shape = _untiled_shape(ref.shape) if tiled else ref.shape
                if not tiled and how == "loaded":
                    view = _load_view(ref, args)
            return Fragment(
                ir_type,
                self._signed_arg(args, "is_signed", node, block),
                layout,
                shape,
                dtype,
                created=_origin(block, node),
                how=how,
                view=view,
            )

        return handler

    def _splat(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        value = args.get(0, "value")
        ir_type = value.type if isinstance(value, IrValue) else UNKNOWN
        layout = args.get(2, "layout", NONE)
        if _is_none(layout):
            layout = Layout("splat")
        return Fragment(
            ir_type,
            self._signed_arg(args, "is_signed", node, block),
            layout,
            _as_shape_value(args.get(1, "shape")),
            UNKNOWN,
            created=_origin(block, node),
            how="splatted",
        )

    def _iota(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        layout = args.get(3, "layout", NONE)
        return Fragment(
            args.get(0, "dtype"),
            self._signed_arg(args, "is_signed", node, block),
            Layout("splat") if _is_none(layout) else layout,
            _as_shape_value(args.get(1, "shape")),
            UNKNOWN,
            created=_origin(block, node),
            how="built",
        )

    def _fragment_ctor(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        registers = args.keywords.get("_registers", UNKNOWN)
        return Fragment(
            registers.ir_type if isinstance(registers, Registers) else UNKNOWN,
            args.keywords.get("_is_signed", UNKNOWN),
            args.keywords.get("_layout", UNKNOWN),
            UNKNOWN,
            UNKNOWN,
            created=_origin(block, node),
            how="built",
        )

    def _mma(self, api: str) -> Handler:
        def handler(args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
            names_ = ("acc", "a", "b")
            values = tuple(args.get(i, n) for i, n in enumerate(names_))
            nodes = tuple(args.node(i, n) for i, n in enumerate(names_))
            origins = tuple(_origin(block, n) if n is not None else None for n in nodes)
            site = MmaSite(
                "mma",
                api,
                _origin(block, node),
                tuple(SiteOperand(r, v, o) for r, v, o in zip(names_, values, origins, strict=True)),
                self.interp.context,
            )
            self.interp.record(site)
            if api == "plgpu.mma":
                self._use(api, args, node, block)
            acc = _accumulator_of(values)
            if isinstance(acc, Fragment):
                return Fragment(acc.ir_type, acc.signed, acc.layout, acc.shape, UNKNOWN,
                                created=_origin(block, node), how="mma result")
            if isinstance(acc, Array):
                return Array(acc.dtype, acc.shape, acc.layout, created=_origin(block, node),
                             how="mma result")
            return UNKNOWN

        return handler

    def _as_gpu_kernel(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        body = args.get(0, "body")
        in_shape = args.get(3, "in_shape")
        out_shape = args.get(4, "out_shape")
        scratch = args.get(5, "smem_scratch_shape")
        inout = args.get(12, "inout_shape", TupleVal(()))
        refs: list[Value] = [UNKNOWN]  # the launch context
        complete = True
        for tree in (in_shape, inout, out_shape):
            leaves = _leaves(tree)
            if leaves is None:
                complete = False
                break
            refs.extend(_as_ref(leaf, view="plain") for leaf in leaves)
        if complete:
            refs.append(_scratch_tree(scratch))
        from mmalint.analysis.interpreter import Args as CallArgs

        with self.interp.with_context(in_kernel=True, semantics=UNKNOWN):
            try:
                self.interp.call_value(body, CallArgs(refs, {}, [], {}, complete), node, frame, block)
            except _Diverges():
                pass
        return UNKNOWN

    # ------------------------------------------------------------------ Pallas

    def _layout_cast(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        x = args.get(0, "x")
        layout = args.get(1, "new_layout")
        if isinstance(x, Array):
            return Array(x.dtype, x.shape, layout, created=x.created, how=x.how,
                         converted_from=x.layout, converted_at=_origin(block, node))
        return Array(UNKNOWN, UNKNOWN, layout, created=_origin(block, node), how="cast")

    def _pallas_load(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        ref = args.get(0, "src")
        layout = args.keywords.get("layout", NONE if args.complete else UNKNOWN)
        if _is_none(layout):
            layout = UNKNOWN
        if not isinstance(ref, Ref):
            return Array(UNKNOWN, UNKNOWN, layout, created=_origin(block, node), how="loaded")
        indexed = args.has(1, "idx") and not _is_none(args.get(1, "idx"))
        shape = index_shape(ref.shape, args.get(1, "idx")) if indexed else ref.shape
        view = None if indexed else _load_view(ref, args)
        return Array(ref.dtype, shape, layout, created=_origin(block, node), how="loaded", view=view)

    def _kernel_factory(self, api: str, blind: bool = False) -> Handler:
        def handler(args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
            body = args.positional[0] if args.positional else args.keywords.get("body")
            if body is None and "kernel" in args.keywords:
                body = args.keywords["kernel"]
            kwargs = dict(args.keywords)
            if api == "pl.pallas_call" and len(args.positional) > 1:
                kwargs.setdefault("out_shape", args.positional[1])
            if api == "plgpu.kernel" and len(args.positional) > 1:
                kwargs.setdefault("out_type", args.positional[1])
            if blind or not args.complete:
                kwargs["compiler_params"] = UNKNOWN
                kwargs["__blind__"] = TRUE
            return Kernel(api, body, tuple(kwargs.items()))

        return handler

    def _compiler_params(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        semantics = args.keywords.get("lowering_semantics")
        if semantics is None:
            # The default changed: Lane in jax 0.10, Warpgroup from 0.11 (`32915de40f`).
            semantics = Semantics("default", origin=_origin(block, node)) if args.complete else UNKNOWN
        return CompilerParams(semantics)

    def _dataclass_replace(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        obj = args.get(0, "obj")
        if isinstance(obj, CompilerParams) or "lowering_semantics" in args.keywords:
            semantics = args.keywords.get(
                "lowering_semantics", obj.semantics if isinstance(obj, CompilerParams) else UNKNOWN
            )
            return CompilerParams(semantics)
        return UNKNOWN

    def _scratch(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        dtype = _to_dtype(args.get(1, "dtype", NONE))
        if _is_none(dtype):
            dtype = UNKNOWN
        return Array(dtype, _as_shape_value(args.get(0, "shape")), UNKNOWN,
                     created=_origin(block, node), how="scratch")

    def _call_kernel(
        self, kernel: Kernel, args: Args, node: cst.CSTNode, frame: Frame, block: Block
    ) -> Value:
        from mmalint.analysis.interpreter import Args as CallArgs

        if kernel.body is None:
            # `@plgpu.kernel(out_type=...)` / `functools.partial(plgpu.kernel, ...)` on a body,
            # maybe with more keywords: `partial(plgpu.kernel, compiler_params=...)(body, out_type=...)`.
            body = args.get(0, "body")
            merged = {**dict(kernel.kwargs), **args.keywords}
            merged.pop("body", None)
            if len(args.positional) > 1:
                key = "out_shape" if kernel.api == "pl.pallas_call" else "out_type"
                merged.setdefault(key, args.positional[1])
            if not args.complete:
                merged["__blind__"] = TRUE
            return Kernel(kernel.api, body, tuple(merged.items()), kernel.self_value, origin=kernel.origin)
        kwargs = dict(kernel.kwargs)
        if kernel.api == "plgpu.emit_pipeline":
            return self._run_pipeline(kernel, kwargs, args, node, frame, block)
        refs: list[Value] = []
        complete = args.complete and "__blind__" not in kwargs
        torch_inputs = "__torch__" in kwargs  # dtypes of torch tensors are not modelled
        for value in args.positional:
            ref = _as_ref(value) if complete and not torch_inputs else UNKNOWN
            if isinstance(ref, Ref):
                # jax converts kernel inputs to jax arrays: 64-bit data is 32-bit without x64.
                # They stay in global memory, row-major.
                ref = Ref(self.jax_dtype(ref.dtype), ref.shape, origin=ref.origin, view="plain")
            refs.append(ref)
        out = kwargs.get("out_type", kwargs.get("out_shape"))
        scratch = kwargs.get("scratch_types", kwargs.get("scratch_shapes", TupleVal(())))
        scratch_keywords: dict[str, Value] = {}
        if isinstance(scratch, DictVal):
            # A dict of scratch types reaches the body as keyword arguments.
            scratch_keywords = {k: _as_ref(v) for k, v in scratch.items}
            scratch = TupleVal(())
        for tree, view in ((out, "plain"), (scratch, None)):
            leaves = _leaves(tree) if tree is not None else None
            if leaves is None:
                complete = False
                break
            refs.extend(_as_ref(leaf, view=view) for leaf in leaves)
        if kernel.api == "pl.pallas_call" and complete:
            # Blocked refs keep their dtype; their shape is the block shape when a spec says so.
            specs = _specs(kwargs.get("in_specs"), kwargs.get("out_specs"))
            refs = [
                Ref(r.dtype, _block_shape(specs, i)) if isinstance(r, Ref) else r
                for i, r in enumerate(refs)
            ]
        params = kwargs.get("compiler_params", NONE)
        semantics: Value
        if _is_none(params):
            # The note belongs where `compiler_params=` would go: the plgpu.kernel(...) call.
            semantics = Semantics("default", origin=kernel.origin or _origin(block, node))
        elif isinstance(params, CompilerParams):
            semantics = params.semantics
        else:
            semantics = UNKNOWN
        if not complete:
            refs = []
        with self.interp.with_context(in_kernel=True, semantics=semantics):
            try:
                self.interp.call_value(
                    kernel.body, CallArgs(refs, scratch_keywords, [], {}, complete), node, frame, block
                )
            except _Diverges():
                pass
        return _out_arrays(out, block, node)

    def _run_pipeline(
        self, kernel: Kernel, kwargs: dict[str, Value], args: Args, node: cst.CSTNode,
        frame: Frame, block: Block,
    ) -> Value:
        from mmalint.analysis.interpreter import Args as CallArgs

        refs: list[Value] = [UNKNOWN]  # the step indices
        specs = _specs(kwargs.get("in_specs"), kwargs.get("out_specs"))
        for i, value in enumerate(args.positional):
            refs.append(Ref(value.dtype, _block_shape(specs, i)) if isinstance(value, Ref) else UNKNOWN)
        carry = kwargs.get("init_carry")
        complete = args.complete and carry is not None
        if complete and carry is not None and not _is_none(carry):
            refs.append(carry)
        result: Value = UNKNOWN
        if kernel.body is None:
            return UNKNOWN
        try:
            result = self.interp.call_value(kernel.body, CallArgs(refs, {}, [], {}, complete), node, frame, block)
        except _Diverges():
            pass
        if carry is None or _is_none(carry):
            return NONE
        return join(carry, result)

    def _run_scoped(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        from mmalint.analysis.interpreter import Args as CallArgs

        body = args.get(0, "f")
        refs = [_as_ref(v) for v in args.positional[1:]]
        kw = {k: _as_ref(v) for k, v in args.keywords.items() if k != "collective_axes"}
        return self.interp.call_value(body, CallArgs(refs, kw, [], {}, args.complete), node, frame, block)

    def _when(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        condition = self.truth(args.get(0, "condition"))
        return Api("builtins.never_decorator" if condition is False else "builtins.call_blind_decorator")

    def _blind_decorator(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        return Api("builtins.call_blind_decorator")

    def _fori_loop(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        from mmalint.analysis.interpreter import Args as CallArgs

        body = args.get(2, "body_fun")
        init = args.get(3, "init_val")
        result = self.interp.call_value(body, CallArgs([UNKNOWN, init], {}, [], {}, True), node, frame, block)
        return join(init, result)

    # ------------------------------------------------------------------ Python

    def _partial(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        if not args.positional:
            return UNKNOWN
        func = args.positional[0]
        if isinstance(func, Api) and func.name in ("plgpu.kernel", "pl.pallas_call", "plgpu.emit_pipeline"):
            return Kernel(func.name, None, tuple(args.keywords.items()))
        if isinstance(func, Kernel) and func.body is None:
            return Kernel(func.api, None, (*func.kwargs, *args.keywords.items()))
        if isinstance(func, Api) and func.name in ("jax.jit", "jax.named_call"):
            return Api("builtins.identity_decorator")
        if isinstance(func, Api) and func.name == "pl.run_scoped":
            return Partial(func, tuple(args.positional[1:]), tuple(args.keywords.items()))
        if not args.complete:
            return UNKNOWN
        return Partial(func, tuple(args.positional[1:]), tuple(args.keywords.items()))

    def _lru_cache(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        first = args.positional[0] if args.positional else None
        if isinstance(first, Func | Partial | Kernel):
            return first  # `@functools.lru_cache` on a function
        return Api("builtins.identity_decorator")  # `@functools.lru_cache(maxsize=None)`

    def _product(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        if args.keywords or not args.complete:
            return UNKNOWN
        pools = [self.iterate(v) for v in args.positional]
        if any(p is None for p in pools):
            return UNKNOWN
        combos: list[tuple[Value, ...]] = [()]
        for pool in pools:
            assert pool is not None
            combos = [(*c, item) for c in combos for item in pool]
            if len(combos) > 256:
                return UNKNOWN
        return TupleVal(tuple(TupleVal(c) for c in combos))

    def _transpose_ref(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        ref = args.get(0, "ref")
        if not isinstance(ref, Ref):
            return UNKNOWN
        return self._memref_transpose(args, node, frame, block)

    def _as_torch_kernel(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        """`plgpu.as_torch_kernel(kernel)(x, y)`: a launch whose inputs are torch tensors."""
        kernel = args.get(0, "fn")
        if isinstance(kernel, Kernel) and kernel.body is not None:
            return Kernel(kernel.api, kernel.body, (*kernel.kwargs, ("__torch__", TRUE)), kernel.self_value)
        return UNKNOWN

    def _jit(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        if args.positional:
            return args.positional[0]
        return Api("builtins.identity_decorator")

    def _math(self, fn: Callable[..., object]) -> Handler:
        def handler(args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
            values = args.positional
            if len(values) == 1 and isinstance(values[0], TupleVal):
                values = list(values[0].items)
            ints = [as_int(v) for v in values]
            if any(i is None for i in ints):
                return UNKNOWN
            if not bounds.affordable_ints([i for i in ints if i is not None]):
                return UNKNOWN
            try:
                return Const(fn(*ints))
            except Exception:
                return UNKNOWN

        return handler

    def _builtin_range(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        ints = [as_int(v) for v in args.positional]
        if not ints or any(i is None for i in ints) or args.keywords:
            return UNKNOWN
        r = range(*ints)  # type: ignore[arg-type]
        if len(r) > 256:
            return UNKNOWN
        return TupleVal(tuple(Const(i) for i in r))

    def _builtin_slice(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        values = list(args.positional)
        if len(values) == 1:
            values = [NONE, values[0], NONE]
        while len(values) < 3:
            values.append(NONE)
        return TupleVal((Const("slice"), *values[:3]))

    def _builtin_len(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        v = args.get(0, "obj")
        if isinstance(v, TupleVal | DictVal):
            return Const(len(v.items))
        if isinstance(v, Const) and isinstance(v.value, str):
            return Const(len(v.value))
        return UNKNOWN

    def _builtin_isinstance(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        obj = args.get(0, "obj")
        cls = args.get(1, "class_or_tuple")
        classes = list(cls.items) if isinstance(cls, TupleVal) else [cls]
        results = []
        for c in classes:
            if not isinstance(c, Api):
                return UNKNOWN
            if c.name.startswith("ir."):
                results.append(_ir_isinstance(obj, c.name[3:]))
            else:
                return UNKNOWN
        if any(r == TRUE for r in results):
            return TRUE
        if all(r == FALSE for r in results):
            return FALSE
        return UNKNOWN

    def _builtin_tuple(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        if not args.positional:
            return TupleVal(())
        items = self.iterate(args.positional[0])
        return TupleVal(tuple(items)) if items is not None else UNKNOWN

    def _builtin_list(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        if not args.positional:
            return TupleVal((), True)
        items = self.iterate(args.positional[0])
        return TupleVal(tuple(items), True) if items is not None else UNKNOWN

    def _builtin_sorted(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        """`sorted(CONFIGS)`: the same items (worlds do not depend on their order), sorted when
        they are constants that compare."""
        if len(args.positional) != 1 or not args.complete:
            return UNKNOWN
        items = self.iterate(args.positional[0])
        if items is None:
            return UNKNOWN
        unsorted = TupleVal(tuple(items), True)
        consts = [i.value for i in items if isinstance(i, Const)]
        reverse = args.keywords.get("reverse", FALSE)
        if len(consts) != len(items) or "key" in args.keywords or not isinstance(reverse, Const):
            return unsorted
        try:
            ordered = sorted(consts, reverse=bool(reverse.value))
        except TypeError:  # constants that do not compare
            return unsorted
        return TupleVal(tuple(Const(v) for v in ordered), True)

    def _builtin_reversed(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        items = self.iterate(args.positional[0]) if len(args.positional) == 1 else None
        return TupleVal(tuple(reversed(items)), True) if items is not None else UNKNOWN

    def _builtin_dict(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        if args.positional or not args.complete:
            return UNKNOWN
        return DictVal(tuple(args.keywords.items()))

    def _builtin_int(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        return self._convert(args, int)

    def _builtin_float(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        return self._convert(args, float)

    def _builtin_bool(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        truth = self.truth(args.get(0, "x", FALSE))
        return UNKNOWN if truth is None else Const(truth)

    def _builtin_str(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        return self._convert(args, str)

    def _convert(self, args: Args, fn: Callable[[Any], object]) -> Value:
        v = args.get(0, "x")
        if isinstance(v, Const) and len(args.positional) == 1:
            try:
                return Const(fn(v.value))
            except Exception:
                return UNKNOWN
        return UNKNOWN

    def _builtin_min(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        return self._reduce(args, min)

    def _builtin_max(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        return self._reduce(args, max)

    def _builtin_sum(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        return self._reduce(args, sum, single_iterable=True)

    def _reduce(self, args: Args, fn: Callable[..., object], single_iterable: bool = False) -> Value:
        values = list(args.positional)
        if len(values) == 1 or single_iterable:
            items = self.iterate(values[0]) if values else None
            if items is None:
                return UNKNOWN
            values = items
        if args.keywords or not values:
            return UNKNOWN
        if not all(isinstance(v, Const) and isinstance(v.value, int | float) for v in values):
            return UNKNOWN
        try:
            return Const(fn([v.value for v in values if isinstance(v, Const)]))
        except Exception:
            return UNKNOWN

    def _builtin_abs(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        return self._convert(args, abs)

    def _builtin_getattr(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        name = args.get(1, "name")
        if isinstance(name, Const) and isinstance(name.value, str) and len(args.positional) == 2:
            return self.getattr(args.get(0, "o"), name.value, node)
        return UNKNOWN

    def _builtin_setattr(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        name = args.get(1, "name")
        target = args.get(0, "obj")
        attr = name.value if isinstance(name, Const) and isinstance(name.value, str) else None
        self.interp.store_attribute(target, attr, args.get(2, "value"))
        return NONE

    def _builtin_enumerate(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        items = self.iterate(args.get(0, "iterable"))
        if items is None:
            return UNKNOWN
        return TupleVal(tuple(TupleVal((Const(i), v)) for i, v in enumerate(items)))

    def _builtin_zip(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        lists = [self.iterate(v) for v in args.positional]
        if not lists or any(x is None for x in lists):
            return UNKNOWN
        return TupleVal(tuple(TupleVal(tuple(t)) for t in zip(*[x or [] for x in lists], strict=False)))

    def _builtin_print(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        return NONE

    def _builtin_staticmethod(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        f = args.get(0, "f")
        if isinstance(f, Func):
            return Func(f.node, f.block, f.closure, f.defaults, f.qualname, None, origin=f.origin)
        return f

    def _builtin_call_blind_decorator(
        self, args: Args, node: cst.CSTNode, frame: Frame, block: Block
    ) -> Value:
        from mmalint.analysis.interpreter import Args as CallArgs

        body = args.get(0, "f")
        try:
            self.interp.call_value(body, CallArgs([], {}, [], {}, False), node, frame, block)
        except _Diverges():
            pass
        return UNKNOWN

    def _builtin_never_decorator(self, args: Args, node: cst.CSTNode, frame: Frame, block: Block) -> Value:
        return UNKNOWN

    # ------------------------------------------------------------------ methods

    def _call_method(
        self, method: Method, args: Args, node: cst.CSTNode, frame: Frame, block: Block
    ) -> Value:
        receiver, name = method.receiver, method.name
        if isinstance(receiver, RefAt) and isinstance(receiver.ref, Array):
            array = receiver.ref
            if name in ("set", "add", "multiply", "divide", "power", "min", "max", "apply"):
                return Array(array.dtype, array.shape, UNKNOWN, created=_origin(block, node), how="created")
            if name == "get":
                return Array(array.dtype, UNKNOWN, UNKNOWN, created=_origin(block, node), how="created")
            return UNKNOWN
        if isinstance(receiver, Fragment):
            return self._fragment_method(receiver, name, args, node, block)
        if isinstance(receiver, Array | Unknown):
            if name == "astype":
                target = args.get(0, "dtype")
                if isinstance(target, IrType) or (isinstance(receiver, Unknown) and "is_signed" in args.keywords):
                    return Fragment(target, self._signed_arg(args, "is_signed", node, block),
                                    UNKNOWN, UNKNOWN, UNKNOWN, created=_origin(block, node),
                                    how="converted")
                d = _to_dtype(target)
                if isinstance(d, DType):
                    shape = receiver.shape if isinstance(receiver, Array) else UNKNOWN
                    layout = receiver.layout if isinstance(receiver, Array) else UNKNOWN
                    return Array(d, shape, layout, created=_origin(block, node), how="converted")
                return UNKNOWN
            if isinstance(receiver, Array) and name in ("reshape", "swapaxes", "transpose"):
                return Array(receiver.dtype, UNKNOWN, UNKNOWN, created=receiver.created, how=receiver.how)
            return UNKNOWN
        if isinstance(receiver, Ref):
            if name in ("reshape", "transpose", "bitcast", "reinterpret"):
                return Ref(receiver.dtype if name in ("reshape", "transpose") else UNKNOWN, UNKNOWN)
            return UNKNOWN
        if isinstance(receiver, DictVal | TupleVal) and name in _MUTATING_METHODS:
            if isinstance(receiver, DictVal) and name == "update" and not args.positional and args.complete:
                updated = dict(receiver.items)
                updated.update(args.keywords)
                self._rebind(receiver, DictVal(tuple(updated.items())), frame)
            elif name != "pop":
                self._rebind(receiver, UNKNOWN, frame)
        if isinstance(receiver, DictVal):
            if name in ("pop", "get") and args.positional:
                key = args.positional[0]
                default = args.positional[1] if len(args.positional) > 1 else NONE
                if isinstance(key, Const) and isinstance(key.value, str):
                    found = receiver.get(key.value)
                    if name == "pop":
                        self._rebind(receiver, receiver.without(key.value), frame)
                    return found if found is not None else default
            if name == "copy":
                return receiver
            # Iterating a config table: `for name, cfg in CONFIGS.items()`.
            if name == "items" and not args.positional and not args.keywords:
                return TupleVal(tuple(TupleVal((Const(k), v)) for k, v in receiver.items), True)
            if name == "keys" and not args.positional and not args.keywords:
                return TupleVal(tuple(Const(k) for k, _ in receiver.items), True)
            if name == "values" and not args.positional and not args.keywords:
                return TupleVal(tuple(v for _, v in receiver.items), True)
            return UNKNOWN
        return UNKNOWN

    def _rebind(self, old: Value, new: Value, frame: Frame) -> None:
        """`kwargs.pop(k)` mutates; values are immutable, so every name holding it is rebound."""
        scope: Frame | None = frame
        while scope is not None:
            for name, value in list(scope.env.items()):
                # Reading a name gives a copy that carries where it was read: match by facts.
                if value is old or (type(value) is type(old) and value == old):
                    scope.env[name] = new
            scope = scope.parent

    def _fragment_method(
        self, frag: Fragment, name: str, args: Args, node: cst.CSTNode, block: Block
    ) -> Value:
        created = _origin(block, node)
        if name == "astype":
            return Fragment(args.get(0, "new_dtype"), self._signed_arg(args, "is_signed", node, block),
                            frag.layout, frag.shape, UNKNOWN, created=created, how="converted")
        if name == "to_layout":
            return Fragment(frag.ir_type, frag.signed, args.get(0, "new_layout"), frag.shape,
                            frag.data_dtype, created=frag.created, how=frag.how,
                            converted_from=frag.layout, converted_at=created)
        if name == "bitcast":
            return Fragment(args.get(0, "elt"), self._signed_arg(args, "output_is_signed", node, block),
                            frag.layout, UNKNOWN, UNKNOWN, created=created, how="bitcast")
        if name in ("copy",):
            return frag
        if name in ("reshape", "broadcast", "broadcast_minor", "broadcast_in_dim", "transpose"):
            return Fragment(frag.ir_type, frag.signed, UNKNOWN, UNKNOWN, frag.data_dtype,
                            created=frag.created, how=frag.how)
        if name.startswith("store") or name in ("foreach",):
            return NONE
        return UNKNOWN


# ---------------------------------------------------------------------- helpers


_ACC_IR_TYPES = frozenset({"i32", "f32", "f64"})
_ACC_DTYPES = frozenset({"int32", "float32", "float64"})


def _acc_like(value: Value) -> bool | None:
    if isinstance(value, Fragment) and isinstance(value.ir_type, IrType):
        return value.ir_type.name in _ACC_IR_TYPES
    if isinstance(value, Array) and isinstance(value.dtype, DType):
        return value.dtype.name in _ACC_DTYPES
    return None


def _accumulator_of(values: tuple[Value, ...]) -> Value:
    """The argument whose facts the MMA result carries: the accumulator the author meant.

    `mma(a, b, acc)` (MMA105) fails, but a K loop that reassigns `acc` from it should carry the
    accumulator, not an operand, into the next iteration: otherwise every later check on the
    loop-carried value reports a consequence of the one mistake.
    """
    if _acc_like(values[0]) is False and _acc_like(values[1]) is False and _acc_like(values[2]):
        return values[2]
    kinds = [getattr(getattr(v, "layout", None), "kind", None) for v in values]
    if kinds == ["mma_lhs", "mma_rhs", "mma_acc"]:
        return values[2]
    return values[0]


def _Diverges() -> type[Exception]:
    from mmalint.analysis.interpreter import Diverges

    return Diverges


def _as_dtype_object(value: Value) -> Value:
    """`x.dtype` is always a `np.dtype` object, whatever spelling created x."""
    if isinstance(value, DType) and value.form != "dtype":
        return DType(value.name, "dtype", origin=value.origin)
    return value


def _is_none(value: Value) -> bool:
    return isinstance(value, Const) and value.value is None


def _to_dtype(value: Value) -> Value:
    """A dtype from `jnp.int8`, `"int8"`, `np.dtype(...)`, an array, or UNKNOWN."""
    if isinstance(value, DType):
        return value
    if isinstance(value, Const) and isinstance(value.value, str):
        info = lookup_dtype(value.value)
        return DType(info.name, origin=value.origin) if info is not None else UNKNOWN
    if isinstance(value, Array | Ref):
        return value.dtype
    if _is_none(value):
        return value
    return UNKNOWN


def _ir_isinstance(obj: Value, cls: str) -> Value:
    if not isinstance(obj, IrType):
        return UNKNOWN
    info = obj.info
    if cls == "IntegerType":
        return Const(info.kind == "int")
    if cls == "FloatType":
        return Const(info.kind == "float")
    if cls in IR_TYPE_CLASSES:
        return Const(IR_TYPE_CLASSES[cls] == obj.name)
    return UNKNOWN


def _pallas_layout(member: str, args: Args, block: Block, node: cst.CSTNode) -> Value:
    if member in ("MMA_LHS", "MMA_RHS", "MMA_ACC"):
        d = _to_dtype(args.get(0, "dtype"))
        bits = d.info.bits if isinstance(d, DType) else None
        m_warps = as_int(args.get(1, "m_warps", Const(4)))
        m_warps_node = args.node(1, "m_warps")
        kinds: dict[str, LayoutKind] = {"MMA_LHS": "mma_lhs", "MMA_RHS": "mma_rhs", "MMA_ACC": "mma_acc"}
        kind = kinds[member]
        return Layout(
            kind,
            bits if member != "MMA_ACC" else None,
            m_warps,
            name=f"Layout.{member}",
            built=_origin(block, node),
            m_warps_origin=_origin(block, m_warps_node) if m_warps_node is not None else None,
        )
    if member == "WG_SPLAT":
        return Layout("splat", name="Layout.WG_SPLAT")
    if member == "WG_STRIDED":
        return Layout("strided", name="Layout.WG_STRIDED")
    return Layout("other", name=f"Layout.{member}")


def _as_shape_value(value: Value) -> Value:
    if isinstance(value, TupleVal):
        return value
    if isinstance(value, Const) and isinstance(value.value, int) and not isinstance(value.value, bool):
        return TupleVal((value,))
    return UNKNOWN


def _len_of(shape: Value) -> Value:
    return Const(len(shape.items)) if isinstance(shape, TupleVal) else UNKNOWN


def _reversed_shape(shape: Value) -> Value:
    if isinstance(shape, TupleVal):
        return TupleVal(tuple(reversed(shape.items)))
    return UNKNOWN


def _is_full_index(index: Value) -> bool:
    if isinstance(index, Const) and index.value is ...:
        return True
    if isinstance(index, TupleVal) and index.items and index.items[0] == Const("slice"):
        return all(_is_none(b) for b in index.items[1:])
    if isinstance(index, TupleVal):
        return all(_is_full_index(i) for i in index.items) and bool(index.items)
    return False


def _untiled_shape(shape: Value) -> Value:
    """The logical shape of a tiled SMEM ref: (m/tm, k/tk, tm, tk) -> (m, k)."""
    if not isinstance(shape, TupleVal):
        return UNKNOWN
    dims = [as_int(d) for d in shape.items]
    if len(dims) == 2:
        return shape
    known = [d for d in dims if d is not None]
    if len(dims) == 4 and len(known) == 4:
        a, b, c, d = known
        return TupleVal((Const(a * c), Const(b * d)))
    return UNKNOWN


def index_shape(shape: Value, index: Value) -> Value:
    """The shape of `x[index]` for a known shape: slices, `pl.ds`, ints, `...`."""
    if not isinstance(shape, TupleVal):
        return UNKNOWN
    parts: list[Value] = list(index.items) if isinstance(index, TupleVal) and _is_index_tuple(index) else [index]
    dims = list(shape.items)
    out: list[Value] = []
    i = 0
    for n, part in enumerate(parts):
        if isinstance(part, Const) and part.value is ...:
            remaining = len(parts) - n - 1
            keep = len(dims) - i - remaining
            if keep < 0:
                return UNKNOWN
            out.extend(dims[i : i + keep])
            i += keep
            continue
        if i >= len(dims):
            return UNKNOWN
        dim = as_int(dims[i])
        if _is_int_index(part):
            i += 1
            continue
        if isinstance(part, TupleVal) and part.items and part.items[0] == Const("ds"):
            size = part.items[1] if len(part.items) > 1 else UNKNOWN
            out.append(size if as_int(size) is not None else UNKNOWN)
            i += 1
            continue
        if isinstance(part, TupleVal) and part.items and part.items[0] == Const("slice"):
            lo, hi, step = ((*part.items[1:], NONE, NONE, NONE))[:3]
            if not _is_none(step) and as_int(step) != 1:
                out.append(UNKNOWN)
            else:
                start = 0 if _is_none(lo) else as_int(lo)
                stop = dim if _is_none(hi) else as_int(hi)
                if start is None or stop is None:
                    out.append(UNKNOWN)
                else:
                    if dim is not None:
                        start, stop = min(max(start, 0), dim), min(max(stop, 0), dim)
                    out.append(Const(max(stop - start, 0)))
            i += 1
            continue
        return UNKNOWN  # an array index, a mask...: not modelled
    out.extend(dims[i:])
    return TupleVal(tuple(out))


def _is_index_tuple(index: Value) -> bool:
    return isinstance(index, TupleVal) and not (
        index.items and index.items[0] in (Const("slice"), Const("ds"))
    )


def _leaves(tree: Value) -> list[Value] | None:
    """The leaves of a pytree of arrays / ShapeDtypeStructs, or None when not decidable."""
    if isinstance(tree, TupleVal):
        leaves: list[Value] = []
        for item in tree.items:
            inner = _leaves(item)
            if inner is None:
                return None
            leaves.extend(inner)
        return leaves
    if isinstance(tree, Array | Ref):
        return [tree]
    if isinstance(tree, (Unknown, DictVal)):
        return None
    return [tree]


def _as_ref(value: Value, view: str | None = None) -> Value:
    """A kernel argument for an array or a `ShapeDtypeStruct`; `view="plain"` for the kernel's
    own global-memory buffers, which are row-major."""
    if isinstance(value, Array):
        return Ref(value.dtype, value.shape, origin=value.origin, view=view)
    if isinstance(value, Ref):
        return value
    return UNKNOWN


def _transposed_view(ref: Ref, perm: Value | None) -> str | None:
    """The view after `memref_transpose(ref, perm)` (`perm` None: `.T`): flipped when exactly
    the last two axes of a known-rank ref swap, kept for the identity, unknown otherwise."""
    if ref.view is None or not isinstance(ref.shape, TupleVal):
        return None
    rank = len(ref.shape.items)
    if perm is None:
        order: list[int | None] = list(range(rank - 1, -1, -1))
    elif isinstance(perm, TupleVal):
        order = [as_int(p) for p in perm.items]
    else:
        return None
    if rank < 2 or len(order) != rank:
        return None
    if order == list(range(rank)):
        return ref.view
    if order == [*range(rank - 2), rank - 1, rank - 2]:
        return "transposed" if ref.view == "plain" else "plain"
    return None


def _promoted(values: list[Value], origin: Origin | None) -> Value:
    """jax's promotion of dtypes, where it is simple: one kind (floats, signed or unsigned
    ints), the wider wins, and bfloat16 with float16 is float32. Anything else: unknown."""
    dtypes = [_to_dtype(v) for v in values]
    if not dtypes or not all(isinstance(d, DType) for d in dtypes):
        return UNKNOWN
    infos = [d.info for d in dtypes if isinstance(d, DType)]
    kinds = {i.kind for i in infos}
    if len(kinds) != 1 or kinds & {"bool", "complex"}:
        return UNKNOWN
    names = {i.name for i in infos}
    if len(names) == 1:
        return DType(infos[0].name, origin=origin)
    if kinds == {"float"}:
        if any(i.bits == 8 for i in infos):
            return UNKNOWN  # fp8 promotion rules are their own
        widest = max(infos, key=lambda i: i.bits)
        if widest.bits == 16:  # bfloat16 with float16
            return DType("float32", origin=origin)
        return DType(widest.name, origin=origin)
    widest = max(infos, key=lambda i: i.bits)
    return DType(widest.name, origin=origin)


def _specs(in_specs: Value | None, out_specs: Value | None) -> list[Value] | None:
    """The block specs of a pallas_call / emit_pipeline, inputs then outputs, or None."""
    if in_specs is None or _is_none(in_specs):
        return None  # inputs without specs: nothing lines up with the refs
    specs: list[Value] = []
    for group in (in_specs, out_specs):
        if group is None or _is_none(group):
            continue
        if isinstance(group, BlockSpecVal):
            specs.append(group)
        elif isinstance(group, TupleVal) and not any(isinstance(i, TupleVal | DictVal) for i in group.items):
            specs.extend(group.items)
        else:
            return None  # a nested pytree of specs: its leaves may not line up one to one
    return specs


def _block_shape(specs: list[Value] | None, i: int) -> Value:
    """The shape of the block the i-th spec gives the body: its block_shape, `None` axes
    squeezed; unknown without such a spec."""
    spec = specs[i] if specs is not None and i < len(specs) else None
    if not isinstance(spec, BlockSpecVal) or not isinstance(spec.block_shape, TupleVal):
        return UNKNOWN
    dims: list[Value] = []
    for d in spec.block_shape.items:
        if _is_none(d):
            continue
        if as_int(d) is None:
            return UNKNOWN
        dims.append(d)
    return TupleVal(tuple(dims))


def _indexed_view(ref: Ref, index: Value) -> str | None:
    """A view survives indexing that keeps the last two axes whole-step (slices, `ds`,
    leading integers): the contiguous axis stays where it was."""
    if ref.view is None or not isinstance(ref.shape, TupleVal):
        return None
    rank = len(ref.shape.items)
    parts: list[Value] = list(index.items) if isinstance(index, TupleVal) and _is_index_tuple(index) else [index]
    if any(isinstance(p, Const) and p.value is ... for p in parts):
        before = []
        for p in parts:
            if isinstance(p, Const) and p.value is ...:
                break
            before.append(p)
        parts = before  # what follows `...` indexes the trailing axes: only trust leading parts
        if len(parts) > rank - 2:
            return None
    if len(parts) <= rank - 2:
        return ref.view if all(_is_axis_index(p) for p in parts) else None
    for p in parts[:rank - 2]:
        if not _is_axis_index(p):
            return None
    for p in parts[rank - 2:]:
        if not _is_whole_step(p):
            return None
    return ref.view


def _is_int_index(part: Value) -> bool:
    """An integer index, known (`0`) or not (`for step in range(n)`): it drops its axis."""
    return isinstance(part, SomeInt) or as_int(part) is not None


def _is_axis_index(part: Value) -> bool:
    return _is_int_index(part) or _is_whole_step(part)


def _is_whole_step(part: Value) -> bool:
    """A unit-step slice or `pl.ds(start, size)` (no stride)."""
    if isinstance(part, TupleVal) and part.items and part.items[0] == Const("ds"):
        return len(part.items) <= 2
    if isinstance(part, TupleVal) and part.items and part.items[0] == Const("slice"):
        step = part.items[3] if len(part.items) > 3 else NONE
        return _is_none(step) or as_int(step) == 1
    return False


def _load_view(ref: Ref, args: Args) -> str | None:
    """The view a load reads through, when it decides whether the load works: only for
    `optimized=False` loads (an optimized load from global memory fails for its own reasons,
    and one from shared memory may use `ldmatrix.trans`)."""
    optimized = args.keywords.get("optimized")
    if isinstance(optimized, Const) and optimized.value is False:
        return ref.view
    return None


def _scratch_tree(tree: Value) -> Value:
    if isinstance(tree, TupleVal):
        return TupleVal(tuple(_scratch_tree(i) for i in tree.items), tree.is_list)
    return _as_ref(tree)


def _out_arrays(out: Value | None, block: Block, node: cst.CSTNode) -> Value:
    if isinstance(out, Array):
        return Array(out.dtype, out.shape, UNKNOWN, created=Origin(block, node), how="kernel output")
    if isinstance(out, TupleVal):
        return TupleVal(tuple(_out_arrays(i, block, node) for i in out.items))
    return UNKNOWN


def _array_binary(op: str, left: Value, right: Value) -> Value:
    dtypes = [v.dtype for v in (left, right) if isinstance(v, Array)]
    scalars = [v for v in (left, right) if isinstance(v, Const)]
    if len(dtypes) == 2:
        dtype = dtypes[0] if dtypes[0] == dtypes[1] else UNKNOWN
    elif len(dtypes) == 1 and len(scalars) == 1:
        dtype = dtypes[0]
        scalar = scalars[0].value
        if isinstance(dtype, DType) and isinstance(scalar, float) and not dtype.info.is_floating:
            dtype = UNKNOWN
    else:
        dtype = UNKNOWN
    shape: Value = UNKNOWN
    arrays = [v for v in (left, right) if isinstance(v, Array)]
    if op != "@" and arrays:
        shape = arrays[0].shape
        for a in arrays[1:]:
            shape = join(shape, a.shape)
    return Array(dtype, shape, UNKNOWN, how="computed")


_CONST_OPS: dict[str, Callable[[object, object], object]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "<<": operator.lshift,
    ">>": operator.rshift,
}

_BUILTINS = frozenset(
    {
        "range", "len", "isinstance", "tuple", "list", "dict", "int", "float", "bool", "str",
        "min", "max", "sum", "abs", "getattr", "enumerate", "zip", "print", "staticmethod",
        "classmethod", "property", "super", "type", "object", "set", "frozenset", "sorted",
        "reversed", "map", "filter", "any", "all", "hasattr", "setattr", "iter", "next", "slice",
        "call_blind_decorator", "never_decorator", "identity_decorator", "ValueError",
        "TypeError", "NotImplementedError", "RuntimeError", "Exception",
    }
)

_UNKNOWN_RECEIVER_METHODS = frozenset({"astype"})
_NUMPY_RNG = "np.random.Generator()"  # the value of `np.random.default_rng(...)`
_MUTATING_METHODS = frozenset(
    {"update", "append", "extend", "insert", "pop", "popitem", "setdefault", "clear", "remove",
     "sort", "reverse", "__setitem__", "__delitem__"}
)


def unused(_: Sequence[object]) -> None:  # pragma: no cover - keeps linters quiet on re-exports
    pass
