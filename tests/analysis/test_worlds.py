"""Parameter worlds: parameterized tests and literal loops, pruned by skipTest and early returns."""

from __future__ import annotations

from pathlib import Path

import pytest
from _analysis_lint import MAKE_INT8, check, lint, lint_project, only, related_rows, row_of

# jax's own test_warp_mma, with the accumulator's is_signed copied from the operand.
WARP_MMA_TEST = '''
from absl.testing import parameterized
import jax
from jax._src import test_util as jtu
import jax.numpy as jnp
import numpy as np
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils


class WarpMmaTest(jtu.JaxTestCase):

  def setUp(self):
    super().setUp()
    self.prng = np.random.default_rng(1234)

  @parameterized.product(
      dtype=(jnp.bfloat16, jnp.float16, jnp.float8_e4m3fn, jnp.float8_e5m2,
             jnp.int8, jnp.uint8, jnp.int4, jnp.uint4),
      m_warps=(1, 2, 4),
  )
  def test_warp_mma(self, dtype, m_warps):
    m, n, k = 128, 128, 128
    dtype = jnp.dtype(dtype)
    is_integer = jnp.issubdtype(dtype, jnp.integer)
    acc_dtype = jnp.int32 if is_integer else jnp.float32
    def kernel(ctx, acc, a, b, out, _):
      mma_layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=m_warps)
      ab_is_signed = utils.is_signed(dtype)
      a_fa = mgpu.FragmentedArray.load_untiled(
          a, layout=mma_layouts.lhs, is_signed=ab_is_signed, optimized=False)
      b_transposed = utils.memref_transpose(b, (1, 0))
      b_fa = mgpu.FragmentedArray.load_untiled(
          b_transposed, layout=mma_layouts.rhs, is_signed=ab_is_signed,
          optimized=False)
      acc_fa = mgpu.FragmentedArray.load_untiled(
          acc, layout=mma_layouts.acc, is_signed={acc_signed},
          optimized=False)
      mgpu.mma(acc_fa, a_fa, b_fa).store_untiled(out, optimized=False)

    if is_integer:
      iinfo = jnp.iinfo(dtype)
      a = self.prng.integers(iinfo.min, iinfo.max + 1, (m, k)).astype(dtype)
      b = self.prng.integers(iinfo.min, iinfo.max + 1, (n, k)).astype(dtype)
      acc = self.prng.integers(-100, 100, (m, n)).astype(acc_dtype)
    else:
      a = self.prng.uniform(-1, 1, (m, k)).astype(dtype)
      b = self.prng.uniform(-1, 1, (n, k)).astype(dtype)
      acc = self.prng.uniform(-1, 1, (m, n)).astype(acc_dtype)

    expected = acc + a.astype(acc_dtype) @ b.astype(acc_dtype).T
    result = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1), (acc, a, b), expected, ()
    )(acc, a, b)
    if is_integer:
      np.testing.assert_array_equal(result, expected)
    else:
      np.testing.assert_allclose(result, expected, atol=1e-5)


if __name__ == "__main__":
  absltest.main(testLoader=jtu.JaxTestLoader())
'''


def test_jax_warp_mma_test_is_clean() -> None:
    code = WARP_MMA_TEST.format(acc_signed="utils.is_signed(acc_dtype)")
    report = check(code, [])
    assert report.calls == 1


def test_acc_signedness_from_operand_only_fails_for_unsigned_worlds() -> None:
    code = WARP_MMA_TEST.format(acc_signed="ab_is_signed")
    report = check(code, ["MMA201"])
    diag = only(report, "MMA201")
    worlds = diag["worlds"]
    # uint8 and uint4, each with m_warps 1, 2, 4; the world labels are the source text.
    assert {w["dtype"] for w in worlds} == {"jnp.uint8", "jnp.uint4"}
    assert {w["m_warps"] for w in worlds} == {"1", "2", "4"}
    assert len(worlds) == 6
    assert diag["world"] == worlds[0]
    assert "(when dtype=jnp.uint8, m_warps=1)" in diag["message"]
    assert "(and 5 more worlds)" in diag["message"]
    assert diag["predicted_error"]["message"] == "Only signed accumulator supported for integer operands."
    assert diag["call"]["world"] == diag["world"]
    rows = related_rows(diag)
    # A note points at the world's value in the decorator.
    assert row_of(code, "jnp.int8, jnp.uint8, jnp.int4, jnp.uint4") in rows


def test_float_acc_for_every_dtype_names_only_integer_worlds() -> None:
    code = WARP_MMA_TEST.format(acc_signed="utils.is_signed(acc_dtype)").replace(
        "acc_dtype = jnp.int32 if is_integer else jnp.float32", "acc_dtype = jnp.float32"
    )
    # float32 with is_signed=utils.is_signed(float32) = None is a well-formed float array:
    # only the accumulator type is wrong, and only in the integer worlds.
    report = check(code, ["MMA101"])
    diag = only(report, "MMA101")
    assert {w["dtype"] for w in diag["worlds"]} == {"jnp.int8", "jnp.uint8", "jnp.int4", "jnp.uint4"}
    assert len(diag["worlds"]) == 12


PARAMS_KERNEL = '''
import functools
from absl.testing import absltest, parameterized
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 64, 64


class MmaTest(parameterized.TestCase):

  {decorator}
  def test_mma(self, {params}):
{guard}    @functools.partial(
        plgpu.kernel,
        out_type=jax.ShapeDtypeStruct((M, N), acc_dtype),
        compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane),
    )
    def kernel(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(jnp.zeros((M, N), acc_dtype), plgpu.Layout.MMA_ACC(dtype))
      a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
      b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
      o_ref[...] = plgpu.mma(acc, a, b)

    kernel(jnp.ones((M, K), dtype), jnp.ones((N, K), dtype))
'''

DECORATORS = {
    "product": (
        "@parameterized.product(dtype=(jnp.int8, jnp.float16), acc_dtype=(jnp.int32, jnp.float32))",
        "dtype, acc_dtype",
    ),
    "parameters_tuples": (
        "@parameterized.parameters((jnp.int8, jnp.int32), (jnp.int8, jnp.float32),\n"
        "                            (jnp.float16, jnp.int32), (jnp.float16, jnp.float32))",
        "dtype, acc_dtype",
    ),
    "parameters_dicts": (
        "@parameterized.parameters(\n"
        "      dict(dtype=jnp.int8, acc_dtype=jnp.int32), dict(dtype=jnp.int8, acc_dtype=jnp.float32),\n"
        "      dict(dtype=jnp.float16, acc_dtype=jnp.int32), dict(dtype=jnp.float16, acc_dtype=jnp.float32))",
        "dtype, acc_dtype",
    ),
    "named_parameters": (
        "@parameterized.named_parameters(\n"
        "      ('i8_i32', jnp.int8, jnp.int32), ('i8_f32', jnp.int8, jnp.float32),\n"
        "      ('f16_i32', jnp.float16, jnp.int32), ('f16_f32', jnp.float16, jnp.float32))",
        "dtype, acc_dtype",
    ),
    "named_parameters_dicts": (
        "@parameterized.named_parameters(\n"
        "      dict(testcase_name='i8_i32', dtype=jnp.int8, acc_dtype=jnp.int32),\n"
        "      dict(testcase_name='i8_f32', dtype=jnp.int8, acc_dtype=jnp.float32),\n"
        "      dict(testcase_name='f16_i32', dtype=jnp.float16, acc_dtype=jnp.int32),\n"
        "      dict(testcase_name='f16_f32', dtype=jnp.float16, acc_dtype=jnp.float32))",
        "dtype, acc_dtype",
    ),
    "product_of_dicts": (
        "@parameterized.product(\n"
        "      (dict(dtype=jnp.int8), dict(dtype=jnp.float16)),\n"
        "      acc_dtype=(jnp.int32, jnp.float32))",
        "dtype, acc_dtype",
    ),
}

GUARDS = {
    "none": "",
    "skip_test": (
        "    if jnp.issubdtype(dtype, jnp.integer) != (acc_dtype == jnp.int32):\n"
        "      self.skipTest('Invalid accumulator for this operand type')\n"
    ),
    "early_return": (
        "    is_int = jnp.issubdtype(dtype, jnp.integer)\n"
        "    if is_int and acc_dtype != jnp.int32:\n"
        "      return\n"
        "    if not is_int and acc_dtype == jnp.int32:\n"
        "      return\n"
    ),
    "skip_in_helper": (
        "    self._skip_unless_valid(dtype, acc_dtype)\n"
    ),
    # A table keyed by dtypes, its keys, set operators: each decides the skip (undecided, the
    # world it skips would be reported).
    "skip_by_table": (
        "    acc_for = {jnp.int8: jnp.int32, jnp.float16: jnp.float32}\n"
        "    if acc_for[dtype] != acc_dtype:\n"
        "      self.skipTest('Invalid accumulator for this operand type')\n"
    ),
    "skip_by_table_keys": (
        "    ints = {jnp.int8: 'int8', jnp.int4: 'int4'}\n"
        "    if (dtype in ints.keys()) != (acc_dtype == jnp.int32):\n"
        "      self.skipTest('Invalid accumulator for this operand type')\n"
    ),
    "skip_by_set_operators": (
        "    if (dtype in ({jnp.int8} | {jnp.int4}) - {jnp.int4}) != (acc_dtype == jnp.int32):\n"
        "      self.skipTest('Invalid accumulator for this operand type')\n"
    ),
    # A table made by dict(zip(...)) or dict.fromkeys(...): built as Python builds it.
    "skip_by_zipped_table": (
        "    acc_for = dict(zip((jnp.int8, jnp.float16), (jnp.int32, jnp.float32)))\n"
        "    if acc_for[dtype] != acc_dtype:\n"
        "      self.skipTest('Invalid accumulator for this operand type')\n"
    ),
    "skip_by_fromkeys": (
        "    acc_for = dict.fromkeys([jnp.float16], jnp.float32) | dict.fromkeys((jnp.int8,), jnp.int32)\n"
        "    if acc_for.get(dtype) != acc_dtype:\n"
        "      self.skipTest('Invalid accumulator for this operand type')\n"
    ),
}

HELPER = '''

  def _skip_unless_valid(self, dtype, acc_dtype):
    want = jnp.int32 if jnp.issubdtype(dtype, jnp.integer) else jnp.float32
    if acc_dtype != want:
      self.skipTest(f"{acc_dtype} is not the accumulator for {dtype}")
'''


@pytest.mark.parametrize("decorator", sorted(DECORATORS))
def test_decorator_worlds_without_guard(decorator: str) -> None:
    dec, params = DECORATORS[decorator]
    code = PARAMS_KERNEL.format(decorator=dec, params=params, guard="")
    report = check(code, ["MMA101", "MMA102"], target_jax="0.11")
    assert only(report, "MMA101")["world"] == {"dtype": "jnp.int8", "acc_dtype": "jnp.float32"}
    # An int32 accumulator for float16 operands fails Pallas's abstract eval.
    mma102 = only(report, "MMA102")
    assert mma102["world"] == {"dtype": "jnp.float16", "acc_dtype": "jnp.int32"}
    assert mma102["predicted_error"]["message"] == (
        "Only float64, float32 and float16 accumulators supported for floating operands. Got int32"
    )


@pytest.mark.parametrize(
    "guard", ["skip_test", "early_return", "skip_in_helper", "skip_by_table", "skip_by_table_keys",
              "skip_by_set_operators", "skip_by_zipped_table", "skip_by_fromkeys"])
@pytest.mark.parametrize("decorator", sorted(DECORATORS))
def test_guards_prune_invalid_worlds(decorator: str, guard: str) -> None:
    dec, params = DECORATORS[decorator]
    code = PARAMS_KERNEL.format(decorator=dec, params=params, guard=GUARDS[guard])
    if guard == "skip_in_helper":
        code += HELPER
    check(code, [], target_jax="0.11")


def test_module_constant_tuples_feed_product() -> None:
    code = '''
    from absl.testing import parameterized
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu

    FLOAT_TYPES = (jnp.bfloat16, jnp.float16)
    INT_TYPES = (jnp.int8, jnp.int4)
    ALL_TYPES = FLOAT_TYPES + INT_TYPES


    class Test(parameterized.TestCase):

      @parameterized.product(dtype=ALL_TYPES)
      def test_mma(self, dtype):
        acc_dtype = jnp.float32 if dtype in FLOAT_TYPES else jnp.int16

        def body(a_ref, b_ref, o_ref):
          acc = plgpu.layout_cast(jnp.zeros((128, 64), acc_dtype), plgpu.Layout.MMA_ACC(dtype))
          a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
          b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
          o_ref[...] = plgpu.mma(acc, a, b)

        f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 64), acc_dtype))
        f(jnp.zeros((128, 128), dtype), jnp.zeros((64, 128), dtype))
    '''
    report = check(code, ["MMA101"], target_jax="0.11")
    diag = only(report, "MMA101")
    assert diag["worlds"] == [{"dtype": "jnp.int8"}, {"dtype": "jnp.int4"}]


def test_for_loop_over_module_constant_names_the_world() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils

    SWEEP = ("int8", "uint8", "float16")


    def kernel_for(name):
      dtype = jnp.dtype(name)
      signed = utils.is_signed(dtype)

      def kernel(ctx, a_ref, b_ref, out_ref, smem):
        lay = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype))
        a = mgpu.FragmentedArray.load_untiled(a_ref, layout=lay.lhs, is_signed=signed, optimized=False)
        b = mgpu.FragmentedArray.load_untiled(utils.memref_transpose(b_ref, (1, 0)), layout=lay.rhs, is_signed=signed, optimized=False)
        acc_t = jnp.int32 if signed is not None else jnp.float32
        zero = utils.c(0 if signed is not None else 0.0, utils.dtype_to_ir_type(acc_t))
        acc = mgpu.FragmentedArray.splat(zero, (64, 64), layout=lay.acc, is_signed=signed)
        mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

      shapes = (jax.ShapeDtypeStruct((64, 64), dtype), jax.ShapeDtypeStruct((64, 64), dtype))
      return mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), shapes,
                                jax.ShapeDtypeStruct((64, 64), jnp.float32), ())


    kernels = {}
    for name in SWEEP:
      kernels[name] = kernel_for(name)
    '''
    report = check(code, ["MMA201"])
    diag = only(report, "MMA201")
    assert diag["world"] == {"name": '"uint8"'}
    assert '(when name="uint8")' in diag["message"]


def test_loop_continue_prunes_a_world() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def body_for(dtype):
      def body(a_ref, b_ref, o_ref):
        acc = plgpu.layout_cast(jnp.zeros((64, 64), jnp.int32), plgpu.Layout.MMA_ACC(dtype))
        a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
        b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
        o_ref[...] = plgpu.mma(acc, a, b)
      return body


    for dtype in (jnp.int8, jnp.uint8, jnp.int4, jnp.bfloat16):
      if not jnp.issubdtype(dtype, jnp.signedinteger):
        continue
      plgpu.kernel(body_for(dtype), out_type=jax.ShapeDtypeStruct((64, 64), jnp.int32))(
          jnp.zeros((64, 64), dtype), jnp.zeros((64, 64), dtype))
    '''
    check(code, [], target_jax="0.11")
    report = check(code.replace("if not jnp.issubdtype(dtype, jnp.signedinteger):",
                                "if dtype == jnp.int4:"),
                   ["MMA102", "MMA204"], target_jax="0.11")
    assert only(report, "MMA204")["world"] == {"dtype": "jnp.uint8"}
    assert only(report, "MMA102")["world"] == {"dtype": "jnp.bfloat16"}


def test_nested_loops_combine_worlds() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def run(dtype, acc_dtype):
      def body(a_ref, b_ref, o_ref):
        acc = plgpu.layout_cast(jnp.zeros((64, 64), acc_dtype), plgpu.Layout.MMA_ACC(dtype))
        a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
        b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
        o_ref[...] = plgpu.mma(acc, a, b)
      f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((64, 64), acc_dtype))
      return f(jnp.zeros((64, 64), dtype), jnp.zeros((64, 64), dtype))


    for dtype in (jnp.float16, jnp.bfloat16):
      for acc_dtype in (jnp.float32, jnp.float16):
        run(dtype, acc_dtype)
    '''
    report = check(code, ["MMA102"], target_jax="0.12")
    diag = only(report, "MMA102")
    assert diag["worlds"] == [
        {"dtype": "jnp.float16", "acc_dtype": "jnp.float16"},
        {"dtype": "jnp.bfloat16", "acc_dtype": "jnp.float16"},
    ]


def test_itertools_product_loop() -> None:
    code = '''
    import itertools
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def run(dtype, acc_dtype):
      def body(a_ref, b_ref, o_ref):
        acc = plgpu.layout_cast(jnp.zeros((64, 64), acc_dtype), plgpu.Layout.MMA_ACC(dtype))
        a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
        b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
        o_ref[...] = plgpu.mma(acc, a, b)
      f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((64, 64), acc_dtype))
      return f(jnp.zeros((64, 64), dtype), jnp.zeros((64, 64), dtype))


    for dtype, acc_dtype in itertools.product((jnp.float16, jnp.int8), (jnp.float32,)):
      run(dtype, acc_dtype)
    '''
    report = lint(code, target_jax="0.11")
    assert [d.code for d in report.diagnostics] == ["MMA101"]


def test_pytest_parametrize() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    import pytest
    from jax.experimental.pallas import mosaic_gpu as plgpu


    @pytest.mark.parametrize("acc_dtype", [jnp.float32, jnp.float16])
    @pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float8_e4m3fn])
    def test_mma(dtype, acc_dtype):
      def body(a_ref, b_ref, o_ref):
        acc = plgpu.layout_cast(jnp.zeros((64, 64), acc_dtype), plgpu.Layout.MMA_ACC(dtype))
        a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
        b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
        o_ref[...] = plgpu.mma(acc, a, b).astype(jnp.float32)

      f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((64, 64), jnp.float32))
      f(jnp.zeros((64, 64), dtype), jnp.zeros((64, 64), dtype))
    '''
    report = check(code, ["MMA102"], target_jax="0.11")
    diag = only(report, "MMA102")
    assert {w["acc_dtype"] for w in diag["worlds"]} == {"jnp.float16"}
    assert {w["dtype"] for w in diag["worlds"]} == {"jnp.bfloat16", "jnp.float8_e4m3fn"}


@pytest.mark.parametrize(("guard", "dtypes"), [
    ("", {"jnp.bfloat16", "jnp.float8_e4m3fn"}),
    # A guard on the dtypes' names (`str` of a dtype object is its name).
    ("  if (str(jnp.dtype(dtype)), str(jnp.dtype(acc_dtype))) not in OK:\n    pytest.skip('unsupported')\n",
     {"jnp.bfloat16"}),
])
def test_pytest_parametrize_over_module_lists(guard: str, dtypes: set[str]) -> None:
    # Lists bound at module level and handed to `parametrize` are read, not changed (a blind
    # held-out set; 7b5c1ed had made them unknown).
    code = """
import jax
import jax.numpy as jnp
import pytest
from jax.experimental.pallas import mosaic_gpu as plgpu

DTYPES = [jnp.bfloat16, jnp.float8_e4m3fn]
ACCS = [jnp.float32, jnp.float16]
OK = {("bfloat16", "float32"), ("float8_e4m3fn", "float32"), ("bfloat16", "float16")}


@pytest.mark.parametrize("acc_dtype", ACCS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_mma(dtype, acc_dtype):
""" + guard + """  def body(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(jnp.zeros((64, 64), acc_dtype), plgpu.Layout.MMA_ACC(dtype))
    a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
    b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
    o_ref[...] = plgpu.mma(acc, a, b).astype(jnp.float32)

  f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((64, 64), jnp.float32))
  f(jnp.zeros((64, 64), dtype), jnp.zeros((64, 64), dtype))
"""
    report = check(code, ["MMA102"], target_jax="0.11")
    assert {w["dtype"] for w in only(report, "MMA102")["worlds"]} == dtypes


def test_pytest_param_marks() -> None:
    # A blind held-out set's sweep: `pytest.param(v, id=...)` is v; a case a mark skips is no
    # world (`skip`, a `skipif` that holds, or one undecided about the kernel's types); a
    # `skipif` on the machine runs where the test asks to.
    code = """
import jax
import jax.numpy as jnp
import pytest
from jax._src import test_util as jtu
from jax.experimental.pallas import mosaic_gpu as plgpu
from somewhere import supported

DTYPES = [
    pytest.param(jnp.int8, id="s8"),
    pytest.param(jnp.int4, marks=pytest.mark.skipif(not jtu.is_cuda_compute_capability_at_least("9.0"), reason="")),
    pytest.param(jnp.uint8, marks=pytest.mark.skip),
    pytest.param(jnp.uint4, marks=[pytest.mark.skipif(not supported(jnp.uint4), reason="")]),
    pytest.param(jnp.float8_e4m3fn, marks=pytest.mark.skipif(True, reason="")),
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_mma(dtype):
  def body(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(jnp.zeros((64, 64), jnp.float16), plgpu.Layout.MMA_ACC(dtype))
    a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
    b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
    o_ref[...] = plgpu.mma(acc, a, b).astype(jnp.float32)

  f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((64, 64), jnp.float32))
  f(jnp.zeros((64, 64), dtype), jnp.zeros((64, 64), dtype))
"""
    report = check(code, ["MMA101"], target_jax="0.11")
    assert {w["dtype"] for w in only(report, "MMA101")["worlds"]} == {"jnp.int8", "jnp.int4"}


def test_pytest_parametrize_multiple_names_with_params() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    import pytest
    from jax.experimental.pallas import mosaic_gpu as plgpu


    @pytest.mark.parametrize(
        "dtype,acc_dtype",
        [
            (jnp.int8, jnp.int32),
            pytest.param(jnp.int4, jnp.int32, id="int4"),
            (jnp.float16, jnp.int32),
        ],
    )
    def test_mma(dtype, acc_dtype):
      def body(a_ref, b_ref, o_ref):
        acc = plgpu.layout_cast(jnp.zeros((64, 64), acc_dtype), plgpu.Layout.MMA_ACC(dtype))
        a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
        b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
        o_ref[...] = plgpu.mma(acc, a, b)

      f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((64, 64), acc_dtype))
      f(jnp.zeros((64, 128), dtype), jnp.zeros((64, 128), dtype))
    '''
    report = check(code, ["MMA102"], target_jax="0.11")
    assert only(report, "MMA102")["world"] == {"dtype": "jnp.float16", "acc_dtype": "jnp.int32"}


def test_helper_with_parameters_called_from_several_tests() -> None:
    # jax's `_test_wgmma_basic` style: a private helper holds the kernel, tests call it.
    code = '''
    from absl.testing import parameterized
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    class Test(parameterized.TestCase):

      def _run_mma(self, dtype, acc_dtype=jnp.float32):
        def body(a_ref, b_ref, o_ref):
          acc = plgpu.layout_cast(jnp.zeros((64, 64), acc_dtype), plgpu.Layout.MMA_ACC(dtype))
          a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
          b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
          o_ref[...] = plgpu.mma(acc, a, b)

        f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((64, 64), acc_dtype))
        return f(jnp.zeros((64, 64), dtype), jnp.zeros((64, 64), dtype))

      def test_bf16(self):
        self._run_mma(jnp.bfloat16)

      def test_int8(self):
        self._run_mma(jnp.int8)

      def test_int8_int32(self):
        self._run_mma(jnp.int8, acc_dtype=jnp.int32)
    '''
    report = check(code, ["MMA101"], target_jax="0.11")
    assert only(report, "MMA101")["call"]["a"]["dtype"] == "int8"


def test_sample_product() -> None:
    code = '''
    from jax._src import test_util as jtu
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    class Test(jtu.JaxTestCase):

      @jtu.sample_product(dtype=[jnp.int8, jnp.uint8], n=[64, 128])
      def test_mma(self, dtype, n):
        def body(a_ref, b_ref, o_ref):
          acc = plgpu.layout_cast(jnp.zeros((128, n), jnp.int32), plgpu.Layout.MMA_ACC(dtype))
          a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
          b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
          o_ref[...] = plgpu.mma(acc, a, b)

        f = plgpu.kernel(
            body, out_type=jax.ShapeDtypeStruct((128, n), jnp.int32),
            compiler_params=plgpu.CompilerParams(
                lowering_semantics=plgpu.LoweringSemantics.Warpgroup))
        f(jnp.zeros((128, 64), dtype), jnp.zeros((n, 64), dtype))
    '''
    report = check(code, ["MMA204"], target_jax="0.11")
    diag = only(report, "MMA204")
    assert {w["dtype"] for w in diag["worlds"]} == {"jnp.uint8"}
    assert {w["n"] for w in diag["worlds"]} == {"64", "128"}


def test_world_values_keep_their_spelling() -> None:
    code = '''
    from absl.testing import parameterized
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    class Test(parameterized.TestCase):

      @parameterized.parameters(np.int8, "int8", jnp.dtype("int8"))
      def test_mma(self, dtype):
        def body(a_ref, b_ref, o_ref):
          acc = plgpu.layout_cast(jnp.zeros((64, 64), jnp.float32), plgpu.Layout.MMA_ACC(dtype))
          a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
          b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
          o_ref[...] = plgpu.mma(acc, a, b)

        f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((64, 64), jnp.float32))
        f(jnp.zeros((64, 64), dtype), jnp.zeros((64, 64), dtype))
    '''
    report = check(code, ["MMA101"], target_jax="0.11")
    worlds = only(report, "MMA101")["worlds"]
    assert worlds == [{"dtype": "np.int8"}, {"dtype": '"int8"'}, {"dtype": 'jnp.dtype("int8")'}]


COMPREHENSION_WORLDS = '''
import itertools
from absl.testing import parameterized
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

DTYPES = (jnp.bfloat16, jnp.int8, jnp.float16)
TABLE = {{"bf16": jnp.bfloat16, "s8": jnp.int8}}


class Test(parameterized.TestCase):

  {dec}
  def test_mma(self, dtype, m_warps=4):
    def body(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(jnp.zeros((64, 64), jnp.float32), plgpu.Layout.MMA_ACC(dtype))
      a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
      b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
      o_ref[...] = plgpu.mma(acc, a, b)

    f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((64, 64), jnp.float32),
                     compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane))
    f(jnp.zeros((64, 64), dtype), jnp.zeros((64, 64), dtype))
'''

_COMPUTED_DECORATORS = {
    "tuple_concat": ("@parameterized.product(dtype=DTYPES + (jnp.float8_e4m3fn,))", False),
    "list_plus": ("@parameterized.product(dtype=list(DTYPES) + [jnp.int4])", False),
    "listcomp_filter": ("@parameterized.product(dtype=[d for d in DTYPES if d != jnp.float16])", False),
    "genexp_named": ("@parameterized.named_parameters((f'_{jnp.dtype(d).name}', d) for d in DTYPES)", False),
    "genexp_parameters": ("@parameterized.parameters((d,) for d in DTYPES)", False),
    "dict_items": ("@parameterized.named_parameters(*[(f'_{n}', d) for n, d in TABLE.items()])", False),
    "dict_values": ("@parameterized.parameters(*TABLE.values())", False),
    "sorted_keys": ("@parameterized.parameters(*[TABLE[n] for n in sorted(TABLE)])", False),
    "reversed_sorted": ("@parameterized.parameters(*[TABLE[n] for n in sorted(TABLE, reverse=True)])", False),
    "reversed_tuple": ("@parameterized.parameters(*reversed(DTYPES))", False),
    "star_listcomp": ("@parameterized.parameters(*[(d,) for d in DTYPES])", False),
    "star_itertools_product": ("@parameterized.parameters(*itertools.product(DTYPES, (1, 2, 4)))", False),
}


def _computed_param(name: str) -> object:
    _dec, gap = _COMPUTED_DECORATORS[name]
    marks = [pytest.mark.xfail(strict=True, reason=f"GAP: worlds from a comprehension / itertools in the decorator ({name}) are unknown")] if gap else []
    return pytest.param(name, id=name, marks=marks)


@pytest.mark.parametrize("name", [_computed_param(n) for n in _COMPUTED_DECORATORS])
def test_computed_parameter_lists(name: str) -> None:
    dec, _ = _COMPUTED_DECORATORS[name]
    report = check(COMPREHENSION_WORLDS.format(dec=dec), ["MMA101"], target_jax="0.11")
    assert only(report, "MMA101")["call"]["a"]["dtype"] == "int8"


def test_pairwise_rows_cover_every_pair_of_values() -> None:
    from mmalint.analysis.worlds import _pairwise

    for sizes in [(2, 2, 3, 4, 5), (3, 3, 3, 3), (2,) * 8, (4, 4, 2, 2, 3, 3, 2), (7,), (5, 1, 3)]:
        rows = _pairwise(sizes)
        product = 1
        for size in sizes:
            product *= size
        assert len(rows) <= min(product, 3 * max(a * b for a in sizes for b in sizes))
        for i, size_i in enumerate(sizes):
            for j in range(i + 1, len(sizes)):
                for a in range(size_i):
                    for b in range(sizes[j]):
                        assert any(r[i] == a and r[j] == b for r in rows), (sizes, i, a, j, b)
    assert _pairwise((7,)) == [(v,) for v in range(7)]


# jax's test_warp_mma widened by a third axis: 8 x 3 x 4 = 96 combinations, more than
# EXHAUSTIVE_WORLDS, so it runs a pairwise covering set. The mistake needs two axes (an unsigned
# dtype with m_warps=4), and the product's order puts those worlds last.
WIDE_SWEEP = WARP_MMA_TEST.replace(
    "      m_warps=(1, 2, 4),\n  )\n  def test_warp_mma(self, dtype, m_warps):",
    "      m_warps=(1, 2, 4),\n      k_steps=(1, 2, 3, 4),\n  )\n"
    "  def test_warp_mma(self, dtype, m_warps, k_steps):",
)


def test_a_wide_sweep_finds_a_two_axis_mistake_in_its_covering_set() -> None:
    from mmalint.analysis.worlds import EXHAUSTIVE_WORLDS, MAX_WORLDS

    assert "k_steps=(1, 2, 3, 4)" in WIDE_SWEEP and EXHAUSTIVE_WORLDS < 8 * 3 * 4
    code = WIDE_SWEEP.format(acc_signed="ab_is_signed if m_warps == 4 else utils.is_signed(acc_dtype)")
    diag = only(check(code, ["MMA201"]), "MMA201")
    assert {w["dtype"] for w in diag["worlds"]} == {"jnp.uint8", "jnp.uint4"}
    assert {w["m_warps"] for w in diag["worlds"]} == {"4"}
    assert len(diag["worlds"]) < MAX_WORLDS


def test_a_wide_sweep_of_correct_code_stays_clean() -> None:
    code = WIDE_SWEEP.format(acc_signed="utils.is_signed(acc_dtype)")
    assert check(code, []).calls == 1


@pytest.mark.parametrize(
    ("sweep", "table", "expect"),
    [("list(ACC_FOR)", "ACC_FOR", ["MMA101"]), ("list(NAMES)", "NAMES", ["MMA101"]),
     ("sorted({jnp.bfloat16} | {jnp.int8, np.int8}, key=lambda t: jnp.dtype(t).name)", "ACC_FOR", ["MMA101"]),
     ("list(ACC_FOR)", "({jnp.bfloat16: jnp.float32} | {jnp.int8: jnp.float32})", ["MMA101"]),
     # absl's product asserts a list or a tuple: a dict or its keys fail when the class is defined
     ("ACC_FOR", "ACC_FOR", []), ("ACC_FOR.keys()", "ACC_FOR", []), ("NAMES.keys()", "NAMES", [])],
)
def test_a_table_feeds_product(sweep: str, table: str, expect: list[str]) -> None:
    """A sweep over a table's keys, as a list or sorted: a dict keyed by dtypes, or by names."""
    code = f'''
    from absl.testing import parameterized
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental.pallas import mosaic_gpu as plgpu

    ACC_FOR = {{jnp.bfloat16: jnp.float32, jnp.int8: jnp.float32}}
    NAMES = {{"bfloat16": jnp.float32, "int8": jnp.float32}}


    class Test(parameterized.TestCase):

      @parameterized.product(dtype={sweep})
      def test_mma(self, dtype):
        acc_dtype = {table}[dtype]
        dtype = jnp.dtype(dtype)

        def body(a_ref, b_ref, o_ref):
          acc = plgpu.layout_cast(jnp.zeros((128, 64), acc_dtype), plgpu.Layout.MMA_ACC(dtype))
          a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
          b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
          o_ref[...] = plgpu.mma(acc, a, b)

        f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 64), acc_dtype))
        f(jnp.zeros((128, 128), dtype), jnp.zeros((64, 128), dtype))
    '''
    report = check(code, expect, target_jax="0.11", known=bool(expect))
    if expect:
        assert len(only(report, "MMA101")["worlds"]) == 1


@pytest.mark.parametrize(("decorator", "expect"), [
    # pytest applies a test class's parametrize to each of its test methods
    ('@pytest.mark.parametrize("acc", [jnp.int32, jnp.float32])', ["MMA101"]),
    ('@pytest.mark.parametrize("acc", [jnp.int32])', []),
    # absl's parameterized decorates methods: not read off the class here
    ('@some_library.sweep("acc", [jnp.float32])', []),
])
def test_a_test_classs_parametrize_sweeps_its_methods(decorator: str, expect: list[str]) -> None:
    code = MAKE_INT8 + f'''
import pytest
import some_library


{decorator}
class TestTiles:

  def test_tile(self, acc):
    make(acc)(jnp.zeros((64, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))
'''
    check(code, expect, target_jax="0.12", known="some_library" not in decorator)


@pytest.mark.parametrize("above", [
    "",
    # a decorator above it whose text says "class": the decorators end at the class statement
    '@pytest.mark.skipif(False, reason="no subclass needed")\n',
])
def test_a_method_reads_the_names_its_classs_parametrize_names(tmp_path: Path, above: str) -> None:
    # the test method names none of the kernels: only its class's decorator does
    kernels = MAKE_INT8 + '''

def int8_tile(a, b):
  return make(jnp.float32)(a, b)
'''
    test = '''
import jax.numpy as jnp
import pytest

from kernels import int8_tile


{above}@pytest.mark.parametrize("run", [int8_tile])
class TestTiles:

  def test_tile(self, run):
    run(jnp.zeros((64, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))
'''.replace("{above}", above)
    assert lint_project(tmp_path, {"kernels.py": kernels, "test_tiles.py": test}, "test_tiles.py") == [
        ("MMA101", "kernels.py", 12)]
