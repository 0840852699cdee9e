"""Accuracy and coverage on a corpus of real kernels: files, MMA calls, findings, time.

    python benchmarks/corpus.py --target-jax 0.11 --label jax@cec06d1 DIR [DIR...]

Each DIR is read as its project's tree (`--alone`: each file by itself, as before issue 11).
Prints one JSON object. A finding of error severity on code that passes jax's own CI is a false
positive unless it comes with a demonstrated bug. Per API: `calls[<api>]` (distinct call sites
reached) and `known[<api>]` (those some path knows every operand's element type and signedness
of); `seconds` times the checks only, not the second pass that counts `known`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

from mmalint.analysis import ProgramSpec, analyze, index_source
from mmalint.analysis.source import SourceSyntaxError
from mmalint.catalog import Catalog, load_catalog
from mmalint.checks.families import normalize
from mmalint.config import find_project_root
from mmalint.engine import reported_here
from mmalint.pipeline.file import LintOptions, check_bytes
from mmalint.pipeline.reach import program_for, worth_checking
from mmalint.pipeline.text import InputError, decode_source
from mmalint.settings import Settings
from mmalint.tree import tree_spec


def known_by_api(
    filename: str, data: bytes, catalog: Catalog, version: str, program: ProgramSpec | None = None
) -> Counter[str]:
    """Per API, the call sites of a file some path knows every operand's element type and
    signedness of (the engine's "fully known", by API); in the checked tree (`program`), the
    sites this file's check reports (`engine.reported_here`)."""
    try:
        source = index_source(filename, decode_source(data))
    except (SourceSyntaxError, InputError):
        return Counter()
    known: dict[int, tuple[str, bool]] = {}
    tree = program_for(program) if program is not None else None
    for site in analyze(source, program=tree).sites:
        if not reported_here(site.origin, source, tree):
            continue
        call = normalize(site, catalog, version)
        full = all(op.element_type is not None and op.signedness is not None for op in call.operands.values())
        key = id(site.origin.node)
        known[key] = (call.api, known.get(key, (call.api, False))[1] or full)
    return Counter(api for api, full in known.values() if full)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--target-jax", default="0.11")
    parser.add_argument("--label", default="")
    parser.add_argument("--alone", action="store_true",
                        help="read each file alone, as before the checked tree was a program")
    args = parser.parse_args()
    settings = Settings(target_jax=load_catalog().resolve_version(args.target_jax))
    files = sorted({p for root in args.paths for p in Path(root).rglob("*.py")})
    # Each directory is its project's tree (its nearest pyproject.toml or .git), every file checked.
    specs: dict[Path, ProgramSpec | None] = {}
    for root in args.paths:
        project = find_project_root(Path(root)) or Path(root).resolve()
        spec = None if args.alone else tree_spec(replace(settings, project_root=str(project)), map(str, files))
        specs[Path(root).resolve()] = spec
    stats: Counter[str] = Counter()
    findings: list[dict[str, object]] = []
    catalog = load_catalog()
    elapsed = 0.0
    for path in files:
        data = path.read_bytes()
        stats["files"] += 1
        spec = next((s for r, s in specs.items() if path.resolve().is_relative_to(r)), None)
        if not worth_checking(str(path), data, LintOptions(program=spec)):
            continue
        stats["files_parsed"] += 1
        start = time.perf_counter()
        report = check_bytes(str(path), data, settings, spec)
        elapsed += time.perf_counter() - start
        if report.calls:
            version = settings.target_jax or catalog.versions[-1]
            for api, n in known_by_api(str(path), data, catalog, version, spec).items():
                stats[f"known[{api}]"] += n
        stats["mma_calls"] += report.calls
        stats["mma_calls_fully_known"] += report.known_calls
        for api, n in report.calls_by_api.items():
            stats[f"calls[{api}]"] += n
        for d in report.diagnostics:
            stats[f"findings[{d.severity}]"] += 1
            findings.append({"code": d.code or d.name, "severity": d.severity, "file": d.filename,
                             "row": d.range.start.row, "message": d.message})
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
