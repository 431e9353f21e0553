"""Rule makers (srcjax.primitives.makers, srcjax.primitives.ad.linear): the
rules one maker gives a family, inlined through closure cells, against finite
differences."""

from __future__ import annotations

import numpy as np

import srcjax
import srcjax.numpy as jnp
from srcjax.primitives.registry import by_public
from srcjax.transforms.rules import call_rule

X = np.random.default_rng(0).normal(size=(3, 4))


def _loss(w):
    return jnp.sum(jnp.tanh(jnp.dot(X, w) + X @ w) ** 2)


def test_bilinear_helpers_get_their_rules_from_the_maker():
    for name in ("ad.matmul_left", "ad.matmul_right", "ad.dot_left", "ad.dot_right"):
        p = by_public(name)
        rules = list(p.vjps.values()) + list(p.jvps.values())
        assert len(rules) == 4
        assert all(r.__qualname__.startswith("def_bilinear_cotangents.") for r in rules)
    assert set(by_public("ad.matmul_left").vjps) == {"g", "b"}
    assert set(by_public("ad.dot_right").jvps) == {"g", "a"}


def test_second_derivatives_through_maker_rules_match_finite_differences(x64):
    # the Hessian differentiates the gradient's matmul_left/dot_left calls,
    # whose rules are the maker's closures
    w = np.linspace(-0.5, 0.5, 4)
    h = np.asarray(srcjax.hessian(_loss)(w))
    grad = srcjax.grad(_loss)
    eps = 1e-6
    fd = np.stack(
        [
            (np.asarray(grad(w + eps * e)) - np.asarray(grad(w - eps * e))) / (2 * eps)
            for e in np.eye(4)
        ]
    )
    np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-8)
    hf = np.asarray(srcjax.jacfwd(srcjax.grad(_loss))(w))  # through the jvp rules
    np.testing.assert_allclose(hf, fd, rtol=1e-6, atol=1e-8)


def test_products_get_their_rules_from_def_bilinear():
    for name in ("jnp.dot", "jnp.matmul", "jnp.inner", "jnp.vdot"):
        p = by_public(name)
        assert set(p.jvps) == {"a", "b"}
        assert all(r.__qualname__.startswith("def_bilinear.") for r in p.jvps.values())
    for name in ("jnp.dot", "jnp.matmul"):  # their vjps are the BLAS helpers
        assert all(
            r.__qualname__.startswith("def_bilinear.") for r in by_public(name).vjps.values()
        )


def test_def_bilinear_jvps_match_finite_differences(x64):
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(2, 3)), rng.normal(size=3)
    ta, tb = rng.normal(size=(2, 3)), rng.normal(size=3)
    for f in (jnp.dot, jnp.matmul, jnp.inner, lambda p, q: jnp.vdot(p[0], q)):
        _, tangent = srcjax.jvp(f, (a, b), (ta, tb))
        eps = 1e-6
        fd = (
            np.asarray(f(a + eps * ta, b + eps * tb)) - np.asarray(f(a - eps * ta, b - eps * tb))
        ) / (2 * eps)
        np.testing.assert_allclose(np.asarray(tangent), fd, rtol=1e-7, atol=1e-9)


def test_window_gather_and_scatter_are_each_others_transpose(x64):
    # <scatter(h), t> == <h, gather(t)>, and each one's vjp is the other one
    gather, scatter = by_public("ad.window_gather"), by_public("ad.window_scatter")
    rng = np.random.default_rng(2)
    operand = rng.permutation(10).reshape(2, 5) * 1.0
    rest = (operand, True, (2, 2), (1, 2), ((0, 1), (1, 0)), (1, 1), (1, 1))
    t = rng.normal(size=operand.shape)
    g_t = np.asarray(gather.impl(t, *rest))
    h = rng.normal(size=g_t.shape)
    s_h = np.asarray(scatter.impl(h, *rest))
    np.testing.assert_allclose(np.sum(s_h * t), np.sum(h * g_t), rtol=1e-12)
    np.testing.assert_allclose(
        np.asarray(call_rule(gather.vjps["x"], gather, h, g_t, t, *rest)), s_h, rtol=1e-12
    )
    np.testing.assert_allclose(
        np.asarray(call_rule(scatter.vjps["x"], scatter, t, s_h, h, *rest)), g_t, rtol=1e-12
    )
    np.testing.assert_allclose(
        np.asarray(call_rule(gather.jvps["x"], gather, t, g_t, t, *rest)), g_t, rtol=1e-12
    )


def _percentile_loss(a, q):
    return jnp.sum(jnp.percentile(a, q, axis=1) ** 2)


def test_a_makers_constant_inlines_as_its_literal(x64):
    # percentile's rules are quantile's with the closure constant scale=100.0
    for name, scale in (("jnp.quantile", "1.0"), ("jnp.percentile", "100.0")):
        rules = list(by_public(name).vjps.values()) + list(by_public(name).jvps.values())
        assert all(r.__qualname__.startswith("_def_quantile_rules.") for r in rules)
    a = np.array([[0.3, 1.2, -0.5, 2.0], [0.1, 0.7, -1.1, 0.4]])
    q = np.array([30.0, 60.0])
    grad = srcjax.grad(_percentile_loss, argnums=(0, 1))
    src = srcjax.source(grad, a, q)
    assert "ad.quantile_weights(q, ar, None or 'linear', 100.0)" in src
    ga, gq = grad(a, q)
    eps = 1e-6
    fd_q = [
        (_percentile_loss(a, q + eps * e) - _percentile_loss(a, q - eps * e)) / (2 * eps)
        for e in np.eye(2)
    ]
    np.testing.assert_allclose(np.asarray(gq), np.asarray(fd_q), rtol=1e-6)
    fd_a = (_percentile_loss(a + eps, q) - _percentile_loss(a - eps, q)) / (2 * eps)
    np.testing.assert_allclose(np.sum(np.asarray(ga)), fd_a, rtol=1e-6)


def test_jacobian_assembly_pairs_are_each_others_transpose(x64):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 3))
    for f_name, t_name, v in (
        ("ad.jac_from_columns", "ad.jac_to_columns", rng.normal(size=(6, 4))),
        ("ad.jac_from_rows", "ad.jac_to_rows", rng.normal(size=(6, 5))),
    ):
        f, f_t = by_public(f_name), by_public(t_name)
        for p in (f, f_t):
            rules = list(p.vjps.values()) + list(p.jvps.values())
            assert all(r.__qualname__.startswith("def_linear_map.") for r in rules), p.public
        fv = np.asarray(f.impl(v, x))
        h = rng.normal(size=fv.shape)
        np.testing.assert_allclose(np.sum(np.asarray(f_t.impl(h, x)) * v), np.sum(h * fv))
        np.testing.assert_allclose(
            np.asarray(call_rule(f.vjps["v"], f, h, fv, v, x)), f_t.impl(h, x)
        )


def _indexed_loss(x):
    return jnp.sum(jnp.sin(x[1:, ::2]) ** 3)


def test_linear_map_rules_take_the_operands_in_order_and_inline_spelled_out(x64):
    # ad.getitem / ad.index_adjoint get their rules from def_adjoint_pair: rules
    # over (g, ans, *operands), inlined as ad.index_adjoint(g, x, idx)
    for name in ("ad.getitem", "ad.index_adjoint"):
        rules = list(by_public(name).vjps.values()) + list(by_public(name).jvps.values())
        assert len(rules) == 2
        assert all(r.__qualname__.startswith("def_linear_map.") for r in rules)
    x = np.random.default_rng(4).normal(size=(3, 4))
    grad = srcjax.grad(_indexed_loss)
    src = srcjax.source(grad, x)
    assert "ad.index_adjoint(" in src
    assert "operands" not in src and "*(" not in src
    # the second derivative goes through index_adjoint's own (maker) rules
    hess = srcjax.hessian(_indexed_loss)
    eps = 1e-6
    got = np.asarray(hess(x)).reshape(12, 12)
    fd = np.stack(
        [
            (np.asarray(grad(x + eps * e)) - np.asarray(grad(x - eps * e))).ravel() / (2 * eps)
            for e in np.eye(12).reshape(12, 3, 4)
        ]
    )
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)


def test_linear_map_maker_refuses_a_keyword_only_operand():
    import pytest

    from srcjax.primitives.ad.linear import def_linear
    from srcjax.primitives.registry import Primitive

    def _scaled(x, *, k=2.0):
        """x * k (a test primitive, not registered)."""
        return x * k

    p = Primitive("ad.test_scaled_kwonly", _scaled, kind="internal")
    with pytest.raises(TypeError, match="keyword-only"):
        def_linear(p)
    assert not p.vjps and not p.jvps
