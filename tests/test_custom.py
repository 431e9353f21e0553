"""custom_jvp / custom_vjp: user rules are used by every mode and show in the source."""

import numpy as np
import pytest
from helpers import assert_close, fd_grad

import srcjax
import srcjax.numpy as jnp

pytestmark = pytest.mark.usefixtures("x64")


@srcjax.custom_jvp
def log1pexp(x):
    return jnp.log(1.0 + jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,) = primals
    (x_dot,) = tangents
    ans = log1pexp(x)
    return ans, (1 - 1 / (1 + jnp.exp(x))) * x_dot


def test_custom_jvp_stays_finite_where_the_naive_derivative_overflows():
    srcjax.config.update("jax_enable_x64", False)  # float32, as in JAX's docs
    assert_close(srcjax.grad(log1pexp)(100.0), 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        naive = srcjax.grad(lambda x: jnp.log(1.0 + jnp.exp(x)))(100.0)
    assert not np.isfinite(naive)  # exp(100) overflows float32: why the rule exists
    srcjax.config.update("jax_enable_x64", True)
    out, t = srcjax.jvp(log1pexp, (3.0,), (2.0,))
    assert_close(t, 2.0 / (1 + np.exp(-3.0)))


def uses_log1pexp(x):
    return jnp.sum(log1pexp(x) * x)


def test_custom_jvp_inside_a_function_and_in_source():
    x = np.array([0.5, -1.0, 2.0])
    assert_close(srcjax.grad(uses_log1pexp)(x), fd_grad(uses_log1pexp, x))
    from srcjax.api_fwd import _jvp_function

    fn, _ = _jvp_function(uses_log1pexp, ("leaf",), False, False)
    assert "rule(" in fn.__srcjax_source__  # forward mode calls the user's rule
    assert "custom.log1pexp" in srcjax.source(srcjax.grad(uses_log1pexp))


@srcjax.custom_jvp
def smooth_abs(x, eps):
    return jnp.sqrt(x * x + eps)


smooth_abs.defjvps(lambda x_dot, ans, x, eps: x_dot * x / ans, None)


def test_defjvps():
    x = np.array([0.3, -2.0])
    f = lambda x: jnp.sum(smooth_abs(x, 0.1))  # noqa: E731
    assert_close(srcjax.grad(f)(x), x / np.sqrt(x * x + 0.1))


@srcjax.custom_vjp
def clip_gradient(x, lo, hi):
    return x


def _clip_fwd(x, lo, hi):
    return x, (lo, hi)


def _clip_bwd(res, g):
    lo, hi = res
    return (jnp.clip(g, lo, hi), None, None)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def test_custom_vjp_used_by_grad():
    f = lambda x: jnp.sum(clip_gradient(x, -0.5, 0.5) * jnp.array([3.0, 0.1]))  # noqa: E731
    assert_close(srcjax.grad(f)(np.array([1.0, 2.0])), [0.5, 0.1])


def test_custom_vjp_forward_mode_raises():
    with pytest.raises(srcjax.errors.NoDerivativeRuleError):
        srcjax.jvp(lambda x: clip_gradient(x, -1.0, 1.0), (1.0,), (1.0,))
