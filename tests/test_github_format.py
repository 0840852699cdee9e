"""`--format github`: workflow commands as the Actions runner reads them, with paths from the
repository root (`GITHUB_WORKSPACE`) whatever directory the step ran mmalint in."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import _kernels as k
from _mmalint_cli import REPO, run_cli

from mmalint.report.paths import workspace_relative

TARGET = ("--target-jax", "0.12")


def _mmalint(*args: str, cwd: Path, workspace: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "GITHUB_WORKSPACE"}
    if workspace is not None:
        env["GITHUB_WORKSPACE"] = str(workspace)
    return run_cli(*args, cwd=cwd, env=env)


def _properties(line: str) -> dict[str, str]:
    head = line.split("::", 2)[1]
    kind, _, props = head.partition(" ")
    return {"kind": kind, **dict(p.split("=", 1) for p in props.split(","))}


def test_github_workflow_commands(tmp_path: Path) -> None:
    (tmp_path / "a,b.py").write_text(k.PALLAS_SWAPPED)
    result = _mmalint("check", *TARGET, "--format", "github", "a,b.py", cwd=tmp_path)
    assert result.returncode == 1
    (line,) = result.stdout.splitlines()
    head, message = line.split("::", 2)[1:]
    assert head == "error file=a%2Cb.py,line=14,col=16,endLine=18,endColumn=4,title=MMA105"
    assert message.startswith("`plgpu.mma` takes the accumulator first")
    assert "%0Ahelp: call mma(acc, a, b)" in message
    # The rule page installed with mmalint is a file on the runner: the annotation names the
    # command that prints it instead of a link nobody reading the pull request can open.
    assert message.endswith("%0Asee `mmalint rule MMA105`") and "file:" not in message
    assert "\n" not in message


def test_paths_are_relative_to_the_workspace_under_a_working_directory(tmp_path: Path) -> None:
    # A step with `working-directory: kernels` runs `mmalint check .` in kernels/.
    kernels = tmp_path / "repo" / "kernels"
    (kernels / "pallas").mkdir(parents=True)
    (kernels / "pallas" / "swapped.py").write_text(k.PALLAS_SWAPPED)
    (kernels / "int8.py").write_text(k.MGPU_INT8_F32_ACC)
    result = _mmalint("check", *TARGET, "--format", "github", ".", cwd=kernels, workspace=tmp_path / "repo")
    assert result.returncode == 1, result.stderr
    files = sorted(_properties(line)["file"] for line in result.stdout.splitlines())
    assert files == ["kernels/int8.py", "kernels/pallas/swapped.py"]
    # Named by an absolute path or with `..`, a file inside the workspace is still named from its root.
    absolute = _mmalint("check", *TARGET, "--format", "github", str(kernels / "int8.py"), cwd=tmp_path,
                        workspace=tmp_path / "repo")
    assert _properties(absolute.stdout.splitlines()[0])["file"] == "kernels/int8.py"
    dotted = _mmalint("check", *TARGET, "--format", "github", "../pallas/swapped.py",
                      cwd=kernels / "pallas", workspace=tmp_path / "repo")
    assert _properties(dotted.stdout.splitlines()[0])["file"] == "kernels/pallas/swapped.py"


def test_paths_outside_the_workspace_stay_as_given(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "k.py").write_text(k.PALLAS_SWAPPED)
    (tmp_path / "repo").mkdir()
    result = _mmalint("check", *TARGET, "--format", "github", "elsewhere/k.py", cwd=tmp_path,
                      workspace=tmp_path / "repo")
    assert _properties(result.stdout.splitlines()[0])["file"] == "elsewhere/k.py"


def test_without_a_workspace_paths_stay_as_given(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "k.py").write_text(k.PALLAS_SWAPPED)
    result = _mmalint("check", *TARGET, "--format", "github", "k.py", cwd=tmp_path / "sub")
    assert _properties(result.stdout.splitlines()[0])["file"] == "k.py"


def test_workspace_relative_follows_symlinks(tmp_path: Path) -> None:
    (tmp_path / "real" / "src").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert workspace_relative("src/k.py", str(tmp_path / "link"), tmp_path / "real") == "src/k.py"
    assert workspace_relative("k.py", str(tmp_path / "real"), tmp_path) is None


def test_the_docs_name_the_annotation_limits_and_the_path_rule() -> None:
    doc = (REPO / "docs" / "github-actions.md").read_text(encoding="utf-8")
    assert "10 error and 10 warning annotations per step" in doc and "50 per job" in doc
    assert "GITHUB_WORKSPACE" in doc and "working-directory" in doc
