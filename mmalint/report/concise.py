"""`--format concise`: one line per finding, `path:row:col: CODE message` (in a notebook
`path:cell N:row:col: CODE message`, the row counted in the cell, as ruff writes it)."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.text import Text

from mmalint.diagnostics import Diagnostic
from mmalint.report.style import code_label, render_text


def render(
    diagnostics: list[Diagnostic], source_lines: Callable[[str], list[str] | None], color: bool
) -> str:
    def draw(console: Console) -> None:
        for d in diagnostics:
            line = Text()
            line.append(d.filename, style="bold")
            line.append(f":{d.range.start.label()}: ", style="cyan")
            line.append_text(code_label(d))
            line.append(" " + d.message)
            console.print(line, soft_wrap=True, highlight=False)

    return render_text(draw, color)
