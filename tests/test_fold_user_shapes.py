"""What jit's abstract interpretation knows in a vmapped attention block (user8
p01, a transformer block's ``jit(value_and_grad)``): a reshape's shape written
with a literal (``(T, 4, D // 4)``), an item of a boolean mask (``mask[None]``)
and ``jnp.var``'s cotangent scale (``ad.dof_scale``) were unknown, and with them
every abstract value after the first reshape: vmap's rank alignments
(``ad.expand_to_rank``, ``jnp.ndim``) and reverse mode's ``ad.unbroadcast``
stayed as calls in each step. Oracles: float64 central differences of the
function (the gradient), NumPy's variance formula, and the generated source for
what must be gone."""

from __future__ import annotations

import numpy as np

import srcjax
import srcjax.numpy as jnp


def _code(src: str) -> str:
    return "\n".join(line.split("#")[0] for line in src.splitlines())


def _norm(x, g):
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    return (x - mu) * srcjax.lax.rsqrt(var + 1e-5) * g


def _block(w, x, mask):
    T, D = x.shape
    h = _norm(x, w["g"])
    q = (h @ w["q"]).reshape(T, 2, D // 2).transpose(1, 0, 2)
    s = jnp.einsum("htd,hsd->hts", q, q)
    s = jnp.where(mask[None], s, -1e9)
    p = srcjax.nn.softmax(s, axis=-1)
    return jnp.einsum("hts,hsd->htd", p, q).transpose(1, 0, 2).reshape(T, D)


def _loss(w, xs):
    mask = jnp.tril(jnp.ones((xs.shape[1], xs.shape[1]), dtype=bool))
    out = srcjax.vmap(_block, in_axes=(None, 0, None))(w, xs, mask)
    return jnp.mean(out**2)


def test_vmapped_attention_gradient_folds_its_shapes(x64):
    rng = np.random.default_rng(0)
    w = {"g": 1 + 0.1 * rng.standard_normal(4), "q": rng.standard_normal((4, 4))}
    xs = rng.standard_normal((3, 5, 4))
    step = srcjax.jit(srcjax.value_and_grad(_loss))
    value, grad = step(w, xs)
    src = _code(srcjax.source(step, w, xs))
    for gone in ("ad.expand_to_rank", "jnp.ndim", "ad.dof_scale", "ad.batch_shape"):
        assert gone not in src, (gone, src)
    f = srcjax.jit(_loss)
    h = 1e-6
    for name, idx in (("g", (1,)), ("q", (2, 3)), ("q", (0, 0))):
        up = {k: np.array(v) for k, v in w.items()}
        dn = {k: np.array(v) for k, v in w.items()}
        up[name][idx] += h
        dn[name][idx] -= h
        fd = (float(f(up, xs)) - float(f(dn, xs))) / (2 * h)
        np.testing.assert_allclose(np.asarray(grad[name])[idx], fd, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(float(value), float(f(w, xs)), rtol=1e-12)


def _var_loss(x, d):
    return jnp.var(x, ddof=d)


def test_var_gradient_with_ddof_passed_in_is_not_baked_in():
    """``ddof`` given as an argument (a weak int under jit, its value unknown when
    the code is built): ``ad.dof_scale`` stays a call, and each call's gradient is
    ``2 (x - mean) / (n - ddof)``."""
    x = np.random.default_rng(1).standard_normal(5).astype(np.float32)
    g = srcjax.jit(srcjax.grad(_var_loss))
    for d in (0, 1, 2):
        want = 2 * (x.astype(np.float64) - x.mean()) / (5 - d)
        np.testing.assert_allclose(np.asarray(g(x, d)), want, rtol=1e-5, atol=1e-6)


def _gp_nll(params, x, y):
    ls, amp, noise = jnp.exp(params)
    d = jnp.sum((x[:, None, :] - x[None, :, :]) ** 2, -1)
    k = amp**2 * jnp.exp(-0.5 * d / ls**2) + (noise**2 + 1e-5) * jnp.eye(x.shape[0])
    chol = jnp.linalg.cholesky(k)
    sol = srcjax.scipy.linalg.solve_triangular
    alpha = sol(chol.T, sol(chol, y, lower=True), lower=False)
    n = x.shape[0]
    return 0.5 * y @ alpha + jnp.sum(jnp.log(jnp.diag(chol))) + 0.5 * n * jnp.log(2 * jnp.pi)


def test_gp_gradient_folds_its_triangular_helpers(x64):
    """user8 p04: ``0.5 * x.shape[0] * log(2 pi)`` (a known Python number times a
    weak scalar) left the loss, its seed and the whole gradient unknown; the
    triangular solve's rule helpers of static flags (ad.tri_flag, ad.maybe_mT(x,
    False), ad.tri_rhs of known ranks) stayed calls."""
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 4, (8, 1))
    y = np.sin(x[:, 0]) + 0.1 * rng.standard_normal(8)
    params = np.array([0.1, -0.2, -1.0])
    step = srcjax.jit(srcjax.value_and_grad(_gp_nll))
    value, grad = step(params, x, y)
    src = _code(srcjax.source(step, params, x, y))
    for gone in ("ad.tri_flag", "ad.tri_conj", "ad.maybe_mT", "ad.maybe_conj", "ad.tri_rhs"):
        assert gone not in src, (gone, src)
    f = srcjax.jit(_gp_nll)
    h = 1e-6
    for i in range(3):
        e = np.zeros(3)
        e[i] = h
        fd = (float(f(params + e, x, y)) - float(f(params - e, x, y))) / (2 * h)
        np.testing.assert_allclose(np.asarray(grad)[i], fd, rtol=1e-6, atol=1e-8)
