"""Suppressions: `# noqa` comments on a reported statement, and file-level `# mmalint: noqa`.

A finding is suppressed by a `# noqa` (bare, or naming its code or a prefix of it) on any row of
the statement that holds the reported call, so a comment on any line of a multi-line `mma(` call
works. `# mmalint: noqa` anywhere in a file suppresses every finding of the file, and
`# mmalint: noqa: MMA101,MMA2` the named codes and prefixes. Asked to (`--report-unused-noqa`),
directives that suppress nothing, name a rule that is not enabled, or name no rule at all are
reported as MMA001 with a safe fix that removes them.

Comments are found with `tokenize` (a `#` inside a string is not a comment), statements with
Python's `ast` (C, cheap); both run only for files that have findings or directives.
"""

from __future__ import annotations

import ast
import bisect
import functools
import io
import re
import sys
import tokenize
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace

from mmalint.analysis.reparse import parse_alone
from mmalint.catalog import Catalog, Rule
from mmalint.diagnostics import Diagnostic, Edit, Fix, Location, Range
from mmalint.lines import first_row, regions_of, rows_of, tree_of
from mmalint.lines import split_lines as source_lines

UNUSED_NOQA = "MMA001"

# ruff's and flake8's shape: a bare noqa, or noqa with a code list; other tools' codes are kept.
_CODE = r"[A-Z]+[0-9]+"
_CODES = rf"(?P<codes>{_CODE}(?:(?:\s*,\s*|\s+){_CODE})*)"
LINE_NOQA = re.compile(rf"#\s*(?i:noqa)(?::[ \t]*{_CODES}?)?")
FILE_NOQA = re.compile(rf"^#\s*mmalint:\s*(?i:noqa)(?::[ \t]*{_CODES}?)?")
_MMA = re.compile(r"MMA\d{1,3}")
_STRING_TOKENS = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}


@dataclass(frozen=True)
class Directive:
    """One `# noqa` (or `# mmalint: noqa`) comment."""

    row: int
    start: int  # 0-based code-point column of its `#`
    end: int  # just past the directive (the codes, when any)
    codes: tuple[str, ...] | None  # None: bare, all codes
    codes_start: int = -1  # columns of the code list, for rewriting it
    codes_end: int = -1
    comment_start: int = 0  # the whole comment holding the directive
    comment_end: int = 0
    file_level: bool = False

    def matches(self, code: str) -> bool:
        return self.codes is None or any(code.startswith(c) for c in self.codes)


@dataclass
class Directives:
    lines: dict[int, list[Directive]] = field(default_factory=dict)
    file: list[Directive] = field(default_factory=list)
    # rows [start, end) that a multi-line string literal spans past their end: no comment fits
    string_rows: set[int] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.lines or self.file)


def split_lines(text: str) -> list[str]:
    """A document's lines as the analysis splits them (`analysis.source.split_lines`: \\r\\n,
    \\r and \\n only, ends kept), but never none: an editor's empty document has a line 0."""
    return source_lines(text) or [""]


# Texts up to this size have their tokens kept (the last two): a larger one (a generated
# module) is tokenized again by each reader, streaming, as its tokens would not fit in memory.
TOKENS_KEPT_UP_TO = 1 << 20  # characters


def _comments(text: str) -> Iterable[tuple[int, int, str]]:
    """(row, column, text) of every comment; a regex guess if tokenize gives up half-way."""
    seen_rows: set[int] = set()
    complete = True
    if len(text) <= TOKENS_KEPT_UP_TO:
        tokens, complete = _tokenized(text)
        for tok in tokens:
            if tok.type == tokenize.COMMENT:
                seen_rows.add(tok.start[0])
                yield tok.start[0], tok.start[1], tok.string
    else:
        try:
            for tok in tokenize.generate_tokens(io.StringIO(text).readline):
                if tok.type == tokenize.COMMENT:
                    seen_rows.add(tok.start[0])
                    yield tok.start[0], tok.start[1], tok.string
        except (tokenize.TokenError, SyntaxError, IndentationError):
            complete = False
    if complete:
        return
    for row, line in enumerate(split_lines(text), start=1):
        if row in seen_rows:
            continue
        i = line.find("#")
        if i >= 0:
            yield row, i, line[i:].rstrip("\r\n")


@functools.lru_cache(maxsize=2)
def _tokenized(text: str) -> tuple[tuple[tokenize.TokenInfo, ...], bool]:
    """The tokens of `text`, as far as tokenize gets, and whether it got to the end: once per
    text for the suppressions, the noqa edits and the string rows that a check and the language
    server's code actions read (tokenizing a 9,888-line file takes 0.3 s)."""
    found: list[tokenize.TokenInfo] = []
    try:
        found.extend(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return tuple(found), False
    return tuple(found), True


def _tokens(text: str) -> Iterator[tokenize.TokenInfo]:
    """The tokens of `text`, as far as tokenize gets (none past a syntax error)."""
    if len(text) <= TOKENS_KEPT_UP_TO:
        yield from _tokenized(text)[0]
        return
    try:
        yield from tokenize.generate_tokens(io.StringIO(text).readline)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return


def string_rows(text: str) -> set[int]:
    """Rows that a multi-line string literal spans past their end: a comment cannot go there."""
    return _string_rows_of(_tokens(text))


def _string_rows_of(tokens: Iterable[tokenize.TokenInfo]) -> set[int]:
    rows: set[int] = set()
    for tok in tokens:
        if tok.end[0] > tok.start[0] and tok.type in _STRING_TOKENS:
            rows.update(range(tok.start[0], tok.end[0]))
    return rows


def continued_rows(text: str) -> set[int]:
    """Rows that end in a backslash continuation: a comment there would end the line early.

    Inside brackets tokenize ends every row with an NL token; a row whose next token starts on
    a later row with no NL, NEWLINE or comment between them was joined by a backslash.
    """
    rows: set[int] = set()
    previous: tokenize.TokenInfo | None = None
    for tok in _tokens(text):
        if (
            previous is not None
            and tok.start[0] > previous.end[0]
            and previous.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT)
            and tok.type not in (tokenize.DEDENT, tokenize.ENDMARKER)
        ):
            rows.update(range(previous.end[0], tok.start[0]))
        if tok.type not in (tokenize.INDENT, tokenize.DEDENT):
            previous = tok
    return rows


def _codes(match: re.Match[str]) -> tuple[str, ...]:
    return tuple(c for c in re.split(r"[\s,]+", match.group("codes") or "") if c)


def _region_of(regions: list[tuple[int, int]], row: int) -> tuple[int, int] | None:
    at = bisect.bisect_right(regions, (row, sys.maxsize)) - 1
    if at >= 0 and regions[at][0] <= row <= regions[at][1]:
        return regions[at]
    return None


def _rows(text: str) -> tuple[str, ...]:
    """The rows of a text, split once for the statements read of it (never changed)."""
    return rows_of(text)


@functools.lru_cache(maxsize=64)
def _region_tokens(text: str, start: int, end: int) -> tuple[tokenize.TokenInfo, ...] | None:
    """The tokens of rows `start..end` of `text` (a region of `lines.regions_of`), at their
    rows in the text; None if they do not tokenize alone."""
    rows = "".join(_rows(text)[start - 1 : end])
    try:
        tokens = tuple(tokenize.generate_tokens(io.StringIO(rows).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    shift = start - 1
    return tuple(t._replace(start=(t.start[0] + shift, t.start[1]), end=(t.end[0] + shift, t.end[1])) for t in tokens)


def _noqa_comments(text: str) -> Iterable[tuple[int, int, str]] | None:
    """(row, column, text) of every comment that says `noqa`, tokenizing only the statements
    that hold one (a 9,888-line file tokenizes in 0.45 s); None when the text's statements are
    not known (`lines.regions_of`) or one of them does not tokenize alone."""
    regions = regions_of(text)
    if regions is None:
        return None
    found: list[tuple[int, int, str]] = []
    for row, line in enumerate(_rows(text), start=1):
        if "noqa" not in line.lower():
            continue
        region = _region_of(regions, row)
        if region is None:  # between statements: a comment row (or a blank one)
            at = line.find("#")
            if at >= 0:
                found.append((row, at, line[at:].rstrip("\r\n")))
            continue
        tokens = _region_tokens(text, *region)
        if tokens is None:
            return None
        found.extend((t.start[0], t.start[1], t.string) for t in tokens
                     if t.type == tokenize.COMMENT and t.start[0] == row)
    return found


def parse_directives(text: str) -> Directives:
    """Every noqa directive of a file. Cheap when the file has none."""
    found = Directives()
    if "noqa" not in text.lower():
        return found
    comments = _noqa_comments(text)
    for row, col, comment in comments if comments is not None else _comments(text):
        file_match = FILE_NOQA.match(comment)
        if file_match is not None:
            codes = _codes(file_match) if file_match.group("codes") else None
            cs, ce = file_match.span("codes") if file_match.group("codes") else (-1, -1)
            found.file.append(
                Directive(
                    row, col, col + file_match.end(), codes,
                    col + cs if cs >= 0 else -1, col + ce if ce >= 0 else -1,
                    col, col + len(comment), file_level=True,
                )
            )
            continue
        for m in LINE_NOQA.finditer(comment):
            # With codes it names them; alone (or with a colon and nothing after it, like
            # flake8) it suppresses everything.
            codes = _codes(m) if m.group("codes") else None
            cs, ce = m.span("codes") if m.group("codes") else (-1, -1)
            found.lines.setdefault(row, []).append(
                Directive(
                    row, col + m.start(), col + m.end(), codes,
                    col + cs if cs >= 0 else -1, col + ce if ce >= 0 else -1,
                    col, col + len(comment),
                )
            )
    return found


def _nested_bodies(node: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The statement lists right under a statement: its body, `else` and `finally`, then its
    handlers' and cases' bodies (statements live only in these lists, so expressions, nine
    nodes in ten, are never walked)."""
    for name in ("body", "orelse", "finalbody"):
        value = getattr(node, name, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            yield value
    for handler in getattr(node, "handlers", ()):
        yield handler.body
    for case in getattr(node, "cases", ()):
        yield case.body


def _rows_of(node: ast.stmt) -> tuple[int, int] | None:
    """The rows a statement itself holds: a compound statement only its header (decorators,
    the `def`/`for`/`with` line and its continuation lines), its body holding statements of
    their own; None without an end."""
    if node.end_lineno is None:
        return None
    start = first_row(node)
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        return (start, max(start, body[0].lineno - 1))
    return (start, node.end_lineno)


class _Statements:
    """The rows of the statement holding a row range, from Python's `ast`.

    Only the statements whose extent holds the range are looked at, found by bisection in
    each statement list on the way down (a list is in source order, its statements' first
    and last rows never decreasing): a finding in a function of 200,000 statements costs a
    few dozen looks, not a walk of them all. Among the statements holding the range the
    smallest wins, the first in source order (a statement before those it holds) on a tie.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.body: list[ast.stmt] = []
        tree = tree_of(text)  # the analysis's own parse of this very text, if it is the last
        # Else its statements' rows, when known: the statement holding a range is then read
        # from its region alone (`_region_statements`), not from a parse of the whole text.
        self.regions = regions_of(text) if not isinstance(tree, ast.Module) else None
        if self.regions is None:
            self._parse_all(tree)
        else:
            self.body = []

    def _parse_all(self, tree: object | None = None) -> None:
        self.regions = None
        if not isinstance(tree, ast.Module):
            try:
                tree = ast.parse(self.text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return
        self.body = tree.body

    def rows(self, first: int, last: int) -> tuple[int, int]:
        body = self.body
        if self.regions is not None:
            region = _region_of(self.regions, first)
            found = None
            if region is not None and last <= region[1]:
                found = _region_statements("".join(_rows(self.text)[region[0] - 1 : region[1]]), region[0])
            if found is None:
                self._parse_all()
                body = self.body
            else:
                body = list(found)
        best: tuple[int, int] | None = None
        todo = _holding(body, first, last)[::-1]
        while todo:  # in source order, a statement before those it holds
            node = todo.pop()
            rows = _rows_of(node)
            if rows is not None and rows[0] <= first and last <= rows[1] and (
                    best is None or rows[1] - rows[0] < best[1] - best[0]):
                best = rows
            todo.extend([s for body in _nested_bodies(node) for s in _holding(body, first, last)][::-1])
        return best if best is not None else (first, last)


@functools.lru_cache(maxsize=64)
def _region_statements(rows: str, start: int) -> tuple[ast.stmt, ...] | None:
    """The statements of a region of a text (`lines.regions_of`: one that parses alone as in the
    text, a class's member inside a made-up `if 1:`) at their rows in the text; None when it does
    not parse alone (a class's header)."""
    parsed = parse_alone(rows, indented=rows[:1] in (" ", "\t", "\f"))
    if parsed is None:
        return None
    body, wrapper = parsed
    for stmt in body:
        ast.increment_lineno(stmt, start - 1 - wrapper)
    return tuple(body)


def _holding(body: list[ast.stmt], first: int, last: int) -> list[ast.stmt]:
    """The statements of a list whose extent may hold rows `first`-`last`: those starting at or
    before `first` and ending at or after `last`, a run just before the bisection point (their
    ends never decrease either)."""
    end = bisect.bisect_right(body, first, key=first_row)
    begin = end
    while begin > 0 and _ends_at_or_after(body[begin - 1], last):
        begin -= 1
    return body[begin:end]


def _ends_at_or_after(node: ast.stmt, row: int) -> bool:
    return node.end_lineno is None or node.end_lineno >= row


def statement_rows(text: str, ranges: Iterable[Range]) -> list[tuple[int, int]]:
    """For each range, the first and last row of the innermost statement holding it."""
    statements = _Statements(text)
    return [statements.rows(r.start.row, r.end.row) for r in ranges]


@dataclass(frozen=True)
class NoqaOptions:
    report_unused: bool = False
    enabled: Callable[[str], bool] = field(default=lambda code: True)
    ignore: bool = False  # `--ignore-noqa`: no directive suppresses anything (and none is unused)


def apply_suppressions(
    filename: str,
    diagnostics: Iterable[Diagnostic],
    text: str,
    catalog: Catalog,
    options: NoqaOptions,
) -> list[Diagnostic]:
    """The diagnostics that no directive suppresses, with their statement rows set, plus the
    unused-directive findings (MMA001) when asked for."""
    diagnostics = list(diagnostics)
    directives = parse_directives(text)
    rule_diags = [d for d in diagnostics if d.code is not None]
    if rule_diags:
        rows = statement_rows(text, [d.range for d in rule_diags])
        located = {id(d): r for d, r in zip(rule_diags, rows, strict=True)}
        diagnostics = [
            replace(d, statement_rows=located[id(d)]) if id(d) in located else d
            for d in diagnostics
        ]
    if not directives or options.ignore:
        return diagnostics
    used: dict[tuple[int, int], set[str]] = {}  # (row, start) -> codes used; "*" for bare
    kept: list[Diagnostic] = []
    for d in diagnostics:
        if d.code is None:
            kept.append(d)  # syntax errors are not findings: no noqa hides them
            continue
        if _suppressed(d, directives, used):
            continue
        kept.append(d)
    if options.report_unused and options.enabled(UNUSED_NOQA) and UNUSED_NOQA in catalog.rules:
        for finding in _unused(directives, used, catalog, options, filename, split_lines(text)):
            if any(f.matches(UNUSED_NOQA) for f in directives.file):
                continue
            kept.append(finding)
    return kept


def _suppressed(d: Diagnostic, directives: Directives, used: dict[tuple[int, int], set[str]]) -> bool:
    assert d.code is not None
    hit = False
    for directive in directives.file:
        if directive.matches(d.code):
            _mark(used, directive, d.code)
            hit = True
    first, last = d.statement_rows or (d.range.start.row, d.range.end.row)
    for row in range(first, last + 1):
        for directive in directives.lines.get(row, ()):
            if directive.matches(d.code):
                _mark(used, directive, d.code)
                hit = True
    return hit


def _mark(used: dict[tuple[int, int], set[str]], directive: Directive, code: str) -> None:
    marks = used.setdefault((directive.row, directive.start), set())
    if directive.codes is None:
        marks.add("*")
    else:
        marks.update(c for c in directive.codes if code.startswith(c))


def _unused(
    directives: Directives,
    used: dict[tuple[int, int], set[str]],
    catalog: Catalog,
    options: NoqaOptions,
    filename: str,
    lines: list[str],
) -> list[Diagnostic]:
    rule = catalog.rules[UNUSED_NOQA]

    def line_of(directive: Directive) -> str:
        return lines[directive.row - 1].rstrip("\r\n") if directive.row <= len(lines) else ""

    findings: list[Diagnostic] = []
    all_directives = [*directives.file, *(d for ds in directives.lines.values() for d in ds)]
    for directive in sorted(all_directives, key=lambda d: (d.row, d.start)):
        marks = used.get((directive.row, directive.start), set())
        if directive.codes is None:
            # A bare noqa may be meant for another linter (ruff, flake8): only our own
            # file-level directive is ours to call unused.
            if directive.file_level and not marks:
                findings.append(
                    _finding(rule, filename, directive, line_of(directive), "unused", (), True)
                )
            continue
        unknown, disabled, unused = [], [], []
        for code in directive.codes:
            if not _MMA.fullmatch(code) or code == UNUSED_NOQA:
                continue  # another tool's code, or the directive that keeps this one quiet
            matching = [c for c in catalog.rules if c.startswith(code)]
            if not matching:
                unknown.append(code)
            elif code in marks:
                continue
            elif not any(options.enabled(c) for c in matching):
                disabled.append(code)
            else:
                unused.append(code)
        dropped = (*unknown, *disabled, *unused)
        if not dropped:
            continue
        parts = []
        for label, codes in (("unused", unused), ("non-enabled", disabled), ("unknown", unknown)):
            if codes:
                parts.append(f"{label}: " + ", ".join(f"`{c}`" for c in codes))
        remaining = [c for c in directive.codes if c not in dropped]
        findings.append(
            _finding(
                rule, filename, directive, line_of(directive), "; ".join(parts),
                tuple(remaining), not remaining,
            )
        )
    return findings


def _finding(
    rule: Rule, filename: str, directive: Directive, line: str, detail: str,
    remaining: tuple[str, ...], remove_all: bool,
) -> Diagnostic:
    kind = "file-level `mmalint: noqa`" if directive.file_level else "`noqa`"
    message = f"Unused {kind} directive ({detail})" if detail != "unused" else f"Unused {kind} directive"
    where = Range(
        filename, Location(directive.row, directive.start + 1), Location(directive.row, directive.end + 1)
    )
    if remove_all:
        edit = _removal(directive, filename, line)
        title = "Remove the unused `noqa` directive"
    else:
        edit = Edit(
            ", ".join(remaining),
            Range(
                filename,
                Location(directive.row, directive.codes_start + 1),
                Location(directive.row, directive.codes_end + 1),
            ),
        )
        title = "Remove the unused codes from the `noqa` directive"
    return Diagnostic(
        code=rule.code,
        name=rule.name,
        severity=rule.severity,
        message=message,
        range=where,
        help=rule.help,
        fix=Fix("safe", title, (edit,)),
        url=rule.url,
        statement_rows=(directive.row, directive.row),
    )


def _removal(directive: Directive, filename: str, line: str) -> Edit:
    """Delete the directive, leaving valid code and any comment text around it."""
    start, end = directive.start, directive.end
    rest = line[end : directive.comment_end]
    content = ""
    if directive.start == directive.comment_start:
        if not rest.strip():
            # The whole comment goes, with the spaces before it.
            start = len(line[:start].rstrip())
            end = directive.comment_end
        elif rest.lstrip().startswith("#"):
            # A second comment after the directive stays.
            end += len(rest) - len(rest.lstrip())
        else:
            # Words after the directive stay a comment.
            content = "#"
    else:
        # The directive after other comment text: it goes with the spaces before it.
        start = len(line[:start].rstrip())
    return Edit(
        content,
        Range(filename, Location(directive.row, start + 1), Location(directive.row, end + 1)),
    )


@functools.lru_cache(maxsize=4)
def _noqa_context(text: str) -> tuple[tuple[str, ...], Directives]:
    """What `noqa_edit` reads of a text (its lines, directives): once per text, not once per
    finding (the editor asks for the code actions of every finding on a 9,888-line file, each
    tokenizing the whole text: 0.6 s a finding). Only read, never changed."""
    return _rows(text), parse_directives(text)


def _strings_near(text: str, first: int, last: int) -> set[int]:
    """The rows of `first..last` inside a multi-line string: from the tokens of the statement
    holding them when it is known, else of the whole text (`string_rows`)."""
    regions = regions_of(text)
    region = _region_of(regions, first) if regions is not None else None
    if region is None or last > region[1]:
        return string_rows(text)
    start, end = region
    rows = _string_rows_alone("".join(_rows(text)[start - 1 : end]))
    return string_rows(text) if rows is None else {row + start - 1 for row in rows}


@functools.lru_cache(maxsize=256)
def _string_rows_alone(rows: str) -> frozenset[int] | None:
    """`string_rows` of a statement's rows tokenized alone (None: they do not), by their text:
    an editor's next version of a file has the same statements, at the same or other rows."""
    try:
        return frozenset(_string_rows_of(tokenize.generate_tokens(io.StringIO(rows).readline)))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None


def noqa_edit(text: str, diagnostic: Diagnostic) -> Edit | None:
    """The edit that adds `# noqa: CODE` for a diagnostic (the editor's "disable for this line").

    It goes on the first row of the call whose end is not inside a multi-line string, merged
    into a `# noqa: ...` already there.
    """
    if diagnostic.code is None:
        return None
    lines, directives_of = _noqa_context(text)
    first = diagnostic.range.start.row
    last = max(first, (diagnostic.statement_rows or (first, diagnostic.range.end.row))[1])
    strings = _strings_near(text, first, last)
    row = next((r for r in range(first, last + 1) if r not in strings), None)
    if row is None or row > len(lines):
        return None
    directives = directives_of.lines.get(row, [])
    filename = diagnostic.filename
    for directive in directives:
        if directive.codes is None or diagnostic.code in directive.codes:
            return None  # already suppressed on this row
        return Edit(
            ", ".join([*directive.codes, diagnostic.code]),
            Range(
                filename,
                Location(row, directive.codes_start + 1),
                Location(row, directive.codes_end + 1),
            ),
        )
    line = lines[row - 1].rstrip("\r\n")
    body = line.rstrip()
    return Edit(
        f"  # noqa: {diagnostic.code}",
        Range(filename, Location(row, len(body) + 1), Location(row, len(line) + 1)),
    )
