"""How long `mmalint server` takes to publish a file's diagnostics again after a one-line edit.

    python benchmarks/lsp_latency.py FILE [--edits 20] [--burst 10] [--debounce-ms 0]

Starts the server over stdio in FILE's project (its directory's nearest pyproject.toml or .git),
opens FILE, waits for its first diagnostics, then:
- `--edits` one-line edits spread over the file (a comment appended to a line, so the findings
  do not change), one at a time: the time from each `didChange` to the `publishDiagnostics` of
  that version;
- a burst of `--burst` edits 20 ms apart: the time from the last edit to its publication (what
  piles up when superseded work is not cancelled), and how many versions were published;
- a code action request right after an edit: its answer time and how many actions came back.
Prints one JSON object (milliseconds; p50, p90, max). Needs nothing but mmalint installed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from queue import Empty, Queue
from typing import Any


class Client:
    """A minimal LSP client over the server's stdin/stdout."""

    def __init__(self, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mmalint", "server"], cwd=cwd,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        self.messages: Queue[dict[str, Any]] = Queue()
        self._id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if length is None:
                continue
            self.messages.put(json.loads(out.read(length)))

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def request(self, method: str, params: Any) -> int:
        self._id += 1
        self.send({"id": self._id, "method": method, "params": params})
        return self._id

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def wait(self, match: Any, timeout: float = 120.0) -> dict[str, Any]:
        end = time.monotonic() + timeout
        while True:
            try:
                message = self.messages.get(timeout=max(end - time.monotonic(), 0.001))
            except Empty:
                raise TimeoutError("no answer from the server") from None
            if "id" in message and "method" in message:  # a request of the server's: answer it
                self.send({"id": message["id"], "result": None})
                continue
            if match(message):
                return message

    def published(self, uri: str, version: int) -> dict[str, Any]:
        return self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                         and m["params"]["uri"] == uri and m["params"].get("version") == version)

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except Exception:  # a benchmark's teardown: whatever went wrong, the child goes
            self.proc.kill()


def _root(path: Path) -> Path:
    for parent in path.parents:
        if (parent / "pyproject.toml").exists() or (parent / ".git").exists():
            return parent
    return path.parent


def _stats(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    return {"p50": round(statistics.median(ordered), 1),
            "p90": round(ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], 1),
            "max": round(ordered[-1], 1), "n": len(ordered)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("--edits", type=int, default=20)
    parser.add_argument("--burst", type=int, default=10)
    parser.add_argument("--debounce-ms", type=float, default=0)
    args = parser.parse_args()
    path = Path(args.file).resolve()
    root = _root(path)
    text = path.read_text()
    lines = text.split("\n")
    uri = path.as_uri()
    client = Client(root)
    try:
        client.request("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {},
            "initializationOptions": {"debounce_ms": args.debounce_ms},
        })
        client.wait(lambda m: m.get("id") == 1)
        client.notify("initialized", {})
        start = time.perf_counter()
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": text}})
        first = client.published(uri, 1)
        open_ms = (time.perf_counter() - start) * 1000
        findings = len(first["params"]["diagnostics"])
        version = 1
        # Lines that end a statement outside strings: a trailing comment changes nothing.
        candidates = [i for i, line in enumerate(lines)
                      if line.strip() and not line.rstrip().endswith(("\\", ",", "(", "[", "{", '"""', "'''"))
                      and "#" not in line and '"' not in line and "'" not in line]
        step = max(len(candidates) // max(args.edits, 1), 1)
        picked = candidates[::step][: args.edits]

        def edit(row: int, mark: str) -> None:
            nonlocal version
            version += 1
            end = len(lines[row])
            client.notify("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": {"line": row, "character": end},
                                              "end": {"line": row, "character": end}},
                                    "text": f"  # {mark}"}],
            })
            lines[row] += f"  # {mark}"

        one: list[float] = []
        for n, row in enumerate(picked):
            start = time.perf_counter()
            edit(row, f"e{n}")
            got = client.published(uri, version)
            one.append((time.perf_counter() - start) * 1000)
            if len(got["params"]["diagnostics"]) != findings:
                print(f"warning: {len(got['params']['diagnostics'])} findings after edit {n}, not {findings}",
                      file=sys.stderr)
        # A burst: edits 20 ms apart, then the time from the last to its publication.
        for n in range(args.burst):
            edit(picked[n % len(picked)], f"b{n}")
            if n < args.burst - 1:
                time.sleep(0.02)
        start = time.perf_counter()
        client.published(uri, version)
        burst_ms = (time.perf_counter() - start) * 1000
        def code_action() -> tuple[float, int]:
            start = time.perf_counter()
            rid = client.request("textDocument/codeAction", {
                "textDocument": {"uri": uri},
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": len(lines), "character": 0}},
                "context": {"diagnostics": []},
            })
            answer = client.wait(lambda m: m.get("id") == rid)
            return (time.perf_counter() - start) * 1000, len(answer.get("result") or [])

        # A code action with nothing running, then one right after an edit, before its lint ends.
        idle_ms, _ = code_action()
        edit(picked[0], "c")
        action_ms, actions = code_action()
        print(json.dumps({
            "file": str(path), "lines": len(lines), "findings": findings,
            "debounce_ms": args.debounce_ms, "open_ms": round(open_ms, 1),
            "one_line_edit_ms": _stats(one),
            # Answered from the last lint (the edit could not change it) or linted afresh.
            "one_line_edits_under_200_ms": sum(ms < 200 for ms in one),
            "burst": {"edits": args.burst, "last_edit_to_publish_ms": round(burst_ms, 1)},
            "code_action_idle_ms": round(idle_ms, 1),
            "code_action_after_edit": {"ms": round(action_ms, 1), "actions": actions},
        }, indent=1))
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
