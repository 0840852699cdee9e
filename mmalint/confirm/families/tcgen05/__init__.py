"""The Blackwell family: `mgpu.tcgen05.mma` and `plgpu.tcgen05_mma`, `tcgen05.mma` on sm_100a.

Like `families/mma/`: facts and fixes (`facts.py`, `fixes.py`), the instruction and its PTX
module (`instruction.py`), the kernel spec (`cases.py`), the worker side (`kernels.py`, with
jax) and the record that plugs it into the tiers (`family.py`). This module imports nothing.
"""

from __future__ import annotations

NAME = "tcgen05"
MGPU_API = "mgpu.tcgen05.mma"
PALLAS_API = "plgpu.tcgen05_mma"
APIS = (MGPU_API, PALLAS_API)
