"""`--format github`: GitHub Actions workflow commands, shown as annotations on the pull request.

`::error file=F,line=L,col=C,endLine=L2,endColumn=C2,title=MMA101::message`, escaped as the
Actions runner expects (`%`, CR and LF everywhere; `:` and `,` too inside properties).
"""

from __future__ import annotations

from collections.abc import Callable

from mmalint.diagnostics import Diagnostic

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(d: Diagnostic) -> str:
    props = {
        "file": d.filename,
        "line": str(d.range.start.row),
        "col": str(d.range.start.column),
        "endLine": str(d.range.end.row),
        "endColumn": str(d.range.end.column),
        "title": d.code or d.name,
    }
    message = d.message
    if (prediction := d.prediction_text()) is not None:
        message += f"\n{prediction}"
    if d.help:
        message += f"\nhelp: {d.help}"
    if d.url:
        message += f"\n{d.url}"
    joined = ",".join(f"{k}={escape_property(v)}" for k, v in props.items())
    return f"::{COMMANDS.get(d.severity, 'warning')} {joined}::{escape_data(message)}"


def render(
    diagnostics: list[Diagnostic], source_lines: Callable[[str], list[str] | None], color: bool
) -> str:
    return "".join(command(d) + "\n" for d in diagnostics)
