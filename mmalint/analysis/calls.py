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
class Entry:
    """Where a path first crossed from one module of the checked tree into another: the call
    (`ops.matmul(x, dtype=jnp.int8)` in ops_test.py), and the facts it passed, by the callee's
    parameter names (`dtype=int8`)."""

    origin: Origin
    bindings: tuple[WorldBinding, ...] = ()

    def __str__(self) -> str:
        return ", ".join(str(b) for b in self.bindings)


@dataclass(frozen=True)
class Context:
    """The dynamic context of an analysed path."""

    world: tuple[WorldBinding, ...] = ()
    expected_failure: Origin | None = None  # the `with self.assertRaises(...)` that wraps the call
    semantics: Value = UNKNOWN  # Pallas lowering semantics of the enclosing kernel launch
    in_kernel: bool = False
    entry: Entry | None = None  # the call in another module of the tree this path came through
    # The path runs a module as a script with no arguments (`python bench.py`): under its
    # `if __name__ == "__main__":`, where `sys.argv[1:]` is empty.
    script: bool = False
    # The generator function (its node) a `@contextlib.contextmanager` call is entering: what
    # it yields inside a `with` or `try` of its own is what `with ... as x` binds.
    entering: object = None


@dataclass(frozen=True)
class SiteOperand:
    """One operand of an MMA call as passed: its role in the family's signature, its value, and
    where the argument was written. Roles are positional (`mma(acc, a, b)` reads its first
    argument as the accumulator whatever it is named), so a call written `mma(a, b, acc)` is
    recorded as written and the rules can tell."""

    role: str
    value: Value
    origin: Origin | None


@dataclass(frozen=True)
class MmaSite:
    """One call of an instruction family (`mma`, later `wgmma`, `tcgen05`) on one path.

    `family` names the family module in every layer (models, checks, conditions, confirm);
    `api` is the canonical name the call resolved to; `operands` are in the family's role order;
    `options` are the call's other arguments the family reads (swizzle, accumulate...).
    """

    family: str
    api: str
    origin: Origin
    operands: tuple[SiteOperand, ...]
    context: Context
    options: tuple[tuple[str, Value], ...] = ()

    def operand(self, role: str) -> SiteOperand:
        for op in self.operands:
            if op.role == role:
                return op
        raise KeyError(role)

    @property
    def args(self) -> tuple[Value, ...]:
        return tuple(op.value for op in self.operands)

    @property
    def arg_origins(self) -> tuple[Origin | None, ...]:
        return tuple(op.origin for op in self.operands)


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
