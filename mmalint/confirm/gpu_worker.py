"""gpu-tier worker: run the flagged call and its fix on a GPU and compare with NumPy.

Run as `python -m mmalint.confirm.gpu_worker` with a case (JSON) on stdin; prints records
(`protocol.py`). Two backends:
- jax: the same synthesized kernels as the jax tier (`kernels.py`), compiled and run;
- cupy: the bundled `mma.sync` kernel (`ptx.cuda_kernel`) compiled by NVRTC and run on
  fragments packed on the host (`fragments.py`), for machines with CuPy and no jax.
The fix runs first, so a flagged kernel that breaks the CUDA context cannot spoil it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from typing import Any

import numpy as np

from mmalint.confirm import data, fragments
from mmalint.confirm.instruction import MmaInstruction
from mmalint.confirm.protocol import describe_exception, emit, instructions_in
from mmalint.confirm.ptx import KERNEL_NAME, cuda_kernel

Spec = dict[str, Any]

# PTX type -> (NumPy-style dtype for decoding, bit width).
_PTX_DTYPES: dict[str, tuple[str, int]] = {
    "s32": ("int32", 32), "u32": ("uint32", 32), "f32": ("float32", 32),
    "f16": ("float16", 16), "bf16": ("bfloat16", 16), "f64": ("float64", 64),
    "s8": ("int8", 8), "u8": ("uint8", 8), "s4": ("int4", 4), "u4": ("uint4", 4),
    "e4m3": ("float8_e4m3fn", 8), "e5m2": ("float8_e5m2", 8),
}


# ---------------------------------------------------------------- data for one part

def _bits(dtype: str) -> int:
    try:
        return data.bit_width(dtype)
    except ValueError:
        return 0


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
         start: float, **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"part": part, "status": "ran", **extra}
    if expected is None:
        record["note"] = "no NumPy reference: the shapes do not multiply"
    else:
        pos_acc, pos_a, _ = spec["intended"]
        k = int(spec["values"][pos_a]["shape"][1])
        acc_dtype = spec["values"][pos_acc]["dtype"]
        cmp = data.compare(result, expected, acc_dtype=acc_dtype, k=k)
        record |= {"exact": cmp.exact, "max_abs_error": cmp.max_abs_error,
                   "tolerance": cmp.tolerance, "within": cmp.within,
                   "comparison": cmp.describe()}
    record["seconds"] = time.perf_counter() - start
    return record


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
    from mmalint.confirm import kernels

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
    context = kernels.mlir_context() if spec["api"] == "mgpu.mma" else contextlib.nullcontext()
    try:
        with context:
            fn, _ = kernels.build(spec)
            if dry_run:
                text = kernels.lowered_text(fn, arrays)
            else:
                result = np.asarray(fn(*arrays))
    except Exception as e:
        return {"part": part, "status": "raised", **describe_exception(e),
                "seconds": time.perf_counter() - start}
    if dry_run:
        return {"part": part, "status": "lowered", "instructions": instructions_in(text),
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


def _compile_message(error: BaseException) -> str:
    """NVRTC/ptxas output without the echoed source: the error lines, else the first line."""
    text = str(error)
    lines = [line.strip() for line in text.splitlines()
             if "error" in line.lower() and line.strip()]
    return "; ".join(dict.fromkeys(lines)) if lines else text.strip().splitlines()[0]


def run_cupy_part(part: str, spec: Spec, seed: int) -> dict[str, Any]:
    import cupy

    start = time.perf_counter()
    instr = MmaInstruction(**spec["instruction"])
    try:
        module = cupy.RawModule(code=cuda_kernel(instr), options=("-std=c++11",))
        kernel = module.get_function(KERNEL_NAME)
    except Exception as e:
        return {"part": part, "status": "raised", "exception": type(e).__name__,
                "message": _compile_message(e), "instruction": instr.text,
                "seconds": time.perf_counter() - start}
    pos_acc, pos_a, pos_b = spec["intended"]
    acc_v, a_v, b_v = (spec["values"][p] for p in (pos_acc, pos_a, pos_b))
    m, k = a_v["shape"]
    n = acc_v["shape"][1]
    d_dtype, d_bits = _PTX_DTYPES.get(instr.d, ("", 0))
    a_bits, b_bits = (_PTX_DTYPES.get(t, ("", 0))[1] for t in (instr.a, instr.b))
    acc_dtype, a_dtype, b_dtype = spec["data"]
    k_tile = fragments.k_tile(a_bits or 16)
    mismatch = [
        why for why, bad in (
            ("operand widths differ from the data", a_bits != _bits(a_dtype)
             or b_bits != _bits(b_dtype) or a_bits != b_bits or not a_bits),
            ("the accumulator width differs from the data", d_bits != _bits(acc_dtype)),
            ("the shapes do not divide into 16x8 tiles", m % 16 or n % 8 or k % k_tile),
        ) if bad
    ]
    if mismatch:
        return {"part": part, "status": "compiled", "instruction": instr.text,
                "note": f"compiled, not run: {mismatch[0]}",
                "seconds": time.perf_counter() - start}
    rng = np.random.default_rng(seed)
    acc = data.sample(acc_dtype, (m, n), rng, accumulator=True)
    a = data.sample(a_dtype, (m, k), rng)
    b = data.sample(b_dtype, (k, n), rng)
    a_regs = fragments.pack_a(a.codes, a_bits)
    b_regs = fragments.pack_b(b.codes, b_bits)
    c_regs = fragments.pack_c(acc.codes, d_bits)
    try:
        d_gpu = cupy.zeros_like(cupy.asarray(c_regs))
        kernel((m // 16, n // 8), (32,),
               (cupy.asarray(a_regs), cupy.asarray(b_regs), cupy.asarray(c_regs), d_gpu,
                np.int32(k // k_tile), np.int32(n // 8)))
        cupy.cuda.runtime.deviceSynchronize()
        d_regs = d_gpu.get()
    except Exception as e:
        return {"part": part, "status": "raised", **describe_exception(e),
                "instruction": instr.text, "seconds": time.perf_counter() - start}
    result = data.decode(d_dtype, fragments.unpack_c(d_regs, d_bits, m, n))
    expected = data.reference(acc.values, a.values, b.values)
    # Compare through the reference's dtype so integer results are checked bit-exactly.
    if data.is_integer(d_dtype):
        result = result.astype(np.int64)
    return _ran(part, result, expected, {**spec, "values": [
        {**acc_v, "dtype": d_dtype}, a_v, b_v], "intended": [0, 1, 2]}, start,
        instruction=instr.text)


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
    api = case["flagged"]["api"]
    if chosen == "jax" and api == "plgpu.mma":
        from mmalint.confirm.kernels import has_plgpu_mma

        if not has_plgpu_mma():
            version = ".".join(str(env["jax_version"]).split(".")[:2])
            emit({"part": "unavailable", **env, "reason": f"jax {version} has no plgpu.mma"})
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
