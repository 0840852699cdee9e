"""`isinstance` of a builtin type (`models/builtins.py`), decided for a constant and for an
object of a class of the module whose bases are the module's classes.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from mmalint.discover import Discovered
from mmalint.pipeline.files import run
from mmalint.settings import Settings

IMPORTS = """
import dataclasses
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu
"""

def lint(root: Path, files: dict[str, str], checked: str) -> list[tuple[str | None, str, int]]:
    (root / "pyproject.toml").write_text('[project]\nname = "p"\n')
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    settings = Settings(target_jax="0.11", project_root=str(root))
    target = root / checked
    result = run([Discovered(target, str(target), True)], settings, jobs=1)
    assert not result.input_errors
    return sorted((d.code, os.path.basename(d.filename), d.range.start.row) for d in result.diagnostics)


def codes(found: list[tuple[str | None, str, int]]) -> list[str | None]:
    return [code for code, _, _ in found]


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
