"""What the interpreter records at each MMA call: the values passed and the context of the path."""

from __future__ import annotations

from dataclasses import dataclass

from mmalint.analysis.values import UNKNOWN, Origin, Value


@dataclass(frozen=True)
class WorldBinding:
    """One parameter of a world: `dtype` bound to the value written `jnp.int8`."""

    name: str
    label: str
    origin: Origin | None = None

    def __str__(self) -> str:
        return f"{self.name}={self.label}"


@dataclass(frozen=True)
class Context:
    """The dynamic context of an analysed path."""

    world: tuple[WorldBinding, ...] = ()
    expected_failure: Origin | None = None  # the `with self.assertRaises(...)` that wraps the call
    semantics: Value = UNKNOWN  # Pallas lowering semantics of the enclosing kernel launch
    in_kernel: bool = False


@dataclass(frozen=True)
class MmaSite:
    """One MMA call as the interpreter saw it on one path.

    `args` are the values passed as (acc, a, b), whatever their names, so a call written
    `mma(a, b, acc)` is recorded as written and the rules can tell.
    """

    api: str
    origin: Origin
    args: tuple[Value, Value, Value]
    arg_origins: tuple[Origin | None, Origin | None, Origin | None]
    context: Context


@dataclass(frozen=True)
class ApiUse:
    """A use of an API whose availability depends on the jax version (MMA501).

    `name` is canonical (`mgpu.MMALayouts`, `plgpu.Layout.MMA_LHS`...); `keywords` the keyword
    arguments passed, each with where it was written.
    """

    name: str
    origin: Origin
    keywords: tuple[tuple[str, Origin | None], ...] = ()
    element_bits: int | None = None
    context: Context = Context()
    element_form: str | None = None  # "dtype" or "ir": how the element type was given
