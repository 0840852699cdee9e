"""Wall time of `mmalint check` over a tree, and the slowest files analysed.

    python benchmarks/speed.py --runs 3 --target-jax 0.11 DIR

Prints one JSON object: the median and every run of the whole command (a fresh process each
time, as a user runs it), and the five slowest files checked in-process.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from mmalint.pipeline.file import check_bytes
from mmalint.pipeline.text import worth_running
from mmalint.settings import Settings


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--target-jax", default="0.11")
    args = parser.parse_args()
    runs = []
    for _ in range(args.runs):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "mmalint", "check", "-q", "--target-jax", args.target_jax, args.path],
            capture_output=True, check=False,
        )
        runs.append(round(time.perf_counter() - start, 2))
    files = sorted(Path(args.path).rglob("*.py"))
    start = time.perf_counter()
    candidates = [p for p in files if worth_running(p.read_bytes())]
    prefilter = time.perf_counter() - start
    timings = []
    for path in candidates:
        t = time.perf_counter()
        check_bytes(str(path), path.read_bytes(), Settings(target_jax=args.target_jax))
        timings.append((round(time.perf_counter() - t, 3), str(path.relative_to(args.path))))
    timings.sort(reverse=True)
    print(json.dumps({
        "python": sys.version.split()[0],
        "cores": os.cpu_count(),
        "files": len(files),
        "files_past_prefilter": len(candidates),
        "prefilter_seconds": round(prefilter, 3),
        "check_wall_median_s": statistics.median(runs),
        "check_wall_runs_s": runs,
        "in_process_total_s": round(sum(t for t, _ in timings), 2),
        "slowest_files": timings[:5],
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
