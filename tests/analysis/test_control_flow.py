"""Values that reach the MMA through assignments, branches, helpers, closures and loops."""

from __future__ import annotations

import pytest
from _analysis_lint import MAKE_INT8, PALLAS_RUN, all_of, check, lint, only, related_rows, row_of

V = "0.11"  # Pallas tests target jax 0.11 unless they sweep versions


def _pallas(prelude: str, acc_expr: str, operand: str = "DT", setup: str = "", launch_dtype: str = "DT") -> str:
    """A Pallas kernel whose accumulator dtype is `acc_expr`, after `prelude` at module level."""
    return f'''
import dataclasses
import functools
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 64, 64
{prelude}

def body(a_ref, b_ref, o_ref):
{setup}  acc = plgpu.layout_cast(jnp.zeros((M, N), {acc_expr}), plgpu.Layout.MMA_ACC({operand}))
  a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS({operand}))
  b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS({operand}))
  o_ref[...] = plgpu.mma(acc, a, b).astype(o_ref.dtype)


out = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32))(
    jnp.zeros((M, K), {launch_dtype}), jnp.zeros((N, K), {launch_dtype}))
'''


@pytest.mark.parametrize(
    ("prelude", "acc", "expect"),
    [
        ("DT = jnp.int8\nACC = jnp.float32\n", "ACC", ["MMA101"]),
        ("DT, ACC = jnp.int8, jnp.int32\n", "ACC", []),
        ("DT, ACC = jnp.int8, jnp.float32\n", "ACC", ["MMA101"]),
        ("(DT, ACC), _ = (jnp.int8, jnp.int32), None\n", "ACC", []),
        ("DT, *REST = (jnp.int8, jnp.int32, jnp.float32)\nACC = REST[1]\n", "ACC", ["MMA101"]),
        ("DT = jnp.int8\nACC = jnp.int32 if jnp.issubdtype(DT, jnp.integer) else jnp.float32\n",
         "ACC", []),
        ("DT = jnp.int8\nACC = jnp.float32 if jnp.issubdtype(DT, jnp.floating) else jnp.int32\n",
         "ACC", []),
        # uint8 under 0.11's default Warpgroup semantics is also computed as int8 (MMA204):
        # fixing the accumulator does not change that.
        ("DT = jnp.uint8\nACC = jnp.uint32 if jnp.issubdtype(DT, jnp.unsignedinteger) else jnp.int32\n",
         "ACC", ["MMA201", "MMA204"]),
        # NumPy's issubdtype places int4 (an ml_dtypes type) under np.generic alone: False, so
        # float32 (this test said int32 until blind heldout37 case07); jax's says True.
        ("DT = jnp.int4\nACC = jnp.int32 if np.issubdtype(DT, np.signedinteger) else jnp.float32\n",
         "ACC", ["MMA101"]),
        ("DT = jnp.int4\nACC = jnp.int32 if jnp.issubdtype(DT, np.signedinteger) else jnp.float32\n",
         "ACC", []),
        # A scalar type is no string: `jnp.int8 == "int8"` is False; a dtype object's is True.
        ("DT = jnp.int8\nACC = jnp.int32 if DT == 'int8' else jnp.float32\n", "ACC", ["MMA101"]),
        ("DT = jnp.int8\nACC = jnp.int32 if jnp.dtype(DT) == 'int8' else jnp.float32\n", "ACC", []),
        ("DT = jnp.int8\nACC = jnp.int32 if DT in (jnp.int8, jnp.uint8) else jnp.float32\n", "ACC", []),
        ("DT = jnp.int8\nACC = jnp.float32 if DT not in (jnp.int8, jnp.uint8) else jnp.int32\n",
         "ACC", []),
        ("DT = jnp.int8\nACC = jnp.int32 if DT == jnp.int8 else jnp.float32\n", "ACC", []),
        # Sets: a membership test decides as over a tuple (a skip guard over dtypes).
        ("DT = jnp.int8\nACC = jnp.float32 if DT in {jnp.int8, jnp.uint8} else jnp.int32\n", "ACC", ["MMA101"]),
        ("DT = jnp.int8\nACC = jnp.int32 if DT not in frozenset((jnp.int8, jnp.uint8)) else jnp.float32\n",
         "ACC", ["MMA101"]),
        ("DT = jnp.dtype(jnp.int8)\nACC = jnp.float32 if DT in frozenset(map(jnp.dtype, (jnp.int8, jnp.uint8)))"
         " else jnp.int32\n", "ACC", ["MMA101"]),
        ("DT = jnp.int8\nACC = jnp.float32 if DT in set(map(jnp.dtype, [jnp.float16])) else jnp.int32\n", "ACC", []),
        ("DT = jnp.int8\nACC = jnp.float32 if DT in set() else jnp.int32\n", "ACC", []),
        ("DT = jnp.int8\nACC = jnp.float32 if any(DT == t for t in (jnp.int8, jnp.uint8)) else jnp.int32\n",
         "ACC", ["MMA101"]),
        ("DT = jnp.int8\nACC = jnp.int32 if all(DT != t for t in (jnp.int8, jnp.uint8)) else jnp.float32\n",
         "ACC", ["MMA101"]),
        ("DT = jnp.int8\nACC = jnp.float32 if any(DT == t for t in (jnp.float16,)) else jnp.int32\n", "ACC", []),
        ("DT = jnp.int8\nACC = jnp.float32 if {jnp.int8} else jnp.int32\n", "ACC", ["MMA101"]),
        # A set or a dict looks a key up by hash first: a dtype object (`jnp.dtype(t)`, `x.dtype`)
        # finds neither a scalar type nor a name, though `==` says it equals both.
        ("DT = jnp.dtype(jnp.int8)\nACC = jnp.float32 if DT in {jnp.int8, jnp.uint8} else jnp.int32\n",
         "ACC", []),
        ("DT = jnp.dtype(jnp.int8)\nACC = jnp.float32 if DT in {jnp.dtype(jnp.int8)} else jnp.int32\n",
         "ACC", ["MMA101"]),
        ("DT = jnp.dtype('int8')\nACC = jnp.float32 if DT in {'int8': 1} else jnp.int32\n", "ACC", []),
        # Set operators and methods.
        ("DT = jnp.int8\nACC = jnp.float32 if DT in ({jnp.int8} | {jnp.uint8}) else jnp.int32\n", "ACC",
         ["MMA101"]),
        ("DT = jnp.int8\nACC = jnp.float32 if DT in {jnp.int8, jnp.float16} & {jnp.int8} else jnp.int32\n",
         "ACC", ["MMA101"]),
        ("DT = jnp.int8\nACC = jnp.float32 if DT in {jnp.int8, jnp.float16} - {jnp.int8} else jnp.int32\n",
         "ACC", []),
        ("DT = jnp.int8\nACC = jnp.float32 if DT in {jnp.float16} ^ {jnp.int8} else jnp.int32\n", "ACC",
         ["MMA101"]),
        ("DT = jnp.int8\nACC = jnp.float32 if DT in {jnp.int8}.union([jnp.uint8]) else jnp.int32\n", "ACC",
         ["MMA101"]),
        ("DT = jnp.int8\nACC = jnp.float32 if DT in {d for d in (jnp.int8,)} else jnp.int32\n", "ACC",
         ["MMA101"]),
        # Dicts keyed by dtypes: a table from the operand's dtype to the accumulator's.
        ("DT = jnp.int8\nACC_FOR = {jnp.int8: jnp.float32, jnp.bfloat16: jnp.float32}\nACC = ACC_FOR[DT]\n",
         "ACC", ["MMA101"]),
        ("DT = jnp.int8\nACC_FOR = {jnp.int8: jnp.int32, jnp.bfloat16: jnp.float32}\nACC = ACC_FOR[DT]\n",
         "ACC", []),
        ("DT = jnp.int8\nACC_FOR = {jnp.int8: jnp.int32, np.int8: jnp.float32}\nACC = ACC_FOR[DT]\n",
         "ACC", ["MMA101"]),
        ("DT = jnp.int8\nACC = {jnp.int8: jnp.float32}.get(DT, jnp.int32)\n", "ACC", ["MMA101"]),
        ("DT = jnp.int8\nACC = {jnp.dtype('int8'): jnp.float32}.get(DT, jnp.int32)\n", "ACC", []),
        ("DT = jnp.int8\nACC = jnp.float32 if DT in {jnp.int8: 1}.keys() else jnp.int32\n", "ACC", ["MMA101"]),
        ("DT = jnp.int8\nACC = jnp.float32 if DT in {jnp.float16: 1} else jnp.int32\n", "ACC", []),
        ("DT = jnp.int8\nACC = [v for k, v in {jnp.int8: jnp.float32}.items() if k == DT][0]\n", "ACC",
         ["MMA101"]),
        ("DT = jnp.int8\nACC = {d: jnp.float32 for d in (jnp.int8, jnp.uint8)}[DT]\n", "ACC", ["MMA101"]),
        ("DT = jnp.int8\nACC = dict({jnp.int8: jnp.float32})[DT]\n", "ACC", ["MMA101"]),
        # Merged tables: the right one's entry wins.
        ("DT = jnp.int8\nACC = ({jnp.float16: jnp.float32} | {jnp.int8: jnp.float32})[DT]\n", "ACC", ["MMA101"]),
        ("DT = jnp.int8\nACC = ({jnp.int8: jnp.float32} | {jnp.int8: jnp.int32})[DT]\n", "ACC", []),
        ("DT = jnp.int8\nACC = ({'x': 1} | {jnp.int8: jnp.float32})[DT]\n", "ACC", ["MMA101"]),
        # A dtype's `.type` is a scalar type, `jnp.int8.dtype` and jax's promotions dtype objects.
        ("DT = jnp.int8\nACC = jnp.int32 if jnp.dtype(DT).type in {jnp.int8} else jnp.float32\n", "ACC", []),
        ("DT = jnp.int8\nACC = jnp.float32 if DT.dtype in {jnp.int8} else jnp.int32\n", "ACC", []),
        ("DT = jnp.int8\nACC = jnp.float32 if jnp.result_type(DT) in {jnp.int8: 1} else jnp.int32\n", "ACC", []),
        ("DT = jnp.int8\nACC = jnp.float32 if jnp.promote_types(DT, DT) in {jnp.int8} else jnp.int32\n", "ACC", []),
        # sorted() with a key sorts by it.
        ("DT = sorted({jnp.float16, jnp.int8}, key=lambda t: jnp.dtype(t).itemsize)[0]\nACC = jnp.int32\n", "ACC", []),
        ("DT = sorted((jnp.float16, jnp.int8), key=lambda t: jnp.dtype(t).itemsize, reverse=True)[-1]\n"
         "ACC = jnp.int32\n", "ACC", []),
        # A set sorted: its distinct items (np.int8 and jnp.int8 are one key).
        ("DT = sorted({jnp.int8, np.int8})[0]\nACC = jnp.float32\n", "ACC", ["MMA101"]),

        ("DT = jnp.dtype('int8')\nACC = jnp.int32 if DT.kind == 'i' else jnp.float32\n", "ACC", []),
        ("DT = jnp.dtype('int8')\nACC = jnp.int32 if DT.itemsize == 1 else jnp.float32\n", "ACC", []),
        ("DT = jnp.float8_e4m3fn\nACC = jnp.int32 if DT.itemsize == 1 else jnp.float32\n", "ACC",
         ["MMA102"]),
        ("DT = jnp.bfloat16\nACC = jnp.int32 if jnp.issubdtype(DT, jnp.integer) else DT\n", "ACC",
         ["MMA102"]),
        # set comparisons, a set's length (its distinct items), a product with itself (a
        # blind held-out case's pair filter: `{lhs, rhs} <= _FP8` over `product(C, repeat=2)`)
        ("FP8 = (jnp.float8_e4m3fn, jnp.float8_e5m2)\n_FP8 = frozenset(jnp.dtype(d) for d in FP8)\n"
         "def ok(lhs, rhs):\n  return {jnp.dtype(lhs), jnp.dtype(rhs)} <= _FP8\n"
         "DT = jnp.int8\nACC = jnp.float32 if ok(*FP8) else jnp.int32\n", "ACC", ["MMA101"]),
        ("DT = jnp.int8\nACC = jnp.float32 if {1, 3} <= {1, 2} else jnp.int32\n", "ACC", []),
        ("DT = jnp.int8\nACC = jnp.float32 if {1, 2} < {1, 2} else jnp.int32\n", "ACC", []),
        ("DT = jnp.int8\nACC = jnp.float32 if {1, 2, 3} > {2, 1} >= {1} else jnp.int32\n", "ACC", ["MMA101"]),
        ("DT = jnp.int8\nACC = jnp.float32 if len({jnp.int8, np.int8, jnp.int4}) == 2 else jnp.int32\n", "ACC",
         ["MMA101"]),
        ("import itertools\nDT = jnp.int8\nACC = list(itertools.product((jnp.int32, jnp.float32), repeat=2))[1][1]\n",
         "ACC", ["MMA101"]),
        ("import itertools\nDT = jnp.int8\nACC = list(itertools.product((jnp.int32, jnp.float32), repeat=2))[2][1]\n",
         "ACC", []),
    ],
)
def test_module_level_assignments_and_conditionals(prelude: str, acc: str, expect: list[str]) -> None:
    check(_pallas(prelude, acc), expect, target_jax=V)


@pytest.mark.parametrize(
    ("setup", "expect"),
    [
        # if/else statement
        ("  if jnp.issubdtype(a_ref.dtype, jnp.integer):\n    acc_t = jnp.int32\n"
         "  else:\n    acc_t = jnp.float32\n", []),
        # if without else overwriting a default
        ("  acc_t = jnp.float32\n  if a_ref.dtype == jnp.int8:\n    acc_t = jnp.int32\n", []),
        # the wrong default survives when the test does not match
        ("  acc_t = jnp.float32\n  if a_ref.dtype == jnp.uint8:\n    acc_t = jnp.int32\n", ["MMA101"]),
        # elif chain
        ("  dt = a_ref.dtype\n  if dt == jnp.bfloat16:\n    acc_t = jnp.float32\n"
         "  elif dt == jnp.float16:\n    acc_t = jnp.float16\n  else:\n    acc_t = jnp.int32\n", []),
        # walrus
        ("  if (dt := a_ref.dtype) == jnp.int8:\n    acc_t = jnp.int32\n  else:\n    acc_t = dt\n", []),
        # boolean operators
        ("  is_int = jnp.issubdtype(a_ref.dtype, jnp.integer) and a_ref.dtype.itemsize == 1\n"
         "  acc_t = jnp.int32 if is_int else jnp.float32\n", []),
        ("  wide = a_ref.dtype == jnp.float16 or a_ref.dtype == jnp.bfloat16\n"
         "  acc_t = jnp.float32 if wide else jnp.float16\n", ["MMA101"]),
        # a table filled in the kernel, and looked up by the ref's dtype (a dtype object)
        ("  table = {}\n  table[jnp.int8] = jnp.float32\n  acc_t = table[DT]\n", ["MMA101"]),
        ("  acc_t = {jnp.int8: jnp.float32}.get(a_ref.dtype, jnp.int32)\n", []),
        ("  acc_t = {jnp.dtype(jnp.int8): jnp.float32}.get(a_ref.dtype, jnp.int32)\n", ["MMA101"]),
        # filled by a list's append/extend, a dict's update and setdefault, run for certain
        ("  accs = []\n  accs.append(jnp.float32)\n  acc_t = accs[0]\n", ["MMA101"]),
        ("  accs = [jnp.int32]\n  accs.extend((jnp.float32,))\n  acc_t = accs[-1]\n", ["MMA101"]),
        ("  table = {jnp.int8: jnp.int32}\n  table.update({jnp.int8: jnp.float32})\n  acc_t = table[DT]\n", ["MMA101"]),
        ("  cfg = {'acc': jnp.int32}\n  cfg.update({'acc': jnp.float32})\n  acc_t = cfg['acc']\n", ["MMA101"]),
        ("  table = {jnp.int8: jnp.int32}\n  table.setdefault(jnp.int8, jnp.float32)\n  acc_t = table[DT]\n", []),
        ("  table = {}\n  table.setdefault(jnp.int8, jnp.float32)\n  acc_t = table[DT]\n", ["MMA101"]),
        # tables built by dict() from pairs, and by dict.fromkeys
        ("  acc_t = dict(zip((jnp.float16, jnp.int8), (jnp.float32, jnp.float32)))[DT]\n", ["MMA101"]),
        ("  acc_t = dict(zip((jnp.float16, jnp.int8), (jnp.float32, jnp.int32)))[DT]\n", []),
        ("  acc_t = dict([(jnp.int8, jnp.float32)], wide=jnp.float32)[DT]\n", ["MMA101"]),
        ("  acc_t = dict.fromkeys((jnp.int8, jnp.int4), jnp.float32)[DT]\n", ["MMA101"]),
        ("  acc_t = dict.fromkeys([jnp.int8], jnp.int32).get(DT, jnp.float32)\n", []),
    ],
)
def test_branches_inside_the_kernel(setup: str, expect: list[str]) -> None:
    code = _pallas("DT = jnp.int8\n", "acc_t", setup=setup)
    check(code, expect, target_jax=V)


@pytest.mark.parametrize(
    ("prelude", "setup"),
    [
        # A method that changes a table forgets it (a fill under a branch that may not run too).
        ("", "  table = {jnp.int8: jnp.int32}\n  table.clear()\n  acc_t = table.get(DT, jnp.float32)\n"),
        ("", "  accs = [jnp.int32]\n  if jax.process_index() == 0:\n    accs.append(jnp.float32)\n  acc_t = accs[-1]\n"),
        ("", "  table = {jnp.int8: jnp.int32}\n  table.update(o_ref)\n  acc_t = table[DT]\n"),
        # Found by a second review (real Python: int32 each): a fill that is part of an
        # expression Python may not evaluate (`c and l.append(x)`, a generator), on an object
        # that is not a name of the frame (`d["k"].append`: the list a name holds that equals
        # it is not that list), in a `try` or
        # `with` body (`contextlib.suppress`), on a parameter's shared default, under `if
        # TYPE_CHECKING`.
        ("", "  accs = [jnp.int32]\n  jax.process_index() == 1 and accs.append(jnp.float32)\n  acc_t = accs[-1]\n"),
        ("", "  accs = [jnp.int32]\n  gen = (accs.append(jnp.float32) for _ in range(1))\n  acc_t = accs[-1]\n"),
        ("", "  accs = [jnp.int32]\n  box = {'k': [jnp.int32]}\n  box['k'].append(jnp.float32)\n  acc_t = accs[-1]\n"),
        ("", "  import contextlib\n  accs = [jnp.int32]\n  with contextlib.suppress(KeyError):\n"
             "    {}['x']\n    accs.append(jnp.float32)\n  acc_t = accs[-1]\n"),
        ("def pick(dt, seen=[]):\n  seen.append(dt)\n  return seen[0]\npick(jnp.int32)\n",
         "  acc_t = pick(jnp.float32)\n"),
        ("import typing\n", "  accs = [jnp.int32]\n  if typing.TYPE_CHECKING:\n    accs.append(jnp.float32)\n  acc_t = accs[-1]\n"),
        ("", "  keys = {jnp.float16}\n  keys.add(jnp.int8)\n  acc_t = jnp.float32 if DT in keys else jnp.int32\n"),
        # Keys whose sameness is not decided: the table is not known.
        ("", "  table = {o_ref: jnp.int32, jnp.int8: jnp.float32}\n  acc_t = table[DT]\n"),
        # Changed in place through another name, a callee, a container or a view: the
        # interpreter keeps containers as values, so every holder is forgotten (a copy that
        # its name alone holds: `test_a_copy_changed_leaves_the_table_it_copied`).
        ("", "  m = {jnp.int8: jnp.int32}\n  c = {jnp.int8: jnp.int32}\n  alias = c\n  c[jnp.int8] = jnp.float32\n"
             "  acc_t = m[DT]\n"),
        ("", "  a = {jnp.int8: jnp.float32}\n  b = a\n  b |= {jnp.int8: jnp.int32}\n  acc_t = a[DT]\n"),
        ("", "  ints = {jnp.int4}\n  alias = ints\n  alias |= {jnp.int8}\n"
             "  acc_t = jnp.int32 if DT in ints else jnp.float32\n"),
        ("def fix(t):\n  t[jnp.int8] = jnp.int32\n",
         "  t = {jnp.int8: jnp.float32}\n  fix(t)\n  acc_t = t[DT]\n"),
        ("", "  t = {jnp.int8: jnp.float32}\n  box = {'t': t}\n  t[jnp.int8] = jnp.int32\n  acc_t = box['t'][DT]\n"),
        ("", "  t = {jnp.float16: jnp.float32}\n  ks = t.keys()\n  t[jnp.int8] = jnp.int32\n"
             "  acc_t = jnp.int32 if DT in ks else jnp.float32\n"),
        ("", "  t = {jnp.int8: jnp.float32, jnp.float16: jnp.float32}\n  del t[jnp.int8]\n"
             "  acc_t = t.get(DT, jnp.int32)\n"),
        # Pairs zipped from a set: which key gets which value is Python's set order.
        ("", "  acc_t = dict(zip({jnp.int8, jnp.float16}, (jnp.int32, jnp.float32)))[DT]\n"),
        # dict.fromkeys shares its one list among the keys: a change through one is the other's
        # (found by review).
        ("", "  t = dict.fromkeys((jnp.int8, jnp.float16), [])\n  t[jnp.float16].append(jnp.int32)\n"
             "  acc_t = t[DT][0] if t[DT] else jnp.float32\n"),
        ("T = dict.fromkeys((jnp.int8, jnp.float16), [])\nT[jnp.float16].append(jnp.int32)\n",
         "  acc_t = T[DT][0] if T[DT] else jnp.float32\n"),
        # One list two keys hold, changed in place through one of them (an item's method, or a
        # store into an item of an item): the module's table is unknown, as a local one is.
        ("L = []\nT = {jnp.int8: L, jnp.float16: L}\nT[jnp.float16].append(jnp.int32)\n",
         "  acc_t = T[DT][0] if T[DT] else jnp.float32\n"),
        ("L = [jnp.float32]\nT = dict(zip((jnp.int8, jnp.float16), (L, L)))\nT[jnp.float16][0] = jnp.int32\n",
         "  acc_t = T[DT][0]\n"),
        ("", "  l = []\n  t = {jnp.int8: l, jnp.float16: l}\n  t[jnp.float16].append(jnp.int32)\n"
             "  acc_t = t[DT][0] if t[DT] else jnp.float32\n"),
        # A module-level table changed in a function (when is not known), or handed on under
        # another name (`f(T)`, `U = T`: changed there, unseen).
        ("ACC_FOR = {jnp.int8: jnp.int32}\ndef spoil():\n  ACC_FOR[jnp.int8] = jnp.float32\n", "  acc_t = ACC_FOR[DT]\n"),
        ("ACC_FOR = {jnp.int8: jnp.float16}\nACC_FOR[jnp.int8] = jnp.int32\nregister(ACC_FOR)\n", "  acc_t = ACC_FOR[DT]\n"),
        # A module-level set changed by a set's own methods (the mutation scan's words were
        # the list and dict methods and `add`/`discard` only; the interpreter forgets it).
        ("FLOATS = {jnp.int8, jnp.float16}\nFLOATS.difference_update({jnp.int8})\n",
         "  acc_t = jnp.float32 if DT in FLOATS else jnp.int32\n"),
        ("FLOATS = {jnp.int8, jnp.float16}\nFLOATS.intersection_update({jnp.float16})\n",
         "  acc_t = jnp.float32 if DT in FLOATS else jnp.int32\n"),
    ],
)
def test_tables_that_change_or_are_undecided_are_unknown(prelude: str, setup: str) -> None:
    # (In Python each accumulator here is int32: reported, a stale table is a false positive.)
    report = check(_pallas("DT = jnp.int8\n" + prelude, "acc_t", setup=setup), [], target_jax=V, known=False)
    assert report.calls == 1 and report.known_calls == 0


@pytest.mark.parametrize("copy", ["{jnp.int8: jnp.float32}", "dict(m)", "m.copy()", "{**m}"])
@pytest.mark.parametrize(("table", "expect"), [("jnp.int32", []), ("jnp.float32", ["MMA101"])])
def test_a_copy_changed_leaves_the_table_it_copied(copy: str, table: str, expect: list[str]) -> None:
    # A new container only its name holds (`scopes.owns_its_container`) changes alone: the
    # table keeps its accumulator, known (every equal holder was forgotten before).
    setup = f"  m = {{jnp.int8: {table}}}\n  c = {copy}\n  c[jnp.int8] = jnp.bfloat16\n  acc_t = m[DT]\n"
    check(_pallas("DT = jnp.int8\n", "acc_t", setup=setup), expect, target_jax=V)


# A module-level table the kernel reads (`ACC["i8"]`, float32 for int8 operands: MMA101 as it
# stands), changed in place under another name: each leaves int32 there in Python, so a finding
# is a false positive. Before, each was reported (the interpreter took the table as its literal).
_TABLE = 'ACC = {"i8": jnp.float32}\n'
_TABLES = 'ACCS = [{"i8": jnp.float32}]\n'  # a list of tables: one changed through an item


@pytest.mark.parametrize(
    ("prelude", "acc"),
    [(_TABLE + change, 'ACC["i8"]') for change in (
        'T = ACC\nT["i8"] = jnp.int32\n',
        'T, U = ACC, 1\nT["i8"] = jnp.int32\n',
        'def fix(d):\n  d["i8"] = jnp.int32\nfix(ACC)\n',
        'HOLDER = [ACC]\nHOLDER[0]["i8"] = jnp.int32\n',
        'HOLDER = {"acc": ACC}\nHOLDER["acc"]["i8"] = jnp.int32\n',
        'for d in [ACC]:\n  d["i8"] = jnp.int32\n',
        '(lambda d: d.update(i8=jnp.int32))(ACC)\n',
        'import types\nNS = types.SimpleNamespace(acc=ACC)\nNS.acc["i8"] = jnp.int32\n',
        # Reached by a string: no use of the name says so.
        'globals()["ACC"]["i8"] = jnp.int32\n',
        'vars()["ACC"]["i8"] = jnp.int32\n',
        'import sys\nsys.modules[__name__].ACC["i8"] = jnp.int32\n',
        'T = ACC if M else {}\nT["i8"] = jnp.int32\n',
        'T = ACC or {}\nT["i8"] = jnp.int32\n',
        'if (T := ACC):\n  T["i8"] = jnp.int32\n',
        'def f(d=ACC):\n  d["i8"] = jnp.int32\nf()\n',
        'class C:\n  table = ACC\nC.table["i8"] = jnp.int32\n',
        'x = [ACC][0]\nx["i8"] = jnp.int32\n',
        'T = {"k": ACC}.get("k")\nT["i8"] = jnp.int32\n',
        'def g():\n  return ACC\ng()["i8"] = jnp.int32\n',
        'T = dict.setdefault({}, "k", ACC)\nT["i8"] = jnp.int32\n',
        'T = zip([ACC])\nnext(T)[0]["i8"] = jnp.int32\n',
        'T = list(zip([ACC]))[0][0]\nT["i8"] = jnp.int32\n',
        'T = (ACC,)\nT[0]["i8"] = jnp.int32\n',
        'T = [*[ACC]]\nT[0]["i8"] = jnp.int32\n',
    )] + [(_TABLES + change, 'ACCS[0]["i8"]') for change in (
        'x = ACCS[0]\nx["i8"] = jnp.int32\n',
        'for x in ACCS:\n  x["i8"] = jnp.int32\n',
        'list(ACCS)[0]["i8"] = jnp.int32\n',
        'x, = ACCS\nx["i8"] = jnp.int32\n',
        'T = zip(ACCS)\nnext(T)[0]["i8"] = jnp.int32\n',
        'def f(*ds):\n  ds[0]["i8"] = jnp.int32\nf(*ACCS)\n',
    )],
)
def test_a_table_changed_under_another_name_is_unknown(prelude: str, acc: str) -> None:
    report = check(_pallas("DT = jnp.int8\n" + prelude, acc), [], target_jax=V, known=False)
    assert report.calls == 1 and report.known_calls == 0


# An object of a class of the module whose attribute the kernel reads (float32 for int8
# operands), changed under another name or by a method: int32 in Python (each was MMA101).
_OBJECT = (
    "class Cfg:\n  def __init__(self):\n    self.acc = jnp.float32\n    self.names = ['a']\n"
    "  def use_int(self):\n    self.acc = jnp.int32\n\nCONFIG = Cfg()\n"
)


@pytest.mark.parametrize(
    "change",
    [
        "cfg = CONFIG\ncfg.acc = jnp.int32\n",
        "def fix(c):\n  c.acc = jnp.int32\nfix(CONFIG)\n",
        "for c in [CONFIG]:\n  c.acc = jnp.int32\n",
        "H = {'c': CONFIG}\nH['c'].acc = jnp.int32\n",
        "vars(CONFIG)['acc'] = jnp.int32\n",
        "CONFIG.__dict__['acc'] = jnp.int32\n",
        "globals()['CONFIG'].acc = jnp.int32\n",
        "def fix():\n  c = CONFIG\n  c.acc = jnp.int32\nfix()\n",
        "CONFIG.use_int()\n",
        "fix = CONFIG.use_int\nfix()\n",  # the method, bound to it
        "object.__setattr__(CONFIG, 'acc', jnp.int32)\n",
    ],
)
def test_an_object_changed_under_another_name_is_unknown(change: str) -> None:
    report = check(_pallas("DT = jnp.int8\n" + _OBJECT + change, "CONFIG.acc"), [], target_jax=V, known=False)
    assert report.calls == 1 and report.known_calls == 0


@pytest.mark.parametrize(
    "use",
    ["", "print(CONFIG.acc)\nX = CONFIG.acc\n", "c = CONFIG\nprint(c.acc)\n",
     "if CONFIG.acc == jnp.float32:\n  pass\n", "Y = [CONFIG.acc]\nZ = len(CONFIG.names)\n"],
)
def test_an_object_only_read_keeps_its_attributes(use: str) -> None:
    check(_pallas("DT = jnp.int8\n" + _OBJECT + use, "CONFIG.acc"), ["MMA101"], target_jax=V)


_MADE = "class Cfg:\n  def __init__(self):\n    self.acc = jnp.float32\n\n\n_REG = {}\n\n\n"


@pytest.mark.parametrize(
    ("made", "expect"),
    [
        # A function that keeps what it returns in a global (a registry), changed through it.
        ("def register(name, cfg):\n  _REG[name] = cfg\n  return cfg\n\n\nCONFIG = register('k', Cfg())\n"
         "_REG['k'].acc = jnp.int32\n", []),
        # A factory that keeps nothing: what it made is read.
        ("def make():\n  return Cfg()\n\n\nCONFIG = make()\n", ["MMA101"]),
    ],
)
def test_an_object_a_function_made_and_kept(made: str, expect: list[str]) -> None:
    check(_pallas("DT = jnp.int8\n" + _MADE + made, "CONFIG.acc"), expect, target_jax=V, known=bool(expect))


_FROZEN = "@dataclasses.dataclass(frozen=True)\nclass Cfg:\n  acc: object = jnp.float32\n\nCONFIG = Cfg()\n"


@pytest.mark.parametrize(
    ("use", "expect"),
    [
        # A frozen dataclass's object handed on keeps its attributes (round4b's config picker).
        ("def pick():\n  return CONFIG\nX = pick()\nY = dataclasses.replace(CONFIG, acc=jnp.int32)\n", ["MMA101"]),
        # ... unless the module sets one by `object.__setattr__`.
        ("def f(c):\n  object.__setattr__(c, 'acc', jnp.int32)\nf(CONFIG)\n", []),
    ],
)
def test_a_frozen_object_handed_on(use: str, expect: list[str]) -> None:
    check(_pallas("DT = jnp.int8\n" + _FROZEN + use, "CONFIG.acc"), expect, target_jax=V, known=bool(expect))


@pytest.mark.parametrize(
    ("prelude", "acc"),
    [(_TABLE + use, 'ACC["i8"]') for use in (
        "",
        "for _k in ACC:\n  print(_k, len(ACC))\n",
        "SWEEP = list(zip(ACC, ACC.values()))\n",
        "ACC_T = ACC['i8'] if 'i8' in ACC else None\n",
    )] + [
        (_TABLES, 'ACCS[0]["i8"]'),
        (_TABLES + "NAMES = [k for k in ACCS[0]]\nFIRST = ACCS[0]['i8']\n", 'ACCS[0]["i8"]'),
        # Lists of dtypes a sweep reads: zipped, or handed to a case generator by keyword.
        ('DTS = [jnp.float32]\nSWEEP = list(zip(DTS, DTS))\n', "DTS[0]"),
        ('DTS = [jnp.float32]\nCASES = jtu.sample_product(dtype=DTS, n=[1])\n', "DTS[0]"),
        ('DTS = [jnp.float32]\nCASES = itertools.product(DTS, *DTS, repeat=2)\n', "DTS[0]"),
    ],
)
def test_a_table_only_read_keeps_its_literal(prelude: str, acc: str) -> None:
    # The same tables read, not handed on: the finding stands.
    check(_pallas("DT = jnp.int8\n" + prelude, acc), ["MMA101"], target_jax=V)


@pytest.mark.parametrize(
    ("prelude", "acc", "expect"),
    [
        # A table filled by module-level statements, read after import (by the kernel the
        # module launches at its end): as the statements, in order, leave it.
        ("ACC_FOR = {}\nfor _dt in (jnp.float16, jnp.int8):\n  ACC_FOR[_dt] = jnp.float32\n", "ACC_FOR[DT]", ["MMA101"]),
        ("ACC_FOR = {jnp.int8: jnp.int32}\nACC_FOR[jnp.int8] = jnp.float32\n", "ACC_FOR[DT]", ["MMA101"]),
        ("CONFIG = {'acc': jnp.int32}\nCONFIG.update(acc=jnp.float32)\n", "CONFIG['acc']", ["MMA101"]),
        ("ACC_FOR = {jnp.float16: jnp.float32}\nACC_FOR |= {jnp.int8: jnp.float32}\n", "ACC_FOR[DT]", ["MMA101"]),
        # Filled from another table, which is only read so.
        ("DEFAULTS = {jnp.int8: jnp.float32}\nACC_FOR = {}\nACC_FOR[jnp.int8] = jnp.int32\nACC_FOR.update(DEFAULTS)\n",
         "ACC_FOR[DT]", ["MMA101"]),
        # A list's `insert`, at either end and past it (Python's clamp).
        ("ACCS = [jnp.int32]\nACCS.insert(0, jnp.float32)\n", "ACCS[0]", ["MMA101"]),
        ("ACCS = [jnp.float32]\nACCS.insert(-1, jnp.int32)\n", "ACCS[0]", []),
        ("ACCS = [jnp.int32]\nACCS.insert(9, jnp.float32)\n", "ACCS[-1]", ["MMA101"]),
        # ... and clean where the last word is right.
        ("ACC_FOR = {}\nACC_FOR[jnp.int8] = jnp.float32\nACC_FOR[jnp.int8] = jnp.int32\n", "ACC_FOR[DT]", []),
        # The module launches the kernel at its end: code that ran between the statements
        # does not matter to what it reads then.
        ("ACC_FOR = {}\nACC_FOR[jnp.int8] = jnp.int32\nwarm_up()\nACC_FOR[jnp.float16] = jnp.float32\n",
         "ACC_FOR[DT]", []),
        # A module-level read sees the table as the statements above it leave it.
        ("ACC_FOR = {jnp.int8: jnp.int32}\nACC = ACC_FOR[jnp.int8]\nACC_FOR[jnp.int8] = jnp.float32\n", "ACC", []),
        ("ACC_FOR = {jnp.int8: jnp.int32}\nACC_FOR[jnp.int8] = jnp.float32\nACC = ACC_FOR[jnp.int8]\n", "ACC", ["MMA101"]),
        # Two tables bound to equal literals are two objects: a store into one leaves the
        # other (blind heldout30 case15: both were forgotten, as names that may hold one).
        ("OTHER = {}\nACC_FOR = {}\nfor _dt in (jnp.float16, jnp.int8):\n  OTHER[_dt] = 1\n  ACC_FOR[_dt] = jnp.float32\n",
         "ACC_FOR[DT]", ["MMA101"]),
    ],
)
def test_a_table_filled_at_import_is_what_the_module_leaves(prelude: str, acc: str, expect: list[str]) -> None:
    report = check(_pallas("DT = jnp.int8\n" + prelude, acc), expect, target_jax=V, known=False)
    assert report.calls == 1 and report.known_calls == 1


@pytest.mark.parametrize("prelude", [
    "ACC_FOR = OTHER = {}\nACC_FOR[jnp.int8] = jnp.float32\nOTHER[jnp.int8] = jnp.int32\n",
    "OTHER = {}\nACC_FOR = OTHER\nACC_FOR[jnp.int8] = jnp.float32\nOTHER[jnp.int8] = jnp.int32\n",
])
def test_one_table_under_two_names_is_changed_through_either(prelude: str) -> None:
    # int32 in Python (one dict): never the float32 the first store left.
    check(_pallas("DT = jnp.int8\n" + prelude, "ACC_FOR[DT]"), [], target_jax=V, known=False)


def test_helper_function_chooses_the_accumulator() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def accumulator_dtype(dtype):
      if jnp.issubdtype(dtype, jnp.integer):
        return jnp.int32
      return jnp.float32


    def zero_acc(shape, operand_dtype):
      acc = jnp.zeros(shape, accumulator_dtype(operand_dtype))
      return plgpu.layout_cast(acc, plgpu.Layout.MMA_ACC(operand_dtype))


    def mma_tile(a_ref, b_ref, operand_dtype):
      a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(operand_dtype))
      b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(operand_dtype))
      return plgpu.mma(zero_acc((a_ref.shape[0], b_ref.shape[0]), operand_dtype), a, b)


    def body(a_ref, b_ref, o_ref):
      o_ref[...] = mma_tile(a_ref, b_ref, a_ref.dtype).astype(o_ref.dtype)


    for dt in (jnp.int8, jnp.float16, jnp.float8_e5m2):
      plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 64), jnp.float32))(
          jnp.zeros((128, 64), dt), jnp.zeros((64, 64), dt))
    '''
    check(code, [], target_jax=V)
    buggy = code.replace("return jnp.int32\n", "return jnp.int16\n")
    report = check(buggy, ["MMA101"], target_jax=V)
    diag = only(report, "MMA101")
    assert diag["world"] == {"dt": "jnp.int8"}
    assert diag["predicted_error"]["message"].endswith("Got int16")


def test_early_return_helper() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils
    from jaxlib.mlir import ir


    def acc_type(operand_type):
      if ir.IntegerType.isinstance(operand_type):
        return ir.IntegerType.get_signless(32), True
      return ir.F32Type.get(), None


    def kernel(ctx, a_ref, b_ref, out_ref, smem):
      t = utils.dtype_to_ir_type(a_ref_dtype)
      lay = mgpu.MMALayouts(t)
      a = mgpu.FragmentedArray.load_untiled(a_ref, layout=lay.lhs, is_signed=SIGNED, optimized=False)
      b = mgpu.FragmentedArray.load_untiled(utils.memref_transpose(b_ref, (1, 0)), layout=lay.rhs, is_signed=SIGNED, optimized=False)
      acc_t, acc_signed = acc_type(t)
      zero = utils.c(0, acc_t) if acc_signed else utils.c(0.0, acc_t)
      acc = mgpu.FragmentedArray.splat(zero, (64, 64), layout=lay.acc, is_signed=acc_signed)
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)


    a_ref_dtype = {dtype}
    SIGNED = utils.is_signed(a_ref_dtype)
    f = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((64, 64), a_ref_dtype), jax.ShapeDtypeStruct((64, 64), a_ref_dtype)),
        jax.ShapeDtypeStruct((64, 64), jnp.float32), ())
    '''
    for dtype in ("jnp.int8", "jnp.uint8", "jnp.bfloat16", "jnp.float8_e4m3fn"):
        check(code.format(dtype=dtype), [])


def test_isinstance_integer_type_picks_is_signed() -> None:
    # `is_signed = True if isinstance(t, ir.IntegerType) else None` (jax's WGMMA tests).
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils
    from jaxlib.mlir import ir


    def tile(in_dtype):
      in_t = utils.dtype_to_ir_type(in_dtype)
      is_signed = True if isinstance(in_t, ir.IntegerType) else None
      acc_t = ir.IntegerType.get_signless(32) if is_signed else ir.F32Type.get()
      lay = mgpu.MMALayouts(in_t)
      one = utils.c(1, in_t) if is_signed else utils.c(1.0, in_t)
      a = mgpu.FragmentedArray.splat(one, (64, 32), layout=lay.lhs, is_signed=is_signed)
      b = mgpu.FragmentedArray.splat(one, (32, 64), layout=lay.rhs, is_signed=is_signed)
      zero = utils.c(0, acc_t) if is_signed else utils.c(0.0, acc_t)
      acc = mgpu.FragmentedArray.splat(zero, (64, 64), layout=lay.acc, is_signed={acc_sign})
      return mgpu.mma(acc, a, b)


    for dt in (jnp.int8, jnp.float16):
      tile(dt)
    '''
    check(code.format(acc_sign="is_signed"), [])
    report = check(code.format(acc_sign="None"), ["MMA202"])
    assert only(report, "MMA202")["world"] == {"dt": "jnp.int8"}


def test_lambda_and_default_arguments() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu

    acc_for = lambda d: jnp.int32 if jnp.issubdtype(d, jnp.integer) else jnp.float32


    def matmul(x, w, *, out_dtype=None, acc_dtype=None):
      acc_dtype = acc_dtype or acc_for(x.dtype)
      out_dtype = out_dtype or acc_dtype
      m, n = x.shape[0], w.shape[0]

      def body(x_ref, w_ref, o_ref):
        acc = plgpu.layout_cast(jnp.zeros((m, n), acc_dtype), plgpu.Layout.MMA_ACC(x.dtype))
        a = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(x.dtype))
        b = plgpu.load(w_ref.T, layout=plgpu.Layout.MMA_RHS(x.dtype))
        o_ref[...] = plgpu.mma(acc, a, b).astype(out_dtype)

      return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((m, n), out_dtype))(x, w)


    x8 = jnp.zeros((128, 64), jnp.int8)
    matmul(x8, x8[:64])
    matmul(x8, x8[:64], out_dtype=jnp.float32)
    xb = jnp.zeros((128, 64), jnp.bfloat16)
    matmul(xb, xb[:64], out_dtype=jnp.bfloat16)
    matmul(xb, xb[:64], acc_dtype=jnp.float16)
    '''
    report = check(code, ["MMA102"], target_jax=V)
    diag = only(report, "MMA102")
    assert "float16" in diag["message"]


def test_loop_carried_accumulator_over_k() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu

    TM, TN, TK = 64, 64, 32
    STEPS = 4


    def body(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(jnp.zeros((TM, TN), {acc}), plgpu.Layout.MMA_ACC(jnp.int8))
      for step in range(STEPS):
        a = plgpu.load(a_ref.at[:, pl.ds(step * TK, TK)], layout=plgpu.Layout.MMA_LHS(jnp.int8))
        b = plgpu.load(b_ref.at[:, pl.ds(step * TK, TK)].T, layout=plgpu.Layout.MMA_RHS(jnp.int8))
        acc = plgpu.mma(acc, a, b)
      o_ref[...] = acc


    f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((TM, TN), jnp.int32))
    out = f(jnp.zeros((TM, STEPS * TK), jnp.int8), jnp.zeros((TN, STEPS * TK), jnp.int8))
    '''
    check(code.format(acc="jnp.int32"), [], target_jax=V)
    report = check(code.format(acc="jnp.float32"), ["MMA101"], target_jax=V)
    # One diagnostic for the call site, however many iterations reached it.
    assert len(all_of(report, "MMA101")) == 1


# `make(acc_dtype)`: a Pallas tile of int8 operands with an accumulator of that dtype.
# A Pallas tile of int8 operands whose accumulator is `acc` of (`rows`, 64), launched at import.
INT8_TILE = '''
def kernel(a_ref, b_ref, o_ref):
  acc = plgpu.layout_cast(jnp.zeros(({rows}, 64), {acc}), plgpu.Layout.MMA_ACC(jnp.int8))
  a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(jnp.int8))
  b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.int8))
  o_ref[...] = plgpu.mma(acc, a, b)


plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((64, 64), jnp.int32))(
    jnp.zeros((64, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))
'''


@pytest.mark.parametrize(("count", "accs", "expect"), [
    # Each of a few iterations runs with its own index (heldout29 case27: a test sweeping
    # widths by `for i in range(NUM_WIDTHS)`): the third's float32 accumulator is the bug.
    (3, "(jnp.int32, jnp.int32, jnp.float32)", ["MMA101"]),
    (3, "(jnp.int32, jnp.int32, jnp.int32)", []),
    # More than MAX_RANGE_UNROLL: a loop of unknown count, its index some int, as before.
    (5, "(jnp.int32, jnp.int32, jnp.int32, jnp.int32, jnp.float32)", []),
])
def test_a_short_range_loop_runs_each_iteration(count: int, accs: str, expect: list[str]) -> None:
    code = MAKE_INT8 + f'''
COUNT = {count}
ACCS = {accs}


def test_sweep():
  for i in range(COUNT):
    make(ACCS[i])(jnp.zeros((64, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))
'''
    report = check(code, expect, target_jax=V, known=count <= 4)
    # No world of its own: the message names no index.
    assert all("when" not in d["message"] for d in all_of(report, "MMA101"))


@pytest.mark.parametrize(("body", "expect"), [
    # what a generator function yields, each yield sure to run (heldout29 case13: an
    # autotuner's candidate tiles), is iterated in turn
    ("  for acc in (jnp.int32, jnp.float32):\n    yield acc\n", ["MMA101"]),
    ("  yield jnp.int32\n  yield from (jnp.int32,)\n", []),
    ("  yield jnp.int32\n  return\n  yield jnp.float32\n", []),
    # a yield under a branch not decided, or a loop of unknown count: unknown
    ("  if os.environ.get('X'):\n    yield jnp.float32\n  yield jnp.int32\n", []),
    ("  for _ in range(int(os.environ['N'])):\n    yield jnp.float32\n", []),
])
def test_a_generator_function_gives_what_it_yields(body: str, expect: list[str]) -> None:
    code = MAKE_INT8 + f'''
def candidates():
{body}

def test_all():
  for acc_dtype in candidates():
    make(acc_dtype)(jnp.zeros((64, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))
'''
    check(code, expect, target_jax=V, known=False)


@pytest.mark.parametrize(("body", "expect", "known"), [
    # a `@contextlib.contextmanager` generator's one yield is what `with ... as` binds
    # (heldout31 case25: a scope that opens the MLIR context and yields the tile's types),
    # in a `with` or `try` of its own too
    ("  yield jnp.float32\n", ["MMA101"], True),
    ("  yield jnp.int32\n", [], True),
    ("  with open(os.devnull):\n    yield jnp.float32\n", ["MMA101"], True),
    ("  try:\n    yield jnp.float32\n  finally:\n    print('done')\n", ["MMA101"], True),
    ("  try:\n    yield jnp.int32\n  finally:\n    print('done')\n", [], True),
    # a yield under a branch not decided, or two: unknown
    ("  if os.environ.get('X'):\n    yield jnp.float32\n  else:\n    yield jnp.int32\n", [], False),
    ("  try:\n    yield jnp.int32\n  except ValueError:\n    yield jnp.float32\n", [], False),
])
def test_a_context_manager_function_gives_with_what_it_yields(body: str, expect: list[str], known: bool) -> None:
    code = MAKE_INT8 + f'''
import contextlib


@contextlib.contextmanager
def accumulating():
{body}

def test_it():
  with accumulating() as acc_dtype:
    make(acc_dtype)(jnp.zeros((64, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))
'''
    check(code, expect, target_jax=V, known=known)


def test_a_context_manager_method_is_unknown() -> None:
    # a method's generator is bound to its object: not read here
    code = MAKE_INT8 + '''
from contextlib import contextmanager


class Scope:
  @contextmanager
  def accumulating(self):
    yield jnp.float32


def test_it():
  with Scope().accumulating() as acc_dtype:
    make(acc_dtype)(jnp.zeros((64, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))
'''
    check(code, [], target_jax=V, known=False)


def test_a_generator_yielding_in_a_with_is_still_unknown_when_iterated() -> None:
    # only a context manager's yield counts under its own `with`: a plain generator's
    # iteration may stop where the `with` swallows a raise
    code = MAKE_INT8 + '''
def candidates():
  with open(os.devnull):
    yield jnp.float32


def test_all():
  for acc_dtype in candidates():
    make(acc_dtype)(jnp.zeros((64, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))
'''
    check(code, [], target_jax=V, known=False)


@pytest.mark.parametrize(("made", "expect", "known"), [
    # `collections.namedtuple` with defaults: an object holds what it was given, then the
    # defaults (heldout32 case09)
    ('Spec("int8")', ["MMA101"], True),
    ('Spec("int8", "int32")', [], True),
    ('Spec("int8", acc="int32")', [], True),
    ('SPECS["s8"]', ["MMA101"], True),
    # a field with no default not given (Python: TypeError), fields not known: unknown
    ('Bare("int8")', [], False),
    ('collections.namedtuple("X", FIELDS)("int8", "float32")', [], False),
])
def test_a_namedtuple_of_collections(made: str, expect: list[str], known: bool) -> None:
    code = MAKE_INT8 + f'''
import collections

Spec = collections.namedtuple("Spec", "operand acc", defaults=("float32",))
Bare = collections.namedtuple("Bare", ["operand", "acc"])
SPECS = {{"s8": Spec("int8")}}


def test_it():
  spec = {made}
  make(getattr(jnp, spec.acc))(jnp.zeros((64, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))
'''
    check(code, expect, target_jax=V, known=known)


@pytest.mark.parametrize(("pick", "expect", "known"), [
    # a table of selectors (heldout32 case19)
    ('operator.attrgetter("dtypes.acc")', ["MMA101"], True),
    ('operator.attrgetter("dtypes.good")', [], True),
    ('lambda p: operator.itemgetter("acc")(p.table)', ["MMA101"], True),
    # several attributes (a tuple), a name not constant: unknown
    ('operator.attrgetter("dtypes.acc", "dtypes.good")', [], False),
    ('operator.attrgetter(os.environ["FIELD"])', [], False),
])
def test_attrgetter_and_itemgetter(pick: str, expect: list[str], known: bool) -> None:
    code = MAKE_INT8 + f'''
import operator


class Dtypes:
  def __init__(self):
    self.acc = jnp.float32
    self.good = jnp.int32


class Plan:
  def __init__(self):
    self.dtypes = Dtypes()
    self.table = {{"acc": jnp.float32}}


SELECT = {{"acc": {pick}}}


def test_it():
  acc = SELECT["acc"](Plan())
  make(acc)(jnp.zeros((64, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))
'''
    check(code, expect, target_jax=V, known=known)


@pytest.mark.parametrize(("call", "expect"), [
    # a script run as written has no arguments: `argv[1:] or DEFAULT` is the default
    ("main(sys.argv)", ["MMA101"]),
    ("main(sys.argv[:1] + ['int32'])", []),
])
def test_a_scripts_argv(call: str, expect: list[str]) -> None:
    code = MAKE_INT8 + f'''
import sys


def main(argv):
  for name in argv[1:] or ["float32"]:
    make(getattr(jnp, name))(jnp.zeros((64, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))


if __name__ == "__main__":
  {call}
'''
    check(code, expect, target_jax=V)


@pytest.mark.parametrize(("table", "expect", "known"), [
    # a config exported into the module as JSON or TOML text (heldout32 case11)
    ("json.loads('{\"int8\": {\"acc\": \"float32\"}}')", ["MMA101"], True),
    ("json.loads('{\"int8\": {\"acc\": \"int32\"}}')", [], True),
    ("tomllib.loads('[int8]\\nacc = \"float32\"\\n')", ["MMA101"], True),
    # not JSON (Python raises), or text not known: unknown
    ("json.loads('{int8: float32}')", [], False),
    ("json.loads(open('c.json').read())", [], False),
])
def test_a_config_parsed_from_constant_text(table: str, expect: list[str], known: bool) -> None:
    code = MAKE_INT8 + f'''
import json
import tomllib


def test_it():
  acc = {table}["int8"]["acc"]
  make(getattr(jnp, acc))(jnp.zeros((64, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))
'''
    check(code, expect, target_jax=V, known=known)


@pytest.mark.parametrize(("kinds", "expect", "known"), [
    # `typing.get_args` of a `Literal` of constants: the kinds a test sweeps (heldout30 case01)
    ('Literal["int32", "float32"]', ["MMA101"], True),
    ('typing.Literal["int32"]', [], True),
    # not constants, or not a Literal: unknown
    ('Literal["int32", os.environ["KIND"]]', [], False),
    ('Union["int32", "float32"]', [], False),
])
def test_get_args_of_a_literal_gives_its_values(kinds: str, expect: list[str], known: bool) -> None:
    code = MAKE_INT8 + f'''
import typing
from typing import Literal, Union, get_args

import pytest

Kind = {kinds}


@pytest.mark.parametrize("acc", get_args(Kind))
def test_each(acc):
  make(getattr(jnp, acc))(jnp.zeros((64, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))
'''
    check(code, expect, target_jax=V, known=known)


@pytest.mark.parametrize(("name", "expect", "known"), [
    # an f-string of constants is the text it makes (heldout30 case27: `getattr(ir, f"F{bits}Type")`)
    ('f"float{BITS}"', ["MMA101"], True),
    ('f"int{BITS}"', [], True),
    ('f"{{int}}{BITS}"[2:]', [], False),  # `{{` is a brace: "int}32"[2:]... not a dtype name
    # a format spec, a conversion or a field that is no plain constant: unknown
    ('f"float{BITS:d}"', [], False),
    ('f"float{BITS!s}"', [], False),
    ('f"float{SIZES}"', [], False),
])
def test_an_f_string_of_constants_is_its_text(name: str, expect: list[str], known: bool) -> None:
    code = '''
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

BITS = 32
SIZES = (32,)


''' + INT8_TILE.format(rows="64", acc=f"getattr(jnp, {name})")
    check(code, expect, target_jax=V, known=known)


@pytest.mark.parametrize(("make", "expect", "known"), [
    # `_replace` of a NamedTuple's object is a new object with those fields (heldout30 case05)
    ("Spec('int32')._replace(acc='float32')", ["MMA101"], True),
    ("Spec('float32')._replace(acc='int32')", [], True),
    # the object itself is unchanged: `_replace`'s result dropped
    ("_dropped(Spec('float32'))", ["MMA101"], True),
    # a field the class does not have (Python: ValueError): unknown
    ("Spec('int32')._replace(other='float32')", [], False),
])
def test_a_namedtuple_s_replace_makes_a_new_object(make: str, expect: list[str], known: bool) -> None:
    code = f'''
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


class Spec(NamedTuple):
  acc: str
  rows: int = 64


def _dropped(spec):
  spec._replace(acc="int32")
  return spec


SPEC = {make}


''' + INT8_TILE.format(rows="SPEC.rows", acc="jnp.dtype(SPEC.acc)")
    check(code, expect, target_jax=V, known=known)


@pytest.mark.parametrize(("fill", "expect", "known"), [
    # a table of lambdas filled by a module-level loop: each lambda reads the loop's name when
    # called, after import: its last value (heldout30 case15's late binding)
    ("for _name in ('int32', 'float32'):\n  ACCS[_name] = lambda: jnp.dtype(_name)\n", ["MMA101"], True),
    ("for _name in ('float32', 'int32'):\n  ACCS[_name] = lambda: jnp.dtype(_name)\n", [], True),
    ("for _name in ('int32', 'float32'):\n  ACCS[_name] = lambda _n=_name: jnp.dtype(_n)\n", [], True),
    # a lambda that changes the table when called: when is not known
    ("for _name in ('int32', 'float32'):\n  ACCS[_name] = lambda: ACCS.pop('int32', jnp.dtype(_name))\n", [], False),
])
def test_a_table_of_lambdas_filled_at_import(fill: str, expect: list[str], known: bool) -> None:
    code = f'''
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

ACCS = {{}}
{fill}

def body(a_ref, b_ref, o_ref, kind):
  acc = jnp.zeros((64, 64), ACCS[kind]())
  o_ref[...] = plgpu.mma(acc, a_ref[...], b_ref[...])


def test_it():
  a = jnp.zeros((64, 64), jnp.int8)
  body(a, a, None, "int32")
'''
    check(code, expect, target_jax=V, known=known)


def test_while_loop_and_unknown_trip_count() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils
    from jaxlib.mlir import ir


    def reduce_tiles(a_tiles, b_tiles, n_tiles):
      bf16 = ir.BF16Type.get()
      lay = mgpu.MMALayouts(bf16)
      acc = mgpu.FragmentedArray.splat(utils.c(0.0, {acc_t}), (64, 64), layout=lay.acc)
      i = 0
      while i < n_tiles:
        a = mgpu.FragmentedArray.splat(utils.c(1.0, bf16), (64, 16), layout=lay.lhs)
        b = mgpu.FragmentedArray.splat(utils.c(1.0, bf16), (16, 64), layout=lay.rhs)
        acc = mgpu.mma(acc, a, b)
        i += 1
      return acc
    '''
    check(code.format(acc_t="ir.F32Type.get()"), [])
    check(code.format(acc_t="ir.F16Type.get()"), ["MMA102"])


def test_data_dependent_branch_with_agreeing_arms_is_known() -> None:
    # Both arms pick float16: the join is still float16 (and wrong).
    code = '''
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils
    from jaxlib.mlir import ir


    def tile(n_rows):
      f16 = ir.F16Type.get()
      lay = mgpu.MMALayouts(f16)
      if n_rows > 64:
        acc = mgpu.FragmentedArray.splat(utils.c(0.0, f16), (128, 64), layout=lay.acc)
      else:
        acc = mgpu.FragmentedArray.splat(utils.c(0.0, f16), (64, 64), layout=lay.acc)
      a = mgpu.FragmentedArray.splat(utils.c(1.0, f16), (64, 16), layout=lay.lhs)
      b = mgpu.FragmentedArray.splat(utils.c(1.0, f16), (16, 64), layout=lay.rhs)
      return mgpu.mma(acc, a, b)
    '''
    report = lint(code)
    assert "MMA102" in [d.code for d in report.diagnostics]


def test_dataclass_config_defaults() -> None:
    # A frozen config object: its default accumulator is float32, used for int8 operands.
    code = '''
    import dataclasses
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    @dataclasses.dataclass(frozen=True)
    class Config:
      block_m: int = 128
      block_n: int = 64
      acc_dtype: jnp.dtype = jnp.float32


    def matmul(x, w, config: Config):
      def body(x_ref, w_ref, o_ref):
        acc = plgpu.layout_cast(
            jnp.zeros((config.block_m, config.block_n), config.acc_dtype),
            plgpu.Layout.MMA_ACC(x_ref.dtype))
        a = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(x_ref.dtype))
        b = plgpu.load(w_ref.T, layout=plgpu.Layout.MMA_RHS(x_ref.dtype))
        o_ref[...] = plgpu.mma(acc, a, b)

      out = jax.ShapeDtypeStruct((config.block_m, config.block_n), config.acc_dtype)
      return plgpu.kernel(body, out_type=out)(x, w)


    y = matmul(jnp.zeros((128, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8), Config())
    '''
    report = lint(code, target_jax=V)
    assert [d.code for d in report.diagnostics] == ["MMA101"]


# A frozen config the kernel reads its operand and accumulator types from.
_TILE_CONFIG = '''
import dataclasses
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


@dataclasses.dataclass(frozen=True)
class TileConfig:
  dtype: jnp.dtype
  acc_dtype: jnp.dtype = jnp.float32


def run(cfg):
  def body(x_ref, w_ref, o_ref):
    acc = plgpu.layout_cast(jnp.zeros((128, 64), cfg.acc_dtype), plgpu.Layout.MMA_ACC(cfg.dtype))
    a = plgpu.load(x_ref, layout=plgpu.Layout.MMA_LHS(cfg.dtype))
    b = plgpu.load(w_ref.T, layout=plgpu.Layout.MMA_RHS(cfg.dtype))
    o_ref[...] = plgpu.mma(acc, a, b)

  x = jnp.zeros((128, 64), cfg.dtype)
  w = jnp.zeros((64, 64), cfg.dtype)
  return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 64), cfg.acc_dtype))(x, w)
'''


def test_dataclass_config_explicit_field() -> None:
    code = _TILE_CONFIG + '''

run(TileConfig(dtype=jnp.int8, acc_dtype=jnp.int32))
run(TileConfig(jnp.float16))
run(TileConfig(jnp.uint8))
'''
    report = lint(code, target_jax=V)
    # uint8 with the float32 default: MMA101, and MMA204 (default Warpgroup semantics), which
    # the accumulator's fix leaves in place.
    assert [d.code for d in report.diagnostics] == ["MMA101", "MMA204"]


@pytest.mark.parametrize(
    ("made", "expect"),
    [
        # the accumulator the base config keeps, for int8 operands
        ("dataclasses.replace(BASE, dtype=jnp.int8)", ["MMA101"]),
        ("dataclasses.replace(dataclasses.replace(BASE, dtype=jnp.int8), acc_dtype=jnp.int32)", []),
        ("dataclasses.replace(BASE)", []),
        # a change of no field raises TypeError: nothing is known
        ("dataclasses.replace(BASE, dtype=jnp.int8, acc=jnp.int32)", []),
        # not a dataclass (its fields are not known): nothing is known
        ("dataclasses.replace(Plain(jnp.int8), dtype=jnp.int8)", []),
    ],
)
def test_dataclass_replace_makes_the_object_python_makes(made: str, expect: list[str]) -> None:
    code = _TILE_CONFIG + f'''

class Plain:
  def __init__(self, dtype):
    self.dtype = dtype
    self.acc_dtype = jnp.float32


BASE = TileConfig(dtype=jnp.float16)
run({made})
'''
    report = lint(code, target_jax=V)
    assert [d.code for d in report.diagnostics] == expect


@pytest.mark.parametrize(("derive", "expect"), [
    # a frozen dataclass's `__post_init__` derives a field with `object.__setattr__`
    ("object.__setattr__(self, 'acc_dtype', jnp.float32 if self.dtype == jnp.int8 else jnp.int32)", ["MMA101"]),
    ("object.__setattr__(self, 'acc_dtype', jnp.int32 if self.dtype == jnp.int8 else jnp.float32)", []),
    ("setattr(self, 'acc_dtype', jnp.float32)", ["MMA101"]),
    # a name not known: the field may be any
    ("object.__setattr__(self, NAME, jnp.int32)", []),
    # the class's default is not what the object holds after it
    ("object.__setattr__(self, 'acc_dtype', jnp.int32)  # float32", []),
])
def test_post_init_derives_a_field_of_a_frozen_dataclass(derive: str, expect: list[str]) -> None:
    default = "jnp.float32" if derive.endswith("# float32") else "jnp.int32"
    code = _TILE_CONFIG.replace("  acc_dtype: jnp.dtype = jnp.float32\n",
                                f"  acc_dtype: jnp.dtype = dataclasses.field(init=False, default={default})\n\n"
                                f"  def __post_init__(self):\n    {derive}\n") + "\n\nrun(TileConfig(jnp.int8))\n"
    report = lint(code, target_jax=V)
    assert [d.code for d in report.diagnostics] == expect


_CALLABLE_HEAD = '''
import dataclasses
import functools
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
import jax.numpy as jnp

_T = (plgpu.TilingTransform((8, 128)), plgpu.SwizzleTransform(128))


@dataclasses.dataclass
class Head:
  n: int

  def __post_init__(self):
    self._compiled = None

  def _build(self):
    n = self.n

    @functools.partial(
        plgpu.kernel, out_type=jax.ShapeDtypeStruct((64, n), jnp.int32),
        scratch_types=[plgpu.SMEM((64, 256), jnp.int8, transforms=_T), plgpu.SMEM((n, 256), jnp.int8, transforms=_T)])
    def head(x_gmem, w_gmem, o_gmem, x_smem, w_smem):
      def scope(acc_ref):
        plgpu.wgmma(acc_ref, x_smem, plgpu.transpose_ref(w_smem, (1, 0)))
        return acc_ref[...]
      o_gmem[...] = pl.run_scoped(scope, plgpu.ACC((64, n), jnp.int32))

    return jax.jit(head)

  def __call__(self, x, w):
    if self._compiled is None:
      self._compiled = self._build()
    return self._compiled(x, w)


HEADS = {{"tagger": Head(40), "router": Head(64)}}
{launch}
'''


@pytest.mark.parametrize("launch", [
    # a function root
    "\n\ndef main():\n  for name, head in HEADS.items():\n    head(1, 2)\n",
    # the script's own block: it runs when the file is run as a script, which its root stands for
    "\nif __name__ == '__main__':\n  for name, head in HEADS.items():\n    head(1, 2)\n",
    "\nif '__main__' == __name__:\n  HEADS['tagger'](1, 2)\n",
])
def test_a_callable_object_builds_its_kernel_once_and_launches_it(launch: str) -> None:
    """A dataclass's `__post_init__` runs when it is made (its `_compiled = None` decides the
    branch that builds the kernel), and a script's `if __name__ == "__main__":` block is run
    as run as a script: stored on the object, the built kernel is known where it is launched.
    The integer wgmma's N = 40 is one ptxas rejects (MMA605)."""
    report = lint(_CALLABLE_HEAD.format(launch=launch), target_jax=V)
    assert [d.code for d in report.diagnostics] == ["MMA605"]


def test_plain_class_attributes_and_methods() -> None:
    # Calling the bound method explicitly works; see the __call__ gap below.
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    class Int8Matmul:
      operand_dtype = jnp.int8
      acc_dtype = jnp.float32  # copied from the bf16 variant

      def __init__(self, m, n):
        self.m = m
        self.n = n

      def body(self, a_ref, b_ref, o_ref):
        dt = self.operand_dtype
        acc = plgpu.layout_cast(jnp.zeros((self.m, self.n), self.acc_dtype), plgpu.Layout.MMA_ACC(dt))
        a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dt))
        b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dt))
        o_ref[...] = plgpu.mma(acc, a, b)

      def __call__(self, a, b):
        out = jax.ShapeDtypeStruct((self.m, self.n), self.acc_dtype)
        return plgpu.kernel(self.body, out_type=out)(a, b)


    mm = Int8Matmul(128, 64)
    y = mm.__call__(jnp.zeros((128, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))
    '''
    report = check(code, ["MMA101"], target_jax=V)
    diag = only(report, "MMA101")
    assert row_of(code, "acc_dtype = jnp.float32") in related_rows(diag)


def test_instance_call_runs_dunder_call() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    class Matmul:
      acc_dtype = jnp.float32

      def body(self, a_ref, b_ref, o_ref):
        dt = a_ref.dtype
        acc = plgpu.layout_cast(jnp.zeros((128, 64), self.acc_dtype), plgpu.Layout.MMA_ACC(dt))
        a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dt))
        b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dt))
        o_ref[...] = plgpu.mma(acc, a, b)

      def __call__(self, a, b):
        out = jax.ShapeDtypeStruct((128, 64), self.acc_dtype)
        return plgpu.kernel(self.body, out_type=out)(a, b)


    y = Matmul()(jnp.zeros((128, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))
    '''
    check(code, ["MMA101"], target_jax=V)


def test_instance_attributes_set_in_init() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    class Matmul:
      def __init__(self, dtype, acc_dtype=jnp.float32):
        self.dtype = dtype
        self.acc_dtype = acc_dtype

      def body(self, a_ref, b_ref, o_ref):
        acc = plgpu.layout_cast(jnp.zeros((128, 64), self.acc_dtype), plgpu.Layout.MMA_ACC(self.dtype))
        a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(self.dtype))
        b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(self.dtype))
        o_ref[...] = plgpu.mma(acc, a, b)

      def run(self, a, b):
        out = jax.ShapeDtypeStruct((128, 64), self.acc_dtype)
        return plgpu.kernel(self.body, out_type=out)(a, b)


    mm = Matmul(jnp.int8)
    y = mm.run(jnp.zeros((128, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))
    '''
    check(code, ["MMA101"], target_jax=V)


def test_dict_config() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu

    CONFIGS = {
        "int8": dict(dtype=jnp.int8, acc=jnp.int32),
        "fp8": dict(dtype=jnp.float8_e4m3fn, acc=jnp.float16),
    }


    def launch(name):
      cfg = CONFIGS[name]
      dt, acc_dt = cfg["dtype"], cfg["acc"]

      def body(a_ref, b_ref, o_ref):
        acc = plgpu.layout_cast(jnp.zeros((128, 64), acc_dt), plgpu.Layout.MMA_ACC(dt))
        a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dt))
        b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dt))
        o_ref[...] = plgpu.mma(acc, a, b).astype(jnp.float32)

      f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 64), jnp.float32))
      return f(jnp.zeros((128, 64), dt), jnp.zeros((64, 64), dt))


    for name in CONFIGS:
      launch(name)
    '''
    report = check(code, ["MMA102"], target_jax=V)
    assert only(report, "MMA102")["world"] == {"name": "'fp8'"}


def test_cached_kernel_factory() -> None:
    # Libraries cache their kernel builders; the cache must not hide the call.
    code = '''
    import functools
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    @functools.cache
    def _build(m, n, dtype, acc_dtype):
      def body(a_ref, b_ref, o_ref):
        acc = plgpu.layout_cast(jnp.zeros((m, n), acc_dtype), plgpu.Layout.MMA_ACC(dtype))
        a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
        b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
        o_ref[...] = plgpu.mma(acc, a, b)

      return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((m, n), acc_dtype))


    def matmul(a, b):
      return _build(a.shape[0], b.shape[0], a.dtype, jnp.float32)(a, b)


    y = matmul(jnp.zeros((128, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))
    '''
    report = lint(code, target_jax=V)
    assert [d.code for d in report.diagnostics] == ["MMA101"]


def test_try_except_import_fallback() -> None:
    code = '''
    try:
      from jax.experimental.pallas import mosaic_gpu as plgpu
    except ImportError:  # older jax
      plgpu = None
    import jax
    import jax.numpy as jnp


    def body(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(jnp.zeros((128, 64), jnp.float16), plgpu.Layout.MMA_ACC(jnp.float16))
      a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(jnp.float16))
      b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.float16))
      o_ref[...] = plgpu.mma(acc, a, b)


    if plgpu is not None:
      y = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 64), jnp.float16))(
          jnp.zeros((128, 64), jnp.float16), jnp.zeros((64, 64), jnp.float16))
    '''
    check(code, ["MMA102"], target_jax=V)


def test_nested_closure_three_levels() -> None:
    code = '''
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu


    def make(dtype):
      acc_dtype = jnp.int32 if jnp.issubdtype(dtype, jnp.integer) else jnp.float32

      def outer(a, b):
        def body(a_ref, b_ref, o_ref):
          def tile():
            acc = plgpu.layout_cast(jnp.zeros((128, 64), acc_dtype), plgpu.Layout.MMA_ACC(dtype))
            x = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
            y = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
            return plgpu.mma(acc, x, y)
          o_ref[...] = tile()

        return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((128, 64), acc_dtype))(a, b)

      return outer


    for dt in (jnp.int8, jnp.uint8, jnp.bfloat16):
      make(dt)(jnp.zeros((128, 64), dt), jnp.zeros((64, 64), dt))
    '''
    report = check(code, ["MMA204"], target_jax=V)
    # uint8 under the jax 0.11 default (Warpgroup) semantics.
    assert only(report, "MMA204")["world"] == {"dt": "jnp.uint8"}


# `jnp.dtype(x) is jnp.float16` is always False at run time: jnp.dtype gives a numpy dtype
# object, jnp.float16 is a scalar type. `is` is not `==`.
IDENTITY = '''
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def run(dtype):
  dtype = jnp.dtype(dtype)
  {choice}

  def body(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(jnp.zeros((64, 64), acc_dtype), plgpu.Layout.MMA_ACC(dtype))
    a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype))
    b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype))
    o_ref[...] = plgpu.mma(acc, a, b)

  f = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((64, 64), jnp.float32))
  return f(jnp.zeros((64, 64), dtype), jnp.zeros((64, 64), dtype))


run({arg})
'''


def test_identity_test_on_a_dtype_object_is_false_no_false_positive() -> None:
    code = IDENTITY.format(
        choice="acc_dtype = jnp.float16 if dtype is jnp.float16 else jnp.float32", arg="jnp.float16")
    check(code, [], target_jax=V)


def test_identity_test_on_a_dtype_object_is_false_recall() -> None:
    code = IDENTITY.format(
        choice="acc_dtype = jnp.int32 if dtype is jnp.int8 else jnp.float32", arg="jnp.int8")
    check(code, ["MMA101"], target_jax=V)


def test_identity_test_on_the_scalar_type_itself() -> None:
    code = IDENTITY.format(
        choice="acc_dtype = jnp.int32 if dtype == jnp.int8 else jnp.float32", arg="jnp.int8")
    check(code.replace("  dtype = jnp.dtype(dtype)\n", ""), [], target_jax=V)


# Notebook-style scripts (jupytext `# %%` cells) rebind module names between launches; each
# launch must see the binding in force when it runs, not the file's last one.

SCRIPT_REDEFINED_KERNEL = '''
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M = N = K = 64
LANE = plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane)

# %% int8 matmul
def body(a_ref, b_ref, o_ref):
  acc = plgpu.layout_cast(jnp.zeros((M, N), jnp.int32), plgpu.Layout.MMA_ACC(jnp.int8))
  a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(jnp.int8))
  b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.int8))
  o_ref[...] = plgpu.mma(acc, a, b)

out_i8 = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((M, N), jnp.int32), compiler_params=LANE)(
    jnp.ones((M, K), jnp.int8), jnp.ones((N, K), jnp.int8))

# %% bf16 matmul
def body(a_ref, b_ref, o_ref):
  acc = plgpu.layout_cast(jnp.zeros((M, N), jnp.float32), plgpu.Layout.MMA_ACC(jnp.bfloat16))
  a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(jnp.bfloat16))
  b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.bfloat16))
  o_ref[...] = plgpu.mma(acc, a, b)

out_bf16 = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32), compiler_params=LANE)(
    jnp.ones((M, K), jnp.bfloat16), jnp.ones((N, K), jnp.bfloat16))
'''

SCRIPT_REBOUND_CONSTANT = '''
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M = N = K = 64
LANE = plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane)


def body(a_ref, b_ref, o_ref):
  acc = plgpu.layout_cast(jnp.zeros((M, N), ACC), plgpu.Layout.MMA_ACC(a_ref.dtype))
  a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(a_ref.dtype))
  b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(a_ref.dtype))
  o_ref[...] = plgpu.mma(acc, a, b)


# %% int8
ACC = jnp.int32
out_i8 = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((M, N), ACC), compiler_params=LANE)(
    jnp.ones((M, K), jnp.int8), jnp.ones((N, K), jnp.int8))

# %% bf16
ACC = jnp.float32
out_bf16 = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((M, N), ACC), compiler_params=LANE)(
    jnp.ones((M, K), jnp.bfloat16), jnp.ones((N, K), jnp.bfloat16))
'''


def test_script_redefines_kernel_between_launches() -> None:
    report = lint(SCRIPT_REDEFINED_KERNEL, target_jax=V)
    assert report.diagnostics == (), [d.message for d in report.diagnostics]
    assert report.known_calls == 2


def test_script_rebinds_constant_between_launches() -> None:
    report = lint(SCRIPT_REBOUND_CONSTANT, target_jax=V)
    assert report.diagnostics == (), [d.message for d in report.diagnostics]


def test_script_with_one_definition_per_name() -> None:
    code = SCRIPT_REDEFINED_KERNEL.replace(
        "# %% bf16 matmul\ndef body(", "# %% bf16 matmul\ndef body_bf16(").replace(
        "plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32)",
        "plgpu.kernel(body_bf16, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32)")
    report = check(code, [], target_jax=V)
    assert report.known_calls == 2


# ---------------------------------------------------------------- match, promotion


@pytest.mark.parametrize(
    ("mode", "expect"),
    [('"highest"', ["MMA104"]), ('"fp16"', []), ('"bf16"', []), ("MODE", [])],
)
def test_match_statement_on_a_known_mode(mode: str, expect: list[str]) -> None:
    # `MODE` is unknown: every case may run, and f32 operands are only a possibility.
    code = _pallas(
        "MODE = get_mode()\n"
        "def compute_dtype(precision):\n"
        "  match precision:\n"
        '    case "default" | "bf16":\n'
        "      return jnp.bfloat16\n"
        '    case "fp16":\n'
        "      return jnp.float16\n"
        '    case "highest" | "fp32":\n'
        "      return jnp.float32\n"
        "    case _:\n"
        '      raise ValueError(precision)\n'
        f"DT = compute_dtype({mode})\n",
        "jnp.float32",
    )
    report = lint(code, target_jax=V)
    assert [d.code for d in report.diagnostics] == expect


@pytest.mark.parametrize(
    ("acc", "expect"),
    [
        ("jnp.promote_types(DT, DT)", ["MMA102"]),
        ("jnp.promote_types(DT, jnp.float32)", []),
        ("jnp.promote_types(jnp.bfloat16, jnp.float16)", []),
        ("jnp.result_type(DT, jnp.float16)", []),
        # Mixed kinds, on jax's lattice: int8 with bfloat16 is bfloat16, with float32 float32.
        ("jnp.promote_types(DT, jnp.int8)", ["MMA102"]),
        ("jnp.promote_types(jnp.int8, jnp.float32)", []),
        ("jnp.result_type(DT, jnp.int32)", ["MMA102"]),
        ("jnp.promote_types(jnp.float8_e4m3fn, jnp.float32)", []),  # jax cannot: unknown
    ],
)
def test_promoted_accumulator_dtypes(acc: str, expect: list[str]) -> None:
    report = lint(_pallas("DT = jnp.bfloat16\n", acc), target_jax=V)
    assert [d.code for d in report.diagnostics] == expect


_LIBRARY_KERNEL = PALLAS_RUN + '''
{prelude}

def run_int8(a, b):
  return run(a, b, ACC_FOR[a.dtype.type])


def test_int8():
  run_int8(jnp.zeros((M, K), jnp.int8), jnp.zeros((N, K), jnp.int8))
'''


@pytest.mark.parametrize(
    ("prelude", "expect"),
    [
        ("ACC_FOR = {jnp.int8: jnp.int32}\nACC_FOR[jnp.int8] = jnp.float32\n", ["MMA101"]),
        ("ACC_FOR = {jnp.int8: jnp.float32}\nACC_FOR[jnp.int8] = jnp.int32\n", []),
        # Code that may read the table half-filled runs between the statements that fill it
        # (a call, or a statement of the chain that calls a function of the module, directly
        # naming it or not): whether a test runs the kernel then or after import is not known.
        ("ACC_FOR = {jnp.int8: jnp.int32}\nwarm_up()\nACC_FOR[jnp.int8] = jnp.float32\n", None),
        ("def pick():\n  return ACC_FOR[jnp.int8]\n\nACC_FOR = {jnp.int8: jnp.int32}\n"
         "ACC_FOR[jnp.int16] = pick()\nACC_FOR[jnp.int8] = jnp.float32\n", None),
        ("def warm():\n  return test_int8()\n\nACC_FOR = {jnp.int8: jnp.int32}\n"
         "ACC_FOR['warm'] = warm()\nACC_FOR[jnp.int8] = jnp.float32\n", []),  # (the launch in warm(): int32)
        # The script's main block: a test run imports the module, which does not run it.
        ("ACC_FOR = {jnp.int8: jnp.int32}\nif __name__ == '__main__':\n  ACC_FOR[jnp.int8] = jnp.float32\n", None),
        # Found by review, each a false positive (real Python: int32): the table changed
        # through an alias that `or`, `and` or a conditional expression gives, in a lambda run
        # later, through `__setitem__`, `globals()`, or under `with`/`try` where an exception
        # the analysis does not see may skip the change.
        ("ACC_FOR = {jnp.int8: jnp.float32}\nACC_FOR[jnp.int4] = jnp.int32\n_t = None or ACC_FOR\n"
         "_t[jnp.int8] = jnp.int32\n", None),
        # ... through a plain name bound to it, changed in another statement (each statement
        # was scanned alone, the name's change not seen: a false positive until 2026-12-07)
        ("ACC_FOR = {jnp.int8: jnp.float32}\nACC_FOR[jnp.int4] = jnp.int32\n_t = ACC_FOR\n"
         "_t[jnp.int8] = jnp.int32\n", None),
        ("ACC_FOR = {jnp.int8: jnp.float32}\nACC_FOR[jnp.int4] = jnp.int32\n_t = True and ACC_FOR\n"
         "_t[jnp.int8] = jnp.int32\n", None),
        ("ACC_FOR = {jnp.int8: jnp.float32}\nACC_FOR[jnp.int4] = jnp.int32\n_t = ACC_FOR if M else {}\n"
         "_t[jnp.int8] = jnp.int32\n", None),
        ("ACC_FOR = {jnp.int8: jnp.int32}\n_spoil = lambda: ACC_FOR.update({jnp.int8: jnp.float32})\n", None),
        ("ACC_FOR = {jnp.int8: jnp.float32}\nACC_FOR.__setitem__(jnp.int8, jnp.int32)\n", None),
        ("ACC_FOR = {jnp.int8: jnp.float32}\nACC_FOR[jnp.int4] = jnp.int32\n"
         "globals()['ACC_FOR'][jnp.int8] = jnp.int32\n", None),
        # An alias whose value is the name alone on a row of its own (found by reading the
        # change again: taken for an expression statement of the name).
        ("ACC_FOR = {jnp.int8: jnp.float32}\nACC_FOR[jnp.int4] = jnp.int32\n_alias = (\n  ACC_FOR\n)\n"
         "_alias[jnp.int8] = jnp.int32\n", None),
        ("ACC_FOR = {jnp.int8: jnp.float32}\nACC_FOR[jnp.int4] = jnp.int32\n_alias = \\\n  ACC_FOR\n"
         "_alias[jnp.int8] = jnp.int32\n", None),
        # Found by a second review: a list inside the table changed under another name.
        ("TABLES = {}\nINTS = TABLES.setdefault('int', [jnp.float32])\nINTS.append(jnp.int32)\n"
         "ACC_FOR = {jnp.int8: None}\nACC_FOR[jnp.int8] = TABLES['int'][-1]\n", None),
        ("TABLES = {}\nTABLES['int'] = _ints = [jnp.float32]\n_ints.append(jnp.int32)\n"
         "ACC_FOR = {jnp.int8: None}\nACC_FOR[jnp.int8] = TABLES['int'][-1]\n", None),
        # A global bound again by `|=` only, which code after import cannot take from the
        # statements (a call between them): the join of its bindings, as before (a lost
        # finding the second review found).
        ("ACC_FOR = {jnp.int8: jnp.float32}\nprint()\nACC_FOR |= {jnp.int8: jnp.float32}\n", ["MMA101"]),
        ("import contextlib\nACC_FOR = {jnp.int8: jnp.int32}\nwith contextlib.suppress(KeyError):\n"
         "  {}['fp8']\n  ACC_FOR[jnp.int8] = jnp.float32\n", None),
    ],
)
def test_code_after_import_reads_a_table_filled_at_import_when_nothing_read_it_half_filled(
        prelude: str, expect: list[str] | None) -> None:
    report = check(_LIBRARY_KERNEL.format(prelude=prelude), expect or [], target_jax=V, known=False)
    assert report.known_calls == (0 if expect is None else 1)


_READ_IN_A_GUARD = '''
import contextlib
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 64, 64
DT = jnp.int8
ACCS = []
ACCS.append({acc})

def test_it():
  def body(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(jnp.zeros((M, N), ACCS[0]), plgpu.Layout.MMA_ACC(DT))
    a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(DT))
    b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(DT))
    o_ref[...] = plgpu.mma(acc, a, b).astype(o_ref.dtype)
{guard}
    out = plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32))(
        jnp.zeros((M, K), DT), jnp.zeros((N, K), DT))
{after}'''


@pytest.mark.parametrize(
    ("guard", "after"),
    [("  with contextlib.suppress(Exception):", ""), ("  try:", "  except Exception:\n    pass\n"),
     ("  if True:", "")],
)
@pytest.mark.parametrize(("acc", "expect"), [("jnp.float32", ["MMA101"]), ("jnp.int32", [])])
def test_a_table_filled_at_import_read_first_inside_a_try_or_with(
        guard: str, after: str, acc: str, expect: list[str]) -> None:
    # Module-level code runs as at import, whatever its first reader was doing: the fill is
    # a fact even where that reader is inside a `try` or `with` body (it was lost there).
    check(_READ_IN_A_GUARD.format(acc=acc, guard=guard, after=after), expect, target_jax=V)


_OPTIONS = "class Cfg:\n  def __init__(self):\n    self.opts = {'acc': jnp.float32}\n"


@pytest.mark.parametrize(("setup", "expect", "known"), [
    # A store into an object's container attribute changes the object's: it was left as it
    # was (the attribute's container is a value held by the object, not by a name), so the
    # float32 read after an int32 store was reported (a false positive found on 2026-12-07).
    ("  c = Cfg()\n  c.opts['acc'] = jnp.int32\n  acc_t = c.opts['acc']\n", [], True),
    ("  c = Cfg()\n  c.opts['acc'] = jnp.bfloat16\n  acc_t = c.opts['acc']\n", ["MMA101"], True),
    # through another name: which object holds it is not followed, forgotten
    ("  c = Cfg()\n  o = c.opts\n  o['acc'] = jnp.int32\n  acc_t = c.opts['acc']\n", [], False),
    ("  c = Cfg()\n  box = [c]\n  o = box[0].opts\n  o['acc'] = jnp.int32\n  acc_t = c.opts['acc']\n", [], False),
])
def test_a_store_into_an_objects_container_attribute(setup: str, expect: list[str], known: bool) -> None:
    check(_pallas("DT = jnp.int8\n" + _OPTIONS, "acc_t", setup=setup), expect, target_jax=V, known=known)
