"""How a process that analyses sets up the interpreter it runs in.

The analysis allocates many small objects that live for the whole run (the blocks libcst
parsed, the modules of the checked tree, the abstract values of their globals). CPython's
cyclic garbage collector, at its default thresholds (700, 10, 10), scans them again and again:
on jax's tree (`mmalint check -j 1 jax/ tests/`, 32 files analysed) its collections took 4.2 s
of 15.7, against 0.64 s at mypy's thresholds, for 6 % more peak memory (224 -> 238 MB).
"""

from __future__ import annotations

import contextlib
import gc
import os
import platform
import sys
from typing import NoReturn

# mypy's, for the same reason (`mypy/build.py`): a young generation large enough that a
# collection finds garbage rather than the run's long-lived objects, and older generations
# collected seldom. A full collection still comes, so a long-lived language server's cycles
# are reclaimed.
THRESHOLDS = (200_000, 30, 30)


def tune_gc() -> None:
    """Collect cyclic garbage less often (CPython only; idempotent). A threshold of 0 (the
    collector turned off by whoever runs us) or one already higher is left alone."""
    if platform.python_implementation() == "CPython" and 0 < gc.get_threshold()[0] < THRESHOLDS[0]:
        gc.set_threshold(*THRESHOLDS)


def end_process(code: int) -> NoReturn:
    """End the process as the interpreter ends it (its threads waited for, its exit functions
    run, its streams flushed), without freeing what it holds object by object.

    mypy ends the same way (`util.hard_exit`). What a check leaves allocated (every parsed
    block, the tree's modules, `ast` trees) is freed by the system at once; the interpreter
    freed it one object at a time: of `mmalint check` of a 200,000-row function, 1.8 s of
    4.2; of a pre-commit run of five files of jax, 0.15 s of 1.2.
    """
    import atexit
    import threading

    with contextlib.suppress(BaseException):
        shutdown = getattr(threading, "_shutdown", None)
        if shutdown is not None:
            shutdown()
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        if stream is None or getattr(stream, "closed", True):
            continue  # as the interpreter ends: a stream closed (the language server's) is left
        try:
            stream.flush()
        except BrokenPipeError:
            pass  # the reader went away (`| head`): what it did not read was not wanted
        except BaseException:
            code = 120  # what the interpreter exits with when its streams cannot be flushed
    os._exit(code)


def traced() -> bool:
    """Whether a profiler, a tracer or a monitoring tool watches this process: cProfile, pdb
    and coverage report or stop only once the program returns (on Python 3.12 cProfile and
    coverage use `sys.monitoring`, and neither `getprofile` nor `gettrace` shows them)."""
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return True
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None:
        return False
    return any(monitoring.get_tool(tool) is not None for tool in range(6))


def exit_code(exc: SystemExit) -> int:
    """The status Python gives a process ended by `exc`: its code, 0 for None, and for anything
    else 1, the code printed to stderr."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    with contextlib.suppress(BaseException):
        print(exc.code, file=sys.stderr)
    return 1
