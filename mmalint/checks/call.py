"""The normalized MMA call the rules see: facts per operand, independent of how they were written."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from mmalint.analysis.calls import MmaSite
from mmalint.analysis.dtypes import DTYPES, IR_TYPES, dtype_of_ir_type
from mmalint.analysis.values import (
    Array,
    Const,
    DType,
    Fragment,
    IrType,
    Layout,
    Origin,
    Semantics,
    TupleVal,
    Value,
    as_shape,
)

ACC_TYPES = frozenset({"i32", "f32", "f64"})


@dataclass(frozen=True)
class Operand:
    """What is known of one argument of an MMA call. None means unknown."""

    position: int  # 0, 1 or 2: where it was passed
    value: Value
    element_type: str | None  # MLIR: i8, bf16, f32...
    dtype: str | None  # NumPy: int8, uint8, float32...
    signedness: str | None  # "signed", "unsigned", "signless"
    layout: Layout | None
    shape: tuple[int | None, ...] | None
    data_dtype: str | None
    created: Origin | None
    type_origin: Origin | None
    sign_origin: Origin | None
    data_origin: Origin | None
    arg_origin: Origin | None
    how: str
    converted_from: Layout | None = None
    converted_at: Origin | None = None
    # How the memory it was loaded from was viewed: "plain", "transposed" or None (unknown).
    view: str | None = None

    @property
    def is_int(self) -> bool:
        info = IR_TYPES.get(self.element_type or "")
        return info is not None and info.is_integer

    @property
    def is_float(self) -> bool:
        info = IR_TYPES.get(self.element_type or "")
        return info is not None and info.is_floating

    @property
    def display(self) -> str:
        """How the operand's type reads in a message: the NumPy name when decidable."""
        if self.dtype is not None:
            return self.dtype
        if self.element_type is not None:
            return self.element_type
        return "unknown"

    def to_json(self) -> dict[str, Any]:
        layout = _layout_json(self.layout)
        return {
            "dtype": self.dtype,
            "element_type": self.element_type,
            "signedness": self.signedness,
            "layout": layout,
            "shape": list(self.shape) if self.shape is not None else None,
            "data_dtype": self.data_dtype,
            "source": self.how or None,
            "converted_from": _layout_json(self.converted_from),
            "view": self.view,
        }


def _layout_json(layout: Layout | None) -> dict[str, Any] | None:
    if layout is None:
        return None
    return {"kind": layout.kind, "bitwidth": layout.bits, "m_warps": layout.m_warps, "name": layout.name}


@dataclass(frozen=True)
class MmaCall:
    api: str
    site: MmaSite
    version: str
    semantics: str | None
    acc: Operand
    a: Operand
    b: Operand
    order: str = "acc_a_b"
    target_arch: tuple[int, int] | None = None

    @property
    def origin(self) -> Origin:
        return self.site.origin

    @property
    def operands(self) -> dict[str, Operand]:
        return {"acc": self.acc, "a": self.a, "b": self.b}

    def swapped(self) -> MmaCall:
        """The call by roles when the accumulator was passed last: `mma(a, b, acc)`."""
        return MmaCall(
            self.api, self.site, self.version, self.semantics, self.b, self.acc, self.a, "a_b_acc",
            self.target_arch,
        )

    def to_json(self) -> dict[str, Any]:
        world = {b.name: b.label for b in self.site.context.world}
        return {
            "api": self.api,
            "target_jax": self.version,
            "lowering_semantics": self.semantics,
            "acc": self.acc.to_json(),
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            "argument_order": self.order,
            "target_arch": f"sm_{self.target_arch[0]}{self.target_arch[1]}" if self.target_arch else None,
            "world": world,
            "expected_failure": self.site.context.expected_failure is not None,
        }


def _signedness(value: Value) -> str | None:
    if isinstance(value, Const):
        if value.value is True:
            return "signed"
        if value.value is False:
            return "unsigned"
        if value.value is None:
            return "signless"
    return None


def _shape(value: Value) -> tuple[int | None, ...] | None:
    return as_shape(value) if isinstance(value, TupleVal) else None


def operand(position: int, value: Value, arg_origin: Origin | None) -> Operand:
    if isinstance(value, Fragment):
        element = value.ir_type.name if isinstance(value.ir_type, IrType) else None
        signedness = _signedness(value.signed)
        dtype = None
        if element is not None:
            is_signed = {"signed": True, "unsigned": False}.get(signedness or "")
            if IR_TYPES[element].is_floating or signedness in ("signed", "unsigned"):
                dtype = dtype_of_ir_type(element, is_signed)
        data = value.data_dtype.name if isinstance(value.data_dtype, DType) else None
        return Operand(
            position,
            value,
            element,
            dtype,
            signedness,
            value.layout if isinstance(value.layout, Layout) else None,
            _shape(value.shape),
            data,
            value.created,
            value.ir_type.origin,
            value.signed.origin,
            value.data_dtype.origin,
            arg_origin,
            value.how,
            value.converted_from if isinstance(value.converted_from, Layout) else None,
            value.converted_at,
            value.view,
        )
    if isinstance(value, Array):
        dtype = value.dtype.name if isinstance(value.dtype, DType) else None
        info = DTYPES.get(dtype or "")
        signedness = None
        if info is not None:
            signed = info.is_signed
            signedness = "signless" if signed is None else ("signed" if signed else "unsigned")
        return Operand(
            position,
            value,
            info.mlir if info is not None else None,
            dtype,
            signedness,
            value.layout if isinstance(value.layout, Layout) else None,
            _shape(value.shape),
            None,
            value.created,
            value.dtype.origin,
            value.dtype.origin,
            None,
            arg_origin,
            value.how,
            value.converted_from if isinstance(value.converted_from, Layout) else None,
            value.converted_at,
            value.view,
        )
    return Operand(position, value, None, None, None, None, None, None, None, None, None, None,
                   arg_origin, "")


def normalize(
    site: MmaSite,
    version: str,
    default_semantics: str | None = None,
    target_arch: tuple[int, int] | None = None,
    pallas_m_warps_ignored: bool = False,
) -> MmaCall:
    """The call's facts for one jax version.

    `default_semantics` is what that jax lowers Pallas kernels with when none is given;
    `pallas_m_warps_ignored`: jax 0.11's `Layout.MMA_*(dtype)` drops an `m_warps=` argument.
    """
    operands = [operand(i, site.args[i], site.arg_origins[i]) for i in range(3)]
    if pallas_m_warps_ignored:
        operands = [_pallas_m_warps_dropped(op) for op in operands]
    semantics = None
    if site.api == "plgpu.mma" and isinstance(site.context.semantics, Semantics):
        semantics = site.context.semantics.name
        if semantics == "default":
            semantics = default_semantics
    return MmaCall(
        site.api, site, version, semantics, operands[0], operands[1], operands[2],
        target_arch=target_arch,
    )


def _pallas_m_warps_dropped(op: Operand) -> Operand:
    layout = op.layout
    if (
        layout is None
        or not (layout.name or "").startswith("Layout.MMA_")
        or layout.m_warps_origin is None
    ):
        return op
    return replace(op, layout=replace(layout, m_warps=4))
