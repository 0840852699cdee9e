"""The element types mmalint knows: NumPy name, kind, bit width, and the MLIR type
`utils.dtype_to_ir_type` gives (integers are signless). One table for the analyzer
(`mmalint.analysis.dtypes`) and the reference lowering (`mmalint.confirm.dtypes`); this module
imports nothing, so `mmalint.confirm` stays importable without libcst.
"""

from __future__ import annotations

from typing import Literal

Kind = Literal["int", "uint", "bool", "float", "complex"]

# (name, kind, bits, MLIR element type)
ELEMENT_TYPES: tuple[tuple[str, Kind, int, str], ...] = (
    ("bool", "bool", 1, "i1"),
    ("int2", "int", 2, "i2"),
    ("uint2", "uint", 2, "i2"),
    ("int4", "int", 4, "i4"),
    ("uint4", "uint", 4, "i4"),
    ("int8", "int", 8, "i8"),
    ("uint8", "uint", 8, "i8"),
    ("int16", "int", 16, "i16"),
    ("uint16", "uint", 16, "i16"),
    ("int32", "int", 32, "i32"),
    ("uint32", "uint", 32, "i32"),
    ("int64", "int", 64, "i64"),
    ("uint64", "uint", 64, "i64"),
    ("bfloat16", "float", 16, "bf16"),
    ("float16", "float", 16, "f16"),
    ("float32", "float", 32, "f32"),
    ("float64", "float", 64, "f64"),
    ("float8_e4m3fn", "float", 8, "f8E4M3FN"),
    ("float8_e5m2", "float", 8, "f8E5M2"),
    ("float8_e4m3fnuz", "float", 8, "f8E4M3FNUZ"),
    ("float8_e5m2fnuz", "float", 8, "f8E5M2FNUZ"),
    ("float8_e4m3b11fnuz", "float", 8, "f8E4M3B11FNUZ"),
    ("float8_e4m3", "float", 8, "f8E4M3"),
    ("float8_e3m4", "float", 8, "f8E3M4"),
    ("float8_e8m0fnu", "float", 8, "f8E8M0FNU"),
    ("float4_e2m1fn", "float", 4, "f4E2M1FN"),
    ("complex64", "complex", 64, "complex<f32>"),
    ("complex128", "complex", 128, "complex<f64>"),
)
