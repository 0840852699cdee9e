"""The block scales of a tcgen05 kernel spec (host side): which sides get a scale ref, of what
element type and shape, and whether it is filled from SMEM the way jax's block-scaled tests
fill it.

From the call's options (`a_scale`, `b_scale`, `a_scale_type`, `b_scale_type`,
`a_scale_columns`) and the spec's M, N and K. The layout is jax's (`tcgen05.scales_layout()`,
Pallas `TMEMLayout.SCALES_LAYOUT`, `_basic_mma_test`/`test_simple_scaled_matmul`): A's scales
a `(M, K // block)` TMEM ref, B's `(N rounded up to 128, K // block)`, each copied from a
`(rows // 128, columns // 4, 32, 16)` SMEM buffer by `async_copy_scales_smem_to_tmem`. The
data are unit scales (1.0), so a fix that runs on a GPU still equals `acc + a @ b`. The K
group and scale-shape cases (MMA716-718) give each side's shape as the call has it
(`a_scale_rows`/`a_scale_columns`, `b_scale_rows`/`b_scale_columns`).
"""

from __future__ import annotations

from typing import Any

from mmalint.confirm import dtypes
from mmalint.confirm.call import Call

# The rows of TMEM, and the scale element types `async_copy_scales_smem_to_tmem` copies.
_TMEM_ROWS = 128
_COPYABLE = frozenset({"f8E8M0FNU", "f8E4M3FN"})
# K elements per scale jax takes for a scale type when the call does not say (MXFP8/MXFP4
# e8m0 scales: 32; NVFP4 e4m3 scales: 16; jax 0.10 derives the block from the type alone).
_BLOCK = {"f8E8M0FNU": 32, "f8E4M3FN": 16}
DEFAULT_SCALE_TYPE = "f8E8M0FNU"


def _round_up(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple


def scale_values(call: Call, m: int, n: int, k: int,
                 shapes: dict[str, tuple[int, int]] | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """The scale refs of the call's kernel (one per side it passes, in the order a, b) and the
    notes on what had to be assumed or left out. `shapes` gives a side's (rows, columns) as
    the call has them, when a case needs the program's own (the scale-shape rules)."""
    sides = [side for side in ("a", "b") if call.option(f"{side}_scale")]
    notes: list[str] = []
    given_columns = call.option("a_scale_columns")
    values = []
    for side in sides:
        mlir = call.option(f"{side}_scale_type")
        if mlir is None:
            mlir = call.option("a_scale_type") or DEFAULT_SCALE_TYPE
            notes.append(f"{side}_scale's dtype is unknown: built as "
                         f"{dtypes.dtype_for(mlir, None) or mlir}")
        dtype = dtypes.dtype_for(mlir, None)
        if dtype is None:
            notes.append(f"{side}_scale's element type {mlir} has no dtype: built as "
                         f"{dtypes.dtype_for(DEFAULT_SCALE_TYPE, None)}")
            mlir, dtype = DEFAULT_SCALE_TYPE, dtypes.dtype_for(DEFAULT_SCALE_TYPE, None)
        if shapes is not None and side in shapes:
            rows, columns = (int(x) for x in shapes[side])
        else:
            if given_columns is not None:
                columns = int(given_columns)
            else:
                block = _BLOCK.get(mlir, 32)
                columns = max(k // block, 1)
                if side == sides[0]:
                    notes.append(f"the scales' columns are unknown: built with K/{block} = {columns}")
            rows = _round_up(m if side == "a" else n, _TMEM_ROWS)
        copied = mlir in _COPYABLE and columns % 4 == 0 and rows % _TMEM_ROWS == 0
        if not copied and rows % _TMEM_ROWS:
            notes.append(f"{side}_scale is not filled from SMEM ({rows} rows: "
                         "async_copy_scales_smem_to_tmem fills 128-row blocks)")
        elif not copied:
            notes.append(f"{side}_scale is not filled from SMEM ({mlir}, {columns} columns: "
                         "async_copy_scales_smem_to_tmem takes e8m0/e4m3 scales of a "
                         "multiple of 4 columns)")
        values.append({"side": side, "dtype": dtype, "element_type": mlir,
                       "shape": [rows, columns], "copied": copied,
                       "smem_shape": [rows // _TMEM_ROWS, columns // 4, 32, 16]})
    return values, notes
