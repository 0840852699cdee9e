"""The result cache of `mmalint check` (`mmalint/pipeline/cache.py`), through the real command.

Whether a file's result came from the cache is read from its entry: a miss writes the entry
anew (a temporary file renamed over it, so a new inode), a hit leaves it as it was.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from _mmalint_cli import REPO, run_cli

from mmalint.pipeline import cache as result_cache
from mmalint.tree import digest

LIBRARY = REPO / "tests" / "data" / "library"
FORMATS = ("full", "concise", "json", "sarif", "github")
FIXABLE = REPO / "examples" / "warp_kloop_arg_order.py"  # MMA105, a safe fix
UNRELATED = '''"""A kernel of its own: nothing of matlib reaches it."""

import jax.experimental.mosaic.gpu as mgpu
import jax.numpy as jnp
from jax.experimental.mosaic.gpu import fragmented_array as fa


def body(a_ref, b_ref):
  acc = fa.FragmentedArray.splat(jnp.float32(0), (64, 64), mgpu.MMALayouts.acc(1))
  a = fa.FragmentedArray.load_tiled(a_ref, is_signed=True, layout=mgpu.MMALayouts.lhs(8, 1))
  b = fa.FragmentedArray.load_tiled(b_ref, is_signed=True, layout=mgpu.MMALayouts.rhs(8, 1))
  return mgpu.mma(acc, a, b)
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """tests/data/library (an op, its kernel module, a test that calls it with int8), a kernel
    nothing there reaches, and a module without MMA calls."""
    root = tmp_path / "lib"
    shutil.copytree(LIBRARY, root, ignore=shutil.ignore_patterns(".mmalint_cache"))
    (root / "unrelated.py").write_text(UNRELATED)
    (root / "notes.py").write_text('"""No kernel here."""\n\nimport os\n\nHOME = os.environ.get("HOME")\n')
    return root


def check(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    proc = run_cli("check", "--target-jax", "0.11", *args, ".", cwd=root, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def entry(root: Path, name: str, cache_dir: Path | None = None) -> Path | None:
    """The entry of file `name` of the project (None when it has none)."""
    cache_dir = cache_dir or root / ".mmalint_cache"
    leaf = digest(os.path.realpath(root / name).encode())
    found = list(cache_dir.glob(f"*/{leaf[:2]}/{leaf[2:]}.json"))
    return found[0] if found else None


def states(root: Path, names: list[str]) -> dict[str, tuple[int, int] | None]:
    out: dict[str, tuple[int, int] | None] = {}
    for name in names:
        path = entry(root, name)
        out[name] = (path.stat().st_ino, path.stat().st_mtime_ns) if path is not None else None
    return out


FILES = ["src/matlib/kernels/common.py", "src/matlib/ops.py", "src/matlib/__init__.py",
         "tests/ops_test.py", "unrelated.py", "notes.py"]


def hits(root: Path, before: dict[str, tuple[int, int] | None]) -> set[str]:
    """The files whose entry the last run left alone (their result came from it)."""
    now = states(root, list(before))
    return {name for name, state in before.items() if state is not None and now[name] == state}


# ---------------------------------------------------------------------- a hit is a miss, byte for byte


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_hit_prints_what_a_miss_and_no_cache_print(project: Path, fmt: str) -> None:
    plain = check(project, "--format", fmt, "--no-cache")
    assert not (project / ".mmalint_cache").exists()
    first = check(project, "--format", fmt)
    before = states(project, FILES)
    assert all(before.values()), before
    second = check(project, "--format", fmt)
    assert hits(project, before) == set(FILES)
    assert plain == first == second
    assert plain[0] == 1 and "MMA101" in plain[1] and "common.py" in plain[1]


def test_statistics_and_show_fixes_from_a_hit(project: Path) -> None:
    shutil.copy(FIXABLE, project / "order.py")
    for args in (("--statistics",), ("--statistics", "--format", "json"), ("--show-fixes",), ("--diff",)):
        plain = check(project, *args, "--no-cache")
        check(project, *args)
        assert check(project, *args) == plain, args


def test_the_cache_dir_is_marked_and_ignored(project: Path) -> None:
    check(project)
    cache_dir = project / ".mmalint_cache"
    assert (cache_dir / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (cache_dir / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


# ---------------------------------------------------------------------- what a result depends on


def test_an_edited_file_misses_alone(project: Path) -> None:
    check(project)
    before = states(project, FILES)
    with open(project / "notes.py", "a") as handle:
        handle.write("# edited\n")
    check(project)
    assert hits(project, before) == set(FILES) - {"notes.py"}


def test_an_edited_helper_misses_its_callers_only(project: Path) -> None:
    """ops.py is read by the check of the kernel module (its caller, run as a root) and of
    what imports it; the unrelated kernel and notes.py never read it."""
    check(project)
    before = states(project, FILES)
    ops = project / "src/matlib/ops.py"
    ops.write_text(ops.read_text() + "\n# a comment\n")
    code, out, _ = check(project, "--format", "concise")
    missed = set(FILES) - hits(project, before)
    assert "src/matlib/kernels/common.py" in missed and "src/matlib/ops.py" in missed
    assert "unrelated.py" not in missed and "notes.py" not in missed
    assert (code, out) == check(project, "--format", "concise", "--no-cache")[:2]


def test_a_helper_edit_that_changes_the_finding(project: Path) -> None:
    """The int8 accumulator the caller passes decides the finding: a cached result that kept
    the old one would be wrong."""
    plain = check(project, "--format", "concise")
    assert "common.py:16:10: MMA101" in plain[1]
    test = project / "tests/ops_test.py"
    test.write_text(test.read_text().replace("out = matlib.matmul(a, b)\n  np.testing.assert_array_equal",
                                             "out = matlib.matmul(a, b, acc_dtype=jnp.int32)\n  np.testing.assert_array_equal"))
    after = check(project, "--format", "concise")
    assert "common.py:16:10: MMA101" not in after[1]
    assert after == check(project, "--format", "concise", "--no-cache")


def test_a_new_caller_misses_what_it_can_change(project: Path) -> None:
    check(project)
    before = states(project, FILES)
    (project / "tests" / "quant_test.py").write_text(
        "import jax.numpy as jnp\n\nimport matlib\n\n\ndef test_u8(a, b):\n"
        "  return matlib.matmul(a.astype(jnp.uint8), b.astype(jnp.uint8), acc_dtype=jnp.int32)\n")
    code, out, _ = check(project, "--format", "concise")
    missed = set(FILES) - hits(project, before)
    assert "src/matlib/kernels/common.py" in missed
    assert "unrelated.py" not in missed and "notes.py" not in missed
    assert (code, out) == check(project, "--format", "concise", "--no-cache")[:2]


ACC_KERNEL = """import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu

ACC = jnp.float32
M, N, K = 128, 64, 128


def matmul(a, b):
  @functools.partial(
      plgpu.kernel,
      out_type=jax.ShapeDtypeStruct((M, N), ACC),
      compiler_params=plgpu.CompilerParams(lowering_semantics=plgpu.LoweringSemantics.Lane),
  )
  def kernel(a_ref, b_ref, o_ref):
    dtype = a_ref.dtype
    acc = plgpu.layout_cast(jnp.zeros((M, N), ACC), plgpu.Layout.MMA_ACC(dtype))
    a = plgpu.load(a_ref, layout=plgpu.Layout.MMA_LHS(dtype), optimized=False)
    b = plgpu.load(b_ref.T, layout=plgpu.Layout.MMA_RHS(dtype), optimized=False)
    o_ref[...] = plgpu.mma(acc, a, b)

  return kernel(a, b)
"""
ACC_CALLER = """import jax.numpy as jnp

import kern


def test_int8():
  return kern.matmul(jnp.ones((kern.M, kern.K), jnp.int8), jnp.ones((kern.N, kern.K), jnp.int8))
"""


@pytest.mark.parametrize("alone", [False, True])
def test_a_file_binding_a_constant_again_misses_what_reads_it(tmp_path: Path, alone: bool) -> None:
    """`kern.ACC = jnp.int32` in a new file of the tree makes the kernel's accumulator unknown
    (which binding it reads depends on what ran first): the cached finding must not stay, in
    a whole-tree check or with the kernel checked alone (the kept words hold each file's
    stored attribute names); a file that only reads it brings the finding back."""
    root = tmp_path / "p"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "p"\n')
    (root / "kern.py").write_text(ACC_KERNEL)
    (root / "run_test.py").write_text(ACC_CALLER)

    def lint(cache: bool = True) -> tuple[int, str, str]:
        return check_alone(root, "kern.py", cache=cache) if alone else check(
            root, "--format", "concise", *(() if cache else ("--no-cache",)))

    assert "kern.py:22:18: MMA101" in lint()[1]
    _age(root)
    (root / "fix_test.py").write_text("import jax.numpy as jnp\nimport kern\n\nkern.ACC = jnp.int32\n")
    fixed = lint()
    assert "MMA101" not in fixed[1] and fixed == lint(cache=False)
    _age(root)
    (root / "fix_test.py").write_text("import jax.numpy as jnp\nimport kern\n\nprint(kern.ACC)\n")
    read = lint()
    assert "kern.py:22:18: MMA101" in read[1] and read == lint(cache=False)


def test_a_new_file_that_imports_nothing_of_it_misses_nothing(project: Path) -> None:
    check(project)
    before = states(project, FILES)
    (project / "tests" / "zz_test.py").write_text("import os\n\n\ndef test_home():\n  assert os.sep\n")
    check(project)
    assert hits(project, before) == set(FILES)


def test_a_deleted_caller(project: Path) -> None:
    assert "common.py:16:10: MMA101" in check(project, "--format", "concise")[1]
    (project / "tests" / "ops_test.py").unlink()
    code, out, _ = check(project, "--format", "concise")
    assert "common.py:16:10: MMA101" not in out
    assert (code, out) == check(project, "--format", "concise", "--no-cache")[:2]


def test_a_module_that_shadows_an_import_misses(project: Path) -> None:
    """`import matlib` resolves to src/matlib; a new matlib.py beside the test file is found
    first (the probes of where a module is are inputs too)."""
    check(project)
    before = states(project, FILES)
    (project / "tests" / "matlib.py").write_text("M, N, K = 1, 1, 1\n\n\ndef matmul(a, b):\n  return a\n")
    code, out, _ = check(project, "--format", "concise")
    assert "src/matlib/kernels/common.py" not in hits(project, before)
    assert (code, out) == check(project, "--format", "concise", "--no-cache")[:2]


# ---------------------------------------------------------------------- a few files of a large tree


def check_alone(root: Path, *names: str, cache: bool = True) -> tuple[int, str, str]:
    """What pre-commit runs: the changed files named, the rest of the tree not checked."""
    flags = () if cache else ("--no-cache",)
    proc = run_cli("check", "--target-jax", "0.11", "--format", "concise", *flags, *names, cwd=root)
    return proc.returncode, proc.stdout, proc.stderr


def test_a_test_checked_alone_hits_until_what_it_reaches_changes(project: Path) -> None:
    """tests/ops_test.py names no MMA API; checked alone it leads to the kernel module, which
    the run does not check, so its check reports the kernel's MMA101. The walk that showed it
    is part of the entry: an edit of the kernel module misses it, one of notes.py does not."""
    first = check_alone(project, "tests/ops_test.py")
    assert "common.py:16:10: MMA101" in first[1]
    before = states(project, ["tests/ops_test.py"])
    assert all(before.values()), before
    assert check_alone(project, "tests/ops_test.py") == first
    assert hits(project, before) == {"tests/ops_test.py"}
    with open(project / "notes.py", "a") as handle:
        handle.write("# edited\n")
    assert check_alone(project, "tests/ops_test.py") == first
    assert hits(project, before) == {"tests/ops_test.py"}
    common = project / "src/matlib/kernels/common.py"
    common.write_text(common.read_text().replace("jnp.zeros((M, N), acc_dtype)", "jnp.zeros((M, N), jnp.int32)"))
    after = check_alone(project, "tests/ops_test.py")
    assert hits(project, before) == set()
    assert "MMA101" not in after[1]
    assert after == check_alone(project, "tests/ops_test.py", cache=False)


def test_a_file_checked_alone_misses_when_an_import_starts_to_lead_to_a_kernel(project: Path) -> None:
    """A file whose imports reach no MMA API has an entry with what its walk read: the modules
    on the way. One of them made to import the kernel module makes it miss."""
    (project / "tests" / "helpers.py").write_text("def run(a, b):\n  return a\n")
    (project / "tests" / "uses_helpers.py").write_text(
        "import helpers\n\n\ndef test_int8(a, b):\n  return helpers.run(a, b)\n")
    first = check_alone(project, "tests/uses_helpers.py")
    assert first[0] == 0
    found = entry(project, "tests/uses_helpers.py")
    assert found is not None
    data = json.loads(found.read_bytes())
    # No scan of the whole tree: only what the file reaches.
    assert data["scans"] == []
    assert set(data["texts"]) == {os.path.realpath(project / "tests" / "helpers.py")}
    before = states(project, ["tests/uses_helpers.py"])
    assert check_alone(project, "tests/uses_helpers.py") == first
    assert hits(project, before) == {"tests/uses_helpers.py"}
    (project / "tests" / "helpers.py").write_text(
        "import jax.numpy as jnp\n\nimport matlib\n\n\ndef run(a, b):\n"
        "  return matlib.matmul(a.astype(jnp.int8), b.astype(jnp.int8))\n")
    after = check_alone(project, "tests/uses_helpers.py")
    assert hits(project, before) == set()
    assert after == check_alone(project, "tests/uses_helpers.py", cache=False)
    assert "common.py:16:10: MMA101" in after[1]


def test_a_module_that_shadows_an_import_misses_a_file_checked_alone(project: Path) -> None:
    """Where `import matlib` resolves is probed on the way: a new matlib.py beside the test
    is found first, and leads to no kernel."""
    first = check_alone(project, "tests/ops_test.py")
    assert "MMA101" in first[1]
    before = states(project, ["tests/ops_test.py"])
    (project / "tests" / "matlib.py").write_text("M, N, K = 1, 1, 1\n\n\ndef matmul(a, b):\n  return a\n")
    after = check_alone(project, "tests/ops_test.py")
    assert hits(project, before) == set()
    assert "MMA101" not in after[1]
    assert after == check_alone(project, "tests/ops_test.py", cache=False)


def test_settings_are_part_of_the_key_and_the_format_is_not(project: Path) -> None:
    check(project)
    before = states(project, FILES)
    check(project, "--format", "json")
    assert hits(project, before) == set(FILES)
    before = states(project, FILES)
    code, out, _ = check(project, "--select", "MMA2", "--format", "concise")
    assert hits(project, before) == set()
    assert "MMA101" not in out
    (project / "pyproject.toml").write_text((project / "pyproject.toml").read_text()
                                            + '\n[tool.mmalint]\nignore = ["MMA101"]\n')
    before = states(project, FILES)
    code, out, _ = check(project, "--format", "concise")
    assert hits(project, before) == set()
    assert code == 0 and "MMA101" not in out


def test_another_installation_misses(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mmalint's version and a hash of its code and data name the directory of entries."""
    check(project)
    here = result_cache.Cache(project / ".mmalint_cache", print).here
    assert here.is_dir() and here.name.startswith(result_cache.__version__)
    monkeypatch.setattr(result_cache, "__version__", "99.0")
    assert result_cache.Cache(project / ".mmalint_cache", print).here != here
    monkeypatch.undo()
    monkeypatch.setattr(result_cache, "installation", lambda: "0" * 32)
    assert result_cache.Cache(project / ".mmalint_cache", print).here != here


def test_the_installation_hash_covers_the_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "mmalint"
    (package / "pipeline").mkdir(parents=True)
    (tmp_path / "rules" / "checks").mkdir(parents=True)
    (tmp_path / "rules" / "checks" / "mma.toml").write_text("a = 1\n")
    monkeypatch.setattr(result_cache, "__file__", str(package / "pipeline" / "cache.py"))
    first = result_cache.installation()
    (tmp_path / "rules" / "checks" / "mma.toml").write_text("a = 2\n")
    assert result_cache.installation() != first


# ---------------------------------------------------------------------- fixes


def test_fix_after_a_cached_check(project: Path, tmp_path: Path) -> None:
    """The entry of a file with a fix holds the fix, but --fix computes it afresh; after the
    write the entry is the fixed text's, and a check of it hits and prints what a fresh one does."""
    shutil.copy(FIXABLE, project / "order.py")
    plain = tmp_path / "plain"
    shutil.copytree(project, plain)
    check(project)
    fixed = check(project, "--fix")
    assert fixed == check(plain, "--fix", "--no-cache")
    assert (project / "order.py").read_bytes() == (plain / "order.py").read_bytes() != FIXABLE.read_bytes()
    before = states(project, ["order.py"])
    after = check(project, "--format", "json")
    assert hits(project, before) == {"order.py"}
    assert after == check(plain, "--format", "json", "--no-cache")


def test_fix_never_applies_an_entry_of_other_text(project: Path) -> None:
    shutil.copy(FIXABLE, project / "order.py")
    check(project)
    # The same file, one line further down: a fix from the old entry would edit the wrong text.
    text = (project / "order.py").read_text()
    (project / "order.py").write_text("# moved\n" + text)
    check(project, "--fix")
    expected = project.parent / "expected.py"
    expected.write_text("# moved\n" + text)
    run_cli("check", "--fix", "--no-cache", "--isolated", str(expected), cwd=project)
    assert (project / "order.py").read_text() == expected.read_text() != "# moved\n" + text


# ---------------------------------------------------------------------- a cache that fails


def test_a_corrupt_entry_is_a_miss(project: Path) -> None:
    plain = check(project, "--format", "json", "--no-cache")
    check(project)
    for name, damage in zip(FILES, (b"", b"{", b"[1, 2]", b'{"file": 3}', b"\xff\xfe", b"{}"), strict=True):
        path = entry(project, name)
        assert path is not None
        if name == "src/matlib/kernels/common.py":
            data = json.loads(path.read_bytes())
            data["report"] = {"@": "NoSuchClass"}
            path.write_text(json.dumps(data))
        else:
            path.write_bytes(damage)
    assert check(project, "--format", "json") == plain
    assert check(project, "--format", "json") == plain


def test_a_truncated_snapshot_is_a_miss(project: Path) -> None:
    check(project)
    for snapshot in (project / ".mmalint_cache").glob("*/snapshots/*.json"):
        snapshot.write_bytes(snapshot.read_bytes()[:10])
    before = states(project, FILES)
    assert check(project, "--format", "concise") == check(project, "--format", "concise", "--no-cache")
    assert "src/matlib/kernels/common.py" not in hits(project, before)


def test_an_unwritable_cache_dir_warns_once(project: Path) -> None:
    plain = check(project, "--no-cache")
    (project / "blocker").write_text("a file where the cache directory should be\n")
    code, out, err = check(project, "--cache-dir", "blocker/cache")
    assert (code, out) == plain[:2]
    assert err.count("mmalint: warning: cannot write the cache in blocker/cache") == 1, err


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root writes anywhere")
def test_a_read_only_cache_dir_warns_once(project: Path) -> None:
    plain = check(project, "--no-cache")
    (project / "ro").mkdir(mode=0o500)
    code, out, err = check(project, "--cache-dir", "ro")
    assert (code, out) == plain[:2]
    assert err.count("cannot write the cache") == 1


# ---------------------------------------------------------------------- where, and clean


def test_cache_dir_option_environment_and_setting(project: Path) -> None:
    check(project, "--cache-dir", "here")
    assert entry(project, "unrelated.py", project / "here") is not None
    env = {**os.environ, "MMALINT_CACHE_DIR": str(project / "from-env")}
    check(project, env=env)
    assert entry(project, "unrelated.py", project / "from-env") is not None
    with open(project / "pyproject.toml", "a") as handle:
        handle.write('\n[tool.mmalint]\ncache-dir = "build/mmalint"\n')
    check(project)
    assert entry(project, "unrelated.py", project / "build" / "mmalint") is not None
    assert not (project / ".mmalint_cache").exists()


def test_the_cache_is_in_the_project_root(project: Path) -> None:
    run_cli("check", "--target-jax", "0.11", "../src/matlib", cwd=project / "tests")  # cwd is not the root
    assert entry(project, "src/matlib/kernels/common.py") is not None
    assert not (project / "tests" / ".mmalint_cache").exists()


def test_no_cache_neither_reads_nor_writes(project: Path) -> None:
    check(project, "--no-cache")
    assert not (project / ".mmalint_cache").exists()
    check(project)
    before = states(project, FILES)
    check(project, "--no-cache")
    assert states(project, FILES) == before


def test_clean_removes_the_cache_and_nothing_else(project: Path) -> None:
    check(project)
    listing = sorted(p for p in project.rglob("*") if ".mmalint_cache" not in p.parts)
    proc = run_cli("clean", cwd=project)
    assert proc.returncode == 0 and "Removed" in proc.stdout
    assert not (project / ".mmalint_cache").exists()
    assert sorted(project.rglob("*")) == listing
    proc = run_cli("clean", cwd=project)
    assert proc.returncode == 0 and "No cache" in proc.stdout


def test_clean_refuses_a_directory_that_is_not_a_cache(project: Path) -> None:
    (project / "src" / "keep.txt").write_text("mine\n")
    proc = run_cli("clean", "--cache-dir", "src", cwd=project)
    assert proc.returncode == 2 and "not an mmalint cache" in proc.stderr
    assert (project / "src" / "keep.txt").exists()


def test_prune_removes_what_was_not_used(tmp_path: Path) -> None:
    directory = tmp_path / "cache"
    cache = result_cache.Cache(directory, print)
    old = directory / "0.0.1-0123456789abcdef"
    (old / "ab").mkdir(parents=True)
    (old / "ab" / "x.json").write_text("{}")
    stale = cache.here / "cd" / "y.json"
    fresh = cache.here / "cd" / "z.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    fresh.write_text("{}")
    now = stale.stat().st_mtime + result_cache.STALE_ENTRY_S + 60
    os.utime(stale, (now - result_cache.STALE_ENTRY_S - 30, now - result_cache.STALE_ENTRY_S - 30))
    os.utime(fresh, (now, now))
    os.utime(old, (now - result_cache.STALE_VERSION_S - 30, now - result_cache.STALE_VERSION_S - 30))
    cache.prune(now)
    assert stale.exists() and old.exists()  # nothing written: no pruning
    cache.wrote = True
    cache.prune(now)
    assert not stale.exists() and fresh.exists() and not old.exists()


# ---------------------------------------------------------------------- results as JSON


def test_every_example_report_survives_the_codec() -> None:
    from mmalint.discover import Discovered
    from mmalint.pipeline.files import run
    from mmalint.settings import Settings

    files = [Discovered(p, str(p), True) for p in sorted((REPO / "examples").glob("*.py"))]
    result = run(files, Settings(target_jax="0.11"), jobs=1)
    assert sum(len(r.diagnostics) for r in result.reports) > 20
    for report in result.reports:
        back = result_cache.round_trip(report)
        assert back == report
        for d, e in zip(back.diagnostics, report.diagnostics, strict=True):
            assert repr(d) == repr(e)  # the fields equality leaves out (a notebook's cell) too


# ---------------------------------------------------------------------- the import words kept between runs


def _age(root: Path, seconds: float = 3600) -> None:
    """Every file of the tree last modified `seconds` ago: older than the kept words (a file
    modified as the words are written may change again unseen, and is read again)."""
    old = __import__("time").time() - seconds
    for path in root.rglob("*.py"):
        os.utime(path, (old, old))


def test_the_words_of_a_tree_are_read_again_only_where_a_file_changed(tmp_path: Path) -> None:
    from mmalint.analysis.imports import import_words, scanned
    from mmalint.tree import read_text, tree_words

    tree, memo = tmp_path / "tree", tmp_path / "memo"
    tree.mkdir()
    for name, text in {"a.py": "import kern\n", "b.py": "from pkg import kern as k\n", "c.py": "import os\n"}.items():
        (tree / name).write_text(text)
    _age(tree)
    paths = [str(tree / n) for n in ("a.py", "b.py", "c.py")]
    reads: list[str] = []

    def words(text: str) -> set[str]:
        return import_words(scanned(text))

    def read(path: str) -> tuple[str | None, str | None]:
        reads.append(os.path.basename(path))
        return read_text(path)

    first = tree_words(paths, read, words, str(memo), "w")
    assert sorted(reads) == ["a.py", "b.py", "c.py"] and first.index["kern"] == paths[:2]
    reads.clear()
    again = tree_words(paths, read, words, str(memo), "w")
    assert reads == [] and (again.index, again.snapshot) == (first.index, first.snapshot)
    # An edit (a new modification time): that file alone is read again.
    (tree / "c.py").write_text("import kern\n")
    edited = tree_words(paths, read, words, str(memo), "w")
    assert reads == ["c.py"] and edited.index["kern"] == paths
    # Another file put in its place, with the same size and an old modification time: a new inode.
    (tree / "new.py").write_text("import oops\n")
    os.utime(tree / "new.py", (os.stat(tree / "a.py").st_mtime,) * 2)
    os.replace(tree / "new.py", tree / "a.py")
    reads.clear()
    replaced = tree_words(paths, read, words, str(memo), "w")
    assert "a.py" in reads and "oops" in replaced.index and paths[0] not in replaced.index["kern"]
    # The words of another walk, and a corrupt file, are not used.
    reads.clear()
    tree_words(paths, read, words, str(memo), "another walk")
    assert sorted(reads) == ["a.py", "b.py", "c.py"]
    for kept in memo.glob("words-*.json"):
        kept.write_text("{not json")
    reads.clear()
    assert tree_words(paths, read, words, str(memo), "w").index == replaced.index
    assert len(reads) == 3


def test_a_kernel_checked_alone_finds_its_callers_through_the_kept_words(project: Path) -> None:
    """What pre-commit runs on a kernel module of a large tree: its callers are looked for in
    every file's import words, kept from the run before for each file that did not change."""
    kernel = "src/matlib/kernels/common.py"
    _age(project)
    first = check_alone(project, kernel)
    assert "common.py:16:10: MMA101" in first[1]
    assert list((project / ".mmalint_cache").glob("*/words-*.json"))
    # The caller changes what it passes, and the kernel is edited too (its entry misses).
    test = project / "tests/ops_test.py"
    test.write_text(test.read_text().replace("out = matlib.matmul(a, b)\n  np.testing.assert_array_equal",
                                             "out = matlib.matmul(a, b, acc_dtype=jnp.int32)\n  np.testing.assert_array_equal"))
    with open(project / kernel, "a") as handle:
        handle.write("# edited\n")
    after = check_alone(project, kernel)
    assert "MMA101" not in after[1]
    assert after == check_alone(project, kernel, cache=False)
    # A new caller, in a file the kept words never saw.
    (project / "tests" / "quant_test.py").write_text(
        "import jax.numpy as jnp\n\nimport matlib\n\n\ndef test_i8(a, b):\n"
        "  return matlib.matmul(a.astype(jnp.int8), b.astype(jnp.int8))\n")
    _age(project)
    with open(project / kernel, "a") as handle:
        handle.write("# edited again\n")
    newest = check_alone(project, kernel)
    assert "MMA101" in newest[1]
    assert newest == check_alone(project, kernel, cache=False)


def test_a_hit_is_validated_from_the_kept_words_without_reading_the_tree(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The entry of a kernel checked alone holds the scan for its callers, over every file of
    the tree: validating it hashes the modules the check read (its inputs) and, of the rest of
    the tree, only the files whose stamp the kept words do not hold."""
    from mmalint.cli import main

    kernel = "src/matlib/kernels/common.py"
    _age(project)
    first = check_alone(project, kernel)
    check_alone(project, kernel)  # the words are written after the files' stamps: none is racy
    notes = project / "notes.py"
    notes.write_text(notes.read_text() + "# edited\n")
    hashed: list[str] = []
    real = result_cache.fingerprint

    def spy(path: str) -> str | None:
        hashed.append(os.path.relpath(path, os.path.realpath(project)))
        return real(path)

    monkeypatch.setattr(result_cache, "fingerprint", spy)
    monkeypatch.chdir(project)
    code = main(["check", "--target-jax", "0.11", "--format", "concise", kernel])
    assert (code, capsys.readouterr().out) == first[:2]
    found = entry(project, kernel)
    assert found is not None
    inputs = {os.path.relpath(p, os.path.realpath(project)) for p in json.loads(found.read_bytes())["texts"]}
    assert "tests/ops_test.py" in inputs and "unrelated.py" not in inputs
    assert "notes.py" in hashed  # its stamp changed: hashed, and found the scan's answer unchanged
    assert set(hashed) == inputs | {"notes.py"}


def _reads_in_process(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                      *names: str) -> tuple[list[str], int, str]:
    """The checked files `mmalint check NAMES` reads (in this process), its exit code and output."""
    from mmalint.cli import main
    from mmalint.pipeline import files as runner

    read: list[str] = []
    real = runner.read_regular

    def spy(path: Path | str, *args: int) -> bytes:
        read.append(str(path))
        return real(path, *args)

    monkeypatch.setattr(runner, "read_regular", spy)
    monkeypatch.chdir(project)
    code = main(["check", "--target-jax", "0.11", "--format", "concise", *names])
    monkeypatch.undo()
    return read, code, capsys.readouterr().out


def test_a_checked_file_whose_stamp_is_unchanged_is_not_read_again(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    names = ("unrelated.py", "notes.py")
    # Just written: modified as its entry is saved, so it could change again unseen (racy).
    first, code, out = _reads_in_process(project, monkeypatch, capsys, *names)
    assert sorted(first) == sorted(names)
    assert _reads_in_process(project, monkeypatch, capsys, *names) == (first, code, out)
    _age(project)  # older than the entries that will be saved next
    assert _reads_in_process(project, monkeypatch, capsys, *names)[1:] == (code, out)
    # Neither is read now: each entry's stamp holds, and says the hash of the bytes it read.
    assert _reads_in_process(project, monkeypatch, capsys, *names) == ([], code, out)
    # An edit changes the stamp: that file is read, and its result is the new text's.
    (project / "notes.py").write_text("import os\n")
    assert _reads_in_process(project, monkeypatch, capsys, *names)[0] == ["notes.py"]
    kernel = project / "unrelated.py"
    kernel.write_text(kernel.read_text().replace("return mgpu.mma(acc, a, b)", "return acc"))
    read, code_after, out_after = _reads_in_process(project, monkeypatch, capsys, *names)
    assert "unrelated.py" in read and (code_after, out_after) != (code, out)  # notes.py: still racy
    assert (code_after, out_after) == check_alone(project, *names, cache=False)[:2]
