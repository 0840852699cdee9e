"""The facts layer: from source text to the MMA calls it makes, with what reaches them.

The names below are loaded when first asked for: a run that reads only the prefilter and the
import graph (pre-commit on a commit that touches no kernel) never loads the interpreter, the
models and libcst.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mmalint.analysis.budget import Budget, Limits
    from mmalint.analysis.calls import ApiUse, Context, MmaSite, WorldBinding
    from mmalint.analysis.prefilter import may_contain_mma
    from mmalint.analysis.program import Program, ProgramSpec
    from mmalint.analysis.run import Analysis, analyze, find_roots
    from mmalint.analysis.source import SourceFile, index_source

# The module each name lives in.
_HOMES = {
    "Analysis": "mmalint.analysis.run",
    "ApiUse": "mmalint.analysis.calls",
    "Budget": "mmalint.analysis.budget",
    "Context": "mmalint.analysis.calls",
    "Limits": "mmalint.analysis.budget",
    "MmaSite": "mmalint.analysis.calls",
    "Program": "mmalint.analysis.program",
    "ProgramSpec": "mmalint.analysis.program",
    "SourceFile": "mmalint.analysis.source",
    "WorldBinding": "mmalint.analysis.calls",
    "analyze": "mmalint.analysis.run",
    "find_roots": "mmalint.analysis.run",
    "index_source": "mmalint.analysis.source",
    "may_contain_mma": "mmalint.analysis.prefilter",
}

__all__ = [
    "Analysis",
    "ApiUse",
    "Budget",
    "Context",
    "Limits",
    "MmaSite",
    "Program",
    "ProgramSpec",
    "SourceFile",
    "WorldBinding",
    "analyze",
    "find_roots",
    "index_source",
    "may_contain_mma",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
