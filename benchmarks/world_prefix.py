"""How much of a sweep's worlds repeats an earlier world's work: the most that running a
function root's worlds together (one run until their values part) could save.

    python benchmarks/world_prefix.py --target-jax 0.11 DIR [DIR...]

Runs `mmalint check --no-cache -j 1` on the paths in this process (no code of the tree is
imported or run) and records, for each world of each function root (each root call the
interpreter makes: a `parameterized` case, a test inherited by a subclass), the sequence of
nodes it evaluated (`eval` and `exec_stmt`: the steps `Budget.step` counts). A world's
`shared` steps are its longest common prefix with any of the `WINDOW` worlds of its root
before it. That is an upper bound: the same nodes in the same order are not the same values
(a world's parameters are read in its first rows), and what a run of the worlds together
would share ends where their values part. Prints one JSON object: `steps` (all, in roots of
more than one world, shared), and the roots that share the most.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mmalint.analysis.interpreter import calls as calls_module
from mmalint.analysis.interpreter import expressions as expressions_module
from mmalint.analysis.interpreter import roots as roots_module
from mmalint.analysis.interpreter import statements as statements_module

WINDOW = 8  # the earlier worlds of a root a world is compared with


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class Recorder:
    def __init__(self) -> None:
        self.worlds: defaultdict[tuple[str, int, str], list[list[int]]] = defaultdict(list)
        self.root: tuple[str, int, str] | None = None
        self.current: list[int] | None = None

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        patches: list[tuple[Any, str, Any]] = []

        def patch(owner: Any, name: str, make: Any) -> None:
            original = owner.__dict__[name]
            patches.append((owner, name, original))
            setattr(owner, name, make(original))

        def run_function_root(original: Any) -> Any:
            def wrapper(machine: Any, block: Any) -> Any:
                self.root = (block.source.filename, block.start_line, block.name or "")
                try:
                    return original(machine, block)
                finally:
                    self.root, self.current = None, None
            return wrapper

        def call_function(original: Any) -> Any:
            def wrapper(machine: Any, func: Any, args: Any, call_node: Any, root: bool = False) -> Any:
                if root and self.root is not None:
                    self.current = []
                    self.worlds[self.root].append(self.current)
                return original(machine, func, args, call_node, root=root)
            return wrapper

        def counted(original: Any) -> Any:
            def wrapper(machine: Any, node: Any, *args: Any, **kwargs: Any) -> Any:
                if self.current is not None:
                    self.current.append(id(node))
                return original(machine, node, *args, **kwargs)
            return wrapper

        patch(roots_module.Roots, "_run_function_root", run_function_root)
        patch(calls_module.Calls, "call_function", call_function)
        patch(expressions_module.Expressions, "eval", counted)
        patch(statements_module.Statements, "exec_stmt", counted)
        try:
            yield
        finally:
            for owner, name, original in reversed(patches):
                setattr(owner, name, original)

    def summary(self, top: int = 10) -> dict[str, Any]:
        total = multi = shared = 0
        rows = []
        for (filename, line, name), worlds in self.worlds.items():
            steps = sum(len(world) for world in worlds)
            total += steps
            if len(worlds) < 2:
                continue
            multi += steps
            same = sum(
                max(_common_prefix(worlds[i], worlds[j]) for j in range(max(0, i - WINDOW), i))
                for i in range(1, len(worlds))
            )
            shared += same
            rows.append({"root": f"{Path(filename).name}:{line} {name}", "worlds": len(worlds),
                         "steps": steps, "shared": same})
        rows.sort(key=lambda row: -row["shared"])
        return {"steps": {"in_function_roots": total, "in_roots_of_several_worlds": multi, "shared": shared},
                "roots": rows[:top]}


def main() -> int:
    from mmalint.cli import main as mmalint_main

    parser = argparse.ArgumentParser()
    parser.add_argument("path", nargs="+")
    parser.add_argument("--target-jax", default="0.11")
    args = parser.parse_args()
    recorder = Recorder()
    argv = ["check", "--no-cache", "-j", "1", "--target-jax", args.target_jax, "--exit-zero", "-q", *args.path]
    with recorder.installed(), contextlib.redirect_stdout(sys.stderr):
        mmalint_main(argv)
    print(json.dumps(recorder.summary(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
