"""The warp-level family as the tiers drive it (host side; workers import `kernels.py` or
`cupy_kernel.py` instead)."""

from __future__ import annotations

from mmalint.catalog import load_catalog
from mmalint.confirm.families.mma import APIS, NAME, facts, probes
from mmalint.confirm.families.mma.cases import kernel_spec
from mmalint.confirm.families.mma.fixes import FIX_DESCRIPTIONS, fixed_call, unmasked_call
from mmalint.confirm.families.mma.instruction import (
    MmaInstruction,
    data_instruction,
    emitted_instruction,
)
from mmalint.confirm.families.mma.ptx import ptx_kernel
from mmalint.confirm.family import Family


def _ptx_module(instruction: MmaInstruction, arch: str, version: str) -> str:
    return ptx_kernel(instruction, arch=arch, version=version)


FAMILY = Family(
    name=NAME,
    apis=APIS,
    fixed_call=fixed_call,
    unmasked_call=unmasked_call,
    kernel_spec=kernel_spec,
    emitted_instruction=emitted_instruction,
    data_instruction=data_instruction,
    ptx_module=_ptx_module,
    # The catalog's: the rules whose checks on this family's APIs raise nothing.
    silent_codes=frozenset(c.rule for c in load_catalog().checks if c.stage == "silent" and c.api in APIS),
    instruction_code_prefixes=facts.INSTRUCTION_CODE_PREFIXES,
    jax_only_code_prefixes=facts.JAX_ONLY_CODE_PREFIXES,
    not_in_instruction=facts.NOT_IN_INSTRUCTION,
    not_on_cupy=facts.NOT_ON_CUPY,
    fix_descriptions=FIX_DESCRIPTIONS,
    guess_operand_dtype=facts.guess_operand_dtype,
    api_probes=probes.PROBES,
    probe_by_predicted=probes.BY_PREDICTED,
)
