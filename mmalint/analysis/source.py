"""A source file indexed into blocks that libcst parses only when the analysis needs them.

Python's own `ast` (C, ~10x faster than libcst) finds the line ranges of the module's top-level
statements and of each class's members. A block is parsed with libcst the first time the
interpreter asks for it, and positions are computed only for blocks that hold something reported.
A 10k-line test file with one MMA test therefore parses one method, not the whole file.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from mmalint.analysis import budget, reads
from mmalint.analysis.cst_from_ast import (
    Range,
    flat_source_of,
    module_from_ast,
    pair_nodes,
    position_of,
    source_of,
)
from mmalint.analysis.dead_rows import dead_rows
from mmalint.analysis.newer_syntax import without_newer_syntax
from mmalint.analysis.reparse import reparsed
from mmalint.lines import (
    first_row,
    keep_regions,
    keep_tree,
    statement_regions,
    tree_of,
)
from mmalint.lines import split_lines as split_lines  # the rows the analysis counts

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
    """libcst could not parse a block that Python's `ast` accepted (or it is too deep to try)."""


# libcst recurses once a level of nesting: in Rust while parsing (where running out of stack kills
# the process: 1,272 nested parentheses, 8,000 `and`s), then in Python in every visitor, in
# positions and code generation, about 3.5 frames a level of its tree. With Python's default
# limit of 1,000 frames that fails from about 280 levels (`_cst_depth`) of nested lists, 320 of
# unary minus, and the interpreter calls it from deep inside the checked code's own calls. No
# block deeper than this is handed to it; of 250,000 blocks of real code (jax, numpy, mypy, pip
# and the rest of a site-packages) the deepest is 86.
MAX_CST_DEPTH = 120
# Checked before the libcst fallback reads a file that `ast` refused, where no tree says how the
# code nests: brackets no deeper than Python itself allows (its tokenizer's MAXLEVEL; libcst dies
# from about 1,200 nested f-strings, 600 levels of their braces), and no more operators on one
# logical line than this (it dies from about 2,900 nested `lambda`s, 6,000 `.` or `not`).
MAX_BRACKETS = 200
MAX_LINE_OPERATORS = 1000


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
    # Where its first statement is in the `ast` tree of the text it was indexed from: its place
    # in the module's body, a member's after its class's (none from libcst's index).
    place: tuple[int, ...] = ()
    _statements: list[cst.BaseStatement] | None = None
    _wrapper_lines: int = 0
    _module: cst.Module | None = None  # libcst's parse (of `_parsed_text`), once positions are asked
    _built: cst.Module | None = None  # the tree built from `ast` (`cst_from_ast`), when it was
    _parsed_text: str = ""
    _twins: dict[int, cst.CSTNode] | None = None  # built node -> libcst's twin
    _ranges: dict[int, Range] = field(default_factory=dict)  # built expression -> where `ast` read it
    _parsed_lines: list[str] | None = None
    _positions: dict[cst.CSTNode, CodeRange] | None = None
    _parse_failed: bool = False
    # Form feeds dropped from the indentation of lines of the parsed text: line -> characters.
    _form_feeds: dict[int, int] = field(default_factory=dict)
    # The file row of each row of the parsed text, when rows were left out of it (`dead_rows`).
    _rows: list[int] | None = None

    @property
    def text(self) -> str:
        reads.block(self)
        return "".join(self.source.lines[self.start_line - 1 : self.end_line])

    @property
    def rows(self) -> str:
        """The block's rows, not read as the block's (`text` notes a read): for the scans of
        a whole module, which note theirs (`reads.mutation_scan`)."""
        return "".join(self.source.lines[self.start_line - 1 : self.end_line])

    @property
    def first_line(self) -> str:
        """The block's first row (its first decorator's, or the statement's own)."""
        return self.source.lines[self.start_line - 1]

    def statements(self) -> list[cst.BaseStatement]:
        """The libcst statements of this block (parsed on first use)."""
        if self._statements is not None:
            return self._statements
        if self._parse_failed:
            raise BlockParseError(self.label)
        budget.check_superseded()
        # A class split into members reads its header only (its members are blocks of their own).
        text = self._class_header_text() if self.kind == "class" and self.members else self.text
        wrapped = self.indent != 0
        if wrapped:
            text = "if 1:\n" + text
        key = (self.source.filename, text)
        parsed = _PARSED.get(key)
        if parsed is not None and self.source not in parsed.users:
            # The same block of another version of the file (the text a fix would make, the
            # editor's last): its tree is the same. Never shared within one version, where
            # each call must stay a node of its own.
            _PARSED.move_to_end(key)
            parsed.users.add(self.source)
            self._statements, self._module = parsed.statements, parsed.module
            self._built, self._parsed_text, self._ranges = parsed.built, parsed.text, parsed.ranges
            self._wrapper_lines, self._form_feeds = parsed.wrapper_lines, parsed.form_feeds
            self._rows = None if parsed.rows is None else _moved_rows(parsed.rows, self.start_line - parsed.start)
            if self._statements is None:
                self._parse_failed = True
                raise BlockParseError(self.label)
            return self._statements
        parsing = self._without_dead_rows(wrapped) or text
        own = parsing is text and not (self.kind == "class" and self.members)  # its rows as written
        try:
            return self._parse(parsing, wrapped, own)
        finally:
            if parsed is None:
                _remember(key, _Parsed(weakref.WeakSet([self.source]), self._statements, self._module,
                                       self._wrapper_lines, self._form_feeds, self._rows, self.start_line,
                                       self._built, self._parsed_text, self._ranges),
                          len(parsing))

    def _without_dead_rows(self, wrapped: bool) -> str | None:
        """The text to parse of a generated function of more than `ELIDE_FROM_ROWS` rows, its
        dead pure assignments left out (`dead_rows`); None for any other block."""
        if self.kind != "def" or self.end_line - self.start_line < ELIDE_FROM_ROWS:
            return None
        tree = tree_of(self.source.text)
        if isinstance(tree, ast.Module):
            node = _def_at(tree, self)
            dead = dead_rows(node) if node is not None else None
        else:
            dead = self.source.dead_rows_of(self)
        if not dead:
            return None
        rows = [row for row in range(self.start_line, self.end_line + 1) if row not in dead]
        text = "".join(self.source.lines[row - 1] for row in rows)
        self._rows = [self.start_line - 1, *rows] if wrapped else rows
        return "if 1:\n" + text if wrapped else text

    def _parse(self, text: str, wrapped: bool, own: bool = False) -> list[cst.BaseStatement]:
        """The statements of `text`, this block's (`own`: its rows as they are in the file) or
        what stands for it (its class's header, its rows without the dead ones)."""
        text, self._form_feeds = _without_form_feeds(text)
        tree, shift = None, 0
        if own and not self._form_feeds:
            # Its statements as its module's kept tree has them (a checked file's: `lines.keep_tree`),
            # not parsed again: their rows are the file's, `shift` more than the text's.
            found = self._kept_statements(wrapped)
            if found is not None:
                tree, shift = found
        if tree is None:
            tree = _ast_tree(text)
        if _too_deep_tree(text, tree):
            self._parse_failed = True
            raise BlockParseError(f"{self.label}: nested too deeply for libcst")
        built = None
        if tree is not None:
            try:
                built, self._ranges = module_from_ast(text, tree, shift)
            except Exception:  # Unsupported, or a bug of the builder: libcst parses it as always
                built = None
        try:
            module = built if built is not None else cst.parse_module(text)
            if wrapped:
                wrapper = module.body[0]
                assert isinstance(wrapper, cst.If)
                statements: list[cst.BaseStatement] = list(wrapper.body.body)  # type: ignore[arg-type]
            else:
                statements = list(module.body)
            self._wrapper_lines = int(wrapped)
        except (cst.ParserSyntaxError, RecursionError, MemoryError, AssertionError) as exc:
            self._parse_failed = True
            raise BlockParseError(self.label) from exc
        self._module = None if built is not None else module
        self._built, self._parsed_text = built, text
        self._statements = statements
        return statements

    def _kept_statements(self, wrapped: bool) -> tuple[ast.Module, int] | None:
        """The tree of this block's text made of its statements in its module's kept `ast` tree,
        and how many rows the file has before the text's first; None when no tree is kept."""
        tree = tree_of(self.source.text)
        if not isinstance(tree, ast.Module):
            return None
        statements = _block_statements(tree, self)
        if statements is None:
            return None
        if not wrapped:
            return ast.Module(body=statements, type_ignores=[]), self.start_line - 1
        # `if 1:` on the row above the block's first (`statements`): the text's first row.
        row = self.start_line - 1
        last = statements[-1]
        wrapper = ast.If(
            test=ast.Constant(value=1, kind=None, lineno=row, col_offset=3, end_lineno=row, end_col_offset=4),
            body=statements, orelse=[], lineno=row, col_offset=0,
            end_lineno=last.end_lineno, end_col_offset=last.end_col_offset,
        )
        return ast.Module(body=[wrapper], type_ignores=[]), row - 1

    def _libcst_module(self) -> cst.Module:
        """libcst's own tree of the parsed text (for positions and source text), paired with the
        tree built from `ast` when there is one."""
        self.statements()
        if self._module is None:
            assert self._built is not None
            try:
                self._module = cst.parse_module(self._parsed_text)
            except (cst.ParserSyntaxError, RecursionError, MemoryError) as exc:
                raise BlockParseError(self.label) from exc
            self._twins = pair_nodes(self._built, self._module)
            if self._twins is None:
                raise BlockParseError(f"{self.label}: its tree from ast is not libcst's")
        return self._module

    def twin(self, node: cst.CSTNode) -> cst.CSTNode:
        """The node of libcst's tree (`libcst_statements()`) that is `node`, a node of the tree
        built from `ast`; a node of libcst's tree is its own."""
        self._libcst_module()
        return self._twins.get(id(node), node) if self._twins is not None else node

    def libcst_statements(self) -> list[cst.BaseStatement]:
        """The statements of libcst's own tree of this block, whose nodes know their layout
        (what a visitor that rebuilds nodes needs: `fixes.plan`); `twin` maps to them."""
        module = self._libcst_module()
        if self._wrapper_lines:
            wrapper = module.body[0]
            assert isinstance(wrapper, cst.If)
            return list(wrapper.body.body)  # type: ignore[arg-type]
        return list(module.body)

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
        if self._positions is None and self._built is not None:
            # Where `ast` read an expression of the tree built from it, when that is where
            # libcst would put it: no libcst parse of the block, no position pass over it.
            where = self._ranges.get(id(node))
            found = position_of(self._lines_parsed(), where, type(node) is cst.Tuple) if where is not None else None
            if found is not None:
                return self._span(*found)
        if self._positions is None:
            wrapper = MetadataWrapper(self._libcst_module(), unsafe_skip_copy=True)
            try:
                self._positions = dict(wrapper.resolve(PositionProvider))
            except RecursionError as exc:
                raise BlockParseError(self.label) from exc
        code_range = self._positions[self.twin(node)]
        start, end = code_range.start, code_range.end
        return self._span(start.line, start.column, end.line, end.column)

    def _span(self, first: int, start: int, last: int, end: int) -> Span:
        """The file range of rows and columns of the parsed text."""
        if self._rows is not None:  # rows were left out of the parsed text
            start_row, end_row = self._rows[first - 1], self._rows[last - 1]
        else:
            offset = self.start_line - 1 - self._wrapper_lines
            start_row, end_row = first + offset, last + offset
        return Span(
            self.source.filename,
            Pos(start_row, start + self._form_feeds.get(first, 0)),
            Pos(end_row, end + self._form_feeds.get(last, 0)),
        )

    def _lines_parsed(self) -> list[str]:
        if self._parsed_lines is None:
            self._parsed_lines = split_lines(self._parsed_text)
        return self._parsed_lines

    def flat_code(self, node: cst.CSTNode) -> str:
        """The source text of a node of this block, its whitespace runs made single spaces (a
        label: a world's parameter, a loop's item)."""
        if self._module is None and self._built is not None:
            where = self._ranges.get(id(node))
            found = flat_source_of(self._lines_parsed(), where) if where is not None else None
            if found is not None:
                return found
        return " ".join(self.code(node).split())

    def code(self, node: cst.CSTNode) -> str:
        """The source text of a node of this block."""
        if self._module is None and self._built is not None:
            where = self._ranges.get(id(node))
            if where is not None:
                found = source_of(self._lines_parsed(), where)
                if found is not None:
                    return found  # what libcst would print, without parsing the block with it
        module = self._libcst_module()
        try:
            return module.code_for_node(self.twin(node))
        except RecursionError as exc:
            raise BlockParseError(self.label) from exc


@dataclass
class _Parsed:
    users: weakref.WeakSet[SourceFile]  # the versions whose blocks hold these nodes
    statements: list[cst.BaseStatement] | None  # None: it did not parse
    module: cst.Module | None
    wrapper_lines: int
    form_feeds: dict[int, int]
    rows: list[int] | None = None  # `Block._rows` of the block that parsed it ...
    start: int = 0  # ... whose first row was this (another version's block may start elsewhere)
    built: cst.Module | None = None  # the tree built from `ast`, the text it was built of, and
    text: str = ""  # where its expressions were written
    ranges: dict[int, Range] = field(default_factory=dict)


def _moved_rows(rows: list[int], by: int) -> list[int]:
    return [row + by for row in rows]


# A generated function of more rows than this (a def of 200,000 assignments) is parsed and run
# without its dead pure assignments: `x1 = 2 + 1`, whose names nothing of the function reads.
# They cannot change what the analysis finds (no call, attribute or subscript: no model runs,
# nothing is recorded), and libcst would spend most of the time on them. Real functions are
# far shorter: the longest of jax's is under 1,000 rows.
ELIDE_FROM_ROWS = 5000


def _def_at(tree: ast.Module, block: Block) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The `ast` node of a def block (top-level, or a member of a top-level class)."""
    statements = _block_statements(tree, block)
    if statements is None or len(statements) != 1:
        return None
    node = statements[0]
    return node if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else None


def _block_statements(tree: ast.Module, block: Block) -> list[ast.stmt] | None:
    """The statements of `tree` (a tree of the text the block was indexed from) that a block
    (top-level, or a member of a top-level class) is made of, from its place there; None when
    they do not start and end where it does."""
    place = block.place
    if not place:
        return None
    body = tree.body
    if len(place) == 2:  # a member of the class at place[0]
        owner = body[place[0]] if place[0] < len(body) else None
        if not isinstance(owner, ast.ClassDef):
            return None
        body = owner.body
    if place[-1] >= len(body) or first_row(body[place[-1]]) != block.start_line:
        return None
    statements = []
    for stmt in body[place[-1]:]:
        if first_row(stmt) > block.end_line:
            break
        statements.append(stmt)
    if max(stmt.end_lineno or stmt.lineno for stmt in statements) != block.end_line:
        return None
    return statements


# Blocks parsed lately, by file name and text: another version of a file (a fix verified, an
# editor's next keystroke) parses only what changed. At most this many characters are kept.
_PARSED: OrderedDict[tuple[str, str], _Parsed] = OrderedDict()
_SIZES: dict[tuple[str, str], int] = {}
_PARSED_CHARS = 16 * 1024 * 1024
_parsed_chars = 0


def _remember(key: tuple[str, str], parsed: _Parsed, size: int) -> None:
    """Keep a parse of `size` characters (fewer than the key's own when rows were left out)."""
    global _parsed_chars
    if size > _PARSED_CHARS // 4:
        return  # a giant block would push out everything else
    _PARSED[key] = parsed
    _SIZES[key] = size
    _parsed_chars += size
    while _parsed_chars > _PARSED_CHARS:
        old, _ = _PARSED.popitem(last=False)
        _parsed_chars -= _SIZES.pop(old)


@dataclass(eq=False)
class SourceFile:
    filename: str
    text: str
    lines: list[str]
    blocks: list[Block]
    bindings: dict[str, list[Block]]
    # The row ranges of the top-level statements (`lines.statement_regions`) when `ast` read the
    # text (as it is, or its newer syntax blanked): the suppressions of a checked file whose
    # tree was not kept tokenize only the statements that hold a `noqa` (`engine.indexed_by`).
    regions: list[tuple[int, int]] | None = None
    # The dead rows of each def of more than `ELIDE_FROM_ROWS` rows (`Block._without_dead_rows`),
    # by the block's id, when the text's tree was not kept: the module's rows parsed once for all.
    _dead: dict[int, set[int] | None] | None = field(default=None, repr=False)

    def all_blocks(self) -> Iterator[Block]:
        for block in self.blocks:
            yield block
            yield from block.members

    def dead_rows_of(self, block: Block) -> set[int] | None:
        """`_dead_rows` of a def block of more than `ELIDE_FROM_ROWS` rows, for an index whose
        tree was not kept (a program's, which a check may take over): the module's rows are
        parsed again, once for all such defs, still far cheaper than a block's own whole."""
        if self._dead is None:
            self._dead = {}
            tree = _ast_tree(self.text)
            if tree is None:
                return None
            for each in self.all_blocks():
                if each.kind == "def" and each.end_line - each.start_line >= ELIDE_FROM_ROWS:
                    node = _def_at(tree, each)
                    self._dead[id(each)] = dead_rows(node) if node is not None else None
        return self._dead.get(id(block))


# Indentation up to its last form feed: Python's tokenizer starts counting the indentation
# again after one (`\f    def f():` is indented by 4), libcst does not (it reads `\fdef f():` at
# the top of a module, then drops the form feed from the code it prints).
_FORM_FEED_INDENT = re.compile(r"[ \t\f]*\f")


def indent_of(line: str) -> int:
    """The indentation of a line as Python counts it: characters after its last form feed."""
    indentation = line[: len(line) - len(line.lstrip(" \t\f"))]
    return len(indentation) - indentation.rfind("\f") - 1


def _without_form_feeds(text: str) -> tuple[str, dict[int, int]]:
    """`text` without form feeds in indentation (nor the whitespace before them, which Python
    ignores too), for libcst; and how many characters each changed (1-based) line lost."""
    if "\f" not in text:
        return text, {}
    removed: dict[int, int] = {}
    lines = split_lines(text)
    for number, line in enumerate(lines, start=1):
        match = _FORM_FEED_INDENT.match(line)
        if match is not None:
            removed[number] = match.end()
            lines[number - 1] = line[match.end() :]
    return "".join(lines), removed


def _cst_depth(tree: ast.AST) -> int:
    """How deep libcst would nest the tree Python's `ast` gives, a little over rather than under.

    Walked with a stack of its own, so that the depth of the checked code is never Python's. An
    element of a list field (arguments, elements, a body) sits under a wrapper node in libcst
    (`Arg`, `Element`, `IndentedBlock` and `SimpleStatementLine`); `a and b and c`, flat in
    `ast`, nests once per operand; an `elif` is one `If` under another.
    """
    deepest = 0
    todo: list[tuple[ast.AST, int]] = [(tree, 0)]
    push = todo.append
    while todo:
        node, depth = todo.pop()
        if depth > deepest:
            deepest = depth
        if type(node) is ast.BoolOp:
            depth += len(node.values)
        for name in node._fields:
            value = getattr(node, name, None)
            if type(value) is list:
                elif_chain = name == "orelse" and len(value) == 1 and type(value[0]) is ast.If
                for child in value:
                    if isinstance(child, ast.AST):
                        step = 1 if elif_chain else 3 if isinstance(child, ast.stmt) else 2
                        push((child, depth + step))
            elif isinstance(value, _LEAVES):
                deepest = max(deepest, depth + 1)  # a context or an operator: counted, not walked
            elif isinstance(value, ast.AST):
                push((value, depth + 1))
    return deepest


# Field values with no fields of their own (`Load`, `Add`...): the deepest count sees them, the
# stack need not hold them.
_LEAVES = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)


_NESTING_KEYWORDS = frozenset({"and", "or", "not", "if", "else", "lambda", "await", "is", "in"})
_FLAT_OPERATORS = frozenset({",", ":", "=", ";", "(", ")", "[", "]", "{", "}"})


def _shallow_tokens(text: str) -> bool:
    """Whether libcst can parse text that `ast` cannot (newer syntax) without running out of
    stack: no bracket deeper than Python allows, no logical line with more operators than
    `MAX_LINE_OPERATORS`. From the tokens, since there is no tree; from the brackets alone
    where this Python cannot even tokenize it (PEP 701 f-strings)."""
    depth = deepest = operators = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.OP:
                if token.string in "([{":
                    depth += 1
                    deepest = max(deepest, depth)
                elif token.string in ")]}":
                    depth -= 1
                if token.string not in _FLAT_OPERATORS:
                    operators += 1
            elif token.type == tokenize.NAME and token.string in _NESTING_KEYWORDS:
                operators += 1
            elif token.type == tokenize.NEWLINE:
                operators = 0
            if deepest > MAX_BRACKETS or operators > MAX_LINE_OPERATORS:
                return False
    except (tokenize.TokenError, SyntaxError):
        return _shallow_brackets(text)
    return True


def _shallow_brackets(text: str) -> bool:
    """No bracket deeper than Python allows, counting every bracket character, in strings and
    comments too (an over-count), from where each top-level statement starts."""
    depth = 0
    for match in re.finditer(r"[(\[{]|[)\]}]|\n(?=[^\s#])", text):
        char = match.group()
        if char == "\n":
            depth = 0
        elif char in "([{":
            depth += 1
            if depth > MAX_BRACKETS:
                return False
        else:
            depth = max(depth - 1, 0)
    return True


def _ast_tree(text: str) -> ast.Module | None:
    """Python's tree of a block's text; None where this Python cannot read it (newer syntax)."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _too_deep(text: str) -> bool:
    """Whether libcst must not be handed `text` (see `MAX_CST_DEPTH`)."""
    return _too_deep_tree(text, _ast_tree(text))


def _too_deep_tree(text: str, tree: ast.Module | None) -> bool:
    """`_too_deep`, given Python's tree of `text` (None where it has none): nor is the analysis
    handed a tree built from `ast` as deep."""
    if tree is None:
        return not _shallow_tokens(text)  # newer syntax than this Python's: libcst decides
    return _cst_depth(tree) > MAX_CST_DEPTH


class SourceSyntaxError(Exception):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


def index_source(filename: str, text: str, newer_syntax: bool = True, keep: bool = False) -> SourceFile:
    """Split a file into blocks; raises SourceSyntaxError when Python cannot parse it (nor,
    with `newer_syntax`, libcst, which reads syntax newer than this Python's, several times
    slower: a module of the checked tree an import reaches is read without it). With `keep`,
    the module's `ast` tree is kept for the text's suppressions (`lines.keep_tree`)."""
    try:
        tree = (reparsed(text) if keep else None) or ast.parse(text, filename=filename)
    except SyntaxError as exc:
        # Newer syntax than this Python knows (PEP 695 `def f[T]()`, PEP 701 f-strings):
        # the type parameters of PEP 695 blanked out, `ast` may read it; else libcst's own
        # parser may, unless it is nested deeper than any Python allows (`too many nested
        # parentheses`), which would crash it.
        if newer_syntax:
            erased = without_newer_syntax(text)
            if erased is not None:
                source = _index_tree(filename, text, erased)
                if keep and source.regions is not None:  # its statements are at their rows
                    keep_regions(text, source.regions)
                return source
        fallback = _index_with_libcst(filename, text) if newer_syntax and _shallow_tokens(text) else None
        if fallback is not None:
            return fallback
        raise SourceSyntaxError(
            exc.msg or "invalid syntax", exc.lineno or 1, max((exc.offset or 1) - 1, 0)
        ) from None
    except (ValueError, RecursionError, MemoryError) as exc:  # e.g. NUL bytes
        raise SourceSyntaxError(str(exc), 1, 0) from None
    source = _index_tree(filename, text, tree)
    if keep:
        keep_tree(text, tree, source.regions)
    return source


def _index_tree(filename: str, text: str, tree: ast.Module) -> SourceFile:
    """The blocks of `text`, from its `ast` tree (rows only)."""
    lines = split_lines(text)
    source = SourceFile(filename, text, lines, [], {}, statement_regions(tree))
    any_walrus = ":=" in text  # few files have one
    previous_end = 0
    for at, stmt in enumerate(tree.body):
        start = first_row(stmt)
        end = stmt.end_lineno or start
        walrus = any_walrus and _holds_walrus(lines, start, end)
        if start <= previous_end:
            # Two statements on one line (`import a; import b`): one block.
            block = source.blocks[-1]
            block.end_line = max(block.end_line, end)
            block.kind, block.name = "stmt", None
            block.bound_names = block.bound_names | _bound_names(stmt, walrus)
            previous_end = block.end_line
            continue
        kind: BlockKind = "stmt"
        name: str | None = None
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            kind, name = "def", stmt.name
        elif isinstance(stmt, ast.ClassDef):
            kind, name = "class", stmt.name
        # A top-level statement is not indented, even after a form feed (`col_offset` 1).
        block = Block(source, start, end, 0, kind, name, place=(at,))
        block.bound_names = _bound_names(stmt, walrus)
        if isinstance(stmt, ast.ClassDef):
            block.members = _class_members(source, block, stmt, walrus)
        source.blocks.append(block)
        previous_end = end
    for block in source.blocks:
        for name in block.bound_names:
            source.bindings.setdefault(name, []).append(block)
    return source


def _class_members(source: SourceFile, cls: Block, stmt: ast.ClassDef, walrus: bool) -> list[Block]:
    """The members of a class as blocks, or none when the class cannot be split safely."""
    members: list[Block] = []
    header_end = stmt.lineno
    previous_end = header_end
    for i, member in enumerate(stmt.body):
        start = first_row(member)
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
        block = Block(source, start, end, indent_of(source.lines[start - 1]), kind, name, parent=cls,
                      place=(*cls.place, i))
        block.bound_names = _bound_names(member, walrus and _holds_walrus(source.lines, start, end))
        members.append(block)
        previous_end = end
    return members


def _holds_walrus(lines: list[str], start: int, end: int) -> bool:
    """Whether rows `start..end` (1-based) hold `:=`: whether a statement there may bind with it."""
    return any(":=" in row for row in lines[start - 1 : end])


def _bound_names(stmt: ast.stmt, walrus: bool = True) -> frozenset[str]:
    """Names a module-level statement binds (for lazy lookup of module globals); `walrus`:
    whether its text may hold `:=` (a file without one is not walked for them)."""
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
                if h.name:
                    names.add(h.name)
                for s in h.body:
                    visit(s)

    def named_expressions(node: ast.AST) -> None:
        """`(x := ...)` anywhere the statement evaluates at module level (a comprehension's
        too, which binds in the enclosing scope): not in a def's or lambda's body, nor a class's."""
        pending = [node]
        while pending:
            item = pending.pop()
            if isinstance(item, ast.NamedExpr) and isinstance(item.target, ast.Name):
                names.add(item.target.id)
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                pending.extend([*item.decorator_list, *item.args.defaults,
                                *(d for d in item.args.kw_defaults if d is not None)])
            elif isinstance(item, ast.ClassDef):
                pending.extend([*item.decorator_list, *item.bases, *(k.value for k in item.keywords)])
            elif isinstance(item, ast.Lambda):
                pending.extend([*item.args.defaults, *(d for d in item.args.kw_defaults if d is not None)])
            else:
                pending.extend(ast.iter_child_nodes(item))

    visit(stmt)
    if walrus:
        named_expressions(stmt)
    return frozenset(names)


def _index_with_libcst(filename: str, text: str) -> SourceFile | None:
    """The same index from libcst: slower, used only when `ast` cannot parse the file.

    Line ranges come from the length of each statement's generated code (one codegen pass),
    not from libcst's PositionProvider, which costs several times more on a large file.
    """
    try:
        return _libcst_index(filename, text)
    except (cst.ParserSyntaxError, RecursionError, MemoryError):
        return None  # too deep for its visitors here: as Python says, a syntax error


def _libcst_index(filename: str, text: str) -> SourceFile:
    from mmalint.analysis.scopes import LocalNames

    module = cst.parse_module(_without_form_feeds(text)[0])
    source = SourceFile(filename, text, split_lines(text), [], {})

    def names_of(stmt: cst.CSTNode) -> frozenset[str]:
        # libcst's own (recursive) visit, not `read_only_visit`: a tree too deep for libcst's
        # visitors must fail here, as a syntax error, not later in the analysis.
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
        indent = indent_of(source.lines[start - 1]) if start <= len(source.lines) and parent else 0
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


def is_import_block(block: Block) -> bool:
    """Whether a block is an import statement: its first row says it, whatever the rest holds."""
    first = block.first_line.lstrip()
    return block.kind == "stmt" and first.startswith(("import ", "from "))
