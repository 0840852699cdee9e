"""Facts about the hardware and jax that every layer shares: element types (`dtypes`) and the
warp-level MMA's tiles, accumulators and arch minimums (`mma`).

This package imports nothing, not even the rest of mmalint: the analysis, the rules and the
reference lowering (`mmalint.confirm`, which must stay importable without libcst) all read it,
so a fact written here is written once.
"""
