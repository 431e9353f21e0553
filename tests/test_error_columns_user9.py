"""Run-time errors name the column of the failing operation where the user
spelled it otherwise than the generated code (user9's report, item 11): the
caret is under ``x.reshape(4, 4)``, ``@``, ``x[i]``, ``x.at[``, not under the
statement's first word."""

import pytest

import srcjax
import srcjax.numpy as jnp


def _note(excinfo):
    return "\n".join(getattr(excinfo.value, "__notes__", []))


def reshape_bad(x):
    return jnp.sum(jnp.tanh(x) + x.reshape(4, 4))  # a comment naming x.reshape(4, 4)


def matmul_bad(h, w):
    return h @ w


def index_bad(x, i):
    return x[i]


def test_caret_under_a_method_spelled_as_a_call():
    with pytest.raises(ValueError) as e:
        srcjax.grad(reshape_bad)(jnp.ones(15))
    assert ":17:34" in _note(e) or ":17:34" in str(e.value)


def test_caret_under_an_operator_and_a_subscript():
    with pytest.raises(TypeError) as e:
        srcjax.grad(lambda h, w: jnp.sum(matmul_bad(h, w)))(jnp.ones(3), jnp.ones((4, 4)))
    assert ":21:14" in _note(e)  # (grad's names differ: the caret under `@`)
    with pytest.raises(TypeError) as e:
        srcjax.jit(matmul_bad)(jnp.ones(3), jnp.ones((4, 4)))
    assert ":21:12" in _note(e)  # (jit writes `h @ w` as the user: the whole expression)
    with pytest.raises(TypeError) as e:
        srcjax.jit(index_bad)(jnp.arange(4.0), 1.0)
    assert ":25:12" in _note(e) + str(e.value)
