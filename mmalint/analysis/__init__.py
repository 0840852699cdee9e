"""The facts layer: from source text to the MMA calls it makes, with what reaches them."""

from __future__ import annotations

import re
from dataclasses import dataclass

from mmalint.analysis.budget import Budget, Limits
from mmalint.analysis.calls import ApiUse, Context, MmaSite, WorldBinding
from mmalint.analysis.interpreter import Interpreter
from mmalint.analysis.prefilter import TRIGGER_TEXT, may_contain_mma
from mmalint.analysis.source import Block, SourceFile, index_source

__all__ = [
    "Analysis",
    "ApiUse",
    "Budget",
    "Context",
    "Limits",
    "MmaSite",
    "SourceFile",
    "WorldBinding",
    "analyze",
    "find_roots",
    "index_source",
    "may_contain_mma",
]

def find_roots(source: SourceFile) -> list[Block]:
    """The blocks worth running: those that mention an MMA API, and those that call them.

    A cheap text scan, transitively closed over the names of relevant functions, so a test
    that calls a helper holding the `mma` call is run too (and binds the helper's arguments).
    A module-level name spreads where it is used bare (`helper(`, `kernel,`); a method's name
    only through `self.name` / `cls.name`, since `x.load_untiled` is far more often an API.
    """
    blocks = [b for b in source.all_blocks() if not (b.kind == "class" and b.members)]
    relevant: set[int] = set()
    bare: set[str] = set()
    methods: set[str] = set()
    classes: set[str] = set()

    def learn(block: Block) -> None:
        if block.kind == "def" and block.name:
            (methods if block.parent is not None else bare).add(block.name)
            if block.parent is not None and block.parent.name:
                classes.add(block.parent.name)  # whoever makes the object can call the method
        elif block.parent is None and block.kind == "stmt":
            # `matmul = plgpu.kernel(body, ...)`: whoever calls `matmul` runs `body`.
            bare.update(block.bound_names)

    for block in blocks:
        if TRIGGER_TEXT.search(block.text):
            relevant.add(id(block))
            if _is_import(block):
                bare.update(block.bound_names)
            else:
                learn(block)
    seen_classes: set[str] = set()
    while bare or methods or classes - seen_classes:
        alternatives = [rf"(?<![\w.]){re.escape(n)}\b" for n in sorted(bare)]
        alternatives += [rf"\b(?:self|cls)\.{re.escape(n)}\b" for n in sorted(methods)]
        alternatives += [rf"(?<![\w.]){re.escape(n)}\s*\(" for n in sorted(classes - seen_classes)]
        seen_classes |= classes
        pattern = re.compile("|".join(alternatives))
        bare, methods = set(), set()
        for block in blocks:
            if id(block) in relevant or _is_import(block):
                continue
            if pattern.search(block.text):
                relevant.add(id(block))
                learn(block)
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
    # False when some run stopped early (budget, stack): the paths it did not take are unknown
    complete: bool = True


def analyze(source: SourceFile, budget: Budget | None = None) -> Analysis:
    """The MMA calls and version-dependent API uses reachable in the module, within `budget`
    (by default, the file's own: `Budget.for_text`)."""
    interp = Interpreter(source, budget)
    interp.run_roots(find_roots(source))
    return Analysis(interp.sites, interp.uses, interp.complete)
