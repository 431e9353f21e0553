"""jit's abstract value of a scan's row of a tuple or dict of scanned arrays,
``x = ad.tree_slice(xs, k)`` (primitives/control/scan.py ``_tree_slice_shape``).

user8 p06 (neural ODE, RK4 in ``lax.scan(step, y0, (ts[:-1], ts[1:]))``): the row
was unknown, so was every value of the forward loop computed from it and every
value of the reverse loop computed from its restores; the reverse trips ran 26
``ad.unbroadcast`` and 8 untyped ``ad.matmul_left`` calls each (~9x jax.jit).
Oracles: float64 central differences of the loss run eagerly (no jit, no grad),
and grad without jit."""

import collections

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax
from srcjax.primitives.control.scan import _tree_slice_shape
from srcjax.transforms.optimize.avals import Aval
from srcjax.transforms.optimize.common import _Static

N_STEPS, HID = 7, 5
_Rows = collections.namedtuple("_Rows", "t u")


def _dyn(y, p):
    return jnp.tanh(y @ p["w1"]) @ p["w2"] - 0.1 * y


def _rk4_step(p):
    def step(y, t01):  # user8 p06's step: the row is a tuple (t0, t1)
        t0, t1 = t01
        h = t1 - t0
        k1 = _dyn(y, p)
        k2 = _dyn(y + h / 2 * k1, p)
        k3 = _dyn(y + h / 2 * k2, p)
        k4 = _dyn(y + h * k3, p)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y, y

    return step


def loss_tuple_rows(p, y0, ts, target):
    _, ys = lax.scan(_rk4_step(p), y0, (ts[:-1], ts[1:]))
    return jnp.mean((ys - target) ** 2)


def loss_dict_rows(p, y0, ts, target):
    def step(y, row):
        h = row["t1"] - row["t0"]
        y = y + h * _dyn(y + row["u"], p)
        return y, y * row["t1"]

    u = jnp.sin(target)  # (a dict row of arrays of two shapes: scalars and vectors)
    _, ys = lax.scan(step, y0, {"t0": ts[:-1], "t1": ts[1:], "u": u})
    return jnp.mean((ys - target) ** 2)


def loss_tuple_reverse(p, y0, ts, target):
    _, ys = lax.scan(_rk4_step(p), y0, (ts[:-1], ts[1:]), reverse=True)
    return jnp.mean((ys - target) ** 2)


CASES = {"tuple_rows": loss_tuple_rows, "dict_rows": loss_dict_rows, "reverse": loss_tuple_reverse}


def _inputs(seed):
    rng = np.random.default_rng(seed)
    p = {
        "w1": (rng.standard_normal((2, HID)) * 0.5).astype(np.float32),
        "w2": (rng.standard_normal((HID, 2)) * 0.5).astype(np.float32),
    }
    y0 = np.array([1.0, 0.0], np.float32)
    ts = np.sort(rng.uniform(0, 2, N_STEPS + 1)).astype(np.float32)
    target = rng.standard_normal((N_STEPS, 2)).astype(np.float32)
    return p, y0, ts, target


def _central_differences(loss, p, args, eps=1e-6):
    srcjax.config.update("jax_enable_x64", True)
    try:
        q = {k: v.astype(np.float64) for k, v in p.items()}
        a64 = [a.astype(np.float64) for a in args]
        out = {}
        for k in q:
            num = np.zeros_like(q[k])
            for idx in np.ndindex(q[k].shape):
                a, b = {**q, k: q[k].copy()}, {**q, k: q[k].copy()}
                a[k][idx] += eps
                b[k][idx] -= eps
                num[idx] = (float(loss(a, *a64)) - float(loss(b, *a64))) / (2 * eps)
            out[k] = num
        return out
    finally:
        srcjax.config.update("jax_enable_x64", False)


@pytest.mark.parametrize("name", sorted(CASES))
def test_scan_of_tuple_rows_gradients_against_float64_differences(name):
    loss = CASES[name]
    p, *args = _inputs(len(name))
    v, g = srcjax.jit(srcjax.value_and_grad(loss))(p, *args)
    plain = srcjax.grad(loss)(p, *args)  # (no jit: no optimizer)
    want = _central_differences(loss, p, args)
    assert abs(float(v) - float(loss(p, *args))) <= 1e-6 * max(1.0, abs(float(v)))
    for k in p:
        assert np.asarray(g[k]).dtype == np.float32
        np.testing.assert_allclose(np.asarray(g[k]), want[k], rtol=2e-3, atol=2e-5)
        np.testing.assert_allclose(np.asarray(g[k]), np.asarray(plain[k]), rtol=2e-5, atol=2e-7)


def test_the_reverse_loop_of_a_tuple_scan_is_typed():
    # p06's shape: the jit's reverse loop folds every ad.unbroadcast (all operands
    # known, none broadcast) and multiplies by the weights without matmul_left's
    # run-time shape dispatch
    p, *args = _inputs(0)
    f = srcjax.jit(srcjax.value_and_grad(loss_tuple_rows))
    f(p, *args)
    src = srcjax.source(f, p, *args)
    code = "\n".join(line.split("#")[0].rstrip() for line in src.splitlines())
    rev = code.split("for k in reversed(range(")[1].split("\n    if ")[0]
    assert "ad.unbroadcast" not in code, code
    assert "ad.matmul_left" not in rev, rev
    assert "x = ad.tree_slice(xs, k)" in code, code


A = Aval((6,), np.dtype(np.float32))
M = Aval((6, 3), np.dtype(np.float32), wt=True)
K = Aval((), np.dtype(np.int64), ptype=int)  # a loop's counter: a weak int


@pytest.mark.parametrize(
    "xs,i,want",
    [
        ((A, M), K, ("tuple", [((), "float32", False), ((3,), "float32", True)])),
        ({"a": A, "m": M}, _Static(2), ("dict", [((), "float32", False), ((3,), "float32", True)])),
        (
            (A, M),
            Aval((), np.dtype(np.int32)),
            ("tuple", [((), "float32", False), ((3,), "float32", True)]),
        ),
        ((A, M), Aval((2,), np.dtype(np.int32)), None),  # (rows at an index array: a gather)
        ((A, M), Aval((), np.dtype(np.float32)), None),
        ((A, M), None, None),
        ((A, None), K, None),  # an unknown leaf
        ((A, (A, M)), K, None),  # a nested tree: not read here
        (_Rows(A, M), K, None),  # a named tuple: not read here
        ([A, M], K, None),  # (a list: its items may change at run time)
        ((A, Aval((), np.dtype(np.float32))), K, None),  # a leaf without rows
        ((A, Aval((), np.dtype(np.float64), ptype=float)), K, None),  # a Python scalar
        (A, K, None),  # (an array: run on stand-ins, as before)
    ],
)
def test_tree_slice_rule(xs, i, want):
    r = _tree_slice_shape({"xs": xs, "i": i})
    if want is None:
        assert r is None
        return
    kind, rows = want
    tree = r["tree"]
    assert type(tree) is (tuple if kind == "tuple" else dict)
    got = list(tree) if kind == "tuple" else [tree[k] for k in xs]
    if kind == "dict":
        assert list(tree) == list(xs)
    assert [(s, str(d), w) for s, d, w in got] == rows
    # the rule agrees with the primitive's own result on arrays of those shapes
    leaves = list(xs) if kind == "tuple" else list(xs.values())
    arrays = [np.zeros(a.shape, a.dtype) for a in leaves]
    vals = tuple(arrays) if kind == "tuple" else dict(zip(xs, arrays))
    out = srcjax.primitives.control.scan._tree_slice(vals, 1)
    outs = list(out) if kind == "tuple" else [out[k] for k in xs]
    assert [(o.shape, str(o.dtype)) for o in outs] == [(s, d) for s, d, _ in rows]
