"""The catalog is validated on load: every mistake in `rules/` fails loading with a
`CatalogError` that names the file, the table and the key (a packaging bug, never the user's)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from mmalint.catalog import CatalogError, Check, load_catalog, rules_dir
from mmalint.checks.conditions import BY_FAMILY
from mmalint.checks.conditions.mma import MmaTable

CHECKS = Path("checks") / "mma.toml"


def _broken(tmp_path: Path, relative: Path | str, old: str, new: str) -> Path:
    """A copy of the catalog with the first `old` of one file replaced by `new`."""
    base = tmp_path / "rules"
    shutil.copytree(rules_dir(), base)
    path = base / relative
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return base


def _error(base: Path) -> str:
    with pytest.raises(CatalogError) as info:
        load_catalog(base)
    return str(info.value)


FIRST_CHECK = 'id = "accumulator-last"\ncondition = "accumulator-last"\n'


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        (FIRST_CHECK, FIRST_CHECK + 'severity = "error"\n', r"\[\[check\]\] #1 \(accumulator-last\): unknown key 'severity'"),
        (FIRST_CHECK, 'id = "accumulator-last"\n', r"\[\[check\]\] #1 \(accumulator-last\): missing required key 'condition'"),
        ('rule = "MMA105"', "rule = 105", r"\[\[check\]\] #1 \(accumulator-last\): key 'rule' must be a string, got 105"),
        ('versions = ["0.10", "0.11", "0.12"]\nrule = "MMA105"', 'versions = "0.10"\nrule = "MMA105"',
         r"\[\[check\]\] #1 \(accumulator-last\): key 'versions' must be a list of strings"),
        ('condition = "accumulator-last"', 'condition = "accumulator-first"',
         r"\[\[check\]\] #1 \(accumulator-last\): key 'condition': family 'mma' has no condition 'accumulator-first'"),
        ('rule = "MMA105"', 'rule = "MMA999"', r"\[\[check\]\] accumulator-last: key 'rule': unknown rule 'MMA999'"),
        ('versions = ["0.10", "0.11", "0.12"]\nrule = "MMA105"', 'versions = ["0.10", "0.13"]\nrule = "MMA105"',
         r"\[\[check\]\] #1 \(accumulator-last\): key 'versions': unknown jax version '0.13'"),
        ("infers_m_warps = false", "infers_m_warps = false\nlayout_m_warps = \"ignored\"",
         r"\[tables.'mgpu.mma'.'0.10'\]: unknown key 'layout_m_warps'"),
        ("infers_m_warps = false", 'infers_m_warps = "no"', r"\[tables.'mgpu.mma'.'0.10'\]: key 'infers_m_warps' must be a boolean"),
        ('family = "mma"', 'family = "nope"', r"key 'family': no instruction family 'nope'"),
        ('missing_in = ["0.10"]', 'missing_in = ["0.9"]', r"\[\[availability\]\] #1: key 'missing_in': unknown jax version '0.9'"),
        ('keyword = "m_warps"', 'keyword = "m_warps"\nkeywords = ["m_warps"]', r"\[\[availability\]\] #1: unknown key 'keywords'"),
    ],
)
def test_a_broken_check_table_fails_loading(tmp_path: Path, old: str, new: str, says: str) -> None:
    message = _error(_broken(tmp_path, CHECKS, old, new))
    assert "mma.toml" in message, message
    assert re.search(says, message), message


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ('code = "MMA101"', 'code = "MMA101"\nfixes = true', r"\[\[rule\]\] #1 \(MMA101\): unknown key 'fixes'"),
        ('code = "MMA101"\nname = ', 'code = "MMA101"\nnom = ', r"\[\[rule\]\] #1 \(MMA101\): unknown key 'nom'"),
        ('severity = "error"', "severity = 2", r"\[\[rule\]\] #1 \(MMA101\): key 'severity' must be a string"),
        ('kind = "invalid"', 'kind = "wrong"', r"\[\[rule.example\]\] #1: key 'kind' must be \"invalid\" or \"valid\""),
        ('kind = "invalid"', 'kind = "invalid"\nexpected = ["MMA101"]', r"\[\[rule.example\]\] #1: unknown key 'expected'"),
    ],
)
def test_a_broken_rule_fails_loading(tmp_path: Path, old: str, new: str, says: str) -> None:
    message = _error(_broken(tmp_path, "mma1xx.toml", old, new))
    assert "mma1xx.toml" in message, message
    assert re.search(says, message), message


def test_a_rule_defined_twice_fails_loading(tmp_path: Path) -> None:
    base = _broken(tmp_path, "mma5xx.toml", 'code = "MMA501"', 'code = "MMA101"')
    assert "rule MMA101 is defined twice" in _error(base)


def test_the_shipped_catalog_loads_typed() -> None:
    catalog = load_catalog()
    assert all(isinstance(c, Check) for c in catalog.checks)
    # Each family's tables are of its own table type: the warp-level family's are MmaTables.
    assert BY_FAMILY["mma"].table_type is MmaTable
    for api, by_version in catalog.tables.items():
        table_type = BY_FAMILY[catalog.api_families[api]].table_type
        assert all(isinstance(t, table_type) for t in by_version.values())
    # A version without a table of its own gets the family's defaults, typed the same.
    assert catalog.table("plgpu.mma", "0.10").operand_types == ()


def test_every_condition_is_used_and_no_check_id_is_relabelled() -> None:
    """Each condition is registered once under its own name and some check row names it."""
    catalog = load_catalog()
    for family, conditions in BY_FAMILY.items():
        named = {c.condition for c in catalog.checks if c.family == family}
        assert named == set(conditions), set(conditions) ^ named
    assert len({c.condition for c in catalog.checks}) < len({(c.api, c.id) for c in catalog.checks})


def test_silent_is_derived_from_the_check_stages() -> None:
    catalog = load_catalog()
    for code, rule in catalog.rules.items():
        stages = {c.stage for c in catalog.checks if c.rule == code}
        assert rule.silent == (stages == {"silent"}), code
    # The warp-level family's silent codes; tcgen05 adds its own (uint8 read as s8).
    assert {c for c in catalog.silent_codes if not c.startswith("MMA7")} == {"MMA203", "MMA204"}
    assert {c for c in catalog.silent_codes if c.startswith("MMA7")} == {"MMA705"}
