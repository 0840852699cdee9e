"""A finding's call signature as data: operands, layouts, the predicted error and the finding
itself, as `signature.py` reads them from `mmalint check --format json`. Pure data (no family
knowledge), so the family records (`family.py`) can name these types without a cycle."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mmalint.confirm import dtypes

SIGNEDNESS = ("signed", "unsigned", "signless")
# The order mmalint assumes operands are built in when it knows no program order.
DEFAULT_CREATION_ORDER: tuple[str, str, str] = ("a", "b", "acc")


@dataclass(frozen=True)
class Layout:
    """A register layout as the analyzer described it (`kind` is `mma_lhs`, `splat`...)."""

    kind: str | None = None
    bitwidth: int | None = None
    m_warps: int | None = None
    name: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "bitwidth": self.bitwidth, "m_warps": self.m_warps,
                "name": self.name}


@dataclass(frozen=True)
class Operand:
    """One of the three values passed to the MMA call."""

    dtype: str | None = None
    element_type: str | None = None
    signedness: str | None = None
    layout: Layout = field(default_factory=Layout)
    shape: tuple[int | None, ...] | None = None
    data_dtype: str | None = None
    source: str | None = None
    # The layout the value was relaid out from by `to_layout` / `layout_cast` (an mma result
    # cast to an operand layout, a strided load cast to an MMA layout), or None.
    converted_from: Layout | None = None
    # How the memory a load read was viewed, when the analysis knew: "plain" or "transposed".
    view: str | None = None
    # Where the value lives (`registers`, `smem`, `tmem`; the call's `operands` entry), its
    # SMEM swizzle in bytes and whether it is passed transposed, when the signature says.
    memory_space: str | None = None
    swizzle: int | None = None
    transposed: bool | None = None
    # Of a TMEM operand (tcgen05's A): its TMEM layout's packing and whether it was allocated
    # collective, when the signature says.
    tmem_packing: int | None = None
    tmem_collective: bool | None = None

    @property
    def mlir(self) -> str | None:
        """The MLIR element type, from `element_type` or else from `dtype`."""
        if self.element_type:
            return self.element_type
        info = dtypes.lookup(self.dtype)
        return info.mlir if info else None

    @property
    def resolved_dtype(self) -> str | None:
        """The NumPy dtype: as written, or derived from the element type and signedness."""
        if self.dtype and dtypes.lookup(self.dtype):
            return self.dtype
        return dtypes.dtype_for(self.element_type, self.signedness) if self.element_type else None

    @property
    def bits(self) -> int | None:
        mlir = self.mlir
        return dtypes.mlir_bits(mlir) if mlir else None

    @property
    def is_signed(self) -> bool | None:
        """The `is_signed=` the call passes (`signless` is None)."""
        return {"signed": True, "unsigned": False}.get(self.signedness or "signless")

    @property
    def memory_dtype(self) -> str | None:
        """The dtype of the memory the value comes from: `data_dtype` when its width agrees."""
        data = dtypes.lookup(self.data_dtype)
        if data is not None and data.mlir == self.mlir:
            return data.name
        return self.resolved_dtype

    def to_json(self) -> dict[str, Any]:
        return {
            "dtype": self.dtype, "element_type": self.element_type,
            "signedness": self.signedness, "layout": self.layout.to_json(),
            "shape": list(self.shape) if self.shape is not None else None,
            "data_dtype": self.data_dtype, "source": self.source,
            "converted_from": (self.converted_from.to_json()
                               if self.converted_from is not None else None),
            "view": self.view,
            **{k: v for k, v in (("memory_space", self.memory_space), ("swizzle", self.swizzle),
                                 ("transposed", self.transposed), ("tmem_packing", self.tmem_packing),
                                 ("tmem_collective", self.tmem_collective)) if v is not None},
        }


@dataclass(frozen=True)
class Call:
    """The normalized signature of the flagged call (docs/json-format.md, "The call signature")."""

    api: str
    acc: Operand
    a: Operand
    b: Operand
    target_jax: str | None = None
    lowering_semantics: str | None = None
    argument_order: str = "acc_a_b"
    target_arch: str | None = None
    notes: tuple[str, ...] = ()  # facts the reference lowering had to assume
    # The roles in the order the program builds them (jax raises at the first bad one): from
    # the creation rows of the finding's `related` notes, else a, b, acc.
    creation_order: tuple[str, str, str] = DEFAULT_CREATION_ORDER
    # The instruction family (`confirm/families/`), None for an API no family covers.
    family: str | None = None
    # The family's names for the (acc, a, b) slots: tcgen05 calls its accumulator `d`.
    roles: tuple[str, str, str] = ("acc", "a", "b")
    # The call's keyword options as the signature gives them (`a_scale`, `collective`,
    # `swizzle`...), sorted by name: scalars only.
    options: tuple[tuple[str, Any], ...] = ()

    def option(self, name: str, default: Any = None) -> Any:
        """One of the call's `options`, or `default`."""
        return dict(self.options).get(name, default)

    def operand(self, role: str) -> Operand:
        """The operand of a role by the family's name for it (`d` is tcgen05's accumulator)."""
        slot = dict(zip(self.roles, ("acc", "a", "b"), strict=True)).get(role, role)
        op: Operand = getattr(self, slot)
        return op

    @property
    def passed(self) -> tuple[Operand, Operand, Operand]:
        """The values in the order the call passes them: `mma(a, b, acc)` (MMA105) passes the
        accumulator last."""
        if self.argument_order == "a_b_acc":
            return (self.a, self.b, self.acc)
        return (self.acc, self.a, self.b)

    @property
    def intended(self) -> tuple[Operand, Operand, Operand]:
        """(acc, a, b) by role, whatever the order passed."""
        return (self.acc, self.a, self.b)

    def to_json(self) -> dict[str, Any]:
        return {
            "api": self.api, "family": self.family, "target_jax": self.target_jax,
            "lowering_semantics": self.lowering_semantics,
            "acc": self.acc.to_json(), "a": self.a.to_json(), "b": self.b.to_json(),
            "argument_order": self.argument_order, "target_arch": self.target_arch,
            **({"roles": list(self.roles)} if self.roles != ("acc", "a", "b") else {}),
            **({"options": dict(self.options)} if self.options else {}),
        }


@dataclass(frozen=True)
class PredictedError:
    """What jax raises; `match` is "exact", "prefix" when the message continues with text the
    analyzer cannot know (layouts, verifier details), or "contains" when text the analyzer cannot
    know also comes first (`Tiling ((64, 16), ...) does not apply to shape (32, 64)`)."""

    exception: str
    message: str
    jax_version: str | None = None
    match: str = "exact"

    def matches(self, exception: str | None, message: str | None) -> bool:
        if exception != self.exception or message is None:
            return False
        if self.match == "prefix":
            return message.startswith(self.message)
        if self.match == "contains":
            return self.message in message
        return message == self.message

    def __str__(self) -> str:
        before = "..." if self.match == "contains" else ""
        more = "..." if self.match in ("prefix", "contains") else ""
        return f"{self.exception}: {before}{self.message}{more}"


@dataclass(frozen=True)
class OperandVariant:
    """For a finding whose operand dtype mmalint did not know (`predicted_by_operand`): the call
    with one representative operand dtype, the rule it breaks then and what jax raises."""

    operand_dtype: str
    code: str
    predicted: PredictedError
    call: Call | None
    problem: str | None = None


@dataclass(frozen=True)
class Finding:
    """One finding of the input array; `call` is None when its signature is unusable (`problem`)."""

    index: int
    code: str
    filename: str
    row: int
    column: int
    predicted: PredictedError | None
    masked_by: tuple[str, ...]
    call: Call | None
    problem: str | None = None
    message: str = ""  # the finding's sentence (MMA501 names the API it is about)
    variants: tuple[OperandVariant, ...] = ()

    @property
    def location(self) -> str:
        return f"{self.filename}:{self.row}:{self.column}"
