"""The drift reader of the warpgroup MMA family: the installed jax's `mosaic/gpu/wgmma.py`,
Pallas's `wgmma` primitive and its accumulator allocation against `rules/checks/wgmma.toml`
for that jax version: the checks `wgmma()`, `wgmma_m64` and `WGMMAAccumulator.zero` make that
the catalog models, in order, with their exceptions and messages; Pallas's trace-time checks; the
unsigned-accumulator check of `run_scoped`; and the Pallas default lowering semantics.

jax's three accumulator messages (`... of type f32`, `f32 or f16`, `s32`) are one check row of
the catalog with `{accepted}`: they are compared as one, where the s32 one stands (after the
`lhs of type u8` check of the same int8 branch), and their accepted types with the facts'.
"""

from __future__ import annotations

import re

from mmalint.catalog import Catalog
from mmalint.checks.families.wgmma import MGPU, PLGPU
from mmalint.drift.mma import default_lowering_semantics
from mmalint.drift.source import Drift, Raise, catalog_raises, normalize, raises_in
from mmalint.facts.wgmma import ACCUMULATOR_TEXT

WGMMA_PY = "jax/experimental/mosaic/gpu/wgmma.py"
PALLAS_LOWERING = "jax/_src/pallas/mosaic_gpu/lowering.py"

# jax checks the catalog does not model (yet), with why: their conditions need facts the
# analysis does not have (swizzles of Pallas refs, tiled memref shapes, A register layouts).
NOT_MODELLED: dict[str, str] = {
    normalize("No swizzle is not supported"): "swizzle=16: rare, and not from Pallas",
    normalize("B must be a memref, got: {b.type}"): "B is always a ref in the models",
    normalize("Unsupported A type: {t}"): "A is always an array or a ref in the models",
    normalize("Unsupported element type: {t}"): "operand types without a wgmma (not yet a rule)",
    normalize("M must be a multiple of {m}, got: {m2}"): "A's M is the accumulator's (checked before), "
    "which `zero` and the WGMMA layouts make a multiple of 64: never the first to raise",
}
# The checks of `wgmma_m64` (per instruction, after every check of `wgmma`) the catalog models,
# as the `instruction` stage: the others there assert what `wgmma` already checked.
M64_MODELLED = (
    normalize("Only f16 WGMMA supports transposes"),
    normalize("Unsupported A register array layout"),
)
_PAIR = re.compile(r"^WGMMA with element type \{\} only supports accumulators of type (.+), but got: \{\}$")
_PAIR_TEMPLATE = "WGMMA with element type {} only supports accumulators of type {}, but got: {}"
# Pallas trace-time checks the catalog does not model.
PALLAS_NOT_MODELLED: dict[str, str] = {
}


def _collapse_pairs(raises: list[Raise]) -> tuple[list[Raise], list[str]]:
    """jax's accumulator messages as the catalog's one template, where the last of them stands;
    and the accepted-type texts they name, in order."""
    texts = [m.group(1) for r in raises if (m := _PAIR.match(r.message))]
    last = max((i for i, r in enumerate(raises) if _PAIR.match(r.message)), default=-1)
    out = [
        Raise(r.exception, _PAIR_TEMPLATE) if i == last else r
        for i, r in enumerate(raises)
        if i == last or not _PAIR.match(r.message)
    ]
    return out, texts


def compare(catalog: Catalog, version: str, wgmma_py: str, primitives_py: str | None, lowering_py: str | None,
            core_py: str | None) -> list[Drift]:
    """Every disagreement between jax's sources and the catalog for `version`."""
    drifts: list[Drift] = []
    jax_raw = [r for r in raises_in(wgmma_py, "wgmma") if r.message not in NOT_MODELLED]
    jax_wgmma, texts = _collapse_pairs(jax_raw)
    cat_wgmma = catalog_raises(catalog, MGPU.name, version, ("mma",))
    if jax_wgmma != cat_wgmma:
        drifts.append(Drift(f"checks in {MGPU.name}(), in order", jax_wgmma, cat_wgmma))
    accepted = sorted(set(ACCUMULATOR_TEXT.values()))
    if sorted(set(texts)) != accepted:
        drifts.append(Drift("accumulator types wgmma names", sorted(set(texts)), accepted))
    jax_m64 = [r for r in raises_in(wgmma_py, "wgmma_m64") if r.message in M64_MODELLED]
    cat_m64 = catalog_raises(catalog, MGPU.name, version, ("instruction",))
    if jax_m64 != cat_m64:
        drifts.append(Drift("checks in wgmma_m64 the catalog models, in order", jax_m64, cat_m64))
    jax_zero = raises_in(wgmma_py, "zero", "WGMMAAccumulator")
    # The splat `zero` makes raises in FragmentedArray (MMA202), which the mma family's reader
    # checks: here only the raises of `zero` itself.
    splat = {Raise(c.exception, normalize(c.message)) for c in catalog.checks_for(MGPU.name, version)
             if c.stage == "construct" and "fragmented_array.py" in c.where}
    cat_zero = [r for r in catalog_raises(catalog, MGPU.name, version, ("construct",)) if r not in splat]
    if jax_zero != cat_zero:
        drifts.append(Drift("checks in WGMMAAccumulator.zero, in order", jax_zero, cat_zero))
    if primitives_py is not None:
        jax_eval = [r for r in raises_in(primitives_py, "wgmma") if r.message not in PALLAS_NOT_MODELLED]
        cat_eval = catalog_raises(catalog, PLGPU.name, version, ("abstract_eval",))
        if jax_eval != cat_eval:
            drifts.append(Drift(f"checks in {PLGPU.name} when traced, in order", jax_eval, cat_eval))
        fp8_mix = "both_fp8" in primitives_py
        if fp8_mix != catalog.table(PLGPU.name, version).mixed_fp8:
            drifts.append(Drift(f"{PLGPU.name} mixes e4m3/e5m2", fp8_mix, catalog.table(PLGPU.name, version).mixed_fp8))
    if lowering_py is not None:
        allocation = raises_in(lowering_py, "_run_scoped_lowering_rule")
        cat_alloc = [
            Raise(c.exception, normalize(c.message))
            for c in catalog.checks_for(PLGPU.name, version)
            if c.condition == "acc-allocated-unsigned"
        ]
        missing = [r for r in cat_alloc if r not in allocation]
        if missing:
            drifts.append(Drift("plgpu.ACC allocation checks", [r for r in allocation if "WGMMA" in r.message],
                                cat_alloc))
    if core_py is not None:
        semantics = default_lowering_semantics(core_py)
        expected = catalog.table(PLGPU.name, version).default_semantics
        if semantics != expected:
            drifts.append(Drift("Pallas default lowering semantics (wgmma)", semantics, expected))
    return drifts
