"""The drift reader of the warp-level MMA family: the installed jax's `mosaic/gpu/mma.py` and
Pallas's `mma` primitive against `rules/checks/mma.toml` for that jax version: the checks
`mma()` and Pallas's abstract eval make, in order, with their exceptions and messages, the
operand types, the Pallas default lowering semantics, and which MMA APIs exist.

`tests/test_drift.py` runs this against whatever jax CI installed (0.10 on Python 3.11, the
newest on Python 3.12), so a jax release that changes a check fails the build.
"""

from __future__ import annotations

import re

import libcst as cst

from mmalint.analysis.dtypes import IR_TYPE_CLASSES
from mmalint.catalog import Catalog
from mmalint.checks.families.mma import MGPU, PLGPU
from mmalint.drift.source import Drift, catalog_raises, function_def, normalize, raises_in

MMA_PY = "jax/experimental/mosaic/gpu/mma.py"
PALLAS_PRIMITIVES = "jax/_src/pallas/mosaic_gpu/primitives.py"
PALLAS_CORE = "jax/_src/pallas/mosaic_gpu/core.py"


def operand_types(source: str) -> list[str] | None:
    """The MLIR types `mma()` accepts: `if element_type not in (bf16, f16, ..., i4)`."""
    module = cst.parse_module(source)
    fn = function_def(module, "mma")
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


# jax checks the catalog deliberately does not model, with why.
NOT_MODELLED: dict[str, str] = {
    normalize("Accumulator was provided with layout {} but expected layout {}"):
        "jax 0.12's experimental PALLAS_GPU layout mode (off by default)",
}


def compare(catalog: Catalog, version: str, mma_py: str, primitives_py: str | None, core_py: str | None) -> list[Drift]:
    """Every disagreement between jax's sources and the catalog for `version`."""
    drifts: list[Drift] = []
    jax_mma = [r for r in raises_in(mma_py, "mma") if r.message not in NOT_MODELLED]
    cat_mma = catalog_raises(catalog, MGPU.name, version, ("mma",), elsewhere="_mma_single_tile")
    if jax_mma != cat_mma:
        drifts.append(Drift(f"checks in {MGPU.name}(), in order", jax_mma, cat_mma))
    types = operand_types(mma_py)
    table = list(catalog.table(MGPU.name, version).operand_types) if catalog.has_table(MGPU.name, version) else None
    if types is None or sorted(types) != sorted(table or []):
        drifts.append(Drift(f"operand types {MGPU.name} accepts", types, table))
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
        pallas_available = bool(catalog.checks_for(PLGPU.name, version))
        if has_mma != pallas_available:
            drifts.append(Drift(f"{PLGPU.name} exists", has_mma, pallas_available))
        if has_mma:
            jax_eval = [
                r for r in raises_in(primitives_py, "_mma_abstract_eval") if r.message not in NOT_MODELLED
            ]
            cat_eval = catalog_raises(catalog, PLGPU.name, version, ("abstract_eval",), elsewhere="_mma_single_tile")
            if jax_eval != cat_eval:
                drifts.append(Drift(f"checks in {PLGPU.name}'s abstract eval, in order", jax_eval, cat_eval))
    if core_py is not None:
        semantics = default_lowering_semantics(core_py)
        expected = catalog.table(PLGPU.name, version).default_semantics
        if semantics != expected:
            drifts.append(Drift("Pallas default lowering semantics", semantics, expected))
        has_layouts = "MMA_LHS" in core_py
        layouts_available = not any(
            a.id == "pallas-mma-lhs-layout" and version in a.missing_in for a in catalog.availability
        )
        if has_layouts != layouts_available:
            drifts.append(Drift("plgpu.Layout.MMA_LHS exists", has_layouts, layouts_available))
    return drifts
