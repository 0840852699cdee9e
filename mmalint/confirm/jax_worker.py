"""jax-tier worker: build the flagged call and its fix with the installed jax, on the CPU.

Run as `python -m mmalint.confirm.jax_worker` with a case (JSON) on stdin; prints records
(`protocol.py`). Each part is built by its family's worker side (`families/<name>/kernels.py`),
then lowered for CUDA (`lowering_platforms=("cuda",)`), which needs no GPU: the checks of the
call, of its operands and of Pallas all run, and the lowered module carries the instruction
Mosaic chose.
"""

from __future__ import annotations

import json
import os
import sys
import time
from types import ModuleType
from typing import Any

from mmalint.confirm import families
from mmalint.confirm.protocol import describe_exception, emit


def _version(jax_version: str) -> str:
    return ".".join(jax_version.split(".")[:2])


def environment(family: str, api: str | None, *,
                pallas: bool = False) -> tuple[dict[str, Any], ModuleType | None]:
    """The env record and the family's kernels, or an `unavailable` record (and None) saying
    why this jax cannot build the case. `api` None: an API probe, which needs the family's
    modules (with Pallas's when `pallas`) but not the API itself."""
    try:
        import jax
    except Exception as e:
        return {"part": "unavailable",
                "reason": f"jax not importable in {sys.executable}: {type(e).__name__}: {e}"}, None
    version = jax.__version__
    try:
        kernels = families.worker_module(family, "kernels")
        kernels.import_apis(pallas=pallas if api is None else kernels.uses_pallas(api))
    except Exception as e:
        return {"part": "unavailable", "jax_version": version,
                "reason": f"jax {version} cannot import Mosaic GPU: {type(e).__name__}: {e}"}, None
    if api is not None and (missing := kernels.missing_api(api)) is not None:
        return {"part": "unavailable", "jax_version": version,
                "reason": f"jax {_version(version)} has no {missing}"}, None
    return {"part": "env", "jax_version": version, "python": sys.version.split()[0]}, kernels


def build_part(kernels: ModuleType, part: str, spec: dict[str, Any]) -> dict[str, Any]:
    start = time.perf_counter()
    try:
        with kernels.build_context(spec):
            fn, structs = kernels.build(spec)
            text = kernels.lowered_text(fn, structs)
    except Exception as e:
        return {"part": part, "status": "raised", **describe_exception(e),
                "seconds": time.perf_counter() - start}
    return {"part": part, "status": "built", "instructions": kernels.instructions_in(text),
            "seconds": time.perf_counter() - start}


def probe_part(kernels: ModuleType, probe: str) -> dict[str, Any]:
    """MMA501: try the API with the installed jax (the family's `kernels.probe_api`)."""
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
        env, kernels = environment(case["family"], None, pallas=bool(case.get("pallas")))
        emit(env)
        if kernels is not None:
            emit(probe_part(kernels, case["probe"]))
        return 0
    flagged = case["flagged"]
    env, kernels = environment(flagged["family"], flagged["api"])
    emit(env)
    if kernels is None:
        return 0
    for part in ("flagged", "fix"):
        spec = case.get(part)
        if spec is not None:
            emit(build_part(kernels, part, spec))
    return 0


if __name__ == "__main__":
    # jax must not grab a GPU for a CPU-only build; the runner sets this too.
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    sys.exit(main())
