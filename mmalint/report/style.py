"""Shared pieces of the text reporters: colours, code labels, rendering through rich."""

from __future__ import annotations

import io
from collections.abc import Callable

from rich.console import Console
from rich.text import Text

from mmalint.diagnostics import Diagnostic


def code_label(d: Diagnostic) -> Text:
    style = {"error": "bold red", "warning": "bold yellow", "info": "bold blue"}.get(d.severity, "bold")
    label = Text(d.code or d.name, style=style)
    if d.fix is not None and d.fix.applicability == "safe":
        label.append(" [*]", style="cyan")
    return label


def render_text(draw: Callable[[Console], None], color: bool) -> str:
    """Draw with rich into a string; ANSI colours only when asked for."""
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        width=10_000,
        highlight=False,
        emoji=False,
        markup=False,
    )
    draw(console)
    return buffer.getvalue()
