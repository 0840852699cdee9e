"""What the tiers ask of an instruction family (`confirm/families/<name>/family.py` fills it).

The runner, the ptx tier and the judges know no API name, no rule code and no instruction:
they take the call's family (`families.host(call.family)`) and ask it for the fixed call, the
kernel a worker builds, and the instruction ptxas assembles. Workers, which run in other
interpreters, reach the family's worker side by module (`families.worker_module`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from mmalint.confirm.call import Call


@dataclass(frozen=True)
class ApiProbe:
    """One API whose presence depends on the jax version (MMA501), and how to try it."""

    family: str  # whose worker side runs it (`kernels.probe_api`)
    probe: str  # the probe's id
    feature: str  # as the finding's message names it
    pallas: bool  # needs jax.experimental.pallas.mosaic_gpu
    keyword: bool = False  # a keyword some versions accept and ignore (no error to predict)


class Instruction(Protocol):
    """A PTX instruction as the ptx tier and the judges see it."""

    @property
    def text(self) -> str: ...


class Spec(Protocol):
    """A kernel specification as the runner hands it to a worker (plain JSON)."""

    @property
    def notes(self) -> tuple[str, ...]: ...

    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Family:
    """One instruction family as the reference lowering drives it."""

    name: str
    apis: tuple[str, ...]
    # The call with the finding's mistake fixed (None when no fix is known for the code), and
    # the call with the findings that mask it fixed first.
    fixed_call: Callable[[Call, str], Call | None]
    unmasked_call: Callable[[Call, tuple[str, ...]], Call]
    # The kernel for a call and a code (`conform`: shapes rounded up to the tiles, for fixes).
    kernel_spec: Callable[..., Spec]
    # The instruction jax emits for the call as written, and the one its data needs.
    emitted_instruction: Callable[[Call], Instruction]
    data_instruction: Callable[[Call], Instruction]
    # A whole PTX module issuing an instruction of this family, for ptxas.
    ptx_module: Callable[[Any, str, str], str]
    silent_codes: frozenset[str]
    # Code prefixes whose mistake the instruction shows, and those only jax can show.
    instruction_code_prefixes: tuple[str, ...]
    jax_only_code_prefixes: tuple[str, ...]
    # Codes the ptx tier / the CuPy path cannot show even so, with why.
    not_in_instruction: Mapping[str, str]
    not_on_cupy: Mapping[str, str]
    fix_descriptions: Mapping[str, str]
    # What an operand of unknown dtype is rebuilt as, from its layout's bit width
    # (`guess(bits, integer=..., unsigned=...)`), or None.
    guess_operand_dtype: Callable[..., str | None]
    # MMA501: the version-dependent APIs of the family, longest feature text first, and the
    # probe a predicted error message names when the finding's own message names none.
    api_probes: tuple[ApiProbe, ...]
    probe_by_predicted: Mapping[str, str]
    # The family's names for the (acc, a, b) slots of `Call` (tcgen05: `d`, `a`, `b`).
    roles: tuple[str, str, str] = ("acc", "a", "b")
    # The target ptxas assembles the call's instruction for (None: the call's `target_arch`).
    ptx_arch: str | None = None
    # The rule codes the family has a reference case for; any other code of the family is
    # inconclusive ("no reference case"). None: every code that reaches the family.
    reference_codes: frozenset[str] | None = None
    # Why the ptx tier cannot decide a code even when ptxas accepts the instruction (tcgen05's
    # types live in a runtime descriptor), added to the "PTX allows this" evidence.
    ptx_allows_note: str = ""
    # Codes about the target architecture: the ptx tier assembles the flagged instruction for
    # the finding's target (not `ptx_arch`), and the fix for the fixed call's.
    arch_codes: frozenset[str] = frozenset()
    # Codes the gpu tier cannot show, with why (a GPU compiles for itself).
    not_on_gpu: Mapping[str, str] = field(default_factory=dict)
