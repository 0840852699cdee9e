"""Statements: simple statements, definitions, imports, assignment targets."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

import libcst as cst

from mmalint.analysis import names, reads
from mmalint.analysis.host import REGISTRY, Args, Diverges
from mmalint.analysis.imports import scan_imports
from mmalint.analysis.interpreter.core import (
    Flow,
    Frame,
    Machine,
    ModuleState,
    is_import_block,
)
from mmalint.analysis.model_words import modelled
from mmalint.analysis.scopes import dotted_name as _dotted
from mmalint.analysis.source import Block
from mmalint.analysis.values import (
    CONTAINERS,
    NONE,
    UNKNOWN,
    Api,
    DictVal,
    Instance,
    MapVal,
    ProjectModule,
    TupleVal,
    Value,
    changes_in_place,
)

_AUG_OPS: dict[type, str] = {
    cst.AddAssign: "+",
    cst.SubtractAssign: "-",
    cst.MultiplyAssign: "*",
    cst.DivideAssign: "/",
    cst.FloorDivideAssign: "//",
    cst.ModuloAssign: "%",
    cst.PowerAssign: "**",
    cst.MatrixMultiplyAssign: "@",
    cst.BitAndAssign: "&",
    cst.BitOrAssign: "|",
    cst.BitXorAssign: "^",
    cst.LeftShiftAssign: "<<",
    cst.RightShiftAssign: ">>",
}


class Statements(Machine):
    """Executing statements."""

    def exec_block(
        self,
        stmts: Sequence[cst.BaseStatement | cst.BaseSmallStatement],
        frame: Frame,
        block: Block,
    ) -> Flow:
        for stmt in stmts:
            try:
                flow = self.exec_stmt(stmt, frame, block)
            except Diverges:
                return Flow.RAISE
            if flow is not Flow.NORMAL:
                return flow
        return Flow.NORMAL

    def exec_stmt(
        self, stmt: cst.BaseStatement | cst.BaseSmallStatement, frame: Frame, block: Block
    ) -> Flow:
        self.step()
        if type(stmt) is cst.SimpleStatementLine:
            return self.exec_block(stmt.body, frame, block)
        if type(stmt) is cst.Expr:
            if type(stmt.value) is not cst.Call or not self.fill_in_place(stmt.value, frame, block):
                self.eval(stmt.value, frame, block)
            return Flow.NORMAL
        if type(stmt) is cst.Assign:
            value = self.eval(stmt.value, frame, block)
            for target in stmt.targets:
                self.assign(target.target, value, frame, block)
            return Flow.NORMAL
        if type(stmt) is cst.AnnAssign:
            if stmt.value is not None:
                self.assign(stmt.target, self.eval(stmt.value, frame, block), frame, block)
            return Flow.NORMAL
        if type(stmt) is cst.AugAssign:
            current = self.eval(stmt.target, frame, block)
            right = self.eval(stmt.value, frame, block)
            op = _AUG_OPS.get(type(stmt.operator))
            value = self.binary(op, current, right, stmt) if op else UNKNOWN
            if changes_in_place(current):
                self.rebind(current, value, frame)  # `t |= ...`, `xs += ...`: in place
            self.assign(stmt.target, value, frame, block)
            return Flow.NORMAL
        if type(stmt) is cst.Return:
            frame.returns.append(
                self.eval(stmt.value, frame, block) if stmt.value is not None else NONE
            )
            return Flow.RETURN
        if type(stmt) is cst.Raise:
            return Flow.RAISE
        if type(stmt) is cst.Assert:
            test = self.truth(self.eval(stmt.test, frame, block))
            return Flow.RAISE if test is False else Flow.NORMAL
        if type(stmt) is cst.Break:
            return Flow.BREAK
        if type(stmt) is cst.Continue:
            return Flow.CONTINUE
        if type(stmt) is cst.Import or type(stmt) is cst.ImportFrom:
            self.exec_import(stmt, frame, block)
            return Flow.NORMAL
        if type(stmt) is cst.FunctionDef:
            self.exec_def(stmt, frame, block)
            return Flow.NORMAL
        if type(stmt) is cst.ClassDef:
            cls = self.make_class(stmt, block, frame)
            body_frame = Frame(self, frame, frozenset(), block)
            if isinstance(stmt.body, cst.IndentedBlock):
                for inner in stmt.body.body:
                    if isinstance(inner, cst.FunctionDef):
                        body_frame.env[inner.name.value] = self.make_function(
                            inner, block, frame, cls
                        )
                    else:
                        self.exec_stmt(inner, body_frame, block)
            cls.attrs.update(body_frame.env)
            frame.env[stmt.name.value] = cls
            return Flow.NORMAL
        if type(stmt) is cst.If:
            return self.exec_if(stmt, frame, block)
        if type(stmt) is cst.Match:
            return self.exec_match(stmt, frame, block)
        if type(stmt) is cst.For:
            return self.exec_for(stmt, frame, block)
        if type(stmt) is cst.While:
            return self.exec_while(stmt, frame, block)
        if type(stmt) is cst.With:
            return self.exec_with(stmt, frame, block)
        if type(stmt) is cst.Try:
            return self.exec_try(stmt, frame, block)
        if type(stmt) is cst.Del:
            # `del t[k]` changes the container: it is forgotten.
            for deleted in _deleted(stmt.target):
                if isinstance(deleted, cst.Subscript):
                    container = self.eval(deleted.value, frame, block)
                    if isinstance(container, CONTAINERS):
                        self.rebind(container, UNKNOWN, frame)
            return Flow.NORMAL
        # Global, Nonlocal, Pass, Match, TryStar... nothing we model changes.
        return Flow.NORMAL

    def exec_def(self, stmt: cst.FunctionDef, frame: Frame, block: Block) -> None:
        func = self.make_function(stmt, block, frame)
        if not frame.is_module:
            self._pend(func, handed=False)
        value: Value = func
        for decorator in reversed(stmt.decorators):
            dec = self.eval(decorator.decorator, frame, block)
            value = self.call_value(dec, Args([value], {}, [stmt], {}), decorator.decorator, frame, block)
        frame.env[stmt.name.value] = value

    def exec_import(self, stmt: cst.Import | cst.ImportFrom, frame: Frame, block: Block) -> None:
        if isinstance(stmt, cst.Import):
            for alias in stmt.names:
                dotted = _dotted(alias.name)
                if dotted is None:
                    continue
                if alias.asname is not None:
                    target = alias.asname.name
                    if isinstance(target, cst.Name):
                        frame.env[target.value] = self._import_module(dotted, block, bound_as=True)
                else:
                    top = dotted.split(".")[0]
                    frame.env[top] = self._import_module(top, block)
            return
        level = len(stmt.relative)
        module_name = _dotted(stmt.module) if stmt.module is not None else ""
        if module_name is None:
            return
        package = None
        if level and self.program is not None:
            package = self.program.absolute(block.source, level, module_name)
        if package is None:
            if stmt.relative or stmt.module is None:
                package = self._relative_package(level, stmt.module)
            else:
                package = module_name
        if package is None or isinstance(stmt.names, cst.ImportStar):
            return  # a star import is read when a name is not found (`star_imported`)
        for alias in stmt.names:
            attr = _dotted(alias.name)
            if attr is None:
                continue
            bound = attr
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                bound = alias.asname.name.value
            frame.env[bound] = self._import_from(package, attr, block, relative=bool(stmt.relative))

    # ------------------------------------------------------------------ modules of the tree

    def _import_module(self, dotted: str, block: Block, bound_as: bool = False) -> Value:
        """`import dotted` (`bound_as`: `import dotted as m`): the library's module when a model
        knows it, else the tree's, else an unknown API."""
        if bound_as:
            name, is_module = names.import_as(dotted)
            library: Value = self.api_value(name, is_module)
        else:
            name = names.module_for_import(dotted)
            library = Api(name, True)
        if self.program is None or modelled(name):
            return library
        ref = self.program.find(dotted, block.source)
        return ProjectModule(ref.name, ref.path) if ref is not None else library

    def _import_from(self, package: str, attr: str, block: Block, relative: bool = False) -> Value:
        """`from package import attr`: as `_import_module` decides, the package's attribute
        when its module binds it, else its submodule."""
        name, is_module = names.from_import(package, attr, relative=relative)
        program = self.program
        if program is None or modelled(name):
            return self.api_value(name, is_module)
        base = None if modelled(names.module_for_import(package)) else program.find(package, block.source)
        if base is not None and program.path_of(block.source) == base.path and all(
                is_import_block(b) for b in block.source.bindings.get(attr, ())):
            # A package's `__init__` importing its own submodule (`from . import ops`, `from pkg
            # import ops`): the package has no such attribute yet, Python imports the submodule.
            sub = program.find(f"{package}.{attr}", block.source)
            if sub is not None:
                return ProjectModule(sub.name, sub.path)
        if base is not None:
            found = self.project_attribute(ProjectModule(base.name, base.path), attr)
            if found is not None:
                return found
        sub = program.find(f"{package}.{attr}", block.source)
        if sub is not None:
            return ProjectModule(sub.name, sub.path)
        # A module of the tree without that name (bound in a way no scan sees), or one whose
        # source cannot be read: unknown. Outside the tree: an API no model knows.
        return UNKNOWN if base is not None else self.api_value(name, is_module)

    def project_attribute(self, module: ProjectModule, attr: str) -> Value | None:
        """`module.attr` of a module of the tree: its global, else its submodule, else what a
        star import of it brings; None when none of them is known to exist."""
        program = self.program
        if program is None:
            return None
        source = None if os.path.isdir(module.path) else program.source(module.path)
        if source is not None and attr in source.bindings:
            return self.global_value(attr, self.module_of(source))
        sub = program.submodule(program.ref(module.name, module.path), attr)
        if sub is not None:
            return ProjectModule(sub.name, sub.path)
        if source is not None:
            return self.star_imported(self.module_of(source), attr)
        return None

    def star_imported(self, module: ModuleState, name: str) -> Value | None:
        """A name a module binds only through `from other import *`: of a module of the tree,
        or of a library module whose name a model knows (`from jax.experimental.mosaic.gpu.utils
        import *` brings `bytewidth`), where exactly one such import may bring it."""
        if name.startswith("_"):
            return None
        program = self.program
        if module.stars is None:
            module.stars, module.library_stars = [], []
            reads.word("*")
            if "*" in module.source.text:
                for block in module.source.blocks:
                    if block.kind != "stmt" or not is_import_block(block) or "*" not in block.text:
                        continue
                    for stmt in scan_imports(block.text):
                        starred = ("*", None) in stmt.names
                        library = names.module_for_import(stmt.module) if starred and stmt.level == 0 else None
                        if library is not None and names.is_library(library):
                            module.library_stars.append(library)
                            continue
                        count = len(module.stars)
                        if program is not None:
                            for binding in program.resolve(module.source, stmt):
                                if binding.attr == "*":
                                    module.stars.append(ProjectModule(binding.ref.name, binding.ref.path))
                        if starred and len(module.stars) == count:
                            module.library_stars.append("")  # a module neither of the tree nor modelled
        if module.stars:
            key = (id(module.source), name)
            if key in self._starring:
                return None  # two modules that star-import each other
            self._starring.add(key)
            try:
                for star in module.stars:
                    found = self.project_attribute(star, name)
                    if found is not None:
                        return found
            finally:
                self._starring.discard(key)
            return None  # what a module of the tree binds is not known by name here
        libraries = module.library_stars or []
        if "" in libraries:
            return None  # an unread module may bring any name
        known = [found for found in (names.attribute(lib, name) for lib in libraries)
                 if REGISTRY.model_for(found[0]) is not None or REGISTRY.resolve(found[0]) is not None]
        return self.api_value(*known[0]) if len(known) == 1 else None

    def _relative_package(self, level: int, module: cst.Attribute | cst.Name | None) -> str | None:
        """`from . import utils` inside the checked library's own sources (`names.SOURCE_PACKAGE`):
        resolve against the file's path."""
        parts = re.split(r"[\\/]", self.source.filename)
        if names.SOURCE_PACKAGE not in parts:
            return None
        start = len(parts) - 1 - parts[::-1].index(names.SOURCE_PACKAGE)
        package_parts = parts[start:-1]
        if level > 1:
            package_parts = package_parts[: len(package_parts) - (level - 1)]
        if not package_parts:
            return None
        package = ".".join(package_parts)
        if module is not None:
            sub = _dotted(module)
            if sub is None:
                return None
            package = f"{package}.{sub}"
        return package

    def assign(self, target: cst.BaseExpression, value: Value, frame: Frame, block: Block) -> None:
        if type(target) is cst.Name:
            frame.env[target.value] = value
        elif type(target) is cst.Tuple or type(target) is cst.List:
            elements = target.elements
            items = self.iterate(value)
            starred = [i for i, e in enumerate(elements) if type(e) is cst.StarredElement]
            if items is None or (not starred and len(items) != len(elements)):
                for e in elements:
                    self.assign(e.value, UNKNOWN, frame, block)
                return
            if starred:
                star = starred[0]
                after = len(elements) - star - 1
                if len(items) < len(elements) - 1:
                    for e in elements:
                        self.assign(e.value, UNKNOWN, frame, block)
                    return
                head, middle = items[:star], items[star : len(items) - after]
                tail = items[len(items) - after :]
                for e, v in zip(elements[:star], head, strict=True):
                    self.assign(e.value, v, frame, block)
                self.assign(elements[star].value, TupleVal(tuple(middle), True), frame, block)
                for e, v in zip(elements[star + 1 :], tail, strict=True):
                    self.assign(e.value, v, frame, block)
                return
            for e, v in zip(elements, items, strict=True):
                self.assign(e.value, v, frame, block)
        elif isinstance(target, cst.StarredElement):
            self.assign(target.value, value, frame, block)
        elif isinstance(target, cst.Attribute):
            owner = self.eval(target.value, frame, block)
            self.store_attribute(owner, target.attr.value, value, target)
        elif isinstance(target, cst.Subscript):
            # `o_ref[...] = x` stores into a kernel ref: nothing to track. `cfg["acc"] = x` on a
            # dict or list bound to a name: follow a constant key, otherwise forget the container.
            container = self.eval(target.value, frame, block)
            if isinstance(container, CONTAINERS):
                index = self.eval_slice(target, frame, block)
                updated: Value = UNKNOWN
                if isinstance(container, DictVal | MapVal) and index.known and not self._uncertainty:
                    updated = self.binary("|", container, self.mapping([(index, value)]), target)
                self.rebind(container, updated, frame,
                            target.value.value if isinstance(target.value, cst.Name) else None)
                held_by = target.value
                if isinstance(held_by, cst.Attribute) and isinstance(held_by.value, cst.Name):
                    # `cfg.opts[k] = v`: the object's own attribute (not a property's value)
                    owner = self.eval(held_by.value, frame, block)
                    if isinstance(owner, Instance) and held_by.attr.value in owner.attrs:
                        self.store_attribute(owner, held_by.attr.value, updated)


def _deleted(target: cst.BaseDelTargetExpression) -> list[cst.BaseExpression]:
    """The targets of a `del` (`del a[0], b[1]`)."""
    if isinstance(target, cst.Tuple | cst.List):
        return [e.value for e in target.elements]
    return [target]
