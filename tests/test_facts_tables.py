"""`mmalint.facts`: the tables every layer shares, checked against what jax and PTX say
(mma-facts: `256 / bitwidth` K tiles, m16n8k8 for f64, (16 m_warps, 8 n_warps) accumulator
tiles) and against the modules that read them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mmalint import dtype_table
from mmalint.analysis import dtypes as analysis_dtypes
from mmalint.catalog import load_catalog
from mmalint.facts import dtypes, mma

FACTS = Path(dtypes.__file__).parent


def test_facts_import_nothing_of_mmalint() -> None:
    """Dependency-free: the analysis, the rules and confirm (without libcst) all read it."""
    for path in FACTS.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert node.module in ("__future__", "dataclasses", "typing"), (path.name, node.module)
            elif isinstance(node, ast.Import):
                pytest.fail(f"{path.name} imports {[a.name for a in node.names]}")


@pytest.mark.parametrize(("bits", "k"), [(16, 16), (8, 32), (4, 64), (64, 8), (32, 8)])
def test_k_tile_is_256_bits_of_elements_and_8_for_f64(bits: int, k: int) -> None:
    assert mma.k_tile(bits) == k
    if bits < 64:
        assert mma.k_tile(bits) == 256 // bits


@pytest.mark.parametrize("m_warps", mma.M_WARPS)
def test_base_tiles(m_warps: int) -> None:
    n_warps = 4 // m_warps
    assert mma.acc_tile(m_warps) == (16 * m_warps, 8 * n_warps)
    assert mma.base_tile("acc", None, m_warps) == (16 * m_warps, 8 * n_warps)
    assert mma.base_tile("a", 8, m_warps) == (16 * m_warps, 32)
    assert mma.base_tile("b", 16, m_warps) == (16, 8 * n_warps)
    assert mma.base_tile("a", None, m_warps) is None


def test_m_warps_in_the_order_for_shape_tries_them() -> None:
    assert mma.M_WARPS == (4, 2, 1)


def test_accumulators_and_arch_minimums_name_known_types() -> None:
    assert {dtypes.IR_TYPES[t].kind for t in mma.ACCUMULATOR_TYPES} == {"int", "float"}
    assert {dtypes.DTYPES[d].mlir for d in mma.ACCUMULATOR_DTYPES} == set(mma.ACCUMULATOR_TYPES)
    operand_types = set(load_catalog().table("mgpu.mma", "0.12").operand_types)
    assert set(mma.ARCH_MINIMUMS) <= operand_types
    assert mma.arch_name(mma.ARCH_MINIMUMS["f8E4M3FN"]) == "sm_89"
    assert mma.arch_name(mma.ARCH_MINIMUMS["f64"]) == "sm_90"


def test_every_dtype_has_its_mlir_type() -> None:
    for d in dtypes.DTYPES.values():
        if d.kind == "complex":
            continue
        info = dtypes.IR_TYPES[d.mlir]
        assert info.bits == d.bits, d.name
        assert info.is_integer == (d.kind in ("int", "uint", "bool")), d.name


def test_integer_means_numpy_integer_for_dtypes_and_mlir_integer_for_ir_types() -> None:
    """bool is not a `jnp.integer`, but its MLIR type `i1` is an `ir.IntegerType`."""
    assert not dtypes.DTYPES["bool"].is_integer
    assert dtypes.IR_TYPES["i1"].is_integer
    assert dtypes.DTYPES["uint8"].is_integer and dtypes.DTYPES["uint8"].is_signed is False
    assert dtypes.DTYPES["bfloat16"].signedness == "signless"


def test_the_old_module_paths_read_the_same_table() -> None:
    assert dtype_table.ELEMENT_TYPES is dtypes.ELEMENT_TYPES
    assert analysis_dtypes.DTYPES is dtypes.DTYPES and analysis_dtypes.IR_TYPES is dtypes.IR_TYPES
    assert analysis_dtypes.DTypeInfo is dtypes.DType and analysis_dtypes.IrTypeInfo is dtypes.IrType
    assert analysis_dtypes.dtype_of_ir_type("i8", False) == "uint8"
    assert analysis_dtypes.dtype_of_ir_type("bf16", None) == "bfloat16"
    assert analysis_dtypes.dtype_of_ir_type("i8", None) is None
