"""The language server's reuse of a document's last lint (`mmalint/lsp/incremental.py`): an edit
that cannot change what the analysis found is answered from the last result, and every such
answer is exactly what a fresh lint of the new text gives."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from _lsp_jobs import lint as _lint
from _lsp_jobs import same as _same

from mmalint.analysis import reads
from mmalint.analysis.budget import Budget
from mmalint.lines import split_lines
from mmalint.lsp.incremental import hunks_between
from mmalint.lsp.worker import Job, Linted
from mmalint.pipeline.options import LintOptions

ROOT = Path(__file__).resolve().parent.parent

# A kernel with a finding (int8 operands, an f32 accumulator: `examples/warp_int8_matmul.py`),
# code the analysis reads (the dtype, the helper, the launch) and code it never reads (the
# other functions, the class's methods).
KERNEL = (ROOT / "examples/warp_int8_matmul.py").read_text().replace("OUT_DTYPE = jnp.int32\n", '''\
OUT_DTYPE = jnp.int32


def unrelated(x):
  # Nothing here reaches an MMA call.
  y = x + 1
  return y * 2
''') + '''

def also_unrelated():
  values = [1, 2, 3]
  return sum(values)


class Helpers:
  def first(self):
    return 1

  def second(self):
    return 2
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.mmalint]\ntarget-jax = "0.12"\n')
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)
    return path


def _edited(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def test_an_edit_of_code_no_analysis_read_reuses_the_last_result(project: Path) -> None:
    first = _lint(project, KERNEL)
    assert first.memo is not None
    assert [d.code for d in first.report.diagnostics], "the kernel must have a finding to keep"
    for old, new in [
        ("  y = x + 1\n", "  y = x + 2  # changed\n"),  # a function nothing calls
        ("  values = [1, 2, 3]\n", "  values = [1, 2, 3, 4]\n\n"),  # a row more
        ("    return 2\n", "    return 3\n"),  # a method nothing calls
        ("\n\ndef also_unrelated", "\n\n# a comment between blocks\n\ndef also_unrelated"),
    ]:
        text = _edited(KERNEL, old, new)
        again = _lint(project, text, first.memo)
        assert again.reused, (old, new)
        assert _same(again, _lint(project, text)), (old, new)


def test_rows_added_above_a_finding_move_it_as_a_fresh_lint_does(project: Path) -> None:
    first = _lint(project, KERNEL)
    # Two rows more in a function above the kernel, which no analysis reads.
    text = _edited(KERNEL, "  y = x + 1\n", "  y = x + 1\n  z = 3\n  w = 4\n")
    again = _lint(project, text, first.memo)
    fresh = _lint(project, text)
    assert again.reused
    assert [d.range.start.row for d in again.report.diagnostics] == [
        d.range.start.row + 2 for d in first.report.diagnostics]
    assert _same(again, fresh)
    # And back: the memo of the reused result serves the next edit too.
    back = _lint(project, KERNEL, again.memo)
    assert back.reused and _same(back, first)


@pytest.mark.parametrize("old,new", [
    # The operands' dtype: a block the analysis read.
    ("IN_DTYPE = jnp.int8\n", "IN_DTYPE = jnp.uint8\n"),
    # The call's own block.
    ("  acc = mgpu.mma(acc, x_fa, w_fa)\n", "  acc = mgpu.mma(acc, x_fa, w_fa)  # noqa\n"),
    # The accumulator's helper.
    ("  zero = utils.c(0.0, ir.F32Type.get())\n", "  zero = utils.c(0, ir.IntegerType.get_signless(32))\n"),
    # A function nothing read now calls the kernel: it becomes a root.
    ("  y = x + 1\n", "  y = kernel(x, 1, 2, 3, 4)\n"),
    # ... or names an MMA API itself.
    ("  y = x + 1\n", "  y = mgpu.mma(x, x, x)\n"),
    # A noqa comment between blocks (the suppressions read every one).
    ("\n\ndef also_unrelated", "\n\n# noqa: MMA101\n\ndef also_unrelated"),
    # Code between blocks: a new statement, the module's structure changes.
    ("\n\ndef also_unrelated", "\n\nNEW = 1\n\ndef also_unrelated"),
    # A function split in two.
    ("  y = x + 1\n", "  y = x + 1\n\n\ndef split():\n  pass\n"),
    # A method's indentation changed: it leaves its class.
    ("  def second(self):\n    return 2\n", "def second(self):\n  return 2\n"),
    # A syntax error.
    ("  y = x + 1\n", "  y = x +\n"),
    # An unread function rebinds a global the kernel reads.
    ("  y = x + 1\n", "  global IN_DTYPE\n  IN_DTYPE = jnp.uint8\n  y = x + 1\n"),
    # Tabs in a method the others indent with spaces: Python refuses the file (found by review).
    ("  def second(self):\n    return 2\n", "\t\tdef second(self):\n\t\t\t\treturn 2\n"),
    # A lone surrogate (an editor can send one) in a comment: the file no longer encodes.
    ("\n\ndef also_unrelated", "\n\n# a\ud800b\n\ndef also_unrelated"),
])
def test_an_edit_that_may_change_the_result_is_linted_again(project: Path, old: str, new: str) -> None:
    first = _lint(project, KERNEL)
    text = _edited(KERNEL, old, new)
    again = _lint(project, text, first.memo)
    assert not again.reused
    assert _same(again, _lint(project, text))


def test_a_changed_file_on_disk_is_linted_again(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.mmalint]\n")
    (tmp_path / "dtypes.py").write_text("import jax.numpy as jnp\n\nIN_DTYPE = jnp.int8\n")
    path = tmp_path / "kernel.py"
    text = _edited(KERNEL, "IN_DTYPE = jnp.int8\n", "from dtypes import IN_DTYPE\n")
    path.write_text(text)
    first = _lint(path, text)
    assert first.memo is not None
    edit = _edited(text, "  y = x + 1\n", "  y = x + 2\n")
    assert _lint(path, edit, first.memo).reused
    (tmp_path / "dtypes.py").write_text("import jax.numpy as jnp\n\nIN_DTYPE = jnp.uint8\n\n")
    again = _lint(path, edit, first.memo)
    assert not again.reused
    assert _same(again, _lint(path, edit))
    # A new module in the tree (a new caller, perhaps): the walk's directory changed.
    second = _lint(path, edit)
    (tmp_path / "new_test.py").write_text("import kernel\n")
    assert not _lint(path, edit, second.memo).reused


def test_a_directory_the_walk_skipped_is_watched_too(tmp_path: Path) -> None:
    """A caller in a directory the walk of the tree skips (no `__init__.py` outside a project)
    counts once the directory becomes a package: its own modification time is in the memo."""
    library = ROOT / "tests/data/library"
    (tmp_path / "sub").mkdir()
    kernel = tmp_path / "common.py"
    kernel.write_text((library / "src/matlib/kernels/common.py").read_text())
    ops = (library / "src/matlib/ops.py").read_text().replace("from matlib.kernels.common import", "from common import")
    (tmp_path / "sub" / "user.py").write_text(ops + (
        "\n\ndef test_int8():\n  a = jnp.zeros((M, K), jnp.int8)\n  b = jnp.zeros((N, K), jnp.int8)\n"
        "  return matmul(a, b)\n"))
    text = kernel.read_text()
    first = _lint(kernel, text)
    (tmp_path / "sub" / "__init__.py").write_text("")
    again = _lint(kernel, text, first.memo)
    assert not again.reused
    assert _same(again, _lint(kernel, text))


def test_a_row_named_in_a_note_moves_alone() -> None:
    from mmalint.diagnostics import Location, Range, Related
    from mmalint.lsp.incremental import _shift

    where = Range("/p/k.py", Location(41, 1), Location(41, 5))
    note = Related("called from k.py:41 with a=int8 (see k.py:4)", where)
    moved = _shift(note, "/p/k.py", ((10, 12, 3),))
    assert moved.message == "called from k.py:44 with a=int8 (see k.py:4)"
    assert moved.range.start.row == 44


def test_another_configuration_is_not_served_the_last_result(project: Path) -> None:
    first = _lint(project, KERNEL)
    (project.parent / "pyproject.toml").write_text('[tool.mmalint]\nignore = ["MMA101"]\n')
    again = _lint(project, KERNEL, first.memo)
    assert not again.reused
    assert _same(again, _lint(project, KERNEL))


def test_a_run_that_stopped_early_leaves_no_memo() -> None:
    with reads.recording() as recorded:
        budget = Budget(10, 60.0)
        budget.enter(budget.share(1))
        assert recorded.slack() == 10
        budget.stops += 1
    assert recorded.slack() is None


def _random_edit(rng: random.Random, lines: list[str]) -> list[str]:
    row = rng.randrange(len(lines))
    new = list(lines)
    kind = rng.randrange(4)
    if kind == 0:
        new[row] = new[row].rstrip("\n") + "  # edited\n"
    elif kind == 1:
        new.insert(row, "\n")
    elif kind == 2 and not new[row].strip():
        del new[row]
    else:
        new[row] = new[row].replace("1", "2", 1)
    return new


@pytest.mark.parametrize("name", [
    "examples/seed_from_tensor_mma.py",
    "examples/pallas_u8_dot_test.py",
    "tests/data/library/tests/ops_test.py",
])
def test_every_reused_result_is_what_a_fresh_lint_gives(tmp_path: Path, name: str) -> None:
    """Random edits, one to three at a time, each linted with the last lint's memo and
    afresh: where the memo was used, the two agree exactly."""
    source = ROOT / name
    if name.startswith("tests/data/library"):
        shutil.copytree(ROOT / "tests/data/library", tmp_path / "library")
        path = tmp_path / "library" / Path(name).relative_to("tests/data/library")
    else:
        (tmp_path / "pyproject.toml").write_text("[tool.mmalint]\n")
        path = tmp_path / source.name
        shutil.copy(source, path)
    text = path.read_text()
    rng = random.Random(name)
    last = _lint(path, text)
    reused = 0
    for _ in range(24):
        lines = split_lines(text)
        for _ in range(rng.randrange(1, 4)):
            lines = _random_edit(rng, lines)
        text = "".join(lines)
        now = _lint(path, text, last.memo)
        if now.reused:
            reused += 1
            assert _same(now, _lint(path, text)), text
        last = now
    assert reused >= 4, f"only {reused} of 24 edits reused the last result"


def test_the_diff_is_a_true_one() -> None:
    rng = random.Random(0)
    for _ in range(2000):
        old = [f"{rng.randrange(5)}\n" for _ in range(rng.randrange(0, 30))]
        new = list(old)
        for _ in range(rng.randrange(0, 5)):
            row = rng.randrange(len(new) + 1)
            op = rng.randrange(3)
            if op == 0 and row < len(new):
                new[row] = "x\n"
            elif op == 1:
                new.insert(row, "y\n")
            elif row < len(new):
                del new[row]
        rebuilt: list[str] = []
        i = j = 0
        for a0, a1, b0, b1 in hunks_between(old, new):
            assert a0 >= i and a0 - i == b0 - j and old[i:a0] == new[j:b0]
            rebuilt += old[i:a0] + new[b0:b1]
            i, j = a1, b1
        assert old[i:] == new[j:]
        assert rebuilt + old[i:] == new


# ---------------------------------------------------------------------- superseded, not killed


def _slow_job(tmp_path: Path, kernels: int) -> Job:
    """Many kernels: a lint that takes seconds."""
    slow = tmp_path / "slow.py"
    body = KERNEL.split("def main():", 1)[0]
    text = body + "".join(
        body.split("M, N, K = 128, 128, 128\n", 1)[1].replace("def kernel", f"def kernel{i}")
        .replace("def zero_accumulator", f"def zero_accumulator{i}").replace("def build_int8_matmul", f"def build{i}")
        for i in range(kernels)
    )
    slow.write_text(text)
    return Job("lint", str(slow), text, None, LintOptions())


def test_a_superseded_lint_gives_its_child_back(tmp_path: Path) -> None:
    """A lint cancelled for a newer text stops at the child's next look at its budget; the
    child answers and serves the next job (no new process, no second of imports). Cancelled
    here as soon as it is sent, while the child is still starting: the word must neither end
    the child (the signal came before its handler) nor be lost (the job must still stop)."""
    import asyncio
    import time

    from mmalint.lsp.worker import Pool

    job = _slow_job(tmp_path, 60)

    async def scenario() -> tuple[int, int, float, Linted]:
        pool = Pool(1)
        try:
            first = asyncio.ensure_future(pool.run(job, 120))
            while not pool._busy:
                await asyncio.sleep(0.001)
            pid = next(iter(pool._busy)).process.pid
            first.cancel()
            started = time.monotonic()
            outcome = await pool.run(replace_text(job, "x = 1\n"), 120)
            took = time.monotonic() - started
            assert isinstance(outcome, Linted)
            again = next(iter(pool._idle)).process.pid
            return pid, again, took, outcome
        finally:
            children = [w.process for w in (*pool._idle, *pool._busy, *pool._draining)]
            pool.close()
            for child in children:  # reaped inside the loop: no transport outlives it
                await child.wait()

    pid, again, took, outcome = asyncio.run(scenario())
    assert pid == again, "the superseded job's child was killed"
    assert outcome.report.diagnostics == ()
    assert took < 5


def test_the_child_stops_the_job_it_was_told_of_and_no_other(tmp_path: Path) -> None:
    """Told while starting, and in the middle of the analysis, the child stops the job and
    answers `Cancelled`; a word that crosses its job's answer does not stop the next job."""
    import asyncio

    from mmalint.lsp.worker import Cancelled, Worker

    slow = _slow_job(tmp_path, 240)
    quick = replace_text(slow, "x = 1\n")

    async def scenario() -> list[object]:
        worker = await Worker.spawn()
        try:
            answers: list[object] = []
            for wait in (0.0, 0.3):  # starting (imports under way); analysing (warm child)
                running = asyncio.ensure_future(worker.run(slow))
                await asyncio.sleep(wait)
                worker.supersede()
                answers.append(await running)
            answers.append(await worker.run(quick))
            worker.supersede()  # crossed: the quick job has answered
            answers.append(await worker.run(quick))
            answers.append(worker.alive)
            return answers
        finally:
            worker.kill()
            await worker.process.wait()

    starting, analysing, quick_one, after_a_crossed_word, alive = asyncio.run(scenario())
    assert isinstance(starting, Cancelled)
    assert isinstance(analysing, Cancelled)
    assert isinstance(quick_one, Linted) and isinstance(after_a_crossed_word, Linted)
    assert after_a_crossed_word.report.diagnostics == ()
    assert alive


def replace_text(job: Job, text: str) -> Job:
    from dataclasses import replace

    return replace(job, text=text)


# ---------------------------------------------------------------------- noqa from the statements


TRICKY = '''\
import os  # noqa: F401

# noqa: MMA101 between blocks


class Holder:  # noqa
  """A docstring that says # noqa: MMA102, which is no comment."""

  @staticmethod  # noqa: MMA103
  def method():
    text = """
    # noqa: MMA104 inside a string
    """  # noqa: MMA105
    return text  # NOQA

  class Inner: x = 1  # noqa: MMA106


def f(a,  # noqa: MMA107
      b):
  return (a +  # noqa: MMA108
          b)
'''


@pytest.mark.parametrize("name", ["TRICKY", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests/data").rglob("*.py"))[:120]])
def test_the_noqa_comments_of_the_statements_are_those_of_the_whole_file(name: str) -> None:
    """Directives and multi-line string rows read from the statements that hold a `noqa` (the
    tree the check kept) are what tokenizing the whole text gives."""
    import ast

    from mmalint import lines, suppress

    text = TRICKY if name == "TRICKY" else (ROOT / name).read_text()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        pytest.skip("not Python this version parses")
    lines.keep_tree(text, tree)
    try:
        local = suppress.parse_directives(text)
        near = {row: row in suppress._strings_near(text, row, row) for row in range(1, len(lines.split_lines(text)) + 1)}
    finally:
        lines._regions.clear()
        lines.forget_trees()
    assert local == suppress.parse_directives(text)
    rows = suppress.string_rows(text)
    assert near == {row: row in rows for row in near}
    if name == "TRICKY":
        assert sorted(local.lines) == [1, 3, 6, 9, 13, 14, 16, 19, 21]
