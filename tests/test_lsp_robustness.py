"""The language server against a client that misbehaves, through a real `mmalint server`
subprocess spoken to in raw bytes: broken frames, a huge Content-Length, a slow document
beside a fast one, bad settings, a FIFO where a file should be.

Every wait has an upper bound, and a watchdog kills the server when a test's deadline
passes, so a server that hangs fails the test instead of hanging the run. No sleep is a
condition for passing: where time matters, the bound is one measured in the same session.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import _kernels as k
import pytest

pytest.importorskip("pygls", reason="the language server needs the lsp extra (pygls)")

Message = dict[str, Any]

DEADLINE = 240  # seconds for one test, the whole session included
WAIT = 30  # for a message that should come at once


def frame(message: object) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawServer:
    """`mmalint server` in a subprocess, with a reader thread collecting what it sends."""

    def __init__(self, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mmalint", "server"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
        )
        self.deadline = time.monotonic() + DEADLINE
        self.watchdog = threading.Timer(DEADLINE, self.proc.kill)
        self.watchdog.start()
        self.inbox: queue.Queue[Message | None] = queue.Queue()
        self.seen: list[Message] = []
        self.stderr = bytearray()
        self.next_id = 0
        self.lock = threading.Lock()
        self.answers: dict[str, Any] = {}  # results for the server's requests, by method (else null)
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        out = self.proc.stdout
        try:
            while True:
                length = None
                while (line := out.readline()) not in (b"\r\n", b""):
                    name, _, value = line.decode().partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                if not line or length is None:
                    break
                message = json.loads(out.read(length))
                if "method" in message and "id" in message:  # a request to the client
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": self.answers.get(message["method"])})
                self.inbox.put(message)
        finally:
            self.inbox.put(None)

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        while chunk := self.proc.stderr.read1(65536):
            self.stderr += chunk

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        with self.lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def send(self, message: Message) -> None:
        self.send_raw(frame(message))

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def expect(self, predicate: Callable[[Message], bool], timeout: float = WAIT) -> Message:
        """The first message (seen before or arriving within `timeout`) that `predicate` accepts."""
        for m in self.seen:
            if predicate(m):
                return m
        until = min(time.monotonic() + timeout, self.deadline)
        while (left := until - time.monotonic()) > 0:
            try:
                m = self.inbox.get(timeout=left)
            except queue.Empty:
                break
            if m is None:
                raise AssertionError(f"the server closed its stdout (status {self.proc.poll()}); stderr:\n{self.tail()}")
            self.seen.append(m)
            if predicate(m):
                return m
        raise AssertionError(f"no such message within {timeout:g} s; stderr:\n{self.tail()}")

    def response(self, msg_id: int, timeout: float = WAIT) -> Message:
        return self.expect(lambda m: m.get("id") == msg_id and "method" not in m, timeout)

    def tail(self) -> str:
        return self.stderr[-3000:].decode(errors="replace")

    def initialize(
        self, options: dict[str, Any] | None = None, root: Path | None = None, capabilities: dict[str, Any] | None = None
    ) -> Message:
        params: dict[str, Any] = {
            "processId": os.getpid(),
            "capabilities": capabilities or {},
            # The findings are those of jax 0.12, whatever jax is installed.
            "initializationOptions": {"debounce_ms": 0, "target_jax": "0.12", **(options or {})},
        }
        if root is not None:
            params["rootUri"] = root.as_uri()
        answer = self.response(self.request("initialize", params))
        self.notify("initialized", {})
        return answer

    def open(self, uri: str, text: str, version: int = 1) -> None:
        document = {"uri": uri, "languageId": "python", "version": version, "text": text}
        self.notify("textDocument/didOpen", {"textDocument": document})

    def change(self, uri: str, text: str, version: int) -> None:
        self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
        )

    def code_action(self, uri: str, only: list[str] | None = None) -> int:
        start = {"line": 0, "character": 0}
        context: dict[str, Any] = {"diagnostics": []}
        if only is not None:
            context["only"] = only
        return self.request(
            "textDocument/codeAction",
            {"textDocument": {"uri": uri}, "range": {"start": start, "end": start}, "context": context},
        )

    def published(self, uri: str) -> list[Message]:
        return [m["params"] for m in self.seen if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri]

    def messages(self, method: str) -> list[str]:
        return [m["params"]["message"] for m in self.seen if m.get("method") == method]

    def peak_memory_kib(self) -> int | None:
        """The server process's peak resident memory (Linux), or None where it cannot be read."""
        try:
            status = Path(f"/proc/{self.proc.pid}/status").read_text()
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        return None

    def close(self) -> int | None:
        """Shut the server down as an editor does; kill it if it does not go."""
        try:
            if self.proc.poll() is None:
                self.response(self.request("shutdown", None))
                self.notify("exit", None)
                return self.proc.wait(WAIT)
        finally:
            self.kill()
        return self.proc.returncode

    def kill(self) -> None:
        """End the server, however it is (a test's teardown)."""
        self.watchdog.cancel()
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawServer]:
    s = RawServer(tmp_path)
    try:
        yield s
    finally:
        s.kill()


def is_published(uri: str, version: int | None = None) -> Callable[[Message], bool]:
    def accept(m: Message) -> bool:
        if m.get("method") != "textDocument/publishDiagnostics" or m["params"]["uri"] != uri:
            return False
        return version is None or m["params"].get("version") == version

    return accept


def shown(m: Message) -> bool:
    """A window/showMessage of type Error (1) or Warning (2)."""
    return m.get("method") == "window/showMessage" and m["params"]["type"] in (1, 2)


def many_kernels(count: int) -> str:
    """A module with `count` buggy kernels: real input that takes the analysis a while."""
    head, body = k.PALLAS_SWAPPED.split("M, N, K = 128, 8, 64\n", 1)
    kernels = (
        body.replace("def kernel", f"def kernel{i}").replace("out = kernel(", f"out{i} = kernel{i}(")
        for i in range(count)
    )
    return head + "M, N, K = 128, 8, 64\n" + "".join(kernels)


def calibrate(server: RawServer, uri: str) -> tuple[str, int, float]:
    """Open a slow document and grow it until one lint of it takes seconds here: its text,
    its version and how long that lint took, a yardstick measured on this machine."""
    count, version = 16, 1
    server.open(uri, many_kernels(count), version)
    while True:
        started = time.monotonic()
        server.expect(is_published(uri, version), DEADLINE)
        took = time.monotonic() - started
        if took >= 3 or count >= 1024:
            break
        # The lint is about linear in the kernels: aim at once at 3.3 s (a first lint also
        # starts the child, so it may fall short), then grow by half until there.
        count, version = min(1024, max(int(count * 1.5), int(count * 3.3 / max(took, 0.01)))), version + 1
        server.change(uri, many_kernels(count), version)
    assert took >= 1, "the slow document is not slow enough to show anything"
    return many_kernels(count), version, took


# ---------------------------------------------------------------------- 1: malformed frames

NOTICE = json.dumps({"jsonrpc": "2.0", "method": "$/noop", "params": {}}).encode()
DEEP = b"[" * 100_000 + b"]" * 100_000
MALFORMED = {
    "misspelt header": b"Content-Lenght: 5\r\n\r\nhello",
    "length not a number": b"Content-Length: 5x\r\n\r\nhello",
    "no header at all": b"hello world\r\n\r\n",
    # 20 bytes fewer than the body: the rest of it reads as garbage.
    "length too short": b"Content-Length: %d\r\n\r\n%b" % (len(NOTICE) - 20, NOTICE),
    # 300 more than there are: the next frames would vanish into this body.
    "length too long": b"Content-Length: 300\r\n\r\n{}",
    "body not JSON": b"Content-Length: 5\r\n\r\nhello",
    "body not UTF-8": b"Content-Length: 4\r\n\r\n\xff\xfe\xfd\xfc",
    "JSON nested too deeply": b"Content-Length: %d\r\n\r\n%b" % (len(DEEP), DEEP),
    "JSON not JSON-RPC": frame([1, 2, 3]),
    "JSON-RPC without jsonrpc": frame({"id": 7, "method": "textDocument/codeAction", "params": {}}),
}


@pytest.mark.parametrize("garbage", MALFORMED.values(), ids=list(MALFORMED))
def test_a_malformed_frame_is_skipped_and_serving_goes_on(server: RawServer, tmp_path: Path, garbage: bytes) -> None:
    server.initialize()
    uri = (tmp_path / "k.py").as_uri()
    server.send_raw(garbage)
    server.open(uri, k.PALLAS_SWAPPED)
    params = server.expect(is_published(uri))["params"]
    assert [d["code"] for d in params["diagnostics"]] == ["MMA105"]
    assert any("unreadable input from the client" in m for m in server.messages("window/logMessage"))
    assert server.close() == 0


@pytest.mark.parametrize("garbage", MALFORMED.values(), ids=list(MALFORMED))
@pytest.mark.parametrize("chunk", [1 << 20, 7, 1], ids=["at once", "in 7-byte pieces", "byte by byte"])
def test_the_framer_finds_the_next_frame_however_the_bytes_arrive(garbage: bytes, chunk: int) -> None:
    from mmalint.lsp.transport import Framer, Message, Skipped

    if chunk == 1 and len(garbage) > 10_000:
        pytest.skip("covered in larger pieces")
    first, last = {"jsonrpc": "2.0", "id": 1, "result": None}, {"jsonrpc": "2.0", "method": "exit"}
    stream = frame(first) + garbage + frame(last)
    framer = Framer()
    events = [e for at in range(0, len(stream), chunk) for e in framer.feed(stream[at : at + chunk])]
    messages = [e.payload for e in events if isinstance(e, Message)]
    assert messages[0] == first and messages[-1] == last
    # Between them: a frame of JSON (the server judges it), or bytes skipped and reported.
    assert len(messages) == 3 or (len(messages) == 2 and any(isinstance(e, Skipped) for e in events))


def test_a_request_with_bad_params_gets_an_error_response(server: RawServer, tmp_path: Path) -> None:
    server.initialize()
    server.send({"jsonrpc": "2.0", "id": 99, "method": "textDocument/codeAction", "params": "not an object"})
    error = server.response(99)["error"]
    assert error["code"] in (-32600, -32602)
    uri = (tmp_path / "k.py").as_uri()
    server.open(uri, k.PALLAS_SWAPPED)
    server.expect(is_published(uri))
    assert server.close() == 0


# ---------------------------------------------------------------------- 2: message size


def test_a_huge_content_length_is_skipped_without_allocating_it(server: RawServer, tmp_path: Path) -> None:
    server.initialize()
    before = server.peak_memory_kib()
    # A header that claims a terabyte, then a megabyte of junk, then a real message.
    server.send_raw(b"Content-Length: 1000000000000\r\n\r\n" + b"x" * (1 << 20))
    uri = (tmp_path / "k.py").as_uri()
    server.open(uri, k.PALLAS_SWAPPED)
    server.expect(is_published(uri))
    assert any("over the 64 MiB limit" in m for m in server.messages("window/logMessage"))
    # A message honestly over the limit is drained, never held whole.
    filler = "x" * (65 << 20)
    server.send(
        {"jsonrpc": "2.0", "method": "textDocument/didOpen",
         "params": {"textDocument": {"uri": (tmp_path / "big.py").as_uri(), "languageId": "python", "version": 1, "text": filler}}}
    )
    del filler
    server.change(uri, k.PALLAS_CLEAN, 2)
    assert not server.expect(is_published(uri, 2))["params"]["diagnostics"]
    assert not server.published((tmp_path / "big.py").as_uri())
    after = server.peak_memory_kib()
    if before is not None and after is not None:
        assert after - before < 32 << 10, f"peak memory grew by {(after - before) >> 10} MiB"
    assert server.close() == 0


# ---------------------------------------------------------------------- 3: a slow document


def test_a_slow_document_neither_starves_others_nor_publishes_stale_versions(server: RawServer, tmp_path: Path) -> None:
    server.initialize()
    slow, fast = (tmp_path / "slow.py").as_uri(), (tmp_path / "fast.py").as_uri()
    text, version, took = calibrate(server, slow)
    before = len(server.published(slow))

    # A burst of edits to the slow document, then another document opens. The edits make it
    # twice as slow as the yardstick, so that its lint cannot end within `took` by chance (a
    # lint of the yardstick's own text, timed while the child was still warming up, can take
    # less than `took`: CI saw it published before the other document's first lint once).
    slower = many_kernels(2 * text.count("def kernel"))
    for edit in range(1, 11):
        server.change(slow, slower + "\n" * edit, version + edit)
    newest = version + 10
    started = time.monotonic()
    server.open(fast, k.PALLAS_SWAPPED)
    server.expect(is_published(fast), took)  # not behind the slow document's lints
    assert len(server.published(slow)) == before, "the slow document finished first"
    # Requests for the other document are answered meanwhile: quick fixes and fix-all.
    actions = server.response(server.code_action(fast), took)["result"]
    assert actions == []  # no diagnostic asked about and none at 1:1: nothing, but at once
    fix_all = server.response(server.code_action(fast, ["source.fixAll"]), took)["result"]
    assert [a["kind"] for a in fix_all] == ["source.fixAll.mmalint"]
    # And the slow document's own quick fixes do not wait for its lint: none for a text not
    # analysed yet, at once.
    assert server.response(server.code_action(slow), took)["result"] == []
    assert len(server.published(slow)) == before, "the slow document finished first"
    assert time.monotonic() - started < took

    # Then the slow document's newest version, and none of the versions in between.
    server.expect(is_published(slow, newest), DEADLINE)
    assert [p["version"] for p in server.published(slow)][before:] == [newest]
    assert server.close() == 0


def test_a_runaway_lint_is_stopped_at_its_time_limit(server: RawServer, tmp_path: Path) -> None:
    server.initialize()
    slow, fast = (tmp_path / "slow.py").as_uri(), (tmp_path / "fast.py").as_uri()
    _, _, took = calibrate(server, slow)
    before = len(server.published(slow))
    # A limit well under what the slow document takes: changing the settings lints it again.
    settings = {"debounce_ms": 0, "target_jax": "0.12", "lint_timeout_s": took / 4}
    server.notify("workspace/didChangeConfiguration", {"settings": {"mmalint": settings}})
    message = server.expect(shown, took)["params"]["message"]
    assert "stopped checking" in message and "slow.py" in message
    server.open(fast, "x = 1\n")  # a lint that fits in the limit is still published
    server.expect(is_published(fast))
    assert len(server.published(slow)) == before
    assert server.close() == 0


# ---------------------------------------------------------------------- 4: bad settings

BAD_OPTIONS = {
    "not a version": ({"target_jax": "abc"}, "target_jax"),
    "not a string": ({"target_jax": 12}, "target_jax"),
    "older than any known": ({"target_jax": "0.9"}, "0.9"),
    "debounce not a number": ({"debounce_ms": "soon"}, "debounce_ms"),
}


@pytest.mark.parametrize(("options", "named"), BAD_OPTIONS.values(), ids=list(BAD_OPTIONS))
def test_bad_initialization_options_are_shown_and_defaults_used(
    server: RawServer, tmp_path: Path, options: dict[str, Any], named: str
) -> None:
    server.initialize(options)
    uri = (tmp_path / "k.py").as_uri()
    server.open(uri, k.PALLAS_SWAPPED)
    assert server.expect(is_published(uri))["params"]["diagnostics"]
    assert named in server.expect(shown)["params"]["message"]
    assert server.close() == 0


BAD_CONFIG = {
    "pyproject target-jax not a version": ("pyproject.toml", '[tool.mmalint]\ntarget-jax = "abc"\n', "target-jax"),
    "pyproject target-jax older than any known": ("pyproject.toml", '[tool.mmalint]\ntarget-jax = "0.9"\n', "target-jax"),
    "mmalint.toml tool not a table": ("mmalint.toml", 'tool = "x"\n', "tool"),
    "pyproject not TOML": ("pyproject.toml", "[tool.mmalint\n", "invalid TOML"),
}


@pytest.mark.parametrize(("name", "content", "named"), BAD_CONFIG.values(), ids=list(BAD_CONFIG))
def test_a_bad_configuration_file_is_shown_and_defaults_used(
    server: RawServer, tmp_path: Path, name: str, content: str, named: str
) -> None:
    (tmp_path / name).write_text(content)
    server.initialize({"target_jax": None}, root=tmp_path)
    uri = (tmp_path / "k.py").as_uri()
    server.open(uri, k.PALLAS_SWAPPED)
    assert server.expect(is_published(uri))["params"]["diagnostics"]
    message = server.expect(shown)["params"]["message"]
    assert named in message and name in message
    assert server.close() == 0


def test_bad_workspace_settings_are_shown_and_linting_goes_on(server: RawServer, tmp_path: Path) -> None:
    server.initialize()
    uri = (tmp_path / "k.py").as_uri()
    server.open(uri, k.PALLAS_SWAPPED)
    server.expect(is_published(uri))
    server.notify("workspace/didChangeConfiguration", {"settings": {"mmalint": {"target_jax": "abc"}}})
    assert "target_jax" in server.expect(shown)["params"]["message"]
    server.expect(lambda m: is_published(uri)(m) and len(server.published(uri)) == 2)  # linted again
    assert server.close() == 0


# ---------------------------------------------------------------------- 5: a FIFO


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_never_read_and_the_server_keeps_answering(server: RawServer, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    server.initialize()
    other = (tmp_path / "k.py").as_uri()
    server.open(other, k.PALLAS_SWAPPED)
    server.expect(is_published(other))
    # Neither is open in the editor: the server would have to read the path.
    server.notify("textDocument/didSave", {"textDocument": {"uri": fifo.as_uri()}})
    assert server.response(server.code_action(fifo.as_uri(), ["source.fixAll"]), 10)["result"] == []
    assert server.response(server.code_action(other), 10)["result"] is not None
    logged = server.expect(lambda m: m.get("method") == "window/logMessage" and "FIFO" in m["params"]["message"], 10)
    assert "pipe.py" in logged["params"]["message"]
    assert not server.published(fifo.as_uri())
    assert server.close() == 0
