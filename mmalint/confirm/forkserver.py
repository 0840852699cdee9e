"""A worker process that has imported jax once, and forks one child per case.

A jax-tier case spends most of its time importing jax (1.2-1.7 s measured on this project's
2-core machine, against 0.1-0.5 s building both parts). A fork server pays that once per
runner thread: it starts isolated exactly as `process.run_worker` starts a worker (`python
-I`, an empty working directory, an import directory holding only this package), imports jax
and Mosaic GPU (`PRELOAD`), and forks a child for each case, which runs the worker module as
`python -m` would. Every case still starts from the same state (a copy of the server, which
never runs a case itself) and runs in a session of its own: a crash, a hang or a timeout is
that case's outcome, and killing it kills nothing else.

The forking happens before jax has chosen a backend (importing jax does not start one), the
state that `os.fork` is safe from: jax warns about a fork only once a backend is up.

Protocol, over a Unix socket (one message a packet) that is the server's standard input: the
runner sends a spec (JSON: the module, and where the runner sets them the arguments, working
directory and environment) with the child's standard input, output and error as three
descriptors (`socket.send_fds`); the server answers the child's pid, then, once the child has ended, its
exit status (as `subprocess.Popen.returncode` gives it). An empty message, or the runner's end
closed, ends the server.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import select
import selectors
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from typing import Any

from mmalint.confirm.judge import WorkerOutcome
from mmalint.confirm.process import collected, isolated_workspace, worker_command, worker_env
from mmalint.runtime import end_process, exit_code

# What every case of the jax tier imports first (`families/*/kernels.import_apis`). Not
# Pallas: a case that does not use it must not find it imported.
PRELOAD = ("numpy", "jax", "jax.numpy", "jax.experimental.mosaic.gpu")

_PID = struct.Struct("<q")
_STATUS = struct.Struct("<qi")
_MESSAGE_MAX = 1 << 20  # a case's spec: its module, and its environment where it has one
# How long the output of a child killed at its timeout may take to end.
_GRACE_S = 10.0
# How long a server may take to fork a child (the first waits for the imports of `PRELOAD`).
_START_S = 600.0


# ---------------------------------------------------------------------- the server (in the worker)


def serve(preload: Sequence[str] = PRELOAD) -> int:
    channel = socket.socket(fileno=os.dup(0))
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(devnull, fd)
    os.close(devnull)
    for name in preload:
        with contextlib.suppress(Exception):  # each child imports it again and says why not
            importlib.import_module(name)
    while True:
        try:
            message, fds, _flags, _address = socket.recv_fds(channel, _MESSAGE_MAX, 3)
        except OSError:
            return 0
        if not message or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            return 0
        for stream in (sys.stdout, sys.stderr):  # nothing of the server's in a child's output
            with contextlib.suppress(Exception):
                stream.flush()
        pid = os.fork()
        if pid == 0:
            _child(json.loads(message), fds, channel)
        for fd in fds:
            os.close(fd)
        channel.sendall(_PID.pack(pid))
        status = _wait(pid, channel)
        if status is None:  # the runner is gone: so is its case, and this server
            return 0
        channel.sendall(_STATUS.pack(pid, os.waitstatus_to_exitcode(status)))


def _wait(pid: int, channel: socket.socket) -> int | None:
    """The child's wait status; None, the child killed, when the runner's end closes first."""
    try:
        watch = os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux 5.3+: the runner's end goes unwatched
        return os.waitpid(pid, 0)[1]
    try:
        ready, _, _ = select.select([watch, channel.fileno()], [], [])
        if watch not in ready and not channel.recv(1, socket.MSG_PEEK):
            _kill(pid)
            os.waitpid(pid, 0)
            return None
        return os.waitpid(pid, 0)[1]  # (a message out of turn waits for the case to end)
    finally:
        os.close(watch)


def _kill(pid: int) -> None:
    """Kill a child and its session (or the child alone, before it has made one)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    except PermissionError:
        pass


def _child(spec: dict[str, Any], fds: list[int], channel: socket.socket) -> None:
    """Run `spec["module"]` as `__main__` on the descriptors given, with the arguments, working
    directory and environment the spec gives (else the server's); never returns."""
    code = 1
    try:
        channel.close()
        os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        if spec.get("cwd") is not None:
            os.chdir(spec["cwd"])
        if spec.get("env") is not None:
            os.environ.clear()
            os.environ.update(spec["env"])
        if spec.get("argv") is not None:
            sys.argv = [sys.argv[0], *spec["argv"]]
        if spec.get("cwd_on_path"):  # as `python -m` puts it first (for `-c`'s "")
            if sys.path and sys.path[0] == "":
                sys.path[0] = os.getcwd()
            else:
                sys.path.insert(0, os.getcwd())
        import runpy

        try:
            runpy.run_module(spec["module"], run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as e:
            code = exit_code(e)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        end_process(code)


# ---------------------------------------------------------------------- the runner's side


class ServerGone(Exception):
    """The fork server could not be started, or ended, or fell out of step: run the case in a
    process of its own. `started`: whether the case's child had begun (it may have done part
    of its work)."""

    def __init__(self, message: str, *, started: bool = False) -> None:
        super().__init__(message)
        self.started = started


class ForkServer:
    """One fork server (and the workspace it runs in); used by one thread at a time."""

    def __init__(self, python: str, *, env: Mapping[str, str],
                 search_path: Sequence[str] = ()) -> None:
        """A server for the jax tier: isolated as `process.run_worker` isolates a worker."""
        self._stack = ExitStack()
        lib, cwd = self._stack.enter_context(isolated_workspace())
        self._start(worker_command(python, "mmalint.confirm.forkserver", [str(lib), *search_path]),
                    worker_env(env), cwd, python)

    @classmethod
    def local(cls, preload: Sequence[str], cwd: str) -> ForkServer:
        """A server in this interpreter and environment, not isolated, that has imported
        `preload` (mmalint's own tests run the command line in its children)."""
        server = cls.__new__(cls)
        server._stack = ExitStack()
        code = "import sys; from mmalint.confirm.forkserver import serve; sys.exit(serve(sys.argv[1:]))"
        server._start([sys.executable, "-c", code, *preload], dict(os.environ), cwd, sys.executable)
        return server

    def _start(self, command: list[str], env: dict[str, str], cwd: str | os.PathLike[str],
               python: str) -> None:
        # One message a packet: a spec (with an environment) is read whole.
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.process = subprocess.Popen(
                command, stdin=theirs.fileno(), stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, env=env, cwd=cwd, start_new_session=True,
            )
        except OSError as e:
            ours.close()
            self._stack.close()
            raise ServerGone(f"cannot start {python}: {e}") from e
        finally:
            theirs.close()
        self._channel = ours
        self._broken = False

    def run(self, module: str, case: Mapping[str, Any], timeout: float) -> WorkerOutcome:
        """Run `module` with `case` on its standard input in a fresh child: a
        `judge.WorkerOutcome`. Raises `ServerGone` when the server is not there to fork it."""
        returncode, stdout, stderr, timed_out = self.spawn(
            {"module": module}, json.dumps(case).encode(), timeout)
        return collected(stdout.decode(errors="replace"), stderr.decode(errors="replace"),
                         returncode, timed_out, timeout)

    def spawn(self, spec: Mapping[str, Any], stdin: bytes | None,
              timeout: float) -> tuple[int, bytes, bytes, bool]:
        """Run a child as `spec` says (`_child`), `stdin` written to it (None: it reads this
        process's standard input): its (exit status, output, error, whether it timed out).
        Whatever goes wrong after the child is asked for leaves this server unused after."""
        if self._broken:
            raise ServerGone("the fork server is out of step")
        stdin_r, stdin_w = os.pipe() if stdin is not None else (os.dup(0), -1)
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        theirs, ours = [stdin_r, stdout_w, stderr_w], [stdin_w, stdout_r, stderr_r]
        try:
            socket.send_fds(self._channel, [json.dumps(spec).encode()], theirs)
        except OSError as e:
            self._broken = True
            for fd in ours:
                if fd >= 0:
                    os.close(fd)
            raise ServerGone(f"the fork server is gone: {e}") from e
        finally:
            for fd in theirs:
                os.close(fd)
        pid: int | None = None
        try:
            try:
                pid = _PID.unpack(self._receive(_PID.size, _START_S))[0]
            except TimeoutError as e:
                raise ServerGone(f"the fork server did not fork within {_START_S:.0f} s") from e
            deadline = time.monotonic() + timeout
            streams, ours = ours, []  # `_communicate` closes them, whatever happens
            stdout, stderr, timed_out = _communicate(pid, streams, stdin or b"", timeout)
            returncode = self._status(pid, deadline)
        except BaseException as e:
            self._broken = True
            for fd in ours:
                if fd >= 0:
                    os.close(fd)
            if pid is not None:
                _kill(pid)
            if isinstance(e, ServerGone):
                e.started = pid is not None
            raise
        return returncode, stdout, stderr, timed_out

    def _status(self, pid: int, deadline: float) -> int:
        """The child's exit status, once its output has ended: killed if it does not end by
        `deadline` (and a grace), as a child whose output ends before it does may not."""
        wait = max(deadline - time.monotonic(), 0.0) + _GRACE_S
        try:
            data = self._receive(_STATUS.size, wait)
        except TimeoutError:
            _kill(pid)
            data = self._receive(_STATUS.size, _GRACE_S)
        got_pid, returncode = _STATUS.unpack(data)
        if got_pid != pid:
            raise ServerGone("the fork server is out of step")
        return int(returncode)

    def _receive(self, size: int, timeout: float) -> bytes:
        """One message of `size` bytes; TimeoutError after `timeout` seconds."""
        self._channel.settimeout(timeout)
        try:
            data = self._channel.recv(size)
        except TimeoutError:
            raise
        except OSError as e:
            raise ServerGone(f"the fork server is gone: {e}") from e
        if len(data) != size:
            raise ServerGone(f"the fork server ended (status {self.process.poll()})")
        return data

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._channel.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            _kill(self.process.pid)
            self.process.wait()
        self._stack.close()


def _communicate(pid: int, fds: list[int], data: bytes,
                 timeout: float) -> tuple[bytes, bytes, bool]:
    """Write `data` to the child, read its output and error to their ends (or until `timeout`,
    then kill its session and read what is left); closes the three descriptors (-1: none)."""
    stdin_w, stdout_r, stderr_r = fds
    opened = {fd for fd in fds if fd >= 0}

    def close(fd: int) -> None:
        opened.discard(fd)
        os.close(fd)

    chunks: dict[int, list[bytes]] = {stdout_r: [], stderr_r: []}
    timed_out = False
    view = memoryview(data)
    deadline = time.monotonic() + timeout
    try:
        with selectors.DefaultSelector() as selector:
            for fd in opened:
                os.set_blocking(fd, False)
            if stdin_w >= 0:
                if view:
                    selector.register(stdin_w, selectors.EVENT_WRITE)
                else:
                    close(stdin_w)
            for fd in (stdout_r, stderr_r):
                selector.register(fd, selectors.EVENT_READ)
            while selector.get_map():
                left = deadline - time.monotonic()
                if left <= 0 and not timed_out:
                    timed_out = True
                    deadline += _GRACE_S
                    left = _GRACE_S
                    _kill(pid)
                elif left <= 0:  # killed, and something outside its session holds the pipes
                    break
                for key, _events in selector.select(left):
                    fd = key.fd
                    if fd == stdin_w:
                        try:
                            view = view[os.write(fd, view[:65536]):]
                        except BrokenPipeError:
                            view = view[len(view):]
                        if not view:
                            selector.unregister(fd)
                            close(fd)
                        continue
                    chunk = os.read(fd, 65536)
                    if chunk:
                        chunks[fd].append(chunk)
                    else:
                        selector.unregister(fd)
                        close(fd)
    finally:
        for fd in list(opened):
            close(fd)
    return b"".join(chunks[stdout_r]), b"".join(chunks[stderr_r]), timed_out


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1:] or PRELOAD))
