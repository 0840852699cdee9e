"""A stand-in for CuPy that emulates the bundled `mma.sync` kernel in NumPy (tests only).

It lets the gpu tier's CuPy path run end to end on a machine without a GPU: `RawModule`
"compiles" by asking the real ptxas about the instruction in the CUDA source, and the kernel
rebuilds each tile from the lanes' registers with the PTX ISA's fragment tables (written out
here shape by shape, independently of `mmalint.confirm.families.mma.fragments`), multiplies in
NumPy and writes the result registers back.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from mmalint.confirm import data
from mmalint.confirm.families.mma.instruction import MmaInstruction
from mmalint.confirm.families.mma.ptx import ptx_kernel
from mmalint.confirm.ptxas import assemble, find_ptxas

__version__ = "0.0-fake"

_TYPES = {"s32": "int32", "u32": "uint32", "f32": "float32", "f16": "float16",
          "bf16": "bfloat16", "f64": "float64", "s8": "int8", "u8": "uint8", "s4": "int4",
          "u4": "uint4", "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}


class CompileException(Exception):
    pass


class _Array:
    def __init__(self, value: np.ndarray) -> None:
        self.value = np.array(value)

    def get(self) -> np.ndarray:
        return self.value.copy()


def asarray(value: np.ndarray) -> _Array:
    return _Array(value)


def zeros_like(array: _Array) -> _Array:
    return _Array(np.zeros_like(array.value))


def _a_pos(bits: int, lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    if bits == 16:
        return (g if i in (0, 1, 4, 5) else g + 8), t * 2 + (i & 1) + (8 if i >= 4 else 0)
    if bits == 8:
        return (g if (i < 4 or 8 <= i < 12) else g + 8), t * 4 + (i & 3) + (16 if i >= 8 else 0)
    if bits == 4:
        return (g if (i < 8 or 16 <= i < 24) else g + 8), t * 8 + (i & 7) + (32 if i >= 16 else 0)
    return g + 8 * (i % 2), t + 4 * (i // 2)


def _b_pos(bits: int, lane: int, i: int) -> tuple[int, int]:
    g, t = lane >> 2, lane % 4
    if bits == 16:
        return t * 2 + (i & 1) + (8 if i >= 2 else 0), g
    if bits == 8:
        return t * 4 + (i & 3) + (16 if i >= 4 else 0), g
    if bits == 4:
        return t * 8 + (i & 7) + (32 if i >= 8 else 0), g
    return t + 4 * i, g


def _element(reg: int, bits: int, i: int) -> int:
    per = max(32 // bits, 1)
    return reg if bits == 64 else (reg >> (bits * (i % per))) & ((1 << bits) - 1)


class _Kernel:
    def __init__(self, instr: MmaInstruction) -> None:
        self.instr = instr

    def __call__(self, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...]
                 ) -> None:
        a_arr, b_arr, c_arr, d_arr, k_tiles, _ = args
        ins = self.instr
        ab = data.bit_width(_TYPES[ins.a])
        cbits = data.bit_width(_TYPES[ins.d])
        per = max(32 // ab, 1)
        kt = 8 * per
        a_regs, b_regs, c_regs = a_arr.value, b_arr.value, c_arr.value
        out = np.zeros_like(c_regs)
        for mt in range(grid[0]):
            for nt in range(grid[1]):
                acc = np.zeros((16, 8), dtype=np.uint64)
                for lane in range(32):
                    for j in range(4):
                        row, col = (lane >> 2) + 8 * (j // 2), 2 * (lane % 4) + j % 2
                        reg = int(c_regs[mt, nt, lane, j // 2 if cbits == 16 else j])
                        acc[row, col] = (reg >> (16 * (j % 2))) & 0xFFFF if cbits == 16 else reg
                total = data.decode(_TYPES[ins.d], acc)
                for kk in range(int(k_tiles)):
                    a = np.zeros((16, kt), dtype=np.uint64)
                    b = np.zeros((kt, 8), dtype=np.uint64)
                    for lane in range(32):
                        for i in range(4 * per):
                            a[_a_pos(ab, lane, i)] = _element(
                                int(a_regs[mt, kk, lane, i // per]), ab, i)
                        for i in range(2 * per):
                            b[_b_pos(ab, lane, i)] = _element(
                                int(b_regs[kk, nt, lane, i // per]), ab, i)
                    total = total + data.decode(_TYPES[ins.a], a) @ data.decode(_TYPES[ins.b], b)
                for lane in range(32):
                    for j in range(4):
                        row, col = (lane >> 2) + 8 * (j // 2), 2 * (lane % 4) + j % 2
                        code = _encode(ins.d, total[row, col])
                        if cbits == 16:
                            out[mt, nt, lane, j // 2] |= code << (16 * (j % 2))
                        else:
                            out[mt, nt, lane, j] = code
        d_arr.value[...] = out


def _encode(ptx_type: str, value: float) -> int:
    if ptx_type in ("s32", "u32"):
        return int(value) & 0xFFFFFFFF
    if ptx_type == "f32":
        return int(np.array(value, dtype=np.float32).view(np.uint32))
    if ptx_type == "f16":
        return int(np.array(value, dtype=np.float16).view(np.uint16))
    return int(np.array(value, dtype=np.float64).view(np.uint64))


class RawModule:
    def __init__(self, code: str, options: tuple[str, ...] = ()) -> None:
        match = re.search(r"mma\.sync\.aligned\.m16n8k(\d+)\.row\.col\.(\w+)\.(\w+)\.(\w+)\.(\w+)",
                          code)
        assert match, "no mma.sync in the source"
        k, d, a, b, c = match.groups()
        self.instr = MmaInstruction(int(k), d, a, b, c)

    def get_function(self, name: str) -> _Kernel:
        ptxas = find_ptxas()
        assert ptxas is not None
        result = assemble(ptxas, ptx_kernel(self.instr, arch="sm_90a", version=ptxas.ptx_isa),
                          "sm_90a")
        if not result.ok:
            raise CompileException(f"ptxas application ptx input, line 1; {result.message}")
        return _Kernel(self.instr)


class _Runtime:
    @staticmethod
    def getDeviceCount() -> int:
        return 1

    @staticmethod
    def getDeviceProperties(index: int) -> dict[str, Any]:
        return {"name": b"Fake GPU (NumPy emulation)", "major": 9, "minor": 0}

    @staticmethod
    def deviceSynchronize() -> None:
        return None


class _Cuda:
    runtime = _Runtime()


cuda = _Cuda()
