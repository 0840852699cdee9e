"""Whether to colour output: `--color`, then the environment, then whether the stream is a terminal.

The environment conventions are those ruff and rich follow: `NO_COLOR` (no-color.org, any
non-empty value) turns colour off, and wins over `FORCE_COLOR` (force-color.org, any non-empty
value) and `CLICOLOR_FORCE` (bixense.com/clicolors, any value but empty or `0`), which turn it on
when the output is not a terminal. `--color always` / `--color never` override all three.
"""

from __future__ import annotations

from collections.abc import Mapping

CHOICES = ("auto", "always", "never")
HELP = (
    "when to colour the output: auto (default: on a terminal, unless NO_COLOR is set, or when "
    "FORCE_COLOR or CLICOLOR_FORCE is), always or never"
)


def use_color(choice: str | None, stream: object, environ: Mapping[str, str]) -> bool:
    """Colour for `stream` under `--color choice` (None or "auto": decided by `environ`)."""
    if choice == "always":
        return True
    if choice == "never" or environ.get("NO_COLOR", ""):
        return False
    if environ.get("FORCE_COLOR", "") or environ.get("CLICOLOR_FORCE", "") not in ("", "0"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty()) if callable(isatty) else False
