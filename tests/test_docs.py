"""The rule pages in docs/rules/ are generated from rules/*.toml and must not go stale."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from _mmalint_cli import REPO

from mmalint.catalog import load_catalog
from mmalint.docs import pages, stale, write


def test_rule_pages_are_up_to_date() -> None:
    names = stale(REPO / "docs" / "rules", load_catalog())
    assert not names, f"stale rule pages {names}: run `python -m mmalint.docs`"


def test_generator_writes_and_checks(tmp_path: Path) -> None:
    out = tmp_path / "rules"
    check = [sys.executable, "-m", "mmalint.docs", "--check", "--out", str(out)]
    assert subprocess.run(check, capture_output=True).returncode == 1
    subprocess.run([sys.executable, "-m", "mmalint.docs", "--out", str(out)], check=True, capture_output=True)
    assert subprocess.run(check, capture_output=True).returncode == 0
    (out / "MMA101.md").write_text("edited by hand\n")
    (out / "MMA999.md").write_text("a rule that is gone\n")
    result = subprocess.run(check, capture_output=True, text=True)
    assert result.returncode == 1 and "MMA101.md" in result.stderr and "MMA999.md" in result.stderr
    write(out, load_catalog())
    assert not (out / "MMA999.md").exists()


def test_every_rule_has_a_page_and_the_index_links_it() -> None:
    catalog = load_catalog()
    generated = pages(catalog)
    for code, rule in catalog.rules.items():
        assert f"{code}.md" in generated
        assert f"[{code}]({code}.md)" in generated["README.md"]
        assert rule.url.endswith(f"docs/rules/{code}.md")


def test_guides_link_to_pages_that_exist() -> None:
    import re

    docs = REPO / "docs"
    for guide in ("guide.md", "pre-commit.md", "github-actions.md", "editors.md"):
        text = (docs / guide).read_text()
        for target in re.findall(r"\]\(([^)#:]+\.md)", text):
            assert (docs / guide).parent.joinpath(target).resolve().exists(), (guide, target)
