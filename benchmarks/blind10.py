"""Score mmalint on /work/blind10 against MANIFEST.toml: a bug kernel is found when some error
finding is on `line` or `acc_line` for every target jax; a clean one when no error finding."""
import json, subprocess, sys, tomllib
from pathlib import Path
root = Path(__file__).resolve().parent.parent / "tests" / "data" / "blind10"
man = tomllib.loads((root / "MANIFEST.toml").read_text())["kernel"]
py = sys.argv[1] if len(sys.argv) > 1 else "/work/venv311/bin/python"
versions = sorted({v for k in man for v in k["target_jax"]})
res = {}
for v in versions:
    files = [str(root / k["file"]) for k in man if v in k["target_jax"]]
    out = subprocess.run([py, "-m", "mmalint", "check", "--output-format", "json", "--exit-zero",
                          "--target-jax", v, *files], capture_output=True, text=True)
    try:
        res[v] = json.loads(out.stdout)
    except Exception:
        print(out.stderr[-2000:]); raise
found = missed = clean_ok = fp = 0
for k in man:
    lines = {k["line"], k.get("acc_line", 0)} - {0}
    ok_all = True
    bad = []
    for v in k["target_jax"]:
        ds = [d for d in res[v] if d["filename"].endswith(k["file"]) and d["severity"] == "error"]
        if k["bug"]:
            if not any(d["location"]["row"] in lines for d in ds):
                ok_all = False
            bad += [f'{v}:{d["code"]}@{d["location"]["row"]}' for d in ds if d["location"]["row"] not in lines]
        else:
            if ds:
                ok_all = False
                bad += [f'{v}:{d["code"]}@{d["location"]["row"]}' for d in ds]
    if k["bug"]:
        found += ok_all; missed += not ok_all
        tag = "FOUND" if ok_all else "MISS "
    else:
        clean_ok += ok_all; fp += not ok_all
        tag = "clean" if ok_all else "FP   "
    print(tag, k["file"], " ".join(bad))
print(f"bugs found {found}/{found+missed}; clean {clean_ok}/{clean_ok+fp}")
