"""The facts layer: from source text to the MMA calls it makes, with what reaches them."""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass

from mmalint.analysis import names
from mmalint.analysis.budget import Budget, Limits
from mmalint.analysis.calls import ApiUse, Context, MmaSite, WorldBinding
from mmalint.analysis.host import REGISTRY
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

    foreign = _foreign_modules(blocks)
    for block in blocks:
        if _triggers(block.text, foreign):
            relevant.add(id(block))
            if _is_import(block):
                bare.update(block.bound_names)
            else:
                learn(block)
    # Each block's names, read once: bare (`helper(`, `kernel,`), through `self.`/`cls.`, and
    # bare names called (`Kernel(`); the closure below is then set intersections.
    words = {id(b): _names_in(b.text) for b in blocks if id(b) not in relevant and not _is_import(b)}
    seen_classes: set[str] = set()
    while bare or methods or classes - seen_classes:
        new_classes = classes - seen_classes
        seen_classes |= classes
        wanted_bare, wanted_methods = bare, methods
        bare, methods = set(), set()
        for block in blocks:
            if id(block) in relevant or _is_import(block):
                continue
            block_bare, block_attrs, block_called = words[id(block)]
            if (
                not wanted_bare.isdisjoint(block_bare)
                or not wanted_methods.isdisjoint(block_attrs)
                or not new_classes.isdisjoint(block_called)
            ):
                relevant.add(id(block))
                learn(block)
    return [
        b for b in blocks if id(b) in relevant and not _is_import(b) and (b.kind == "def" or b.parent is None)
    ]


_BARE = re.compile(r"(?<![\w.])([^\W\d]\w*)(\s*\()?")
_SELF_ATTR = re.compile(r"\b(?:self|cls)\.([^\W\d]\w*)")


def _names_in(text: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """(bare names, names after `self.`/`cls.`, bare names followed by `(`) of a block's text."""
    bare: set[str] = set()
    called: set[str] = set()
    for match in _BARE.finditer(text):
        bare.add(match.group(1))
        if match.group(2):
            called.add(match.group(1))
    return frozenset(bare), frozenset(_SELF_ATTR.findall(text)), frozenset(called)


_PREFIX = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\.\Z")


def _triggers(text: str, foreign: frozenset[str]) -> bool:
    """Whether a block names an MMA API: a trigger word not reached through a module no model
    knows (`gpu_callbacks.wgmma` in jax's Pallas interpreter is its own function, whose
    canonical name no model has, so the analysis could record no call there)."""
    for match in TRIGGER_TEXT.finditer(text):
        if _in_comment(text, match.start()):
            continue
        before = _PREFIX.search(text, max(0, match.start() - 100), match.start())
        if before is None or before.group(1) not in foreign:
            return True
    return False


def _in_comment(text: str, at: int) -> bool:
    """Whether `at` follows a `#` that starts a comment on its line (outside any quotes)."""
    line = text[text.rfind("\n", 0, at) + 1 : at]
    hash_at = line.find("#")
    while hash_at >= 0:
        head = line[:hash_at]
        if head.count('"') % 2 == 0 and head.count("'") % 2 == 0:
            return True
        hash_at = line.find("#", hash_at + 1)
    return False


def _foreign_modules(blocks: list[Block]) -> frozenset[str]:
    """Names the module's imports bind to a module (or object) of which no model knows any
    attribute: `from jax._src.pallas.mosaic_gpu.interpret import gpu_callbacks`."""
    prefixes = _model_prefixes()
    found: set[str] = set()
    for block in blocks:
        if block.parent is not None or not _is_import(block):
            continue
        try:
            tree = ast.parse(block.text.strip())
        except SyntaxError:
            continue
        for stmt in tree.body:
            if isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname is not None:
                        canonical = names.module_for_import(alias.name)
                        if not _modelled(canonical, prefixes):
                            found.add(alias.asname)
            elif isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module:
                for alias in stmt.names:
                    canonical, _ = names.from_import(stmt.module, alias.name)
                    if not _modelled(canonical, prefixes):
                        found.add(alias.asname or alias.name)
    return frozenset(found)


@functools.cache
def _model_prefixes() -> frozenset[str]:
    """Every dotted prefix of a modelled name (`mgpu`, `mgpu.tcgen05`, `plgpu.Layout`...)."""
    prefixes: set[str] = set()
    for name in [*REGISTRY.models, *(p for p, _ in REGISTRY.patterns), *(p for p, _ in REGISTRY.resolvers)]:
        parts = name.rstrip(".").split(".")
        for i in range(1, len(parts) + 1):
            prefixes.add(".".join(parts[:i]))
    return frozenset(prefixes)


def _modelled(canonical: str, prefixes: frozenset[str]) -> bool:
    return canonical in prefixes or names.namespace(canonical) in prefixes


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
