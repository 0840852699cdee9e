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


def describe(desc: int, kind: str | None = None) -> str:
    """`idesc d=s32 a=s8 b=s8`: the descriptor's D, A and B types (A/B read per the kind:
    `f16`, `tf32`, `f8f6f4`, `i8`; an integer D means kind::i8)."""
    d = D_FORMATS.get((desc >> 4) & 0x3, "?")
    a_code, b_code = (desc >> 7) & 0x7, (desc >> 10) & 0x7
    table_name = "s32" if d == "s32" else {"tf32": "f16", "mxf8f6f4": "f8f6f4"}.get(
        kind or "", kind or "f16")
    table = AB_FORMATS.get(table_name, {})
    return (f"idesc d={d} a={table.get(a_code, a_code)} b={table.get(b_code, b_code)}")


_D_CODES = {name: code for code, name in D_FORMATS.items()}
_AB_CODES = {"f16": 0, "bf16": 1, "tf32": 2, "e4m3": 0, "e5m2": 1, "u8": 0, "s8": 1}


def encode(d: str | None, a: str | None, b: str | None) -> int | None:
    """The type fields of a descriptor (D bits 4-5, A 7-9, B 10-12) for PTX type names, or None
    for a type with no encoding."""
    if d not in _D_CODES or a not in _AB_CODES or b not in _AB_CODES:
        return None
    return (_D_CODES[d] << 4) | (_AB_CODES[a] << 7) | (_AB_CODES[b] << 10)
