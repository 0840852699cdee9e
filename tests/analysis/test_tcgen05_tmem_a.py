"""tcgen05 with operand A in TMEM (MMA713-715): what each jax raises, and the calls that look
alike and are fine (A in TMEM at M=128 fully packed, A in SMEM at M=64, an A or a packing the
analysis cannot know)."""

from __future__ import annotations

import pytest
from _analysis_lint import ALL_VERSIONS, PALLAS_VERSIONS, check, lint, only

LAYOUT = {
    "0.10": "TMEMLayout(tiling=Tiling(tiles=(({rows}, {p}), (32, {p}))), warp_dims=(-4,), lane_dims=(-2,), vector_dim=-1)",
    "0.11": "TMEMLayout(tiling=Tiling(tiles=(({rows}, {p}), (32, {p}))), warp_dims=(-4,), lane_dims=(-2,), vector_dim=-1)",
    "0.12": "TMEMLayout(tiling=Tiling(tiles=(({rows}, {p}), (32, {p}))), warp_dims=(-4,), lane_dims=(-2,), vector_dim=-1, unreduced_operation=None)",
}
INFER = "Failed to infer a possible set of layouts. This should only happen if user-provided layout casts are unsatisfiable."
INFER_12 = INFER + " To dump the constraint system for debugging, use `MOSAIC_GPU_DUMP_CONSTRAINT_SYSTEM=1`."
SEMANTICS = {"lane": "plgpu.LoweringSemantics.Lane", "warpgroup": "plgpu.LoweringSemantics.Warpgroup"}


def pallas(a_type: str = "plgpu.TMEM((M, K), DT, packed=True)", m: int = 128, semantics: str | None = "lane",
           dtype: str = "jnp.bfloat16", b_dtype: str | None = None, mma_kwargs: str = "",
           acc: str = "plgpu.TMEM((M, N), jnp.float32)", extra_scratch: str = "", extra_refs: str = "",
           kernel_kwargs: str = "") -> str:
    params = "" if semantics is None else (
        f"compiler_params=plgpu.CompilerParams(lowering_semantics={SEMANTICS[semantics]}),")
    return f'''
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = {m}, 128, 128
DT = {dtype}


@functools.partial(
    plgpu.kernel,
    out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
    scratch_types=[
        {a_type},
        plgpu.SMEM((N, K), {b_dtype or "DT"}),
        {acc},
        plgpu.Barrier(orders_tensor_core=True),
        {extra_scratch}
    ],
    {params}
    {kernel_kwargs}
)
def kernel(out_gmem, a_ref, b_smem, acc_tmem, barrier{extra_refs}):
  plgpu.tcgen05_mma(acc_tmem, a_ref, b_smem.T, barrier, accumulate=False{mma_kwargs})


kernel()
'''


SCALES = ("plgpu.TMEM((M, K // 32), jnp.float8_e8m0fnu, layout=plgpu.TMEMLayout.SCALES_LAYOUT),"
          " plgpu.TMEM((N, K // 32), jnp.float8_e8m0fnu, layout=plgpu.TMEMLayout.SCALES_LAYOUT),")
META = "plgpu.TMEM((M, K // 2), jnp.uint2, layout=plgpu.TMEMLayout.SPARSE_METADATA_LAYOUT),"


# ---------------------------------------------------------------- clean


@pytest.mark.parametrize("version", ALL_VERSIONS)
@pytest.mark.parametrize("semantics", ["lane", "warpgroup", None])
@pytest.mark.parametrize("dtype", ["jnp.bfloat16", "jnp.float16", "jnp.float8_e4m3fn", "jnp.int8"])
def test_a_in_tmem_at_m128_fully_packed_is_clean(dtype: str, semantics: str | None, version: str) -> None:
    acc = "plgpu.TMEM((M, N), jnp.int32)" if dtype == "jnp.int8" else "plgpu.TMEM((M, N), jnp.float32)"
    check(pallas(dtype=dtype, semantics=semantics, acc=acc), [], version)


@pytest.mark.parametrize("version", ALL_VERSIONS)
@pytest.mark.parametrize("semantics", ["lane", "warpgroup"])
def test_a_in_smem_at_m64_is_clean(semantics: str, version: str) -> None:
    check(pallas("plgpu.SMEM((M, K), DT)", m=64, semantics=semantics), [], version)


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_a_whose_memory_space_is_unknown_is_silent(version: str) -> None:
    """A helper's parameter: SMEM or TMEM, 64 or 128 rows, nothing is claimed."""
    code = '''
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def issue(acc_tmem, lhs, b_smem, barrier, s):
      plgpu.tcgen05_mma(acc_tmem, lhs, b_smem, barrier, a_scale=s, b_scale=s, a_sparse_metadata=s)
    '''
    report = check(code, [], version, known=False)
    assert report.calls == 1


@pytest.mark.parametrize("version", ALL_VERSIONS)
@pytest.mark.parametrize("semantics", ["lane", "warpgroup"])
def test_a_packing_that_cannot_be_decided_is_silent(semantics: str, version: str) -> None:
    """`packed=` from somewhere the analysis cannot see, a `layout=` member, a narrower dtype
    with neither (its allocation fails, which is not this rule's)."""
    for a_type in ("plgpu.TMEM((M, K), DT, packed=PACKED)", "plgpu.TMEM((M, K), DT)",
                   "plgpu.TMEM((M, K), DT, layout=plgpu.TMEMLayout.M64_COLLECTIVE_LAYOUT)"):
        code = pallas(a_type, semantics=semantics).replace("DT = jnp.bfloat16", "DT = jnp.bfloat16\nPACKED = __import__('os').environ.get('P') == '1'")
        check(code, [], version)
        check(pallas(a_type.replace("PACKED", "__import__('os').environ.get('P') == '1'"), m=64, semantics=semantics), [], version)


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_a_dense_block_scaled_mma_takes_a_in_tmem_from_jax_0_11(version: str) -> None:
    code = pallas(dtype="jnp.float8_e4m3fn", extra_scratch=SCALES, extra_refs=", a_scale, b_scale",
                  mma_kwargs=", a_scale=a_scale, b_scale=b_scale")
    check(code, [], version)


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_a_block_scaled_sparse_mma_with_a_in_smem_is_clean(version: str) -> None:
    code = pallas("plgpu.SMEM((M, K // 2), DT)", dtype="jnp.float8_e5m2",
                  extra_scratch=SCALES + META, extra_refs=", a_scale, b_scale, meta",
                  mma_kwargs=", a_scale=a_scale, b_scale=b_scale, a_sparse_metadata=meta")
    check(code, [], version)


# ---------------------------------------------------------------- MMA713


@pytest.mark.parametrize("version", ALL_VERSIONS)
@pytest.mark.parametrize("semantics", ["lane", "warpgroup", None])
def test_a_in_tmem_with_64_rows(semantics: str | None, version: str) -> None:
    report = check(pallas(m=64, semantics=semantics), ["MMA713"], version)
    predicted = only(report, "MMA713")["predicted_error"]
    assert predicted["exception"] == "NotImplementedError"
    assert predicted["message"] == "Only M=128 is supported for MMA with A in TMEM, but got M=64"
    related = [r["message"] for r in only(report, "MMA713")["related"]]
    assert "operand `a` allocated here in TMEM as bfloat16 with packing 2" in related


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_a_in_tmem_whose_rows_differ_from_the_accumulator_is_pallas_shape_error_first(version: str) -> None:
    """Pallas checks `acc_m != lhs_m` when it traces: that error, not MMA713's, comes first."""
    code = pallas(m=64, acc="plgpu.TMEM((128, N), jnp.float32)")
    assert "MMA713" not in {d.code for d in lint(code, version).diagnostics}


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_a_in_tmem_with_rows_tmem_cannot_hold_is_not_mma713(version: str) -> None:
    """A 32-row TMEM ref fails to allocate before the MMA is reached."""
    assert "MMA713" not in {d.code for d in lint(pallas(m=32), version).diagnostics}


# ---------------------------------------------------------------- MMA714


@pytest.mark.parametrize("version", ALL_VERSIONS)
@pytest.mark.parametrize(("dtype", "full"), [("jnp.bfloat16", 2), ("jnp.float8_e5m2", 4), ("jnp.int8", 4)])
def test_unpacked_a_under_lane(dtype: str, full: int, version: str) -> None:
    acc = "plgpu.TMEM((M, N), jnp.int32)" if dtype == "jnp.int8" else "plgpu.TMEM((M, N), jnp.float32)"
    report = check(pallas("plgpu.TMEM((M, K), DT, packed=False)", dtype=dtype, acc=acc), ["MMA714"], version)
    diag = only(report, "MMA714")
    expected, got = (LAYOUT[version].format(rows=128, p=p) for p in (full, 1))
    assert diag["predicted_error"] == {"exception": "ValueError", "jax_version": version, "match": "exact",
                                       "message": f"A layout mismatch: expected {expected}, got {got}"}
    assert "packed=True" in diag["help"]


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_unpacked_a_under_warpgroup_fails_in_layout_inference(version: str) -> None:
    report = check(pallas("plgpu.TMEM((M, K), DT, packed=False)", semantics="warpgroup"), ["MMA714"], version)
    assert only(report, "MMA714")["predicted_error"]["message"] == (INFER_12 if version == "0.12" else INFER)


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_the_default_semantics_decide_the_message(version: str) -> None:
    """No compiler_params: Lane in jax 0.10, Warpgroup from 0.11 (and the note says so)."""
    report = check(pallas("plgpu.TMEM((M, K), DT, packed=False)", semantics=None), ["MMA714"], version)
    diag = only(report, "MMA714")
    if version == "0.10":
        assert diag["predicted_error"]["message"].startswith("A layout mismatch")
    else:
        assert diag["predicted_error"]["message"].startswith("Failed to infer")
        assert any("defaults to Warpgroup" in r["message"] for r in diag["related"])


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_unpacked_64_row_a_order_depends_on_semantics(version: str) -> None:
    """Warpgroup: layout inference fails before the MMA's M check; Lane: the M check first (and
    the layout check, for 128 rows only, is not reached)."""
    code = pallas("plgpu.TMEM((M, K), DT, packed=False)", m=64, semantics="warpgroup")
    report = check(code, ["MMA713", "MMA714"], version)
    assert only(report, "MMA713")["masked_by"] == "MMA714"
    check(pallas("plgpu.TMEM((M, K), DT, packed=False)", m=64, semantics="lane"), ["MMA713"], version)


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_unknown_semantics_with_a_wrong_packing_is_silent(version: str) -> None:
    """Which of two messages jax raises depends on the semantics: nothing is predicted."""
    code = pallas("plgpu.TMEM((M, K), DT, packed=False)", semantics="lane").replace(
        "plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane)", "PARAMS").replace(
        "DT = jnp.bfloat16", "DT = jnp.bfloat16\nPARAMS = __import__('os').environ['PARAMS']")
    assert {d.code for d in lint(code, version).diagnostics} <= {"MMA001"}


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_a_collective_mma_needs_a_collective_a(version: str) -> None:
    acc = "plgpu.TMEM((M, 2 * N), jnp.float32, collective=True)"
    kwargs = 'cluster=(2,), cluster_names=("x",),'
    report = check(pallas("plgpu.TMEM((M, K), DT, packed=True)", acc=acc, mma_kwargs=', collective_axis="x"',
                          kernel_kwargs=kwargs), ["MMA714"], version)
    diag = only(report, "MMA714")
    assert diag["predicted_error"]["message"] == "LHS Ref must be collective if collective_axis is set."
    assert "collective_axis=" in diag["message"]
    check(pallas("plgpu.TMEM((M, K), DT, packed=True, collective=True)", acc=acc,
                 mma_kwargs=', collective_axis="x"', kernel_kwargs=kwargs), [], version)
    # The accumulator not collective either: its own check raises first, not claimed here.
    not_collective = pallas("plgpu.TMEM((M, K), DT, packed=True)", acc="plgpu.TMEM((M, 2 * N), jnp.float32)",
                            mma_kwargs=', collective_axis="x"', kernel_kwargs=kwargs)
    assert "MMA714" not in {d.code for d in lint(not_collective, version).diagnostics}


# ---------------------------------------------------------------- MMA715


@pytest.mark.parametrize("version", ALL_VERSIONS)
@pytest.mark.parametrize("semantics", ["lane", "warpgroup"])
def test_block_scaled_a_in_tmem(semantics: str, version: str) -> None:
    dense = pallas(dtype="jnp.float8_e4m3fn", semantics=semantics, extra_scratch=SCALES,
                   extra_refs=", a_scale, b_scale", mma_kwargs=", a_scale=a_scale, b_scale=b_scale")
    sparse = pallas("plgpu.TMEM((M, K // 2), DT, packed=True)", dtype="jnp.float8_e5m2", semantics=semantics,
                    extra_scratch=SCALES + META, extra_refs=", a_scale, b_scale, meta",
                    mma_kwargs=", a_scale=a_scale, b_scale=b_scale, a_sparse_metadata=meta")
    report = check(sparse, ["MMA715"], version)
    assert only(report, "MMA715")["predicted_error"]["message"] == "A in TMEM unsupported for block-scaled sparse matmuls"
    if version == "0.10":
        report = check(dense, ["MMA715"], version)
        assert only(report, "MMA715")["predicted_error"]["message"] == "A in TMEM unsupported for block-scaled matmuls"
    else:
        check(dense, [], version)


# ---------------------------------------------------------------- raw Mosaic GPU


def raw(a_alloc: str = "mgpu.TMEM((M, K), DT, packing=2)", m: int = 128, dtype: str = "jnp.bfloat16",
        b_dtype: str | None = None, semantics: str = "") -> str:
    return f'''
import jax
import jax.numpy as jnp
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import tcgen05

M, N, K = {m}, 128, 128
DT = {dtype}


def kernel(ctx, lhs, rhs, out, scratch):
  rhs_smem, acc, lhs_tmem = scratch
  with mgpu.single_thread():
    tcgen05.mma(acc, lhs_tmem, rhs_smem, accumulate=False)


def run(x, y):
  scratch = [
      jax.ShapeDtypeStruct(mgpu.tile_shape((K, N), (8, 64)), {b_dtype or "DT"}),
      mgpu.TMEM((M, N), jnp.float32),
      {a_alloc},
  ]
  out = jax.ShapeDtypeStruct((M, N), jnp.float32)
  return mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (x, y), out, scratch{semantics})(x, y)


run(jnp.ones((M, K), DT), jnp.ones((K, N), DT))
'''


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_raw_tmem_default_packing_is_one(version: str) -> None:
    report = check(raw("mgpu.TMEM((M, K), DT)"), ["MMA714"], version)
    diag = only(report, "MMA714")
    assert diag["help"] == "allocate A fully packed: `mgpu.TMEM(shape, dtype, packing=2)`"
    assert any("packs nothing without `packing=`" in r["message"] for r in diag["related"])
    check(raw("mgpu.TMEM((M, K), DT, packing=2)"), [], version)
    check(raw("mgpu.TMEM((M, K), DT, layout=tcgen05.tmem_default_layout(packing=2))"), [], version)
    check(raw("mgpu.TMEM((M, K), DT, layout=tcgen05.tmem_default_layout(packing=1))"), ["MMA714"], version)


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_raw_packing_no_tmem_ref_can_have(version: str) -> None:
    report = check(raw("mgpu.TMEM((M, K), DT, packing=2)", dtype="jnp.float8_e4m3fn"), ["MMA714"], version)
    diag = only(report, "MMA714")
    assert diag["predicted_error"]["message"] == "For 8-bit types, the vector length must be 1 or 4 , but got: 2"
    assert "packing 2, which its TMEM layout cannot hold" in diag["message"]


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_raw_a_in_tmem_with_64_rows(version: str) -> None:
    report = check(raw(m=64), ["MMA713"], version)
    assert only(report, "MMA713")["predicted_error"]["message"].endswith("but got M=64")


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_raw_warpgroup_kernel_claims_nothing_of_tmem(version: str) -> None:
    code = raw("mgpu.TMEM((M, K), DT)", semantics=", thread_semantics=mgpu.LoweringSemantics.Warpgroup")
    assert "MMA714" not in {d.code for d in lint(code, version).diagnostics}
    lane = raw("mgpu.TMEM((M, K), DT)", semantics=", thread_semantics=mgpu.LoweringSemantics.Lane")
    check(lane, ["MMA714"], version)


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_jax_0_10_takes_a_packing_from_b(version: str) -> None:
    """A packed for its own 16 bits, B of float32: jax 0.10 expects B's packing (1) and raises the
    layout mismatch before the element types; 0.11+ expect A's (2) and reach the type check."""
    report = lint(raw("mgpu.TMEM((M, K), DT, packing=2)", b_dtype="jnp.float32"), version)
    codes = sorted(d.code for d in report.diagnostics)
    if version == "0.10":
        assert codes == ["MMA709", "MMA714"]
        diag = next(d.to_json() for d in report.diagnostics if d.code == "MMA714")
        expected, got = (LAYOUT[version].format(rows=128, p=p) for p in (1, 2))
        assert diag["predicted_error"]["message"] == f"A layout mismatch: expected {expected}, got {got}"
    else:
        assert codes == ["MMA709"]
