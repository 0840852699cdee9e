"""From a call signature to a concrete kernel specification a worker can build.

The signature may leave facts open (a dimension, a layout's bit width); this module fills them
the way the call's own code most likely did, and says so in `notes`. The result is plain data
(JSON) because workers run in other interpreters.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from mmalint.confirm.families.mma import NAME, PALLAS_API
from mmalint.confirm.families.mma.facts import (
    DEFAULT_M_WARPS,
    INSTRUCTION_CODE_PREFIXES,
    LAYOUT_DTYPE_FOR_BITS,
    acc_tile,
    k_tile,
)
from mmalint.confirm.families.mma.instruction import MmaInstruction, emitted_instruction
from mmalint.confirm.signature import Call, Layout, Operand

DEFAULT_M, DEFAULT_N, DEFAULT_K = 64, 32, 128
# Past this many multiply-adds a case is shrunk to the default shape: the IR (one mma.sync per
# 16x8xK tile and warp) would take minutes to build, and the findings of the instruction's
# rule families (dtype, signedness, target) do not depend on it.
MAX_MNK = 1 << 22


@dataclass(frozen=True)
class ValueSpec:
    """One value passed to `mma`, as the worker builds it."""

    role: str  # "acc", "lhs" or "rhs": which layout family it is built with
    dtype: str  # the dtype of the memory it is loaded from (decides the MLIR element type)
    element_type: str
    is_signed: bool | None
    layout_kind: str  # mma_lhs, mma_rhs, mma_acc, wgmma, wgmma_8bit, strided, splat
    layout_dtype: str  # the dtype `MMALayouts(...)` / `Layout.MMA_*(...)` is built for
    m_warps: int | None
    shape: tuple[int, int]
    zeros: bool  # splatted/created rather than loaded from a kernel input
    # Loaded through a transposed view of an (n, k) buffer (`memref_transpose(b_ref, (1, 0))`,
    # `b_ref.T`), as B is in every example; everything else is read through its plain view.
    transposed: bool = False
    # Built first in this layout and then relaid out (`to_layout` / `layout_cast`) to `layout_*`.
    convert_from: ConvertSpec | None = None


@dataclass(frozen=True)
class ConvertSpec:
    """The layout a value is built in before it is converted to its own."""

    layout_kind: str
    layout_dtype: str
    m_warps: int | None


@dataclass(frozen=True)
class KernelSpec:
    """Everything a worker needs to build one synthesized kernel around one MMA call."""

    family: str  # the family whose worker side builds it (`families.worker_module`)
    api: str
    semantics: str  # "lane" or "warpgroup" (plgpu.mma only; "lane" for mgpu.mma)
    values: tuple[ValueSpec, ValueSpec, ValueSpec]  # in the order passed
    intended: tuple[int, int, int]  # positions in `values` of (acc, a, b) by meaning
    build_order: tuple[int, int, int]  # positions in `values`, in the order they are built
    data: tuple[str, str, str]  # data dtypes of (acc, a, b) by meaning: the NumPy reference
    instruction: dict[str, Any]  # the mma.sync the call emits (CuPy path)
    x64: bool
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _role(op: Operand, position: str) -> str:
    kind = op.layout.kind
    if kind == "mma_lhs":
        return "lhs"
    if kind in ("mma_rhs",):
        return "rhs"
    if kind == "mma_acc" or (op.layout.name or "").rsplit(".", 1)[-1] in ("WGMMA_LAYOUT",
                                                                          "WGMMA"):
        return "acc"
    return {"acc": "acc", "a": "lhs", "b": "rhs"}[position]


def _known(shape: tuple[int | None, ...] | None, i: int) -> int | None:
    if shape is None or len(shape) != 2:
        return None
    return shape[i]


def _dims(call: Call) -> tuple[int, int, int, list[str]]:
    acc, a, b = call.intended
    m = _known(acc.shape, 0) or _known(a.shape, 0)
    n = _known(acc.shape, 1) or _known(b.shape, 1)
    k = _known(a.shape, 1) or _known(b.shape, 0)
    notes: list[str] = []
    tiny = min(a.bits or 16, b.bits or 16) <= 2
    m, n, k = m or DEFAULT_M, n or DEFAULT_N, k or (2 * DEFAULT_K if tiny else DEFAULT_K)
    return m, n, k, notes


def _layout_dtype(op: Operand, role: str, a: Operand, layout: Layout | None = None) -> str:
    own = op.memory_dtype or "bfloat16"
    bits = (layout or op.layout).bitwidth
    if bits is None:
        return (a.memory_dtype or own) if role == "acc" else own
    if op.bits == bits:
        return own
    if a.bits == bits and a.memory_dtype:
        return a.memory_dtype
    return LAYOUT_DTYPE_FOR_BITS.get(bits, own)


def _layout_kind(op: Operand, role: str, layout: Layout | None = None) -> str:
    layout = layout or op.layout
    kind = layout.kind
    # Names come as written: `WGMMA_LAYOUT`, `fa.WGMMA_LAYOUT`, `Layout.WGMMA`...
    name = (layout.name or "").rsplit(".", 1)[-1]
    if name in ("WGMMA_LAYOUT", "WGMMA"):
        return "wgmma"
    if name in ("WGMMA_LAYOUT_8BIT", "WGMMA_8BIT") or kind == "wgmma_8bit":
        return "wgmma_8bit"
    if kind in ("strided", "splat", "mma_lhs", "mma_rhs", "mma_acc"):
        return kind
    return {"acc": "mma_acc", "lhs": "mma_lhs", "rhs": "mma_rhs"}[role]


def kernel_spec(call: Call, code: str, *, conform: bool = False) -> KernelSpec:
    """The kernel for `call`. `conform` rounds M/N/K up to the tiles (used for fixes, whose
    dtype may have changed the K tile under the user's shape)."""
    m, n, k, notes = _dims(call)
    exact_shapes = not code.startswith(INSTRUCTION_CODE_PREFIXES)
    if m * n * k > MAX_MNK and not exact_shapes:
        notes.append(f"shape {m}x{n}x{k} reduced to {DEFAULT_M}x{DEFAULT_N}x{DEFAULT_K} "
                     f"({code} does not depend on it)")
        m, n, k = DEFAULT_M, DEFAULT_N, DEFAULT_K
        call = replace(call, acc=replace(call.acc, shape=None), a=replace(call.a, shape=None),
                       b=replace(call.b, shape=None))
    acc, a, b = call.intended
    m_warps = acc.layout.m_warps or a.layout.m_warps or b.layout.m_warps
    if conform:
        tile_m, tile_n = acc_tile(m_warps or DEFAULT_M_WARPS)
        m, n, k = (_round_up(m, tile_m), _round_up(n, tile_n),
                   _round_up(k, k_tile(a.bits or 16)))
    by_role_shape = {"acc": (m, n), "lhs": (m, k), "rhs": (k, n)}
    positions = ("acc", "a", "b") if call.argument_order == "acc_a_b" else ("a", "b", "acc")
    values = []
    for op, position in zip(call.passed, positions, strict=True):
        role = _role(op, position)
        intended_role = {"acc": "acc", "a": "lhs", "b": "rhs"}[position]
        shape = (op.shape[0], op.shape[1]) if (
            not conform and op.shape is not None and len(op.shape) == 2
            and None not in op.shape) else by_role_shape[intended_role]
        layout_kind = _layout_kind(op, role)
        convert = _convert_spec(op, role, a)
        if convert is not None:
            # The value before the conversion: zeros for a splat (`layout_cast(jnp.zeros(...))`),
            # else data in the source layout, read through its plain view (an mma result, a
            # strided load).
            zeros = convert.layout_kind == "splat"
        else:
            zeros = (op.source in ("splatted", "created", "zeros") or layout_kind == "splat"
                     or (call.api == PALLAS_API and role == "acc" and op.source is None))
        values.append(ValueSpec(
            role=role,
            dtype=op.memory_dtype or "float32",
            element_type=op.mlir or "f32",
            is_signed=op.is_signed,
            layout_kind=layout_kind,
            layout_dtype=_layout_dtype(op, role, a),
            m_warps=op.layout.m_warps,
            shape=(int(shape[0] or m), int(shape[1] or n)),
            zeros=zeros,
            transposed=(op.view == "transposed" if op.view is not None and not zeros and convert is None
                        else (position == "b" and not zeros and convert is None
                              and layout_kind != "strided")),
            convert_from=convert,
        ))
    intended = (0, 1, 2) if call.argument_order == "acc_a_b" else (2, 0, 1)
    slot = {"acc": intended[0], "a": intended[1], "b": intended[2]}
    build_order = tuple(slot[r] for r in call.creation_order)
    instr: MmaInstruction = emitted_instruction(call)
    data = tuple(op.memory_dtype or "float32" for op in call.intended)
    return KernelSpec(
        family=NAME,
        api=call.api,
        semantics=call.lowering_semantics or "lane",
        values=(values[0], values[1], values[2]),
        intended=intended,
        build_order=(build_order[0], build_order[1], build_order[2]),
        data=(data[0], data[1], data[2]),
        instruction=asdict(instr),
        x64=any("64" in v.dtype for v in values),
        notes=tuple(notes),
    )


def _convert_spec(op: Operand, role: str, a: Operand) -> ConvertSpec | None:
    source = op.converted_from
    if source is None or source.kind in (None, "other"):
        return None
    kind = _layout_kind(op, role, source) if source.kind != "splat" else "splat"
    if kind == "splat" and op.layout.kind == "splat":
        return None
    from_role = {"mma_lhs": "lhs", "mma_rhs": "rhs", "mma_acc": "acc"}.get(kind, role)
    return ConvertSpec(layout_kind=kind, layout_dtype=_layout_dtype(op, from_role, a, source),
                       m_warps=source.m_warps)


def _round_up(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple
