"""Errors of JAX's types. Forward mode through a custom_vjp function is JAX's TypeError (fresh-user bug
F4-E1: it was only a NoDerivativeRuleError, a NotImplementedError, so ``except
TypeError`` code ported from JAX missed it)."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax.errors import NoDerivativeRuleError


@srcjax.custom_vjp
def clip_gradient(lo, hi, x):
    return x


def _fwd(lo, hi, x):
    return x, (lo, hi)


def _bwd(res, g):
    lo, hi = res
    return (None, None, jnp.clip(g, lo, hi))


clip_gradient.defvjp(_fwd, _bwd)


def through(x):
    return clip_gradient(-1.0, 1.0, x) * 3.0


def test_jvp_of_custom_vjp_is_type_error():
    with pytest.raises(TypeError, match="forward-mode autodiff") as info:
        srcjax.jvp(through, (2.0,), (1.0,))
    assert isinstance(info.value, NoDerivativeRuleError)  # as before
    assert "test_jax_error_types.py:31" in str(info.value)  # located at the call
    with pytest.raises(TypeError):
        srcjax.jacfwd(through)(np.float32(2.0))


def test_reverse_mode_still_uses_the_rule():
    # d/dx 3*x is 3; the custom rule clips the incoming cotangent 3 to 1
    assert float(srcjax.grad(through)(2.0)) == 1.0


# ---------------------------------------------------------------- F4-E3: JAX's argument errors
def _times(x, y):
    return x * y


def test_grad_argnums_beyond_the_call_is_type_error():
    with pytest.raises(TypeError, match="requires at least 3 positional arguments"):
        srcjax.grad(_times, argnums=2)(1.0, 2.0)


def test_jit_donate_argnums_beyond_the_call_is_value_error():
    f = srcjax.jit(lambda x: x * 2.0, donate_argnums=(5,))
    with pytest.raises(ValueError, match=r"donate_argnums=\(5,\), but only accepts 1 positional"):
        f(1.0)
    ok = srcjax.jit(lambda x, y: x * y, donate_argnums=(1,))
    assert float(ok(2.0, np.ones((), np.float32))) == 2.0
