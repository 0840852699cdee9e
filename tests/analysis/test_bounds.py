"""What the analysis may build and spend: constant folding priced first, one budget a file,
blocks too deep for libcst kept from it. The command-level behaviour is in
tests/test_robust_analysis.py; these state the semantics on small inputs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from _analysis_lint import check

from mmalint.analysis import bounds, find_roots
from mmalint.analysis.budget import Budget, BudgetExceeded, Limits
from mmalint.analysis.interpreter import Interpreter
from mmalint.analysis.source import (
    MAX_CST_DEPTH,
    BlockParseError,
    SourceSyntaxError,
    _cst_depth,
    _too_deep,
    index_source,
)
from mmalint.analysis.values import Const, TupleVal

KERNEL = (Path(__file__).resolve().parents[2] / "examples" / "warp_int8_matmul.py").read_text()


@pytest.mark.parametrize(
    ("op", "left", "right", "ok"),
    [
        ("*", "ab", 3, True),
        ("*", "a", 10**9, False),
        ("*", 10**9, b"x", False),  # either order
        ("*", "a", -5, True),  # the empty string
        ("*", 2**2000, 2**2000, True),
        ("*", 2**3000, 2**3000, False),
        ("**", 10, 10, True),
        ("**", 2**63, 64, True),
        ("**", 2**64, 64, False),
        ("**", 2.0, 10**9, False),
        ("<<", 1, 64, True),
        ("<<", 1, 8_000_000_000, False),
        ("+", "a" * 40_000, "b" * 40_000, False),
        ("+", 2**4000, 1, True),  # no bigger than its operands
        ("%", "%d items", 3, True),
        ("%", "%0999999999d", 1, False),
        ("%", "%*d", (10**9, 1), False),
        ("//", 2**4000, 3, True),
    ],
)
def test_folding_is_priced_from_the_operands(op: str, left: object, right: object, ok: bool) -> None:
    assert bounds.affordable(op, left, right) is ok


def test_products_of_huge_ints_are_refused() -> None:
    assert bounds.affordable_ints([2**64] * 8)
    assert not bounds.affordable_ints([2**4000] * 256)


def test_containers_know_their_size_and_depth() -> None:
    row = TupleVal((Const(0),) * 256)
    table = TupleVal((row,) * 256)  # one row shared: small in memory, 65,793 values to compare
    assert (row.size, row.depth) == (257, 1)
    assert (table.size, table.depth) == (1 + 256 * 257, 2)
    assert table.size > bounds.MAX_SIZE


def test_a_folded_constant_past_the_bounds_is_unknown_and_silent() -> None:
    # The operands' dtype is named by folding: short, it is known and the call is checked; a
    # gigabyte long, it is never built, unknown, and nothing is reported about it.
    def kernel(repeat: str) -> str:
        return KERNEL.replace("IN_DTYPE = jnp.int8", f'IN_DTYPE = jnp.dtype("int" + "8" * {repeat})')

    check(kernel("1"), ["MMA101"])
    check(kernel("10**9"), [], known=False)


def test_budget_shares_what_is_left() -> None:
    now = [0.0]
    budget = Budget(1_000, 10.0, Limits(steps_per_run=400), clock=lambda: now[0])
    first = budget.share(4)  # a quarter of the file, at most one run's worth
    assert (first.end, first.deadline) == (250, 2.5)
    budget.enter(first)
    with pytest.raises(BudgetExceeded):
        for _ in range(1_000):
            budget.step()
    assert budget.steps == 250 and budget.stops == 1 and not budget.exhausted
    second = budget.share(1)  # the last root: all that is left, capped per run
    assert second.end == 250 + 400
    root = budget.share(1, run=False)  # a root of many worlds: not capped
    assert root.end == 1_000


def test_budget_deadline_ends_the_file() -> None:
    now = [0.0]
    budget = Budget(10**9, 1.0, clock=lambda: now[0])
    budget.enter(budget.share(1, run=False))
    now[0] = 2.0
    with pytest.raises(BudgetExceeded):
        for _ in range(10_000):
            budget.step()
    assert budget.exhausted
    budget.enter(budget.share(1))
    with pytest.raises(BudgetExceeded):
        budget.step()  # every later run ends at once


def test_one_runaway_root_does_not_starve_the_next() -> None:
    # Each helper is a root (its docstring names the MMA API; a comment would not do), and each
    # calls the one before four times: the kernel after them still gets its share and its
    # finding; the helpers' runs are cut short. Each call hands on a new object, so no call is
    # answered from an earlier one's result (`interpreter/replays.py`): 4**29 calls to run.
    helpers = 'class Box:\n  pass\n\ndef h0(x):\n  """Feeds mgpu.mma."""\n  return x\n' + "".join(
        f'\ndef h{i}(x):\n  """Feeds mgpu.mma."""\n'
        f'  return h{i - 1}(Box()) + h{i - 1}(Box()) + h{i - 1}(Box()) + h{i - 1}(Box())\n'
        for i in range(1, 30)
    )
    head, sep, tail = KERNEL.partition("\n\ndef zero_accumulator")
    report = check(head + "\n\n" + helpers + sep + tail, ["MMA101"])
    assert not report.complete
    assert check(KERNEL, ["MMA101"]).complete


def test_a_heavy_root_among_light_ones_runs_again_with_what_they_left() -> None:
    # The kernel's loops need more than an equal share of the first pass (the 40 roots after it
    # are light); the second pass gives it what they left: its finding is kept, and the file's
    # analysis is complete.
    loops = "".join("  " * (j + 1) + f"for i{j} in ({', '.join(map(str, range(40)))}):\n" for j in range(2))
    heavy = KERNEL.replace("  del ctx, smem", "  s = 0\n" + loops + "      s = s + 1\n  del ctx, smem")
    light = "".join(f"\ndef light{i}(a, b, o):\n  mgpu.mma(o, a, b)\n" for i in range(40))
    source = index_source("heavy.py", heavy + light)
    interp = Interpreter(source)
    interp.run_roots(find_roots(source))
    assert interp.budget.stops > 0 and interp.complete
    check(heavy + light, ["MMA101"])


def _depth(code: str) -> int:
    return _cst_depth(ast.parse(code))


def test_cst_depth_counts_as_libcst_nests() -> None:
    # Elements sit under wrapper nodes; `and` chains nest once an operand; `elif` once a branch.
    assert _depth("x = " + "[" * 50 + "1" + "]" * 50) >= 100
    assert _depth("x = " + " and ".join(["a"] * 200)) >= 200
    elifs = "if a:\n  pass\n" + "elif a:\n  pass\n" * 60
    assert _depth(elifs) < 80
    assert _depth("x = " + "-" * 300 + "1") > MAX_CST_DEPTH


def test_a_block_too_deep_for_libcst_is_unknown_not_an_error() -> None:
    deep = "DEEP = " + "[" * 150 + "1" + "]" * 150 + "\n"
    source = index_source("deep.py", deep + "x = 1  # mma\n")
    assert _too_deep(deep)
    block = source.blocks[0]
    with pytest.raises(BlockParseError, match=r"deep\.py:1"):
        block.statements()
    assert source.blocks[1].statements()  # the rest of the file is parsed as always


def test_the_libcst_fallback_never_reads_what_python_refuses() -> None:
    # `ast` refuses more than 200 nested brackets; libcst would read 1,000 (and die at 1,272).
    with pytest.raises(SourceSyntaxError, match="too many nested parentheses"):
        index_source("deep.py", "x = " + "(" * 1000 + "1" + ")" * 1000 + "\n")
