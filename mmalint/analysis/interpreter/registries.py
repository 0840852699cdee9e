"""A table filled at import by its module's registrars (`analysis/registries.py`), read.

Code that runs after import sees the table as the modules of the tree leave it: its binding
(`KERNELS = {}`), then each top-level statement that registers into it (`@register("int8")`
on a def, `register_recipe(Recipe(...))`), run in its own module as module-level code runs,
each storing through the registrar's own code. Each must register new keys (one, or several
in a loop: `@register("bf16", "f16")`): a statement that stored nothing, or overwrote a key,
or ran before the table was first read (so its store was not seen), leaves the table unknown;
so does a decorator or call that names something else than the registrar there (another
module's `register`) where what it names is unknown. A read while a registering statement is
under way (the registrar's own `if name in KERNELS: raise`) sees the table as filled so far.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from mmalint.analysis import by_root
from mmalint.analysis.interpreter.core import Machine, ModuleState
from mmalint.analysis.registries import Registry, registry
from mmalint.analysis.source import Block, BlockParseError, SourceFile
from mmalint.analysis.values import UNKNOWN, DictVal, Func, MapVal, Value


@dataclass
class Fill:
    """How a run filled one registry: its registering statements, how many registered."""

    sites: tuple[tuple[SourceFile, Block], ...]
    registered: int = 0  # keys the statements stored (at least one for a statement under way)
    under_way: bool = False  # a statement was under way when the table was first read
    unknown: bool = False
    value: Value | None = None  # the table once every statement registered


class Registries(Machine):
    """The values of registries filled at import."""

    def registry_value(self, module: ModuleState, name: str) -> Value | None:
        """The global `name` of `module` as its registrars leave it once the tree is imported;
        None where it is no registry (the caller reads it as before)."""
        if self.program is None:
            return None
        table = registry(module.source, name)
        if table is None:
            return None
        fill = module.registries.get(name)
        if fill is None:
            fill = self._fill(module, table)
        if fill.unknown:
            return UNKNOWN
        if fill.value is not None:
            return fill.value
        value = module.frame.env.get(name, UNKNOWN)
        if any(id(block) in self.module_of(source).executing for source, block in fill.sites):
            return value  # a registering statement under way: the registrar's own reads
        stored = len(value.items) if isinstance(value, DictVal | MapVal) else -1
        if stored < fill.registered or (stored != fill.registered and not fill.under_way) or any(
                id(block) not in self.module_of(source).executed or id(block) in self.module_of(source).incomplete
                for source, block in fill.sites):
            fill.unknown = True
            return UNKNOWN
        # Filled: what code after import reads from now on (a blind run of a registrar, which
        # stores an unknown key, is no call at import).
        fill.value = value
        return value

    def _fill(self, module: ModuleState, table: Registry) -> Fill:
        assert self.program is not None
        found = self.program.registrations(module.source, table.registrars)
        fill = module.registries[table.name] = Fill(tuple(found or ()), unknown=found is None)
        if found is None or self.program.changed_by_importers(module.source, table.name):
            fill.unknown = True
            return fill
        mine = [b for s, b in fill.sites if s is self.source]
        if module.source is self.source or mine:
            # An edit of the binding or of a registering statement changes what its readers find.
            by_root.read(self, ([table.binding] if module.source is self.source else []) + mine, self._lazy_code > 0)
            by_root.filled(self)
        self.execute_module_block(table.binding)
        registrars = [self.global_value(r, module) for r in sorted(table.registrars)]
        nodes = {id(f.node) for f in registrars if isinstance(f, Func)}
        for source, block in fill.sites:
            state = self.module_of(source)
            if id(block) in state.executing:
                # Its store is under way (it read the table first): one key at least, the
                # rest of the table's once every other statement is counted.
                fill.registered += 1
                fill.under_way = True
                continue
            ours = self._registers_with(state, block, table.registrars, nodes)
            if ours is None or id(block) in state.executed:
                fill.unknown = True  # what it calls is not known, or it ran before the table was read
                return fill
            if not ours:
                continue
            before = module.frame.env.get(table.name)
            self.execute_module_block(block)
            after = module.frame.env.get(table.name)
            if not (isinstance(before, DictVal | MapVal) and isinstance(after, DictVal | MapVal)
                    and len(after.items) > len(before.items) and after.items[: len(before.items)] == before.items):
                fill.unknown = True  # stored nothing, or over a key
                return fill
            fill.registered += len(after.items) - len(before.items)
        return fill

    def _registers_with(self, state: ModuleState, block: Block, words: frozenset[str], nodes: set[int]) -> bool | None:
        """Whether a registering statement's decorator or call of one of the registrars'
        names (`words`) names one of them (by their defs' nodes) in its module; None where
        what it names is not known."""
        try:
            statements = block.statements()
        except BlockParseError:
            return None
        if len(statements) != 1:
            return None
        statement = statements[0]
        callees: list[cst.BaseExpression] = []
        if isinstance(statement, cst.FunctionDef | cst.ClassDef):
            callees = [d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator for d in statement.decorators]
        elif isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
            expr = statement.body[0]
            if isinstance(expr, cst.Expr) and isinstance(expr.value, cst.Call):
                callees = [expr.value.func]
        ours = False
        with self.lazy_code():
            for callee in callees:
                last = callee.attr if isinstance(callee, cst.Attribute) else callee
                if not (isinstance(last, cst.Name) and last.value in words):
                    continue
                value = self.eval(callee, state.frame, block)
                if isinstance(value, Func) and id(value.node) in nodes:
                    ours = True
                elif not value.known:
                    return None
        return ours
