"""The ptx tier against the real ptxas (marker `ptxas`)."""

from __future__ import annotations

import ctypes
import glob
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from mmalint.confirm import confirm_findings
from mmalint.confirm.families.mma.instruction import MmaInstruction
from mmalint.confirm.families.mma.ptx import cuda_kernel, ptx_kernel
from mmalint.confirm.ptxas import assemble, find_ptxas, normalize_arch

pytestmark = pytest.mark.ptxas

# What ptxas says per fixture: the flagged instruction does not exist (confirmed), PTX has it
# and only Mosaic refuses (inconclusive), or the rule is not about the instruction.
EXPECTED: dict[str, tuple[str, str]] = {
    "MMA101-mgpu.mma-raw_int8_f32_acc": ("confirmed", "f32.s8.s8.f32"),
    "MMA102-mgpu.mma-raw_bf16_f16_acc": ("confirmed", "f16.bf16.bf16.f16"),
    "MMA102-mgpu.mma-raw_f16_f16_acc": ("inconclusive", "PTX allows this; the restriction "
                                        "is Mosaic's"),
    "MMA103-mgpu.mma-raw_i8_i4_mix": ("confirmed", "s32.s8.s4.s32"),
    "MMA104-mgpu.mma-raw_f32_operands": ("confirmed", "m16n8k8.row.col.f32.f32.f32.f32"),
    "MMA105-mgpu.mma-raw_acc_last": ("confirmed", "s8.s8.s32.s8"),
    "MMA201-mgpu.mma-raw_unsigned_acc": ("confirmed", "u32.s8.s8.u32"),
    "MMA202-mgpu.mma-raw_missing_is_signed": ("inconclusive", "tier does not apply to MMA202"),
    "MMA203-mgpu.mma-raw_int8_as_unsigned": ("inconclusive", "tier does not apply to MMA203: "
                                             "nothing raises; jax emits "
                                             "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32"),
    "MMA502-mgpu.mma-raw_fp8_sm80": ("confirmed", "requires .target sm_89 or higher"),
    "MMA101-plgpu.mma-pallas_int8_f32_acc": ("confirmed", "f32.s8.s8.f32"),
    "MMA102-plgpu.mma-pallas_bf16_f16_acc": ("confirmed", "f16.bf16.bf16.f16"),
    "MMA103-plgpu.mma-pallas_i8_u8_mix": ("inconclusive", "PTX allows this"),
    "MMA104-plgpu.mma-pallas_f32_operands": ("confirmed", "f32.f32.f32.f32"),
    "MMA105-plgpu.mma-pallas_acc_last": ("confirmed", "s8.s8.s32.s8"),
    "MMA201-plgpu.mma-pallas_uint32_acc": ("confirmed", "u32.s8.s8.u32"),
    "MMA204-plgpu.mma-pallas_uint8_warpgroup": ("inconclusive", "jax emits mma.sync.aligned."
                                                "m16n8k32.row.col.s32.s8.s8.s32 (assembles), "
                                                "the data needs mma.sync.aligned.m16n8k32.row."
                                                "col.s32.u8.u8.s32"),
}


def key(finding: dict[str, Any]) -> str:
    return f"{finding['code']}-{finding['call']['api']}-{Path(finding['filename']).stem}"


def test_fixture_verdicts(fixture_finding: dict[str, Any]) -> None:
    (verdict,) = confirm_findings([fixture_finding], {"ptx"})
    expected, evidence = EXPECTED[key(fixture_finding)]
    assert verdict.verdict == expected, verdict.evidence
    assert evidence in verdict.evidence
    assert verdict.tier == "ptx" and verdict.seconds < 5


def test_false_finding_is_not_confirmed(false_findings: list[dict[str, Any]]) -> None:
    verdicts = confirm_findings(false_findings, {"ptx"})
    # int8 x int8 -> int32: the instruction exists, so ptxas cannot confirm the MMA101 claim.
    assert verdicts[0].verdict == "inconclusive" and "PTX allows this" in verdicts[0].evidence
    assert "same instruction" in verdicts[1].evidence


@pytest.mark.parametrize(("instr", "arch", "ok", "message"), [
    (MmaInstruction(32, "f32", "e4m3", "e5m2", "f32"), "sm_89", True, ""),
    (MmaInstruction(32, "f32", "e4m3", "e4m3", "f32"), "sm_80", False, "requires .target sm_89"),
    (MmaInstruction(8, "f64", "f64", "f64", "f64"), "sm_90a", True, ""),
    (MmaInstruction(8, "f64", "f64", "f64", "f64"), "sm_80", False, "requires .target sm_90"),
    (MmaInstruction(64, "s32", "u4", "s4", "s32"), "sm_80", True, ""),
    (MmaInstruction(16, "f32", "bf16", "bf16", "f32"), "sm_120a", True, ""),
])
def test_ptx_facts(instr: MmaInstruction, arch: str, ok: bool, message: str) -> None:
    """PTX facts the verdicts rest on (mma-facts §9), through the bundled kernel."""
    ptxas = find_ptxas()
    assert ptxas is not None
    result = assemble(ptxas, ptx_kernel(instr, arch=arch, version=ptxas.ptx_isa), arch)
    assert result.ok is ok, result.message
    assert message in result.message


def test_normalize_arch() -> None:
    assert normalize_arch(None) == "sm_90a"
    assert normalize_arch("80") == "sm_80"
    assert normalize_arch("9.0") == "sm_90"
    assert normalize_arch("sm_100a") == "sm_100a"
    assert normalize_arch("compute_89") == "sm_89"


def _nvrtc() -> ctypes.CDLL | None:
    """libnvrtc from the environment or a `nvidia-cuda-nvrtc` wheel on sys.path."""
    candidates = [os.environ.get("MMALINT_NVRTC", "")]
    for root in sys.path:
        candidates += glob.glob(str(Path(root) / "nvidia" / "*" / "lib" / "libnvrtc.so*"))
        candidates += glob.glob(str(Path(root) / "nvidia" / "cuda_nvrtc" / "lib" / "libnvrtc.so*"))
    candidates += glob.glob("/usr/local/cuda*/lib64/libnvrtc.so*")
    for path in candidates:
        if path and "builtins" not in path and Path(path).exists():
            try:
                return ctypes.CDLL(path)
            except OSError:
                continue
    return None


def _nvrtc_ptx(lib: ctypes.CDLL, source: str) -> str:
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"k.cu", 0, None,
                                  None) == 0
    opts = [b"--gpu-architecture=compute_90", b"-std=c++11"]
    status = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    assert status == 0, log.value.decode()
    lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetPTX(prog, ptx)
    return ptx.value.decode()


@pytest.mark.parametrize("instr", [
    MmaInstruction(32, "s32", "s8", "s8", "s32"),
    MmaInstruction(16, "f32", "bf16", "bf16", "f32"),
    MmaInstruction(16, "f16", "f16", "f16", "f16"),
    MmaInstruction(8, "f64", "f64", "f64", "f64"),
    MmaInstruction(64, "s32", "u4", "u4", "s32"),
])
def test_cuda_kernel_compiles(instr: MmaInstruction) -> None:
    """The CuPy path's CUDA C (inline asm and constraints) through NVRTC, then ptxas: the
    closest this machine gets to `cupy.RawModule` without a GPU."""
    lib = _nvrtc()
    if lib is None:
        pytest.skip("libnvrtc not found (pip install nvidia-cuda-nvrtc, or set MMALINT_NVRTC)")
    ptxas = find_ptxas()
    assert ptxas is not None
    ptx = _nvrtc_ptx(lib, cuda_kernel(instr))
    assert instr.text in ptx
    # NVRTC may be newer than ptxas: the module uses nothing past the ISA ptxas speaks.
    ptx = re.sub(r"^\.version \S+", f".version {ptxas.ptx_isa}", ptx, flags=re.M)
    result = assemble(ptxas, ptx, "sm_90a")
    assert result.ok, result.message
