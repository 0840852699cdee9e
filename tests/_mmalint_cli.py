"""Run mmalint's command line in a process of its own, as a user would (shared by the CLI tests).

A module of its own rather than conftest.py: tests/ has more than one conftest.py, and
`from conftest import ...` would pick whichever is first on sys.path.

Each run is a fresh process, forked from a server that has imported mmalint once
(`mmalint/confirm/forkserver.py`): about 0.2 s of imports saved per run, a few hundred runs per
suite. The child gets the arguments, the working directory (first on `sys.path`, as `-m`
puts it), the environment and the standard streams a `python -m mmalint` would, and ends as an
interpreter ends; its exit status, output and error are what `subprocess.run` reports. What
only a new interpreter can honour starts one: an environment whose `PYTHON*` or locale
variables differ from the server's, and every run when `MMALINT_TESTS_SUBPROCESS` is set
(`test_cli_check.py` compares the two ways on the same runs).
"""

from __future__ import annotations

import atexit
import locale
import os
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

from mmalint.confirm.forkserver import ForkServer, ServerGone

REPO = Path(__file__).resolve().parent.parent

# What a `mmalint check` imports; the rest each child imports itself.
PRELOAD = ("mmalint.cli", "mmalint.cli.check", "mmalint.pipeline.files", "mmalint.pipeline.file",
           "mmalint.catalog", "mmalint.report", "libcst", "rich.console")

_server: ForkServer | None = None
_server_env: dict[str, str] = {}
_lock = threading.Lock()


def run_cli(
    *args: str, stdin: bytes | None = None, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m mmalint ARGS` in a process of its own (`env`: its whole environment, default
    ours)."""
    command = [sys.executable, "-m", "mmalint", *args]
    environment = dict(os.environ if env is None else env)
    directory = str(cwd or REPO)
    with _lock:
        server = _forking_server(environment)
        if server is not None:
            encoding = locale.getpreferredencoding(False)
            try:
                returncode, out, err, timed_out = server.spawn(
                    {"module": "mmalint", "argv": list(args), "cwd": directory,
                     "env": environment, "cwd_on_path": True},
                    stdin, 300)
            except ServerGone as e:
                _stop()
                if e.started:  # it may have written files: running it again would not be this run
                    raise RuntimeError(f"the forked mmalint run was lost: {e}") from e
            else:
                stdout, stderr = _text(out, encoding), _text(err, encoding)
                if timed_out:
                    raise subprocess.TimeoutExpired(command, 300, stdout, stderr)
                return subprocess.CompletedProcess(command, returncode, stdout, stderr)
    return subprocess.run(
        command,
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        cwd=directory,
        timeout=300,
        env=env,
    )


def _text(data: bytes, encoding: str) -> str:
    """As `subprocess.run(text=True)` reads a stream: this locale's encoding, universal newlines."""
    return data.decode(encoding).replace("\r\n", "\n").replace("\r", "\n")


def _starts_the_same(a: Mapping[str, str], b: Mapping[str, str]) -> bool:
    """Whether a new interpreter would start alike in both environments."""
    def startup(env: Mapping[str, str]) -> dict[str, str]:
        return {k: v for k, v in env.items() if k.startswith(("PYTHON", "LC_")) or k == "LANG"}

    return startup(a) == startup(b)


def _forking_server(environment: Mapping[str, str]) -> ForkServer | None:
    global _server, _server_env
    if os.environ.get("MMALINT_TESTS_SUBPROCESS"):
        return None
    if _server is None:
        try:
            _server = ForkServer.local(PRELOAD, str(REPO))
        except ServerGone:
            return None
        _server_env = dict(os.environ)
        atexit.register(_stop)
    return _server if _starts_the_same(environment, _server_env) else None


def _stop() -> None:
    global _server
    if _server is not None:
        server, _server = _server, None
        server.close()
