"""Form feeds (GNU-style page breaks) wherever Python allows them change no finding.

Python's tokenizer restarts the indentation count after a form feed; libcst does not, and drops
it from the code it prints. A form feed at the start of a `def` line once hid the function from
the analysis (its block was taken as indented, and libcst could not parse it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mmalint.analysis.source import _without_form_feeds, indent_of, split_lines
from mmalint.engine import check_text
from mmalint.settings import Settings

REPO = Path(__file__).resolve().parents[2]
KERNEL = (REPO / "examples" / "warp_int8_matmul.py").read_text()
# Test classes, subclasses and helper methods, indented by two spaces.
CLASSES = (REPO / "tests/data/adversarial/round4a/mgpu_warp_mma_wgmma_acc_mwarps_subclass.py").read_text()


def findings(text: str) -> list[tuple[str | None, int, int, str]]:
    report = check_text("ff.py", text, Settings(target_jax="0.12"))
    return [(d.code, d.range.start.row, d.range.start.column, d.message) for d in report.diagnostics]


FORMS = {
    # the form feed on a line of its own, before each top-level def (rows shift by one each)
    "own line before defs": (KERNEL, "\ndef ", "\n\f\ndef "),
    # at the start of each def line: the def is not indented
    "before defs": (KERNEL, "\ndef ", "\n\fdef "),
    "before defs, CRLF": (KERNEL.replace("\n", "\r\n"), "\r\ndef ", "\r\n\fdef "),
    "before classes": (CLASSES, "\nclass ", "\n\fclass "),
    "own line before methods": (CLASSES, "\n  def ", "\n\f\n  def "),
    # in a method's indentation: Python counts the two spaces after it
    "before the indentation of methods": (CLASSES, "\n  def ", "\n\f  def "),
    "inside the indentation of methods": (CLASSES, "\n  def ", "\n \f  def "),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_form_feeds_change_no_finding(form: str) -> None:
    text, old, new = FORMS[form]
    assert old in text
    with_feeds = text.replace(old, new)
    compile(with_feeds, "ff.py", "exec")  # Python allows it
    expected = findings(text)
    assert expected
    got = findings(with_feeds)
    assert [(c, m) for c, _, _, m in got] == [(c, m) for c, _, _, m in expected]
    if "own line" not in form:
        # Rows as before; columns too, but on the lines that hold a form feed, where they
        # count it (a character of the line, for an editor).
        fed = {i + 1 for i, line in enumerate(split_lines(with_feeds)) if "\f" in line}
        assert [(r, c + (r in fed) * (len(new) - len(old))) for _, r, c, _ in expected] == [
            (r, c) for _, r, c, _ in got
        ]


def test_indentation_restarts_after_a_form_feed() -> None:
    assert indent_of("\fdef f():\n") == 0
    assert indent_of("  \f    x = 1\n") == 4
    assert indent_of("    x = 1\n") == 4


def test_form_feeds_are_dropped_for_libcst_with_where() -> None:
    text, removed = _without_form_feeds("a = 1\n\fdef f():\n  \f  return 1\n\f\n")
    assert text == "a = 1\ndef f():\n  return 1\n\n"
    assert removed == {2: 1, 3: 3, 4: 1}
