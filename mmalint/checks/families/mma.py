"""The warp-level MMA family (`mma.sync`): jax's `mosaic/gpu/mma.py` and Pallas's `plgpu.mma`.

`mma(acc, a, b)` reads all three operands from registers (`FragmentedArray`s in Mosaic GPU,
arrays in Pallas). Pallas lowers its primitive with the kernel's lowering semantics, whose
default depends on the jax version (the `default_semantics` of the API's table in
`rules/checks/mma.toml`).
"""

from __future__ import annotations

from mmalint.analysis.calls import MmaSite
from mmalint.analysis.values import Semantics
from mmalint.catalog import Catalog
from mmalint.checks.call import MmaCall, operand
from mmalint.checks.conditions import mma as conditions
from mmalint.checks.conditions.mma import MmaTable
from mmalint.checks.families.family import Api, Family, Role

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


FAMILY = Family(
    name="mma",
    roles=ROLES,
    apis=(MGPU, PLGPU),
    conditions=conditions.CONDITIONS,
    normalize=normalize,
    operands_unknown=conditions.operands_unknown,
)
