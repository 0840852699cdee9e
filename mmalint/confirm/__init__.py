"""The bundled reference lowering: confirm findings with ptxas, jax, and a GPU.

It never runs the checked code. Each finding's `call` signature (docs/json-format.md) is
rebuilt as a minimal kernel by its instruction family (`families/`): the PTX instruction the
call needs, for ptxas (ptx tier), a kernel around the call built and lowered with the installed
jax on the CPU (jax tier), and that kernel plus its fix run on a GPU against NumPy (gpu tier). Importing this package needs neither jax nor
libcst: jax is imported only inside worker processes.

Names are loaded on first use, so a worker started in another interpreter (`--python`, which
may lack rich) imports only the modules it needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mmalint.confirm.options import TIERS, parse_tiers
    from mmalint.confirm.report import Summary, print_table, summarize, to_json
    from mmalint.confirm.runner import confirm_findings
    from mmalint.confirm.signature import Finding, FindingsError, load_findings, read_findings
    from mmalint.confirm.verdict import (
        CONFIRMED,
        INCONCLUSIVE,
        NOT_REPRODUCED,
        Verdict,
    )

_EXPORTS = {
    "Summary": "report", "print_table": "report", "summarize": "report", "to_json": "report",
    "confirm_findings": "runner", "parse_tiers": "options",
    "Finding": "signature", "FindingsError": "signature", "load_findings": "signature",
    "read_findings": "signature",
    "CONFIRMED": "verdict", "INCONCLUSIVE": "verdict", "NOT_REPRODUCED": "verdict",
    "TIERS": "options", "Verdict": "verdict",
}

__all__ = [
    "CONFIRMED",
    "FIX_DESCRIPTIONS",
    "INCONCLUSIVE",
    "NOT_REPRODUCED",
    "SILENT_CODES",
    "TIERS",
    "Finding",
    "FindingsError",
    "Summary",
    "Verdict",
    "confirm_findings",
    "load_findings",
    "parse_tiers",
    "print_table",
    "read_findings",
    "summarize",
    "to_json",
]


# Over every instruction family (`families.fix_descriptions()`, `families.silent_codes()`).
FIX_DESCRIPTIONS: dict[str, str]
SILENT_CODES: frozenset[str]
_FAMILY_TABLES = {"FIX_DESCRIPTIONS": "fix_descriptions", "SILENT_CODES": "silent_codes"}


def __getattr__(name: str) -> Any:
    if name in _FAMILY_TABLES:
        families = importlib.import_module("mmalint.confirm.families")
        return getattr(families, _FAMILY_TABLES[name])()
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mmalint.confirm' has no attribute {name!r}")
    return getattr(importlib.import_module(f"mmalint.confirm.{module}"), name)
