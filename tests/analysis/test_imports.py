"""Every import spelling of the MMA APIs, dtypes and MLIR helpers resolves to the same facts.

Each case is one warp-level int8 kernel (or a Pallas one) written with a different spelling;
the buggy variant accumulates in float32 (MMA101), the fixed one in signed int32 (clean).
"""

from __future__ import annotations

import pytest
from _analysis_lint import ALL_VERSIONS, PALLAS_VERSIONS, all_of, check, lint, only, row_of

# ---------------------------------------------------------------- mgpu spellings

# (header, mma, FragmentedArray, MMALayouts, utils module) as the kernel body spells them.
MGPU_SPELLINGS = {
    "from_mosaic_import_gpu": (
        "from jax.experimental.mosaic import gpu as mgpu\n"
        "from jax.experimental.mosaic.gpu import utils\n",
        "mgpu.mma", "mgpu.FragmentedArray", "mgpu.MMALayouts", "utils",
    ),
    "import_gpu_as": (
        "import jax.experimental.mosaic.gpu as mgpu\n"
        "from jax.experimental.mosaic.gpu import utils\n",
        "mgpu.mma", "mgpu.FragmentedArray", "mgpu.MMALayouts", "utils",
    ),
    "fragmented_array_module": (
        "import jax.experimental.mosaic.gpu as mgpu\n"
        "from jax.experimental.mosaic.gpu import fragmented_array as fa\n"
        "from jax.experimental.mosaic.gpu import utils as mgpu_utils\n",
        "mgpu.mma", "fa.FragmentedArray", "mgpu.MMALayouts", "mgpu_utils",
    ),
    "mma_module_names": (
        "from jax.experimental.mosaic.gpu.mma import mma, MMALayouts\n"
        "from jax.experimental.mosaic.gpu.fragmented_array import FragmentedArray\n"
        "from jax.experimental.mosaic.gpu import utils\n",
        "mma", "FragmentedArray", "MMALayouts", "utils",
    ),
    "package_reexport_function": (
        # `mma` here is the function the package re-exports, not the submodule.
        "from jax.experimental.mosaic.gpu import FragmentedArray, MMALayouts, mma\n"
        "from jax.experimental.mosaic.gpu import utils\n",
        "mma", "FragmentedArray", "MMALayouts", "utils",
    ),
    "fully_qualified": (
        "import jax\n"
        "import jax.experimental.mosaic.gpu\n",
        "jax.experimental.mosaic.gpu.mma",
        "jax.experimental.mosaic.gpu.FragmentedArray",
        "jax.experimental.mosaic.gpu.MMALayouts",
        "jax.experimental.mosaic.gpu.utils",
    ),
    "mgpu_utils_attribute": (
        "from jax.experimental.mosaic import gpu as mosaic_gpu\n",
        "mosaic_gpu.mma", "mosaic_gpu.FragmentedArray", "mosaic_gpu.MMALayouts", "mosaic_gpu.utils",
    ),
}

WARP_KERNEL = '''
{header}import jax
import jax.numpy as jnp

M = N = K = 128


def kernel(ctx, a_ref, b_ref, out_ref, smem):
  del ctx, smem
  layouts = {MMALayouts}({utils}.dtype_to_ir_type(jnp.int8))
  a = {FA}.load_untiled(a_ref, layout=layouts.lhs, is_signed=True, optimized=False)
  b = {FA}.load_untiled(
      {utils}.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs, is_signed=True,
      optimized=False)
  acc = {FA}.splat(
      {utils}.c({zero}, {utils}.dtype_to_ir_type({acc_dtype})), (M, N),
      layout=layouts.acc{acc_signed})
  out = {mma}(acc, a, b)
  out.store_untiled(out_ref, optimized=False)


def run(a, b):
  f = {launch}(
      kernel, (1, 1, 1), (128, 1, 1),
      (jax.ShapeDtypeStruct((M, K), jnp.int8), jax.ShapeDtypeStruct((N, K), jnp.int8)),
      jax.ShapeDtypeStruct((M, N), {acc_dtype}), ())
  return f(a, b)
'''


def _warp(spelling: str, buggy: bool) -> str:
    header, mma, fa, layouts, utils = MGPU_SPELLINGS[spelling]
    launch = mma.rsplit(".", 1)[0] + ".as_gpu_kernel" if "." in mma else None
    if launch is None:
        header += "from jax.experimental.mosaic.gpu import as_gpu_kernel\n"
        launch = "as_gpu_kernel"
    return WARP_KERNEL.format(
        header=header,
        mma=mma,
        FA=fa,
        MMALayouts=layouts,
        utils=utils,
        launch=launch,
        zero="0.0" if buggy else "0",
        acc_dtype="jnp.float32" if buggy else "jnp.int32",
        acc_signed="" if buggy else ", is_signed=True",
    )


@pytest.mark.parametrize("version", ALL_VERSIONS)
@pytest.mark.parametrize("spelling", sorted(MGPU_SPELLINGS))
def test_mgpu_spelling_finds_float_accumulator(spelling: str, version: str) -> None:
    code = _warp(spelling, buggy=True)
    report = check(code, ["MMA101"], target_jax=version)
    diag = only(report, "MMA101")
    assert diag["location"]["row"] == row_of(code, "(acc, a, b)")
    assert diag["call"]["api"] == "mgpu.mma"
    assert diag["call"]["a"]["dtype"] == "int8"
    assert diag["call"]["acc"]["element_type"] == "f32"
    assert diag["predicted_error"]["exception"] == "NotImplementedError"
    assert diag["predicted_error"]["message"] == "Only s32 accumulator supported for integer operands."


@pytest.mark.parametrize("version", ALL_VERSIONS)
@pytest.mark.parametrize("spelling", sorted(MGPU_SPELLINGS))
def test_mgpu_spelling_clean_with_signed_int32(spelling: str, version: str) -> None:
    check(_warp(spelling, buggy=False), [], target_jax=version)


def test_mma_imported_from_package_is_the_function_not_the_module() -> None:
    # `from jax.experimental.mosaic.gpu import mma` binds the function; calling it is an MMA.
    code = '''
    import jax.numpy as jnp
    from jax.experimental.mosaic.gpu import mma
    from jax.experimental.mosaic.gpu import FragmentedArray as FA
    from jax.experimental.mosaic.gpu import MMALayouts
    from jax.experimental.mosaic.gpu import utils
    from jaxlib.mlir import ir


    def ones_tile():
      bf16 = ir.BF16Type.get()
      lay = MMALayouts(bf16)
      a = FA.splat(utils.c(1.0, bf16), (64, 32), layout=lay.lhs)
      b = FA.splat(utils.c(1.0, bf16), (32, 64), layout=lay.rhs)
      acc = FA.splat(utils.c(0.0, ir.F16Type.get()), (64, 64), layout=lay.acc)
      return mma(acc, a, b)
    '''
    report = check(code, ["MMA102"])
    assert only(report, "MMA102")["call"]["acc"]["element_type"] == "f16"


def test_mma_submodule_alias_is_the_function() -> None:
    # Since Python 3.7 `import a.b.c as m` binds `getattr(a.b, "c")`: the package attribute `mma`,
    # which `from .mma import mma as mma` in the package's `__init__` made the function. On the
    # CPU with jax 0.10.2 and 0.12.0.1, `type(m)` is `function` and `m.MMALayouts` raises
    # AttributeError: 'function' object has no attribute 'MMALayouts'.
    code = '''
    import jax.experimental.mosaic.gpu.mma as mma_mod
    from jaxlib.mlir import ir

    LAYOUTS = mma_mod.MMALayouts(ir.IntegerType.get_signless(16))
    STMATRIX_LAYOUT = LAYOUTS.lhs
    '''
    report = check(code, ["MMA503"], known=False)
    diag = only(report, "MMA503")
    assert diag["predicted_error"]["message"] == "'function' object has no attribute 'MMALayouts'"
    assert "`mma_mod.MMALayouts`" in diag["message"]
    assert "from jax.experimental.mosaic.gpu.mma import MMALayouts" in diag["help"]
    assert report.calls == 0


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_mma_submodule_alias_called_as_module(version: str) -> None:
    # The same kernel as the spellings above with `mma_mod.mma(...)`: the AttributeError comes
    # first (MMA503, on both lines that read the function's attributes); the float32
    # accumulator is what jax raises once the spelling is fixed.
    code = WARP_KERNEL.format(
        header="import jax.experimental.mosaic.gpu as mgpu\n"
               "import jax.experimental.mosaic.gpu.mma as mma_mod\n"
               "import jax.experimental.mosaic.gpu.utils as utils\n",
        mma="mma_mod.mma", FA="mgpu.FragmentedArray", MMALayouts="mma_mod.MMALayouts",
        utils="utils", launch="mgpu.as_gpu_kernel", zero="0.0", acc_dtype="jnp.float32",
        acc_signed="",
    )
    report = check(code, ["MMA101", "MMA503", "MMA503"], target_jax=version)
    rows = sorted(d["location"]["row"] for d in all_of(report, "MMA503"))
    assert rows == [row_of(code, "layouts = "), row_of(code, "(acc, a, b)")]
    mma101 = only(report, "MMA101")
    assert mma101["masked_by"] == "MMA503"
    assert mma101["predicted_error"]["message"] == "Only s32 accumulator supported for integer operands."
    assert any("raises AttributeError here first (MMA503)" in r["message"] for r in mma101["related"])


# ---------------------------------------------------------------- MLIR helper spellings

IR_SPELLINGS = {
    "jaxlib": "from jaxlib.mlir import ir\nfrom jaxlib.mlir.dialects import arith\n",
    "jax_src": "from jax._src.lib.mlir import ir\nfrom jax._src.lib.mlir.dialects import arith\n",
    "jaxlib_dotted": "import jaxlib.mlir.ir as ir\nimport jaxlib.mlir.dialects.arith as arith\n",
    "jax_src_module": "from jax._src.lib import mlir\nir = mlir.ir\nfrom jax._src.lib.mlir.dialects import arith\n",
}


@pytest.mark.parametrize("spelling", sorted(IR_SPELLINGS))
@pytest.mark.parametrize(("acc_type", "expect"), [("ir.F32Type.get()", ["MMA101"]), ("i32", [])])
def test_ir_and_arith_spellings(spelling: str, acc_type: str, expect: list[str]) -> None:
    code = f'''
{IR_SPELLINGS[spelling]}import jax
import numpy as np
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils

i8 = ir.IntegerType.get_signless(8)
i32 = ir.IntegerType.get_signless(32)


def kernel(ctx, x_ref, w_ref, out_ref, scratch):
  layouts = mgpu.MMALayouts(i8)
  x = mgpu.FragmentedArray.load_untiled(x_ref, layout=layouts.lhs, is_signed=True, optimized=False)
  w = mgpu.FragmentedArray.load_untiled(utils.memref_transpose(w_ref, (1, 0)), layout=layouts.rhs, is_signed=True, optimized=False)
  zero = arith.constant({acc_type}, {"0.0" if "F32" in acc_type else "0"})
  acc = mgpu.FragmentedArray.splat(zero, (64, 64), layout=layouts.acc{"" if "F32" in acc_type else ", is_signed=True"})
  mgpu.mma(acc, x, w).store_untiled(out_ref, optimized=False)


x = np.zeros((64, 32), np.int8)
w = np.zeros((64, 32), np.int8)  # (n, k): loaded through its transposed view
out = jax.ShapeDtypeStruct((64, 64), np.int32)
y = mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (x, w), out, ())(x, w)
'''
    check(code, expect)


# ---------------------------------------------------------------- jnp / np spellings

DTYPE_SPELLINGS = {
    "jax_import_numpy": ("from jax import numpy as jnp\n", "jnp.int8", "jnp.float32"),
    "import_jax_numpy": ("import jax.numpy as jnp\n", "jnp.int8", "jnp.float32"),
    "onp": ("import numpy as onp\n", "onp.int8", "onp.float32"),
    "numpy_plain": ("import numpy\n", "numpy.int8", "numpy.float32"),
    "jax_numpy_dotted": ("import jax\n", "jax.numpy.int8", "jax.numpy.float32"),
    "jnp_as_np": ("import jax.numpy as np\n", "np.int8", "np.float32"),
    "from_jnp_names": ("from jax.numpy import int8, float32\n", "int8", "float32"),
}


@pytest.mark.parametrize("spelling", sorted(DTYPE_SPELLINGS))
def test_numpy_namespace_spellings(spelling: str) -> None:
    header, i8, f32 = DTYPE_SPELLINGS[spelling]
    code = f'''
{header}import jax
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils


def kernel(ctx, a_ref, b_ref, out_ref, smem):
  lay = mgpu.MMALayouts(utils.dtype_to_ir_type({i8}))
  a = mgpu.FragmentedArray.load_untiled(a_ref, layout=lay.lhs, is_signed=True, optimized=False)
  b = mgpu.FragmentedArray.load_untiled(utils.memref_transpose(b_ref, (1, 0)), layout=lay.rhs, is_signed=True, optimized=False)
  acc = mgpu.FragmentedArray.splat(
      utils.c(0.0, utils.dtype_to_ir_type({f32})), (128, 128), layout=lay.acc)
  mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)


call = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct((128, 128), {i8}), jax.ShapeDtypeStruct((128, 128), {i8})),
    jax.ShapeDtypeStruct((128, 128), {f32}), ())
'''
    report = check(code, ["MMA101"])
    assert only(report, "MMA101")["call"]["acc"]["dtype"] == "float32"


def test_ml_dtypes_float8_operands() -> None:
    code = '''
    import ml_dtypes
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu

    F8 = ml_dtypes.float8_e4m3fn


    def body(x_ref, y_ref, o_ref):
      acc = plgpu.layout_cast(jnp.zeros((64, 64), jnp.bfloat16), plgpu.Layout.MMA_ACC(F8))
      x = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(F8))
      y = plgpu.load(y_ref.T, layout=plgpu.Layout.MMA_RHS(F8))
      o_ref[...] = plgpu.mma(acc, x, y)
    '''
    # body is never launched: its refs are unknown, but the acc and layouts are literal.
    report = lint(code)
    assert report.calls == 1
    # Operand dtypes come from unbound refs: no operand facts. A bfloat16 accumulator fails
    # whatever they are, so it is reported, without a predicted message.
    assert [d.code for d in report.diagnostics] == ["MMA102"]
    assert report.diagnostics[0].predicted_error is None
    assert report.diagnostics[0].unpredicted


# ---------------------------------------------------------------- Pallas spellings

PALLAS_SPELLINGS = {
    "from_pallas_import": (
        "from jax.experimental.pallas import mosaic_gpu as plgpu\n",
        "plgpu.mma", "plgpu.layout_cast", "plgpu.load", "plgpu.Layout", "plgpu.kernel",
    ),
    "import_as": (
        "import jax.experimental.pallas.mosaic_gpu as plgpu\n",
        "plgpu.mma", "plgpu.layout_cast", "plgpu.load", "plgpu.Layout", "plgpu.kernel",
    ),
    "names": (
        "from jax.experimental.pallas.mosaic_gpu import Layout, kernel, layout_cast, load, mma\n",
        "mma", "layout_cast", "load", "Layout", "kernel",
    ),
    "other_alias": (
        "from jax.experimental.pallas import mosaic_gpu as pl_mgpu\n",
        "pl_mgpu.mma", "pl_mgpu.layout_cast", "pl_mgpu.load", "pl_mgpu.Layout", "pl_mgpu.kernel",
    ),
    "fully_qualified": (
        "import jax.experimental.pallas.mosaic_gpu\n",
        "jax.experimental.pallas.mosaic_gpu.mma",
        "jax.experimental.pallas.mosaic_gpu.layout_cast",
        "jax.experimental.pallas.mosaic_gpu.load",
        "jax.experimental.pallas.mosaic_gpu.Layout",
        "jax.experimental.pallas.mosaic_gpu.kernel",
    ),
}

PALLAS_KERNEL = '''
import functools
import jax
from jax import numpy as jnp
{header}
M, N, K = 128, 64, 64


@functools.partial({kernel}, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32))
def matmul(a_ref, b_ref, o_ref):
  acc = {layout_cast}(jnp.zeros((M, N), {acc}), {Layout}.MMA_ACC(jnp.bfloat16))
  a = {load}(a_ref, layout={Layout}.MMA_LHS(jnp.bfloat16))
  b = {load}(b_ref.T, layout={Layout}.MMA_RHS(jnp.bfloat16))
  o_ref[...] = {mma}(acc, a, b).astype(o_ref.dtype)


out = matmul(jnp.ones((M, K), jnp.bfloat16), jnp.ones((N, K), jnp.bfloat16))
'''


def _pallas(spelling: str, acc: str) -> str:
    header, mma, layout_cast, load, layout, kernel = PALLAS_SPELLINGS[spelling]
    return PALLAS_KERNEL.format(
        header=header, mma=mma, layout_cast=layout_cast, load=load, Layout=layout, kernel=kernel,
        acc=acc,
    )


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
@pytest.mark.parametrize("spelling", sorted(PALLAS_SPELLINGS))
def test_pallas_spelling_finds_bf16_accumulator(spelling: str, version: str) -> None:
    code = _pallas(spelling, "jnp.bfloat16")
    report = check(code, ["MMA102"], target_jax=version)
    diag = only(report, "MMA102")
    assert diag["call"]["api"] == "plgpu.mma"
    assert diag["predicted_error"]["message"] == (
        "Only float64, float32 and float16 accumulators supported for floating operands. Got bfloat16"
    )


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
@pytest.mark.parametrize("spelling", sorted(PALLAS_SPELLINGS))
def test_pallas_spelling_clean(spelling: str, version: str) -> None:
    check(_pallas(spelling, "jnp.float32"), [], target_jax=version)
