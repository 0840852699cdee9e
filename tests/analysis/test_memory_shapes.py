"""Shapes through memory plumbing: K loops over tiled SMEM buffers, and block specs."""

from __future__ import annotations

import pytest
from _analysis_lint import check, lint, only

# jax-test style: every K step staged in its own tiled SMEM buffer, sliced by the loop index.
TILED = '''
import jax
import jax.numpy as jnp
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils

DTYPE = jnp.int8
M, N, K, BLOCK_K = 128, 64, 128, {block_k}
K_STEPS = K // BLOCK_K
TILING = (8, 16)


def kernel(ctx, a, b, out, smem):
  a_smem, b_smem = smem
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(DTYPE))
  acc = mgpu.FragmentedArray.splat(
      utils.c(0, utils.dtype_to_ir_type(jnp.int32)), (M, N), layout=layouts.acc, is_signed=True)
  for step in {steps}:
    lhs = mgpu.FragmentedArray.load_tiled(
        utils.memref_slice(a_smem, step), swizzle=16, layout=layouts.lhs, is_signed=True)
    rhs = mgpu.FragmentedArray.load_tiled(
        utils.memref_transpose(utils.memref_slice(b_smem, step), (1, 0, 3, 2)), swizzle=16,
        layout=layouts.rhs, is_signed=True)
    acc = mgpu.mma(acc, lhs, rhs)
  acc.store_untiled(out, optimized=False)


f = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct((M, K), DTYPE), jax.ShapeDtypeStruct((N, K), DTYPE)),
    jax.ShapeDtypeStruct((M, N), jnp.int32),
    (jax.ShapeDtypeStruct((K_STEPS, *mgpu.tile_shape((M, BLOCK_K), TILING)), DTYPE),
     jax.ShapeDtypeStruct((K_STEPS, *mgpu.tile_shape((N, BLOCK_K), TILING)), DTYPE)))
'''


@pytest.mark.parametrize("steps", ["range(K_STEPS)", "range(0, K_STEPS, 1)"])
def test_k_loop_index_drops_the_step_axis(steps: str) -> None:
    # BLOCK_K=16 breaks the int8 lhs tile (64, 32): seen although `step` is unknown.
    report = check(TILED.format(block_k=16, steps=steps), ["MMA402"])
    assert only(report, "MMA402")["call"]["a"]["shape"] == [128, 16]


def test_k_loop_with_the_right_tile_is_clean() -> None:
    check(TILED.format(block_k=32, steps="range(K_STEPS)"), [])


def test_an_unknown_index_is_not_an_int() -> None:
    # `ds`-like or unknown indices leave the shape unknown: no finding from a guess.
    code = TILED.format(block_k=16, steps="STEPS").replace("TILING = (8, 16)", "TILING = (8, 16)\nSTEPS = get_steps()")
    assert lint(code).diagnostics == ()


PIPELINE = '''
import functools
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

DTYPE = jnp.bfloat16
M, N, K = 128, 128, 256
BM, BN, BK = 128, 128, 64


def matmul(a, b):
  @functools.partial(
      plgpu.kernel, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane))
  def kernel(a_gmem, b_gmem, o_gmem):
    a_spec = plgpu.BlockSpec((BM, BK), lambda k: (0, k))
    b_spec = plgpu.BlockSpec((BN, BK), lambda k: (0, k))

    def body(_, a_smem, b_smem, acc):
      a = plgpu.load(a_smem, layout=plgpu.Layout.MMA_LHS(DTYPE))
      b = plgpu.load(b_smem.T, layout=plgpu.Layout.MMA_RHS(DTYPE))
      return plgpu.mma(acc, a, b)

    acc = plgpu.layout_cast(jnp.zeros({acc_shape}, jnp.float32), plgpu.Layout.MMA_ACC(DTYPE))
    acc = plgpu.emit_pipeline(body, grid=(K // BK,), in_specs={in_specs}, init_carry=acc)(a_gmem, b_gmem)
    o_gmem[...] = acc

  return kernel(a, b)


y = matmul(jnp.zeros((M, K), DTYPE), jnp.zeros((N, K), DTYPE))
'''


def test_pipeline_blocks_have_the_spec_shape() -> None:
    report = check(PIPELINE.format(acc_shape="a_spec.block_shape", in_specs="[a_spec, b_spec]"),
                   ["MMA401"], target_jax="0.11")
    call = only(report, "MMA401")["call"]
    assert (call["a"]["shape"], call["b"]["shape"], call["acc"]["shape"]) == (
        [128, 64], [64, 128], [128, 64])


def test_pipeline_blocks_that_agree_are_clean() -> None:
    check(PIPELINE.format(acc_shape="(BM, BN)", in_specs="[a_spec, b_spec]"), [], target_jax="0.11")


def test_pipeline_specs_that_do_not_line_up_are_unknown() -> None:
    # A nested pytree of specs: no shape is taken from it.
    code = PIPELINE.format(acc_shape="a_spec.block_shape", in_specs="[(a_spec, b_spec)]")
    assert [d.code for d in lint(code, target_jax="0.11").diagnostics] == []
