"""Fuzzing on a small fixed budget, in CI: generated programs and mutated kernels.

The longer campaign (100k programs, crash-isolated) is `benchmarks/fuzz.py`.
"""

from __future__ import annotations

import pytest
from _fuzz import check_one, in_kernel, mutations
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

hypothesmith = pytest.importorskip("hypothesmith")

MUTANTS = 800
PROGRAMS = 200


@pytest.mark.parametrize("seed", range(4))
def test_token_mutations_of_the_examples(seed: int) -> None:
    failures = [(name, f) for name, text in mutations(MUTANTS // 4, seed)
                if (f := check_one(name, text)) is not None]
    assert failures == []


@settings(max_examples=PROGRAMS, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(program=hypothesmith.from_grammar() | hypothesmith.from_node(), where=st.integers(0, 1))
def test_generated_programs_in_a_kernel(program: str, where: int) -> None:
    text = in_kernel(program)[where]
    assert check_one("generated.py", text) is None
