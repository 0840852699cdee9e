"""API availability per targeted jax (MMA501) where patch releases of one minor version differ.

`--target-jax 0.11` cannot tell 0.11.1 from 0.11.2, and 0.11.2 added `MMALayouts.for_shape` and
dtype arguments to `MMALayouts`: only 0.10 is reported for those, so code that runs on 0.11.2
never gets a finding.
"""

from __future__ import annotations

import pytest
from _analysis_lint import lint, only

RAW = '''
import jax
import jax.numpy as jnp
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
from jaxlib.mlir import ir


def kernel(ctx, a_ref, b_ref, out_ref, smem):
  layouts = {layouts}
  a = mgpu.FragmentedArray.load_untiled(a_ref, layout=layouts.lhs, optimized=False)
  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs, optimized=False)
  acc = mgpu.FragmentedArray.splat(utils.c(0.0, ir.F32Type.get()), (128, 64), layout=layouts.acc)
  mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)


f = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct((128, 64), jnp.bfloat16), jax.ShapeDtypeStruct((64, 64), jnp.bfloat16)),
    jax.ShapeDtypeStruct((128, 64), jnp.float32), ())
'''


@pytest.mark.parametrize(
    ("layouts", "version", "expect"),
    [
        ("mgpu.MMALayouts.for_shape(ir.BF16Type.get(), 128, 64)", "0.10", ["MMA501"]),
        ("mgpu.MMALayouts.for_shape(ir.BF16Type.get(), 128, 64)", "0.11", []),
        ("mgpu.MMALayouts.for_shape(ir.BF16Type.get(), 128, 64)", "0.12", []),
        ("mgpu.MMALayouts(jnp.bfloat16)", "0.10", ["MMA501"]),
        ("mgpu.MMALayouts(jnp.dtype('bfloat16'))", "0.10", ["MMA501"]),
        ("mgpu.MMALayouts(jnp.bfloat16)", "0.11", []),
        ("mgpu.MMALayouts(jnp.bfloat16)", "0.12", []),
        ("mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.bfloat16))", "0.10", []),
        ("mgpu.MMALayouts(ir.BF16Type.get())", "0.10", []),
    ],
)
def test_patch_release_apis(layouts: str, version: str, expect: list[str]) -> None:
    report = lint(RAW.format(layouts=layouts), target_jax=version)
    assert [d.code for d in report.diagnostics] == expect


def test_dtype_argument_names_the_ir_type_alternative() -> None:
    report = lint(RAW.format(layouts="mgpu.MMALayouts(jnp.bfloat16)"), target_jax="0.10")
    diag = only(report, "MMA501")
    assert "dtype_to_ir_type" in diag["help"]
    assert diag["predicted_error"]["exception"] == "NotImplementedError"


F64 = '''
import jax
import jax.numpy as jnp
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
from jaxlib.mlir import ir


def kernel(ctx, a_ref, b_ref, out_ref, smem):
  f64 = ir.F64Type.get()
  layouts = mgpu.MMALayouts(f64)
  a = mgpu.FragmentedArray.load_untiled(a_ref, layout=layouts.lhs, optimized=False)
  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs, optimized=False)
  acc = mgpu.FragmentedArray.splat(utils.c(0.0, f64), (64, 64), layout=layouts.acc)
  mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)


f = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct((64, 64), jnp.float64), jax.ShapeDtypeStruct((64, 64), jnp.float64)),
    jax.ShapeDtypeStruct((64, 64), jnp.float64), ())
'''


def test_f64_before_0_12_is_about_the_operands_not_the_accumulator() -> None:
    # The fix is a newer jax, where the f64 accumulator is right: no MMA102 asking for f32.
    code = F64.replace("import jax\n", 'import jax\njax.config.update("jax_enable_x64", True)\n', 1)
    assert sorted(d.code for d in lint(code, target_jax="0.11").diagnostics) == ["MMA104", "MMA501"]
    assert lint(code, target_jax="0.12").diagnostics == ()
