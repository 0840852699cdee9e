"""Local names collected without libcst's visit are the names libcst's visit collects."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import libcst as cst
import pytest

from mmalint.analysis.scopes import LocalNames, local_names_of, owns_its_container, read_only_visit

REPO = Path(__file__).resolve().parents[2]


class _Functions(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.FunctionDef] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.found.append(node)


def _corpus() -> Iterator[tuple[Path, cst.Module, list[cst.FunctionDef]]]:
    """Each example and kernel of the tests' data that libcst parses, with its functions."""
    paths = sorted((REPO / "examples").glob("*.py")) + sorted((REPO / "tests" / "data").rglob("*.py"))
    for path in paths:
        try:
            module = cst.parse_module(path.read_text(encoding="utf-8"))
        except Exception:
            continue
        functions = _Functions()
        module.visit(functions)
        yield path, module, functions.found


def test_read_only_visit_collects_what_libcst_visit_collects() -> None:
    compared = 0
    for path, module, functions in _corpus():
        for node in [module, *functions]:
            expected = LocalNames()
            (node.body.visit(expected) if isinstance(node, cst.FunctionDef) else node.visit(expected))
            got = local_names_of(node.body if isinstance(node, cst.FunctionDef) else node)
            assert (got.names, got.nonlocal_names) == (expected.names, expected.nonlocal_names), path
            compared += 1
    assert compared > 500


def test_statements_alone_bind_what_the_whole_walk_binds_but_for_walrus() -> None:
    """`read_only_visit(..., expressions=False)`, what a function without `:=` is walked with
    (`Calls.local_names`): every function of the examples and kernels, the same names."""
    compared = 0
    for path, module, functions in _corpus():
        for node in functions:
            if ":=" in module.code_for_node(node):
                continue
            whole, statements = LocalNames(), LocalNames()
            read_only_visit(node.body, whole)
            read_only_visit(node.body, statements, expressions=False)
            assert (statements.names, statements.nonlocal_names) == (whole.names, whole.nonlocal_names), path
            compared += 1
    assert compared > 500
    # A name bound by `:=` in an expression is found by the whole walk only.
    walrus = cst.parse_module("def f(xs):\n  if (n := len(xs)) > 1:\n    pass\n").body[0]
    assert isinstance(walrus, cst.FunctionDef)
    whole, statements = LocalNames(), LocalNames()
    read_only_visit(walrus.body, whole)
    read_only_visit(walrus.body, statements, expressions=False)
    assert "n" in whole.names and "n" not in statements.names


_NORMALIZE = ("def normalize(options):\n  opts = dict(options)\n  opts['dtype'] = jnp.dtype(opts['dtype'])\n"
              "  opts.setdefault('acc', jnp.float32)\n  {extra}\n  return opts\n")


@pytest.mark.parametrize(("extra", "owns"), [
    ("pass", True),
    ("print(len(opts['block']))", True),  # an item given on: not the container
    # another name, a call, a display, a lambda or a loop may hold it; or it is rebound to
    # a container another name holds
    ("alias = opts", False),
    ("keep(opts)", False),
    ("kept = [opts]", False),
    ("later = lambda: opts", False),
    ("update = opts.update", False),
    ("opts = options", False),
    ("for opts in rows: pass", False),
    ("global opts", False),
])
def test_a_local_owns_the_container_it_was_given(extra: str, owns: bool) -> None:
    function = cst.parse_module(_NORMALIZE.format(extra=extra)).body[0]
    assert isinstance(function, cst.FunctionDef)
    assert owns_its_container(function, "opts") is owns
    assert not owns_its_container(function, "options")  # a parameter: the caller's
