"""`python -m mmalint.confirm.cli` through a real subprocess."""

from __future__ import annotations

import json
import os
import re
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
    out = cli(str(DATA / "findings.json"), "--tier", "ptx", "--jobs", "2", "--format", "table")
    # MMA203 is inconclusive in the ptx tier (nothing raises): not every finding is confirmed.
    assert out.returncode == 1, out.stderr
    assert "confirmed" in out.stdout and "inconclusive" in out.stdout
    assert "Unexpected instruction types" in out.stdout
    assert re.search(r"^17 findings: \d+ confirmed, \d+ inconclusive in every tier$", out.stdout, re.M)
    assert "inconclusive only" not in out.stdout and "0 not reproduced" not in out.stdout


LINE = re.compile(r"^examples/\S+\.py:\d+:\d+: MMA\d{3} (confirmed|not reproduced|inconclusive) \(ptx: ")


@pytest.mark.ptxas
def test_default_is_a_line_per_finding_with_progress_lines_off_a_terminal() -> None:
    out = cli(str(DATA / "findings.json"), "--tier", "ptx", "--jobs", "2")
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 18 and all(LINE.match(line) for line in lines[:17]), out.stdout
    assert lines[17].startswith("17 findings: ")
    # A finding not confirmed says why, on its own line.
    assert any("inconclusive (ptx: inconclusive) ptx: " in line for line in lines)
    progress = out.stderr.splitlines()
    assert [line.split("]")[0] for line in progress] == [f"confirm [{i}/17" for i in range(1, 18)]


def test_progress_and_lines_without_a_gpu(tmp_path: Path) -> None:
    """The same shape from the gpu tier where there is no GPU (answered at once, no ptxas needed)."""
    if gpu_present() is None:
        pytest.skip("this machine may have a GPU")
    path = tmp_path / "three.json"
    path.write_text(json.dumps(json.loads((DATA / "findings.json").read_text())[:3]))
    out = cli(str(path), "--tier", "gpu")
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    assert lines[0].startswith("examples/raw_int8_f32_acc.py:31:17: MMA101 inconclusive (gpu: inconclusive) gpu: no GPU")
    assert lines[3] == "3 findings: 0 confirmed, 3 inconclusive in every tier"
    assert len(out.stderr.splitlines()) == 3
    assert out.stderr.splitlines()[0].startswith("confirm [1/3] examples/")
    assert re.search(r" inconclusive \(\d+\.\d s\)$", out.stderr.splitlines()[0])


def test_help_explains_tiers_verdicts_and_exit_codes() -> None:
    out = subprocess.run([sys.executable, "-m", "mmalint", "confirm", "--help"], capture_output=True,
                         text=True, cwd=REPO, timeout=120)
    assert out.returncode == 0
    text = out.stdout
    for words in ("ptx   ptxas", "jax   the installed jax", "gpu   an NVIDIA GPU", "confirmed ",
                  "not reproduced ", "inconclusive ", "exit codes:", "  0  every finding confirmed",
                  "  1  a finding not reproduced", "  2  bad input", "--format {concise,table,json}"):
        assert words in text, words


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
