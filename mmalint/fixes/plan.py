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

import libcst as cst

from mmalint.analysis.dtypes import DTYPES, lookup_dtype
from mmalint.analysis.source import Block
from mmalint.analysis.values import Origin
from mmalint.checks import Finding, Operand
from mmalint.diagnostics import Edit, Fix, Range
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
    visitor = _FunctionOf(origin.node)
    for statement in origin.block.statements():
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


class _Point(Origin):
    """The empty range just past a node: where an insertion goes."""

    def __init__(self, after: Origin) -> None:
        super().__init__(after.block, after.node)


def _edit_range(origin: Origin) -> Range:
    where = range_of(origin)
    if isinstance(origin, _Point):
        return Range(where.filename, where.end, where.end)
    return where


def _fix(finding: Finding, edits: list[tuple[Origin, str]], safe: bool) -> Fix:
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
    if call.api == "plgpu.mma" or acc.value.__class__.__name__ == "Array":
        origin = acc.type_origin
        if origin is None or _from_world(finding, origin):
            return None
        content = _dtype_replacement(origin.node, origin.code(), target)
        if content is None:
            return None
        return _fix(finding, [(origin, content)], _local(finding, acc.created, [origin]))
    if code == "MMA201":
        return _signed_accumulator_fix(finding)
    return _fragment_type_fix(finding, target)


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
    for statement in block.statements():
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
    edits: list[tuple[Origin, str]] = []
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
    values = [a.value for a in constant.args if a.value is not type_node and a.keyword is None]
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
    safe = _local(finding, created, [o for o, _ in edits])
    return _fix(finding, edits, safe)


class _NoFix(Exception):
    """The edit cannot be made mechanically."""


def _is_signed_edit(
    created: Origin, call: cst.Call, want: bool, keyword: str = "is_signed"
) -> tuple[Origin, str] | None:
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
        if not call.args:
            raise _NoFix("no argument to add it after")
        # An insertion after the last argument, so the other edits inside the call can go in
        # with it (replacing the whole call would overlap them).
        end = Origin(created.block, call.args[-1].value)
        return (_Point(end), f", {keyword}=True")
    if not existing:
        return None
    args = [a for a in call.args if a not in existing]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return (created, created.block.code(call.with_changes(args=args)))


def _signed_accumulator_fix(finding: Finding) -> Fix | None:
    """MMA201 on a FragmentedArray: `is_signed=True` where the accumulator is created."""
    acc = finding.call.acc
    created = acc.created
    if created is None or not isinstance(created.node, cst.Call):
        return None
    edit = _is_signed_edit(created, created.node, want=True)
    if edit is None:
        return None
    return _fix(finding, [edit], _local(finding, created, [edit[0]]))


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
    if op.is_float:
        if not existing:
            return None
        new_args = [a for a in call_node.args if a not in existing]
        if new_args:
            new_args[-1] = new_args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        new_call = call_node.with_changes(args=new_args)
    else:
        if existing or any(a.star for a in call_node.args):
            return None
        signed = True
        if role != "acc" and op.data_dtype in DTYPES:
            data_signed = DTYPES[op.data_dtype].is_signed
            if data_signed is None:
                return None
            signed = data_signed
        elif role != "acc":
            return None
        arg = cst.Arg(
            keyword=cst.Name(keyword),
            value=cst.Name("True" if signed else "False"),
            equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
            ),
        )
        new_call = call_node.with_changes(args=[*call_node.args, arg])
    content = op.created.block.code(new_call)
    return _fix(finding, [(op.created, content)], _local(finding, op.created, [op.created]))


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
}
