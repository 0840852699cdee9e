"""Test frameworks: unittest, absltest and pytest idioms that end a path or expect a failure,
and parameter helpers (the worlds of `worlds.py` read what they build)."""

from __future__ import annotations

import re

import libcst as cst

from mmalint.analysis.host import (
    REGISTRY,
    Args,
    Bound,
    Call,
    Host,
    TestIdioms,
    callable_kind,
    model,
)
from mmalint.analysis.values import (
    NONE,
    Api,
    Const,
    Parametrize,
    ParamSet,
    SkipMark,
    TupleVal,
    Value,
)


@model("pytest.param", signature="(*values, **kwargs)")
def _param(host: Host, args: Bound, call: Call) -> Value:
    """A case of `parametrize`, skipped where one of its `marks` skips it."""
    marks = args.keywords.get("marks")
    given = marks.items if isinstance(marks, TupleVal) else () if marks is None else (marks,)
    skips: list[bool | None] = [_skips(mark) for mark in given]
    skipped = True if True in skips else None if None in skips else False
    return ParamSet(tuple(args.positional), skipped=skipped)


@callable_kind(Parametrize)
def _metafunc_parametrize(host: Host, value: Value, raw: Args, call: Call) -> Value:
    """`metafunc.parametrize(...)` in a `pytest_generate_tests` hook: its arguments, and
    whether the call was sure to run, for the test's worlds (`interpreter/fixtures.py`)."""
    assert isinstance(value, Parametrize)
    value.calls.append((raw, host.surely_running()))
    return NONE


def _skips(mark: Value) -> bool | None:
    if isinstance(mark, SkipMark):
        return mark.skips
    if isinstance(mark, Api):
        return mark.name == "pytest.mark.skip"  # `marks=pytest.mark.skip`; xfail and the rest run
    return None  # a mark not known: it may skip


@model("pytest.mark.skip", signature="(*args, **kwargs)")
def _skip_mark(host: Host, args: Bound, call: Call) -> Value:
    return SkipMark(True)


@model("pytest.mark.skipif", signature="(condition=None, *args, **kwargs)")
def _skipif_mark(host: Host, args: Bound, call: Call) -> Value:
    """Skips where its condition holds; an undecided one about the kernel's types may skip
    (`guards.about_the_kernel`), one about the machine is taken not to (the test runs where
    it asks to)."""
    condition = args["condition"]
    if isinstance(condition, Const):
        return SkipMark(bool(condition.value))
    node = call.node
    test = node.args[0].value if isinstance(node, cst.Call) and node.args and node.args[0].keyword is None else None
    if test is None:
        return SkipMark(None)
    return SkipMark(None if host.about_the_kernel(test, call.frame, call.block) else False)


def _failing_call_argument(method: str) -> int | None:
    """`assertRaises(E, fn, *args)` calls fn; `assertRaisesRegex(E, regex, fn, *args)` too."""
    if not method.startswith("assertRaises"):
        return None
    return 2 if method.endswith("Regex") or "Literal" in method else 1


REGISTRY.tests = TestIdioms(
    skip_methods=frozenset({"skipTest", "skip", "fail", "skip_if_wg_semantics", "skip_if_lane_semantics"}),
    skip_receivers=frozenset({"self", "pytest", "cls", "unittest", "absltest"}),
    # jax's test helpers that skip only under one lowering semantics: run them when this module
    # defines them (their condition is then known); an unseen one ends the path, to stay safe.
    conditional_skips=frozenset({"skip_if_wg_semantics", "skip_if_lane_semantics"}),
    expected_failure_contexts=re.compile(r"(?:^|\.)(assertRaises\w*|raises)$"),
    failing_call_argument=_failing_call_argument,
    # `except` clauses that expect a failing MMA on purpose. A catch-all (`except Exception`)
    # only records whatever goes wrong, so the calls it wraps are still checked.
    expected_exceptions=frozenset(
        {"ValueError", "NotImplementedError", "TypeError", "RuntimeError", "LoweringError",
         "VerificationError", "MLIRError", "UnsupportedTransferError", "JaxRuntimeError",
         "XlaRuntimeError"}
    ),
)
