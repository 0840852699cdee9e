"""The warpgroup MMA family (`wgmma.mma_async`, Hopper): jax's `mosaic/gpu/wgmma.py` and
Pallas's `plgpu.wgmma`.

`wgmma(acc, a, b)` keeps the accumulator in registers, reads A from registers or SMEM and B
from SMEM. A Pallas call lowers with the kernel's lowering semantics, whose default depends on
the jax version (the `default_semantics` of the API's table in `rules/checks/wgmma.toml`).
"""

from __future__ import annotations

from dataclasses import replace

from mmalint.analysis.calls import MmaSite
from mmalint.analysis.values import Array, Fragment, Ref, Semantics, Value
from mmalint.catalog import Catalog, load_catalog
from mmalint.checks.call import MmaCall, Operand, operand
from mmalint.checks.candidates import Candidates, Pairing, candidates, generic, partner
from mmalint.checks.conditions import wgmma as conditions
from mmalint.checks.conditions.wgmma import WgmmaTable
from mmalint.checks.families.family import Api, Family, Role
from mmalint.facts.dtypes import DTYPES

ROLES = (
    Role("acc", "accumulator", "registers"),
    Role("a", "lhs operand `a`", "registers"),  # or SMEM: decided per call
    Role("b", "rhs operand `b`", "smem"),
)

MGPU = Api("mgpu.wgmma", "mosaic", "jax.experimental.mosaic.gpu")
PLGPU = Api("plgpu.wgmma", "pallas", "jax.experimental.pallas.mosaic_gpu")

# How an accumulator allocated by `plgpu.ACC` reads in the call (the conditions' `how`).
ALLOCATED = "allocated"


def _operand(position: int, value: Value, site: MmaSite, role: str) -> Operand:
    """An operand with the memory space its value lives in: a ref is SMEM (B, or A) except the
    accumulator, which `plgpu.ACC` allocates in registers; arrays and fragments are registers."""
    origin = site.operands[position].origin
    if isinstance(value, Ref):
        # Only SMEM scratch is known to be laid out as declared (row-major): what wgmma reads
        # as K- or MN-major. A global-memory ref passed to wgmma fails for other reasons.
        as_array = Array(value.dtype, value.shape, created=value.origin,
                         how=ALLOCATED if role == "acc" else "ref",
                         view=value.view if value.space == "smem" else None)
        op = operand(position, as_array, origin, role, "registers" if role == "acc" else "smem")
        if role == "acc" or value.space != "smem":
            return op
        return replace(op, swizzle=value.swizzle, tiling=value.tiling)
    if isinstance(value, Fragment | Array):
        return operand(position, value, origin, role, "registers")
    return operand(position, value, origin, role, None)


def normalize(
    site: MmaSite, catalog: Catalog, version: str, target_arch: tuple[int, int] | None = None
) -> MmaCall:
    """The call's facts for one jax version: operands by role with their memory spaces, the
    lowering semantics of a Pallas call (its kernel's, or that jax's default)."""
    api = FAMILY.api(site.api)
    acc, a, b = (_operand(i, op.value, site, op.role) for i, op in enumerate(site.operands))
    semantics = None
    if api.frontend == "pallas" and isinstance(site.context.semantics, Semantics):
        semantics = site.context.semantics.name
        if semantics == "default":
            table: WgmmaTable = catalog.table(api.name, version)
            semantics = table.default_semantics
    return MmaCall(site.api, site, version, semantics, acc, a, b, target_arch=target_arch,
                   frontend=api.frontend)


# The condition that rejects an A dtype wgmma never reads from registers (int16, f32, ...):
# a candidate failing it fails, but says nothing of what the kernel's author meant.
UNSUPPORTED_OPERAND = frozenset({"register-a-dtype"})


def _pairing(table: WgmmaTable) -> Pairing:
    """Whether A and B of these dtypes get past wgmma's element type check in the jax of
    `table`: Mosaic GPU compares MLIR types (int8 with uint8 passes), Pallas dtypes; an
    e4m3/e5m2 pair where jax mixes them."""

    def passes(call: MmaCall, a: str, b: str) -> bool:
        a_type, b_type = DTYPES[a].mlir, DTYPES[b].mlir
        if call.frontend == "pallas":
            return conditions.mismatch(a, b, a_type, b_type, table) is False
        return conditions.mismatch(a_type, b_type, a_type, b_type, table) is False

    return passes


def wgmma_candidates(call: MmaCall) -> Candidates | None:
    """The dtypes undecided operands of a wgmma may have: each FragmentedArray's `is_signed`
    (register A), and A and B agreeing (jax keys its dtype checks on B's element type, so A's
    evidence decides B's too)."""
    catalog = load_catalog()
    if not catalog.has_table(call.api, call.version):
        return generic(call)
    pairing = _pairing(catalog.table(call.api, call.version))
    return candidates(call, pairing=pairing, partner_text=partner, unsupported=UNSUPPORTED_OPERAND)


FAMILY = Family(
    name="wgmma",
    roles=ROLES,
    apis=(MGPU, PLGPU),
    conditions=conditions.CONDITIONS,
    normalize=normalize,
    operands_unknown=conditions.operands_unknown,
    candidates=wgmma_candidates,
)
