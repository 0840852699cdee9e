"""Replays (`interpreter/replays.py`): a call of a module-level helper that recorded nothing is
answered from memory in a later world, and only where a fresh run would give the same."""

from __future__ import annotations

import textwrap

import pytest
from _analysis_lint import check, lint, only, related_rows, row_of
from _replay_cases import CASES

from mmalint.analysis import find_roots, index_source
from mmalint.analysis.interpreter import Interpreter, replays
from mmalint.analysis.interpreter import calls as calls_module
from mmalint.analysis.interpreter.core import MAX_CALL_DEPTH
from mmalint.engine import forget_analysis

HEADER = '''
from absl.testing import parameterized
import jax.numpy as jnp
import numpy as np
import jax.experimental.mosaic.gpu as mgpu
from jax.experimental.mosaic.gpu import utils

'''

# A warp-level mma test whose accumulator dtype comes from a module-level helper.
TEST = '''
  @parameterized.product(dtype=(jnp.int8,), m_warps={m_warps})
  def test_{name}(self, dtype, m_warps):
    acc_dtype = {acc}
    def kernel(ctx, acc, a, b, out, _):
      layouts = mgpu.MMALayouts(utils.dtype_to_ir_type(dtype), m_warps=m_warps)
      a_fa = mgpu.FragmentedArray.load_untiled(a, layout=layouts.lhs, is_signed=True, optimized=False)
      b_fa = mgpu.FragmentedArray.load_untiled(b, layout=layouts.rhs, is_signed=True, optimized=False)
      acc_fa = mgpu.FragmentedArray.load_untiled(acc, layout=layouts.acc, is_signed=None, optimized=False)
      {mma}
    a = np.zeros((128, 128), dtype)
    b = np.zeros((128, 128), dtype)
    acc = np.zeros((128, 128), acc_dtype)
    mgpu.as_gpu_kernel(kernel, (1, 1, 1), (128, 1, 1), (acc, a, b), acc, ())(acc, a, b)
'''

MMA = "mgpu.mma(acc_fa, a_fa, b_fa).store_untiled(out, optimized=False)"


def _module(helpers: str, *tests: str) -> str:
    return HEADER + textwrap.dedent(helpers) + "\n\nclass MmaTest(parameterized.TestCase):\n" + "".join(tests)


def _run(code: str) -> Interpreter:
    source = index_source("snippet.py", textwrap.dedent(code))
    interp = Interpreter(source)
    interp.run_roots(find_roots(source))
    return interp


def _pending_per_world(code: str, name: str) -> tuple[Interpreter, list[int]]:
    """Run `code`; how many functions called `name` each world left pending a blind run."""
    source = index_source("snippet.py", textwrap.dedent(code))
    interp = Interpreter(source)
    pending: list[int] = []
    original = interp._run_uninvoked

    def counting() -> None:
        pending.append(sum(1 for f in interp._defined if f.node.name.value == name))  # type: ignore[union-attr]
        original()

    interp._run_uninvoked = counting  # type: ignore[method-assign]
    interp.run_roots(find_roots(source))
    return interp, pending


def _runs_of(code: str, name: str) -> int:
    """How many times a run of `code` runs the function `name`."""
    calls: list[object] = []
    original = calls_module.Calls._run_function

    def counting(self, func, args, root):  # type: ignore[no-untyped-def]
        calls.append(getattr(func.node, "name", None) and func.node.name.value)
        return original(self, func, args, root)

    calls_module.Calls._run_function = counting  # type: ignore[method-assign]
    try:
        _run(code)
    finally:
        calls_module.Calls._run_function = original  # type: ignore[method-assign]
    return calls.count(name)


def test_a_helper_called_alike_in_every_world_runs_once() -> None:
    code = _module(
        '''
        def acc_type(t):
          t = ((t, t, t, t), (t, t, t, t), (t, t, t, t), (t, t, t, t))  # enough steps to be
          return t[0][0]  # worth remembering (`replays.MIN_STEPS`)
        ''',
        TEST.format(name="a", m_warps="(1, 2, 4)", acc="acc_type(jnp.float32)", mma=MMA),
    )
    interp = _run(code)
    assert len(interp._replays) == 1
    assert _runs_of(code, "acc_type") == 1  # three worlds, one run
    # ... and each world still finds the float32 accumulator.
    diag = only(check(code, ["MMA101", "MMA302"]), "MMA101")
    assert len(diag["worlds"]) == 3


def test_a_replayed_result_says_where_its_caller_decided() -> None:
    code = _module(
        '''
        def acc_type(t):
          return t
        ''',
        TEST.format(name="a", m_warps="(1, 2)", acc="acc_type(jnp.float32)  # first", mma=MMA),
        TEST.format(name="b", m_warps="(1, 2)", acc="acc_type(jnp.float32)  # second", mma=MMA),
    )
    report = check(code, ["MMA101", "MMA101", "MMA302", "MMA302"])
    found = [d.to_json() for d in report.diagnostics if d.code == "MMA101"]
    chosen = sorted(row for d in found for row, note in related_rows(d).items() if note == "float32 chosen here")
    # The same facts from two lines: each finding names its own (a key by facts alone would
    # hand the second test the first test's line).
    assert chosen == [row_of(code, "# first"), row_of(code, "# second")]


def test_a_helper_that_records_runs_in_every_world() -> None:
    # The same arguments in each world, but the call records: its record carries the world.
    code = _module(
        '''
        def do_mma(acc_fa, a_fa, b_fa, out):
          mgpu.mma(acc_fa, a_fa, b_fa).store_untiled(out, optimized=False)
        ''',
        TEST.format(name="a", m_warps="(1,), seed=(0, 1, 2)", acc="jnp.float32",
                    mma="do_mma(acc_fa, a_fa, b_fa, out)").replace("m_warps):", "m_warps, seed):"),
    )
    diag = only(check(code, ["MMA101", "MMA302"]), "MMA101")
    assert {w["seed"] for w in diag["worlds"]} == {"0", "1", "2"}


def test_a_nested_helper_is_not_replayed() -> None:
    # A nested function's frame changes between calls: the second call sees float32.
    code = HEADER + textwrap.dedent('''
    class MmaTest(parameterized.TestCase):
    ''') + TEST.format(
        name="a", m_warps="(1,)", mma=MMA,
        acc="jnp.int32\n    def pick():\n      return acc_dtype\n    first = pick()\n"
            "    acc_dtype = jnp.float32\n    acc_dtype = pick()",
    )
    check(code, ["MMA101", "MMA302"])


def test_a_helper_defining_a_function_it_hands_on_replays_the_definition() -> None:
    # `launch` hands `body` to an API no model knows: `body` runs blind at the end of each
    # world. Replayed, the call still leaves `body` pending in the later worlds.
    code = _module(
        '''
        def launch(n):
          pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))  # worth remembering
          def body():
            return n
          unknown_api(body)
          return n
        ''',
        TEST.format(name="a", m_warps="(1, 2, 4)", acc="jnp.float32", mma=MMA).replace(
            "    a = np.zeros", "    launch(3)\n    a = np.zeros", 1),
    )
    interp, pending = _pending_per_world(code, "body")
    assert pending == [1, 1, 1]
    assert len(interp._replays) == 1


def test_a_replay_is_refused_where_a_fresh_run_would_be_cut() -> None:
    code = _module(
        '''
        def leaf():
          pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))  # worth remembering
          return jnp.float32

        def mid():
          pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))
          return leaf()
        ''',
        TEST.format(name="a", m_warps="(1, 2)", acc="mid()", mma=MMA),
    )
    interp = _run(code)
    leaf, mid = (interp.global_value(name).node for name in ("leaf", "mid"))  # type: ignore[attr-defined]
    replay = next(r for k, r in interp._replays.items() if k[0] is mid)  # type: ignore[index]
    assert replay.entered == frozenset({leaf}) and replay.depth == 2
    interp._stack = []
    assert interp._may_replay(replay)
    # Under a call of `leaf`, the recursion guard would cut a fresh run of `mid` at `leaf()`.
    interp._stack = [leaf]
    assert not interp._may_replay(replay)
    # Deep enough that the depth guard would cut it.
    interp._stack = [mid.body] * (MAX_CALL_DEPTH - 1)
    assert not interp._may_replay(replay)
    interp._stack = [mid.body] * (MAX_CALL_DEPTH - 2)  # `leaf` entered at the last level
    assert interp._may_replay(replay)
    diag = only(check(code, ["MMA101", "MMA302"]), "MMA101")
    assert len(diag["worlds"]) == 2


def test_a_function_handed_on_is_pending_in_a_world_where_the_replay_first_hands_it() -> None:
    # In the first world `report` is handed on before `launch(3)` hands it again (no change
    # then); in the second, only the replay of `launch(3)` hands it on: a fresh run would
    # leave it pending there too.
    code = _module(
        '''
        def report():
          return 0

        def launch(n):
          pad = ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1))  # worth remembering
          unknown_api(report)
          return n
        ''',
        TEST.format(name="a", m_warps="(1, 2)", acc="jnp.float32", mma=MMA).replace(
            "    a = np.zeros", "    if m_warps == 1:\n      unknown_api(report)\n    launch(3)\n    a = np.zeros", 1),
    )
    interp, pending = _pending_per_world(code, "report")
    assert pending == [1, 1]
    assert any(k[0].name.value == "launch" for k in interp._replays)  # type: ignore[index]


def test_a_function_cheaper_than_its_key_is_not_remembered() -> None:
    code = _module(
        '''
        def acc_type(t):
          return t
        ''',
        TEST.format(name="a", m_warps="(1, 2, 4)", acc="acc_type(jnp.float32)", mma=MMA),
    )
    interp = _run(code)
    assert not interp._replays
    assert [f.name.value for f in interp._cheap] == ["acc_type"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_same_diagnostics_with_and_without_replays(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    code = CASES[name]
    forget_analysis()  # the engine answers the text it analysed last from memory
    with_replays = [d.to_json() for d in lint(code).diagnostics]
    recorded = _records(code)
    forget_analysis()
    monkeypatch.setattr(replays, "key", lambda *args, **kwargs: None)
    without = [d.to_json() for d in lint(code).diagnostics]
    forget_analysis()
    assert with_replays == without
    assert without  # each program has a finding that a wrong replay would change
    assert recorded == _records(code)  # and the same calls recorded, in the same worlds


def _records(code: str) -> list[tuple[object, ...]]:
    interp = _run(code)
    return sorted(
        (type(r).__name__, r.origin.span().start.line, tuple((b.name, b.label) for b in r.context.world))
        for r in (*interp.sites, *interp.uses)
    )


# A test class whose helper method decides the accumulator's dtype (`{body}` reads `t`).
METHOD = '''
  def acc_type(self, t):
    pad = ((t, t, t, t), (t, t, t, t), (t, t, t, t), (t, t, t, t))  # worth remembering
    {body}
'''


@pytest.mark.parametrize(
    ("body", "runs"),
    [
        ("return pad[0][0]", 1),  # never reads `self`: one run for the three worlds
        ("return self.ACC if False else pad[0][0]", 3),  # reads it
        ("return super().acc_type(t) if False else pad[0][0]", 3),  # reads it through super()
        ("return locals()['t']", 3),  # may read it through locals()
    ],
)
def test_a_method_that_never_reads_its_object_is_replayed_across_worlds(body: str, runs: int) -> None:
    code = HEADER + "\n\nclass MmaTest(parameterized.TestCase):\n  ACC = jnp.float32\n" + METHOD.format(body=body) + (
        TEST.format(name="a", m_warps="(1, 2, 4)", acc="self.acc_type(jnp.float32)", mma=MMA))
    assert _runs_of(code, "acc_type") == runs
    if runs == 1:
        # ... and each world still finds the float32 accumulator.
        diag = only(check(code, ["MMA101", "MMA302"]), "MMA101")
        assert len(diag["worlds"]) == 3


def test_a_method_word_in_a_docstring_counts_as_a_read() -> None:
    # The scan is of the block's words: `self` in the docstring is taken for a read.
    body = '"""Uses self."""\n    return pad[0][0]'
    code = HEADER + "\n\nclass MmaTest(parameterized.TestCase):\n" + METHOD.format(body=body) + (
        TEST.format(name="a", m_warps="(1, 2, 4)", acc="self.acc_type(jnp.float32)", mma=MMA))
    assert _runs_of(code, "acc_type") == 3
