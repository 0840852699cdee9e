"""Whether a file's roots can be run apart: the premise of re-running, after an edit, only the
roots that read the edited block (issue 12's "summaries per function root").

    python benchmarks/root_partition.py --target-jax 0.11 FILE [FILE...]

Run from the root of the files' project (its `pyproject.toml` names the checked tree). For each
file, its own roots (`analysis.run.find_roots`; not the callers elsewhere in the tree that a
check may also run) are run once in one interpreter, in order: the reference. Then, for each
function root R, three fresh interpreters run the roots before R, R alone, and the roots after
R; their records, deduplicated as one interpreter does (`core.Machine.record`), make a report
that is compared with the reference's (`engine._report`, JSON). A difference means the roots
share something a re-run of R alone would miss: module-level state, the record dedup, or the
budget's shares (each interpreter has a file's whole budget).

Prints one JSON object: per file, the roots, how many function roots gave the same report
(`same`; `order_only`: the same diagnostics in another order), the names of those that did not,
the reference's seconds and R's alone (median, p90, max: what re-running one root would cost
with the program's indexes warm). No code of the files is imported or run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any

from mmalint import engine
from mmalint.analysis import index_source
from mmalint.analysis.by_root import merged
from mmalint.analysis.interpreter import Interpreter
from mmalint.analysis.interpreter.core import site_key, use_key
from mmalint.analysis.run import Analysis, find_roots
from mmalint.catalog import load_catalog
from mmalint.pipeline.reach import program_for
from mmalint.settings import Settings
from mmalint.tree import tree_spec


def partition(path: str, target_jax: str) -> dict[str, Any]:
    filename = os.path.abspath(path)
    with open(filename, encoding="utf-8") as handle:
        text = handle.read()
    settings = Settings(target_jax=target_jax, project_root=os.getcwd())
    catalog = load_catalog()
    program = program_for(tree_spec(settings, (filename,), ((filename, text),), absolute=True))
    source = index_source(filename, text, keep=True)

    def report(runs: list[Interpreter]) -> list[dict[str, Any]]:
        sites = merged((site_key(s), s) for run in runs for s in run.sites)
        uses = merged((use_key(u), u) for run in runs for u in run.uses)
        analysis = Analysis(sites, uses, all(run.complete for run in runs))
        found = engine._report(filename, settings, catalog, program, target_jax, source, analysis)
        return [d.to_json() for d in found.diagnostics]

    def run(roots: list[Any]) -> Interpreter:
        interpreter = Interpreter(source, None, program)
        interpreter.run_roots(roots)
        return interpreter

    with program.checking(source):
        roots = find_roots(source, program)
        start = time.perf_counter()
        reference = run(roots)
        reference_s = time.perf_counter() - start
        want = report([reference])
        same, order_only, differ, alone = 0, 0, [], []
        for i, root in enumerate(roots):
            if root.kind != "def":
                continue
            before = run(roots[:i])
            start = time.perf_counter()
            itself = run([root])
            alone.append(time.perf_counter() - start)
            after = run(roots[i + 1 :])
            got = report([before, itself, after])
            if got == want:
                same += 1
            elif sorted(map(json.dumps, got)) == sorted(map(json.dumps, want)):
                order_only += 1
            else:
                owner = f"{root.parent.name}." if root.parent is not None else ""
                differ.append(f"{owner}{root.name}")
    alone.sort()
    return {
        "roots": len(roots),
        "function_roots": same + order_only + len(differ),
        "same": same,
        "order_only": order_only,
        "differ": differ,
        "diagnostics": len(want),
        "reference_s": round(reference_s, 3),
        "alone_s": {
            "median": round(statistics.median(alone), 3),
            "p90": round(alone[int(len(alone) * 0.9)], 3),
            "max": round(alone[-1], 3),
        } if alone else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("path", nargs="+")
    parser.add_argument("--target-jax", default="0.11")
    args = parser.parse_args()
    print(json.dumps({path: partition(path, args.target_jax) for path in args.path}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
