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


def _tree_without_kernels(root: Path) -> None:
    """A project whose package imports a helper that imports another: no MMA word anywhere."""
    (root / "pyproject.toml").write_text('[tool.mmalint]\ntarget-jax = "0.11"\n')
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "helpers.py").write_text("import numpy as np\nfrom pkg import util\n\ndef f(x):\n    return util.g(x)\n")
    (root / "pkg" / "util.py").write_text("def g(x):\n    return x + 1\n")


@pytest.mark.parametrize("cache", [False, True])
def test_a_check_of_files_without_an_mma_word_never_loads_the_analysis(tmp_path: Path, cache: bool) -> None:
    # Pre-commit on a commit that touches no kernel: the prefilter and the import walk decide it.
    _tree_without_kernels(tmp_path)
    args = ["check", *(["--cache-dir", str(tmp_path / "cache")] if cache else ["--no-cache"]),
            "pkg/helpers.py", "pkg/util.py"]
    assert "libcst" not in _imported(args, tmp_path)


def test_a_file_without_an_mma_word_that_reaches_one_is_still_checked(tmp_path: Path) -> None:
    # The other side: the helper now imports a module of the tree with an MMA call, which this
    # run does not check, so the helper is analysed (and libcst loaded).
    _tree_without_kernels(tmp_path)
    (tmp_path / "pkg" / "util.py").write_text(
        "from jax.experimental.mosaic import gpu as mgpu\n\ndef g(acc, a, b):\n    return mgpu.mma(acc, a, b)\n")
    assert "libcst" in _imported(["check", "--no-cache", "pkg/helpers.py"], tmp_path)
