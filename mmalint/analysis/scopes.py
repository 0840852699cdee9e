"""Which names a scope binds, from libcst nodes."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from mmalint.analysis.cst_from_ast import semantic_fields


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        inner = dotted_name(node.value)
        return f"{inner}.{node.attr.value}" if inner is not None else None
    return None


class LocalNames(cst.CSTVisitor):
    """Names a function binds in its own scope (not in nested functions or classes)."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.nonlocal_names: set[str] = set()

    def _targets(self, node: cst.BaseExpression) -> None:
        if isinstance(node, cst.Name):
            self.names.add(node.value)
        elif isinstance(node, cst.Tuple | cst.List):
            for e in node.elements:
                self._targets(e.value)
        elif isinstance(node, cst.StarredElement):
            self._targets(node.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._targets(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._targets(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._targets(node.asname.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._targets(node.target)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None and isinstance(node.name.name, cst.Name):
            self.names.add(node.name.name.value)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is not None and isinstance(node.asname.name, cst.Name):
            self.names.add(node.asname.name.value)
        else:
            dotted = dotted_name(node.name)
            if dotted:
                self.names.add(dotted.split(".")[0])

    def visit_Global(self, node: cst.Global) -> None:
        self.nonlocal_names.update(n.name.value for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.nonlocal_names.update(n.name.value for n in node.names)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return False

    def visit_SetComp(self, node: cst.SetComp) -> bool:
        return False

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return False

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return False


def _subclass_of(base: type) -> Callable[[type], bool]:
    """Whether a class is a subclass of `base`, remembered by class: `isinstance` against
    libcst's ABCs (`CSTNode`, `BaseExpression`) took 0.4 microseconds, and the walk asks it
    for every field of every node."""
    known: dict[type, bool] = {}

    def test(kind: type) -> bool:
        found = known.get(kind)
        if found is None:
            found = known[kind] = issubclass(kind, base)
        return found

    return test


_is_node = _subclass_of(cst.CSTNode)
_is_expression = _subclass_of(cst.BaseExpression)


def read_only_visit(node: cst.CSTNode, visitor: cst.CSTVisitor, expressions: bool = True) -> None:
    """What `node.visit(visitor)` does for a visitor that only reads (`visit_X` methods, no
    `leave_X`, no replacement), in no particular order, without rebuilding the tree: libcst's
    `visit` copies every node it passes, which made collecting a function's local names
    cost more than running the function. Without `expressions`, no expression is visited or
    walked into (most of a function's nodes; only a `:=` binds a name in one)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if not expressions and _is_expression(type(current)):
            continue
        method = getattr(visitor, "visit_" + type(current).__name__, None)
        if method is not None and method(current) is False:
            continue
        # Not its layout (whitespace, comments, punctuation): no name is bound under it.
        for name in semantic_fields(type(current)):
            value = getattr(current, name)
            kind = type(value)
            if kind is tuple or kind is list:
                stack.extend(item for item in value if _is_node(type(item)))
            elif _is_node(kind):
                stack.append(value)


def local_names_of(node: cst.CSTNode) -> LocalNames:
    """The names `node` binds in its own scope, collected by `LocalNames`."""
    collector = LocalNames()
    read_only_visit(node, collector)
    return collector


# What makes a new container: a display, a comprehension, `dict(...)`, `list(...)`,
# `set(...)`, `copy.copy(x)`, `copy.deepcopy(x)`, `x.copy()`.
_DISPLAYS = (cst.Dict, cst.List, cst.Set, cst.DictComp, cst.ListComp, cst.SetComp)
_NEW_CONTAINER_CALLS = frozenset({"dict", "list", "set", "copy.copy", "copy.deepcopy"})
# Scopes of their own, where the name may be another variable or the same one captured.
_INNER_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.DictComp, cst.ListComp, cst.SetComp,
                 cst.GeneratorExp)


def _new_container(node: cst.BaseExpression | None) -> bool:
    if isinstance(node, _DISPLAYS):
        return True
    if not isinstance(node, cst.Call):
        return False
    if dotted_name(node.func) in _NEW_CONTAINER_CALLS:
        return True
    return isinstance(node.func, cst.Attribute) and node.func.attr.value == "copy" and not node.args


def _own_use(ancestors: list[cst.CSTNode], name: cst.Name) -> bool:
    """Whether a use of the name (its ancestors, nearest last) keeps the container it holds
    its own: an item read or stored (`n[k]`, `n[k] = v`), a method called on it
    (`n.setdefault(k, v)`), it returned, or a new container bound to it (`n = dict(x)`)."""
    parent = ancestors[-1]
    grand = ancestors[-2] if len(ancestors) > 1 else None
    if isinstance(parent, cst.Subscript) and parent.value is name:
        return True
    if isinstance(parent, cst.Attribute) and parent.value is name:
        return isinstance(grand, cst.Call) and grand.func is parent
    if isinstance(parent, cst.Return):
        return True
    if isinstance(parent, cst.AssignTarget) and isinstance(grand, cst.Assign):
        return len(grand.targets) == 1 and _new_container(grand.value)
    if isinstance(parent, cst.AnnAssign) and parent.target is name:
        return _new_container(parent.value)
    return False


def owns_its_container(function: cst.FunctionDef | cst.Lambda, name: str) -> bool:
    """Whether the local `name` of the function always holds a container no other name
    refers to: every binding makes a new one (`opts = dict(options)`, `{...}`, `x.copy()`)
    and every use reads or stores an item of it, calls a method of it, or returns it (nothing
    else may hold it: not given to a call, bound to another name, held by a display; not
    named in a nested function or comprehension, nor `global`/`nonlocal`)."""
    key = (id(function), name)
    found = _OWNS.get(key)
    if found is not None and found[0] is function:
        return found[1]
    answer = _owns(function, name)
    if len(_OWNS) > 4096:
        _OWNS.clear()
    _OWNS[key] = (function, answer)
    return answer


_OWNS: dict[tuple[int, str], tuple[cst.CSTNode, bool]] = {}


def _owns(function: cst.FunctionDef | cst.Lambda, name: str) -> bool:
    if not isinstance(function, cst.FunctionDef):
        return False
    ancestors: list[cst.CSTNode] = [function]
    bound = False

    def walk(node: cst.CSTNode, inner: bool) -> bool:
        nonlocal bound
        if isinstance(node, cst.Name) and node.value == name:
            if inner or not _own_use(ancestors, node):
                return False
            bound = bound or isinstance(ancestors[-1], cst.AssignTarget | cst.AnnAssign)
            return True
        if isinstance(node, cst.Global | cst.Nonlocal) and any(n.name.value == name for n in node.names):
            return False
        ancestors.append(node)
        inside = inner or isinstance(node, _INNER_SCOPES)
        try:
            return all(walk(child, inside) for child in node.children)
        finally:
            ancestors.pop()

    return walk(function.body, False) and bound
