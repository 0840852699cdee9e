"""Read the installed jax's own MMA sources (with libcst, never importing jax) and compare them
with the catalog for that jax version: the checks `mgpu.mma` and Pallas's `plgpu.mma` make, in
order, with their exceptions and messages, the operand types, and the API availability.

`tests/test_drift.py` runs this against whatever jax CI installed (0.10 on Python 3.11, the
newest on Python 3.12), so a jax release that changes a check fails the build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import libcst as cst

from mmalint.analysis.dtypes import IR_TYPE_CLASSES
from mmalint.catalog import Catalog

MMA_PY = "jax/experimental/mosaic/gpu/mma.py"
PALLAS_PRIMITIVES = "jax/_src/pallas/mosaic_gpu/primitives.py"
PALLAS_CORE = "jax/_src/pallas/mosaic_gpu/core.py"


@dataclass(frozen=True)
class Raise:
    exception: str
    message: str  # placeholders normalized to {}


def normalize(message: str) -> str:
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


def _function(module: cst.Module, name: str, cls: str | None = None) -> cst.FunctionDef | None:
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
    fn = _function(module, function, cls)
    if fn is None:
        return []
    visitor = _Raises()
    fn.visit(visitor)
    return visitor.raises


def operand_types(source: str) -> list[str] | None:
    """The MLIR types `mma()` accepts: `if element_type not in (bf16, f16, ..., i4)`."""
    module = cst.parse_module(source)
    fn = _function(module, "mma")
    if fn is None:
        return None
    names: dict[str, str] = {}
    found: list[str] | None = None

    class Visitor(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
                return
            target = node.targets[0].target.value
            value = node.value
            if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute):
                return
            owner = value.func.value
            owner_name = owner.attr.value if isinstance(owner, cst.Attribute) else None
            if value.func.attr.value == "get_signless" and value.args:
                width = value.args[0].value
                if isinstance(width, cst.Integer):
                    names[target] = f"i{width.value}"
            elif value.func.attr.value == "get" and owner_name in IR_TYPE_CLASSES:
                names[target] = IR_TYPE_CLASSES[owner_name]

        def visit_Comparison(self, node: cst.Comparison) -> None:
            nonlocal found
            for target in node.comparisons:
                if isinstance(target.operator, cst.NotIn) and isinstance(target.comparator, cst.Tuple):
                    elements = [e.value for e in target.comparator.elements]
                    if all(isinstance(e, cst.Name) and e.value in names for e in elements):
                        found = [names[e.value] for e in elements if isinstance(e, cst.Name)]

    fn.visit(Visitor())
    return found


def default_lowering_semantics(source: str) -> str | None:
    match = re.search(r"lowering_semantics:\s*[\w.]+\s*=\s*[\w.]*LoweringSemantics\.(\w+)", source)
    return {"Lane": "lane", "Warpgroup": "warpgroup"}.get(match.group(1)) if match else None


@dataclass(frozen=True)
class Drift:
    what: str
    jax: object
    catalog: object

    def __str__(self) -> str:
        return f"{self.what}:\n  jax:     {self.jax}\n  catalog: {self.catalog}"


# jax checks the catalog deliberately does not model, with why.
NOT_MODELLED: dict[str, str] = {
    normalize("Accumulator was provided with layout {} but expected layout {}"):
        "jax 0.12's experimental PALLAS_GPU layout mode (off by default)",
}


def _catalog_raises(catalog: Catalog, api: str, version: str, stages: tuple[str, ...]) -> list[Raise]:
    result: list[Raise] = []
    for check in catalog.checks_for(api, version):
        if check.stage not in stages or not check.raises:
            continue
        if "_mma_single_tile" in check.where:
            continue
        item = Raise(check.exception, normalize(check.message))
        if not result or result[-1] != item:
            result.append(item)
    return result


def compare(catalog: Catalog, version: str, mma_py: str, primitives_py: str | None, core_py: str | None) -> list[Drift]:
    """Every disagreement between jax's sources and the catalog for `version`."""
    drifts: list[Drift] = []
    jax_mma = [r for r in raises_in(mma_py, "mma") if r.message not in NOT_MODELLED]
    cat_mma = _catalog_raises(catalog, "mgpu.mma", version, ("mma",))
    if jax_mma != cat_mma:
        drifts.append(Drift("checks in mgpu.mma(), in order", jax_mma, cat_mma))
    types = operand_types(mma_py)
    table = catalog.table("mgpu.mma", version).get("operand_types")
    if types is None or sorted(types) != sorted(table or []):
        drifts.append(Drift("operand types mgpu.mma accepts", types, table))
    init = raises_in(mma_py, "__init__", "MMALayouts")
    m_warps_msg = normalize("m_warps must be 1, 2, or 4, but got m_warps={m_warps}")
    has_m_warps_check = any(r.message == m_warps_msg for r in init)
    m_warps_available = not any(
        a.id == "mmalayouts-m-warps" and version in a.missing_in for a in catalog.availability
    )
    if has_m_warps_check != m_warps_available:
        drifts.append(Drift("MMALayouts(m_warps=) exists", has_m_warps_check, m_warps_available))
    has_for_shape = re.search(r"def for_shape\(", mma_py) is not None
    for_shape_available = not any(
        a.id == "mmalayouts-for-shape" and version in a.missing_in for a in catalog.availability
    )
    if has_for_shape != for_shape_available:
        drifts.append(Drift("MMALayouts.for_shape exists", has_for_shape, for_shape_available))
    if primitives_py is not None:
        has_mma = raises_in(primitives_py, "_mma_abstract_eval") != [] or "def mma(" in primitives_py
        pallas_available = bool(catalog.checks_for("plgpu.mma", version))
        if has_mma != pallas_available:
            drifts.append(Drift("plgpu.mma exists", has_mma, pallas_available))
        if has_mma:
            jax_eval = [
                r for r in raises_in(primitives_py, "_mma_abstract_eval") if r.message not in NOT_MODELLED
            ]
            cat_eval = _catalog_raises(catalog, "plgpu.mma", version, ("abstract_eval",))
            if jax_eval != cat_eval:
                drifts.append(Drift("checks in plgpu.mma's abstract eval, in order", jax_eval, cat_eval))
    if core_py is not None:
        semantics = default_lowering_semantics(core_py)
        expected = catalog.table("plgpu.mma", version).get("default_semantics")
        if semantics != expected:
            drifts.append(Drift("Pallas default lowering semantics", semantics, expected))
        has_layouts = "MMA_LHS" in core_py
        layouts_available = not any(
            a.id == "pallas-mma-lhs-layout" and version in a.missing_in for a in catalog.availability
        )
        if has_layouts != layouts_available:
            drifts.append(Drift("plgpu.Layout.MMA_LHS exists", has_layouts, layouts_available))
    return drifts
