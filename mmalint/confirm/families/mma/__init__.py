"""The warp-level MMA family: `mgpu.mma` and `plgpu.mma`, one `mma.sync` per 16x8 tile.

Everything the reference lowering knows about this family lives in this folder: its facts
(`facts.py`), the instruction it needs (`instruction.py`, `ptx.py`, `fragments.py`), the fixed
call per rule (`fixes.py`), the kernel a worker builds (`cases.py`, then `kernels.py` with jax
or `cupy_kernel.py` with CuPy), the jax APIs MMA501 probes (`probes.py`), and the record that
plugs it into the tiers (`family.py`). This module itself imports nothing, so a worker that
imports one of the family's modules pulls in only what that module needs.
"""

from __future__ import annotations

NAME = "mma"
MGPU_API = "mgpu.mma"
PALLAS_API = "plgpu.mma"
APIS = (MGPU_API, PALLAS_API)
