"""Regenerate tmem_a_findings.json: findings of the real analyzer about A in TMEM (MMA713-715),
kept as test data.

    python tests/confirm/data/make_tmem_a_findings.py

The sources are the invalid examples of MMA713-715 in rules/mma7xx.toml (named
`rules/examples/<code>_<index>.py` in the data), the examples/ files of those rules and the
kernels in tmem_a_sources/ (named by their path in this repository). Each is checked with
`mmalint check --format json` for every jax version of its entry in WANTED, and only the wanted
findings are kept, in that order. The tests read the JSON, never this script; rerun it when the
analyzer changes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SOURCES = HERE / "tmem_a_sources"
OUT = HERE / "tmem_a_findings.json"
EXAMPLES = REPO / "examples"
CODES = ("MMA713", "MMA714", "MMA715")
BOTH = ("0.10", "0.12")

# (file, code, target jax versions)
WANTED: list[tuple[str, str, tuple[str, ...]]] = [
    ("mma713_0.py", "MMA713", BOTH),  # Pallas: a 64-row A in TMEM
    ("mma714_0.py", "MMA714", BOTH),  # Pallas bf16 packed=False: Lane on 0.10, Warpgroup on 0.12
    ("mma714_1.py", "MMA714", BOTH),  # raw int8 at mgpu.TMEM's default packing
    ("mma715_0.py", "MMA715", BOTH),  # Pallas block-scaled sparse, A in TMEM
    ("mma715_1.py", "MMA715", ("0.10",)),  # Pallas block-scaled dense, A in TMEM (0.10 only)
    ("tcgen05_pallas_tmem_lhs_m64.py", "MMA713", BOTH),
    ("tcgen05_raw_tmem_lhs_unpacked.py", "MMA714", BOTH),
    ("tcgen05_pallas_sparse_mxfp8_tmem_lhs.py", "MMA715", BOTH),
    ("pallas_collective_a_not_collective.py", "MMA714", BOTH),
    ("mgpu_fp8_packing_2.py", "MMA714", BOTH),
    ("mgpu_m64_a_in_tmem.py", "MMA713", BOTH),
    ("pallas_lane_unpacked_int8.py", "MMA714", BOTH),
]


def rule_examples(dest: Path) -> dict[str, str]:
    """Write the invalid examples of MMA713-715 to `dest`; file name -> its name in the data."""
    names = {}
    rules = tomllib.loads((REPO / "rules" / "mma7xx.toml").read_text())
    for rule in rules["rule"]:
        if rule["code"] not in CODES:
            continue
        for i, example in enumerate(rule.get("example", [])):
            if example["kind"] != "invalid":
                continue
            name = f"{rule['code'].lower()}_{i}.py"
            code = "\n".join(line.split("  # error:")[0] for line in example["code"].split("\n"))
            (dest / name).write_text(code)
            names[name] = f"rules/examples/{rule['code']}_{i}.py"
    return names


def main() -> int:
    findings = []
    with tempfile.TemporaryDirectory() as tmp:
        dest = Path(tmp)
        names = rule_examples(dest)
        for path in SOURCES.glob("*.py"):
            shutil.copy(path, dest / path.name)
            names[path.name] = str(path.relative_to(REPO))
        for file, _, _ in WANTED:
            if (EXAMPLES / file).exists():
                shutil.copy(EXAMPLES / file, dest / file)
                names[file] = f"examples/{file}"
        for file, code, versions in WANTED:
            for version in versions:
                out = subprocess.run(
                    [sys.executable, "-m", "mmalint", "check", "--format", "json", "--target-jax", version,
                     str(dest / file)], capture_output=True, text=True, cwd=REPO, check=False)
                found = [f for f in json.loads(out.stdout) if f["code"] == code]
                assert len(found) == 1, (file, version, out.stdout[-2000:], out.stderr[-2000:])
                # Every filename in it (the finding's, its notes', the call's origins) is the
                # temporary copy's: name it as the data does.
                text = json.dumps(found[0]).replace(json.dumps(str(dest / file))[1:-1], names[file])
                findings.append(json.loads(text))
    OUT.write_text(json.dumps(findings, indent=1) + "\n")
    print(f"wrote {len(findings)} findings to {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
