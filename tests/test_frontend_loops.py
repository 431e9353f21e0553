"""srcjax/frontend/normalize/loops.py: for/while loops to normalized loops (index
loops over range, arrays, lists, zip and enumerate). Oracle: the normalized
function returns what the Python loop returns."""

import numpy as np
import pytest
from frontend_run import assert_same, normalized_text

import srcjax.numpy as jnp


def over_range(x, n):
    s = x * 0.0
    for i in range(n):
        s = s + x * i
    return s


def over_range_with_step(x):
    s = 0.0 * x
    for i in range(7, 1, -2):
        s = s + i * x
    return s


def over_rows(a):
    s = 0.0
    for row in a:
        s = s + jnp.sum(row * row)
    return s


def over_zip_and_enumerate(xs, ys):
    s = 0.0
    for i, (a, b) in enumerate(zip(xs, ys)):
        s = s + i * a * b
    return s


def while_loop(x):
    k = 0
    y = x
    while k < 5:
        y = y * 1.5
        k = k + 1
    return y, k


def loop_with_break(x):
    out = x
    for i in range(10):
        if i > 3:
            break
        out = out + i
    return out


def nested(x):
    s = 0.0 * x
    for i in range(3):
        for j in range(i):
            s = s + x * (i - j)
    return s


def target_read_after_loop(x):
    for i in range(4):
        x = x + 1.0
    return x * i


X = np.array([0.5, -2.0, 3.0])


@pytest.mark.parametrize(
    "f, args",
    [
        (over_range, (X, 4)),
        (over_range, (X, 0)),
        (over_range_with_step, (X,)),
        (over_rows, (np.arange(6.0).reshape(3, 2),)),
        (over_zip_and_enumerate, ([1.0, 2.0, 3.0], [0.5, 0.25, 4.0])),
        (while_loop, (X,)),
        (loop_with_break, (X,)),
        (nested, (X,)),
        (target_read_after_loop, (X,)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_normalized_loop_gives_pythons_values(f, args):
    assert_same(f, *args)


def test_iteration_becomes_an_index_loop():
    text = normalized_text(over_rows)
    assert "for " in text and " in range(" in text
    assert "for row in a" not in text
