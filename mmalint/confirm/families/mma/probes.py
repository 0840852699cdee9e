"""MMA501 for the warp-level family: the jax APIs whose presence depends on the jax version.

An MMA501 finding has no call signature (`call` is null): it is about an API, not an MMA call.
The API is named in the finding's message (the `feature` of `rules/checks/mma.toml`'s
`[[availability]]` entries, e.g. "`plgpu.mma` does not exist in jax 0.10"); `kernels.probe_api`
tries each probe named here with the installed jax, in a worker.
"""

from __future__ import annotations

from mmalint.confirm.families.mma import NAME
from mmalint.confirm.family import ApiProbe

# Longest feature text first, so "`m_warps=` in `plgpu.Layout.MMA_LHS/RHS/ACC`" is never read as
# the layout itself.
PROBES: tuple[ApiProbe, ...] = (
    ApiProbe(NAME, "pallas-layout-m-warps", "`m_warps=` in `plgpu.Layout.MMA_LHS/RHS/ACC`",
             True, keyword=True),
    ApiProbe(NAME, "mmalayouts-m-warps", "`MMALayouts(..., m_warps=...)`", False),
    ApiProbe(NAME, "mmalayouts-for-shape", "`MMALayouts.for_shape`", False),
    ApiProbe(NAME, "mmalayouts-dtype-argument", "`MMALayouts` of a jnp/np dtype", False),
    ApiProbe(NAME, "mmalayouts-f64", "float64 `MMALayouts`", False),
    ApiProbe(NAME, "pallas-mma-lhs-layout", "`plgpu.Layout.MMA_LHS`", True),
    ApiProbe(NAME, "pallas-mma-rhs-layout", "`plgpu.Layout.MMA_RHS`", True),
    ApiProbe(NAME, "pallas-mma-acc-layout", "`plgpu.Layout.MMA_ACC`", True),
    ApiProbe(NAME, "plgpu-mma", "`plgpu.mma`", True),
)

# When the message is worded otherwise: the predicted error names the API too.
BY_PREDICTED: dict[str, str] = {
    "MMALayouts.__init__() got an unexpected keyword argument 'm_warps'": "mmalayouts-m-warps",
    "type object 'MMALayouts' has no attribute 'for_shape'": "mmalayouts-for-shape",
    "Tile shape must only have positive sizes, got: ": "mmalayouts-f64",
    "module 'jax.experimental.pallas.mosaic_gpu' has no attribute 'mma'": "plgpu-mma",
    "MMA_LHS": "pallas-mma-lhs-layout",
    "MMA_RHS": "pallas-mma-rhs-layout",
    "MMA_ACC": "pallas-mma-acc-layout",
}
