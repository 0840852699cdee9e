"""What a test method gets from its fixture: `setUp` on `self`, and NumPy random arrays.

jax's own tests keep a generator as `self.prng = np.random.default_rng(seed)` in `setUp` and
build inputs with `self.prng.uniform(-1, 1, (m, k)).astype(dtype)`: the shapes of the launched
arrays (and so M, N, K) come from there.
"""

from __future__ import annotations

from typing import Any

import pytest
from _analysis_lint import check, lint, only

# The snippets' imports, and their test's body from the kernel on: a warp-level MMA of bf16
# operands whose accumulator is `acc_type` of (m, `acc_n`), launched on `make_a` and `make_b`.
IMPORTS = '''
import jax
import jax.numpy as jnp
import numpy as np
from absl.testing import parameterized
from jax.experimental.mosaic import gpu as mgpu
from jax.experimental.mosaic.gpu import utils
from jaxlib.mlir import ir

'''
KERNEL = '''    def kernel(ctx, a_ref, b_ref, out_ref, _):
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype))
      a = mgpu.FragmentedArray.load_untiled(a_ref, layout=layouts.lhs, optimized=False)
      b = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs, optimized=False)
      acc = mgpu.FragmentedArray.splat(utils.c(0.0, {acc_type}), (m, {acc_n}), layout=layouts.acc)
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)

    a = {make_a}.astype(dtype)
    b = {make_b}.astype(dtype)
    expected = np.zeros((m, n), np.float32)
    mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (a, b), expected, ())(a, b)
'''

RAW = IMPORTS + '''
class MmaTest(parameterized.TestCase):

  def setUp(self):
    super().setUp()
    {setup}

  def test_mma(self):
    m, n, k = 128, 64, 128
    dtype = jnp.bfloat16

''' + KERNEL

PRNG = "self.prng = np.random.default_rng(1234)"


def _raw(setup: str = PRNG, acc_type: str = "ir.F32Type.get()", acc_n: str = "n",
         make_a: str = "self.prng.uniform(-1, 1, (m, k))",
         make_b: str = "self.prng.uniform(-1, 1, (n, k))") -> str:
    return RAW.format(setup=setup, acc_type=acc_type, acc_n=acc_n, make_a=make_a, make_b=make_b)


def test_setup_attributes_reach_the_test() -> None:
    code = _raw(setup=PRNG + "\n    self.acc_type = ir.F16Type.get()", acc_type="self.acc_type")
    diag = only(check(code, ["MMA102"]), "MMA102")
    assert diag["call"]["acc"]["element_type"] == "f16"


def test_a_skip_in_setup_ends_every_test() -> None:
    code = _raw(setup='self.skipTest("not on this machine")', acc_type="ir.F16Type.get()",
                make_a="np.ones((m, k))", make_b="np.ones((n, k))")
    assert lint(code).diagnostics == ()


@pytest.mark.parametrize(
    ("make_a", "make_b"),
    [
        ("self.prng.uniform(-1, 1, (m, k))", "self.prng.uniform(-1, 1, (n, k))"),
        ("self.prng.uniform(-1, 1, size=(m, k))", "self.prng.normal(0, 1, (n, k))"),
        ("self.prng.integers(-128, 128, (m, k))", "self.prng.standard_normal((n, k))"),
        ("np.random.uniform(-1, 1, (m, k))", "np.random.randn(n, k)"),
        ("np.random.RandomState(0).randint(0, 4, (m, k))", "np.random.rand(n, k)"),
    ],
)
def test_random_array_shapes(make_a: str, make_b: str) -> None:
    # The accumulator is (m, k) instead of (m, n): with known input shapes, N disagrees.
    code = _raw(acc_n="k", make_a=make_a, make_b=make_b)
    diag = only(check(code, ["MMA401"]), "MMA401")
    assert diag["call"]["a"]["shape"] == [128, 128]
    assert diag["call"]["b"]["shape"] == [128, 64]


@pytest.mark.parametrize("make_b", ["self.prng.uniform(-1, 1)", "self.prng.uniform(-1, 1, shape)",
                                    "self.other.uniform(-1, 1, (n, k))"])
def test_unknown_sizes_stay_unknown(make_b: str) -> None:
    # No size (a scalar), a size not known, a receiver that is not a NumPy generator.
    code = _raw(acc_n="k", make_b=make_b)
    assert lint(code).diagnostics == ()



# A sweep of three worlds whose setUp decides the accumulator's type: each world's finding (f16
# accumulator for bf16 operands, MMA102) needs what setUp stored on `self`.
SWEEP = IMPORTS + '''
class Helper:
  pass


class Conf:
  ACC = ir.F16Type.get()


class MmaTest(parameterized.TestCase):
  ACC = ir.F16Type.get()

  def setUp(self):
    super().setUp()
    {setup}

  @parameterized.parameters(64, 128, 256)
  def test_mma(self, n):
    {body}
    m, k = 128, 128
    dtype = jnp.bfloat16

''' + KERNEL


def _set_up_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the interpreter runs the snippet's `setUp` (one entry per run)."""
    from mmalint.analysis.interpreter import calls as calls_module

    runs: list[int] = []
    real = calls_module.Calls.call_function

    def counting(self: Any, func: Any, *args: Any, **kwargs: Any) -> Any:
        if func.qualname == "setUp":
            runs.append(1)
        return real(self, func, *args, **kwargs)

    monkeypatch.setattr(calls_module.Calls, "call_function", counting)
    return runs


def _worlds(setup: str, body: str = "pass") -> list[str]:
    """The worlds the f16 accumulator's MMA102 holds in."""
    code = SWEEP.format(setup=setup, body=body, acc_type="self.acc_type", acc_n="n",
                        make_a="np.ones((m, k))", make_b="np.ones((n, k))")
    diag = only(check(code, ["MMA102"]), "MMA102")
    assert diag["call"]["acc"]["element_type"] == "f16"
    return [world["n"] for world in diag["worlds"]]


def test_a_setup_decided_by_the_object_alone_runs_once_for_all_worlds(monkeypatch: pytest.MonkeyPatch) -> None:
    # The later worlds' objects are given what the first world's setUp stored.
    runs = _set_up_runs(monkeypatch)
    assert _worlds("self.acc_type = ir.F16Type.get()") == ["64", "128", "256"]
    assert len(runs) == 1
    runs.clear()
    assert _worlds("self.acc_type = Conf.ACC") == ["64", "128", "256"]  # a class's attribute
    assert len(runs) == 1


def test_a_setup_that_stores_an_object_runs_in_every_world(monkeypatch: pytest.MonkeyPatch) -> None:
    # An object is mutable (a world could change it): each world's setUp makes its own.
    runs = _set_up_runs(monkeypatch)
    assert _worlds("self.helper = Helper()\n    self.acc_type = ir.F16Type.get()") == ["64", "128", "256"]
    assert len(runs) == 3


def test_a_class_attribute_a_world_stores_into_under_another_name_is_unknown_in_every_world() -> None:
    # A world stores into the class through another name (`c = Conf`): which worlds read its
    # attribute before the store is the order tests run in (one run alone reads f16 in any
    # world), so no world takes f16 from it: the class's attribute is unknown
    # (`handing.class_changed_elsewhere`). Until a class was read so, the first world's
    # finding stood and the later worlds' setUp read the attribute anew.
    code = SWEEP.format(setup="self.acc_type = Conf.ACC", body="c = Conf\n    c.ACC = ir.F32Type.get()",
                        acc_type="self.acc_type", acc_n="n", make_a="np.ones((m, k))", make_b="np.ones((n, k))")
    check(code, [], known=False)
