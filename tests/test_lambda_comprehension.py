"""A list of lambdas built by a comprehension over items known at
transformation time (fresh-user round 6, item 05: ``fs = [lambda v, j=j: v * j
for j in range(3)]`` was refused as 'a lambda used as a value'): the list
display of its lambdas, each with its item, as ``[lambda ..., lambda ...]``.
JAX 0.10.2: grad at 2.0 is 3.0, the value 6.0. A lambda reading the loop
variable late (``lambda v: v * j``: Python gives every lambda the last j) is
refused with the capture as a hint."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax.errors import UnsupportedSyntaxError


def weighted(x):
    fs = [lambda v, j=j: v * j for j in range(3)]
    return sum(f(x) for f in fs)


def over_a_tuple(x):
    fs = [lambda v, w=w: jnp.sin(v) * w for w in (0.5, 2.0)]
    total = 0.0
    for f in fs:
        total = total + f(x)
    return total


def late(x):
    fs = [lambda v: v * j for j in range(3)]  # noqa: B023 - (the late binding tested)
    return sum(f(x) for f in fs)


def test_values_and_gradients_as_jax():
    np.testing.assert_allclose(float(srcjax.grad(weighted)(2.0)), 3.0)
    np.testing.assert_allclose(float(srcjax.jit(weighted)(2.0)), 6.0)
    x = np.array([0.3, 1.1], np.float32)
    np.testing.assert_allclose(
        np.asarray(srcjax.vmap(srcjax.grad(over_a_tuple))(x)), 2.5 * np.cos(x), rtol=1e-6
    )
    np.testing.assert_allclose(np.asarray(srcjax.jit(over_a_tuple)(x)), 2.5 * np.sin(x), rtol=1e-6)


def test_late_binding_is_refused_at_the_lambda():
    assert late(2.0) == 12.0  # (Python: every lambda reads j == 2)
    with pytest.raises(UnsupportedSyntaxError) as info:
        srcjax.grad(late)(2.0)
    line = late.__code__.co_firstlineno + 1
    msg = str(info.value)
    assert f"{__file__}:{line}:11: each lambda built here reads `j`" in msg
    assert "lambda ..., j=j" in msg
