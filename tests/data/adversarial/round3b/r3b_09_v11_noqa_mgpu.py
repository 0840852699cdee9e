"""Known-failure reproducers for warp MMA accumulators (jax 0.11).

These kernels are kept around to reproduce bug reports; they are built only
by the `repro` tool, never by the test suite.
"""
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import arith
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M, N, K = 64, 32, 64


def repro_int8_float_acc(ctx, a_ref, b_ref, out_ref, _):
  """Repro for the int8 + f32-accumulator report; expected to raise."""
  del ctx
  i8 = ir.IntegerType.get_signless(8)
  layouts = mgpu.MMALayouts(i8)
  a = mgpu.FragmentedArray.load_untiled(
      a_ref, layout=layouts.lhs, is_signed=True, optimized=False
  )
  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)),
      layout=layouts.rhs,
      is_signed=True,
      optimized=False,
  )
  acc = mgpu.FragmentedArray.splat(
      arith.constant(ir.F32Type.get(), 0.0), (M, N), layout=layouts.acc
  )
  out = mgpu.mma(acc, a, b)  # noqa: MMA101
  out.store_untiled(out_ref, optimized=False)


def half_precision_accumulate(ctx, a_ref, b_ref, out_ref, _):
  """f16 GEMM tile that keeps the accumulator in f16 to halve registers."""
  del ctx
  f16 = ir.F16Type.get()
  layouts = mgpu.MMALayouts(f16, m_warps=2)
  a = mgpu.FragmentedArray.load_untiled(
      a_ref, layout=layouts.lhs, optimized=False
  )
  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs,
      optimized=False,
  )
  acc = mgpu.FragmentedArray.splat(
      arith.constant(f16, 0.0), (M, N), layout=layouts.acc
  )
  out = mgpu.mma(acc, a, b)  # noqa: MMA101
  out.store_untiled(out_ref, optimized=False)
