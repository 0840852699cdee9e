"""The drift reader of the tcgen05 family: the installed jax's `mosaic/gpu/tcgen05.py` and
Pallas's `tcgen05_mma` against `rules/checks/tcgen05.toml` for that jax version.

The catalog replays only some of the checks `tcgen05.mma()` makes (see the table's header), so
the reader asks that they appear among jax's `raise`s in `mma()` in the catalog's order (a
subsequence, with exceptions and messages equal), that `_do_mma` still raises for f32 operands,
that the Pallas primitive still checks the scales, and that the i8 instruction descriptor is
still hard-coded to S8 (MMA705's premise), and that `mma()` still makes no check of the GPU
(MMA711's premise: the compiler refuses a tcgen05 MMA the target lacks, so the catalog predicts
the compiler's message, not jax's).
"""

from __future__ import annotations

import re

import libcst as cst

from mmalint.catalog import Catalog
from mmalint.checks.families.tcgen05 import MGPU, PLGPU
from mmalint.drift.source import Drift, Raise, catalog_raises, function_def, raises_in

TCGEN05_PY = "jax/experimental/mosaic/gpu/tcgen05.py"

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


def compare(catalog: Catalog, version: str, tcgen05_py: str, primitives_py: str | None) -> list[Drift]:
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
    if primitives_py is not None:
        jax_front = raises_in(primitives_py, "tcgen05_mma")
        cat_front = catalog_raises(catalog, PLGPU.name, version, ("abstract_eval",))
        if not _in_order(cat_front, jax_front):
            drifts.append(Drift(f"checks in {PLGPU.name}(), in order (catalog's among jax's)", jax_front, cat_front))
    return drifts
