"""How memory is viewed decides whether an MMA operand loads: plain vs transposed refs.

jax (0.10.2 and 0.12, on the CPU, every operand type) loads an `optimized=False` operand from a
kernel's global-memory ref like this: the lhs tiling needs a plain (m, k) view, the rhs tiling a
transposed one (`memref_transpose` of an (n, k) buffer, Pallas `b_ref.T`); anything else fails at
the load ("Tiled strides must be a multiple of the vector length").
"""

from __future__ import annotations

import pytest
from _analysis_lint import ALL_VERSIONS, PALLAS_VERSIONS, check, lint, only

MGPU = '''
import jax
import jax.numpy as jnp
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M, N, K = 128, 64, 128
DTYPE = jnp.float16


def kernel(ctx, a_ref, b_ref, out_ref, smem):
  layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(DTYPE))
  a = mgpu.FragmentedArray.load_untiled({a_src}, layout=layouts.{a_role}{opt})
  b = mgpu.FragmentedArray.load_untiled({b_src}, layout=layouts.{b_role}{opt})
  acc = mgpu.FragmentedArray.splat(
      utils.c(0.0, utils.dtype_to_ir_type(jnp.float32)), (M, N), layout=layouts.acc)
  mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)


f = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct({a_shape}, DTYPE), jax.ShapeDtypeStruct({b_shape}, DTYPE)),
    jax.ShapeDtypeStruct((M, N), jnp.float32), {scratch})
'''

B_T = "utils.memref_transpose(b_ref, (1, 0))"


def mgpu(
    a_src: str = "a_ref",
    b_src: str = B_T,
    a_role: str = "lhs",
    b_role: str = "rhs",
    a_shape: str = "(M, K)",
    b_shape: str = "(N, K)",
    opt: str = ", optimized=False",
    scratch: str = "()",
) -> str:
    return MGPU.format(a_src=a_src, b_src=b_src, a_role=a_role, b_role=b_role, a_shape=a_shape,
                       b_shape=b_shape, opt=opt, scratch=scratch)


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_the_jax_test_pattern_is_clean(version: str) -> None:
    check(mgpu(), [], version)


@pytest.mark.parametrize(("version", "exception"), [
    ("0.10", "ValueError"), ("0.11", "UnsupportedTransferError"), ("0.12", "UnsupportedTransferError"),
])
def test_rhs_layout_from_the_plain_k_n_buffer(version: str, exception: str) -> None:
    report = check(mgpu(b_src="b_ref", b_shape="(K, N)"), ["MMA302"], version)
    diag = only(report, "MMA302")
    assert "plain (k, n) view" in diag["message"]
    assert "memref_transpose(b_ref, (1, 0))" in diag["help"]
    assert diag["predicted_error"]["exception"] == exception
    assert diag["predicted_error"]["message"].startswith("Tiled strides must be a multiple")
    assert diag["fix"] is None  # the layout is right; the view is not: no mechanical edit


def test_lhs_layout_from_a_transposed_view() -> None:
    report = check(mgpu(a_src="utils.memref_transpose(a_ref, (1, 0))", a_shape="(K, M)"), ["MMA301"])
    diag = only(report, "MMA301")
    assert "transposed view" in diag["message"]
    assert diag["predicted_error"]["exception"] == "UnsupportedTransferError"


def test_lhs_layout_for_b_from_a_plain_view_fails_at_the_mma() -> None:
    # Loads fine (the lhs tiling reads the contiguous axis); jax rejects it in mma.
    report = check(mgpu(b_src="b_ref", b_role="lhs", b_shape="(K, N)"), ["MMA302"])
    diag = only(report, "MMA302")
    assert diag["predicted_error"]["message"] == "Expected MMALayouts.rhs layout for B"


def test_lhs_layout_for_b_from_a_transposed_view_fails_at_the_load() -> None:
    report = check(mgpu(b_role="lhs"), ["MMA302"])
    diag = only(report, "MMA302")
    assert diag["predicted_error"]["exception"] == "UnsupportedTransferError"
    assert diag["fix"] is not None  # `layouts.lhs` -> `layouts.rhs` makes that load work


def test_rhs_layout_for_a_from_a_plain_view_fails_at_the_load() -> None:
    report = check(mgpu(a_role="rhs"), ["MMA301"])
    assert only(report, "MMA301")["predicted_error"]["exception"] == "UnsupportedTransferError"


def test_rhs_layout_for_a_from_a_transposed_view_fails_at_the_mma() -> None:
    report = check(mgpu(a_src="utils.memref_transpose(a_ref, (1, 0))", a_role="rhs", a_shape="(K, M)"),
                   ["MMA301"])
    assert only(report, "MMA301")["predicted_error"]["message"] == "Expected MMALayouts.lhs layout for A"


def test_b_with_lhs_layout_from_a_plain_view_gets_no_layout_fix() -> None:
    # Switching to `layouts.rhs` would fail at the load: the ref needs transposing too.
    report = check(mgpu(b_src="b_ref", b_role="lhs", b_shape="(K, N)"), ["MMA302"])
    assert only(report, "MMA302")["fix"] is None


def test_optimized_loads_say_nothing_about_views() -> None:
    # An optimized load from global memory fails for reasons of its own; from shared memory it
    # may use ldmatrix.trans. The view is not used.
    check(mgpu(b_src="b_ref", b_shape="(K, N)", opt=""), [])


@pytest.mark.parametrize("src", [
    "utils.memref_slice(b_ref, 0)",
    "utils.memref_slice(b_ref, (0, slice(None), slice(None)))",
])
def test_leading_index_keeps_the_view(src: str) -> None:
    check(mgpu(b_src=src, b_shape="(2, K, N)"), ["MMA302"])


def test_transposing_a_slice_is_fine() -> None:
    check(mgpu(b_src="utils.memref_transpose(utils.memref_slice(b_ref, 1), (1, 0))", b_shape="(2, N, K)"), [])


def test_batched_transpose_of_the_last_two_axes() -> None:
    src = "utils.memref_slice(utils.memref_transpose(b_ref, (0, 2, 1)), 0)"
    check(mgpu(b_src=src, b_shape="(2, N, K)"), [])


def test_other_permutations_are_not_modelled() -> None:
    # (1, 2, 0) of an (n, 2, k) buffer is a (2, k, n) view whose k axis is the contiguous one:
    # it would load, but only the last-two-axes swap is modelled: unknown view, no finding.
    report = lint(mgpu(b_src="utils.memref_slice(utils.memref_transpose(b_ref, (1, 2, 0)), 0)",
                       b_shape="(N, 2, K)"))
    assert [d.code for d in report.diagnostics] == []


def test_scratch_refs_have_no_known_view() -> None:
    code = mgpu(b_src="smem", b_shape="(N, K)", scratch="jax.ShapeDtypeStruct((K, N), DTYPE)")
    check(code, [])


def test_a_view_chosen_by_a_branch_is_unknown() -> None:
    src = "(b_ref if TRANSPOSED else utils.memref_transpose(b_ref, (1, 0)))"
    code = mgpu(b_src=src).replace("DTYPE = jnp.float16", "DTYPE = jnp.float16\nimport os\nTRANSPOSED = bool(os.environ.get('T'))")
    report = lint(code)
    assert [d.code for d in report.diagnostics] == []


# ---------------------------------------------------------------- Pallas

PALLAS = '''
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 64, 64
DTYPE = jnp.float16


def body(a_ref, b_ref, o_ref):
  acc = plgpu.layout_cast(jnp.zeros((M, N), jnp.float32), plgpu.Layout.MMA_ACC(DTYPE))
  a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(DTYPE), optimized=False)
  b = plgpu.load({b_src}, layout=plgpu.Layout.MMA_RHS(DTYPE), optimized=False)
  o_ref[...] = plgpu.mma(acc, a, b)


matmul = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
                      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane))
out = matmul(jnp.ones((M, K), DTYPE), jnp.ones({b_shape}, DTYPE))
'''


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_pallas_b_ref_T_is_the_right_view(version: str) -> None:
    check(PALLAS.format(b_src="b_ref.T", b_shape="(N, K)"), [], version)


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_pallas_rhs_layout_from_the_plain_ref(version: str) -> None:
    report = check(PALLAS.format(b_src="b_ref", b_shape="(K, N)"), ["MMA302"], version)
    diag = only(report, "MMA302")
    assert "b_ref.T" in diag["help"]
    assert diag["predicted_error"]["exception"] == "UnsupportedTransferError"

