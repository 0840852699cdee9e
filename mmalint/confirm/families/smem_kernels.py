"""Worker-side helpers of the kernels whose operands come from shared memory (wgmma, tcgen05):
the jax structs of a spec's inputs and output, SMEM tilings, and device arrays.

The host side of the same specs is `smem_cases.py`; this module imports jax and runs only in
the workers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from mmalint.confirm import dtypes
from mmalint.confirm.families.mma.kernels import loaded_positions, memory_shape
from mmalint.facts.swizzle import row_elements

Spec = dict[str, Any]


def jnp_dtype(dtype: str) -> Any:
    return jnp.dtype(dtype)


def itemsize(dtype: str) -> int:
    return int(jnp.dtype(dtype).itemsize)


def bits(dtype: str) -> int:
    return dtypes.bit_width(dtype) or 8 * itemsize(dtype)


def input_structs(spec: Spec) -> list[jax.ShapeDtypeStruct]:
    """A and B as the kernel takes them from global memory, in the spec's loading order."""
    return [jax.ShapeDtypeStruct(memory_shape(spec["values"][i]), jnp_dtype(spec["values"][i]["dtype"]))
            for i in loaded_positions(spec)]


def out_struct(spec: Spec) -> jax.ShapeDtypeStruct:
    """The accumulator (wgmma's `acc`, tcgen05's `d`) as the kernel writes it out."""
    acc = spec["values"][spec["intended"][0]]
    return jax.ShapeDtypeStruct(tuple(acc["shape"]), jnp_dtype(acc["dtype"]))


def tiling(dtype: str, swizzle: int) -> tuple[int, int]:
    """(8, one swizzle row of elements): 4-bit types (float4_e2m1fn) pack two per byte."""
    return (8, row_elements(swizzle, bits(dtype)))


def tile_shape(shape: Sequence[int], tiles: tuple[int, int]) -> tuple[int, ...]:
    return (shape[0] // tiles[0], shape[1] // tiles[1], *tiles)


def as_device_array(values: np.ndarray, dtype: str) -> np.ndarray:
    return np.asarray(values).astype(jnp.dtype(dtype))


def probe_api(probe: str) -> dict[str, Any]:
    raise KeyError(f"unknown API probe {probe!r}")
