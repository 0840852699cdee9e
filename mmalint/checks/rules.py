"""Rules: a normalized MMA call in, findings out, driven by the catalog's checks.

jax's checks run in catalog order; every failing check is a finding of its rule, and the first
failing one is what jax actually raises. Rules never see libcst nodes: only facts and origins.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mmalint.analysis.values import Fragment, Origin
from mmalint.catalog import Catalog, Check, Rule
from mmalint.checks.call import MmaCall, Operand
from mmalint.checks.candidates import Candidate, Candidates
from mmalint.checks.conditions import BY_FAMILY, Conditions, Outcome
from mmalint.checks.families import family
from mmalint.checks.families.mma import ROLES
from mmalint.facts.dtypes import DTYPES


@dataclass(frozen=True)
class Predicted:
    exception: str
    message: str
    jax_version: str
    match: str = "exact"


@dataclass(frozen=True)
class Note:
    message: str
    origin: Origin


@dataclass(frozen=True)
class Finding:
    rule: Rule
    call: MmaCall
    subject: str | None
    message: str
    help: str
    notes: tuple[Note, ...]
    predicted: Predicted | None
    masked_by: str | None
    check: Check
    also: tuple[str, ...] = ()  # other operands the same rule holds for
    # An any-operand finding (operands unknown): what jax raises for a representative operand
    # dtype of each kind, as (operand dtype, rule code, prediction).
    by_operand: tuple[tuple[str, str, Predicted], ...] = ()
    # The roles whose dtype nobody decided and whose candidates all fail (`candidates`): the
    # finding holds for every dtype the kernel allows there.
    enumerated: tuple[str, ...] = ()


_ROLE_NAMES = {role.name: role.title for role in ROLES}
# The check that reads the arguments as passed and tells the accumulator went last.
_ORDER_CONDITION = "accumulator-last"


def evaluate(call: MmaCall, catalog: Catalog) -> list[Finding]:
    """All findings for one call on one path."""
    version = call.version
    checks = catalog.checks_for(call.api, version)
    if not checks:
        # The API itself is missing in this jax (plgpu.mma before 0.11): that is MMA501, from
        # the API-use records; nothing about the call's values can be predicted.
        return []
    table = catalog.table(call.api, version)
    conditions = BY_FAMILY[call.family]
    findings: list[Finding] = []

    order_check = next((c for c in checks if c.condition == _ORDER_CONDITION), None)
    if order_check is not None:
        outcome = conditions[order_check.condition](call, table)[0]
        if outcome.status:
            # jax raises for the values as passed; the finding describes them by their roles.
            # Building the values does not depend on the argument order: construction checks
            # see them by role; the MMA's own checks see them as passed.
            by_role = call.swapped()
            first = _first_raise(call, checks, table, conditions, by_role)
            predicted = None
            if first is not None:
                predicted = _predicted(first[0], first[1], first[2], version)
            call = by_role
            findings.append(_finding(catalog, order_check, Outcome(True, "acc"), call, predicted, None))

    first_raise: str | None = None if not findings else findings[0].rule.code
    for check in checks:
        if check.condition == _ORDER_CONDITION or not _applies(check, call):
            continue
        for outcome in conditions[check.condition](call, table):
            if not outcome.status:
                continue
            predicted = _predicted(check, outcome, call, version) if check.raises else None
            masked_by = first_raise if first_raise != check.rule else None
            findings.append(_finding(catalog, check, outcome, call, predicted, masked_by))
            if check.raises and first_raise is None:
                first_raise = check.rule
    if first_raise is not None and any(f.check.raises for f in findings):
        # A kernel that does not build computes nothing yet. A silent finding stays when the
        # fix of what raises cannot touch its operand (an int8 operand loaded unsigned next to
        # an accumulator built without is_signed); it waits when that fix may change it (a
        # dtype mismatch between a and b may well be fixed by changing the uint8 one).
        involved: set[str] = set()
        for f in findings:
            if f.check.raises:
                involved |= _involved(f)
        findings = [f for f in findings if f.check.stage != "silent" or (f.subject or "a") not in involved]
    swapped = call.order != "acc_a_b"
    candidates = None if swapped else family(call.family).candidates(call)
    plain = {f.rule.code for f in findings if f.check.stage != "any-operand"}
    # What each dtype the kernel's evidence leaves fails, once for both uses below.
    failing = None if candidates is None else _candidate_failures(candidates, checks, table, conditions)
    by_candidates, stops_first = ([], None) if candidates is None else _every_candidate(
        catalog, call, candidates, failing, plain)
    resolved: list[Finding] = []
    for f in findings:
        if stops_first and f.check.raises and f.masked_by is None and f.rule.code != stops_first:
            f = replace(f, masked_by=stops_first)  # every dtype left stops there before this
        if f.check.stage == "any-operand":
            if by_candidates:
                continue  # what the kernel's evidence leaves says more than "any operand"
            by_operand = _by_operand(call, checks, table, conditions, candidates, failing)
            if by_operand is None:
                continue  # some operand dtype would not fail after all: no claim to make
            f = replace(f, by_operand=by_operand)
        resolved.append(f)
    resolved.extend(by_candidates)
    return _dedupe(resolved)


def _involved(finding: Finding) -> set[str]:
    """The operands whose dtype or signedness the fix of a raising finding may change."""
    if finding.rule.code in ("MMA103", "MMA104"):
        return {"a", "b", *finding.also, finding.subject or ""}
    return {finding.subject or "a", *finding.also}


# An operand dtype of each kind the MMA takes, with its MLIR type and natural signedness: what
# an any-operand finding's call raises is worked out for each.
REPRESENTATIVE_OPERANDS = (("bfloat16", "bf16", "signless"), ("int8", "i8", "signed"))


def _by_operand(
    call: MmaCall, checks: list[Check], table: dict[str, object], conditions: Conditions,
    candidates: Candidates | None = None,
    failing: Failing | None = None,
) -> tuple[tuple[str, str, Predicted], ...] | None:
    """The first error jax raises for the call with each representative operand dtype (each
    dtype the kernel's evidence leaves, when it says anything of the operands); None when one
    of them raises nothing (the claim that every operand dtype fails would be false)."""
    if candidates is not None and {"a", "b"} & set(candidates.roles):
        # `failing` is None when some candidate raises nothing.
        return None if failing is None else _first_errors(failing, candidates, call.version)
    results = []
    for dtype, element, signedness in REPRESENTATIVE_OPERANDS:
        a, b = (
            replace(op, element_type=element, dtype=dtype, signedness=op.signedness or signedness)
            for op in (call.a, call.b)
        )
        first = _first_raise(replace(call, a=a, b=b), checks, table, conditions)
        if first is None:
            return None
        check, outcome, subject = first
        results.append((dtype, check.rule, _predicted(check, outcome, subject, call.version)))
    return tuple(results)


def _applies(check: Check, call: MmaCall) -> bool:
    if check.semantics is None:
        return True
    if check.semantics == "lane":
        return call.semantics in ("lane", None)
    return call.semantics == check.semantics


# Each candidate of the undecided roles with the checks it fails, in jax's order.
Failing = list[tuple[Candidate, list[tuple[Check, Outcome]]]]


def _failures(
    call: MmaCall, checks: list[Check], table: dict[str, object], conditions: Conditions
) -> list[tuple[Check, Outcome]]:
    """Every check that raises and fails for the call, in jax's order (the first one is what
    jax raises)."""
    failed = []
    for check in checks:
        if not check.raises or not _applies(check, call):
            continue
        for outcome in conditions[check.condition](call, table):
            if outcome.status:
                failed.append((check, outcome))
    return failed


def _candidate_failures(
    candidates: Candidates, checks: list[Check], table: dict[str, object], conditions: Conditions
) -> Failing | None:
    """Each candidate with the checks it fails, in jax's order; None when one candidate passes
    every check jax makes (then nothing holds for every dtype the kernel allows)."""
    results = []
    for candidate in candidates.items:
        failures = _failures(candidate.call, checks, table, conditions)
        if not failures:
            return None
        results.append((candidate, failures))
    return results


def _first_errors(
    results: Failing, candidates: Candidates,
    version: str,
) -> tuple[tuple[str, str, Predicted], ...]:
    """What each candidate raises first, by its dtype label; not for a candidate whose first
    error is not known (`candidates.unsure`): it fails, but nothing is predicted for it."""
    return tuple(dict.fromkeys(
        (cand.label, f[0][0].rule, _predicted(f[0][0], f[0][1], cand.call, version))
        for cand, f in results if cand.label not in candidates.unsure
    ))


def _every_candidate(
    catalog: Catalog, call: MmaCall, candidates: Candidates,
    results: Failing | None, reported: set[str],
) -> tuple[list[Finding], str | None]:
    """The findings that hold whatever dtype the undecided roles have among those the kernel
    allows: none when one candidate passes every check jax makes. A rule is reported when it
    fails for every candidate the MMA takes as an operand (those it never takes fail too, at
    `Unsupported operand type`), and not already reported from what is known. Also the rule
    every candidate fails first, when they agree."""
    if results is None:
        return [], None  # some dtype the kernel allows passes: nothing is certain
    taken = [r for r in results if r[0].label not in candidates.unsure
             and not any(c.condition in candidates.unsupported for c, _ in r[1])]
    pool = taken or results
    common = [
        code for code in dict.fromkeys(c.rule for c, _ in pool[0][1])
        if code not in reported and all(any(c.rule == code for c, _ in f) for _, f in pool)
    ]
    version = call.version
    # What each candidate raises first, by the operands' dtype (`mmalint confirm` rebuilds the
    # call with each); not when the accumulator's dtype was filled in too, which it cannot.
    by_operand = () if "acc" in candidates.roles else _first_errors(results, candidates, version)
    found = []
    for code in common:
        hits = [(cand, next((c, o) for c, o in f if c.rule == code)) for cand, f in pool]
        # jax stops at another check first for every candidate: that one's code (when they
        # disagree, `by_operand` says which each raises first).
        firsts = {f[0][0].rule for _, f in pool}
        masked_by = next(iter(firsts)) if len(firsts) == 1 and code not in firsts else None
        found.append(_candidate_finding(catalog, call, candidates, hits, results, pool, masked_by,
                                        by_operand))
    firsts = {f[0][0].rule for _, f in results}
    return found, (next(iter(firsts)) if len(firsts) == 1 and found else None)


def _candidate_finding(
    catalog: Catalog, call: MmaCall, candidates: Candidates,
    hits: list[tuple[Candidate, tuple[Check, Outcome]]],
    results: Failing,
    pool: Failing,
    masked_by: str | None, by_operand: tuple[tuple[str, str, Predicted], ...],
) -> Finding:
    """One rule's finding over every candidate: its message with each fact that differs
    between candidates written as the alternatives (`int4 or uint4`), what the evidence left,
    and what jax raises for each candidate."""
    check, outcome = hits[0][1]
    rule = catalog.rules[check.rule]
    per_candidate = [_fields(cand.call, c, o) for cand, (c, o) in hits]
    fields = {key: _alternatives([f.get(key, "?") for f in per_candidate]) for key in per_candidate[0]}
    message, help_text = _texts(rule, call, outcome, fields, _evidence_text(candidates, pool, results))
    predictions = {(p.exception, p.message, p.match) for p in
                   (_predicted(c, o, cand.call, call.version) for cand, (c, o) in hits)}
    predicted = None
    if len(predictions) == 1 and len(pool) == len(results):
        predicted = _predicted(check, outcome, hits[0][0].call, call.version)
    notes = list(_notes(rule.code, call, outcome))
    for evidence in candidates.evidence:
        if evidence.origin is not None and all(n.origin is not evidence.origin for n in notes):
            notes.append(Note(evidence.note, evidence.origin))
    return Finding(
        rule, call, outcome.subject, message, help_text, tuple(notes), predicted, masked_by,
        check, by_operand=by_operand, enumerated=candidates.roles,
    )


def _texts(rule: Rule, call: MmaCall, outcome: Outcome, fields: dict[str, str], evidence: str = "") -> tuple[str, str]:
    """A finding's message and help from its rule's templates (the variant the outcome names):
    the message, then what the evidence left (`evidence`), then the world it holds in."""
    message_template, help_template = rule.variant(outcome.fields.get("variant"))
    try:
        message = message_template.format(**fields)
    except (KeyError, IndexError):
        message = rule.summary
    message += evidence
    world = call.site.context.world
    if world:
        message += " (when " + ", ".join(str(b) for b in world) + ")"
    try:
        help_text = help_template.format(**fields)
    except (KeyError, IndexError):
        help_text = help_template
    return message, help_text


def _alternatives(values: list[str], joiner: str = "or") -> str:
    """`int4`, `int4 or uint4`, `int2, int4 or int8`: the distinct values, in order (a value
    that is itself alternatives, `f32 or f16`, counts as each of them)."""
    distinct = list(dict.fromkeys(part for value in values for part in value.split(f" {joiner} ")))
    if len(distinct) == 1:
        return distinct[0]
    return ", ".join(distinct[:-1]) + f" {joiner} " + distinct[-1]


_ROLE_DTYPE = {"acc": "the accumulator dtype", "a": "the operand dtype", "b": "the operand dtype"}


def _evidence_text(
    candidates: Candidates,
    pool: Failing,
    results: Failing,
) -> str:
    """` (the operand dtype is not known here, but is_signed=True and a 8-bit ... leave only
    int8)`: what was undecided, the evidence, and what it leaves."""
    whats = list(dict.fromkeys(_ROLE_DTYPE[r] for r in candidates.roles))
    said = list(dict.fromkeys(e.short for e in candidates.evidence))
    left = _alternatives(list(dict.fromkeys(c.label for c, _ in results)))
    text = f" ({' and '.join(whats)} {'is' if len(whats) == 1 else 'are'} not known here, but "
    if len(said) == 1 and said[0].endswith(f" is {left}"):
        text += said[0]  # the dtypes it is one of are all the evidence: say them once
    else:
        text += f"{_alternatives(said, 'and')} leave{'s' if len(said) == 1 else ''} only {left}"
    if len(pool) != len(results):
        never = list(dict.fromkeys(c.label for c, _ in results if all(c is not p for p, _ in pool)))
        text += f", and {_alternatives(never, 'and')} "
        text += "is no operand type" if len(never) == 1 else "are no operand types"
        text += " of this MMA"
    return text + ")"


def _first_raise(
    call: MmaCall, checks: list[Check], table: dict[str, object], conditions: Conditions,
    by_role: MmaCall | None = None,
) -> tuple[Check, Outcome, MmaCall] | None:
    for check in checks:
        subject = by_role if by_role is not None and check.stage == "construct" else call
        if not check.raises or not _applies(check, subject):
            continue
        for outcome in conditions[check.condition](subject, table):
            if outcome.status:
                return check, outcome, subject
    return None


def _dedupe(findings: list[Finding]) -> list[Finding]:
    """One finding per rule: the earliest check wins; the other operands it holds for join it."""
    merged: dict[str, Finding] = {}
    extra: dict[str, list[Finding]] = {}
    for f in findings:
        first = merged.get(f.rule.code)
        if first is None:
            merged[f.rule.code] = f
        elif f.subject != first.subject and all(x.subject != f.subject for x in extra.get(f.rule.code, [])):
            extra.setdefault(f.rule.code, []).append(f)
    result = []
    for code, first in merged.items():
        others = extra.get(code, [])
        if not others:
            result.append(first)
            continue
        roles = ", ".join(_ROLE_NAMES.get(o.subject or "", o.subject or "") for o in others)
        notes = list(first.notes)
        for o in others:
            notes.extend(n for n in o.notes if all(n.origin is not m.origin for m in notes))
        result.append(
            replace(first, message=f"{first.message}; likewise the {roles}", notes=tuple(notes),
                    also=tuple(o.subject or "" for o in others))
        )
    return result


def _fields(call: MmaCall, check: Check, outcome: Outcome) -> dict[str, str]:
    acc, a, b = call.acc, call.a, call.b
    fields = {
        "api": call.api,
        "operand_dtype": a.display,
        "acc_dtype": acc.display,
        "a_dtype": a.display,
        "b_dtype": b.display,
        "a_type": a.element_type or "?",
        "b_type": b.element_type or "?",
        "acc_type": acc.element_type or "?",
        "acc_desc": _acc_desc(acc),
        "supported": ", ".join(_supported(call)),
        "role": outcome.subject or "",
        "a_shape_text": _shape_text(a.shape),
        "b_shape_text": _shape_text(b.shape),
        "acc_shape_text": _shape_text(acc.shape),
        "target_arch": f"sm_{call.target_arch[0]}{call.target_arch[1]}" if call.target_arch else "?",
        "layout_desc": "?",
        "m_warps": "?",
        "acc_m_warps": "?",
    }
    fields.update(outcome.fields)
    for dim in ("m", "n", "k"):
        if dim in outcome.fields:
            fields["mismatch"] = f"{dim.upper()}: {outcome.fields[dim]} != {outcome.fields[dim + '2']}"
    if "mismatch" not in fields:
        fields["mismatch"] = "M, N or K differ"
    subject = call.operands.get(outcome.subject or "")
    if subject is not None:
        fields.update(_subject_fields(call, subject, outcome.subject or ""))
        fields.update({k: v for k, v in outcome.fields.items() if k in ("m_warps", "shape", "tile", "layout_desc")})
    return fields


def _shape_text(shape: tuple[int | None, ...] | None) -> str:
    if shape is None:
        return "?"
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _acc_desc(acc: Operand) -> str:
    if acc.element_type == "i32" and acc.signedness == "unsigned" and isinstance(acc.value, Fragment):
        return "int32 with is_signed=False"
    return acc.display


def _supported(call: MmaCall) -> list[str]:
    names = {
        "bf16": "bfloat16", "f16": "float16", "f8E4M3FN": "float8_e4m3fn", "f8E5M2": "float8_e5m2",
        "i8": "int8/uint8", "i4": "int4/uint4", "f64": "float64",
    }
    from mmalint.catalog import load_catalog

    catalog = load_catalog()
    version = call.version if catalog.has_table(call.api, call.version) else "0.11"
    return [names.get(t, t) for t in catalog.table(call.api, version).operand_types]


def _subject_fields(call: MmaCall, op: Operand, role: str) -> dict[str, str]:
    requirement = ""
    if op.is_int and op.signedness == "signless":
        requirement = "integer arrays need is_signed=True or False"
    elif op.is_float and op.signedness != "signless":
        requirement = "floating arrays must have is_signed=None"
    data = DTYPES.get(op.data_dtype or "")
    computed_as = affected = ""
    if data is not None and data.kind in ("int", "uint"):
        bits = data.bits
        if op.signedness == "unsigned":
            computed_as = f"uint{bits}"
            affected = f"below 0 (read as {2 ** bits - 1} for -1)"
        else:
            computed_as = f"int{bits}"
            affected = f">= {2 ** (bits - 1)} (read as negative)"
    ptx_type = {"uint8": "s8", "uint4": "s4"}.get(op.dtype or "", "signed")
    affected_204 = {"uint8": ">= 128", "uint4": ">= 8"}.get(op.dtype or "", "")
    how = {"loaded": "loaded", "splatted": "splatted", "converted": "converted with astype",
           "built": "built", "bitcast": "bitcast", "mma result": "an mma result",
           "wgmma accumulator": "made by WGMMAAccumulator.zero"}.get(op.how, op.how or "built")
    layout = op.layout
    fields = {
        "layout_kind": {"mma_lhs": "lhs", "mma_rhs": "rhs", "mma_acc": "acc"}.get(layout.kind, layout.kind) if layout else "?",
        "role": _ROLE_NAMES.get(role, role),
        "is_signed": op.is_signed_text,
        "type": op.element_type or "?",
        "requirement": requirement,
        "how": how,
        "data_dtype": op.data_dtype or "?",
        "data_dtype_expr": f"jnp.{op.data_dtype}" if op.data_dtype else "dtype",
        "computed_as": computed_as,
        "ptx_type": ptx_type,
        "m_warps": str(layout.m_warps) if layout is not None and layout.m_warps is not None else "?",
    }
    if call.frontend == "pallas":
        fields["affected"] = affected_204
    else:
        fields["affected"] = affected
    return fields


def _predicted(check: Check, outcome: Outcome, call: MmaCall, version: str) -> Predicted:
    fields = _fields(call, check, outcome)
    try:
        message = check.message.format(**fields)
    except (KeyError, IndexError):
        message = check.message
    return Predicted(check.exception, message, call.version, check.match)


def _finding(
    catalog: Catalog,
    check: Check,
    outcome: Outcome,
    call: MmaCall,
    predicted: Predicted | None,
    masked_by: str | None,
) -> Finding:
    rule = catalog.rules[check.rule]
    message, help_text = _texts(rule, call, outcome, _fields(call, check, outcome))
    return Finding(
        rule, call, outcome.subject, message, help_text, tuple(_notes(rule.code, call, outcome)),
        predicted, masked_by, check,
    )


def _notes(code: str, call: MmaCall, outcome: Outcome) -> list[Note]:
    notes: list[Note] = []
    acc, a = call.acc, call.a

    def add(message: str, origin: Origin | None) -> None:
        if origin is not None and all(n.origin is not origin for n in notes):
            notes.append(Note(message, origin))

    def decided(op: Operand, what: str, origin: Origin | None) -> None:
        """A second note where a fact was decided, when that is not the creation line."""
        if origin is None or op.created is None:
            return
        if origin.block is op.created.block and _contains(op.created, origin):
            return
        add(what, origin)

    if code in ("MMA101", "MMA102", "MMA201"):
        if acc.element_type is None and acc.dtype is None:
            add(f"accumulator {_verb(acc)} here, of a dtype mmalint could not decide", acc.created)
        else:
            add(f"accumulator {_verb(acc)} here as {_acc_desc(acc)}", acc.created)
        if code == "MMA201":
            decided(acc, f"is_signed={'False' if acc.signedness == 'unsigned' else acc.signedness} decided here", acc.sign_origin)
        else:
            decided(acc, f"{acc.display} chosen here", acc.type_origin)
        if a.element_type is None and a.dtype is None:
            add(f"operand `a` {_verb(a)} here, of a dtype mmalint could not decide", a.created)
        else:
            add(f"operand `a` {_verb(a)} here as {a.display}", a.created)
            decided(a, f"{a.display} chosen here", a.type_origin)
    elif code == "MMA103":
        add(f"operand `a` {_verb(a)} here as {a.display}", a.created)
        add(f"operand `b` {_verb(call.b)} here as {call.b.display}", call.b.created)
    elif code == "MMA104":
        add(f"operand `a` {_verb(a)} here as {a.display}", a.created)
        decided(a, f"{a.display} chosen here", a.type_origin)
    elif code == "MMA105":
        add(f"this is the accumulator ({acc.display}), passed third", acc.arg_origin or acc.created)
        add(f"accumulator {_verb(acc)} here as {acc.display}", acc.created)
    elif code in ("MMA202", "MMA203") and outcome.subject:
        op = call.operands[outcome.subject]
        sign = {"signed": "is_signed=True", "unsigned": "is_signed=False", "signless": "no is_signed"}.get(op.signedness or "", "")
        add(f"{_ROLE_NAMES[outcome.subject]} {_verb(op)} here as {op.element_type} with {sign}", op.created)
        if op.sign_origin is not None and op.created is not None and not _contains(op.created, op.sign_origin):
            add(f"{sign} decided here", op.sign_origin)
        if code == "MMA203":
            add(f"the data is {op.data_dtype}", op.data_origin)
    elif code == "MMA204":
        semantics = call.site.context.semantics
        if getattr(semantics, "name", None) == "default":
            add(
                f"no lowering_semantics given: jax {call.version} defaults to Warpgroup",
                semantics.origin,
            )
        else:
            add("warpgroup lowering semantics chosen here", semantics.origin)
        add(f"operand `a` {_verb(a)} here as {a.display}", a.created)
    elif code in ("MMA301", "MMA302", "MMA303", "MMA304", "MMA305", "MMA402") and outcome.subject:
        op = call.operands[outcome.subject]
        role = _ROLE_NAMES[outcome.subject]
        layout = op.layout
        if op.converted_from is not None and op.converted_at is not None:
            add(f"{role} converted here from {op.converted_from.name or op.converted_from.kind}", op.converted_at)
        if op.how == "mma result":
            add(f"{role} is the result of an earlier mma (accumulator layout)", op.created)
        else:
            shape = f" with shape {_shape_text(op.shape)}" if code == "MMA402" else ""
            add(f"{role} {_verb(op)} here{shape}", op.created)
        if layout is not None:
            add(f"layout `{layout.name or layout.kind}` built here (m_warps={layout.m_warps})", layout.built)
            if code == "MMA304":
                add(f"m_warps={layout.m_warps} given here", layout.m_warps_origin)
        if code == "MMA305" and acc.layout is not None:
            add(f"accumulator layout built here (m_warps={acc.layout.m_warps})", acc.layout.built or acc.created)
    elif code == "MMA401":
        for role in ("a", "b", "acc"):
            op = call.operands[role]
            add(f"{_ROLE_NAMES[role]} {_verb(op)} here with shape {_shape_text(op.shape)}", op.created)
    elif code == "MMA502":
        add(f"operand `a` {_verb(a)} here as {a.display}", a.created)
    elif code in _TMEM_A_CODES:
        for message, origin in _tmem_a_notes(call, outcome):
            add(message, origin)
    elif code in ("MMA612", "MMA716"):
        # K is B's rows; the swizzle is the SMEM's (Pallas) or the call's (Mosaic GPU).
        b = call.b
        swizzle = f", swizzled {b.swizzle} bytes" if b.swizzle is not None else ""
        add(f"operand `b` {_verb(b)} here with shape {_shape_text(b.shape)}{swizzle}", b.created)
        if code == "MMA716" and call.a.swizzle is not None and call.a.created is not b.created:
            add(f"operand `a` {_verb(a)} here with shape {_shape_text(a.shape)}, swizzled "
                f"{a.swizzle} bytes", a.created)
    for binding in call.site.context.world:
        if binding.origin is not None and any(_same(binding.origin, o) for o in _fact_origins(call)):
            add(f"when {binding}", binding.origin)
    return notes


# The rules about an operand A in TMEM (MMA713-715): their notes say where A was allocated.
_TMEM_A_CODES = ("MMA713", "MMA714", "MMA715")


def _tmem_a_notes(call: MmaCall, outcome: Outcome) -> list[tuple[str, Origin | None]]:
    """Where A was allocated in TMEM (with the packing it got, and where that was decided when
    it is a keyword of its own), and for Pallas where the lowering semantics came from when
    they decide the error."""
    a = call.a
    packing = f" with packing {a.tmem_packing}" if a.tmem_packing is not None else ""
    first = f"operand `a` allocated here in TMEM as {a.display}{packing}"
    origin, created = a.packing_origin, a.created
    if origin is not None and created is not None and _same(created, origin) and call.frontend == "mosaic":
        first += " (`mgpu.TMEM` packs nothing without `packing=` or `layout=`)"
    notes: list[tuple[str, Origin | None]] = [(first, created)]
    if origin is not None and created is not None and not _same(created, origin):
        where = "from this argument" if _contains(created, origin) else "decided here"
        notes.append((f"packing {a.tmem_packing} {where}", origin))
    semantics = call.site.context.semantics
    # The Warpgroup default decides MMA714's message (layout inference, not the MMA's check).
    warpgroup_default = call.semantics == "warpgroup" and getattr(semantics, "name", None) == "default"
    if call.frontend == "pallas" and "expected_packing" in outcome.fields and warpgroup_default:
        notes.append((f"no lowering_semantics given: jax {call.version} defaults to Warpgroup", semantics.origin))
    return notes


def _fact_origins(call: MmaCall) -> list[Origin]:
    origins = []
    for op in (call.acc, call.a, call.b):
        for o in (op.type_origin, op.sign_origin, op.data_origin):
            if o is not None:
                origins.append(o)
    return origins


def _same(x: Origin, y: Origin) -> bool:
    return x.block is y.block and x.node is y.node


def _contains(outer: Origin, inner: Origin) -> bool:
    if outer.block is not inner.block:
        return False
    o, i = outer.span(), inner.span()
    return o.start <= i.start and i.end <= o.end


def _verb(op: Operand) -> str:
    return {
        "loaded": "loaded",
        "splatted": "created",
        "created": "created",
        "converted": "converted",
        "cast": "created",
        "read": "read",
        "mma result": "computed",
        "computed": "computed",
        "built": "built",
    }.get(op.how, "created")
