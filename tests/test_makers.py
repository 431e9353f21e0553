"""Rule makers (srcjax.primitives.makers): the rules one maker gives a family,
inlined through closure cells, against finite differences."""

from __future__ import annotations

import numpy as np

import srcjax
import srcjax.numpy as jnp
from srcjax.primitives.registry import by_public

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
