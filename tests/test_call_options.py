"""`MmaCall.option` is `MmaCall.options`, one name at a time (the conditions' fast path)."""

from __future__ import annotations

from pathlib import Path

from mmalint.analysis import analyze, index_source
from mmalint.catalog import load_catalog
from mmalint.checks.families import normalize

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


def test_each_option_is_the_one_of_all_options() -> None:
    catalog = load_catalog()
    seen = 0
    for path in EXAMPLES:
        source = index_source(path.name, path.read_text(encoding="utf-8"))
        for site in analyze(source).sites:
            for version in catalog.versions:
                call = normalize(site, catalog, version)
                options = call.options
                for name in [*options, "not_an_option"]:
                    assert call.option(name) == options.get(name), (path.name, name)
                    seen += name != "lowering_semantics" and name in options
    assert seen > 0  # the examples record options of their own, not only the semantics
