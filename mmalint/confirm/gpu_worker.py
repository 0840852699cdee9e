"""gpu-tier worker: run the flagged call and its fix on a GPU and compare with NumPy.

Run as `python -m mmalint.confirm.gpu_worker` with a case (JSON) on stdin; prints records
(`protocol.py`). Two backends, each the family's worker side:
- jax: the same synthesized kernels as the jax tier (`families/<name>/kernels.py`), compiled
  and run;
- cupy: the family's bundled instruction kernel (`families/<name>/cupy_kernel.py`), for
  machines with CuPy and no jax.
The fix runs first, so a flagged kernel that breaks the CUDA context cannot spoil it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import numpy as np

from mmalint.confirm import data, families
from mmalint.confirm.protocol import describe_exception, emit

Spec = dict[str, Any]


# ---------------------------------------------------------------- data for one part

def _samples(spec: Spec, seed: int) -> list[data.Sample]:
    """Test data per value in the order passed: full-range operands, small accumulators."""
    rng = np.random.default_rng(seed)
    pos_acc = spec["intended"][0]
    out = []
    for i, v in enumerate(spec["values"]):
        shape = tuple(v["shape"])
        if v["zeros"]:
            out.append(data.zeros(v["dtype"], shape))
        else:
            out.append(data.sample(v["dtype"], shape, rng, accumulator=i == pos_acc))
    return out


def _reference(spec: Spec, samples: list[data.Sample]) -> np.ndarray | None:
    pos_acc, pos_a, pos_b = spec["intended"]
    acc, a, b = samples[pos_acc].values, samples[pos_a].values, samples[pos_b].values
    if a.shape[1] != b.shape[0] or acc.shape != (a.shape[0], b.shape[1]):
        return None
    return data.reference(acc, a, b)


def _ran(part: str, result: np.ndarray, expected: np.ndarray | None, spec: Spec,
         start: float) -> dict[str, Any]:
    pos_acc, pos_a, _ = spec["intended"]
    # The mma family never takes float32 operands; wgmma and tcgen05 read them as tf32.
    operand = spec["values"][pos_a]["dtype"]
    return data.ran_record(part, result, expected, acc_dtype=spec["values"][pos_acc]["dtype"],
                           k=int(spec["values"][pos_a]["shape"][1]), start=start,
                           operand_dtype=operand if spec.get("family") != "mma" else None)


# ---------------------------------------------------------------- jax backend

def jax_environment() -> dict[str, Any] | str:
    """Device facts when jax sees a CUDA GPU, else the reason it cannot be used."""
    try:
        import jax
    except Exception as e:
        return f"jax not importable: {type(e).__name__}: {e}"
    try:
        devices = jax.devices("gpu")
    except Exception as e:
        return f"jax {jax.__version__} sees no GPU: {type(e).__name__}: {e}"
    if not devices:
        return f"jax {jax.__version__} sees no GPU"
    try:
        import jax.experimental.mosaic.gpu
    except Exception as e:
        return f"jax {jax.__version__} cannot import Mosaic GPU: {type(e).__name__}: {e}"
    dev = devices[0]
    return {"part": "env", "backend": "jax", "jax_version": jax.__version__,
            "device": getattr(dev, "device_kind", str(dev)),
            "compute_capability": getattr(dev, "compute_capability", None)}


def run_jax_part(part: str, spec: Spec, seed: int, *, dry_run: bool = False) -> dict[str, Any]:
    """Build, compile and run one kernel on the GPU. `dry_run` (tests on a machine without a
    GPU) stops after lowering for CUDA with the real arrays: everything but compiling."""
    kernels = families.worker_module(spec["family"], "kernels")
    start = time.perf_counter()
    try:
        samples = _samples(spec, seed)
        arrays = []
        for i in kernels.loaded_positions(spec):
            v = spec["values"][i]
            # B lives in memory as (n, k) and is read through a transposed view.
            values = samples[i].values
            values = values.T if v.get("transposed") else values
            arrays.append(kernels.as_device_array(np.ascontiguousarray(values), v["dtype"]))
    except (ValueError, TypeError) as e:
        return {"part": part, "status": "skipped", "note": f"no test data: {e}",
                "seconds": time.perf_counter() - start}
    try:
        with kernels.build_context(spec):
            fn, _ = kernels.build(spec)
            if dry_run:
                text = kernels.lowered_text(fn, arrays)
            else:
                result = np.asarray(fn(*arrays))
    except Exception as e:
        return {"part": part, "status": "raised", **describe_exception(e),
                "seconds": time.perf_counter() - start}
    if dry_run:
        return {"part": part, "status": "lowered", "instructions": kernels.instructions_in(text),
                "has_reference": _reference(spec, samples) is not None,
                "seconds": time.perf_counter() - start}
    return _ran(part, result, _reference(spec, samples), spec, start)


# ---------------------------------------------------------------- cupy backend

def cupy_environment() -> dict[str, Any] | str:
    try:
        import cupy
    except Exception as e:
        return f"cupy not importable: {type(e).__name__}: {e}"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        return f"cupy sees no GPU: {type(e).__name__}: {e}"
    if count == 0:
        return "cupy sees no GPU"
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props.get("name", b"?")
    return {"part": "env", "backend": "cupy", "cupy_version": cupy.__version__,
            "device": name.decode() if isinstance(name, bytes) else str(name),
            "compute_capability": f"{props.get('major')}.{props.get('minor')}"}


def run_cupy_part(part: str, spec: Spec, seed: int) -> dict[str, Any]:
    cupy_kernel = families.worker_module(spec["family"], "cupy_kernel")
    record: dict[str, Any] = cupy_kernel.run_part(part, spec, seed)
    return record


# ---------------------------------------------------------------- main

def main() -> int:
    case = json.load(sys.stdin)
    backend = case.get("gpu_backend", "auto")
    seed = int(case.get("seed", 0))
    if case.get("dry_run"):
        # Tests without a GPU: the jax path up to compilation, on the CPU.
        import jax

        emit({"part": "env", "backend": "jax", "jax_version": jax.__version__,
              "device": "none (dry run)", "compute_capability": None})
        for part in ("fix", "flagged"):
            if case.get(part) is not None:
                emit(run_jax_part(part, case[part], seed, dry_run=True))
        return 0
    reasons = []
    env: dict[str, Any] | str = "not tried"
    chosen = None
    if backend in ("auto", "jax"):
        env = jax_environment()
        if isinstance(env, dict):
            chosen = "jax"
        else:
            reasons.append(env)
    if chosen is None and backend in ("auto", "cupy"):
        env = cupy_environment()
        if isinstance(env, dict):
            chosen = "cupy"
        else:
            reasons.append(env)
    if chosen is None or not isinstance(env, dict):
        emit({"part": "unavailable", "reason": "no GPU: " + "; ".join(reasons)})
        return 0
    flagged = case["flagged"]
    if chosen == "jax":
        kernels = families.worker_module(flagged["family"], "kernels")
        if (missing := kernels.missing_api(flagged["api"])) is not None:
            version = ".".join(str(env["jax_version"]).split(".")[:2])
            emit({**env, "part": "unavailable", "reason": f"jax {version} has no {missing}"})
            return 0
    elif not families.has_worker_side(flagged["family"], "cupy_kernel"):
        emit({**env, "part": "unavailable", "reason": f"the CuPy path has no {flagged['family']} "
              "kernel (run it with jax: --gpu-backend jax)"})
        return 0
    # A family whose instruction this GPU lacks (tcgen05 on Hopper) says so plainly.
    side = families.worker_module(flagged["family"], "kernels") if chosen == "jax" else None
    problem = getattr(side, "device_problem", None)
    if problem is not None and (why := problem(env.get("compute_capability"))) is not None:
        emit({**env, "part": "unavailable", "reason": why})
        return 0
    emit(env)
    run = run_jax_part if chosen == "jax" else run_cupy_part
    for part in ("fix", "flagged"):
        spec = case.get(part)
        if spec is not None:
            emit(run(part, spec, seed))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    sys.exit(main())
