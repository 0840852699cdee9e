"""What a cold check of a tree does, counted: the measure of a change to how much the analysis
does, on a machine whose timings drift by more than the change.

    python benchmarks/work.py --target-jax 0.11 DIR [DIR...]

Runs `mmalint check --no-cache -j 1` on the paths in this process, with counters around the
analysis (no code of the tree is imported or run), and prints one JSON object:

- `steps`: the interpreter's steps (`Budget.step`, one per expression evaluated), in all and
  in the roots that recorded nothing new; `roots`, `worlds`, `calls` (functions of the tree
  entered) and `records` (MMA calls and API uses recorded: `new`, or `repeated`, the same facts
  on another path, which change no finding);
- `parsed`: the blocks the interpreter parsed and their characters, and of them what libcst
  parsed (the rest were built from `ast`: `analysis/cst_from_ast.py`; a block whose positions
  or text are asked is parsed by libcst then); `indexed`: the modules `ast` indexed;
- `seconds`: the same phases timed (the root runs include the blocks they parse), for scale
  only; the counts are what two commits are compared by;
- `by_file`: per checked file, its roots, steps and the steps of its roots that recorded
  nothing.

The counts depend only on the code checked and on mmalint, two runs printing the same, while
no run meets the time part of its budget (`budget.py`: about 5x what its steps take): a root
that does is run again from its start (`roots.unfinished` counts them), so under a profiler or
on a machine busy enough to be 5x slower the steps grow.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from typing import Any

from mmalint.analysis import source as source_module
from mmalint.analysis.interpreter import calls as calls_module
from mmalint.analysis.interpreter import core as core_module
from mmalint.analysis.interpreter import roots as roots_module


class Counts:
    def __init__(self) -> None:
        self.totals: Counter[str] = Counter()
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.by_file: defaultdict[str, Counter[str]] = defaultdict(Counter)


@contextlib.contextmanager
def _patched(owner: Any, name: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> Iterator[None]:
    original = owner.__dict__[name]
    setattr(owner, name, make(original))
    try:
        yield
    finally:
        setattr(owner, name, original)


def counting(counts: Counts) -> contextlib.ExitStack:
    """Counters around the analysis's phases, for as long as the stack is open."""
    stack = contextlib.ExitStack()
    totals, seconds, by_file = counts.totals, counts.seconds, counts.by_file

    def run_pass(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(self: Any, roots: Any, window: Any) -> Any:
            unfinished = []
            for block in roots:
                recorded = len(self.sites) + len(self.uses)
                steps, start = self.budget.steps, time.perf_counter()
                left = original(self, [block], window)
                unfinished += left
                totals["roots_unfinished"] += len(left)
                spent = self.budget.steps - steps
                seconds["roots"] += time.perf_counter() - start
                checked = by_file[self.source.filename]
                own = block.source is self.source
                totals["roots"] += 1
                totals["roots_of_callers"] += not own
                totals["steps_in_roots"] += spent
                checked["roots"] += 1
                checked["steps"] += spent
                if len(self.sites) + len(self.uses) == recorded:
                    totals["roots_recording_nothing"] += 1
                    totals["steps_in_roots_recording_nothing"] += spent
                    checked["steps_recording_nothing"] += spent
            return unfinished
        return wrapper

    def worlds_for(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            found = list(original(*args, **kwargs))
            totals["worlds"] += len(found)
            return found
        return wrapper

    def call_function(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            totals["calls"] += 1
            return original(self, *args, **kwargs)
        return wrapper

    def recorder(kind: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def make(original: Callable[..., Any]) -> Callable[..., Any]:
            def wrapper(self: Any, recorded: Any) -> Any:
                before = len(self.sites) + len(self.uses)
                result = original(self, recorded)
                new = len(self.sites) + len(self.uses) > before
                totals[f"{kind}_new" if new else f"{kind}_repeated"] += 1
                return result
            return wrapper
        return make

    def parse(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(self: Any, text: str, *args: Any) -> Any:
            totals["parsed_blocks"] += 1
            totals["parsed_chars"] += len(text)
            start = time.perf_counter()
            try:
                return original(self, text, *args)
            finally:
                seconds["parse"] += time.perf_counter() - start
        return wrapper

    def libcst_parse(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(text: str, *args: Any, **kwargs: Any) -> Any:
            totals["libcst_blocks"] += 1
            totals["libcst_chars"] += len(text)
            start = time.perf_counter()
            try:
                return original(text, *args, **kwargs)
            finally:
                seconds["libcst"] += time.perf_counter() - start
        return wrapper

    def index(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(filename: str, text: str, *args: Any, **kwargs: Any) -> Any:
            totals["indexed_modules"] += 1
            totals["indexed_chars"] += len(text)
            start = time.perf_counter()
            try:
                return original(filename, text, *args, **kwargs)
            finally:
                seconds["index"] += time.perf_counter() - start
        return wrapper

    machine = core_module.Machine
    stack.enter_context(_patched(roots_module.Roots, "_run_pass", run_pass))
    stack.enter_context(_module_patched(roots_module, "worlds_for", worlds_for))
    stack.enter_context(_patched(calls_module.Calls, "call_function", call_function))
    stack.enter_context(_patched(machine, "record", recorder("sites")))
    stack.enter_context(_patched(machine, "record_use", recorder("uses")))
    stack.enter_context(_patched(source_module.Block, "_parse", parse))
    stack.enter_context(_module_patched(source_module, "index_source", index))
    stack.enter_context(_patched(source_module.cst, "parse_module", libcst_parse))
    return stack


@contextlib.contextmanager
def _module_patched(module: Any, name: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> Iterator[None]:
    """A module's function replaced where the analysis reads it: its own module, and the
    modules that imported it by name."""
    original = getattr(module, name)
    replacement = make(original)
    holders = [m for m in list(sys.modules.values()) if m is not None and getattr(m, name, None) is original]
    for holder in holders:
        setattr(holder, name, replacement)
    try:
        yield
    finally:
        for holder in holders:
            setattr(holder, name, original)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("path", nargs="+")
    parser.add_argument("--target-jax", default="0.11")
    args = parser.parse_args()
    # Every module the check loads, loaded before the counters go in (a module loaded later
    # would keep the function it imported by name).
    import mmalint.analysis.program
    import mmalint.analysis.run
    import mmalint.engine
    import mmalint.pipeline.file  # noqa: F401
    from mmalint.cli import main as cli_main

    counts = Counts()
    start = time.perf_counter()
    with counting(counts), contextlib.redirect_stdout(sys.stderr), contextlib.suppress(SystemExit):
        cli_main(["check", "-q", "--no-cache", "-j", "1", "--exit-zero", "--target-jax", args.target_jax, *args.path])
    totals = counts.totals
    print(json.dumps({
        "python": sys.version.split()[0],
        "paths": args.path,
        "target_jax": args.target_jax,
        "steps": {"in_roots": totals["steps_in_roots"],
                  "in_roots_recording_nothing": totals["steps_in_roots_recording_nothing"]},
        "roots": {"all": totals["roots"], "of_callers": totals["roots_of_callers"],
                  "recording_nothing": totals["roots_recording_nothing"],
                  "unfinished": totals["roots_unfinished"]},
        "worlds": totals["worlds"],
        "calls": totals["calls"],
        "records": {"sites_new": totals["sites_new"], "sites_repeated": totals["sites_repeated"],
                    "uses_new": totals["uses_new"], "uses_repeated": totals["uses_repeated"]},
        "parsed": {"blocks": totals["parsed_blocks"], "chars": totals["parsed_chars"],
                   "by_libcst": totals["libcst_blocks"], "chars_by_libcst": totals["libcst_chars"]},
        "indexed": {"modules": totals["indexed_modules"], "chars": totals["indexed_chars"]},
        "seconds": {"all": round(time.perf_counter() - start, 2),
                    **{k: round(v, 2) for k, v in sorted(counts.seconds.items())}},
        "by_file": {name: dict(c) for name, c in sorted(counts.by_file.items(), key=lambda kv: -kv[1]["steps"])},
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
