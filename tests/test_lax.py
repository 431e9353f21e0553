"""srcjax.lax: eager semantics, and grad through each construct (rewritten into
Python control flow) against finite differences and the same program written
with Python control flow."""

import os

import numpy as np
import pytest
from helpers import assert_close, fd_grad

import srcjax
import srcjax.numpy as jnp
from srcjax import lax
from srcjax.primitives.control import _check_carry as check_carry

pytestmark = pytest.mark.usefixtures("x64")


def cond_fn(x):
    return lax.cond(x > 0, lambda v: v * v, lambda v: -v, x)


def cond_py(x):
    return x * x if x > 0 else -x


@pytest.mark.parametrize("x", [2.0, -2.0])
def test_cond_matches_python_if(x):
    assert_close(cond_fn(x), cond_py(x))
    assert_close(srcjax.grad(cond_fn)(x), srcjax.grad(cond_py)(x))


def fori_fn(x):
    def body(i, v):
        return v * 1.5 + i

    return lax.fori_loop(0, 3, body, x)


def test_fori_loop():
    assert_close(fori_fn(1.0), ((1.5 + 0) * 1.5 + 1) * 1.5 + 2)
    assert_close(srcjax.grad(fori_fn)(1.0), 1.5**3)


def while_fn(x):
    return lax.while_loop(lambda v: v < 10.0, lambda v: v * 1.7, x)


def test_while_loop_reverse_mode():
    # JAX refuses reverse mode through while_loop; srcjax tapes the trip count
    assert_close(srcjax.grad(while_fn)(1.0), 1.7**5)


def scan_fn(x, xs):
    def step(c, xi):
        if jnp.sum(c) > 0:  # a Python `if` inside a scan body
            c = jnp.tanh(c * 0.5 + xi)
        else:
            c = jnp.sin(c + xi)
        return c, c * 2.0

    c, ys = lax.scan(step, x, xs)
    return jnp.sum(ys) + jnp.sum(c)


def scan_py(x, xs):
    c = x
    total = 0.0
    for xi in xs:
        if jnp.sum(c) > 0:
            c = jnp.tanh(c * 0.5 + xi)
        else:
            c = jnp.sin(c + xi)
        total = total + jnp.sum(c * 2.0)
    return total + jnp.sum(c)


def test_scan_with_python_if_in_body():
    xs = np.stack([np.linspace(-1, 1, 5), np.linspace(1, -1, 5)], 1)
    x0 = np.array([0.3, -0.2])
    assert_close(scan_fn(x0, xs), scan_py(x0, xs))
    assert_close(srcjax.grad(scan_fn)(x0, xs), fd_grad(lambda v: scan_fn(v, xs), x0))
    assert_close(srcjax.grad(scan_fn, 1)(x0, xs), fd_grad(lambda q: scan_fn(x0, q), xs))


def test_scan_reverse_and_length():
    xs = np.linspace(-1, 1, 4)

    def f(x):
        c, ys = lax.scan(lambda c, xi: (c + xi * x, c), 0.0, xs, reverse=True)
        return c + jnp.sum(ys)

    assert_close(srcjax.grad(f)(2.0), fd_grad(f, np.array(2.0)))
    c, ys = lax.scan(lambda c, _: (c * 2.0, c), 1.0, None, length=3)
    assert_close(c, 8.0)
    assert_close(ys, [1.0, 2.0, 4.0])


def test_switch_clamps_index():
    def f(x, k):
        return lax.switch(k, [lambda v: v, lambda v: v * v, lambda v: jnp.sin(v)], x)

    for k, want in [(-1, 1.0), (0, 1.0), (1, 1.0), (2, np.cos(0.5)), (7, np.cos(0.5))]:
        assert_close(srcjax.grad(f)(0.5, k), want)


@pytest.mark.parametrize("index", [1.7, np.float32(1.0), True, jnp.array(1.0)])
def test_switch_refuses_an_index_that_is_no_integer(index):
    """User bug 06: lax.switch(1.7, ...) took branch 1; JAX 0.10.2 raises
    TypeError: Index type must be an integer, got 1.7 as float32."""
    branches = [lambda: 10.0, lambda: 20.0, lambda: 30.0]
    with pytest.raises(
        TypeError, match="Index type must be an integer, got .* as (float32|float64|bool)"
    ):
        lax.switch(index, branches)
    # integers of any width are indices (JAX: 20.0, 30.0, 20.0)
    for k, want in [(1, 20.0), (np.int64(2), 30.0), (jnp.array(1, jnp.uint8), 20.0)]:
        assert_close(lax.switch(k, branches), want)


def _switch_scaled(i, x):
    return lax.switch(i, [lambda v: v * 1.0, lambda v: v * 2.0, lambda v: v * 3.0], x)


def test_transformed_switch_refuses_a_float_index():
    """User bug 06 in generated code: jit/grad/vmap of lax.switch clipped 1.7 to
    branch 1 (JAX: TypeError, Index type must be an integer ... as float32)."""
    msg = "Index type must be an integer, got .* as float"
    with pytest.raises(TypeError, match=msg):
        srcjax.jit(_switch_scaled)(1.7, 1.0)
    with pytest.raises(TypeError, match=msg):
        srcjax.grad(_switch_scaled, argnums=1)(1.7, 1.0)
    with pytest.raises(TypeError, match=msg):
        srcjax.vmap(_switch_scaled)(jnp.array([0.0, 2.0]), jnp.array([1.0, 1.0]))
    # integer indices: JAX gives 2.0, 3.0 and [1, 6]
    assert_close(srcjax.jit(_switch_scaled)(1, 1.0), 2.0)
    assert_close(srcjax.grad(_switch_scaled, argnums=1)(2, 1.0), 3.0)
    assert_close(srcjax.vmap(_switch_scaled)(jnp.array([0, 2]), jnp.array([1.0, 2.0])), [1.0, 6.0])


def test_nested_def_and_local_lambda_are_inlined():
    def f(x):
        def sq(v):
            return v * v

        g = lambda v: sq(v) + x  # noqa: E731 - a local lambda is the point
        return g(x) * 2

    assert_close(srcjax.grad(f)(3.0), 2 * (2 * 3 + 1))


def test_map_and_select():
    xs = np.linspace(0.1, 1.0, 4)
    assert_close(lax.map(lambda v: v * 2, xs), xs * 2)

    def f(x):
        return jnp.sum(lax.map(jnp.sin, x) * lax.select(x > 0.5, x, -x))

    assert_close(srcjax.grad(f)(xs), fd_grad(f, xs))


# ---------------------------------------------------------------- eager calls with .at
def _rollout(x, n):
    outs = jnp.zeros((n, x.shape[0]))

    def step(t, carry):
        outs, last = carry
        nxt = 0.5 * last + t
        return outs.at[t].set(nxt), nxt

    outs, _ = lax.fori_loop(0, n, step, (outs, x))
    return outs


def test_eager_lax_bodies_may_use_at():
    """Called outside any transform, a lax loop body using x.at[...] failed
    (NumPy arrays have no .at); such bodies are now compiled, as JAX does.
    Oracle: the same recurrence as a Python loop."""
    x = np.array([1.0, -2.0])
    want = np.zeros((4, 2))
    last = x
    for t in range(4):
        last = 0.5 * last + t
        want[t] = last
    np.testing.assert_allclose(_rollout(x, 4), want, rtol=1e-6)
    np.testing.assert_allclose(_rollout(x, 4), want, rtol=1e-6)  # a new closure: again

    def body(c, v):
        return c.at[0].add(v), c[0] * 1.0

    carry, ys = lax.scan(body, np.zeros(2), np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(carry, [6.0, 0.0])
    np.testing.assert_allclose(ys, [0.0, 1.0, 3.0])
    got = lax.cond(True, lambda a: a.at[1].set(5.0), lambda a: a, np.zeros(3))
    np.testing.assert_allclose(got, [0.0, 5.0, 0.0])


def test_eager_lax_bodies_without_at_run_as_written():
    calls = []

    def body(i, v):
        calls.append(i)  # a side effect: the body is the Python function itself
        return v + i

    assert lax.fori_loop(0, 3, body, 0.0) == 3.0
    assert calls == [0, 1, 2]


@pytest.fixture
def x64_off():
    old = srcjax.config.jax_enable_x64
    srcjax.config.update("jax_enable_x64", False)
    yield
    srcjax.config.update("jax_enable_x64", old)


def _dtypes_values(tree):
    return srcjax.tree_util.tree_map(lambda t: (np.asarray(t).dtype, np.asarray(t).tolist()), tree)


def test_eager_lax_canonicalizes_carries_and_operands(x64_off):
    # user report P8: Python-scalar carries gave float64/int64. JAX 0.10.2 (x64 off):
    assert not srcjax.config.jax_enable_x64
    f32, i32 = np.dtype(np.float32), np.dtype(np.int32)
    got = _dtypes_values(lax.fori_loop(0, 5, lambda i, c: c * 1.3 + i, 1.0))
    assert got[0] == f32 and np.isclose(got[1], 17.18992805480957, rtol=1e-6)
    assert _dtypes_values(lax.fori_loop(0, 5, lambda i, c: c + i, 0)) == (i32, 10)
    got = lax.while_loop(lambda c: c[0] < 10.0, lambda c: (c[0] * 1.7, c[1] + 1), (1.0, 0))
    got = _dtypes_values(got)
    assert got[0][0] == f32 and np.isclose(got[0][1], 14.19857120513916, rtol=1e-6)
    assert got[1] == (i32, 5)
    got = lax.cond(False, lambda y: np.sin(y), lambda y: y**2, -1.0)
    assert _dtypes_values(got) == (f32, 1.0)
    got = lax.switch(1, [lambda y: y + 1.0, lambda y: y * 2.0], 3.0)
    assert _dtypes_values(got) == (f32, 6.0)
    got = _dtypes_values(lax.scan(lambda c, _: (c * 1.1 + 0.1, None), 1.0, None, length=5)[0])
    assert got[0] == f32 and np.isclose(got[1], 2.221020221710205, rtol=1e-6)
    got = lax.scan(lambda c, x: (c + x, x * 2), 0.0, np.arange(3.0))  # float64 xs
    assert _dtypes_values(got) == ((f32, 3.0), (f32, [0.0, 2.0, 4.0]))
    assert _dtypes_values(lax.map(lambda x: x * 2, np.arange(3.0))) == (f32, [0.0, 2.0, 4.0])
    got = lax.fori_loop(0, 2, lambda i, c: c * 2, np.ones(2))
    assert _dtypes_values(got) == (f32, [4.0, 4.0])
    got = lax.while_loop(
        lambda c: c["n"] < 3, lambda c: {"n": c["n"] + 1, "x": c["x"] * 0.5}, {"n": 0, "x": 8.0}
    )
    assert _dtypes_values(got) == {"n": (i32, 3), "x": (f32, 1.0)}


def test_dynamic_slice_and_update_follow_jax():
    """lax.dynamic_slice / dynamic_update_slice (and the _in_dim forms) did not
    exist (fresh-user runs 1 and 2). Oracles: values recorded from JAX 0.10.2
    (negative starts count from the end, then clamp so the window fits), central
    differences for the gradient, a loop for vmap."""
    x = np.arange(20.0).reshape(4, 5)
    np.testing.assert_array_equal(lax.dynamic_slice(x, (3, -1), (2, 2)), [[13, 14], [18, 19]])
    np.testing.assert_array_equal(lax.dynamic_slice(x, (1, 2), (2, 3)), x[1:3, 2:5])
    want = x.copy()
    want[2:4, 3:5] = 1.0
    np.testing.assert_array_equal(lax.dynamic_update_slice(x, np.ones((2, 2)), (3, 9)), want)

    def f(x, i):
        w = lax.dynamic_slice(x, (i, 1), (2, 2))
        y = lax.dynamic_update_slice(x, w * w, (0, i))
        return jnp.sum(y * y) + jnp.sum(lax.dynamic_slice_in_dim(x, i, 2, axis=1))

    # JAX 0.10.2: f(x, 1) = 41526, f(x, 0) = 6186, f(x, 2) = 186858, f(2x, 1) = 634848
    assert srcjax.jit(f)(x, 1) == 41526.0
    np.testing.assert_allclose(
        srcjax.vmap(f, in_axes=(None, 0))(x, np.array([0, 2])), [6186.0, 186858.0]
    )
    np.testing.assert_allclose(
        srcjax.vmap(f, in_axes=(0, None))(np.stack([x, 2 * x]), 1), [41526.0, 634848.0]
    )
    g = srcjax.grad(f)(x, 1)
    np.testing.assert_allclose(g, fd_grad(lambda v: f(v, 1), x), rtol=1e-6, atol=1e-4)


def test_vmapped_dynamic_slice_is_vectorized_for_shared_starts():
    """With the same start indices for every example, vmap of dynamic_slice /
    dynamic_update_slice is the primitive over the batch axis too (no per-example
    loop); per-example starts still loop. Oracle: a Python loop."""

    def f(x, i):
        w = lax.dynamic_slice(x, (i, 1), (2, 2))
        return jnp.sum(lax.dynamic_update_slice(x, w * w, (0, i)) ** 2)

    x = np.arange(20.0).reshape(4, 5)
    xs = np.stack([x, 2 * x, -x])
    batched = srcjax.vmap(f, in_axes=(0, None))
    assert "loop over the examples" not in srcjax.source(batched, xs, 1)
    np.testing.assert_allclose(batched(xs, 1), [f(v, 1) for v in xs])
    g = srcjax.vmap(srcjax.grad(f), in_axes=(0, None))(xs, 1)
    np.testing.assert_allclose(g, np.stack([srcjax.grad(f)(v, 1) for v in xs]))
    idx = np.array([0, 2, -1])
    np.testing.assert_allclose(srcjax.vmap(f)(xs, idx), [f(v, i) for v, i in zip(xs, idx)])


def test_eager_cond_switch_scalar_branches_are_float32(x64_off):
    """Fresh-user F1: eager cond/switch returned a Python float for branches
    returning Python scalars (JAX: a weakly typed float32)."""
    r = lax.cond(True, lambda: 1.0, lambda: 2.0)
    assert r == 1.0 and r.dtype == np.float32
    r = lax.switch(1, [lambda: 1, lambda: 2])  # (1.0 and 2: TypeError, as JAX)
    assert r == 2 and r.dtype == np.int32
    r = lax.cond(False, lambda: (1.0, {"a": 2}), lambda: (3.0, {"a": 4}))
    assert r[0].dtype == np.float32 and r[1]["a"].dtype == np.int32


def test_eager_loops_check_the_carry_as_jax():
    """Fresh-user F12: a body that changes the carry's shape or structure raised
    NumPy's stacking error (or nothing); JAX raises TypeError."""
    with pytest.raises(TypeError, match="carry"):
        lax.scan(lambda c, x: (jnp.reshape(c + x, (1,)), c), 0.0, jnp.arange(3.0))
    with pytest.raises(TypeError, match="carry"):
        lax.fori_loop(0, 3, lambda i, c: (c, c), 1.0)
    with pytest.raises(TypeError, match="carry"):
        lax.while_loop(lambda c: c[0] < 3, lambda c: jnp.stack([c[0] + 1, c[0]]), jnp.zeros(1))
    c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, jnp.arange(3.0))
    assert c == 3.0 and list(ys) == [0.0, 0.0, 1.0]


# --- User A bug 8: lax.switch with its branch list in a variable ------------------
SWITCH_BRANCHES = [lambda v: v + 1.0, lambda v: v * 10.0, lambda v: jnp.sin(v)]
SWITCH_TUPLE = (lambda v: v * v, lambda v: -v)


def _switch_global(i, x):
    return lax.switch(i, SWITCH_BRANCHES, x)


def _switch_local(i, x):
    branches = [lambda v: v + 1.0, lambda v: v * 10.0, lambda v: jnp.sin(v)]
    return lax.switch(i, branches, x)


def _switch_comprehension(i, x):
    return lax.switch(i, [lambda v, k=k: v * (k + 1.0) + jnp.sin(v) * k for k in range(3)], x)


def _switch_local_comprehension(i, x):
    fs = [lambda v, f=f: f(v) * 2.0 for f in SWITCH_BRANCHES]
    return lax.switch(i, fs, x)


def _switch_py(i, x):
    return [x + 1.0, x * 10.0, np.sin(x)][min(max(int(i), 0), 2)]


_SWITCH_CASES = [
    (_switch_global, _switch_py),
    (_switch_local, _switch_py),
    (_switch_comprehension, lambda i, x: x * (min(max(i, 0), 2) + 1.0) + np.sin(x) * i),
    (_switch_local_comprehension, lambda i, x: 2.0 * _switch_py(i, x)),
]


@pytest.mark.parametrize("fn, py", _SWITCH_CASES, ids=lambda f: getattr(f, "__name__", ""))
def test_switch_branches_in_a_variable(fn, py):
    """The usual JAX idiom: the branch list is a module-level list, a local bound to
    a display, or a list comprehension (all refused before: 'not a list display').
    Eager, grad (vs finite differences), vmap with a per-example index, jit."""
    xs = np.array([0.5, 1.0, 2.0])
    idx = np.array([0, 1, 2], np.int32)
    want = np.array([py(int(i), x) for i, x in zip(idx, xs)])
    assert_close(srcjax.vmap(fn)(idx, xs), want)
    assert_close(srcjax.jit(srcjax.vmap(fn))(idx, xs), want)
    for i, x in zip(idx, xs):
        assert_close(fn(int(i), x), py(int(i), x))
        assert_close(srcjax.jit(fn)(i, x), py(int(i), x))
        g = srcjax.grad(fn, argnums=1)(i, x)
        assert_close(g, fd_grad(lambda v, i=i: py(int(i), float(v)), np.array(x)), rtol=1e-5)
    gv = srcjax.vmap(srcjax.grad(fn, argnums=1))(idx, xs)
    assert_close(gv, [srcjax.grad(fn, argnums=1)(i, x) for i, x in zip(idx, xs)])


def test_switch_global_tuple_of_functions():
    f = lambda i, x: lax.switch(i, SWITCH_TUPLE, x)  # noqa: E731 - the user's idiom
    assert_close(srcjax.grad(f, argnums=1)(0, 3.0), 6.0)
    assert_close(
        srcjax.vmap(srcjax.grad(f, argnums=1))(np.array([0, 1]), np.array([3.0, 3.0])), [6.0, -1.0]
    )


def test_switch_global_list_changed_rebuilds_jit():
    """The branch list is read at transformation time: rebinding the global or
    changing its items transforms the function again (as redefined helpers and
    TABLE['name'] entries do), for grad, vmap and jit alike."""
    global SWITCH_BRANCHES
    old = SWITCH_BRANCHES
    try:
        j = srcjax.jit(_switch_global)
        g = srcjax.grad(_switch_global, argnums=1)
        v = srcjax.vmap(_switch_global)
        vg = srcjax.vmap(srcjax.grad(_switch_global, argnums=1))
        assert_close(vg(np.array([1]), np.array([2.0])), [10.0])
        assert_close(j(1, 2.0), 20.0)
        assert_close(g(1, 2.0), 10.0)
        SWITCH_BRANCHES[1] = lambda v: v * 100.0  # an item replaced in place
        assert_close(j(1, 2.0), 200.0)
        assert_close(g(1, 2.0), 100.0)
        assert_close(v(np.array([1]), np.array([2.0])), [200.0])
        SWITCH_BRANCHES = [lambda v: v - 1.0]  # the name rebound
        assert_close(j(1, 2.0), 1.0)
        assert_close(g(1, 2.0), 1.0)
        assert_close(v(np.array([0, 3]), np.array([2.0, 5.0])), [1.0, 4.0])
        assert_close(vg(np.array([1]), np.array([2.0])), [1.0])
        SWITCH_BRANCHES.append(lambda v: v * 3.0)  # an item added
        assert_close(j(1, 2.0), 6.0)
        assert_close(g(1, 2.0), 3.0)
    finally:
        SWITCH_BRANCHES = old


def _switch_unknown(i, x, fns):
    return lax.switch(i, fns, x)


def test_switch_branches_unknown_at_transform_time_names_the_line():
    with pytest.raises(
        srcjax.errors.UnsupportedSyntaxError, match=r"test_lax\.py:\d+:\d+: lax\.switch"
    ):
        srcjax.grad(_switch_unknown, argnums=1)(0, 1.0, [jnp.sin])


def _switch_local_named(i, x):
    br = [jnp.sin, jnp.cos]
    return lax.switch(i, br, x) * len(br)


def test_switch_local_list_used_elsewhere_too():
    """A local branch list also read otherwise (len(br)) is bound as usual too."""
    for i in (0, 1):
        want = fd_grad(lambda v, i=i: 2.0 * [np.sin, np.cos][i](float(v)), np.array(0.5))
        assert_close(srcjax.grad(_switch_local_named, argnums=1)(i, 0.5), want, rtol=1e-5)
    assert_close(
        srcjax.vmap(_switch_local_named)(np.array([0, 1]), np.array([0.5, 0.5])),
        [2.0 * np.sin(0.5), 2.0 * np.cos(0.5)],
    )


# User B bug 1: a loop whose carry or per-step output holds a bare index (y[0])
# the loss never uses. The unused element's cotangent is a hole (None) in the
# reverse sweep; the adjoint of the indexing scattered it into zeros as NaN.
# Values recorded from JAX 0.10.2 (x64) in tests/data/lax_jax.npz.
LAX_RECORDED = __import__("pathlib").Path(__file__).parent / "data" / "lax_jax.npz"


def _unused_index_programs(jnp, lax):
    def scan_record(k):  # an integrator recording y[0] each step
        def step(y, _):
            y = y * k
            return y, y[0]

        y_last, _ = lax.scan(step, jnp.ones(2), jnp.arange(3))
        return y_last[0]

    def fori_carry(x):  # carries (x, x[0]); only x is used afterwards
        c = lax.fori_loop(0, 3, lambda i, c: (c[0] * 2.0, c[0][0]), (x, 0.0))
        return jnp.sum(c[0])

    def while_carry(x):
        def body(c):
            i, v, _ = c
            return i + 1, v * 1.5, v[1]

        _, v, _ = lax.while_loop(lambda c: c[0] < 3, body, (0, x, 0.0))
        return jnp.sum(v**2)

    def scan_dict(x):
        def step(c, _):
            c = jnp.sin(c) * 1.5
            return c, {"a": c[0], "b": c}

        c, ys = lax.scan(step, x, None, length=3)
        return jnp.sum(c) + jnp.sum(ys["b"])

    def rnn(w, xs):
        def step(h, x):
            h = jnp.tanh(w @ h + x)
            return h, (h[0], h)

        h, (_, hs) = lax.scan(step, jnp.zeros(2), xs)
        return jnp.sum(hs) + h[1]

    return scan_record, fori_carry, while_carry, scan_dict, rnn


_W = np.array([[0.5, -0.3], [0.2, 0.4]])
_XS = np.array([[0.1, 0.2], [-0.3, 0.5], [0.7, -0.1]])


def _unused_index_values(jax, jnp, lax):
    scan_record, fori_carry, while_carry, scan_dict, rnn = _unused_index_programs(jnp, lax)
    x = np.array([1.0, 2.0])
    r = {
        "scan": jax.grad(scan_record)(2.0),
        "scan_grad_jit": jax.grad(jax.jit(scan_record))(2.0),
        "scan_jit_grad": jax.jit(jax.grad(scan_record))(2.0),
        "scan_vmap_grad": jax.vmap(jax.grad(scan_record))(np.array([0.5, 2.0, -1.0])),
        "scan_hessian": jax.hessian(scan_record)(2.0),
        "fori": jax.grad(fori_carry)(x),
        "fori_jit_grad": jax.jit(jax.grad(fori_carry))(x),
        "fori_vmap_grad": jax.vmap(jax.grad(fori_carry))(np.stack([x, -x])),
        # JAX has no reverse mode through while_loop: its forward mode is the oracle
        "while": (jax.jacfwd if jax.__name__ == "jax" else jax.grad)(while_carry)(x),
        "dict": jax.grad(scan_dict)(x),
        "dict_jit_grad": jax.jit(jax.grad(scan_dict))(x),
        "rnn": jax.grad(rnn)(_W, _XS),
        "rnn_xs": jax.grad(rnn, argnums=1)(_W, _XS),
        "rnn_vmap_grad": jax.vmap(jax.grad(rnn), in_axes=(None, 0))(_W, np.stack([_XS, -_XS])),
    }
    return {k: np.asarray(v) for k, v in r.items()}


def _unused_index_with_jax():
    import jax
    import jax.numpy as jjnp

    jax.config.update("jax_enable_x64", True)
    try:
        return _unused_index_values(jax, jjnp, jax.lax)
    finally:
        jax.config.update("jax_enable_x64", False)


def test_loop_with_unused_indexed_output_has_finite_gradient():
    from helpers import assert_matches_recorded, jax_recorded

    recorded = jax_recorded(LAX_RECORDED, _unused_index_with_jax)
    assert float(recorded["scan"]) == 12.0 and list(recorded["fori"]) == [8.0, 8.0]
    assert_matches_recorded(_unused_index_values(srcjax, jnp, lax), recorded, rtol=1e-12)


# -- unroll= of fori_loop/scan and batch_size= of map: accepted, same results --------------
def _unroll_programs():
    def f(x):
        return lax.fori_loop(0, 3, lambda i, c: c * x + i, 1.0, unroll=2)

    def g(x):
        return jnp.sum(lax.scan(lambda c, y: (c + y, c * y), 0.0, x, unroll=True)[1])

    def h(x):
        return jnp.sum(lax.map(lambda y: jnp.sin(y) * y, x, batch_size=3))

    def f0(x):
        return lax.fori_loop(0, 3, lambda i, c: c * x + i, 1.0)

    def g0(x):
        return jnp.sum(lax.scan(lambda c, y: (c + y, c * y), 0.0, x)[1])

    def h0(x):
        return jnp.sum(lax.map(lambda y: jnp.sin(y) * y, x))

    return [(f, f0, np.float32(1.5)), (g, g0, X4), (h, h0, X4)]


X4 = np.array([0.5, -1.0, 2.0, 1.5, 0.25], np.float32)


@pytest.mark.parametrize("k", range(3))
def test_unroll_and_batch_size_do_not_change_results(k):
    f, f0, x = _unroll_programs()[k]
    assert_close(f(x), f0(x))
    assert_close(srcjax.jit(f)(x), f0(x))
    assert_close(srcjax.grad(f)(x), srcjax.grad(f0)(x))
    xs = np.stack([x, x * 0.5]) if np.ndim(x) else np.array([x, 0.5 * x], np.float32)
    assert_close(srcjax.vmap(f)(xs), [f0(v) for v in xs], rtol=1e-6)
    x64 = np.asarray(x, np.float64)
    assert_close(srcjax.grad(f)(x64), fd_grad(f0, x64), rtol=1e-5)


def test_unroll_is_checked_as_jax():
    body = lambda c, y: (c + y, y)  # noqa: E731
    with pytest.raises(ValueError, match="non-negative"):
        lax.scan(body, 0.0, X4, unroll=-1)
    with pytest.raises(ValueError, match="non-negative"):
        lax.fori_loop(0, 2, lambda i, c: c, 0.0, unroll=-2)
    with pytest.raises(TypeError):
        lax.fori_loop(0, 2, lambda i, c: c, 0.0, 2)  # unroll is keyword-only
    with pytest.raises(TypeError):
        lax.map(jnp.sin, X4, 2)  # batch_size is keyword-only
    assert lax.fori_loop(0, 2, lambda i, c: c + 1.0, 0.0, unroll=False) == 2.0
    assert_close(lax.map(jnp.sin, X4, batch_size=0), np.sin(X4))


# -- lax.associative_scan, cummax, cummin, cumlogsumexp (JAX 0.10.2, recorded) -----------
ASSOC_RECORDED = __import__("pathlib").Path(__file__).parent / "data" / "assoc_scan_jax.npz"
AS = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0], np.float32)
AS2 = np.array([[0.5, -1.0, 2.0, 2.0, 0.25], [1.5, 1.5, -0.5, 3.0, 0.1]], np.float32)


def _linrec(p, q):
    return (p[0] * q[0], p[1] * q[0] + q[1])


def _assoc_compute(jax, jnp, lax):
    r = {}
    r["add"] = lax.associative_scan(jnp.add, AS)
    r["add_rev"] = lax.associative_scan(jnp.add, AS, reverse=True)
    r["mul_axis1"] = lax.associative_scan(jnp.multiply, AS2, axis=1)
    r["max_axis_rev"] = lax.associative_scan(jnp.maximum, AS2, axis=1, reverse=True)
    r["max_axis_neg"] = lax.associative_scan(jnp.maximum, AS2, axis=-1)
    a, b = lax.associative_scan(_linrec, (AS2[0] * 0.5, AS2[1]), axis=0)
    r["tuple_a"], r["tuple_b"] = a, b
    r["list"] = lax.associative_scan(lambda p, q: [p[0] + q[0], p[1] * q[1]], [AS[:5], AS2[0]])[1]
    r["grad_tuple"] = jax.grad(
        lambda x: jnp.sum(lax.associative_scan(_linrec, (x * 0.3, x))[1] * jnp.arange(5.0))
    )(AS2[1])
    r["grad_lambda"] = jax.grad(
        lambda x: jnp.sum(lax.associative_scan(lambda u, v: u * v + v, x) ** 2)
    )(AS2[0] * 0.5)
    r["vmap"] = jax.vmap(lambda x: lax.associative_scan(jnp.add, x, reverse=True))(AS2)
    r["jit"] = jax.jit(lambda x: lax.associative_scan(_linrec, (x, x + 1.0), axis=1)[1])(AS2)
    for name in ("cummax", "cummin", "cumlogsumexp"):
        f = getattr(lax, name)
        r[name] = f(AS)
        r[name + "_rev"] = f(AS, reverse=True)
        r[name + "_axis1"] = f(AS2, axis=1)
        r[name + "_grad"] = jax.grad(lambda x: jnp.sum(f(x) * jnp.arange(11.0)))(AS)  # noqa: B023
        r[name + "_grad_rev"] = jax.grad(lambda x: jnp.sum(f(x, axis=1, reverse=True) ** 2))(AS2)  # noqa: B023
        r[name + "_vmap"] = jax.vmap(lambda x: f(x, reverse=True))(AS2)  # noqa: B023
        r[name + "_jit"] = jax.jit(lambda x: f(x, axis=0))(AS2)  # noqa: B023
    r["cummax_int"] = lax.cummax(np.array([1, 3, 2, 5, 4], np.int32))
    return r


def _assoc_with_jax():
    import jax
    import jax.numpy as jjnp

    return _assoc_compute(jax, jjnp, jax.lax)


def test_associative_scan_and_cumulative_reductions_match_jax():
    """Values (same odd/even tree as JAX), reverse, axis, tuple/list elements,
    lambdas and library functions as fn, grad (max ties split as in JAX), vmap,
    jit. Oracle: JAX 0.10.2, recorded."""
    from helpers import assert_matches_recorded, jax_recorded

    recorded = jax_recorded(ASSOC_RECORDED, _assoc_with_jax)
    ours = _assoc_compute(srcjax, jnp, lax)
    assert_matches_recorded(ours, recorded, rtol=2e-6, atol=1e-6)


def test_associative_scan_is_the_sequential_scan(x64):
    rng = np.random.default_rng(5)
    for n in (1, 2, 3, 7, 8, 13):
        x = rng.normal(size=(n, 2))
        got = lax.associative_scan(_linrec, (x * 0.5, x))
        want_b = []
        acc = None
        for i in range(n):
            acc = (x[i] * 0.5, x[i]) if acc is None else _linrec(acc, (x[i] * 0.5, x[i]))
            want_b.append(acc[1])
        assert_close(got[1], np.stack(want_b), rtol=1e-12)

    def loss(x):
        return jnp.sum(jnp.sin(lax.associative_scan(_linrec, (x * 0.5, x), axis=1)[1]))

    x = rng.normal(size=(2, 6))
    assert_close(srcjax.grad(loss)(x), fd_grad(loss, x), rtol=1e-6, atol=1e-9)
    assert_close(srcjax.jit(srcjax.grad(loss))(x), srcjax.grad(loss)(x), rtol=1e-12)
    xs = rng.normal(size=(3, 2, 6))
    assert_close(srcjax.vmap(loss)(xs), [loss(v) for v in xs], rtol=1e-12)
    with pytest.raises(ValueError, match="same first dimension"):
        lax.associative_scan(_linrec, (x, x[:, :3]), axis=1)


def test_vmap_of_grad_of_scan_over_a_dict_with_an_unused_leaf():
    # Found by helper (user B bug 1 follow-up): the per-example slice adjoint met a
    # hole (None) for the unused leaf's cotangent: 'pytree structure mismatch'.
    def g(w):
        xs = {"a": w * jnp.arange(3.0), "b": jnp.ones(3) * w}

        def step(c, x):
            return c * x["b"], x["a"]

        c, ys = lax.scan(step, 1.0, xs)
        return c

    ws = np.array([2.0, 3.0], np.float32)
    np.testing.assert_allclose(srcjax.vmap(srcjax.grad(g))(ws), 3.0 * ws**2, rtol=1e-6)


# -- carry types (user C bug 5) ------------------------------------------------------
# programs of the float32 array x = ones(2); JAX 0.10.2 raises TypeError ("carry input
# and carry output must have equal types") for those in _CARRY_RAISES and runs the
# others (recorded with jax.lax / jax.numpy in place of lax / jnp)
def _carry_scan_grow(x):
    return lax.scan(lambda c, t: (jnp.concatenate([c, c]), t), x, jnp.arange(3))


def _carry_scan_retype(x):
    return lax.scan(lambda c, t: (c.astype(jnp.int32), t), x, jnp.arange(3))


def _carry_fori_retype(x):
    return lax.fori_loop(0, 3, lambda i, c: c.astype(jnp.int32), x)


def _carry_fori_to_bool(x):
    return lax.fori_loop(0, 3, lambda i, c: c > 0, x)


def _carry_fori_to_f16(x):
    return lax.fori_loop(0, 3, lambda i, c: c.astype(jnp.float16), x)


def _carry_fori_int_arr_to_f32(x):
    return lax.fori_loop(0, 3, lambda i, c: c + x, jnp.zeros(2, jnp.int32))


def _carry_while_retype(x):
    return lax.while_loop(lambda c: c.sum() < 10, lambda c: c.astype(jnp.int32), x)


def _carry_while_grow(x):
    return lax.while_loop(lambda c: c.sum() < 10, lambda c: jnp.concatenate([c, c]), x)


# accepted by JAX (float32 kept; NumPy's promotion may widen them eagerly)
def _carry_fori_py_float(x):
    return lax.fori_loop(0, 3, lambda i, c: c + 1.5, x)


def _carry_fori_int32_arr(x):
    return lax.fori_loop(0, 3, lambda i, c: c + jnp.arange(2, dtype=jnp.int32), x)


def _carry_fori_weak_int_to_float(x):
    return lax.fori_loop(0, 3, lambda i, c: c + 0.5, 0) + x


def _carry_scan_int_xs(x):
    return lax.scan(lambda c, t: (c + t, t), x, jnp.arange(3))[0]


def _carry_scan_weak_tuple(x):
    return lax.scan(lambda c, t: ((c[0], c[1] * 2.0), t), (x, 1), jnp.arange(3))[0][1] + x


_CARRY_CASES = {
    k[len("_carry_") :]: v for k, v in list(globals().items()) if k.startswith("_carry_")
}
_CARRY_RAISES = [
    "scan_grow",
    "scan_retype",
    "fori_retype",
    "fori_to_bool",
    "fori_to_f16",
    "fori_int_arr_to_f32",
    "while_retype",
    "while_grow",
]
CARRY_RECORDED = os.path.join(os.path.dirname(__file__), "data", "lax_carry_jax.npz")


def _carry_with_jax():
    import types

    import jax

    out = {}
    for k, fn in _CARRY_CASES.items():
        g = types.FunctionType(fn.__code__, {**fn.__globals__, "lax": jax.lax, "jnp": jax.numpy})
        try:
            out[k] = np.asarray(g(jax.numpy.ones(2, jax.numpy.float32)))
            assert k not in _CARRY_RAISES, k
        except TypeError as err:
            assert k in _CARRY_RAISES and "carry output must have equal types" in str(err)
    return out


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_loop_carry_types_are_checked_as_jax(mode, x64_off):
    """User C bug 5: a body changing its carry's dtype (astype(int32)) ran; under
    jit, a changed shape too. JAX raises TypeError; programs JAX accepts (a
    float32 carry plus a Python float or an int32 array, a Python-scalar carry
    promoted) keep running, with JAX's values and dtypes."""
    from helpers import assert_matches_recorded, jax_recorded

    recorded = jax_recorded(CARRY_RECORDED, _carry_with_jax)
    x = np.ones(2, np.float32)
    ours = {}
    for k, fn in _CARRY_CASES.items():
        run = fn if mode == "eager" else srcjax.jit(fn)
        if k in _CARRY_RAISES:
            with pytest.raises(TypeError, match="carry input and carry output must have equal"):
                run(x)
        else:
            ours[k] = run(x)
    assert_matches_recorded(ours, recorded)


def _lowered_scan(c0):
    # a lax loop as the normalizer lowers it, with the check it should emit after it
    c = c0
    for k in range(3):
        c = c * 2.0 + k
    check_carry("scan body", c0, c)
    return jnp.sum(c)


def _lowered_retype(c0):
    c = c0
    for k in range(3):
        c = (c * 2.0).astype(jnp.int32)
    check_carry("scan body", c0, c)
    return c


def _lowered_scalar_init(x):
    c = 0.0
    for k in range(3):
        c = c + x * k
    check_carry("scan body", 0.0, c)
    return c


def test_check_carry_primitive_under_transforms(x64_off):
    """ad.check_carry (for the loops the normalizer lowers) passes correct
    programs under jit/grad/vmap (a batched carry from an unbatched init) and
    raises JAX's TypeError for a changed dtype."""
    x = np.array([1.0, 2.0], np.float32)
    want = float(np.sum(((x * 2 + 0) * 2 + 1) * 2 + 2))
    for fn in [_lowered_scan, srcjax.jit(_lowered_scan)]:
        np.testing.assert_allclose(fn(x), want)
    np.testing.assert_allclose(srcjax.grad(_lowered_scan)(x), [8.0, 8.0])
    xs = np.stack([x, x + 1])
    np.testing.assert_allclose(srcjax.vmap(_lowered_scan)(xs), [_lowered_scan(r) for r in xs])
    np.testing.assert_allclose(srcjax.vmap(srcjax.grad(_lowered_scan))(xs), 8.0)
    np.testing.assert_allclose(srcjax.vmap(_lowered_scalar_init)(x), [3.0, 6.0])
    np.testing.assert_allclose(srcjax.grad(_lowered_scalar_init)(np.float32(1.0)), 3.0)
    for fn in [_lowered_retype, srcjax.jit(_lowered_retype), srcjax.vmap(_lowered_retype)]:
        with pytest.raises(TypeError, match="carry input and carry output must have equal"):
            fn(x)


# -- user F bugs 3, 12, 13 (eager lax.scan / cond / switch) ----------------------------
# JAX 0.10.2: jax.lax.scan(lambda c, x: (c + x, c * x), float32(1), zeros((0,)))
# is (Array(1., float32), Array([], shape=(0,), float32)); a body returning a
# non-pair raises TypeError "scan body output must be a pair, got float32[]";
# cond/switch branches of different output types raise TypeError
# "... branches must have equal output types"


def test_scan_zero_length_ys_typed_user_f_bug3():
    xs = np.zeros((0,), np.float32)
    c, ys = lax.scan(lambda c, x: (c + x, c * x), np.float32(1.0), xs)
    assert np.asarray(c) == 1.0 and np.asarray(c).dtype == np.float32
    assert ys.shape == (0,) and ys.dtype == np.float32
    xs2 = np.zeros((0, 3), np.float32)
    _, ys2 = lax.scan(lambda c, x: (c, (x * 2, jnp.sum(x) > 0)), 0.0, xs2)
    assert ys2[0].shape == (0, 3) and ys2[0].dtype == np.float32
    assert ys2[1].shape == (0,) and ys2[1].dtype == np.bool_
    _, ys3 = lax.scan(lambda c, x: (c, None), 0.0, xs)
    assert ys3 is None


def test_scan_body_not_a_pair_user_f_bug13():
    a = np.arange(3.0, dtype=np.float32)
    with pytest.raises(TypeError, match="scan body output must be a pair"):
        lax.scan(lambda c, x: c + x, 0.0, a)
    with pytest.raises(TypeError, match="scan body output must be a pair"):
        lax.scan(lambda c, x: (c, x, x), 0.0, a)


def test_cond_switch_branch_types_user_f_bug12():
    with pytest.raises(TypeError, match="branches must have equal output types"):
        lax.cond(True, lambda x: x, lambda x: jnp.stack([x, x]), 1.0)
    with pytest.raises(TypeError, match="must have the same pytree structure"):
        lax.cond(False, lambda x: x, lambda x: (x, x), 1.0)
    with pytest.raises(TypeError, match="branches must have equal output types"):
        lax.switch(0, [lambda x: x, lambda x: x.astype(jnp.int32)], 1.0)
    # equal types (weak Python scalars canonicalized) pass, the taken branch's value
    assert lax.cond(True, lambda x: x + 1.0, lambda x: 2.0, 1.0) == 2.0
    assert lax.switch(5, [lambda x: x, lambda x: -x], np.float32(3.0)) == -3.0


def _iadd_body(c, x):
    c += x
    return c, c


def _imul_body(i, c):
    c *= 2.0
    return c


def test_eager_loops_with_augmented_assignment_keep_value_semantics():
    """User H bug 1: an eager lax.scan whose body does ``c += x`` wrote into the
    carry's NumPy buffer: every stacked output was the last carry ([[3,3]]*3) and the
    caller's init changed. Such bodies now run through jit (c = c + x), as JAX's."""
    c0 = np.zeros(2, np.float32)
    c, ys = lax.scan(_iadd_body, c0, np.ones((3, 2), np.float32))
    np.testing.assert_array_equal(ys, [[1, 1], [2, 2], [3, 3]])
    np.testing.assert_array_equal(c, [3, 3])
    np.testing.assert_array_equal(c0, [0, 0])
    c1 = np.ones(2, np.float32)
    np.testing.assert_array_equal(lax.fori_loop(0, 3, _imul_body, c1), [8, 8])
    np.testing.assert_array_equal(c1, [1, 1])


# -- reverse mode through long loops is linear in the trip count -----------------------
# Before: the adjoint of `ys.append(y)` rebuilt the list as `ys = ys[:-1]` on every
# reverse trip, and a row read `xs[k]` added a zero array of xs's size per trip, so
# jit(grad) through a lax.scan of length 80k spent 89 us per step (10k: 24 us).

_GOLDEN = os.path.join(os.path.dirname(__file__), "golden")


def _scan_models():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "scan_models", os.path.join(_GOLDEN, "scan_models.py")
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_scan_grad_source_is_pinned_and_linear():
    """The generated gradient of a long lax.scan (tests/golden/scan_models.py):
    no list copied per reverse trip, no xs-sized array per trip; the rows'
    cotangents are pushed on a list and stacked once. To accept a deliberate
    change, run with SRCJAX_UPDATE_GOLDEN=1 and review the diff."""
    m = _scan_models()
    text = srcjax.source(srcjax.grad(m.long_scan), np.zeros(4, np.float32))
    loop = text.split("for k in reversed(range(n)):")[1]
    assert "[:-1]" not in text and "tree_slice_adjoint" not in text
    assert "x_rows_bar.append(x1_bar)" in loop
    assert "ad.rows_adjoint(x_rows_bar, x, last_first=True)" in text
    path = os.path.join(_GOLDEN, "scan_grad.py.txt")
    if os.environ.get("SRCJAX_UPDATE_GOLDEN") or not os.path.exists(path):
        with open(path, "w") as fh:
            fh.write(text)
    with open(path) as fh:
        assert text == fh.read(), f"generated source changed; see {path}"


def _rows_scan(x):
    def step(h, xi):
        h = jnp.tanh(h * 0.9 + xi)
        return h, h * xi

    h, ys = lax.scan(step, jnp.zeros(3), x)
    return jnp.sum(ys) + jnp.sum(h * h)


def _rows_scan_reverse(x):
    def step(h, xi):
        h = jnp.sin(h * 0.7 + xi)
        return h, h * xi

    h, ys = lax.scan(step, jnp.zeros(3), x, reverse=True)
    return jnp.sum(ys * jnp.arange(x.shape[0])[:, None]) + jnp.sum(h)


def _rows_scan_tree(x):
    def step(h, xi):
        a, b = xi
        h = jnp.sin(h * a) + b["q"]
        return h, h

    h, ys = lax.scan(step, 0.5, (x[:, 0], {"q": x[:, 1]}))
    return jnp.sum(ys * ys)


def _rows_for(x):
    s = 0.0
    for row in x:
        s = s + jnp.sin(row) * s + row
    return jnp.sum(s)


def _rows_fori(x):
    def body(i, c):
        return c * 0.5 + jnp.sin(x[i]) * i

    return jnp.sum(lax.fori_loop(1, 4, body, jnp.zeros(3)))


def _rows_hist(x):
    # the list restore is needed here: an earlier read (hist[-1]) sees the shorter list
    hist = [x[0]]
    for i in range(3):
        hist.append(hist[-1] * x[1])
    return jnp.sum(hist[-1] + hist[1])


def _rows_twice(x):
    # two reads of the same row in one pass: two lists, both initialized before the loop
    s = 0.0
    for i in range(x.shape[0]):
        s = s + jnp.sum(jnp.sin(x[i]) * i) + jnp.sum((x[i] * 2) ** 2)
    return s


_ROWS = [
    _rows_scan,
    _rows_scan_reverse,
    _rows_scan_tree,
    _rows_for,
    _rows_fori,
    _rows_hist,
    _rows_twice,
]


@pytest.mark.parametrize("fn", _ROWS, ids=lambda f: f.__name__)
def test_row_cotangents_match_finite_differences(fn):
    """Gradients through loops that read rows by the trip index (their cotangents
    stacked once after the reverse loop) against float64 central differences;
    jit(grad) and vmap(grad) against grad; a Hessian-vector product against
    differences of the gradient."""
    rng = np.random.RandomState(1)
    x = rng.randn(5, 3) * 0.5
    g = srcjax.grad(fn)(x)
    assert g.dtype == np.float64 and g.shape == x.shape
    assert_close(g, fd_grad(fn, x), rtol=1e-6, atol=1e-8)
    assert_close(srcjax.jit(srcjax.grad(fn))(x), g, rtol=1e-12, atol=1e-14)
    xs = np.stack([x, 0.5 * x])
    assert_close(srcjax.vmap(srcjax.grad(fn))(xs), [g, srcjax.grad(fn)(0.5 * x)], atol=1e-14)
    v = rng.randn(5, 3)
    gf = srcjax.grad(fn)
    hvp = srcjax.grad(lambda y: jnp.vdot(gf(y), v))(x)
    eps = 1e-5
    assert_close(hvp, (gf(x + eps * v) - gf(x - eps * v)) / (2 * eps), rtol=1e-5, atol=1e-7)


def test_row_cotangents_stay_float32():
    x = np.random.RandomState(2).randn(6, 3).astype(np.float32)
    for fn in (_rows_scan, _rows_for, _rows_fori):
        assert srcjax.grad(fn)(x).dtype == np.float32


def test_rows_adjoint_and_rows_of():
    """ad.rows_adjoint (rows' cotangents -> the array's) and its transpose
    ad.rows_of, against a loop of scatters: holes, Python scalars, a first
    row, the reverse order, negative rows (from the end), a pytree, a vmap axis."""
    from srcjax.primitives.control import _rows_adjoint, _rows_of

    xs = np.zeros((5, 2), np.float32)
    a, b = np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32)
    np.testing.assert_array_equal(
        _rows_adjoint([a, None, b], xs, start=1), [[0, 0], [1, 2], [0, 0], [3, 4], [0, 0]]
    )
    got = _rows_adjoint([a, 2.0, b], xs, start=1, last_first=True)
    np.testing.assert_array_equal(got, [[0, 0], [3, 4], [2, 2], [1, 2], [0, 0]])
    assert got.dtype == np.float32
    # rows -2, -1, 0 (a fori_loop from -2): row 0 once, rows 3 and 4 from the end
    got = _rows_adjoint([a, b, a], xs, start=-2)
    np.testing.assert_array_equal(got, [[1, 2], [0, 0], [0, 0], [1, 2], [3, 4]])
    np.testing.assert_array_equal(_rows_adjoint([], xs), np.zeros((5, 2)))
    tree = {"p": np.zeros(3), "q": np.zeros((3, 2))}
    got = _rows_adjoint([{"p": 1.0}, None], tree, last_first=True)
    np.testing.assert_array_equal(got["p"], [0, 1, 0])
    np.testing.assert_array_equal(got["q"], np.zeros((3, 2)))
    # a vmap axis first: per example the same as without it
    bx = np.zeros((2, 4, 3))
    rows = [np.arange(6.0).reshape(2, 3) + 10 * j for j in range(3)]
    got = _rows_adjoint(rows, bx, start=1, last_first=True, axis=1)
    for e in range(2):
        want = _rows_adjoint([r[e] for r in rows], bx[e], start=1, last_first=True)
        np.testing.assert_array_equal(got[e], want)
    # the transpose: <rows_adjoint(r), g> == sum_j <r_j, rows_of(g)_j>
    g = np.random.RandomState(0).randn(5, 2)
    r = [np.random.RandomState(j).randn(2) for j in range(3)]
    for start, last in ((0, False), (2, True), (-1, False)):
        lhs = np.vdot(_rows_adjoint(r, g, start=start, last_first=last), g)
        rhs = sum(np.vdot(u, w) for u, w in zip(r, _rows_of(g, r, start=start, last_first=last)))
        assert_close(lhs, rhs, rtol=1e-12)


def _overwritten_output(x):
    x = jnp.sin(x)
    x = jnp.sin(x)
    return x


def test_value_and_grad_value_when_the_output_name_is_overwritten():
    """value_and_grad returned sin(1.0)'s input (1.0): the reverse sweep restores
    `x` to its older values before the return read it."""
    v, g = srcjax.value_and_grad(_overwritten_output)(1.0)
    assert_close(v, np.sin(np.sin(1.0)))
    assert_close(g, np.cos(np.sin(1.0)) * np.cos(1.0))


def test_carry_check_shortcut_agrees_with_the_full_check(x64_off):
    """ad.check_carry's shortcut (attribute compares, run on every loop pass)
    accepts only what the full check accepts, and leaves every rejection to it."""
    from srcjax.primitives.control import _carry_same, _check_carry_full

    f32, i32 = np.float32, np.int32
    values = [
        1.0,
        2,
        True,
        None,
        f32(1),
        np.ones((), f32),
        np.ones(2, f32),
        np.ones(2, np.float16),
        np.ones(2, i32),
        np.ones((2, 2), f32),
        np.complex64(1),
        (np.ones(2, f32), 1.0),
        [np.ones(2, f32), 1.0],
        {"a": f32(1), "b": 2},
        {"a": f32(1)},
    ]
    accepted = 0
    for b in values:
        for a in values:
            try:
                _check_carry_full("scan body", b, a)
                ok = True
            except TypeError:
                ok = False
            if _carry_same(b, a, 0, 0):
                assert ok, (b, a)
                accepted += 1
    assert accepted > 20


def test_loop_carries_that_start_as_python_floats_are_float32_under_transforms(x64_off):
    # User R: under jit (and jacfwd, vmap) a carry starting as 0.0 stayed a Python
    # float, so `t + 0.01` ran in float64: 100 steps to t = 1 where JAX's float32
    # takes 101 (x 2% off). Values from jax 0.10.2.
    def decay(k):
        def body(s):
            x, t = s
            return x - 0.01 * k * x, t + 0.01

        return lax.while_loop(lambda s: s[1] < 1.0, body, (1.0, 0.0))

    for f in (decay, srcjax.jit(decay)):
        x, t = f(2.0)
        np.testing.assert_allclose([x, t], [0.12996718, 1.0099994], rtol=1e-6)
        assert np.asarray(t).dtype == np.float32
    np.testing.assert_allclose(srcjax.jacfwd(lambda k: decay(k)[0])(2.0), -0.13394576, rtol=1e-5)
    fsum = srcjax.jit(lambda x: lax.fori_loop(0, 1000, lambda i, t: t + 0.01, 0.0) + 0 * x)
    np.testing.assert_allclose(fsum(1.0), 10.0001335, rtol=1e-7)
    cs = srcjax.jit(lambda x: lax.scan(lambda c, _: (c + 0.01, None), 0.0, None, length=1000)[0])
    np.testing.assert_allclose(cs(1.0), 10.0001335, rtol=1e-7)


def _gg_scan(w):
    def step(c, _):
        x, v = c
        v = v - w * x
        return (x + v, v), x

    return lax.scan(step, (1.0, 0.0), None, length=3)[1][-1]


def test_grad_of_grad_through_a_scan_with_a_tuple_carry():
    # User R 2d: grad(grad(f)) through lax.scan with a tuple carry was an IndexError
    # (the first-order adjoint's zero for the whole carry indexed like a tuple).
    # Values from jax 0.10.2 (1.0, 2.0); oracle also central differences of grad.
    g1 = srcjax.grad(_gg_scan)
    assert float(g1(2.0)) == 1.0
    assert_close(srcjax.grad(g1)(2.0), 2.0, rtol=1e-6)
    assert_close(srcjax.jit(srcjax.grad(g1))(2.0), 2.0, rtol=1e-6)
    assert_close(srcjax.grad(g1)(0.7), fd_grad(lambda w: g1(float(w)), 0.7), rtol=1e-4)


def test_fori_loop_bounds_of_different_types_are_a_type_error(x64_off):
    # User R: fori_loop(0, 2.5, ...) ran two passes; JAX 0.10.2 raises TypeError for
    # bounds of different types, and accepts a Python int with an int32 bound.
    with pytest.raises(TypeError, match="lower and upper arguments to fori_loop"):
        lax.fori_loop(0, 2.5, lambda i, x: x + i, 0.0)
    assert float(lax.fori_loop(0, np.int32(3), lambda i, x: x + i, 0.0)) == 3.0
    assert float(lax.fori_loop(0.0, 3.0, lambda i, x: x + i, 0.0)) == 3.0


def _cond_of_a_vector(x):
    return lax.cond(x > 0, lambda v: v, lambda v: -v, x)


def _digits(i, c):
    return c[0] + 1, c[1] + i * 10.0 ** c[0]


_FLOAT_BOUNDS = {  # literal bounds (as the user wrote them) -> JAX 0.10.2's (count, sum)
    (0.5, 3.0): (lambda x: lax.fori_loop(0.5, 3.0, _digits, (0, x)), (3, 210.0)),
    (1.7, 4.2): (lambda x: lax.fori_loop(1.7, 4.2, _digits, (0, x)), (3, 321.0)),
    (0.0, 2.5): (lambda x: lax.fori_loop(0.0, 2.5, _digits, (0, x)), (2, 10.0)),
    (-1.5, 1.0): (lambda x: lax.fori_loop(-1.5, 1.0, _digits, (0, x)), (2, -1.0)),
}


def test_control_flow_misuse_under_jit_fresh_user_bug_37():
    """(a) a vector predicate: JAX's TypeError "Pred must be a scalar" at the
    user's lax.cond (srcjax: NumPy's "truth value ... ambiguous" from generated
    code); (b) Python float bounds of fori_loop run truncated to ints, as JAX
    0.10.2 runs them (srcjax: "'float' object cannot be interpreted as an
    integer"). Oracle: jax 0.10.2's messages and values (the loop's count and
    sum of i * 10**k over its iterations)."""
    with pytest.raises(
        TypeError, match=r"Pred must be a scalar, got bool\[3\] of shape \(3,\)"
    ) as info:
        srcjax.jit(_cond_of_a_vector)(jnp.ones(3))
    assert f"{__file__}:" in str(info.value)
    for (lo, hi), (f, want) in _FLOAT_BOUNDS.items():
        for run in (f, srcjax.jit(f)):
            n, s = run(0.0)
            assert (int(n), float(s)) == want, (lo, hi)
