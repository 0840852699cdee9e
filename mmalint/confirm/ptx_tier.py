"""The ptx tier: does the instruction the call needs exist for the target? Ask ptxas.

The call's family says which instruction that is (`Family.emitted_instruction`), which rule
codes it can show, and writes the PTX module around it."""

from __future__ import annotations

import re
import time

from mmalint.confirm import families
from mmalint.confirm.family import Family, Instruction
from mmalint.confirm.ptxas import (
    Assembly,
    Ptxas,
    assemble,
    find_ptxas,
    is_tool_problem,
    normalize_arch,
)
from mmalint.confirm.signature import Finding
from mmalint.confirm.verdict import CONFIRMED, INCONCLUSIVE, PTX_ALLOWS, Verdict, make_verdict


def _assemble(ptxas: Ptxas, family: Family, instr: Instruction, arch: str,
              timeout: float) -> Assembly:
    return assemble(ptxas, family.ptx_module(instr, arch, ptxas.ptx_isa), arch, timeout=timeout)


def _said(result: Assembly) -> str:
    return "assembles" if result.ok else f"rejected: {result.message}"


def finding_arch(finding: Finding) -> str:
    """The target a finding is about: as its message names it (`the target is sm_100a`; the
    signature's `target_arch` drops the `a`), else the call's."""
    if (match := re.search(r"\btarget is (sm_\w+)", finding.message)) is not None:
        return normalize_arch(match.group(1))
    return normalize_arch(finding.call.target_arch if finding.call is not None else None)


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
    family = families.host(finding.call.family)
    if family is None:
        return verdict(INCONCLUSIVE, f"api {finding.call.api} is not covered by the reference "
                       f"lowering ({families.covered_apis()} only)")
    if (missing := families.no_reference_case(family, code)) is not None:
        return verdict(INCONCLUSIVE, missing)
    if (why := family.not_in_instruction.get(code)) is not None:
        return verdict(INCONCLUSIVE, f"tier does not apply to {code}: {why}")
    if not code.startswith(family.instruction_code_prefixes):
        # Layouts and shapes never reach the instruction, so ptxas has nothing to say.
        return verdict(INCONCLUSIVE, f"tier does not apply to {code}: layouts, shapes and jax "
                       "APIs do not reach the PTX instruction")
    ptxas = find_ptxas()
    if ptxas is None:
        return verdict(INCONCLUSIVE, "ptxas not found (put the CUDA toolkit's bin on PATH)")
    call = family.unmasked_call(finding.call, finding.masked_by)
    arch = family.ptx_arch or normalize_arch(call.target_arch)
    if code in family.arch_codes:
        arch = finding_arch(finding)
    flagged = family.emitted_instruction(call)
    facts: dict[str, object] = {"instruction": flagged.text, "arch": arch,
                                "ptxas": ptxas.label, "ptx_isa": ptxas.ptx_isa}

    if code in family.silent_codes and finding.predicted is None:
        right = family.data_instruction(call)
        got = _assemble(ptxas, family, flagged, arch, timeout)
        want = _assemble(ptxas, family, right, arch, timeout)
        same = " (the same instruction: the signature shows no sign mix-up)" if flagged == right \
            else ""
        return verdict(
            INCONCLUSIVE,
            f"tier does not apply to {code}: nothing raises; jax emits {flagged} ({_said(got)}), "
            f"the data needs {right} ({_said(want)}){same}",
            right_instruction=right.text, **facts,
        )

    result = _assemble(ptxas, family, flagged, arch, timeout)
    if not result.ok and is_tool_problem(result.message):
        return verdict(INCONCLUSIVE, f"ptxas cannot check it: {result.message}", **facts)
    if result.ok:
        return verdict(INCONCLUSIVE, f"{PTX_ALLOWS}: {flagged} assembles for {arch}"
                       f"{family.ptx_allows_note}", **facts)

    fixed = family.fixed_call(call, code)
    if fixed is None:
        return verdict(CONFIRMED, f"{ptxas.label} for {arch}: {result.message} ({flagged})",
                       ptxas_message=result.message, **facts)
    fix_instr, fix_arch = family.emitted_instruction(fixed), (family.ptx_arch
                                                      or normalize_arch(fixed.target_arch))
    fix_result = _assemble(ptxas, family, fix_instr, fix_arch, timeout)
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
