"""The warpgroup family as the tiers drive it (host side; workers import `kernels.py`)."""

from __future__ import annotations

import re
from typing import Any

from mmalint.catalog import load_catalog
from mmalint.confirm.call import Call
from mmalint.confirm.families.smem_cases import SmemSpec, kernel_spec, logical_shape
from mmalint.confirm.families.wgmma import APIS, NAME
from mmalint.confirm.families.wgmma.fixes import (
    CODES,
    FIX_DESCRIPTIONS,
    TILES,
    call_swizzle,
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


def _arch(name: str | None) -> list[int] | None:
    """`sm_100a` -> [10, 0] (the compute capability Mosaic is told it lowers for)."""
    match = re.fullmatch(r"sm_?(\d+)(\d)[af]?", (name or "").strip().lower())
    return [int(match.group(1)), int(match.group(2))] if match else None


def _kernel_spec(call: Call, code: str, *, conform: bool = False) -> SmemSpec:
    """The shared SMEM kernel, plus what the MMA607-611 cases read from the signature: each
    operand's swizzle, which operands are MN-major, A's register layout, each operand's own
    shape (MMA610) and the target architecture (MMA609)."""
    spec = kernel_spec(NAME, TILES, call, conform=conform)
    data = dict(spec.data)
    values = [dict(v) for v in data["values"]]
    swizzle = int(data["swizzle"])
    data["a_swizzle"] = int(call.a.swizzle or swizzle)
    data["b_swizzle"] = int(call.b.swizzle or swizzle)
    notes = list(spec.notes)
    if code == "MMA607":
        # As the signature says: a B not passed transposed is the (K, N) buffer itself.
        values[1]["transposed"] = call.a.transposed is True
        values[2]["transposed"] = call.b.transposed is not False
    if code == "MMA608" and call.a.layout.name:
        data["a_layout"] = call.a.layout.name
    if code == "MMA610" and not conform:
        a, b = logical_shape(call.a), logical_shape(call.b)
        if a is not None:
            values[1]["shape"] = list(a)
        if b is not None:
            values[2]["shape"] = list(b)
    if code == "MMA612":
        # As the call reads them: B N-major when it was not passed transposed, A M-major when
        # it was; A in registers is loaded from an SMEM buffer of its own shape (untiled, as a
        # (M, K) of fewer than a swizzle row's columns cannot be tiled by it).
        values[1]["transposed"] = call.a.transposed is True
        values[2]["transposed"] = call.b.transposed is not False
        data["a_untiled"] = call.a.memory_space == "registers"
        data["swizzle"] = call_swizzle(call)
        data["b_swizzle"] = int(call.b.swizzle or data["swizzle"])
    if code == "MMA609" and (arch := _arch(call.target_arch)) is not None:
        data["arch"] = arch
        if arch != list(TILES.arch):
            notes.append(f"lowered as for compute capability {arch[0]}.{arch[1]}: Mosaic does "
                         "not check the architecture; ptxas does (the ptx tier)")
    data["values"] = values
    return SmemSpec(data, tuple(notes))


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
    # Dtype pairs, the unsigned accumulator, u8, the integer N, an MN-major operand (PTX's
    # imm-trans), A in registers and the target are in the instruction.
    instruction_code_prefixes=("MMA601", "MMA602", "MMA603", "MMA605", "MMA606", "MMA607",
                               "MMA608", "MMA609"),
    jax_only_code_prefixes=("MMA604", "MMA607", "MMA608", "MMA610", "MMA611", "MMA612"),
    not_in_instruction={
        "MMA604": "Mosaic tiles M into m64 instructions and checks N itself, so the "
                  "instruction it would emit does not show the shape",
        "MMA610": "Mosaic sizes each m64nNkK instruction from the accumulator and the "
                  "operands' shapes only meet in jax's checks, so no instruction shows the "
                  "disagreement",
        "MMA611": "the swizzle lives in the SMEM matrix descriptors, runtime values ptxas "
                  "never sees",
        "MMA612": "each m64nNk16 instruction is legal: K is split into instructions per "
                  "swizzle row by Mosaic, and the swizzle lives in the SMEM descriptors",
    },
    not_on_gpu={"MMA609": "a GPU compiles the kernel for its own architecture (the wgmma "
                          "family runs on sm_90a), so it cannot show what ptxas says for "
                          "another target; the ptx tier assembles it for the finding's"},
    arch_codes=frozenset({"MMA609"}),
    ptx_allows_note=" (ptxas sees neither the swizzle, in the SMEM descriptors, nor jax's "
                    "operand checks)",
    not_on_cupy={code: "the CuPy path has no wgmma kernel" for code in CODES},
    fix_descriptions=FIX_DESCRIPTIONS,
    guess_operand_dtype=_no_guess,
    api_probes=(),
    probe_by_predicted={},
    ptx_arch=facts.ARCH_NAME,
    reference_codes=CODES,
)
