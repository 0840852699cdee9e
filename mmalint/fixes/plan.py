"""Fix planning: libcst edits at the place the wrong value was decided.

A fix is offered only when the edit is mechanical and its effect is known. It is `safe` when the
edited expression only builds the flagged value (it sits inside the call that creates it), and
`unsafe` when it is a variable, helper or constant other code reads too.
"""

from __future__ import annotations

import libcst as cst

from mmalint.analysis.dtypes import DTYPES, lookup_dtype
from mmalint.analysis.values import Origin
from mmalint.checks import Finding, Operand
from mmalint.diagnostics import Edit, Fix, Location, Range


def plan_fix(finding: Finding) -> Fix | None:
    code = finding.rule.code
    try:
        if code in ("MMA101", "MMA102", "MMA201"):
            return _accumulator_fix(finding)
        if code == "MMA105":
            return _swap_fix(finding)
        if code == "MMA202":
            return _is_signed_fix(finding)
        if code == "MMA203":
            return _data_sign_fix(finding)
        if code == "MMA204":
            return _semantics_fix(finding)
    except Exception:  # noqa: BLE001 - a fix we cannot plan is no fix, never a crash
        return None
    return None


def _range(origin: Origin) -> Range:
    span = origin.span()
    return Range(
        span.filename,
        Location(span.start.line, span.start.column + 1),
        Location(span.end.line, span.end.column + 1),
    )


def _inside(outer: Origin | None, inner: Origin) -> bool:
    if outer is None or outer.block is not inner.block:
        return False
    o, i = outer.span(), inner.span()
    return o.start <= i.start and i.end <= o.end


def _from_world(finding: Finding, origin: Origin) -> bool:
    return any(b.origin is not None and b.origin.node is origin.node for b in finding.call.site.context.world)


def _fix(finding: Finding, origin: Origin, content: str, safe: bool) -> Fix:
    return Fix(
        "safe" if safe else "unsafe",
        finding.rule.fix_title,
        (Edit(content, _range(origin)),),
    )


def _accumulator_fix(finding: Finding) -> Fix | None:
    call = finding.call
    acc = call.acc
    target = "int32"
    if finding.rule.code == "MMA102":
        target = "float64" if call.a.element_type == "f64" else "float32"
    if call.api == "plgpu.mma" or acc.value.__class__.__name__ == "Array":
        origin = acc.type_origin
        if origin is None or _from_world(finding, origin):
            return None
        content = _dtype_replacement(origin.node, origin.code(), target)
        if content is None:
            return None
        return _fix(finding, origin, content, _inside(acc.created, origin))
    if finding.rule.code == "MMA201":
        origin = acc.sign_origin
        if origin is None or _from_world(finding, origin):
            return None
        if isinstance(origin.node, cst.Name) and origin.node.value == "False":
            return _fix(finding, origin, "True", _inside(acc.created, origin))
    return None


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


def _swap_fix(finding: Finding) -> Fix | None:
    call = finding.call  # the swapped call: acc is what was passed third
    passed = [call.a.arg_origin, call.b.arg_origin, call.acc.arg_origin]
    if any(o is None for o in passed):
        return None
    first, second, third = passed
    assert first is not None and second is not None and third is not None
    edits = (
        Edit(third.code(), _range(first)),
        Edit(first.code(), _range(second)),
        Edit(second.code(), _range(third)),
    )
    return Fix("safe", finding.rule.fix_title, edits)


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
        if existing:
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
    return _fix(finding, op.created, content, True)


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
    return _fix(finding, origin, wanted, _inside(op.created, origin))


def _semantics_fix(finding: Finding) -> Fix | None:
    semantics = finding.call.site.context.semantics
    origin = semantics.origin
    if origin is None or not isinstance(origin.node, cst.Attribute):
        return None
    if origin.node.attr.value != "Warpgroup":
        return None
    text = origin.code()
    return _fix(finding, origin, text[: len(text) - len("Warpgroup")] + "Lane", False)
