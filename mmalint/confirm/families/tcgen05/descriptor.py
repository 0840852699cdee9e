"""The tcgen05 instruction descriptor: what its type fields mean (PTX ISA "Instruction
descriptor"; jax's `tcgen05.create_instr_descriptor`). Dependency-free: workers read the
descriptor jax built with it, the host writes the one the data needs."""

from __future__ import annotations

# D format, bits 4-5.
D_FORMATS = {0: "f16", 1: "f32", 2: "s32"}
# A/B format, bits 7-9 and 10-12, per kind: kind::f16 (F16=0, BF16=1, TF32=2), kind::f8f6f4
# (E4M3=0, E5M2=1), kind::i8 (U8=0, S8=1).
AB_FORMATS = {
    "f16": {0: "f16", 1: "bf16", 2: "tf32"},
    "f32": {0: "f16", 1: "bf16", 2: "tf32"},
    "f8f6f4": {0: "e4m3", 1: "e5m2"},
    "s32": {0: "u8", 1: "s8"},
}


def fields(desc: int) -> tuple[str, str, str]:
    """(d, a, b) type names of a descriptor (an integer D means kind::i8)."""
    d = D_FORMATS.get((desc >> 4) & 0x3, "?")
    a_code, b_code = (desc >> 7) & 0x7, (desc >> 10) & 0x7
    if d == "s32":
        table = AB_FORMATS["s32"]
        return d, table.get(a_code, "?"), table.get(b_code, "?")
    # A float D: kind::f16 or kind::f8f6f4 share codes 0/1; the kind names which.
    return d, str(a_code), str(b_code)


def describe(desc: int) -> str:
    """`idesc d=s32 a=s8 b=s8` for an integer descriptor; float ones name the raw codes."""
    d, a, b = fields(desc)
    if d == "s32":
        return f"idesc d={d} a={a} b={b}"
    return f"idesc d={d} a-format={a} b-format={b}"
