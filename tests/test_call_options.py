"""A call's options are made once: the conditions read them one at a time, many times a call."""

from __future__ import annotations

from pathlib import Path

from mmalint.analysis import analyze, index_source
from mmalint.analysis.values import Const
from mmalint.catalog import load_catalog
from mmalint.checks.families import normalize

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


def test_a_calls_options_are_made_once_and_are_what_the_site_recorded() -> None:
    catalog = load_catalog()
    seen = 0
    for path in EXAMPLES:
        source = index_source(path.name, path.read_text(encoding="utf-8"))
        for site in analyze(source).sites:
            for version in catalog.versions:
                call = normalize(site, catalog, version)
                options = call.options
                assert call.options is options  # not made again for the next question
                expected = {"lowering_semantics": call.semantics}
                expected.update((n, v.value if isinstance(v, Const) else None) for n, v in site.options)
                assert options == expected, path.name
                seen += len(site.options)
    assert seen > 0  # the examples record options of their own, not only the semantics
