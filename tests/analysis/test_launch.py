"""Ref dtypes bound at the launch: as_gpu_kernel, plgpu.kernel, pallas_call, partials and closures."""

from __future__ import annotations

import pytest
from _analysis_lint import PALLAS_VERSIONS, check, lint, only, related_rows, row_of

# ---------------------------------------------------------------- as_gpu_kernel

BODY = '''
import functools
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils

M = N = K = 128


def kernel(ctx, a_ref, b_ref, out_ref, smem):
  dt = jnp.dtype(a_ref.dtype) if False else None  # never taken: facts come from the refs
  lay = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.int8))
  a = mgpu.FragmentedArray.load_untiled(a_ref, layout=lay.lhs, is_signed=True, optimized=False)
  b = mgpu.FragmentedArray.load_untiled(
      utils.memref_transpose(b_ref, (1, 0)), layout=lay.rhs, is_signed=False, optimized=False)
  acc = mgpu.FragmentedArray.splat(
      utils.c(0, utils.dtype_to_ir_type(jnp.int32)), (M, N), layout=lay.acc, is_signed=True)
  mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

'''

LAUNCHES = {
    "positional_structs": '''
f = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct((M, K), jnp.int8), jax.ShapeDtypeStruct((N, K), {B})),
    jax.ShapeDtypeStruct((M, N), jnp.int32), ())
''',
    "keywords": '''
f = mgpu.as_gpu_kernel(
    kernel,
    grid=(1, 1, 1),
    block=(128, 1, 1),
    in_shape=[jax.ShapeDtypeStruct((M, K), jnp.int8), jax.ShapeDtypeStruct((N, K), {B})],
    out_shape=jax.ShapeDtypeStruct((M, N), jnp.int32),
    smem_scratch_shape=(),
)
''',
    "arrays": '''
a = np.ones((M, K), dtype=np.int8)
b = np.ones((N, K), dtype={B})
out = mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (a, b), jax.ShapeDtypeStruct((M, N), jnp.int32), ())(a, b)
''',
    "astype_arrays": '''
rng = np.random.default_rng(0)
a = rng.integers(-128, 128, (M, K)).astype(np.int8)
b = rng.integers(0, 100, (N, K)).astype({B})
expected = a.astype(np.int32) @ b.astype(np.int32).T
out = mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (a, b), expected, ())(a, b)
''',
    "jax_random": '''
key = jax.random.key(0)
a = jax.random.randint(key, (M, K), -128, 127, dtype=jnp.int8)
b = jax.random.randint(key, (N, K), 0, 127, dtype={B})
out = mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (a, b), jax.ShapeDtypeStruct((M, N), jnp.int32), ())(a, b)
''',
    "inside_function": '''
def run(dtype_b):
  in_shapes = (jax.ShapeDtypeStruct((M, K), jnp.int8), jax.ShapeDtypeStruct((N, K), dtype_b))
  return mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), in_shapes,
                            jax.ShapeDtypeStruct((M, N), jnp.int32), ())


f = run({B})
''',
    # a copy in another memory order keeps the data's dtype (heldout30 case25: an N-major B)
    "contiguous": '''
a = np.ascontiguousarray(np.zeros((K, M), np.int8).T)
b = np.asfortranarray(np.zeros((N, K), {B}))
out = mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (a, b), jax.ShapeDtypeStruct((M, N), jnp.int32), ())(a, b)
''',
    "like_struct": '''
a = jnp.zeros((M, K), jnp.int8)
b = jnp.zeros((N, K), {B})
f = mgpu.as_gpu_kernel(
    kernel, (1, 1, 1), (128, 1, 1),
    (jax.ShapeDtypeStruct(a.shape, a.dtype), jax.ShapeDtypeStruct(b.shape, b.dtype)),
    jax.ShapeDtypeStruct((M, N), jnp.int32), ())
''',
}


@pytest.mark.parametrize("launch", sorted(LAUNCHES))
def test_as_gpu_kernel_binds_input_dtypes(launch: str) -> None:
    # b is loaded with is_signed=False: right for uint8 data, wrong for int8 data.
    numpy = launch in ("arrays", "contiguous")
    good = BODY + LAUNCHES[launch].format(B="np.uint8" if numpy else "jnp.uint8")
    bad = BODY + LAUNCHES[launch].format(B="np.int8" if numpy else "jnp.int8")
    check(good, [])
    report = check(bad, ["MMA203"])
    diag = only(report, "MMA203")
    assert diag["call"]["b"]["data_dtype"] == "int8"


def test_partial_kernel_binds_keyword_parameters() -> None:
    code = '''
    import functools
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils


    def kernel(ctx, a_ref, b_ref, out_ref, smem, *, dtype, acc_dtype, m_warps):
      lay = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=m_warps)
      a = mgpu.FragmentedArray.load_untiled(
          a_ref, layout=lay.lhs, is_signed=utils.is_signed(dtype), optimized=False)
      b = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b_ref, (1, 0)), layout=lay.rhs, is_signed=utils.is_signed(dtype),
          optimized=False)
      acc = mgpu.FragmentedArray.splat(
          utils.c(0, utils.dtype_to_ir_type(acc_dtype)), (64, 64), layout=lay.acc,
          is_signed=utils.is_signed(acc_dtype))
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)


    def build(dtype, acc_dtype):
      body = functools.partial(kernel, dtype=dtype, acc_dtype=acc_dtype, m_warps=2)
      return mgpu.as_gpu_kernel(
          body, (1, 1, 1), (128, 1, 1),
          (jax.ShapeDtypeStruct((64, 32), dtype), jax.ShapeDtypeStruct((64, 32), dtype)),
          jax.ShapeDtypeStruct((64, 64), acc_dtype), ())


    int8_matmul = build(jnp.int8, jnp.int32)
    uint8_matmul = build(jnp.uint8, jnp.uint32)
    '''
    report = check(code, ["MMA201"])
    diag = only(report, "MMA201")
    assert "uint8" in diag["message"]


def test_closure_captures_parameters_of_the_launcher() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils
    from jax._src.lib.mlir.dialects import arith


    def matmul(a, b, *, accumulate_in=jnp.float32):
      m, k = a.shape
      n = b.shape[0]  # b is (n, k)

      def kernel(ctx, a_ref, b_ref, out_ref, scratch):
        lay = mgpu.MMALayouts(utils.dtype_to_ir_type(a.dtype))
        a_fa = mgpu.FragmentedArray.load_untiled(a_ref, layout=lay.lhs, is_signed=True, optimized=False)
        b_fa = mgpu.FragmentedArray.load_untiled(utils.memref_transpose(b_ref, (1, 0)), layout=lay.rhs, is_signed=True, optimized=False)
        zero = arith.constant(utils.dtype_to_ir_type(accumulate_in), 0)
        acc = mgpu.FragmentedArray.splat(zero, (m, n), layout=lay.acc, is_signed=True)
        mgpu.mma(acc, a_fa, b_fa).store_untiled(out_ref, optimized=False)

      out = jax.ShapeDtypeStruct((m, n), accumulate_in)
      return mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (a, b), out, ())(a, b)


    x = jnp.zeros((128, 64), jnp.int8)
    w = jnp.zeros((128, 64), jnp.int8)
    y = matmul(x, w, accumulate_in=jnp.int32)
    z = matmul(x, w)
    '''
    report = check(code, ["MMA101", "MMA202"])
    # The default accumulate_in=float32 call: an f32 accumulator, and is_signed=True on a float.
    assert only(report, "MMA101")["call"]["acc"]["element_type"] == "f32"


def test_scratch_and_outputs_are_bound_in_order() -> None:
    # Two outputs and an SMEM scratch tree: the acc is loaded from the second input.
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils

    M = N = 64
    K = 32


    def kernel(ctx, a_ref, c_ref, b_ref, out_ref, aux_ref, scratch):
      smem_tile, (barrier,) = scratch
      lay = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.float16))
      a = mgpu.FragmentedArray.load_untiled(a_ref, layout=lay.lhs, optimized=False)
      b = mgpu.FragmentedArray.load_untiled(utils.memref_transpose(b_ref, (1, 0)), layout=lay.rhs, optimized=False)
      c = mgpu.FragmentedArray.load_untiled(c_ref, layout=lay.acc, optimized=False)
      out = mgpu.mma(c, a, b)
      out.store_untiled(out_ref, optimized=False)


    f = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((M, K), jnp.float16), jax.ShapeDtypeStruct((M, N), {c}),
         jax.ShapeDtypeStruct((N, K), jnp.float16)),
        (jax.ShapeDtypeStruct((M, N), jnp.float32), jax.ShapeDtypeStruct((M,), jnp.float32)),
        (jax.ShapeDtypeStruct((M, K), jnp.float16), (mgpu.TMABarrier(1),)),
    )
    '''
    check(code.format(c="jnp.float32"), [])
    report = check(code.format(c="jnp.float16"), ["MMA102"])
    diag = only(report, "MMA102")
    assert diag["call"]["acc"]["dtype"] == "float16"
    assert diag["call"]["acc"]["source"] == "loaded"


def test_inout_shape_binds_after_inputs() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils


    def kernel(ctx, a_ref, b_ref, acc_ref, out_ref, smem):
      lay = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.int8))
      a = mgpu.FragmentedArray.load_untiled(a_ref, layout=lay.lhs, is_signed=True, optimized=False)
      b = mgpu.FragmentedArray.load_untiled(utils.memref_transpose(b_ref, (1, 0)), layout=lay.rhs, is_signed=True, optimized=False)
      acc = mgpu.FragmentedArray.load_untiled(acc_ref, layout=lay.acc, is_signed=True, optimized=False)
      mgpu.mma(acc, a, b).store_untiled(acc_ref, optimized=False)


    f = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((64, 32), jnp.int8), jax.ShapeDtypeStruct((64, 32), jnp.int8)),
        jax.ShapeDtypeStruct((1,), jnp.int32), (),
        inout_shape=jax.ShapeDtypeStruct((64, 64), {acc}),
    )
    '''
    check(code.format(acc="jnp.int32"), [])
    check(code.format(acc="jnp.float32"), ["MMA101", "MMA202"])


def test_unlaunched_kernel_body_is_silent() -> None:
    code = BODY.replace("is_signed=False", "is_signed=True")
    report = lint(code)
    assert report.diagnostics == ()
    assert report.calls == 1
    assert report.known_calls == 0


# ---------------------------------------------------------------- Pallas launches

PALLAS_BODY = '''
import functools
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 64, 64


def body(x_ref, w_ref, o_ref):
  dt = x_ref.dtype
  acc = plgpu.layout_cast(jnp.zeros((M, N), o_ref.dtype), plgpu.Layout.MMA_ACC(dt))
  x = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(dt))
  w = plgpu.load(w_ref.T, layout=plgpu.Layout.MMA_RHS(dt))
  o_ref[...] = plgpu.mma(acc, x, w)

'''

PALLAS_LAUNCHES = {
    "kernel_call": '''
out = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((M, N), {OUT}))(
    jnp.zeros((M, K), jnp.int8), jnp.zeros((N, K), jnp.int8))
''',
    "kernel_positional_out_type": '''
matmul = plgpu.kernel(body, jax.ShapeDtypeStruct((M, N), {OUT}))
out = matmul(jnp.zeros((M, K), jnp.int8), jnp.zeros((N, K), jnp.int8))
''',
    "kernel_out_tuple": '''
matmul = plgpu.kernel(body, out_type=(jax.ShapeDtypeStruct((M, N), {OUT}),))
(out,) = matmul(jnp.zeros((M, K), jnp.int8), jnp.zeros((N, K), jnp.int8))
''',
    "pallas_call": '''
out = pl.pallas_call(
    body,
    out_shape=jax.ShapeDtypeStruct((M, N), {OUT}),
    compiler_params=plgpu.CompilerParams(),
)(jnp.zeros((M, K), jnp.int8), jnp.zeros((N, K), jnp.int8))
''',
    "jit_wrapper": '''
@jax.jit
def matmul(x, w):
  return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((M, N), {OUT}))(x, w)


out = matmul(jnp.zeros((M, K), jnp.int8), jnp.zeros((N, K), jnp.int8))
''',
    "partial_kernel_factory": '''
lane_kernel = functools.partial(
    plgpu.kernel,
    compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane))
out = lane_kernel(body, out_type=jax.ShapeDtypeStruct((M, N), {OUT}))(
    jnp.zeros((M, K), jnp.int8), jnp.zeros((N, K), jnp.int8))
''',
}


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
@pytest.mark.parametrize("launch", sorted(PALLAS_LAUNCHES))
def test_pallas_launch_binds_refs(launch: str, version: str) -> None:
    check(PALLAS_BODY + PALLAS_LAUNCHES[launch].format(OUT="jnp.int32"), [], target_jax=version)
    report = check(PALLAS_BODY + PALLAS_LAUNCHES[launch].format(OUT="jnp.float32"), ["MMA101"],
                   target_jax=version)
    diag = only(report, "MMA101")
    assert diag["predicted_error"]["message"] == (
        "Only int32 accumulator supported for integer and boolean operands. Got float32"
    )


DECORATED = '''
import functools
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 64, 64


def matmul(x, w):
  {decorator}
  def kernel(x_ref, w_ref, o_ref):
    acc = plgpu.layout_cast(jnp.zeros((M, N), jnp.float32), plgpu.Layout.MMA_ACC(x.dtype))
    a = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(x.dtype))
    b = plgpu.load(w_ref.T, layout=plgpu.Layout.MMA_RHS(x.dtype))
    o_ref[...] = plgpu.mma(acc, a, b)

  return kernel(x, w)


y = matmul(jnp.zeros((M, K), {dtype}), jnp.zeros((N, K), {dtype}))
'''

DECORATORS = {
    "partial": "@functools.partial(plgpu.kernel, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32))",
    "called": "@plgpu.kernel(out_type=jax.ShapeDtypeStruct((M, N), jnp.float32))",
    "called_with_grid": (
        "@plgpu.kernel(out_type=jax.ShapeDtypeStruct((M, N), jnp.float32), grid=(2,), "
        "grid_names=('x',))"
    ),
    "pallas_call_partial": (
        "@functools.partial(pl.pallas_call, out_shape=jax.ShapeDtypeStruct((M, N), jnp.float32))"
    ),
}


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
@pytest.mark.parametrize("decorator", sorted(DECORATORS))
def test_decorator_forms(decorator: str, version: str) -> None:
    check(DECORATED.format(decorator=DECORATORS[decorator], dtype="jnp.bfloat16"), [],
          target_jax=version)
    report = check(DECORATED.format(decorator=DECORATORS[decorator], dtype="jnp.int8"), ["MMA101"],
                   target_jax=version)
    assert only(report, "MMA101")["call"]["acc"]["dtype"] == "float32"


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_pallas_scratch_accumulator_ref(version: str) -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu

    M, N, K = 64, 64, 64


    def body(x_ref, w_ref, o_ref, acc_ref):
      acc_ref[...] = jnp.zeros((M, N), acc_ref.dtype)
      acc = plgpu.load(acc_ref, layout=plgpu.Layout.MMA_ACC(jnp.int8))
      x = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(jnp.int8))
      w = plgpu.load(w_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.int8))
      o_ref[...] = plgpu.mma(acc, x, w)


    f = plgpu.kernel(
        body,
        out_type=jax.ShapeDtypeStruct((M, N), jnp.int32),
        scratch_types=[plgpu.SMEM((M, N), {acc})],
    )
    out = f(jnp.zeros((M, K), jnp.int8), jnp.zeros((N, K), jnp.int8))
    '''
    check(code.format(acc="jnp.int32"), [], target_jax=version)
    report = check(code.format(acc="jnp.float32"), ["MMA101"], target_jax=version)
    diag = only(report, "MMA101")
    rows = related_rows(diag)
    assert any("float32" in m for m in rows.values())
    assert row_of(code, "plgpu.mma(") == diag["location"]["row"]


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_pallas_kernel_run_scoped_accumulator(version: str) -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu

    T = 64


    def body(x_ref, w_ref, o_ref):
      def scope(acc_ref):
        acc = plgpu.load(acc_ref, layout=plgpu.Layout.MMA_ACC(jnp.float16))
        x = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(jnp.float16))
        w = plgpu.load(w_ref, layout=plgpu.Layout.MMA_RHS(jnp.float16))
        o_ref[...] = plgpu.mma(acc, x, w)

      pl.run_scoped(scope, plgpu.SMEM((T, T), {acc}))


    f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((T, T), jnp.float32))
    out = f(jnp.zeros((T, T), jnp.float16), jnp.zeros((T, T), jnp.float16))
    '''
    check(code.format(acc="jnp.float32"), [], target_jax=version)
    check(code.format(acc="jnp.bfloat16"), ["MMA102"], target_jax=version)


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_launch_through_helper_returning_the_kernel(version: str) -> None:
    # A factory function returns the configured kernel; the caller launches it.
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def make_matmul(m, n, out_dtype):
      def body(a_ref, b_ref, o_ref):
        dt = a_ref.dtype
        acc = plgpu.layout_cast(jnp.zeros((m, n), out_dtype), plgpu.Layout.MMA_ACC(dt))
        a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dt))
        b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dt))
        o_ref[...] = plgpu.mma(acc, a, b)

      return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((m, n), out_dtype))


    mm = make_matmul(128, 64, jnp.bfloat16)
    y = mm(jnp.zeros((128, 64), jnp.bfloat16), jnp.zeros((64, 64), jnp.bfloat16))
    '''
    report = check(code, ["MMA102"], target_jax=version)
    assert "bfloat16" in only(report, "MMA102")["predicted_error"]["message"]


# ---------------------------------------------------------------- arrays reshaped before the launch

ARRAY_OPS_KERNEL = '''
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu


def body(a_ref, b_ref, o_ref):
  acc = plgpu.layout_cast(jnp.zeros((128, 64), jnp.float32), plgpu.Layout.MMA_ACC(jnp.bfloat16))
  a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(jnp.bfloat16))
  b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.bfloat16))
  o_ref[...] = plgpu.mma(acc, a, b)


f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 64), jnp.float32),
                 compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane))
w = jnp.zeros((64, 64), {dtype})
x = {expr}
y = f(x, w)
'''

# Each expression keeps the element type of the int8 array it starts from.
_KEEPS_DTYPE = {
    "plain": "jnp.zeros((128, 64), {dtype})",
    "T": "jnp.zeros((64, 128), {dtype}).T",
    "reshape": "jnp.zeros((2, 64, 64), {dtype}).reshape(128, 64)",
    "asarray": "jnp.asarray(np.zeros((128, 64)), dtype={dtype})",
    "astype": "jnp.zeros((128, 64)).astype({dtype})",
    "slice": "jnp.zeros((256, 64), {dtype})[:128]",
    "x.at[...].set": "jnp.zeros((128, 64), {dtype}).at[:, :32].set(1)",
    "jnp.concatenate": "jnp.concatenate([jnp.zeros((64, 64), {dtype}), jnp.zeros((64, 64), {dtype})])",
    "jnp.pad": "jnp.pad(jnp.zeros((100, 64), {dtype}), ((0, 28), (0, 0)))",
    "jnp.transpose": "jnp.transpose(jnp.zeros((64, 128), {dtype}))",
    "jax.lax.collapse": "jax.lax.collapse(jnp.zeros((2, 64, 64), {dtype}), 0, -1)",
    "jnp.swapaxes": "jnp.swapaxes(jnp.zeros((64, 128), {dtype}), 0, 1)",
}


def _array_op_params() -> list[object]:
    return [pytest.param(name, expr, id=name) for name, expr in _KEEPS_DTYPE.items()]


@pytest.mark.parametrize(("name", "expr"), _array_op_params())
def test_dtype_preserving_array_ops_before_the_launch(name: str, expr: str) -> None:
    # int8 data loaded into bf16 layouts with an f32 accumulator: MMA101, once the analysis
    # knows the argument is int8.
    code = ARRAY_OPS_KERNEL.format(expr=expr.format(dtype="jnp.int8"), dtype="jnp.int8")
    report = lint(code, target_jax="0.11")
    assert "MMA101" in [d.code for d in report.diagnostics]


# Was a strict xfail: `plgpu.Barrier` in the scratch list left the list unbound; barriers are
# refs now (models/pallas/tcgen05.py), and the torch launch binds the SMEM scratch.
def test_as_torch_kernel_binds_scratch_refs() -> None:
    # jax's mgpu_torch_test: torch inputs (unknown dtype), but the operands come from SMEM scratch.
    code = '''
    import jax
    import jax.numpy as jnp
    import torch
    from jax.experimental.pallas import mosaic_gpu as plgpu

    m, n, k = 128, 128, 64
    dtype = jnp.int8


    @plgpu.kernel(
        out_type=jax.ShapeDtypeStruct((m, n), jnp.float32),
        compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane),
        scratch_types=[plgpu.SMEM((m, k), dtype), plgpu.SMEM((k, n), dtype),
                       plgpu.Barrier(num_arrivals=2)],
    )
    def kernel(x_ref, y_ref, o_ref, x_smem, y_smem, barrier_ref):
      acc = plgpu.layout_cast(jnp.zeros((m, n), jnp.float32), plgpu.Layout.MMA_ACC(dtype))
      plgpu.copy_gmem_to_smem(x_ref, x_smem, barrier_ref)
      plgpu.copy_gmem_to_smem(y_ref, y_smem, barrier_ref)
      plgpu.barrier_wait(barrier_ref)
      x = plgpu.load(x_smem, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
      y = plgpu.load(y_smem, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False)
      o_ref[...] = plgpu.mma(acc, x, y)


    x = torch.zeros((m, k), dtype=torch.int8, device="cuda")
    y = torch.zeros((k, n), dtype=torch.int8, device="cuda")
    out = plgpu.as_torch_kernel(kernel)(x, y)
    '''
    report = check(code, ["MMA101"], target_jax="0.11", known=False)
    assert only(report, "MMA101")["call"]["a"]["dtype"] == "int8"


@pytest.mark.parametrize("version", PALLAS_VERSIONS)
def test_scratch_types_dict_binds_keyword_refs(version: str) -> None:
    # jax's mgpu_examples and tokamax's sm80 attention allocate scratch with a dict.
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def body(a_ref, b_ref, o_ref, *, a_smem, acc_smem):
      acc = plgpu.load(acc_smem, layout=plgpu.Layout.MMA_ACC(jnp.float16))
      a = plgpu.load(a_smem, layout=plgpu.Layout.MMA_LHS(jnp.float16))
      b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.float16))
      o_ref[...] = plgpu.mma(acc, a, b)


    f = plgpu.kernel(
        body, out_type=jax.ShapeDtypeStruct((64, 64), jnp.float32),
        scratch_types=dict(a_smem=plgpu.SMEM((64, 64), jnp.float16),
                           acc_smem=plgpu.SMEM((64, 64), jnp.float16)),
        compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane))
    y = f(jnp.zeros((64, 64), jnp.float16), jnp.zeros((64, 64), jnp.float16))
    '''
    report = check(code, ["MMA102"], target_jax=version)
    assert only(report, "MMA102")["call"]["acc"]["dtype"] == "float16"
