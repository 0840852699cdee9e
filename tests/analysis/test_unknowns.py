"""Unknown stays unknown: nothing is reported from a value the analysis could not decide."""

from __future__ import annotations

import pytest
from _analysis_lint import check, lint

V = "0.11"


def _silent(code: str, target_jax: str = V, calls: int = 1) -> None:
    report = lint(code, target_jax=target_jax)
    assert report.diagnostics == (), [d.message for d in report.diagnostics]
    assert report.calls == calls
    assert report.known_calls == 0


def test_library_function_never_called_in_the_module() -> None:
    _silent('''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def matmul(x, w, acc_dtype):
      m, n = x.shape[0], w.shape[0]

      def body(x_ref, w_ref, o_ref):
        acc = plgpu.layout_cast(jnp.zeros((m, n), acc_dtype), plgpu.Layout.MMA_ACC(x.dtype))
        a = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(x.dtype))
        b = plgpu.load(w_ref.T, layout=plgpu.Layout.MMA_RHS(x.dtype))
        o_ref[...] = plgpu.mma(acc, a, b)

      return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((m, n), acc_dtype))(x, w)
    ''')


def test_known_float32_acc_with_unknown_operands() -> None:
    # The accumulator is float32, but nothing says what x is: no MMA101.
    _silent('''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def matmul(x, w):
      def body(x_ref, w_ref, o_ref):
        acc = plgpu.layout_cast(jnp.zeros((128, 64), jnp.float32), plgpu.Layout.MMA_ACC(x.dtype))
        a = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(x.dtype))
        b = plgpu.load(w_ref.T, layout=plgpu.Layout.MMA_RHS(x.dtype))
        o_ref[...] = plgpu.mma(acc, a, b)

      return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 64), jnp.float32))(x, w)
    ''')


def test_known_int8_operands_with_unknown_acc() -> None:
    _silent('''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def matmul(acc_dtype):
      def body(x_ref, w_ref, o_ref):
        acc = plgpu.layout_cast(jnp.zeros((128, 64), acc_dtype), plgpu.Layout.MMA_ACC(jnp.int8))
        a = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(jnp.int8))
        b = plgpu.load(w_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.int8))
        o_ref[...] = plgpu.mma(acc, a, b)

      f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 64), jnp.int32))
      return f(jnp.zeros((128, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))
    ''')


def test_values_imported_from_other_modules() -> None:
    _silent('''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu
    from mylib.config import ACC_DTYPE, OPERAND_DTYPE
    from . import tiles


    def body(x_ref, w_ref, o_ref):
      acc = plgpu.layout_cast(jnp.zeros((128, 64), ACC_DTYPE), plgpu.Layout.MMA_ACC(OPERAND_DTYPE))
      a = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(OPERAND_DTYPE))
      b = plgpu.load(w_ref.T, layout=plgpu.Layout.MMA_RHS(OPERAND_DTYPE))
      o_ref[...] = plgpu.mma(acc, a, b)


    f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 64), ACC_DTYPE))
    y = f(tiles.lhs(OPERAND_DTYPE), tiles.rhs(OPERAND_DTYPE))
    ''')


def test_kwargs_soup() -> None:
    _silent('''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def matmul(x, w, **options):
      acc_dtype = options.pop("acc_dtype", None) or options["default_acc"]

      def body(x_ref, w_ref, o_ref):
        acc = plgpu.layout_cast(jnp.zeros((128, 64), acc_dtype), plgpu.Layout.MMA_ACC(jnp.int8))
        a = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(jnp.int8))
        b = plgpu.load(w_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.int8))
        o_ref[...] = plgpu.mma(acc, a, b)

      return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 64), jnp.int32), **options)(x, w)


    def entry(x, w, settings):
      return matmul(x, w, **settings)
    ''')


def test_data_dependent_branch_joins_to_unknown() -> None:
    # int32 on one path, float32 on the other, decided by a runtime shape: no finding.
    _silent('''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def matmul(x, w):
      if x.shape[1] % 128 == 0:
        acc_dtype = jnp.int32
      else:
        acc_dtype = jnp.float32

      def body(x_ref, w_ref, o_ref):
        acc = plgpu.layout_cast(jnp.zeros((128, 64), acc_dtype), plgpu.Layout.MMA_ACC(jnp.int8))
        a = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(jnp.int8))
        b = plgpu.load(w_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.int8))
        o_ref[...] = plgpu.mma(acc, a, b)

      f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 64), jnp.int32))
      return f(jnp.zeros((128, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))


    def entry(x, w):
      return matmul(x, w)
    ''')


def test_environment_choice() -> None:
    _silent('''
    import os
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu

    DTYPE = jnp.dtype(os.environ.get("MMA_DTYPE", "int8"))


    def body(x_ref, w_ref, o_ref):
      acc = plgpu.layout_cast(jnp.zeros((128, 64), jnp.float32), plgpu.Layout.MMA_ACC(DTYPE))
      a = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(DTYPE))
      b = plgpu.load(w_ref.T, layout=plgpu.Layout.MMA_RHS(DTYPE))
      o_ref[...] = plgpu.mma(acc, a, b)


    f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 64), jnp.float32))
    y = f(jnp.zeros((128, 64), DTYPE), jnp.zeros((64, 64), DTYPE))
    ''')


def test_unknown_is_signed_flag() -> None:
    # is_signed comes from a parameter nobody binds: neither MMA201 nor MMA202 nor MMA203.
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils


    def build(signed_acc, signed_ops):
      def kernel(ctx, a_ref, b_ref, out_ref, smem):
        lay = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.int8))
        a = mgpu.FragmentedArray.load_untiled(a_ref, layout=lay.lhs, is_signed=signed_ops, optimized=False)
        b = mgpu.FragmentedArray.load_untiled(utils.memref_transpose(b_ref, (1, 0)), layout=lay.rhs, is_signed=signed_ops, optimized=False)
        acc = mgpu.FragmentedArray.splat(utils.c(0, utils.dtype_to_ir_type(jnp.int32)), (64, 64),
                                         layout=lay.acc, is_signed=signed_acc)
        mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

      return mgpu.as_gpu_kernel(
          kernel, (1, 1, 1), (128, 1, 1),
          (jax.ShapeDtypeStruct((64, 64), jnp.int8), jax.ShapeDtypeStruct((64, 64), jnp.int8)),
          jax.ShapeDtypeStruct((64, 64), jnp.int32), ())
    '''
    report = lint(code)
    assert report.diagnostics == ()
    assert report.calls == 1


def test_star_args_launch() -> None:
    _silent('''
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils
    from jaxlib.mlir import ir


    def kernel(ctx, *refs):
      a_ref, b_ref, out_ref, _ = refs
      lay = mgpu.MMALayouts(ir.IntegerType.get_signless(8))
      a = mgpu.FragmentedArray.load_untiled(a_ref, layout=lay.lhs, is_signed=True, optimized=False)
      b = mgpu.FragmentedArray.load_untiled(utils.memref_transpose(b_ref, (1, 0)), layout=lay.rhs, is_signed=True, optimized=False)
      acc = mgpu.FragmentedArray.load_untiled(out_ref, layout=lay.acc, is_signed=True, optimized=False)
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)


    def launch(in_shapes, out_shape):
      return mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), in_shapes, out_shape, ())
    ''', target_jax="0.12")


def test_loop_over_unknown_iterable() -> None:
    _silent('''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu
    from mylib import supported_dtypes


    def run(dtype):
      def body(a_ref, b_ref, o_ref):
        acc = plgpu.layout_cast(jnp.zeros((64, 64), jnp.float32), plgpu.Layout.MMA_ACC(dtype))
        a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
        b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
        o_ref[...] = plgpu.mma(acc, a, b)
      f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((64, 64), jnp.float32))
      return f(jnp.zeros((64, 64), dtype), jnp.zeros((64, 64), dtype))


    for dtype in supported_dtypes():
      run(dtype)
    ''')


def test_test_case_state_from_setup() -> None:
    # self.dtype is set in setUp from a flag: unknown to a static reader.
    _silent('''
    from absl import flags
    from absl.testing import absltest
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu

    _DTYPE = flags.DEFINE_string("dtype", "int8", "operand dtype")


    class Test(absltest.TestCase):

      def setUp(self):
        super().setUp()
        self.dtype = jnp.dtype(_DTYPE.value)

      def test_mma(self):
        dtype = self.dtype

        def body(a_ref, b_ref, o_ref):
          acc = plgpu.layout_cast(jnp.zeros((64, 64), jnp.float32), plgpu.Layout.MMA_ACC(dtype))
          a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
          b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
          o_ref[...] = plgpu.mma(acc, a, b)

        f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((64, 64), jnp.float32))
        f(jnp.zeros((64, 64), dtype), jnp.zeros((64, 64), dtype))
    ''')


def test_shadowed_numpy_name() -> None:
    # `np` is a parameter here, not numpy: np.int8 means nothing we know.
    _silent('''
    import jax
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def make(np, acc):
      def body(a_ref, b_ref, o_ref):
        z = plgpu.layout_cast(np.zeros((64, 64), acc), plgpu.Layout.MMA_ACC(np.int8))
        a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(np.int8))
        b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(np.int8))
        o_ref[...] = plgpu.mma(z, a, b)
      f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((64, 64), acc))
      return f(np.zeros((64, 64), np.int8), np.zeros((64, 64), np.int8))
    ''')


def test_unknown_world_alongside_known_world() -> None:
    # One call site reached with known and with unknown facts: only the known world reports.
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def run(dtype):
      def body(a_ref, b_ref, o_ref):
        acc = plgpu.layout_cast(jnp.zeros((64, 64), jnp.float32), plgpu.Layout.MMA_ACC(dtype))
        a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
        b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
        o_ref[...] = plgpu.mma(acc, a, b)
      f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((64, 64), jnp.float32))
      return f(jnp.zeros((64, 64), dtype), jnp.zeros((64, 64), dtype))


    def public_api(dtype):
      return run(dtype)


    run(jnp.int8)
    '''
    report = check(code, ["MMA101"], target_jax=V)
    assert report.calls == 1


def test_shadowing_the_mma_name_locally() -> None:
    # A local function named `mma` is not the MMA API, even inside a module that imports mgpu.
    code = '''
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu


    def reference(a, b):
      def mma(acc, x, y):
        return acc + x @ y
      return mma(jnp.zeros((64, 64), jnp.float32), a.astype(jnp.int8), b.astype(jnp.int8))


    out = reference(jnp.ones((64, 64)), jnp.ones((64, 64)))
    '''
    report = lint(code)
    assert report.diagnostics == ()
    assert report.calls == 0


def test_plgpu_name_rebound_to_something_else() -> None:
    code = '''
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu
    import my_fake_gpu as plgpu


    def body():
      acc = jnp.zeros((64, 64), jnp.float32)
      a = jnp.zeros((64, 64), jnp.int8)
      return plgpu.mma(acc, a, a)


    body()
    '''
    report = lint(code, target_jax=V)
    assert report.diagnostics == ()


# ---------------------------------------------------------------- mutation the analysis does not follow
#
# Each kernel below is correct at run time: the float32 default is overwritten with int32 before
# the launch. An analysis that ignores the mutation reports a false MMA101; it must either follow
# the mutation or forget the value.

MUTATED = '''
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

{prelude}


def run(acc_dtype):
  def body(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(jnp.zeros((64, 64), acc_dtype), plgpu.Layout.MMA_ACC(jnp.int8))
    a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(jnp.int8))
    b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.int8))
    o_ref[...] = plgpu.mma(acc, a, b)

  f = plgpu.kernel(
      body, out_type=jax.ShapeDtypeStruct((64, 64), jnp.int32),
      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane))
  return f(jnp.zeros((64, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))


{launch}
'''

MUTATIONS = {
    "dict_item_store": ('ACC = {"int8": jnp.float32}\nACC["int8"] = jnp.int32', 'run(ACC["int8"])'),
    "dict_update": ("CFG = dict(acc=jnp.float32)\nCFG.update(acc=jnp.int32)", 'run(CFG["acc"])'),
    "list_item_store": ("LST = [jnp.float32]\nLST[0] = jnp.int32", "run(LST[0])"),
    "instance_attribute_store": (
        "class Cfg:\n  acc = jnp.float32\n\n\ncfg = Cfg()\ncfg.acc = jnp.int32", "run(cfg.acc)"),
    "class_attribute_store": (
        "class Cfg:\n  acc = jnp.float32\n\n\nCfg.acc = jnp.int32", "run(Cfg.acc)"),
    "setattr": (
        "class Cfg:\n  acc = jnp.float32\n\n\ncfg = Cfg()\nsetattr(cfg, 'acc', jnp.int32)",
        "run(cfg.acc)"),
    "global_rebound_in_function": (
        "ACC = jnp.float32\n\n\ndef configure():\n  global ACC\n  ACC = jnp.int32\n\n\nconfigure()",
        "run(ACC)"),
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_mutation_is_followed_or_forgotten(mutation: str) -> None:
    prelude, launch = MUTATIONS[mutation]
    report = lint(MUTATED.format(prelude=prelude, launch=launch), target_jax=V)
    assert report.diagnostics == (), [d.message for d in report.diagnostics]
