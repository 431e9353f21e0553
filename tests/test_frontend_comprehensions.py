"""srcjax/frontend/normalize/comprehensions.py: comprehensions become loops into a
fresh list or dict (or are unrolled over items known now). Oracle: the normalized
function returns what Python's comprehension gives."""

import numpy as np
import pytest
from frontend_run import assert_same, normalized_text

import srcjax.numpy as jnp

SCALES = [1.0, 2.0, 3.0]


def list_comp(x):
    return [x * i for i in range(4)]


def filtered(x):
    return [x + i for i in range(6) if i % 2 == 0]


def dict_comp(x):
    return {k: x * v for k, v in zip(["a", "b", "c"], [1.0, 2.0, 3.0])}


def over_a_list_argument(xs):
    return [jnp.sin(v) for v in xs]


def shadowing(x):
    v = 10.0
    ys = [v * 2.0 for v in [x, x + 1.0]]
    return ys, v  # the comprehension's v is its own


def result_name_reused(xs):
    xs = [2.0 * v for v in xs]
    return xs


def over_a_global_list(x):
    return [s * x for s in SCALES]


def nested_use(x):
    rows = [[x * i * j for j in range(2)] for i in range(3)]
    return rows


X = np.array([0.25, -1.5])


@pytest.mark.parametrize(
    "f, args",
    [
        (list_comp, (X,)),
        (filtered, (X,)),
        (dict_comp, (X,)),
        (over_a_list_argument, ([X, 2 * X],)),
        (shadowing, (X,)),
        (result_name_reused, ([X, X + 1],)),
        (over_a_global_list, (X,)),
        (nested_use, (X,)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_desugared_comprehension_gives_pythons_values(f, args):
    assert_same(f, *args)


def test_a_comprehension_is_a_loop_appending_to_a_fresh_list():
    text = normalized_text(list_comp)
    assert "for " in text and ".append(" in text
    assert "[x * i for" not in text  # no comprehension is left


def two_fors(x):
    return [x * i * j for i in range(2) for j in range(i + 1) if i != j or j == 0]


def test_several_generators_are_nested_loops():
    # (refused before: "comprehensions with several `for`"); a later iterable
    # reads the earlier loop variable, the condition both
    assert_same(two_fors, np.array([1.0, 2.0]))
    assert normalized_text(two_fors).count("for ") == 2
