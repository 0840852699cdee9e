"""Kernel specifications for the families whose operands come from shared memory (wgmma,
tcgen05): one accumulator, A and B, with the M x N x K the signature gives.

A family passes its tile rules (`Tiles`); this module knows no API and no rule code. The
spec is plain JSON because workers run in other interpreters; it has the fields the gpu
worker reads for data (`values` with `dtype`, `shape`, `zeros`, `transposed`, `intended`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from mmalint.confirm import dtypes
from mmalint.confirm.call import Call, Operand


@dataclass(frozen=True)
class Tiles:
    """What a family's kernel needs of M, N and K, and what it assumes when a dimension is
    unknown."""

    default_m: int
    default_n: int
    m_multiple: int
    n_multiple: Callable[[Call], int]
    arch: tuple[int, int]
    swizzle: int = 128


@dataclass(frozen=True)
class SmemSpec:
    """A kernel specification (`family.Spec`): the JSON a worker builds and `notes`."""

    data: dict[str, Any]
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return self.data


def logical_shape(op: Operand) -> tuple[int, int] | None:
    """An operand's 2-D shape: as written, or from a tiled SMEM shape (`tile_shape((r, c),
    (tr, tc))` is `(r / tr, c / tc, tr, tc)`)."""
    shape = op.shape
    if shape is None or None in shape:
        return None
    dims = [int(d) for d in shape if d is not None]
    if len(dims) == 2:
        return dims[0], dims[1]
    if len(dims) == 4:
        return dims[0] * dims[2], dims[1] * dims[3]
    return None


def itemsize(op: Operand) -> int:
    return max((op.bits or 16) // 8, 1)


def k_multiple(op: Operand, swizzle: int) -> int:
    """K is a whole number of swizzle rows: `swizzle / itemsize` elements."""
    return max(swizzle // itemsize(op), 1)


def _round_up(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple


def dims(call: Call, tiles: Tiles, swizzle: int) -> tuple[int, int, int, list[str]]:
    """M, N, K: from the accumulator (M, N) and A (K), else B, else the family's defaults
    (said in the notes)."""
    acc, a, b = logical_shape(call.acc), logical_shape(call.a), logical_shape(call.b)
    notes = []
    m = acc[0] if acc else (a[0] if a else None)
    n = acc[1] if acc else (b[1] if b else None)
    k = a[1] if a else (b[0] if b else None)
    if m is None:
        m = tiles.default_m
        notes.append(f"M is unknown: built with M={m}")
    if n is None:
        n = tiles.default_n
        notes.append(f"N is unknown: built with N={n}")
    if k is None:
        k = 2 * k_multiple(call.a, swizzle)
        notes.append(f"K is unknown: built with K={k}")
    return m, n, k, notes


def kernel_spec(family: str, tiles: Tiles, call: Call, *, conform: bool = False,
                extra: dict[str, Any] | None = None) -> SmemSpec:
    """The kernel for `call`: the accumulator created as zeros in the family's way, A and B
    loaded from kernel inputs (B stored as (n, k), read transposed). `conform` rounds M, N
    and K up to what the family's instruction takes (for fixes)."""
    swizzle = int(call.option("swizzle") or call.a.swizzle or tiles.swizzle)
    m, n, k, notes = dims(call, tiles, swizzle)
    if conform:
        m = _round_up(m, tiles.m_multiple)
        n = _round_up(n, tiles.n_multiple(call))
        k = _round_up(k, max(k_multiple(call.a, swizzle), k_multiple(call.b, swizzle)))

    def value(op: Operand, role: str, shape: tuple[int, int], **more: Any) -> dict[str, Any]:
        return {"role": role, "dtype": op.memory_dtype or "float32",
                "element_type": op.mlir or "f32", "is_signed": op.is_signed,
                "shape": list(shape), "memory_space": op.memory_space, **more}

    acc_role, a_role, b_role = call.roles
    values = [
        value(call.acc, acc_role, (m, n), zeros=True, transposed=False),
        value(call.a, a_role, (m, k), zeros=False, transposed=False),
        value(call.b, b_role, (k, n), zeros=False, transposed=True),
    ]
    data = {
        "family": family, "api": call.api, "semantics": call.lowering_semantics or "lane",
        "arch": list(tiles.arch), "swizzle": swizzle,
        "values": values, "intended": [0, 1, 2], "build_order": [1, 2, 0],
        "data": [v["dtype"] for v in values], "options": dict(call.options), "x64": False,
        **(extra or {}),
    }
    return SmemSpec(data, tuple(notes))


def with_operand(call: Call, slot: str, **changes: Any) -> Call:
    """The call with one of its (acc, a, b) operands changed."""
    op: Operand = getattr(call, slot)
    changed: dict[str, Any] = {slot: replace(op, **changes)}
    return replace(call, **changed)


def as_dtype(op: Operand, dtype: str) -> Operand:
    """An operand rebuilt as `dtype` (element type and signedness follow it)."""
    info = dtypes.lookup(dtype)
    assert info is not None, dtype
    return replace(op, dtype=info.name, element_type=info.mlir,
                   signedness=info.natural_signedness, data_dtype=None)


def with_shape(op: Operand, shape: tuple[int, int]) -> Operand:
    return replace(op, shape=shape)
