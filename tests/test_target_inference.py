"""The target jax comes from the checked project, not from where mmalint runs (issue 14, item 1).

Through the installed command, on small projects in tmp directories: pyproject tables,
requirements files, lock files and environments, each deciding when the ones before it say
nothing; and an mmalint that runs without any jax next to it (as a pre-commit hook, a pipx
install or an editor's server does) predicts the same as one that has it.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest
from _mmalint_cli import REPO, run_cli
from packaging.specifiers import SpecifierSet
from test_config import M_WARPS_KERNEL

from mmalint.catalog import load_catalog
from mmalint.project_jax import Evidence
from mmalint.target_jax import TargetError, from_evidence, parse_version

KNOWN = "0.10, 0.11, 0.12"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    return {**env, **extra}


def _mmalint(*args: str, cwd: Path, python: list[str] | None = None,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`mmalint ARGS` in a subprocess; `python`: the command that runs mmalint instead."""
    if python is None:
        return run_cli(*args, cwd=cwd, env=env or _env())
    return subprocess.run([*python, *args], cwd=cwd, env=env or _env(), capture_output=True, text=True, timeout=300)


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    """A project: a .git directory (its root), a kernel that jax 0.10 rejects, and `files`."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "kernels").mkdir()
    (root / "kernels" / "k.py").write_text(M_WARPS_KERNEL)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return root


def _target(root: Path, *args: str, env: dict[str, str] | None = None,
            python: list[str] | None = None, path: str = "kernels/k.py") -> tuple[str, str]:
    """The `target-jax = ...` line and the note below it (if any) of `--show-settings`."""
    shown = _mmalint("check", "--show-settings", *args, path, cwd=root, env=env, python=python)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    index = next(i for i, line in enumerate(lines) if line.startswith("target-jax = "))
    note = lines[index + 1] if lines[index + 1].startswith("#   ") else ""
    return lines[index], note


def _codes(result: subprocess.CompletedProcess[str]) -> list[str]:
    return sorted(d["code"] for d in json.loads(result.stdout))


def _lock(name: str, version: str) -> str:
    other = '[[package]]\nname = "numpy"\nversion = "2.1.0"\n\n'
    return f'version = 1\n\n{other}[[package]]\nname = "jax"\nversion = "{version}"\n'


def _dist_info(environment: Path, version: str, python: str = "python3.12") -> None:
    info = environment / "lib" / python / "site-packages" / f"jax-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: jax\nVersion: {version}\n\nThe body: Version: 9.9\n")
    # jaxlib's metadata sits next to it in a real environment and must not be read as jax's
    lib = environment / "lib" / python / "site-packages" / "jaxlib-0.12.0.dist-info"
    lib.mkdir()
    (lib / "METADATA").write_text("Metadata-Version: 2.1\nName: jaxlib\nVersion: 0.12.0\n")


# ---------------------------------------------------------------- each declaration decides


@pytest.mark.parametrize(("files", "line"), [
    ({"pyproject.toml": '[project]\nname = "p"\ndependencies = ["numpy", "jax==0.10.2"]\n'},
     'target-jax = "0.10"  # from pyproject.toml [project] dependencies: jax==0.10.2'),
    ({"pyproject.toml": '[project]\nname = "p"\n[project.optional-dependencies]\ncuda = ["jax[cuda12]==0.11.1"]\n'},
     'target-jax = "0.11"  # from pyproject.toml [project.optional-dependencies] cuda: jax[cuda12]==0.11.1'),
    ({"pyproject.toml": '[dependency-groups]\ndev = [{include-group = "x"}, "jax==0.12.0"]\nx = []\n'},
     'target-jax = "0.12"  # from pyproject.toml [dependency-groups] dev: jax==0.12.0'),
    ({"requirements.txt": "numpy>=2  # numbers\njax[cuda12]==0.10.2 ; sys_platform == 'linux'  # pinned\n"},
     "target-jax = \"0.10\"  # from requirements.txt: jax[cuda12]==0.10.2 ; sys_platform == 'linux'"),
    ({"requirements.txt": "-r requirements/base.txt\n",
      "requirements/base.txt": "jax==0.11.2 \\\n    --hash=sha256:0123abcd\n"},
     'target-jax = "0.11"  # from requirements/base.txt (via -r in requirements.txt): jax==0.11.2'),
    ({"requirements-gpu.txt": "--index-url https://example.invalid/simple\njax[cuda12]==0.12.1\n"},
     'target-jax = "0.12"  # from requirements-gpu.txt: jax[cuda12]==0.12.1'),
    ({"uv.lock": _lock("uv", "0.10.2")}, 'target-jax = "0.10"  # from uv.lock: jax 0.10.2'),
    ({"poetry.lock": _lock("poetry", "0.11.0")}, 'target-jax = "0.11"  # from poetry.lock: jax 0.11.0'),
    ({"pdm.lock": _lock("pdm", "0.12.0")}, 'target-jax = "0.12"  # from pdm.lock: jax 0.12.0'),
])
def test_each_declaration_of_jax_sets_the_target(tmp_path: Path, files: dict[str, str], line: str) -> None:
    root = _project(tmp_path, files)
    assert _target(root) == (line, "")


def test_the_issue_a_jax_less_mmalint_predicts_the_projects_jax(tmp_path: Path) -> None:
    """The pre-commit hook (no jax next to mmalint) and the CLI (jax 0.10 next to it) agree on a
    project that pins jax 0.10: both report the m_warps call that 0.10 rejects."""
    root = _project(tmp_path, {"requirements.txt": "jax==0.10.2\n"})
    hook = _python_without_jax(tmp_path)
    assert _target(root, python=hook)[0] == 'target-jax = "0.10"  # from requirements.txt: jax==0.10.2'
    from_hook = _mmalint("check", "--format", "json", ".", cwd=root, python=hook)
    from_cli = _mmalint("check", "--format", "json", ".", cwd=root)
    assert from_hook.returncode == from_cli.returncode == 1, from_hook.stderr
    assert _codes(from_hook) == _codes(from_cli) == ["MMA501"]
    # With nothing declared, the jax-less mmalint has only the catalog's newest to go by.
    (root / "requirements.txt").unlink()
    assert _target(root, python=hook)[0].startswith('target-jax = "0.12"  # from the newest jax mmalint knows')
    assert _mmalint("check", ".", cwd=root, python=hook).returncode == 0


def _python_without_jax(tmp_path: Path) -> list[str]:
    """This interpreter with every installed package except jax: a hook environment."""
    site = Path(sysconfig.get_paths()["purelib"])
    shadow = tmp_path / "site-without-jax"
    shadow.mkdir()
    for entry in site.iterdir():
        if entry.name != "jax" and not entry.name.startswith("jax-"):
            (shadow / entry.name).symlink_to(entry)
    script = f"import sys; sys.path[:0] = [{str(REPO)!r}, {str(shadow)!r}]; import runpy; runpy.run_module('mmalint', run_name='__main__', alter_sys=True)"
    return [sys.executable, "-S", "-c", script]


# ---------------------------------------------------------------- which source wins


def test_declarations_in_order_and_a_bare_requirement_says_nothing(tmp_path: Path) -> None:
    root = _project(tmp_path, {
        "pyproject.toml": '[project]\nname = "p"\ndependencies = ["jax[cuda12]"]\n'
                          '[project.optional-dependencies]\ntpu = ["jax @ https://example.invalid/jax.whl"]\n',
        "requirements.txt": "jax==0.11.0\n",
        "uv.lock": _lock("uv", "0.12.0"),
    })
    assert _target(root)[0] == 'target-jax = "0.11"  # from requirements.txt: jax==0.11.0'
    (root / "requirements.txt").write_text("jax\n")
    assert _target(root)[0] == 'target-jax = "0.12"  # from uv.lock: jax 0.12.0'
    (root / "pyproject.toml").write_text('[project]\nname = "p"\ndependencies = ["jax>=0.10.2,<0.11"]\n')
    assert _target(root)[0] == 'target-jax = "0.10"  # from pyproject.toml [project] dependencies: jax>=0.10.2,<0.11'


def test_configuration_and_command_line_beat_the_declaration(tmp_path: Path) -> None:
    root = _project(tmp_path, {"requirements.txt": "jax==0.10.2\n"})
    assert _target(root, "--target-jax", "0.12")[0] == 'target-jax = "0.12"  # from --target-jax'
    (root / "pyproject.toml").write_text('[tool.mmalint]\ntarget-jax = "0.11"\n')
    line, _ = _target(root)
    assert line == f'target-jax = "0.11"  # from target-jax in {root.resolve() / "pyproject.toml"}'
    assert _target(root, "--target-jax", "0.12.1")[0] == 'target-jax = "0.12"  # from --target-jax'
    checked = _mmalint("check", "--format", "json", "--target-jax", "0.10", ".", cwd=root)
    assert _codes(checked) == ["MMA501"]


def test_isolated_reads_no_project_file(tmp_path: Path) -> None:
    root = _project(tmp_path, {"requirements.txt": "jax==0.12.0\n"})
    installed = importlib.metadata.version("jax")
    expected = load_catalog().resolve_version(installed)
    assert _target(root, "--isolated")[0] == (
        f'target-jax = "{expected}"  # from the jax installed next to mmalint: jax {installed}')


# ---------------------------------------------------------------- ranges and unknown versions


def test_a_range_predicts_its_lowest_known_release_and_says_so(tmp_path: Path) -> None:
    root = _project(tmp_path, {"requirements.txt": "jax>=0.11,<0.12\n"})
    line, note = _target(root)
    assert line == 'target-jax = "0.11"  # from requirements.txt: jax>=0.11,<0.12'
    assert note == "#   a range: predicting its lowest release that mmalint knows, 0.11"
    (root / "requirements.txt").write_text("jax>=0.9\n")
    line, note = _target(root)
    assert line == 'target-jax = "0.10"  # from requirements.txt: jax>=0.9'
    assert "it also allows older jax, 0.11, 0.12: pin jax or set target-jax" in note
    checked = _mmalint("check", "--format", "json", ".", cwd=root)
    assert _codes(checked) == ["MMA501"] and "warning" not in checked.stderr


def test_a_pin_newer_than_the_catalog_predicts_the_newest_with_a_warning(tmp_path: Path) -> None:
    root = _project(tmp_path, {"pyproject.toml": '[project]\nname = "p"\ndependencies = ["jax==0.13.0"]\n'})
    line, note = _target(root)
    assert line == 'target-jax = "0.12"  # from pyproject.toml [project] dependencies: jax==0.13.0'
    assert note == f"#   newer than any jax mmalint knows ({KNOWN}): predicting jax 0.12; a newer mmalint may know it"
    checked = _mmalint("check", ".", cwd=root)
    assert checked.returncode == 0, checked.stdout
    assert checked.stderr.count("mmalint: warning:") == 1 and "jax==0.13.0" in checked.stderr


@pytest.mark.parametrize(("requirement", "version", "noted"), [
    ("==0.10.2", "0.10", False), ("==0.10.*", "0.10", False), ("==0.11.0rc1", "0.11", False),
    ("~=0.10.2", "0.10", True), (">=0.11,<0.12", "0.11", True), (">=0.9", "0.10", True),
    ("<0.12", "0.10", True), (">0.12.3", "0.12", True), ("!=0.10.*", "0.11", True),
    (">=0.10.2,<0.11", "0.10", True), ("==0.13.0", "0.12", True), ("==0.4.30", "0.10", True),
])
def test_specifiers_map_to_catalog_versions(requirement: str, version: str, noted: bool) -> None:
    target = from_evidence(Evidence("requirements.txt", f"jax{requirement}", SpecifierSet(requirement)), load_catalog())
    assert target is not None and target.version == version
    assert (target.note is not None) == noted
    assert target.warn == (requirement in ("==0.13.0", "==0.4.30"))


def test_a_requirement_nothing_satisfies_says_nothing() -> None:
    assert from_evidence(Evidence("x", "jax>=0.12,<0.11", SpecifierSet(">=0.12,<0.11")), load_catalog()) is None


# ---------------------------------------------------------------- the project's environment


def test_the_projects_environment_decides_when_nothing_is_declared(tmp_path: Path) -> None:
    root = _project(tmp_path, {})
    _dist_info(root / "venv", "0.11.1")
    assert _target(root)[0] == 'target-jax = "0.11"  # from venv: jax 0.11.1 installed'
    _dist_info(root / ".venv", "0.12.0", python="python3.11")
    assert _target(root)[0] == 'target-jax = "0.12"  # from .venv: jax 0.12.0 installed'
    (root / "requirements.txt").write_text("jax==0.10.2\n")
    assert _target(root)[0] == 'target-jax = "0.10"  # from requirements.txt: jax==0.10.2'


def test_virtual_env_counts_only_when_it_is_the_projects(tmp_path: Path) -> None:
    root = _project(tmp_path, {})
    inside = root / "envs" / "dev"
    _dist_info(inside, "0.11.0")
    outside = tmp_path / "hook-env"  # a pre-commit hook's environment sets VIRTUAL_ENV too
    _dist_info(outside, "0.12.0")
    _dist_info(root / ".venv", "0.10.2")
    assert _target(root, env=_env(VIRTUAL_ENV=str(inside)))[0] == (
        f'target-jax = "0.11"  # from $VIRTUAL_ENV ({inside}): jax 0.11.0 installed')
    assert _target(root, env=_env(VIRTUAL_ENV=str(outside)))[0] == (
        'target-jax = "0.10"  # from .venv: jax 0.10.2 installed')
    (outside / ".project").write_text(f"{root}\n")  # pipenv and virtualenvwrapper name their project
    assert _target(root, env=_env(VIRTUAL_ENV=str(outside)))[0] == (
        f'target-jax = "0.12"  # from $VIRTUAL_ENV ({outside}): jax 0.12.0 installed')


def test_nothing_known_predicts_the_jax_installed_next_to_mmalint(tmp_path: Path) -> None:
    root = _project(tmp_path, {"requirements.txt": "numpy\n"})
    installed = importlib.metadata.version("jax")
    version = load_catalog().resolve_version(installed)
    assert _target(root)[0] == f'target-jax = "{version}"  # from the jax installed next to mmalint: jax {installed}'


# ---------------------------------------------------------------- the project root


def test_the_project_root_is_the_nearest_configuration_else_git(tmp_path: Path) -> None:
    root = _project(tmp_path, {"requirements.txt": "jax==0.11.0\n", "kernels/requirements.txt": "jax==0.12.0\n"})
    # no pyproject.toml: the .git directory makes the root
    assert _target(root, path="kernels/k.py")[0].endswith("from requirements.txt: jax==0.11.0")
    # a pyproject.toml nearer the file (one that does not configure mmalint counts) is its project
    (root / "kernels" / "pyproject.toml").write_text('[project]\nname = "kernels"\n')
    assert _target(root, path="kernels/k.py")[0] == 'target-jax = "0.12"  # from requirements.txt: jax==0.12.0'
    shown = _mmalint("check", "--show-settings", "kernels/k.py", cwd=root).stdout
    assert f"# project root: {(root / 'kernels').resolve()}" in shown
    (root / "kernels" / "pyproject.toml").unlink()
    (root / "kernels" / "mmalint.toml").write_text('select = ["MMA5"]\n')
    assert _target(root, path="kernels/k.py")[0] == 'target-jax = "0.12"  # from requirements.txt: jax==0.12.0'


def test_unreadable_declarations_say_nothing(tmp_path: Path) -> None:
    root = _project(tmp_path, {"uv.lock": "version = [\n", "requirements.txt": "jax==\n"})
    os.mkfifo(root / "requirements-dev.txt")  # must never be opened for reading
    (root / "pdm.lock").write_bytes(b"\xff\xfe")
    line, _ = _target(root)
    assert "from the jax installed next to mmalint" in line


# ---------------------------------------------------------------- invalid settings


@pytest.mark.parametrize("version", ["0.9", "1.0", "0.13"])
def test_an_unknown_target_jax_is_refused_not_clamped(tmp_path: Path, version: str) -> None:
    root = _project(tmp_path, {})
    result = _mmalint("check", "--target-jax", version, ".", cwd=root)
    assert result.returncode == 2, result.stdout
    assert f"--target-jax: mmalint does not know jax {version}; it knows {KNOWN}" in result.stderr
    assert "Traceback" not in result.stderr
    (root / "pyproject.toml").write_text(f'[tool.mmalint]\ntarget-jax = "{version}"\n')
    result = _mmalint("check", ".", cwd=root)
    assert result.returncode == 2 and f"`target-jax`: mmalint does not know jax {version}; it knows {KNOWN}" in result.stderr
    with pytest.raises(TargetError):
        parse_version(version, load_catalog())
    assert parse_version("0.10.2", load_catalog()) == "0.10"


@pytest.mark.parametrize(("setting", "message"), [
    ('select = "MMA1"', '`select` must be a list of rule codes: write ["MMA1"], not "MMA1"'),
    ('ignore = "MMA101"', '`ignore` must be a list of rule codes'),
    ('extend-exclude = "third_party/"', '`extend-exclude` must be a list of glob patterns'),
    ('per-file-ignores = { "k.py" = "MMA1" }', '`per-file-ignores.k.py` must be a list of rule codes'),
    ('respect-gitignore = "yes"', "`respect-gitignore` must be true or false"),
    ("target-jax = 0.11", '`target-jax` must be a version string like "0.12"'),
])
def test_malformed_settings_are_refused(tmp_path: Path, setting: str, message: str) -> None:
    root = _project(tmp_path, {"pyproject.toml": f"[tool.mmalint]\n{setting}\n"})
    result = _mmalint("check", ".", cwd=root)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
