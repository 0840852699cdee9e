"""Test frameworks: unittest, absltest and pytest idioms that end a path or expect a failure,
and parameter helpers (the worlds of `worlds.py` read what they build)."""

from __future__ import annotations

import re

from mmalint.analysis.host import REGISTRY, Bound, Call, Host, TestIdioms, model
from mmalint.analysis.values import TupleVal, Value


@model("pytest.param", signature="(*values, **kwargs)")
def _param(host: Host, args: Bound, call: Call) -> Value:
    return TupleVal(tuple(args.positional))


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
