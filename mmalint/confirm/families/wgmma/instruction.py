"""Which `wgmma.mma_async` instruction a call needs, which one Mosaic emits, and a whole PTX
module issuing it (for ptxas).

Mosaic's template (`wgmma.py`, `wgmma_m64`): one `wgmma.mma_async.sync.aligned.m64n{N}k{K}.
{D}.{A}.{B}` per 64 rows, K = 32 bytes of the operand type (8 for tf32, 16 for 16-bit, 32 for
8-bit), D `f32`, `f16` or `s32`; f32 operands are `tf32`, and integer operands are always
spelled `s8` (v10:235, v11/v12:242, "TODO ... add u8 support").
"""

from __future__ import annotations

from dataclasses import dataclass

from mmalint.confirm import dtypes
from mmalint.confirm.call import Call, Operand

KERNEL_NAME = "mmalint_wgmma"
# MLIR element type -> the PTX type Mosaic spells for an operand.
_OPERAND_PTX = {"f32": "tf32", "f16": "f16", "bf16": "bf16", "f8E4M3FN": "e4m3",
                "f8E5M2": "e5m2", "i8": "s8"}
_ACC_PTX = {"f32": "f32", "f16": "f16", "i32": "s32"}


@dataclass(frozen=True)
class WgmmaInstruction:
    """`wgmma.mma_async.sync.aligned.m64n{n}k{k}.{d}.{a}.{b}`."""

    n: int
    k: int
    d: str
    a: str
    b: str
    a_in_registers: bool = False
    # MN-major operands (PTX `imm-trans-a/b` = 1): A passed as a transposed (K, M) buffer, B
    # the (K, N) buffer as allocated. PTX gives these immediates to .f16/.bf16 only.
    trans_a: bool = False
    trans_b: bool = False

    @property
    def text(self) -> str:
        return f"wgmma.mma_async.sync.aligned.m64n{self.n}k{self.k}.{self.d}.{self.a}.{self.b}"

    def __str__(self) -> str:
        trans = [f"imm-trans-{r}=1" for r, t in (("a", self.trans_a), ("b", self.trans_b)) if t]
        return self.text + (f" ({', '.join(trans)}: MN-major)" if trans else "")


def k_of(op: Operand) -> int:
    """K per instruction: 32 bytes of the operand type."""
    bits = op.bits or 16
    return max(256 // bits, 1)


def _operand_ptx(op: Operand) -> str:
    mlir = op.mlir or "?"
    return _OPERAND_PTX.get(mlir, mlir)


def _acc_ptx(acc: Operand) -> str:
    mlir = acc.mlir or "?"
    if mlir == "i32" and acc.signedness == "unsigned":
        return "u32"
    return _ACC_PTX.get(mlir, mlir)


def _n(call: Call) -> int:
    shape = call.acc.shape
    if shape is not None and len(shape) == 2 and shape[1] is not None:
        return int(shape[1])
    return 128


def _transposes(call: Call) -> tuple[bool, bool]:
    """(trans-a, trans-b) from the signature: A transposed, or an SMEM B not transposed (the
    (K, N) buffer itself, N contiguous); unknown is K-major."""
    trans_a = call.a.memory_space == "smem" and call.a.transposed is True
    trans_b = call.b.memory_space == "smem" and call.b.transposed is False
    return trans_a, trans_b


def emitted_instruction(call: Call) -> WgmmaInstruction:
    """The instruction for the call as written: D from the accumulator as the user wrote it
    (`.u32` for an unsigned int32, `.f32` for an f32 accumulator of int8 operands)."""
    return WgmmaInstruction(n=_n(call), k=k_of(call.a), d=_acc_ptx(call.acc),
                            a=_operand_ptx(call.a), b=_operand_ptx(call.b),
                            a_in_registers=call.a.memory_space == "registers",
                            trans_a=_transposes(call)[0], trans_b=_transposes(call)[1])


def data_instruction(call: Call) -> WgmmaInstruction:
    """The instruction the data needs: A/B signs from the data's dtype (uint8 is `u8`, which
    PTX has), D the accumulator the operands take (s32 for integers, f32 otherwise)."""

    def data_type(op: Operand) -> str:
        info = dtypes.lookup(op.memory_dtype)
        if info is not None and info.mlir == "i8":
            return "u8" if info.natural_signedness == "unsigned" else "s8"
        return _operand_ptx(op)

    integer = dtypes.mlir_is_integer(call.a.mlir or "")
    return WgmmaInstruction(n=_n(call), k=k_of(call.a), d="s32" if integer else "f32",
                            a=data_type(call.a), b=data_type(call.b),
                            a_in_registers=call.a.memory_space == "registers",
                            trans_a=_transposes(call)[0], trans_b=_transposes(call)[1])


def _acc_registers(instr: WgmmaInstruction) -> tuple[str, int]:
    """The accumulator fragment per thread: N/2 32-bit values, or N/4 f16x2 registers."""
    if instr.d in ("f16", "bf16"):
        return "b32", max(instr.n // 4, 1)
    return ("f32" if instr.d == "f32" else "b32"), max(instr.n // 2, 1)


def ptx_module(instr: WgmmaInstruction, arch: str, version: str) -> str:
    """A complete PTX module: fence, the instruction on SMEM descriptors (A from registers when
    the call passes it so), commit, wait, and a store of the accumulator."""
    kind, count = _acc_registers(instr)
    d_regs = "{" + ", ".join(f"%d{i}" for i in range(count)) + "}"
    ta, tb = int(instr.trans_a), int(instr.trans_b)
    # imm-trans-a/b exist for .f16/.bf16 only: an MN-major 8- or 32-bit operand is written
    # with them anyway (the form the call asks for), and ptxas says whether PTX has it.
    trans = f", {ta}, {tb}" if instr.a_in_registers is False else f", {tb}"
    if instr.a in ("f16", "bf16"):
        tail = ", 1, 1" + trans
    elif instr.a in ("s8", "u8"):
        tail = trans if instr.trans_a or instr.trans_b else ""
    else:
        tail = ", 1, 1" + (trans if instr.trans_a or instr.trans_b else "")
    a_operand = "{%a0, %a1, %a2, %a3}" if instr.a_in_registers else "%da"
    lines = [
        f".version {version}",
        f".target {arch}",
        ".address_size 64",
        "",
        f".visible .entry {KERNEL_NAME}(.param .u64 param_out, .param .u64 param_da,",
        "  .param .u64 param_db, .param .u32 param_scale)",
        "{",
        "  .reg .pred %p;",
        "  .reg .b32 %scale, %a<4>;",
        "  .reg .b64 %out, %da, %db;",
        f"  .reg .{kind} %d<{count}>;",
        "  ld.param.u64 %out, [param_out];",
        "  ld.param.u64 %da, [param_da];",
        "  ld.param.u64 %db, [param_db];",
        "  ld.param.u32 %scale, [param_scale];",
        "  cvta.to.global.u64 %out, %out;",
        *[f"  ld.global.b32 %a{i}, [%out+{4 * i}];" for i in range(4)],
        *[f"  ld.global.{kind} %d{i}, [%out+{4 * i}];" for i in range(count)],
        "  setp.ne.b32 %p, %scale, 0;",
        "  wgmma.fence.sync.aligned;",
        f"  {instr.text} {d_regs}, {a_operand}, %db, %p{tail};",
        "  wgmma.commit_group.sync.aligned;",
        "  wgmma.wait_group.sync.aligned 0;",
        *[f"  st.global.{kind} [%out+{4 * i}], %d{i};" for i in range(count)],
        "  ret;",
        "}",
        "",
    ]
    return "\n".join(lines)
