"""`mmalint.facts.promotion`: jax's dtype promotion lattice, checked on pairs whose answer the
jax documentation states and, where jax is installed, against jax itself for every pair."""

from __future__ import annotations

import itertools

import pytest

from mmalint.facts.dtypes import DTYPES
from mmalint.facts.promotion import least_upper_bound, promote


@pytest.mark.parametrize(
    ("a", "b", "expect"),
    [
        ("int8", "float32", "float32"),  # mixed kinds: the float
        ("int8", "int32", "int32"),
        ("int8", "uint8", "int16"),
        ("bfloat16", "float16", "float32"),
        ("int32", "float16", "float16"),  # jax's lattice, not NumPy's (float64)
        ("int8", "bfloat16", "bfloat16"),
        ("bool", "int8", "int8"),
        ("bool", "float32", "float32"),
        ("float32", "complex64", "complex64"),
        ("float64", "float32", "float64"),
        ("float8_e4m3fn", "float8_e4m3fn", "float8_e4m3fn"),
        ("float8_e4m3fn", "float32", None),  # TypePromotionError: 8-bit floats promote with nothing
        ("float8_e4m3fn", "float8_e5m2", None),
        ("int4", "int8", None),  # likewise 4-bit integers
        ("uint32", "int32", None),  # int64 with x64, int32 without: not decidable here
        ("uint64", "int8", None),  # the weak float: float64 or jax's default float
    ],
)
def test_promote(a: str, b: str, expect: str | None) -> None:
    assert promote((a, b)) == expect
    assert promote((b, a)) == expect


def test_uint32_with_int32_depends_on_x64() -> None:
    assert least_upper_bound(("uint32", "int32"), x64=True) == "int64"
    assert least_upper_bound(("uint32", "int32"), x64=False) == "int32"


@pytest.mark.jax
@pytest.mark.parametrize("x64", [False, True])
def test_every_pair_as_the_installed_jax_promotes_it(x64: bool) -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    np = pytest.importorskip("numpy")
    ml_dtypes = pytest.importorskip("ml_dtypes")

    def np_dtype(name: str) -> object:
        return np.dtype(bool) if name == "bool" else np.dtype(getattr(ml_dtypes, name, None) or name)

    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", x64)
    try:
        wrong = []
        for a, b in itertools.product(DTYPES, repeat=2):
            try:
                want = jnp.promote_types(np_dtype(a), np_dtype(b)).name
            except Exception:
                want = None
            got = least_upper_bound((a, b), x64)
            # None only where jax raises, or where the bound is the weak float (uint64 with a
            # signed integer), which promote_types and result_type turn into different dtypes.
            weak = {a, b} & {"uint64"} and {DTYPES[a].kind, DTYPES[b].kind} == {"uint", "int"}
            if got != want and not (got is None and weak):
                wrong.append((a, b, want, got))
        assert not wrong, wrong
    finally:
        jax.config.update("jax_enable_x64", previous)
