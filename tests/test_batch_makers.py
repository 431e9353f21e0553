"""srcjax.primitives.batch_rules.makers: the rules the makers give a flagged
bilinear product and its two cotangent helpers, checked on fresh primitives
(the batched matmul's implementations) against a Python loop over the examples
and against the adjoint identity <left(g), h> == <g, left_vjp(h)>."""

import numpy as np
import pytest

from srcjax.primitives.batch_rules import runtime_products as rp
from srcjax.primitives.batch_rules.makers import (
    def_flagged_bilinear,
    def_flagged_bilinear_cotangents,
)
from srcjax.primitives.registry import Primitive
from srcjax.transforms.rules import call_rule

B = 3
rng = np.random.default_rng(0)


@pytest.fixture
def family():
    product = Primitive("ad.test_bmatmul", rp._bmatmul, kind="internal")
    left = Primitive("ad.test_bmatmul_left", rp._bmatmul_left, kind="internal")
    right = Primitive("ad.test_bmatmul_right", rp._bmatmul_right, kind="internal")
    def_flagged_bilinear(product, left, right)
    def_flagged_bilinear_cotangents(product, left, right)
    return product, left, right


def rows(x, batched):
    return [x[i] if batched else x for i in range(B)]


def dot(u, v):
    return float(np.sum(np.asarray(u) * np.asarray(v)))


# (a, b, ab, bb): every batching of a per-example matrix product
CASES = [
    (rng.normal(size=(B, 2, 4)), rng.normal(size=(4, 3)), True, False),
    (rng.normal(size=(2, 4)), rng.normal(size=(B, 4, 3)), False, True),
    (rng.normal(size=(B, 2, 4)), rng.normal(size=(B, 4, 3)), True, True),
    (rng.normal(size=(B, 4)), rng.normal(size=(4, 3)), True, False),
]


def test_the_rules_sit_on_the_parameters_they_differentiate(family):
    product, left, right = family
    assert set(product.vjps) == set(product.jvps) == {"a", "b"}
    assert set(left.vjps) == set(left.jvps) == {"g", "b"}  # `a` only gives the shape
    assert set(right.vjps) == set(right.jvps) == {"g", "a"}


@pytest.mark.parametrize("a, b, ab, bb", CASES)
def test_product_rules_match_a_loop_over_examples(family, a, b, ab, bb):
    product, _, _ = family
    y = rp._bmatmul(a, b, ab, bb)
    g = rng.normal(size=y.shape)
    ta, tb = rng.normal(size=a.shape), rng.normal(size=b.shape)
    # jvps: per example t_a @ b and a @ t_b
    want = np.stack([x @ w for x, w in zip(rows(ta, ab), rows(b, bb))])
    np.testing.assert_allclose(
        call_rule(product.jvps["a"], product, ta, y, a, b, ab, bb), want, rtol=1e-12
    )
    want = np.stack([x @ w for x, w in zip(rows(a, ab), rows(tb, bb))])
    np.testing.assert_allclose(
        call_rule(product.jvps["b"], product, tb, y, a, b, ab, bb), want, rtol=1e-12
    )
    # vjps: per example g @ b.T / a.T @ g, summed over the examples of an unbatched operand
    ga = [
        gi @ np.swapaxes(w, -1, -2) if w.ndim > 1 else np.outer(gi, w)
        for gi, w in zip(g, rows(b, bb))
    ]
    want = np.stack(ga) if ab else sum(ga)
    np.testing.assert_allclose(
        call_rule(product.vjps["a"], product, g, y, a, b, ab, bb), want, rtol=1e-12
    )
    gb = [
        np.swapaxes(x, -1, -2) @ gi if x.ndim > 1 else np.outer(x, gi)
        for x, gi in zip(rows(a, ab), g)
    ]
    want = np.stack(gb) if bb else sum(gb)
    np.testing.assert_allclose(
        call_rule(product.vjps["b"], product, g, y, a, b, ab, bb), want, rtol=1e-12
    )


@pytest.mark.parametrize("a, b, ab, bb", CASES)
def test_cotangent_helper_rules_are_their_transposes(family, a, b, ab, bb):
    _, left, right = family
    g = rng.normal(size=rp._bmatmul(a, b, ab, bb).shape)
    for helper, keep, kept in ((left, "b", b), (right, "a", a)):
        out = helper.impl(g, a, b, ab, bb)
        h = rng.normal(size=np.shape(out))
        t_g, t_k = rng.normal(size=g.shape), rng.normal(size=kept.shape)
        args = {"g": g, "a": a, "b": b}
        # linear in g and in the operand it keeps: the jvps are the helper itself
        moved = dict(args, g=t_g)
        want = helper.impl(moved["g"], moved["a"], moved["b"], ab, bb)
        np.testing.assert_allclose(
            call_rule(helper.jvps["g"], helper, t_g, out, g, a, b, ab, bb), want, rtol=1e-12
        )
        moved = dict(args, **{keep: t_k})
        want = helper.impl(moved["g"], moved["a"], moved["b"], ab, bb)
        np.testing.assert_allclose(
            call_rule(helper.jvps[keep], helper, t_k, out, g, a, b, ab, bb), want, rtol=1e-12
        )
        # vjps: <helper(g), h> == <g, vjp_g(h)> and the same in the kept operand (the vjp
        # in g ends in jnp.broadcast_to, which gives float32 without x64: rel 1e-6)
        lhs = dot(helper.impl(t_g, a, b, ab, bb), h)
        assert lhs == pytest.approx(
            dot(t_g, call_rule(helper.vjps["g"], helper, h, out, g, a, b, ab, bb)), rel=1e-6
        )
        moved = dict(args, **{keep: t_k})
        lhs = dot(helper.impl(moved["g"], moved["a"], moved["b"], ab, bb), h)
        rhs = dot(t_k, call_rule(helper.vjps[keep], helper, h, out, g, a, b, ab, bb))
        assert lhs == pytest.approx(rhs, rel=1e-10)
