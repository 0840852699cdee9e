"""Score mmalint on the blind-written wgmma/tcgen05 kernels (tests/data/blind10, MANIFEST.toml).

A bug kernel is found when, for every jax version it targets, some error finding is on its
`line` (the MMA call) or its `acc_line` (where jax raises, when that is the accumulator); a clean
one is clean when no error finding is reported on it at any of its versions.

    python benchmarks/blind10.py [PYTHON]

PYTHON is the interpreter whose `mmalint` is scored (default: this one).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent / "tests" / "data" / "blind10"


def findings(python: str, version: str, files: list[str]) -> list[dict[str, Any]]:
    out = subprocess.run(
        [python, "-m", "mmalint", "check", "--output-format", "json", "--exit-zero",
         "--target-jax", version, *files],
        capture_output=True, text=True, check=False,
    )
    try:
        result: list[dict[str, Any]] = json.loads(out.stdout)
    except json.JSONDecodeError:
        sys.exit(f"mmalint gave no JSON for jax {version}:\n{out.stderr[-2000:]}")
    return result


def main(argv: list[str]) -> int:
    python = argv[1] if len(argv) > 1 else sys.executable
    kernels = tomllib.loads((ROOT / "MANIFEST.toml").read_text())["kernel"]
    versions = sorted({v for k in kernels for v in k["target_jax"]})
    by_version = {
        v: findings(python, v, [str(ROOT / k["file"]) for k in kernels if v in k["target_jax"]])
        for v in versions
    }
    found = bugs = clean = traps = 0
    for kernel in kernels:
        lines = {kernel["line"], kernel.get("acc_line", 0)} - {0}
        ok = True
        stray = []
        for v in kernel["target_jax"]:
            errors = [
                d for d in by_version[v]
                if d["filename"].endswith(kernel["file"]) and d["severity"] == "error"
            ]
            if kernel["bug"]:
                ok = ok and any(d["location"]["row"] in lines for d in errors)
                errors = [d for d in errors if d["location"]["row"] not in lines]
            else:
                ok = ok and not errors
            stray += [f"{v}:{d['code']}@{d['location']['row']}" for d in errors]
        if kernel["bug"]:
            bugs += 1
            found += ok
            tag = "FOUND" if ok else "MISS "
        else:
            traps += 1
            clean += ok
            tag = "clean" if ok else "FP   "
        print(tag, kernel["file"], " ".join(stray))
    print(f"bugs found {found}/{bugs}; clean {clean}/{traps}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
