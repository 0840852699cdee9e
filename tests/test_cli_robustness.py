"""Bad input and hostile code through the real command: clear messages, no traceback, the run
goes on, and the checked code is never imported or executed."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest
from _mmalint_cli import run_cli

from mmalint.catalog import load_catalog
from mmalint.pipeline.file import check_bytes
from mmalint.settings import Settings

BUGGY = textwrap.dedent('''
    import functools
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu

    M, N, K = 128, 8, 128


    @functools.partial(plgpu.kernel, out_type=jax.ShapeDtypeStruct((M, N), jnp.float32))
    def kernel(a_ref, b_ref, o_ref):
      acc = plgpu.layout_cast(jnp.zeros((M, N), jnp.float32), plgpu.Layout.MMA_ACC(jnp.int8))
      a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(jnp.int8))
      b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(jnp.int8))
      o_ref[...] = plgpu.mma(acc, a, b)


    out = kernel(jnp.zeros((M, K), jnp.int8), jnp.zeros((N, K), jnp.int8))
''')


def _json(result) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    return json.loads(result.stdout)


def test_checked_code_is_never_imported_or_run(tmp_path: Path) -> None:
    sentinel = tmp_path / "IMPORTED"
    hostile = tmp_path / "hostile.py"
    hostile.write_text(
        f"import pathlib\npathlib.Path({str(sentinel)!r}).write_text('ran')\n"
        "raise SystemExit(7)\n" + BUGGY
    )
    result = run_cli("check", "--format", "json", "--target-jax", "0.12", str(hostile))
    assert result.returncode == 1, result.stderr
    assert [d["code"] for d in _json(result)] == ["MMA101"]
    assert not sentinel.exists()


def test_a_syntax_error_is_a_diagnostic_and_the_run_goes_on(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("def mma(:\n  pass\n")
    (tmp_path / "kernel.py").write_text(BUGGY)
    result = run_cli("check", "--format", "json", "--target-jax", "0.12", str(tmp_path))
    assert result.returncode == 1
    findings = _json(result)
    by_file = {Path(d["filename"]).name: d for d in findings}
    assert by_file["broken.py"]["name"] == "syntax-error" and by_file["broken.py"]["code"] is None
    assert by_file["broken.py"]["location"]["row"] == 1
    assert by_file["kernel.py"]["code"] == "MMA101"
    assert "Traceback" not in result.stderr


def test_non_utf8_file_is_a_clear_input_error(tmp_path: Path) -> None:
    (tmp_path / "latin.py").write_bytes(b"# mma kernel \xe9t\xe9\nx = 1\n")
    (tmp_path / "kernel.py").write_text(BUGGY)
    result = run_cli("check", "--format", "concise", "--target-jax", "0.12", str(tmp_path))
    assert result.returncode == 2
    assert "latin.py" in result.stderr and "utf-8" in result.stderr.lower()
    assert "MMA101" in result.stdout  # the other file was still checked
    assert "Traceback" not in result.stderr


def test_missing_path_and_unknown_selector(tmp_path: Path) -> None:
    missing = run_cli("check", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "nope" in missing.stderr and "Traceback" not in missing.stderr
    bad = run_cli("check", "--select", "MMA9", str(tmp_path))
    assert bad.returncode == 2 and "MMA9" in bad.stderr
    bad_version = run_cli("check", "--target-jax", "latest", str(tmp_path))
    assert bad_version.returncode == 2 and "--target-jax" in bad_version.stderr


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root reads anything")
def test_unreadable_file(tmp_path: Path) -> None:
    target = tmp_path / "secret.py"
    target.write_text(BUGGY)
    target.chmod(0)
    try:
        result = run_cli("check", str(target))
    finally:
        target.chmod(0o644)
    assert result.returncode == 2 and "secret.py" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks")
def test_a_symlink_loop_does_not_trap_the_walk(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "kernel.py").write_text(BUGGY)
    (tmp_path / "pkg" / "loop").symlink_to(tmp_path, target_is_directory=True)
    result = run_cli("check", "--format", "json", "--target-jax", "0.12", str(tmp_path))
    assert result.returncode == 1
    assert [d["code"] for d in _json(result)] == ["MMA101"]


def test_prefilter_skips_files_without_mma() -> None:
    report = check_bytes("plain.py", b"import jax\nx = jax.numpy.zeros(3)\n# gamma\n", Settings())
    assert not report.parsed and report.diagnostics == ()
    assert check_bytes("k.py", BUGGY.encode(), Settings(target_jax="0.12")).parsed


def test_json_fields(tmp_path: Path) -> None:
    (tmp_path / "kernel.py").write_text(BUGGY)
    finding = _json(run_cli("check", "--format", "json", "--target-jax", "0.12", str(tmp_path)))[0]
    for key in ("code", "name", "severity", "message", "filename", "location", "end_location",
                "related", "predicted_error", "fix", "call"):
        assert key in finding
    assert finding["severity"] == "error"
    assert finding["location"]["row"] == 15 and finding["location"]["column"] == 16
    assert finding["predicted_error"] == {
        "exception": "NotImplementedError",
        "message": "Only int32 accumulator supported for integer and boolean operands. Got float32",
        "jax_version": "0.12",
        "match": "exact",
    }
    assert any(r["message"] == "accumulator created here as float32" for r in finding["related"])
    assert finding["fix"]["applicability"] == "safe"
    assert finding["call"]["acc"]["dtype"] == "float32" and finding["call"]["a"]["dtype"] == "int8"
    assert finding["call"]["lowering_semantics"] == "warpgroup"  # the 0.12 default


def test_rule_and_rules_commands() -> None:
    page = run_cli("rule", "MMA101")
    assert page.returncode == 0
    assert "Only s32 accumulator supported for integer operands." in page.stdout
    assert "## Invalid" in page.stdout and "## Valid" in page.stdout
    by_name = run_cli("rule", "unsigned-accumulator")
    assert by_name.returncode == 0 and "MMA201" in by_name.stdout
    unknown = run_cli("rule", "MMA999")
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    table = run_cli("rules", "--format", "json")
    codes = [r["code"] for r in json.loads(table.stdout)]
    assert codes == sorted(load_catalog().rules)
