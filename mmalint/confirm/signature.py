"""Findings as read from `mmalint check --format json`: validated, typed, immutable.

Only what the reference lowering needs is kept. A finding whose top-level shape is wrong is
bad input (`FindingsError`, exit 2); a finding whose `call` lacks facts is still a finding and
gets an `inconclusive` verdict with the reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from mmalint.confirm import dtypes, families
from mmalint.confirm.call import (
    DEFAULT_CREATION_ORDER,
    SIGNEDNESS,
    Call,
    Finding,
    Layout,
    Operand,
    OperandVariant,
    PredictedError,
)

if TYPE_CHECKING:
    from mmalint.confirm.family import Family

class FindingsError(ValueError):
    """The findings file cannot be used at all (unreadable, not JSON, wrong shape)."""


def read_findings(path: str | Path, *, stdin_text: str | None = None) -> list[dict[str, Any]]:
    """Read a findings file (`-` is `stdin_text`), check its shape, return the raw objects."""
    if str(path) == "-":
        text = stdin_text if stdin_text is not None else ""
        where = "standard input"
    else:
        where = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise FindingsError(f"cannot read {where}: {e.__class__.__name__}: {e}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise FindingsError(
            f"{where} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    parse_findings(data, where=where)
    return data


def load_findings(path: str | Path, *, stdin_text: str | None = None) -> list[Finding]:
    """Read and validate a findings file into `Finding` records."""
    return parse_findings(read_findings(path, stdin_text=stdin_text), where=str(path))


def parse_findings(data: object, *, where: str = "input") -> list[Finding]:
    """Validate the decoded JSON: an array of finding objects as `mmalint check` writes them."""
    if not isinstance(data, list):
        raise FindingsError(
            f"{where}: expected a JSON array of findings (mmalint check --format json), "
            f"got {_json_kind(data)}")
    return [_parse_finding(i, item, where) for i, item in enumerate(data)]


def _json_kind(value: object) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null"


def _parse_finding(index: int, item: object, where: str) -> Finding:
    def bad(what: str) -> FindingsError:
        return FindingsError(f"{where}: finding {index}: {what}")

    if not isinstance(item, dict):
        raise bad(f"expected an object, got {_json_kind(item)}")
    code = item.get("code")
    if not isinstance(code, str) or not code:
        raise bad("missing or non-string 'code'")
    filename = item.get("filename")
    if not isinstance(filename, str):
        raise bad("missing or non-string 'filename'")
    location = item.get("location")
    if not (isinstance(location, dict) and _is_int(location.get("row"))
            and _is_int(location.get("column"))):
        raise bad("'location' must be an object with integer 'row' and 'column'")
    if "call" not in item:
        raise bad("missing 'call' (the call signature the reference lowering rebuilds)")
    predicted = _parse_predicted(item.get("predicted_error"), bad)
    masked = item.get("masked_by")
    masked_by: tuple[str, ...]
    if masked is None:
        masked_by = ()
    elif isinstance(masked, str):
        masked_by = (masked,)
    elif isinstance(masked, list) and all(isinstance(m, str) for m in masked):
        masked_by = tuple(masked)
    else:
        raise bad("'masked_by' must be a code or a list of codes")
    call: Call | None = None
    problem: str | None = None
    raw_call = item.get("call")
    if raw_call is None:
        problem = "the finding has no call signature"
    elif not isinstance(raw_call, dict):
        raise bad(f"'call' must be an object, got {_json_kind(raw_call)}")
    else:
        try:
            call = _parse_call(raw_call)
        except _SignatureGap as gap:
            problem = str(gap)
        else:
            order = creation_order(item.get("related"), filename)
            if order != call.creation_order:
                call = replace(call, creation_order=order)
    message = item.get("message")
    variants = _parse_variants(item.get("predicted_by_operand"), raw_call, bad)
    return Finding(
        index=index, code=code, filename=filename, row=int(location["row"]),
        column=int(location["column"]), predicted=predicted, masked_by=masked_by, call=call,
        problem=problem, message=message if isinstance(message, str) else "",
        variants=variants,
    )


def _parse_variants(raw: object, raw_call: object, bad: Any) -> tuple[OperandVariant, ...]:
    """`predicted_by_operand`: the call rebuilt with each operand dtype it names."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise bad("'predicted_by_operand' must be an array or null")
    variants = []
    for entry in raw:
        if not isinstance(entry, dict):
            raise bad("'predicted_by_operand' entries must be objects")
        dtype, code = entry.get("operand_dtype"), entry.get("code")
        if not isinstance(dtype, str) or not isinstance(code, str):
            raise bad("'predicted_by_operand' entries need string 'operand_dtype' and 'code'")
        predicted = _parse_predicted(entry, bad)
        assert predicted is not None
        info = dtypes.lookup(dtype)
        call: Call | None = None
        problem: str | None = None
        if info is None:
            problem = f"unknown operand dtype {dtype!r}"
        elif not isinstance(raw_call, dict):
            problem = "the finding has no call signature"
        else:
            patched = dict(raw_call)
            for role in ("a", "b"):
                op = dict(patched.get(role) or {})
                op.update(dtype=dtype, element_type=info.mlir,
                          signedness=op.get("signedness") or info.natural_signedness)
                patched[role] = op
            try:
                call = _parse_call(patched)
            except _SignatureGap as gap:
                problem = str(gap)
        variants.append(OperandVariant(dtype, code, predicted, call, problem))
    return tuple(variants)


# A note saying where an operand was made: "lhs operand `a` loaded here", "accumulator created
# here as float32", "rhs operand `b` converted here from Layout.MMA_ACC", "operand `a` loaded
# here as int8", "lhs operand `a` is the result of an earlier mma". Not "accumulator layout
# built here" (a layout, not the value) nor "this is the accumulator ..., passed third".
_CREATION_NOTE = re.compile(
    r"^(?:(?:lhs|rhs) )?(?P<role>operand `a`|operand `b`|accumulator) "
    r"(?:is the result of an earlier mma|(?:loaded|created|converted|computed|read|built|"
    r"splatted|cast) here)")
_NOTE_ROLES = {"operand `a`": "a", "operand `b`": "b", "accumulator": "acc"}


def creation_order(related: object, filename: str) -> tuple[str, str, str]:
    """The roles in the order the program builds them, from the creation rows of the `related`
    notes in the finding's own file: the roles with such a note first, by row, then the others
    in the default order (a, b, acc), as mmalint orders operands whose creation it does not
    know. The notes name the operands the finding is about, so those are built before any
    operand the finding does not mention."""
    rows: dict[str, tuple[int, int]] = {}
    if isinstance(related, list):
        for note in related:
            if not isinstance(note, dict) or note.get("filename", filename) != filename:
                continue
            match = _CREATION_NOTE.match(str(note.get("message", "")))
            location = note.get("location")
            if match is None or not isinstance(location, dict):
                continue
            row, column = location.get("row"), location.get("column")
            if not (_is_int(row) and _is_int(column)):
                continue
            role = _NOTE_ROLES[match.group("role")]
            rows[role] = min(rows.get(role, (row, column)), (row, column))
    order = sorted(rows, key=lambda r: rows[r])
    order += [role for role in DEFAULT_CREATION_ORDER if role not in rows]
    return (order[0], order[1], order[2])


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _parse_predicted(raw: object, bad: Any) -> PredictedError | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise bad("'predicted_error' must be an object or null")
    exception, message = raw.get("exception"), raw.get("message")
    if not isinstance(exception, str) or not isinstance(message, str):
        raise bad("'predicted_error' needs string 'exception' and 'message'")
    version = raw.get("jax_version")
    match = raw.get("match", "exact")
    if match not in ("exact", "prefix", "contains"):
        raise bad("'predicted_error.match' must be \"exact\", \"prefix\" or \"contains\"")
    return PredictedError(exception, message, version if isinstance(version, str) else None,
                          match)


class _SignatureGap(ValueError):
    """The call signature lacks a fact the lowering needs: the finding is inconclusive."""


def _parse_call(raw: Mapping[str, Any]) -> Call:
    api = raw.get("api")
    if not isinstance(api, str):
        raise _SignatureGap("the call signature has no 'api'")
    declared = raw.get("family")
    family = families.family_of(api, declared if isinstance(declared, str) else None)
    known = families.host(family)
    roles = known.roles if known is not None else ("acc", "a", "b")
    # The `operands` array names each value by the family's role (`d`, `acc`, `a`, `b`) with
    # where it lives; the legacy `acc`/`a`/`b` objects are the same values without that.
    by_role = {entry["role"]: entry for entry in raw.get("operands") or ()
               if isinstance(entry, dict) and isinstance(entry.get("role"), str)}
    operands = []
    for slot, role in zip(("acc", "a", "b"), roles, strict=True):
        value = raw.get(slot)
        entry = by_role.get(role) or by_role.get(slot)
        if not isinstance(value, dict):
            value = entry
        if not isinstance(value, dict):
            raise _SignatureGap(f"the call signature has no '{role}' value")
        operand = _parse_operand(role, value)
        if isinstance(entry, dict):
            operand = replace(operand, memory_space=_opt_str(entry.get("memory_space")),
                              swizzle=_opt_int(entry.get("swizzle")),
                              transposed=entry.get("transposed") if isinstance(
                                  entry.get("transposed"), bool) else None,
                              tmem_packing=_opt_int(entry.get("tmem_packing")),
                              tmem_collective=entry.get("tmem_collective") if isinstance(
                                  entry.get("tmem_collective"), bool) else None)
        operands.append(operand)
    notes = []
    # A call no family covers is never built: the runner says so, whatever its operands lack.
    for i, role in ((1, "a"), (2, "b")):
        if operands[i].mlir is None and known is not None:
            operands[i], note = _infer_operand(known, role, operands[i], operands[0])
            notes.append(note)
    for role, op in zip(("acc", "a", "b"), operands, strict=True):
        if known is not None and (op.mlir is None or dtypes.mlir_bits(op.mlir) is None):
            raise _SignatureGap(f"the {role} element type is unknown (dtype={op.dtype!r}, "
                                f"element_type={op.element_type!r})")
    order = raw.get("argument_order") or "acc_a_b"
    if order not in ("acc_a_b", "a_b_acc"):
        raise _SignatureGap(f"unknown argument_order {order!r}")
    semantics = raw.get("lowering_semantics")
    arch = raw.get("target_arch")
    target = raw.get("target_jax")
    raw_options = raw.get("options")
    options = tuple(sorted(
        (str(k), v) for k, v in raw_options.items()
        if isinstance(v, str | int | float | bool) or v is None)) if isinstance(
            raw_options, dict) else ()
    return Call(
        api=api, acc=operands[0], a=operands[1], b=operands[2], roles=roles, options=options,
        target_jax=target if isinstance(target, str) else None,
        lowering_semantics=semantics.lower() if isinstance(semantics, str) else None,
        argument_order=order, target_arch=str(arch) if arch is not None else None,
        notes=tuple(notes), family=family,
    )


def _infer_operand(family: Family, role: str, op: Operand,
                   acc: Operand) -> tuple[Operand, str]:
    """An operand of unknown dtype, rebuilt as what its family guesses from the bit width its
    layout was built for and the accumulator's kind."""
    bits = op.layout.bitwidth
    if bits is None or acc.mlir is None:
        raise _SignatureGap(f"the {role} element type is unknown and its layout names no bit "
                            "width")
    name = family.guess_operand_dtype(bits, integer=dtypes.mlir_is_integer(acc.mlir),
                                     unsigned=op.signedness == "unsigned")
    info = dtypes.lookup(name)
    if info is None:
        raise _SignatureGap(f"the {role} element type is unknown ({bits}-bit layout)")
    signedness = op.signedness or info.natural_signedness
    guessed = replace(op, dtype=name, element_type=info.mlir, signedness=signedness)
    return guessed, (f"{role}'s dtype is unknown: built as {name}, from its {bits}-bit "
                     f"{op.layout.kind} layout")


def _parse_operand(role: str, raw: Mapping[str, Any]) -> Operand:
    dtype = raw.get("dtype")
    element_type = raw.get("element_type")
    signedness = raw.get("signedness")
    if signedness is not None and signedness not in SIGNEDNESS:
        raise _SignatureGap(f"'{role}.signedness' is {signedness!r}")
    layout_raw = raw.get("layout")
    layout = _parse_layout(layout_raw) if isinstance(layout_raw, dict) else Layout()
    converted_raw = raw.get("converted_from")
    converted_from = _parse_layout(converted_raw) if isinstance(converted_raw, dict) else None
    shape_raw = raw.get("shape")
    shape: tuple[int | None, ...] | None = None
    if isinstance(shape_raw, Sequence) and not isinstance(shape_raw, str):
        shape = tuple(d if _is_int(d) else None for d in shape_raw)
    return Operand(
        dtype=_opt_str(dtype), element_type=_opt_str(element_type),
        signedness=_opt_str(signedness), layout=layout, shape=shape,
        data_dtype=_opt_str(raw.get("data_dtype")), source=_opt_str(raw.get("source")),
        converted_from=converted_from,
        view=view if (view := raw.get("view")) in ("plain", "transposed") else None,
    )


def _parse_layout(raw: Mapping[str, Any]) -> Layout:
    return Layout(
        kind=_opt_str(raw.get("kind")),
        bitwidth=_opt_int(raw.get("bitwidth")),
        m_warps=_opt_int(raw.get("m_warps")),
        name=_opt_str(raw.get("name")),
    )


def _opt_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _opt_int(value: object) -> int | None:
    return value if _is_int(value) else None
