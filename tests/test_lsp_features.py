"""The language server's editor features, through a real `mmalint server` spoken to in raw frames
(the robustness tests' client, with their hard timeouts): quick fixes right after an edit,
configuration files watched, hover, pull diagnostics, settings pulled from the workspace, and
fix-all as the changed lines only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _kernels as k
import pytest

pytest.importorskip("pygls", reason="the language server needs the lsp extra (pygls)")

from test_lsp_robustness import Message, RawServer, is_published, shown

from mmalint.diagnostics import Diagnostic, Edit, Fix, Location, Range
from mmalint.lsp.changes import Change, Moves, changed_span
from mmalint.lsp.diff import line_edits

WHOLE = {"start": {"line": 0, "character": 0}, "end": {"line": 999, "character": 0}}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawServer]:
    s = RawServer(tmp_path)
    try:
        yield s
    finally:
        s.kill()


def apply(text: str, edits: list[Message]) -> str:
    """Apply LSP TextEdits to an ASCII text (code points are UTF-16 units there)."""
    lines = text.splitlines(keepends=True)

    def offset(p: Message) -> int:
        return len("".join(lines[: p["line"]])) + (p["character"] if p["line"] < len(lines) else 0)

    for e in sorted(edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]), reverse=True):
        text = text[: offset(e["range"]["start"])] + e["newText"] + text[offset(e["range"]["end"]) :]
    return text


def actions(server: RawServer, uri: str, only: list[str] | None = None) -> list[Message]:
    context: dict[str, Any] = {"diagnostics": []}
    if only is not None:
        context["only"] = only
    msg_id = server.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": WHOLE, "context": context})
    return server.response(msg_id)["result"] or []


def insert(server: RawServer, uri: str, version: int, line: int, character: int, text: str) -> None:
    """An incremental change, as editors send while typing."""
    at = {"line": line, "character": character}
    server.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": {"start": at, "end": at}, "text": text}]},
    )


# ---------------------------------------------------------------------- quick fixes after an edit


def test_quick_fixes_right_after_an_edit_are_moved_or_left_out(server: RawServer, tmp_path: Path) -> None:
    server.initialize({"debounce_ms": 600_000})  # no lint of the edited text within the test
    uri = (tmp_path / "k.py").as_uri()
    server.open(uri, k.PALLAS_SWAPPED)
    assert server.expect(is_published(uri))["params"]["diagnostics"]
    # A line added above the call: its fix and its noqa move down one line, at once.
    insert(server, uri, 2, 0, 0, "# a comment\n")
    edited = "# a comment\n" + k.PALLAS_SWAPPED
    by_title = {a["title"]: a for a in actions(server, uri)}
    fix = by_title["Move the accumulator to the first argument (MMA105)"]
    assert fix["diagnostics"][0]["range"]["start"]["line"] == 14  # line 13 before the edit
    assert apply(edited, fix["edit"]["changes"][uri]) == "# a comment\n" + k.PALLAS_CLEAN
    noqa = by_title["Disable MMA105 for this line"]
    assert "  o_ref[...] = plgpu.mma(  # noqa: MMA105\n" in apply(edited, noqa["edit"]["changes"][uri])
    # Typing on the same line before the call shifts its columns too.
    insert(server, uri, 3, 14, 2, "x = 1; ")
    edited = edited.replace("  o_ref[...] = plgpu.mma(", "  x = 1; o_ref[...] = plgpu.mma(")
    fix = next(a for a in actions(server, uri) if a["title"].startswith("Move the accumulator"))
    assert apply(edited, fix["edit"]["changes"][uri]) == "# a comment\n" + k.PALLAS_CLEAN.replace(
        "  o_ref[...] = plgpu.mma(", "  x = 1; o_ref[...] = plgpu.mma("
    )
    # An edit inside the call: its findings are stale, so no action at all (not one at old positions).
    insert(server, uri, 4, 15, 7, " ")
    assert actions(server, uri) == []
    assert server.close() == 0


def test_moves_shift_ranges_around_an_edit_and_drop_those_it_touches() -> None:
    old = "a = 1\nb = 2\nc = 3\n"
    new = "a = 1\nbb = 2\nc = 3\n"
    change = changed_span(old, new)
    assert change == Change(7, 7, 1)  # after the common "a = 1\nb"
    moves = Moves(old, new, (change,))

    def diagnostic(row: int, fix_row: int) -> Diagnostic:
        where = Range("f", Location(row, 1), Location(row, 2))
        edit = Edit("x", Range("f", Location(fix_row, 1), Location(fix_row, 2)))
        return Diagnostic("MMA101", "n", "error", "m", where, fix=Fix("safe", "t", (edit,)))

    assert moves.diagnostic(diagnostic(2, 2)) is None
    moved = moves.diagnostic(diagnostic(3, 1))
    assert moved is not None and moved.range.start == Location(3, 1)
    assert moved.fix is not None and moved.fix.edits[0].range.start == Location(1, 1)
    unfixed = moves.diagnostic(diagnostic(3, 2))  # its fix would edit the changed line
    assert unfixed is not None and unfixed.fix is None


# ---------------------------------------------------------------------- configuration files


def test_a_changed_configuration_file_checks_open_documents_again(server: RawServer, tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.mmalint]\n")
    capabilities = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}
    server.initialize(root=tmp_path, capabilities=capabilities)
    registration = server.expect(lambda m: m.get("method") == "client/registerCapability")
    (reg,) = registration["params"]["registrations"]
    assert reg["method"] == "workspace/didChangeWatchedFiles"
    globs = {w["globPattern"] for w in reg["registerOptions"]["watchers"]}
    assert {"**/pyproject.toml", "**/mmalint.toml", "**/.mmalint.toml"} <= globs
    uri = (tmp_path / "k.py").as_uri()
    server.open(uri, k.PALLAS_SWAPPED)
    assert server.expect(is_published(uri))["params"]["diagnostics"]
    pyproject.write_text('[tool.mmalint]\nignore = ["MMA105"]\n')
    server.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": pyproject.as_uri(), "type": 2}]})
    server.expect(lambda m: is_published(uri)(m) and not m["params"]["diagnostics"])
    # Saved in the editor, with no watcher involved: checked again too.
    count = len(server.published(uri))
    pyproject.write_text("[tool.mmalint]\n")
    server.notify("textDocument/didSave", {"textDocument": {"uri": pyproject.as_uri()}})
    again = server.expect(lambda m: is_published(uri)(m) and len(server.published(uri)) > count)
    assert again["params"]["diagnostics"]
    assert server.close() == 0


# ---------------------------------------------------------------------- hover


def test_hover_shows_the_rule_page_on_a_noqa_code_and_on_a_finding(server: RawServer, tmp_path: Path) -> None:
    answer = server.initialize()
    assert answer["result"]["capabilities"]["hoverProvider"]
    uri = (tmp_path / "k.py").as_uri()
    text = k.PALLAS_SWAPPED.replace("M, N, K = 128, 8, 64\n", "M, N, K = 128, 8, 64  # noqa: MMA001, MMA101\n")
    server.open(uri, text)
    server.expect(is_published(uri))

    def hover(line: int, character: int) -> Message | None:
        params = {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}
        result: Message | None = server.response(server.request("textDocument/hover", params))["result"]
        return result

    column = text.splitlines()[5].index("MMA101") + 2
    on_code = hover(5, column)
    assert on_code is not None and on_code["contents"]["kind"] == "markdown"
    assert on_code["contents"]["value"].startswith("# MMA101: ")
    assert on_code["range"]["start"] == {"line": 5, "character": column - 2}
    on_finding = hover(14, 4)  # inside the swapped call
    assert on_finding is not None and on_finding["contents"]["value"].startswith("# MMA105: ")
    assert hover(0, 0) is None
    assert server.close() == 0


# ---------------------------------------------------------------------- pull diagnostics


def test_pull_diagnostics_with_result_ids_and_unchanged_reports(server: RawServer, tmp_path: Path) -> None:
    answer = server.initialize(capabilities={"textDocument": {"diagnostic": {}}})
    assert answer["result"]["capabilities"]["diagnosticProvider"]["identifier"] == "mmalint"
    uri = (tmp_path / "k.py").as_uri()
    server.open(uri, k.PALLAS_SWAPPED)

    def pull(previous: str | None = None) -> Message:
        params: dict[str, Any] = {"textDocument": {"uri": uri}}
        if previous is not None:
            params["previousResultId"] = previous
        report: Message = server.response(server.request("textDocument/diagnostic", params))["result"]
        return report

    first = pull()  # runs (or waits for) the lint of this version
    assert first["kind"] == "full" and [d["code"] for d in first["items"]] == ["MMA105"]
    assert pull(first["resultId"]) == {"kind": "unchanged", "resultId": first["resultId"]}
    server.change(uri, k.PALLAS_CLEAN, 2)
    clean = pull(first["resultId"])
    assert clean["kind"] == "full" and clean["items"] == [] and clean["resultId"] != first["resultId"]
    assert not server.published(uri)  # a pulling client gets no pushed diagnostics on top
    assert server.close() == 0


# ---------------------------------------------------------------------- settings


def test_settings_pulled_from_the_workspace_and_bad_ones_shown(server: RawServer, tmp_path: Path) -> None:
    server.answers["workspace/configuration"] = [{"ignore": ["MMA105"], "select": None, "target_jax": None}]
    server.initialize(capabilities={"workspace": {"configuration": True}})
    server.expect(lambda m: m.get("method") == "workspace/configuration")
    uri = (tmp_path / "k.py").as_uri()
    server.open(uri, k.PALLAS_SWAPPED)
    server.expect(lambda m: is_published(uri)(m) and not m["params"]["diagnostics"])
    # On didChangeConfiguration the section is pulled again; bad values are shown, each by name.
    server.answers["workspace/configuration"] = [{"select": ["XYZ"], "log_level": "loud", "unsafe_fixes": "yes"}]
    server.notify("workspace/didChangeConfiguration", {"settings": None})
    server.expect(lambda m: is_published(uri)(m) and bool(m["params"]["diagnostics"]))
    for named in ("select", "log_level", "unsafe_fixes"):
        server.expect(lambda m, named=named: shown(m) and named in m["params"]["message"])
    assert server.close() == 0


def test_explicit_config_select_and_log_level_from_initialization_options(server: RawServer, tmp_path: Path) -> None:
    strict = tmp_path / "ci" / "strict.toml"
    strict.parent.mkdir()
    strict.write_text('ignore = ["MMA105"]\n')
    server.initialize({"config": str(strict), "log_level": "error", "no_such_option": 1})
    uri = (tmp_path / "k.py").as_uri()
    server.open(uri, k.PALLAS_SWAPPED)
    assert server.expect(is_published(uri))["params"]["diagnostics"] == []
    assert not any("no_such_option" in m for m in server.messages("window/logMessage"))  # a Log, below "error"
    assert server.close() == 0


def test_unsafe_fixes_are_offered_only_when_asked_for(tmp_path: Path) -> None:
    uri = (tmp_path / "k.py").as_uri()
    for unsafe in (False, True):
        server = RawServer(tmp_path)
        try:
            server.initialize({"unsafe_fixes": unsafe})
            server.open(uri, k.PALLAS_ACC_VARIABLE)
            codes = [d["code"] for d in server.expect(is_published(uri))["params"]["diagnostics"]]
            assert "MMA101" in codes
            titles = [a["title"] for a in actions(server, uri)]
            assert any("(unsafe fix)" in t for t in titles) == unsafe
            assert "Disable MMA101 for this line" in titles
            fix_all = actions(server, uri, ["source.fixAll.mmalint"])
            if unsafe:
                (action,) = fix_all
                assert "safe" not in action["title"]
                fixed = apply(k.PALLAS_ACC_VARIABLE, action["edit"]["changes"][uri])
                assert fixed != k.PALLAS_ACC_VARIABLE
            else:
                assert fix_all == []
            assert server.close() == 0
        finally:
            server.watchdog.cancel()
            if server.proc.poll() is None:
                server.proc.kill()
            server.proc.wait()


# ---------------------------------------------------------------------- fix-all as line edits


def test_fix_all_sends_only_the_changed_lines(server: RawServer, tmp_path: Path) -> None:
    server.initialize()
    uri = (tmp_path / "k.py").as_uri()
    server.open(uri, k.PALLAS_SWAPPED)
    server.expect(is_published(uri))
    (action,) = actions(server, uri, ["source.fixAll"])
    edits = action["edit"]["changes"][uri]
    assert apply(k.PALLAS_SWAPPED, edits) == k.PALLAS_CLEAN
    changed = {line for e in edits for line in range(e["range"]["start"]["line"], e["range"]["end"]["line"])}
    assert changed and changed <= {14, 15, 16}  # the argument lines, not the whole document
    assert server.close() == 0


def test_line_edits_are_minimal() -> None:
    old = "a\nb\nc\nd"
    edits = line_edits("f", old, "a\nB\nc\nD")
    assert [(e.range.start.row, e.range.end.row, e.content) for e in edits] == [(2, 3, "B\n"), (4, 4, "D")]
    assert edits[1].range.end == Location(4, 2)  # the end of a last line without a newline


def test_the_lint_child_makes_each_findings_noqa_edit(tmp_path: Path) -> None:
    """The "disable for this line" edits come with the lint's result, made where the text was
    tokenized once: the server answers code actions without tokenizing a large file again for
    each finding (1.6 s for the 5 findings of jax's 9,888-line gpu_test.py before)."""
    from mmalint.lsp.worker import Job, Linted, run_job
    from mmalint.pipeline.options import LintOptions
    from mmalint.suppress import noqa_edit

    path = tmp_path / "kernel.py"
    path.write_text(k.PALLAS_SWAPPED)
    outcome = run_job(Job("lint", str(path), k.PALLAS_SWAPPED, "0.12", LintOptions()))
    assert isinstance(outcome, Linted)
    diagnostics = outcome.report.diagnostics
    assert diagnostics and len(outcome.noqa) == len(diagnostics)
    assert all(e is not None for e in outcome.noqa)
    assert list(outcome.noqa) == [noqa_edit(k.PALLAS_SWAPPED, d) for d in diagnostics]


@pytest.mark.parametrize("text", [
    k.PALLAS_SWAPPED + 'x = """\n# noqa: MMA101\n"""  # noqa: MMA102\n',
    "y = '''\n# noqa\n",  # tokenize gives up half-way: the comments are guessed from there on
])
def test_kept_and_streamed_tokens_read_the_same(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A text's tokens are kept for its next readers unless it is too large to keep; both ways
    find the same comments, directives and multi-line string rows."""
    from mmalint import suppress

    kept = (list(suppress._comments(text)), suppress.string_rows(text), suppress.parse_directives(text))
    monkeypatch.setattr(suppress, "TOKENS_KEPT_UP_TO", 0)
    streamed = (list(suppress._comments(text)), suppress.string_rows(text), suppress.parse_directives(text))
    assert kept == streamed
    assert kept[0]
