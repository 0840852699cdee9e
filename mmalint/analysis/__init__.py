"""The facts layer: from source text to the MMA calls it makes, with what reaches them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mmalint.analysis.calls import ApiUse, Context, MmaSite, WorldBinding
from mmalint.analysis.interpreter import Interpreter
from mmalint.analysis.source import TRIGGER, Block, SourceFile, index_source, may_contain_mma

__all__ = [
    "Analysis",
    "ApiUse",
    "Context",
    "MmaSite",
    "SourceFile",
    "WorldBinding",
    "analyze",
    "find_roots",
    "index_source",
    "may_contain_mma",
]

_TRIGGER_TEXT = re.compile(TRIGGER.pattern.decode())


def find_roots(source: SourceFile) -> list[Block]:
    """The blocks worth running: those that mention an MMA API, and those that call them.

    A cheap text scan, transitively closed over the names of relevant functions, so a test
    that calls a helper holding the `mma` call is run too (and binds the helper's arguments).
    """
    blocks = [b for b in source.all_blocks() if not (b.kind == "class" and b.members)]
    relevant: set[int] = set()
    names: set[str] = set()
    for block in blocks:
        if _TRIGGER_TEXT.search(block.text):
            relevant.add(id(block))
            if block.kind == "def" and block.name:
                names.add(block.name)
            elif _is_import(block) or (block.parent is None and block.kind == "stmt"):
                names.update(block.bound_names)
    while names:
        pattern = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in sorted(names)) + r")\b")
        names = set()
        for block in blocks:
            if id(block) in relevant or _is_import(block):
                continue
            if pattern.search(block.text):
                relevant.add(id(block))
                if block.kind == "def" and block.name:
                    names.add(block.name)
                elif block.parent is None and block.kind == "stmt":
                    # `matmul = plgpu.kernel(body, ...)`: whoever calls `matmul` runs `body`.
                    names.update(block.bound_names)
    return [
        b for b in blocks if id(b) in relevant and not _is_import(b) and (b.kind == "def" or b.parent is None)
    ]


def _is_import(block: Block) -> bool:
    first = block.text.lstrip()
    return block.kind == "stmt" and (first.startswith("import ") or first.startswith("from "))


@dataclass(frozen=True)
class Analysis:
    sites: list[MmaSite]  # every MMA call, once per path that reaches it
    uses: list[ApiUse]  # every use of a version-dependent API, likewise


def analyze(source: SourceFile) -> Analysis:
    """The MMA calls and version-dependent API uses reachable in the module."""
    interp = Interpreter(source)
    interp.run_roots(find_roots(source))
    return Analysis(interp.sites, interp.uses)
