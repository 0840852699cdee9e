"""Which `mma.sync` instruction a call needs, and which one Mosaic emits for it.

Mosaic's template (`mma.py`, `_mma_single_tile`): one `mma.sync.aligned.m16n8k{K}.row.col`
per 16x8 tile, K = 256 / operand bit width (8 for f64), 4 A registers, 2 B registers and
4 accumulator registers; A/B types from each operand's dtype and `is_signed`.
"""

from __future__ import annotations

from dataclasses import dataclass

from mmalint.confirm import dtypes
from mmalint.confirm.families.mma import PALLAS_API
from mmalint.confirm.families.mma.facts import accumulator_dtype, k_tile
from mmalint.confirm.signature import Call, Operand


@dataclass(frozen=True)
class Registers:
    """A fragment: `count` registers of PTX type `kind` (`b32`, `f32` or `f64`)."""

    kind: str
    count: int

    @property
    def bytes(self) -> int:
        return 8 if self.kind == "f64" else 4


@dataclass(frozen=True)
class MmaInstruction:
    """`mma.sync.aligned.m16n8k{k}.row.col.{d}.{a}.{b}.{c}` and its register fragments."""

    k: int
    d: str
    a: str
    b: str
    c: str

    @property
    def text(self) -> str:
        return f"mma.sync.aligned.m16n8k{self.k}.row.col.{self.d}.{self.a}.{self.b}.{self.c}"

    @property
    def a_regs(self) -> Registers:
        # f64 operands are one element per 64-bit register; everything else packs into b32.
        return Registers("f64", 4) if self.a == "f64" else Registers("b32", 4)

    @property
    def b_regs(self) -> Registers:
        return Registers("f64", 2) if self.b == "f64" else Registers("b32", 2)

    @property
    def c_regs(self) -> Registers:
        # A 16-bit accumulator is packed two to a register (f16x2): 2 registers, not 4.
        if self.c in ("f16", "bf16"):
            return Registers("b32", 2)
        if self.c in ("f32", "f64"):
            return Registers(self.c, 4)
        return Registers("b32", 4)

    def __str__(self) -> str:
        return self.text


def _ptx(op: Operand, signedness: str | None) -> str:
    return dtypes.mosaic_ptx_type(op.mlir or "?", signedness)


def _operand_signedness(call: Call, op: Operand) -> str | None:
    """The sign Mosaic uses for an integer operand on this call's path.

    `mgpu.mma` and Pallas under Lane semantics take it from the operand (Pallas derives it
    from the dtype); the Warpgroup dialect lowering sets `is_signed=True` for every integer.
    """
    if call.api == PALLAS_API:
        if call.lowering_semantics == "warpgroup":
            return "signed"
        info = dtypes.lookup(op.resolved_dtype)
        return info.natural_signedness if info else op.signedness
    return op.signedness


def emitted_instruction(call: Call) -> MmaInstruction:
    """The instruction for the call as written: values in the order passed, D/C from the
    accumulator dtype exactly as the user wrote it (so f32 with s8 operands is `.f32.s8.s8.f32`,
    and an unsigned int32 accumulator is `.u32`)."""
    acc, a, b = call.passed
    d = _ptx(acc, acc.signedness if acc.signedness != "signless" else "signed")
    return MmaInstruction(
        k=k_tile(a.bits or 16), d=d,
        a=_ptx(a, _operand_signedness(call, a)), b=_ptx(b, _operand_signedness(call, b)), c=d,
    )


def data_instruction(call: Call) -> MmaInstruction:
    """The instruction the data needs: roles by meaning, A/B signs from the data's dtype, D the
    accumulator `mma` accepts for the operands (s32 for integers, f64 for f64, f32 otherwise)."""
    _, a, b = call.intended

    def data_type(op: Operand) -> str:
        data = dtypes.lookup(op.data_dtype) or dtypes.lookup(op.resolved_dtype)
        if data is not None and data.mlir == op.mlir:
            return dtypes.mosaic_ptx_type(data.mlir, data.natural_signedness)
        return _ptx(op, op.signedness)

    d = dtypes.mosaic_ptx_type(dtypes.DTYPES[accumulator_dtype(a.mlir or "")].mlir, "signed")
    return MmaInstruction(k=k_tile(a.bits or 16), d=d, a=data_type(a), b=data_type(b), c=d)
