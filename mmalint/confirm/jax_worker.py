"""jax-tier worker: build the flagged call and its fix with the installed jax, on the CPU.

Run as `python -m mmalint.confirm.jax_worker` with a case (JSON) on stdin; prints records
(`protocol.py`). Each part is built, then lowered for CUDA (`lowering_platforms=("cuda",)`),
which needs no GPU: the checks of `mgpu.mma`, `FragmentedArray` and Pallas all run, and the
lowered module carries the `mma.sync` instruction Mosaic chose.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from typing import Any

from mmalint.confirm.protocol import describe_exception, emit, instructions_in


def _version(jax_version: str) -> str:
    return ".".join(jax_version.split(".")[:2])


def environment(api: str, *, probe: bool = False) -> dict[str, Any]:
    """The env record, or an `unavailable` record saying why this jax cannot build the case
    (`probe`: an API probe, which needs Mosaic GPU but not `plgpu.mma`)."""
    try:
        import jax
    except Exception as e:
        return {"part": "unavailable",
                "reason": f"jax not importable in {sys.executable}: {type(e).__name__}: {e}"}
    version = jax.__version__
    try:
        import jax.experimental.mosaic.gpu
        if api == "plgpu.mma":
            import jax.experimental.pallas.mosaic_gpu
    except Exception as e:
        return {"part": "unavailable", "jax_version": version,
                "reason": f"jax {version} cannot import Mosaic GPU: {type(e).__name__}: {e}"}
    if api == "plgpu.mma" and not probe:
        from mmalint.confirm.kernels import has_plgpu_mma

        if not has_plgpu_mma():
            return {"part": "unavailable", "jax_version": version,
                    "reason": f"jax {_version(version)} has no plgpu.mma"}
    return {"part": "env", "jax_version": version, "python": sys.version.split()[0]}


def build_part(part: str, spec: dict[str, Any]) -> dict[str, Any]:
    from mmalint.confirm import kernels

    start = time.perf_counter()
    context = kernels.mlir_context() if spec["api"] == "mgpu.mma" else contextlib.nullcontext()
    try:
        with context:
            fn, structs = kernels.build(spec)
            text = kernels.lowered_text(fn, structs)
    except Exception as e:
        return {"part": part, "status": "raised", **describe_exception(e),
                "seconds": time.perf_counter() - start}
    return {"part": part, "status": "built", "instructions": instructions_in(text),
            "seconds": time.perf_counter() - start}


def probe_part(probe: str) -> dict[str, Any]:
    """MMA501: try the API with the installed jax (`kernels.probe_api`)."""
    from mmalint.confirm import kernels

    start = time.perf_counter()
    try:
        result = kernels.probe_api(probe)
    except Exception as e:
        record = describe_exception(e)
        # A missing attribute or keyword is what the probe looks for, not a harness bug.
        if not (isinstance(e, KeyError) and "unknown API probe" in str(e)):
            record.pop("harness", None)
        return {"part": "flagged", "status": "raised", **record,
                "seconds": time.perf_counter() - start}
    return {"part": "flagged", **result, "seconds": time.perf_counter() - start}


def main() -> int:
    case = json.load(sys.stdin)
    if case.get("probe"):
        env = environment("plgpu.mma" if case.get("pallas") else "mgpu.mma", probe=True)
        emit(env)
        if env["part"] != "unavailable":
            emit(probe_part(case["probe"]))
        return 0
    api = case["flagged"]["api"]
    env = environment(api)
    emit(env)
    if env["part"] == "unavailable":
        return 0
    for part in ("flagged", "fix"):
        spec = case.get(part)
        if spec is not None:
            emit(build_part(part, spec))
    return 0


if __name__ == "__main__":
    # jax must not grab a GPU for a CPU-only build; the runner sets this too.
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    sys.exit(main())
