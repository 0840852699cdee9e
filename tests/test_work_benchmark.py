"""`benchmarks/work.py`, the counted cold check that commits are compared by: its counters
still reach the analysis (a renamed method would silently count nothing), and two runs of
the same tree count the same."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _benchmark(script: str, target_jax: str, *paths: str) -> Any:
    """The JSON a script of `benchmarks/` prints for `paths`, run from the repository."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--target-jax", target_jax, *paths],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=300,
    )
    return json.loads(out.stdout)


def _counts() -> dict[str, object]:
    found = _benchmark("work.py", "0.11", "examples")
    found.pop("seconds")
    return found


def test_the_counters_count_and_two_runs_count_alike() -> None:
    first = _counts()
    steps, roots, records = first["steps"], first["roots"], first["records"]
    assert isinstance(steps, dict) and isinstance(roots, dict) and isinstance(records, dict)
    assert steps["in_roots"] > 0 and roots["all"] > 0 and records["sites_new"] > 0
    assert first["worlds"] > 0  # the worlds each function root runs in
    assert first["calls"] > 0
    assert first["parsed"]["blocks"] > 0 and first["indexed"]["modules"] > 0  # type: ignore[index]
    assert first == _counts()


def test_speeds_floor_runs_the_command_without_its_roots() -> None:
    # `speed.py --floor` times the command with `Roots.run_roots` replaced: were the method
    # renamed, the "floor" would silently be a whole run.
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from speed import _FLOOR
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    args = ["check", "--target-jax", "0.11", "--no-cache", "--output-format", "json", "--exit-zero", "examples"]
    floor = subprocess.run([sys.executable, "-c", _FLOOR, *args], cwd=ROOT, capture_output=True, text=True,
                           check=True, timeout=300)
    whole = subprocess.run([sys.executable, "-m", "mmalint", *args], cwd=ROOT, capture_output=True, text=True,
                           check=True, timeout=300)
    assert json.loads(floor.stdout) == []
    assert len(json.loads(whole.stdout)) > 10


def test_speeds_largest_is_the_largest_file_a_run_checks(tmp_path: Path) -> None:
    # `speed.py --largest N` times the largest files the prefilter passes: a larger file without
    # an MMA word (which the run skips) is not it.
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from speed import largest_checked
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    (tmp_path / "sub").mkdir()
    (tmp_path / "big_plain.py").write_text("x = 1\n" * 1000)
    (tmp_path / "sub" / "kernel.py").write_text("from jax.experimental.mosaic import gpu as mgpu\nmgpu.mma\n" + "# pad\n" * 50)
    (tmp_path / "small.py").write_text("from jax.experimental.mosaic import gpu as mgpu\nmgpu.wgmma\n")
    assert largest_checked([str(tmp_path)]) == [tmp_path / "sub" / "kernel.py"]
    assert largest_checked([str(tmp_path)], 3) == [tmp_path / "sub" / "kernel.py", tmp_path / "small.py"]
    assert largest_checked([str(tmp_path / "small.py"), str(tmp_path / "big_plain.py")]) == [tmp_path / "small.py"]
    assert largest_checked([str(tmp_path / "big_plain.py")]) == []


def test_root_partition_finds_each_examples_roots_independent() -> None:
    # `benchmarks/root_partition.py`: each function root run apart from the others (before it,
    # it alone, after it: three interpreters) gives the report of one run of them all. A change
    # that made roots share what a root run alone would miss fails here first.
    files = ["examples/pallas_quant_sweep.py", "examples/pallas_kloop_arg_order.py"]
    found = _benchmark("root_partition.py", "0.12", *files)
    assert sorted(found) == sorted(files)
    for result in found.values():
        assert result["function_roots"] > 0 and result["diagnostics"] > 0
        assert result["same"] == result["function_roots"] and result["differ"] == []


def test_world_prefix_counts_the_steps_a_sweeps_worlds_repeat() -> None:
    # `benchmarks/world_prefix.py`: a sweep of 6 worlds repeats most of its first world's
    # steps; a root of one world repeats none; what is shared is part of what is counted.
    files = ["examples/warp_mma_half_acc_test.py", "examples/pallas_u8_dot_test.py"]
    found = _benchmark("world_prefix.py", "0.12", *files)
    steps = found["steps"]
    assert 0 < steps["shared"] < steps["in_roots_of_several_worlds"] <= steps["in_function_roots"]
    sweep = [row for row in found["roots"] if row["root"].startswith("warp_mma_half_acc_test.py")]
    assert [row["worlds"] for row in sweep] == [6]
    assert sweep[0]["steps"] / 2 < sweep[0]["shared"] < sweep[0]["steps"]


def test_lsp_rerun_answers_edits_inside_roots_as_a_fresh_lint_does() -> None:
    # `benchmarks/lsp_rerun.py`: edits inside a test method, each answered by re-running it
    # alone (`lsp/rerun.py`), and each answer compared with a fresh lint.
    found = _benchmark("lsp_rerun.py", "0.12", "examples/warp_mma_half_acc_test.py", "--edits", "6")
    assert found["edits"] == 6 and found["differ_from_fresh"] == []
    assert found["rerun"] >= 4 and found["rerun_ms"]["n"] == found["rerun"]
    # `--in entered`: edits inside any def a root's run entered (here the test's setUp too).
    found = _benchmark("lsp_rerun.py", "0.12", "examples/warp_mma_half_acc_test.py", "--edits", "6", "--in", "entered")
    assert found["in"] == "entered" and found["edits"] == 6 and found["differ_from_fresh"] == []
    assert found["rerun"] >= 4
    # `--in statements`: module-level assignments a root read (the tile, the dtypes).
    found = _benchmark("lsp_rerun.py", "0.12", "examples/pallas_f16_acc_gemm.py", "--edits", "6", "--in", "statements")
    assert found["in"] == "statements" and found["edits"] >= 4 and found["differ_from_fresh"] == []
    assert found["rerun"] == found["edits"]
    # `--in anywhere`: any row that ends a statement, as `lsp_latency.py` edits.
    found = _benchmark("lsp_rerun.py", "0.12", "examples/pallas_f16_acc_gemm.py", "--edits", "6", "--in", "anywhere")
    assert found["in"] == "anywhere" and found["edits"] == 6 and found["differ_from_fresh"] == []
    assert found["full"] <= 1
