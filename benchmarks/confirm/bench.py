"""Time the reference lowering per tier: wall time, cases per second, median time per case.

    PYTHONPATH=. python benchmarks/confirm/bench.py [FINDINGS] [--tier ptx] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from mmalint.confirm import confirm_findings, read_findings


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("findings", nargs="?",
                        default=str(Path(__file__).parent / "findings.json"))
    parser.add_argument("--tier", default="ptx")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--gpu-backend", default="auto")
    args = parser.parse_args()
    findings = read_findings(args.findings)
    walls, per_case = [], []
    kinds: dict[str, int] = {}
    for _ in range(args.repeat):
        start = time.perf_counter()
        verdicts = confirm_findings(findings, {args.tier}, jobs=args.jobs, timeout=300,
                                    gpu_backend=args.gpu_backend)
        walls.append(time.perf_counter() - start)
        per_case += [v.seconds for v in verdicts]
        for v in verdicts:
            kinds[v.verdict] = kinds.get(v.verdict, 0) + 1
    wall = statistics.median(walls)
    print(json.dumps({
        "tier": args.tier, "jobs": args.jobs, "cases": len(findings),
        "wall_s": round(wall, 3), "cases_per_s": round(len(findings) / wall, 2),
        "median_case_s": round(statistics.median(per_case), 3),
        "max_case_s": round(max(per_case), 3), "verdicts": kinds,
        "python": sys.version.split()[0],
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
