"""srcjax/frontend/normalize/inplace.py: in-place NumPy operations on traced
values are refused with JAX's error types (fresh-user bug, session 11: under
jit, grad and vmap they wrote into the caller's array and the result was
silently wrong). JAX 0.10.2, recorded: inside jax.jit ``np.add.at(x, i, 1)``,
``np.copyto(x, y)``, ``np.put(x, i, v)`` raise TypeError, ``np.sin(x, out=x)``
TracerArrayConversionError (a TypeError), ``x.fill(0)`` AttributeError; on a
jax.Array eagerly the same types (``'ArrayImpl' object has no attribute
'fill'``)."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

IDX = np.array([0, 1])


def add_at(x):
    np.add.at(x, IDX, 1.0)
    return x * 2


def fill(x):
    x.fill(0)
    return x + 1


def copyto(x):
    np.copyto(x, np.ones(3, np.float32))
    return x + 1


def out_kw(x):
    np.sin(x, out=x)
    return x + 1


def out_positional(x):
    np.add(x, 1.0, x)
    return x


def put(x):
    np.put(x, [0], 5.0)
    return x


def view_fill(x):
    v = x[1:]
    v.fill(0)  # a view of the argument: the caller's buffer too
    return x + 1


def clip_out(x):
    x.clip(0.0, 1.0, out=x)
    return x


def rng_shuffle(x):
    rng = np.random.default_rng(0)
    rng.shuffle(x)  # (a float32 argument reaches it as the caller's buffer)
    return x * 1.0


def dunder_iadd(x):
    x.__iadd__(1.0)
    return x * 1.0


def unbound_fill(x):
    np.ndarray.fill(x, 0.0)
    return x * 1.0


CASES = [
    (dunder_iadd, AttributeError, ".__iadd__", "x += y"),
    (unbound_fill, TypeError, "np.ndarray.fill", "jnp.full_like"),
    (rng_shuffle, TypeError, ".shuffle(x)", "random.permutation"),
    (add_at, TypeError, "np.add.at", "x.at[idx].add(v)"),
    (fill, AttributeError, ".fill", "jnp.full_like"),
    (copyto, TypeError, "np.copyto", "jnp.broadcast_to"),
    (out_kw, TypeError, "out=", "drop `out=`"),
    (out_positional, TypeError, "out=", "drop `out=`"),
    (put, TypeError, "np.put", "x.at["),
    (view_fill, AttributeError, ".fill", "jnp.full_like"),
    (clip_out, TypeError, "out=", "drop `out=`"),
]


def _transforms():
    return [
        ("jit", lambda f: srcjax.jit(f)),
        ("grad", lambda f: srcjax.grad(lambda x: f(x).sum())),
        ("vmap", lambda f: srcjax.vmap(f)),
    ]


@pytest.mark.parametrize("name, transform", _transforms())
@pytest.mark.parametrize("make", [jnp.array, lambda v: np.array(v, np.float32)])
@pytest.mark.parametrize("f, etype, what, hint", CASES)
def test_an_in_place_numpy_call_on_an_argument_is_refused_and_the_argument_kept(
    f, etype, what, hint, make, name, transform
):
    x = make([3.0, 1.0, 2.0])
    before = np.array(x, copy=True)
    with pytest.raises(etype) as info:
        transform(f)(x)
    message = str(info.value)
    assert what in message and hint in message
    assert f"test_frontend_inplace.py:{f.__code__.co_firstlineno + 1}" in message or (
        f"test_frontend_inplace.py:{f.__code__.co_firstlineno + 2}" in message
    )
    np.testing.assert_array_equal(np.asarray(x), before)  # the caller's array is unchanged


def host_scratch(x):
    y = np.zeros(3)
    np.add.at(y, np.array([0, 0, 2]), 1.0)  # a NumPy array JAX would not trace either
    return x * y


def host_fill(x):
    y = np.zeros(3)
    y.fill(3.0)
    return x + y


def traced_into_host(x):
    y = np.zeros(3, np.float32)
    np.add.at(y, IDX, x[0])  # a traced value written into a host array: refused too
    return y


def test_in_place_numpy_on_host_values_still_runs_in_numpy():
    x = np.array([3.0, 1.0, 2.0], np.float32)
    for _ in range(2):  # (a fresh scratch array each call)
        np.testing.assert_array_equal(srcjax.jit(host_scratch)(x), x * np.array([2.0, 0.0, 1.0]))
    np.testing.assert_array_equal(srcjax.jit(host_fill)(x), x + 3.0)
    g = srcjax.grad(lambda v: host_scratch(v).sum())(x)
    np.testing.assert_array_equal(g, [2.0, 0.0, 1.0])
    with pytest.raises(TypeError, match="np.add.at"):
        srcjax.jit(traced_into_host)(x)


def takes_out(x, out=None):
    return x * 2 if out is None else x * 2 + out


def user_out(x):
    return takes_out(x, out=x)


def test_a_user_function_with_an_out_parameter_is_not_numpy():
    x = np.array([3.0, 1.0, 2.0], np.float32)
    np.testing.assert_array_equal(srcjax.jit(user_out)(x), x * 3)


def test_eager_fill_on_an_array_is_jaxs_attribute_error():
    x = jnp.array([3.0, 1.0, 2.0])
    with pytest.raises(AttributeError, match="fill"):
        x.fill(0.0)
    with pytest.raises(TypeError, match="first operand must be array"):
        np.add.at(x, IDX, 1.0)  # JAX's message: NumPy takes no Array as a destination
    with pytest.raises(ValueError, match="read-only"):
        np.copyto(np.asarray(x), 0.0)  # np.asarray(x) is a read-only view
    np.testing.assert_array_equal(np.asarray(x), [3.0, 1.0, 2.0])
