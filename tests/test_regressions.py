"""Regression tests: each failing input reported against srcjax, kept forever."""

import numpy as np
import pytest
from helpers import assert_close, fd_grad

import srcjax
import srcjax.numpy as jnp

pytestmark = pytest.mark.usefixtures("x64")
RNG = np.random.default_rng(3)


def test_transpose_attribute_is_differentiable():
    a = RNG.normal(size=(3, 4))
    f = lambda a: jnp.sum(a @ a.T)  # noqa: E731
    assert_close(srcjax.grad(f)(a), fd_grad(f, a))
    g = srcjax.grad(lambda x: jnp.sum(x.T * jnp.arange(3.0)))(np.ones((3, 4)))
    assert_close(g, np.repeat(np.arange(3.0)[:, None], 4, axis=1))


def test_builtin_min_max_list_dict_and_casts():
    g = srcjax.grad
    assert_close(g(lambda x: min(x, 2.0 * x))(1.0), 1.0)
    assert_close(g(lambda x: max(3.0, x * x))(2.0), 4.0)

    def f(x):
        ys = list([x, 2 * x])
        d = dict(a=x, b=x * x)
        return ys[0] + ys[1] + d["a"] + d["b"]

    assert_close(g(f)(1.0), 3.0 + 1.0 + 2.0)
    assert_close(g(lambda x: jnp.sum(jnp.stack(list(x * i for i in range(3)))))(1.0), 3.0)
    x = np.arange(3.0)
    assert_close(g(lambda x: jnp.sum(np.float64(x) ** 2))(x), 2 * x)


def test_unknown_builtins_on_active_values_raise():
    with pytest.raises(srcjax.errors.NoDerivativeRuleError):
        srcjax.grad(lambda x: divmod(x, 1.0)[1])(2.3)
    with pytest.raises(srcjax.errors.NoDerivativeRuleError):
        srcjax.grad(lambda x: float(x) * x)(2.0)


def test_at_with_slices():
    a = RNG.normal(size=(3, 4))
    e = a.copy()
    e[:, 0] += 1
    assert_close(srcjax.grad(lambda x: jnp.sum(x.at[:, 0].add(1.0) ** 2))(a), 2 * e)
    e = 2 * a
    e[1:3] = 0
    assert_close(srcjax.grad(lambda x: jnp.sum(x.at[1:3].set(0.0) ** 2))(a), e)


def with_default(x, scale=2.0):
    return x * scale


def test_default_arguments_at_top_level():
    assert_close(srcjax.grad(with_default)(3.0), 2.0)
    assert_close(srcjax.grad(with_default)(3.0, 5.0), 5.0)


def loop_sin(x):
    for _ in range(3):
        x = jnp.sin(x) * x
    return x


def test_second_order_through_loops_and_lists():
    d2 = srcjax.grad(srcjax.grad(loop_sin))
    assert_close(d2(0.7), fd_grad(srcjax.grad(loop_sin), np.array(0.7)), rtol=1e-5)
    f = lambda x: jnp.sum(jnp.stack([x, x * x]) ** 2)  # noqa: E731
    assert_close(srcjax.grad(srcjax.grad(f))(0.5), 2 + 12 * 0.25)


def helper(x):
    return 2.0 * x


def uses_helper(x):
    return helper(x)


def test_redefined_helper_is_picked_up():
    global helper
    g = srcjax.grad(uses_helper)
    assert_close(g(1.0), 2.0)
    old = helper
    try:

        def helper(x):  # noqa: F811 - the redefinition is the test
            return 7.0 * x

        assert_close(g(1.0), 7.0)
        assert_close(srcjax.grad(uses_helper)(1.0), 7.0)
    finally:
        helper = old


def test_has_aux_requires_a_pair():
    with pytest.raises(TypeError, match="pair"):
        srcjax.grad(lambda x: x * 2.0, has_aux=True)(1.0)
    with pytest.raises(TypeError, match="length 3"):
        srcjax.grad(lambda x: (x * 2.0, 1, 2), has_aux=True)(1.0)


def test_return_inside_for_loop():
    def f(x):
        for _ in range(10):
            x = x * 2.0
            if x > 3.0:
                return x
        return x

    assert_close(srcjax.grad(f)(1.0), 4.0)


def third_order_loop(x):
    y = x
    for _ in range(2):
        if y > 0:
            y = jnp.sin(y) * y
        else:
            y = -y * y
    n = 0
    while n < 2:
        y = y * 1.1
        n += 1
    return y


def test_third_derivative_through_loops_branches_and_tapes():
    d2 = srcjax.grad(srcjax.grad(third_order_loop))
    d3 = srcjax.grad(d2)
    eps = 1e-4
    assert_close(d3(0.7), (d2(0.7 + eps) - d2(0.7 - eps)) / (2 * eps), rtol=1e-6)
    assert_close(d3(-0.4), (d2(-0.4 + eps) - d2(-0.4 - eps)) / (2 * eps), rtol=1e-6)


def test_layer_loop_with_changing_shapes_inside_a_loop():
    # conformance 004: an inner loop whose values change shape between iterations
    def predict(params, inputs):
        for w, b in params:
            outputs = jnp.dot(inputs, w) + b
            inputs = jnp.tanh(outputs)
        return outputs

    def loss(params, inputs, targets):
        return jnp.sum((predict(params, inputs) - targets) ** 2)

    rng = np.random.default_rng(0)
    params = [
        (rng.normal(size=(3, 5)), rng.normal(size=5)),
        (rng.normal(size=(5, 2)), rng.normal(size=2)),
    ]
    xs, ts = rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    g = srcjax.grad(lambda p: sum(loss(p, x, t) for x, t in zip(xs, ts)))(params)
    w0 = params[0][0]
    fd = fd_grad(
        lambda w: sum(loss([(w, params[0][1]), params[1]], x, t) for x, t in zip(xs, ts)), w0
    )
    assert_close(g[0][0], fd, rtol=1e-5)


def test_transforms_of_lambdas_closing_over_locals_inside_transformed_code():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    Y = np.array([[1.0, 1.0], [-1.0, 0.5]])
    dots = srcjax.vmap(lambda x: srcjax.vmap(lambda y: jnp.dot(x, y))(Y))(X)
    assert_close(dots, X @ Y.T)

    def f(a, b):
        return jnp.sum(srcjax.grad(lambda z: jnp.sum(jnp.sin(z * a)))(b))

    b = np.array([1.0, 2.0])
    assert_close(srcjax.grad(f)(0.5, b), np.sum(np.cos(0.5 * b) - 0.5 * b * np.sin(0.5 * b)))
