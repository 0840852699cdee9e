"""Every finding mmalint reports on some trees, for before/after comparison of a refactor.

    python benchmarks/snapshot.py record OUT.json --target-jax 0.10 0.11 0.12 -- DIR [DIR...]
    python benchmarks/snapshot.py compare BEFORE.json AFTER.json

`record` runs the installed `mmalint check --output-format json` (so it measures the command
users run) once per target jax and keeps every diagnostic. `compare` says whether AFTER has the
same diagnostics as BEFORE: every key BEFORE had must be equal; keys that are new in AFTER (a
schema that grew) are listed, not counted as a change. Exit 1 on any change.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def _record(out: Path, versions: list[str], paths: list[str]) -> int:
    runs: dict[str, list[dict[str, Any]]] = {}
    for version in versions:
        proc = subprocess.run(
            [sys.executable, "-m", "mmalint", "check", "--output-format", "json",
             "--target-jax", version, "--exit-zero", *paths],
            capture_output=True, text=True, check=False)
        if proc.returncode not in (0, 1):
            print(proc.stderr, file=sys.stderr)
            return 2
        runs[version] = json.loads(proc.stdout)
        print(f"jax {version}: {len(runs[version])} diagnostics", file=sys.stderr)
    out.write_text(json.dumps({"paths": paths, "runs": runs}, indent=1, sort_keys=True) + "\n")
    return 0


def _key(d: dict[str, Any]) -> tuple[object, ...]:
    loc = d.get("location") or {}
    return (d.get("filename"), loc.get("row"), loc.get("column"), d.get("code"), d.get("message"))


def _diff(old: Any, new: Any, path: str, rel: str, changes: list[str], added: set[str]) -> None:
    """Changes from `old` to `new` into `changes`; keys only `new` has, by their path inside a
    diagnostic (`call.family`), into `added`."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                changes.append(f"{path}.{key}: removed")
            else:
                _diff(old[key], new[key], f"{path}.{key}", f"{rel}.{key}", changes, added)
        added.update(f"{rel}.{k}".lstrip(".") for k in new if k not in old)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _diff(a, b, f"{path}[{i}]", f"{rel}[]", changes, added)
    elif old != new:
        changes.append(f"{path}: {json.dumps(old)[:120]} -> {json.dumps(new)[:120]}")


def _compare(before: Path, after: Path) -> int:
    old = json.loads(before.read_text())["runs"]
    new = json.loads(after.read_text())["runs"]
    changes: list[str] = []
    added: set[str] = set()
    for version, diags in old.items():
        now = {_key(d): d for d in new.get(version, [])}
        then = {_key(d): d for d in diags}
        for key in then.keys() - now.keys():
            changes.append(f"jax {version}: gone: {key}")
        for key in now.keys() - then.keys():
            changes.append(f"jax {version}: new: {key}")
        for key in then.keys() & now.keys():
            _diff(then[key], now[key], f"jax {version} {key}", "", changes, added)
        print(f"jax {version}: {len(then)} before, {len(now)} after")
    for line in changes:
        print(line)
    if added:
        print("new keys (not a change):", ", ".join(sorted(added)))
    print(f"{len(changes)} changes")
    return 1 if changes else 0


def main() -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out", type=Path)
    rec.add_argument("--target-jax", nargs="+", default=["0.10", "0.11", "0.12"])
    rec.add_argument("paths", nargs="+")
    cmp = sub.add_parser("compare")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "record":
        return _record(args.out, args.target_jax, args.paths)
    return _compare(args.before, args.after)


if __name__ == "__main__":
    raise SystemExit(main())
