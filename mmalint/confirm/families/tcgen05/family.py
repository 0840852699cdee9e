"""The Blackwell family as the tiers drive it (host side; workers import `kernels.py`)."""

from __future__ import annotations

from typing import Any

from mmalint.catalog import load_catalog
from mmalint.confirm.call import Call
from mmalint.confirm.families.smem_cases import SmemSpec, kernel_spec
from mmalint.confirm.families.tcgen05 import APIS, NAME
from mmalint.confirm.families.tcgen05.fixes import (
    CODES,
    FIX_DESCRIPTIONS,
    TILES,
    TMEM_A_CODES,
    fixed_call,
    unmasked_call,
)
from mmalint.confirm.families.tcgen05.instruction import (
    data_instruction,
    emitted_instruction,
    ptx_module,
)
from mmalint.confirm.families.tcgen05.scales import scale_values
from mmalint.confirm.family import Family

PTX_ARCH = "sm_100a"


def _kernel_spec(call: Call, code: str, *, conform: bool = False) -> SmemSpec:
    swizzle = {side: int(call.option(f"{side}_swizzle") or 128) for side in ("a", "b")}
    extra: dict[str, Any] = {"a_swizzle": swizzle["a"], "b_swizzle": swizzle["b"]}
    if code not in TMEM_A_CODES:
        return _with_scales(kernel_spec(NAME, TILES, call, conform=conform, extra=extra), call)
    # The A-in-TMEM kernel lays out its own scales and sparsity metadata from the call.
    extra["tmem_a"] = {"packing": call.a.tmem_packing, "collective": call.a.tmem_collective,
                       "d_collective": call.acc.tmem_collective}
    spec = kernel_spec(NAME, TILES, call, conform=conform, extra=extra)
    _tmem_a_b_shape(spec, call)
    return spec


def _with_scales(spec: SmemSpec, call: Call) -> SmemSpec:
    """The spec with the call's block scales (`scales.py`), sized from its M, N and K."""
    d, a = spec.data["values"][0], spec.data["values"][1]
    (m, n), k = d["shape"], a["shape"][1]
    values, notes = scale_values(call, m, n, k)
    return SmemSpec({**spec.data, "scales": values}, (*spec.notes, *notes))


def _tmem_a_b_shape(spec: SmemSpec, call: Call) -> None:
    """B's (k, n) in an A-in-TMEM kernel (MMA713-715): twice A's K for a sparse MMA, half the
    accumulator's N per CTA for a collective one (the spec takes K from A and N from D)."""
    a, b = spec.data["values"][1], spec.data["values"][2]
    k, n = b["shape"]
    if call.option("sparse"):
        k = 2 * int(a["shape"][1])
    if call.option("collective"):
        n = int(spec.data["values"][0]["shape"][1]) // 2
    b["shape"] = [k, n]


def _no_guess(bits: int, **_: Any) -> str | None:
    del bits
    return None  # tcgen05 operands have no MMA register layout to guess a dtype from


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
    instruction_code_prefixes=("MMA701", "MMA702", "MMA703", "MMA705", "MMA706", "MMA707",
                               "MMA708"),
    jax_only_code_prefixes=(),
    not_in_instruction={"MMA704": "PTX's block-scaled form takes both scale addresses, so a "
                                  "one-sided scale cannot be written as an instruction; only "
                                  "jax's check shows it",
                        "MMA709": "A's and B's element types travel in the instruction "
                                  "descriptor, a runtime register ptxas never sees, and the "
                                  "kind comes from A alone, so a module with the mismatched "
                                  "pair assembles like any other; only jax's check shows it",
                        "MMA710": "the scales' element type is not part of the "
                                  "instruction: it travels in the instruction descriptor's "
                                  "scale-type field (one for both scales), a runtime register "
                                  "ptxas never sees; only jax's check shows it"},
    not_on_cupy={code: "the CuPy path has no tcgen05 kernel" for code in CODES},
    fix_descriptions=FIX_DESCRIPTIONS,
    guess_operand_dtype=_no_guess,
    api_probes=(),
    probe_by_predicted={},
    roles=("d", "a", "b"),
    ptx_arch=PTX_ARCH,
    reference_codes=CODES,
    ptx_allows_note=(" (the D/A/B types, M and N travel in the instruction descriptor, a "
                     "runtime register ptxas does not check)"),
)
