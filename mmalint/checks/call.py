"""The normalized call the rules see, for every instruction family: named operands with the
facts known of each (role, memory space, dtype, signedness, layout, shape, view, where each fact
was decided) and the call's options, independent of how they were written.

How a family's site becomes this record (which roles, which API takes which options, defaults per
jax version) is the family module's job (`mmalint.checks.families`); this module only describes
what one operand value is.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from mmalint.analysis.calls import MmaSite
from mmalint.analysis.dtypes import dtype_of_ir_type
from mmalint.analysis.values import (
    Array,
    Const,
    DType,
    Fragment,
    IrType,
    Layout,
    Origin,
    TupleVal,
    Value,
    as_shape,
)
from mmalint.facts.dtypes import DTYPES, IR_TYPES

# Where an operand lives: what jax's families read their operands from.
MEMORY_SPACES = ("registers", "smem", "tmem", "gmem")


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
    role: str = ""  # its role in the family's signature: acc, a, b
    memory_space: str | None = None  # one of MEMORY_SPACES; None when not known
    swizzle: int | None = None  # of a shared-memory operand, in bytes, when its ref says
    tiling: tuple[int, ...] | None = None  # of a shared-memory operand, when its ref says
    # Of a TMEM operand: the packing of its (default) TMEM layout and whether it was allocated
    # collective, None when not known; where the packing was decided.
    tmem_packing: int | None = None
    tmem_collective: bool | None = None
    packing_origin: Origin | None = None

    @property
    def is_int(self) -> bool:
        info = IR_TYPES.get(self.element_type or "")
        return info is not None and info.is_integer

    @property
    def is_float(self) -> bool:
        info = IR_TYPES.get(self.element_type or "")
        return info is not None and info.is_floating

    @property
    def is_signed_text(self) -> str:
        """Its `is_signed` as written (`True`, `False`, `None`); `?` when not known."""
        return {"signed": "True", "unsigned": "False", "signless": "None"}.get(self.signedness or "", "?")

    @property
    def is_signed_misplaced(self) -> bool:
        """An integer array without `is_signed`, or a float one with it: what FragmentedArray's
        constructor refuses."""
        return (self.is_int and self.signedness == "signless") or (self.is_float and self.signedness != "signless")

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

    def named_json(self) -> dict[str, Any]:
        """The operand in `call.operands`: its role and memory space, the facts of `to_json`,
        how its memory was viewed, and where each fact was decided."""
        return {
            "role": self.role,
            "memory_space": self.memory_space,
            **self.to_json(),
            "swizzle": self.swizzle,
            "transposed": None if self.view is None else self.view == "transposed",
            "tmem_packing": self.tmem_packing,
            "tmem_collective": self.tmem_collective,
            "origins": {
                "argument": _origin_json(self.arg_origin),
                "created": _origin_json(self.created),
                "type": _origin_json(self.type_origin),
                "signedness": _origin_json(self.sign_origin),
                "data": _origin_json(self.data_origin),
                "converted": _origin_json(self.converted_at),
            },
        }


def _origin_json(origin: Origin | None) -> dict[str, Any] | None:
    """Where a fact was decided: the file and the 1-based row and column it starts at."""
    if origin is None:
        return None
    span = origin.span()
    return {"filename": span.filename,
            "location": {"row": span.start.line, "column": span.start.column + 1}}


def _layout_json(layout: Layout | None) -> dict[str, Any] | None:
    if layout is None:
        return None
    return {"kind": layout.kind, "bitwidth": layout.bits, "m_warps": layout.m_warps, "name": layout.name}


@dataclass(frozen=True)
class MmaCall:
    """One call site of an instruction family on one path, normalized for one jax version.

    The `mma` family's operands are `acc`, `a` and `b` (by role: `swapped` reorders a call that
    passed the accumulator last); `frontend` is "mosaic" or "pallas", the layer whose API it is.
    """

    api: str
    site: MmaSite
    version: str
    semantics: str | None
    acc: Operand
    a: Operand
    b: Operand
    order: str = "acc_a_b"
    target_arch: tuple[int, int] | None = None
    frontend: str = "mosaic"
    # The target as written (`sm_90a`): the suffix matters where an instruction exists on one
    # GPU only (wgmma: sm_90a, not sm_90).
    target_arch_name: str | None = None

    @property
    def family(self) -> str:
        return self.site.family

    @property
    def origin(self) -> Origin:
        return self.site.origin

    @cached_property
    def options(self) -> dict[str, Any]:
        """The call's options as JSON values: the lowering semantics, then those the site
        recorded (unknown values are null). Made once a call: the conditions ask for one at
        a time, many times a call (read it, never change it)."""
        options: dict[str, Any] = {"lowering_semantics": self.semantics}
        for name, value in self.site.options:
            options[name] = value.value if isinstance(value, Const) else None
        return options

    @property
    def operands(self) -> dict[str, Operand]:
        return {"acc": self.acc, "a": self.a, "b": self.b}

    def swapped(self) -> MmaCall:
        """The call by roles when the accumulator was passed last: `mma(a, b, acc)`."""
        return replace(
            self, acc=replace(self.b, role="acc"), a=replace(self.acc, role="a"),
            b=replace(self.a, role="b"), order="a_b_acc",
        )

    def to_json(self) -> dict[str, Any]:
        world = {b.name: b.label for b in self.site.context.world}
        return {
            "family": self.family,
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
            "operands": [op.named_json() for op in self.operands.values()],
            "options": self.options,
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


def operand(
    position: int, value: Value, arg_origin: Origin | None, role: str = "",
    memory_space: str | None = None,
) -> Operand:
    """What the value passed at `position` tells of one operand: a `FragmentedArray` (mgpu) or
    an array (Pallas); anything else is an operand of unknown facts."""
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
            role,
            memory_space,
        )
    if isinstance(value, Array):
        dtype = value.dtype.name if isinstance(value.dtype, DType) else None
        info = DTYPES.get(dtype or "")
        signedness = info.signedness if info is not None else None
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
            role,
            memory_space,
        )
    return Operand(position, value, None, None, None, None, None, None, None, None, None, None,
                   arg_origin, "", role=role, memory_space=memory_space)
