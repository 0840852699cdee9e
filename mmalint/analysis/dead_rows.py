"""A generated function of thousands of rows (`source.ELIDE_FROM_ROWS`) is parsed and run
without its dead pure assignments: `x1 = 2 + 1`, whose names nothing of the function reads."""

from __future__ import annotations

import ast

_NO_ELISION_CALLS = frozenset({"locals", "vars", "eval", "exec", "globals", "dir"})


def _pure_loads(value: ast.expr) -> set[str] | None:
    """The names an expression of constants and names reads (arithmetic, comparisons, boolean
    operators, tuples, lists and sets of them); None for any other expression."""
    names: set[str] = set()
    todo = [value]
    while todo:
        node = todo.pop()
        kind = type(node)
        if kind is ast.Constant:
            continue
        if kind is ast.Name:
            names.add(node.id)  # type: ignore[attr-defined]
        elif kind is ast.BinOp:
            todo.append(node.left)  # type: ignore[attr-defined]
            todo.append(node.right)  # type: ignore[attr-defined]
        elif kind is ast.UnaryOp:
            todo.append(node.operand)  # type: ignore[attr-defined]
        elif kind is ast.BoolOp or kind is ast.Tuple or kind is ast.List or kind is ast.Set:
            todo.extend(node.values if kind is ast.BoolOp else node.elts)  # type: ignore[attr-defined]
        elif kind is ast.Compare:
            todo.append(node.left)  # type: ignore[attr-defined]
            todo.extend(node.comparators)  # type: ignore[attr-defined]
        else:
            return None
    return names


def dead_rows(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[int] | None:
    """The rows of the function's top-level statements that are dead pure assignments: each
    alone on its rows, `name = <constants and names>` (arithmetic, comparisons, tuples; no
    call, attribute or subscript), whose names are bound by such statements only, and read by
    nothing that is kept; None when the function reads its locals some other way (`locals()`,
    `eval`, `global`, ...)."""
    body = node.body
    loads: list[set[str]] = []
    stores: list[set[str]] = []
    candidates: set[int] = set()
    for i, stmt in enumerate(body):
        alone = (i == 0 or (body[i - 1].end_lineno or 0) < stmt.lineno) and (
            i + 1 == len(body) or body[i + 1].lineno > (stmt.end_lineno or stmt.lineno))
        pure = _pure_loads(stmt.value) if alone and type(stmt) is ast.Assign and all(
            type(t) is ast.Name for t in stmt.targets) else None
        if pure is not None:
            candidates.add(i)
            loads.append(pure)
            stores.append({t.id for t in stmt.targets})  # type: ignore[attr-defined]
            continue
        loaded: set[str] = set()
        stored: set[str] = set()
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Global | ast.Nonlocal):
                return None
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id in _NO_ELISION_CALLS:
                return None
            if isinstance(sub, ast.Name):
                (stored if isinstance(sub.ctx, ast.Store) else loaded).add(sub.id)
        loads.append(loaded)
        stores.append(stored)
    params = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
    params |= {a.arg for a in (node.args.vararg, node.args.kwarg) if a is not None}
    # Pure through and through: what a candidate reads is bound by candidates only.
    while True:
        bound = {name for i in candidates for name in stores[i]}
        elsewhere = params | {name for i in range(len(body)) if i not in candidates for name in stores[i]}
        impure = {i for i in candidates if not loads[i] <= bound or stores[i] & elsewhere}
        if not impure:
            break
        candidates -= impure
    # Dead: what is kept reads none of their names (a candidate that is read is kept too).
    live = {name for i in range(len(body)) if i not in candidates for name in loads[i]}
    kept: set[int] = set()
    changed = True
    while changed:
        changed = False
        for i in candidates - kept:
            if stores[i] & live:
                kept.add(i)
                live |= loads[i]
                changed = True
    dead = sorted(candidates - kept)
    if len(dead) == len(body):
        dead.pop()  # a def keeps a statement
    return {row for i in dead for row in range(body[i].lineno, (body[i].end_lineno or body[i].lineno) + 1)}
