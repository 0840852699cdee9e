"""`--format github`: GitHub Actions workflow commands, shown as annotations on the pull request.

`::error file=F,line=L,col=C,endLine=L2,endColumn=C2,title=MMA101::message`, escaped as the
Actions runner expects (`%`, CR and LF everywhere; `:` and `,` too inside properties).

GitHub places an annotation by its path from the repository root, so in a job (`GITHUB_WORKSPACE`
set) a file inside the workspace is named relative to it, whatever directory mmalint ran in.

A notebook's cells are not lines of its file, so a finding in one is placed, as ruff places it,
on line 1 of the notebook, a place that is plainly not the code, and its message starts with
where the code is: `cell 3:7:3: ...` (cell, row within the cell, column).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mmalint.diagnostics import Diagnostic
from mmalint.report.paths import workspace_from_environment, workspace_relative

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(d: Diagnostic, workspace: str | None = None, cwd: Path | None = None) -> str:
    """One workflow command; `workspace`: the repository root paths are made relative to."""
    filename = d.filename
    if workspace:
        filename = workspace_relative(filename, workspace, cwd or Path.cwd()) or filename
    start, end = d.range.start, d.range.end
    in_cell = start.cell is not None
    props = {
        "file": filename,
        "line": str(1 if in_cell else start.row),
        "col": str(1 if in_cell else start.column),
        "endLine": str(1 if in_cell else end.row),
        "endColumn": str(1 if in_cell else end.column),
        "title": d.code or d.name,
    }
    message = f"{start.label()}: {d.message}" if in_cell else d.message
    if (prediction := d.prediction_text()) is not None:
        message += f"\n{prediction}"
    if d.help:
        message += f"\nhelp: {d.help}"
    if d.url and not d.url.startswith("file:"):
        message += f"\n{d.url}"
    elif d.code:
        # The installed page is a file on the runner, no link for whoever reads the annotation.
        message += f"\nsee `mmalint rule {d.code}`"
    joined = ",".join(f"{k}={escape_property(v)}" for k, v in props.items())
    return f"::{COMMANDS.get(d.severity, 'warning')} {joined}::{escape_data(message)}"


def render(
    diagnostics: list[Diagnostic], source_lines: Callable[[str], list[str] | None], color: bool
) -> str:
    workspace, cwd = workspace_from_environment(), Path.cwd()
    return "".join(command(d, workspace, cwd) + "\n" for d in diagnostics)
