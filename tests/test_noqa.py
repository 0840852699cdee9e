"""Suppressions: noqa on any row of the statement, file-level directives, unused ones (MMA001)."""

from __future__ import annotations

from pathlib import Path

import _kernels as k
import pytest
from _mmalint_cli import run_cli

from mmalint import suppress
from mmalint.pipeline.file import LintOptions, lint_text
from mmalint.settings import Settings
from mmalint.suppress import noqa_edit, parse_directives, statement_rows

SETTINGS = Settings(target_jax="0.12")
SWAP_ROWS = (14, 18)  # `o_ref[...] = plgpu.mma(` ... `)` in PALLAS_SWAPPED


def _codes(text: str, **options: bool) -> list[str]:
    report = lint_text("k.py", text, SETTINGS, LintOptions(**options))
    return [d.code or d.name for d in report.diagnostics]


def _on_row(text: str, row: int, comment: str) -> str:
    lines = text.splitlines(keepends=True)
    lines[row - 1] = lines[row - 1].rstrip("\n") + f"  {comment}\n"
    return "".join(lines)


def test_statement_rows_cover_the_whole_multiline_statement() -> None:
    report = lint_text("k.py", k.PALLAS_SWAPPED, SETTINGS)
    (d,) = report.diagnostics
    assert d.statement_rows == SWAP_ROWS
    assert d.to_json()["noqa_row"] == SWAP_ROWS[0]


def test_noqa_on_every_row_of_a_multiline_call() -> None:
    for row in range(SWAP_ROWS[0], SWAP_ROWS[1] + 1):
        assert _codes(_on_row(k.PALLAS_SWAPPED, row, "# noqa: MMA105")) == [], row
        assert _codes(_on_row(k.PALLAS_SWAPPED, row, "# noqa")) == [], row
    # Not on the statement before or after, and not for another code.
    assert _codes(_on_row(k.PALLAS_SWAPPED, SWAP_ROWS[0] - 1, "# noqa: MMA105")) == ["MMA105"]
    assert _codes(_on_row(k.PALLAS_SWAPPED, SWAP_ROWS[1] + 3, "# noqa")) == ["MMA105"]
    assert _codes(_on_row(k.PALLAS_SWAPPED, 16, "# noqa: MMA101")) == ["MMA105"]


def test_prefixes_other_tools_codes_and_spellings() -> None:
    for comment in ("# noqa: MMA1", "# noqa:MMA105", "# NOQA: E501,MMA105", "# type: ignore  # noqa: MMA105",
                    "# noqa: E501 MMA105"):
        assert _codes(_on_row(k.PALLAS_SWAPPED, 15, comment)) == [], comment


def test_hash_in_a_string_is_not_a_comment() -> None:
    text = k.PALLAS_SWAPPED.replace("      b,\n", "      b if '# noqa' else b,\n")
    assert _codes(text) == ["MMA105"]


def test_compound_statement_header_only() -> None:
    rows = statement_rows("for x in f(\n    1):\n  y = 2\n  z = 3\n", [])
    assert rows == []
    from mmalint.diagnostics import Location, Range

    header = Range("k.py", Location(1, 10), Location(2, 6))
    body = Range("k.py", Location(4, 3), Location(4, 8))
    assert statement_rows("for x in f(\n    1):\n  y = 2\n  z = 3\n", [header, body]) == [(1, 2), (4, 4)]


def _innermost_by_walking(text: str, first: int, last: int) -> tuple[int, int]:
    """`statement_rows` by its definition: of every statement (a compound one by its header
    rows) holding the rows, the one with the fewest, the first in source order on a tie."""
    import ast

    best = None
    for node in sorted((n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.stmt)),
                       key=lambda n: (n.lineno, n.col_offset, -(n.end_lineno or 0))):
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        body = getattr(node, "body", None)
        end = max(start, body[0].lineno - 1) if isinstance(body, list) and body and isinstance(body[0], ast.stmt) \
            else node.end_lineno
        assert end is not None
        if start <= first and last <= end and (best is None or end - start < best[1] - best[0]):
            best = (start, end)
    return best or (first, last)


STATEMENT_SHAPES = [
    "x = f(\n 1,\n 2); y = g(\n 3,\n 4)\n",
    "if a: b; c\nelif d:\n  e = (\n 1)\nelse: f\n",
    "try:\n  a\nexcept E:\n  b = [\n 1]\nelse:\n  c\nfinally:\n  d\n",
    "@dec\n@dec2(\n 1)\ndef f():\n  x = 1\n  for i in g(\n   2):\n    y = i\n  return x\n",
    "match x:\n  case 1:\n    a = 2\n  case _:\n    b\n",
    "class A:\n  def f(self): return 1; x = 2\n  with (\n   h() as z):\n    pass\n",
    "def long():\n" + "".join(f"  x{i} = {i}\n" for i in range(300)) + "  y = mma(\n    x1)\n",
]


def test_statement_rows_are_the_innermost_statement_by_definition() -> None:
    from mmalint.diagnostics import Location, Range

    for text in STATEMENT_SHAPES:
        rows = text.count("\n")
        ranges = [(a, b) for a in range(1, rows + 1) for b in range(a, min(rows, a + 4) + 1)]
        found = statement_rows(text, [Range("k.py", Location(a, 1), Location(b, 1)) for a, b in ranges])
        assert found == [_innermost_by_walking(text, a, b) for a, b in ranges], text


def test_file_level_directives() -> None:
    assert _codes("# mmalint: noqa\n" + k.PALLAS_SWAPPED) == []
    assert _codes("# mmalint: noqa: MMA101,MMA1\n" + k.PALLAS_SWAPPED) == []
    assert _codes("# mmalint: noqa: MMA2\n" + k.PALLAS_SWAPPED) == ["MMA105"]
    # A bare noqa on the first line is flake8's line directive, not a file-level one.
    assert _codes("# noqa\n" + k.PALLAS_SWAPPED) == ["MMA105"]


def test_unused_noqa_only_when_asked() -> None:
    text = _on_row(k.PALLAS_CLEAN, 15, "# noqa: MMA105")
    assert _codes(text) == []
    report = lint_text("k.py", text, SETTINGS, LintOptions(report_unused_noqa=True))
    (d,) = report.diagnostics
    assert (d.code, d.severity, d.range.start.row) == ("MMA001", "warning", 15)
    assert d.message == "Unused `noqa` directive (unused: `MMA105`)"
    assert d.fix is not None and d.fix.applicability == "safe"


def test_unused_unknown_and_disabled_codes() -> None:
    text = _on_row(k.PALLAS_SWAPPED, 15, "# noqa: MMA105, MMA999, E501, MMA201")
    report = lint_text("k.py", text, Settings(target_jax="0.12", ignore=("MMA2",)),
                       LintOptions(report_unused_noqa=True))
    (d,) = report.diagnostics
    assert d.message == "Unused `noqa` directive (non-enabled: `MMA201`; unknown: `MMA999`)"
    from mmalint.fixes.apply import apply_fixes

    fixed = apply_fixes(text, [d]).text
    assert "# noqa: MMA105, E501\n" in fixed
    # Bare noqa may be another linter's: never reported.
    assert _codes(_on_row(k.PALLAS_CLEAN, 15, "# noqa"), report_unused_noqa=True) == []


def test_unused_noqa_fix_removes_the_comment_cleanly() -> None:
    for comment, expected in (
        ("# noqa: MMA105", "      acc,\n"),
        ("# noqa: MMA105  # why", "      acc,  # why\n"),
        ("# noqa: MMA105 because", "      acc,  # because\n"),
        ("# keep  # noqa: MMA105", "      acc,  # keep\n"),
    ):
        text = _on_row(k.PALLAS_CLEAN, 15, comment)
        from mmalint.fixes.fixer import fix_text

        result = fix_text("k.py", text, SETTINGS, LintOptions(report_unused_noqa=True))
        assert result.fixed == {"MMA001": 1}, comment
        assert result.text.splitlines(keepends=True)[14] == expected, comment


def test_unused_file_level_directive() -> None:
    codes = _codes("# mmalint: noqa: MMA2\n" + k.PALLAS_CLEAN, report_unused_noqa=True)
    assert codes == ["MMA001"]
    codes = _codes("# mmalint: noqa: MMA001\n" + _on_row(k.PALLAS_CLEAN, 15, "# noqa: MMA105"),
                   report_unused_noqa=True)
    assert codes == []


def test_noqa_edit_appends_or_merges() -> None:
    report = lint_text("k.py", k.PALLAS_SWAPPED, SETTINGS)
    (d,) = report.diagnostics
    edit = noqa_edit(k.PALLAS_SWAPPED, d)
    assert edit is not None and edit.content == "  # noqa: MMA105" and edit.range.start.row == 14
    merged = _on_row(k.PALLAS_SWAPPED, 14, "# noqa: E501")
    d2 = lint_text("k.py", merged, SETTINGS).diagnostics[0] if lint_text("k.py", merged, SETTINGS).diagnostics else d
    edit = noqa_edit(merged, d2)
    assert edit is not None and edit.content == "E501, MMA105"


def test_directives_parse() -> None:
    found = parse_directives("x = 1  # noqa: A1,B2\ny = '# noqa'\n# mmalint: noqa\n")
    assert [(d.row, d.codes) for d in found.lines[1]] == [(1, ("A1", "B2"))]
    assert 2 not in found.lines
    assert [(d.row, d.codes, d.file_level) for d in found.file] == [(3, None, True)]


def test_cli_report_unused_noqa(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_text(_on_row(k.PALLAS_CLEAN, 15, "# noqa: MMA105"))
    assert run_cli("check", "--target-jax", "0.12", str(path)).returncode == 0
    result = run_cli("check", "--target-jax", "0.12", "--report-unused-noqa", "--format", "concise", str(path))
    assert result.returncode == 1
    assert f"{path}:15:13: MMA001 [*] Unused `noqa` directive (unused: `MMA105`)" in result.stdout
    fixed = run_cli("check", "--target-jax", "0.12", "--report-unused-noqa", "--fix", str(path))
    assert fixed.returncode == 0 and "noqa" not in path.read_text()


def test_noqa_in_a_file_with_newer_syntax_is_read_from_its_statement(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file with syntax newer than this Python's (PEP 695, read by blanking its type
    parameters: the statements stay at their rows) has its noqa comments read from the tokens
    of the statements that hold one, not from all of its tokens."""
    newer = "def first[T](items: list[T]) -> T:\n  return items[0]  # noqa\n\n\n" + k.PALLAS_SWAPPED
    rows = SWAP_ROWS[0] + 4
    whole: list[int] = []
    real_comments = suppress._comments

    def counting(text: str) -> object:
        whole.append(len(text))
        return real_comments(text)

    monkeypatch.setattr(suppress, "_comments", counting)
    assert _codes(newer) == ["MMA105"]
    assert _codes(_on_row(newer, rows + 1, "# noqa: MMA105")) == []
    assert whole == []
