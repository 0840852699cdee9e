"""Tables filled at import by their module's registrars (`mmalint/analysis/registries.py`,
`interpreter/registries.py`): `@register("int8")` on a kernel, `register_recipe(Recipe(...))`
at a module's top level, in the table's module or in any module of the tree. Code that runs
after import reads the table as those statements leave it; anything that may register at
another time, under another name, or over a key, leaves it unknown.

Each test writes a small project: a warp-level `plgpu.mma` of int8 operands whose accumulator
is what the registry gives (float32: MMA101; int32: right).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _analysis_lint import lint_project

BODY = """
def {name}(a_ref, b_ref, o_ref):
  acc = jnp.zeros((64, 64), jnp.{acc})
  a = a_ref[...]
  b = b_ref[...]
  o_ref[...] = plgpu.mma(acc, a, b)
"""

IMPORTS = """
import dataclasses
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu
"""

REGISTRY = """
KERNELS = {}


def register(name):
  def deco(fn):
    if name in KERNELS:
      raise ValueError(name)
    KERNELS[name] = fn
    return fn
  return deco


def get_kernel(name):
  return KERNELS[name]
"""

TEST = """
def test_int8():
  a = jnp.zeros((64, 64), jnp.int8)
  {call}(a, a, None)
"""


def lint(root: Path, files: dict[str, str], checked: str) -> list[tuple[str | None, str, int]]:
    return lint_project(root, files, checked)


def codes(found: list[tuple[str | None, str, int]]) -> list[str | None]:
    return [code for code, _, _ in found]


@pytest.mark.parametrize(("acc", "expect"), [("float32", ["MMA101"]), ("int32", [])])
def test_a_decorator_registers_in_its_own_module(tmp_path: Path, acc: str, expect: list[str]) -> None:
    # The table, its registrar, the kernel registered and the test that looks it up, in one
    # file: the table was unknown (changed by a function), and a blind run of `register` (a
    # root: it names the table) stores an unknown key into it.
    code = IMPORTS + REGISTRY + "\n\n@register(\"int8\")" + BODY.format(name="body", acc=acc) + TEST.format(
        call='get_kernel("int8")')
    assert codes(lint(tmp_path, {"k.py": code}, "k.py")) == expect


@pytest.mark.parametrize(("acc", "expect"), [("float32", ["MMA101"]), ("int32", [])])
def test_a_decorator_registers_from_another_module(tmp_path: Path, acc: str, expect: list[str]) -> None:
    # heldout28 case23's route: the registry module names no kernel; the kernels module
    # registers into it, the package imports the kernels, the test looks the kernel up by name
    # through the package.
    files = {
        "pkg/__init__.py": "from pkg.registry import get_kernel\nfrom pkg import kernels as _kernels  # noqa: F401\n",
        "pkg/registry.py": REGISTRY,
        "pkg/kernels.py": IMPORTS + "from pkg.registry import register\n\n\n@register(\"int8\")"
                          + BODY.format(name="int8_kernel", acc=acc),
        "tests/test_k.py": IMPORTS + "from pkg import get_kernel\n\n" + TEST.format(call='get_kernel("int8")'),
    }
    found = lint(tmp_path, files, "pkg/kernels.py")
    assert codes(found) == expect
    assert all(where == "kernels.py" for _, where, _ in found)


RECIPES = """
_RECIPES = {}


@dataclasses.dataclass(frozen=True)
class Recipe:
  name: str
  accum: str

  @property
  def accum_dtype(self):
    return jnp.dtype(self.accum)


def register_recipe(recipe):
  if recipe.name in _RECIPES:
    raise ValueError(recipe.name)
  _RECIPES[recipe.name] = recipe
  return recipe


def get_recipe(name):
  return _RECIPES[name]


register_recipe(Recipe("w8a8", accum="{accum}"))
register_recipe(Recipe("bf16", accum="float32"))


def body(a_ref, b_ref, o_ref, accum_dtype):
  acc = jnp.zeros((64, 64), accum_dtype)
  o_ref[...] = plgpu.mma(acc, a_ref[...], b_ref[...])


def run(a, recipe="w8a8"):
  if isinstance(recipe, str):
    recipe = get_recipe(recipe)
  body(a, a, None, recipe.accum_dtype)


def test_w8a8():
  a = jnp.zeros((64, 64), jnp.int8)
  run(a, get_recipe("w8a8"))
"""


@pytest.mark.parametrize(("accum", "expect"), [("float32", ["MMA101"]), ("int32", [])])
def test_top_level_calls_register_objects(tmp_path: Path, accum: str, expect: list[str]) -> None:
    # heldout28 case01's route: recipes registered by calls at the module's top level, looked
    # up by name, handed to a function that asks `isinstance(recipe, str)` of the object.
    code = IMPORTS + RECIPES.replace("{accum}", accum)
    assert codes(lint(tmp_path, {"k.py": code}, "k.py")) == expect


# What a default kernel is where the table lacks the key: wrong (float32 with int8).
FALLBACK = IMPORTS + REGISTRY.replace("return KERNELS[name]", "return KERNELS.get(name, fallback)") + BODY.format(
    name="fallback", acc="float32") + BODY.format(name="good", acc="int32")


@pytest.mark.parametrize("registering", [
    # registered when a function runs, not at import
    'def setup():\n  register("int8")(good)\n\n\nsetup()\n',
    # by a call inside a test: the same
    "",
])
def test_a_registration_at_another_time_leaves_the_table_unknown(tmp_path: Path, registering: str) -> None:
    # Were the table read as its binding leaves it, `get_kernel("int8")` would be the wrong
    # fallback: a false positive. The test registers the right kernel before it looks it up.
    code = FALLBACK + "\n\n" + registering + '\n\ndef test_int8():\n  register("int8")(good)\n' \
        '  a = jnp.zeros((64, 64), jnp.int8)\n  get_kernel("int8")(a, a, None)\n'
    assert "MMA101" not in codes(lint(tmp_path, {"k.py": code}, "k.py"))


def test_a_registrar_imported_under_another_name_leaves_the_table_unknown(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "from pkg.registry import get_kernel\nfrom pkg import kernels as _kernels  # noqa: F401\n",
        "pkg/registry.py": FALLBACK,
        "pkg/kernels.py": "from pkg.registry import register as reg, good\n\nreg(\"int8\")(good)\n",
        "tests/test_k.py": IMPORTS + "from pkg import get_kernel\n\n" + TEST.format(call='get_kernel("int8")'),
    }
    assert "MMA101" not in codes(lint(tmp_path, files, "pkg/registry.py"))


def test_a_key_registered_twice_leaves_the_table_unknown(tmp_path: Path) -> None:
    # Which of the two stays depends on the order the modules are imported in.
    code = IMPORTS + REGISTRY + "\n\n@register(\"int8\")" + BODY.format(name="bad", acc="float32") + \
        "\n\n@register(\"int8\")" + BODY.format(name="good", acc="int32") + TEST.format(call='get_kernel("int8")')
    code = code.replace("    if name in KERNELS:\n      raise ValueError(name)\n", "")
    found = lint(tmp_path, {"k.py": code}, "k.py")
    # `bad` runs blind as a root of its own with unknown operands: nothing of the lookup.
    assert "MMA101" not in codes(found)


def test_isinstance_of_a_builtin_is_decided_for_objects_of_the_module(tmp_path: Path) -> None:
    # An object of a class whose base is `str` is a str: not decided False.
    code = IMPORTS + """
class Tag(str):
  pass


def body(a_ref, b_ref, o_ref, tag):
  acc = jnp.zeros((64, 64), jnp.int32 if isinstance(tag, str) else jnp.float32)
  o_ref[...] = plgpu.mma(acc, a_ref[...], b_ref[...])


class Plain:
  pass


def test_tags():
  a = jnp.zeros((64, 64), jnp.int8)
  body(a, a, None, Tag("x"))
  body(a, a, None, "x")


def test_plain():
  a = jnp.zeros((64, 64), jnp.int8)
  body(a, a, None, Plain())
"""
    found = lint(tmp_path, {"k.py": code}, "k.py")
    # Only the object of `Plain` (no builtin base) is decided not a str.
    assert codes(found) == ["MMA101"]
    code_without_plain = code.replace("  body(a, a, None, Plain())\n", "  pass\n")
    assert codes(lint(tmp_path, {"k.py": code_without_plain}, "k.py")) == []


MANY = """
KERNELS = {}


def register(*names):
  def deco(fn):
    for name in names:
      if name in KERNELS:
        raise ValueError(name)
      KERNELS[name] = fn
    return fn
  return deco


def get_kernel(name):
  return KERNELS[name]
"""


@pytest.mark.parametrize(("first", "second", "expect"), [
    # a decorator registers several keys in a loop (heldout32 case07: `zero_accumulator_for`);
    # its own duplicate check reads the table while the first statement is under way
    ('"bf16", "f16"', '"int8", "int4"', ["MMA101"]),
    ('"bf16", "f16"', '"int4", "uint4"', []),
    # a key two statements register: which one stays depends on order (Python raises here)
    ('"bf16", "int8"', '"int8", "int4"', []),
])
def test_a_statement_may_register_several_keys(tmp_path: Path, first: str, second: str, expect: list[str]) -> None:
    code = (IMPORTS + MANY + f"\n\n@register({first})" + BODY.format(name="good", acc="int32")
            + f"\n\n@register({second})" + BODY.format(name="bad", acc="float32") + TEST.format(call='get_kernel("int8")'))
    assert codes(lint(tmp_path, {"k.py": code}, "k.py")) == expect
