"""The shared-memory swizzles the asynchronous MMAs (wgmma, tcgen05) read their operands with.

Both take a swizzle of 128, 64 or 32 bytes (16, "no swizzle", jax refuses: `wgmma.py` v11:335,
`tcgen05.py` v11:192), tile an operand `(8, one swizzle row)` in SMEM, and issue the
instructions of one K step per swizzle row, so K must be a whole number of rows.
"""

from __future__ import annotations

SWIZZLES: tuple[int, ...] = (128, 64, 32)  # widest first: the one a fix prefers


def row_elements(swizzle: int, bits: int) -> int:
    """The elements of `bits` one swizzle row holds (`swizzle // itemsize`)."""
    return swizzle * 8 // bits


def swizzle_for_k(k: int, bits: int) -> int | None:
    """The widest swizzle whose row divides K (the one a fix picks), None when even 32 bytes
    do not."""
    return next((s for s in SWIZZLES if k % row_elements(s, bits) == 0), None)


def tiling_fits(tiling: tuple[int, ...] | None, swizzle: int, bits: int) -> bool:
    """Whether an SMEM tiling is the `(8, one swizzle row)` jax's Pallas lowering checks."""
    return tiling == (8, row_elements(swizzle, bits))
