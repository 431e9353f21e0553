"""jit follows a list's length through a loop that appends to it once a trip
(``transforms/optimize/loop_facts.py``: ``grown_lists``, a scan's stacked
outputs) only where nothing else changes that list (``sole_growths``). Found by
helper u3 (session 17): an append before or after the loop, or a list bound
outside an enclosing loop and grown in each of its trips, made jit fold the
stack's length from the display and the loop alone (18 for Python's 24, 40.5
for Python's 67.5, silent). Oracles: the function run as plain Python (the
list's length is Python's), and the closed form in each test's comment."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

X = np.float32(1.5)


def _append_before(x):
    ys = []
    ys.append(x)
    for k in range(3):
        ys.append(x * k)
    st = jnp.stack(ys)
    return jnp.sum(st * st.shape[0])


def _append_after(x):
    ys = []
    for k in range(3):
        ys.append(x * k)
    ys.append(x)
    st = jnp.stack(ys)
    return jnp.sum(st * st.shape[0])


def _grown_in_each_outer_trip(x):
    ys = []
    s = 0.0
    for _ in range(2):
        for k in range(3):
            ys.append(x * k)
        st = jnp.stack(ys)
        s = s + jnp.sum(st * st.shape[0])
    return s


def _reversed_after_append(x):
    ys = []
    for k in range(3):
        ys.append(x * k)
    ys.append(x)
    st = jnp.stack(ys[::-1])
    return jnp.sum(st * st.shape[0] * jnp.arange(st.shape[0]))


def _fresh_in_each_outer_trip(x):
    s = 0.0
    for _ in range(2):
        ys = []
        for k in range(3):
            ys.append(x * k)
        st = jnp.stack(ys[::-1])
        s = s + jnp.sum(st * st.shape[0] * jnp.arange(st.shape[0]))
    return s


@pytest.mark.parametrize(
    "fn, want",
    [
        (_append_before, 24.0),  # (x + 0 + x + 2x) * 4 at x = 1.5
        (_append_after, 24.0),  # (0 + x + 2x + x) * 4
        (_grown_in_each_outer_trip, 67.5),  # 3x * 3 + 6x * 6
        (_reversed_after_append, 24.0),  # stack [x, 2x, x, 0] * 4 * [0, 1, 2, 3]
        (_fresh_in_each_outer_trip, 9.0),  # 2 * (stack [2x, x, 0] * 3 * [0, 1, 2])
    ],
)
def test_jit_follows_a_grown_list_only_where_nothing_else_changes_it(fn, want):
    assert float(fn(X)) == pytest.approx(want)  # (the oracle is right)
    np.testing.assert_allclose(float(srcjax.jit(fn)(X)), want, rtol=1e-6)
