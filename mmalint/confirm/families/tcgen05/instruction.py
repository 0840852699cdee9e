"""Which `tcgen05.mma` instruction a call needs, which one Mosaic emits, and a whole PTX module
issuing it (for ptxas).

Mosaic's template (`tcgen05.py`, `_do_mma`): `tcgen05.mma.cta_group::{1,2}.kind::{kind}
[d], a_desc, b_desc, idesc, enable_input_d`, the kind from A's element type (bf16/f16 `f16`,
f32 `tf32`, fp8 `f8f6f4`, block-scaled fp8 `mxf8f6f4.block_scale`, block-scaled float4
`mxf4`/`mxf4nvf4`, i8 `i8`). D, A and B types, M and N (and a scaled MMA's scale type) travel
in the instruction descriptor `idesc`, a 32-bit register: ptxas sees the kind, never the types,
so a type pair is never ptxas's to reject; a kind with `.block_scale` that has no block-scaled
form (f16, tf32, i8) is. Integer A/B are always encoded S8
(`create_instr_descriptor`, "Only s8 for now").
"""

from __future__ import annotations

from dataclasses import dataclass

from mmalint.confirm import dtypes
from mmalint.confirm.call import Call, Operand
from mmalint.confirm.families.tcgen05.descriptor import describe, encode

KERNEL_NAME = "mmalint_tcgen05"
# Unscaled float4 is PTX's `kind::f8f6f4` (fp8, fp6 and fp4 operands); Mosaic emits FP4 only
# block-scaled (`tcgen05.mma()` refuses it unscaled: MMA708).
_KINDS = {"f16": "f16", "bf16": "f16", "f32": "tf32", "f8E4M3FN": "f8f6f4",
          "f8E5M2": "f8f6f4", "i8": "i8", "f4E2M1FN": "f8f6f4"}
# The block-scaled kinds Mosaic emits (`_do_mma`): fp8 `mxf8f6f4.block_scale.scale_vec::1X`;
# float4 with e8m0 scales `mxf4.block_scale.scale_vec::2X` (jax 0.10; `mxf4nvf4 ... ::2X` from
# 0.11, the same MMA), with e4m3 scales `mxf4nvf4.block_scale.scale_vec::4X`. The other kinds
# (f16, tf32, i8) have no block-scaled form: written as `kind::f16.block_scale`, which ptxas
# refuses ("Modifier '.kind::f16' cannot be combined with modifier '.block_scale'").
_SCALED_FP8_KIND = "mxf8f6f4.block_scale.scale_vec::1X"
_SCALED_F4_KINDS = {"f8E8M0FNU": "mxf4.block_scale.scale_vec::2X",
                    "f8E4M3FN": "mxf4nvf4.block_scale.scale_vec::4X"}
_D_NAMES = {"f16": "f16", "f32": "f32", "i32": "s32"}
_AB_NAMES = {"f16": "f16", "bf16": "bf16", "f32": "tf32", "f8E4M3FN": "e4m3", "f8E5M2": "e5m2",
             "i8": "s8"}


@dataclass(frozen=True)
class Tcgen05Instruction:
    """`tcgen05.mma.cta_group::{cta}.kind::{kind}` and the descriptor fields it is issued with
    (`descriptor` is None where jax builds none: a type with no encoding)."""

    cta: int
    kind: str
    descriptor: str | None = None
    block_scale: bool = False
    # With `block_scale`, the kind as Mosaic writes it (`mxf8f6f4.block_scale.scale_vec::1X`),
    # when the kind has a block-scaled form.
    scaled_kind: str | None = None

    @property
    def opcode(self) -> str:
        if not self.block_scale:
            kind = self.kind
        else:
            kind = self.scaled_kind or f"{self.kind}.block_scale"
        return f"tcgen05.mma.cta_group::{self.cta}.kind::{kind}"

    @property
    def text(self) -> str:
        return f"{self.opcode} [{self.descriptor}]" if self.descriptor else self.opcode

    def __str__(self) -> str:
        return self.text


def _kind(op: Operand) -> str:
    mlir = op.mlir or "?"
    return _KINDS.get(mlir, mlir)


def _descriptor(d: str | None, a: str | None, b: str | None, kind: str) -> str | None:
    value = encode(d, a, b)
    return describe(value, kind) if value is not None else None


def _cta(call: Call) -> int:
    return 2 if call.option("collective") else 1


def _scaled(call: Call) -> bool:
    return bool(call.option("a_scale")) and bool(call.option("b_scale"))


def _scaled_kind(call: Call) -> str | None:
    """The block-scaled kind Mosaic emits for the call's A and scale type (None: no such
    kind, or the call is not block-scaled)."""
    if not _scaled(call):
        return None
    mlir = call.a.mlir or ""
    if mlir == "f4E2M1FN":
        return _SCALED_F4_KINDS.get(call.option("a_scale_type") or "", _SCALED_F4_KINDS[
            "f8E8M0FNU"])
    return _SCALED_FP8_KIND if _KINDS.get(mlir) == "f8f6f4" else None


def emitted_instruction(call: Call) -> Tcgen05Instruction:
    """The instruction for the call as written, with the descriptor jax would encode for it."""
    d = _D_NAMES.get(call.acc.mlir or "")
    return Tcgen05Instruction(
        cta=_cta(call), kind=_kind(call.a),
        descriptor=_descriptor(d, _AB_NAMES.get(call.a.mlir or ""),
                               _AB_NAMES.get(call.b.mlir or ""), _kind(call.a)),
        block_scale=_scaled(call), scaled_kind=_scaled_kind(call))


def data_instruction(call: Call) -> Tcgen05Instruction:
    """The instruction the data needs: uint8 data is `U8` in the descriptor (which PTX has), D
    the accumulator the operands take (s32 for integers, f32 otherwise)."""

    def data_type(op: Operand) -> str | None:
        info = dtypes.lookup(op.memory_dtype)
        if info is not None and info.mlir == "i8":
            return "u8" if info.natural_signedness == "unsigned" else "s8"
        return _AB_NAMES.get(op.mlir or "")

    integer = dtypes.mlir_is_integer(call.a.mlir or "")
    return Tcgen05Instruction(
        cta=_cta(call), kind=_kind(call.a),
        descriptor=_descriptor("s32" if integer else "f32", data_type(call.a),
                               data_type(call.b), _kind(call.a)),
        block_scale=_scaled(call), scaled_kind=_scaled_kind(call))


def ptx_module(instr: Tcgen05Instruction, arch: str, version: str) -> str:
    """A complete PTX module issuing the instruction on a TMEM address, two SMEM descriptors
    and the instruction descriptor (all from parameters), then a commit."""
    scales = ", [%sa], [%sb]" if instr.block_scale else ""
    lines = [
        f".version {version}",
        f".target {arch}",
        ".address_size 64",
        "",
        f".visible .entry {KERNEL_NAME}(.param .u32 param_d, .param .u64 param_a,",
        "  .param .u64 param_b, .param .u32 param_idesc, .param .u32 param_scales)",
        "{",
        "  .reg .pred %p;",
        "  .reg .b32 %d, %idesc, %sa, %sb;",
        "  .reg .b64 %a, %b;",
        "  ld.param.u32 %d, [param_d];",
        "  ld.param.u64 %a, [param_a];",
        "  ld.param.u64 %b, [param_b];",
        "  ld.param.u32 %idesc, [param_idesc];",
        "  ld.param.u32 %sa, [param_scales];",
        "  add.u32 %sb, %sa, 4;",
        "  setp.ne.b32 %p, %idesc, 0;",
        f"  {instr.opcode} [%d], %a, %b, %idesc{scales}, %p;",
        "  ret;",
        "}",
        "",
    ]
    return "\n".join(lines)
