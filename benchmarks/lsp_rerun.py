"""The language server's re-run of one root (`mmalint/lsp/rerun.py`): how often an edit inside
a root is answered by re-running that root alone, how long that takes, and whether each such
answer is what a fresh lint gives.

    python benchmarks/lsp_rerun.py FILE [--edits 40] [--target-jax 0.11] [--seed 0] [--in WHERE]

Run from the root of the file's project. In this process, as the server's lint child does
(`worker.run_job`, its collector tuned as the child's), the file is linted, then each of
`--edits` edits is made inside a function root of the last lint (`--in entered`: inside any
def of the file a root's run entered, helpers that other roots call too; `--in statements`: a
module-level assignment of one row whose value a root's run read, half of the edits putting
its value in parentheses; `--in anywhere`: any row that ends a statement, as `lsp_latency.py`
edits; half of them a comment appended to an assignment's row, half a row added after one,
which moves every row below it),
linted with the last lint's memo (timed), and linted afresh from nothing (no kept lint, tree
or index) to compare. Prints one JSON object: how each edit was answered (`rerun`, `reused`,
`full`), how many answers differed from the fresh lint (must be 0), and milliseconds (p50,
p90, max) of the re-runs and of the full lints. No code of the file is imported or run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from mmalint import lines as lines_module
from mmalint.analysis import indexes
from mmalint.lines import split_lines
from mmalint.lsp import rerun
from mmalint.lsp.worker import Job, Linted, run_job
from mmalint.pipeline.options import LintOptions
from mmalint.runtime import tune_gc

# An assignment on one row, outside strings and brackets: a comment after it, or a row after
# it at its indentation, changes nothing else.
_ASSIGNMENT = re.compile(r"^(\s+)[A-Za-z_][\w.]* = [^#'\"]*[^,(\[{\\\s]\s*$")
# A row that ends a statement outside strings and comments, anywhere (`--in anywhere`: where
# `lsp_latency.py` edits): a comment after it changes nothing else.
_ANY_ROW = re.compile(r"^(\s*)[^\s#'\"][^#'\"]*[^,(\[{\\\s]\s*$")
# The same at the top level, one row (a module-level statement's edits, `--in statements`).
_TOP_ASSIGNMENT = re.compile(r"^()[A-Za-z_]\w* = [^#'\"]*[^,(\[{\\\s]\s*$")


def _lint(path: Path, text: str, target_jax: str | None, memo: Any = None) -> Linted:
    outcome = run_job(Job("lint", str(path), text, target_jax, LintOptions(), memo=memo))
    if not isinstance(outcome, Linted):
        raise SystemExit(f"lsp_rerun: the lint did not end: {outcome}")
    return outcome


def _fresh(path: Path, text: str, target_jax: str | None) -> Linted:
    """A full lint from nothing: no kept lint, tree or index of an earlier text helps it; what
    the process kept is as it was afterwards (the next edit is timed as the child would take it)."""
    saved = (dict(rerun._kept), list(lines_module._trees), list(lines_module._regions),
             dict(indexes._INDEXED), dict(indexes._SHARED))
    lines_module._trees.clear()
    lines_module._regions.clear()
    indexes._INDEXED.clear()
    indexes._SHARED.clear()
    try:
        return _lint(path, text, target_jax)
    finally:
        for now, then in zip((rerun._kept, lines_module._trees, lines_module._regions, indexes._INDEXED,
                              indexes._SHARED), saved, strict=True):
            now.clear()
            now.update(then) if isinstance(now, dict) else now.extend(then)  # type: ignore[attr-defined]


def _ms(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    values = sorted(values)
    return {"p50": round(statistics.median(values), 1), "p90": round(values[int(len(values) * 0.9)], 1),
            "max": round(values[-1], 1), "n": len(values)}


def measure(path: Path, edits: int, target_jax: str | None, seed: int, where: str = "roots") -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    rng = random.Random(seed)
    last = _lint(path, text, target_jax)
    counts = {"rerun": 0, "reused": 0, "full": 0}
    differ: list[int] = []
    full_at: list[int] = []  # the rows of the edits a full lint answered
    times: dict[str, list[float]] = {"rerun": [], "full": []}
    for n in range(edits):
        kept = rerun._kept.get(str(path))
        if kept is None:
            break  # the last lint was not kept (it ran callers from other files, or out of budget)
        if where == "entered":  # helpers too: every def block of the file a root's run entered
            blocks = {id(block): block for run in kept.roots for block in run.entered if block.kind == "def"}
            roots = sorted((block.start_line, block.end_line) for block in blocks.values())
        elif where == "statements":  # module-level statements whose values a root's run read
            read = set().union(*rerun._reached(kept))
            blocks = {id(b): b for b in read if b.kind == "stmt" and b.parent is None}
            roots = sorted((block.start_line, block.end_line) for block in blocks.values())
        elif where == "anywhere":
            roots = [(1, len(split_lines(text)))]
        else:
            roots = [(run.block.start_line, run.block.end_line) for run in kept.roots if run.block.kind == "def"]
        lines = split_lines(text)
        pattern = {"statements": _TOP_ASSIGNMENT, "anywhere": _ANY_ROW}.get(where, _ASSIGNMENT)
        rows = [row for first, last_row in roots for row in range(first, last_row + 1) if pattern.match(lines[row - 1])]
        if not rows:
            break
        row = rng.choice(rows)
        match = pattern.match(lines[row - 1])
        assert match is not None
        if n % 2 == 0 or (where == "anywhere" and not _ASSIGNMENT.match(lines[row - 1])):
            lines[row - 1] = lines[row - 1].rstrip("\r\n") + f"  # edit {n}\n"
        elif where == "statements":  # its value in parentheses: the same value, a new text
            name, value = lines[row - 1].rstrip("\r\n").split(" = ", 1)
            lines[row - 1] = f"{name} = ({value})\n"
        else:
            lines.insert(row, f"{match.group(1)}_edit_{n} = {n}\n")
        text = "".join(lines)
        start = time.perf_counter()
        now = _lint(path, text, target_jax, last.memo)
        took = (time.perf_counter() - start) * 1000
        kind = "rerun" if now.rerun else "reused" if now.reused else "full"
        counts[kind] += 1
        if kind == "full":
            full_at.append(row)
        if kind in times:
            times[kind].append(took)
        fresh = _fresh(path, text, target_jax)
        if (now.report, now.noqa, now.others) != (fresh.report, fresh.noqa, fresh.others):
            differ.append(n)
        last = now
    return {
        "file": str(path),
        "lines": len(split_lines(text)),
        "findings": len(last.report.diagnostics),
        "in": where,
        "edits": sum(counts.values()),
        **counts,
        "differ_from_fresh": differ,
        "full_rows": full_at,
        "rerun_ms": _ms(times["rerun"]),
        "full_ms": _ms(times["full"]),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--target-jax", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--in", dest="where", choices=("roots", "entered", "statements", "anywhere"), default="roots",
                        help="edit inside function roots, inside any def a root's run entered (helpers), "
                             "a module-level statement whose value a root's run read, or any row")
    args = parser.parse_args()
    tune_gc()
    path = Path(os.path.abspath(args.path))
    result = measure(path, args.edits, args.target_jax, args.seed, args.where)
    print(json.dumps(result, indent=1))
    return 1 if result["differ_from_fresh"] else 0


if __name__ == "__main__":
    sys.exit(main())
