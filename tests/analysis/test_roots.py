"""Which blocks the analysis runs: those that name an MMA API, and those that call them."""

from __future__ import annotations

import textwrap

from mmalint.analysis import find_roots, index_source


def roots(code: str) -> set[str | None]:
    source = index_source("snippet.py", textwrap.dedent(code))
    return {b.name for b in find_roots(source)}


def test_a_function_calling_the_api_and_its_callers_are_roots() -> None:
    assert roots('''
        import jax.experimental.mosaic.gpu as mgpu

        def body(acc, a, b):
            return mgpu.wgmma(acc, a, b)

        def kernel(acc, a, b):
            return body(acc, a, b)

        def unrelated():
            return 1
    ''') == {"body", "kernel"}


def test_a_comment_naming_the_api_makes_no_root() -> None:
    assert roots('''
        import jax.experimental.mosaic.gpu as mgpu

        def interpret(eqn):
            # GPU docs say (re: wgmma) that the accumulator is f32
            return eqn
    ''') == set()


def test_comment_and_code_on_one_line() -> None:
    found = roots('''
        import jax.experimental.mosaic.gpu as mgpu

        def commented(eqn):
            # mgpu.wgmma(acc, a, b)
            return eqn

        def quoted_hash(eqn):
            y = "#"; return mgpu.wgmma(eqn, eqn, eqn)
    ''')
    assert found == {"quoted_hash"}


def test_a_function_of_a_module_no_model_knows_makes_no_root() -> None:
    # jax's Pallas interpreter calls its own `gpu_callbacks.wgmma`, not the API.
    found = roots('''
        import functools
        from jax._src.pallas.mosaic_gpu.interpret import gpu_callbacks
        from jax.experimental.mosaic import gpu as mgpu

        def interpret_wgmma(eqn):
            return functools.partial(gpu_callbacks.wgmma, eqn)

        def real(acc, a, b):
            return mgpu.wgmma(acc, a, b)
    ''')
    assert found == {"real"}


def test_an_unknown_module_alias_shadowed_by_the_api_is_still_a_root() -> None:
    # `plgpu` is a modelled module however it is imported.
    found = roots('''
        from jax.experimental.pallas import mosaic_gpu as plgpu

        def body(acc_ref, a, b):
            plgpu.wgmma(acc_ref, a, b)
    ''')
    assert found == {"body"}


_TILE = '''
    import jax.experimental.mosaic.gpu as mgpu

    class Tile:
        def __init__(self, regs):
            self.regs = regs

        def store(self, ref):
            return mgpu.mma(self.regs, ref, ref)

        def neg(self):
            return Tile(-self.regs)

        def twice(self):
            return self.neg().neg()
{extra}
    def test_tile(ref):
        Tile(ref).store(ref)
'''


def test_a_method_that_only_hands_back_an_object_of_its_class_is_no_root() -> None:
    # Made blind, `neg`'s object goes to nobody; `twice`, which reaches it only through it, neither.
    assert roots(_TILE.format(extra="")) == {"store", "test_tile"}


def test_a_method_that_makes_one_and_calls_a_relevant_method_on_it_is_a_root() -> None:
    extra = '''
        def flipped(self, ref):
            out = Tile(self.regs)
            out.store(ref)
'''
    assert roots(_TILE.format(extra=extra)) == {"store", "flipped", "test_tile"}


def test_a_relevant_dunder_makes_every_maker_a_root() -> None:
    # An object runs `__add__` without naming it: each method that makes one may get there.
    extra = '''
        def __add__(self, other):
            return mgpu.mma(self.regs, other.regs, other.regs)
'''
    assert roots(_TILE.format(extra=extra)) == {"store", "neg", "twice", "__add__", "test_tile"}


def test_a_function_outside_the_class_that_makes_one_is_a_root() -> None:
    extra = '''
    def make(ref):
        return Tile(ref)
'''
    assert roots(_TILE.format(extra=extra)) == {"store", "make", "test_tile"}
