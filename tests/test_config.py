"""Project configuration and the target options, through the installed command."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from _mmalint_cli import run_cli

M_WARPS_KERNEL = textwrap.dedent('''
    import jax
    import jax.numpy as jnp
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils

    M, N, K = 32, 64, 64


    def kernel(ctx, a_ref, b_ref, acc_ref, out_ref, smem):
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(jnp.float16), m_warps=2)
      a = mgpu.FragmentedArray.load_untiled(a_ref, layout=layouts.lhs, optimized=False)
      b = mgpu.FragmentedArray.load_untiled(
          utils.memref_transpose(b_ref, (1, 0)), layout=layouts.rhs, optimized=False)
      acc = mgpu.FragmentedArray.load_untiled(acc_ref, layout=layouts.acc, optimized=False)
      mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)


    f = mgpu.as_gpu_kernel(
        kernel, (1, 1, 1), (128, 1, 1),
        (jax.ShapeDtypeStruct((M, K), jnp.float16), jax.ShapeDtypeStruct((N, K), jnp.float16),
         jax.ShapeDtypeStruct((M, N), jnp.float32)),
        jax.ShapeDtypeStruct((M, N), jnp.float32), ())
''')

INT8_F32_ACC = M_WARPS_KERNEL.replace("jnp.float16", "jnp.int8").replace(
    "optimized=False)\n  b", "is_signed=True, optimized=False)\n  b").replace(
    "layout=layouts.rhs, optimized=False", "layout=layouts.rhs, is_signed=True, optimized=False")

FP8_KERNEL = M_WARPS_KERNEL.replace("jnp.float16", "jnp.float8_e4m3fn").replace("m_warps=2", "m_warps=1")


def _codes(result) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(d["code"] for d in json.loads(result.stdout))


def _project(tmp_path: Path, config: str, name: str = "pyproject.toml") -> Path:
    (tmp_path / name).write_text(config)
    kernel = tmp_path / "kernels" / "k.py"
    kernel.parent.mkdir()
    kernel.write_text(INT8_F32_ACC)
    return kernel


def test_target_jax_decides_m_warps_availability(tmp_path: Path) -> None:
    kernel = tmp_path / "k.py"
    kernel.write_text(M_WARPS_KERNEL)
    old = run_cli("check", "--format", "json", "--target-jax", "0.10", str(kernel))
    assert old.returncode == 1, old.stderr
    assert _codes(old) == ["MMA501"]
    finding = json.loads(old.stdout)[0]
    assert finding["predicted_error"]["exception"] == "TypeError"
    assert "m_warps" in finding["predicted_error"]["message"]
    for version in ("0.11", "0.12"):
        new = run_cli("check", "--format", "json", "--target-jax", version, str(kernel))
        assert new.returncode == 0 and _codes(new) == [], new.stdout


def test_target_arch(tmp_path: Path) -> None:
    kernel = tmp_path / "k.py"
    kernel.write_text(FP8_KERNEL)
    a100 = run_cli("check", "--format", "json", "--target-jax", "0.12", "--target-arch", "sm_80", str(kernel))
    assert _codes(a100) == ["MMA502"]
    assert "sm_89" in json.loads(a100.stdout)[0]["predicted_error"]["message"]
    h100 = run_cli("check", "--format", "json", "--target-jax", "0.12", str(kernel))
    assert h100.returncode == 0 and _codes(h100) == []
    bad = run_cli("check", "--target-arch", "hopper", str(kernel))
    assert bad.returncode == 2 and "sm_90a" in bad.stderr and "Traceback" not in bad.stderr


def test_pyproject_settings_and_cli_overrides(tmp_path: Path) -> None:
    kernel = _project(tmp_path, '[tool.mmalint]\ntarget-jax = "0.12"\nignore = ["MMA1"]\n')
    quiet = run_cli("check", "--format", "json", str(kernel))
    assert quiet.returncode == 0 and _codes(quiet) == [], quiet.stdout
    loud = run_cli("check", "--format", "json", "--select", "ALL", "--ignore", "MMA2", str(kernel))
    assert _codes(loud) == ["MMA101"]


def test_nearest_configuration_wins(tmp_path: Path) -> None:
    kernel = _project(tmp_path, '[tool.mmalint]\ntarget-jax = "0.12"\nignore = ["MMA101"]\n')
    (kernel.parent / "mmalint.toml").write_text('target-jax = "0.12"\n')
    result = run_cli("check", "--format", "json", str(kernel))
    assert _codes(result) == ["MMA101"]
    shown = run_cli("check", "--show-settings", str(kernel))
    assert shown.returncode == 0
    assert "mmalint.toml" in shown.stdout
    assert f'target-jax = "0.12"  # from target-jax in {kernel.parent.resolve() / "mmalint.toml"}' in shown.stdout


def test_per_file_ignores(tmp_path: Path) -> None:
    kernel = _project(
        tmp_path, '[tool.mmalint]\ntarget-jax = "0.12"\n[tool.mmalint.per-file-ignores]\n"kernels/*.py" = ["MMA101"]\n'
    )
    assert _codes(run_cli("check", "--format", "json", str(kernel))) == []
    other = tmp_path / "other.py"
    other.write_text(INT8_F32_ACC)
    assert _codes(run_cli("check", "--format", "json", str(other))) == ["MMA101"]


def test_unknown_key_and_code_are_errors(tmp_path: Path) -> None:
    kernel = _project(tmp_path, '[tool.mmalint]\nselct = ["MMA1"]\n')
    result = run_cli("check", str(kernel))
    assert result.returncode == 2
    assert "unknown key `selct`" in result.stderr and "did you mean `select`" in result.stderr
    assert "Traceback" not in result.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.mmalint]\nignore = ["MMA999"]\n')
    result = run_cli("check", str(kernel))
    assert result.returncode == 2 and "MMA999" in result.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.mmalint]\ntarget-jax = "latest"\n')
    result = run_cli("check", str(kernel))
    assert result.returncode == 2 and "target-jax" in result.stderr


def test_exclude_from_configuration(tmp_path: Path) -> None:
    kernel = _project(tmp_path, '[tool.mmalint]\ntarget-jax = "0.12"\nextend-exclude = ["kernels"]\n')
    result = run_cli("check", "--format", "json", str(tmp_path))
    assert result.returncode == 0 and _codes(result) == [], result.stdout
    explicit = run_cli("check", "--format", "json", str(kernel))
    assert _codes(explicit) == ["MMA101"]


def test_check_confirm_runs_the_reference_lowering(tmp_path: Path) -> None:
    kernel = tmp_path / "k.py"
    kernel.write_text(INT8_F32_ACC)
    result = run_cli("check", "--format", "json", "--target-jax", "0.12", "--confirm",
                     "--confirm-tier", "ptx", str(kernel))
    assert _codes(result) == ["MMA101"]
    assert "MMA101" in result.stderr
    assert ("confirmed" in result.stderr) or ("ptxas" in result.stderr and "inconclusive" in result.stderr)
