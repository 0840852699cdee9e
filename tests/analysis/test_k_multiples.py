"""K against the swizzle (MMA612 wgmma, MMA716 tcgen05) and the block scales' columns (MMA717,
MMA718): the K multiples jax's own kernels use are clean, a K or a swizzle not known is silent,
and a finding is made only where jax's earlier checks let the call through."""

from __future__ import annotations

import pytest
from _analysis_lint import ALL_VERSIONS, PALLAS_VERSIONS, check, lint, only

# ---------------------------------------------------------------- wgmma (MMA612)

WGMMA = '''
import os

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N = 64, 128


def build(swizzle, k, a_dtype=jnp.bfloat16, b_dtype=jnp.bfloat16, a_in="registers"):
  def transforms(dtype):
    return (plgpu.TilingTransform((8, swizzle // jnp.dtype(dtype).itemsize)),
            plgpu.SwizzleTransform(swizzle))

  def kernel(a_gmem, b_gmem, o_gmem, a_smem, b_smem, barrier):
    def scope(acc_ref):
      if a_in == "registers":
        a = plgpu.load(a_smem, layout=plgpu.Layout.WGMMA, optimized=False)
      elif a_in == "transposed":
        a = plgpu.transpose_ref(a_smem, (1, 0))
      else:
        a = a_smem
      plgpu.wgmma(acc_ref, a, b_smem)
      return acc_ref[...]

    o_gmem[...] = pl.run_scoped(scope, plgpu.ACC((M, N), jnp.float32))

  a_shape = (k, M) if a_in == "transposed" else (M, k)
  a_smem = (plgpu.SMEM(a_shape, a_dtype) if a_in == "registers"
            else plgpu.SMEM(a_shape, a_dtype, transforms=transforms(a_dtype)))
  return plgpu.kernel(
      kernel,
      out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
      scratch_types=[a_smem, plgpu.SMEM((k, N), b_dtype, transforms=transforms(b_dtype)),
                     plgpu.Barrier(num_arrivals=2)],
  )(jnp.ones(a_shape, a_dtype), jnp.ones((k, N), b_dtype))
'''


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
@pytest.mark.parametrize("a_in", ["registers", "transposed", "smem"])
def test_wgmma_k_of_one_swizzle_row_is_clean(version: str, a_in: str) -> None:
    check(WGMMA + f'''
for swizzle in (32, 64, 128):
  build(swizzle, swizzle // 2, a_in="{a_in}")   # one row of bf16 per swizzle: jax's own tiles
  build(swizzle, 2 * swizzle, a_in="{a_in}")
''', [], target_jax=version)


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_wgmma_k_32_is_wrong_only_for_the_128_byte_swizzle(version: str) -> None:
    report = check(WGMMA + '''
for swizzle in (32, 64, 128):
  build(swizzle, 32)
''', ["MMA612"], target_jax=version)
    found = only(report, "MMA612")
    assert "swizzle=128" in found["message"]
    assert found["predicted_error"]["message"] == "K must be a multiple of 64, got: 32"
    assert "SwizzleTransform(64)" in found["help"]


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_wgmma_m_major_a_with_k_32(version: str) -> None:
    check(WGMMA + "build(128, 32, a_in='transposed')\n", ["MMA612"], target_jax=version)


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_wgmma_a_in_smem_fails_its_own_tiling_first(version: str) -> None:
    """A (64, 32) tiled (8, 64) does not allocate: not the K check's finding."""
    report = lint(WGMMA + "build(128, 32, a_in='smem')\n", version)
    assert "MMA612" not in [d.code for d in report.diagnostics]


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_wgmma_swizzle_or_k_not_known_is_silent(version: str) -> None:
    check(WGMMA + 'build(int(os.environ["SWIZZLE"]), 32)\n', [], target_jax=version, known=True)
    check(WGMMA + 'build(128, int(os.environ["K"]))\n', [], target_jax=version, known=True)


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_wgmma_dtype_mismatch_comes_first(version: str) -> None:
    """f16 A, bf16 B: the mismatch raises first and its fix may change K's unit: no MMA612."""
    report = lint(WGMMA + "build(128, 32, a_dtype=jnp.float16)\n", version)
    assert "MMA612" not in [d.code for d in report.diagnostics]
    assert "MMA606" in [d.code for d in report.diagnostics]


MGPU_WGMMA = '''
import jax
import jax.numpy as jnp
from jax._src.interpreters import mlir
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import fragmented_array as fa
from jaxlib.mlir import ir

M, N = 64, 128


def build(swizzle, k, dtype=jnp.bfloat16):
  tiling = (8, swizzle // jnp.dtype(dtype).itemsize)

  def kernel(ctx, h, b, out, smem):
    b_smem, barrier = smem
    acc = mgpu.WGMMAAccumulator.zero(M, N)
    h_regs = fa.FragmentedArray.load_untiled(h, layout=fa.WGMMA_LAYOUT_8BIT if dtype == jnp.int8 else fa.WGMMA_LAYOUT,
                                             optimized=False, is_signed=True if dtype == jnp.int8 else None)
    if dtype == jnp.int8:
      acc = mgpu.WGMMAAccumulator.zero(M, N, ir.IntegerType.get_signless(32), is_signed=True)
    acc = mgpu.wgmma(acc, h_regs, b_smem, swizzle=swizzle)
    acc.value.store_untiled(out, optimized=False)

  with mlir.make_ir_context(), ir.Location.unknown():
    return mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((M, k), dtype), jax.ShapeDtypeStruct((k, N), dtype)),
        jax.ShapeDtypeStruct((M, N), jnp.float32),
        (jax.ShapeDtypeStruct(mgpu.tile_shape((k, N), tiling), dtype), mgpu.Barrier(1)),
    )
'''


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_mgpu_wgmma_k_multiples(version: str) -> None:
    check(MGPU_WGMMA + "build(128, 64)\nbuild(64, 32)\nbuild(32, 16)\n", [], target_jax=version)
    report = check(MGPU_WGMMA + "build(128, 32)\n", ["MMA612"], target_jax=version)
    assert "`swizzle=64`" in only(report, "MMA612")["help"]
    # Not even the 32-byte swizzle's 16 bf16 divide K = 8: pad K.
    report = check(MGPU_WGMMA + "build(32, 8)\n", ["MMA612"], target_jax=version)
    assert "pad K to a multiple of 16" in only(report, "MMA612")["help"]


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_mgpu_wgmma_int8_register_a_at_swizzle_32_is_mma608_only(version: str) -> None:
    """int8 A in registers with swizzle=32 raises first; its fix (swizzle=64) changes K's row."""
    report = lint(MGPU_WGMMA + "build(32, 16, jnp.int8)\n", version)
    codes = [d.code for d in report.diagnostics]
    assert "MMA608" in codes and "MMA612" not in codes


# ---------------------------------------------------------------- tcgen05 (MMA716-MMA718)

TCGEN05 = '''
import functools
import os

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

D_IN, D_OUT = 128, 128


def build(swizzle, tokens, m=D_IN, a_swizzle=None, n=D_OUT):
  def transforms(s):
    return (plgpu.TilingTransform((8, s // 2)), plgpu.SwizzleTransform(s))

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
      scratch_types=[
          plgpu.SMEM((tokens, m), jnp.bfloat16, transforms=transforms(a_swizzle or swizzle)),
          plgpu.SMEM((tokens, n), jnp.bfloat16, transforms=transforms(swizzle)),
          plgpu.TMEM((m, n), jnp.float32),
          plgpu.Barrier(orders_tensor_core=True),
      ],
  )
  def kernel(x_gmem, dy_gmem, dw_gmem, x_smem, dy_smem, dw_tmem, mma_barrier):
    plgpu.tcgen05_mma(dw_tmem, plgpu.transpose_ref(x_smem, (1, 0)), dy_smem, mma_barrier)

  return kernel(jnp.ones((tokens, m), jnp.bfloat16), jnp.ones((tokens, n), jnp.bfloat16))
'''


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_tcgen05_k_groups(version: str) -> None:
    check(TCGEN05 + "for s in (32, 64, 128):\n  build(s, s // 2)\n  build(s, 4 * s)\n", [],
          target_jax=version)
    report = check(TCGEN05 + "build(128, 32)\n", ["MMA716"], target_jax=version)
    assert only(report, "MMA716")["predicted_error"]["message"] == "K must be a multiple of 64, got: 32"
    check(TCGEN05 + 'build(int(os.environ["SWIZZLE"]), 32)\n', [], target_jax=version)
    check(TCGEN05 + 'build(128, int(os.environ["TOKENS"]))\n', [], target_jax=version)


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_tcgen05_earlier_checks_keep_it_silent(version: str) -> None:
    # A's and B's swizzles differ: the Lane rule refuses them first (jax 0.10's default; on
    # the CPU, 0.12's Warpgroup default passes both to the MMA and reaches the K check with the
    # wider one): silent.
    report = lint(TCGEN05 + "build(128, 32, a_swizzle=64)\n", version)
    assert "MMA716" not in [d.code for d in report.diagnostics]
    # M=64 on one CTA, N=64, a 128-byte swizzle of B: "Swizzle=128 is too big for MMA with
    # M=64" first (64 bf16 per row > N // 2).
    check(TCGEN05 + "build(128, 32, m=64, n=64)\n", [], target_jax=version)
    # N=128 leaves 64 columns per lane group: jax gets to K (seen on the CPU, 0.10.2 and 0.12).
    check(TCGEN05 + "build(128, 32, m=64)\n", ["MMA716"], target_jax=version)


MXFP8 = '''
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, K = 128, 256


def build(n, block, a_scale_rows=128, scale=jnp.float8_e8m0fnu):
  transforms = (plgpu.TilingTransform((8, 128)), plgpu.SwizzleTransform(128))

  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((M, n), jnp.float32),
      scratch_types=[
          plgpu.SMEM((M, K), jnp.float8_e4m3fn, transforms=transforms),
          plgpu.SMEM((n, K), jnp.float8_e4m3fn, transforms=transforms),
          plgpu.TMEM((M, n), jnp.float32),
          plgpu.TMEM((a_scale_rows, K // block), scale, layout=plgpu.TMEMLayout.SCALES_LAYOUT),
          plgpu.TMEM((128, K // block), scale, layout=plgpu.TMEMLayout.SCALES_LAYOUT),
          plgpu.Barrier(orders_tensor_core=True),
      ],
  )
  def kernel(x_gmem, y_gmem, out_gmem, x_smem, y_smem, acc, xs, ys, mma_barrier):
    plgpu.tcgen05_mma(acc, x_smem, plgpu.transpose_ref(y_smem, (1, 0)), a_scale=xs, b_scale=ys)

  return kernel(jnp.ones((M, K), jnp.float8_e4m3fn), jnp.ones((n, K), jnp.float8_e4m3fn))
'''


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_mxfp8_as_jax_tests_write_it_is_clean(version: str) -> None:
    check(MXFP8 + "build(128, 32)\nbuild(64, 32)\n", [], target_jax=version)


def test_block_scaled_n_48_only_in_jax_010() -> None:
    report = check(MXFP8 + "build(48, 32)\n", ["MMA717"], target_jax="0.10")
    assert only(report, "MMA717")["predicted_error"]["message"] == (
        "N must be a multiple of 32 for block-scaled MMA, but got N={n}")
    for version in PALLAS_VERSIONS:
        check(MXFP8 + "build(48, 32)\n", [], target_jax=version)


@pytest.mark.parametrize(("version", "message"), [
    ("0.10", "A scale shape mismatch: expected (128, 8), got (128, 16)"),
    ("0.11", "Scale block size mismatch: expected 32, got 16"),
    ("0.12", "Scale block size mismatch: expected 32, got 16"),
])
def test_scale_block_16_for_mxfp8(version: str, message: str) -> None:
    report = check(MXFP8 + "build(128, 16)\n", ["MMA718"], target_jax=version)
    assert only(report, "MMA718")["predicted_error"]["message"] == message


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_scales_of_other_rows_are_silent(version: str) -> None:
    """256 rows of A scales: whether jax gets to the shape check depends on their TMEM layout
    (the scales layout allocates them; a packed default layout does not): silent."""
    check(MXFP8 + "build(128, 32, a_scale_rows=256)\nbuild(128, 16, a_scale_rows=256)\n", [],
          target_jax=version)
