"""Wall time of `mmalint check` over a tree, and the slowest files analysed.

    python benchmarks/speed.py --runs 3 --target-jax 0.11 DIR
    python benchmarks/speed.py --vs-ruff --runs 5 --target-jax 0.11 DIR [DIR...]

Prints one JSON object: the median and every run of the whole command (a fresh process each
time, as a user runs it), and the five slowest files checked in-process.

With `--vs-ruff`, the result cache against ruff instead: each round runs, one after the other
in this process's children, `ruff check --isolated --no-cache --select E,F DIR...`, mmalint cold
(`--no-cache`), ruff again, and mmalint warm (its cache in a temporary `--cache-dir`, filled by
one run before the rounds, whose time is reported as `mmalint_first_with_cache_s`); then the
import time of a warm run (`-X importtime`: the modules it loads, whether libcst is among them).
With `--floor` too, each round also runs mmalint cold with the interpreter's roots not run
(`Roots.run_roots` a no-op, in a child of its own: no finding, everything else as it is): the
part of a cold run no speed-up of the interpreter can remove, as `ratio_floor_to_ruff`.
With `--largest N` too, each round also runs mmalint cold on each of the N largest files the
prefilter passes, alone (in the same tree: each reads what it reads in the whole run); the
slowest of them is `ratio_largest_to_ruff`: a file's check runs in one process, so no schedule of
the whole run over any number of workers ends before that one file's check does.
Alternating keeps a busy machine's slow moments from landing on one side only. The paths may
be files: run from a project's root with the files a commit changed, it measures pre-commit. The children run
without $PYTHONDONTWRITEBYTECODE, as an installed mmalint has its bytecode compiled.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mmalint.pipeline.file import check_bytes
from mmalint.pipeline.text import worth_running
from mmalint.settings import Settings


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("path", nargs="+")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--target-jax", default="0.11")
    parser.add_argument("--vs-ruff", action="store_true", help="the result cache, warm and cold, against ruff")
    parser.add_argument("--floor", action="store_true",
                        help="with --vs-ruff: also a cold run whose interpreter runs no root")
    parser.add_argument("--largest", type=int, default=0, metavar="N",
                        help="with --vs-ruff: also a cold run of each of the N largest files the prefilter passes, alone")
    args = parser.parse_args()
    if (args.floor or args.largest) and not args.vs_ruff:
        parser.error("--floor and --largest go with --vs-ruff")
    if args.vs_ruff:
        return vs_ruff(args.path, args.runs, args.target_jax, args.floor, args.largest)
    if len(args.path) != 1:
        parser.error("one DIR, unless --vs-ruff")
    args.path = args.path[0]
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


def _timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, check=False, env=env)
    return time.perf_counter() - start


def _ruff() -> str:
    beside = Path(sys.executable).with_name("ruff")
    found = str(beside) if beside.exists() else shutil.which("ruff")
    if found is None:
        sys.exit("ruff not found beside this Python nor on PATH")
    return found


# A cold run of the command, but for the roots the interpreter would run (benchmark code: the
# command itself has no such switch).
_FLOOR = (
    "import sys\n"
    "from mmalint.analysis.interpreter.roots import Roots\n"
    "Roots.run_roots = lambda self, roots: None\n"
    "from mmalint.cli import run\n"
    "sys.argv[0] = 'mmalint'\n"
    "run()\n"
)


def largest_checked(paths: list[str], count: int = 1) -> list[Path]:
    """The `count` largest Python files under `paths` that the prefilter passes (what a run
    checks), the largest first."""
    files = [Path(p) for p in paths if Path(p).is_file()]
    files += [f for p in paths if Path(p).is_dir() for f in Path(p).rglob("*.py")]
    sized = sorted(((f.stat().st_size, str(f)) for f in files), reverse=True)
    found: list[Path] = []
    for _, name in sized:
        if len(found) == count:
            break
        if worth_running(Path(name).read_bytes()):
            found.append(Path(name))
    return found


def vs_ruff(paths: list[str], rounds: int, target_jax: str, floor: bool = False, largest: int = 0) -> int:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    ruff = [_ruff(), "check", "--isolated", "--no-cache", "--select", "E,F", *paths]
    with tempfile.TemporaryDirectory(prefix="mmalint-speed-") as cache_dir:
        arguments = ["check", "-q", "--target-jax", target_jax]
        check = [sys.executable, "-m", "mmalint", *arguments]
        cold = [*check, "--no-cache", *paths]
        warm = [*check, "--cache-dir", cache_dir, *paths]
        without_roots = [sys.executable, "-c", _FLOOR, *arguments, "--no-cache", *paths]
        biggest = largest_checked(paths, largest) if largest else []
        first = _timed(warm, env)
        times: dict[str, list[float]] = {"ruff": [], "mmalint_cold": [], "mmalint_warm": []}
        if floor:
            times["mmalint_floor"] = []
        for name in biggest:
            times[f"alone {name}"] = []
        for _ in range(rounds):
            times["ruff"].append(_timed(ruff, env))
            times["mmalint_cold"].append(_timed(cold, env))
            times["ruff"].append(_timed(ruff, env))
            times["mmalint_warm"].append(_timed(warm, env))
            if floor:
                times["mmalint_floor"].append(_timed(without_roots, env))
            for name in biggest:
                times[f"alone {name}"].append(_timed([*check, "--no-cache", str(name)], env))
        imports = subprocess.run([sys.executable, "-X", "importtime", *warm[1:]],
                                 capture_output=True, text=True, check=False, env=env).stderr
    modules = [line.rsplit("|", 1)[-1].strip() for line in imports.splitlines() if line.startswith("import time:")][1:]
    self_us = sum(int(line.split("|")[0].split(":")[1]) for line in imports.splitlines()
                  if line.startswith("import time:") and line.split("|")[0].split(":")[1].strip().isdigit())
    median = {k: statistics.median(v) for k, v in times.items()}
    print(json.dumps({
        "machine": f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores",
        "python": sys.version.split()[0],
        "paths": paths,
        "files": sum(1 if Path(p).is_file() else sum(1 for _ in Path(p).rglob("*.py")) for p in paths),
        "rounds": rounds,
        "median_s": {k: round(v, 3) for k, v in median.items()},
        "runs_s": {k: [round(t, 3) for t in v] for k, v in times.items()},
        "mmalint_first_with_cache_s": round(first, 3),
        "ratio_warm_to_ruff": round(median["mmalint_warm"] / median["ruff"], 3),
        "ratio_cold_to_ruff": round(median["mmalint_cold"] / median["ruff"], 2),
        "ratio_cold_to_warm": round(median["mmalint_cold"] / median["mmalint_warm"], 1),
        **({"ratio_floor_to_ruff": round(median["mmalint_floor"] / median["ruff"], 2)} if floor else {}),
        **({"ratio_largest_to_ruff": round(max(median[f"alone {name}"] for name in biggest) / median["ruff"], 2)}
           if biggest else {}),
        "warm_imports": {"modules": len(modules), "self_total_ms": round(self_us / 1000, 1),
                         "libcst": any(m.split(".")[0] == "libcst" for m in modules),
                         "analysis": any(m.startswith("mmalint.analysis") for m in modules)},
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
