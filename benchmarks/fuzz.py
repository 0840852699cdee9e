"""The long fuzzing campaign: hypothesmith programs and token mutations, crash-isolated.

    python benchmarks/fuzz.py --programs 50000 --mutants 50000 --jobs 2 --out /tmp/fuzz

Cases run in worker processes, each printing the case it starts before it starts it, so a
native crash, a hang past --timeout or a memory blow-up (each worker runs under an address
space limit) is pinned to one case; the worker is restarted after it. Every failing case is
written to --out with what happened; the summary (counts, slowest cases, peak memory) is
printed as JSON. The CI test `tests/test_fuzz.py` runs the same property on a small budget.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))


def _worker(kind: str, start: int, count: int, seed: int) -> None:
    """Run cases [start, start+count) of `kind`, one JSON line before and after each."""
    from _fuzz import check_one, in_kernel, mutations

    def report(**fields: Any) -> None:
        print(json.dumps(fields), flush=True)

    if kind.startswith("files="):  # every file of a tree, the prefilter bypassed
        from mmalint.inputs import UnreadableInput, read_regular
        from mmalint.pipeline.text import InputError
        from mmalint.source_io import decode

        paths = Path(kind.removeprefix("files=")).read_text().splitlines()[start:start + count]
        for i, path in enumerate(paths):
            report(event="start", case=start + i, text=path)
            t0 = time.perf_counter()
            try:
                text = decode(read_regular(path)).text
            except (UnreadableInput, InputError):
                failure = None
            else:
                failure = check_one(path, text)
            report(event="done", case=start + i, seconds=time.perf_counter() - t0,
                   failure=None if failure is None else [failure.kind, path + ": " + failure.detail])
        return

    if kind == "mutants":
        for i, (name, text) in enumerate(mutations(count, seed * 1_000_003 + start)):
            report(event="start", case=start + i, text=text)
            t0 = time.perf_counter()
            failure = check_one(name, text)
            report(event="done", case=start + i, seconds=time.perf_counter() - t0,
                   failure=None if failure is None else [failure.kind, failure.detail])
        return
    import hypothesmith
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    state = {"i": start}

    @settings(max_examples=count, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(program=hypothesmith.from_grammar() | hypothesmith.from_node(),
           where=st.integers(0, 1))
    def one(program: str, where: int) -> None:
        text = in_kernel(program)[where]
        report(event="start", case=state["i"], text=text)
        t0 = time.perf_counter()
        failure = check_one("generated.py", text)
        report(event="done", case=state["i"], seconds=time.perf_counter() - t0,
               failure=None if failure is None else [failure.kind, failure.detail])
        state["i"] += 1

    one()


def _limit_memory(mib: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (mib << 20, mib << 20))


def _campaign(kind: str, total: int, jobs: int, seed: int, timeout: float, memory: int,
              out: Path) -> dict[str, Any]:
    """Run `total` cases of `kind` over `jobs` worker processes; what went wrong, and timings."""
    chunk = max(1, min(2000, total // max(1, jobs)))
    chunks = [(s, min(chunk, total - s)) for s in range(0, total, chunk)]
    lock = threading.Lock()
    failures: list[dict[str, Any]] = []
    times: list[tuple[float, int]] = []

    def next_chunk() -> tuple[int, int] | None:
        with lock:
            return chunks.pop(0) if chunks else None

    def run_chunk(start: int, count: int) -> None:
        proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", kind, str(start), str(count), str(seed)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            preexec_fn=lambda: _limit_memory(memory))
        lines: queue.Queue[str | None] = queue.Queue()

        def drain() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.put(line)
            lines.put(None)

        threading.Thread(target=drain, daemon=True).start()
        current: dict[str, Any] | None = None
        killed = False
        while True:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:  # one case ran past the limit: a hang
                proc.kill()
                killed = True
                line = None
            if line is None:
                break
            record = json.loads(line)
            if record["event"] == "start":
                current = record
                continue
            current = None
            with lock:
                times.append((record["seconds"], record["case"]))
                if record["failure"] is not None:
                    failures.append({"case": record["case"], "kind": record["failure"][0],
                                     "detail": record["failure"][1]})
        proc.wait()
        if current is None:
            return
        what = (f"hung: no answer after {timeout:.0f} s" if killed
                else f"worker died (exit {proc.returncode})")
        with lock:
            failures.append({"case": current["case"], "kind": "crash" if not killed else "hang",
                             "detail": what, "text": current["text"]})
            remaining = start + count - current["case"] - 1
            if remaining > 0:
                chunks.insert(0, (current["case"] + 1, remaining))

    def slot() -> None:
        while (job := next_chunk()) is not None:
            run_chunk(*job)

    threads = [threading.Thread(target=slot) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    label = Path(kind.removeprefix("files=")).stem if kind.startswith("files=") else kind
    for i, failure in enumerate(failures):
        (out / f"{label}-{i}.json").write_text(json.dumps(failure, indent=1))
    times.sort(reverse=True)
    return {"kind": kind, "cases": len(times) + sum(f["kind"] in ("crash", "hang") for f in failures),
            "failures": len(failures),
            "failure_kinds": sorted({f["kind"] for f in failures}),
            "slowest_seconds": [round(t, 3) for t, _ in times[:5]],
            "cases_over_2s": sum(1 for t, _ in times if t > 2)}


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=50_000)
    parser.add_argument("--mutants", type=int, default=50_000)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per case")
    parser.add_argument("--memory", type=int, default=2048, help="MiB of address space a worker may use")
    parser.add_argument("--out", type=Path, default=Path("/tmp/mmalint-fuzz"))
    parser.add_argument("--tree", type=Path, action="append", default=[],
                        help="also lint and fix every .py under this tree (no prefilter)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    trees = []
    for tree in args.tree:
        files = sorted(str(p) for p in tree.rglob("*.py") if p.is_file())
        listing = args.out / f"files-{tree.name}.txt"
        listing.write_text("\n".join(files) + "\n")
        trees.append(_campaign(f"files={listing}", len(files), args.jobs, args.seed,
                               args.timeout, args.memory, args.out))
    summary = {
        "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                                 capture_output=True, text=True).stdout.strip(),
        "python": sys.version.split()[0],
        "results": [
            _campaign("mutants", args.mutants, args.jobs, args.seed, args.timeout, args.memory, args.out),
            _campaign("programs", args.programs, args.jobs, args.seed, args.timeout, args.memory, args.out),
            *trees,
        ],
    }
    summary["seconds"] = round(time.perf_counter() - t0, 1)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    summary["peak_worker_rss_mib"] = round(peak / 1024, 1)
    print(json.dumps(summary, indent=1))
    return 1 if any(r["failures"] for r in summary["results"]) else 0


if __name__ == "__main__":
    sys.exit(main())
