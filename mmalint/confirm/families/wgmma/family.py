"""The warpgroup family as the tiers drive it (host side; workers import `kernels.py`)."""

from __future__ import annotations

from typing import Any

from mmalint.catalog import load_catalog
from mmalint.confirm.call import Call
from mmalint.confirm.families.smem_cases import SmemSpec, kernel_spec
from mmalint.confirm.families.wgmma import APIS, NAME
from mmalint.confirm.families.wgmma.fixes import (
    CODES,
    FIX_DESCRIPTIONS,
    TILES,
    fixed_call,
    unmasked_call,
)
from mmalint.confirm.families.wgmma.instruction import (
    data_instruction,
    emitted_instruction,
    ptx_module,
)
from mmalint.confirm.family import Family
from mmalint.facts import wgmma as facts


def _kernel_spec(call: Call, code: str, *, conform: bool = False) -> SmemSpec:
    del code
    return kernel_spec(NAME, TILES, call, conform=conform)


def _no_guess(bits: int, **_: Any) -> str | None:
    del bits
    return None  # wgmma operands have no MMA register layout to guess a dtype from


FAMILY = Family(
    name=NAME,
    apis=APIS,
    fixed_call=fixed_call,
    unmasked_call=unmasked_call,
    kernel_spec=_kernel_spec,
    emitted_instruction=emitted_instruction,
    data_instruction=data_instruction,
    ptx_module=ptx_module,
    silent_codes=frozenset(c.rule for c in load_catalog().checks
                           if c.stage == "silent" and c.api in APIS),
    # Dtype pairs, the unsigned accumulator, u8 and the integer N are in the instruction.
    instruction_code_prefixes=("MMA601", "MMA602", "MMA603", "MMA605", "MMA606"),
    jax_only_code_prefixes=("MMA604",),
    not_in_instruction={"MMA604": "Mosaic tiles M into m64 instructions and checks N itself, "
                                  "so the instruction it would emit does not show the shape"},
    not_on_cupy={code: "the CuPy path has no wgmma kernel" for code in CODES},
    fix_descriptions=FIX_DESCRIPTIONS,
    guess_operand_dtype=_no_guess,
    api_probes=(),
    probe_by_predicted={},
    ptx_arch=facts.ARCH_NAME,
    reference_codes=CODES,
)
