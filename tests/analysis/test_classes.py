"""Classes as Python resolves their attributes: the C3 method resolution order, `super()`, and
a class's `__name__` (`mmalint/analysis/interpreter/classes.py`, `operators.py`).

Each snippet gives `make(acc_dtype)` the accumulator type some class decides, for int8
operands: an int32 accumulator is right, a float32 one is MMA101.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _analysis_lint import MAKE_INT8 as SHARED_MAKE_INT8
from _analysis_lint import check, lint_project

V = "0.12"
MAKE_INT8 = SHARED_MAKE_INT8 + '''

def run(acc_dtype):
  make(acc_dtype)(jnp.zeros((64, 64), jnp.int8), jnp.zeros((64, 64), jnp.int8))

'''


@pytest.mark.parametrize(("bases", "expect"), [
    # C3: P, Mixin, MixinBase, Base (breadth first would read Base's float32 before MixinBase)
    ("Mixin, Base", []),
    ("Base, Mixin", ["MMA101"]),
])
def test_a_class_attribute_follows_pythons_method_resolution_order(bases: str, expect: list[str]) -> None:
    code = MAKE_INT8 + f'''
class Base:
  acc = jnp.float32


class MixinBase:
  acc = jnp.int32


class Mixin(MixinBase):
  pass


class P({bases}):
  pass


run(P.acc)
'''
    check(code, expect, target_jax=V)


COOPERATIVE = '''
class Policy:
  def dtypes(self):
    return {"acc": jnp.int32}


class HalfAccumulation:
  def dtypes(self):
    d = super().dtypes()
    d["acc"] = jnp.float32
    return d


class IntAccumulation:
  def dtypes(self):
    d = super().dtypes()
    d["acc"] = jnp.int32
    return d


class P({bases}):
  pass


run(P().dtypes()["acc"])
'''


@pytest.mark.parametrize(("bases", "expect"), [
    # every mixin calls super() first: the one listed first has the last word (heldout30 case03)
    ("HalfAccumulation, IntAccumulation, Policy", ["MMA101"]),
    ("IntAccumulation, HalfAccumulation, Policy", []),
    ("HalfAccumulation, Policy", ["MMA101"]),
    # a base not of the checked code before the next class: it may define dtypes
    ("HalfAccumulation, library.Base, Policy", []),
])
def test_super_calls_the_next_class_in_the_order(bases: str, expect: list[str]) -> None:
    code = MAKE_INT8 + "import library\n\n" + COOPERATIVE.replace("{bases}", bases)
    check(code, expect, target_jax=V, known=bool(expect) or "library" not in bases)


@pytest.mark.parametrize(("call", "expect"), [
    ("super().__init__()", ["MMA101"]),
    ("super(Int8Config, self).__init__()", ["MMA101"]),
    # the base's __init__ never runs: the class's int32 stays
    ("pass", []),
])
def test_super_init_runs_the_bases_initializer(call: str, expect: list[str]) -> None:
    code = MAKE_INT8 + f'''
class Config:
  acc = jnp.int32

  def __init__(self):
    self.acc = jnp.float32


class Int8Config(Config):
  def __init__(self):
    {call}


run(Int8Config().acc)
'''
    check(code, expect, target_jax=V)


def test_super_in_a_class_method() -> None:
    code = MAKE_INT8 + '''
class Base:
  @classmethod
  def acc(cls):
    return jnp.float32


class Derived(Base):
  @classmethod
  def acc(cls):
    return super().acc()


run(Derived.acc())
'''
    check(code, ["MMA101"], target_jax=V)


@pytest.mark.parametrize(("name", "expect"), [("Int8", ["MMA101"]), ("Fp8", [])])
def test_a_classes_name_keys_a_table(name: str, expect: list[str]) -> None:
    code = MAKE_INT8 + f'''
class Int8:
  def acc(self):
    return jnp.float32


class Fp8:
  def acc(self):
    return jnp.int32


KINDS = {{k.__name__: k for k in (Int8, Fp8)}}
run(KINDS["{name}"]().acc())
'''
    check(code, expect, target_jax=V)


def test_super_into_another_modules_method_that_leads_to_no_mma_is_unknown(tmp_path: Path) -> None:
    # as a test base's setUp of a library the tree holds (jax's JaxTestCase): its context
    # managers in every world cost more than what it stores decides
    base = "import jax.numpy as jnp\n\n\nclass Base:\n  def acc(self):\n    return jnp.float32\n"
    derived = MAKE_INT8 + (
        "from base import Base\n\n\nclass Derived(Base):\n  def acc(self):\n    return super().acc()\n\n\n"
        "def test_it():\n  run(Derived().acc())\n")
    assert lint_project(tmp_path, {"base.py": base, "kernel.py": derived}, "kernel.py") == []
    # the same base in the module: its method runs
    same = derived.replace("from base import Base\n", base.replace("import jax.numpy as jnp\n", ""))
    assert lint_project(tmp_path, {"base.py": base, "kernel.py": same}, "kernel.py") == [("MMA101", "kernel.py", 12)]
