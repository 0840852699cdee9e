"""Run every bundled example on a real GPU: each buggy kernel and its fixed twin.

    python3 benchmarks/confirm/run_examples.py FINDINGS_JSON OUT_DIR

FINDINGS_JSON is `mmalint check --format json examples/` for the jax on that machine. A buggy
example *reproduces* when jax raises the predicted exception with the predicted message (or, for
silent bugs, when its own NumPy comparison fails: the kernel ran and computed wrong numbers).
A fixed twin *passes* when it runs to the end, its NumPy comparison included. Each example runs
in its own process with a time limit. Writes OUT_DIR/examples-gpu.json and prints Markdown.
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from mmalint.confirm.families import ptxas_codes  # noqa: E402  (the catalog's: no analyzer)

PTXAS_CODES = ptxas_codes()
EXAMPLES = ROOT / "examples"
TIMEOUT = 150


def run(path: Path) -> dict[str, object]:
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, str(path)], capture_output=True, text=True, timeout=TIMEOUT, cwd=ROOT,
            env={**os.environ, "XLA_PYTHON_CLIENT_PREALLOCATE": "false"},
        )
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = -9, str(exc.stdout or ""), f"timed out after {TIMEOUT} s"
    lines = [line for line in err.splitlines() if line.strip()]
    exception = next(
        (line for line in reversed(lines) if re.match(r"^[\w.]+(Error|Exception)\b.*?:", line)), ""
    )
    return {
        "file": path.name,
        "returncode": rc,
        "exception": exception,
        "stdout_tail": out.strip().splitlines()[-3:],
        "seconds": round(time.perf_counter() - start, 2),
    }


def matches(predicted: dict[str, str], exception_line: str) -> bool:
    name, _, message = exception_line.partition(": ")
    name = name.rsplit(".", 1)[-1]
    if predicted["exception"] not in (name, "ptxas"):
        return False
    text = predicted["message"]
    mode = predicted.get("match", "exact")
    if mode == "prefix":
        return message.startswith(text)
    if mode == "contains":
        return text in exception_line
    return message.strip() == text


def main() -> int:
    findings = json.loads(Path(sys.argv[1]).read_text())
    out_dir = Path(sys.argv[2])
    by_file: dict[str, list[dict[str, object]]] = {}
    for finding in findings:
        by_file.setdefault(Path(str(finding["filename"])).name, []).append(finding)
    manifest = tomllib.loads((EXAMPLES / "expected.toml").read_text())["example"]
    # The examples these findings are about (the findings file of one family holds only its
    # examples: the others' predictions are not in it).
    manifest = [e for e in manifest if e["file"] in by_file] or manifest
    jobs = [EXAMPLES / e[key] for e in manifest for key in ("file", "fixed")]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = {r["file"]: r for r in pool.map(run, jobs)}
    rows = []
    for entry in manifest:
        buggy, fixed = results[entry["file"]], results[entry["fixed"]]
        file_findings = by_file.get(entry["file"], [])
        predicted = next((f["predicted_error"] for f in file_findings if f.get("predicted_error")), None)
        family = next((str(f.get("call", {}).get("family")) for f in file_findings), None)
        lowered_only = any("lowered only" in line for line in fixed["stdout_tail"])
        if predicted is not None:
            verdict = "reproduced" if matches(predicted, str(buggy["exception"])) else "not reproduced"
        elif set(entry["codes"]) <= PTXAS_CODES and "Pass pipeline failed" in str(buggy["exception"]):
            # jax raises nothing in Python for these (MMA605): ptxas rejects the module.
            verdict = "reproduced (ptxas rejected it)"
        elif family == "tcgen05" and any("lowered only" in line for line in buggy["stdout_tail"]):
            # A silent tcgen05 bug shows only in the numbers, and this GPU cannot run tcgen05.
            verdict = "not runnable here (tcgen05 needs sm_100a)"
        else:
            silent = buggy["returncode"] != 0 and "AssertionError" in str(buggy["exception"])
            verdict = "reproduced (wrong numbers)" if silent else "not reproduced"
        rows.append({
            "file": entry["file"],
            "codes": entry["codes"],
            "predicted": predicted,
            "buggy": buggy,
            "verdict": verdict,
            "fixed": fixed,
            "fixed_passes": fixed["returncode"] == 0,
            "fixed_lowered_only": lowered_only,
        })
    report = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "python": platform.python_version(),
              "rows": rows}
    try:
        import jax

        report["jax"] = jax.__version__
        report["devices"] = [str(d) for d in jax.devices()]
    except Exception as exc:
        report["jax"] = f"unavailable: {exc}"
    (out_dir / "examples-gpu.json").write_text(json.dumps(report, indent=1))
    print(f"# Bundled examples run on {report.get('devices')} (jax {report['jax']}, {report['date']})\n")
    print("| buggy example | codes | predicted | what happened | verdict | fixed twin |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        pred = row["predicted"]
        pred_text = f"{pred['exception']}: {pred['message']}" if pred else "nothing raises"
        buggy = row["buggy"]
        happened = buggy["exception"] or f"exit {buggy['returncode']}"
        fixed = row["fixed"]
        if row["fixed_passes"] and row["fixed_lowered_only"]:
            fixed_text = f"lowered without error; tcgen05 cannot run on this GPU ({fixed['seconds']} s)"
        elif row["fixed_passes"]:
            fixed_text = f"ran, matches NumPy ({fixed['seconds']} s)"
        else:
            fixed_text = f"FAILED: {fixed['exception'] or fixed['returncode']}"
        print(f"| {row['file']} | {', '.join(row['codes'])} | `{pred_text[:110]}` | `{str(happened)[:140]}` "
              f"| {row['verdict']} | {fixed_text} |")
    ok = all(r["verdict"].startswith(("reproduced", "not runnable")) and r["fixed_passes"] for r in rows)
    ran = sum(r["fixed_passes"] and not r["fixed_lowered_only"] for r in rows)
    lowered = sum(r["fixed_passes"] and r["fixed_lowered_only"] for r in rows)
    print(f"\n{sum(r['verdict'].startswith('reproduced') for r in rows)}/{len(rows)} bugs reproduced, "
          f"{ran} fixed twins ran and matched NumPy, {lowered} (tcgen05) lowered without error "
          f"and cannot run on this GPU, {len(rows) - ran - lowered} failed.")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
