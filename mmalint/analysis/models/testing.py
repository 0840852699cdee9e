"""Test frameworks' parameter helpers (the worlds of `worlds.py` read what they build)."""

from __future__ import annotations

from mmalint.analysis.host import Bound, Call, Host, model
from mmalint.analysis.values import TupleVal, Value


@model("pytest.param", signature="(*values, **kwargs)")
def _param(host: Host, args: Bound, call: Call) -> Value:
    return TupleVal(tuple(args.positional))
