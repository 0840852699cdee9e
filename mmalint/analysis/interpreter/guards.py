"""Skip guards the interpreter cannot decide, and whether they are about the kernel.

`if not supported(dtype, acc): self.skipTest(...)`, with `supported` unknown, may skip the very
world whose MMA call comes next: a finding there could be a false positive, so the world's path
ends at the guard (unknown: no finding). A guard on the machine (`if not
jtu.is_cuda_compute_capability_at_least("9.0"): self.skipTest(...)`, in `setUp` or a helper)
reads nothing of the kernel: the test runs on the machine it asks for, and the path goes on.

A guard is about the kernel when a part of its condition that is undecided reads a known
dtype, element type, integer or shape (`supported(dtype)`, `n > max_n()`, `x.dtype in KINDS`
with `KINDS` unknown). Parts are the operands of `and`, `or` and `not`; a part that calls no
code of the project is evaluated again to see whether it is decided (`dtype == jnp.int8 and
not jtu.is_cuda_compute_capability_at_least("10.0")` is about the machine: its first part is
decided).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple

import libcst as cst

from mmalint.analysis.host import REGISTRY, Diverges
from mmalint.analysis.interpreter.core import body_of
from mmalint.analysis.scopes import dotted_name as _dotted
from mmalint.analysis.values import (
    BoundMethod,
    ClassVal,
    Const,
    DType,
    DTypeSet,
    Func,
    Instance,
    IrType,
    Partial,
    TupleVal,
    Value,
)

if TYPE_CHECKING:
    from mmalint.analysis.interpreter.core import Frame, Machine
    from mmalint.analysis.source import Block


def skips(stmt: cst.If) -> bool:
    """Whether a branch of the `if` (its `elif`s and `else` too) skips the test at its top:
    `self.skipTest(...)`, `pytest.skip(...)`, `raise unittest.SkipTest(...)`."""
    return any(_skip(small) for suite in _branches(stmt) for small in _small_statements(body_of(suite)))


def _branches(stmt: cst.If) -> list[cst.BaseSuite]:
    """The bodies of an `if`, its `elif`s and its `else`."""
    suites: list[cst.BaseSuite] = [stmt.body]
    orelse = stmt.orelse
    while orelse is not None:
        suites.append(orelse.body)
        orelse = orelse.orelse if isinstance(orelse, cst.If) else None
    return suites


def about_the_kernel(machine: Machine, test: cst.BaseExpression, frame: Frame, block: Block) -> bool:
    """Whether an undecided condition is undecided in a part that reads what the kernel is
    made of (a dtype, an element type, an integer, a shape)."""
    try:
        for part in _parts(test):
            scan = _scan(part)
            if not _reads_the_kernel(machine, scan.reads, frame, block, _MAX_ASSIGNMENTS):
                continue  # reads nothing of the kernel: whatever it is, it is not what we ask
            if not scan.opaque and not any(
                    isinstance(machine.eval(func, frame, block), _PROJECT_CODE) for func in scan.called) and (
                    machine.truth(machine.eval(part, frame, block)) is not None):
                continue  # decided (evaluated again: it calls no code of the project)
            return True
    except Diverges:
        return False  # evaluated once already: what raises here did not then
    return False


_MAX_ASSIGNMENTS = 3  # how many assignments back a local is followed


def _reads_the_kernel(machine: Machine, reads: Sequence[cst.BaseExpression], frame: Frame, block: Block,
                      depth: int) -> bool:
    """Whether the names and attribute chains `reads` hold a value of the kernel, or a local of
    the function assigned from one (`ok = supported(dtype)`, then `if not ok:`)."""
    for read in reads:
        if _of_the_kernel(machine.eval(read, frame, block)):
            return True
        if depth and isinstance(read, cst.Name) and isinstance(frame.function, cst.FunctionDef) and (
                frame.local_names is not None and read.value in frame.local_names):
            for value in _assignments(frame.function).get(read.value, ()):
                if _reads_the_kernel(machine, _scan(value).reads, frame, block, depth - 1):
                    return True
    return False


@functools.lru_cache(maxsize=256)
def _assignments(function: cst.FunctionDef) -> dict[str, list[cst.BaseExpression]]:
    """The values a function's statements assign to each plain name (nested defs aside; by
    node identity, as libcst nodes compare): statements only, no expression is walked."""
    found: dict[str, list[cst.BaseExpression]] = {}
    pending: list[cst.BaseSuite] = [function.body]
    while pending:
        for stmt in body_of(pending.pop()):
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign):
                        for target in small.targets:
                            if isinstance(target.target, cst.Name):
                                found.setdefault(target.target.value, []).append(small.value)
                    elif isinstance(small, cst.AnnAssign | cst.AugAssign) and isinstance(small.target, cst.Name) and (
                            small.value is not None):
                        found.setdefault(small.target.value, []).append(small.value)
            elif isinstance(stmt, cst.If):
                pending.extend(_branches(stmt))
            elif isinstance(stmt, cst.For | cst.While | cst.With | cst.Try | cst.TryStar):
                pending.append(stmt.body)
                parts = (getattr(stmt, "orelse", None), getattr(stmt, "finalbody", None), *getattr(stmt, "handlers", ()))
                pending.extend(part.body for part in parts if part is not None)
    return found


def _small_statements(
        stmts: Sequence[cst.BaseStatement | cst.BaseSmallStatement]) -> Iterator[cst.BaseSmallStatement]:
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            yield from stmt.body
        elif isinstance(stmt, cst.BaseSmallStatement):
            yield stmt


def _skip(small: cst.BaseSmallStatement) -> bool:
    tests = REGISTRY.tests
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        func = small.value.func
        return (isinstance(func, cst.Attribute) and func.attr.value in tests.skip_methods
                and _dotted(func.value) in tests.skip_receivers)
    if isinstance(small, cst.Raise) and small.exc is not None:
        raised = small.exc.func if isinstance(small.exc, cst.Call) else small.exc
        name = _dotted(raised) or ""
        return name.endswith("SkipTest") or name.endswith("skip.Exception")
    return False


def _parts(test: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The operands of `and`, `or` and `not`, outermost first."""
    if isinstance(test, cst.BooleanOperation):
        yield from _parts(test.left)
        yield from _parts(test.right)
    elif isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        yield from _parts(test.expression)
    else:
        yield test


_PROJECT_CODE = (Func, BoundMethod, ClassVal, Partial, Instance)


class _Scan(NamedTuple):
    """What a part of a condition reads and calls, from its text (once a node)."""

    reads: tuple[cst.BaseExpression, ...]  # names and attribute chains read as data (`dtype`,
    # `cfg.in_dtype`), not what is called (`jtu.is_cuda_compute_capability_at_least`)
    called: tuple[cst.BaseExpression, ...]  # what its calls call
    opaque: bool  # a lambda, comprehension or `:=`: not evaluated again


@functools.lru_cache(maxsize=1024)
def _scan(part: cst.BaseExpression) -> _Scan:
    reads: list[cst.BaseExpression] = []
    called: list[cst.BaseExpression] = []
    opaque = False
    pending: list[cst.CSTNode] = [part]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Lambda | cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp | cst.NamedExpr):
            opaque = True
            if isinstance(node, cst.Lambda):
                continue
        if isinstance(node, cst.Name | cst.Attribute) and _dotted(node) is not None:
            reads.append(node)
        elif isinstance(node, cst.Call):
            called.append(node.func)
            pending.extend(arg.value for arg in node.args)
            if not isinstance(node.func, cst.Name | cst.Attribute) or _dotted(node.func) is None:
                pending.append(node.func)
        else:
            pending.extend(node.children)
    return _Scan(tuple(reads), tuple(called), opaque)


_DTYPE_NAME = re.compile(
    r"(?:u?int|float|bfloat|f|bf|s|u|i|e)\d+(?:_e\d+m\d+\w*)?|tf32|bool_?|complex\d+")


def _of_the_kernel(value: Value) -> bool:
    """A dtype, an element type, an integer (not a bool), a shape, or what has a dtype."""
    if isinstance(value, DType | DTypeSet | IrType):
        return True
    if isinstance(value, Const):
        v = value.value
        if isinstance(v, str):
            return _DTYPE_NAME.fullmatch(v) is not None
        return isinstance(v, int) and not isinstance(v, bool)
    if isinstance(value, TupleVal):
        return bool(value.items) and all(_of_the_kernel(item) for item in value.items)
    return isinstance(getattr(value, "dtype", None), DType)
