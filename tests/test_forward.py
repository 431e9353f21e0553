"""Forward mode and the differentiation API: jvp, linearize, vjp, jacfwd, jacrev,
hessian, and their compositions, against float64 finite differences."""

import numpy as np
import pytest
from helpers import assert_close, fd_grad

import srcjax
import srcjax.numpy as jnp

pytestmark = pytest.mark.usefixtures("x64")
RNG = np.random.default_rng(5)
EPS = 1e-6


def fd_jvp(f, x, v):
    return (f(x + EPS * v) - f(x - EPS * v)) / (2 * EPS)


def fd_jac(f, x):
    cols = [fd_jvp(f, x, e.reshape(x.shape)) for e in np.eye(x.size)]
    return np.stack(cols, -1).reshape(np.shape(f(x)) + x.shape)


def loopy(x):
    y = x
    for _ in range(3):
        if jnp.sum(y) > 0:
            y = jnp.sin(y) * x
        else:
            y = y * y
    n = 0
    while jnp.sum(y * y) < 4.0 and n < 5:
        y = y * 1.5 + 0.1
        n += 1
    return y


@pytest.mark.parametrize("seed", range(3))
def test_jvp_through_control_flow(seed):
    rng = np.random.default_rng(seed)
    x, v = rng.normal(size=3), rng.normal(size=3)
    out, out_dot = srcjax.jvp(loopy, (x,), (v,))
    assert_close(out, loopy(x))
    assert_close(out_dot, fd_jvp(loopy, x, v), rtol=1e-5)


def test_jvp_pytrees_and_has_aux():
    def f(p, x):
        h = jnp.tanh(x @ p["w"] + p["b"])
        return {"h": h, "s": jnp.sum(h)}, h.shape

    p = {"w": RNG.normal(size=(3, 2)), "b": RNG.normal(size=2)}
    t = {"w": RNG.normal(size=(3, 2)), "b": RNG.normal(size=2)}
    x = RNG.normal(size=(4, 3))
    out, out_dot, aux = srcjax.jvp(f, (p, x), (t, np.zeros_like(x)), has_aux=True)
    assert aux == (4, 2)
    want = fd_jvp(
        lambda s: f({"w": p["w"] + s * t["w"], "b": p["b"] + s * t["b"]}, x)[0]["s"], 0.0, 1.0
    )
    assert_close(out_dot["s"], want, rtol=1e-5)


def test_jvp_errors_as_jax():
    with pytest.raises(TypeError):
        srcjax.jvp(jnp.sin, 1.0, 1.0)
    with pytest.raises(ValueError):
        srcjax.jvp(lambda a, b: a * b, (1.0, 2.0), (1.0,))


def test_linearize():
    x, v = RNG.normal(size=3), RNG.normal(size=3)
    out, f_jvp = srcjax.linearize(loopy, x)
    assert_close(out, loopy(x))
    assert_close(f_jvp(v), fd_jvp(loopy, x, v), rtol=1e-5)


def test_vjp_and_transpose_identity():
    x, u, v = RNG.normal(size=3), RNG.normal(size=3), RNG.normal(size=3)
    out, vjp_fn = srcjax.vjp(loopy, x)
    (x_bar,) = vjp_fn(u)
    _, jv = srcjax.jvp(loopy, (x,), (v,))
    assert_close(np.dot(x_bar, v), np.dot(u, jv))


def test_jacobians_match_finite_differences():
    x = RNG.normal(size=3)
    j = fd_jac(loopy, x)
    assert_close(srcjax.jacfwd(loopy)(x), j, rtol=1e-5)
    assert_close(srcjax.jacrev(loopy)(x), j, rtol=1e-5)


def test_jacobian_structure_outer_output_inner_input():
    def f(a, b):
        return {"p": a * b[0], "q": jnp.sum(a) * b}

    a, b = RNG.normal(size=2), RNG.normal(size=3)
    for jac in (srcjax.jacfwd, srcjax.jacrev):
        ja, jb = jac(f, argnums=(0, 1))(a, b)["p"]
        assert ja.shape == (2, 2) and jb.shape == (2, 3)
        assert_close(ja, np.eye(2) * b[0])
        j = jac(f, argnums=1)(a, b)
        assert j["q"].shape == (3, 3)
        assert_close(j["q"], np.eye(3) * np.sum(a))


def lse_quad(x):
    return jnp.log(jnp.sum(jnp.exp(-0.5 * x * x + 0.3 * x)))


def test_hessian_vs_finite_differences():
    x = RNG.normal(size=5)
    h = srcjax.hessian(lse_quad)(x)
    g = srcjax.grad(lse_quad)
    want = np.stack([fd_jvp(g, x, e) for e in np.eye(5)], 1)
    assert_close(h, want, rtol=1e-5, atol=1e-7)
    assert_close(h, h.T, atol=1e-12)


def sin_x2(x):
    return jnp.sum(jnp.sin(x) * x * x)


def test_compositions():
    x, v = RNG.normal(size=3), RNG.normal(size=3)
    hv = srcjax.hessian(sin_x2)(x) @ v

    def gv(x):
        return srcjax.jvp(sin_x2, (x,), (v,))[1]

    assert_close(srcjax.grad(gv)(x), hv)  # grad of jvp
    assert_close(srcjax.jvp(srcjax.grad(sin_x2), (x,), (v,))[1], hv)  # jvp of grad
    assert_close(srcjax.jacfwd(srcjax.jacrev(sin_x2))(x), srcjax.hessian(sin_x2)(x))

    def h(x):
        g = srcjax.grad(sin_x2)(x)  # grad inside a differentiated function
        return jnp.sum(g * g)

    assert_close(srcjax.grad(h)(x), fd_grad(h, x), rtol=1e-5)
    out, vf = srcjax.vjp(lambda x: jnp.sin(x) * x, x)  # vjp of a vjp function
    u = RNG.normal(size=3)
    _, vf2 = srcjax.vjp(vf, u)
    assert_close(vf2((v,))[0], srcjax.jvp(lambda x: jnp.sin(x) * x, (x,), (v,))[1])


def test_source_of_jvp_interleaves_tangents():
    text = srcjax.source(srcjax.jacfwd(sin_x2))
    assert "ad.basis" in text
    from srcjax.api_fwd import _jvp_function

    fn, _ = _jvp_function(sin_x2, ("leaf",), False, False)
    src = fn.__srcjax_source__
    assert "x_dot" in src and "test_forward.py:" in src


def tanh_loop(x):
    y = x
    for _ in range(3):
        y = jnp.tanh(y * 1.3 + 0.2)
    return jnp.sum(y * y)


def test_hessian_through_a_loop():
    x = np.array([0.3, -0.5, 0.9])
    g = srcjax.grad(tanh_loop)
    want = np.stack([fd_jvp(g, x, e) for e in np.eye(3)], 1)
    assert_close(srcjax.hessian(tanh_loop)(x), want, rtol=1e-5, atol=1e-8)


def test_jacobians_with_has_aux():
    def f(x):
        return jnp.sin(x) * 2.0, {"n": x.shape[0]}

    x = RNG.normal(size=3)
    for jac in (srcjax.jacfwd, srcjax.jacrev):
        j, aux = jac(f, has_aux=True)(x)
        assert aux == {"n": 3}
        assert_close(j, np.diag(2 * np.cos(x)))
    h, aux = srcjax.hessian(lambda x: (jnp.sum(x**3), "aux"), has_aux=True)(x)
    assert aux == "aux"
    assert_close(h, np.diag(6 * x))


_X64_DATA = np.random.default_rng(0).normal(size=(5, 3))  # float64, as NumPy makes it


def test_jacrev_and_vjp_of_a_function_closing_over_float64_data():
    # User E bug 2: X @ v with float64 X is float64 (NumPy promotion, documented),
    # JAX types it float32; jacrev's float32 basis and a user's float32 cotangent
    # were refused as the wrong dtype. Cotangents are compared as JAX types them.
    srcjax.config.update("jax_enable_x64", False)  # (the module's fixture turns it on)
    w = np.ones(3, np.float32)
    jac = srcjax.jacrev(lambda v: _X64_DATA @ v)(w)
    np.testing.assert_allclose(jac, _X64_DATA, rtol=1e-6)
    ct = np.ones(5, np.float32)
    (g,) = srcjax.vjp(lambda v: _X64_DATA @ v, w)[1](ct)
    np.testing.assert_allclose(g, _X64_DATA.sum(axis=0), rtol=1e-6)
    with pytest.raises(ValueError, match="cotangent"):
        srcjax.vjp(lambda v: _X64_DATA @ v, w)[1](np.ones(4, np.float32))


def _hvp_loss(p, x):
    return srcjax.numpy.sum(srcjax.numpy.tanh(x @ p) ** 2)


@srcjax.jit
def _hvp_in_jit(p, x, v):
    return srcjax.jvp(srcjax.grad(lambda q: _hvp_loss(q, x)), (p,), (v,))[1]


def _sin_loss(q, x):
    return srcjax.numpy.sum(srcjax.numpy.sin(x * q) ** 2)


@srcjax.jit
def _second_in_jit(p, x):
    return srcjax.grad(srcjax.grad(lambda q: _sin_loss(q, x)))(p)


def _jvp_of_grad_lambda(p, x):
    return srcjax.numpy.sum(srcjax.jvp(srcjax.grad(lambda q: _sin_loss(q, x)), (p,), (x,))[1])


def test_transforms_of_lambdas_closing_over_locals_inside_transforms():
    """The Hessian-vector product idiom jvp(grad(lambda q: loss(q, x)), (p,), (v,))
    inside jit was refused ('needs a function known before the call'), and so was
    grad(grad(lambda ...)). The lambda's free variables now lead its parameters and
    the transforms leave them alone. Values recorded from JAX 0.10.2."""
    p = np.ones((3, 2), np.float32) * 0.1
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 6
    v = np.ones((3, 2), np.float32)
    want = [1.69745, 1.69745, 2.42827, 2.42827, 3.15909, 3.15909]
    np.testing.assert_allclose(_hvp_in_jit(p, x, v).ravel(), want, rtol=1e-5)
    p1, x1 = np.float32(0.3), np.float32(0.7)
    np.testing.assert_allclose(_second_in_jit(p1, x1), 0.8948271, rtol=1e-6)
    np.testing.assert_allclose(srcjax.grad(_jvp_of_grad_lambda)(p1, x1), -0.39161313, rtol=1e-5)
    got = srcjax.jit(srcjax.grad(_jvp_of_grad_lambda, argnums=1))(p1, x1)
    np.testing.assert_allclose(got, 2.516647, rtol=1e-5)


def test_vjp_and_linearize_functions_keep_the_primals_they_were_given():
    # User K r15: `x += 1.0` on the NumPy array after vjp/linearize changed what
    # vjp_fn / f_jvp returned (they re-run the forward sweep). Oracle: cos(x0).
    x = np.array([0.5, 1.0], np.float32)
    x0 = x.copy()
    _, vjp_fn = srcjax.vjp(jnp.sin, x)
    _, f_jvp = srcjax.linearize(jnp.sin, x)
    x += 1.0
    np.testing.assert_allclose(vjp_fn(np.ones(2, np.float32))[0], np.cos(x0), rtol=1e-6)
    np.testing.assert_allclose(f_jvp(np.ones(2, np.float32)), np.cos(x0), rtol=1e-6)


# -- the autodiff cookbook's hvp: jvp(grad(f), primals, tangents) with the tuples
# passed in (was refused: "needs its primals and tangents written as tuple displays")
def _hvp_energy(x, y):
    return jnp.sum(jnp.sin(x) * y**2) + jnp.sum(x**3 * y)


def _hvp_energy_np(x, y):
    return np.sum(np.sin(x) * y**2) + np.sum(x**3 * y)


def hvp(f, primals, tangents):
    return srcjax.jvp(srcjax.grad(f, argnums=(0, 1)), primals, tangents)[1]


def _hvp_of_built_tuples(x, y, vx, vy):
    primals = (x, y)
    tangents = (vx, vy)
    return hvp(_hvp_energy, primals, tangents)


def _hvp_inline_displays(x, y, vx, vy):
    return hvp(_hvp_energy, (x, y), (vx, vy))


def _fd_hvp(x, y, vx, vy):
    """Central differences of the float64 gradient (by hand) along (vx, vy)."""

    def g(x, y):
        return (np.cos(x) * y**2 + 3 * x**2 * y, 2 * np.sin(x) * y + x**3)

    gp, gm = g(x + EPS * vx, y + EPS * vy), g(x - EPS * vx, y - EPS * vy)
    return tuple((a - b) / (2 * EPS) for a, b in zip(gp, gm))


@pytest.mark.parametrize("fn", [_hvp_of_built_tuples, _hvp_inline_displays])
def test_cookbook_hvp_under_jit_and_vmap(fn):
    x, y, vx, vy = (RNG.normal(size=(3, 4)) for _ in range(4))
    for i in range(3):  # jit, one example at a time
        want = _fd_hvp(x[i], y[i], vx[i], vy[i])
        got = srcjax.jit(fn)(x[i], y[i], vx[i], vy[i])
        for a, b in zip(got, want):
            assert_close(a, b, rtol=1e-6, atol=1e-8)
    want = _fd_hvp(x, y, vx, vy)  # (elementwise energy: the batch is the rows)
    got = srcjax.jit(srcjax.vmap(fn))(x, y, vx, vy)
    for a, b in zip(got, want):
        assert_close(a, b, rtol=1e-6, atol=1e-8)


def _quadratic(w):
    a = jnp.array([[3.0, 1.0], [1.0, 2.0]])
    return 0.5 * w @ a @ w


def _cg_solve(b):
    # conjugate gradient for A p = b with A given only by its hvp (A is SPD)
    w = jnp.zeros_like(b)
    p = jnp.zeros_like(b)
    r = b
    d = r
    rr = jnp.sum(r * r)
    for _ in range(2):
        ad = srcjax.jvp(srcjax.grad(_quadratic), (w,), (d,))[1]
        alpha = rr / jnp.sum(d * ad)
        p = p + alpha * d
        r = r - alpha * ad
        rr_new = jnp.sum(r * r)
        d = r + (rr_new / rr) * d
        rr = rr_new
    return p


def test_hvp_in_a_conjugate_gradient_loop():
    b = np.array([1.0, -2.0])
    want = np.linalg.solve([[3.0, 1.0], [1.0, 2.0]], b)  # CG is exact in 2 steps
    assert_close(srcjax.jit(_cg_solve)(b), want, rtol=1e-10)
    bs = np.stack([b, 2 * b, -b])
    assert_close(srcjax.vmap(_cg_solve)(bs), [want, 2 * want, -want], rtol=1e-10)


def _jvp_of_a_loop_changed_tuple(x, v):
    primals = (x,)
    out = x
    for _ in range(2):
        out = srcjax.jvp(jnp.sin, primals, (v,))[1]
        primals = (out,)
    return out


def _jvp_of_a_parameter_tuple(primals, tangents):
    return srcjax.jvp(jnp.sin, primals, tangents)[1]


def test_jvp_refuses_tuples_of_unknown_length():
    x = np.ones(2)
    # a name rebound inside a loop body: its length before the loop is not trusted
    # there (conservative: here the body rebinds it to a tuple of the same length)
    with pytest.raises(srcjax.errors.UnsupportedSyntaxError, match="number is known"):
        srcjax.jit(_jvp_of_a_loop_changed_tuple)(x, x)
    # (the jitted function's own tuple parameters: not known yet)
    with pytest.raises(srcjax.errors.UnsupportedSyntaxError, match="number is known"):
        srcjax.jit(_jvp_of_a_parameter_tuple)((x,), (x,))
