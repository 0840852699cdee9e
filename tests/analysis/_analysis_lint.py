"""Helpers for the analysis tests: lint a dedented snippet and look at what came out."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any

from mmalint.discover import Discovered
from mmalint.engine import FileReport, check_text
from mmalint.pipeline.files import run
from mmalint.settings import Settings

PALLAS_VERSIONS = ("0.11", "0.12")
ALL_VERSIONS = ("0.10", "0.11", "0.12")

# A Pallas kernel module whose `run(a, b, acc_t)` launches a warp-level MMA of the operands'
# type with an accumulator of type `acc_t` (the MMA on its row 12, at the left margin).
PALLAS_RUN = """import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

M, N, K = 128, 64, 64


def run(a, b, acc_t):
  def body(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(jnp.zeros((M, N), acc_t), plgpu.Layout.MMA_ACC(a_ref.dtype))
    lhs = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(a_ref.dtype))
    rhs = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(b_ref.dtype))
    o_ref[...] = plgpu.mma(acc, lhs, rhs).astype(o_ref.dtype)

  return plgpu.kernel(body, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32))(a, b)
"""


# A Pallas module whose `make(acc_dtype)` launches a warp-level MMA of int8 operands with an
# accumulator of `acc_dtype` (int32 is right, float32 MMA101); `os` is imported for tests'
# undecided conditions.
MAKE_INT8 = """
import os
import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def make(acc_dtype):
  def kernel(a_ref, b_ref, o_ref):
    acc = plgpu.layout_cast(jnp.zeros((64, 64), acc_dtype), plgpu.Layout.MMA_ACC(jnp.int8))
    a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(jnp.int8))
    b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.int8))
    o_ref[...] = plgpu.mma(acc, a, b)
  return plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct((64, 64), jnp.int32))
"""


def lint(code: str, target_jax: str = "0.12", **settings: Any) -> FileReport:
    """Every diagnostic for a snippet (dedented), as the engine reports them."""
    return check_text("snippet.py", textwrap.dedent(code), Settings(target_jax=target_jax, **settings))


def lint_project(root: Path, files: dict[str, str], checked: str,
                 target_jax: str = "0.11") -> list[tuple[str | None, str, int]]:
    """Write a project (a `pyproject.toml` and `files`, each dedented) under `root` and check
    the file `checked` as `mmalint check` does: each finding's code, file name and row."""
    (root / "pyproject.toml").write_text('[project]\nname = "p"\n')
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    settings = Settings(target_jax=target_jax, project_root=str(root))
    target = root / checked
    result = run([Discovered(target, str(target), True)], settings, jobs=1)
    assert not result.input_errors
    return sorted((d.code, os.path.basename(d.filename), d.range.start.row) for d in result.diagnostics)


def codes_of(report: FileReport) -> list[str]:
    return sorted(d.code or d.name for d in report.diagnostics)


def check(
    code: str,
    expect: list[str] | tuple[str, ...] = (),
    target_jax: str = "0.12",
    *,
    known: bool = True,
    **settings: Any,
) -> FileReport:
    """Lint `code` and assert exactly the codes `expect` (sorted, with repeats).

    `known=True` also asserts the analysis fully understood at least one MMA call, so a clean
    result means "correct" and not "could not tell".
    """
    report = lint(code, target_jax, **settings)
    got = codes_of(report)
    assert got == sorted(expect), [
        f"{d.code} {d.range.start.row}: {d.message}" for d in report.diagnostics
    ]
    if known:
        assert report.calls >= 1, "no MMA call reached"
        assert report.known_calls >= 1, "no MMA call fully understood"
    return report


def only(report: FileReport, code: str) -> dict[str, Any]:
    """The JSON of the single diagnostic with this code."""
    found = [d.to_json() for d in report.diagnostics if d.code == code]
    assert len(found) == 1, [d.message for d in report.diagnostics]
    return found[0]


def all_of(report: FileReport, code: str) -> list[dict[str, Any]]:
    return [d.to_json() for d in report.diagnostics if d.code == code]


def related_rows(diag: dict[str, Any]) -> dict[int, str]:
    return {r["location"]["row"]: r["message"] for r in diag["related"]}


def row_of(code: str, needle: str, nth: int = 0) -> int:
    """The 1-based row of the nth line of the dedented snippet that contains `needle`."""
    rows = [i + 1 for i, line in enumerate(textwrap.dedent(code).splitlines()) if needle in line]
    assert len(rows) > nth, f"{needle!r} not in snippet"
    return rows[nth]
