"""What an instruction family declares: its operand roles, its APIs and how a site of one of
them becomes the normalized call the conditions read."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mmalint.analysis.calls import MmaSite
from mmalint.catalog import Catalog
from mmalint.checks.call import MEMORY_SPACES, MmaCall
from mmalint.checks.candidates import Candidates, generic
from mmalint.checks.conditions import Conditions


@dataclass(frozen=True)
class Role:
    """One operand of the family's signature: `acc`, read from registers."""

    name: str
    title: str  # how a message names it: "accumulator", "lhs operand `a`"
    memory_space: str  # registers, smem, tmem or gmem

    def __post_init__(self) -> None:
        if self.memory_space not in MEMORY_SPACES:
            raise ValueError(f"role {self.name}: unknown memory space {self.memory_space!r}")


@dataclass(frozen=True)
class Api:
    """One API of the family, by canonical name (`mgpu.mma`).

    `frontend` is "mosaic" (Mosaic GPU itself) or "pallas" (Pallas's primitive, lowered with the
    kernel's lowering semantics into the Mosaic GPU one); `module` is where jax defines it.
    """

    name: str
    frontend: str
    module: str


Normalizer = Callable[[MmaSite, Catalog, str, "tuple[int, int] | None"], MmaCall]


@dataclass(frozen=True)
class Family:
    name: str
    roles: tuple[Role, ...]
    apis: tuple[Api, ...]
    conditions: Conditions
    normalize: Normalizer
    # True when nothing is known of the operands jax checks first: the checks of stage
    # `any-operand` speak only then.
    operands_unknown: Callable[[MmaCall], bool]
    # Whether the default target GPU (`target-arch`, sm_90a) is a fact of this family's calls.
    # False for a family the default GPU does not have (tcgen05): its calls then see a target
    # only when one was given, so that Blackwell code is not checked against a Hopper default.
    default_arch: bool = True
    # The dtypes the call's undecided operands may still have, by the kernel's own evidence
    # (`mmalint.checks.candidates`): what any FragmentedArray says of itself, unless the family
    # knows more (the mma family: operand layouts fix the bit width, a and b must match).
    candidates: Callable[[MmaCall], Candidates | None] = generic

    def api(self, name: str) -> Api:
        for api in self.apis:
            if api.name == name:
                return api
        raise KeyError(name)

    def has_api(self, name: str) -> bool:
        return any(api.name == name for api in self.apis)

    def role(self, name: str) -> Role:
        for role in self.roles:
            if role.name == name:
                return role
        raise KeyError(name)
