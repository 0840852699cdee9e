"""Control flow: if/match, loops (unrolled over known items, or run to a fixed point),
`with`, `try`; branches run on copies of the frame and merge."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from mmalint.analysis.calls import WorldBinding
from mmalint.analysis.host import REGISTRY, Diverges
from mmalint.analysis.interpreter import guards
from mmalint.analysis.interpreter.core import (
    MAX_UNROLL,
    Flow,
    Frame,
    Machine,
    body_of,
    merge_envs,
)
from mmalint.analysis.scopes import dotted_name as _dotted
from mmalint.analysis.source import Block
from mmalint.analysis.values import (
    SOME_INT,
    UNKNOWN,
    Api,
    ClassVal,
    Const,
    DType,
    GeneratorContext,
    Origin,
    TupleVal,
    Value,
    as_int,
    join,
)


def _handled_exception_names(handler: cst.ExceptHandler) -> set[str]:
    if handler.type is None:
        return {"Exception"}
    exprs = (
        [e.value for e in handler.type.elements]
        if isinstance(handler.type, cst.Tuple)
        else [handler.type]
    )
    return {(_dotted(e) or "?").split(".")[-1] for e in exprs}

def _target_name(target: cst.BaseAssignTargetExpression) -> str | None:
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, cst.Tuple):
        parts = [e.value.value for e in target.elements if isinstance(e.value, cst.Name)]
        return ", ".join(parts) if len(parts) == len(target.elements) else None
    return None

def _loop_bindings(
    target: cst.BaseAssignTargetExpression, item: Value, name: str | None
) -> tuple[WorldBinding, ...]:
    """The world a loop iteration adds: `dtype=jnp.int8`, or one binding per unpacked name."""
    if (
        isinstance(target, cst.Tuple)
        and isinstance(item, TupleVal)
        and len(target.elements) == len(item.items)
        and all(isinstance(e.value, cst.Name) for e in target.elements)
    ):
        bindings = []
        for element, value in zip(target.elements, item.items, strict=True):
            label = _label(value)
            if label is not None and isinstance(element.value, cst.Name):
                bindings.append(WorldBinding(element.value.value, label, value.origin))
        return tuple(bindings)
    label = _label(item) if name is not None else None
    if label is None or name is None:
        return ()
    return (WorldBinding(name, label, item.origin),)

def _label(value: Value) -> str | None:
    if isinstance(value, ClassVal):
        return value.name  # not its whole statement (`for cls in (W8A8, W4A8):`)
    if value.origin is not None:
        try:
            return value.origin.flat_code()
        except Exception:
            return None
    if isinstance(value, Const):
        return repr(value.value)
    if isinstance(value, DType):
        return f"jnp.{value.name}"
    return None

def _is_range_call(node: cst.BaseExpression, names: tuple[str, ...] = ("range", "enumerate", "zip")) -> bool:
    return isinstance(node, cst.Call) and _dotted(node.func) in names


# `for i in range(NUM_WIDTHS)` with a few iterations runs each (no world of its own: what a
# K loop records each time is the same record); a longer one runs as a loop of unknown count.
MAX_RANGE_UNROLL = 4


class FlowControl(Machine):
    """Branches, loops, `with` and `try`."""

    def exec_if(self, stmt: cst.If, frame: Frame, block: Block) -> Flow:
        test = self.eval(stmt.test, frame, block)
        truth = self.truth(test)
        if (truth is None and block.kind == "stmt" and block.parent is None and _is_main_guard(stmt.test)
                and "__name__" not in block.source.bindings):
            # `if __name__ == "__main__":` at the top of a module: the checked file's runs when
            # it is run as a script, which is what running it as a root stands for (undecided,
            # what its code stores on objects was unknown after the store: `self._fn = build()`
            # then `self._fn(x)` launched nothing); another module's, imported, does not run,
            # but a script's, run as a caller of the checked file (`python run.py` calls it).
            truth = block.source is self.source or block is self._script_block
            if truth:
                with self.with_context(script=True):
                    return self.exec_block(body_of(stmt.body), frame, block)
        orelse = stmt.orelse
        else_body: Sequence[cst.BaseStatement | cst.BaseSmallStatement] = ()
        if type(orelse) is cst.If:
            else_body = [orelse]
        elif type(orelse) is cst.Else:
            else_body = body_of(orelse.body)
        if isinstance(test, Api) and test.name in REGISTRY.both_ways:
            # Both run for real at some point (type checker / interpreter); names bound only in
            # the runtime branch stay visible, and the typed branch wins where both bind.
            self.exec_block(else_body, frame, block)
            with self.guarded():  # the typed branch: only a type checker reads it
                return self.exec_block(body_of(stmt.body), frame, block)
        if truth is True:
            return self.exec_block(body_of(stmt.body), frame, block)
        if truth is False:
            return self.exec_block(else_body, frame, block)
        if frame.function is not None and guards.skips(stmt) and guards.about_the_kernel(self, stmt.test, frame, block):
            # `if not supported(dtype): self.skipTest(...)`, undecided: this world may not run at
            # all, and what its path reaches next is no finding (a guard on the machine is not
            # about the kernel: the test runs where it asks to).
            raise Diverges
        return self.exec_branches([body_of(stmt.body), else_body], frame, block)

    def surely_running(self) -> bool:
        return self._uncertainty == 0 and self._guarded == 0

    def about_the_kernel(self, test: cst.BaseExpression, frame: Frame, block: Block) -> bool:
        return guards.about_the_kernel(self, test, frame, block)

    def exec_match(self, stmt: cst.Match, frame: Frame, block: Block) -> Flow:
        """`match mode: case "a" | "b": ...`: the case a known subject takes, else every case
        that may match (and falling through none), merged like if/elif branches."""
        subject = self.eval(stmt.subject, frame, block)
        branches: list[Sequence[cst.BaseStatement | cst.BaseSmallStatement]] = []
        for case in stmt.cases:
            pattern = case.pattern
            if isinstance(pattern, cst.MatchAs) and pattern.name is not None:
                frame.env[pattern.name.value] = subject  # `case x:` / `case ... as x:`
            decision = self._pattern_matches(pattern, subject, frame, block)
            if decision is not False and case.guard is not None:
                guard = self.truth(self.eval(case.guard, frame, block))
                decision = False if guard is False else (decision if guard is True else None)
            if decision is False:
                continue
            branches.append(body_of(case.body))
            if decision is True:
                break
        else:
            branches.append(())  # no case matched: the statement does nothing
        if len(branches) == 1:
            return self.exec_block(branches[0], frame, block)
        return self.exec_branches(branches, frame, block)

    def _pattern_matches(
        self, pattern: cst.MatchPattern, subject: Value, frame: Frame, block: Block
    ) -> bool | None:
        if isinstance(pattern, cst.MatchAs):
            if pattern.pattern is None:
                return True  # `case _:` and `case name:` match anything
            return self._pattern_matches(pattern.pattern, subject, frame, block)
        if isinstance(pattern, cst.MatchOr):
            results = [self._pattern_matches(p.pattern, subject, frame, block) for p in pattern.patterns]
            if any(r is True for r in results):
                return True
            return False if all(r is False for r in results) else None
        if isinstance(pattern, cst.MatchValue | cst.MatchSingleton):
            value = self.eval(pattern.value, frame, block)
            if isinstance(value, Const) and isinstance(subject, Const):
                try:
                    return bool(value.value == subject.value)
                except Exception:
                    return None
            return None
        return None  # class, sequence and mapping patterns: not decided

    def exec_branches(
        self,
        branches: Sequence[Sequence[cst.BaseStatement | cst.BaseSmallStatement]],
        frame: Frame,
        block: Block,
    ) -> Flow:
        """Run alternatives on copies of the frame and merge what falls through."""
        start = dict(frame.env)
        outcomes: list[tuple[Flow, dict[str, Value]]] = []
        self._uncertainty += 1
        try:
            for body in branches:
                frame.env = dict(start)
                outcomes.append((self.exec_block(body, frame, block), frame.env))
        finally:
            self._uncertainty -= 1
        return self._merge_outcomes(outcomes, frame)

    def _merge_outcomes(
        self, outcomes: list[tuple[Flow, dict[str, Value]]], frame: Frame
    ) -> Flow:
        """Continue with the paths that fall through; hand break/continue paths to their loop."""
        for flow, env in outcomes:
            if flow in (Flow.BREAK, Flow.CONTINUE) and frame.loops:
                frame.loops[-1][0 if flow is Flow.BREAK else 1].append(env)
        live = [env for flow, env in outcomes if flow is Flow.NORMAL]
        if live:
            frame.env = merge_envs(live)
            return Flow.NORMAL
        flows = [flow for flow, _ in outcomes]
        frame.env = outcomes[0][1]
        if all(f is Flow.RAISE for f in flows):
            return Flow.RAISE
        if all(f in (Flow.RETURN, Flow.RAISE) for f in flows):
            return Flow.RETURN
        return Flow.BREAK if Flow.BREAK in flows else Flow.CONTINUE

    def _run_loopbody_of(
        self, body: Sequence[cst.BaseStatement | cst.BaseSmallStatement], frame: Frame, block: Block
    ) -> tuple[Flow, list[dict[str, Value]], list[dict[str, Value]]]:
        """One iteration: its flow, and the environments that left it by break / continue."""
        frame.loops.append(([], []))
        try:
            flow = self.exec_block(body, frame, block)
        finally:
            breaks, continues = frame.loops.pop()
        if flow is Flow.BREAK:
            breaks.append(frame.env)
        elif flow is Flow.CONTINUE:
            continues.append(frame.env)
        return flow, breaks, continues

    def exec_for(self, stmt: cst.For, frame: Frame, block: Block) -> Flow:
        iterable = self.eval(stmt.iter, frame, block)
        items = self.iterate(iterable)
        body = body_of(stmt.body)
        orelse = body_of(stmt.orelse.body) if stmt.orelse is not None else ()
        if items is not None and len(items) <= MAX_UNROLL and not _is_range_call(stmt.iter):
            return self._exec_unrolled(stmt, items, body, orelse, frame, block)
        if items is not None and len(items) <= MAX_RANGE_UNROLL and _is_range_call(stmt.iter, ("range",)):
            return self._exec_unrolled(stmt, items, body, orelse, frame, block, named=False)
        element: Value = UNKNOWN
        if items:
            element = items[0]
            for item in items[1:]:
                element = join(element, item)
            if not element.known and all(as_int(i) is not None for i in items):
                element = SOME_INT  # `for step in range(K_STEPS)`: some int, each time

        def bind() -> None:
            self.assign(stmt.target, element, frame, block)

        return self._exec_loop(body, orelse, frame, block, bind)

    def _exec_unrolled(
        self,
        stmt: cst.For,
        items: Sequence[Value],
        body: Sequence[cst.BaseStatement | cst.BaseSmallStatement],
        orelse: Sequence[cst.BaseStatement | cst.BaseSmallStatement],
        frame: Frame,
        block: Block,
        named: bool = True,
    ) -> Flow:
        """`for dtype in (jnp.int8, jnp.float16):` runs once per item, each a named world."""
        name = _target_name(stmt.target)
        exits: list[dict[str, Value]] = []
        for item in items:
            self.assign(stmt.target, item, frame, block)
            world = (*self.context.world, *(_loop_bindings(stmt.target, item, name) if named else ()))
            with self.with_context(world=world):
                flow, breaks, continues = self._run_loopbody_of(body, frame, block)
            exits.extend(breaks)
            live = ([frame.env] if flow is Flow.NORMAL else []) + continues
            if not live:
                if exits:
                    frame.env = merge_envs(exits)
                    return Flow.NORMAL
                return flow if flow in (Flow.RETURN, Flow.RAISE) else Flow.NORMAL
            frame.env = merge_envs(live)
        flow = self.exec_block(orelse, frame, block)
        if exits:
            frame.env = merge_envs([frame.env, *exits] if flow is Flow.NORMAL else exits)
            return Flow.NORMAL
        return flow

    def exec_while(self, stmt: cst.While, frame: Frame, block: Block) -> Flow:
        truth = self.truth(self.eval(stmt.test, frame, block))
        orelse = body_of(stmt.orelse.body) if stmt.orelse is not None else ()
        if truth is False:
            return self.exec_block(orelse, frame, block)
        return self._exec_loop(body_of(stmt.body), orelse, frame, block, lambda: None)

    def _exec_loop(
        self,
        body: Sequence[cst.BaseStatement | cst.BaseSmallStatement],
        orelse: Sequence[cst.BaseStatement | cst.BaseSmallStatement],
        frame: Frame,
        block: Block,
        bind_target: Callable[[], None],
    ) -> Flow:
        """A loop of unknown trip count: the body runs on entry values, then on merged ones."""
        state = dict(frame.env)
        self._uncertainty += 1
        try:
            for _ in range(2):
                frame.env = dict(state)
                bind_target()
                flow, breaks, continues = self._run_loopbody_of(body, frame, block)
                ends = ([frame.env] if flow is Flow.NORMAL else []) + breaks + continues
                state = merge_envs([state, *ends])
        finally:
            self._uncertainty -= 1
        frame.env = state
        self.exec_block(orelse, frame, block)
        frame.env = merge_envs([state, frame.env])
        return Flow.NORMAL

    def exec_with(self, stmt: cst.With, frame: Frame, block: Block) -> Flow:
        expected: Origin | None = None
        for item in stmt.items:
            expr = item.item
            if isinstance(expr, cst.Call):
                dotted = _dotted(expr.func) or ""
                contexts = REGISTRY.tests.expected_failure_contexts
                if contexts is not None and contexts.search(dotted):
                    expected = Origin(block, expr)
                    continue
            value = self.eval(expr, frame, block)
            if item.asname is not None:
                entered = value.value if isinstance(value, GeneratorContext) else UNKNOWN
                self.assign(item.asname.name, entered, frame, block)
        with self.guarded():  # a context manager may swallow what its body raises
            if expected is not None:
                with self.with_context(expected_failure=expected):
                    flow = self.exec_block(body_of(stmt.body), frame, block)
                return Flow.NORMAL if flow is Flow.RAISE else flow
            return self.exec_block(body_of(stmt.body), frame, block)

    def exec_try(self, stmt: cst.Try, frame: Frame, block: Block) -> Flow:
        with self.guarded():  # what raises in the body, or is assumed not to, skips the rest
            return self._exec_try(stmt, frame, block)

    def _exec_try(self, stmt: cst.Try, frame: Frame, block: Block) -> Flow:
        handled: set[str] = set()
        for handler in stmt.handlers:
            handled.update(_handled_exception_names(handler))
        start = dict(frame.env)
        if handled and handled <= {"ImportError", "ModuleNotFoundError"}:
            # `try: import x` / `except ImportError`: assume the import works.
            flow = self.exec_block(body_of(stmt.body), frame, block)
            outcomes = [(flow, frame.env)]
        else:
            if handled & REGISTRY.tests.expected_exceptions:
                # The author expects the body may fail: a call inside fails on purpose.
                with self.with_context(expected_failure=Origin(block, stmt)):
                    flow = self.exec_block(body_of(stmt.body), frame, block)
            else:
                flow = self.exec_block(body_of(stmt.body), frame, block)
            body_env = frame.env
            if flow is Flow.NORMAL and stmt.orelse is not None:
                flow = self.exec_block(body_of(stmt.orelse.body), frame, block)
                body_env = frame.env
            outcomes = [(flow, body_env)]
            raised_env = merge_envs([start, body_env])
            for handler in stmt.handlers:
                frame.env = dict(raised_env)
                outcomes.append((self.exec_block(body_of(handler.body), frame, block), frame.env))
        flow = self._merge_outcomes(outcomes, frame)
        if stmt.finalbody is not None:
            final = self.exec_block(body_of(stmt.finalbody.body), frame, block)
            if final is not Flow.NORMAL:
                return final
        return flow


def _is_main_guard(test: cst.BaseExpression) -> bool:
    """`__name__ == "__main__"` (either way round)."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Equal)):
        return False
    sides = (test.left, test.comparisons[0].comparator)
    names = [s for s in sides if isinstance(s, cst.Name) and s.value == "__name__"]
    texts = [s for s in sides if isinstance(s, cst.SimpleString) and s.evaluated_value == "__main__"]
    return len(names) == 1 and len(texts) == 1
