"""The warp-level MMA family (`mma.sync`): jax's `mosaic/gpu/mma.py` and Pallas's `plgpu.mma`.

`mma(acc, a, b)` reads all three operands from registers (`FragmentedArray`s in Mosaic GPU,
arrays in Pallas). Pallas lowers its primitive with the kernel's lowering semantics, whose
default depends on the jax version (the `default_semantics` of the API's table in
`rules/checks/mma.toml`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from mmalint.analysis.calls import MmaSite
from mmalint.analysis.values import Semantics
from mmalint.catalog import Catalog, load_catalog
from mmalint.checks.call import MmaCall, Operand, operand
from mmalint.checks.candidates import Candidates, Evidence, candidates, partner
from mmalint.checks.conditions import mma as conditions
from mmalint.checks.conditions.mma import MmaTable
from mmalint.checks.families.family import Api, Family, Role
from mmalint.facts.dtypes import DTYPES
from mmalint.facts.mma import elements_per_register

ROLES = (
    Role("acc", "accumulator", "registers"),
    Role("a", "lhs operand `a`", "registers"),
    Role("b", "rhs operand `b`", "registers"),
)

MGPU = Api("mgpu.mma", "mosaic", "jax.experimental.mosaic.gpu")
PLGPU = Api("plgpu.mma", "pallas", "jax.experimental.pallas.mosaic_gpu")


def default_semantics(catalog: Catalog, api: Api, version: str) -> str | None:
    """The lowering semantics a Pallas kernel gets in `version` when it names none."""
    table: MmaTable = catalog.table(api.name, version)
    return table.default_semantics


def normalize(
    site: MmaSite, catalog: Catalog, version: str, target_arch: tuple[int, int] | None = None
) -> MmaCall:
    """The call's facts for one jax version: operands by the role of their position, the
    lowering semantics of a Pallas call (its kernel's, or that jax's default)."""
    api = FAMILY.api(site.api)
    operands = [
        operand(i, op.value, op.origin, role.name, role.memory_space)
        for i, (op, role) in enumerate(zip(site.operands, ROLES, strict=True))
    ]
    semantics = None
    if api.frontend == "pallas" and isinstance(site.context.semantics, Semantics):
        semantics = site.context.semantics.name
        if semantics == "default":
            semantics = default_semantics(catalog, api, version)
    return MmaCall(
        site.api, site, version, semantics, operands[0], operands[1], operands[2],
        target_arch=target_arch, frontend=api.frontend,
    )


# The conditions that reject an operand dtype no warp-level MMA takes (f32, int16, bool, the
# fnuz fp8 types...): `Unsupported operand type` whatever the rest of the call is.
UNSUPPORTED_OPERAND = frozenset({
    "unsupported-operand", "pallas-unsupported-operand", "pallas-bool-operand",
    "lowering-unsupported-operand",
})
_OPERAND_LAYOUT = {"a": "mma_lhs", "b": "mma_rhs"}


def _layout_width(role: str, op: Operand) -> tuple[Callable[[str], bool], Evidence] | None:
    """An operand in an MMA operand layout: `mma` compares it with `MMALayouts(T)`'s for the
    operand's own type, and those layouts differ exactly when the elements per 32-bit register
    do (`max(32 // bits, 1)`: 16-bit layouts for 16-bit types, one for 32 and 64 bits)."""
    layout = op.layout
    if layout is None or layout.kind != _OPERAND_LAYOUT.get(role) or layout.bits is None:
        return None
    per_register = elements_per_register(layout.bits)
    name = layout.name or layout.kind
    article = "an" if str(layout.bits).startswith("8") else "a"
    evidence = Evidence(
        role, f"{article} {layout.bits}-bit `{name}`",
        f"{layout.bits}-bit layout `{name}` built here: an operand of another width fails the layout check",
        layout.built or op.created,
    )
    return (lambda dtype: elements_per_register(DTYPES[dtype].bits) == per_register), evidence


def _pairing(call: MmaCall, a: str, b: str) -> bool:
    """Whether a and b of these dtypes get past the operand check: Pallas compares dtypes
    (`Operand dtypes must match`), `mgpu.mma` MLIR types (`Dtype mismatch`: s8 with u8 passes)."""
    if call.frontend == "pallas":
        return a == b
    return DTYPES[a].mlir == DTYPES[b].mlir


def mma_candidates(call: MmaCall) -> Candidates | None:
    """The dtypes undecided operands of a warp-level MMA may have: each FragmentedArray's
    `is_signed`, operand layouts' bit widths, and a and b agreeing."""
    found = candidates(call, role_evidence=_layout_width, pairing=_pairing,
                       partner_text=partner, unsupported=UNSUPPORTED_OPERAND)
    if found is None:
        return None
    # An operand layout of undecided width was most likely made from the operand's own dtype:
    # for a width `MMALayouts` cannot lay out in this jax (64 bits before 0.12, 32 too in
    # 0.10), that call fails first, else `mma` does (no such width is an operand type there).
    # Either way it fails; which error comes first is not known.
    undecided_layout = any(
        op.layout is not None and op.layout.kind == _OPERAND_LAYOUT.get(role) and op.layout.bits is None
        for role, op in (("a", call.a), ("b", call.b))
    )
    catalog = load_catalog()
    if not undecided_layout or not catalog.has_table(call.api, call.version):
        return found
    table: MmaTable = catalog.table(call.api, call.version)
    unsure = frozenset(c.label for c in found.items
                       if DTYPES[c.label].bits in table.layouts_fail_for_bits)
    return replace(found, unsure=unsure) if unsure else found


FAMILY = Family(
    name="mma",
    roles=ROLES,
    apis=(MGPU, PLGPU),
    conditions=conditions.CONDITIONS,
    normalize=normalize,
    operands_unknown=conditions.operands_unknown,
    candidates=mma_candidates,
)
