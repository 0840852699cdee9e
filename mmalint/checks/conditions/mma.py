"""The conditions of the warp-level MMA family (`rules/checks/mma.toml`), over a normalized call.

Each is registered once under the name check rows give as `condition`; the same condition serves
`mgpu.mma` and Pallas's lowering into it. A condition answers True (jax fails this check), False
(it passes) or None (not decidable from what is known): see `registry`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mmalint.checks.conditions.registry import (
    Condition,
    Conditions,
    Outcome,
    dtype_kind,
    element_bits,
    one,
)
from mmalint.facts.dtypes import DTYPES, IR_TYPES
from mmalint.facts.mma import (
    ACCUMULATOR_TYPES,
    ARCH_MINIMUMS,
    F64_ACCUMULATOR,
    FLOAT_ACCUMULATOR,
    INT_ACCUMULATOR,
    M_WARPS,
    arch_name,
    base_tile,
    k_tile,
)

if TYPE_CHECKING:
    # Only for annotations: the conditions read calls, they build none, and the catalog loads
    # this module to validate condition names without loading the analysis.
    from mmalint.checks.call import MmaCall, Operand


@dataclass(frozen=True)
class MmaTable:
    """What one API of the family accepts in one jax version (`[tables."API"."VERSION"]`)."""

    # The MLIR operand types `mma()` accepts (`Unsupported operand type` otherwise).
    operand_types: tuple[str, ...] = ()
    # False before jax 0.11: `mma` compares with `MMALayouts(T)`, i.e. m_warps=4.
    infers_m_warps: bool = True
    # The lowering semantics of a Pallas kernel that names none.
    default_semantics: str | None = None
    # The accumulator dtypes Pallas's abstract eval accepts for floating operands.
    float_accumulators: tuple[str, ...] = ()
    # The operand bit widths `MMALayouts(T)` itself raises for (it is built before any mma).
    layouts_fail_for_bits: tuple[int, ...] = ()


CONDITIONS = Conditions("mma", MmaTable)
condition = CONDITIONS.condition


# ---------------------------------------------------------------- both APIs


@condition("accumulator-last")
def _accumulator_last(call: MmaCall, table: MmaTable) -> list[Outcome]:
    """`mma(a, b, acc)`: told by the types (two operands of one MMA type, then an accumulator
    type) or by the layouts (lhs, rhs, then an accumulator layout or an accumulator type: an
    lhs-laid-out first argument is never an accumulator, whatever the operands' dtypes are)."""
    first, second, last = call.acc, call.a, call.b
    layouts = [op.layout.kind if op.layout is not None else None for op in (first, second, last)]
    if layouts[:2] == ["mma_lhs", "mma_rhs"] and (
        layouts[2] == "mma_acc" or (layouts[2] is None and last.element_type in ACCUMULATOR_TYPES)
    ):
        return one(True, "b")
    if None in (first.element_type, second.element_type, last.element_type):
        return one(None)
    operand_like = first.element_type in table.operand_types
    if (
        operand_like
        and first.element_type == second.element_type
        and last.element_type in ACCUMULATOR_TYPES
        and last.element_type != first.element_type
    ):
        return one(True, "b")
    return one(False)


# ---------------------------------------------------------------- mgpu.mma


def construction_order(call: MmaCall) -> list[str]:
    """The roles in the order the program builds them (jax raises at the first bad one)."""

    def key(role: str) -> tuple[int, int, int]:
        created = call.operands[role].created
        if created is None:
            return (1, 0, 0)
        start = created.span().start
        return (0, start.line, start.column)

    return sorted(("a", "b", "acc"), key=key)


@condition("fragment-is-signed")
def _fragment_is_signed(call: MmaCall, table: MmaTable) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for role in construction_order(call):
        op = call.operands[role]
        if op.element_type is None or op.signedness is None:
            outcomes.append(Outcome(None, role))
            continue
        if op.is_signed_misplaced:
            outcomes.append(Outcome(True, role, {"is_signed": op.is_signed_text, "type": op.element_type}))
        else:
            outcomes.append(Outcome(False, role))
    return outcomes


@condition("dtype-mismatch")
def _dtype_mismatch(call: MmaCall, table: MmaTable) -> list[Outcome]:
    a, b = call.a.element_type, call.b.element_type
    if a is None or b is None:
        return one(None)
    return one(a != b, "b")


@condition("unsupported-operand")
def _unsupported_operand(call: MmaCall, table: MmaTable) -> list[Outcome]:
    a = call.a.element_type
    if a is None:
        return one(None)
    return one(a not in table.operand_types, "a")


@condition("int-acc-not-i32")
def _int_acc_not_i32(call: MmaCall, table: MmaTable) -> list[Outcome]:
    if call.a.element_type is None:
        return one(None)
    if not call.a.is_int:
        return one(False)
    if call.acc.element_type is None:
        return one(None)
    return one(call.acc.element_type != INT_ACCUMULATOR, "acc")


@condition("int-acc-unsigned")
def _int_acc_unsigned(call: MmaCall, table: MmaTable) -> list[Outcome]:
    if call.a.element_type is None:
        return one(None)
    if not call.a.is_int:
        return one(False)
    if call.acc.element_type is None or call.acc.signedness is None:
        return one(None)
    # jax checks the signedness after the type: only an i32 accumulator gets this far, and one
    # built without is_signed never gets built at all (MMA202).
    return one(call.acc.element_type == INT_ACCUMULATOR and call.acc.signedness == "unsigned", "acc")


@condition("f64-acc-not-f64")
def _f64_acc(call: MmaCall, table: MmaTable) -> list[Outcome]:
    if call.a.element_type is None:
        return one(None)
    if call.a.element_type != F64_ACCUMULATOR:
        return one(False)
    if call.acc.element_type is None:
        return one(None)
    return one(call.acc.element_type != F64_ACCUMULATOR, "acc")


@condition("float-acc-not-f32")
def _float_acc(call: MmaCall, table: MmaTable) -> list[Outcome]:
    if call.a.element_type is None:
        return one(None)
    if not call.a.is_float or call.a.element_type == "f64":
        # f64 operands: their own check where jax has them (0.12); where it does not, the
        # operand is the mistake (MMA104/MMA501), and the fix (a newer jax) wants an f64
        # accumulator, so asking for f32 would mislead.
        return one(False)
    if call.acc.element_type is None:
        return one(None)
    return one(call.acc.element_type != FLOAT_ACCUMULATOR, "acc")


@condition("operand-sign-vs-data")
def _sign_vs_data(call: MmaCall, table: MmaTable) -> list[Outcome]:
    outcomes: list[Outcome] = []
    for role in ("a", "b"):
        op = call.operands[role]
        info = DTYPES.get(op.data_dtype or "")
        if info is None or op.signedness not in ("signed", "unsigned"):
            outcomes.append(Outcome(None, role))
            continue
        if info.kind not in ("int", "uint"):
            outcomes.append(Outcome(False, role))
            continue
        data_signed = info.kind == "int"
        flagged_signed = op.signedness == "signed"
        outcomes.append(Outcome(data_signed != flagged_signed, role))
    return outcomes


# ---------------------------------------------------------------- plgpu.mma


@condition("pallas-dtype-mismatch")
def _pallas_dtype_mismatch(call: MmaCall, table: MmaTable) -> list[Outcome]:
    if call.a.dtype is None or call.b.dtype is None:
        return one(None)
    return one(call.a.dtype != call.b.dtype, "b")


def _int_or_bool(op: Operand) -> bool | None:
    kind = dtype_kind(op)
    return None if kind is None else kind in ("int", "uint", "bool")


@condition("pallas-int-acc-unsigned")
def _pallas_int_acc_unsigned(call: MmaCall, table: MmaTable) -> list[Outcome]:
    integer = _int_or_bool(call.a)
    if integer is None:
        return one(None)
    if not integer:
        return one(False)
    if call.acc.dtype is None:
        return one(None)
    return one(call.acc.dtype == "uint32", "acc")


@condition("pallas-int-acc-not-int32")
def _pallas_int_acc(call: MmaCall, table: MmaTable) -> list[Outcome]:
    integer = _int_or_bool(call.a)
    if integer is None:
        return one(None)
    if not integer:
        return one(False)
    if call.acc.dtype is None:
        return one(None)
    return one(call.acc.dtype not in ("int32", "uint32"), "acc")


@condition("pallas-float-acc")
def _pallas_float_acc(call: MmaCall, table: MmaTable) -> list[Outcome]:
    kind = dtype_kind(call.a)
    if kind is None:
        return one(None)
    if kind != "float":
        return one(False)
    if call.acc.dtype is None:
        return one(None)
    return one(call.acc.dtype not in table.float_accumulators, "acc")


@condition("pallas-unsupported-operand")
def _pallas_unsupported(call: MmaCall, table: MmaTable) -> list[Outcome]:
    kind = dtype_kind(call.a)
    if kind is None:
        return one(None)
    return one(kind not in ("int", "uint", "bool", "float"), "a")


@condition("pallas-bool-operand")
def _pallas_bool(call: MmaCall, table: MmaTable) -> list[Outcome]:
    kind = dtype_kind(call.a)
    if kind is None:
        return one(None)
    return one(kind == "bool", "a")


@condition("lowering-unsupported-operand")
def _lowering_unsupported(call: MmaCall, table: MmaTable) -> list[Outcome]:
    kind = dtype_kind(call.a)
    if kind is None or call.a.element_type is None:
        return one(None)
    if kind not in ("int", "uint", "float"):
        return one(False)  # bool and complex fail earlier, with their own checks
    return one(call.a.element_type not in table.operand_types, "a")


# ---------------------------------------------------------------- operands unknown


def operands_unknown(call: MmaCall) -> bool:
    """Neither the type nor the kind of `a` is known: jax's checks on it cannot be replayed."""
    return call.a.element_type is None and dtype_kind(call.a) is None


def _no_operand_accepts(family: str) -> Condition:
    """An accumulator that no operand dtype accepts, while the operands are unknown.

    The accumulators jax takes are int32 (signed) for integer operands, float32 for floating
    ones and, where f64 operands exist (0.12), float64. An accumulator outside that set fails
    whatever the operands turn out to be; which message jax raises depends on them, so the
    finding predicts none. `family` picks the rule by the accumulator's own kind: "float"
    (MMA102), "int" (MMA101, a width other than 32) or "unsigned" (MMA201, an unsigned int32).
    """

    def check(call: MmaCall, table: MmaTable) -> list[Outcome]:
        if not operands_unknown(call):
            return one(False)
        acc = call.acc
        f64 = F64_ACCUMULATOR in table.operand_types
        if call.frontend == "pallas":
            info = DTYPES.get(acc.dtype or "")
            if info is None:
                return one(None)
            bad = {
                "float": info.kind == "float" and acc.dtype not in ("float32", *(("float64",) if f64 else ())),
                "int": info.kind in ("int", "uint") and info.bits != 32,
                "unsigned": acc.dtype == "uint32",
            }[family]
        else:
            element = IR_TYPES.get(acc.element_type or "")
            if element is None:
                return one(None)
            if element.is_floating:
                bad = family == "float" and acc.element_type not in (
                    FLOAT_ACCUMULATOR, *((F64_ACCUMULATOR,) if f64 else ())
                )
            elif element.is_integer:
                if family == "int":
                    bad = element.bits != 32
                elif family == "unsigned":
                    if acc.signedness is None:
                        return one(None)
                    bad = element.bits == 32 and acc.signedness == "unsigned"
                else:
                    bad = False
            else:
                bad = False
        return one(bad, "acc", variant="any-operand")

    return check


for _family in ("float", "int", "unsigned"):
    CONDITIONS.add(f"acc-{_family}-no-operand", _no_operand_accepts(_family))


@condition("pallas-unsigned-as-signed")
def _pallas_unsigned(call: MmaCall, table: MmaTable) -> list[Outcome]:
    outcomes = []
    for role in ("a", "b"):
        kind = dtype_kind(call.operands[role])
        outcomes.append(Outcome(None if kind is None else kind == "uint", role))
    hits = [o for o in outcomes if o.status]
    if hits:
        return hits[:1]
    if any(o.status is None for o in outcomes):
        return one(None)
    return one(False)


# ---------------------------------------------------------------- layouts (MMA3xx)

_MMA_KINDS = frozenset({"mma_lhs", "mma_rhs", "mma_acc"})
_TILED_KINDS = frozenset({"mma_lhs", "mma_rhs", "mma_acc", "wgmma_8bit"})
_ROLE_KIND = {"a": "mma_lhs", "b": "mma_rhs", "acc": "mma_acc"}


def acc_m_warps(call: MmaCall, table: MmaTable) -> int | None:
    """The m_warps jax reads off the accumulator layout (fixed at 4 before jax 0.11)."""
    if not table.infers_m_warps:
        return 4
    layout = call.acc.layout
    if layout is None:
        return None
    if layout.kind in ("mma_acc", "mma_lhs"):
        return layout.m_warps
    if layout.kind == "wgmma_8bit":
        return 4
    if layout.kind == "mma_rhs" and layout.bits is not None:
        k = k_tile(layout.bits)
        return k // 16 if k % 16 == 0 else None
    return None


@condition("m-warps-value")
def _m_warps_value(call: MmaCall, table: MmaTable) -> list[Outcome]:
    outcomes = []
    for role in construction_order(call):
        layout = call.operands[role].layout
        if layout is None or layout.kind not in _MMA_KINDS or layout.m_warps is None:
            outcomes.append(Outcome(None, role))
        else:
            bad = layout.m_warps not in M_WARPS
            outcomes.append(Outcome(bad, role, {"m_warps": str(layout.m_warps)}))
    return outcomes


@condition("tiling")
def _tiling(call: MmaCall, table: MmaTable) -> list[Outcome]:
    outcomes = []
    for role in construction_order(call):
        op = call.operands[role]
        layout = op.layout
        if (
            layout is None
            or layout.kind not in _MMA_KINDS
            or layout.m_warps not in M_WARPS
            or op.shape is None
            or len(op.shape) != 2
        ):
            outcomes.append(Outcome(None, role))
            continue
        role_of_layout = {"mma_lhs": "a", "mma_rhs": "b", "mma_acc": "acc"}[layout.kind]
        assert layout.m_warps is not None
        tile = base_tile(role_of_layout, layout.bits, layout.m_warps)
        if tile is None or None in op.shape:
            outcomes.append(Outcome(None, role))
            continue
        dims = [d for d in op.shape if d is not None]
        bad = any(d % t != 0 for d, t in zip(dims, tile, strict=True))
        outcomes.append(
            Outcome(bad, role, {"shape": str(tuple(dims)), "tile": str(tile)})
        )
    return outcomes


def _conversion_unsupported(source: Any, target: Any) -> bool | None:
    """jax has no relayout from an accumulator (or WGMMA) layout to an operand layout, none
    from lhs to rhs, and none from a strided layout to any MMA layout (fragmented_array.py)."""
    if source is None or target is None:
        return None
    if target.kind not in ("mma_lhs", "mma_rhs"):
        return False
    if source.kind == "splat":
        return False
    if source.kind == "mma_acc":
        return True
    if source.kind == "mma_lhs" and target.kind == "mma_rhs":
        return True
    if source.kind == "strided":
        return True
    if source.kind == target.kind:
        return False
    return None


def _relayout(role: str) -> Condition:
    def check(call: MmaCall, table: MmaTable) -> list[Outcome]:
        op = call.operands[role]
        status = _conversion_unsupported(op.converted_from, op.layout)
        if not status or op.layout is None or op.converted_from is None:
            return one(status, role)
        desc = f"{_describe(op.layout)}, converted from {_describe(op.converted_from)} (no such relayout exists)"
        return [Outcome(True, role, {"layout_desc": desc})]

    return check


CONDITIONS.add("relayout-lhs", _relayout("a"))
CONDITIONS.add("relayout-rhs", _relayout("b"))


def _load_fails(kind: str, view: str | None) -> bool | None:
    """Whether loading memory seen through `view` with an MMA operand layout of `kind` fails.

    The lhs tiling reads along the last axis, the rhs tiling along the first (B is (k, n) and
    read along K): checked on the CPU with jax 0.12, every operand type, untiled loads.
    """
    if view is None or kind not in ("mma_lhs", "mma_rhs"):
        return None
    return (kind == "mma_lhs") == (view == "transposed")


def _loaded_with(role: str, wrong_kind: str) -> Condition:
    right_kind = "mma_lhs" if wrong_kind == "mma_rhs" else "mma_rhs"

    def check(call: MmaCall, table: MmaTable) -> list[Outcome]:
        op = call.operands[role]
        if op.layout is None or op.how not in ("loaded", "read") or op.converted_from is not None:
            return one(None, role)
        fails = _load_fails(op.layout.kind, op.view)
        if fails is None:
            # The view is not known: the other operand's tiling is taken to fail at the load,
            # as it does from the views jax's own kernels use (a plain, b transposed).
            desc = f"{_describe(op.layout)} (loaded with the other operand's tiling)"
            return [Outcome(op.layout.kind == wrong_kind, role, {"layout_desc": desc})]
        if not fails:
            return [Outcome(False, role)]
        if op.layout.kind == right_kind:
            return [Outcome(True, role, {"variant": "view", "layout_desc": _describe(op.layout)})]
        view = "a transposed view" if op.view == "transposed" else "a plain view"
        desc = f"{_describe(op.layout)} (loaded with the other operand's tiling, from {view} of memory)"
        return [Outcome(True, role, {"layout_desc": desc})]

    return check


CONDITIONS.add("load-lhs-kind", _loaded_with("a", "mma_rhs"))
CONDITIONS.add("load-rhs-kind", _loaded_with("b", "mma_lhs"))


@condition("acc-not-tiled")
def _acc_not_tiled(call: MmaCall, table: MmaTable) -> list[Outcome]:
    layout = call.acc.layout
    if layout is None or layout.kind == "other":
        return one(None)
    if layout.kind in ("splat", "strided"):
        return one(True, "acc")
    m_warps = acc_m_warps(call, table)
    return one(m_warps is None and layout.kind == "mma_rhs", "acc")


def _operand_layout(role: str) -> Condition:
    def check(call: MmaCall, table: MmaTable) -> list[Outcome]:
        op = call.operands[role]
        layout = op.layout
        if layout is None or layout.kind == "other":
            return one(None, role)
        if layout.kind != _ROLE_KIND[role]:
            return [Outcome(True, role, {"layout_desc": _describe(layout)})]
        if role == "acc":
            return one(False, role)
        bits = element_bits(op.element_type)
        if layout.bits is None or bits is None:
            return one(None, role)
        if op.element_type not in table.operand_types:
            # A layout for another bit width than an unsupported operand type (f32 data in bf16
            # layouts) is the same mistake as the type itself: MMA104 reports it.
            return one(None, role)
        return [Outcome(layout.bits != bits, role, {"layout_desc": _describe(layout)})]

    return check


def _operand_m_warps(role: str) -> Condition:
    def check(call: MmaCall, table: MmaTable) -> list[Outcome]:
        layout = call.operands[role].layout
        if layout is None or layout.kind != _ROLE_KIND[role] or layout.m_warps is None:
            return one(None, role)
        expected = acc_m_warps(call, table)
        if expected is None:
            return one(None, role)
        fields = {"m_warps": str(layout.m_warps), "acc_m_warps": str(expected)}
        return [Outcome(layout.m_warps != expected, role, fields)]

    return check


CONDITIONS.add("lhs-layout", _operand_layout("a"))
CONDITIONS.add("rhs-layout", _operand_layout("b"))
CONDITIONS.add("acc-layout", _operand_layout("acc"))
CONDITIONS.add("lhs-m-warps", _operand_m_warps("a"))
CONDITIONS.add("rhs-m-warps", _operand_m_warps("b"))


def _cast_layout(role: str) -> Condition:
    """Under Warpgroup semantics layouts are inferred: only an explicit MMA/WGMMA layout cast
    can conflict with what mosaic_gpu.mma needs (a splat or strided value gets relaid out)."""
    inner = _operand_layout(role)

    def check(call: MmaCall, table: MmaTable) -> list[Outcome]:
        layout = call.operands[role].layout
        if layout is None or layout.kind not in _TILED_KINDS:
            return one(None, role)
        return inner(call, table)

    return check


CONDITIONS.add("cast-lhs-layout", _cast_layout("a"))
CONDITIONS.add("cast-rhs-layout", _cast_layout("b"))
CONDITIONS.add("cast-acc-layout", _cast_layout("acc"))


@condition("pallas-wg-m-warps")
def _wg_m_warps(call: MmaCall, table: MmaTable) -> list[Outcome]:
    outcomes = [_operand_m_warps(role)(call, table)[0] for role in ("a", "b")]
    hits = [o for o in outcomes if o.status]
    if hits:
        return hits[:1]
    return one(None if any(o.status is None for o in outcomes) else False)


def _describe(layout: Any) -> str:
    if layout.name:
        return layout.name
    return layout.kind


# ---------------------------------------------------------------- shapes (MMA4xx)


def _dims(call: MmaCall) -> tuple[tuple[int | None, int | None], ...] | None:
    shapes = []
    for role in ("a", "b", "acc"):
        shape = call.operands[role].shape
        if shape is None or len(shape) != 2:
            return None
        shapes.append((shape[0], shape[1]))
    return tuple(shapes)


def _dim_check(which: str) -> Condition:
    def check(call: MmaCall, table: MmaTable) -> list[Outcome]:
        dims = _dims(call)
        if dims is None:
            return one(None)
        (m, k), (k2, n), (m2, n2) = dims
        x, y, subject = {"m": (m, m2, "acc"), "n": (n, n2, "acc"), "k": (k, k2, "b")}[which]
        if x is None or y is None:
            return one(None)
        return [Outcome(x != y, subject, {which: str(x), f"{which}2": str(y)})]

    return check


CONDITIONS.add("m-mismatch", _dim_check("m"))
CONDITIONS.add("n-mismatch", _dim_check("n"))
CONDITIONS.add("k-mismatch", _dim_check("k"))


@condition("pallas-shapes")
def _pallas_shapes(call: MmaCall, table: MmaTable) -> list[Outcome]:
    dims = _dims(call)
    if dims is None:
        return one(None)
    (m, k), (k2, n), (m2, n2) = dims
    pairs = [(m, m2), (n, n2), (k, k2)]
    if any(x is not None and y is not None and x != y for x, y in pairs):
        shapes = {
            f"{role}_shape": str(tuple(call.operands[role].shape or ()))
            for role in ("a", "b", "acc")
        }
        return [Outcome(True, "acc", shapes)]
    if any(x is None or y is None for x, y in pairs):
        return one(None)
    return one(False)


# ---------------------------------------------------------------- targets (MMA5xx)


def _arch(feature: str, element_types: tuple[str, ...]) -> Condition:
    """The operand type needs a newer GPU than the target (`facts.mma.ARCH_MINIMUMS`)."""

    def check(call: MmaCall, table: MmaTable) -> list[Outcome]:
        element = call.a.element_type
        if element is None:
            return one(None)
        if element not in element_types:
            return one(False)
        needs = ARCH_MINIMUMS[element]
        below = None if call.target_arch is None else call.target_arch < needs
        return [Outcome(below, "a", {"needs": arch_name(needs), "feature": f"{feature} `mma.sync`"})]

    return check


CONDITIONS.add("fp8-arch", _arch("fp8", ("f8E4M3FN", "f8E5M2")))
CONDITIONS.add("f64-arch", _arch("f64", ("f64",)))
