"""jax's dtype promotion (`jnp.promote_types`, `jnp.result_type`): the least upper bound of the
inputs on jax's standard type promotion lattice (`jax/_src/dtypes.py`, `_type_promotion_lattice`
with `strict=False`, the same in jax 0.10, 0.11 and 0.12). It is not NumPy's: int8 with uint8 is
int16 in both, but int32 with float16 is float16 in jax (float64 in NumPy), and bfloat16 with
float16 is float32. 8-bit and 4-bit floats and 2- and 4-bit integers promote with nothing but
themselves (`TypePromotionError`).
"""

from __future__ import annotations

# The weak types of Python scalars (`int`, `float`, `complex`): nodes of the lattice only.
WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX = "int*", "float*", "complex*"

# The floats below float16 and bfloat16 in jax's lattice (`small_float_types`): reached only from
# the weak float, so they promote with no other dtype.
_SMALL_FLOATS = (
    "float4_e2m1fn", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu", "float8_e4m3b11fnuz",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
)


def _lattice(x64: bool) -> dict[str, tuple[str, ...]]:
    """Each node and the nodes immediately above it (jax's `_type_promotion_lattice`)."""
    return {
        "bool": (WEAK_INT,),
        WEAK_INT: ("uint8", "uint2", "uint4", "int8", "int2", "int4"),
        "uint2": (),
        "uint4": (),
        "uint8": ("int16", "uint16"),
        "uint16": ("int32", "uint32"),
        # Without x64, jax avoids forming int64 from 32-bit inputs: uint32 with int32 is int32.
        "uint32": ("int64", "uint64") if x64 else ("int32", "uint64"),
        "uint64": (WEAK_FLOAT,),
        "int2": (),
        "int4": (),
        "int8": ("int16",),
        "int16": ("int32",),
        "int32": ("int64",),
        "int64": (WEAK_FLOAT,),
        WEAK_FLOAT: (*_SMALL_FLOATS, "bfloat16", "float16", WEAK_COMPLEX),
        **{t: () for t in _SMALL_FLOATS},
        "bfloat16": ("float32",),
        "float16": ("float32",),
        "float32": ("float64", "complex64"),
        "float64": ("complex128",),
        WEAK_COMPLEX: ("complex64",),
        "complex64": ("complex128",),
        "complex128": (),
    }


def _upper_bounds_of(x64: bool) -> dict[str, frozenset[str]]:
    lattice = _lattice(x64)
    bounds: dict[str, frozenset[str]] = {}

    def above(node: str) -> frozenset[str]:
        if node not in bounds:
            found = {node}
            for parent in lattice[node]:
                found |= above(parent)
            bounds[node] = frozenset(found)
        return bounds[node]

    for node in lattice:
        above(node)
    return bounds


# Every node's upper bounds (itself included), with x64 and without: what `least_upper_bound`
# intersects, as jax's `_make_lattice_upper_bounds` computes them.
_UPPER_BOUNDS = {x64: _upper_bounds_of(x64) for x64 in (True, False)}


def least_upper_bound(dtypes: tuple[str, ...], x64: bool) -> str | None:
    """The dtype jax promotes `dtypes` to, or None when jax raises `TypePromotionError` or the
    bound is a weak type (uint64 with a signed integer is the weak float: `promote_types` makes
    it float64, `result_type` jax's default float, which depends on x64)."""
    nodes = set(dtypes)
    bounds = _UPPER_BOUNDS[x64]
    if not nodes or not nodes <= bounds.keys():
        return None
    common = frozenset.intersection(*(bounds[n] for n in nodes))
    least = (common & nodes) or {c for c in common if common <= bounds[c]}
    if len(least) != 1:
        return None
    (found,) = least
    return None if found in (WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX) else found


def promote(dtypes: tuple[str, ...]) -> str | None:
    """`jnp.promote_types` / `jnp.result_type` of dtypes: the bound where jax's x64 setting does
    not change it (only uint32 with a signed integer does), else None."""
    with_x64 = least_upper_bound(dtypes, True)
    return with_x64 if with_x64 == least_upper_bound(dtypes, False) else None
