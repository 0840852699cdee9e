"""Regenerate tcgen05_scale_findings.json: MMA707-710 findings of the real analyzer (and a raw
MMA704, whose one scale the raw kernel now passes), kept as test data.

    python tests/confirm/data/make_tcgen05_scale_findings.py

The sources are the examples that carry these codes (examples/tcgen05_*.py), the invalid
examples of MMA707-710 in rules/mma7xx.toml (named `rules/examples/<code>_<index>.py` in the
data) and the kernels in tcgen05_scale_sources/ (raw `tcgen05.mma` for the codes the examples
show only in Pallas, the scale-type variants and raw MMA704). Each is checked with `mmalint check
--format json` for jax 0.10 and for jax 0.12, and every finding of CODES is kept, each
target's in turn. The tests read the JSON, never this script; rerun it when the analyzer
changes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SOURCES = HERE / "tcgen05_scale_sources"
OUT = HERE / "tcgen05_scale_findings.json"
CODES = ("MMA704", "MMA707", "MMA708", "MMA709", "MMA710")
TARGETS = ("0.10", "0.12")
# Links as the published pages, not this checkout's files.
DOCS_URL = "https://github.com/mmalint/mmalint/blob/main/docs/rules"
EXAMPLES = ("tcgen05_pallas_bf16_unit_scales.py", "tcgen05_raw_fp4_no_scales.py",
            "tcgen05_pallas_f16_weights.py", "tcgen05_pallas_mxfp8_e4m3_scales.py")


def sources(dest: Path) -> dict[str, str]:
    """Write every source to `dest`; returns file name -> the name it has in the data."""
    names = {}
    for name in EXAMPLES:
        shutil.copy(REPO / "examples" / name, dest / name)
        names[name] = f"examples/{name}"
    rules = tomllib.loads((REPO / "rules" / "mma7xx.toml").read_text())
    for rule in rules["rule"]:
        if rule["code"] not in CODES[1:]:
            continue
        for i, example in enumerate(rule.get("example", [])):
            if example["kind"] == "invalid":
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
         target, "--format", "json", "--docs-url", DOCS_URL],
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
    chosen: list[Any] = []
    with tempfile.TemporaryDirectory() as tmp:
        dest = Path(tmp)
        names = sources(dest)
        for target in TARGETS:
            found: list[Any] = [relabel(f, str(dest), names) for f in check(dest, target)
                                if f["code"] in CODES]
            chosen += sorted(found, key=lambda f: (f["filename"], f["code"]))
    missing = {(n, t) for n in names.values() for t in TARGETS} - {
        (f["filename"], f["predicted_error"]["jax_version"]) for f in chosen}
    if missing:
        raise SystemExit(f"no MMA707-710 finding for {sorted(missing)}")
    OUT.write_text(json.dumps(chosen, indent=1) + "\n")
    print(f"wrote {len(chosen)} findings to {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
