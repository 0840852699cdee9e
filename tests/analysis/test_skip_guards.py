"""Skip guards the analysis cannot decide (`interpreter/guards.py`).

A sweep's guard whose condition is undecided in a part that reads the kernel's dtypes, element
types, integers or shapes may skip the world it guards: that world's findings could be false
positives, so its path ends there. A guard on the machine (capability, backend, a module's
flag) reads nothing of the kernel: the test runs on the machine it asks for, and its world is
reported as before.
"""

from __future__ import annotations

import pytest
from _analysis_lint import check
from test_control_flow import V

# A parameterized test whose worlds (int8, bf16) x (float32, int32) reach `plgpu.mma` after
# GUARD (rows indented for the test method's body). int8 with float32 is MMA101, bf16 with int32
# MMA102: with no guard, both are reported.
_TEST = '''
import functools
import jax
import jax.numpy as jnp
import numpy as np
from absl.testing import parameterized
from jax._src import test_util as jtu
from jax.experimental.pallas import mosaic_gpu as plgpu
from somewhere_unknown import supported, max_n, capability, HAS_FEATURE

M, N, K = 128, 64, 64


def local_check(dtype, acc):
  return supported(dtype, acc)


class MmaTest(jtu.JaxTestCase):

  def setUp(self):
    super().setUp()
{SETUP}

  def require(self, dtype, acc):
{HELPER}

  @parameterized.product(dtype=(jnp.int8, jnp.bfloat16), acc=(jnp.float32, jnp.int32))
  def test_mma(self, dtype, acc):
{GUARD}
    def body(a_ref, b_ref, o_ref):
      c = plgpu.layout_cast(jnp.zeros((M, N), acc), plgpu.Layout.MMA_ACC(dtype))
      a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
      b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
      o_ref[...] = plgpu.mma(c, a, b).astype(o_ref.dtype)

    plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32))(
        jnp.zeros((M, K), dtype), jnp.zeros((N, K), dtype))
'''

_BOTH = ["MMA101", "MMA102"]


def _test(guard: str = "    pass", setup: str = "    pass", helper: str = "    pass") -> str:
    return _TEST.replace("{GUARD}", guard).replace("{SETUP}", setup).replace("{HELPER}", helper)


@pytest.mark.parametrize("guard", [
    # an unknown predicate of the world's dtypes
    "    if not supported(dtype, acc):\n      self.skipTest('unsupported')",
    "    if supported(dtype, acc):\n      pass\n    else:\n      self.skipTest('unsupported')",
    "    if not local_check(dtype, acc):\n      self.skipTest('unsupported')",
    "    ok = supported(dtype, acc)\n    if not ok:\n      self.skipTest('unsupported')",
    "    if jnp.dtype(dtype).itemsize * 8 > max_n():\n      self.skipTest('too wide')",
    "    if not supported(dtype, acc):\n      raise unittest.SkipTest('unsupported')",
    "    if not supported(dtype, acc):\n      pytest.skip('unsupported')",
    # in a helper the test calls with its parameters
    "    self.require(dtype, acc)",
])
def test_a_guard_undecided_on_the_kernel_ends_the_world(guard: str) -> None:
    helper = "    if not supported(dtype, acc):\n      self.skipTest('unsupported')"
    check(_test(guard, helper=helper), [], target_jax=V, known=False)


@pytest.mark.parametrize(("guard", "setup"), [
    # on the machine, in setUp or in the test
    ("    pass", "    if not jtu.is_cuda_compute_capability_at_least('9.0'):\n      self.skipTest('sm90')"),
    ("    if not jtu.is_cuda_compute_capability_at_least('9.0'):\n      self.skipTest('sm90')", "    pass"),
    ("    if capability() < 90 or not HAS_FEATURE:\n      self.skipTest('old')", "    pass"),
    ("    if jax.device_count() < 1:\n      self.skipTest('no device')", "    pass"),
    # a decided part about the kernel, an undecided one about the machine
    ("    if dtype == jnp.int8 and not jtu.is_cuda_compute_capability_at_least('8.9'):\n      self.skipTest('x')",
     "    pass"),
    # no guard
    ("    pass", "    pass"),
])
def test_a_guard_on_the_machine_keeps_the_findings(guard: str, setup: str) -> None:
    check(_test(guard, setup=setup), _BOTH, target_jax=V)


def test_a_decided_guard_on_the_kernel_skips_its_worlds_only() -> None:
    guard = ("    if jnp.issubdtype(dtype, jnp.integer) != (acc == jnp.int32):\n"
             "      self.skipTest('invalid pair')")
    check(_test(guard), [], target_jax=V)
    guard = "    if dtype == jnp.bfloat16:\n      self.skipTest('int8 only')"
    check(_test(guard), ["MMA101"], target_jax=V)


@pytest.mark.parametrize(("stars", "expect"), [
    # `bytewidth` and `dtype_to_ir_type` come from a library module a model knows: decided.
    ("from jax.experimental.mosaic.gpu.utils import *\n", ["MMA101"]),
    # ... unless another star import, of a module not read, may bring them too.
    ("from jax.experimental.mosaic.gpu.utils import *\nfrom mylib import *\n", []),
])
def test_a_guard_on_names_a_library_star_import_brings(stars: str, expect: list[str]) -> None:
    guard = "    if bytewidth(dtype_to_ir_type(dtype)) == 2 or acc != jnp.float32:\n      self.skipTest('8-bit only')"
    code = _test(guard).replace("\nM, N, K", stars + "\nM, N, K", 1)
    check(code, expect, target_jax=V, known=bool(expect))


def test_a_guard_on_the_bounds_of_an_integer_type() -> None:
    # `np.iinfo` (a blind held-out case's guard against unsigned operands): int8 is signed, so
    # its worlds run; bfloat16 is no integer, and `and` stops before asking iinfo.
    guard = "    if jnp.issubdtype(dtype, jnp.integer) and np.iinfo(dtype).min == 0:\n      self.skipTest('unsigned')"
    check(_test(guard), _BOTH, target_jax=V)
    guard = "    if np.iinfo(acc).bits != 32 or jnp.iinfo(jnp.int4).max != 7:\n      self.skipTest('x')"
    check(_test(guard), ["MMA102"], target_jax=V)
