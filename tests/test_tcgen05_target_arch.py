"""MMA711 through the CLI: a tcgen05 kernel is checked against a GPU only when one is given
(`--target-arch`, or `target-arch` in the configuration), never against the default sm_90a."""

from __future__ import annotations

import json
from pathlib import Path

from _mmalint_cli import run_cli

from mmalint.catalog import load_catalog

# The int8 kernel of MMA711's examples (the one checked for sm_100a, valid there).
INT8_KERNEL = next(e.code for e in load_catalog().rules["MMA711"].examples if "sm_100a" in e.title)


def _codes(result) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(d["code"] for d in json.loads(result.stdout))


def test_no_target_given_checks_no_gpu(tmp_path: Path) -> None:
    kernel = tmp_path / "k.py"
    kernel.write_text(INT8_KERNEL)
    default = run_cli("check", "--format", "json", "--target-jax", "0.12", str(kernel))
    assert default.returncode == 0 and _codes(default) == [], default.stdout


def test_target_given_on_the_command_line(tmp_path: Path) -> None:
    kernel = tmp_path / "k.py"
    kernel.write_text(INT8_KERNEL)
    b300 = run_cli("check", "--format", "json", "--target-jax", "0.12", "--target-arch", "sm_103a", str(kernel))
    assert _codes(b300) == ["MMA711"]
    finding = json.loads(b300.stdout)[0]
    assert "kind::i8" in finding["message"] and finding["predicted_error"]["exception"] == "ptxas"
    b200 = run_cli("check", "--format", "json", "--target-jax", "0.12", "--target-arch", "sm_100a", str(kernel))
    assert b200.returncode == 0 and _codes(b200) == []
    hopper = run_cli("check", "--format", "json", "--target-jax", "0.12", "--target-arch", "sm_90a", str(kernel))
    assert _codes(hopper) == ["MMA711"]


def test_target_given_in_the_configuration(tmp_path: Path) -> None:
    (tmp_path / "mmalint.toml").write_text('target-arch = "sm_120a"\n')
    kernel = tmp_path / "k.py"
    kernel.write_text(INT8_KERNEL)
    consumer = run_cli("check", "--format", "json", "--target-jax", "0.12", str(kernel), cwd=tmp_path)
    assert _codes(consumer) == ["MMA711"], consumer.stdout
    assert "sm_120" in json.loads(consumer.stdout)[0]["message"]
