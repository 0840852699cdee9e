"""Expressions: names, literals, containers, operators, comprehensions, comparisons."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast, get_args

import libcst as cst

from mmalint.analysis import bounds
from mmalint.analysis.interpreter.core import (
    MAX_UNROLL,
    Frame,
    Machine,
)
from mmalint.analysis.source import Block
from mmalint.analysis.values import (
    FALSE,
    FALSY,
    NONE,
    TRUE,
    TRUTHY,
    UNKNOWN,
    Api,
    ClassVal,
    Const,
    DictVal,
    Func,
    MapVal,
    Origin,
    ProjectModule,
    SetVal,
    TupleVal,
    Unknown,
    Value,
    dict_entries,
    join,
)

_KEYWORD_CONSTANTS: dict[str, Value] = {"True": TRUE, "False": FALSE, "None": NONE}

# Literal nodes (libcst has no subclasses of them): a set test, not `isinstance` against
# libcst's ABCs: 0.04 against 1.5 microseconds, on the hottest line of the run.
_Literal = cst.Integer | cst.Float | cst.Imaginary | cst.SimpleString | cst.ConcatenatedString
_LITERALS = frozenset(get_args(_Literal))

# Values that keep no origin of their own. A tuple, not `Unknown | Func | ClassVal`: that
# expression builds a union each time it runs, and `isinstance` reads a tuple faster.
_NO_ORIGIN = (Unknown, Func, ClassVal)

_BIN_OPS: dict[type, str] = {
    cst.Add: "+",
    cst.Subtract: "-",
    cst.Multiply: "*",
    cst.Divide: "/",
    cst.FloorDivide: "//",
    cst.Modulo: "%",
    cst.Power: "**",
    cst.MatrixMultiply: "@",
    cst.BitAnd: "&",
    cst.BitOr: "|",
    cst.BitXor: "^",
    cst.LeftShift: "<<",
    cst.RightShift: ">>",
}


class Expressions(Machine):
    """Evaluating expressions to abstract values."""

    def eval(self, node: cst.BaseExpression, frame: Frame, block: Block) -> Value:
        self.budget.step()
        value = self._eval(node, frame, block)
        kind = type(value)  # the containers have no subclasses
        if (kind is TupleVal or kind is DictVal or kind is MapVal or kind is SetVal) and (
            value.size > bounds.MAX_SIZE or value.depth > bounds.MAX_DEPTH  # type: ignore[attr-defined]
        ):
            return UNKNOWN  # `t = (t, t)` in a loop: no fact about a kernel is that large
        if value.origin is None and not isinstance(value, _NO_ORIGIN):
            try:  # noqa: SIM105  (a context manager per expression cost a tenth of the run)
                value = value.with_origin(Origin(block, node))
            except TypeError:
                pass
        return value

    def _eval(self, node: cst.BaseExpression, frame: Frame, block: Block) -> Value:
        if type(node) is cst.Name:
            keyword = _KEYWORD_CONSTANTS.get(node.value)
            return keyword if keyword is not None else frame.lookup(node.value)
        if type(node) is cst.Attribute:
            return self.getattr(self.eval(node.value, frame, block), node.attr.value, node)
        if type(node) is cst.Call:
            return self.eval_call(node, frame, block)
        if type(node) in _LITERALS:
            # libcst evaluates literals with ast.literal_eval: worth doing once per node.
            cached = self._literals.get(id(node))
            if cached is None and type(node) is cst.Integer and node.value.isascii() and node.value.isdigit() and (
                    node.value == "0" or node.value[0] != "0"):
                cached = self._literals[id(node)] = Const(int(node.value))  # `128`: no compile needed
            if cached is None:
                try:
                    evaluated = cast(_Literal, node).evaluated_value
                    cached = Const(evaluated) if evaluated is not None or not isinstance(
                        node, cst.ConcatenatedString) else UNKNOWN
                except (ValueError, SyntaxError, RecursionError):  # 1,000 implicitly joined parts
                    cached = UNKNOWN
                self._literals[id(node)] = cached
            return cached
        if type(node) is cst.Tuple or type(node) is cst.List:
            items = self._eval_elements(node.elements, frame, block)
            if items is None:
                return UNKNOWN
            return TupleVal(tuple(items), type(node) is cst.List)
        if type(node) is cst.Set:
            items = self._eval_elements(node.elements, frame, block)
            return SetVal(tuple(items)) if items is not None else UNKNOWN
        if type(node) is cst.Dict:
            entries: list[tuple[Value, Value]] = []
            for element in node.elements:
                if not isinstance(element, cst.DictElement):  # `**other`: its entries, in order
                    other = self.eval(element.value, frame, block)
                    if not isinstance(other, DictVal | MapVal):
                        return UNKNOWN
                    entries.extend(dict_entries(other))
                    continue
                key = self.eval(element.key, frame, block)
                if not key.known:
                    return UNKNOWN
                entries.append((key, self.eval(element.value, frame, block)))
            return self.mapping(entries)
        if type(node) is cst.BinaryOperation:
            left = self.eval(node.left, frame, block)
            right = self.eval(node.right, frame, block)
            return self.binary(_BIN_OPS.get(type(node.operator)), left, right, node)
        if type(node) is cst.UnaryOperation:
            operand = self.eval(node.expression, frame, block)
            return self.unary(type(node.operator).__name__, operand)
        if type(node) is cst.BooleanOperation:
            left = self.eval(node.left, frame, block)
            truth = self.truth(left)
            is_and = isinstance(node.operator, cst.And)
            if truth is None:
                right = self.eval(node.right, frame, block)
                right_truth = self.truth(right)
                # Which operand it is is not known; its truth may be (`u or 64` is true).
                if is_and and right_truth is False:
                    return FALSY
                if not is_and and right_truth is True:
                    return TRUTHY
                return UNKNOWN
            if is_and:
                return self.eval(node.right, frame, block) if truth else left
            return left if truth else self.eval(node.right, frame, block)
        if type(node) is cst.Comparison:
            return self._eval_comparison(node, frame, block)
        if type(node) is cst.IfExp:
            truth = self.truth(self.eval(node.test, frame, block))
            if truth is True:
                return self.eval(node.body, frame, block)
            if truth is False:
                return self.eval(node.orelse, frame, block)
            return join(self.eval(node.body, frame, block), self.eval(node.orelse, frame, block))
        if type(node) is cst.Subscript:
            value = self.eval(node.value, frame, block)
            if isinstance(value, Api) and value.name == "sys.modules":
                found = self._own_module(node, frame, block)
                if found is not None:
                    return found
            index = self.eval_slice(node, frame, block)
            return self.subscript(value, index, node, block)
        if type(node) is cst.Lambda:
            return self.make_function(node, block, frame)
        if type(node) is cst.NamedExpr:
            value = self.eval(node.value, frame, block)
            self.assign(node.target, value, frame, block)
            return value
        if type(node) is cst.Ellipsis:
            return Const(...)
        if type(node) is cst.ListComp or type(node) is cst.GeneratorExp or type(node) is cst.SetComp:
            items = self._comprehension(node, frame, block)
            if items is None:
                return UNKNOWN
            if type(node) is cst.SetComp:
                return SetVal(tuple(items))
            # A generator is an iterable that is not a tuple, like a list: absl's
            # `parameters(gen)` takes it as the test cases, where a lone tuple is one case.
            return TupleVal(tuple(items), True)
        if type(node) is cst.DictComp:
            pairs = self._comprehension(node, frame, block)
            if pairs is None:
                return UNKNOWN
            entries = [(p.items[0], p.items[1]) for p in pairs if isinstance(p, TupleVal)]
            if len(entries) != len(pairs) or any(not key.known for key, _ in entries):
                return UNKNOWN
            return self.mapping(entries)
        if type(node) is cst.Yield:
            self._yield(node, frame, block)
            return UNKNOWN  # what `send` gives: not modelled
        if type(node) is cst.FormattedString:
            return self._formatted(node, frame, block)
        # await: not modelled.
        return UNKNOWN

    def _formatted(self, node: cst.FormattedString, frame: Frame, block: Block) -> Value:
        """`f"F{bits}Type"`: the text, where every field is a constant string or number written
        plainly (no conversion, no format spec); unknown otherwise."""
        prefix = node.prefix.lower()
        if "b" in prefix:
            return UNKNOWN
        parts: list[str] = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                if "\\" in part.value and "r" not in prefix:
                    return UNKNOWN  # an escape: not read here
                parts.append(part.value.replace("{{", "{").replace("}}", "}"))
                continue
            assert isinstance(part, cst.FormattedStringExpression)
            value = self.eval(part.expression, frame, block)
            if (part.conversion is not None or part.format_spec is not None or type(value) is not Const
                    or type(value.value) not in (str, int)):
                return UNKNOWN
            parts.append(str(value.value))
        return Const("".join(parts))

    def _yield(self, node: cst.Yield, frame: Frame, block: Block) -> None:
        """`yield v` / `yield from xs` in a generator function's run: its values, in order,
        while every yield so far was sure to run (`Frame.yields`)."""
        given = node.value
        items: Sequence[Value] | None
        if isinstance(given, cst.From):
            items = self.iterate(self.eval(given.item, frame, block))
        else:
            items = (self.eval(given, frame, block) if given is not None else NONE,)
        if frame.yields is None:
            return
        uncertainty, guarded = frame.yield_base
        if items is None or self._uncertainty != uncertainty or (guarded is not None and self._guarded != guarded):
            frame.yields = None
        else:
            frame.yields.extend(items)

    def _comprehension(
        self, node: cst.ListComp | cst.GeneratorExp | cst.SetComp | cst.DictComp, frame: Frame, block: Block
    ) -> list[Value] | None:
        """`[f(x) for x in KNOWN if cond]` over known, small iterables (a dict's: each key and
        value as a pair); None otherwise."""
        scope = Frame(self, frame, frozenset(), block)
        results: list[Value] = []

        def run(clause: cst.CompFor | None) -> bool:
            if clause is None:
                if isinstance(node, cst.DictComp):  # its key and value, as a pair
                    key = self.eval(node.key, scope, block)
                    results.append(TupleVal((key, self.eval(node.value, scope, block))))
                else:
                    results.append(self.eval(node.elt, scope, block))
                return len(results) <= MAX_UNROLL * 4
            iterable = self.eval(clause.iter, scope, block)
            items = self.iterate(iterable)
            if items is None:
                return False
            for item in items:
                self.assign(clause.target, item, scope, block)
                keep: bool | None = True
                for condition in clause.ifs:
                    keep = self.truth(self.eval(condition.test, scope, block))
                    if keep is not True:
                        break
                if keep is None:
                    return False
                if keep and not run(clause.inner_for_in):
                    return False
            return True

        return results if run(node.for_in) else None

    def _eval_elements(
        self, elements: Sequence[cst.BaseElement], frame: Frame, block: Block
    ) -> list[Value] | None:
        items: list[Value] = []
        for element in elements:
            if type(element) is cst.StarredElement:
                inner = self.iterate(self.eval(element.value, frame, block))
                if inner is None:
                    return None
                items.extend(inner)
            else:
                items.append(self.eval(element.value, frame, block))
        return items

    def _own_module(self, node: cst.Subscript, frame: Frame, block: Block) -> Value | None:
        """`sys.modules[__name__]`: the module the code is in (a module aliasing itself, to
        call its own helpers as `fa.from_tensor`), when `__name__` is not rebound in it."""
        index = node.slice[0].slice if len(node.slice) == 1 else None
        if not (isinstance(index, cst.Index) and isinstance(index.value, cst.Name)
                and index.value.value == "__name__"):
            return None
        if self.program is None or "__name__" in block.source.bindings:
            return None
        path = self.program.path_of(block.source)
        name = self.program.module_name(block.source) if path is not None else None
        return ProjectModule(name, path) if name is not None and path is not None else None

    def eval_slice(self, node: cst.Subscript, frame: Frame, block: Block) -> Value:
        parts: list[Value] = []
        for element in node.slice:
            inner = element.slice
            if type(inner) is cst.Index:
                parts.append(self.eval(inner.value, frame, block))
            else:
                assert isinstance(inner, cst.Slice)
                bounds = [
                    self.eval(b, frame, block) if b is not None else NONE
                    for b in (inner.lower, inner.upper, inner.step)
                ]
                parts.append(TupleVal((Const("slice"), *bounds)))
        if len(parts) == 1 and type(node.slice[0].comma) is not cst.Comma:
            return parts[0]
        return TupleVal(tuple(parts))

    def _eval_comparison(self, node: cst.Comparison, frame: Frame, block: Block) -> Value:
        left = self.eval(node.left, frame, block)
        result: Value = TRUE
        for target in node.comparisons:
            right = self.eval(target.comparator, frame, block)
            outcome = self.compare(type(target.operator).__name__, left, right)
            if outcome is False:
                return FALSE
            if outcome is None:
                result = UNKNOWN
            left = right
        return result

