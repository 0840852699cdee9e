"""Score mmalint on the blind-written kernels of issue 11 (tests/data/blind11).

Two sets, each with a MANIFEST.toml:
- `lib/`: small projects in which a caller in one module decides the dtype an MMA call in
  another module gets. Each project is checked as a program, from its own directory (`check .`),
  and a bug counts as found only when the error at the MMA call also names the caller's file in a
  related location (the "called from" note of the cross-module analysis).
- `evidence/`: one-file kernels whose operand dtype only the kernel's own code constrains, and
  the seed's `from_tensor` spellings.

A bug is found when, at every jax version it targets, an error finding is on its `line` (or its
`acc_line`); a clean kernel is clean when no error finding is on it at any of its versions.

    python benchmarks/blind11.py [PYTHON]

PYTHON is the interpreter whose `mmalint` is scored (default: this one).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent / "tests" / "data" / "blind11"


def findings(python: str, version: str, paths: list[str], cwd: Path) -> list[dict[str, Any]]:
    out = subprocess.run(
        [python, "-m", "mmalint", "check", "--output-format", "json", "--exit-zero",
         "--target-jax", version, *paths],
        capture_output=True, text=True, check=False, cwd=cwd,
    )
    try:
        result: list[dict[str, Any]] = json.loads(out.stdout)
    except json.JSONDecodeError:
        sys.exit(f"mmalint gave no JSON for jax {version} in {cwd}:\n{out.stderr[-2000:]}")
    return result


def score(kernel: dict[str, Any], by_version: dict[str, list[dict[str, Any]]]) -> tuple[bool, list[str]]:
    """Whether the kernel is found (a bug) or clean (a trap), and the stray errors on it."""
    lines = {kernel["line"], kernel.get("acc_line", 0)} - {0}
    caller = Path(kernel.get("caller", "").partition(":")[0]).name
    ok = True
    stray: list[str] = []
    for v in kernel["target_jax"]:
        errors = [
            d for d in by_version[v]
            if Path(d["filename"]).as_posix().endswith(kernel["file"]) and d["severity"] == "error"
        ]
        if kernel["bug"]:
            hits = [d for d in errors if d["location"]["row"] in lines]
            if caller:  # the cross-module note must name the caller's file
                hits = [d for d in hits if any(Path(r["filename"]).name == caller for r in d.get("related", []))]
            ok = ok and bool(hits)
            errors = [d for d in errors if d["location"]["row"] not in lines]
        else:
            ok = ok and not errors
        stray += [f"{v}:{d['code']}@{d['location']['row']}" for d in errors]
    return ok, stray


def main(argv: list[str]) -> int:
    python = argv[1] if len(argv) > 1 else sys.executable
    totals: dict[str, list[int]] = {}
    for part in ("lib", "evidence"):
        manifest = ROOT / part / "MANIFEST.toml"
        if not manifest.exists():
            continue
        kernels = tomllib.loads(manifest.read_text())["kernel"]
        found = bugs = clean = traps = 0
        for kernel in kernels:
            if "project" in kernel:
                cwd, paths = ROOT / part / kernel["project"], ["."]
            else:
                cwd, paths = ROOT / part, [kernel["file"]]
            by_version = {v: findings(python, v, paths, cwd) for v in kernel["target_jax"]}
            ok, stray = score(kernel, by_version)
            name = f"{kernel.get('project', '')}/{kernel['file']}".lstrip("/")
            if kernel["bug"]:
                bugs += 1
                found += ok
                tag = "FOUND" if ok else "MISS "
            else:
                traps += 1
                clean += ok
                tag = "clean" if ok else "FP   "
            print(tag, name, " ".join(stray))
        totals[part] = [found, bugs, clean, traps]
        print(f"{part}: bugs found {found}/{bugs}; clean {clean}/{traps}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
