"""srcjax/frontend/normalize/at_updates.py: ``x.at[idx].<mode>(v)`` normalized to
the ``ad.at_<mode>`` primitives, or by JAX's definitions (subtract, divide,
power, apply, get). The oracle: the same update written with NumPy on a copy."""

import numpy as np
import pytest
from frontend_run import normalized_text, run_normalized

import srcjax.numpy as jnp
from srcjax.errors import UnsupportedSyntaxError

X = np.array([0.5, -1.25, 2.0, 4.0])
IDX = np.array([1, 1, 3])  # a duplicate index: JAX accumulates (add, multiply)


def f_set(x):
    return x.at[2].set(7.0)


def f_add_dup(x):
    return x.at[IDX].add(1.5)


def f_subtract(x):
    return x.at[0].subtract(3.0)


def f_multiply_dup(x):
    return x.at[IDX].multiply(2.0)


def f_divide(x):
    return x.at[1:3].divide(4.0)


def f_power(x):
    return x.at[3].power(2.0)


def f_apply(x):
    return x.at[0].apply(jnp.abs)


def f_get(x):
    return x.at[1].get()


def f_get_fill(x):
    return x.at[9].get(mode="fill", fill_value=-1.0)


def _numpy(update):
    y = X.copy()
    update(y)
    return y


CASES = [
    (f_set, _numpy(lambda y: y.__setitem__(2, 7.0))),
    (f_add_dup, _numpy(lambda y: np.add.at(y, IDX, 1.5))),
    (f_subtract, _numpy(lambda y: y.__setitem__(0, y[0] - 3.0))),
    (f_multiply_dup, _numpy(lambda y: np.multiply.at(y, IDX, 2.0))),
    (f_divide, _numpy(lambda y: y.__setitem__(slice(1, 3), y[1:3] / 4.0))),
    (f_power, _numpy(lambda y: y.__setitem__(3, y[3] ** 2.0))),
    (f_apply, _numpy(lambda y: y.__setitem__(0, abs(y[0])))),
    (f_get, X[1]),
    (f_get_fill, -1.0),
]


@pytest.mark.parametrize("f, want", CASES, ids=[f.__name__ for f, _ in CASES])
def test_each_mode_computes_numpys_update(f, want):
    got = run_normalized(f, jnp.asarray(X.copy()))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_subtract_is_add_of_the_negation_and_get_is_an_index():
    assert "ad.at_add" in normalized_text(f_subtract)
    assert "ad.at_" not in normalized_text(f_get)  # x[1]: a plain index


def test_an_unknown_keyword_is_a_located_error():
    def f(x):
        return x.at[0].set(1.0, bogus=True)

    with pytest.raises(UnsupportedSyntaxError, match="bogus") as e:
        normalized_text(f)
    assert "test_frontend_at_updates.py" in str(e.value)


def test_an_unknown_mode_method_is_a_located_error():
    def f(x):
        return x.at[0].frobnicate(1.0)

    with pytest.raises(UnsupportedSyntaxError, match="frobnicate"):
        normalized_text(f)
