"""LSP messages over stdio, with a reader that a broken or hostile client cannot derail.

pygls's own stdio reader trusts every header: a `Content-Length` that lies leaves it reading
the wrong bytes for good (each body then swallows the next header), and a huge one makes it
allocate that much. The `Framer` here keeps a bounded buffer and resynchronizes on the next
`Content-Length:` header instead. It can tell a broken frame from a good one because a body
that is valid JSON never holds a raw `Content-Length: N` followed by CR LF: JSON strings
cannot hold a raw CR, and outside strings the words are not JSON. So such a header inside a
body proves that the frame's own header lied, and reading starts over there.

`serve_stdio` runs a pygls server on that reader: bytes are read and parsed on a thread, so a
large message never stalls the event loop; messages reach pygls one at a time, a bounded
number ahead. When the transport itself fails (stdin or stdout broken) it says so on stderr
and exits non-zero: it never sits deaf.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer

# Far above any real message (a didOpen of a 10 MB generated module is ~12 MB of JSON), far
# below what would hurt the machine. A bigger frame is reported and skipped unread.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_HEADER_BYTES = 8 * 1024
READ_BYTES = 64 * 1024
AHEAD = 64  # messages read but not yet handled: the reader waits beyond this

_MARKER = b"Content-Length:"
# A header that cannot occur inside a valid JSON body (see the module docstring).
_HEADER_IN_BODY = re.compile(rb"Content-Length:[ \t]*[0-9]{1,20}[ \t]*\r\n")
_HEADER_TAIL = 64  # longer than any match of _HEADER_IN_BODY
_FIELD = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*")

log = logging.getLogger("mmalint.lsp")


@dataclass(frozen=True)
class Message:
    """The parsed JSON body of one frame."""

    payload: Any


@dataclass(frozen=True)
class Skipped:
    """Bytes that were dropped, and why, for the log."""

    reason: str


Event = Message | Skipped


class Framer:
    """Bytes in, messages out. The buffer never holds more than one message and a header."""

    def __init__(self, max_message: int = MAX_MESSAGE_BYTES) -> None:
        self.max_message = max_message
        self._buffer = bytearray()
        self._length: int | None = None  # of the body being read; its header is consumed
        self._scanned = 0  # how much of that body was searched for a header already
        self._draining = 0  # bytes of an oversized body still to drop
        self._lost = False  # dropping bytes until the next header (reported once)

    def feed(self, data: bytes) -> list[Event]:
        self._buffer += data
        events: list[Event] = []
        while self._step(events):
            pass
        return events

    def _step(self, events: list[Event]) -> bool:
        """Consume what can be consumed; False when more bytes are needed."""
        if self._draining:
            return self._drain()
        if self._length is not None:
            return self._body(events, self._length)
        return self._header(events)

    def _header(self, events: list[Event]) -> bool:
        buffer = self._buffer
        if not buffer:
            return False
        end = buffer.find(b"\r\n\r\n", 0, MAX_HEADER_BYTES)
        if end < 0:
            if len(buffer) < MAX_HEADER_BYTES:
                return False
            return self._resync(events, f"no end of header within {MAX_HEADER_BYTES} bytes")
        length: int | None = None
        for line in bytes(buffer[:end]).split(b"\r\n"):
            field = _FIELD.fullmatch(line)
            if field is None:
                return self._resync(events, f"not a header line: {line[:80]!r}")
            if field[1].lower() == b"content-length":
                if length is not None or not field[2].isdigit() or len(field[2]) > 20:
                    return self._resync(events, f"bad Content-Length: {field[2][:80]!r}")
                length = int(field[2])
        if length is None:
            return self._resync(events, "a header without Content-Length")
        del buffer[: end + 4]
        self._lost = False
        if length > self.max_message:
            events.append(Skipped(f"a message of {length} bytes, over the {self.max_message >> 20} MiB limit"))
            self._draining = length
        else:
            self._length, self._scanned = length, 0
        return True

    def _body(self, events: list[Event], length: int) -> bool:
        buffer = self._buffer
        start = max(self._scanned - _HEADER_TAIL, 0)
        header = _HEADER_IN_BODY.search(buffer, start, min(len(buffer), length + _HEADER_TAIL))
        if header is not None and header.start() < length:
            events.append(Skipped(f"a header {header.start()} bytes into a body of {length}: the frame was short"))
            del buffer[: header.start()]
            self._length = None
            return True
        if len(buffer) < length:
            self._scanned = len(buffer)
            return False
        self._length = None
        try:
            payload = json.loads(bytes(buffer[:length]))
        except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, nested too deeply
            # The Content-Length may be off: look for the next header inside these bytes too.
            return self._resync(events, f"a body of {length} bytes that is not JSON ({exc})")
        del buffer[:length]
        events.append(Message(payload))
        return True

    def _drain(self) -> bool:
        """Drop an oversized body as it arrives, unless a header shows that it was a lie."""
        buffer = self._buffer
        header = _HEADER_IN_BODY.search(buffer, 0, min(len(buffer), self._draining + _HEADER_TAIL))
        if header is not None and header.start() < self._draining:
            del buffer[: header.start()]
            self._draining = 0
            return True
        if len(buffer) >= self._draining:
            del buffer[: self._draining]
            self._draining = 0
            return True
        drop = max(len(buffer) - _HEADER_TAIL, 0)  # keep what may begin a header
        del buffer[:drop]
        self._draining -= drop
        return False

    def _resync(self, events: list[Event], reason: str) -> bool:
        """Drop bytes up to the next `Content-Length:` after the first byte."""
        if not self._lost:
            events.append(Skipped(f"{reason}; skipping to the next Content-Length header"))
            self._lost = True
        buffer = self._buffer
        at = buffer.find(_MARKER, 1)
        if at < 0:
            drop = max(len(buffer) - (len(_MARKER) - 1), 0)  # keep what may begin one
            del buffer[:drop]
            return False
        del buffer[:at]
        return True


# ---------------------------------------------------------------------- serving


@dataclass(frozen=True)
class _Closed:
    """The client closed stdin (or reading it failed: `error`)."""

    error: str | None = None


def frame(payload: Any) -> bytes:
    body = json.dumps(payload).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


class _Writer:
    """stdout for pygls; a write that fails ends the session instead of raising into pygls."""

    def __init__(self, stdout: BinaryIO, failed: asyncio.Future[int]) -> None:
        self._stdout = stdout
        self._failed = failed

    def write(self, data: bytes) -> None:
        if self._failed.done():
            return
        try:
            self._stdout.write(data)
            self._stdout.flush()
        except (OSError, ValueError) as exc:  # ValueError: stdout already closed
            print(f"mmalint server: cannot write to the client: {exc}", file=sys.stderr, flush=True)
            self._failed.set_result(2)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._stdout.close()


def _read(fd: int, framer: Framer, deliver: Callable[[Event | _Closed], None]) -> None:
    """The reader thread: read, frame, parse, hand over; a closed loop ends it."""
    try:
        while True:
            try:
                chunk = os.read(fd, READ_BYTES)
            except OSError as exc:
                deliver(_Closed(f"cannot read stdin: {exc}"))
                return
            if not chunk:
                deliver(_Closed())
                return
            for event in framer.feed(chunk):
                deliver(event)
    except (RuntimeError, concurrent.futures.CancelledError):
        return  # the event loop is gone: the server is exiting


def _request_id(payload: Any) -> int | str | None:
    if isinstance(payload, dict) and "method" in payload and isinstance(payload.get("id"), int | str):
        msg_id: int | str = payload["id"]
        return msg_id
    return None


class _Session:
    def __init__(self, server: LanguageServer, writer: _Writer) -> None:
        self.server = server
        self.writer = writer

    def report(self, message: str) -> None:
        message = f"mmalint: unreadable input from the client: {message}"
        log.warning("%s", message)
        try:
            self.server.window_log_message(lsp.LogMessageParams(type=lsp.MessageType.Warning, message=message))
        except Exception:  # reporting must never take the reader down
            log.exception("cannot report to the client")

    def refuse(self, msg_id: int | str | None, error: JsonRpcException, message: str) -> None:
        """Report a message pygls cannot take; a request still gets its error response."""
        self.report(message)
        if msg_id is not None:
            response = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": error.code, "message": message}}
            self.writer.write(frame(response))

    def handle(self, event: Event) -> None:
        if isinstance(event, Skipped):
            self.report(event.reason)
            return
        payload, protocol = event.payload, self.server.protocol
        msg_id = _request_id(payload)
        if not isinstance(payload, dict) or payload.get("jsonrpc") != "2.0":
            self.refuse(msg_id, JsonRpcInvalidRequest(), f"not a JSON-RPC 2.0 message: {str(payload)[:200]}")
            return
        try:
            message = protocol.structure_message(payload)
        except JsonRpcException as exc:
            self.refuse(msg_id, exc, f"malformed {payload.get('method', 'message')!r}: {exc.__cause__ or exc}")
            return
        except Exception as exc:
            self.refuse(msg_id, JsonRpcInvalidRequest(), f"malformed {payload.get('method', 'message')!r}: {exc}")
            return
        try:
            protocol.handle_message(message)
        except Exception:  # pygls answers requests itself; anything else is ours to log
            log.exception("cannot handle %r", payload.get("method"))


async def _serve(
    server: LanguageServer, stdin_fd: int, stdout: BinaryIO, shut_down: threading.Event, cleanup: Callable[[], None]
) -> int:
    loop = asyncio.get_running_loop()
    ended: asyncio.Future[int] = loop.create_future()
    writer = _Writer(stdout, ended)
    server.protocol.set_writer(writer)
    session = _Session(server, writer)
    ahead = threading.BoundedSemaphore(AHEAD)

    def on_loop(event: Event | _Closed) -> None:
        ahead.release()
        if isinstance(event, _Closed):
            if event.error is not None:
                print(f"mmalint server: {event.error}", file=sys.stderr, flush=True)
            if not ended.done():
                ended.set_result(2 if event.error else 0 if shut_down.is_set() else 1)
            return
        session.handle(event)

    def deliver(event: Event | _Closed) -> None:
        ahead.acquire()
        loop.call_soon_threadsafe(on_loop, event)

    threading.Thread(target=_read, args=(stdin_fd, Framer(), deliver), name="mmalint-stdin", daemon=True).start()
    try:
        return await ended
    finally:
        cleanup()


def serve_stdio(server: LanguageServer, shut_down: threading.Event, cleanup: Callable[[], None]) -> int:
    """Serve on stdin/stdout until `exit` or the end of input; the exit status: LSP's 0 (after
    `shutdown`, which the server marks in `shut_down`) or 1, and 2 if the transport broke.
    `cleanup` runs on the event loop before it closes."""
    try:
        return asyncio.run(_serve(server, sys.stdin.buffer.fileno(), sys.stdout.buffer, shut_down, cleanup))
    except SystemExit as exc:  # pygls's `exit` handler
        return exc.code if isinstance(exc.code, int) else 1
