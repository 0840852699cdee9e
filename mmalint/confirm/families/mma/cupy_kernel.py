"""gpu-tier CuPy backend of the warp-level family: the bundled `mma.sync` kernel
(`ptx.cuda_kernel`) compiled by NVRTC and run on fragments packed on the host
(`fragments.py`), for machines with CuPy and no jax. Imported only inside the gpu worker."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from mmalint.confirm import data, dtypes
from mmalint.confirm.families.mma import fragments
from mmalint.confirm.families.mma.facts import TILE_M, TILE_N
from mmalint.confirm.families.mma.instruction import MmaInstruction
from mmalint.confirm.families.mma.ptx import KERNEL_NAME, cuda_kernel
from mmalint.confirm.protocol import describe_exception

Spec = dict[str, Any]

# The PTX types of `mma.sync` operands and accumulators this path decodes (an unsigned int32
# accumulator is spelled `.u32`); any other type is not run.
PTX_TYPES = ("s32", "u32", "f32", "f16", "bf16", "f64", "s8", "u8", "s4", "u4", "e4m3", "e5m2")


def _ptx_dtype(ptx_type: str) -> tuple[str, int]:
    """(NumPy-style dtype for decoding, bit width), or ("", 0) for a type not run here."""
    name = dtypes.dtype_for_ptx(ptx_type) if ptx_type in PTX_TYPES else None
    bits = dtypes.bit_width(name) if name else None
    return (name, bits) if name and bits else ("", 0)


def _bits(dtype: str) -> int:
    try:
        return data.bit_width(dtype)
    except ValueError:
        return 0


def _compile_message(error: BaseException) -> str:
    """NVRTC/ptxas output without the echoed source: the error lines, else the first line."""
    text = str(error)
    lines = [line.strip() for line in text.splitlines()
             if "error" in line.lower() and line.strip()]
    return "; ".join(dict.fromkeys(lines)) if lines else text.strip().splitlines()[0]


def run_part(part: str, spec: Spec, seed: int) -> dict[str, Any]:
    """Compile the instruction the call emits and run it on packed fragments; compare the
    result with NumPy (`data.ran_record`)."""
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
    pos_acc, pos_a, _ = spec["intended"]
    acc_v, a_v = spec["values"][pos_acc], spec["values"][pos_a]
    m, k = a_v["shape"]
    n = acc_v["shape"][1]
    d_dtype, d_bits = _ptx_dtype(instr.d)
    a_bits, b_bits = (_ptx_dtype(t)[1] for t in (instr.a, instr.b))
    acc_dtype, a_dtype, b_dtype = spec["data"]
    k_tile = fragments.k_tile(a_bits or 16)
    mismatch = [
        why for why, bad in (
            ("operand widths differ from the data", a_bits != _bits(a_dtype)
             or b_bits != _bits(b_dtype) or a_bits != b_bits or not a_bits),
            ("the accumulator width differs from the data", d_bits != _bits(acc_dtype)),
            ("the shapes do not divide into 16x8 tiles", m % TILE_M or n % TILE_N or k % k_tile),
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
        kernel((m // TILE_M, n // TILE_N), (32,),
               (cupy.asarray(a_regs), cupy.asarray(b_regs), cupy.asarray(c_regs), d_gpu,
                np.int32(k // k_tile), np.int32(n // TILE_N)))
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
    return data.ran_record(part, result, expected, acc_dtype=d_dtype, k=int(k), start=start,
                           instruction=instr.text)
