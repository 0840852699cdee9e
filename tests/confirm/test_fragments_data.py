"""Host side of the CuPy path: test data, decoders, fragment packing, comparison.

The packing is checked against a scalar simulation of `mma.sync` written from the PTX ISA's
fragment tables shape by shape (not from the general formula `fragments.py` uses).
"""

from __future__ import annotations

import numpy as np
import pytest

from mmalint.confirm import data
from mmalint.confirm.families.mma import fragments


def _a_position(bits: int, lane: int, i: int) -> tuple[int, int]:
    """Row, column of element a_i held by `lane` (PTX ISA "Matrix Fragments for mma.m16n8k*")."""
    g, t = lane >> 2, lane % 4
    if bits == 16:  # m16n8k16 .f16/.bf16: a0..a7
        row = g if i in (0, 1, 4, 5) else g + 8
        col = t * 2 + (i & 1) + (8 if i >= 4 else 0)
    elif bits == 8:  # m16n8k32 .s8/.u8/.e4m3/.e5m2: a0..a15
        row = g if (i < 4 or 8 <= i < 12) else g + 8
        col = t * 4 + (i & 3) + (16 if i >= 8 else 0)
    elif bits == 4:  # m16n8k64 .s4/.u4: a0..a31
        row = g if (i < 8 or 16 <= i < 24) else g + 8
        col = t * 8 + (i & 7) + (32 if i >= 16 else 0)
    else:  # m16n8k8 .f64: a0..a3
        row = g + 8 * (i % 2)
        col = t + 4 * (i // 2)
    return row, col


def _b_position(bits: int, lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    if bits == 16:  # b0..b3
        return t * 2 + (i & 1) + (8 if i >= 2 else 0), g
    if bits == 8:  # b0..b7
        return t * 4 + (i & 3) + (16 if i >= 4 else 0), g
    if bits == 4:  # b0..b15
        return t * 8 + (i & 7) + (32 if i >= 8 else 0), g
    return t + 4 * i, g  # f64: b0, b1


def _c_position(lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    return (g if i < 2 else g + 8), t * 2 + (i & 1)


def _simulate(a_regs: np.ndarray, b_regs: np.ndarray, c_codes: np.ndarray, bits: int,
              dtype: str, acc_dtype: str) -> np.ndarray:
    """One 16x8xK tile: rebuild A, B, C from the registers lane by lane, D = C + A B."""
    per = max(32 // bits, 1)
    kt = fragments.k_tile(bits)
    a = np.zeros((16, kt), dtype=np.uint64)
    b = np.zeros((kt, 8), dtype=np.uint64)
    for lane in range(32):
        for i in range(4 * per):
            reg = int(a_regs[lane, i // per])
            code = reg if bits == 64 else (reg >> (bits * (i % per))) & ((1 << bits) - 1)
            a[_a_position(bits, lane, i)] = code
        for i in range(2 * per):
            reg = int(b_regs[lane, i // per])
            code = reg if bits == 64 else (reg >> (bits * (i % per))) & ((1 << bits) - 1)
            b[_b_position(bits, lane, i)] = code
    c = data.decode(acc_dtype, c_codes)
    return c + data.decode(dtype, a) @ data.decode(dtype, b)


@pytest.mark.parametrize(("dtype", "acc_dtype"), [
    ("bfloat16", "float32"), ("float16", "float32"), ("int8", "int32"), ("uint8", "int32"),
    ("int4", "int32"), ("uint4", "int32"), ("float8_e4m3fn", "float32"),
    ("float8_e5m2", "float32"), ("float64", "float64"),
])
def test_packing_matches_the_isa(dtype: str, acc_dtype: str) -> None:
    rng = np.random.default_rng(7)
    bits = data.bit_width(dtype)
    kt = fragments.k_tile(bits)
    m, n, k = 32, 16, 2 * kt
    a = data.sample(dtype, (m, k), rng)
    b = data.sample(dtype, (k, n), rng)
    c = data.sample(acc_dtype, (m, n), rng, accumulator=True)
    a_regs = fragments.pack_a(a.codes, bits)
    b_regs = fragments.pack_b(b.codes, bits)
    acc_bits = data.bit_width(acc_dtype)
    c_regs = fragments.pack_c(c.codes, acc_bits)
    assert a_regs.shape == (m // 16, k // kt, 32, 4) and b_regs.shape == (k // kt, n // 8, 32, 2)
    np.testing.assert_array_equal(fragments.unpack_c(c_regs, acc_bits, m, n), c.codes)
    expected = data.reference(c.values, a.values, b.values)
    # Simulate the warp of output tile (mt, nt), accumulating over the K tiles as the kernel.
    for mt in range(m // 16):
        for nt in range(n // 8):
            tile = data.decode(acc_dtype, fragments.unpack_c(c_regs, acc_bits, m, n))[
                mt * 16:(mt + 1) * 16, nt * 8:(nt + 1) * 8]
            for kk in range(k // kt):
                no_c = np.zeros((16, 8), dtype=np.uint64)  # C = 0: just this K tile's product
                tile = tile + _simulate(a_regs[mt, kk], b_regs[kk, nt], no_c, bits, dtype,
                                        acc_dtype)
            np.testing.assert_allclose(tile, expected[mt * 16:(mt + 1) * 16,
                                                      nt * 8:(nt + 1) * 8], rtol=0, atol=1e-9)


def test_sixteen_bit_accumulator_packs_pairs() -> None:
    codes = np.arange(16 * 8, dtype=np.uint64).reshape(16, 8)
    regs = fragments.pack_c(codes, 16)
    assert regs.shape == (1, 1, 32, 2)
    # Lane 0 holds c0, c1 = (0, 0), (0, 1) in register 0 and c2, c3 = (8, 0), (8, 1) in 1.
    assert int(regs[0, 0, 0, 0]) == (1 << 16) | 0
    assert int(regs[0, 0, 0, 1]) == (65 << 16) | 64
    np.testing.assert_array_equal(fragments.unpack_c(regs, 16, 16, 8), codes)


def test_full_range_integers() -> None:
    rng = np.random.default_rng(0)
    u8 = data.sample("uint8", (64, 64), rng)
    s8 = data.sample("int8", (64, 64), rng)
    s4 = data.sample("int4", (64, 64), rng)
    assert u8.values.max() >= 128 and u8.values.min() >= 0
    assert s8.values.min() < 0 and s8.values.max() <= 127 and s8.values.min() >= -128
    assert s4.values.min() == -8 and s4.values.max() == 7
    acc = data.sample("int32", (8, 8), rng, accumulator=True)
    assert np.abs(acc.values).max() < 100


def test_float_decoders() -> None:
    assert data.decode("float8_e4m3fn", np.array([0x38, 0x7E, 0x01]))[:3].tolist() == [
        1.0, 448.0, 2.0 ** -9]
    assert np.isnan(data.decode("float8_e4m3fn", np.array([0x7F]))[0])
    assert data.decode("float8_e5m2", np.array([0x3C, 0x7B]))[:2].tolist() == [1.0, 57344.0]
    assert data.decode("bfloat16", np.array([0x3F80, 0xC000])).tolist() == [1.0, -2.0]
    x = data.sample("float8_e5m2", (100,), np.random.default_rng(1))
    assert np.isfinite(x.values).all() and np.abs(x.values).max() <= 1.0


def test_compare() -> None:
    ref = np.array([[1, -2], [3, 2**31 + 5]], dtype=np.int64)
    got = np.array([[1, -2], [3, -(2**31) + 5]], dtype=np.int64)  # wrapped like the hardware
    assert data.compare(got, ref, acc_dtype="int32", k=32).exact
    off = data.compare(got + 1, ref, acc_dtype="int32", k=32)
    assert not off.within and off.max_abs_error == 1 and "differs" in off.describe()
    fl = data.compare(np.array([1.0, 2.0 + 1e-6]), np.array([1.0, 2.0]), acc_dtype="float32",
                      k=128)
    assert fl.within and not fl.exact and "within tolerance" in fl.describe()
