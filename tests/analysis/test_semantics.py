"""Pallas lowering semantics: unsigned operands under Warpgroup lowering (MMA204).

jax 0.11 made Warpgroup the default (`plgpu.CompilerParams().lowering_semantics`); Lane must be
asked for. Under Lane, uint8/uint4 operands lower to `u8`/`u4` MMAs and are exact.
"""

from __future__ import annotations

import pytest
from _analysis_lint import PALLAS_VERSIONS, check, lint, only, related_rows, row_of

KERNEL = '''
import dataclasses
import functools
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
{imports}
M, N, K = 128, 64, 128
DT = {dtype}
{prelude}

def body(a_ref, b_ref, o_ref):
  acc = plgpu.layout_cast(jnp.zeros((M, N), jnp.int32), plgpu.Layout.MMA_ACC(DT))
  a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(DT))
  b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(DT))
  o_ref[...] = plgpu.mma(acc, a, b)


matmul = {launcher}
out = matmul(jnp.zeros((M, K), DT), jnp.zeros((N, K), DT))
'''

WG = "plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Warpgroup)"
LANE = "plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane)"
OUT = "jax.ShapeDtypeStruct((M, N), jnp.int32)"

LAUNCHERS = {
    # name: (imports, prelude, launcher, is warpgroup)
    "explicit_wg": ("", "", f"plgpu.kernel(body, out_type={OUT}, compiler_params={WG})", True),
    "explicit_lane": ("", "", f"plgpu.kernel(body, out_type={OUT}, compiler_params={LANE})", False),
    "default": ("", "", f"plgpu.kernel(body, out_type={OUT})", True),
    "default_params": ("", "", f"plgpu.kernel(body, out_type={OUT}, compiler_params=plgpu.CompilerParams())", True),
    "other_params_only": (
        "", "",
        f"plgpu.kernel(body, out_type={OUT}, compiler_params=plgpu.CompilerParams(approx_math=True))",
        True),
    "module_constant": ("", f"PARAMS = {WG}\n", f"plgpu.kernel(body, out_type={OUT}, compiler_params=PARAMS)", True),
    "replace_to_lane": (
        "", f"PARAMS = dataclasses.replace({WG}, lowering_semantics=plgpu.LoweringSemantics.Lane)\n",
        f"plgpu.kernel(body, out_type={OUT}, compiler_params=PARAMS)", False),
    "replace_to_wg": (
        "", f"PARAMS = dataclasses.replace({LANE}, lowering_semantics=plgpu.LoweringSemantics.Warpgroup)\n",
        f"plgpu.kernel(body, out_type={OUT}, compiler_params=PARAMS)", True),
    "imported_enum": (
        "from jax.experimental.pallas.mosaic_gpu import CompilerParams, LoweringSemantics\n", "",
        f"plgpu.kernel(body, out_type={OUT}, "
        "compiler_params=CompilerParams(lowering_semantics=LoweringSemantics.Warpgroup))", True),
    "mgpu_enum": (
        "from jax.experimental.mosaic import gpu as mgpu\n", "",
        f"plgpu.kernel(body, out_type={OUT}, "
        "compiler_params=plgpu.CompilerParams(lowering_semantics=mgpu.LoweringSemantics.Lane))", False),
    "pallas_call_wg": (
        "", "", f"pl.pallas_call(body, out_shape={OUT}, compiler_params={WG})", True),
    "pallas_call_lane": (
        "", "", f"pl.pallas_call(body, out_shape={OUT}, compiler_params={LANE})", False),
    "partial_lane": (
        "", f"lane_kernel = functools.partial(plgpu.kernel, compiler_params={LANE})\n",
        f"lane_kernel(body, out_type={OUT})", False),
}


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
@pytest.mark.parametrize("dtype", ["jnp.uint8", "jnp.uint4", "jnp.int8"])
def test_unsigned_operands_per_semantics(dtype: str, launcher: str, version: str) -> None:
    imports, prelude, launch, is_wg = LAUNCHERS[launcher]
    code = KERNEL.format(imports=imports, prelude=prelude, launcher=launch, dtype=dtype)
    expect = ["MMA204"] if is_wg and dtype != "jnp.int8" else []
    report = check(code, expect, target_jax=version)
    if expect:
        diag = only(report, "MMA204")
        assert diag["predicted_error"] is None
        assert diag["call"]["lowering_semantics"] == "warpgroup"
        if dtype == "jnp.uint4":
            assert "values >= 8" in diag["message"] and "signed s4" in diag["message"]
        else:
            assert "values >= 128" in diag["message"] and "signed s8" in diag["message"]
    else:
        for diag in report.diagnostics:
            assert diag.to_json()["call"]["lowering_semantics"] in ("lane", None)


def test_default_semantics_note_names_the_version() -> None:
    imports, prelude, launch, _ = LAUNCHERS["default"]
    code = KERNEL.format(imports=imports, prelude=prelude, launcher=launch, dtype="jnp.uint8")
    diag = only(check(code, ["MMA204"], target_jax="0.11"), "MMA204")
    assert "no lowering_semantics given: jax 0.11 defaults to Warpgroup" in related_rows(diag).values()


def test_default_semantics_note_points_at_the_kernel_factory() -> None:
    imports, prelude, launch, _ = LAUNCHERS["default"]
    code = KERNEL.format(imports=imports, prelude=prelude, launcher=launch, dtype="jnp.uint8")
    diag = only(check(code, ["MMA204"], target_jax="0.11"), "MMA204")
    rows = related_rows(diag)
    assert rows.get(row_of(code, "matmul = plgpu.kernel")) == (
        "no lowering_semantics given: jax 0.11 defaults to Warpgroup"
    )


def test_explicit_warpgroup_note_points_at_the_choice() -> None:
    imports, prelude, launch, _ = LAUNCHERS["module_constant"]
    code = KERNEL.format(imports=imports, prelude=prelude, launcher=launch, dtype="jnp.uint8")
    diag = only(check(code, ["MMA204"], target_jax="0.12"), "MMA204")
    rows = related_rows(diag)
    assert rows.get(row_of(code, "PARAMS = plgpu.CompilerParams")) == (
        "warpgroup lowering semantics chosen here"
    )


def test_semantics_parameterized_in_a_test() -> None:
    code = '''
    from absl.testing import parameterized
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    class Test(parameterized.TestCase):

      @parameterized.product(
          semantics=(plgpu.LoweringSemantics.Lane, plgpu.LoweringSemantics.Warpgroup),
          dtype=(jnp.int8, jnp.uint8),
      )
      def test_integer_mma(self, semantics, dtype):
        def body(a_ref, b_ref, o_ref):
          acc = plgpu.layout_cast(jnp.zeros((64, 64), jnp.int32), plgpu.Layout.MMA_ACC(dtype))
          a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
          b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
          o_ref[...] = plgpu.mma(acc, a, b)

        f = plgpu.kernel(
            body, out_type=jax.ShapeDtypeStruct((64, 64), jnp.int32),
            compiler_params=plgpu.CompilerParams(lowering_semantics=semantics))
        f(jnp.zeros((64, 64), dtype), jnp.zeros((64, 64), dtype))
    '''
    report = check(code, ["MMA204"], target_jax="0.11")
    diag = only(report, "MMA204")
    assert diag["worlds"] == [
        {"semantics": "plgpu.LoweringSemantics.Warpgroup", "dtype": "jnp.uint8"}
    ]


def test_unknown_semantics_is_silent() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def build(compiler_params):
      def body(a_ref, b_ref, o_ref):
        acc = plgpu.layout_cast(jnp.zeros((64, 64), jnp.int32), plgpu.Layout.MMA_ACC(jnp.uint8))
        a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(jnp.uint8))
        b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.uint8))
        o_ref[...] = plgpu.mma(acc, a, b)

      f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((64, 64), jnp.int32),
                       compiler_params=compiler_params)
      return f(jnp.zeros((64, 64), jnp.uint8), jnp.zeros((64, 64), jnp.uint8))
    '''
    report = lint(code, target_jax="0.11")
    assert report.diagnostics == ()
    assert report.known_calls == 1


def test_raw_mgpu_mma_with_uint8_is_exact() -> None:
    # mgpu.mma picks u8 from each operand's is_signed: no MMA204 there.
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils


    def kernel(ctx, a_ref, b_ref, out_ref, smem):
      lay = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.uint8))
      a = mgpu.FragmentedArray.load_untiled(a_ref, layout=lay.lhs, is_signed=False, optimized=False)
      b = mgpu.FragmentedArray.load_untiled(utils.memref_transpose(b_ref, (1, 0)), layout=lay.rhs, is_signed=False, optimized=False)
      acc = mgpu.FragmentedArray.splat(utils.c(0, utils.dtype_to_ir_type(jnp.int32)), (64, 64),
                                       layout=lay.acc, is_signed=True)
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)


    f = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((64, 64), jnp.uint8), jax.ShapeDtypeStruct((64, 64), jnp.uint8)),
        jax.ShapeDtypeStruct((64, 64), jnp.int32), ())
    '''
    check(code, [])


def test_uint8_from_astype_under_warpgroup() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def body(img_ref, tmpl_ref, o_ref):
      # pixels arrive as int16 and are narrowed to uint8 for the MMA
      a = plgpu.load(img_ref, layout=plgpu.Layout.MMA_LHS(jnp.uint8)).astype(jnp.uint8)
      b = plgpu.load(tmpl_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.uint8)).astype(jnp.uint8)
      acc = plgpu.layout_cast(jnp.zeros((64, 64), jnp.int32), plgpu.Layout.MMA_ACC(jnp.uint8))
      o_ref[...] = plgpu.mma(acc, a, b)


    f = plgpu.kernel(
        body, out_type=jax.ShapeDtypeStruct((64, 64), jnp.int32),
        compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Warpgroup))
    y = f(jnp.zeros((64, 64), jnp.int16), jnp.zeros((64, 64), jnp.int16))
    '''
    check(code, ["MMA204"], target_jax="0.11")


# jax's own pattern: one test class per semantics through a metaclass keyword, and a
# `self.kernel` wrapper that forces the class's semantics into the compiler params.
JAX_STYLE = '''
import dataclasses
import functools
from typing import ClassVar
from absl.testing import parameterized
import jax
import jax.numpy as jnp
from jax._src import test_util as jtu
from jax.experimental.pallas import mosaic_gpu as plgpu


class PallasTestMetaclass(parameterized.TestGeneratorMetaclass):

  def __new__(mcs, *args, lowering_semantics=plgpu.LoweringSemantics.Lane):
    cls = super().__new__(mcs, *args)
    cls.LOWERING_SEMANTICS = lowering_semantics
    return cls


class PallasTest(jtu.JaxTestCase, metaclass=PallasTestMetaclass):
  LOWERING_SEMANTICS: ClassVar[plgpu.LoweringSemantics]

  def kernel(self, *args, **kwargs):
    compiler_params = dataclasses.replace(
        kwargs.pop("compiler_params", plgpu.CompilerParams()),
        lowering_semantics=self.LOWERING_SEMANTICS,
    )
    return plgpu.kernel(*args, compiler_params=compiler_params, **kwargs)


class PallasCallTest(PallasTest):

  @parameterized.parameters(jnp.int8, jnp.uint8)
  def test_mma(self, dtype):
    @functools.partial(self.kernel, out_type=jax.ShapeDtypeStruct((128, 8), jnp.int32))
    def kernel(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(jnp.zeros((128, 8), jnp.int32), plgpu.Layout.MMA_ACC(dtype))
      a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
      b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False)
      o_ref[...] = plgpu.mma(acc, a, b)

    kernel(jnp.zeros((128, 128), dtype), jnp.zeros((8, 128), dtype))
{wg_class}
'''

WG_CLASS = '''

class PallasCallWGTest(
    PallasCallTest, lowering_semantics=plgpu.LoweringSemantics.Warpgroup
):
  ...
'''


def test_jax_style_lane_test_class_is_clean() -> None:
    report = lint(JAX_STYLE.format(wg_class=""), target_jax="0.11")
    assert report.diagnostics == ()


def test_jax_style_warpgroup_subclass_finds_uint8() -> None:
    report = check(JAX_STYLE.format(wg_class=WG_CLASS), ["MMA204"], target_jax="0.11")
    assert only(report, "MMA204")["world"] == {"class": "PallasCallWGTest", "dtype": "jnp.uint8"}


def test_semantics_class_attribute_through_self_kernel() -> None:
    # The metaclass's __new__ runs after the class body and sets LOWERING_SEMANTICS from the
    # class keyword (default Lane), so a body attribute is overwritten: Lane, no MMA204.
    code = JAX_STYLE.format(wg_class="").replace(
        "class PallasCallTest(PallasTest):",
        "class PallasCallTest(PallasTest):\n  LOWERING_SEMANTICS = plgpu.LoweringSemantics.Warpgroup\n",
    )
    check(code, [], target_jax="0.11")
    # Without that metaclass, the class attribute is what self.kernel passes on.
    plain = code.replace(", metaclass=PallasTestMetaclass", "")
    report = check(plain, ["MMA204"], target_jax="0.11")
    assert only(report, "MMA204")["world"] == {"dtype": "jnp.uint8"}


# Under Warpgroup semantics layouts are inferred: operands read with `ref[...]` and an accumulator
# without layout_cast are how tokamax's ragged-dot sm80 kernel is written. Only dtypes matter.
WG_INFERRED = '''
import functools
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

BM, BN, BK = 128, 128, 32


def ragged_tile(lhs, rhs):
  @plgpu.kernel(
      out_type=jax.ShapeDtypeStruct((BM, BN), jnp.float32),
      scratch_types=[plgpu.SMEM((BM, BK), lhs.dtype), plgpu.SMEM((BK, BN), rhs.dtype)],
      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Warpgroup),
  )
  def kernel(lhs_gmem, rhs_gmem, out_gmem, lhs_smem, rhs_smem):
    acc = jnp.zeros((BM, BN), {acc})
    lhs_smem[...] = lhs_gmem[...]
    rhs_smem[...] = rhs_gmem[...]
    a = lhs_smem[...]
    b = rhs_smem[...]
    out_gmem[...] = plgpu.mma(acc, a, b).astype(out_gmem.dtype)

  return kernel(lhs, rhs)


y = ragged_tile(jnp.zeros((BM, BK), {dtype}), jnp.zeros((BK, BN), {dtype}))
'''


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_warpgroup_inferred_layouts_are_not_layout_errors(version: str) -> None:
    check(WG_INFERRED.format(acc="jnp.float32", dtype="jnp.bfloat16"), [], target_jax=version)


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_warpgroup_inferred_layouts_still_check_dtypes(version: str) -> None:
    report = check(WG_INFERRED.format(acc="jnp.float32", dtype="jnp.int8"), ["MMA101"],
                   target_jax=version)
    assert only(report, "MMA101")["call"]["lowering_semantics"] == "warpgroup"


PALLAS_M_WARPS = '''
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 64, 64
DT = jnp.float16


def body(a_ref, b_ref, o_ref):
  acc = plgpu.layout_cast(jnp.zeros((M, N), jnp.float32), plgpu.Layout.MMA_ACC(DT{acc_m_warps}))
  a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(DT, m_warps=2), optimized=False)
  b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(DT, m_warps=2), optimized=False)
  o_ref[...] = plgpu.mma(acc, a, b)


kernel = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
                      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane))
out = kernel(jnp.ones((M, K), DT), jnp.ones((N, K), DT))
'''


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_pallas_m_warps_is_taken_as_written(version: str) -> None:
    # jax 0.11.2 honours `m_warps=` in the Pallas MMA layouts like 0.12 (seen on an H200; only
    # 0.11.0's source drops it): consistent m_warps=2 layouts are fine, and an accumulator left
    # at m_warps=4 disagrees with them on both versions.
    check(PALLAS_M_WARPS.format(acc_m_warps=", m_warps=2"), [], version)
    check(PALLAS_M_WARPS.format(acc_m_warps=""), ["MMA305"], version)


KERNEL_WRAPPER = '''
import dataclasses
import functools
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

_kernel = plgpu.kernel


class PallasTest:
  LOWERING_SEMANTICS = plgpu.LoweringSemantics.{semantics}
  COMPILER_PARAMS = plgpu.CompilerParams(unsafe_no_auto_barriers=True)

  def kernel(self, *args, **kwargs):
    compiler_params = dataclasses.replace(
        kwargs.pop("compiler_params", plgpu.CompilerParams()),
        lowering_semantics=self.LOWERING_SEMANTICS,
    )
    return _kernel(*args, compiler_params=compiler_params, **kwargs)

  def skip_if_wg_semantics(self):
    if self.LOWERING_SEMANTICS == plgpu.LoweringSemantics.Warpgroup:
      self.skipTest("not under WG")

  def test_mma(self):
    {skip}
    dtype = jnp.uint8

    @functools.partial(self.kernel, out_type=jax.ShapeDtypeStruct((64, 64), jnp.int32),
                       compiler_params=self.COMPILER_PARAMS)
    def kernel(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(jnp.zeros((64, 64), jnp.int32), plgpu.Layout.MMA_ACC(dtype))
      a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
      b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False)
      o_ref[...] = plgpu.mma(acc, a, b)

    kernel(jnp.zeros((64, 64), dtype), jnp.zeros((64, 64), dtype))
'''


@pytest.mark.parametrize(
    ("semantics", "skip", "expect"),
    [
        # The wrapper pops compiler_params out of **kwargs and replaces the semantics: the
        # class's Lane wins over the params' default (Warpgroup from 0.11).
        ("Lane", "pass", []),
        ("Warpgroup", "pass", ["MMA204"]),
        # A skip helper defined in the module runs: it skips only under Warpgroup.
        ("Warpgroup", "self.skip_if_wg_semantics()", []),
        ("Lane", "self.skip_if_wg_semantics()", []),
    ],
)
def test_kernel_wrapper_that_pops_compiler_params(semantics: str, skip: str, expect: list[str]) -> None:
    report = lint(KERNEL_WRAPPER.format(semantics=semantics, skip=skip), target_jax="0.11")
    assert [d.code for d in report.diagnostics] == expect


def test_a_skip_helper_defined_here_lets_lane_tests_run() -> None:
    code = KERNEL_WRAPPER.format(semantics="Lane", skip="self.skip_if_wg_semantics()").replace(
        "jnp.zeros((64, 64), jnp.int32), plgpu.Layout.MMA_ACC", "jnp.zeros((64, 64), jnp.float32), plgpu.Layout.MMA_ACC")
    assert [d.code for d in lint(code, target_jax="0.11").diagnostics] == ["MMA101"]
