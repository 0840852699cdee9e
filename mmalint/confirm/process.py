"""Running one worker in its own process, with a timeout that kills the whole process group.

A crash, a hang or a CUDA error in one case becomes that case's outcome; the run goes on.

Workers never see the checked project. `confirm` is usually run from the project's root, with
the project on `PYTHONPATH`, next to its findings file: a `json.py`, `typing.py`, `numpy.py` or
`jax/` there would be imported before the real one and run. So a worker starts isolated
(`python -I`: no `PYTHON*` variables, no user site, no script or working directory on
`sys.path`), in an empty working directory of its own, and the only directory added to its
`sys.path` holds nothing but a link to this `mmalint` package.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mmalint.confirm.judge import WorkerOutcome
from mmalint.confirm.protocol import parse_records

# The `mmalint` package directory, linked into each worker's private import directory so a
# worker in another interpreter imports this very package and nothing beside it.
PACKAGE_DIR = Path(__file__).resolve().parents[1]

# Runs in the worker: put the private import directories first, then run the module as
# `python -m` would. `-I` already kept the working directory and PYTHONPATH off sys.path.
_BOOTSTRAP = (
    "import runpy, sys\n"
    "module, paths = sys.argv[1], sys.argv[2:]\n"
    "sys.path[:0] = paths\n"
    "del sys.argv[1:]\n"
    "runpy.run_module(module, run_name='__main__', alter_sys=True)\n"
)

# Variables that make an interpreter load code from elsewhere; `-I` ignores the PYTHON* ones,
# but an interpreter given with --python may be a wrapper script that reads them itself.
_LOADER_VARIABLES = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE",
                     "PYTHONSAFEPATH", "PYTHONINSPECT")


def worker_env(extra: Mapping[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _LOADER_VARIABLES}
    # Several workers may share one GPU: never let jax take most of its memory up front.
    env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env.update(extra)
    return env


@contextmanager
def isolated_workspace() -> Iterator[tuple[Path, Path]]:
    """A fresh (import directory holding only `mmalint`, empty working directory) pair."""
    with tempfile.TemporaryDirectory(prefix="mmalint-worker-") as tmp:
        root = Path(tmp)
        lib, cwd = root / "lib", root / "cwd"
        lib.mkdir()
        cwd.mkdir()
        try:
            (lib / "mmalint").symlink_to(PACKAGE_DIR, target_is_directory=True)
        except OSError:  # no symlinks here: the package is small, copy it
            import shutil

            shutil.copytree(PACKAGE_DIR, lib / "mmalint",
                            ignore=shutil.ignore_patterns("__pycache__"))
        yield lib, cwd


def worker_command(python: str, module: str, paths: Sequence[str]) -> list[str]:
    """The command line that runs `module` isolated, importing first from `paths`."""
    return [python, "-I", "-c", _BOOTSTRAP, module, *paths]


def run_worker(python: str, module: str, case: Mapping[str, Any], *, timeout: float,
               env: Mapping[str, str], search_path: Sequence[str] = ()) -> WorkerOutcome:
    """Run `module` isolated with `case` on stdin; collect its records.

    `search_path`: further trusted import directories (mmalint's own tests use it for fake
    workers); never a directory of the checked project.
    """
    with isolated_workspace() as (lib, cwd):
        command = worker_command(python, module, [str(lib), *search_path])
        try:
            proc = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, env=worker_env(env), cwd=cwd,
                start_new_session=True,
            )
        except OSError as e:
            return WorkerOutcome((), None, f"cannot start {python}: {e}", False, timeout)
        timed_out = False
        try:
            stdout, stderr = proc.communicate(json.dumps(case), timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
            stdout, stderr = proc.communicate()
    return collected(stdout or "", stderr or "", proc.returncode, timed_out, timeout)


def collected(stdout: str, stderr: str, returncode: int | None, timed_out: bool,
              timeout: float) -> WorkerOutcome:
    """What a worker left, from its output and error (a process of its own, or forked)."""
    return WorkerOutcome(
        records=tuple(parse_records(stdout)),
        returncode=returncode,
        stderr_tail=stderr[-4000:],
        timed_out=timed_out,
        timeout=timeout,
    )


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """Kill the worker and anything it started (it leads its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
