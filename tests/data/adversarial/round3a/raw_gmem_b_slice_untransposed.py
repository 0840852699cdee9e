"""f16 attention-score tile: s = q_blk @ k_blk.T (f32), one CTA per query block.

q: (SEQ_Q, HEAD_DIM), k: (SEQ_KV, HEAD_DIM), both row-major in GMEM.
Each CTA produces a (BLOCK_Q, BLOCK_KV) tile of scores for one KV block.
"""

import jax
import jax.numpy as jnp
import numpy as np

from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
from jax._src.lib.mlir.dialects import gpu
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils

SEQ_Q, SEQ_KV, HEAD_DIM = 256, 512, 128
BLOCK_Q, BLOCK_KV, BLOCK_D = 64, 64, 64
DTYPE = jnp.float16


def kernel(ctx, q, k, scores, _smem):
  index = ir.IndexType.get()
  q0 = arith.muli(gpu.block_id(gpu.Dimension.y), utils.c(BLOCK_Q, index))
  kv0 = arith.muli(gpu.block_id(gpu.Dimension.x), utils.c(BLOCK_KV, index))

  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(DTYPE))
  s = mgpu.FragmentedArray.splat(
      arith.constant(ir.F32Type.get(), 0.0), (BLOCK_Q, BLOCK_KV), layout=layouts.acc
  )
  for d in range(HEAD_DIM // BLOCK_D):
    d_win = utils.ds(d * BLOCK_D, BLOCK_D)
    q_blk = utils.memref_slice(q, (utils.ds(q0, BLOCK_Q), d_win))
    # k rows are the "n" of this product, its head_dim columns the "k".
    k_blk = utils.memref_slice(k, (utils.ds(kv0, BLOCK_KV), d_win))
    q_frag = mgpu.FragmentedArray.load_untiled(
        q_blk, layout=layouts.lhs, optimized=False
    )
    k_frag = mgpu.FragmentedArray.load_untiled(
        k_blk, layout=layouts.rhs, optimized=False
    )
    s = mgpu.mma(s, q_frag, k_frag)

  s.store_untiled(
      utils.memref_slice(scores, (utils.ds(q0, BLOCK_Q), utils.ds(kv0, BLOCK_KV))),
      optimized=False,
  )


def build():
  return mgpu.as_gpu_kernel(
      kernel,
      (SEQ_KV // BLOCK_KV, SEQ_Q // BLOCK_Q, 1),
      (128, 1, 1),
      (
          jax.ShapeDtypeStruct((SEQ_Q, HEAD_DIM), DTYPE),
          jax.ShapeDtypeStruct((SEQ_KV, HEAD_DIM), DTYPE),
      ),
      jax.ShapeDtypeStruct((SEQ_Q, SEQ_KV), jnp.float32),
      (),
  )


if __name__ == "__main__":
  rng = np.random.default_rng(0)
  q = rng.uniform(-1, 1, (SEQ_Q, HEAD_DIM)).astype(DTYPE)
  k = rng.uniform(-1, 1, (SEQ_KV, HEAD_DIM)).astype(DTYPE)
  np.testing.assert_allclose(
      build()(q, k), q.astype(np.float32) @ k.astype(np.float32).T, atol=1e-2
  )
