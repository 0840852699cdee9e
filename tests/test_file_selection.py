"""Which files a walk checks: exclude patterns relative to the project root, and .gitignore
files as git reads them (issue 14, item 2).

The gitignore semantics are proven against git itself: `git check-ignore` for each path of a
tree built to exercise every rule of gitignore(5), and `git ls-files --others
--exclude-standard` for what `mmalint check .` walks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import _kernels as k
import pytest
from _mmalint_cli import run_cli

from mmalint.gitignore import GitIgnore, parse_pattern

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed")
TARGET = ("--target-jax", "0.12")


def _env(home: Path) -> dict[str, str]:
    """No user or system git configuration: no global excludes file can change what git says."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "VIRTUAL_ENV"}
    return {**env, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_NOSYSTEM": "1"}


def _mmalint(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd, env=_env(cwd))


def _checked(*args: str, cwd: Path) -> list[str]:
    """The files `mmalint check ARGS` reports (every file of these trees has one MMA101)."""
    result = _mmalint("check", "--format", "json", *TARGET, *args, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    return sorted({Path(d["filename"]).as_posix() for d in json.loads(result.stdout)})


def _tree(root: Path, files: list[str]) -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(k.MGPU_INT8_F32_ACC)


# ---------------------------------------------------------------- exclude patterns


@pytest.mark.parametrize("walked", [".", "./", "ABSOLUTE"])
def test_a_directory_pattern_with_a_slash_excludes_it_from_the_root(tmp_path: Path, walked: str) -> None:
    _tree(tmp_path, ["a.py", "third_party/t.py", "third_party/sub/u.py", "src/third_party/s.py"])
    (tmp_path / "pyproject.toml").write_text('[tool.mmalint]\nextend-exclude = ["third_party/"]\n')
    path = str(tmp_path) if walked == "ABSOLUTE" else walked
    found = [Path(f).relative_to(tmp_path).as_posix() if Path(f).is_absolute() else f
             for f in _checked(path, cwd=tmp_path)]
    # as in ruff, `third_party/` is `<root>/third_party`; a bare name would match at any depth
    assert found == ["a.py", "src/third_party/s.py"]


def test_patterns_are_relative_to_the_project_root_whatever_is_walked(tmp_path: Path) -> None:
    _tree(tmp_path, ["src/keep.py", "src/third_party/s.py", "src/pkg/vendored/v.py", "other/third_party/o.py"])
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mmalint]\nextend-exclude = ["src/third_party/", "src/pkg/vendored", "*/third_party"]\n')
    assert _checked("src", cwd=tmp_path) == ["src/keep.py"]
    assert _checked(".", cwd=tmp_path / "src") == ["keep.py"]
    assert _checked("other", cwd=tmp_path) == []
    # named files are checked even so, unless --force-exclude (the pre-commit hook's)
    assert _checked("src/third_party/s.py", cwd=tmp_path) == ["src/third_party/s.py"]
    assert _checked("--force-exclude", "src/third_party/s.py", "src/keep.py", cwd=tmp_path) == ["src/keep.py"]
    assert _checked("--force-exclude", "src/third_party", cwd=tmp_path) == []


def test_a_name_pattern_excludes_at_any_depth(tmp_path: Path) -> None:
    _tree(tmp_path, ["a.py", "third_party/t.py", "src/third_party/s.py", "gen_x.py", "src/gen_y.py"])
    (tmp_path / "pyproject.toml").write_text('[tool.mmalint]\nextend-exclude = ["third_party", "gen_*.py"]\n')
    assert _checked(".", cwd=tmp_path) == ["a.py"]


def test_each_directory_is_walked_with_its_own_configuration(tmp_path: Path) -> None:
    _tree(tmp_path, ["a.py", "sub/generated/g.py", "sub/b.py", "generated/h.py"])
    (tmp_path / "pyproject.toml").write_text("[tool.mmalint]\n")
    (tmp_path / "sub" / "mmalint.toml").write_text('extend-exclude = ["generated/"]\n')
    assert _checked(".", cwd=tmp_path) == ["a.py", "generated/h.py", "sub/b.py"]


# ---------------------------------------------------------------- .gitignore, against git


ROOT_IGNORE = r"""
# a comment, then an escaped hash
\#hash.py
*.log.py
build/
/anchored.py
docs/*.py
!docs/keep.py
**/deep/*.py
a/**/z.py
lib/**
!lib/inner/
trailing.py<three spaces>
escaped\ .py
[abc]x.py
[!a-c]y.py
[[:digit:]]d.py
[z-a]r.py
foo/a**/b.py
q?.py
unclosed[.py
***/star.py
x/**/
dironly/
!negdir/
negdir/*
!negdir/ok.py
src/*
!src/pkg/
src/pkg/*
!src/pkg/mod.py
"""
ROOT_IGNORE = ROOT_IGNORE.replace("<three spaces>", "   ")  # trailing spaces git drops
NESTED_IGNORE = "*.py\n!keep*.py\n/local.py\nnested/\n"
INFO_EXCLUDE = "excluded_by_info.py\n!anchored.py\n"
FILES = [
    "#hash.py", "app.log.py", "sub/app.log.py", "build/x.py", "sub/build/y.py", "anchored.py",
    "sub/anchored.py", "docs/a.py", "docs/keep.py", "docs/sub/b.py", "one/deep/c.py", "deep/d.py",
    "one/two/deep/e.py", "a/z.py", "a/b/z.py", "a/b/c/z.py", "az.py", "lib/x.py", "lib/inner/y.py",
    "lib/inner/deeper/w.py", "trailing.py", "escaped .py", "ax.py", "dx.py", "ay.py", "dy.py",
    "1d.py", "xd.py", "rr.py", "zr.py", "foo/ab.py", "foo/ax/y/b.py", "foo/a/b.py", "q1.py",
    "q12.py", "unclosed[.py", "star.py", "s/star.py", "s/t/star.py", "x/y/f.py", "x/f.py",
    "dironly/f.py", "negdir/ok.py", "negdir/no.py", "src/a.py", "src/pkg/mod.py",
    "src/pkg/other.py", "sub2/keep1.py", "sub2/other.py", "sub2/local.py", "sub2/deeper/local.py",
    "sub2/nested/k.py", "sub2/deeper/nested/keep2.py", "excluded_by_info.py", "plain.py",
    "sub/plain.py",
]
DIRECTORIES = ["sub", "docs", "lib", "lib/inner", "negdir", "src/pkg", "x", "x/y", "sub2/nested", "a",
               "a/b", "build", "dironly"]


def _repository(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run([GIT or "git", "init", "-q"], cwd=root, env=_env(tmp_path), check=True)
    (root / ".gitignore").write_text(ROOT_IGNORE)
    (root / "sub2").mkdir()
    (root / "sub2" / ".gitignore").write_text(NESTED_IGNORE)
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text(INFO_EXCLUDE)
    _tree(root, FILES)
    (root / "dironly.py").write_text(k.MGPU_INT8_F32_ACC)  # `dironly/` must not match a file
    return root


@needs_git
def test_gitignore_semantics_match_git_check_ignore(tmp_path: Path) -> None:
    root = _repository(tmp_path)
    paths = [*FILES, "dironly.py", *DIRECTORIES]
    out = subprocess.run(
        [GIT or "git", "check-ignore", "--no-index", "--verbose", "--non-matching", "--stdin", "-z"],
        input="\0".join(paths) + "\0", cwd=root, env=_env(tmp_path), capture_output=True, text=True,
    ).stdout.split("\0")
    git = {out[i + 3]: bool(out[i + 2]) and not out[i + 2].startswith("!") for i in range(0, len(out) - 1, 4)}
    assert len(git) == len(paths)
    ignores = GitIgnore()
    ours = {p: ignores.ignored_with_parents(root.resolve() / p, (root / p).is_dir()) for p in paths}
    assert ours == git
    assert 15 < sum(git.values()) < len(paths) - 15  # both outcomes are well represented


@needs_git
def test_a_walk_checks_what_git_does_not_ignore(tmp_path: Path) -> None:
    root = _repository(tmp_path)
    listed = subprocess.run([GIT or "git", "ls-files", "--others", "--exclude-standard"],
                            cwd=root, env=_env(tmp_path), capture_output=True, text=True, check=True).stdout
    untracked = sorted(p for p in listed.splitlines() if p.endswith(".py"))
    assert _checked(".", cwd=root) == untracked
    # a walk of a subdirectory reads the .gitignore files above it too
    assert _checked("sub2", cwd=root) == [p for p in untracked if p.startswith("sub2/")] == ["sub2/keep1.py"]
    assert _checked(".", cwd=root / "docs") == ["keep.py", "sub/b.py"]


@needs_git
def test_respect_gitignore_can_be_turned_off(tmp_path: Path) -> None:
    _tree(tmp_path, ["kept.py", "generated/g.py", "scratch.py"])
    subprocess.run([GIT or "git", "init", "-q"], cwd=tmp_path, env=_env(tmp_path), check=True)
    (tmp_path / ".gitignore").write_text("generated/\nscratch.py\n")
    assert _checked(".", cwd=tmp_path) == ["kept.py"]
    everything = ["generated/g.py", "kept.py", "scratch.py"]
    assert _checked("--no-respect-gitignore", ".", cwd=tmp_path) == everything
    (tmp_path / "pyproject.toml").write_text("[tool.mmalint]\nrespect-gitignore = false\n")
    assert _checked(".", cwd=tmp_path) == everything
    assert _checked("--respect-gitignore", ".", cwd=tmp_path) == ["kept.py"]
    shown = _mmalint("check", "--show-settings", ".", cwd=tmp_path).stdout
    assert "respect-gitignore = false" in shown


@needs_git
def test_a_named_ignored_file_is_checked_unless_force_exclude(tmp_path: Path) -> None:
    _tree(tmp_path, ["kept.py", "generated/g.py", "scratch.py"])
    subprocess.run([GIT or "git", "init", "-q"], cwd=tmp_path, env=_env(tmp_path), check=True)
    (tmp_path / ".gitignore").write_text("generated/\nscratch.py\n")
    assert _checked("scratch.py", "generated/g.py", cwd=tmp_path) == ["generated/g.py", "scratch.py"]
    assert _checked("--force-exclude", "scratch.py", "generated/g.py", "kept.py", cwd=tmp_path) == ["kept.py"]
    assert _checked("--force-exclude", "--no-respect-gitignore", "scratch.py", cwd=tmp_path) == ["scratch.py"]


def test_gitignore_applies_only_inside_a_repository(tmp_path: Path) -> None:
    _tree(tmp_path, ["kept.py", "scratch.py"])
    (tmp_path / ".gitignore").write_text("scratch.py\n")
    assert _checked(".", cwd=tmp_path) == ["kept.py", "scratch.py"]  # as git and ruff: no .git, no rules
    (tmp_path / ".git").mkdir()
    assert _checked(".", cwd=tmp_path) == ["kept.py"]


@pytest.mark.parametrize(("line", "matches", "misses"), [
    ("*.py", ["a.py", "d/b.py"], ["a.pyc"]),
    ("/top.py", ["top.py"], ["d/top.py"]),
    ("d/*.py", ["d/a.py"], ["d/e/a.py", "a.py"]),
    ("**/x", ["x", "a/x", "a/b/x"], ["ax"]),
    ("a/**/b", ["a/b", "a/x/b", "a/x/y/b"], ["b", "ab"]),
    ("a/**", ["a/x", "a/x/y"], ["a"]),
    ("[a-c]?.py", ["ab.py", "cz.py"], ["db.py", "a/.py"]),
    ("\\!bang", ["!bang"], ["bang"]),
    ("trailing\\ ", ["trailing "], ["trailing"]),
])
def test_pattern_lines(line: str, matches: list[str], misses: list[str]) -> None:
    pattern = parse_pattern(line)
    assert pattern is not None
    for path in matches:
        assert pattern.matches(path, path.rsplit("/", 1)[-1], False), path
    for path in misses:
        assert not pattern.matches(path, path.rsplit("/", 1)[-1], False), path
