"""Regenerate layout_findings.json: findings of the real analyzer, kept as test data.

    python tests/confirm/data/make_layout_findings.py

The sources are the invalid examples of rules/mma3xx.toml, mma4xx.toml and mma5xx.toml (named
`rules/examples/<code>_<index>.py` in the data, `index` counting every example of the rule)
and the kernels in layout_sources/ (named by their path in this repository). Each is checked
with `mmalint check --format json` for the jax version of its entry in WANTED, and only the
wanted findings are kept, in that order. The tests read the JSON, never this script, so the
data stays what the analyzer said when it was made; rerun it when the analyzer changes.
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
SOURCES = HERE / "layout_sources"
OUT = HERE / "layout_findings.json"

# (file, code, target jax, a piece of the message when the file has several such findings)
WANTED: list[tuple[str, str, str, str]] = [
    ("mma301_0.py", "MMA301", "0.12", ""),  # a loaded with the rhs layout
    ("mma301_2.py", "MMA301", "0.12", ""),  # Pallas Lane: an mma result layout_cast to lhs
    ("mgpu_mma_result_as_lhs.py", "MMA301", "0.12", ""),  # mgpu: mma result .to_layout(lhs)
    ("mma302_0.py", "MMA302", "0.12", ""),  # Pallas: b loaded with the lhs layout
    ("mgpu_b_loaded_with_lhs_layout.py", "MMA302", "0.12", ""),
    ("mma303_0.py", "MMA303", "0.12", ""),  # a splat accumulator
    ("mma304_0.py", "MMA304", "0.12", ""),  # m_warps=3
    ("mma305_0.py", "MMA305", "0.12", ""),  # operands m_warps=2, accumulator 4
    ("pallas_lane_operand_m_warps.py", "MMA305", "0.12", ""),
    ("mma401_0.py", "MMA401", "0.12", ""),  # mgpu: (N, K) weights without the transpose
    ("mma401_2.py", "MMA401", "0.12", ""),  # Pallas: accumulator narrower than the weights
    ("mma402_0.py", "MMA402", "0.12", ""),  # a (32, 64) with m_warps=4, built first
    ("mgpu_acc_built_first_tiling.py", "MMA402", "0.12", ""),  # the accumulator built first
    ("mma501_0.py", "MMA501", "0.10", "m_warps"),  # MMALayouts(..., m_warps=2) on jax 0.10
    ("mma401_2.py", "MMA501", "0.10", "`plgpu.mma`"),  # plgpu.mma on jax 0.10
    ("mma501_2.py", "MMA501", "0.11", "MMA_LHS"),  # Layout.MMA_LHS(dt, m_warps=2) on 0.11
]


def rule_examples(dest: Path) -> dict[str, str]:
    """Write every invalid rule example of the layout, shape and target families to `dest`;
    returns file name -> the name it has in the data."""
    names = {}
    for family in ("mma3xx", "mma4xx", "mma5xx"):
        rules = tomllib.loads((REPO / "rules" / f"{family}.toml").read_text())
        for rule in rules["rule"]:
            for i, example in enumerate(rule.get("example", [])):
                if example["kind"] != "invalid":
                    continue
                name = f"{rule['code'].lower()}_{i}.py"
                (dest / name).write_text(example["code"])
                names[name] = f"rules/examples/{name}"
    for path in sorted(SOURCES.glob("*.py")):
        shutil.copy(path, dest / path.name)
        names[path.name] = str(path.relative_to(REPO))
    return names


def check(dest: Path, target: str) -> list[dict[str, object]]:
    out = subprocess.run(
        [sys.executable, "-m", "mmalint", "check", str(dest), "--isolated", "--target-jax",
         target, "--format", "json"],
        capture_output=True, text=True, cwd=REPO, check=False,
    )
    if out.returncode not in (0, 1):
        raise SystemExit(f"mmalint check failed:\n{out.stderr}")
    findings: list[dict[str, object]] = json.loads(out.stdout)
    return findings


def relabel(value: object, dest: str, names: dict[str, str]) -> object:
    """Every filename (the finding's and its notes') as the data names it."""
    if isinstance(value, dict):
        return {k: relabel(v, dest, names) for k, v in value.items()}
    if isinstance(value, list):
        return [relabel(v, dest, names) for v in value]
    if isinstance(value, str) and value.startswith(dest + "/"):
        return names.get(Path(value).name, value)
    return value


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        dest = Path(tmp)
        names = rule_examples(dest)
        by_target = {t: check(dest, t) for t in sorted({w[2] for w in WANTED})}
        chosen = []
        for file, code, target, piece in WANTED:
            matches = [f for f in by_target[target]
                       if Path(str(f["filename"])).name == file and f["code"] == code
                       and piece in str(f["message"])]
            if not matches:
                raise SystemExit(f"no {code} finding in {file} for jax {target}")
            chosen.append(relabel(matches[0], str(dest), names))
    OUT.write_text(json.dumps(chosen, indent=1) + "\n")
    print(f"wrote {len(chosen)} findings to {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
