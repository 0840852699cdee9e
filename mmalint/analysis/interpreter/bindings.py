"""Which of a module global's top-level bindings code sees: the statements between two
bindings that can run no code of the module (`runs_nothing`, `nothing_runs_between`), and the
binding a global bound several times holds once the module has loaded (`last_binding`). Text
and block index only.
"""

from __future__ import annotations

import re
import weakref

from mmalint.analysis.source import Block, SourceFile, is_import_block


def runs_nothing(source: SourceFile, block: Block) -> bool:
    """Whether a top-level block can run no code of the module at import: a def without
    decorators, or a statement with no call and no import in it (an import runs a module,
    which may import this one back and read the table half-filled)."""
    first = block.first_line.lstrip()
    if is_import_block(block):
        return False
    if block.kind == "def":
        return not first.startswith("@")
    return block.kind == "stmt" and "(" not in block.rows


def last_binding(source: SourceFile, name: str) -> Block | None:
    """The binding a module-level global bound several times holds once the module has loaded
    (`ACC = jnp.int32`, defs, `ACC = jnp.float32`: the last), where every binding is a plain
    top-level assignment (not under a branch, a loop, `try` or `with`; not an import) and no
    statement between the first and the last can run code that reads it half-way (a call, an
    import, a decorated def); None otherwise (the join of the bindings, as before)."""
    found = _LAST.setdefault(source, {})
    if name not in found:
        found[name] = _last_binding(source, name)
    return found[name]


_LAST: weakref.WeakKeyDictionary[SourceFile, dict[str, Block | None]] = weakref.WeakKeyDictionary()


def _last_binding(source: SourceFile, name: str) -> Block | None:
    bindings = source.bindings.get(name, [])
    plain = re.compile(r"[ \t]*" + re.escape(name) + r"[ \t]*(?::[^=\n]*)?=(?!=)")
    if len(bindings) < 2 or not all(
            b.parent is None and b.kind == "stmt" and not is_import_block(b) and plain.match(b.first_line)
            for b in bindings):
        return None
    return bindings[-1] if nothing_runs_between(source, bindings) else None


def nothing_runs_between(source: SourceFile, blocks: list[Block]) -> bool:
    """Whether every top-level block between the first and the last of `blocks` (in order),
    but those, can run no code of the module (`runs_nothing`)."""
    first, last = blocks[0].start_line, blocks[-1].start_line
    own = {id(b) for b in blocks}
    return all(runs_nothing(source, b) for b in source.blocks if first < b.start_line < last and id(b) not in own)
