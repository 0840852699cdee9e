"""The language server's lints run here, in child processes that run `main()`.

Why processes, not threads: a lint that a newer version of its document supersedes is told
to stop, and is killed if it does not within `DRAIN_S` (`STARTING_S` more for a child that may
still be starting; a thread could only be abandoned, and
would go on holding a core and the GIL against the event loop and every other document's
lint); a lint that runs away is stopped at its time
limit; a crash in the parser or the analysis (a segfault, a MemoryError, a RecursionError
deep in libcst) costs one child, not the editor session. Disk is read here too (the
document when it is not open in the editor, the configuration), so a file that blocks on
read (a FIFO) or a slow network disk can only ever stall a child, which the server can kill.

A child serves one job at a time: a length-prefixed pickle in (a `Job`), one out (an
`Outcome`). Pickle is safe here: both ends are this module, on pipes only they hold.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import pickle
import signal
import struct
import sys
import threading
import time
import weakref
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO, Literal

from mmalint import config
from mmalint.analysis import budget, by_root, reads
from mmalint.analysis.budget import Superseded
from mmalint.catalog import Catalog, load_catalog
from mmalint.config import resolve_target_jax
from mmalint.diagnostics import Edit
from mmalint.engine import FileReport, evaluations
from mmalint.fixes.fixer import fix_text
from mmalint.inputs import UnreadableInput, read_regular
from mmalint.lines import keep_regions
from mmalint.lsp import rerun
from mmalint.lsp.incremental import Memo, make_memo, reuse, text_digest
from mmalint.pipeline.cache import installation
from mmalint.pipeline.file import lint_text, program_of
from mmalint.pipeline.options import LintOptions
from mmalint.pipeline.text import InputError
from mmalint.runtime import tune_gc
from mmalint.settings import Settings
from mmalint.source_io import decode
from mmalint.suppress import noqa_edit
from mmalint.tree import tree_spec

_SIZE = struct.Struct(">Q")


@dataclass(frozen=True)
class Job:
    kind: Literal["lint", "fix"]
    filename: str
    text: str | None  # None: read the file (only a regular file, and only up to a cap)
    target_jax: str | None  # a catalog version that overrides the configuration
    options: LintOptions
    select: tuple[str, ...] | None = None  # override the configuration's, like --select
    ignore: tuple[str, ...] | None = None
    config_path: str | None = None  # an explicit configuration file, like --config
    unsafe: bool = False  # a fix job applies unsafe fixes too
    # The editor's other open documents (filename, text): the checked tree reads them, not the
    # disk, so a caller's unsaved edit counts in the kernel module's findings.
    overlays: tuple[tuple[str, str], ...] = ()
    # The document's last lint, which this one reuses if the edit since cannot change it
    # (`incremental.py`): kept by the server with the document, so that any child can use it.
    memo: Memo | None = None


@dataclass(frozen=True)
class Linted:
    text: str
    report: FileReport
    notes: tuple[str, ...]  # about the configuration, for the user
    # The text of each other file a finding is in (an MMA call the document's code reaches in
    # a module of the tree): where the server publishes it, positions are counted in it.
    others: tuple[tuple[str, str], ...] = ()
    # Per diagnostic of the report, the edit of its "disable for this line" action (None: no
    # such action): made here, off the server's event loop, where the text is tokenized once.
    noqa: tuple[Edit | None, ...] = ()
    memo: Memo | None = None  # for the next lint of the document (None: it cannot reuse this one)
    reused: bool = False  # this result is the last one's, the edit since could not change it
    rerun: bool = False  # made by running again only the root the edit since was in (`rerun.py`)


@dataclass(frozen=True)
class Fixed:
    text: str
    fixed_text: str
    fixed_count: int
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Unreadable:
    reason: str


@dataclass(frozen=True)
class Cancelled:
    """The server superseded the job (a newer text) and said so: the child stopped it and lives on."""


@dataclass(frozen=True)
class Failed:
    error: str  # an exception the analysis raised, for the log


Outcome = Linted | Fixed | Unreadable | Cancelled | Failed


class WorkerDied(Exception):
    """The child process ended in the middle of a job (a crash, or killed from outside)."""


# ---------------------------------------------------------------------- the child


def _settings_for(job: Job, catalog: Catalog) -> tuple[Settings, tuple[str, ...]]:
    """The settings `mmalint check` would use for the file, and what to tell the user about them."""
    target_jax = job.target_jax
    default_jax = resolve_target_jax(target_jax, catalog)
    path = Path(job.filename)
    overrides = config.Overrides(select=job.select, ignore=job.ignore, target_jax=target_jax)
    explicit = None if job.config_path is None else Path(job.config_path)
    untitled = not path.is_absolute()  # an untitled buffer: only an explicit configuration applies
    if untitled and explicit is None and job.select is None and job.ignore is None:
        return Settings(target_jax=default_jax), ()
    try:
        # A fresh resolver each time: an edited configuration counts from the next lint on.
        resolver = config.Resolver(
            overrides, default_jax, config_path=explicit, isolated=untitled and explicit is None, catalog=catalog
        )
        settings = resolver.for_path(path.absolute())
    except Exception as exc:  # a broken configuration must not stop the diagnostics
        return Settings(target_jax=default_jax), (f"mmalint: configuration: {exc}; using the defaults",)
    return settings, tuple(f"mmalint: {warning}" for warning in resolver.warnings)


def run_job(job: Job) -> Outcome:
    try:
        return _run_job(job)
    except Superseded:
        return Cancelled()


def _run_job(job: Job) -> Outcome:
    text = job.text
    if text is None:
        try:
            text = decode(read_regular(job.filename)).text
        except (UnreadableInput, InputError) as exc:
            return Unreadable(str(exc))
    catalog = load_catalog()
    settings, notes = _settings_for(job, catalog)
    options = job.options
    overlays: tuple[tuple[str, str], ...] = ()
    if Path(job.filename).is_absolute():
        # The document in its tree: the editor's buffers over the disk, this document checked.
        overlays = ((job.filename, text), *job.overlays)
        # Observed: what the lint read of the tree, so that the next one can tell it is unchanged.
        options = replace(options, program=tree_spec(settings, (job.filename,), overlays, absolute=True),
                          observe=job.kind == "lint")
    try:
        if job.kind == "fix":
            result = fix_text(job.filename, text, settings, options, job.unsafe, catalog)
            return Fixed(text, result.text, result.fixed_count, notes)
        key = _memo_key(job, settings)
        report: FileReport | None = None
        if job.memo is not None:
            found = reuse(job.memo, key, text)
            if found is not None:
                rerun.follow(job.filename, job.memo, found.memo)
                return Linted(text, found.report, notes, found.others, found.noqa, found.memo, reused=True)
            # An edit inside one root: that root alone runs again, in the lint this child kept.
            try:
                report = rerun.rerun(job.memo, key, job.filename, text, settings, options, catalog)
            except Exception:  # a full lint answers instead (the kept lint is gone)
                report = None
        runs = None
        if report is not None:
            recorded, slack = rerun.kept_reads(job.filename)
        else:
            program = program_of(options)
            with reads.recording() as recorded, by_root.recording() as runs, evaluations() as evaluated:
                report = lint_text(job.filename, text, settings, options, catalog, program)
        if recorded.sources and recorded.sources[0].text is text and recorded.sources[0].regions is not None:
            # Its statements' rows, for the noqa edits (fix verification's texts came after it).
            keep_regions(text, recorded.sources[0].regions)
        noqa = tuple(
            noqa_edit(text, d) if d.code not in (None, "MMA001") and d.filename == job.filename else None
            for d in report.diagnostics
        )
        others = _other_texts(job, report)
        # A re-run found the files on disk as the last lint read them: their record stands.
        memo = make_memo(key, text, recorded, report, others, noqa, (os.path.realpath(p) for p, _ in overlays),
                         checked=job.memo if runs is None else None)
        if runs is not None:
            rerun.keep(job.filename, memo, runs, recorded, program, evaluated)
        else:
            if memo is not None:
                memo = replace(memo, slack=min(memo.slack, slack))
            rerun.noted(job.filename, memo)
        return Linted(text, replace(report, observed=None), notes, others, noqa, memo, rerun=runs is None)
    except Exception as exc:  # the server logs it; this child stays usable
        return Failed(f"{type(exc).__name__}: {exc}")


def _memo_key(job: Job, settings: Settings) -> tuple[object, ...]:
    """All that a lint's result depends on besides the document's text and the disk: mmalint
    itself too (a child started after an upgrade or an edit of its code reuses nothing)."""
    others = tuple((name, text_digest(text)) for name, text in job.overlays)
    return (_installation(), job.filename, settings, job.target_jax, job.options, job.select, job.ignore,
            job.config_path, others)


@functools.cache
def _installation() -> str:
    """The code this child runs: hashed when it starts (`main`), not when a job asks."""
    return installation()


def _other_texts(job: Job, report: FileReport) -> tuple[tuple[str, str], ...]:
    buffers = dict(job.overlays)
    found: dict[str, str] = {}
    for d in report.diagnostics:
        name = d.filename
        if name == job.filename or name in found:
            continue
        text = buffers.get(name)
        if text is None:
            try:
                text = decode(read_regular(name)).text
            except (UnreadableInput, InputError, OSError):
                continue
        found[name] = text
    return tuple(found.items())


# The server's word that a job is superseded: the job's number (the how-many-th job of this
# child), written on a pipe of its own, then this signal, whose default action is to ignore it:
# one that comes before the child has installed its handler (it is still starting) does not end
# it, and the number waits in the pipe for the job to begin. The job stops at its next look at
# its budget (`budget.Superseded`); the child keeps what it loaded, unlike a kill, which costs a
# new child (a second of imports) at the next edit. A number, not the signal alone, says which
# job: a word that comes after its job has answered (the two crossed) must not stop the next.
CANCEL_SIGNAL = signal.SIGURG
_JOB_NUMBER = struct.Struct("<Q")


class _Cancels:
    """The child's side of the cancel pipe: which job it runs, which jobs the server gave up."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        os.set_blocking(fd, False)
        self.current = 0
        self.given_up: set[int] = set()
        self._partial = b""

    def job_begins(self) -> None:
        # The handler, which reads the pipe too, waits until this is done.
        signal.pthread_sigmask(signal.SIG_BLOCK, {CANCEL_SIGNAL})
        try:
            self.current += 1
            self.read()
            # In place, over a copy: a handler that ran just before the mask took hold may
            # still add to the set while this reads it.
            self.given_up.difference_update([n for n in tuple(self.given_up) if n < self.current])
            budget.superseded = self.current in self.given_up
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {CANCEL_SIGNAL})

    def read(self) -> None:
        data = self._partial
        with contextlib.suppress(BlockingIOError, InterruptedError):
            while chunk := os.read(self.fd, 4096):
                data += chunk
        whole = len(data) - len(data) % _JOB_NUMBER.size
        self._partial = data[whole:]
        self.given_up.update(number for (number,) in _JOB_NUMBER.iter_unpack(data[:whole]))

    def on_signal(self, signum: int, frame: object) -> None:
        self.read()
        if self.current in self.given_up:
            budget.superseded = True


def _read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    data = stream.read(size)
    return data if len(data) == size else None


def _orphan_watch() -> None:
    """End this child when the server is gone, even in the middle of a long job."""
    parent = os.getppid()
    while True:
        time.sleep(1)
        if os.getppid() != parent:
            os._exit(1)


def main(cancel_fd: int) -> int:
    # `CANCEL_SIGNAL` is handled first of all: the server may give up the first job before
    # the imports are done.
    cancels = _Cancels(cancel_fd)
    signal.signal(CANCEL_SIGNAL, cancels.on_signal)
    # The channel gets descriptors of its own; 0 and 1 become /dev/null and stderr, so that
    # nothing else in this process (a print, a native library) can read from or write into it.
    channel_in = os.fdopen(os.dup(0), "rb")
    channel_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.close(devnull)
    # Only this thread takes `CANCEL_SIGNAL` (a thread inherits the mask it starts with), so
    # that blocking it here, while a job begins, holds it back.
    signal.pthread_sigmask(signal.SIG_BLOCK, {CANCEL_SIGNAL})
    threading.Thread(target=_orphan_watch, daemon=True).start()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {CANCEL_SIGNAL})
    tune_gc()
    load_catalog()
    _installation()
    while (header := _read_exactly(channel_in, _SIZE.size)) is not None:
        data = _read_exactly(channel_in, _SIZE.unpack(header)[0])
        if data is None:
            break
        try:
            cancels.job_begins()
            out = pickle.dumps(run_job(pickle.loads(data)), protocol=pickle.HIGHEST_PROTOCOL)
        except Superseded:
            out = pickle.dumps(Cancelled())
        except Exception as exc:  # whatever it is, the server hears of it and this child lives on
            out = pickle.dumps(Failed(f"{type(exc).__name__}: {exc}"))
        channel_out.write(_SIZE.pack(len(out)) + out)
        channel_out.flush()
    return 0


# ---------------------------------------------------------------------- the server's side


class Worker:
    """One child process."""

    def __init__(self, process: asyncio.subprocess.Process, cancels: int) -> None:
        self.process = process
        self._cancels = cancels  # the write end of the child's cancel pipe
        self._sent = 0  # jobs sent: the number of the one in flight
        self.answered = False  # it has answered a job: its imports are done

    @classmethod
    async def spawn(cls) -> Worker:
        read, write = os.pipe()
        os.set_blocking(write, False)  # a child that reads no more must not stall the server
        try:
            # Not `-m mmalint.lsp.worker`: as `__main__` this module's classes would not unpickle.
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-c",
                f"import sys; from mmalint.lsp.worker import main; sys.exit(main({read}))",
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, pass_fds=(read,),
            )
        except BaseException:
            os.close(write)
            raise
        finally:
            os.close(read)
        return cls(process, write)

    @property
    def alive(self) -> bool:
        return self.process.returncode is None

    async def run(self, job: Job) -> Outcome:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        data = pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL)
        self._sent += 1
        try:
            stdin.write(_SIZE.pack(len(data)) + data)
            await stdin.drain()
            size = _SIZE.unpack(await stdout.readexactly(_SIZE.size))[0]
            outcome: Outcome = pickle.loads(await stdout.readexactly(size))
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            code = await self.process.wait()
            raise WorkerDied(f"the lint process ended with status {code}") from exc
        self.answered = True
        return outcome

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            if self.alive:
                self.process.kill()
        if self._cancels >= 0:
            os.close(self._cancels)
            self._cancels = -1

    def supersede(self) -> None:
        """Ask the child to stop its job (it answers `Cancelled`, or the job's own outcome)."""
        if not self.alive or self._cancels < 0:
            return
        try:
            os.write(self._cancels, _JOB_NUMBER.pack(self._sent))
        except OSError:  # the pipe is full or the child gone: the drain's time limit kills it
            return
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(CANCEL_SIGNAL)


# How long a child told that its job is superseded may take to answer before it is killed;
# and how much longer one that has never answered, which may still be starting (its imports,
# over a second on a loaded 2-core machine, come before it reads the job and the word to stop).
DRAIN_S = 1.0
STARTING_S = 10.0


def _retrieved(task: asyncio.Future[Outcome]) -> None:
    """A job's answer nobody waits for any more (superseded, timed out): read, and dropped."""
    if not task.cancelled():
        task.exception()


class Pool:
    """At most `size` jobs at once, each in a child of its own; a job that is cancelled, runs
    out of time or fails takes its child with it (killed), the others are kept for reuse."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._slots = asyncio.Semaphore(size)
        self._idle: list[Worker] = []
        self._busy: set[Worker] = set()
        # Children told that their job is superseded, until they answer (then idle) or run
        # past `DRAIN_S` (then killed): a new job waits for one rather than start a child.
        self._draining: dict[Worker, asyncio.Task[None]] = {}
        self._warming: asyncio.Task[Worker] | None = None
        self._closed = False
        # The child that made each document's last lint (by file name).
        self._last: weakref.WeakValueDictionary[str, Worker] = weakref.WeakValueDictionary()

    def warm(self) -> None:
        """Start a spare child now, so that the next job does not wait for one."""
        room = len(self._busy) + len(self._idle) + len(self._draining) < self.size
        if room and not self._idle and self._warming is None and not self._closed:
            self._warming = asyncio.ensure_future(Worker.spawn())
            self._warming.add_done_callback(self._warmed)

    async def run(self, job: Job, timeout: float) -> Outcome:
        async with self._slots:
            # A document's lint goes to the child that made its last one, which keeps it alive
            # for a re-run of the one root an edit is in (`rerun.py`), when it is not busy.
            worker = await self._take(self._last.get(job.filename))
            self._busy.add(worker)
            self.warm()
            io = asyncio.ensure_future(worker.run(job))
            io.add_done_callback(_retrieved)
            try:
                # Shielded: a superseded job's answer is still read whole, so the pipe stays in step.
                outcome = await asyncio.wait_for(asyncio.shield(io), timeout)
            except asyncio.CancelledError:  # superseded: the child stops the job, and stays
                self._drain(worker, io)
                raise
            except BaseException:  # timed out, died: the child goes
                worker.kill()
                raise
            finally:
                self._busy.discard(worker)
            self._keep(worker)
            if job.kind == "lint" and isinstance(outcome, Linted):
                self._last[job.filename] = worker
            return outcome

    def _drain(self, worker: Worker, io: asyncio.Future[Outcome]) -> None:
        worker.supersede()

        async def drained() -> None:
            try:
                await asyncio.wait_for(asyncio.shield(io), DRAIN_S if worker.answered else DRAIN_S + STARTING_S)
            except BaseException:  # still running, or dead: it goes
                worker.kill()
                return
            finally:
                self._draining.pop(worker, None)
            self._keep(worker)

        self._draining[worker] = asyncio.ensure_future(drained())

    def close(self) -> None:
        """Kill every child, busy or idle (the server is exiting)."""
        self._closed = True
        for worker in (*self._idle, *self._busy, *self._draining):
            worker.kill()
        self._idle.clear()

    async def _take(self, prefer: Worker | None = None) -> Worker:
        if prefer is not None and prefer in self._draining:
            # Superseded a moment ago (an edit in a burst): it is back in milliseconds.
            await asyncio.wait({self._draining[prefer]})
        if prefer is not None and prefer in self._idle:
            self._idle.remove(prefer)
            if prefer.alive:
                return prefer
            prefer.kill()
        while True:
            while self._idle:
                worker = self._idle.pop()
                if worker.alive:
                    return worker
                worker.kill()  # dead already: this closes its cancel pipe
            if not self._draining:
                break
            # A child finishing a superseded job is back sooner than a new one starts.
            await asyncio.wait(set(self._draining.values()), return_when=asyncio.FIRST_COMPLETED)
        task, self._warming = self._warming, None  # a warm-up under way is ours now
        if task is None:
            task = asyncio.ensure_future(Worker.spawn())
        try:
            # Shielded: a spawn cut short by cancellation would leave a child nobody holds.
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.add_done_callback(self._adopt)
            raise

    def _warmed(self, task: asyncio.Task[Worker]) -> None:
        if self._warming is task:  # nobody took it over
            self._warming = None
            self._adopt(task)

    def _adopt(self, task: asyncio.Task[Worker]) -> None:
        if not task.cancelled() and task.exception() is None:
            self._keep(task.result())

    def _keep(self, worker: Worker) -> None:
        if self._closed:
            worker.kill()
        else:
            self._idle.append(worker)
