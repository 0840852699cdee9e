"""The Blackwell tcgen05 family: jax's `mosaic/gpu/tcgen05.py` (`tcgen05.mma`) and Pallas's
`plgpu.tcgen05_mma`.

`mma(d, a, b)` accumulates into `d` in tensor memory (TMEM); `a` is in SMEM or TMEM, `b` in
SMEM. All three are refs (memrefs or `TMEMRef`s in Mosaic GPU, Pallas refs), which carry a dtype
and a shape and no signedness. The normalized call holds `d` where the other families hold the
accumulator (`call.acc`), under its own role name.
"""

from __future__ import annotations

from mmalint.analysis.calls import MmaSite
from mmalint.analysis.values import Const, DType, Ref, Semantics, Value, as_int, as_shape
from mmalint.catalog import Catalog
from mmalint.checks.call import MmaCall, Operand, operand
from mmalint.checks.conditions import tcgen05 as conditions
from mmalint.checks.families.family import Api, Family, Role
from mmalint.facts.dtypes import DTYPES

ROLES = (
    Role("d", "accumulator `d`", "tmem"),
    Role("a", "lhs operand `a`", "smem"),
    Role("b", "rhs operand `b`", "smem"),
)

MGPU = Api("mgpu.tcgen05.mma", "mosaic", "jax.experimental.mosaic.gpu.tcgen05")
PLGPU = Api("plgpu.tcgen05_mma", "pallas", "jax.experimental.pallas.mosaic_gpu")


def _ref_operand(position: int, value: Value, site: MmaSite, role: Role, memory_space: str | None) -> Operand:
    """What a ref passed as an operand tells: its dtype and shape (no signedness: the dtype's)."""
    op = site.operands[position]
    if not isinstance(value, Ref):
        return operand(position, value, op.origin, role.name, memory_space)
    dtype = value.dtype.name if isinstance(value.dtype, DType) else None
    info = DTYPES.get(dtype or "")
    if memory_space is None and value.space in ("smem", "tmem"):
        memory_space = value.space  # `a`: SMEM or TMEM, as its allocation says
    tmem = memory_space == "tmem" and value.space == "tmem"
    packing = as_int(value.packing) if tmem else None
    collective = value.collective.value if tmem and isinstance(value.collective, Const) else None
    return Operand(
        position, value, info.mlir if info is not None else None, dtype,
        info.signedness if info is not None else None, None, as_shape(value.shape), None,
        value.origin, value.dtype.origin, value.dtype.origin, None, op.origin, "ref",
        view=value.view, role=role.name, memory_space=memory_space,
        swizzle=value.swizzle if value.space == "smem" else None,
        tiling=value.tiling if value.space == "smem" else None,
        tmem_packing=packing, tmem_collective=collective if isinstance(collective, bool) else None,
        packing_origin=value.packing.origin if packing is not None else None,
    )


def normalize(
    site: MmaSite, catalog: Catalog, version: str, target_arch: tuple[int, int] | None = None
) -> MmaCall:
    """The call's facts for one jax version: `d`, `a`, `b` by position; `a`'s memory space is
    its ref's (SMEM or TMEM scratch), unknown when its allocation is not known."""
    api = FAMILY.api(site.api)
    spaces = ("tmem", None, "smem")
    operands = [
        _ref_operand(i, op.value, site, role, spaces[i])
        for i, (op, role) in enumerate(zip(site.operands, ROLES, strict=True))
    ]
    semantics = None
    if api.frontend == "pallas" and isinstance(site.context.semantics, Semantics):
        semantics = site.context.semantics.name
        if semantics == "default":
            table: conditions.Tcgen05Table = catalog.table(api.name, version)
            semantics = table.default_semantics
    return MmaCall(
        site.api, site, version, semantics, operands[0], operands[1], operands[2],
        target_arch=target_arch, frontend=api.frontend,
    )


FAMILY = Family(
    name="tcgen05",
    roles=ROLES,
    apis=(MGPU, PLGPU),
    conditions=conditions.CONDITIONS,
    normalize=normalize,
    operands_unknown=conditions.operands_unknown,
    default_arch=False,  # no default GPU has tcgen05: its arch checks need a target given
)
