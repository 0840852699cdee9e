"""How much work the analysis of one file may do: interpreter steps and CPU time.

The roots of one file draw on one total of steps and one deadline: a few kilobytes of helpers
that call each other twice, or a sweep of 256 worlds, would otherwise cost a minute. A root, and
a world of a root, runs in a share of what is left when it starts (what it leaves passes on),
so that one runaway root cannot starve the others of their findings; the interpreter runs again
those that ran out, with what the others left. Past its share a run stops where it is; what it
had not decided stays unknown, so running out costs findings, never adds one.

Time is this thread's CPU time: a loaded machine makes the analysis slower, never shorter, and
on an idle one it is the wall time a user waits. It is generous (about 5x what the steps take
here): a finding that came or went with the machine's load would make mmalint unrepeatable.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from mmalint.analysis import reads

CLOCK_EVERY = 128  # steps between two looks at the clock: cheap, and a step is short


class Superseded(BaseException):
    """The lint this analysis is part of is no longer wanted (the language server's child
    was told so: `lsp/worker.py`); a BaseException, so that no `except Exception` of the
    analysis takes it for a failure of the code it runs."""


# Set (from a signal handler) when the running lint is superseded: its analysis ends at its
# next look at the budget, and the process stays, with what it has loaded, for the next one.
superseded = False


def check_superseded() -> None:
    """Between the steps of a lint that are not the interpreter's (parsing, suppressions)."""
    if superseded:
        raise Superseded


class BudgetExceeded(Exception):
    """The current run (or the whole file) is out of steps or time."""


class CallTooLong(BudgetExceeded):
    """A call given a few steps of its own (a helper of another module that leads to no MMA
    call) ran past them: its result is unknown, the run goes on."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit


@dataclass(frozen=True)
class Limits:
    """The budget of a file, growing with its size: a large test file has more to analyse."""

    base_steps: int = 600_000
    steps_per_byte: int = 10
    steps_per_run: int = 400_000  # one root in one world, however much the file has left
    # Time is the last guard, for steps that cost far more than most: the steps bind first on
    # any machine up to about 5x slower than this project's (a step is about 1.7 us, so a
    # kilobyte's 10,240 steps take 17 ms here), and what is found does not depend on the load.
    base_seconds: float = 5.0
    seconds_per_byte: float = 1e-4  # 100 ms a kilobyte
    # MMA calls and API uses recorded, the same call on other paths included: a file, one run.
    max_records: int = 4_096
    max_records_per_run: int = 512

    def steps_for(self, size: int) -> int:
        return self.base_steps + self.steps_per_byte * size

    def seconds_for(self, size: int) -> float:
        return self.base_seconds + self.seconds_per_byte * size


@dataclass(frozen=True)
class Window:
    """Until when a run may go on: a step count and a clock time."""

    end: int
    deadline: float


class Budget:
    """What is left of one file's budget; the interpreter spends it one step at a time."""

    def __init__(
        self,
        steps: int,
        seconds: float,
        limits: Limits | None = None,
        clock: Callable[[], float] = time.thread_time,
    ) -> None:
        self._clock = clock
        self.file = Window(steps, clock() + seconds)
        self._limits = limits or Limits()
        self.steps = 0
        self.records = 0
        self._run_records = 0
        self.exhausted = False  # the file's total or its deadline was reached
        self.stops = 0  # runs stopped before their end
        self.window = self.file
        self._next_look = CLOCK_EVERY
        self._checkpoint = min(self.window.end, self._next_look)
        self._least_left = steps  # the fewest steps a run had left when the next began
        reads.budget(self)

    @classmethod
    def for_text(cls, text: str, limits: Limits | None = None) -> Budget:
        return cls.for_size(len(text), limits)

    @classmethod
    def for_size(cls, size: int, limits: Limits | None = None) -> Budget:
        """The budget of `size` characters of source: a file's, or a file's and its callers'
        in the checked tree (a callee in another file spends the budget of who calls it)."""
        limits = limits or Limits()
        return cls(limits.steps_for(size), limits.seconds_for(size), limits=limits)

    def least_left(self) -> int:
        """The fewest steps any run so far (the current one included) had left at its end:
        a budget that many steps smaller would have ended every run where it did."""
        return min(self._least_left, self.window.end - self.steps, self.file.end - self.steps)

    def grow(self, size: int) -> None:
        """More budget for `size` more characters of source to run (a checked file's callers
        elsewhere in the tree), unless the file's budget is spent already."""
        if self.exhausted:
            return
        steps = self._limits.steps_per_byte * size
        seconds = self._limits.seconds_per_byte * size
        self.file = Window(self.file.end + steps, self.file.deadline + seconds)
        self.window = self.file

    def share(self, parts: int, within: Window | None = None, run: bool = True) -> Window:
        """One of `parts` equal shares of what is left of `within` (the file's window); for a
        run (one root in one world), at most `Limits.steps_per_run` steps of it."""
        outer = within or self.file
        now = self._clock()
        steps = max(outer.end - self.steps, 0) // max(parts, 1)
        if run:
            steps = min(steps, self._limits.steps_per_run)
        seconds = max(outer.deadline - now, 0.0) / max(parts, 1)
        return Window(self.steps + steps, now + seconds)

    def spent(self, window: Window) -> bool:
        """Whether `window` has nothing left: a run entered in it would stop at once, after
        whatever its start costs (the worlds of a sweep bind their parameters unstepped)."""
        return self.steps >= min(window.end, self.file.end) or self._clock() >= min(
            window.deadline, self.file.deadline)

    def enter(self, window: Window) -> None:
        """Start a run that may go on until `window` (or the file's own) ends."""
        self._least_left = min(self._least_left, self.window.end - self.steps)
        self.window = Window(min(window.end, self.file.end), min(window.deadline, self.file.deadline))
        self._checkpoint = min(self.window.end, self._next_look)
        self._run_records = 0

    def record(self) -> None:
        """An MMA call or API use is recorded: the same call on ever more paths is a runaway."""
        self.records += 1
        self._run_records += 1
        if self.records > self._limits.max_records:
            self.exhaust()
        if self._run_records > self._limits.max_records_per_run:
            self.window = Window(self.steps, self.window.deadline)
            self._stop()

    def step(self) -> None:
        self.steps += 1
        if self.steps >= self._checkpoint:
            self._check()

    def exhaust(self) -> NoReturn:
        """Spend the rest of the file's budget (something else of it ran out): raises."""
        self.exhausted = True
        self.file = self.window = Window(self.steps, self.file.deadline)
        self._stop()

    def _check(self) -> None:
        if superseded:
            raise Superseded
        if self.steps >= self.file.end:
            self.exhaust()
        if self.steps >= self._next_look:
            self._next_look = self.steps + CLOCK_EVERY
            now = self._clock()
            if now > self.file.deadline:
                self.exhaust()
            if now > self.window.deadline:
                self.window = Window(self.steps, self.window.deadline)
        if self.steps >= self.window.end:
            self._stop()
        self._checkpoint = min(self.window.end, self._next_look)

    def _stop(self) -> NoReturn:
        self.stops += 1
        self._checkpoint = self.steps  # every later step of this run raises too
        raise BudgetExceeded
