"""`--format full` (the default): ruff-like code frames with notes, the predicted jax error and help.

In a notebook a frame shows the lines of the cell, numbered within it, and a note in another
cell than its finding says which (`--> nb.ipynb:cell 2:4:9`)."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.text import Text

from mmalint.diagnostics import Diagnostic, Range
from mmalint.report.style import code_label, render_text

CONTEXT_LINES = 1
MAX_SPAN_LINES = 4


def render(
    diagnostics: list[Diagnostic], source_lines: Callable[[str], list[str] | None], color: bool
) -> str:
    def draw(console: Console) -> None:
        for d in diagnostics:
            header = Text()
            header.append(d.filename, style="bold")
            header.append(f":{d.range.start.label()}: ", style="cyan")
            header.append_text(code_label(d))
            header.append(" " + d.message)
            console.print(header, soft_wrap=True)
            _frame(console, d.range, d.code or d.name, source_lines, "red")
            for related in d.related:
                note = Text("  = note: ", style="bold cyan")
                note.append(related.message)
                console.print(note, soft_wrap=True)
                where = related.range
                if where.filename != d.filename or where.start.cell != d.range.start.cell:
                    console.print(Text(f"    --> {where.filename}:{where.start.label()}", style="cyan"))
                _frame(console, related.range, "", source_lines, "cyan")
            if d.predicted_error is not None:
                line = Text(f"  = jax {d.predicted_error.jax_version} raises: ", style="bold red")
                line.append(str(d.predicted_error))
                if d.masked_by:
                    line.append(f"  (once {d.masked_by} is fixed)", style="dim")
                console.print(line, soft_wrap=True)
            elif d.predicted_by_operand:
                version = d.predicted_by_operand[0].error.jax_version
                console.print(Text(f"  = the operand dtype is unknown; jax {version} raises, by the operand dtype:",
                                   style="bold red"), soft_wrap=True)
                for p in d.predicted_by_operand:
                    console.print(Text(f"      {p}", style="red"), soft_wrap=True)
            elif d.unpredicted is not None:
                console.print(Text(f"  = {d.unpredicted}", style="bold red"), soft_wrap=True)
            elif d.code is not None and d.severity != "info" and d.call is not None:
                console.print(
                    Text("  = jax raises nothing: the kernel runs and computes wrong numbers", style="bold red"),
                    soft_wrap=True,
                )
            if len(d.worlds) > 1:
                shown = ", ".join(
                    "{" + ", ".join(f"{k}={v}" for k, v in w.items()) + "}" for w in d.worlds[:4]
                )
                more = f" and {len(d.worlds) - 4} more" if len(d.worlds) > 4 else ""
                console.print(Text(f"  = holds in {len(d.worlds)} worlds: {shown}{more}", style="dim"), soft_wrap=True)
            if d.help:
                line = Text("  = help: ", style="bold green")
                line.append(d.help)
                console.print(line, soft_wrap=True)
            if d.fix is not None:
                line = Text(f"  = fix ({d.fix.applicability}): ", style="bold green")
                line.append(d.fix.message)
                console.print(line, soft_wrap=True)
            console.print()

    return render_text(draw, color)


def _frame(
    console: Console,
    where: Range,
    label: str,
    source_lines: Callable[[str], list[str] | None],
    caret_style: str,
) -> None:
    lines = source_lines(where.filename)
    if not lines:
        return
    # Rows of the checked text before the range's cell (a notebook's), none elsewhere: the
    # context stops at the cell's first row and the gutter counts within the cell.
    before = where.start.row - where.start.shown_row
    first = max(where.start.row - CONTEXT_LINES, before + 1)
    last_marked = min(where.end.row, where.start.row + MAX_SPAN_LINES - 1)
    width = len(str(last_marked - before))
    gutter = " " * width
    console.print(Text(f"{gutter} |", style="blue"))
    for row in range(first, last_marked + 1):
        if row > len(lines):
            break
        text = lines[row - 1].rstrip("\r\n").expandtabs(4)
        line = Text(f"{row - before:>{width}} | ", style="blue")
        line.append(text)
        console.print(line, soft_wrap=True)
        if row < where.start.row:
            continue
        start_col = where.start.column if row == where.start.row else _indent(text) + 1
        end_col = where.end.column if row == where.end.row else len(text) + 1
        if end_col <= start_col:
            end_col = start_col + 1
        marks = Text(f"{gutter} | ", style="blue")
        marks.append(" " * (start_col - 1))
        marks.append("^" * (end_col - start_col), style=caret_style)
        if row == last_marked and label:
            marks.append(" " + label, style=caret_style)
        console.print(marks, soft_wrap=True)
    if where.end.row > last_marked:
        console.print(Text(f"{gutter} | ...", style="blue"))
    console.print(Text(f"{gutter} |", style="blue"))


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())
