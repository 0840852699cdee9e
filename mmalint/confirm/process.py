"""Running one worker in its own process, with a timeout that kills the whole process group.

A crash, a hang or a CUDA error in one case becomes that case's outcome; the run goes on.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mmalint.confirm.judge import WorkerOutcome
from mmalint.confirm.protocol import parse_records

# The directory holding the `mmalint` package, so a worker in another interpreter imports
# this very checkout.
PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


def worker_env(extra: Mapping[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (PACKAGE_ROOT, env.get("PYTHONPATH", "")) if p)
    # Several workers may share one GPU: never let jax take most of its memory up front.
    env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env.update(extra)
    return env


def run_worker(python: str, module: str, case: Mapping[str, Any], *, timeout: float,
               env: Mapping[str, str]) -> WorkerOutcome:
    """Run `python -m module` with `case` on stdin; collect its records."""
    try:
        proc = subprocess.Popen(
            [python, "-m", module], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=worker_env(env), start_new_session=True,
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
    return WorkerOutcome(
        records=tuple(parse_records(stdout or "")),
        returncode=proc.returncode,
        stderr_tail=(stderr or "")[-4000:],
        timed_out=timed_out,
        timeout=timeout,
    )


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """Kill the worker and anything it started (it leads its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
