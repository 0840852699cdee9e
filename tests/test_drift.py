"""The catalog against the installed jax's own sources (read with libcst, never imported).

Fails when a jax release changes which checks `mgpu.mma` / `plgpu.mma` make, their order,
exceptions or messages, the operand types, the Pallas default lowering semantics, or which MMA
APIs exist. CI runs it with jax 0.10 (Python 3.11) and the newest jax (Python 3.12).
"""

from __future__ import annotations

import pytest

from mmalint.catalog import load_catalog
from mmalint.drift import (
    LAYOUT_INFERENCE_PY,
    MMA_PY,
    PALLAS_CORE,
    PALLAS_LOWERING,
    PALLAS_PRIMITIVES,
    TCGEN05_PY,
    WGMMA_PY,
    compare,
    compare_tcgen05,
    compare_wgmma,
    installed_jax_file,
    normalize,
    raises_in,
)
from mmalint.jaxversion import installed_jax_version

pytestmark = pytest.mark.jax


def _read(relative: str) -> str | None:
    path = installed_jax_file(relative)
    return path.read_text(encoding="utf-8") if path is not None else None


def test_catalog_matches_the_installed_jax() -> None:
    version = installed_jax_version()
    mma_py = _read(MMA_PY)
    if version is None or mma_py is None:
        pytest.skip("jax is not installed")
    catalog = load_catalog()
    key = catalog.resolve_version(version)
    if key != ".".join(version.split(".")[:2]):
        pytest.skip(f"jax {version} is not in the catalog ({', '.join(catalog.versions)}): add it")
    drifts = compare(catalog, key, mma_py, _read(PALLAS_PRIMITIVES), _read(PALLAS_CORE))
    assert not drifts, "\n".join(str(d) for d in drifts)


def test_the_reader_finds_checks_in_a_known_source() -> None:
    """The reader itself, on a fixed snippet shaped like jax's mma.py (no jax needed)."""
    source = '''
def mma(acc, a, b):
  (m, k) = a.shape
  if m != m2:
    raise ValueError(f"M mismatch: {m} != {m2}")
  i8 = ir.IntegerType.get_signless(8)
  bf16 = ir.BF16Type.get()
  if element_type not in (bf16, i8):
    raise NotImplementedError(f"Unsupported operand type: {element_type}")
  if acc.mlir_dtype != i32:
    raise NotImplementedError("Only s32 accumulator supported" " for integer operands.")
'''
    found = raises_in(source, "mma")
    assert [(r.exception, r.message) for r in found] == [
        ("ValueError", "M mismatch: {} != {}"),
        ("NotImplementedError", "Unsupported operand type: {}"),
        ("NotImplementedError", "Only s32 accumulator supported for integer operands."),
    ]
    from mmalint.drift import operand_types

    assert operand_types(source) == ["bf16", "i8"]
    assert normalize("Dtype mismatch: {a_type} != {b_type}") == "Dtype mismatch: {} != {}"


def test_wgmma_catalog_matches_the_installed_jax() -> None:
    """`rules/checks/wgmma.toml` against the installed jax's wgmma.py and Pallas's wgmma."""
    version = installed_jax_version()
    wgmma_py = _read(WGMMA_PY)
    if version is None or wgmma_py is None:
        pytest.skip("jax is not installed")
    catalog = load_catalog()
    key = catalog.resolve_version(version)
    if key != ".".join(version.split(".")[:2]):
        pytest.skip(f"jax {version} is not in the catalog ({', '.join(catalog.versions)}): add it")
    drifts = compare_wgmma(catalog, key, wgmma_py, _read(PALLAS_PRIMITIVES), _read(PALLAS_LOWERING),
                           _read(PALLAS_CORE))
    assert not drifts, "\n".join(str(d) for d in drifts)


def test_the_wgmma_reader_sees_a_changed_message() -> None:
    """The wgmma reader on a snippet shaped like jax's wgmma.py whose s32 message changed."""
    source = '''
def wgmma_m64(acc, a, b_descriptor):
  if not supports_transpose and (a_transpose or b_transpose):
    raise ValueError("Only f16 WGMMA supports transposes")
  if a.layout not in {fa.WGMMA_LAYOUT, fa.WGMMA_LAYOUT_8BIT}:
    raise ValueError("Unsupported A register array layout")


def wgmma(acc, a, b, *, swizzle=128):
  if a_in_regs := isinstance(a, fa.FragmentedArray):
    if element_type2 not in {f16, bf16, i8, f8e5m2, f8e4m3fn}:
      raise ValueError(
          "Only f16, bf16, i8, f8e5m2, f8e4m3fn are supported for A "
          f"in registers, got {element_type2}"
      )
    if element_type2 == i8 and swizzle == 32:
      raise NotImplementedError("swizzle=32 not supported for s8 lhs in registers")
  if k != k2:
    raise ValueError(
        "WGMMA requires A and B to have the same contraction dimension (K),"
        f" got: {k2} and {k}"
    )
  if element_type != element_type2 and not both_fp8:
    raise ValueError(
        "WGMMA requires A and B to have the same element type (or be a mix of"
        f" the e4m3/e5m2 FP8 types), got: {element_type2} and {element_type}"
    )
  if acc._value.shape != (m, n):
    raise ValueError(
        f"Accumulator shape mismatch: expected {(m, n)}, got {acc._value.shape}"
    )
  if element_type == f32:
    raise ValueError(f"WGMMA with element type {element_type} only supports accumulators"
                     f" of type f32, but got: {acc}")
  elif element_type == f16:
    raise ValueError(f"WGMMA with element type {element_type} only supports accumulators "
                     f"of type f32 or f16, but got: {acc}")
  elif element_type == i8:
    if a_in_regs and not a.is_signed:
      raise NotImplementedError("WGMMA with lhs of type u8")
    raise ValueError(f"WGMMA with element type {element_type} only supports accumulators "
                     f"of type i32, but got: {acc}")
  if n > 256 or n % 8:
    raise ValueError(f"N must be a multiple of 8 and <= 256, got: {n}")
  if m % m_group_elems:
    raise ValueError(f"M must be a multiple of {m_group_elems}, got: {m}")
  if k % k_group_elems:
    raise ValueError(f"K must be a multiple of {k_group_elems}, got: {k}")
'''
    drifts = compare_wgmma(load_catalog(), "0.11", source, None, None, None)
    assert [d.what for d in drifts] == ["accumulator types wgmma names", "checks in WGMMAAccumulator.zero, in order"]
    # The K check (MMA612) is one the catalog replays: a source without it is drift.
    without_k = source.replace('    raise ValueError(f"K must be a multiple of {k_group_elems}, got: {k}")\n', "    pass\n")
    drifts = compare_wgmma(load_catalog(), "0.11", without_k, None, None, None)
    assert "checks in mgpu.wgmma(), in order" in [d.what for d in drifts]


def test_tcgen05_catalog_matches_the_installed_jax() -> None:
    """tcgen05.py's `mma()` and `_do_mma()`, and Pallas's `tcgen05_mma`, against
    `rules/checks/tcgen05.toml` (every jax the catalog holds has them, 0.10 included)."""
    version = installed_jax_version()
    tcgen05_py = _read(TCGEN05_PY)
    if version is None or tcgen05_py is None:
        pytest.skip("jax is not installed")
    catalog = load_catalog()
    key = catalog.resolve_version(version)
    if key != ".".join(version.split(".")[:2]):
        pytest.skip(f"jax {version} is not in the catalog ({', '.join(catalog.versions)}): add it")
    drifts = compare_tcgen05(catalog, key, tcgen05_py, _read(PALLAS_PRIMITIVES), _read(LAYOUT_INFERENCE_PY))
    assert not drifts, "\n".join(str(d) for d in drifts)


def test_the_tcgen05_reader_sees_a_changed_message() -> None:
    """On a snippet shaped like jax's tcgen05.py: the catalog's checks must appear in order, so
    a reworded accumulator message is drift (no jax needed)."""
    source = '''
def create_instr_descriptor(input_dtype):
  if input_dtype == ir.F16Type.get():
    pass
  elif input_dtype == ir.IntegerType.get_signless(8):  # Only s8 for now.
    pass


def mma(d, a, b, *, a_scale=None, b_scale=None):
  if (is_scaled := a_scale is not None) != (b_scale is not None):
    raise ValueError("Either none or both scales should be provided")
  if is_scaled and is_sparse:
    if isinstance(a, TMEMRef):
      raise NotImplementedError(
          "A in TMEM unsupported for block-scaled sparse matmuls"
      )
  if isinstance(a, TMEMRef):
    if m != 128:
      raise NotImplementedError(f"Only M=128 is supported for MMA with A in TMEM, but got M={m}")
    expected_packing = 32 // utils.bitwidth(a_element_type)
    if a.layout != expected_layout:
      raise ValueError(
          f"A layout mismatch: expected {expected_layout}, got {a.layout}"
      )
  if a_element_type != b_element_type and not (is_fp8(a_element_type) and is_fp8(b_element_type)):
    raise ValueError("MMA requires A and B to have the same element type, except that "
                     "FP8 types (f8E4M3FN and f8E5M2) may be mixed; got: "
                     f"{a_element_type} and {b_element_type}")
  if m not in (64, 128):
    raise ValueError(f"Only M=128 and M=64 are supported for MMA, but got M={m}")
  if a_element_type == bf16:
    if is_scaled:
      raise ValueError(f"MMA with element type {t} does not support block scaling")
    if d.dtype != f32:
      raise ValueError(f"MMA with element type {a_element_type} only supports accumulators"
                       f" of type f32, but got: {d.dtype}")
  elif a_element_type == f16:
    if d.dtype != f16 and d.dtype != f32:
      raise ValueError(f"MMA with element type {t} only supports accumulators of"
                       f" type f32 or f16, but got: {d.dtype}")
  elif a_element_type == f8:
    if d.dtype != f16 and d.dtype != f32:
      raise ValueError(f"MMA with element type {t} only supports accumulators of"
                       f" type f32 or f16, but got: {d.dtype}")
    if is_scaled and d.dtype != f32:
      raise ValueError(f"Block-scaled MMA with element type {t} only supports f32"
                       f" accumulators, but got: {d.dtype}")
  elif a_element_type == f4:
    if not is_scaled:
      raise ValueError(f"MMA with element type {t} only supports block scaling")
  elif a_element_type == i8:
    if d.dtype != s32:
      raise ValueError("MMA with element type s8 only supports s32 accumulators, but got:"
                       f" {d.dtype}")
  if is_scaled:
    if k % a_scale.shape[1] != 0:
      raise ValueError(f"K={k} is not divisible by A scale second dimension"
                       f" {a_scale.shape[1]}")
  if (n // n_lane_groups) % required_multiple != 0:
    raise ValueError(f"In {mode_name} MMA, N must be a multiple of {required_multiple},"
                     f" got N={n}")
  if n > 256 and n.bit_count() != 1:
    raise NotImplementedError(f"The only supported N > 256, is 512, but got N={n}")
  if collective and n > 128:
    raise ValueError("Only N <= 128 are supported for collective MMA")
  elif n > 512:
    raise ValueError("Only N <= 512 are supported for MMA")
  if k % k_group_elems:
    raise ValueError(f"K must be a multiple of {k_group_elems}, got: {k}")
  if is_scaled:
    if b_scale.dtype != scale_element_type:
      raise ValueError(f"B scale dtype mismatch: expected {scale_element_type} (same as A),"
                       f" got {b_scale.dtype}")
    if is_fp8(a_element_type):
      if not isinstance(scale_element_type, ir.Float8E8M0FNUType):
        raise ValueError("Scale element type mismatch: expected f8e8m0fnu, got"
                         f" {scale_element_type}")
      if scale_block != 32:
        raise ValueError(f"Scale block size mismatch: expected {expected}, got"
                         f" {scale_block}")
    elif is_f4(a_element_type):
      raise ValueError("Scale element type mismatch: expected f8e8m0fnu or f8e4m3fn, got"
                       f" {scale_element_type}")


def _do_mma(a_element_type):
  raise NotImplementedError(f"Unsupported input element type: {a_element_type}")
'''
    catalog = load_catalog()
    assert compare_tcgen05(catalog, "0.11", source, None) == []
    changed = source.replace("only supports s32 accumulators", "needs s32 accumulators")
    drifts = compare_tcgen05(catalog, "0.11", changed, None)
    assert [d.what for d in drifts] == ["checks in mgpu.tcgen05.mma(), in order (catalog's among jax's)"]
    arch = source.replace("  if m not in (64, 128):", "  if utils.get_arch().major != 10:\n    pass\n  if m not in (64, 128):")
    drifts = compare_tcgen05(catalog, "0.11", arch, None)
    assert [d.what for d in drifts] == ["tcgen05.mma() makes no check of the GPU (the compiler does)"]
    # The K group check (MMA716) is one the catalog replays: a source without it is drift.
    without_k = source.replace('    raise ValueError(f"K must be a multiple of {k_group_elems}, got: {k}")\n', "    pass\n")
    assert [d.what for d in compare_tcgen05(catalog, "0.11", without_k, None)] == [
        "checks in mgpu.tcgen05.mma(), in order (catalog's among jax's)"
    ]
    unsigned = source.replace("# Only s8 for now.", "")
    assert [d.what for d in compare_tcgen05(catalog, "0.11", unsigned, None)] == [
        "the i8 instruction descriptor is hard-coded to S8"
    ]
    # jax 0.10 took A-in-TMEM's packing from B's element type: a 0.11 source that did is drift.
    from_b = source.replace("bitwidth(a_element_type)", "bitwidth(element_type)")
    assert [d.what for d in compare_tcgen05(catalog, "0.11", from_b, None)] == [
        "mma() takes the packing of A in TMEM from B's element type (not A's)"
    ]
    no_m_check = source.replace("if m != 128:", "if False:").replace("Only M=128 is supported", "M")
    assert [d.what for d in compare_tcgen05(catalog, "0.11", no_m_check, None)] == [
        "checks in mgpu.tcgen05.mma(), in order (catalog's among jax's)"
    ]


def test_the_tcgen05_reader_finds_the_warpgroup_layout_failure() -> None:
    """The Warpgroup check of A in TMEM (MMA714) is a message of layout inference's
    `infer_layout`: a reworded one is drift (no jax needed)."""
    layout_inference = '''
def infer_layout(module):
  if isinstance(global_constraint_system, cs.Unsatisfiable):
    raise ValueError(
        "Failed to infer a possible set of layouts. This should only happen if "
        "user-provided layout casts are unsatisfiable."
    )
'''
    catalog = load_catalog()
    from mmalint.drift.tcgen05 import _layout_inference_drift

    assert _layout_inference_drift(catalog, "0.11", layout_inference) == []
    reworded = layout_inference.replace("Failed to infer", "Could not infer")
    assert [d.what for d in _layout_inference_drift(catalog, "0.11", reworded)] == [
        "wg-a-tmem-packing-v10-v11: a message layout_inference.infer_layout raises"
    ]
    # jax 0.12 appends a hint to the message: the 0.11 text is not 0.12's.
    assert len(_layout_inference_drift(catalog, "0.12", layout_inference)) == 1
