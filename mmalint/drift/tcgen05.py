"""The drift reader of the tcgen05 family: the installed jax's `mosaic/gpu/tcgen05.py` and
Pallas's `tcgen05_mma` against `rules/checks/tcgen05.toml` for that jax version.

The catalog replays only some of the checks `tcgen05.mma()` makes (see the table's header), so
the reader asks that they appear among jax's `raise`s in `mma()` in the catalog's order (a
subsequence, with exceptions and messages equal), that `_do_mma` still raises for f32 operands,
that the Pallas primitive still checks the scales (and, when bound, A in TMEM's collectiveness),
and that the i8 instruction descriptor is still hard-coded to S8 (MMA705's premise), and that
`mma()` still makes no check of the GPU (MMA711's premise: the compiler refuses a tcgen05 MMA the
target lacks, so the catalog predicts the compiler's message, not jax's). For A in TMEM
(MMA713-715) it also reads which operand's element type `mma()` takes A's packing from, and
finds the Warpgroup layout-inference failure among `infer_layout`'s raises.
"""

from __future__ import annotations

import re

import libcst as cst

from mmalint.catalog import Catalog
from mmalint.checks.families.tcgen05 import MGPU, PLGPU
from mmalint.drift.source import Drift, Raise, catalog_raises, function_def, normalize, raises_in

TCGEN05_PY = "jax/experimental/mosaic/gpu/tcgen05.py"
LAYOUT_INFERENCE_PY = "jax/experimental/mosaic/gpu/layout_inference.py"

# The comment jax's instruction descriptor carries where it encodes the i8 A/B format as 1 (S8).
_S8_ONLY = re.compile(r"get_signless\(8\):\s*#\s*Only s8 for now")


# What an architecture check in `mma()` would read (`utils.get_arch()`, `arch.major`, `sm_100a`).
_ARCH_CHECK = re.compile(r"get_arch|\barch\b|\bsm_\d+")


def _checks_arch(tcgen05_py: str) -> bool:
    """Whether jax's `tcgen05.mma()` reads the GPU architecture."""
    fn = function_def(cst.parse_module(tcgen05_py), "mma")
    return fn is not None and _ARCH_CHECK.search(cst.Module([]).code_for_node(fn)) is not None


def _in_order(wanted: list[Raise], found: list[Raise]) -> bool:
    """Whether `wanted` is a subsequence of `found`."""
    rest = iter(found)
    return all(any(item == r for r in rest) for item in wanted)


# Where `mma()` reads the packing A in TMEM needs: `expected_packing = 32 // utils.bitwidth(X)`,
# X being B's element type in jax 0.10 (`element_type`) and A's from 0.11 (`a_element_type`).
_A_PACKING = re.compile(r"expected_packing\s*=\s*32\s*//\s*utils\.bitwidth\((\w+)\)")


def a_packing_from_b(tcgen05_py: str) -> bool | None:
    """Whether jax's `mma()` derives A-in-TMEM's packing from B's element type (0.10), from A's
    (0.11+), or None when it no longer reads one this way."""
    found = _A_PACKING.search(tcgen05_py)
    if found is None:
        return None
    return {"element_type": True, "b_element_type": True, "a_element_type": False}.get(found.group(1))


def _layout_inference_drift(catalog: Catalog, version: str, layout_inference_py: str) -> list[Drift]:
    """The Pallas Warpgroup checks the catalog says layout inference makes (`where` names
    layout_inference.py): each message must be one `infer_layout` raises."""
    found = raises_in(layout_inference_py, "infer_layout")
    drifts = []
    for check in catalog.checks_for(PLGPU.name, version):
        if check.stage != "lowering" or "layout_inference.py" not in check.where or not check.raises:
            continue
        item = Raise(check.exception, normalize(check.message))
        if item not in found:
            drifts.append(Drift(f"{check.id}: a message layout_inference.infer_layout raises", found, item))
    return drifts


def compare(
    catalog: Catalog, version: str, tcgen05_py: str, primitives_py: str | None,
    layout_inference_py: str | None = None,
) -> list[Drift]:
    """Every disagreement between jax's sources and the tcgen05 catalog for `version`."""
    drifts: list[Drift] = []
    jax_mma = raises_in(tcgen05_py, "mma")
    cat_mma = catalog_raises(catalog, MGPU.name, version, ("mma",), elsewhere="_do_mma")
    if not _in_order(cat_mma, jax_mma):
        drifts.append(Drift(f"checks in {MGPU.name}(), in order (catalog's among jax's)", jax_mma, cat_mma))
    jax_do = raises_in(tcgen05_py, "_do_mma")
    cat_do = [r for r in catalog_raises(catalog, MGPU.name, version, ("mma",)) if r not in cat_mma]
    if not _in_order(cat_do, jax_do):
        drifts.append(Drift("checks in tcgen05._do_mma()", jax_do, cat_do))
    s8_only = _S8_ONLY.search(tcgen05_py) is not None
    silent = any(c.stage == "silent" for c in catalog.checks_for(MGPU.name, version))
    if s8_only != silent:
        drifts.append(Drift("the i8 instruction descriptor is hard-coded to S8", s8_only, silent))
    compiler_arch = any(c.stage == "compile" for c in catalog.checks_for(MGPU.name, version))
    if compiler_arch and _checks_arch(tcgen05_py):
        what = "tcgen05.mma() makes no check of the GPU (the compiler does)"
        drifts.append(Drift(what, False, True))
    from_b = a_packing_from_b(tcgen05_py)
    if catalog.has_table(MGPU.name, version) and from_b is not None:
        table = catalog.table(MGPU.name, version)
        if from_b != table.a_packing_from_b:
            what = "mma() takes the packing of A in TMEM from B's element type (not A's)"
            drifts.append(Drift(what, from_b, table.a_packing_from_b))
    if layout_inference_py is not None:
        drifts.extend(_layout_inference_drift(catalog, version, layout_inference_py))
    if primitives_py is not None:
        # The front end, then the primitive's abstract eval (when it is bound), in that order.
        jax_front = raises_in(primitives_py, "tcgen05_mma") + raises_in(primitives_py, "_tcgen05_mma_abstract_eval")
        cat_front = catalog_raises(catalog, PLGPU.name, version, ("abstract_eval",))
        if not _in_order(cat_front, jax_front):
            drifts.append(Drift(f"checks in {PLGPU.name}(), in order (catalog's among jax's)", jax_front, cat_front))
    return drifts
