"""The scan for module globals that code mutates, asked once per run of a module."""

from __future__ import annotations

import textwrap

from mmalint.analysis import reads
from mmalint.analysis.interpreter.core import _mutated_globals
from mmalint.analysis.source import index_source


def test_each_run_of_a_module_gets_the_same_answer_and_records_that_it_asked() -> None:
    source = index_source("m.py", textwrap.dedent('''
        import jax.numpy as jnp
        DTYPES = [jnp.int8]
        CONFIG = object()
        FIXED = 3

        def extend():
            DTYPES.append(jnp.uint8)
            CONFIG.dtype = jnp.int8
            jnp.int8 = None
    '''))
    expected = (frozenset({"DTYPES"}), frozenset({"CONFIG"}))
    for _ in range(2):
        # The language server reuses a result only if no run read a whole module's text: a
        # module's second run, answered from the first, has read it all the same.
        with reads.recording() as recorded:
            assert _mutated_globals(source) == expected
        assert recorded.mutation_scans
