"""Running cases: worker processes that hang or crash, devices, progress, API errors."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mmalint.confirm import FindingsError, confirm_findings, summarize
from mmalint.confirm.options import parse_tiers
from mmalint.confirm.process import run_worker
from mmalint.confirm.runner import _DevicePool
from mmalint.confirm.verdict import Verdict


def _fake_worker(tmp_path: Path, body: str) -> str:
    # Workers ignore PYTHONPATH (they run isolated); a test's fake worker comes in through
    # run_worker's trusted search_path instead.
    (tmp_path / "fake_worker.py").write_text(body)
    return "fake_worker"


def test_hanging_worker_is_killed(tmp_path: Path) -> None:
    module = _fake_worker(tmp_path, "import time\ntime.sleep(60)\n")
    start = time.perf_counter()
    outcome = run_worker(sys.executable, module, {}, timeout=1.0, env={},
                         search_path=[str(tmp_path)])
    assert outcome.timed_out and time.perf_counter() - start < 10
    assert "timed out after 1 s" in outcome.failure()


def test_crashing_worker_keeps_earlier_records(tmp_path: Path) -> None:
    module = _fake_worker(tmp_path, (
        "import os, sys\n"
        "print('noise from CUDA')\n"
        "print('MMALINT-RECORD {\"part\": \"env\", \"jax_version\": \"0.11.2\"}', flush=True)\n"
        "sys.stderr.write('CUDA_ERROR_ILLEGAL_INSTRUCTION\\n'); sys.stderr.flush()\n"
        "os.abort()\n"))
    outcome = run_worker(sys.executable, module, {}, timeout=30.0, env={},
                         search_path=[str(tmp_path)])
    assert outcome.part("env") == {"part": "env", "jax_version": "0.11.2"}
    assert outcome.part("flagged") is None
    assert "signal 6" in outcome.failure() and "ILLEGAL_INSTRUCTION" in outcome.failure()


def test_missing_interpreter() -> None:
    outcome = run_worker("/nonexistent/python", "x", {}, timeout=5.0, env={})
    assert outcome.records == () and "cannot start" in outcome.stderr_tail


def test_device_pool_spreads_jobs() -> None:
    pool = _DevicePool([0, 1], jobs=4)
    with pool.device() as a, pool.device() as b, pool.device() as c, pool.device() as d:
        taken = [a, b, c, d]
    assert sorted(t for t in taken if t is not None) == [0, 0, 1, 1]
    with _DevicePool(None, jobs=2).device() as none:
        assert none is None


def test_progress_and_order(findings: list[dict[str, Any]]) -> None:
    seen: list[tuple[int, int, str]] = []

    def progress(done: int, total: int, verdict: Verdict) -> None:
        seen.append((done, total, verdict.tier))

    # gpu on a finding without a call signature: answered without any tool.
    broken = [{**f, "call": None} for f in findings[:3]]
    verdicts = confirm_findings(broken, {"gpu", "jax"}, jobs=3, progress=progress)
    assert [(v.index, v.tier) for v in verdicts] == [
        (0, "jax"), (0, "gpu"), (1, "jax"), (1, "gpu"), (2, "jax"), (2, "gpu")]
    assert sorted(d for d, _, _ in seen) == [1, 2, 3, 4, 5, 6] and all(t == 6 for _, t, _ in seen)
    assert all(v.verdict == "inconclusive" and "no call signature" in v.evidence
               for v in verdicts)
    summary = summarize(verdicts)
    assert (summary.findings, summary.confirmed, summary.unconfirmed) == (3, 0, 3)
    assert summary.exit_code == 1
    assert verdicts[0].to_json()["location"] == {"row": 31, "column": 17}


def test_api_errors(findings: list[dict[str, Any]]) -> None:
    with pytest.raises(ValueError, match="unknown tier"):
        confirm_findings(findings, {"cuda"})
    with pytest.raises(FindingsError):
        confirm_findings({"not": "a list"}, {"ptx"})  # type: ignore[arg-type]
    assert parse_tiers("all") == {"ptx", "jax", "gpu"}
    assert parse_tiers("ptx, jax") == {"ptx", "jax"}


def test_unsupported_api(findings: list[dict[str, Any]]) -> None:
    other = [{**findings[0], "call": {**findings[0]["call"], "api": "mgpu.future_mma"}}]
    verdicts = confirm_findings(other, {"ptx", "jax", "gpu"})
    assert all("not covered by the reference lowering" in v.evidence for v in verdicts)


def test_a_failing_case_does_not_end_the_run(findings: list[dict[str, Any]],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    from mmalint.confirm import families

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("synthetic")

    host = families.host
    # The family's kernel synthesis fails; the runner must turn that into a verdict.
    monkeypatch.setattr(families, "host", lambda name: replace(host(name), kernel_spec=boom))
    verdicts = confirm_findings(findings[:2], {"jax"}, jobs=2)
    assert [v.verdict for v in verdicts] == ["inconclusive", "inconclusive"]
    assert "RuntimeError: synthetic" in verdicts[0].evidence
