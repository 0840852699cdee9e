"""Small buggy kernels the CLI, fix, noqa, LSP and pre-commit tests share (complete modules)."""

from __future__ import annotations

# MMA101, safe fix: the accumulator is splatted inline in the kernel that calls mma.
MGPU_INT8_F32_ACC = '''\
import jax
import jax.numpy as jnp
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
from jaxlib.mlir import ir

M = N = K = 128


def kernel(ctx, a_ref, b_ref, out_ref, smem):
  del ctx, smem
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.int8))
  a = mgpu.FragmentedArray.load_untiled(a_ref, layout=layouts.lhs, is_signed=True, optimized=False)
  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs, is_signed=True, optimized=False)
  acc = mgpu.FragmentedArray.splat(utils.c(0.0, ir.F32Type.get()), (M, N), layout=layouts.acc)
  mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)


matmul = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct((M, K), jnp.int8), jax.ShapeDtypeStruct((N, K), jnp.int8)),
    jax.ShapeDtypeStruct((M, N), jnp.int32), ())
'''

MGPU_INT8_F32_ACC_FIXED = MGPU_INT8_F32_ACC.replace(
    "splat(utils.c(0.0, ir.F32Type.get()), (M, N), layout=layouts.acc)",
    "splat(utils.c(0, ir.IntegerType.get_signless(32)), (M, N), layout=layouts.acc, is_signed=True)",
)

# The same kernel with the accumulator made by a helper: the fix edits the helper (unsafe).
MGPU_HELPER_ACC = '''\
import jax
import jax.numpy as jnp
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
from jaxlib.mlir import ir

M = N = K = 128


def zeros(shape, layout):
  zero = utils.c(0.0, ir.F32Type.get())
  return mgpu.FragmentedArray.splat(zero, shape, layout=layout)


def kernel(ctx, a_ref, b_ref, out_ref, smem):
  del ctx, smem
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.int8))
  a = mgpu.FragmentedArray.load_untiled(a_ref, layout=layouts.lhs, is_signed=True, optimized=False)
  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs, is_signed=True, optimized=False)
  acc = zeros((M, N), layouts.acc)
  mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)


matmul = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct((M, K), jnp.int8), jax.ShapeDtypeStruct((N, K), jnp.int8)),
    jax.ShapeDtypeStruct((M, N), jnp.int32), ())
'''

# MMA105, safe fix: accumulator passed last. The mma( call spans several lines.
PALLAS_SWAPPED = '''\
import functools
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 8, 64


@functools.partial(plgpu.kernel, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32))
def kernel(a_ref, b_ref, o_ref):
  acc = plgpu.layout_cast(jnp.zeros((M, N), jnp.float32), plgpu.Layout.MMA_ACC(jnp.float16))
  a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(jnp.float16))
  b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.float16))
  o_ref[...] = plgpu.mma(
      a,
      b,
      acc,
  )


out = kernel(jnp.ones((M, K), jnp.float16), jnp.ones((N, K), jnp.float16))
'''

# MMA101, unsafe fix: the dtype is a variable the output type reads too.
PALLAS_ACC_VARIABLE = '''\
import functools
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 8, 128


def matmul(a, b):
  acc_dtype = jnp.float32

  @functools.partial(plgpu.kernel, out_type=jax.ShapeDtypeStruct((M, N), acc_dtype))
  def kernel(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(jnp.zeros((M, N), acc_dtype), plgpu.Layout.MMA_ACC(jnp.int8))
    lhs = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(jnp.int8))
    rhs = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.int8))
    o_ref[...] = plgpu.mma(acc, lhs, rhs)

  return kernel(a, b)


matmul(jnp.ones((M, K), jnp.int8), jnp.ones((N, K), jnp.int8))
'''

# MMA101 in one world of a sweep whose float worlds share the constant: no fix is right.
PALLAS_SWEEP_SHARED_CONSTANT = '''\
import functools
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 8, 128
ACC_DTYPE = jnp.float32


def matmul(a, b, dtype):
  @functools.partial(plgpu.kernel, out_type=jax.ShapeDtypeStruct((M, N), ACC_DTYPE))
  def kernel(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(jnp.zeros((M, N), ACC_DTYPE), plgpu.Layout.MMA_ACC(dtype))
    lhs = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
    rhs = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
    o_ref[...] = plgpu.mma(acc, lhs, rhs)

  return kernel(a, b)


for dtype in (jnp.bfloat16, jnp.int8):
  matmul(jnp.ones((M, K), dtype), jnp.ones((N, K), dtype), dtype)
'''

# A clean kernel.
PALLAS_CLEAN = PALLAS_SWAPPED.replace("      a,\n      b,\n      acc,\n", "      acc,\n      a,\n      b,\n")
