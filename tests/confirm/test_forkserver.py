"""The fork server that runs the jax tier's cases: each case a child of its own, alike, alone."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mmalint.confirm.forkserver import ForkServer, ServerGone
from mmalint.confirm.runner import _Confirmer, _DevicePool

PROBE = (
    "import json, os, sys\n"
    "import mmalint\n"
    "case = json.load(sys.stdin)\n"
    "json.seen = getattr(json, 'seen', 0) + 1  # state a case leaves in a module\n"
    "print('MMALINT-RECORD ' + json.dumps({'part': 'env', 'pid': os.getpid(), 'sid': os.getsid(0),"
    " 'seen': json.seen, 'case': case, 'path': sys.path, 'cwd': os.getcwd(),"
    " 'mmalint': os.path.realpath(mmalint.__file__), 'main': __name__,"
    " 'modules': sorted(m for m in sys.modules if m.split('.')[0] == 'jax')}))\n"
)


def _worker(tmp_path: Path, name: str, body: str) -> None:
    (tmp_path / f"{name}.py").write_text(body)


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fake workers' directory, a trusted import directory of the servers."""
    directory = tmp_path_factory.mktemp("workers")
    _worker(directory, "probe_worker", PROBE)
    return directory


@contextlib.contextmanager
def _serving(workers: Path) -> Iterator[ForkServer]:
    server = ForkServer(sys.executable, env={"JAX_PLATFORMS": "cpu"}, search_path=[str(workers)])
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="module")
def server(workers: Path) -> Iterator[ForkServer]:
    """One server for the tests that leave it as they found it (every case is a new child)."""
    with _serving(workers) as server:
        yield server


@pytest.fixture
def own_server(workers: Path) -> Iterator[ForkServer]:
    """A server for a test that ends it."""
    with _serving(workers) as server:
        yield server


def test_each_case_is_a_child_that_starts_from_the_same_state(server: ForkServer) -> None:
    first = server.run("probe_worker", {"n": 1}, 60).part("env")
    second = server.run("probe_worker", {"n": 2}, 60).part("env")
    assert first is not None and second is not None
    assert (first["case"], second["case"]) == ({"n": 1}, {"n": 2})
    assert first["seen"] == second["seen"] == 1, "a case saw what the last one left"
    assert len({first["pid"], second["pid"], server.process.pid}) == 3
    assert first["sid"] == first["pid"], "a case leads a session of its own"
    assert first["main"] == "__main__"
    assert server.process.poll() is None


def test_a_case_sees_only_its_own_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Started from a project, with the project on PYTHONPATH: neither is on a case's path."""
    _worker(tmp_path, "probe_worker", PROBE)
    project, on_path = tmp_path / "project", tmp_path / "on_pythonpath"
    project.mkdir()
    on_path.mkdir()
    monkeypatch.chdir(project)
    server = ForkServer(sys.executable, env={"PYTHONPATH": f"{on_path}{os.pathsep}{project}"},
                        search_path=[str(tmp_path)])
    try:
        record = server.run("probe_worker", {}, 60).part("env")
    finally:
        server.close()
    assert record is not None
    repo = Path(__file__).resolve().parents[2]
    assert Path(str(record["mmalint"])).resolve().parent == (repo / "mmalint").resolve()
    assert Path(str(record["cwd"])).resolve() != project.resolve()
    seen = {Path(p).resolve() for p in record["path"] if p}
    assert project.resolve() not in seen and on_path.resolve() not in seen


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
def test_jax_is_imported_once_and_pallas_is_not(server: ForkServer) -> None:
    record = server.run("probe_worker", {}, 60).part("env")
    assert record is not None
    assert "jax" in record["modules"] and "jax.experimental.mosaic.gpu" in record["modules"]
    assert not any(m.startswith("jax.experimental.pallas") for m in record["modules"])


def test_a_crash_is_the_cases_outcome_and_the_server_lives_on(server: ForkServer,
                                                               workers: Path) -> None:
    _worker(workers, "crash_worker", (
        "import os, sys\n"
        "print('MMALINT-RECORD {\"part\": \"env\", \"jax_version\": \"0.11.2\"}', flush=True)\n"
        "sys.stderr.write('CUDA_ERROR_ILLEGAL_INSTRUCTION\\n'); sys.stderr.flush()\n"
        "os.abort()\n"))
    _worker(workers, "exit_worker", "import sys\nsys.exit(3)\n")
    crashed = server.run("crash_worker", {}, 60)
    assert crashed.part("env") == {"part": "env", "jax_version": "0.11.2"}
    assert crashed.returncode == -6
    assert "signal 6" in crashed.failure() and "ILLEGAL_INSTRUCTION" in crashed.failure()
    assert server.run("exit_worker", {}, 60).returncode == 3
    assert server.run("probe_worker", {}, 60).part("env") is not None


def test_a_hang_is_killed_at_its_timeout_with_what_it_started(server: ForkServer,
                                                              workers: Path) -> None:
    _worker(workers, "hang_worker", (
        "import json, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print('MMALINT-RECORD ' + json.dumps({'part': 'env', 'child': child.pid}), flush=True)\n"
        "time.sleep(60)\n"))
    start = time.perf_counter()
    outcome = server.run("hang_worker", {}, 1.0)
    assert outcome.timed_out and time.perf_counter() - start < 10
    assert "timed out after 1 s" in outcome.failure()
    record = outcome.part("env")
    assert record is not None
    grandchild = Path(f"/proc/{record['child']}/stat")
    for _ in range(100):  # killed; reaped by init soon after
        if not grandchild.exists() or grandchild.read_text().split(") ")[1][0] == "Z":
            break
        time.sleep(0.05)
    else:
        pytest.fail("the timed-out case's own child is still running")
    assert server.run("probe_worker", {}, 60).part("env") is not None


def test_a_server_that_is_gone_says_so(own_server: ForkServer) -> None:
    own_server.process.kill()
    own_server.process.wait()
    with pytest.raises(ServerGone):
        own_server.run("probe_worker", {}, 60)


@pytest.mark.parametrize("python", ["/nonexistent/python", "/bin/true"])
def test_the_runner_runs_a_process_per_case_where_no_server_serves(python: str) -> None:
    """An interpreter that cannot start, or one that starts and serves nothing: each case
    then runs as a process of its own, as before there was a fork server."""
    confirmer = _Confirmer(timeout=30, python=python, gpu_backend="auto", seed=0,
                           devices=_DevicePool(None, 1))
    try:
        outcome = confirmer._jax_case({"code": "MMA101"})
        again = confirmer._jax_case({"code": "MMA101"})
    finally:
        confirmer.close()
    assert not confirmer._forking
    assert outcome.records == () == again.records
    if python == "/bin/true":
        assert outcome.returncode == 0
    else:
        assert "cannot start" in outcome.stderr_tail


def test_a_case_that_ends_its_output_but_not_itself_is_killed(server: ForkServer, workers: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Its output ends, so only the wait for its status can see it run on: that wait has the
    case's time limit, and a grace, too."""
    from mmalint.confirm import forkserver

    monkeypatch.setattr(forkserver, "_GRACE_S", 0.5)
    _worker(workers, "quiet_worker", "import os, time\nos.close(1)\nos.close(2)\ntime.sleep(60)\n")
    start = time.perf_counter()
    returncode, _, _, _ = server.spawn({"module": "quiet_worker"}, b"", 1.0)
    assert returncode == -9 and time.perf_counter() - start < 10


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError), open(f"/proc/{entry}/stat") as handle:
                if int(handle.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
    return found


def _await_grandchild(pid: int, limit: float = 30.0) -> None:
    """Until a child of `pid` (the forked case) has a child of its own (the case's), at most
    `limit` seconds: a loaded machine took over the 2 s a fixed sleep gave it. Without /proc,
    that fixed sleep."""
    if not os.path.isdir("/proc"):
        time.sleep(2)
        return
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if any(_children(child) for child in _children(pid)):
            return
        time.sleep(0.05)


def test_a_runner_that_goes_takes_its_case_with_it(own_server: ForkServer, workers: Path) -> None:
    """The runner's end closes in the middle of a case: the server kills the case's session
    and ends; this server is not used again."""
    import threading

    _worker(workers, "hang_worker", (
        "import json, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print('MMALINT-RECORD ' + json.dumps({'part': 'env', 'child': child.pid}), flush=True)\n"
        "time.sleep(60)\n"))
    raised: list[BaseException] = []

    def run() -> None:
        try:
            own_server.spawn({"module": "hang_worker"}, b"", 60)
        except BaseException as e:
            raised.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    _await_grandchild(own_server.process.pid)  # the case has started its own child
    own_server._channel.shutdown(2)
    thread.join(30)
    assert not thread.is_alive(), "the case outlived its runner"
    assert len(raised) == 1 and isinstance(raised[0], ServerGone) and raised[0].started
    assert own_server.process.wait(10) == 0
    with pytest.raises(ServerGone) as gone:
        own_server.spawn({"module": "probe_worker"}, b"", 60)
    assert not gone.value.started
