"""Property test: grad of random programs with if/for/while/break vs finite differences."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from srcjax.testing import programs

pytestmark = pytest.mark.usefixtures("x64")


@settings(
    max_examples=200, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_programs_grad_matches_finite_differences(seed, tmp_path_factory):
    rng = np.random.default_rng(seed)
    prog = programs.generate(rng)
    x = rng.normal(size=3)
    problem = programs.check_program(prog, x, str(tmp_path_factory.getbasetemp()))
    assert problem is None, problem


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_programs_jit_matches_eager(seed, tmp_path_factory):
    rng = np.random.default_rng(seed)
    prog = programs.generate(rng)
    x = rng.normal(size=3)
    problem = programs.check_jit(prog, x, str(tmp_path_factory.getbasetemp()))
    assert problem is None, problem


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_programs_with_updates_eager_matches_transformed(seed, tmp_path_factory):
    """Programs with .at updates and augmented assignment (to the argument too),
    called directly on an Array: the value jit and value_and_grad give, grad vs
    finite differences, and the caller's argument unchanged (issue 16)."""
    rng = np.random.default_rng(seed)
    prog = programs.generate(rng, updates=True)
    x = rng.normal(size=3)
    where = str(tmp_path_factory.getbasetemp())
    problem = programs.check_program(prog, x, where) or programs.check_eager(prog, x, where)
    assert problem is None, problem


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_programs_vmap_matches_a_loop(seed, tmp_path_factory):
    # examples take different branches and trip counts; vmap(grad) included
    rng = np.random.default_rng(seed)
    prog = programs.generate(rng)
    xs = rng.normal(size=(4, 3))
    problem = programs.check_vmap(prog, xs, str(tmp_path_factory.getbasetemp()))
    assert problem is None, problem


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_programs_vmap_of_reverse_over_reverse_matches_a_loop(seed, tmp_path_factory):
    # vmap(grad(<grad(f), v>)): second-order tapes pushed and popped in masked branches
    rng = np.random.default_rng(seed)
    prog = programs.generate(rng)
    xs = rng.normal(size=(4, 3))
    v = rng.normal(size=3)
    problem = programs.check_vmap_hvp(prog, xs, v, str(tmp_path_factory.getbasetemp()))
    assert problem is None, problem
