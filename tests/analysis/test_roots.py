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


def test_a_method_that_makes_an_object_of_its_class_is_a_root() -> None:
    # Run blind, `gram` hands the object it makes to `_contract`, which calls the MMA method on
    # it: a finding there (held-out kernel, an accumulator splatted wrongly) comes only this way.
    assert roots('''
        import jax.experimental.mosaic.gpu as mgpu

        class QTile:
            def __init__(self, array):
                self.array = array

            def matmul(self, other, acc):
                return mgpu.mma(acc, self.array, other.array)

            def gram(self, other):
                lhs = QTile(self.array)
                return _contract(lhs, other)

        def _contract(lhs, rhs):
            return lhs.matmul(rhs, None)
    ''') == {"matmul", "gram"}


def test_a_method_that_only_returns_the_object_it_makes_is_no_root() -> None:
    # jax's `fragmented_array.py`: 53 methods `return FragmentedArray(...)` and nothing else of
    # the object; run as a root, each hands it to no caller, so no method of it runs there.
    assert roots('''
        import jax.experimental.mosaic.gpu as mgpu

        class QTile:
            def __init__(self, array):
                self.array = array

            def matmul(self, other, acc):
                return mgpu.mma(acc, self.array, other.array)

            def transposed(self):
                return QTile(self.array.T)

            def negated(self):
                if self.array is None:
                    return QTile(None)
                return QTile(-self.array)

            def doubled(self):
                return self.negated()
    ''') == {"matmul"}


def test_an_object_used_after_it_is_made_keeps_its_maker_a_root() -> None:
    found = roots('''
        import jax.experimental.mosaic.gpu as mgpu

        class QTile:
            def __init__(self, array):
                self.array = array

            def matmul(self, other, acc):
                return mgpu.mma(acc, self.array, other.array)

            def squared(self, acc):
                return QTile(self.array).matmul(self, acc)

            def in_a_tuple(self):
                return (QTile(self.array), 1)

            def through_a_closure(self):
                def make():
                    return QTile(self.array)
                return _contract(make(), self)

            def through_a_lambda(self):
                return _contract((lambda: QTile(self.array))(), self)

            def as_a_default(self, tile=QTile(None)):
                return tile

        def _contract(lhs, rhs):
            return lhs.matmul(rhs, None)

        def module_level_maker():
            tile = QTile(None)
            return _contract(tile, tile)
    ''')
    assert found == {"matmul", "squared", "in_a_tuple", "through_a_closure", "through_a_lambda",
                     "as_a_default", "module_level_maker"}


def test_a_class_whose_construction_leads_to_the_api_keeps_every_maker() -> None:
    # Making the object runs `__init__`: a maker that only returns it still binds its arguments.
    assert roots('''
        import jax.experimental.mosaic.gpu as mgpu

        class Product:
            def __init__(self, acc, a, b):
                self.out = mgpu.wgmma(acc, a, b)

        def product(acc, a, b):
            return Product(acc, a, b)
    ''') == {"__init__", "product"}
