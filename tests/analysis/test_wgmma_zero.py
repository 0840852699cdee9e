"""`mgpu.WGMMAAccumulator.zero` builds its zeros as a FragmentedArray: an integer type without
`is_signed`, or a float type with it, is refused there (MMA202), before any wgmma."""

from __future__ import annotations

import pytest
from _analysis_lint import check

KERNEL = '''
import jax
import jax.numpy as jnp
from jax._src.interpreters import mlir
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import nvvm
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M, N, K = 64, 128, 128
TILING = (8, 128)


def body(ctx, a_gmem, b_gmem, out_gmem, smem):
  a_smem, b_smem, barrier = smem
  ctx.async_copy(src_ref=a_gmem, dst_ref=a_smem, swizzle=128, gmem_transform=mgpu.TileTransform(TILING), barrier=barrier[0])
  ctx.async_copy(src_ref=b_gmem, dst_ref=b_smem, swizzle=128, gmem_transform=mgpu.TileTransform(TILING), barrier=barrier[1])
  barrier[0].wait()
  barrier[1].wait()
  acc = mgpu.WGMMAAccumulator.zero(M, N, {acc}{signed})
  acc = mgpu.wgmma(acc, a_smem, utils.memref_transpose(b_smem, (1, 0, 3, 2)), swizzle=128)
  nvvm.wgmma_commit_group_sync_aligned()
  nvvm.wgmma_wait_group_sync_aligned(0)
  acc.value.store_untiled(out_gmem, optimized=False)


a = jax.ShapeDtypeStruct((M, K), jnp.{dtype})
b = jax.ShapeDtypeStruct((N, K), jnp.{dtype})
scratch = (
    jax.ShapeDtypeStruct(mgpu.tile_shape((M, K), TILING), jnp.{dtype}),
    jax.ShapeDtypeStruct(mgpu.tile_shape((N, K), TILING), jnp.{dtype}),
    mgpu.TMABarrier(2),
)
with mlir.make_ir_context(), ir.Location.unknown():
  f = mgpu.as_gpu_kernel(body, (1, 1, 1), (128, 1, 1), (a, b), jax.ShapeDtypeStruct((M, N), jnp.{out}), scratch)
'''


@pytest.mark.parametrize(("dtype", "acc", "signed", "out", "expect"), [
    ("int8", "ir.IntegerType.get_signless(32)", "", "int32", ["MMA202"]),
    ("int8", "ir.IntegerType.get_signless(32)", ", is_signed=True", "int32", []),
    ("bfloat16", "ir.F32Type.get()", ", is_signed=True", "float32", ["MMA202"]),
    ("bfloat16", "ir.F32Type.get()", "", "float32", []),
])
def test_the_zeros_of_a_wgmma_accumulator(dtype: str, acc: str, signed: str, out: str, expect: list[str]) -> None:
    code = KERNEL.format(dtype=dtype, acc=acc, signed=signed, out=out)
    report = check(code, expect, target_jax="0.11")
    for diag in report.diagnostics:
        assert diag.predicted_error is not None and "is_signed must be non-None" in diag.predicted_error.message
