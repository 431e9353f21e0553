"""Out-of-bounds indices under jit, grad and vmap follow JAX, as eager code does
(tests/test_oob.py): gathers clamp (``x.at[i].get(mode="fill")`` fills), updates
drop (``mode="clip"`` clamps), negative indices wrap once; the gradient of a
gather with scalar indices goes to the clamped index, with an index array the
out-of-bounds entries get none, and a dropped update gets a zero cotangent.
Every index form x expression of tests/oob_cases.py against JAX 0.10.2's values
(tests/data/oob_transforms.json, recorded by tools/record_oob.py; no JAX here)."""

import importlib.util
import json
import os

import numpy as np
import pytest
from oob_cases import FORMS, cases, module_source, weights

import srcjax
import srcjax.numpy as jnp

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "data", "oob_transforms.json")) as _f:
    RECORDED = json.load(_f)["cases"]
CASES = {key: (n, k) for n, (key, k, _) in enumerate(cases())}


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    path = tmp_path_factory.mktemp("oob") / "oob_cases_srcjax.py"
    path.write_text(module_source("srcjax.numpy"))
    spec = importlib.util.spec_from_file_location("oob_cases_srcjax", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


X = np.arange(12, dtype=np.float32).reshape(3, 4) + 1
V = np.float32(2.0)


def _check(got, want):
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.array(want, float), rtol=1e-6)


def test_every_case_is_recorded():
    assert sorted(RECORDED) == sorted(CASES)


@pytest.mark.parametrize("key", sorted(CASES))
def test_value_eager_and_jit(m, key):
    n, _ = CASES[key]
    f = getattr(m, f"f{n}")
    want = RECORDED[key]["value"]
    _check(f(jnp.asarray(X), jnp.asarray(V)), want)
    _check(srcjax.jit(f)(X, V), want)


def _finite(rec):
    return np.isfinite(rec["grad_v"]) and np.isfinite(np.array(rec["grad_x"], float)).all()


def _min_max_clip(key):
    return ("min(" in key or "max(" in key) and "clip" in key


#: JAX's gradients of .at[i].min/max(v, mode="clip") with an index out of bounds
#: are not those of the function (inf for v, the whole cotangent for entries
#: that v replaced): checked against finite differences instead
FD_CASES = sorted(k for k in CASES if _min_max_clip(k) and "grad_x" in RECORDED[k])
GRAD_CASES = sorted(k for k in CASES if "grad_x" in RECORDED[k] and k not in FD_CASES)


def test_jax_gradients_not_finite_only_for_min_max_clip():
    bad = [k for k in CASES if "grad_x" in RECORDED[k] and not _finite(RECORDED[k])]
    assert bad and set(bad) <= set(FD_CASES)


@pytest.mark.parametrize("key", FD_CASES)
def test_grad_min_max_clip_against_finite_differences(m, key):
    n, _ = CASES[key]
    loss = getattr(m, f"loss{n}")
    w = weights(np.shape(RECORDED[key]["value"]))
    v = np.float32(2.5)  # (no ties with x's integers)
    gx, gv = srcjax.grad(loss, argnums=(0, 1))(X, v, w)
    h = np.float32(1e-2)
    fd = np.zeros(X.shape)
    for j in np.ndindex(X.shape):
        e = np.zeros(X.shape, np.float32)
        e[j] = h
        fd[j] = (float(loss(jnp.asarray(X + e), v, w)) - float(loss(jnp.asarray(X - e), v, w))) / (
            2 * h
        )
    np.testing.assert_allclose(np.asarray(gx), fd, atol=2e-2)
    xa = jnp.asarray(X)
    fdv = (float(loss(xa, v + h, w)) - float(loss(xa, v - h, w))) / (2 * h)
    np.testing.assert_allclose(float(gv), fdv, atol=2e-2)


@pytest.mark.parametrize("key", GRAD_CASES)
def test_grad(m, key):
    n, _ = CASES[key]
    w = weights(np.shape(RECORDED[key]["value"]))
    gx, gv = srcjax.grad(getattr(m, f"loss{n}"), argnums=(0, 1))(X, V, w)
    _check(gx, RECORDED[key]["grad_x"])
    _check(gv, RECORDED[key]["grad_v"])
    gx, gv = srcjax.jit(srcjax.grad(getattr(m, f"loss{n}"), argnums=(0, 1)))(X, V, w)
    _check(gx, RECORDED[key]["grad_x"])
    _check(gv, RECORDED[key]["grad_v"])


@pytest.mark.parametrize("key", sorted(CASES))
def test_vmap_over_x(m, key):
    n, _ = CASES[key]
    xs = np.stack([X, 2 * X])
    _check(srcjax.vmap(getattr(m, f"f{n}"), (0, None))(xs, V), RECORDED[key]["vmap_x"])


ARG_CASES = sorted(k for k in CASES if FORMS[CASES[k][1]][1])


def _indices(key):
    form, _, other = FORMS[CASES[key][1]]
    return eval(form, {"np": np}), np.stack([eval(form, {"np": np}), eval(other, {"np": np})])  # noqa: S307


@pytest.mark.parametrize("key", ARG_CASES)
def test_index_as_argument(m, key):
    """The index known only at run time: jit, grad, and vmap over the index."""
    n, _ = CASES[key]
    i, i2 = _indices(key)
    rec = RECORDED[key]
    _check(srcjax.jit(getattr(m, f"fi{n}"))(X, V, i), rec["value"])
    _check(srcjax.vmap(getattr(m, f"fi{n}"), (None, None, 0))(X, V, i2), rec["vmap_i"])
    if "grad_x" in rec and key not in FD_CASES:
        w = weights(np.shape(rec["value"]))
        lossi = getattr(m, f"lossi{n}")
        _check(srcjax.grad(lossi)(X, V, i, w), rec["grad_x"])
        _check(srcjax.jit(srcjax.grad(lossi))(X, V, i, w), rec["grad_x"])
    if "vmap_i_grad_x" in rec and key not in FD_CASES:
        w = weights(np.shape(rec["value"]))
        g = srcjax.vmap(srcjax.grad(getattr(m, f"lossi{n}")), (None, None, 0, None))
        _check(g(X, V, i2, w), rec["vmap_i_grad_x"])


def _mixed(x, v):
    return (
        (x.at[7].set(v) * jnp.arange(5.0)).sum()
        + (x.at[np.array([1, 9])].add(v)).sum()
        + (x.at[np.array([-9, 2])].get(mode="fill", fill_value=0.0) * v).sum()
    )


def test_vmap_over_the_updates_of_a_gradient():
    """Regression: vmap over v of grad read x[idx] for its rank with NumPy's
    indexing (IndexError); values recorded from JAX 0.10.2."""
    xs = jnp.stack([jnp.arange(5.0), jnp.ones(5)])
    _check(srcjax.vmap(srcjax.grad(_mixed, argnums=1), (0, None))(xs, 2.0), [3.0, 2.0])
    vs = jnp.array([1.0, 2.0])
    _check(srcjax.vmap(srcjax.grad(_mixed, argnums=1), (None, 0))(jnp.arange(5.0), vs), [3.0, 3.0])
    want = [[1.0, 2.0, 4.0, 4.0, 5.0], [1.0, 2.0, 5.0, 4.0, 5.0]]
    _check(srcjax.vmap(srcjax.grad(_mixed), (None, 0))(jnp.arange(5.0), vs), want)
