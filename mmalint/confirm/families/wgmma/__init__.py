"""The Hopper warpgroup family: `mgpu.wgmma` and `plgpu.wgmma`, `wgmma.mma_async` on sm_90a.

Like `families/mma/`: facts and fixes (`facts.py`, `fixes.py`), the instruction and its PTX
module (`instruction.py`), the kernel spec (`cases.py`), the worker side (`kernels.py`, with
jax) and the record that plugs it into the tiers (`family.py`). This module imports nothing.
"""

from __future__ import annotations

NAME = "wgmma"
MGPU_API = "mgpu.wgmma"
PALLAS_API = "plgpu.wgmma"
APIS = (MGPU_API, PALLAS_API)
