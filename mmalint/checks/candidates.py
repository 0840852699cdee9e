"""The dtypes an operand of undecided dtype may still have, by the kernel's own evidence.

When nobody in the checked tree decides an operand's dtype (library code, a caller's array),
the element types jax has are still a finite set (`mmalint.facts.dtypes`), and the code around
the call rules some of them out: a FragmentedArray built with `is_signed=True` holds an integer
(`FragmentedArray.__init__` raises for any other type), one built without `is_signed` a float;
an MMA operand layout fixes the bit width (`mma` compares the layout with `MMALayouts(T)`'s, so
another width fails); `mma`'s operands must match. Each candidate is the call with those dtypes
filled in; the rules run every candidate, and a call fails for certain only when every candidate
fails (`mmalint.checks.rules`). Every dtype ruled out here fails too, at the check its evidence
stands for, so "every dtype fails" holds of the whole domain, not only of the candidates.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from mmalint.analysis.dtypes import dtype_of_ir_type
from mmalint.analysis.values import Array, DTypeSet, Fragment, Origin, Ref
from mmalint.checks.call import MmaCall, Operand
from mmalint.facts.dtypes import DTYPES

# The element types a candidate may have: every dtype but complex ones, which no MMA of any
# family takes and no FragmentedArray holds (they would only fail, each with its own message).
DOMAIN: tuple[str, ...] = tuple(name for name, d in DTYPES.items() if d.kind != "complex")

# A call whose candidates multiply beyond this is left undecided (silence), to bound the work.
MAX_CANDIDATES = 96

# What `is_signed` on a FragmentedArray says of its element type: True and False only for
# integers (bool is i1, unsigned), None only for floats. jax checks it as the array is built
# (`fragmented_array.py`, the same in 0.10, 0.11 and 0.12).
_SIGN_KINDS = {
    "signed": (frozenset({"int"}), "is_signed=True",
               "is_signed=True given here: only an integer array has it"),
    "unsigned": (frozenset({"uint", "bool"}), "is_signed=False",
                 "is_signed=False given here: only an unsigned integer or bool array has it"),
    "signless": (frozenset({"float"}), "no is_signed",
                 "built without is_signed here: only a floating array may be"),
}


@dataclass(frozen=True)
class Evidence:
    """One fact of the kernel that rules dtypes out for a role, and where it was decided."""

    role: str
    short: str  # as a finding's message names it: "is_signed=True"
    note: str  # as the note at `origin` says it: "is_signed=True given here: ..."
    origin: Origin | None


@dataclass(frozen=True)
class Candidate:
    """The call with one dtype filled in for each role whose dtype was not known."""

    assigned: tuple[tuple[str, str], ...]  # (role, dtype)
    call: MmaCall

    @property
    def label(self) -> str:
        """The dtype this candidate stands for: the operands' (`a`'s), else the first role's."""
        by_role = dict(self.assigned)
        return by_role.get("a") or by_role.get("b") or self.assigned[0][1]


@dataclass(frozen=True)
class Candidates:
    """Every candidate of a call, the dtypes each role may have and the evidence that left them.

    `unsupported`: the family's conditions that reject an operand dtype the MMA never takes
    (`Unsupported operand type`): a candidate failing one fails, but says nothing of what the
    kernel's author meant, so the rule a finding reports is chosen among the others.
    """

    roles: tuple[str, ...]
    allowed: tuple[tuple[str, tuple[str, ...]], ...]  # (role, its candidate dtypes)
    items: tuple[Candidate, ...]
    evidence: tuple[Evidence, ...]
    unsupported: frozenset[str] = frozenset()
    # Candidates (by label) that fail for certain, but at a check that depends on how the code
    # used the dtype (an `MMALayouts` of it may fail first), so what jax raises first is not
    # known: none is predicted for them, and they count as dtypes the MMA does not take.
    unsure: frozenset[str] = frozenset()

    def dtypes_of(self, role: str) -> tuple[str, ...]:
        return dict(self.allowed).get(role, ())


def undecided(op: Operand) -> bool:
    """Nothing is known of the operand's element type."""
    return op.element_type is None and op.dtype is None


def sign_evidence(role: str, op: Operand) -> tuple[frozenset[str], Evidence] | None:
    """The dtype kinds a FragmentedArray's `is_signed` leaves, with where it was given."""
    if not isinstance(op.value, Fragment) or op.signedness not in _SIGN_KINDS:
        return None
    kinds, short, note = _SIGN_KINDS[op.signedness]
    return kinds, Evidence(role, short, note, op.sign_origin or op.created)


def set_evidence(role: str, op: Operand) -> tuple[frozenset[str], list[Evidence]] | None:
    """The dtypes an operand is one of where paths that decided different ones meet (an array
    of a `DTypeSet` dtype, or a FragmentedArray loaded from memory of one), with where each was
    decided (likewise a memory ref). A FragmentedArray's element type is the memory's; its
    signedness its own."""
    value = op.value
    if isinstance(value, Array | Ref) and isinstance(value.dtype, DTypeSet):
        found = value.dtype
        names = found.names
    elif isinstance(value, Fragment) and isinstance(value.data_dtype, DTypeSet):
        found = value.data_dtype
        sign = {"signed": True, "unsigned": False, "signless": None}.get(op.signedness or "")
        if op.signedness is None:
            names = found.names
        else:
            # An integer loaded with is_signed=None fails as it is built: no dtype is left.
            mapped = (dtype_of_ir_type(DTYPES[n].mlir, sign) for n in found.names)
            names = frozenset(n for n in mapped if n is not None)
    else:
        return None
    short = f"`{op.role or role}` is {_listed(sorted(found.names, key=list(DTYPES).index))}"
    evidence = [Evidence(role, short, f"{name} chosen here", origin) for name, origin in found.choices]
    return frozenset(names) & frozenset(DOMAIN), evidence or [Evidence(role, short, "", None)]


def _listed(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def with_dtype(op: Operand, name: str) -> Operand:
    """The operand as it would be with element dtype `name`: a FragmentedArray keeps the
    `is_signed` it was built with (the candidates agree with it), an array has its dtype's."""
    info = DTYPES[name]
    signedness = op.signedness if isinstance(op.value, Fragment) and op.signedness else info.signedness
    return replace(op, element_type=info.mlir, dtype=name, signedness=signedness)


# (role, operand) -> the dtypes a role-specific fact leaves and its evidence, or None
RoleEvidence = Callable[[str, Operand], "tuple[Callable[[str], bool], Evidence] | None"]
# (dtype of a, dtype of b) -> whether the pair gets past the family's operand agreement check
Pairing = Callable[[MmaCall, str, str], bool]


def candidates(
    call: MmaCall,
    *,
    role_evidence: RoleEvidence | None = None,
    pairing: Pairing | None = None,
    partner_text: Callable[[MmaCall, str], tuple[str, str]] | None = None,
    unsupported: frozenset[str] = frozenset(),
) -> Candidates | None:
    """The candidates of a call, or None when no role with an undecided dtype has evidence.

    Each undecided role gets the domain, pruned by its FragmentedArray's `is_signed` and by
    `role_evidence`. With `pairing`, `a` and `b` are filled in together, as pairs that get past
    the family's operand agreement check (a pair that does not fails there), so the evidence of
    either, or a known dtype of one, speaks for both. A role with no evidence stays undecided:
    its checks stay unknown, which never makes a candidate fail.
    """
    allowed: dict[str, tuple[str, ...]] = {}
    evidence: list[Evidence] = []
    for role, op in call.operands.items():
        if not undecided(op):
            continue
        keep: list[Callable[[str], bool]] = []
        sign = sign_evidence(role, op)
        if sign is not None:
            kinds, said = sign
            keep.append(_of_kinds(kinds))
            evidence.append(said)
        chosen = set_evidence(role, op)
        if chosen is not None:
            keep.append(chosen[0].__contains__)
            evidence.extend(chosen[1])
        if role_evidence is not None:
            found = role_evidence(role, op)
            if found is not None:
                keep.append(found[0])
                evidence.append(found[1])
        if keep:
            allowed[role] = tuple(n for n in DOMAIN if all(k(n) for k in keep))
    pairs: list[tuple[str, str]] | None = None
    if pairing is not None:
        pairs = _paired(call, allowed, evidence, pairing, partner_text)
    if not allowed:
        return None
    roles = tuple(r for r in ("acc", "a", "b") if r in allowed)
    factors: list[Sequence[tuple[tuple[str, str], ...]]] = []
    if pairs is not None:
        factors.append([(("a", x), ("b", y)) for x, y in pairs])
    for role in roles:
        if pairs is None or role not in ("a", "b"):
            factors.append([((role, n),) for n in allowed[role]])
    total = 1
    for factor in factors:
        total *= len(factor)
    if total == 0 or total > MAX_CANDIDATES:
        return None
    items = []
    for combo in itertools.product(*factors):
        assigned = tuple(pair for part in combo for pair in part)
        filled = dict(call.operands)
        for role, name in assigned:
            filled[role] = with_dtype(filled[role], name)
        items.append(Candidate(assigned, replace(call, acc=filled["acc"], a=filled["a"], b=filled["b"])))
    return Candidates(
        roles, tuple((r, allowed[r]) for r in roles), tuple(items),
        tuple(e for e in evidence if e.role in allowed), unsupported,
    )


def _paired(
    call: MmaCall, allowed: dict[str, tuple[str, ...]], evidence: list[Evidence],
    pairing: Pairing, partner_text: Callable[[MmaCall, str], tuple[str, str]] | None,
) -> list[tuple[str, str]] | None:
    """`a` and `b` filled in together: both pairs of candidates when both are undecided and one
    has evidence (the other gets the whole domain), else the undecided one matched with the
    dtype of the known one. Updates `allowed` (and `evidence`, for a known partner); the pairs
    when both are filled in together, None otherwise."""
    a, b = call.a, call.b
    if undecided(a) and undecided(b):
        if "a" not in allowed and "b" not in allowed:
            return None
        pairs = [(x, y) for x in allowed.get("a", DOMAIN) for y in allowed.get("b", DOMAIN)
                 if pairing(call, x, y)]
        allowed["a"] = tuple(dict.fromkeys(x for x, _ in pairs))
        allowed["b"] = tuple(dict.fromkeys(y for _, y in pairs))
        return pairs
    if undecided(a) == undecided(b):
        return None  # both known
    role, known_role = ("a", "b") if undecided(a) else ("b", "a")
    known = call.operands[known_role]
    anchor = known.dtype or _any_dtype_of(known.element_type or "")
    if anchor is None:
        return None
    allowed[role] = tuple(
        n for n in allowed.get(role, DOMAIN)
        if (pairing(call, n, anchor) if role == "a" else pairing(call, anchor, n))
    )
    if partner_text is not None:
        short, note = partner_text(call, known_role)
        evidence.append(Evidence(role, short, note, known.created))
    return None


def partner(call: MmaCall, known: str) -> tuple[str, str]:
    """How a known operand's dtype is named as evidence for the undecided other one."""
    op = call.operands[known]
    other = "b" if known == "a" else "a"
    return (f"`{known}` is {op.display}",
            f"operand `{known}` {op.how or 'created'} here as {op.display}: `{other}` must match it")


def _of_kinds(kinds: frozenset[str]) -> Callable[[str], bool]:
    return lambda name: DTYPES[name].kind in kinds


def _any_dtype_of(element_type: str) -> str | None:
    """A dtype whose MLIR type is `element_type` (a known element type of unknown signedness)."""
    for name in DOMAIN:
        if DTYPES[name].mlir == element_type:
            return name
    return None


def generic(call: MmaCall) -> Candidates | None:
    """Candidates from what any FragmentedArray says of itself (its `is_signed`), for a family
    with no evidence of its own."""
    return candidates(call)
