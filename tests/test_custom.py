"""custom_jvp / custom_vjp: user rules are used by every mode and show in the source."""

import re

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
    # reverse mode: the primal comes from the user's rule (JAX's semantics; see
    # test_custom_jvp_second_derivatives_differentiate_the_rule)
    assert "rule((x,)" in srcjax.source(srcjax.grad(uses_log1pexp))


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


# ---- higher derivatives go through the user's rules (fwd/bwd, jvp rule), as in JAX


@srcjax.custom_vjp
def vjp_sq(x):
    return x * x


def _vjp_sq_fwd(x):
    return x * x, x


def _vjp_sq_bwd(x, g):
    return (2.0 * x * g,)


vjp_sq.defvjp(_vjp_sq_fwd, _vjp_sq_bwd)


@srcjax.custom_vjp
def vjp_sin(x):
    return jnp.sin(x)


def _vjp_sin_fwd(x):
    return jnp.sin(x), jnp.cos(x)  # the residual depends on x: differentiated too


def _vjp_sin_bwd(cos_x, g):
    return (cos_x * g,)


vjp_sin.defvjp(_vjp_sin_fwd, _vjp_sin_bwd)


def _scaled_cube(k, x):
    return k * x**3


scaled_cube = srcjax.custom_vjp(_scaled_cube, nondiff_argnums=(0,))
scaled_cube.defvjp(lambda k, x: (k * x**3, x), lambda k, x, g: (3.0 * k * x * x * g,))


def _second_derivative_transforms(f):
    """Every composition that gives f'' of a scalar function, as scalar -> scalar."""
    gg = srcjax.grad(srcjax.grad(f))
    return {
        "grad(grad)": gg,
        "hessian": srcjax.hessian(f),
        "jacfwd(grad)": srcjax.jacfwd(srcjax.grad(f)),
        "jacrev(grad)": srcjax.jacrev(srcjax.grad(f)),
        "jit(grad(grad))": srcjax.jit(gg),
        "grad(jit(grad))": srcjax.grad(srcjax.jit(srcjax.grad(f))),
    }


def _check_second_derivatives(f, d2, xs):
    for name, t in _second_derivative_transforms(f).items():
        for x in xs:
            np.testing.assert_allclose(
                np.float64(t(x)), d2(x), rtol=1e-7, atol=1e-12, err_msg=f"{name} at {x}"
            )
    xs = np.asarray(xs, dtype=np.float64)
    assert_close(srcjax.vmap(srcjax.grad(srcjax.grad(f)))(xs), [d2(x) for x in xs], rtol=1e-7)
    assert_close(
        srcjax.jit(srcjax.vmap(srcjax.grad(srcjax.grad(f))))(xs), [d2(x) for x in xs], rtol=1e-7
    )


def _fd2(f, x, eps=1e-5):
    """float64 central difference of the analytic-free first derivative grad(f)."""
    g = srcjax.grad(f)
    return (float(g(x + eps)) - float(g(x - eps))) / (2 * eps)


def test_second_derivatives_of_a_custom_vjp_differentiate_its_bwd_rule():
    _check_second_derivatives(vjp_sq, lambda x: 2.0, [1.5, -0.3])
    # x * sq(x) = x^3: 6x (the bwd rule's output is not a constant)
    _check_second_derivatives(lambda x: x * vjp_sq(x), lambda x: 6.0 * x, [1.5, -0.3])
    # residuals computed by fwd are differentiated too: sin'' = -sin
    _check_second_derivatives(vjp_sin, lambda x: -np.sin(x), [0.7, 2.0])
    _check_second_derivatives(
        lambda x: vjp_sin(x) * x, lambda x: 2 * np.cos(x) - x * np.sin(x), [0.7]
    )
    for x in (0.7, 2.0):
        assert_close(srcjax.grad(srcjax.grad(vjp_sin))(x), _fd2(jnp.sin, x), rtol=1e-6)


def test_third_derivative_of_a_custom_vjp():
    d3 = srcjax.grad(srcjax.grad(srcjax.grad(vjp_sin)))
    assert_close(d3(0.7), -np.cos(0.7))
    assert_close(srcjax.grad(srcjax.grad(srcjax.grad(lambda x: x * vjp_sq(x))))(0.4), 6.0)


def test_second_derivatives_of_a_custom_vjp_with_nondiff_argnums():
    f = lambda x: scaled_cube(2.5, x)  # noqa: E731
    _check_second_derivatives(f, lambda x: 15.0 * x, [1.5, -0.3])
    h = srcjax.hessian(lambda x: jnp.sum(scaled_cube(2.0, x)))(np.array([1.0, -2.0]))
    assert_close(h, np.diag([12.0, -24.0]))
    assert_close(srcjax.grad(srcjax.grad(scaled_cube, 1), 1)(2.0, 0.5), 6.0)


def test_custom_vjp_hessian_of_a_vector_function():
    x = np.array([0.3, -1.2, 2.0])
    f = lambda x: jnp.sum(vjp_sin(x) * x)  # noqa: E731
    expect = np.diag(2 * np.cos(x) - x * np.sin(x))
    for h in (srcjax.hessian(f), srcjax.jacrev(srcjax.grad(f)), srcjax.jacfwd(srcjax.grad(f))):
        assert_close(h(x), expect)


def test_forward_mode_of_a_custom_vjp_still_raises_where_its_tangent_is_needed():
    with pytest.raises(srcjax.errors.NoDerivativeRuleError, match="custom_vjp"):
        srcjax.jacfwd(vjp_sq)(1.0)
    with pytest.raises(srcjax.errors.NoDerivativeRuleError, match="custom_vjp"):
        srcjax.jacfwd(lambda x: vjp_sq(x) * x)(1.0)


def _d2_log1pexp(x):
    s = 1.0 / (1.0 + np.exp(-x))
    return s * (1.0 - s)


def test_second_derivatives_of_a_custom_jvp_differentiate_its_jvp_rule():
    _check_second_derivatives(log1pexp, _d2_log1pexp, [0.0, 1.3, -2.0])
    _check_second_derivatives(
        lambda x: x * log1pexp(x),
        lambda x: 2.0 / (1.0 + np.exp(-x)) + x * _d2_log1pexp(x),
        [0.4, -1.1],
    )
    for x in (0.0, 1.3):
        assert_close(
            srcjax.grad(srcjax.grad(log1pexp))(x),
            _fd2(lambda x: jnp.log(1.0 + jnp.exp(x)), x),
            rtol=1e-6,
        )


def test_third_derivative_of_a_custom_jvp():
    s = 1.0 / (1.0 + np.exp(-0.3))
    d3 = s * (1 - s) * (1 - 2 * s)
    assert_close(srcjax.grad(srcjax.grad(srcjax.grad(log1pexp)))(0.3), d3)
    assert_close(srcjax.jacfwd(srcjax.grad(srcjax.grad(log1pexp)))(0.3), d3)


@srcjax.custom_jvp
def stable_log1pexp(x):
    return jnp.log(1.0 + jnp.exp(x))


@stable_log1pexp.defjvp
def _stable_log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return stable_log1pexp(x), srcjax.nn.sigmoid(x) * t  # finite derivatives at +-100


@pytest.mark.filterwarnings("ignore:overflow encountered")  # the primal log(1 + exp(100))
def test_custom_jvp_second_derivative_stays_finite_in_float32():
    srcjax.config.update("jax_enable_x64", False)
    f = stable_log1pexp
    assert_close(srcjax.grad(f)(100.0), 1.0)
    for name, t in _second_derivative_transforms(f).items():
        v = t(100.0)
        assert np.isfinite(v) and abs(float(v)) < 1e-30, (name, v)  # 3.7e-44, not NaN
        assert_close(t(1.0), _d2_log1pexp(1.0), rtol=1e-5)
    x = np.array([100.0, 0.0, -100.0], np.float32)
    v = srcjax.vmap(srcjax.grad(srcjax.grad(f)))(x)
    assert np.all(np.isfinite(v)) and v.dtype == np.float32
    assert_close(v, [0.0, 0.25, 0.0], atol=1e-7)
    # the rule matters: differentiating the primal formula itself gives NaN
    with np.errstate(over="ignore", invalid="ignore"):
        naive = srcjax.grad(srcjax.grad(lambda x: jnp.log(1.0 + jnp.exp(x))))(100.0)
    assert not np.isfinite(naive)


def _powk(k, x):
    return x**k


powk = srcjax.custom_jvp(_powk, nondiff_argnums=(0,))


@powk.defjvp
def _powk_jvp(k, primals, tangents):
    (x,), (t,) = primals, tangents
    return powk(k, x), k * x ** (k - 1) * t


def test_second_derivatives_of_a_custom_jvp_with_nondiff_argnums_and_defjvps():
    _check_second_derivatives(lambda x: powk(3.0, x), lambda x: 6.0 * x, [1.5, -0.4])
    assert_close(srcjax.grad(srcjax.grad(powk, 1), 1)(4.0, 0.5), 12 * 0.25)
    f = lambda x: smooth_abs(x, 0.1)  # noqa: E731  (defjvps rule: x_dot * x / ans)
    _check_second_derivatives(f, lambda x: 0.1 / (x * x + 0.1) ** 1.5, [0.3, -2.0])
    x = np.array([0.3, -2.0])
    h = srcjax.hessian(lambda x: jnp.sum(log1pexp(x) * x))(x)
    assert_close(h, np.diag(2.0 / (1.0 + np.exp(-x)) + x * _d2_log1pexp(x)))


@srcjax.custom_vjp
def _two_outputs(x, y):
    return x * y, x + y


def _two_fwd(x, y):
    return (x * y, x + y), (x, y)


def _two_bwd(r, ct):
    x, y = r
    a, b = ct
    return (a * y + b, a * x + b)


_two_outputs.defvjp(_two_fwd, _two_bwd)


def _uses_both_outputs(x):
    u, v = _two_outputs(x, x * x)
    return jnp.sum(u * v)


def test_custom_vjp_with_a_tuple_output_used_twice():
    """Both outputs of a tuple-valued custom_vjp read: the output's cotangent was
    joined with `+` (tuple concatenation) and the user's bwd got four items.
    Oracle: u*v = x^3 (x + x^2), derivative 4x^3 + 5x^4."""
    x = np.array([1.3, 0.7])
    want = 4 * x**3 + 5 * x**4
    assert_close(srcjax.grad(_uses_both_outputs)(x), want)
    assert_close(srcjax.vmap(srcjax.grad(_uses_both_outputs))(x[:, None])[:, 0], want)
    assert_close(srcjax.jit(srcjax.grad(_uses_both_outputs))(x), want)


@srcjax.custom_jvp
def _sin_cos(x):
    return jnp.sin(x), jnp.cos(x)


@_sin_cos.defjvp
def _sin_cos_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _sin_cos(x), (jnp.cos(x) * t, -jnp.sin(x) * t)


def _sin_times_cos(x):
    s, c = _sin_cos(x)
    return s * c


def test_vmap_of_a_tuple_valued_custom_function_returns_a_tuple():
    """vmap(custom_jvp returning (sin, cos)) stacked the pair into one (3, 2)
    array; vmap(grad) of a function unpacking it crashed. Oracles: NumPy, and
    d/dx sin(x) cos(x) = cos(2x)."""
    xs = np.array([0.1, 0.5, 1.3])
    s, c = srcjax.vmap(_sin_cos)(xs)
    assert_close(s, np.sin(xs))
    assert_close(c, np.cos(xs))
    assert_close(srcjax.vmap(srcjax.grad(_sin_times_cos))(xs), np.cos(2 * xs))


@srcjax.custom_jvp
def _slog(x):
    return jnp.log(x)


@_slog.defjvp
def _slog_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return jnp.log(x), t / (x + 1.0)  # deliberately not the true derivative 1/x


def _slog_squared(x):
    return _slog(x) ** 2


def test_custom_jvp_second_derivatives_differentiate_the_rule():
    """User E F18: second derivatives through a custom_jvp whose rule is not the
    true derivative differed from JAX (2.608 vs 6.553): JAX differentiates the
    rule's own primal computation (jnp.log: 1/x), srcjax applied the rule again.
    Values from JAX 0.10.2 at x = 0.3 (float32)."""
    srcjax.config.update("jax_enable_x64", False)
    try:
        x = np.float32(0.3)
        assert srcjax.grad(_slog_squared)(x) == pytest.approx(-1.8523, rel=1e-4)
        want = 6.553025  # 2/(x(x+1)) - 2 log(x)/(x+1)^2
        assert srcjax.grad(srcjax.grad(_slog_squared))(x) == pytest.approx(want, rel=1e-6)
        assert srcjax.hessian(_slog_squared)(x) == pytest.approx(want, rel=1e-6)
        assert srcjax.jacfwd(srcjax.jacfwd(_slog_squared))(x) == pytest.approx(want, rel=1e-6)
        got = srcjax.vmap(srcjax.grad(srcjax.grad(_slog_squared)))(np.array([0.3, 0.5], np.float32))
        np.testing.assert_allclose(got, [6.553025, 3.2827976], rtol=1e-6)
    finally:
        srcjax.config.update("jax_enable_x64", True)


# User B bug 5: a custom_vjp with several outputs, the loss using only one. Under
# grad(grad) and vmap(grad) the user's bwd got None for the unused output's
# cotangent (TypeError in the user's rule); JAX passes zeros of the output's
# shape and dtype. Analytic values.
@srcjax.custom_vjp
def _two(x):
    return x * 2.0, x * 3.0


def _two_fwd(x):
    return _two(x), None


def _two_bwd(res, ct):
    a, b = ct
    return (a * 2.0 + b * 3.0,)


_two.defvjp(_two_fwd, _two_bwd)


def _two_loss(x):
    return _two(x)[0] ** 2  # 4 x^2


@srcjax.custom_vjp
def _prod_sum(x, y):
    return x * y, x + y


def _prod_sum_fwd(x, y):
    return _prod_sum(x, y), (x, y)


def _prod_sum_bwd(res, ct):
    x, y = res
    a, b = ct
    return (a * y + b, a * x + b)


_prod_sum.defvjp(_prod_sum_fwd, _prod_sum_bwd)


@srcjax.custom_vjp
def _vec_total(x):
    return x * 2.0, jnp.sum(x)


def _vec_total_fwd(x):
    return _vec_total(x), None


def _vec_total_bwd(res, ct):
    a, b = ct  # a: zeros of shape (3,), else the result's shape is wrong
    return (a * 2.0 + b,)


_vec_total.defvjp(_vec_total_fwd, _vec_total_bwd)


def _vec_total_loss(x):
    return _vec_total(x)[1] ** 2  # (sum x)^2: gradient 2 sum(x), hessian 2


def test_custom_vjp_unused_output_cotangent_is_zeros():
    assert_close(srcjax.grad(_two_loss)(1.5), 12.0)
    assert_close(srcjax.grad(srcjax.grad(_two_loss))(1.5), 8.0)
    assert_close(srcjax.jit(srcjax.grad(srcjax.grad(_two_loss)))(1.5), 8.0)
    assert_close(srcjax.vmap(srcjax.grad(_two_loss))(jnp.arange(3.0)), [0.0, 8.0, 16.0])
    assert_close(srcjax.vmap(srcjax.grad(srcjax.grad(_two_loss)))(jnp.arange(3.0)), [8.0] * 3)
    loss = lambda x: _prod_sum(x, 2.0)[0]  # noqa: E731
    assert_close(srcjax.vmap(srcjax.grad(loss))(jnp.arange(3.0)), [2.0, 2.0, 2.0])
    loss2 = lambda x, y: _prod_sum(x, y)[0] ** 2  # noqa: E731  (x y)^2
    assert_close(srcjax.grad(srcjax.grad(loss2), argnums=1)(1.5, 2.0), 4 * 1.5 * 2.0)
    x = np.array([1.0, 2.0, -0.5])
    assert_close(srcjax.grad(_vec_total_loss)(x), [5.0] * 3)
    assert_close(srcjax.jacrev(srcjax.grad(_vec_total_loss))(x), np.full((3, 3), 2.0))
    assert_close(
        srcjax.vmap(srcjax.grad(_vec_total_loss))(np.stack([x, -x])), [[5.0] * 3, [-5.0] * 3]
    )


@srcjax.custom_vjp
def _dot_cvjp(x, y):
    return jnp.sum(x * y)


def _dot_fwd(x, y):
    return _dot_cvjp(x, y), (x, y)


def _dot_bwd_scalar(res, g):
    x, y = res
    return (jnp.sum(g * y), g * x)  # wrong: a scalar cotangent for a float32[3] input


_dot_cvjp.defvjp(_dot_fwd, _dot_bwd_scalar)


@srcjax.custom_vjp
def _dot_none(x, y):
    return jnp.sum(x * y)


_dot_none.defvjp(lambda x, y: (_dot_none(x, y), (x, y)), lambda res, g: (g * res[1], None))


def test_bwd_output_of_the_wrong_shape_is_a_value_error():
    """User H bug 2: a bwd returning a scalar for a vector input gave a scalar
    "gradient" (broadcast silently by an SGD update); JAX raises ValueError. Also
    under jit and vmap."""
    x, y = np.ones(3, np.float32), np.full(3, 2.0, np.float32)
    for t in (srcjax.grad(_dot_cvjp), srcjax.jit(srcjax.grad(_dot_cvjp))):
        with pytest.raises(ValueError, match=r"output\[0\].*float32\[\].*float32\[3\]"):
            t(x, y)
    with pytest.raises(ValueError, match="same shape"):
        srcjax.vmap(srcjax.grad(_dot_cvjp), in_axes=(0, None))(np.stack([x, x]), y)


def test_bwd_none_is_a_zero_cotangent():
    """A None from bwd was returned as a 0-d object array; JAX: zeros like the input."""
    x, y = np.ones(3, np.float32), np.full(3, 2.0, np.float32)
    gx, gy = srcjax.grad(_dot_none, argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, y)
    assert gy.dtype == np.float32 and gy.shape == (3,) and not gy.any()
    gx, gy = srcjax.vmap(srcjax.grad(_dot_none, argnums=(0, 1)), in_axes=(0, None))(
        np.stack([x, 2 * x]), y
    )
    assert gy.shape == (2, 3) and not gy.any()


@srcjax.custom_jvp
def _prod_none(x, y):
    return x * y


_prod_none.defjvps(lambda t, ans, x, y: t * y, None)


def test_defjvps_none_is_a_zero_tangent():
    """User I: defjvps(rule, None) raised 'no derivative rule' (None means a zero
    tangent for that argument in JAX). Values as JAX 0.10.2."""
    out, t = srcjax.jvp(_prod_none, (2.0, 3.0), (1.0, 1.0))
    assert (float(out), float(t)) == (6.0, 3.0)
    gx, gy = srcjax.grad(_prod_none, (0, 1))(2.0, 3.0)
    assert (float(gx), float(gy)) == (3.0, 0.0)
    g = srcjax.jit(srcjax.vmap(srcjax.grad(_prod_none, (0, 1))))(
        np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32)
    )
    np.testing.assert_array_equal(g[0], [3.0, 4.0])
    np.testing.assert_array_equal(g[1], [0.0, 0.0])


@srcjax.custom_jvp
def _sin_int_tangent(x):
    return jnp.sin(x)


@_sin_int_tangent.defjvp
def _sin_int_tangent_jvp(primals, tangents):
    (x,), _ = primals, tangents
    return _sin_int_tangent(x), jnp.int32(1)


def test_custom_jvp_integer_tangent_of_a_float_primal_raises():
    """User bug 06: an int32 tangent for a float32 primal was taken as is (jvp
    gave it back, grad gave 0.0). JAX 0.10.2: TypeError 'Custom JVP rule must
    produce primal and tangent outputs with corresponding shapes and dtypes.
    Expected float32[] (tangent type of float32[]) but got int32[].'"""
    msg = r"Custom JVP rule _sin_int_tangent_jvp \(test_custom.py:\d+\) for function "
    msg += r"_sin_int_tangent must produce primal and tangent outputs .* but got int32\[\]"
    for call in (
        lambda: srcjax.jvp(_sin_int_tangent, (np.float32(1.0),), (np.float32(1.0),)),
        lambda: srcjax.grad(_sin_int_tangent)(np.float32(1.0)),
        lambda: srcjax.jit(srcjax.grad(_sin_int_tangent))(np.float32(1.0)),
    ):
        with pytest.raises(TypeError, match=msg):
            call()


def _sin_with_tangent(name, tangent):
    """``jnp.sin`` as a custom_jvp whose rule ``<name>_jvp`` gives the tangent
    ``tangent(x, t)``."""

    def primal(x):
        return jnp.sin(x)

    def rule(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), tangent(x, t)

    primal.__name__, rule.__name__ = name, name + "_jvp"
    f = srcjax.custom_jvp(primal)
    f.defjvp(rule)
    return f


_sin_short_tangent = _sin_with_tangent("_sin_short", lambda x, t: jnp.cos(x)[:2] * t[:2])
_sin_f16_tangent = _sin_with_tangent("_sin_f16", lambda x, t: (jnp.cos(x) * t).astype(jnp.float16))
_sin_ok = _sin_with_tangent("_sin_ok", lambda x, t: jnp.cos(x) * t)


@srcjax.custom_jvp
def _pair_short_tangent(x, y):
    return jnp.sin(x), y * 2.0


@_pair_short_tangent.defjvp
def _pair_short_tangent_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return _pair_short_tangent(x, y), (jnp.cos(x) * tx, (ty * 2.0)[:1])


@srcjax.custom_jvp
def _sin_tuple_tangent(x):
    return jnp.sin(x)


@_sin_tuple_tangent.defjvp
def _sin_tuple_tangent_jvp(primals, tangents):
    return _sin_tuple_tangent(primals[0]), (tangents[0], tangents[0])


def _every_transform(f, x):
    """jvp, grad, jit(grad), vmap(grad) and vmap(jvp) of ``f`` at ``x`` (a
    vector): the custom_jvp rule runs in each."""
    loss = lambda v: jnp.sum(f(v))  # noqa: E731
    xs = jnp.stack([x, x + 1.0])
    return (
        lambda: srcjax.jvp(f, (x,), (jnp.ones_like(x),)),
        lambda: srcjax.grad(loss)(x),
        lambda: srcjax.jit(srcjax.grad(loss))(x),
        lambda: srcjax.vmap(srcjax.grad(loss))(xs),
        lambda: srcjax.vmap(lambda v: srcjax.jvp(f, (v,), (v,))[1])(xs),
    )


@pytest.mark.parametrize(
    "f, got, expected",
    [
        (_sin_short_tangent, "float32[2]", "float32[3]"),
        (_sin_f16_tangent, "float16[3]", "float32[3]"),
    ],
)
def test_custom_jvp_tangent_of_another_shape_or_dtype_is_jaxs_error_naming_the_rule(
    f, got, expected
):
    """Fresh-user bug (session 11): a custom_jvp rule whose tangent has the wrong
    shape was reported under grad as a vjp cotangent error ("unexpected
    shape/dtype of the cotangent passed to the function returned by vjp"), and
    jvp returned the short tangent. JAX 0.10.2 (recorded) raises in jvp, grad and
    vmap(grad): TypeError 'Custom JVP rule must produce primal and tangent outputs
    with corresponding shapes and dtypes. Expected float32[3] (tangent type of
    float32[3]) but got float32[2].' (float16[3] for the float16 tangent)."""
    rule = f.jvp_rule.__name__
    msg = (
        rf"Custom JVP rule {rule} \(test_custom.py:\d+\) for function {f.__name__} must "
        r"produce primal and tangent outputs with corresponding shapes and dtypes\. "
        rf"Expected {re.escape(expected)} \(tangent type of {re.escape(expected)}\) but got "
        rf"{re.escape(got)}\."
    )
    for call in _every_transform(f, jnp.array([0.5, 1.0, 2.0], jnp.float32)):
        with pytest.raises(TypeError, match=msg):
            call()


def test_custom_jvp_tangent_errors_for_several_outputs_and_another_structure():
    """JAX 0.10.2 (recorded): 'Custom JVP rule must produce primal and tangent
    outputs with corresponding shapes and dtypes, but got:\n  primal float32[2]
    with tangent float32[1], expecting tangent float32[2]', and 'Custom JVP rule
    g_jvp for function g must produce primal and tangent outputs with equal
    container (pytree) structures, but got PyTreeDef(*) and PyTreeDef((*, *))
    respectively.'"""
    x, y = jnp.array([0.5, 1.0, 2.0], jnp.float32), jnp.array([1.0, 2.0], jnp.float32)
    with pytest.raises(TypeError) as info:
        srcjax.jvp(_pair_short_tangent, (x, y), (x, y))
    assert "corresponding shapes and dtypes, but got:\n" in str(info.value)
    assert "  primal float32[2] with tangent float32[1], expecting tangent float32[2]" in str(
        info.value
    )
    assert "float32[3]" not in str(info.value)  # (the output that fits is not listed)
    with pytest.raises(TypeError, match="equal container \\(pytree\\) structures"):
        srcjax.grad(lambda v: jnp.sum(_sin_tuple_tangent(v)))(x)


def test_custom_jvp_tangent_check_keeps_good_rules_under_vmap():
    """The check runs per example under vmap: a correct rule still gives cos(x)
    (float64 oracle), also with an unbatched tangent in the rule's inputs."""
    xs = np.random.RandomState(0).rand(2, 3).astype(np.float32)
    g = srcjax.vmap(srcjax.grad(lambda v: jnp.sum(_sin_ok(v))))(xs)
    np.testing.assert_allclose(g, np.cos(xs.astype(np.float64)), rtol=1e-6)
    t = srcjax.vmap(lambda v: srcjax.jvp(_sin_ok, (xs[0],), (v,))[1])(xs)
    np.testing.assert_allclose(t, np.cos(xs[0].astype(np.float64)) * xs, rtol=1e-6)
