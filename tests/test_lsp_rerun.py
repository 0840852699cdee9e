"""The language server's re-run of the one root an edit is in (`mmalint/lsp/rerun.py`): every
result it makes is exactly what a fresh lint of the new text gives, and the edits it cannot
stand for (a helper's header, a change of what the roots are) get a full lint."""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from _lsp_jobs import lint as _lint
from _lsp_jobs import same as _same

from mmalint import lines as lines_module
from mmalint.analysis import indexes
from mmalint.analysis.reparse import replace_statements
from mmalint.lines import split_lines
from mmalint.lsp import rerun
from mmalint.lsp.incremental import hunks_between
from mmalint.lsp.worker import Linted

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


@pytest.fixture
def module(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.mmalint]\n")
    path = tmp_path / "mma_test.py"
    path.write_text(_module())
    return path


def _methods(text: str, named: Callable[[str], bool]) -> list[tuple[int, int]]:
    """The rows (first, last; 1-based) of the body of each method whose name is `named`."""
    found = []
    tree = ast.parse(text)
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef):
            for member in cls.body:
                if isinstance(member, ast.FunctionDef) and named(member.name):
                    found.append((member.body[0].lineno, member.end_lineno or member.lineno))
    return found


_SWAPS = [
    ("jnp.int32 if is_signed else jnp.uint32", "jnp.int32"),
    ("m, n, k = 128, 64, 256", "m, n, k = 128, 64, 128"),
    ("acc_dtype = dtype", "acc_dtype = jnp.float32"),
    ("dtype=(jnp.bfloat16, jnp.float16)", "dtype=(jnp.bfloat16,)"),
]


def _is_test(name: str) -> bool:
    return name.startswith("test")


def _random_edit(rng: random.Random, text: str, named: Callable[[str], bool] = _is_test) -> str:
    """One edit inside a method `named` (a test's, by default): a comment, a changed constant or
    dtype (the findings change), or a row added or removed (every row after it moves)."""
    lines = split_lines(text)
    first, last = rng.choice(_methods(text, named))
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


def _fuzz(path: Path, text: str, seed: int, rounds: int, named: Callable[[str], bool] = _is_test,
          per_lint: tuple[int, int] = (1, 2)) -> tuple[int, int, set[tuple[str | None, ...]]]:
    """Random edits of methods `named` (`per_lint`: how many before each lint, a range), each
    linted with the last lint's memo and afresh: the two must agree. Returns how many were
    re-runs, how many of those spanned several methods, and the findings' codes seen."""
    last = _lint(path, text)
    assert last.memo is not None
    rng = random.Random(seed)
    reruns = several = 0
    codes: set[tuple[str | None, ...]] = set()
    for _ in range(rounds):
        edited = text
        for _ in range(rng.randrange(*per_lint) if per_lint[1] - per_lint[0] > 1 else per_lint[0]):
            edited = _random_edit(rng, edited, named)
        if edited == text:
            continue
        changed = {a0 for a0, *_ in hunks_between(split_lines(text), split_lines(edited))}
        spread = len({_owner(text, row) for row in changed}) > 1
        text = edited
        now = _lint(path, text, last.memo)
        assert _same(now, _fresh(path, text)), text
        reruns += now.rerun
        several += spread and now.rerun
        codes.add(tuple(d.code for d in now.report.diagnostics))
        last = now
    return reruns, several, codes


def test_every_re_run_is_what_a_fresh_lint_gives(module: Path) -> None:
    """Random edits inside test methods, each linted with the last lint's memo (in the child
    that kept it) and afresh: the two agree exactly, and most edits are re-runs."""
    assert _lint(module, module.read_text()).report.diagnostics, "the module must have findings"
    reruns, _, codes = _fuzz(module, module.read_text(), 12, 30)
    assert reruns >= 10, f"only {reruns} edits were re-runs"
    assert len(codes) > 1, "the edits must change the findings"


def _with_helper(text: str) -> str:
    """The module with the first test's body moved into a helper, `check_dot`, that the first
    two tests call."""
    text = text.replace(
        "  def test_int_dot_0(self, dtype):\n",
        "  def test_int_dot_0(self, dtype):\n    self.check_dot(dtype)\n\n  def check_dot(self, dtype):\n")
    return text.replace("  def test_int_dot_1(self, dtype):\n", "  def test_int_dot_1(self, dtype):\n    self.check_dot(dtype)\n")


def _helper_or_test(name: str) -> bool:
    return name == "check_dot" or name.startswith("test")


def test_an_edit_in_a_helper_re_runs_the_roots_that_entered_it(module: Path) -> None:
    (module.parent / "pyproject.toml").write_text('[tool.mmalint]\ntarget-jax = "0.11"\n')  # plgpu.mma exists
    text = _with_helper(module.read_text())
    first = _lint(module, text)
    assert first.memo is not None
    edited = text.replace("    acc_dtype = jnp.int32 if is_signed else jnp.uint32\n", "    acc_dtype = jnp.int32\n", 1)
    assert edited.index("acc_dtype = jnp.int32\n") > text.index("def check_dot")
    now = _lint(module, edited, first.memo)
    assert now.rerun
    assert now.report.diagnostics != first.report.diagnostics
    assert _same(now, _fresh(module, edited))


def test_random_edits_of_a_helper_are_what_a_fresh_lint_gives(module: Path) -> None:
    """Random edits inside a helper two roots call (and inside the roots): each re-run agrees
    with a fresh lint of its text."""
    (module.parent / "pyproject.toml").write_text('[tool.mmalint]\ntarget-jax = "0.11"\n')
    reruns, _, codes = _fuzz(module, _with_helper(module.read_text()), 5, 24, _helper_or_test)
    assert reruns >= 8, f"only {reruns} edits were re-runs"
    assert len(codes) > 1, "the edits must change the findings"


def test_edits_in_several_blocks_linted_at_once_are_what_a_fresh_lint_gives(module: Path) -> None:
    """A burst: two or three random edits (a helper's and tests') linted as one; each answer
    agrees with a fresh lint of its text, and most are re-runs of the roots of each block."""
    (module.parent / "pyproject.toml").write_text('[tool.mmalint]\ntarget-jax = "0.11"\n')
    reruns, several, _ = _fuzz(module, _with_helper(module.read_text()), 8, 12, _helper_or_test, (2, 4))
    assert reruns >= 6 and several >= 2, (reruns, several)


def _owner(text: str, row: int) -> str | None:
    """The name of the method holding 0-based `row`."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef) and node.lineno - 1 <= row < (node.end_lineno or 0):
            return node.name
    return None


_ACC_FOR = '''

def acc_for(default=jnp.float32):
  total = 0
  for i in range(8):
    total = total + i
  return {ret}

'''


def _two_tests(ret: str, first_acc: str = "acc_for()", second_acc: str = "acc_for()", in_class: str = "",
               in_module: str = "", third_acc: str | None = None) -> str:
    """The warp-level test twice, each taking its accumulator type from an expression (by
    default a module-level helper's call: the second test replays the first one's, no argument
    giving the same key); `in_class` and `in_module` add rows to the test class and before it;
    `third_acc`, a third test."""
    warp = (ROOT / "examples/warp_mma_half_acc_test.py").read_text()
    head, rest = warp.split("class WarpMmaHalfTest", 1)
    body = rest[rest.index("  @parameterized.product(") : rest.index("\n\nif __name__")]
    second = body.replace("def test_gemm_accumulate(", "def test_gemm_accumulate_2(").replace(
        "    acc_dtype = dtype\n", f"    acc_dtype = {second_acc}\n")
    first = body.replace("    acc_dtype = dtype\n", f"    acc_dtype = {first_acc}\n")
    if third_acc is not None:
        second += "\n\n" + body.replace("def test_gemm_accumulate(", "def test_gemm_accumulate_3(").replace(
            "    acc_dtype = dtype\n", f"    acc_dtype = {third_acc}\n")
    cls = "class WarpMmaHalfTest" + rest[: rest.index("  @parameterized.product(")]
    cls = cls.replace("(parameterized.TestCase):\n", "(parameterized.TestCase):\n" + in_class, 1)
    return (f"{head}{_ACC_FOR.format(ret=ret)}{in_module}\n{cls}{first}\n\n{second}\n\n\n"
            'if __name__ == "__main__":\n  absltest.main()\n')


_RUN_GEMM = '''
def run_gemm(dtype):
  m, n, k = 128, 128, 128

  def kernel(ctx, c, a, b, out, _):
    layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=1)
    a_fa = mgpu.FragmentedArray.load_untiled(a, layout=layouts.lhs, optimized=False)
    b_fa = mgpu.FragmentedArray.load_untiled(
        utils.memref_transpose(b, (1, 0)), layout=layouts.rhs, optimized=False)
    c_fa = mgpu.FragmentedArray.load_untiled(c, layout=layouts.acc, optimized=False)
    mgpu.mma(c_fa, a_fa, b_fa).store_untiled(out, optimized=False)

  a = np.zeros((m, k), dtype)
  b = np.zeros((n, k), dtype)
  c = np.zeros((m, n), dtype)
  mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (c, a, b), c, ())(c, a, b)
  return 1


class Cfg:
  RES = run_gemm(jnp.bfloat16)


def helper_a():
  z = 0
  return Cfg.RES

'''

_BOX = '''
class Box:
  pass


def make_cfg():
  c = Box()
  c.acc = jnp.bfloat16
  return c


CFG = make_cfg()


def g(cfg):
  z = 0
  return cfg.acc

'''

_META = '''
class Meta(type):

  def __new__(mcs, name, bases, ns, *, acc=jnp.bfloat16):
    cls = super().__new__(mcs, name, bases, ns)
    cls.ACC = acc
    return cls

'''

_RET = ("  return jnp.float32\n", "  return jnp.bfloat16\n")


def _plain_tests(tests: list[tuple[str, str, str]], in_module: str = "", imports: str = "") -> str:
    """The warp-level test once for each (name, accumulator, rows before), with no parameter
    worlds (bfloat16 operands, one warp row)."""
    warp = (ROOT / "examples/warp_mma_half_acc_test.py").read_text()
    head, rest = warp.split("class WarpMmaHalfTest", 1)
    body = rest[rest.index("  def test_gemm_accumulate(") : rest.index("\n\nif __name__")]
    cls = "class WarpMmaHalfTest" + rest[: rest.index("  @parameterized.product(")]
    made = [
        body.replace("def test_gemm_accumulate(self, dtype, m_warps):\n",
                     f"def {name}(self):\n    dtype = jnp.bfloat16\n    m_warps = 1\n{before}").replace(
            "    acc_dtype = dtype\n", f"    acc_dtype = {acc}\n")
        for name, acc, before in tests
    ]
    head = head.replace("import jax\n", "import jax\n" + imports, 1)
    return f"{head}{in_module}\n{cls}" + "\n\n".join(made) + '\n\n\nif __name__ == "__main__":\n  absltest.main()\n'


_MMA_MODULE = "from jax.experimental.mosaic import gpu as mgpu\n\n\ndef mm(a, b, c):\n  return mgpu.mma(c, a, b)\n"


def _steps(n: int, name: str) -> str:
    """Rows that take about 6 steps each, n times (a loop over a literal tuple)."""
    return f"  {name} = 0\n  for i in {tuple(range(n))}:\n    {name} = {name} + i\n"


def _nested_helpers(inner: int, outer: int) -> dict[str, str]:
    """`lib.outer()` calls `lib2.inner()` and goes on: helpers of other modules that lead to no
    MMA call (each module has one elsewhere, so that the program reads it), whose steps are
    capped; `inner`, `outer`: how long each takes."""
    return {
        "lib2.py": f"import jax.numpy as jnp\n{_MMA_MODULE}\n\ndef inner():\n{_steps(inner, 't')}  return jnp.bfloat16\n",
        "lib.py": (f"import jax.numpy as jnp\nimport lib2\n{_MMA_MODULE}\n\ndef outer2():\n  return lib2.inner()\n\n\n"
                   f"def outer():\n  a = lib2.inner()\n{_steps(outer, 'u')}  return a\n"),
    }


_APPLY2 = ("import jax.numpy as jnp\nfrom jax.experimental.mosaic import gpu as mgpu\n\n\ndef apply2(f, c=None):\n"
           "  if c is not None:\n    return mgpu.mma(c, c, c)\n  return f()\n")
_H = ("\n\ndef acc_for(c=None):\n  if c is not None:\n    return mgpu.mma(c, c, c)\n  total = 0\n  return jnp.float32\n\n\n"
      "def h():\n  t = 0\n  for i in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20):\n    t = t + i\n"
      "  return lib.apply2(acc_for)\n\n")


def _what_roots_read_of_each_other(case: str) -> tuple[str, str, dict[str, str]]:
    """The texts (before, after the edit) and the other files of each case below."""
    test_a = "\n  def test_a(self):\n    x = apply2(acc_for)\n    y = mgpu.mma\n"
    two_rows = ("    m_warps = 1\n", "    m_warps = 2\n")  # of the second test
    if case == "a class attribute worked out by a replay":
        text = _two_tests("jnp.float32", "acc_for()", "self.ACC", in_class="\n  ACC = acc_for()\n", third_acc="self.ACC")
    elif case in ("a class attribute worked out from a summary", "a global worked out from a summary"):
        # (`apply2` leads to an MMA call: its steps are not capped, its summary spends none.)
        in_class, in_module = (test_a, "\nACC = apply2(acc_for)\n") if "global" in case else (
            "\n  ACC = apply2(acc_for)\n" + test_a, "")
        acc = "ACC" if "global" in case else "self.ACC"
        text = _two_tests("jnp.float32", acc, acc, in_class=in_class, in_module=in_module).replace(
            "import jax\n", "import jax\nfrom lib import apply2\n", 1)
        return text, text.replace(*_RET), {"lib.py": _APPLY2}
    elif case == "another root's summary under a step limit":
        text = _plain_tests([("test_a", "lib.outer2()", ""), ("test_b", "lib.outer()", "")], imports="import lib\nimport lib2\n")
        at = text.index("def test_b(")
        return text, text[:at] + text[at:].replace(*two_rows, 1), _nested_helpers(50, 40)
    elif case == "another root's summary past a nested helper's cap":
        text = _plain_tests([("test_a", "lib.outer()", ""), ("test_b", "lib.outer()", "    z = lib2.inner()\n" * 12)],
                            imports="import lib\nimport lib2\n")
        at = text.index("def test_b(")
        return text, text[:at] + text[at:].replace(*two_rows, 1), _nested_helpers(20, 40)
    elif case == "another root's summary, cut by a capped helper when made":
        text = _plain_tests([("test_a", "lib.outer()", "    z = lib2.inner()\n" * 12), ("test_b", "lib.outer()", "")],
                            imports="import lib\nimport lib2\n")
        at = text.index("def test_b(")
        return text, text[:at] + text[at:].replace(*two_rows, 1), _nested_helpers(20, 40)
    elif case == "a replay whose run reused a summary":
        text = _plain_tests([("test_a", "lib.apply2(acc_for)", ""), ("test_b", "h()", ""), ("test_c", "h()", "")],
                            in_module=_H, imports="import lib\n")
        edited = text.replace("  total = 0\n  return jnp.float32\n", "  total = 0\n  return jnp.bfloat16\n")
        return text, edited, {"lib.py": _APPLY2}
    elif case == "a class attribute a helper makes":
        text = _two_tests("jnp.float32", "self.ACC", "self.ACC", in_class="\n  ACC = acc_for()\n")
    elif case == "another class's attribute":
        text = _two_tests("jnp.float32", "Cfg.ACC", "Cfg.ACC", in_module="\nclass Cfg:\n  ACC = acc_for()\n\n")
    elif case == "a method's default":
        text = _two_tests("jnp.float32", "self.acc()", "self.acc()",
                          in_class="\n  def acc(self, a=acc_for()):\n    return a\n")
    elif case == "another module's summary":
        text = _two_tests("jnp.float32", "apply(acc_for)", "apply(acc_for)").replace(
            "import jax\n", "import jax\nfrom lib import apply\n", 1)
        return text, text.replace(*_RET), {"lib.py": "def apply(f):\n  return f()\n"}
    elif case == "a class attribute's records":
        text = _two_tests("jnp.float32", "helper_a()", "Cfg.RES", in_module=_RUN_GEMM)
        return text, text.replace("  return Cfg.RES\n", "  return 0\n"), {}
    elif case == "module code under its reader's branch":
        text = _two_tests("jnp.float32", "jnp.float32", "g(CFG)", in_module=_BOX).replace(
            "    acc_dtype = jnp.float32\n", "    if jax.default_backend() == 'tpu':\n      unused = CFG\n"
            "    acc_dtype = jnp.float32\n", 1)
        return text, text.replace("  z = 0\n", "  z = 1\n"), {}
    else:
        assert case == "a metaclass's __new__ read, not run"
        text = _two_tests("jnp.float32", "Meta.__new__(Meta, 'X', (), {})", "self.ACC", in_module=_META).replace(
            "class WarpMmaHalfTest(parameterized.TestCase):", "class WarpMmaHalfTest(parameterized.TestCase, metaclass=Meta):")
        return text, text.replace("    cls.ACC = acc\n", "    cls.ACC2 = acc\n"), {}
    return text, text.replace(*_RET), {}


# About 250 steps a call (a loop would be summed up in a few).
_PICK = "import jax.numpy as jnp\n\n\ndef pick(dtype):\n  a = 0\n" + "  a = a + 1\n" * 60 + "  return dtype\n"


def test_a_capped_helper_of_another_module_answers_each_root_alone(tmp_path: Path) -> None:
    """A helper of another module that leads to no MMA call spends at most
    `CROSS_MODULE_STEPS_PER_FUNCTION` steps in a root. Found by review, when the cap was a run's
    (2,000 steps): the second test's last worlds found them spent by the first test's, and their
    accumulator unknown, which a run of the second test alone did not. Now each root has its
    own, a call answered from another root's summary spends what its run spent, and a re-run of
    the second test is what a fresh lint gives."""
    (tmp_path / "pyproject.toml").write_text('[tool.mmalint]\ntarget-jax = "0.11"\n')
    (tmp_path / "lib.py").write_text(_PICK)
    text = _two_tests("jnp.float32", "pick(dtype)", "pick(dtype)").replace(
        "import jax\n", "import jax\nfrom lib import pick\n", 1)
    at = text.index("def test_gemm_accumulate_2(")
    row = "    m, n, k = 128, 128, 128\n"
    edited = text[:at] + text[at:].replace(row, row.rstrip("\n") + "  # edited\n", 1)
    assert edited != text
    assert _answers_as_fresh(tmp_path / "mma_test.py", text, edited).rerun


def test_a_call_answered_from_another_roots_summary_spends_what_its_run_spent(tmp_path: Path) -> None:
    """Two tests with no parameter worlds call the capped helper with the same facts from the
    same place (a module-level constant): the second is answered from the first's summary. It
    spends the steps a run of it spends, so the second test finds what it finds alone (its last
    call is past the cap either way), and a re-run of it alone is what a fresh lint gives."""
    (tmp_path / "pyproject.toml").write_text('[tool.mmalint]\ntarget-jax = "0.11"\n')
    (tmp_path / "lib.py").write_text(_PICK)
    text = _two_tests("jnp.float32", "pick(F32)", "_acc()").replace(
        "import jax\n", "import jax\nfrom lib import pick\n", 1)
    # No worlds: each test's own dtype and warp split.
    text = re.sub(r"  @parameterized.product\(\n.*?\n  \)\n", "", text, flags=re.S)
    text = text.replace("(self, dtype, m_warps):\n", "(self):\n    dtype, m_warps = jnp.bfloat16, 1\n")
    text = text.replace("\n\nclass WarpMmaHalfTest", (
        "\nF32, F16, I32, BF16 = jnp.float32, jnp.float16, jnp.int32, jnp.bfloat16\n\n\n"
        "def _acc():\n  pick(F32)\n  pick(F16)\n  pick(I32)\n  pick(BF16)\n  return pick(BF16)\n\n\n"
        "class WarpMmaHalfTest"), 1)
    first, second = text.index("  def test_gemm_accumulate("), text.index("  def test_gemm_accumulate_2(")
    alone = text[:first] + text[second:]
    path = tmp_path / "mma_test.py"
    path.write_text(text)
    both = [d.message for d in _lint(path, text).report.diagnostics if d.range.start.row > text.count("\n", 0, second)]
    path.write_text(alone)
    assert both == [d.message for d in _lint(path, alone).report.diagnostics]
    row = "    m, n, k = 128, 128, 128\n"
    edited = text[:second] + text[second:].replace(row, row.rstrip("\n") + "  # edited\n", 1)
    assert edited != text and "@parameterized" not in text
    assert _answers_as_fresh(path, text, edited).rerun


@pytest.mark.parametrize("case", [
    "a class attribute a helper makes", "another class's attribute", "a method's default",
    "another module's summary", "a class attribute's records", "module code under its reader's branch",
    "a metaclass's __new__ read, not run",
    # Found by the second review:
    "a class attribute worked out by a replay", "a class attribute worked out from a summary",
    "a global worked out from a summary", "another root's summary under a step limit",
    "another root's summary past a nested helper's cap", "another root's summary, cut by a capped helper when made",
    "a replay whose run reused a summary",
])
def test_what_roots_read_of_each_other_is_what_a_fresh_lint_gives(tmp_path: Path, case: str) -> None:
    """Found by review: a root that reads what another root's run worked out, without entering
    the helper that made it (a class member's value, a default, a call into another module
    answered from its summary, a metaclass read as text), or module-level code run first under
    the reader's uncertain branch. Each edit of the helper is answered as a fresh lint answers."""
    (tmp_path / "pyproject.toml").write_text('[tool.mmalint]\ntarget-jax = "0.11"\n')
    text, edited, others = _what_roots_read_of_each_other(case)
    for name, content in others.items():
        (tmp_path / name).write_text(content)
    assert edited != text
    _answers_as_fresh(tmp_path / "mma_test.py", text, edited)


@pytest.mark.parametrize("case", ["body", "header", "module code"])
def test_a_module_level_helper(tmp_path: Path, case: str) -> None:
    """A helper both tests call, the second through a replay of the first one's call: an edit
    of its body re-runs both; so does an edit of a helper that module-level code ran (a global
    both read). An edit of its header (what the def binds) is a full lint."""
    (tmp_path / "pyproject.toml").write_text("[tool.mmalint]\n")
    path = tmp_path / "mma_test.py"
    if case == "module code":
        text = _two_tests("jnp.float32", "ACC").replace(
            "\n\nclass WarpMmaHalfTest", "\nACC = acc_for()\n\n\nclass WarpMmaHalfTest")
    else:
        text = _two_tests("default" if case == "header" else "jnp.float32")
    edited = (text.replace("default=jnp.float32", "default=jnp.bfloat16") if case == "header"
              else text.replace("  return jnp.float32\n", "  return jnp.bfloat16\n"))
    assert edited != text
    now = _answers_as_fresh(path, text, edited)
    assert now.rerun == (case != "header")
    assert now.report.diagnostics, "the edit must make findings"


def test_an_edit_of_a_nested_function_re_runs_the_roots_that_ran_it(tmp_path: Path) -> None:
    """A kernel made by a helper's nested def: its block is the helper's."""
    (tmp_path / "pyproject.toml").write_text("[tool.mmalint]\n")
    path = tmp_path / "mma_test.py"
    warp = (ROOT / "examples/warp_mma_half_acc_test.py").read_text()
    start, end = warp.index("    def kernel(ctx, c, a, b, out, _):\n"), warp.index("    a = self.prng.uniform")
    kernel = warp[start:end]
    maker = "def make_kernel(dtype, m_warps):\n\n" + kernel.replace("\n    ", "\n  ")[2:] + "  return kernel\n\n\n"
    text = warp[:start] + "    kernel = make_kernel(dtype, m_warps)\n\n" + warp[end:]
    text = text.replace("class WarpMmaHalfTest", maker + "class WarpMmaHalfTest")
    edited = text.replace("    mgpu.mma(c_fa, a_fa, b_fa).store_untiled(out, optimized=False)\n",
                          "    mgpu.mma(c_fa, a_fa, a_fa).store_untiled(out, optimized=False)\n")
    assert edited != text
    now = _answers_as_fresh(path, text, edited)
    assert now.rerun
    assert "MMA302" in {d.code for d in now.report.diagnostics}
    assert "MMA302" not in {d.code for d in _fresh(path, text).report.diagnostics}


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


_HANDS_ON = "\nACCS = {'acc': jnp.bfloat16}\n\n\ndef unused():\n  return 1\n"


@pytest.mark.parametrize("forward", [True, False])
def test_an_edit_that_hands_a_table_on_or_stops_is_a_full_lint(tmp_path: Path, forward: bool) -> None:
    """A module-level table a test reads is unknown once any code of the module hands it on
    (`t = ACCS; t[k] = v` in a function no root runs): whether it does is read from every use
    of its name, so an edit of rows naming it is a full lint (a re-run, or reusing the last
    lint, would keep the old answer)."""
    (tmp_path / "pyproject.toml").write_text("[tool.mmalint]\n")
    plain = _two_tests("jnp.float32", "ACCS['acc']", "jnp.float32", in_module=_HANDS_ON)
    handed = plain.replace("  return 1\n", "  t = ACCS\n  t['acc'] = jnp.float32\n  return 1\n", 1)
    text, edited = (plain, handed) if forward else (handed, plain)
    assert edited != text
    now = _answers_as_fresh(tmp_path / "mma_test.py", text, edited)
    assert not now.rerun and not now.reused
    # The plain table's bfloat16 accumulator for float16 operands is MMA102; handed on, unknown.
    before = _fresh(tmp_path / "mma_test.py", text)
    assert ("MMA102" in [d.code for d in before.report.diagnostics]) is forward
    assert ("MMA102" in [d.code for d in now.report.diagnostics]) is not forward


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


# ---------------------------------------------------------------- module-level statements

_F32, _BF16 = "ACC = jnp.float32\n", "ACC = jnp.bfloat16\n"


def _statement_cases() -> dict[str, tuple[str, str, bool]]:
    """Each case: the text, the edited text, and whether the edit is answered without a full
    lint (a re-run; or, where no analysis read the statement, the last lint reused)."""
    cases: dict[str, tuple[str, str, bool]] = {}
    # The first test reads the global; the second takes its accumulator from a helper.
    text = _two_tests("jnp.float32", "ACC", in_module="\n" + _F32)
    cases["read by a root"] = (text, text.replace(_F32, _BF16), True)
    # Read through another statement's value, worked out once by whoever read it first.
    text = _two_tests("jnp.float32", "ACC2", in_module="\n" + _F32 + "ACC2 = ACC\n")
    cases["read through another statement"] = (text, text.replace(_F32, _BF16), True)
    # Read through a class member's value: whoever reads the class reads it.
    text = _two_tests("jnp.float32", "self.ACC_M", in_class="  ACC_M = ACC\n", in_module="\n" + _F32)
    cases["read through a class member"] = (text, text.replace(_F32, _BF16), True)
    # Both tests call the helper that reads it; the second call is answered from the first one's
    # run (a replay): it reads the global too.
    text = _two_tests("ACC", in_module="\n" + _F32)
    cases["read in a replayed call"] = (text, text.replace(_F32, _BF16), True)
    # A statement no root reads: nothing runs again.
    text = _two_tests("jnp.float32", second_acc="jnp.float16", in_module="\n" + _F32)
    cases["read by no root"] = (text, text.replace(_F32, "ACC = jnp.float32  # unused\n"), True)
    # Its run runs a function of the file (module-level code's then: an edit of it is a full lint).
    text = _two_tests("default", "ACC", in_module="\nACC = acc_for()\n")
    cases["its run runs a helper"] = (text, text.replace("\nACC = acc_for()\n", "\nACC = acc_for(jnp.bfloat16)\n"), True)
    # Module-level code stored into an object (in a function of another module): the box is
    # handed on, so unknown, and an edit naming it (whose every use was read) is a full lint.
    # The first test reads `X`, what the run returns; the second reads the box only.
    text = _two_tests("jnp.float32", "X", "BOX.acc", in_module=(
        "\nimport lib\n\n\nclass Box:\n  pass\n\n\nBOX = Box()\nX = lib.configure(BOX)\n"))
    cases["module code stored"] = (
        text, text.replace("X = lib.configure(BOX)\n", "X = lib.configure(BOX, jnp.float32)\n"), False)
    # A table statements fill at import: the root reads what they leave it. A re-run of the
    # edited statement would find the old one's change in the table: a full lint (found by
    # this test: the re-run read the old accumulator).
    text = _two_tests("jnp.float32", "ACCS['acc']", in_module="\nACCS = {}\nACCS['acc'] = jnp.float32\n")
    cases["a table a statement fills"] = (
        text, text.replace("ACCS['acc'] = jnp.float32", "ACCS['acc'] = jnp.bfloat16"), False)
    return cases


_CONFIGURE = ("import jax.numpy as jnp\nfrom jax.experimental.mosaic import gpu as mgpu\n\n\n"
              "def configure(box, acc=jnp.bfloat16):\n  box.acc = acc\n  return acc\n\n\n"
              "def mm(a, b, c):\n  return mgpu.mma(c, a, b)\n")


@pytest.mark.parametrize("case", sorted(_statement_cases()))
def test_an_edit_of_a_module_level_statement_re_runs_the_roots_that_read_it(tmp_path: Path, case: str) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.mmalint]\n")
    (tmp_path / "lib.py").write_text(_CONFIGURE)
    text, edited, re_run = _statement_cases()[case]
    assert edited != text
    now = _answers_as_fresh(tmp_path / "mma_test.py", text, edited)
    assert (now.rerun or now.reused) == re_run
    assert now.report.diagnostics or _fresh(tmp_path / "mma_test.py", text).report.diagnostics, "nothing to compare"


def test_an_edit_in_a_def_no_root_ran_re_runs_nothing(tmp_path: Path) -> None:
    """A test method that leads to no MMA call, in a class of tests that do: an edit of its
    body changes no run. (Its rows hold a word the lint asked of the whole text: `*`, asked
    when a name bound nowhere was looked up among star imports; so the last lint is not
    reused.)"""
    (tmp_path / "pyproject.toml").write_text("[tool.mmalint]\n")
    extra = "  def test_other(self):\n    x = 2 * 3\n    self.assertEqual(x, 6)\n\n"
    text = _two_tests("jnp.float32", first_acc="(BOUND_NOWHERE, acc_for())[1]", second_acc="jnp.float16",
                      in_class=extra)
    edited = text.replace("    x = 2 * 3\n", "    x = 3 * 2\n")
    assert edited != text
    now = _answers_as_fresh(tmp_path / "mma_test.py", text, edited)
    assert now.rerun
    assert now.report.diagnostics


def test_a_re_run_that_cannot_answer_leaves_no_index_behind(tmp_path: Path) -> None:
    """Found by the statements' benchmark: a re-run that patched the kept index, ran, then could
    not answer (here the edited test stores into an object roots share), left the patched index
    where the full lint that answered took it over, its blocks parsed: that lint recorded none
    of them as read, and the next edit of one was reused with the old positions."""
    (tmp_path / "pyproject.toml").write_text("[tool.mmalint]\n")
    path = tmp_path / "mma_test.py"
    warp = (ROOT / "examples/warp_mma_half_acc_test.py").read_text()
    text = warp.replace("class WarpMmaHalfTest(parameterized.TestCase):\n", _SHARED_CONFIG.format(acc="bfloat16")).replace(
        "    acc_dtype = dtype\n", "    acc_dtype = CFG.acc\n")
    path.write_text(text)
    rerun._kept.clear()  # as a new lint child holds nothing of earlier documents
    lines_module._trees.clear()
    lines_module._regions.clear()
    indexes._INDEXED.clear()
    indexes._SHARED.clear()
    first = _lint(path, text)
    edited = text.replace("    c.acc = jnp.bfloat16\n", "    c.acc = jnp.float32\n")
    now = _lint(path, edited, first.memo)
    assert not now.rerun and not now.reused
    fresh = _fresh(path, edited)
    assert _same(now, fresh)
    assert now.memo is not None and fresh.memo is not None
    assert now.memo.read == fresh.memo.read


def _script_cases() -> dict[str, tuple[str, str, bool]]:
    """Functions that module-level code runs: a script's `main()`, a helper a global is made by."""
    gemm = (ROOT / "examples/pallas_f16_acc_gemm.py").read_text()
    row = "      jnp.zeros((TILE_M, N), ACC_DTYPE), plgpu.Layout.MMA_ACC(DTYPE)\n"
    assert row in gemm
    cases = {"a script's kernel": (gemm, gemm.replace(row, row.replace("ACC_DTYPE", "jnp.float32")), True)}
    # The helper's run stores into an object (in another module), which it hands on: a full lint.
    text = _two_tests("jnp.float32", "X", "BOX.acc", in_module=(
        "\nimport lib\n\n\nclass Box:\n  pass\n\n\nBOX = Box()\n\n\ndef make():\n  z = 0\n  return lib.configure(BOX)\n\n\n"
        "X = make()\n"))
    cases["a helper that stores"] = (
        text, text.replace("  return lib.configure(BOX)\n", "  return lib.configure(BOX, jnp.float32)\n"), False)
    return cases


@pytest.mark.parametrize("case", sorted(_script_cases()))
def test_an_edit_of_a_function_module_level_code_ran_re_runs_its_readers(tmp_path: Path, case: str) -> None:
    """`if __name__ == "__main__": main()` runs main, and what it calls, as module-level code of
    its own turn (a root): an edit there re-runs that root (and the roots that read a global
    such code made), unless module-level code stored into an object."""
    (tmp_path / "pyproject.toml").write_text("[tool.mmalint]\n")
    (tmp_path / "lib.py").write_text(_CONFIGURE)
    text, edited, re_run = _script_cases()[case]
    assert edited != text
    now = _answers_as_fresh(tmp_path / "mma_test.py", text, edited)
    assert now.rerun == re_run
    before = _fresh(tmp_path / "mma_test.py", text)
    assert before.report.diagnostics != now.report.diagnostics, "the edit must change the findings"


def _review_cases() -> dict[str, tuple[str, str]]:
    """Found by review of the module-level re-runs: each edit answered otherwise than a fresh
    lint (the first test is `test_gemm_accumulate`, the second `test_gemm_accumulate_2`)."""
    cases: dict[str, tuple[str, str]] = {}
    # A walrus at module level binds a global the `ast` index did not count as bound: the
    # second test's read of it was noted nowhere.
    text = _two_tests("jnp.float32", "X", "ACC", in_module="\nX = (ACC := jnp.float32)\n")
    cases["a walrus's value edited"] = (text, text.replace("(ACC := jnp.float32)", "(ACC := jnp.bfloat16)"))
    text = _two_tests("jnp.float32", "(X, jnp.float32)[1]", "ACC", in_module="\nX = (ACC := jnp.bfloat16)\n")
    cases["the reader of a walrus's statement no longer reads it"] = (
        text, text.replace("(X, jnp.float32)[1]", "jnp.float32", 1))
    # Globals that read each other: whichever a root reads first sees the other unknown.
    mod = "\nX = (Y, jnp.float32)\nY = (X, jnp.bfloat16)\n"
    text = _two_tests("jnp.float32", "(Z, jnp.float32)[1]", "X[0][1]", in_module=mod + "Z = Y\n")
    cases["a cycle of globals, a statement edited"] = (text, text.replace("Z = Y\n", "Z = X\n"))
    text = _two_tests("jnp.float32", "(Y, jnp.float32)[1]", "X[0][1]", in_module=mod)
    cases["a cycle of globals, a test edited"] = (text, text.replace("(Y, jnp.float32)[1]", "(X, jnp.float32)[1]"))
    # A test's edit makes it run module-level code that stores into an object the other test
    # reads (or no longer).
    mod = "\nimport lib\n\n\nclass Box:\n  pass\n\n\nBOX = Box()\nX = lib.configure(BOX)\n"
    text = _two_tests("jnp.float32", "jnp.float32", "BOX.acc", in_module=mod)
    reads_x = text.replace("    acc_dtype = jnp.float32\n", "    acc_dtype = (X, jnp.float32)[1]\n", 1)
    cases["a test's edit starts storing module-level code"] = (text, reads_x)
    cases["a test's edit stops storing module-level code"] = (reads_x, text)
    return cases


@pytest.mark.parametrize("case", sorted(_review_cases()))
def test_module_level_code_roots_share_is_answered_as_a_fresh_lint(tmp_path: Path, case: str) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.mmalint]\n")
    (tmp_path / "lib.py").write_text(_CONFIGURE)
    text, edited = _review_cases()[case]
    assert edited != text
    _answers_as_fresh(tmp_path / "mma_test.py", text, edited)
