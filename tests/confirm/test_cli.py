"""`python -m mmalint.confirm.cli` through a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mmalint.confirm.runner import gpu_present

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "250", "PYTHONPATH": os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)}
    return subprocess.run([sys.executable, "-m", "mmalint.confirm.cli", *args], input=stdin,
                          capture_output=True, text=True, env=env, timeout=300, cwd=REPO)


@pytest.mark.parametrize(("content", "message"), [
    (None, "cannot read"),
    ("{not json", "is not valid JSON"),
    ('{"code": "MMA101"}', "expected a JSON array of findings"),
    ('[{"code": "MMA101"}]', "finding 0: missing or non-string 'filename'"),
    ("[42]", "finding 0: expected an object, got a number"),
])
def test_bad_input_exits_2(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "findings.json"
    if content is not None:
        path.write_text(content)
    out = cli(str(path), "--tier", "ptx")
    assert out.returncode == 2
    assert message in out.stderr
    assert "Traceback" not in out.stderr + out.stdout


@pytest.mark.parametrize("args", [
    ["--tier", "cuda"], ["--jobs", "0"], ["--devices", "a,b"], ["--timeout", "-1"],
    ["--format", "xml"],
])
def test_bad_options_exit_2(args: list[str]) -> None:
    out = cli(str(DATA / "findings.json"), *args)
    assert out.returncode == 2 and "usage:" in out.stderr and "Traceback" not in out.stderr


def test_empty_array_exits_0() -> None:
    out = cli("-", "--format", "json", stdin="[]")
    assert out.returncode == 0 and json.loads(out.stdout) == []


@pytest.mark.ptxas
def test_json_format_from_stdin() -> None:
    findings = json.loads((DATA / "findings.json").read_text())
    confirmed = [f for f in findings if f["code"] in ("MMA101", "MMA201")]
    out = cli("-", "--tier", "ptx", "--format", "json", stdin=json.dumps(confirmed))
    assert out.returncode == 0, out.stderr
    verdicts = json.loads(out.stdout)
    assert len(verdicts) == len(confirmed)
    for v in verdicts:
        assert {"code", "filename", "location", "tier", "verdict", "evidence", "seconds"} <= set(v)
        assert v["verdict"] == "confirmed" and v["tier"] == "ptx"
        assert set(v["location"]) == {"row", "column"}


@pytest.mark.ptxas
def test_table_and_exit_1_when_not_reproduced_or_unconfirmed() -> None:
    out = cli(str(DATA / "findings.json"), "--tier", "ptx", "--jobs", "2")
    # MMA203 is inconclusive in the ptx tier (nothing raises): not every finding is confirmed.
    assert out.returncode == 1, out.stderr
    assert "confirmed" in out.stdout and "inconclusive" in out.stdout
    assert "Unexpected instruction types" in out.stdout
    assert "17 finding(s)" in out.stdout


def test_gpu_tier_without_gpu_is_inconclusive_at_once(tmp_path: Path) -> None:
    """Where no GPU exists the gpu tier answers without starting a worker."""
    if gpu_present() is None:
        pytest.skip("this machine may have a GPU")
    findings = json.loads((DATA / "findings.json").read_text())[:2]
    path = tmp_path / "two.json"
    path.write_text(json.dumps(findings))
    out = cli(str(path), "--tier", "gpu", "--format", "json")
    assert out.returncode == 1
    verdicts = json.loads(out.stdout)
    assert [v["verdict"] for v in verdicts] == ["inconclusive", "inconclusive"]
    assert all(v["evidence"].startswith("no GPU") and v["seconds"] < 1 for v in verdicts)
