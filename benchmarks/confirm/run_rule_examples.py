"""Run the rule documentation's examples with a real jax and compare with mmalint's predictions.

    python benchmarks/confirm/run_rule_examples.py predict --target-jax 0.11 > PRED.json
    python3 benchmarks/confirm/run_rule_examples.py run PRED.json OUT_DIR [--only mgpu|pallas]

`predict` (needs mmalint) lints every `[[rule.example]]` of rules/*.toml for one jax version and
writes the code with what mmalint reports: the rule codes and, per finding, the exception jax is
predicted to raise. `run` (needs only jax) executes each example in its own process: Mosaic GPU
examples build their kernel under an MLIR context (`as_gpu_kernel`: lowering, no launch); Pallas
examples run as written, so on a GPU they compile and execute. An invalid example *reproduces*
when jax raises the predicted exception with the predicted message; a valid one *passes* when it
runs to the end. An example whose operand dtype mmalint cannot know reads it from MATMUL_DTYPE:
it runs once per operand dtype mmalint predicted an error for, and must raise each. Writes OUT_DIR/rule-examples.json and prints Markdown.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 150

# Runs one example in a fresh interpreter and prints one JSON line: the exception, or none.
RUNNER = r"""
import json, runpy, sys, traceback, warnings
warnings.filterwarnings("ignore")
path, kind = sys.argv[1], sys.argv[2]
result = {"exception": None, "message": None}
try:
    if kind == "mgpu":
        from jax._src.interpreters import mlir
        from jax._src.lib.mlir import ir
        with mlir.make_ir_context(), ir.Location.unknown():
            runpy.run_path(path, run_name="__main__")
    else:
        runpy.run_path(path, run_name="__main__")
except BaseException as exc:  # every outcome is data here
    result = {"exception": type(exc).__name__, "message": str(exc)[:2000]}
print("RESULT " + json.dumps(result))
"""


def predict(target_jax: str) -> int:
    from mmalint.catalog import load_catalog
    from mmalint.engine import check_text
    from mmalint.settings import Settings

    catalog = load_catalog()
    cases = []
    for code, rule in sorted(catalog.rules.items()):
        for i, example in enumerate(rule.examples):
            if example.versions and target_jax not in example.versions:
                continue
            name = f"{code}_{example.kind}_{i}.py"
            settings = Settings(target_jax=target_jax, **dict(example.settings))  # type: ignore[arg-type]
            # The engine's findings, suppressed ones included: they say what jax will raise.
            report = check_text(name, example.code, settings)
            findings = []
            for d in report.diagnostics:
                p = d.to_json().get("predicted_error") or {}
                findings.append({"code": d.code, "exception": p.get("exception"),
                                 "message": p.get("message"), "match": p.get("match"),
                                 "unpredicted": d.unpredicted,
                                 "by_operand": [x.to_json() for x in d.predicted_by_operand]})
            cases.append({
                "name": f"{code}_{example.kind}_{i}", "rule": code, "kind": example.kind,
                "title": example.title, "expect": list(example.expect),
                "api": "pallas" if "plgpu" in example.code else "mgpu",
                "code": example.code, "findings": findings,
            })
    json.dump({"target_jax": target_jax, "cases": cases}, sys.stdout, indent=1)
    print()
    return 0


def _matches(message: str, expected: str, how: str | None) -> bool:
    if how == "prefix":
        return message.startswith(expected)
    if how == "contains":
        return expected in message
    return message == expected


def _execute(path: Path, api: str, extra_env: dict[str, str] | None = None) -> dict:
    try:
        proc = subprocess.run([sys.executable, "-c", RUNNER, str(path), api],
                              capture_output=True, text=True, timeout=TIMEOUT,
                              env={**os.environ, "PYTHONUNBUFFERED": "1",
                                   "XLA_PYTHON_CLIENT_PREALLOCATE": "false", **(extra_env or {})})
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
        return json.loads(lines[-1][7:]) if lines else {"exception": "crash",
                                                       "message": proc.stderr[-500:]}
    except subprocess.TimeoutExpired:
        return {"exception": "timeout", "message": f"over {TIMEOUT} s"}


def _run_one(case: dict, workdir: Path) -> dict:
    path = workdir / f"{case['name']}.py"
    path.write_text(case["code"])
    t0 = time.perf_counter()
    by_operand = next((f["by_operand"] for f in case["findings"] if f.get("by_operand")), None)
    if by_operand:
        # The operand dtype is unknown to mmalint (the example reads MATMUL_DTYPE): run it with
        # each operand dtype mmalint predicted an error for; every one must raise as predicted.
        runs = []
        for p in by_operand:
            got = _execute(path, case["api"], {"MATMUL_DTYPE": p["operand_dtype"]})
            ok = got["exception"] == p["exception"] and _matches(got["message"] or "", p["message"],
                                                                 p.get("match"))
            runs.append({"operand_dtype": p["operand_dtype"], "got": got, "matched": ok})
        verdict = ("reproduced (each operand dtype)" if all(r["matched"] for r in runs)
                   else "MISMATCH")
        return {"name": case["name"], "rule": case["rule"], "kind": case["kind"],
                "api": case["api"], "predicted": by_operand[0],
                "codes": [f["code"] for f in case["findings"]], "got": runs[0]["got"],
                "by_operand": runs, "verdict": verdict,
                "seconds": round(time.perf_counter() - t0, 2)}
    got = _execute(path, case["api"])
    seconds = time.perf_counter() - t0
    raising = [f for f in case["findings"] if f.get("exception")]
    first = raising[0] if raising else None
    matched = first is not None and (
        got["exception"] == first["exception"]
        and _matches(got["message"] or "", first["message"] or "", first.get("match")))
    if first is not None and first["exception"] == "ptxas":
        # MMA502: ptxas for the example's target architecture, not this machine's GPU.
        verdict = "other target arch" if got["exception"] is None else "raised (unpredicted)"
    elif case["kind"] == "valid":
        # A valid example may keep a bug on purpose, suppressed (MMA001's): it must raise
        # exactly what was predicted for it.
        verdict = "passes" if got["exception"] is None and first is None else (
            "reproduced (suppressed)" if matched else "FAILS")
    elif first is not None:
        verdict = "reproduced" if matched else "MISMATCH"
    else:
        # A silent bug (wrong numbers) or a lint-only rule: nothing to raise.
        verdict = "silent, ran" if got["exception"] is None else "raised (unpredicted)"
    return {"name": case["name"], "rule": case["rule"], "kind": case["kind"],
            "api": case["api"], "predicted": raising[0] if raising else None,
            "codes": [f["code"] for f in case["findings"]], "got": got,
            "verdict": verdict, "seconds": round(seconds, 2)}


def run(pred_path: Path, out_dir: Path, only: str | None = None) -> int:
    """`only`: "mgpu" or "pallas" (Pallas needs a GPU: jax on the CPU runs it only interpreted)."""
    pred = json.loads(pred_path.read_text())
    if only is not None:
        pred["cases"] = [c for c in pred["cases"] if c["api"] == only]
    out_dir.mkdir(parents=True, exist_ok=True)
    workdir = out_dir / "rule-examples"
    workdir.mkdir(exist_ok=True)
    # Asked in a child process: this one must not hold the GPU while the examples run.
    probe = subprocess.run(
        [sys.executable, "-c", "import jax, json; print(json.dumps([jax.__version__, "
         "[str(d) for d in jax.devices()]]))"],
        capture_output=True, text=True, env={**os.environ, "XLA_PYTHON_CLIENT_PREALLOCATE": "false"})
    try:
        jax_version, devices = json.loads(probe.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        jax_version, devices = f"unavailable ({probe.stderr.strip()[-200:]})", []
    # One process at a time on a GPU: a device in exclusive-process mode turns a second jax
    # away ("no supported devices found for platform CUDA").
    jobs = int(os.environ.get("JOBS", "1" if any("cuda" in d for d in devices) else "4"))
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda c: _run_one(c, workdir), pred["cases"]))
    for p in workdir.glob("*.py"):
        p.unlink()
    workdir.rmdir()
    summary: dict[str, int] = {}
    for r in results:
        summary[r["verdict"]] = summary.get(r["verdict"], 0) + 1
    doc = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "host": platform.node(),
           "jax": jax_version, "devices": devices, "target_jax": pred["target_jax"],
           "summary": summary, "results": results}
    (out_dir / "rule-examples.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"# Rule examples against jax {jax_version}\n")
    print(f"{doc['date']}, devices: {', '.join(devices) or 'none'}; predictions for jax "
          f"{pred['target_jax']}. Summary: "
          + ", ".join(f"{k}: {v}" for k, v in sorted(summary.items())) + "\n")
    print("| example | api | predicted | jax raised | verdict | time |")
    print("|---|---|---|---|---|---|")
    for r in results:
        p = r["predicted"]
        pred_s = f"{p['exception']}: {p['message'][:50]}" if p else "—"
        got = r["got"]
        got_s = f"{got['exception']}: {(got['message'] or '')[:50]}" if got["exception"] else "—"
        print(f"| {r['name']} | {r['api']} | {pred_s} | {got_s} | {r['verdict']} | {r['seconds']} s |")
    bad = summary.get("MISMATCH", 0) + summary.get("FAILS", 0)
    return 1 if bad else 0


def main(argv: list[str]) -> int:
    if len(argv) >= 1 and argv[0] == "predict":
        target = argv[argv.index("--target-jax") + 1] if "--target-jax" in argv else "0.11"
        return predict(target)
    if len(argv) in (3, 5) and argv[0] == "run":
        only = argv[4] if len(argv) == 5 and argv[3] == "--only" else None
        return run(Path(argv[1]), Path(argv[2]), only)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
