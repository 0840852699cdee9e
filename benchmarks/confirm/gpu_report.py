"""Write the Markdown report of a GPU-machine run of `mmalint confirm` (used by run_gpu.sh).

    python benchmarks/confirm/gpu_report.py OUT_DIR > OUT_DIR/confirm-gpu.md

Reads OUT_DIR/confirm-gpu.json (all tiers, jax backend), OUT_DIR/confirm-gpu-layouts.json (the
layout, shape and API findings, all tiers), OUT_DIR/confirm-gpu-cupy.json (gpu tier, CuPy
backend), OUT_DIR/confirm-gpu-async.json (the wgmma and tcgen05 examples' findings, all tiers),
OUT_DIR/examples-gpu.md (those examples run, `run_examples.py`) and
OUT_DIR/confirm-gpu-tests.txt (pytest), whichever exist.
"""

from __future__ import annotations

import datetime
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any


def _run(*cmd: str) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine() -> dict[str, str]:
    smi = _run("nvidia-smi", "--query-gpu=index,name,driver_version,compute_cap",
               "--format=csv,noheader")
    cuda = re.search(r"CUDA Version:\s*([\d.]+)", _run("nvidia-smi"))
    jax_version = _run(sys.executable, "-c", "import jax; print(jax.__version__)")
    jaxlib_cuda = _run(sys.executable, "-c",
                       "import jax; print(getattr(jax.devices()[0], 'device_kind', '?'))")
    cupy = _run(sys.executable, "-c", "import cupy; print(cupy.__version__)")
    gpus = [line.split(", ") for line in smi.splitlines() if line.strip()]
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "gpu": "; ".join(f"{g[0]}: {g[1]} (sm {g[3]})" for g in gpus if len(g) >= 4) or "?",
        "driver": gpus[0][2] if gpus and len(gpus[0]) >= 3 else "?",
        "cuda": cuda.group(1) if cuda else "?",
        "jax": jax_version or "not installed",
        "jax device": jaxlib_cuda or "?",
        "cupy": cupy or "not installed",
        "python": sys.version.split()[0],
    }


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(verdicts: list[dict[str, Any]]) -> list[str]:
    lines = ["| finding | tier | verdict | evidence | time |", "|---|---|---|---|---|"]
    for v in verdicts:
        loc = v["location"]
        lines.append(
            f"| {v['code']} `{v['filename']}:{loc['row']}:{loc['column']}` | {v['tier']} | "
            f"**{v['verdict']}** | {_cell(v['evidence'])} | {v['seconds']:.2f} s |")
    return lines


def timing(verdicts: list[dict[str, Any]], label: str) -> list[str]:
    lines = []
    for tier in ("ptx", "jax", "gpu"):
        times = [v["seconds"] for v in verdicts if v["tier"] == tier]
        if times:
            counts: dict[str, int] = {}
            for v in verdicts:
                if v["tier"] == tier:
                    counts[v["verdict"]] = counts.get(v["verdict"], 0) + 1
            summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
            lines.append(f"| {label} | {tier} | {len(times)} | {statistics.median(times):.2f} s"
                         f" | {max(times):.2f} s | {summary} |")
    return lines


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    facts = machine()
    print("# mmalint confirm on a GPU\n")
    print("| " + " | ".join(facts) + " |")
    print("|" + "---|" * len(facts))
    print("| " + " | ".join(_cell(v) for v in facts.values()) + " |\n")
    runs = [("jax backend, all tiers", out / "confirm-gpu.json"),
            ("layouts, shapes and APIs, all tiers", out / "confirm-gpu-layouts.json"),
            ("CuPy backend, gpu tier", out / "confirm-gpu-cupy.json"),
            ("wgmma and tcgen05 examples, all tiers", out / "confirm-gpu-async.json")]
    loaded = []
    for label, path in runs:
        try:
            loaded.append((label, json.loads(path.read_text())))
        except (OSError, json.JSONDecodeError) as e:
            print(f"*{label}: no results ({e.__class__.__name__}: {e})*\n")
    if loaded:
        print("## Time per case\n")
        print("| run | tier | cases | median | max | verdicts |\n|---|---|---|---|---|---|")
        for label, verdicts in loaded:
            print("\n".join(timing(verdicts, label)))
        print()
    for label, verdicts in loaded:
        print(f"## {label}\n")
        print("\n".join(table(verdicts)))
        print()
    examples = out / "examples-gpu.md"
    if examples.exists() and examples.read_text().strip():
        print("## wgmma and tcgen05 examples run on the GPU\n")
        print(examples.read_text().strip() + "\n")
    tests = out / "confirm-gpu-tests.txt"
    if tests.exists():
        tail = tests.read_text().strip().splitlines()[-40:]
        print("## pytest -m gpu tests/confirm\n\n```\n" + "\n".join(tail) + "\n```")
    return 0


if __name__ == "__main__":
    sys.exit(main())
