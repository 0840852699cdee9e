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
    swizzles,
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
    if code in GROUP_CODES:
        return _group_spec(call, conform=conform)
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


def _with_scales(spec: SmemSpec, call: Call,
                 shapes: dict[str, tuple[int, int]] | None = None) -> SmemSpec:
    """The spec with the call's block scales (`scales.py`), sized from its M, N and K (or of
    the `shapes` given)."""
    d, a = spec.data["values"][0], spec.data["values"][1]
    (m, n), k = d["shape"], a["shape"][1]
    values, notes = scale_values(call, m, n, k, shapes)
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


def _staged_swizzle(op: Any) -> int | None:
    """The swizzle a Mosaic GPU SMEM operand was tiled for: its 4-D memref's tile is
    `(8, swizzle row)` (either way round once transposed), None otherwise."""
    shape = op.shape
    if shape is None or len(shape) != 4 or None in shape or op.bits is None:
        return None
    tile = sorted(int(d) for d in shape[2:])
    swizzle = tile[1] * op.bits // 8
    return swizzle if tile[0] == 8 and swizzle in (32, 64, 128) else None


# The K group and block-scale shape cases: the kernel reads the operands as the call does.
GROUP_CODES = ("MMA716", "MMA717", "MMA718")


def _group_spec(call: Call, *, conform: bool) -> SmemSpec:
    """MMA716-718: the swizzles the MMA gets (the Pallas refs' when no option says), A M-major
    and B N-major when the call passes them so, and the scales of the shapes the call's options
    give (rows, K // block)."""
    a_swizzle, b_swizzle = swizzles(call)
    extra: dict[str, Any] = {"a_swizzle": a_swizzle, "b_swizzle": b_swizzle}
    shapes: dict[str, tuple[int, int]] = {}
    for side in ("a", "b"):
        rows, columns = call.option(f"{side}_scale_rows"), call.option(f"{side}_scale_columns")
        if isinstance(rows, int) and isinstance(columns, int):
            extra[f"{side}_scale_shape"] = [rows, columns]
            shapes[side] = (rows, columns)
    for side, op in (("a", call.a), ("b", call.b)):
        copy = _staged_swizzle(op)
        if call.api == "mgpu.tcgen05.mma" and copy is not None:
            extra[f"{side}_copy_swizzle"] = copy
    spec = kernel_spec(NAME, TILES, call, conform=False, extra=extra)
    values = [dict(v) for v in spec.data["values"]]
    values[1]["transposed"] = call.a.transposed is True
    values[2]["transposed"] = call.b.transposed is not False
    del conform  # the call's own M, N and K: the fixes say what changes
    return _with_scales(SmemSpec({**spec.data, "values": values}, spec.notes), call, shapes)


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
    jax_only_code_prefixes=GROUP_CODES,
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
                                  "ptxas never sees; only jax's check shows it",
                        "MMA716": "K is split into instructions by Mosaic and the swizzle "
                                  "lives in the SMEM descriptors: no instruction shows it",
                        "MMA717": "jax 0.10's own limit: the block-scaled instruction takes "
                                  "any N the N check allows",
                        "MMA718": "the scale block lives in the TMEM addresses of the scales, "
                                  "runtime values ptxas never sees"},
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
