"""libcst trees built from Python's `ast`: the nodes the analysis reads, not the layout.

libcst's parser builds about three nodes for each node of `ast` (whitespace, commas, brackets)
and validates each one; of a cold check of jax's tree it was the largest single cost (1.7 s of
the interpreter's blocks, against 0.07 s for `ast` to parse them). The interpreter, the models
and the rules read a block's semantic fields only: names, values, operators, the shape of
statements. So a block's tree is built here from the `ast` tree its depth check makes
(`source._parse`), each node of the libcst class libcst's parser would have made, with the
same semantic fields, and every layout field at its default. Where a node's text matters
(positions, `Block.code`) the block is parsed with libcst on demand and the two trees are
paired node for node (`pair_nodes`).

Constructs this does not build (`async`, type parameters, syntax newer than this Python's)
raise
`Unsupported`, and the block is parsed by libcst as before. `tests/analysis/test_cst_from_ast.py`
compares the trees with libcst's on every file of the repository's kernels and tests.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import libcst as cst
from libcst._maybe_sentinel import MaybeSentinel

from mmalint.lines import split_lines


class Unsupported(Exception):
    """A construct not built here: the block is parsed by libcst instead."""


_new = object.__new__
_set = object.__setattr__
_MAKERS: dict[type, Callable[..., Any]] = {}


def _maker(cls: type) -> Callable[..., Any]:
    """A constructor of `cls` that sets its slots directly: no `__init__`, no validation (the
    tree is what libcst's parser makes of code `ast` accepted)."""
    defaults: list[tuple[str, object]] = []
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            defaults.append((f.name, f.default))
        elif f.default_factory is not dataclasses.MISSING:
            defaults.append((f.name, f.default_factory()))
        else:
            defaults.append((f.name, None))
    args = ", ".join(f"{name}=_d_{name}" for name, _ in defaults)
    lines = [f"def make({args}):", "    o = _new(_cls)"]
    lines += [f"    _set(o, {name!r}, _tuple({name}) if _type({name}) is _list else {name})" for name, _ in defaults]
    lines.append("    return o")
    namespace: dict[str, Any] = {"_new": _new, "_set": _set, "_cls": cls, "_tuple": tuple, "_type": type,
                                 "_list": list, **{f"_d_{name}": value for name, value in defaults}}
    exec("\n".join(lines), namespace)  # mmalint's own code, made from libcst's field names
    return namespace["make"]


def _mk(cls: type, /, **fields: Any) -> Any:
    make = _MAKERS.get(cls)
    if make is None:
        make = _MAKERS[cls] = _maker(cls)
    return make(**fields)


_BINARY: dict[type, type] = {
    ast.Add: cst.Add, ast.Sub: cst.Subtract, ast.Mult: cst.Multiply, ast.Div: cst.Divide,
    ast.FloorDiv: cst.FloorDivide, ast.Mod: cst.Modulo, ast.Pow: cst.Power, ast.MatMult: cst.MatrixMultiply,
    ast.BitAnd: cst.BitAnd, ast.BitOr: cst.BitOr, ast.BitXor: cst.BitXor, ast.LShift: cst.LeftShift,
    ast.RShift: cst.RightShift,
}
_AUGMENTED: dict[type, type] = {
    ast.Add: cst.AddAssign, ast.Sub: cst.SubtractAssign, ast.Mult: cst.MultiplyAssign,
    ast.Div: cst.DivideAssign, ast.FloorDiv: cst.FloorDivideAssign, ast.Mod: cst.ModuloAssign,
    ast.Pow: cst.PowerAssign, ast.MatMult: cst.MatrixMultiplyAssign, ast.BitAnd: cst.BitAndAssign,
    ast.BitOr: cst.BitOrAssign, ast.BitXor: cst.BitXorAssign, ast.LShift: cst.LeftShiftAssign,
    ast.RShift: cst.RightShiftAssign,
}
_UNARY: dict[type, type] = {ast.UAdd: cst.Plus, ast.USub: cst.Minus, ast.Invert: cst.BitInvert, ast.Not: cst.Not}
_COMPARISON: dict[type, type] = {
    ast.Eq: cst.Equal, ast.NotEq: cst.NotEqual, ast.Lt: cst.LessThan, ast.LtE: cst.LessThanEqual,
    ast.Gt: cst.GreaterThan, ast.GtE: cst.GreaterThanEqual, ast.Is: cst.Is, ast.IsNot: cst.IsNot,
    ast.In: cst.In, ast.NotIn: cst.NotIn,
}
_OPERATORS: dict[type, Any] = {}


def _operator(cls: type) -> Any:
    found = _OPERATORS.get(cls)
    if found is None:
        found = _OPERATORS[cls] = _mk(cls)
    return found


_COMPOUND = (ast.FunctionDef, ast.ClassDef, ast.If, ast.For, ast.While, ast.With, ast.Try,
             ast.AsyncFunctionDef, ast.AsyncFor, ast.AsyncWith, ast.Match, ast.TryStar)


Range = tuple[int, int, int, int]  # `ast`'s (lineno, col_offset, end_lineno, end_col_offset)


def module_from_ast(text: str, tree: ast.Module, shift: int = 0) -> tuple[cst.Module, dict[int, Range]]:
    """The libcst module of `text` (whose `ast` tree is `tree`), or Unsupported; and where in
    `text` each expression of it was written, by the node's id (`source_of`). With a `shift`,
    the tree's rows are the text's plus `shift` (a block's statements, read from the tree of
    its module: `source.Block`); the positions kept are the text's all the same."""
    builder = _Builder(text, shift=shift)
    return builder.module(tree), builder.ranges


class _Builder:
    def __init__(self, text: str, ranges: dict[int, Range] | None = None, shift: int = 0) -> None:
        self.lines = split_lines(text)  # rows as `ast` counts them (not at a form feed)
        self.ranges: dict[int, Range] = {} if ranges is None else ranges
        self.shift = shift  # a node's row, less this, is the text's

    def _row(self, row: int) -> str:
        return self.lines[row - 1 - self.shift]

    def _column(self, row: int, offset: int) -> int:
        return _character_column(self._row(row), offset)

    def segment(self, node: Any) -> str:
        first, last = node.lineno, node.end_lineno
        start, end = self._column(first, node.col_offset), self._column(last, node.end_col_offset)
        return _between(self.lines, first - self.shift, start, last - self.shift, end)

    # ---------------------------------------------------------------- statements

    def module(self, tree: ast.Module) -> Any:
        return _mk(cst.Module, body=self.statements(tree.body))

    def statements(self, stmts: Sequence[ast.stmt]) -> list[Any]:
        """Compound statements as they are; simple ones one line each (`a; b` is one line)."""
        out: list[Any] = []
        line: list[Any] = []
        last_row = -1
        for stmt in stmts:
            if isinstance(stmt, _COMPOUND):
                if line:
                    out.append(_mk(cst.SimpleStatementLine, body=line))
                    line = []
                out.append(self.compound(stmt))
                last_row = -1
                continue
            small = self.small(stmt)
            if line and stmt.lineno == last_row:
                line.append(small)
            else:
                if line:
                    out.append(_mk(cst.SimpleStatementLine, body=line))
                line = [small]
            last_row = stmt.end_lineno or stmt.lineno
        if line:
            out.append(_mk(cst.SimpleStatementLine, body=line))
        return out

    def suite(self, stmts: Sequence[ast.stmt]) -> Any:
        """A body on its header's row (`if x: return`) or indented below it."""
        first = stmts[0]
        before = self._row(first.lineno)[: self._column(first.lineno, first.col_offset)]
        if before.strip():
            if any(isinstance(s, _COMPOUND) for s in stmts):
                raise Unsupported("a compound statement in a one-row suite")
            return _mk(cst.SimpleStatementSuite, body=[self.small(s) for s in stmts])
        return _mk(cst.IndentedBlock, body=self.statements(stmts))

    def small(self, stmt: Any) -> Any:  # one case per statement kind
        kind = type(stmt)
        if kind is ast.Expr:
            return _mk(cst.Expr, value=self.expr(stmt.value))
        if kind is ast.Assign:
            return _mk(cst.Assign, targets=[_mk(cst.AssignTarget, target=self.expr(t)) for t in stmt.targets],
                       value=self.expr(stmt.value))
        if kind is ast.AugAssign:
            return _mk(cst.AugAssign, target=self.expr(stmt.target), operator=_operator(_AUGMENTED[type(stmt.op)]),
                       value=self.expr(stmt.value))
        if kind is ast.AnnAssign:
            return _mk(cst.AnnAssign, target=self.expr(stmt.target), annotation=self.annotation(stmt.annotation),
                       value=self.optional(stmt.value))
        if kind is ast.Return:
            return _mk(cst.Return, value=self.optional(stmt.value))
        if kind is ast.Pass:
            return _mk(cst.Pass)
        if kind is ast.Break:
            return _mk(cst.Break)
        if kind is ast.Continue:
            return _mk(cst.Continue)
        if kind is ast.Raise:
            cause = _mk(cst.From, item=self.expr(stmt.cause)) if stmt.cause is not None else None
            return _mk(cst.Raise, exc=self.optional(stmt.exc), cause=cause)
        if kind is ast.Assert:
            return _mk(cst.Assert, test=self.expr(stmt.test), msg=self.optional(stmt.msg))
        if kind is ast.Global or kind is ast.Nonlocal:
            names = [_mk(cst.NameItem, name=_mk(cst.Name, value=n)) for n in stmt.names]
            return _mk(cst.Global if kind is ast.Global else cst.Nonlocal, names=names)
        if kind is ast.Import:
            return _mk(cst.Import, names=[self.alias(a) for a in stmt.names])
        if kind is ast.ImportFrom:
            star = len(stmt.names) == 1 and stmt.names[0].name == "*"
            return _mk(cst.ImportFrom, module=self.dotted(stmt.module) if stmt.module else None,
                       names=_mk(cst.ImportStar) if star else [self.alias(a) for a in stmt.names],
                       relative=[_mk(cst.Dot) for _ in range(stmt.level or 0)])
        if kind is ast.Delete:
            targets = [self.expr(t) for t in stmt.targets]
            target = targets[0] if len(targets) == 1 else _mk(
                cst.Tuple, elements=[_mk(cst.Element, value=t) for t in targets])
            return _mk(cst.Del, target=target)
        raise Unsupported(kind.__name__)

    def alias(self, alias: ast.alias) -> Any:
        asname = _mk(cst.AsName, name=_mk(cst.Name, value=alias.asname)) if alias.asname else None
        return _mk(cst.ImportAlias, name=self.dotted(alias.name), asname=asname)

    def dotted(self, name: str) -> Any:
        parts = name.split(".")
        node = _mk(cst.Name, value=parts[0])
        for part in parts[1:]:
            node = _mk(cst.Attribute, value=node, attr=_mk(cst.Name, value=part))
        return node

    def annotation(self, expr: ast.expr) -> Any:
        return _mk(cst.Annotation, annotation=self.expr(expr))

    def optional(self, expr: ast.expr | None) -> Any:
        return self.expr(expr) if expr is not None else None

    def decorators(self, stmt: Any) -> list[Any]:
        return [_mk(cst.Decorator, decorator=self.expr(d)) for d in stmt.decorator_list]

    def orelse(self, stmts: Sequence[ast.stmt]) -> Any:
        return _mk(cst.Else, body=self.suite(stmts)) if stmts else None

    def compound(self, stmt: Any) -> Any:
        kind = type(stmt)
        if getattr(stmt, "type_params", None):
            raise Unsupported("type parameters")  # `def f[T]()`, `class A[T]:` (Python 3.12's ast reads them)
        if kind is ast.FunctionDef:
            returns = self.annotation(stmt.returns) if stmt.returns is not None else None
            return _mk(cst.FunctionDef, name=_mk(cst.Name, value=stmt.name), params=self.params(stmt.args),
                       body=self.suite(stmt.body), decorators=self.decorators(stmt), returns=returns)
        if kind is ast.ClassDef:
            bases = [_mk(cst.Arg, value=self.expr(b)) for b in stmt.bases]
            keywords = [
                _mk(cst.Arg, value=self.expr(k.value), keyword=_mk(cst.Name, value=k.arg)) if k.arg
                else _mk(cst.Arg, value=self.expr(k.value), star="**")
                for k in stmt.keywords
            ]
            return _mk(cst.ClassDef, name=_mk(cst.Name, value=stmt.name), body=self.suite(stmt.body), bases=bases,
                       keywords=keywords, decorators=self.decorators(stmt))
        if kind is ast.If:
            return self.if_(stmt)
        if kind is ast.For:
            return _mk(cst.For, target=self.expr(stmt.target), iter=self.expr(stmt.iter),
                       body=self.suite(stmt.body), orelse=self.orelse(stmt.orelse))
        if kind is ast.While:
            return _mk(cst.While, test=self.expr(stmt.test), body=self.suite(stmt.body),
                       orelse=self.orelse(stmt.orelse))
        if kind is ast.With:
            items = [
                _mk(cst.WithItem, item=self.expr(i.context_expr),
                    asname=_mk(cst.AsName, name=self.expr(i.optional_vars)) if i.optional_vars is not None else None)
                for i in stmt.items
            ]
            return _mk(cst.With, items=items, body=self.suite(stmt.body))
        if kind is ast.Try:
            handlers = [
                _mk(cst.ExceptHandler, body=self.suite(h.body), type=self.optional(h.type),
                    name=_mk(cst.AsName, name=_mk(cst.Name, value=h.name)) if h.name else None)
                for h in stmt.handlers
            ]
            final = _mk(cst.Finally, body=self.suite(stmt.finalbody)) if stmt.finalbody else None
            return _mk(cst.Try, body=self.suite(stmt.body), handlers=handlers, orelse=self.orelse(stmt.orelse),
                       finalbody=final)
        if kind is ast.Match:
            cases = [_mk(cst.MatchCase, pattern=self.pattern(c.pattern), body=self.suite(c.body),
                         guard=self.optional(c.guard)) for c in stmt.cases]
            return _mk(cst.Match, subject=self.expr(stmt.subject), cases=cases)
        raise Unsupported(kind.__name__)

    def pattern(self, pattern: Any) -> Any:  # one case per pattern kind
        kind = type(pattern)
        if kind is ast.MatchAs:
            return _mk(cst.MatchAs, pattern=self.pattern(pattern.pattern) if pattern.pattern is not None else None,
                       name=_mk(cst.Name, value=pattern.name) if pattern.name is not None else None)
        if kind is ast.MatchValue:
            return _mk(cst.MatchValue, value=self.expr(pattern.value))
        if kind is ast.MatchSingleton:
            return _mk(cst.MatchSingleton, value=_mk(cst.Name, value=repr(pattern.value)))
        if kind is ast.MatchOr:
            return _mk(cst.MatchOr, patterns=[_mk(cst.MatchOrElement, pattern=self.pattern(p)) for p in pattern.patterns])
        if kind is ast.MatchSequence:
            # libcst's MatchTuple is a sequence in parentheses of its own (`(a, b)`, not
            # `(a), b`); `[a, b]` and the bare `a, b` are its MatchList.
            cls = cst.MatchTuple if _parenthesized(self.segment(pattern)) else cst.MatchList
            return _mk(cls, patterns=[self.sequence_element(p) for p in pattern.patterns])
        if kind is ast.MatchMapping:
            elements = [_mk(cst.MatchMappingElement, key=self.expr(k), pattern=self.pattern(p))
                        for k, p in zip(pattern.keys, pattern.patterns, strict=True)]
            rest = _mk(cst.Name, value=pattern.rest) if pattern.rest is not None else None
            return _mk(cst.MatchMapping, elements=elements, rest=rest)
        if kind is ast.MatchClass:
            keywords = [_mk(cst.MatchKeywordElement, key=_mk(cst.Name, value=a), pattern=self.pattern(p))
                        for a, p in zip(pattern.kwd_attrs, pattern.kwd_patterns, strict=True)]
            return _mk(cst.MatchClass, cls=self.expr(pattern.cls),
                       patterns=[_mk(cst.MatchSequenceElement, value=self.pattern(p)) for p in pattern.patterns],
                       kwds=keywords)
        raise Unsupported(kind.__name__)

    def sequence_element(self, pattern: Any) -> Any:
        """An element of a sequence pattern: `*rest` (`*_` names nothing), or a pattern."""
        if type(pattern) is ast.MatchStar:
            return _mk(cst.MatchStar, name=_mk(cst.Name, value=pattern.name) if pattern.name is not None else None)
        return _mk(cst.MatchSequenceElement, value=self.pattern(pattern))

    def if_(self, stmt: ast.If) -> Any:
        orelse = None
        if stmt.orelse:
            first = stmt.orelse[0]
            row = self._row(first.lineno)
            if len(stmt.orelse) == 1 and type(first) is ast.If and row.startswith(
                    "elif", self._column(first.lineno, first.col_offset)):
                orelse = self.if_(first)  # `elif`, not `else:` holding an `if`
            else:
                orelse = self.orelse(stmt.orelse)
        return _mk(cst.If, test=self.expr(stmt.test), body=self.suite(stmt.body), orelse=orelse)

    def params(self, args: ast.arguments) -> Any:
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
        defaults += args.defaults
        params = [self.param(p, d) for p, d in zip(positional, defaults, strict=True)]
        only = len(args.posonlyargs)
        star_arg: Any = MaybeSentinel.DEFAULT
        if args.vararg is not None:
            star_arg = self.param(args.vararg, None, "*")
        elif args.kwonlyargs:
            star_arg = _mk(cst.ParamStar)
        kwonly = [self.param(p, d) for p, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
        star_kwarg = self.param(args.kwarg, None, "**") if args.kwarg is not None else None
        return _mk(cst.Parameters, params=params[only:], star_arg=star_arg, kwonly_params=kwonly,
                   star_kwarg=star_kwarg, posonly_params=params[:only],
                   posonly_ind=_mk(cst.ParamSlash) if only else MaybeSentinel.DEFAULT)

    def param(self, arg: ast.arg, default: ast.expr | None, star: str = "") -> Any:
        annotation = self.annotation(arg.annotation) if arg.annotation is not None else None
        return _mk(cst.Param, name=_mk(cst.Name, value=arg.arg), annotation=annotation,
                   default=self.optional(default), star=star)

    # ---------------------------------------------------------------- expressions

    def expr(self, expr: Any) -> Any:
        node = self._expr(expr)
        if type(expr) is not ast.GeneratorExp:  # `f(x for x in y)`: its position holds the call's parentheses
            shift = self.shift
            self.ranges[id(node)] = (expr.lineno - shift, expr.col_offset, expr.end_lineno - shift, expr.end_col_offset)
        return node

    def _expr(self, expr: Any) -> Any:  # one case per expression kind
        kind = type(expr)
        if kind is ast.Name:
            return _mk(cst.Name, value=expr.id)
        if kind is ast.Attribute:
            return _mk(cst.Attribute, value=self.expr(expr.value), attr=_mk(cst.Name, value=expr.attr))
        if kind is ast.Call:
            return _mk(cst.Call, func=self.expr(expr.func), args=self.arguments(expr))
        if kind is ast.Constant:
            return self.constant(expr)
        if kind is ast.JoinedStr:
            return self.strings(self.segment(expr))
        if kind is ast.Tuple or kind is ast.List or kind is ast.Set:
            cls = cst.Tuple if kind is ast.Tuple else cst.List if kind is ast.List else cst.Set
            return _mk(cls, elements=[self.element(e) for e in expr.elts])
        if kind is ast.Dict:
            elements = [
                _mk(cst.StarredDictElement, value=self.expr(v)) if k is None
                else _mk(cst.DictElement, key=self.expr(k), value=self.expr(v))
                for k, v in zip(expr.keys, expr.values, strict=True)
            ]
            return _mk(cst.Dict, elements=elements)
        if kind is ast.BinOp:
            return _mk(cst.BinaryOperation, left=self.expr(expr.left), operator=_operator(_BINARY[type(expr.op)]),
                       right=self.expr(expr.right))
        if kind is ast.UnaryOp:
            return _mk(cst.UnaryOperation, operator=_operator(_UNARY[type(expr.op)]),
                       expression=self.expr(expr.operand))
        if kind is ast.BoolOp:
            operator = _operator(cst.And if type(expr.op) is ast.And else cst.Or)
            node = self.expr(expr.values[0])
            for value in expr.values[1:]:  # `a and b and c` nests to the left
                node = _mk(cst.BooleanOperation, left=node, operator=operator, right=self.expr(value))
            return node
        if kind is ast.Compare:
            targets = [
                _mk(cst.ComparisonTarget, operator=_operator(_COMPARISON[type(op)]), comparator=self.expr(c))
                for op, c in zip(expr.ops, expr.comparators, strict=True)
            ]
            return _mk(cst.Comparison, left=self.expr(expr.left), comparisons=targets)
        if kind is ast.IfExp:
            return _mk(cst.IfExp, test=self.expr(expr.test), body=self.expr(expr.body), orelse=self.expr(expr.orelse))
        if kind is ast.Lambda:
            return _mk(cst.Lambda, params=self.params(expr.args), body=self.expr(expr.body))
        if kind is ast.Subscript:
            index = expr.slice
            if type(index) is ast.Tuple and index.elts and not _parenthesized(self.segment(index)):
                elements = [_mk(cst.SubscriptElement, slice=self.index(e)) for e in index.elts]  # `a[i, j]`
            else:
                elements = [_mk(cst.SubscriptElement, slice=self.index(index))]
            return _mk(cst.Subscript, value=self.expr(expr.value), slice=elements)
        if kind is ast.Starred:
            return _mk(cst.StarredElement, value=self.expr(expr.value))
        if kind is ast.NamedExpr:
            return _mk(cst.NamedExpr, target=self.expr(expr.target), value=self.expr(expr.value))
        if kind is ast.ListComp or kind is ast.SetComp or kind is ast.GeneratorExp:
            comp: type = cst.ListComp if kind is ast.ListComp else cst.SetComp if kind is ast.SetComp else cst.GeneratorExp
            return _mk(comp, elt=self.expr(expr.elt), for_in=self.comprehension(expr.generators))
        if kind is ast.DictComp:
            return _mk(cst.DictComp, key=self.expr(expr.key), value=self.expr(expr.value),
                       for_in=self.comprehension(expr.generators))
        if kind is ast.Yield:
            return _mk(cst.Yield, value=self.optional(expr.value))
        if kind is ast.YieldFrom:
            return _mk(cst.Yield, value=_mk(cst.From, item=self.expr(expr.value)))
        raise Unsupported(kind.__name__)

    def arguments(self, call: ast.Call) -> list[Any]:
        """A call's arguments in the order written (`ast` keeps keywords apart)."""
        written: list[tuple[int, int, Any]] = [(a.lineno, a.col_offset, a) for a in call.args]
        if call.keywords:
            written += [(k.lineno, k.col_offset, k) for k in call.keywords]
            written.sort(key=lambda item: (item[0], item[1]))
        found = []
        for _, _, arg in written:
            if type(arg) is ast.keyword:
                if arg.arg is None:
                    found.append(_mk(cst.Arg, value=self.expr(arg.value), star="**"))
                else:
                    found.append(_mk(cst.Arg, value=self.expr(arg.value), keyword=_mk(cst.Name, value=arg.arg)))
            elif type(arg) is ast.Starred:
                found.append(_mk(cst.Arg, value=self.expr(arg.value), star="*"))
            else:
                found.append(_mk(cst.Arg, value=self.expr(arg)))
        return found

    def constant(self, expr: ast.Constant) -> Any:
        value = expr.value
        if value is True or value is False or value is None:
            return _mk(cst.Name, value=repr(value))
        if value is Ellipsis:
            return _mk(cst.Ellipsis)
        if isinstance(value, str | bytes):
            return self.strings(self.segment(expr))
        text = self.segment(expr)
        if isinstance(value, int):
            return _mk(cst.Integer, value=text)
        if isinstance(value, float):
            return _mk(cst.Float, value=text)
        if isinstance(value, complex):
            return _mk(cst.Imaginary, value=text)
        raise Unsupported(type(value).__name__)

    def strings(self, text: str) -> Any:
        """A string expression: one literal, or implicitly joined ones (nested to the right)."""
        nodes = [self.string(literal) for literal in _string_literals(text)]
        node = nodes[-1]
        for left in reversed(nodes[:-1]):
            node = _mk(cst.ConcatenatedString, left=left, right=node)
        return node

    def string(self, literal: str) -> Any:
        at = 0
        while literal[at] not in "'\"":
            at += 1
        prefix = literal[:at]
        if "f" not in prefix.lower():
            return _mk(cst.SimpleString, value=literal)
        quote = literal[at : at + 3] if literal.startswith(literal[at] * 3, at) else literal[at]
        body = literal[at + len(quote) : len(literal) - len(quote)]
        parts, end = _fstring_parts(body, 0, in_spec=False)
        if end != len(body):
            raise Unsupported("an f-string's end")
        return _mk(cst.FormattedString, parts=[self.fstring_part(p) for p in parts], start=prefix + quote, end=quote)

    def fstring_part(self, part: str | tuple[str, str | None, list[Any] | None, bool]) -> Any:
        if isinstance(part, str):
            return _mk(cst.FormattedStringText, value=part)
        text, conversion, spec, equal = part
        wrapped = "(" + text + ")"
        try:
            inner = ast.parse(wrapped, mode="eval").body
        except SyntaxError as exc:
            raise Unsupported("an f-string's expression") from exc
        # Its own text's positions are not the block's: none are kept.
        return _mk(cst.FormattedStringExpression, expression=_Builder(wrapped, {}).expr(inner), conversion=conversion,
                   format_spec=[self.fstring_part(p) for p in spec] if spec is not None else None,
                   equal=_mk(cst.AssignEqual) if equal else None)

    def element(self, expr: ast.expr) -> Any:
        if type(expr) is ast.Starred:
            return _mk(cst.StarredElement, value=self.expr(expr.value))
        return _mk(cst.Element, value=self.expr(expr))

    def index(self, expr: Any) -> Any:
        if type(expr) is ast.Slice:
            return _mk(cst.Slice, lower=self.optional(expr.lower), upper=self.optional(expr.upper),
                       step=self.optional(expr.step))
        if type(expr) is ast.Starred:
            return _mk(cst.Index, value=self.expr(expr.value), star="*")
        return _mk(cst.Index, value=self.expr(expr))

    def comprehension(self, generators: Sequence[ast.comprehension]) -> Any:
        node = None
        for generator in reversed(generators):
            if generator.is_async:
                raise Unsupported("async comprehension")
            node = _mk(cst.CompFor, target=self.expr(generator.target), iter=self.expr(generator.iter),
                       ifs=[_mk(cst.CompIf, test=self.expr(i)) for i in generator.ifs], inner_for_in=node)
        return node


# ---------------------------------------------------------------- the text of strings


def _skip_string(text: str, at: int, quote: str, fstring: bool) -> int:
    """The index just past the literal whose body starts at `at` and ends with `quote`
    (in an f-string, quotes inside `{...}` belong to the expressions)."""
    depth = 0
    n = len(text)
    while at < n:
        char = text[at]
        if char == "\\":
            at += 2
            continue
        if fstring and char == "{":
            if depth == 0 and text.startswith("{{", at):
                at += 2
                continue
            depth += 1
        elif fstring and char == "}" and depth > 0:
            depth -= 1
        elif depth == 0 and text.startswith(quote, at):
            return at + len(quote)
        at += 1
    raise Unsupported("an unterminated string")


def _string_literals(text: str) -> list[str]:
    """The literals of a string expression's source (`"a" f"b{c}"`, across rows in brackets)."""
    found: list[str] = []
    at, n = 0, len(text)
    while at < n:
        char = text[at]
        if char in " \t\n\r\f()\\":
            at += 1
            continue
        if char == "#":
            newline = text.find("\n", at)
            at = n if newline < 0 else newline
            continue
        start = at
        while at < n and text[at] in "rRbBuUfF":
            at += 1
        if at >= n or text[at] not in "'\"":
            raise Unsupported("a string expression")
        quote = text[at] * 3 if text.startswith(text[at] * 3, at) else text[at]
        at = _skip_string(text, at + len(quote), quote, "f" in text[start:at].lower())
        found.append(text[start:at])
    if not found:
        raise Unsupported("an empty string expression")
    return found


FStringPart = str | tuple[str, str | None, list[Any] | None, bool]


def _fstring_parts(body: str, at: int, in_spec: bool) -> tuple[list[FStringPart], int]:
    """The parts of an f-string's body from `at`, libcst's way: texts (with their `{{`) and
    (expression, conversion, format spec, `=`); a format spec ends at its `}`."""
    parts: list[FStringPart] = []
    text_start = at
    n = len(body)
    while at < n:
        char = body[at]
        if char == "{":
            if body.startswith("{{", at):
                at += 2
                continue
            if at > text_start:
                parts.append(body[text_start:at])
            at, part = _fstring_expression(body, at + 1)
            parts.append(part)
            text_start = at
            continue
        if char == "}":
            if in_spec:
                break
            at += 2 if body.startswith("}}", at) else 1
            continue
        at += 2 if char == "\\" else 1
    if at > text_start:
        parts.append(body[text_start:at])
    return parts, at


def _past_quoted(text: str, at: int) -> int:
    """The index just past the string literal whose opening quote is at `at` (its end, when it
    is not closed)."""
    quote = text[at] * 3 if text.startswith(text[at] * 3, at) else text[at]
    at += len(quote)
    n = len(text)
    while at < n:
        if text[at] == "\\":
            at += 2
        elif text.startswith(quote, at):
            return at + len(quote)
        else:
            at += 1
    return n


def _fstring_expression(body: str, at: int) -> tuple[int, FStringPart]:
    start, depth, n = at, 0, len(body)
    while at < n:
        char = body[at]
        if char in "'\"":
            at = _past_quoted(body, at)
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and _ends_expression(body, at):
            break
        at += 1
    text = body[start:at]
    equal = at < n and body[at] == "="
    if equal:
        at += 1
        while at < n and body[at] == " ":
            at += 1
    conversion = None
    if at < n and body[at] == "!":
        conversion = body[at + 1 : at + 2]
        at += 2
    spec = None
    if at < n and body[at] == ":":
        spec, at = _fstring_parts(body, at + 1, in_spec=True)
    if at >= n or body[at] != "}":
        raise Unsupported("an f-string's expression")
    return at + 1, (text, conversion, spec, equal)


def _ends_expression(body: str, at: int) -> bool:
    """Whether an f-string's expression ends at `at` (at depth 0): its `!r`, `:spec` or `=`."""
    char = body[at]
    if char == "!":
        return not body.startswith("!=", at)
    if char == ":":
        return True
    # `{x=}`, `{x = }`: what follows the `=` (past spaces) ends the expression.
    return char == "=" and body[at + 1 :].lstrip(" ")[:1] in ("}", "!", ":") and body[at - 1] not in "=!<>"


def _parenthesized(text: str) -> bool:
    """Whether an expression's source is one parenthesized whole: `(a, b)`, not `(a) + b`."""
    if not text.startswith("("):
        return False
    depth, at, n = 0, 0, len(text)
    end = len(text.rstrip()) - 1
    while at < n:
        char = text[at]
        if char in "'\"":
            at = _past_quoted(text, at)
            continue
        if char == "#":
            newline = text.find("\n", at)
            at = n if newline < 0 else newline
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return at == end
        at += 1
    return False


def source_of(lines: Sequence[str], where: Range) -> str | None:
    """The text of an expression written at `where` in `lines`, as libcst's `code_for_node`
    gives it; None when that needs libcst: an expression over several rows (libcst prints the
    later ones indented from its block), or one that parentheses around it may belong to
    (`(x)`: libcst prints them, `ast`'s position leaves them out), which only what is beside it
    on its row rules out."""
    first, start, last, end = where
    if first != last:
        return None  # libcst prints a node's later rows indented from its block, not as written
    line = lines[first - 1]
    start, end = _character_column(line, start), _character_column(line, end)
    before = line[:start].rstrip(" \t")
    after = line[end:].lstrip(" \t")
    if not before.strip() or after[:1] in ("", "\n", "\r", "\\", "#"):
        return None  # what is around it is on another row
    if before.endswith("(") and after.startswith(")"):
        return None
    return line[start:end]


def position_of(lines: Sequence[str], where: Range, is_tuple: bool = False) -> tuple[int, int, int, int] | None:
    """libcst's position of an expression written at `where` in `lines` (rows from 1, columns
    in characters from 0): `ast`'s, which leaves parentheses around an expression out as
    libcst's does, but for a tuple's own (`(1, 2)`); None for a tuple that may have some."""
    first, start, last, end = where
    if not (0 < first <= last <= len(lines)):
        return None
    start, end = _character_column(lines[first - 1], start), _character_column(lines[last - 1], end)
    if is_tuple and lines[first - 1][start : start + 1] == "(":
        return None
    return first, start, last, end


def flat_source_of(lines: Sequence[str], where: Range) -> str | None:
    """The text of an expression written at `where` in `lines` with its whitespace runs made
    single spaces, as it is of libcst's `code_for_node` (which indents its later rows from its
    block's); None where parentheses around it may be its own (libcst prints them, `ast`'s
    position leaves them out) or a row before it that may be a comment leaves that open."""
    at = position_of(lines, where)
    if at is None:
        return None
    first, start, last, end = at
    before = _code_before(lines, first, start)
    if before is None or (before == "(" and _code_after(lines, last, end) == ")"):
        return None
    return " ".join(_between(lines, first, start, last, end).split())


def _between(lines: Sequence[str], first: int, start: int, last: int, end: int) -> str:
    """The text from row `first`, column `start` to row `last`, column `end` (characters)."""
    if first == last:
        return lines[first - 1][start:end]
    return lines[first - 1][start:] + "".join(lines[first:last - 1]) + lines[last - 1][:end]


_BLANK = " \t\f\r\n"


def _code_before(lines: Sequence[str], row: int, column: int) -> str | None:
    """The last character of the token before the one at `row`, `column` ("" at the start):
    on its row, the last one before it; on a row above, that row's last, unless the row holds
    a `#` (a comment's, or a string's: no tokenizer here tells them apart)."""
    rest = lines[row - 1][:column].rstrip(_BLANK)
    while not rest:
        row -= 1
        if row < 1:
            return ""
        rest = lines[row - 1].rstrip(_BLANK)
        if "#" in rest:
            return None
        if rest.endswith("\\"):  # a continued row: what is before the backslash
            rest = rest[:-1].rstrip(_BLANK)
    return rest[-1]


def _code_after(lines: Sequence[str], row: int, column: int) -> str:
    """The first character of the token after an expression ending at `row`, `column` ("" at
    the end): between two tokens, a `#` starts a comment and a backslash continues the row."""
    rest = lines[row - 1][column:]
    while True:
        rest = rest.lstrip(_BLANK)
        if rest and rest[0] not in "#\\":
            return rest[0]
        row += 1
        if row > len(lines):
            return ""
        rest = lines[row - 1]


def _character_column(line: str, offset: int) -> int:
    """The character column of `ast`'s UTF-8 byte offset into `line`."""
    if line.isascii():
        return offset
    return len(line.encode("utf-8")[:offset].decode("utf-8", "replace"))


# ---------------------------------------------------------------- pairing with libcst's tree

# Fields of layout (whitespace, comments, punctuation, brackets): neither built here, nor
# compared, nor walked for the names a scope binds (`scopes.read_only_visit`).
LAYOUT_FIELDS = frozenset({
    "lpar", "rpar", "comma", "leading_lines", "lines_after_decorators", "header", "footer", "semicolon",
    "newline", "trailing_whitespace", "equal", "colon", "first_colon", "second_colon", "lbracket",
    "rbracket", "lbrace", "rbrace", "default_indent", "default_newline", "has_trailing_newline", "encoding",
    "indent", "dot", "leading_whitespace", "separator", "trailing_comma",
})
_FIELDS: dict[type, tuple[str, ...]] = {}


def semantic_fields(kind: type) -> tuple[str, ...]:
    """The fields of a libcst node class that are not its layout."""
    found = _FIELDS.get(kind)
    if found is None:
        found = _FIELDS[kind] = tuple(
            f.name for f in dataclasses.fields(kind)
            if f.name not in LAYOUT_FIELDS and not f.name.startswith("whitespace")
        )
    return found


def differences(built: object, parsed: object, path: str = "") -> Iterator[str]:
    """Where two trees differ in a node's class or in a field the analysis reads."""
    if type(built) is not type(parsed):
        yield f"{path}: {type(built).__name__} != {type(parsed).__name__}"
        return
    if isinstance(built, cst.CSTNode):
        for name in semantic_fields(type(built)):
            yield from differences(getattr(built, name), getattr(parsed, name), f"{path}.{type(built).__name__}.{name}")
    elif isinstance(built, tuple | list):
        assert isinstance(parsed, tuple | list)
        if len(built) != len(parsed):
            yield f"{path}: {len(built)} items != {len(parsed)}"
            return
        for i, (a, b) in enumerate(zip(built, parsed, strict=True)):
            yield from differences(a, b, f"{path}[{i}]")
    elif built != parsed:
        yield f"{path}: {built!r} != {parsed!r}"


def pair_nodes(built: cst.CSTNode, parsed: cst.CSTNode) -> dict[int, cst.CSTNode] | None:
    """Each node of `built` (by id) and its twin in libcst's tree of the same text; None when
    the trees differ (the built one was wrong: its block's positions are not to be trusted)."""
    pairs: dict[int, cst.CSTNode] = {}
    todo: list[tuple[object, object]] = [(built, parsed)]
    while todo:
        a, b = todo.pop()
        if type(a) is not type(b):
            return None
        if isinstance(a, cst.CSTNode):
            assert isinstance(b, cst.CSTNode)
            pairs[id(a)] = b
            todo.extend((getattr(a, name), getattr(b, name)) for name in semantic_fields(type(a)))
        elif isinstance(a, tuple | list):
            assert isinstance(b, tuple | list)
            if len(a) != len(b):
                return None
            todo.extend(zip(a, b, strict=True))
        elif a != b:
            return None
    return pairs
