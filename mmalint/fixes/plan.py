"""Fix planning: libcst edits at the place the wrong value was decided.

A fix is offered only when the edit is mechanical and its effect is known. It is `safe` when
every edited expression only builds the flagged value: it sits inside the call that creates it,
in the function that makes the MMA call. It is `unsafe` when it is a variable, a helper or a
module constant that other code may read too (the helper may be imported elsewhere).

Planning is the first half; `verify.py` then applies each fix to the text and keeps it only if
the file checks cleaner afterwards, so an edit that is right in one world and wrong in another
is never offered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import libcst as cst

from mmalint.analysis.dtypes import DTYPES, lookup_dtype
from mmalint.analysis.source import Block, Pos
from mmalint.analysis.values import Origin
from mmalint.checks.call import Operand
from mmalint.checks.rules import Finding
from mmalint.diagnostics import Edit, Fix, Location, Range
from mmalint.facts import tcgen05 as tcgen05_facts
from mmalint.positions import range_of


def plan_fix(finding: Finding) -> Fix | None:
    planner = PLANNERS.get(finding.rule.code)
    if planner is None:
        return None
    try:
        return planner(finding)
    except Exception:  # a fix we cannot plan is no fix, never a crash
        return None


def _inside(outer: Origin | None, inner: Origin) -> bool:
    if outer is None or outer.block is not inner.block:
        return False
    o, i = outer.span(), inner.span()
    return o.start <= i.start and i.end <= o.end


class _FunctionOf(cst.CSTVisitor):
    """The innermost function (or lambda) around one node of a block."""

    def __init__(self, target: cst.CSTNode) -> None:
        self.target = target
        self.stack: list[cst.CSTNode] = []
        self.found: cst.CSTNode | None = None
        self.done = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.done:
            return False
        if node is self.target:
            self.found = self.stack[-1] if self.stack else None
            self.done = True
            return False
        if isinstance(node, cst.FunctionDef | cst.Lambda):
            self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, cst.FunctionDef | cst.Lambda) and self.stack and self.stack[-1] is original_node:
            self.stack.pop()


def _function_of(origin: Origin) -> cst.CSTNode | None:
    # libcst's own tree of the block: its visitor rebuilds each node it passes, and a node
    # built from `ast` (`cst_from_ast`) has no layout to rebuild it from.
    visitor = _FunctionOf(origin.block.twin(origin.node))
    for statement in origin.block.libcst_statements():
        statement.visit(visitor)
        if visitor.done:
            break
    return visitor.found


def _local(finding: Finding, created: Origin | None, edited: list[Origin]) -> bool:
    """Safe: every edit is inside the expression that creates the value, and that expression
    is in the function that makes the MMA call (not in a helper others may call)."""
    if created is None or not all(_inside(created, o) for o in edited):
        return False
    call = finding.call.origin
    return created.block is call.block and _function_of(created) is _function_of(call)


def _from_world(finding: Finding, origin: Origin) -> bool:
    return any(b.origin is not None and b.origin.node is origin.node for b in finding.call.site.context.world)


def _edit_range(origin: Origin | Range) -> Range:
    return origin if isinstance(origin, Range) else range_of(origin)


def _fix(finding: Finding, edits: list[tuple[Origin | Range, str]], safe: bool) -> Fix:
    return Fix(
        "safe" if safe else "unsafe",
        finding.rule.fix_title,
        tuple(Edit(content, _edit_range(origin)) for origin, content in edits),
    )


# ------------------------------------------------------------------ accumulator dtype


def _accumulator_fix(finding: Finding) -> Fix | None:
    call = finding.call
    acc = call.acc
    code = finding.rule.code
    if finding.check.stage == "any-operand":
        return None  # the right accumulator depends on operands mmalint does not know
    target = "int32"
    if code == "MMA102":
        target = "float64" if call.a.element_type == "f64" else "float32"
    if call.frontend == "pallas" or acc.value.__class__.__name__ == "Array":
        return _accumulator_dtype_fix(finding, target)
    if _made_by_from_tensor(acc.created):
        return _from_tensor_fix(finding, target)
    if code == "MMA201":
        return _signed_accumulator_fix(finding)
    return _fragment_type_fix(finding, target)


def _made_by_from_tensor(created: Origin | None) -> bool:
    """Made by a `from_tensor(x)` the analysis could not read (a readable one's fragment is
    created inside its body): its dtype and signedness are `x`'s."""
    return created is not None and isinstance(created.node, cst.Call) and _func_name(created.node) == "from_tensor"


def _from_tensor_fix(finding: Finding, target: str) -> Fix | None:
    """`fa.from_tensor(jnp.zeros((m, n), jnp.float32))`: the dtype of `x` where it is written
    (its signedness follows it). Unsafe: what `from_tensor` does is known from its name only."""
    acc = finding.call.acc
    origin, created = acc.type_origin, acc.created
    if origin is None or created is None or _from_world(finding, origin) or not _inside(created, origin):
        return None
    content = _dtype_replacement(origin.node, origin.code(), target)
    if content is None:
        return None
    return _fix(finding, [(origin, content)], False)


def _accumulator_dtype_fix(finding: Finding, target: str) -> Fix | None:
    """The accumulator's dtype made `target` where it was written (`plgpu.ACC`, a TMEM
    allocation): not when a parameter world decided it; safe when that expression builds
    only this accumulator."""
    acc = finding.call.acc
    origin = acc.type_origin
    if origin is None or _from_world(finding, origin):
        return None
    content = _dtype_replacement(origin.node, origin.code(), target)
    if content is None:
        return None
    return _fix(finding, [(origin, content)], _local(finding, acc.created, [origin]))


def _wgmma_accumulator_fix(finding: Finding) -> Fix | None:
    """MMA601/MMA602 on a Pallas `plgpu.ACC`: its dtype where it was written, float32 for
    floating operands (accepted for every one), int32 for int8 ones and for an unsigned one."""
    call = finding.call
    if call.frontend != "pallas" or call.b.element_type is None:
        return None
    target = "int32" if call.b.element_type == "i8" else "float32"
    return _accumulator_dtype_fix(finding, target)


def _tcgen05_accumulator_fix(finding: Finding) -> Fix | None:
    """MMA701 on a TMEM accumulator (`plgpu.TMEM(shape, dtype)`, `mgpu.TMEM(shape, dtype)`):
    its dtype where it was written, the one `tcgen05.mma()` takes for A's element type
    (float32 where it is accepted, which every float kind takes; int32 for int8)."""
    call = finding.call
    if finding.check.stage == "any-operand" or call.a.element_type is None:
        return None
    kind = tcgen05_facts.OPERAND_KINDS.get(call.a.element_type)
    if kind is None:
        return None
    a_scale, b_scale = call.options.get("a_scale"), call.options.get("b_scale")
    if a_scale is None or b_scale is None:
        return None
    scaled = bool(a_scale) and bool(b_scale)
    accepted = kind.scaled_accumulators if scaled else kind.accumulators
    if not accepted:
        return None  # no accumulator is right: the operands (or their scales) are the mistake
    target = "float32" if "f32" in accepted else {"i32": "int32", "f16": "float16"}.get(accepted[0])
    if target is None:
        return None
    return _accumulator_dtype_fix(finding, target)


def _dtype_replacement(node: cst.CSTNode, text: str, target: str) -> str | None:
    """`jnp.float32` -> `jnp.int32`, `"float32"` -> `"int32"`; None for anything else."""
    if isinstance(node, cst.Attribute) and lookup_dtype(node.attr.value) is not None:
        return text[: len(text) - len(node.attr.value)] + target
    if isinstance(node, cst.SimpleString):
        quote = node.quote
        value = node.evaluated_value
        if isinstance(value, str) and lookup_dtype(value) is not None:
            return f"{node.prefix}{quote}{target}{quote}"
    return None


_IR_FLOAT_TYPES = {"F16Type", "BF16Type", "F32Type", "F64Type"}


def _ir_type_replacement(node: cst.CSTNode, text: str, target: str) -> str | None:
    """`ir.F32Type.get()` -> `ir.IntegerType.get_signless(32)` (and back), keeping the prefix."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
        return None
    owner = node.func.value
    cls = owner.attr.value if isinstance(owner, cst.Attribute) else (owner.value if isinstance(owner, cst.Name) else None)
    if cls not in (*_IR_FLOAT_TYPES, "IntegerType"):
        return None
    func_text = text[: text.index("(")] if "(" in text else text
    prefix = func_text[: func_text.rfind(cls)]
    replacement = {
        "int32": "IntegerType.get_signless(32)",
        "float32": "F32Type.get()",
        "float64": "F64Type.get()",
    }.get(target)
    return prefix + replacement if replacement else None


def _parent_call(block: Block, node: cst.CSTNode) -> cst.Call | None:
    """The call that takes `node` as one of its arguments."""

    class Finder(cst.CSTVisitor):
        found: cst.Call | None = None

        def visit_Call(self, call: cst.Call) -> bool:
            if self.found is None and any(arg.value is node for arg in call.args):
                self.found = call
            return self.found is None

    finder = Finder()
    node = block.twin(node)
    for statement in block.libcst_statements():
        statement.visit(finder)
        if finder.found is not None:
            break
    return finder.found


def _func_name(call: cst.Call) -> str:
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return ""


def _number(node: cst.BaseExpression) -> float | int | None:
    if isinstance(node, cst.Integer | cst.Float):
        value = node.evaluated_value
        return value if isinstance(value, int | float) else None
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _number(node.expression)
        return -inner if inner is not None else None
    return None


def _fragment_type_fix(finding: Finding, target: str) -> Fix | None:
    """A splatted mgpu accumulator: retype the scalar it is filled with, fix its `is_signed`.

    `splat(utils.c(0.0, ir.F32Type.get()), ...)` becomes
    `splat(utils.c(0, ir.IntegerType.get_signless(32)), ..., is_signed=True)`.
    """
    acc = finding.call.acc
    origin, created = acc.type_origin, acc.created
    if origin is None or created is None or _from_world(finding, origin):
        return None
    if not isinstance(created.node, cst.Call) or _func_name(created.node) != "splat":
        return None
    block = origin.block
    edits: list[tuple[Origin | Range, str]] = []
    type_node = origin.node
    content = _ir_type_replacement(type_node, origin.code(), target)
    if content is None:
        # `utils.dtype_to_ir_type(jnp.float32)`: the dtype is what to change.
        content = _dtype_replacement(type_node, origin.code(), target)
        if content is None:
            return None
        wrapper = _parent_call(block, type_node)
        if wrapper is None or _func_name(wrapper) != "dtype_to_ir_type":
            return None
        type_node = wrapper
    edits.append((origin, content))
    constant = _parent_call(block, type_node)
    if constant is None or _func_name(constant) not in ("c", "constant"):
        return None
    typed = block.twin(type_node)  # `constant`'s arguments are of libcst's tree
    values = [a.value for a in constant.args if a.value is not typed and a.keyword is None]
    if len(values) != 1:
        return None
    value = _number(values[0])
    if value is None:
        return None
    if target == "int32" and isinstance(values[0], cst.Float | cst.UnaryOperation) and not isinstance(value, int):
        if value != int(value):
            return None  # a fractional fill value has no int32 twin
        edits.append((Origin(block, values[0]), str(int(value))))
    sign_edit = _is_signed_edit(created, created.node, want=target == "int32")
    if sign_edit is not None:
        edits.append(sign_edit)
    # The is_signed edit sits inside the creation call by construction; the others are checked.
    safe = _local(finding, created, [o for o, _ in edits if isinstance(o, Origin)])
    return _fix(finding, edits, safe)


class _NoFix(Exception):
    """The edit cannot be made mechanically."""


def _is_signed_edit(
    created: Origin, call: cst.Call, want: bool, keyword: str = "is_signed"
) -> tuple[Range, str] | tuple[Origin, str] | None:
    """The edit that makes `call`'s is_signed right: True for an integer value (want), absent
    for a float one; None when it is right already. Raises _NoFix when it cannot be made."""
    existing = [a for a in call.args if a.keyword is not None and a.keyword.value == keyword]
    if want:
        if existing:
            value = existing[0].value
            if isinstance(value, cst.Name) and value.value == "True":
                return None
            return (Origin(created.block, value), "True")
        if any(a.star for a in call.args):
            raise _NoFix("`**kwargs` may hold it already")
        return _keyword_insertion(created.block, call, f"{keyword}=True")
    if not existing:
        return None
    return _keyword_removal(created.block, call, existing[0])


# An argument is added or removed with an edit at one point of the call, never by printing the
# call again: a reprinted call loses its indentation and moves its closing parenthesis, and an
# insertion can go in together with the other edits of the same fix inside the call.


def _line(block: Block, row: int) -> str:
    return block.source.lines[row - 1] if 0 < row <= len(block.source.lines) else ""


def _starts_its_line(block: Block, node: cst.CSTNode) -> bool:
    start = block.span(node).start
    return not _line(block, start.line)[: start.column].strip()


def _rest_of_line_is_blank(block: Block, node: cst.CSTNode) -> bool:
    """Only whitespace or a comment follows `node` on its last line."""
    end = block.span(node).end
    rest = _line(block, end.line)[end.column :].strip()
    return not rest or rest.startswith("#")


def _location(pos: Pos) -> Location:
    return Location(pos.line, pos.column + 1)


def _point(block: Block, pos: Pos) -> Range:
    """The empty range at `pos`: where an insertion goes."""
    where = _location(pos)
    return Range(block.source.filename, where, where)


def _keyword_insertion(block: Block, call: cst.Call, argument: str) -> tuple[Range, str]:
    """Add `argument` (`is_signed=True`) as the call's last argument, in the call's own layout.

    A call laid out one argument per line with a trailing comma gets a line of its own, indented
    as the last argument; any other call gets `, argument` right after its last argument, so a
    trailing comma, the comments and the closing parenthesis stay where they are.
    """
    call = cast(cst.Call, block.twin(call))  # the layout is libcst's tree's
    if not call.args:
        raise _NoFix("no argument to add it after")
    last = call.args[-1]
    comma = last.comma
    if (
        isinstance(comma, cst.Comma)
        and block.span(comma).start == block.span(last).end
        and _starts_its_line(block, last)
        and _rest_of_line_is_blank(block, comma)
    ):
        start = block.span(last).start
        indent = _line(block, start.line)[: start.column]
        row = block.span(comma).end.line + 1
        return (Range(block.source.filename, Location(row, 1), Location(row, 1)), f"{indent}{argument},\n")
    return (_point(block, block.span(last.value).end), f", {argument}")


def _keyword_removal(block: Block, call: cst.Call, arg: cst.Arg) -> tuple[Range, str]:
    """Delete `arg` from the call, and no more: the other arguments, their comments and the
    call's layout stay as they are."""
    filename = block.source.filename
    call, arg = cast(cst.Call, block.twin(call)), cast(cst.Arg, block.twin(arg))  # the layout is libcst's tree's
    args = list(call.args)
    i = args.index(arg)
    span = block.span(arg)
    comma = arg.comma if isinstance(arg.comma, cst.Comma) else None
    end = block.span(comma if comma is not None else arg).end
    if _starts_its_line(block, arg) and _rest_of_line_is_blank(block, comma if comma is not None else arg):
        # An argument on lines of its own: those lines go (with the comment that follows it).
        return (Range(filename, Location(span.start.line, 1), Location(end.line + 1, 1)), "")
    if i + 1 < len(args):
        following = block.span(args[i + 1]).start
        if following.line == end.line:
            # `f(a, is_signed=True, b)` -> `f(a, b)`
            return (Range(filename, _location(span.start), _location(following)), "")
        # The line goes on after it: from the comma before it to its own, so that the line
        # break, and a comment after it, stay.
        before = args[i - 1].comma if i > 0 else None
        start = block.span(before).end if isinstance(before, cst.Comma) else span.start
        if "#" in _text(block, start, span.start):
            start = span.start
        return (Range(filename, _location(start), _location(end)), "")
    if i > 0:
        previous = block.span(args[i - 1]).end
        if "#" not in _text(block, previous, span.start):
            # `f(a, is_signed=True)` -> `f(a)`: the comma before it goes with it.
            return (Range(filename, _location(previous), _location(span.end)), "")
    return (Range(filename, _location(span.start), _location(end)), "")


def _text(block: Block, start: Pos, end: Pos) -> str:
    """The source between two positions of a block."""
    if start.line == end.line:
        return _line(block, start.line)[start.column : end.column]
    parts = [_line(block, start.line)[start.column :]]
    parts.extend(_line(block, row) for row in range(start.line + 1, end.line))
    parts.append(_line(block, end.line)[: end.column])
    return "".join(parts)


def _signed_accumulator_fix(finding: Finding) -> Fix | None:
    """MMA201 on a FragmentedArray: `is_signed=True` where the accumulator is created."""
    acc = finding.call.acc
    created = acc.created
    if created is None or not isinstance(created.node, cst.Call):
        return None
    edit = _is_signed_edit(created, created.node, want=True)
    if edit is None:
        return None
    where = edit[0] if isinstance(edit[0], Origin) else created
    return _fix(finding, [edit], _local(finding, created, [where]))


# ------------------------------------------------------------------ argument order


def _swap_fix(finding: Finding) -> Fix | None:
    call = finding.call  # the swapped call: acc is what was passed third
    passed = [call.a.arg_origin, call.b.arg_origin, call.acc.arg_origin]
    if any(o is None for o in passed):
        return None
    first, second, third = passed
    assert first is not None and second is not None and third is not None
    edits = (
        Edit(third.code(), range_of(first)),
        Edit(first.code(), range_of(second)),
        Edit(second.code(), range_of(third)),
    )
    return Fix("safe", finding.rule.fix_title, edits)


# ------------------------------------------------------------------ signedness


def _creation_call(op: Operand) -> cst.Call | None:
    if op.created is not None and isinstance(op.created.node, cst.Call):
        return op.created.node
    return None


def _is_signed_fix(finding: Finding) -> Fix | None:
    role = finding.subject
    if role is None:
        return None
    op = finding.call.operands[role]
    call_node = _creation_call(op)
    if call_node is None or op.created is None:
        return None
    keyword = "output_is_signed" if op.how == "bitcast" else "is_signed"
    existing = [a for a in call_node.args if a.keyword is not None and a.keyword.value == keyword]
    block = op.created.block
    edit: tuple[Range, str]
    if op.is_float:
        if not existing:
            return None
        edit = _keyword_removal(block, call_node, existing[0])
    else:
        if existing or any(a.star for a in call_node.args) or not call_node.args:
            return None
        signed = True
        if role != "acc" and op.data_dtype in DTYPES:
            data_signed = DTYPES[op.data_dtype].is_signed
            if data_signed is None:
                return None
            signed = data_signed
        elif role != "acc":
            return None
        edit = _keyword_insertion(block, call_node, f"{keyword}={signed}")
    # Both edits lie inside the creation call, so the call's place decides the safety.
    return _fix(finding, [edit], _local(finding, op.created, [op.created]))


def _data_sign_fix(finding: Finding) -> Fix | None:
    role = finding.subject
    if role is None:
        return None
    op = finding.call.operands[role]
    origin = op.sign_origin
    if origin is None or op.data_dtype not in DTYPES or _from_world(finding, origin):
        return None
    if not (isinstance(origin.node, cst.Name) and origin.node.value in ("True", "False")):
        return None
    wanted = "True" if DTYPES[op.data_dtype].is_signed else "False"
    return _fix(finding, [(origin, wanted)], _local(finding, op.created, [origin]))


def _semantics_fix(finding: Finding) -> Fix | None:
    semantics = finding.call.site.context.semantics
    origin = semantics.origin
    if origin is None or not isinstance(origin.node, cst.Attribute):
        return None
    if origin.node.attr.value != "Warpgroup":
        return None
    text = origin.code()
    # Unsafe: the semantics applies to the whole kernel, every other op in it included.
    return _fix(finding, [(origin, text[: len(text) - len("Warpgroup")] + "Lane")], False)


# The rules with a mechanical fix. `mmalint rules` and the rule pages read `fixable` from
# rules/*.toml; tests/test_fix_plan.py keeps the two in agreement.
# ------------------------------------------------------------------ layout role (MMA301-303)

_ROLE_ATTR = {"a": "lhs", "b": "rhs", "acc": "acc"}
_PALLAS_MEMBER = {"a": "MMA_LHS", "b": "MMA_RHS", "acc": "MMA_ACC"}


def _layout_role_fix(finding: Finding) -> Fix | None:
    """`layouts.rhs` where the lhs is meant -> `layouts.lhs`; `Layout.MMA_LHS(dt)` for b ->
    `Layout.MMA_RHS(dt)`. Only for a layout of the wrong role built for the right operand type;
    a value converted from the accumulator layout (an mma result) needs a trip through shared
    memory, which is no mechanical edit."""
    role = finding.subject
    if role is None:
        return None
    op = finding.call.operands[role]
    layout = op.layout
    if layout is None or op.converted_from is not None or layout.kind not in ("mma_lhs", "mma_rhs", "mma_acc"):
        return None
    # The role's own tiling must also load through this view of memory (lhs: plain, rhs:
    # transposed); otherwise the edit trades this error for a failing load.
    if role in ("a", "b") and op.view is not None and op.how == "loaded" and (role == "a") != (op.view == "plain"):
        return None
    origin = layout.origin
    if origin is None or _from_world(finding, origin):
        return None
    node = origin.node
    text = origin.code()
    if isinstance(node, cst.Attribute) and node.attr.value in ("lhs", "rhs", "acc"):
        content = text[: len(text) - len(node.attr.value)] + _ROLE_ATTR[role]
    elif (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in ("MMA_LHS", "MMA_RHS", "MMA_ACC")
    ):
        func = op.created.block.code(node.func) if op.created is not None else origin.block.code(node.func)
        content = func[: len(func) - len(node.func.attr.value)] + _PALLAS_MEMBER[role] + text[len(func):]
    else:
        return None
    if content == text:
        return None
    return _fix(finding, [(origin, content)], _local(finding, op.created, [origin]))


PLANNERS: dict[str, Callable[[Finding], Fix | None]] = {
    "MMA301": _layout_role_fix,
    "MMA302": _layout_role_fix,
    "MMA303": _layout_role_fix,
    "MMA101": _accumulator_fix,
    "MMA102": _accumulator_fix,
    "MMA105": _swap_fix,
    "MMA201": _accumulator_fix,
    "MMA202": _is_signed_fix,
    "MMA203": _data_sign_fix,
    "MMA204": _semantics_fix,
    "MMA601": _wgmma_accumulator_fix,
    "MMA602": lambda finding: (
        _wgmma_accumulator_fix(finding) if finding.call.frontend == "pallas"
        else _signed_accumulator_fix(finding)  # `WGMMAAccumulator.zero(..., is_signed=True)`
    ),
    "MMA701": _tcgen05_accumulator_fix,
}
