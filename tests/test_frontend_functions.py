"""srcjax/frontend/normalize/functions.py: functions as values (partials and
lambdas, lists of functions, lax.switch branches, factories returning local
functions). Oracle: the normalized function returns what Python returns."""

import functools

import numpy as np
import pytest
from frontend_run import assert_same, normalized

import srcjax.numpy as jnp
from srcjax import lax
from srcjax.frontend.normalize.functions import _is_lax_switch


def _scale(v, k):
    return v * k


def partial_call(x):
    g = functools.partial(_scale, k=3.0)
    return g(x)


def lambda_value(x):
    g = lambda v: v + 1.0  # noqa: E731
    return g(g(x))


def list_of_functions(x):
    fns = [jnp.sin, jnp.cos, lambda v: v * v]
    return [f(x) for f in fns]


def switch_branches(x, i):
    branches = [lambda v: v + 1.0, lambda v: v * 10.0, jnp.tanh]
    return lax.switch(i, branches, x)


def _make(k):
    def f(v):
        return v * k

    return f


def factory(x):
    g = _make(2.5)
    return g(x) + _make(-1.0)(x)


def chosen_by_a_branch(x, flag):
    if flag:
        act = jnp.tanh
    else:
        act = jnp.sin
    return act(x)


X = jnp.asarray(np.array([0.3, -0.7]))


@pytest.mark.parametrize(
    "f, args",
    [
        (partial_call, (X,)),
        (lambda_value, (X,)),
        (list_of_functions, (X,)),
        (switch_branches, (X, 0)),
        (switch_branches, (X, 1)),
        (switch_branches, (X, 2)),
        (factory, (X,)),
        (chosen_by_a_branch, (X, True)),
        (chosen_by_a_branch, (X, False)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_function_values_give_pythons_values(f, args):
    assert_same(f, *args)


def test_lax_switch_is_known_by_its_marker():
    assert _is_lax_switch(("found", lax.switch))
    assert not _is_lax_switch(("found", lax.cond))
    assert not _is_lax_switch(("local", "switch"))
    # a function list read only by lax.switch is not bound at run time
    norm = normalized(switch_branches)
    assert not any(
        callable(v) and getattr(v, "__name__", "") == "<lambda>" for v in norm.bindings.values()
    )
