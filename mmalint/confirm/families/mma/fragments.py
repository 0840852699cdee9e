"""Per-lane register fragments of `mma.sync.m16n8k{K}` (PTX ISA, "Matrix fragments for mma").

With groupID g = lane >> 2 and t = lane % 4, and E = max(32 / bits, 1) elements per register:
  A (16 x 8E), register r, element i:  row g + 8 (r % 2),   col t E + i + 4E (r // 2)
  B (8E x 8),  register r, element i:  row t E + i + 4E r,  col g
  C/D (16 x 8), element j (0..3):      row g + 8 (j // 2),  col 2t + j % 2
One formula covers f16/bf16 (m16n8k16), 8-bit (m16n8k32), 4-bit (m16n8k64) and f64 (m16n8k8);
a 16-bit accumulator packs elements j = 2r, 2r+1 into register r.
"""

from __future__ import annotations

import numpy as np

from mmalint.confirm.families.mma.facts import k_tile

LANES = np.arange(32)
_G = LANES >> 2
_T = LANES & 3


def _per_reg(bits: int) -> int:
    return max(32 // bits, 1)




def _pack(codes: np.ndarray, bits: int) -> np.ndarray:
    """Combine the last axis (E elements of `bits`) into one register (uint32, or uint64 for
    64-bit elements)."""
    e = codes.shape[-1]
    if bits >= 64:
        return codes[..., 0].astype(np.uint64)
    mask = np.uint64((1 << bits) - 1)
    shifts = (np.arange(e, dtype=np.uint64) * np.uint64(bits))
    return ((codes.astype(np.uint64) & mask) << shifts).sum(axis=-1).astype(np.uint32)


def pack_a(codes: np.ndarray, bits: int) -> np.ndarray:
    """(M, K) bit patterns -> (M/16, K/kt, 32 lanes, 4 registers)."""
    e = _per_reg(bits)
    kt = k_tile(bits)
    m, k = codes.shape
    tiles = codes.reshape(m // 16, 16, k // kt, kt).transpose(0, 2, 1, 3)
    r = np.arange(4)[None, :, None]
    i = np.arange(e)[None, None, :]
    rows = _G[:, None, None] + 8 * (r % 2) + 0 * i
    cols = _T[:, None, None] * e + i + 4 * e * (r // 2)
    return _pack(tiles[:, :, rows, cols], bits)


def pack_b(codes: np.ndarray, bits: int) -> np.ndarray:
    """(K, N) bit patterns -> (K/kt, N/8, 32 lanes, 2 registers)."""
    e = _per_reg(bits)
    kt = k_tile(bits)
    k, n = codes.shape
    tiles = codes.reshape(k // kt, kt, n // 8, 8).transpose(0, 2, 1, 3)
    r = np.arange(2)[None, :, None]
    i = np.arange(e)[None, None, :]
    rows = _T[:, None, None] * e + i + 4 * e * r
    cols = _G[:, None, None] + 0 * (r + i)
    return _pack(tiles[:, :, rows, cols], bits)


def _c_index() -> tuple[np.ndarray, np.ndarray]:
    j = np.arange(4)[None, :]
    return _G[:, None] + 8 * (j // 2), 2 * _T[:, None] + j % 2


def pack_c(codes: np.ndarray, bits: int) -> np.ndarray:
    """(M, N) accumulator bit patterns -> (M/16, N/8, 32, registers): 4 registers of 32 or 64
    bits, or 2 registers of two packed 16-bit halves."""
    m, n = codes.shape
    tiles = codes.reshape(m // 16, 16, n // 8, 8).transpose(0, 2, 1, 3)
    rows, cols = _c_index()
    elems = tiles[:, :, rows, cols]  # (MT, NT, 32, 4)
    if bits == 16:
        return _pack(elems.reshape(*elems.shape[:-1], 2, 2), 16)
    return _pack(elems[..., None], bits)


def unpack_c(regs: np.ndarray, bits: int, m: int, n: int) -> np.ndarray:
    """Inverse of `pack_c`: registers -> (M, N) bit patterns (uint64)."""
    regs = np.asarray(regs)
    if bits == 16:
        r = regs.astype(np.uint64)
        elems = np.stack([r & np.uint64(0xFFFF), r >> np.uint64(16)], axis=-1)
        elems = elems.reshape(*regs.shape[:-1], 4)
    elif bits >= 64:
        elems = regs.astype(np.uint64)
    else:
        elems = regs.astype(np.uint64) & np.uint64(0xFFFFFFFF)
    mt, nt = m // 16, n // 8
    tiles = np.zeros((mt, nt, 16, 8), dtype=np.uint64)
    rows, cols = _c_index()
    tiles[:, :, rows, cols] = elems
    return tiles.transpose(0, 2, 1, 3).reshape(m, n)
