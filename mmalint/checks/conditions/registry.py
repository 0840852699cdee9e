"""What a condition is and how a family registers its conditions by name.

A condition answers, for one normalized call and the family's table for its API and jax
version, True (jax fails this check), False (it passes) or None (not decidable from what is
known), per operand it looks at. Rules report only True: unknown is silence. A check row of
`rules/checks/<family>.toml` names its condition (`condition = "tiling"`); one condition serves
every row, API and lowering path that makes the same check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mmalint.facts.dtypes import DTYPES, IR_TYPES

if TYPE_CHECKING:
    # Only for annotations: the catalog imports the conditions without loading the analysis.
    from mmalint.checks.call import MmaCall, Operand


@dataclass(frozen=True)
class Outcome:
    status: bool | None
    subject: str | None = None  # the operand role the finding is about: acc, a or b
    fields: dict[str, str] = field(default_factory=dict)


def one(status: bool | None, subject: str | None = None, **fields: str) -> list[Outcome]:
    """The answer of a condition that looks at one operand (or at the call as a whole)."""
    return [Outcome(status, subject, dict(fields))]


def dtype_kind(op: Operand) -> str | None:
    """int, uint, bool, float, complex (from the operand's NumPy dtype) when known."""
    info = DTYPES.get(op.dtype or "")
    return info.kind if info is not None else None


def element_bits(element_type: str | None) -> int | None:
    """The bit width of an MLIR element type (`i8` -> 8), when known."""
    info = IR_TYPES.get(element_type or "")
    return info.bits if info is not None else None


def matrix_shape(shape: tuple[int | None, ...] | None) -> tuple[int, int] | None:
    """(rows, columns) of a 2-D shape whose both dimensions are known."""
    if shape is None or len(shape) != 2 or shape[0] is None or shape[1] is None:
        return None
    return shape[0], shape[1]


# (call, the family table of its API and jax version) -> one outcome per operand looked at
Condition = Callable[["MmaCall", Any], list[Outcome]]


class Conditions:
    """The conditions of one instruction family, by name; filled once, when its module loads."""

    def __init__(self, family: str, table_type: type) -> None:
        self.family = family
        # The frozen dataclass of the family's `[tables."API"."VERSION"]`: the catalog builds
        # and validates them with it, and every condition of the family reads one.
        self.table_type = table_type
        self._by_name: dict[str, Condition] = {}

    def add(self, name: str, fn: Condition) -> Condition:
        if name in self._by_name:
            raise ValueError(f"condition {name!r} of family {self.family!r} is registered twice")
        self._by_name[name] = fn
        return fn

    def condition(self, name: str) -> Callable[[Condition], Condition]:
        """`@CONDITIONS.condition("dtype-mismatch")` registers the function under that name."""

        def register(fn: Condition) -> Condition:
            return self.add(name, fn)

        return register

    def __getitem__(self, name: str) -> Condition:
        return self._by_name[name]

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)
