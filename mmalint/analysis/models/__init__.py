"""Library knowledge, one module per library; importing this package registers every model
in `host.REGISTRY`."""

from mmalint.analysis.models import builtins, commandline, mlir, numpy, stdlib, testing
from mmalint.analysis.models.mosaic import (
    fragments,
    launch,
    layouts,
    memrefs,
    mma,
    reexports,
    wgmma,
)
from mmalint.analysis.models.mosaic import tcgen05 as mosaic_tcgen05
from mmalint.analysis.models.pallas import launch as pallas_launch
from mmalint.analysis.models.pallas import mosaic_gpu
from mmalint.analysis.models.pallas import tcgen05 as pallas_tcgen05
from mmalint.analysis.models.pallas import wgmma as pallas_wgmma

__all__ = [
    "builtins",
    "commandline",
    "fragments",
    "launch",
    "layouts",
    "memrefs",
    "mlir",
    "mma",
    "mosaic_gpu",
    "mosaic_tcgen05",
    "numpy",
    "pallas_launch",
    "pallas_tcgen05",
    "pallas_wgmma",
    "reexports",
    "stdlib",
    "testing",
    "wgmma",
]
