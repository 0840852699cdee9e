"""A source file indexed into blocks that libcst parses only when the analysis needs them.

Python's own `ast` (C, ~10x faster than libcst) finds the line ranges of the module's top-level
statements and of each class's members. A block is parsed with libcst the first time the
interpreter asks for it, and positions are computed only for blocks that hold something reported.
A 10k-line test file with one MMA test therefore parses one method, not the whole file.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

BlockKind = Literal["def", "class", "stmt"]


@dataclass(frozen=True, order=True)
class Pos:
    """A 1-based line and 0-based column (characters), like libcst."""

    line: int
    column: int


@dataclass(frozen=True)
class Span:
    filename: str
    start: Pos
    end: Pos


class BlockParseError(Exception):
    """libcst could not parse a block that Python's `ast` accepted."""


@dataclass(eq=False)
class Block:
    """One top-level statement, or one member of a top-level class."""

    source: SourceFile
    start_line: int  # 1-based, first decorator included
    end_line: int  # inclusive
    indent: int
    kind: BlockKind
    name: str | None
    parent: Block | None = None
    members: list[Block] = field(default_factory=list)
    bound_names: frozenset[str] = frozenset()
    _statements: list[cst.BaseStatement] | None = None
    _wrapper_lines: int = 0
    _module: cst.Module | None = None
    _positions: dict[cst.CSTNode, CodeRange] | None = None
    _parse_failed: bool = False

    @property
    def text(self) -> str:
        return "".join(self.source.lines[self.start_line - 1 : self.end_line])

    def statements(self) -> list[cst.BaseStatement]:
        """The libcst statements of this block (parsed on first use)."""
        if self._statements is not None:
            return self._statements
        if self._parse_failed:
            raise BlockParseError(self.label)
        text = self.text
        if self.kind == "class" and self.members:
            text = self._class_header_text()
        try:
            if self.indent == 0:
                module = cst.parse_module(text)
                self._statements = list(module.body)
                self._wrapper_lines = 0
            else:
                module = cst.parse_module("if 1:\n" + text)
                wrapper = module.body[0]
                assert isinstance(wrapper, cst.If)
                self._statements = list(wrapper.body.body)  # type: ignore[arg-type]
                self._wrapper_lines = 1
        except (cst.ParserSyntaxError, RecursionError, AssertionError) as exc:
            self._parse_failed = True
            raise BlockParseError(self.label) from exc
        self._module = module
        return self._statements

    def _class_header_text(self) -> str:
        """A class whose members are blocks of their own parses as its header plus `pass`."""
        first_member = self.members[0].start_line
        header = "".join(self.source.lines[self.start_line - 1 : first_member - 1])
        return header + " " * (self.indent + 4) + "pass\n"

    @property
    def label(self) -> str:
        return f"{self.source.filename}:{self.start_line}"

    def span(self, node: cst.CSTNode) -> Span:
        """The file range of a node of this block."""
        if self._positions is None:
            self.statements()
            assert self._module is not None
            wrapper = MetadataWrapper(self._module, unsafe_skip_copy=True)
            self._positions = dict(wrapper.resolve(PositionProvider))
        code_range = self._positions[node]
        offset = self.start_line - 1 - self._wrapper_lines
        return Span(
            self.source.filename,
            Pos(code_range.start.line + offset, code_range.start.column),
            Pos(code_range.end.line + offset, code_range.end.column),
        )

    def code(self, node: cst.CSTNode) -> str:
        """The source text of a node of this block."""
        self.statements()
        assert self._module is not None
        return self._module.code_for_node(node)


# What can start an MMA call or the layouts that feed one. A cheap byte scan, before any parse.
# Warp-level `mma` as a word (`mgpu.mma(`, `plgpu.mma(`, `from ...mma import`), not `wgmma`,
# `tcgen05_mma` or `do_mma`; and the MMA layouts that only matter on the way to one.
TRIGGER = re.compile(
    rb"(?<!tcgen05\.)(?<!dialect\.)(?<![A-Za-z0-9_])mma(?![A-Za-z0-9_])|MMALayouts|MMA_(?:LHS|RHS|ACC)"
)


def may_contain_mma(data: bytes) -> bool:
    """The prefilter: False when the file cannot contain an MMA call."""
    return TRIGGER.search(data) is not None


@dataclass(eq=False)
class SourceFile:
    filename: str
    text: str
    lines: list[str]
    blocks: list[Block]
    bindings: dict[str, list[Block]]

    def all_blocks(self) -> Iterator[Block]:
        for block in self.blocks:
            yield block
            yield from block.members


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """Lines as Python, libcst and LSP count them: `str.splitlines` also splits on form feeds and
    U+2028, which would shift every row after them."""
    return _LINE.findall(text)


class SourceSyntaxError(Exception):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def index_source(filename: str, text: str) -> SourceFile:
    """Split a file into blocks; raises SourceSyntaxError when Python cannot parse it."""
    try:
        tree = ast.parse(text, filename=filename)
    except SyntaxError as exc:
        # Newer syntax than this Python knows (PEP 695 `def f[T]()`, PEP 701 f-strings):
        # libcst's own parser may still read it.
        fallback = _index_with_libcst(filename, text)
        if fallback is not None:
            return fallback
        raise SourceSyntaxError(
            exc.msg or "invalid syntax", exc.lineno or 1, max((exc.offset or 1) - 1, 0)
        ) from None
    except (ValueError, RecursionError, MemoryError) as exc:  # e.g. NUL bytes
        raise SourceSyntaxError(str(exc), 1, 0) from None
    lines = split_lines(text)
    source = SourceFile(filename, text, lines, [], {})
    previous_end = 0
    for stmt in tree.body:
        start = _first_line(stmt)
        end = stmt.end_lineno or start
        if start <= previous_end:
            # Two statements on one line (`import a; import b`): one block.
            block = source.blocks[-1]
            block.end_line = max(block.end_line, end)
            block.kind, block.name = "stmt", None
            block.bound_names = block.bound_names | _bound_names(stmt)
            previous_end = block.end_line
            continue
        kind: BlockKind = "stmt"
        name: str | None = None
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            kind, name = "def", stmt.name
        elif isinstance(stmt, ast.ClassDef):
            kind, name = "class", stmt.name
        block = Block(source, start, end, stmt.col_offset, kind, name)
        block.bound_names = _bound_names(stmt)
        if isinstance(stmt, ast.ClassDef):
            block.members = _class_members(source, block, stmt)
        source.blocks.append(block)
        previous_end = end
    for block in source.blocks:
        for name in block.bound_names:
            source.bindings.setdefault(name, []).append(block)
    return source


def _first_line(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None) or []
    return min([stmt.lineno, *(d.lineno for d in decorators)])


def _class_members(source: SourceFile, cls: Block, stmt: ast.ClassDef) -> list[Block]:
    """The members of a class as blocks, or none when the class cannot be split safely."""
    members: list[Block] = []
    header_end = stmt.lineno
    previous_end = header_end
    for i, member in enumerate(stmt.body):
        start = _first_line(member)
        end = member.end_lineno or start
        if i == 0 and start <= header_end:
            return []  # `class A: x = 1` on one line
        if start <= previous_end:
            return []
        if i == 0:
            # Keep the docstring and anything before the first member in the header when it
            # is not a def: only defs are worth splitting off.
            pass
        kind: BlockKind = "stmt"
        name: str | None = None
        if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
            kind, name = "def", member.name
        elif isinstance(member, ast.ClassDef):
            kind, name = "class", member.name
        block = Block(source, start, end, member.col_offset, kind, name, parent=cls)
        block.bound_names = _bound_names(member)
        members.append(block)
        previous_end = end
    return members


def _bound_names(stmt: ast.stmt) -> frozenset[str]:
    """Names a module-level statement binds (for lazy lookup of module globals)."""
    names: set[str] = set()

    def targets(node: ast.expr) -> None:
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Tuple | ast.List):
            for elt in node.elts:
                targets(elt)
        elif isinstance(node, ast.Starred):
            targets(node.value)

    def visit(node: ast.stmt) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    continue
                names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                targets(t)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets(node.target)
        elif isinstance(node, ast.For | ast.AsyncFor):
            targets(node.target)
            for s in [*node.body, *node.orelse]:
                visit(s)
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                if item.optional_vars is not None:
                    targets(item.optional_vars)
            for s in node.body:
                visit(s)
        elif isinstance(node, ast.If | ast.While):
            for s in [*node.body, *node.orelse]:
                visit(s)
        elif isinstance(node, ast.Try):
            for s in [*node.body, *node.orelse, *node.finalbody]:
                visit(s)
            for h in node.handlers:
                for s in h.body:
                    visit(s)

    visit(stmt)
    return frozenset(names)


def _index_with_libcst(filename: str, text: str) -> SourceFile | None:
    """The same index from libcst: slower, used only when `ast` cannot parse the file.

    Line ranges come from the length of each statement's generated code (one codegen pass),
    not from libcst's PositionProvider, which costs several times more on a large file.
    """
    from mmalint.analysis.scopes import LocalNames

    try:
        module = cst.parse_module(text)
    except (cst.ParserSyntaxError, RecursionError):
        return None
    source = SourceFile(filename, text, split_lines(text), [], {})

    def names_of(stmt: cst.CSTNode) -> frozenset[str]:
        collector = LocalNames()
        stmt.visit(collector)
        return frozenset(collector.names)

    def make(stmt: cst.BaseStatement, line: int, parent: Block | None) -> tuple[Block, int]:
        """The block of a statement whose code starts at `line`; and the line after it."""
        code = module.code_for_node(stmt)
        newlines = code.count("\n")
        start = line + len(getattr(stmt, "leading_lines", ()))
        kind: BlockKind = "stmt"
        name = None
        if isinstance(stmt, cst.FunctionDef | cst.ClassDef):
            kind = "def" if isinstance(stmt, cst.FunctionDef) else "class"
            name = stmt.name.value
            if stmt.decorators:
                start += len(stmt.decorators[0].leading_lines)
        trailing = 0
        if isinstance(stmt, cst.BaseCompoundStatement) and isinstance(getattr(stmt, "body", None), cst.IndentedBlock):
            trailing = len(stmt.body.footer)  # type: ignore[attr-defined]
        end = line + newlines - 1 - trailing
        indent = len(source.lines[start - 1]) - len(source.lines[start - 1].lstrip()) if start <= len(source.lines) else 0
        block = Block(source, start, end, indent, kind, name, parent)
        block.bound_names = names_of(stmt)
        return block, line + newlines

    line = 1 + len(module.header)
    for stmt in module.body:
        block, next_line = make(stmt, line, None)
        if isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
            body_code = module.code_for_node(stmt.body)
            # The class head (leading lines, decorators, `class X(...):`) ends where the body's
            # header newline is: members start after it.
            head = module.code_for_node(stmt).count("\n") - body_code.count("\n") + 1
            member_line = line + head
            members = []
            for member in stmt.body.body:
                m, member_line = make(member, member_line, block)
                members.append(m)
            header_ok = all(m.start_line > block.start_line for m in members)
            if members and header_ok:
                block.members = members
        source.blocks.append(block)
        line = next_line
    for block in source.blocks:
        for bound in block.bound_names:
            source.bindings.setdefault(bound, []).append(block)
    return source
