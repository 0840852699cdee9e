"""Programs where a replay once answered differently from a fresh run (found in review,
each helper padded to be worth remembering: `replays.MIN_STEPS`): `test_replays.py`
checks each gives the same diagnostics with and without replays."""

CASES = {
    # a module-level object a method changes between two calls of a helper that reads it
    "inst": """\
from absl.testing import parameterized
import jax.numpy as jnp
import numpy as np
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils


class Cfg:
  def choose(self, d):
    self.acc = d

CFG = Cfg()

def acc_type():
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return CFG.acc


class MmaTest(parameterized.TestCase):

  @parameterized.product(acc=(jnp.int32, jnp.float32))
  def test_a(self, acc):
    CFG.choose(acc)
    acc_dtype = acc_type()
    dtype = jnp.int8
    def kernel(ctx, acc, a, b, out, _):
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=1)
      a_fa = mgpu.FragmentedArray.load_untiled(a, layout=layouts.lhs, is_signed=True, optimized=False)
      b_fa = mgpu.FragmentedArray.load_untiled(b, layout=layouts.rhs, is_signed=True, optimized=False)
      acc_fa = mgpu.FragmentedArray.load_untiled(acc, layout=layouts.acc, is_signed=None, optimized=False)
      mgpu.mma(acc_fa, a_fa, b_fa).store_untiled(out, optimized=False)
    a = np.zeros((128, 128), dtype)
    b = np.zeros((128, 128), dtype)
    acc = np.zeros((128, 128), acc_dtype)
    mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (acc, a, b), acc, ())(acc, a, b)
""",
    # two arguments equal but for a field their equality leaves out (`DType.form`)
    "form": """\
from absl.testing import parameterized
import jax.numpy as jnp
import numpy as np
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils


def is_int8(d):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return d is jnp.int8


class MmaTest(parameterized.TestCase):

  def test_a(self):
    dtype = jnp.int8
    a = np.zeros((128, 128), dtype)
    b = np.zeros((128, 128), dtype)
    first = is_int8(dtype)
    acc_dtype = jnp.int32 if is_int8(a.dtype) else jnp.float32
    def kernel(ctx, acc, a, b, out, _):
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=1)
      a_fa = mgpu.FragmentedArray.load_untiled(a, layout=layouts.lhs, is_signed=True, optimized=False)
      b_fa = mgpu.FragmentedArray.load_untiled(b, layout=layouts.rhs, is_signed=True, optimized=False)
      acc_fa = mgpu.FragmentedArray.load_untiled(acc, layout=layouts.acc, is_signed=True, optimized=False)
      mgpu.mma(acc_fa, a_fa, b_fa).store_untiled(out, optimized=False)
    acc = np.zeros((128, 128), acc_dtype)
    mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (acc, a, b), acc, ())(acc, a, b)
""",
    # an SMEM type whose swizzle, a plain int, differs between worlds
    "swz": """\
import jax
import jax.numpy as jnp
from absl.testing import parameterized
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N = 64, 128


def keep(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return t


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
    "depth": """\
from absl.testing import parameterized
import jax.numpy as jnp
import numpy as np
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils


def y6(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return t

def y5(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return y6(t)

def y4(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return y5(t)

def y3(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return y4(t)

def y2(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return y3(t)

def y1(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return y2(t)

def x(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return y1(t)

def w10(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return x(t)

def w9(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return w10(t)

def w8(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return w9(t)

def w7(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return w8(t)

def w6(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return w7(t)

def w5(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return w6(t)

def w4(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return w5(t)

def w3(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return w4(t)

def w2(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return w3(t)

def w1(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return w2(t)


class MmaTest(parameterized.TestCase):

  def test_a(self):
    f32 = jnp.float32
    first = y1(f32)
    second = x(f32)
    acc_dtype = w1(f32)
    dtype = jnp.int8
    def kernel(ctx, acc, a, b, out, _):
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=1)
      a_fa = mgpu.FragmentedArray.load_untiled(a, layout=layouts.lhs, is_signed=True, optimized=False)
      b_fa = mgpu.FragmentedArray.load_untiled(b, layout=layouts.rhs, is_signed=True, optimized=False)
      acc_fa = mgpu.FragmentedArray.load_untiled(acc, layout=layouts.acc, is_signed=True, optimized=False)
      mgpu.mma(acc_fa, a_fa, b_fa).store_untiled(out, optimized=False)
    a = np.zeros((128, 128), dtype)
    b = np.zeros((128, 128), dtype)
    acc = np.zeros((128, 128), acc_dtype)
    mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (acc, a, b), acc, ())(acc, a, b)
""",
    # a module-level value cut short by the budget in the first pass, whole in the second
    "budget": """\
from absl.testing import parameterized
import jax.numpy as jnp
import numpy as np
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils


def helper():
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return X


def g0(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  return t

def g1(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  g0(t)
  g0(t)
  g0(t)
  return g0(t)

def g2(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  g1(t)
  g1(t)
  g1(t)
  return g1(t)

def g3(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  g2(t)
  g2(t)
  g2(t)
  return g2(t)

def g4(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  g3(t)
  g3(t)
  g3(t)
  return g3(t)

def g5(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  g4(t)
  g4(t)
  g4(t)
  return g4(t)

def g6(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  g5(t)
  g5(t)
  g5(t)
  return g5(t)

def g7(t):
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  g6(t)
  g6(t)
  g6(t)
  return g6(t)


X = g7(jnp.float32)


class MmaTest(parameterized.TestCase):

  def test_heavy(self):
    dtype = jnp.int8
    acc_dtype = helper()
    def kernel(ctx, acc, a, b, out, _):
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=1)
      a_fa = mgpu.FragmentedArray.load_untiled(a, layout=layouts.lhs, is_signed=True, optimized=False)
      b_fa = mgpu.FragmentedArray.load_untiled(b, layout=layouts.rhs, is_signed=True, optimized=False)
      acc_fa = mgpu.FragmentedArray.load_untiled(acc, layout=layouts.acc, is_signed=True, optimized=False)
      mgpu.mma(acc_fa, a_fa, b_fa).store_untiled(out, optimized=False)
    a = np.zeros((128, 128), dtype)
    b = np.zeros((128, 128), dtype)
    acc = np.zeros((128, 128), acc_dtype)
    mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (acc, a, b), acc, ())(acc, a, b)

  def test_light1(self):
    dtype = jnp.int8
    acc_dtype = jnp.int32
    def kernel(ctx, acc, a, b, out, _):
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=1)
      a_fa = mgpu.FragmentedArray.load_untiled(a, layout=layouts.lhs, is_signed=True, optimized=False)
      b_fa = mgpu.FragmentedArray.load_untiled(b, layout=layouts.rhs, is_signed=True, optimized=False)
      acc_fa = mgpu.FragmentedArray.load_untiled(acc, layout=layouts.acc, is_signed=True, optimized=False)
      mgpu.mma(acc_fa, a_fa, b_fa).store_untiled(out, optimized=False)
    a = np.zeros((128, 128), dtype)
    b = np.zeros((128, 128), dtype)
    acc = np.zeros((128, 128), acc_dtype)
    mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (acc, a, b), acc, ())(acc, a, b)

  def test_light2(self):
    dtype = jnp.int8
    acc_dtype = jnp.int32
    def kernel(ctx, acc, a, b, out, _):
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=1)
      a_fa = mgpu.FragmentedArray.load_untiled(a, layout=layouts.lhs, is_signed=True, optimized=False)
      b_fa = mgpu.FragmentedArray.load_untiled(b, layout=layouts.rhs, is_signed=True, optimized=False)
      acc_fa = mgpu.FragmentedArray.load_untiled(acc, layout=layouts.acc, is_signed=True, optimized=False)
      mgpu.mma(acc_fa, a_fa, b_fa).store_untiled(out, optimized=False)
    a = np.zeros((128, 128), dtype)
    b = np.zeros((128, 128), dtype)
    acc = np.zeros((128, 128), acc_dtype)
    mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (acc, a, b), acc, ())(acc, a, b)
""",
    # a function left pending by module-level code a helper's first call runs
    "lazy3": """\
from absl.testing import parameterized
import jax.numpy as jnp
import numpy as np
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils


class MmaTest(parameterized.TestCase):

  @parameterized.parameters(1, 2, 4)
  def test_a(self, n):
    helper()


def helper():
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  REG
  return 1


def make():
  pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
  def body(ctx, acc, a, b, out, _):
    layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.int8), m_warps=1)
    a_fa = mgpu.FragmentedArray.load_untiled(a, layout=layouts.lhs, is_signed=True, optimized=False)
    b_fa = mgpu.FragmentedArray.load_untiled(b, layout=layouts.rhs, is_signed=True, optimized=False)
    acc_fa = mgpu.FragmentedArray.load_untiled(acc, layout=layouts.acc, is_signed=None, optimized=False)
    mgpu.mma(acc_fa, a_fa, b_fa).store_untiled(out, optimized=False)
  return body


REG = make()
""",
}
