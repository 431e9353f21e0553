"""vmap gaps (helper U): per-example gradients of pytree parameters inside jit
and under an outer vmap (DP-SGD), vmap of a while_loop whose body builds Python
lists of stage values (an adaptive Dormand-Prince step), and per-example
Jacobians without a per-row loop.

Expected values were recorded from jax 0.10.2 on CPU (noted at each test), or
come from a Python loop over the examples."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax
from srcjax import tree_util as tu

# --------------------------------------------------------------------------- DP-SGD
# a 3 -> 4 -> 2 tanh MLP, params a LIST of (W, b) tuples, a batch of 3 examples
_PARAMS = [
    (
        [[0.88, 0.2, 0.49, 1.12], [0.93, -0.49, 0.48, -0.08], [-0.05, 0.21, 0.07, 0.73]],
        [0.08, 0.01, 0.04, 0.03],
    ),
    ([[0.75, -0.1], [0.16, -0.43], [-1.28, 0.33], [0.43, -0.37]], [0.23, -0.15]),
]
_XS = [[1.62, -0.61, -0.53], [-1.07, 0.87, -2.3], [1.74, -0.76, 0.32]]
_YS = [[-0.25, 1.46], [-2.06, -0.32], [-0.38, 1.13]]

# jax 0.10.2: tree_leaves(dpsgd_step(params, xs, ys)) (clip norm 0.5, lr 0.1)
_STEP = [
    [
        [0.8783317, 0.1928069, 0.5009708, 1.118676],
        [0.9294528, -0.487104, 0.4774414, -0.07949165],
        [-0.04324039, 0.2107759, 0.05887397, 0.7303339],
    ],
    [0.07433157, 0.005706041, 0.05376437, 0.02917135],
    [
        [0.7451835, -0.09089112],
        [0.1596313, -0.4215907],
        [-1.282134, 0.3364355],
        [0.4280854, -0.3565636],
    ],
    [0.2196832, -0.1389499],
]
# jax 0.10.2: the biases of vmap(dpsgd_step, in_axes=(0, None, None)) over the
# models params and 0.5 * params
_STEP_OUTER_B = [
    [
        [0.07433157, 0.005706041, 0.05376437, 0.02917135],
        [0.03460987, 0.0007915394, 0.03113038, 0.01245517],
    ],
    [[0.2196832, -0.1389499], [0.1010482, -0.05824539]],
]


def _params(as_dict=False):
    ps = [(np.array(w, np.float32), np.array(b, np.float32)) for w, b in _PARAMS]
    if as_dict:
        return {f"l{i}": {"W": w, "b": b} for i, (w, b) in enumerate(ps)}
    return ps


def _layers(params):
    if isinstance(params, dict):
        return [(params[k]["W"], params[k]["b"]) for k in sorted(params)]
    return params


def _predict(params, x):
    layers = _layers(params)
    h = x
    for W, b in layers[:-1]:
        h = jnp.tanh(h @ W + b)
    W, b = layers[-1]
    return h @ W + b


def _loss(params, x, y):
    return jnp.mean((_predict(params, x) - y) ** 2)


def _clip_mean_update(params, g):
    leaves = tu.tree_leaves(g)
    norms = jnp.sqrt(
        sum(jnp.sum(jnp.reshape(leaf, (leaf.shape[0], -1)) ** 2, axis=1) for leaf in leaves)
    )
    factors = jnp.minimum(1.0, 0.5 / norms)
    clipped = tu.tree_map(
        lambda leaf: leaf * jnp.reshape(factors, (-1,) + (1,) * (leaf.ndim - 1)), g
    )
    mean = tu.tree_map(lambda leaf: jnp.mean(leaf, axis=0), clipped)
    return tu.tree_map(lambda p, gg: p - 0.1 * gg, params, mean)


def dpsgd_step(params, xs, ys):
    g = srcjax.vmap(srcjax.grad(_loss), in_axes=(None, 0, 0))(params, xs, ys)
    return _clip_mean_update(params, g)


def _clip_one(g):
    n = jnp.sqrt(sum(jnp.sum(leaf**2) for leaf in tu.tree_leaves(g)))
    s = jnp.minimum(1.0, 0.5 / n)
    return tu.tree_map(lambda leaf: leaf * s, g)


def dpsgd_step_vmapped_clip(params, xs, ys):
    # clipping as its own vmap over the batched gradients (a list of tuples whose
    # kind an inlined vmap does not know: its batch size read from a leaf)
    g = srcjax.vmap(srcjax.grad(_loss), in_axes=(None, 0, 0))(params, xs, ys)
    clipped = srcjax.vmap(_clip_one)(g)
    mean = tu.tree_map(lambda leaf: jnp.mean(leaf, axis=0), clipped)
    return tu.tree_map(lambda p, gg: p - 0.1 * gg, params, mean)


def dpsgd_step_closure(params, xs, ys):
    # grad of closed-over params inside the vmapped function
    def per_example(x, y):
        return _clip_one(srcjax.grad(_loss)(params, x, y))

    g = srcjax.vmap(per_example)(xs, ys)
    mean = tu.tree_map(lambda leaf: jnp.mean(leaf, axis=0), g)
    return tu.tree_map(lambda p, gg: p - 0.1 * gg, params, mean)


def _check_step(out, params_like):
    assert tu.tree_structure(out) == tu.tree_structure(params_like)
    got = [np.asarray(leaf) for leaf in tu.tree_leaves(out)]
    for a, e in zip(got, _STEP):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, np.array(e, np.float32), rtol=2e-5, atol=2e-6)


_CASES = [
    # (step, jit, dict params)
    (dpsgd_step, False, False),
    (dpsgd_step, True, False),
    (dpsgd_step, False, True),
    (dpsgd_step_vmapped_clip, True, False),
    (dpsgd_step_vmapped_clip, False, True),
    (dpsgd_step_closure, False, False),
    (dpsgd_step_closure, False, True),  # (static tape entries, as below)
    (dpsgd_step_closure, True, True),
]


@pytest.mark.parametrize("step, use_jit, as_dict", _CASES)
def test_dpsgd_step_matches_jax(step, use_jit, as_dict):
    params = _params(as_dict)
    xs, ys = np.array(_XS, np.float32), np.array(_YS, np.float32)
    fn = srcjax.jit(step) if use_jit else step
    _check_step(fn(params, xs, ys), params)


def test_dpsgd_step_under_outer_vmap():
    # vmap over two models: the inner vmaps' batch sizes stay static Python ints
    params = _params()
    stacked = tu.tree_map(lambda a: np.stack([a, np.float32(0.5) * a]), params)
    xs, ys = np.array(_XS, np.float32), np.array(_YS, np.float32)
    out = srcjax.vmap(dpsgd_step_vmapped_clip, in_axes=(0, None, None))(stacked, xs, ys)
    assert tu.tree_structure(out) == tu.tree_structure(params)
    leaves = tu.tree_leaves(out)
    for k, e in zip((1, 3), _STEP_OUTER_B):
        np.testing.assert_allclose(leaves[k], np.array(e, np.float32), rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(leaves[0][0], np.array(_STEP[0], np.float32), rtol=2e-5)


def test_grad_of_closed_over_tuple_under_vmap_keeps_type_and_zeros():
    # jax 0.10.2: vmap(lambda x: grad(lambda q: q[0] * x)(p)) gives the container
    # type of p with zeros (not None) for the unused item
    xs = np.arange(3, dtype=np.float32)
    for container in (list, tuple):
        p = container([np.float32(1.0), np.float32(2.0)])

        def per_example(x, p=p):
            return srcjax.grad(lambda q: q[0] * x)(p)

        out = srcjax.vmap(per_example)(xs)
        assert type(out) is container
        np.testing.assert_array_equal(out[0], [0.0, 1.0, 2.0])
        np.testing.assert_array_equal(out[1], [0.0, 0.0, 0.0])
        assert out[1].dtype == np.float32


def _last_weight_sum(p, x):
    # a runtime isinstance branch: a grad inlined in jit/vmap code cannot know the
    # structure of p (kind "any"): the unused bias still gets zeros and p's tuples
    layers = [p[k] for k in sorted(p)] if isinstance(p, dict) else p
    return jnp.sum(layers[-1][0] * x)


def test_inlined_grad_of_unknown_kind_fills_holes_and_keeps_tuples():
    # jax 0.10.2: [(x * ones(2), zeros(2))] (vmap: rows of it)
    p = [(np.ones(2, np.float32), np.ones(2, np.float32))]
    expect_w = np.full((3, 2), [[1.0], [2.0], [3.0]], np.float32)
    for fn, xs, w in (
        (srcjax.jit(lambda x: srcjax.grad(_last_weight_sum)(p, x)), np.float32(2.0), [2.0, 2.0]),
        (
            srcjax.vmap(lambda x: srcjax.grad(_last_weight_sum)(p, x)),
            np.arange(1, 4, dtype=np.float32),
            expect_w,
        ),
    ):
        out = fn(xs)
        assert isinstance(out, list) and isinstance(out[0], tuple)
        np.testing.assert_array_equal(out[0][0], w)
        np.testing.assert_array_equal(out[0][1], np.zeros_like(out[0][0]))


def test_static_tape_entries_pushed_before_the_tape_is_batched():
    # jax 0.10.2 (rows of vmap(lambda x: grad(loss)(p, x))(arange(3)))["a"]: the
    # entries grad's tape holds for p[k] (unbatched, popped as they are) were
    # broadcast with the whole tape when a later loop made it batched (an error;
    # zeros before the dense index adjoint: silently wrong)
    p = {
        "a": {"w": np.ones(2, np.float32), "c": np.ones(2, np.float32)},
        "b": {"w": np.full(2, 2.0, np.float32), "c": np.ones(2, np.float32)},
    }

    def loss(p, x):
        ws = [(p[k]["w"], p[k]["c"]) for k in sorted(p)] if isinstance(p, dict) else p
        h = x
        for w, c in ws:
            h = jnp.tanh(h * w + c)
        return jnp.sum(h)

    out = srcjax.vmap(lambda x: srcjax.grad(loss)(p, x))(np.arange(3, dtype=np.float32))
    np.testing.assert_allclose(out["a"]["c"][:, 0], [0.02133686, 0.00160857, 0.00019855], rtol=1e-4)
    np.testing.assert_allclose(out["a"]["w"][:, 0], [0.0, 0.00160857, 0.0003971], rtol=1e-4)


# --------------------------------------------------------------- Dormand-Prince
# a Butcher tableau as Python lists of floats; the body's stage values built in a
# Python list (a pass's temporaries: the loop index, the stage list)
_DP_A = [
    [],
    [1 / 5],
    [3 / 40, 9 / 40],
    [44 / 45, -56 / 15, 32 / 9],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
]
_DP_C = [0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0]
_DP_B5 = [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]
_DP_B4 = [5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40]


def dopri_solve(y0, lam, t1=2.0, tol=1e-5):
    def f(t, y):
        return jnp.stack([y[1], -lam * y[0] - 0.1 * y[1] + 0.05 * t])

    def cond(s):
        t, y, dt, n = s
        return (t < t1) & (n < 200)

    def body(s):
        t, y, dt, n = s
        dt = jnp.minimum(dt, t1 - t)
        ks = []
        for i in range(6):
            ks.append(f(t + _DP_C[i] * dt, y + dt * sum(a * k for a, k in zip(_DP_A[i], ks))))
        y5 = y + dt * sum(b * k for b, k in zip(_DP_B5, ks))
        ks.append(f(t + dt, y5))
        y4 = y + dt * sum(b * k for b, k in zip(_DP_B4, ks))
        err = jnp.max(jnp.abs(y5 - y4))
        accept = err <= tol
        factor = jnp.clip(0.9 * (tol / (err + 1e-12)) ** 0.2, 0.2, 2.0)
        return jnp.where(accept, t + dt, t), jnp.where(accept, y5, y), dt * factor, n + 1

    t, y, dt, n = lax.while_loop(cond, body, (0.0, y0, 0.1, 0))
    return y, n


_Y0 = np.array([[1.0, 0.0], [0.5, 0.2], [-1.0, 0.3]], np.float32)
_LAM = np.array([1.0, 2.0, 0.5], np.float32)


@pytest.mark.parametrize(
    "case, y_jax, n_jax",
    [
        # jax 0.10.2: vmap(dopri_solve, in_axes=(0, None))(Y0, 1.0)
        (
            "ic",
            [[-0.2811519, -0.7580709], [0.05041873, -0.4288473], [0.6327661, 0.7666795]],
            [7, 6, 7],
        ),
        # jax 0.10.2: vmap(dopri_solve, in_axes=(None, 0))(Y0[0], LAM)
        (
            "param",
            [[-0.2811519, -0.7580709], [-0.8076867, -0.3503544], [0.2650959, -0.5539738]],
            [7, 9, 6],
        ),
        # jax 0.10.2: jit(vmap(dopri_solve))(Y0, LAM)
        (
            "both_jit",
            [[-0.2811519, -0.7580709], [-0.3428166, -0.326094], [0.2298505, 0.7367398]],
            [7, 8, 6],
        ),
    ],
)
def test_vmap_of_while_loop_with_butcher_tableau_lists(case, y_jax, n_jax):
    if case == "ic":
        y, n = srcjax.vmap(dopri_solve, in_axes=(0, None))(_Y0, 1.0)
        rows = [dopri_solve(_Y0[i], 1.0) for i in range(3)]
    elif case == "param":
        y, n = srcjax.vmap(dopri_solve, in_axes=(None, 0))(_Y0[0], _LAM)
        rows = [dopri_solve(_Y0[0], _LAM[i]) for i in range(3)]
    else:
        y, n = srcjax.jit(srcjax.vmap(dopri_solve))(_Y0, _LAM)
        rows = [dopri_solve(_Y0[i], _LAM[i]) for i in range(3)]
    assert y.dtype == np.float32 and y.shape == (3, 2)
    np.testing.assert_array_equal(n, n_jax)  # per-example step counts differ
    np.testing.assert_allclose(y, np.array(y_jax, np.float32), rtol=1e-5, atol=1e-6)
    # and a Python loop over the examples (srcjax's eager while_loop)
    np.testing.assert_allclose(y, np.stack([r[0] for r in rows]), rtol=1e-5, atol=1e-6)
    assert [int(r[1]) for r in rows] == n_jax


# ------------------------------------------------- per-example Jacobians, no row loop
_W1 = np.array(
    [[0.5, -0.3, 0.8, 0.1, -0.6], [0.2, 0.7, -0.4, 0.9, 0.3], [-0.5, 0.4, 0.6, -0.2, 0.1]],
    np.float32,
)
_B1 = np.array([0.1, -0.2, 0.05, 0.0, 0.3], np.float32)
_W2 = np.array([[0.3, -0.7], [0.6, 0.2], [-0.4, 0.5], [0.8, -0.1], [0.1, 0.9]], np.float32)
_B2 = np.array([0.05, -0.1], np.float32)
_X = np.array([[0.3, -1.2, 0.5], [1.1, 0.4, -0.7], [-0.6, 0.9, 0.2], [0.0, -0.3, 1.4]], np.float32)

# jax 0.10.2: vmap(jacfwd(_mlp))(_X)
_JAC = [
    [[-0.01869797, 0.1151917, -0.03247154], [-0.695903, 0.08398108, 0.5459373]],
    [[-0.3391866, 0.9497505, -0.1756757], [-0.153448, 0.02884496, 0.2658091]],
    [[-0.04981821, 0.2885384, -0.07936539], [-0.3138218, -0.0962385, 0.5470518]],
    [[-0.1269625, 0.6814105, -0.04747645], [-0.2306666, 0.05008482, 0.1995973]],
]
# jax 0.10.2: vmap(hessian(_scalar))(_X)[[0, 3]]
_HESS = [
    [
        [0.7186595, -0.04485373, -0.7389259],
        [-0.04485372, -0.390995, 0.2145331],
        [-0.7389261, 0.2145331, 0.3787166],
    ],
    [
        [-0.7154573, 0.139993, 0.1659972],
        [0.1399931, -0.6433891, 0.2172986],
        [0.1659971, 0.2172986, -0.45404],
    ],
]


def _mlp(x):
    return jnp.tanh(jnp.tanh(x @ _W1 + _B1) @ _W2 + _B2)


def _scalar(x):
    return jnp.sum(_mlp(x) ** 2)


@pytest.mark.parametrize("jac", [srcjax.jacfwd, srcjax.jacrev], ids=["jacfwd", "jacrev"])
def test_vmap_of_jacobian_matches_jax_without_a_row_loop(jac):
    per_example = srcjax.vmap(jac(_mlp))
    text = srcjax.source(per_example, _X)
    assert "loop over the examples" not in text, text
    loop = np.stack([jac(_mlp)(x) for x in _X])
    for fn in (per_example, srcjax.jit(per_example)):
        got = fn(_X)
        assert got.dtype == np.float32 and got.shape == (4, 2, 3)
        np.testing.assert_allclose(got, np.array(_JAC, np.float32), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got, loop, rtol=1e-6, atol=1e-7)


def test_vmap_of_hessian_matches_jax_without_a_row_loop():
    # jacfwd(jacrev): bmatmul_left/right of the inner vmap batched again
    per_example = srcjax.vmap(srcjax.hessian(_scalar))
    text = srcjax.source(per_example, _X)
    assert "loop over the examples" not in text, text
    got = per_example(_X)
    np.testing.assert_allclose(got[[0, 3]], np.array(_HESS, np.float32), rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(
        got, np.stack([srcjax.hessian(_scalar)(x) for x in _X]), rtol=1e-5, atol=1e-6
    )


from srcjax.primitives.batch_rules import bmatmul as _bmatmul  # noqa: E402
from srcjax.primitives.batch_rules import bmatmul_left as _bmatmul_left  # noqa: E402
from srcjax.primitives.batch_rules import bmatmul_right as _bmatmul_right  # noqa: E402

# (per-example shapes of a and b, which carry the inner batch axis of size 4)
_BM_CASES = [
    ((3,), (3, 2), False, False),
    ((3,), (3, 2), True, False),
    ((2, 3), (3,), False, True),
    ((2, 3), (3, 2), True, True),
    ((3,), (3,), True, True),
]


@pytest.mark.parametrize("a_shape, b_shape, ab, bb", _BM_CASES)
def test_bmatmul_helpers_under_an_outer_vmap_match_a_loop(a_shape, b_shape, ab, bb):
    # the helpers an inner vmap emits, batched again by an outer vmap with every
    # operand carrying the outer axis or not: one folded call vs a Python loop
    rng = np.random.RandomState(0)
    n_out, n_in = 3, 4
    a = rng.normal(size=(n_out,) + ((n_in,) if ab else ()) + a_shape).astype(np.float32)
    b = rng.normal(size=(n_out,) + ((n_in,) if bb else ()) + b_shape).astype(np.float32)
    out_shape = np.shape(_bmatmul.impl(a[0], b[0], ab, bb))
    if not (ab or bb):
        out_shape = (n_in,) + out_shape  # the adjoints' g always carries the inner axis
    g = rng.normal(size=(n_out,) + out_shape).astype(np.float32)

    def fwd(x, y):
        return _bmatmul(x, y, ab, bb)

    def adj(h, x, y):
        return _bmatmul_left(h, x, y, ab, bb), _bmatmul_right(h, x, y, ab, bb)

    for x_out in (True, False):
        for y_out in (True, False):
            xs, ys = (a if x_out else a[0]), (b if y_out else b[0])
            ax = (0 if x_out else None, 0 if y_out else None)

            def row(v, k, batched):
                return v[k] if batched else v

            if x_out or y_out:
                got = srcjax.vmap(fwd, in_axes=ax)(xs, ys)
                want = [
                    _bmatmul.impl(row(xs, k, x_out), row(ys, k, y_out), ab, bb)
                    for k in range(n_out)
                ]
                np.testing.assert_allclose(got, np.stack(want), rtol=1e-5, atol=1e-6)
            gl, gr = srcjax.vmap(adj, in_axes=(0,) + ax)(g, xs, ys)
            for k in range(n_out):
                x, y = row(xs, k, x_out), row(ys, k, y_out)
                np.testing.assert_allclose(
                    gl[k], _bmatmul_left.impl(g[k], x, y, ab, bb), rtol=1e-5, atol=1e-5
                )
                np.testing.assert_allclose(
                    gr[k], _bmatmul_right.impl(g[k], x, y, ab, bb), rtol=1e-5, atol=1e-5
                )
