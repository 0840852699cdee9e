"""Reading jax's own sources for the drift readers: where the installed jax keeps a file, the
`raise`s of a function in order (exception and message, fields normalized to `{}`), and what a
disagreement with the catalog says. Read with libcst; jax is never imported."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import libcst as cst

from mmalint.catalog import Catalog


@dataclass(frozen=True)
class Raise:
    exception: str
    message: str  # placeholders normalized to {}


def normalize(message: str) -> str:
    """Fields to `{}`. A catalog message's doubled braces are the literal ones jax prints (a
    string it forgot to make an f-string): undoubled first, they read as jax's source does."""
    message = message.replace("{{", "{").replace("}}", "}")
    return re.sub(r"\{[^{}]*\}", "{}", message).strip()


def installed_jax_file(relative: str) -> Path | None:
    try:
        dist = metadata.distribution("jax")
    except metadata.PackageNotFoundError:
        return None
    path = Path(str(dist.locate_file(relative)))
    return path if path.is_file() else None


def _string(node: cst.BaseExpression) -> str | None:
    """The text of a string literal, f-string or implicit concatenation; `{}` for each field."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.FormattedString):
        parts = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                parts.append(part.value)
            elif isinstance(part, cst.FormattedStringExpression) and part.equal is not None:
                # f"{m_warps=}" prints `m_warps=` and the value.
                parts.append(cst.Module([]).code_for_node(part.expression) + "={}")
            else:
                parts.append("{}")
        return "".join(parts)
    if isinstance(node, cst.ConcatenatedString):
        left, right = _string(node.left), _string(node.right)
        return left + right if left is not None and right is not None else None
    return None


class _Raises(cst.CSTVisitor):
    def __init__(self) -> None:
        self.raises: list[Raise] = []

    def visit_Raise(self, node: cst.Raise) -> None:
        exc = node.exc
        if isinstance(exc, cst.Call) and isinstance(exc.func, cst.Name | cst.Attribute):
            name = exc.func.value if isinstance(exc.func, cst.Name) else exc.func.attr.value
            message = _string(exc.args[0].value) if exc.args else ""
            if message is not None:
                self.raises.append(Raise(name, normalize(message)))


def function_def(module: cst.Module, name: str, cls: str | None = None) -> cst.FunctionDef | None:
    body = module.body
    if cls is not None:
        for stmt in module.body:
            if isinstance(stmt, cst.ClassDef) and stmt.name.value == cls:
                body = stmt.body.body  # type: ignore[assignment]
                break
        else:
            return None
    for stmt in body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
            return stmt
    return None


def raises_in(source: str, function: str, cls: str | None = None) -> list[Raise]:
    module = cst.parse_module(source)
    fn = function_def(module, function, cls)
    if fn is None:
        return []
    visitor = _Raises()
    fn.visit(visitor)
    return visitor.raises


@dataclass(frozen=True)
class Drift:
    what: str
    jax: object
    catalog: object

    def __str__(self) -> str:
        return f"{self.what}:\n  jax:     {self.jax}\n  catalog: {self.catalog}"


def catalog_raises(
    catalog: Catalog, api: str, version: str, stages: tuple[str, ...], elsewhere: str = ""
) -> list[Raise]:
    """The raising checks of `api` the catalog has at `stages`, in order, as jax's sources read
    them; without those made in the function `elsewhere` names (their `where` says so)."""
    result: list[Raise] = []
    for check in catalog.checks_for(api, version):
        if check.stage not in stages or not check.raises:
            continue
        if elsewhere and elsewhere in check.where:
            continue
        item = Raise(check.exception, normalize(check.message))
        if not result or result[-1] != item:
            result.append(item)
    return result
