"""The checked tree as a program, end to end: `mmalint check DIR`, `mmalint check FILE` inside a
tree, the machine formats' related locations in another file, `--fix` leaving the other file
alone, and the language server on a buffer whose caller (or callee) is another file.

The project is `tests/data/library` (an op in `src/matlib`, its test in `tests/`, the bug
decided in the test) and its fixed twin `tests/data/library_fixed`.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
from _mmalint_cli import REPO, run_cli

LIBRARY = REPO / "tests" / "data" / "library"
FIXED = REPO / "tests" / "data" / "library_fixed"
KERNEL = "src/matlib/kernels/common.py"
TEST = "tests/ops_test.py"
MMA_ROW, CALL_ROW = 16, 32  # the `plgpu.mma` call in common.py; `matlib.matmul(a, b)` in the test


def _json(*args: str, cwd: Path) -> list[dict]:  # type: ignore[type-arg]
    result = run_cli("check", "--format", "json", "--target-jax", "0.12", *args, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("paths", [(".",), (TEST,), (KERNEL,), ("src/matlib/ops.py",), (TEST, KERNEL)])
def test_the_finding_is_at_the_mma_call_once_whatever_is_checked(paths: tuple[str, ...]) -> None:
    found = _json(*paths, cwd=LIBRARY)
    assert [(f["code"], f["filename"], f["location"]["row"]) for f in found] == [("MMA101", KERNEL, MMA_ROW)]
    (finding,) = found
    assert "(when a=int8 array, b=int8 array)" in finding["message"]
    assert finding["fix"] is None
    callers = [r for r in finding["related"] if r["message"].startswith("called from")]
    assert [(r["message"], r["filename"], r["location"]["row"]) for r in callers] == [
        (f"called from ops_test.py:{CALL_ROW} with a=int8 array, b=int8 array", TEST, CALL_ROW)
    ]
    # The other notes say where each fact was decided, in whichever file that is.
    assert {r["filename"] for r in finding["related"]} == {KERNEL, "src/matlib/ops.py", TEST}


@pytest.mark.parametrize("form", ["absolute", "dotted", "parent"])
def test_every_file_of_a_report_is_named_as_the_checked_files_are(form: str, tmp_path: Path) -> None:
    """A file of the run is named in related locations as it is where a finding is in it: as
    the command line gave it (absolute, `./`, through `..`), not by the working directory."""
    copy = tmp_path / "work" / "library"
    shutil.copytree(LIBRARY, copy)
    (tmp_path / "work" / "other").mkdir()
    given, cwd = {
        "absolute": (str(copy), copy),  # inside the working directory, named absolute
        "dotted": ("./", copy),
        "parent": ("../library", tmp_path / "work" / "other"),
    }[form]
    found = _json(given, cwd=cwd)
    (finding,) = found
    named = {finding["filename"], *(r["filename"] for r in finding["related"])}
    prefix = {"absolute": f"{copy}/", "dotted": "", "parent": "../library/"}[form]
    assert named == {prefix + KERNEL, prefix + "src/matlib/ops.py", prefix + TEST}


@pytest.mark.parametrize("paths", [(".",), (TEST,), (KERNEL,)])
def test_the_fixed_twin_is_clean(paths: tuple[str, ...]) -> None:
    result = run_cli("check", "--target-jax", "0.12", *paths, cwd=FIXED)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_text_report_names_the_caller_in_the_other_file() -> None:
    result = run_cli("check", "--target-jax", "0.12", TEST, cwd=LIBRARY)
    assert result.returncode == 1
    assert result.stdout.startswith(f"{KERNEL}:{MMA_ROW}:10: MMA101 ")
    assert f"note: called from ops_test.py:{CALL_ROW} with a=int8 array, b=int8 array" in result.stdout
    assert f"--> {TEST}:{CALL_ROW}:9" in result.stdout


def test_sarif_carries_the_related_location_with_its_file() -> None:
    result = run_cli("check", "--format", "sarif", "--target-jax", "0.12", TEST, cwd=LIBRARY)
    (run,) = json.loads(result.stdout)["runs"]
    (finding,) = run["results"]
    (location,) = finding["locations"]
    assert location["physicalLocation"]["artifactLocation"]["uri"].endswith(KERNEL)
    assert location["physicalLocation"]["region"]["startLine"] == MMA_ROW
    related = {(r["physicalLocation"]["artifactLocation"]["uri"], r["physicalLocation"]["region"]["startLine"])
               for r in finding["relatedLocations"]}
    assert any(uri.endswith(TEST) and row == CALL_ROW for uri, row in related)


def test_fix_writes_neither_file_for_a_finding_decided_across_files(tmp_path: Path) -> None:
    copy = tmp_path / "library"
    shutil.copytree(LIBRARY, copy)
    before = {p: p.read_bytes() for p in copy.rglob("*.py")}
    result = run_cli("check", "--fix", "--unsafe-fixes", "--target-jax", "0.12", ".", cwd=copy)
    assert result.returncode == 1, result.stderr
    assert {p: p.read_bytes() for p in copy.rglob("*.py")} == before


def test_src_setting_names_the_source_roots(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    shutil.copytree(LIBRARY, project)
    (project / "src").rename(project / "lib")
    assert _json(TEST, cwd=project) == []  # `matlib` is not found under the default roots
    (project / "pyproject.toml").write_text(
        (project / "pyproject.toml").read_text() + '\n[tool.mmalint]\nsrc = [".", "lib"]\n'
    )
    found = _json(TEST, cwd=project)
    assert [(f["code"], f["filename"]) for f in found] == [("MMA101", "lib/matlib/kernels/common.py")]
    shown = run_cli("check", "--show-settings", TEST, cwd=project)
    assert 'src = [".", "lib"]' in shown.stdout


def test_a_bad_src_setting_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.mmalint]\nsrc = "src"\n')
    (tmp_path / "k.py").write_text("x = 1\n")
    result = run_cli("check", "k.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "`src` must be a list of directories" in result.stderr


def test_stdin_under_a_name_in_the_tree_reads_the_tree(tmp_path: Path) -> None:
    text = (LIBRARY / TEST).read_text()
    result = run_cli("check", "--format", "json", "--target-jax", "0.12", "--stdin-filename", TEST, "-",
                     stdin=text.encode(), cwd=LIBRARY)
    assert [(f["code"], f["filename"]) for f in json.loads(result.stdout)] == [("MMA101", KERNEL)]
    fixed = text.replace("matlib.matmul(a, b)\n  np.testing.assert_array_equal", "matlib.matmul(a, b, acc_dtype=jnp.int32)\n  np.testing.assert_array_equal")
    assert fixed != text
    result = run_cli("check", "--format", "json", "--target-jax", "0.12", "--stdin-filename", TEST, "-",
                     stdin=fixed.encode(), cwd=LIBRARY)
    assert json.loads(result.stdout) == []


# ---------------------------------------------------------------------- the language server

KERNELS = textwrap.dedent("""\
    from jax.experimental.mosaic import gpu as mgpu
    from jax.experimental.mosaic.gpu import utils


    def tile_mma(dtype):
      t = utils.dtype_to_ir_type(dtype)
      lay = mgpu.MMALayouts(t)
      a = mgpu.FragmentedArray.splat(utils.c(1, t), (64, 32), layout=lay.lhs, is_signed=True)
      b = mgpu.FragmentedArray.splat(utils.c(1, t), (32, 64), layout=lay.rhs, is_signed=True)
      acc = mgpu.FragmentedArray.splat(utils.c(0, t), (64, 64), layout=lay.acc, is_signed=True)
      return mgpu.mma(acc, a, b)
""")
CALLER = textwrap.dedent("""\
    import jax.numpy as jnp

    import kernels


    def test_it():
      kernels.tile_mma(jnp.int8)
""")


def _project(tmp_path: Path, caller: str = CALLER) -> tuple[Path, Path]:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    kernels, test = tmp_path / "kernels.py", tmp_path / "ops_test.py"
    kernels.write_text(KERNELS)
    test.write_text(caller)
    return kernels, test


def test_lsp_a_kernel_buffer_names_its_caller_in_the_other_file(tmp_path: Path) -> None:
    from test_lsp import Editor, session

    kernels, test = _project(tmp_path)

    async def scenario(editor: Editor) -> None:
        editor.open(kernels.as_uri(), KERNELS)
        params = await editor.wait_for(kernels.as_uri(), lambda p: bool(p.diagnostics))
        (d,) = params.diagnostics
        assert d.code == "MMA101" and d.range.start.line == 10
        assert d.related_information is not None
        callers = [r for r in d.related_information if r.message.startswith("called from")]
        assert [(r.location.uri, r.location.range.start.line) for r in callers] == [(test.as_uri(), 6)]

    session(scenario)


def test_lsp_a_test_buffer_publishes_the_finding_under_the_kernel_file(tmp_path: Path) -> None:
    from lsprotocol import types as lsp
    from test_lsp import Editor, session

    kernels, test = _project(tmp_path, CALLER.replace("jnp.int8", "jnp.bfloat16"))

    async def scenario(editor: Editor) -> None:
        # The unsaved buffer decides (int8), not the file on disk (bfloat16).
        editor.open(test.as_uri(), CALLER)
        own = await editor.wait_for(test.as_uri(), lambda p: True)
        assert not own.diagnostics
        other = await editor.wait_for(kernels.as_uri(), lambda p: bool(p.diagnostics))
        (d,) = other.diagnostics
        assert d.code == "MMA101" and d.range.start.line == 10
        # Closing the test takes its finding away from the kernel file (not open) too.
        editor.client.text_document_did_close(
            lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=test.as_uri()))
        )
        await editor.wait_for(kernels.as_uri(), lambda p: not p.diagnostics)

    session(scenario)


def test_lsp_saving_a_caller_checks_the_open_kernel_again(tmp_path: Path) -> None:
    from lsprotocol import types as lsp
    from test_lsp import Editor, session

    kernels, test = _project(tmp_path, CALLER.replace("jnp.int8", "jnp.bfloat16"))

    async def scenario(editor: Editor) -> None:
        editor.open(kernels.as_uri(), KERNELS)
        editor.open(test.as_uri(), test.read_text())
        # bfloat16 from the file on disk: a float accumulator of bf16 (and is_signed on floats).
        first = await editor.wait_for(kernels.as_uri(), lambda p: bool(p.diagnostics))
        assert sorted(d.code for d in first.diagnostics) == ["MMA102", "MMA202"]
        editor.change(test.as_uri(), CALLER)  # int8, in the buffer only
        editor.client.text_document_did_save(
            lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=test.as_uri()))
        )
        params = await editor.wait_for(kernels.as_uri(), lambda p: "MMA101" in {d.code for d in p.diagnostics})
        assert [d.code for d in params.diagnostics] == ["MMA101"]

    session(scenario)


def test_add_noqa_writes_no_directive_into_a_caller_for_a_finding_in_another_file(tmp_path: Path) -> None:
    copy = tmp_path / "library"
    shutil.copytree(LIBRARY, copy)
    before = {p: p.read_bytes() for p in copy.rglob("*.py")}
    result = run_cli("check", "--add-noqa", "--target-jax", "0.12", TEST, cwd=copy)
    assert result.returncode == 0, result.stderr
    assert "Added 0 noqa directives." in result.stderr
    assert {p: p.read_bytes() for p in copy.rglob("*.py")} == before
    # Checked with it, the kernel file gets its directive, and the finding is gone.
    result = run_cli("check", "--add-noqa", "--target-jax", "0.12", ".", cwd=copy)
    assert "Added 1 noqa directive." in result.stderr
    assert "# noqa: MMA101" in (copy / KERNEL).read_text().splitlines()[MMA_ROW - 1]
    assert _json(TEST, cwd=copy) == []
