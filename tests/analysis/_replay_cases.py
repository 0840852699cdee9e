"""Programs where a replay once answered differently from a fresh run (found in review,
each helper padded to be worth remembering: `replays.MIN_STEPS`): `test_replays.py`
checks each gives the same diagnostics with and without replays."""

import itertools

IMPORTS = """\
from absl.testing import parameterized
import jax.numpy as jnp
import numpy as np
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils
"""
PAD = "  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))\n"
# A test body's warp-level mma kernel on int8 operands (`dtype`), accumulator `acc_dtype`.
KERNEL = """\
    def kernel(ctx, acc, a, b, out, _):
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=1)
      a_fa = mgpu.FragmentedArray.load_untiled(a, layout=layouts.lhs, is_signed=True, optimized=False)
      b_fa = mgpu.FragmentedArray.load_untiled(b, layout=layouts.rhs, is_signed=True, optimized=False)
      acc_fa = mgpu.FragmentedArray.load_untiled(acc, layout=layouts.acc, is_signed={acc_signed}, optimized=False)
      mgpu.mma(acc_fa, a_fa, b_fa).store_untiled(out, optimized=False)
"""
OPERANDS = """\
    a = np.zeros((128, 128), dtype)
    b = np.zeros((128, 128), dtype)
"""
LAUNCH = """\
    acc = np.zeros((128, 128), acc_dtype)
    mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (acc, a, b), acc, ())(acc, a, b)
"""


def _calling(name: str, callee: str, times: int = 1) -> str:
    """`def name(t)`, padded, calling `callee(t)` `times` times and returning the last."""
    return f"def {name}(t):\n{PAD}" + f"  {callee}(t)\n" * (times - 1) + f"  return {callee}(t)\n"


_DEPTH_CHAIN = ["y6", "y5", "y4", "y3", "y2", "y1", "x", *(f"w{i}" for i in range(10, 0, -1))]
_FAN_OUT = [f"g{i}" for i in range(8)]

CASES = {
    # a module-level object a method changes between two calls of a helper that reads it
    "inst": IMPORTS + f"""

class Cfg:
  def choose(self, d):
    self.acc = d

CFG = Cfg()

def acc_type():
{PAD}  return CFG.acc


class MmaTest(parameterized.TestCase):

  @parameterized.product(acc=(jnp.int32, jnp.float32))
  def test_a(self, acc):
    CFG.choose(acc)
    acc_dtype = acc_type()
    dtype = jnp.int8
""" + KERNEL.format(acc_signed=None) + OPERANDS + LAUNCH,
    # two arguments equal but for a field their equality leaves out (`DType.form`)
    "form": IMPORTS + f"""

def is_int8(d):
{PAD}  return d is jnp.int8


class MmaTest(parameterized.TestCase):

  def test_a(self):
    dtype = jnp.int8
""" + OPERANDS + """\
    first = is_int8(dtype)
    acc_dtype = jnp.int32 if is_int8(a.dtype) else jnp.float32
""" + KERNEL.format(acc_signed=True) + LAUNCH,
    # an SMEM type whose swizzle, a plain int, differs between worlds
    "swz": f"""\
import jax
import jax.numpy as jnp
from absl.testing import parameterized
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N = 64, 128


def keep(t):
{PAD}  return t


class T(parameterized.TestCase):

  @parameterized.parameters(32, 64, 128)
  def test_k(self, swizzle):
    k = 32
    transforms = (plgpu.TilingTransform((8, swizzle // 2)), plgpu.SwizzleTransform(swizzle))

    def kernel(a_gmem, b_gmem, o_gmem, a_smem, b_smem, barrier):
      def scope(acc_ref):
        a = plgpu.load(a_smem, layout=plgpu.Layout.WGMMA, optimized=False)
        plgpu.wgmma(acc_ref, a, b_smem)
        return acc_ref[...]
      o_gmem[...] = pl.run_scoped(scope, plgpu.ACC((M, N), jnp.float32))

    b_type = keep(plgpu.SMEM((k, N), jnp.bfloat16, transforms=transforms))
    plgpu.kernel(
        kernel,
        out_type=jax.ShapeDtypeStruct((M, N), jnp.float32),
        scratch_types=[plgpu.SMEM((M, k), jnp.bfloat16), b_type, plgpu.Barrier(num_arrivals=2)],
    )(jnp.ones((M, k), jnp.bfloat16), jnp.ones((k, N), jnp.bfloat16))
""",
    # a replay deep in the stack, where the depth guard cuts a fresh run
    "depth": IMPORTS + "\n\n" + f"def y6(t):\n{PAD}  return t\n\n" + "\n".join(
        _calling(name, callee) for callee, name in itertools.pairwise(_DEPTH_CHAIN)
    ) + """

class MmaTest(parameterized.TestCase):

  def test_a(self):
    f32 = jnp.float32
    first = y1(f32)
    second = x(f32)
    acc_dtype = w1(f32)
    dtype = jnp.int8
""" + KERNEL.format(acc_signed=True) + OPERANDS + LAUNCH,
    # a module-level value cut short by the budget in the first pass, whole in the second
    "budget": IMPORTS + f"""

def helper():
{PAD}  return X


def g0(t):
{PAD}  return t

""" + "\n".join(_calling(name, callee, 4) for callee, name in itertools.pairwise(_FAN_OUT)) + """

X = g7(jnp.float32)


class MmaTest(parameterized.TestCase):
""" + "".join(
        f"""
  def test_{name}(self):
    dtype = jnp.int8
    acc_dtype = {acc}
""" + KERNEL.format(acc_signed=True) + OPERANDS + LAUNCH
        for name, acc in (("heavy", "helper()"), ("light1", "jnp.int32"), ("light2", "jnp.int32"))
    ),
    # a function left pending by module-level code a helper's first call runs
    "lazy3": IMPORTS + f"""

class MmaTest(parameterized.TestCase):

  @parameterized.parameters(1, 2, 4)
  def test_a(self, n):
    helper()


def helper():
{PAD}  REG
  return 1


def make():
{PAD}  def body(ctx, acc, a, b, out, _):
    layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.int8), m_warps=1)
    a_fa = mgpu.FragmentedArray.load_untiled(a, layout=layouts.lhs, is_signed=True, optimized=False)
    b_fa = mgpu.FragmentedArray.load_untiled(b, layout=layouts.rhs, is_signed=True, optimized=False)
    acc_fa = mgpu.FragmentedArray.load_untiled(acc, layout=layouts.acc, is_signed=None, optimized=False)
    mgpu.mma(acc_fa, a_fa, b_fa).store_untiled(out, optimized=False)
  return body


REG = make()
""",
}
