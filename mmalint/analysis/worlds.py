"""Parameter worlds: the argument sets a parameterized test runs with.

`@parameterized.product(dtype=(jnp.int8, jnp.float16), m_warps=(1, 2))` gives four worlds;
`@parameterized.parameters`, `named_parameters`, `jtu.sample_product` and
`pytest.mark.parametrize` are understood too. A world binds parameters to values and remembers
how each value was written, so a finding can say "when dtype=jnp.int8".

A sweep of up to `EXHAUSTIVE_WORLDS` combinations runs whole. A larger one (jax's WGMMA and
tcgen05 tests sweep six or seven axes: thousands of combinations) runs a pairwise covering set:
every value of every axis meets every value of every other axis in some world, which is where
an accumulator/operand mistake shows (a dtype with an accumulator, a dtype with an N). Cutting
the product off after its first worlds, as before, kept only the first values of the first axes.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from mmalint.analysis.calls import WorldBinding
from mmalint.analysis.values import Api, ClassVal, Const, DictVal, ParamSet, TupleVal, Value

if TYPE_CHECKING:
    from mmalint.analysis.interpreter.core import Frame, Machine
    from mmalint.analysis.source import Block

MAX_WORLDS = 256
EXHAUSTIVE_WORLDS = 64

_PRODUCT = frozenset({"parameterized.product", "jtu.sample_product", "jtu.sample_product_testcases"})
_PARAMETERS = frozenset({"parameterized.parameters", "jtu.parameterized_filterable"})
_NAMED = frozenset({"parameterized.named_parameters"})
_PYTEST = frozenset({"pytest.mark.parametrize"})


@dataclass(frozen=True)
class World:
    positional: tuple[Value, ...] = ()
    keywords: tuple[tuple[str, Value], ...] = ()
    bindings: tuple[WorldBinding, ...] = ()
    complete: bool = False  # every parameter is given (or has its real default)
    # A param pytest gives a fixture of the test's parameter's name (`request.param`): an
    # `indirect` parametrize's, or a fixture's own `params=`.
    indirect: tuple[tuple[str, Value], ...] = ()

    def combine(self, other: World) -> World:
        return World(
            self.positional + other.positional,
            self.keywords + other.keywords,
            self.bindings + other.bindings,
            self.complete or other.complete,
            self.indirect + other.indirect,
        )


def worlds_for(
    interp: Machine, node: cst.FunctionDef, block: Block, frame: Frame,
    class_decorators: Sequence[tuple[cst.Decorator, Frame, Block]] = (),
) -> list[World]:
    """The worlds a root function runs in; one blind world when it is not parameterized. A
    `@pytest.mark.parametrize` of its class (`class_decorators`, with where each is read)
    sweeps each of its methods, as pytest applies it."""
    param_names = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
    if param_names and param_names[0] in ("self", "cls"):
        param_names = param_names[1:]
    axes: list[list[World]] = []
    decorators = [(d, frame, block, False) for d in node.decorators] + [(d, f, b, True) for d, f, b in class_decorators]
    for decorator, read_in, read_at, of_class in decorators:
        expr = decorator.decorator
        if not isinstance(expr, cst.Call):
            continue
        callee = interp.eval(expr.func, read_in, read_at)
        if not isinstance(callee, Api) or (of_class and callee.name != "pytest.mark.parametrize"):
            continue
        cases = _cases(interp, callee.name, expr, read_in, read_at, param_names)
        if cases is None:
            continue
        if not cases or not all(cases):
            return []
        axes.extend(cases)
    return combine_axes(axes)


def combine_axes(axes: Sequence[Sequence[World]]) -> list[World]:
    """The worlds of a sweep over `axes`: all of them when there are at most
    `EXHAUSTIVE_WORLDS`, in the product's order; otherwise a pairwise covering set."""
    total = 1
    for axis in axes:
        total *= len(axis)
    if total <= EXHAUSTIVE_WORLDS:
        return [_joined((World(), *row)) for row in itertools.product(*axes)]
    return [_joined((World(), *(axes[i][v] for i, v in enumerate(row)))) for row in _pairwise_rows(tuple(len(a) for a in axes))]


def _joined(parts: Sequence[World]) -> World:
    world = parts[0]
    for part in parts[1:]:
        world = world.combine(part)
    return world


def _pairwise(sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """Rows (one value index per axis) in which every pair of values of two axes appears at
    least once; greedy and deterministic (AETG-style), at most `MAX_WORLDS` rows."""
    return list(_pairwise_rows(tuple(sizes)))


@functools.lru_cache(maxsize=64)
def _pairwise_rows(sizes: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """`_pairwise`, once per sizes: a sweep's rows depend on its sizes only, and both passes
    over the roots, and every test with the same sweep, share them."""
    k = len(sizes)
    if k == 1:
        return tuple((v,) for v in range(sizes[0]))[:MAX_WORLDS]
    uncovered: set[tuple[int, int, int, int]] = set()
    # How many uncovered pairs each (axis, value) is in: the first value of the next row.
    open_pairs: dict[tuple[int, int], int] = {(i, a): 0 for i in range(k) for a in range(sizes[i])}
    for i in range(k):
        for j in range(i + 1, k):
            for a in range(sizes[i]):
                for b in range(sizes[j]):
                    uncovered.add((i, a, j, b))
                    open_pairs[i, a] += 1
                    open_pairs[j, b] += 1
    rows: list[tuple[int, ...]] = []
    while uncovered and len(rows) < MAX_WORLDS:
        # Start from a value with the most uncovered pairs (the first such, in axis order),
        # then fill the other axes in order, each with the value that covers the most new pairs
        # with those already chosen.
        first = max(open_pairs, key=open_pairs.__getitem__)
        row: dict[int, int] = {first[0]: first[1]}
        for axis in range(k):
            if axis in row:
                continue
            best, best_gain = 0, -1
            for value in range(sizes[axis]):
                gain = sum(
                    1
                    for other, chosen in row.items()
                    if (min(axis, other), value if axis < other else chosen, max(axis, other), chosen if axis < other else value) in uncovered
                )
                if gain > best_gain:
                    best, best_gain = value, gain
            row[axis] = best
        chosen_row = tuple(row[i] for i in range(k))
        for i in range(k):
            for j in range(i + 1, k):
                pair = (i, chosen_row[i], j, chosen_row[j])
                if pair in uncovered:
                    uncovered.remove(pair)
                    open_pairs[i, chosen_row[i]] -= 1
                    open_pairs[j, chosen_row[j]] -= 1
        rows.append(chosen_row)
    return tuple(rows)


def _cases(
    interp: Machine,
    kind: str,
    call: cst.Call,
    frame: Frame,
    block: Block,
    param_names: Sequence[str],
) -> list[list[World]] | None:
    """The axes a decorator sweeps (one per keyword of a product; one for a list of cases);
    None when it is not a parameterization."""
    if kind not in _PRODUCT | _PARAMETERS | _NAMED | _PYTEST:
        return None
    args = interp.eval_args(call, frame, block)
    if not args.complete:
        return [[World(complete=False)]]
    if kind in _PRODUCT:
        return _product(args.positional, args.keywords)
    if kind in _PYTEST:
        cases_run = pytest_worlds(args.positional, args.keywords)
        return None if cases_run is None else [cases_run]
    cases: list[Value] = list(args.positional)
    if (
        len(cases) == 1
        and not (isinstance(cases[0], TupleVal) and not cases[0].is_list)
        and not isinstance(cases[0], DictVal)
    ):
        items = _items(cases[0])
        if items is None:
            return [[World(complete=False)]]
        cases = list(items)
    worlds: list[World] = []
    for case in cases:
        world = _case(case, param_names, named=kind in _NAMED)
        if world is None:
            return [[World(complete=False)]]
        worlds.append(world)
    return [worlds]


def _items(value: Value) -> tuple[Value, ...] | None:
    """A sweep's list or tuple of cases: absl's `product` asserts one (a dict, its `.keys()`
    fail when the class is defined), `parameters` takes a lone dict as one case."""
    return value.items if isinstance(value, TupleVal) else None


def binding(name: str, value: Value) -> WorldBinding:
    """A world's binding of a name to a value, labelled as the value was written."""
    label = value.name if isinstance(value, ClassVal) else None  # not its whole statement
    if label is None and value.origin is not None:
        try:
            label = value.origin.flat_code()
        except Exception:
            label = None
    if isinstance(value, Const) and (label is None or label.replace(".", "_").isidentifier()):
        # A constant reached through a name (a comprehension's loop variable): say its value.
        label = repr(value.value)
    if label is None:
        label = "?"
    return WorldBinding(name, label, value.origin)


def keyword_world(pairs: Sequence[tuple[str, Value]]) -> World:
    """A world binding each name to its value by keyword, each a named binding."""
    return World(
        keywords=tuple(pairs),
        bindings=tuple(binding(k, v) for k, v in pairs),
        complete=True,
    )


def _product(positional: Sequence[Value], keywords: dict[str, Value]) -> list[list[World]] | None:
    axes: list[list[World]] = []
    for alternatives in positional:
        items = _items(alternatives)
        if items is None:
            return [[World(complete=False)]]
        axis: list[World] = []
        for item in items:
            if not isinstance(item, DictVal):
                return [[World(complete=False)]]
            axis.append(keyword_world(item.items))
        axes.append(axis)
    for name, values in keywords.items():
        items = _items(values)
        if items is None:
            return [[World(complete=False)]]
        axes.append([keyword_world([(name, v)]) for v in items])
    return axes or [[World(complete=True)]]


def _case(case: Value, param_names: Sequence[str], named: bool) -> World | None:
    if isinstance(case, DictVal):
        pairs = [(k, v) for k, v in case.items if k != "testcase_name"]
        return keyword_world(pairs)
    if isinstance(case, TupleVal):
        values = list(case.items)
        if named:
            values = values[1:]
    else:
        if named:
            return None
        values = [case]
    if len(values) > len(param_names):
        return None
    bindings = tuple(binding(n, v) for n, v in zip(param_names, values, strict=False))
    return World(positional=tuple(values), bindings=bindings, complete=True)


def pytest_worlds(positional: Sequence[Value], keywords: dict[str, Value]) -> list[World] | None:
    """The worlds of `pytest.mark.parametrize(argnames, argvalues, indirect=...)`'s arguments
    (or `metafunc.parametrize`'s)."""
    argnames = positional[0] if positional else keywords.get("argnames")
    argvalues = positional[1] if len(positional) > 1 else keywords.get("argvalues")
    if argnames is None or argvalues is None:
        return [World(complete=False)]
    if isinstance(argnames, Const) and isinstance(argnames.value, str):
        names = [n.strip() for n in argnames.value.split(",") if n.strip()]
    elif isinstance(argnames, TupleVal) and all(
        isinstance(i, Const) and isinstance(i.value, str) for i in argnames.items
    ):
        names = [i.value for i in argnames.items if isinstance(i, Const)]
    else:
        return [World(complete=False)]
    indirect = keywords.get("indirect")
    if indirect is None or (isinstance(indirect, Const) and indirect.value in (False, True)):
        to_fixtures = set(names) if indirect is not None and indirect.value is True else set()
    elif isinstance(indirect, TupleVal) and all(isinstance(i, Const) for i in indirect.items):
        to_fixtures = {i.value for i in indirect.items if isinstance(i, Const)}
    else:
        return [World(complete=False)]
    items = _items(argvalues)
    if items is None:
        return [World(complete=False)]
    worlds: list[World] = []
    for item in items:
        values: Sequence[Value]
        if isinstance(item, ParamSet):
            if item.skipped is not False:
                continue  # `pytest.param(..., marks=pytest.mark.skip)`, or a skip not known not to
            if len(names) == 1:
                if len(item.items) != 1:
                    return [World(complete=False)]
                item = item.items[0]  # `pytest.param(jnp.int8, id="s8")`: the value itself
        if len(names) == 1:
            values = [item]
        else:
            inner = _items(item)
            if inner is None or len(inner) != len(names):
                return [World(complete=False)]
            values = inner
        pairs = list(zip(names, values, strict=True))
        # pytest passes only the named arguments; the others come from fixtures (`indirect`
        # ones given these values as their `request.param`).
        world = keyword_world([(n, v) for n, v in pairs if n not in to_fixtures])
        worlds.append(World(world.positional, world.keywords, tuple(binding(n, v) for n, v in pairs), complete=False,
                            indirect=tuple((n, v) for n, v in pairs if n in to_fixtures)))
    return worlds


__all__ = ["MAX_WORLDS", "Api", "World", "worlds_for"]
