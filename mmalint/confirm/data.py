"""Random test data, exact values and the NumPy reference (NumPy only; used inside workers).

Every sample is kept twice: as bit patterns (`codes`, what the GPU sees) and as exact values
(int64 or float64, what NumPy multiplies). Integers cover the dtype's full range, so uint8
values >= 128 and int8 values < 0 are both present and sign mistakes show. Floats are drawn in
[-1, 1] and rounded to the dtype with our own decoders (no ml_dtypes needed, so the CuPy path
works where jax is absent).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from mmalint.confirm.dtypes import DTYPES

# The dtypes test data can be made of, with their bit widths from the one dtype table: every
# integer (signed, or unsigned with bool), and the floats `decode` has a decoder for.
_INT_BITS = {d.name: d.bits for d in DTYPES.values() if d.kind == "int"}
_UINT_BITS = {d.name: d.bits for d in DTYPES.values() if d.kind in ("uint", "bool")}
_FLOAT_BITS = {name: DTYPES[name].bits for name in (
    "float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2")}


@dataclass(frozen=True)
class Sample:
    dtype: str
    codes: np.ndarray  # uint64 bit patterns, `bits` wide
    values: np.ndarray  # int64 or float64, exactly the numbers the codes encode

    @property
    def bits(self) -> int:
        return bit_width(self.dtype)


def bit_width(dtype: str) -> int:
    for table in (_INT_BITS, _UINT_BITS, _FLOAT_BITS):
        if dtype in table:
            return table[dtype]
    raise ValueError(f"no test data for dtype {dtype}")


def is_integer(dtype: str) -> bool:
    return dtype in _INT_BITS or dtype in _UINT_BITS


def decode(dtype: str, codes: np.ndarray) -> np.ndarray:
    """The exact numbers a dtype's bit patterns encode (int64 or float64)."""
    codes = np.asarray(codes, dtype=np.uint64)
    if dtype in _INT_BITS:
        bits = _INT_BITS[dtype]
        signed = codes.astype(np.int64)  # wraps for 64-bit codes, which is the decoding
        if bits < 64:
            signed = np.where(signed >= (1 << (bits - 1)), signed - (1 << bits), signed)
        return signed.astype(np.int64)
    if dtype in _UINT_BITS:
        return codes.astype(np.int64)
    if dtype == "float64":
        return codes.view(np.float64).copy()
    if dtype == "float32":
        return codes.astype(np.uint32).view(np.float32).astype(np.float64)
    if dtype == "float16":
        return codes.astype(np.uint16).view(np.float16).astype(np.float64)
    if dtype == "bfloat16":
        return (codes.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    if dtype == "float8_e4m3fn":
        return _decode_minifloat(codes, exp_bits=4, man_bits=3, bias=7, ieee_special=False)
    if dtype == "float8_e5m2":
        return _decode_minifloat(codes, exp_bits=5, man_bits=2, bias=15, ieee_special=True)
    raise ValueError(f"cannot decode dtype {dtype}")


def _decode_minifloat(codes: np.ndarray, *, exp_bits: int, man_bits: int, bias: int,
                      ieee_special: bool) -> np.ndarray:
    c = codes.astype(np.int64)
    sign = np.where((c >> (exp_bits + man_bits)) & 1, -1.0, 1.0)
    exp = (c >> man_bits) & ((1 << exp_bits) - 1)
    man = c & ((1 << man_bits) - 1)
    normal = (1.0 + man / (1 << man_bits)) * np.exp2(exp.astype(np.float64) - bias)
    subnormal = (man / (1 << man_bits)) * np.exp2(1.0 - bias)
    value = sign * np.where(exp == 0, subnormal, normal)
    top = (1 << exp_bits) - 1
    if ieee_special:  # e5m2: exponent all ones is inf/NaN
        value = np.where(exp == top, np.where(man == 0, sign * np.inf, np.nan), value)
    else:  # e4m3fn: only S.1111.111 is NaN, no infinities
        value = np.where((exp == top) & (man == (1 << man_bits) - 1), np.nan, value)
    return value


def _round_to(dtype: str, x: np.ndarray) -> np.ndarray:
    """Bit patterns of `dtype` closest to float64 `x` (|x| <= 1)."""
    if dtype == "float64":
        return x.astype(np.float64).view(np.uint64)
    if dtype == "float32":
        return x.astype(np.float32).view(np.uint32).astype(np.uint64)
    if dtype == "float16":
        return x.astype(np.float16).view(np.uint16).astype(np.uint64)
    if dtype == "bfloat16":
        return (x.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint64)
    table = decode(dtype, np.arange(256, dtype=np.uint64))
    finite = np.flatnonzero(np.isfinite(table))
    nearest = np.abs(table[finite][None, :] - x.reshape(-1, 1)).argmin(axis=1)
    return finite[nearest].astype(np.uint64).reshape(x.shape)


def sample(dtype: str, shape: tuple[int, ...], rng: np.random.Generator, *,
           accumulator: bool = False) -> Sample:
    """Random data of `dtype`. Operands span the full integer range; accumulators start
    small ([-100, 100), or [0, 100) unsigned) so sums stay far from overflow."""
    if is_integer(dtype):
        bits = bit_width(dtype)
        if accumulator:
            low = 0 if dtype in _UINT_BITS else -100
            values = rng.integers(low, 100, shape, dtype=np.int64)
            return Sample(dtype, (values & ((1 << bits) - 1)).astype(np.uint64), values)
        codes = rng.integers(0, 1 << bits, shape, dtype=np.uint64)
        return Sample(dtype, codes, decode(dtype, codes))
    codes = _round_to(dtype, rng.uniform(-1.0, 1.0, shape))
    return Sample(dtype, codes, decode(dtype, codes))


def zeros(dtype: str, shape: tuple[int, ...]) -> Sample:
    codes = np.zeros(shape, dtype=np.uint64)
    return Sample(dtype, codes, decode(dtype, codes))


@dataclass(frozen=True)
class Comparison:
    """A result against the NumPy reference."""

    exact: bool  # integers: every element equal
    max_abs_error: float
    tolerance: float  # 0 for integers (bit-exact)
    within: bool

    def describe(self) -> str:
        if self.tolerance == 0:
            if self.exact:
                return "bit-exact against NumPy"
            return f"differs from NumPy: max abs error {self.max_abs_error:.6g}"
        verdict = "within" if self.within else "outside"
        return (f"max abs error {self.max_abs_error:.3g} against NumPy ({verdict} "
                f"tolerance {self.tolerance:.3g})")


def reference(acc: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """acc + a @ b in int64 or float64."""
    if acc.dtype.kind == "f" or a.dtype.kind == "f":
        return acc.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    return acc.astype(np.int64) + a.astype(np.int64) @ b.astype(np.int64)


def float_tolerance(acc_dtype: str, k: int, scale: float, operand_dtype: str | None = None) -> float:
    """Tolerance for a float result: 1e-4 for a float32 accumulator at K=128 and magnitude 1
    (ten times jax's own `test_warp_mma` atol), growing with K and with the result's size.
    float32 operands are read as tf32 by wgmma and tcgen05 (a 10-bit mantissa, like f16), so
    their products get f16's tolerance."""
    per_k = {"float64": 1e-12, "float16": 1e-2, "bfloat16": 1e-1}.get(acc_dtype, 1e-4)
    if operand_dtype == "float32":
        per_k = max(per_k, 1e-2)
    return per_k * max(1.0, k / 128) * max(1.0, scale)


def compare(result: np.ndarray, expected: np.ndarray, *, acc_dtype: str, k: int,
            operand_dtype: str | None = None) -> Comparison:
    if expected.dtype.kind in "iu" and result.dtype.kind in "iub":
        got = result.astype(np.int64)
        if is_integer(acc_dtype) and bit_width(acc_dtype) == 32:
            # The hardware accumulates modulo 2**32; compare on the same ring.
            want = ((expected + (1 << 31)) % (1 << 32)) - (1 << 31)
            if acc_dtype.startswith("uint"):
                got = got % (1 << 32)
                want = expected % (1 << 32)
        else:
            want = expected
        err = float(np.abs(got - want).max()) if want.size else 0.0
        return Comparison(exact=err == 0, max_abs_error=err, tolerance=0.0, within=err == 0)
    got_f = result.astype(np.float64)
    want_f = expected.astype(np.float64)
    diff = np.abs(got_f - want_f)
    err = float(np.nanmax(diff)) if diff.size else 0.0
    if np.isnan(diff).any():
        err = float("inf")
    scale = float(np.abs(want_f).max()) if want_f.size else 1.0
    tol = float_tolerance(acc_dtype, k, scale, operand_dtype)
    return Comparison(exact=err == 0, max_abs_error=err, tolerance=tol, within=err <= tol)


def ran_record(part: str, result: np.ndarray, expected: np.ndarray | None, *, acc_dtype: str,
               k: int, start: float, operand_dtype: str | None = None,
               **extra: Any) -> dict[str, Any]:
    """The `ran` record of a gpu-tier part (`protocol.py`): the result against the NumPy
    reference, or a note when the shapes gave none."""
    record: dict[str, Any] = {"part": part, "status": "ran", **extra}
    if expected is None:
        record["note"] = "no NumPy reference: the shapes do not multiply"
    else:
        cmp = compare(result, expected, acc_dtype=acc_dtype, k=k, operand_dtype=operand_dtype)
        record |= {"exact": cmp.exact, "max_abs_error": cmp.max_abs_error,
                   "tolerance": cmp.tolerance, "within": cmp.within,
                   "comparison": cmp.describe()}
    record["seconds"] = time.perf_counter() - start
    return record
