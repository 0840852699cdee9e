"""An abstract interpreter over one module: Python semantics only.

It runs each function that can reach a recorded call ("roots") once per parameter world, with
the arguments it can decide, follows calls into functions of the same module (closures
included), and hands every call of a library API to its model (`analysis/models/`, through
`analysis/host.py`). It never imports or executes the checked code: values are facts
(`values.py`), and what it cannot decide is `UNKNOWN`.
"""

from __future__ import annotations

from mmalint.analysis.host import Args, Diverges
from mmalint.analysis.interpreter.calls import Calls
from mmalint.analysis.interpreter.changes import Changes
from mmalint.analysis.interpreter.classes import Classes
from mmalint.analysis.interpreter.core import Flow, Frame
from mmalint.analysis.interpreter.expressions import Expressions
from mmalint.analysis.interpreter.flow import FlowControl
from mmalint.analysis.interpreter.operators import Operators
from mmalint.analysis.interpreter.registries import Registries
from mmalint.analysis.interpreter.roots import Roots
from mmalint.analysis.interpreter.statements import Statements


class Interpreter(Roots, Statements, FlowControl, Expressions, Calls, Changes, Classes, Operators, Registries):
    """Runs the roots of one module and collects what the models record (`sites`, `uses`).
    It is the `host.Host` the models ask."""


__all__ = ["Args", "Diverges", "Flow", "Frame", "Interpreter"]
