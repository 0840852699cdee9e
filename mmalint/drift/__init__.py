"""Drift readers: the installed jax's own sources against the catalog, one module per
instruction family (`mma`, `wgmma`, `tcgen05`), over the shared source reading of `source`."""

from mmalint.drift.mma import MMA_PY, PALLAS_CORE, PALLAS_PRIMITIVES, compare, operand_types
from mmalint.drift.source import Drift, Raise, installed_jax_file, normalize, raises_in
from mmalint.drift.tcgen05 import LAYOUT_INFERENCE_PY, TCGEN05_PY
from mmalint.drift.tcgen05 import compare as compare_tcgen05
from mmalint.drift.wgmma import PALLAS_LOWERING, WGMMA_PY
from mmalint.drift.wgmma import compare as compare_wgmma

__all__ = [
    "LAYOUT_INFERENCE_PY",
    "MMA_PY",
    "PALLAS_CORE",
    "PALLAS_LOWERING",
    "PALLAS_PRIMITIVES",
    "TCGEN05_PY",
    "WGMMA_PY",
    "Drift",
    "Raise",
    "compare",
    "compare_tcgen05",
    "compare_wgmma",
    "installed_jax_file",
    "normalize",
    "operand_types",
    "raises_in",
]
