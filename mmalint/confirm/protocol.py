"""How workers talk back: one JSON record per line, each behind a marker.

jax and CUDA print freely to stdout and stderr; the marker keeps our records apart from their
noise, and records are flushed one by one so a crash after the first part still reports it.
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any

MARKER = "MMALINT-RECORD "


def emit(record: dict[str, Any]) -> None:
    sys.stdout.write(MARKER + json.dumps(record, default=str) + "\n")
    sys.stdout.flush()


def parse_records(stdout: str) -> list[dict[str, Any]]:
    records = []
    for line in stdout.splitlines():
        if line.startswith(MARKER):
            try:
                value = json.loads(line[len(MARKER):])
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                records.append(value)
    return records


def describe_exception(error: BaseException) -> dict[str, Any]:
    """Class name, exact message (without jax's added notes) and the frame that raised it."""
    frames = traceback.extract_tb(error.__traceback__)
    where = None
    for frame in reversed(frames):
        path = frame.filename.replace("\\", "/")
        if "/jax/" in path or "/jaxlib/" in path or "/cupy" in path:
            tail = path[path.rfind("/jax/") + 1:] if "/jax/" in path else path.rsplit("/", 2)[-1]
            where = f"{tail}:{frame.lineno}"
            break
    message = str(error.args[0]) if len(error.args) == 1 and isinstance(error.args[0], str) \
        else str(error)
    record: dict[str, Any] = {"exception": type(error).__name__, "message": message,
                              "raised_at": where}
    # A lookup failing inside our own kernel builder is a bug of the reference lowering, not
    # something jax raised: it must never pass for (or against) a finding.
    innermost = frames[-1].filename.replace("\\", "/") if frames else ""
    if "/mmalint/confirm/" in innermost and isinstance(error, _HARNESS_ERRORS):
        record["harness"] = True
    return record


_HARNESS_ERRORS = (ImportError, NameError, KeyError, IndexError, AttributeError)
