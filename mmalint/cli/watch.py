"""`mmalint check --watch`: check, then check again each time a watched file changes.

Polling, not file-system events: every `INTERVAL` seconds the files a check would read (and the
configuration files that apply to them) are listed again and their modification times and
sizes compared, so a new file, a deleted one and an edited configuration all start a new check.
It needs nothing beyond the standard library and works the same on every platform.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

INTERVAL = 0.5
CLEAR_SCREEN = "\x1b[2J\x1b[1;1H"

State = tuple[tuple[str, int, int], ...] | None


def state_of(paths: Sequence[Path] | None) -> State:
    """What identifies the content of `paths` without reading them; None for no list at all."""
    if paths is None:
        return None
    seen: list[tuple[str, int, int]] = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            seen.append((str(path), -1, -1))
        else:
            seen.append((str(path), st.st_mtime_ns, st.st_size))
    return tuple(sorted(seen))


def watch(
    check: Callable[[], object],
    watched: Callable[[], Sequence[Path] | None],
    out: TextIO,
    *,
    clear: bool = False,
    announce: bool = True,
    interval: float = INTERVAL,
) -> int:
    """Run `check`, then again whenever the state of `watched()` changes, until interrupted.

    `watched` returns None when it cannot say (a broken configuration): the next list it gives
    counts as a change. Returns 0 on Ctrl-C.
    """

    def say(message: str) -> None:
        if announce:
            out.write(f"[{time.strftime('%H:%M:%S')}] {message}\n")
            out.flush()

    try:
        last = state_of(watched())
        say("Starting mmalint in watch mode...")
        check()
        say("Watching for file changes.")
        while True:
            time.sleep(interval)
            now = state_of(watched())
            if now == last:
                continue
            last = now
            if clear:
                out.write(CLEAR_SCREEN)
            say("File change detected...")
            check()
            say("Watching for file changes.")
    except KeyboardInterrupt:
        return 0
