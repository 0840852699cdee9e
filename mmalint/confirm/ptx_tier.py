"""The ptx tier: does the instruction the call needs exist for the target? Ask ptxas."""

from __future__ import annotations

import time

from mmalint.confirm.fixes import SILENT_CODES, fixed_call, unmasked_call
from mmalint.confirm.instruction import MmaInstruction, data_instruction, emitted_instruction
from mmalint.confirm.ptx import ptx_kernel
from mmalint.confirm.ptxas import (
    Assembly,
    Ptxas,
    assemble,
    find_ptxas,
    is_tool_problem,
    normalize_arch,
)
from mmalint.confirm.signature import APIS, Finding
from mmalint.confirm.verdict import CONFIRMED, INCONCLUSIVE, PTX_ALLOWS, Verdict, make_verdict

# Rule families whose mistake is in the instruction's types or target (dtype, signedness,
# target); layouts and shapes never reach the instruction, so ptxas has nothing to say.
_PTX_FAMILIES = ("MMA1", "MMA2", "MMA5")


def _assemble(ptxas: Ptxas, instr: MmaInstruction, arch: str, timeout: float) -> Assembly:
    return assemble(ptxas, ptx_kernel(instr, arch=arch, version=ptxas.ptx_isa), arch,
                    timeout=timeout)


def _said(result: Assembly) -> str:
    return "assembles" if result.ok else f"rejected: {result.message}"


def confirm_ptx(finding: Finding, *, timeout: float = 60.0) -> Verdict:
    """The ptx-tier verdict for one finding (runs ptxas once or twice, ~10 ms each)."""
    start = time.perf_counter()

    def verdict(kind: str, evidence: str, **detail: object) -> Verdict:
        notes = finding.call.notes if finding.call is not None else ()
        evidence += "".join(f" [{n}]" for n in notes)
        return make_verdict(finding, "ptx", kind, evidence, time.perf_counter() - start,
                            **detail)

    code = finding.code
    if code == "MMA501":
        return verdict(INCONCLUSIVE, "tier does not apply to MMA501: it is about a jax API, "
                       "which never reaches the PTX instruction")
    if finding.call is None:
        return verdict(INCONCLUSIVE, finding.problem or "no call signature")
    if finding.call.api not in APIS:
        return verdict(INCONCLUSIVE, f"api {finding.call.api} is not covered by the reference "
                       "lowering (mgpu.mma and plgpu.mma only)")
    if code == "MMA202":
        return verdict(INCONCLUSIVE, "tier does not apply to MMA202: is_signed is an attribute "
                       "of jax's FragmentedArray; PTX spells every integer .s or .u")
    if not code.startswith(_PTX_FAMILIES):
        return verdict(INCONCLUSIVE, f"tier does not apply to {code}: layouts, shapes and jax "
                       "APIs do not reach the PTX instruction")
    ptxas = find_ptxas()
    if ptxas is None:
        return verdict(INCONCLUSIVE, "ptxas not found (put the CUDA toolkit's bin on PATH)")
    call = unmasked_call(finding.call, finding.masked_by)
    arch = normalize_arch(call.target_arch)
    flagged = emitted_instruction(call)
    facts: dict[str, object] = {"instruction": flagged.text, "arch": arch,
                                "ptxas": ptxas.label, "ptx_isa": ptxas.ptx_isa}

    if code in SILENT_CODES:
        right = data_instruction(call)
        got, want = _assemble(ptxas, flagged, arch, timeout), _assemble(ptxas, right, arch, timeout)
        same = " (the same instruction: the signature shows no sign mix-up)" if flagged == right \
            else ""
        return verdict(
            INCONCLUSIVE,
            f"tier does not apply to {code}: nothing raises; jax emits {flagged} ({_said(got)}), "
            f"the data needs {right} ({_said(want)}){same}",
            right_instruction=right.text, **facts,
        )

    result = _assemble(ptxas, flagged, arch, timeout)
    if not result.ok and is_tool_problem(result.message):
        return verdict(INCONCLUSIVE, f"ptxas cannot check it: {result.message}", **facts)
    if result.ok:
        return verdict(INCONCLUSIVE, f"{PTX_ALLOWS}: {flagged} assembles for {arch}", **facts)

    fixed = fixed_call(call, code)
    if fixed is None:
        return verdict(CONFIRMED, f"{ptxas.label} for {arch}: {result.message} ({flagged})",
                       ptxas_message=result.message, **facts)
    fix_instr, fix_arch = emitted_instruction(fixed), normalize_arch(fixed.target_arch)
    fix_result = _assemble(ptxas, fix_instr, fix_arch, timeout)
    facts |= {"ptxas_message": result.message, "fix_instruction": fix_instr.text,
              "fix_arch": fix_arch}
    if not fix_result.ok:
        return verdict(
            INCONCLUSIVE,
            f"{flagged} is rejected ({result.message}), but so is the fix {fix_instr} for "
            f"{fix_arch} ({fix_result.message}): the failure is not this finding's", **facts)
    fix_note = f" for {fix_arch}" if fix_arch != arch else ""
    return verdict(
        CONFIRMED,
        f"{ptxas.label} for {arch}: {result.message} ({flagged}); "
        f"the fix {fix_instr} assembles{fix_note}", **facts)
