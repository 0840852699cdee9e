"""MMA501: does the installed jax have the API a finding says the target jax lacks?

An MMA501 finding has no call signature (`call` is null): it is about an API, not an MMA call.
The API is named in the finding's message (the `feature` of `rules/checks.toml`'s
`[[availability]]` entries, e.g. "`plgpu.mma` does not exist in jax 0.10"), so the jax tier
probes exactly that API with the installed jax: an attribute lookup, a keyword, a dtype. This
module only names the probes (no jax here); `kernels.probe_api` runs them in a worker.
"""

from __future__ import annotations

from dataclasses import dataclass

from mmalint.confirm.signature import Finding


@dataclass(frozen=True)
class ApiProbe:
    """One API whose presence depends on the jax version, and how to try it."""

    probe: str  # the probe's id (`kernels.probe_api`)
    feature: str  # as the finding's message names it
    pallas: bool  # needs jax.experimental.pallas.mosaic_gpu
    keyword: bool = False  # a keyword some versions accept and ignore (no error to predict)


# Longest feature text first, so "`m_warps=` in `plgpu.Layout.MMA_LHS/RHS/ACC`" is never read as
# the layout itself.
PROBES: tuple[ApiProbe, ...] = (
    ApiProbe("pallas-layout-m-warps", "`m_warps=` in `plgpu.Layout.MMA_LHS/RHS/ACC`", True,
             keyword=True),
    ApiProbe("mmalayouts-m-warps", "`MMALayouts(..., m_warps=...)`", False),
    ApiProbe("mmalayouts-for-shape", "`MMALayouts.for_shape`", False),
    ApiProbe("mmalayouts-dtype-argument", "`MMALayouts` of a jnp/np dtype", False),
    ApiProbe("mmalayouts-f64", "float64 `MMALayouts`", False),
    ApiProbe("pallas-mma-lhs-layout", "`plgpu.Layout.MMA_LHS`", True),
    ApiProbe("pallas-mma-rhs-layout", "`plgpu.Layout.MMA_RHS`", True),
    ApiProbe("pallas-mma-acc-layout", "`plgpu.Layout.MMA_ACC`", True),
    ApiProbe("plgpu-mma", "`plgpu.mma`", True),
)

# When the message is worded otherwise: the predicted error names the API too.
_BY_PREDICTED: dict[str, str] = {
    "MMALayouts.__init__() got an unexpected keyword argument 'm_warps'": "mmalayouts-m-warps",
    "type object 'MMALayouts' has no attribute 'for_shape'": "mmalayouts-for-shape",
    "Tile shape must only have positive sizes, got: ": "mmalayouts-f64",
    "module 'jax.experimental.pallas.mosaic_gpu' has no attribute 'mma'": "plgpu-mma",
    "MMA_LHS": "pallas-mma-lhs-layout",
    "MMA_RHS": "pallas-mma-rhs-layout",
    "MMA_ACC": "pallas-mma-acc-layout",
}


def probe_for(finding: Finding) -> ApiProbe | None:
    """The API an MMA501 finding is about, or None when it names none this module knows."""
    for probe in PROBES:
        if probe.feature in finding.message:
            return probe
    if finding.predicted is not None:
        name = _BY_PREDICTED.get(finding.predicted.message)
        for probe in PROBES:
            if probe.probe == name:
                return probe
    return None
