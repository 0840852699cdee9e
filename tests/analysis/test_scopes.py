"""Local names collected without libcst's visit are the names libcst's visit collects."""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from mmalint.analysis.scopes import LocalNames, local_names_of

REPO = Path(__file__).resolve().parents[2]


class _Functions(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.FunctionDef] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.found.append(node)


def test_read_only_visit_collects_what_libcst_visit_collects() -> None:
    paths = sorted((REPO / "examples").glob("*.py")) + sorted((REPO / "tests" / "data").rglob("*.py"))
    compared = 0
    for path in paths:
        try:
            module = cst.parse_module(path.read_text(encoding="utf-8"))
        except Exception:
            continue
        functions = _Functions()
        module.visit(functions)
        for node in [module, *functions.found]:
            expected = LocalNames()
            (node.body.visit(expected) if isinstance(node, cst.FunctionDef) else node.visit(expected))
            got = local_names_of(node.body if isinstance(node, cst.FunctionDef) else node)
            assert (got.names, got.nonlocal_names) == (expected.names, expected.nonlocal_names), path
            compared += 1
    assert compared > 500
