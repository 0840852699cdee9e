"""The language server's re-run of the one root an edit is in (`mmalint/lsp/rerun.py`): every
result it makes is exactly what a fresh lint of the new text gives, and the edits it cannot
stand for (a helper other roots call, a change of what the roots are) get a full lint."""

from __future__ import annotations

import ast
import random
import re
from pathlib import Path

import pytest

from mmalint import lines as lines_module
from mmalint.analysis import indexes
from mmalint.analysis.reparse import replace_statements
from mmalint.lines import split_lines
from mmalint.lsp import rerun
from mmalint.lsp.worker import Job, Linted, run_job
from mmalint.pipeline.options import LintOptions

ROOT = Path(__file__).resolve().parent.parent


def _module() -> str:
    """A test module of two classes and five test methods, each a root, with findings: the
    8-bit Pallas test (an unsigned accumulator) three times, and the warp-level half one."""
    u8 = (ROOT / "examples/pallas_u8_dot_test.py").read_text()
    warp = (ROOT / "examples/warp_mma_half_acc_test.py").read_text()
    head = u8[: u8.index("class IntegerMmaTest")]
    head = head.replace("import numpy as np\n", (
        "import numpy as np\nfrom jax._src.interpreters import mlir\nfrom jax._src.lib.mlir import ir\n"
        "from jax.experimental.mosaic import gpu as mgpu\nfrom jax.experimental.mosaic.gpu import utils\n"))
    test = u8[u8.index("  @parameterized.parameters(jnp.int8, jnp.uint8)") : u8.index("\n\nif __name__")]
    cls = u8[u8.index("class IntegerMmaTest") : u8.index("  @parameterized.parameters(jnp.int8, jnp.uint8)")]
    tests = "\n".join(test.replace("def test_int_dot(", f"def test_int_dot_{n}(") for n in range(3))
    other = warp[warp.index("class WarpMmaHalfTest") : warp.index("\n\nif __name__")]
    return f'{head}{cls}{tests}\n\n{other}\n\n\nif __name__ == "__main__":\n  absltest.main()\n'


def _lint(path: Path, text: str, memo=None) -> Linted:
    outcome = run_job(Job("lint", str(path), text, None, LintOptions(), memo=memo))
    assert isinstance(outcome, Linted), outcome
    return outcome


def _fresh(path: Path, text: str) -> Linted:
    """A full lint of the text that leaves the kept lints as they were, and that parses the
    text from nothing (not from a tree or an index a re-run kept)."""
    saved = dict(rerun._kept)
    lines_module._trees.clear()
    lines_module._regions.clear()
    indexes._INDEXED.clear()
    indexes._SHARED.clear()
    try:
        return _lint(path, text)
    finally:
        rerun._kept.clear()
        rerun._kept.update(saved)


def _same(a: Linted, b: Linted) -> bool:
    return a.report == b.report and a.noqa == b.noqa and a.others == b.others


@pytest.fixture
def module(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.mmalint]\n")
    path = tmp_path / "mma_test.py"
    path.write_text(_module())
    return path


def _methods(text: str) -> list[tuple[int, int]]:
    """The rows (first, last; 1-based) of each test method's body."""
    found = []
    tree = ast.parse(text)
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef):
            for member in cls.body:
                if isinstance(member, ast.FunctionDef) and member.name.startswith("test"):
                    found.append((member.body[0].lineno, member.end_lineno or member.lineno))
    return found


_SWAPS = [
    ("jnp.int32 if is_signed else jnp.uint32", "jnp.int32"),
    ("m, n, k = 128, 64, 256", "m, n, k = 128, 64, 128"),
    ("acc_dtype = dtype", "acc_dtype = jnp.float32"),
    ("dtype=(jnp.bfloat16, jnp.float16)", "dtype=(jnp.bfloat16,)"),
]


def _random_edit(rng: random.Random, text: str) -> str:
    """One edit inside a test method: a comment, a changed constant or dtype (the findings
    change), or a row added or removed (every row after it moves)."""
    lines = split_lines(text)
    first, last = rng.choice(_methods(text))
    row = rng.randrange(first, last + 1) - 1
    line = lines[row]
    kind = rng.randrange(4)
    if kind == 0 and line.rstrip().endswith((")", "]")) and "#" not in line and '"' not in line:
        lines[row] = line.rstrip("\n") + "  # edited\n"
    elif kind == 1:
        body = "".join(lines[first - 1 : last])
        for old, new in rng.sample(_SWAPS, len(_SWAPS)):
            for a, b in ((old, new), (new, old)):
                if a in body and (b != "jnp.int32" or "jnp.int32 if" not in body):
                    start = sum(len(x) for x in lines[: first - 1])
                    end = start + len(body)
                    return text[:start] + body.replace(a, b, 1) + text[end:]
    elif kind == 2 and re.match(r"    [a-z_]+ = ", line) and not line.rstrip().endswith(("(", ",")):
        lines.insert(row + 1, "    unused = 1\n")
    elif kind == 3 and line == "    unused = 1\n":
        del lines[row]
    return "".join(lines)


def test_every_re_run_is_what_a_fresh_lint_gives(module: Path) -> None:
    """Random edits inside test methods, each linted with the last lint's memo (in the child
    that kept it) and afresh: the two agree exactly, and most edits are re-runs."""
    text = module.read_text()
    last = _lint(module, text)
    assert last.memo is not None and last.report.diagnostics, "the module must have findings"
    rng = random.Random(12)
    reruns = 0
    codes: set[tuple[str | None, ...]] = set()
    for _ in range(30):
        edited = _random_edit(rng, text)
        if edited == text:
            continue
        text = edited
        now = _lint(module, text, last.memo)
        assert _same(now, _fresh(module, text)), text
        reruns += now.rerun
        codes.add(tuple(d.code for d in now.report.diagnostics))
        last = now
    assert reruns >= 10, f"only {reruns} edits were re-runs"
    assert len(codes) > 1, "the edits must change the findings"


def test_a_helper_other_roots_call_is_not_re_run(module: Path) -> None:
    text = module.read_text().replace(
        "  def test_int_dot_0(self, dtype):\n",
        "  def test_int_dot_0(self, dtype):\n    self.check_dot(dtype)\n\n  def check_dot(self, dtype):\n")
    text = text.replace("  def test_int_dot_1(self, dtype):\n", "  def test_int_dot_1(self, dtype):\n    self.check_dot(dtype)\n")
    first = _lint(module, text)
    assert first.memo is not None
    edited = text.replace("    m, n, k = 128, 64, 256\n", "    m, n, k = 128, 64, 128\n", 1)
    assert edited.index("m, n, k = 128, 64, 128") > text.index("def check_dot")
    now = _lint(module, edited, first.memo)
    assert not now.rerun and not now.reused
    assert _same(now, _fresh(module, edited))


def test_an_edit_that_makes_a_root_name_no_mma_api_is_a_full_lint(module: Path) -> None:
    text = module.read_text().replace(
        "\n\n\nif __name__", "\n\n  def test_alias(self):\n    self.op = mgpu.mma\n\n\nif __name__")
    first = _lint(module, text)
    # Its only MMA word goes: it is no root any more.
    edited = text.replace("    self.op = mgpu.mma\n", "    self.op = None\n")
    now = _lint(module, edited, first.memo)
    assert not now.rerun
    assert _same(now, _fresh(module, edited))
    # Where the root still names one, the same kind of edit is a re-run.
    first = _lint(module, text)
    edited = text.replace("      mgpu.mma(c_fa, a_fa, b_fa).store_untiled(out, optimized=False)\n",
                          "      c_fa.store_untiled(out, optimized=False)\n")
    now = _lint(module, edited, first.memo)
    assert now.rerun
    assert _same(now, _fresh(module, edited))


def test_a_class_member_edited_is_parsed_alone_as_the_whole_text_parses() -> None:
    """`reparse.replace_statements` (a full lint's parse of an editor's next text, from the
    last one's tree) parses only the edited member of a class: its tree is `ast.parse`'s."""
    text = _module() + (ROOT / "tests/test_lsp_incremental.py").read_text()
    tree = ast.parse(text)
    lines = split_lines(text)
    rng = random.Random(3)
    edits = ["  # c", " + 0", "  ", "x", "(", "\\", '"""', "    ", "\tq"]
    same = 0
    for _ in range(300):
        edited = list(lines)
        rows = sorted(rng.sample(range(1, len(lines) + 1), rng.randrange(1, 3)))
        for row in rows:
            line = edited[row - 1].rstrip("\n")
            mark = rng.choice(edits)
            edited[row - 1] = (line + mark if rng.random() < 0.7 else mark + line) + "\n"
        got = replace_statements(tree, edited, rows)
        try:
            want = ast.parse("".join(edited))
        except SyntaxError:
            assert got is None, rows
            continue
        if got is not None:
            assert ast.dump(got, include_attributes=True) == ast.dump(want, include_attributes=True), rows
            same += 1
    assert same >= 60


def test_a_statement_read_from_its_region_alone_is_the_one_the_whole_parse_holds() -> None:
    """`suppress._Statements` of a text whose tree is not kept but whose statements' rows are
    (a re-run's text with rows added) parses only the statement a finding is in: the same
    statement rows as from the whole text's tree, for every range inside a statement."""
    from mmalint.lines import statement_regions
    from mmalint.suppress import statement_rows

    text = _module() + (ROOT / "tests/test_lsp_incremental.py").read_text()
    tree = ast.parse(text)
    # Where findings are: the rows of calls.
    ranges = [_Range(node.lineno, node.end_lineno or node.lineno) for node in ast.walk(tree) if isinstance(node, ast.Call)]
    assert len(ranges) > 250
    lines_module._trees.clear()
    lines_module._regions.clear()
    lines_module.keep_tree(text, tree)
    whole = statement_rows(text, ranges)
    lines_module._trees.clear()
    lines_module.keep_regions(text, statement_regions(tree))
    assert statement_rows(text, ranges) == whole


class _Range:
    def __init__(self, first: int, last: int) -> None:
        self.start = _Row(first)
        self.end = _Row(last)


class _Row:
    def __init__(self, row: int) -> None:
        self.row = row


def _answers_as_fresh(path: Path, text: str, edited: str) -> Linted:
    path.write_text(text)
    first = _lint(path, text)
    assert first.memo is not None
    now = _lint(path, edited, first.memo)
    assert _same(now, _fresh(path, edited)), edited
    return now


_SHARED_CONFIG = '''class Cfg:

  def __init__(self):
    self.acc = jnp.bfloat16


CFG = Cfg()


class WarpMmaHalfTest(parameterized.TestCase):

  def test_a(self):
    c = CFG
    c.acc = jnp.{acc}
    y = mgpu.mma
'''


@pytest.mark.parametrize("case", ["edited root stores", "an earlier root stored", "module code it ran first"])
def test_what_roots_share_makes_a_full_lint(tmp_path: Path, case: str) -> None:
    """Found by review: an object of the module that one root stores into (through an alias the
    text scan for mutated globals does not see) and another reads; a module-level root the
    edited test was the first to read. Each edit gets a full lint, as a re-run alone would
    answer otherwise."""
    (tmp_path / "pyproject.toml").write_text("[tool.mmalint]\n")
    path = tmp_path / "mma_test.py"
    warp = (ROOT / "examples/warp_mma_half_acc_test.py").read_text()
    if case == "module code it ran first":
        text = ("import jax.numpy as jnp\nfrom absl.testing import absltest\n"
                "from jax.experimental.pallas import mosaic_gpu as plgpu\n\n\n"
                "class T(absltest.TestCase):\n\n  def test_a(self):\n    x = LAYOUT\n    y = plgpu.mma\n\n\n"
                "LAYOUT = plgpu.Layout.MMA_ACC(jnp.int8)\n")
        edited = text.replace("    x = LAYOUT\n", "    x = 1\n")
    else:
        acc = "bfloat16" if case == "edited root stores" else "float32"
        text = warp.replace("class WarpMmaHalfTest(parameterized.TestCase):\n", _SHARED_CONFIG.format(acc=acc)).replace(
            "    acc_dtype = dtype\n", "    acc_dtype = CFG.acc\n")
        if case == "edited root stores":
            edited = text.replace("    c.acc = jnp.bfloat16\n", "    c.acc = jnp.float32\n")
        else:
            edited = text.replace("    m, n, k = 128, 128, 128\n", "    m, n, k = 128, 128, 128\n    unused = 1\n")
    assert edited != text
    assert not _answers_as_fresh(path, text, edited).rerun


def test_a_memo_another_child_made_after_a_file_changed_is_not_re_run(tmp_path: Path) -> None:
    """Found by review: child 1 keeps a lint, a module the test imports changes, child 2 lints
    the same text again; the next edit reaches child 1 with child 2's memo. Child 1's kept lint
    read the old module: it must not answer (one process plays both children here)."""
    (tmp_path / "pyproject.toml").write_text("[tool.mmalint]\n")
    helper = tmp_path / "helper.py"
    helper.write_text("import jax.numpy as jnp\n\nACC = jnp.float32\n")
    warp = (ROOT / "examples/warp_mma_half_acc_test.py").read_text()
    text = warp.replace("import numpy as np\n", "import numpy as np\nfrom helper import ACC\n").replace(
        "    acc_dtype = dtype\n", "    acc_dtype = ACC\n")
    path = tmp_path / "mma_test.py"
    path.write_text(text)
    _lint(path, text)  # child 1 keeps it
    kept = dict(rerun._kept)
    helper.write_text("import jax.numpy as jnp\n\nACC = jnp.bfloat16\n")
    rerun._kept.clear()
    other = _lint(path, text)  # child 2, after the change
    rerun._kept.clear()
    rerun._kept.update(kept)  # back in child 1
    edited = text.replace("    m, n, k = 128, 128, 128\n", "    m, n, k = 128, 128, 128  # edited\n")
    now = _lint(path, edited, other.memo)
    assert not now.rerun
    assert _same(now, _fresh(path, edited))


def test_two_statements_on_one_row_are_parsed_again_together() -> None:
    """Found by review: `a = 1; b = 2` edited was parsed from `b`'s first row, which holds `a`
    too: the tree had `a` twice."""
    from mmalint.analysis.reparse import replace_statements

    for old, new in [
        ("x = 0\na = 1; b = 2\nz = 3\n", "x = 0\na = 1; b = 5\nz = 3\n"),
        ("class C:\n  x = 0\n  a = 1; b = 2\n  def f(self):\n    pass\n",
         "class C:\n  x = 0\n  a = 1; b = 5\n  def f(self):\n    pass\n"),
    ]:
        lines = split_lines(new)
        changed = [i + 1 for i, (a, b) in enumerate(zip(split_lines(old), lines, strict=True)) if a != b]
        got = replace_statements(ast.parse(old), lines, changed)
        assert got is None or ast.dump(got, include_attributes=True) == ast.dump(ast.parse(new), include_attributes=True)
