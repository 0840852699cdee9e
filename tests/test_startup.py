"""What a check imports: a run that finds nothing, or finds everything in the cache, does not
pay for the modules only other work needs (each costs tens of milliseconds, a run served from
the cache a few hundred)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mmalint.report import _EMPTY_WHEN_NONE, REPORTERS

_PROBE = (
    "import sys; from mmalint.cli import main\n"
    "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
    "print(sorted(m for m in ('importlib.metadata', 'rich', 'libcst', 'mmalint.confirm.cli', "
    "'packaging.requirements') if m in sys.modules))"
)


def _imported(args: list[str], cwd: Path) -> list[str]:
    out = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, cwd=cwd)
    return eval(out.stdout.strip().splitlines()[-1])


def test_a_clean_check_served_from_the_cache_imports_none_of_them(tmp_path: Path) -> None:
    # A project that sets its target (an inferred one reads the requirements: packaging).
    (tmp_path / "pyproject.toml").write_text('[tool.mmalint]\ntarget-jax = "0.11"\n')
    (tmp_path / "k.py").write_text("x = 1\n")
    args = ["check", "--cache-dir", str(tmp_path / "cache"), "k.py"]
    _imported(args, tmp_path)
    assert _imported(args, tmp_path) == []


def test_a_finding_still_imports_the_renderer(tmp_path: Path) -> None:
    # The other side of the lazy reporters: a finding is drawn (with rich).
    (tmp_path / "k.py").write_text(
        "import jax.numpy as jnp\nfrom jax.experimental.mosaic import gpu as mgpu\n"
        "def k(acc, a, b):\n"
        "    a = mgpu.FragmentedArray.splat(a, (64, 16), is_signed=True)\n"
        "    b = mgpu.FragmentedArray.splat(b, (16, 8), is_signed=True)\n"
        "    acc = mgpu.FragmentedArray.splat(acc, (64, 8), is_signed=False)\n"
        "    return mgpu.mma(acc, a, b)\n"
    )
    assert "rich" in _imported(["check", "--no-cache", "--isolated", "k.py"], tmp_path)


@pytest.mark.parametrize("name", sorted(_EMPTY_WHEN_NONE))
@pytest.mark.parametrize("color", [False, True])
def test_a_format_said_to_draw_nothing_for_no_finding_draws_nothing(name: str, color: bool) -> None:
    import importlib

    module = importlib.import_module(f"mmalint.report.{ {'json': 'json_format'}.get(name, name)}")
    assert module.render([], lambda _: None, color) == "" == REPORTERS[name]([], lambda _: None, color)
