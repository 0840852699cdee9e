"""The registry of library models and how their arguments are bound (`analysis/host.py`)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mmalint.analysis import models  # noqa: F401  (fills the registry)
from mmalint.analysis.host import REGISTRY, Args, Bound, Signature
from mmalint.analysis.prefilter import may_contain_mma
from mmalint.analysis.values import NONE, UNKNOWN, Const, TupleVal, Value

ANALYSIS = Path(__file__).resolve().parents[2] / "mmalint" / "analysis"


def _args(*positional: Value, complete: bool = True, **keywords: Value) -> Args:
    return Args(list(positional), dict(keywords), [None] * len(positional), {}, complete)


def test_every_model_has_a_signature() -> None:
    assert REGISTRY.models, "importing mmalint.analysis.models registers the models"
    for name, entry in REGISTRY.models.items():
        assert isinstance(entry.signature, Signature), name
    for name in ("jnp.zeros", "mgpu.mma", "plgpu.mma", "mgpu.MMALayouts", "functools.partial", "builtins.range"):
        assert name in REGISTRY.models


def test_pattern_models() -> None:
    assert REGISTRY.model_for("ir.F32Type.get") is not None
    assert REGISTRY.model_for("ir.Float8E4M3FNType.isinstance") is not None
    assert REGISTRY.model_for("plgpu.Layout.MMA_LHS") is not None
    assert REGISTRY.model_for("ir.NoSuchType.get") is None
    assert REGISTRY.model_for("jnp.no_such_api") is None


def test_binding_by_name() -> None:
    signature = Signature.parse("(shape, dtype=None, m_warps=4, ..., *, layout, is_signed=True)")
    bound = Bound(_args(Const((8,)), Const("int8")), signature)
    assert bound["shape"] == Const((8,))
    assert bound["dtype"] == Const("int8")
    assert bound["m_warps"] == Const(4)  # the default
    assert bound["layout"] is UNKNOWN  # keyword-only without a default
    assert bound["is_signed"] == Const(True)
    assert bound.given("dtype") and not bound.given("m_warps") and not bound.given("layout")


def test_a_keyword_wins_over_its_position() -> None:
    bound = Bound(_args(Const(1), Const(2), dtype=Const("f32")), Signature.parse("(shape, dtype)"))
    assert bound["dtype"] == Const("f32")
    assert bound.given("dtype")


def test_unexpanded_star_arguments_make_positional_defaults_unknown() -> None:
    # `f(*xs)` with xs unknown may have passed anything: a positional default is not a fact,
    # a keyword-only one still is (as the models always read them).
    signature = Signature.parse("(shape, dtype=None, *, layout=None)")
    bound = Bound(_args(Const(1), complete=False), signature)
    assert bound["dtype"] is UNKNOWN
    assert bound["layout"] == NONE


def test_extra_arguments_are_ignored() -> None:
    bound = Bound(_args(Const(1), Const(2), Const(3), other=Const(4)), Signature.parse("(a, b)"))
    assert (bound["a"], bound["b"]) == (Const(1), Const(2))


def test_argument_nodes_by_name() -> None:
    import libcst as cst

    node = cst.parse_expression("jnp.int8")
    args = Args([Const(1)], {"dtype": Const("int8")}, [None], {"dtype": node})
    bound = Bound(args, Signature.parse("(shape, dtype)"))
    assert bound.node("dtype") is node
    assert bound.node("shape") is None


def test_tuple_defaults() -> None:
    assert Signature.parse("(inout_shape=())").defaults["inout_shape"] == TupleVal(())


@pytest.mark.parametrize("text", ["shape, dtype", "(a, a)", "(1x)"])
def test_bad_signatures_fail_at_registration(text: str) -> None:
    with pytest.raises(ValueError):
        Signature.parse(text)


def test_an_unknown_parameter_name_is_a_bug() -> None:
    with pytest.raises(KeyError):
        Bound(_args(), Signature.parse("(a)"))["b"]


def test_the_prefilter_words_come_from_the_models() -> None:
    assert REGISTRY.trigger_words
    assert may_contain_mma(b"out = mgpu.mma(acc, a, b)")
    assert may_contain_mma(b"layouts = mgpu.MMALayouts(jnp.int8)")
    assert may_contain_mma(b"out = mgpu.wgmma(acc, a, b)")  # the wgmma family's trigger
    assert may_contain_mma(b"tcgen05.mma(d, a, b)")  # the tcgen05 family's trigger


def test_the_warp_level_api_names_live_in_its_model() -> None:
    """Inside the analysis only the mma model module (and names.py's module paths) spell them."""
    holders = []
    for path in ANALYSIS.rglob("*.py"):
        if path.name == "model_words.py":
            continue  # the registry's words, written out by its generator
        literals = {
            node.value
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        }
        if literals & {"mgpu.mma", "plgpu.mma"}:
            holders.append(path.relative_to(ANALYSIS).as_posix())
    assert holders == ["models/mosaic/mma.py"]


def test_the_interpreter_imports_no_model() -> None:
    for path in (ANALYSIS / "interpreter").glob("*.py"):
        text = path.read_text()
        assert "analysis.models" not in text, path.name


def test_models_do_not_import_the_interpreter() -> None:
    for path in (ANALYSIS / "models").rglob("*.py"):
        assert "analysis.interpreter" not in path.read_text(), path.name


def test_a_resolver_registered_after_a_lookup_is_asked_too() -> None:
    # `Registry.resolve` keeps, per name, the resolvers whose prefix it starts with.
    from mmalint.analysis.host import resolver

    name = "mmalint_test_only.module.thing"
    assert REGISTRY.resolve(name) is None
    count = len(REGISTRY.resolvers)
    resolver("mmalint_test_only.")(lambda asked: Const(asked))
    try:
        assert REGISTRY.resolve(name) == Const(name)
    finally:
        del REGISTRY.resolvers[count:]
        REGISTRY._resolver_cache.clear()
    assert REGISTRY.resolve(name) is None
