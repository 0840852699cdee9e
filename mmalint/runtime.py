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
from collections.abc import Iterator
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


# A batch of files checked in one go (a worker of `mmalint check`, or its own process with one
# worker): the young generation is collected only once this many objects more are alive than at
# the last collection. What the check allocates lives to its end (blocks, modules, values) or is
# freed by its reference count: of jax's tree (`check -j 1`, 32 files), 0.93 million more objects
# at the end than at the start, no peak over 2 million, and 5.6 million scanned by the 28
# collections at `THRESHOLDS` (0.28-0.32 s of 5.6 s CPU), which freed 209,000 objects, 16 MB of the
# 229 MB peak. A runaway that makes cycles is still collected, every 2 million objects.
BATCH_THRESHOLDS = (2_000_000, 1000, 1000)


def _start_batch() -> tuple[int, int, int] | None:
    """`BATCH_THRESHOLDS` from now on, what is alive now frozen; the thresholds before (None
    where left alone: not CPython, the collector off or already as lax)."""
    if platform.python_implementation() != "CPython" or not 0 < gc.get_threshold()[0] < BATCH_THRESHOLDS[0]:
        return None
    saved = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*BATCH_THRESHOLDS)
    return saved


@contextlib.contextmanager
def batch_gc() -> Iterator[None]:
    """Collect cyclic garbage only when a batch's objects grow past `BATCH_THRESHOLDS`, what was
    alive before it never (`gc.freeze`: the modules, the catalog). Afterwards (a watched check
    runs again in this process) the thresholds are as before, and what the batch left is in the
    oldest generation, as a long-lived process's objects are."""
    saved = _start_batch()
    try:
        yield
    finally:
        if saved is not None:
            gc.freeze()  # the count starts afresh: no collection of all the batch made at once
            gc.set_threshold(*saved)
            gc.unfreeze()


def batch_worker() -> None:
    """The set-up of a process of `mmalint check`'s pool: it checks a batch of files and ends."""
    tune_gc()
    _start_batch()


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
