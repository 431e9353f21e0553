"""Issue 17, the fresh user's round-5 programs (07f-07h): what made them slow.

- vmap of the einsum cotangent helpers (``ad.einsum_vjp_spec``,
  ``ad.einsum_vjp_consts``, ``ad.einsum_with_consts``) had no batching rule:
  per-example gradients of attention looped over the examples in Python;
- jit did not decide shape computations of constants (``D // nh`` as
  ``ad.floordiv``, ``ad.batch_shape``, ``ad.batch_perm``), a dtype given as a
  builtin (``jnp.ones(s, bool)``) or the einsum cotangent's spec, so everything
  after them stayed unknown and kept its run-time rank helpers.

Oracles: float64 NumPy (einsum cotangents written out by hand) and the eager
(unjitted) function; the generated source for what must be gone."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

import srcjax
import srcjax.numpy as jnp
from srcjax import lax


def _rng():
    return np.random.default_rng(5)


def _loss(a, b):
    return jnp.sum(jnp.einsum("hts,hsd->htd", a, b) ** 2)


def test_per_example_grad_of_an_einsum_has_no_loop_and_matches_numpy():
    rng = _rng()
    a = rng.normal(size=(3, 2, 4, 5)).astype(np.float32)  # 3 examples
    b = rng.normal(size=(2, 5, 6)).astype(np.float32)
    f = srcjax.vmap(srcjax.grad(_loss, argnums=(0, 1)), in_axes=(0, None))
    ga, gb = f(a, b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    out = np.einsum("nhts,hsd->nhtd", a64, b64)
    np.testing.assert_allclose(ga, np.einsum("nhtd,hsd->nhts", 2 * out, b64), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gb, np.einsum("nhtd,nhts->nhsd", 2 * out, a64), rtol=1e-5, atol=1e-5)
    src = srcjax.source(f, a, b)
    assert "for " not in src and "tree_row" not in src, src


def test_per_example_grad_through_a_repeated_label_uses_the_identity_constant():
    # 'ii->i' (a diagonal): the cotangent einsum needs an identity constant
    rng = _rng()
    m = rng.normal(size=(4, 3, 3)).astype(np.float32)
    w = rng.normal(size=(4, 3)).astype(np.float32)

    def diag_dot(m, w):
        return jnp.sum(jnp.einsum("ii->i", m) * w)

    g = srcjax.vmap(srcjax.grad(diag_dot))(m, w)
    want = np.stack([np.diag(r) for r in w])
    np.testing.assert_array_equal(g, want)
    assert "for " not in srcjax.source(srcjax.vmap(srcjax.grad(diag_dot)), m, w)


def _heads(x, w):
    T, D = x.shape
    nh = 2
    q = (x @ w).reshape(T, nh, D // nh).transpose(1, 0, 2)
    mask = jnp.tril(jnp.ones((T, T), bool))
    s = jnp.where(mask, jnp.einsum("htd,hsd->hts", q, q), -1e9)
    return jnp.sum(lax.rsqrt(1.0 + s**2))


def test_jit_decides_shape_helpers_of_constants_and_the_einsum_spec():
    rng = _rng()
    xb = rng.normal(size=(3, 5, 4)).astype(np.float32)
    w = (0.5 * rng.normal(size=(4, 4))).astype(np.float32)
    f = srcjax.vmap(srcjax.grad(_heads, argnums=1), in_axes=(0, None))
    jf = srcjax.jit(f)
    np.testing.assert_allclose(jf(xb, w), f(xb, w), rtol=1e-6, atol=1e-7)
    src = srcjax.source(jf, xb, w)
    code = "\n".join(line.split("#")[0] for line in src.splitlines())
    for gone in ("ad.floordiv(", "ad.batch_shape(", "ad.einsum_vjp_spec(", "ad.batch_perm("):
        assert gone not in code, (gone, src)
    # float64 finite differences of one example's gradient
    x0 = xb[1].astype(np.float64)
    w64 = w.astype(np.float64)

    def value(wv):
        q = (x0 @ wv).reshape(5, 2, 2).transpose(1, 0, 2)
        s = np.einsum("htd,hsd->hts", q, q)
        s = np.where(np.tril(np.ones((5, 5), bool)), s, -1e9)
        return np.sum(1.0 / np.sqrt(1.0 + s**2))

    eps = 1e-6
    fd = np.zeros_like(w64)
    for i in range(4):
        for j in range(4):
            d = np.zeros_like(w64)
            d[i, j] = eps
            fd[i, j] = (value(w64 + d) - value(w64 - d)) / (2 * eps)
    np.testing.assert_allclose(jf(xb, w)[1], fd, rtol=2e-3, atol=2e-4)


# -- p10b: a registered-class MLP and a named-tuple input, jit(grad(argnums=(0, 1)))


class _Point(NamedTuple):
    x: Any
    y: Any


@srcjax.tree_util.register_pytree_node_class
class _Linear:
    def __init__(self, w, b, name="lin"):
        self.w, self.b, self.name = w, b, name

    def __call__(self, x):
        y = x @ self.w + self.b
        return -y if self.name == "neg" else y

    def tree_flatten(self):
        return (self.w, self.b), self.name

    @classmethod
    def tree_unflatten(cls, aux, ch):
        return cls(*ch, name=aux)


def _pt_loss(layer, pt):
    return jnp.sum(jnp.tanh(layer(jnp.stack([pt.x, pt.y, pt.x * pt.y], -1))) ** 2)


def _pt_loss64(w, b, x, y, sign):
    z = sign * (np.stack([x, y, x * y], -1) @ w + b)
    return np.sum(np.tanh(z) ** 2)


def test_named_tuple_cotangents_are_decided_by_jit_and_match_finite_differences():
    rng = _rng()
    w = rng.normal(size=(3, 2)).astype(np.float32)
    b = rng.normal(size=2).astype(np.float32)
    pt = _Point(np.linspace(0, 1, 5, dtype=np.float32), np.linspace(1, 2, 5, dtype=np.float32))
    f = srcjax.jit(srcjax.grad(_pt_loss, argnums=(0, 1)))
    g_layer, g_pt = f(_Linear(w, b), pt)
    assert isinstance(g_pt, _Point) and isinstance(g_layer, _Linear)
    code = srcjax.source(f, _Linear(w, b), pt)
    assert "ad.attr_adjoint" not in code and "ad.tree_add" not in code, code
    args = [
        w.astype(np.float64),
        b.astype(np.float64),
        pt.x.astype(np.float64),
        pt.y.astype(np.float64),
    ]
    got = [g_layer.w, g_layer.b, g_pt.x, g_pt.y]
    eps = 1e-6
    for k, (a, g) in enumerate(zip(args, got)):
        fd = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            up = [v.copy() for v in args]
            dn = [v.copy() for v in args]
            up[k][i] += eps
            dn[k][i] -= eps
            fd[i] = (_pt_loss64(*up, 1.0) - _pt_loss64(*dn, 1.0)) / (2 * eps)
        np.testing.assert_allclose(g, fd, rtol=1e-4, atol=1e-5)


def test_a_static_string_attribute_is_part_of_the_jit_key():
    # the key holds the class's str/int/bool/None attributes by value instead of
    # its type tree (built every call before): another name specializes again
    rng = _rng()
    w = rng.normal(size=(3, 2)).astype(np.float32)
    b = rng.normal(size=2).astype(np.float32)
    pt = _Point(np.linspace(0, 1, 4, dtype=np.float32), np.linspace(1, 2, 4, dtype=np.float32))

    def total(layer, pt):  # (odd in the layer's sign)
        return jnp.sum(layer(jnp.stack([pt.x, pt.y, pt.x * pt.y], -1)))

    f = srcjax.jit(total)
    x64, y64 = pt.x.astype(np.float64), pt.y.astype(np.float64)
    w64, b64 = w.astype(np.float64), b.astype(np.float64)
    for name, sign in (("lin", 1.0), ("neg", -1.0), ("lin", 1.0)):
        got = f(_Linear(w, b, name), pt)
        want = sign * np.sum(np.stack([x64, y64, x64 * y64], -1) @ w64 + b64)
        np.testing.assert_allclose(got, want, rtol=1e-5)


def _split_heads(x, w, g):
    h = g[:, None] * x * lax.rsqrt(jnp.mean(x**2, axis=-1, keepdims=True))
    q, k, v = jnp.split(h @ w, 3, axis=-1)
    s = jnp.einsum("td,sd->ts", q, k) * v.sum()
    return jnp.sum(g * lax.rsqrt(1.0 + s**2))


def test_the_sparse_cotangent_of_a_split_is_typed_and_empty_constants_fold():
    # the cotangents of q, k, v reach a list with holes (None) first: jit's
    # abstract values follow ad.bgetitem_adjoint / tree_add / fill_none through
    # them, so what comes after (rank alignment of g's cotangent) is decided;
    # the einsums need no constants: ad.einsum_vjp_consts folds to ()
    rng = _rng()
    xb = rng.normal(size=(3, 4, 2)).astype(np.float32)
    w = (0.5 * rng.normal(size=(2, 6))).astype(np.float32)
    g = rng.normal(size=(4,)).astype(np.float32)
    f = srcjax.vmap(srcjax.grad(_split_heads, argnums=(1, 2)), in_axes=(0, None, None))
    jf = srcjax.jit(f)
    got, want = jf(xb, w, g), f(xb, w, g)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    code = "\n".join(line.split("#")[0] for line in srcjax.source(jf, xb, w, g).splitlines())
    # (the one rank query left is g[:, None]'s index adjoint, before the split;
    # without the holes the two after the split's cotangent were queried too)
    assert code.count("jnp.ndim(") <= 1 and "ad.einsum_vjp_consts(" not in code, code
    # float64 central differences of example 2's gradient in g
    x2, w64, g64 = xb[2].astype(np.float64), w.astype(np.float64), g.astype(np.float64)
    eps = 1e-6
    fd = np.zeros(4)
    for i in range(4):
        d = np.zeros(4)
        d[i] = eps
        fd[i] = (_split_heads64(x2, w64, g64 + d) - _split_heads64(x2, w64, g64 - d)) / (2 * eps)
    np.testing.assert_allclose(got[1][2], fd, rtol=1e-3, atol=1e-4)


def _split_heads64(x, w, g):
    h = g[:, None] * x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True))
    q, k, v = np.split(h @ w, 3, axis=-1)
    s = np.einsum("td,sd->ts", q, k) * v.sum()
    return np.sum(g / np.sqrt(1.0 + s**2))
