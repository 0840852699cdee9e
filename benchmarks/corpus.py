"""Accuracy and coverage on a corpus of real kernels: files, MMA calls, findings, time.

    python benchmarks/corpus.py --target-jax 0.11 --label jax@cec06d1 DIR [DIR...]

Prints one JSON object. A finding of error severity on code that passes jax's own CI is a false
positive unless it comes with a demonstrated bug.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from mmalint.catalog import load_catalog
from mmalint.pipeline.file import check_bytes
from mmalint.pipeline.text import worth_running
from mmalint.settings import Settings


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--target-jax", default="0.11")
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    settings = Settings(target_jax=load_catalog().resolve_version(args.target_jax))
    files = sorted({p for root in args.paths for p in Path(root).rglob("*.py")})
    stats: Counter[str] = Counter()
    findings: list[dict[str, object]] = []
    start = time.perf_counter()
    for path in files:
        data = path.read_bytes()
        stats["files"] += 1
        if not worth_running(data):
            continue
        stats["files_parsed"] += 1
        report = check_bytes(str(path), data, settings)
        stats["mma_calls"] += report.calls
        stats["mma_calls_fully_known"] += report.known_calls
        for api, n in report.calls_by_api.items():
            stats[f"calls[{api}]"] += n
        for d in report.diagnostics:
            stats[f"findings[{d.severity}]"] += 1
            findings.append({"code": d.code or d.name, "severity": d.severity, "file": d.filename,
                             "row": d.range.start.row, "message": d.message})
    elapsed = time.perf_counter() - start
    print(json.dumps({
        "label": args.label,
        "target_jax": settings.target_jax,
        "python": sys.version.split()[0],
        "seconds": round(elapsed, 2),
        **dict(sorted(stats.items())),
        "findings": findings,
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
