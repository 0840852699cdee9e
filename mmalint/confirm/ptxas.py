"""Running `ptxas`: where it is, which PTX ISA it speaks, and what it says about a module."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_ARCH = "sm_90a"

# CUDA release -> newest PTX ISA its ptxas accepts (PTX ISA release notes).
_PTX_ISA_BY_CUDA: dict[tuple[int, int], str] = {
    (11, 0): "7.0", (11, 1): "7.1", (11, 2): "7.2", (11, 3): "7.3", (11, 4): "7.4",
    (11, 5): "7.5", (11, 6): "7.6", (11, 7): "7.7", (11, 8): "7.8", (12, 0): "8.0",
    (12, 1): "8.1", (12, 2): "8.2", (12, 3): "8.3", (12, 4): "8.4", (12, 5): "8.5",
    (12, 6): "8.5", (12, 7): "8.6", (12, 8): "8.7", (12, 9): "8.8", (13, 0): "9.0",
}


@dataclass(frozen=True)
class Ptxas:
    path: str
    cuda: tuple[int, int] | None

    @property
    def ptx_isa(self) -> str:
        """The newest `.version` this ptxas accepts, so no instruction fails for the version."""
        if self.cuda is None:
            return "7.8"
        if self.cuda in _PTX_ISA_BY_CUDA:
            return _PTX_ISA_BY_CUDA[self.cuda]
        older = [v for k, v in _PTX_ISA_BY_CUDA.items() if k <= self.cuda]
        return older[-1] if older else "7.0"

    @property
    def label(self) -> str:
        release = f"{self.cuda[0]}.{self.cuda[1]}" if self.cuda else "?"
        return f"ptxas (CUDA {release})"


@dataclass(frozen=True)
class Assembly:
    ok: bool
    message: str  # ptxas's error lines without the file prefix; "" when it assembled
    seconds: float


@functools.cache
def find_ptxas() -> Ptxas | None:
    """`ptxas` on PATH, under CUDA_HOME or /usr/local/cuda, or from a pip `nvidia-cuda-nvcc`
    wheel (what jax's CUDA packages install), with its CUDA release."""
    candidates = [shutil.which("ptxas")]
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            candidates.append(str(Path(home) / "bin" / "ptxas"))
    for entry in sys.path:
        if entry and Path(entry, "nvidia").is_dir():
            candidates += sorted(str(p) for p in Path(entry, "nvidia").glob("*/bin/ptxas"))
    for path in candidates:
        if path and os.access(path, os.X_OK):
            return Ptxas(path, _cuda_release(path))
    return None


def _cuda_release(path: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"release (\d+)\.(\d+)", out.stdout)
    return (int(match.group(1)), int(match.group(2))) if match else None


def normalize_arch(arch: str | None) -> str:
    """`sm_90a`, `90`, `9.0`, `sm90` -> `sm_90a`/`sm_90`; None -> the default (sm_90a)."""
    if not arch:
        return DEFAULT_ARCH
    text = arch.strip().lower().replace("compute_", "sm_")
    match = re.fullmatch(r"(?:sm_?)?(\d+)(?:\.(\d+))?([af]?)", text)
    if not match:
        return arch
    major, minor, suffix = match.groups()
    digits = f"{major}{minor}" if minor is not None else major
    return f"sm_{digits}{suffix}"


_PREFIX = re.compile(r"^ptxas\s+\S+,\s+line\s+\d+;\s*")


def _clean(stderr: str) -> str:
    lines = []
    for line in stderr.splitlines():
        line = line.strip()
        if not line or "Ptx assembly aborted" in line:
            continue
        line = _PREFIX.sub("", line)
        line = re.sub(r"^(error|warning|fatal)\s*:\s*", r"\1: ", line)
        lines.append(line)
    return "; ".join(lines)


def assemble(ptxas: Ptxas, ptx: str, arch: str, *, timeout: float = 60.0) -> Assembly:
    """Ask ptxas whether `ptx` assembles for `arch`."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mmalint-ptx-") as tmp:
        src = Path(tmp) / "kernel.ptx"
        src.write_text(ptx, encoding="utf-8")
        try:
            out = subprocess.run(
                [ptxas.path, f"-arch={arch}", str(src), "-o", str(Path(tmp) / "kernel.cubin")],
                capture_output=True, text=True, timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return Assembly(False, f"ptxas timed out after {timeout:g} s",
                            time.perf_counter() - start)
        except OSError as e:
            return Assembly(False, f"cannot run ptxas: {e}", time.perf_counter() - start)
    seconds = time.perf_counter() - start
    if out.returncode == 0:
        return Assembly(True, "", seconds)
    return Assembly(False, _clean(out.stderr + out.stdout) or f"exit {out.returncode}", seconds)


def is_tool_problem(message: str) -> bool:
    """ptxas refused the module for the toolchain (PTX version, unknown target), not the mma."""
    return bool(re.search(
        r"Unsupported \.version|Unsupported \.target|not a valid value for option|"
        r"Value '.*' is not defined for option|timed out|cannot run ptxas",
        message,
    ))
