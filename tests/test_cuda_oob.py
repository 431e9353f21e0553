"""Out-of-bounds indices on the CUDA path follow JAX (gathers clamp, ``.at``
updates drop, ``take``/``take_along_axis``/``mode="fill"`` fill), although CuPy
wraps an index array out of bounds around instead of raising
(srcjax/backends/cupy_cuda/indexing.py).

The CuPy test double reads indices as CuPy does (an integer index array out of
bounds wraps, ``i mod n``; a Python integer out of bounds is an IndexError), so
NumPy's exception cannot do the work here. Oracle: JAX 0.10.2's values of every
index form x expression of tests/oob_cases.py (tests/data/oob_transforms.json,
as in tests/test_oob_transforms.py), eager and under jit, gradients under
jit(grad), the index a device array known only at run time."""

from __future__ import annotations

import importlib.util
import json
import os

import numpy as np
import pytest
from oob_cases import FORMS, cases, module_source, weights

import srcjax
import srcjax.numpy as jnp
from srcjax.backends import cupy_cuda
from srcjax.backends.cupy_cuda import offline as off
from srcjax.testing import fake_cupy

_cp = off.cupy_or_none()
_why = off.required(
    "cupy is not installed (pip install 'srcjax[cuda13]')"
    if _cp is None
    else off.gxx_available()
    or (None if _cp.__version__ == off.CUPY_VERSION else f"cupy {_cp.__version__}")
)
pytestmark = pytest.mark.skipif(_why is not None, reason=str(_why))

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "data", "oob_transforms.json")) as _f:
    RECORDED = json.load(_f)["cases"]
CASES = {key: (n, k) for n, (key, k, _) in enumerate(cases())}
X = np.arange(12, dtype=np.float32).reshape(3, 4) + 1
V = np.float32(2.0)
#: JAX's own gradients of .at[].min/max(mode="clip") out of bounds are wrong
#: (tests/test_oob_transforms.py checks them against finite differences)
GRAD_CASES = sorted(
    k
    for k in CASES
    if "grad_x" in RECORDED[k] and not (("min(" in k or "max(" in k) and "clip" in k)
)
ARG_CASES = sorted(k for k in CASES if FORMS[CASES[k][1]][1])


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    path = tmp_path_factory.mktemp("oob_cuda") / "oob_cases_cuda.py"
    path.write_text(module_source("srcjax.numpy"))
    spec = importlib.util.spec_from_file_location("oob_cases_cuda", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def gpu():
    fake = fake_cupy.use_fake(ndevices=1)
    with cupy_cuda.use_cupy(fake):
        yield fake


def _check(got, want):
    assert isinstance(got, srcjax.Array) and got.device.platform == "gpu"
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.array(want, float), rtol=1e-6)


def test_the_double_wraps_as_cupy_does(gpu):
    """The premise: CuPy's fancy indexing, take and scatters wrap out of bounds."""
    a = gpu.asarray(np.arange(4.0))
    np.testing.assert_array_equal(gpu.asnumpy(a[np.array([5, -6])]), [1.0, 2.0])
    np.testing.assert_array_equal(gpu.asnumpy(np.take(a, gpu.asarray(np.array([4])))), [0.0])
    with pytest.raises(IndexError):
        a[4]  # a Python integer out of bounds: an IndexError, as CuPy's


@pytest.mark.parametrize("key", sorted(CASES))
def test_value_eager_and_jit(gpu, m, key):
    n, _ = CASES[key]
    f = getattr(m, f"f{n}")
    want = RECORDED[key]["value"]
    x, v = srcjax.device_put(X), srcjax.device_put(V)
    _check(f(x, v), want)
    _check(srcjax.jit(f)(x, v), want)


@pytest.mark.parametrize("key", GRAD_CASES)
def test_jit_grad(gpu, m, key):
    n, _ = CASES[key]
    w = weights(np.shape(RECORDED[key]["value"]))
    loss = srcjax.jit(srcjax.grad(getattr(m, f"loss{n}"), argnums=(0, 1)))
    gx, gv = loss(srcjax.device_put(X), srcjax.device_put(V), srcjax.device_put(w))
    _check(gx, RECORDED[key]["grad_x"])
    _check(gv, RECORDED[key]["grad_v"])


def _index(key):
    return eval(FORMS[CASES[key][1]][0], {"np": np})  # noqa: S307


@pytest.mark.parametrize("key", ARG_CASES)
def test_index_on_the_device_at_run_time(gpu, m, key):
    n, _ = CASES[key]
    rec = RECORDED[key]
    i = _index(key)
    i_dev = srcjax.device_put(i) if isinstance(i, np.ndarray) else i
    x = srcjax.device_put(X)
    _check(srcjax.jit(getattr(m, f"fi{n}"))(x, V, i_dev), rec["value"])
    _check(getattr(m, f"fi{n}")(x, V, i_dev), rec["value"])
    if key in GRAD_CASES:
        w = weights(np.shape(rec["value"]))
        _check(srcjax.jit(srcjax.grad(getattr(m, f"lossi{n}")))(x, V, i_dev, w), rec["grad_x"])


def test_gathers_clamp_on_the_device_and_updates_drop(gpu):
    """x[i] clamps on the device, in bounds or not (no host copy, no
    synchronization); an update out of bounds drops (JAX's rule, run by the
    NumPy implementation on host copies: counted in HOST_CALLS)."""
    x = srcjax.device_put(X)
    for i in (np.array([2, 0, -1]), np.array([7, 1, -9])):
        cupy_cuda.HOST_CALLS.clear()
        got = x[srcjax.device_put(i)]
        np.testing.assert_array_equal(np.asarray(got), X[np.clip(np.where(i < 0, i + 3, i), 0, 2)])
        assert "ad.getitem" not in cupy_cuda.HOST_CALLS
    big = srcjax.device_put(np.array([7, 1]))
    want = X.copy()
    want[1] += 1
    cupy_cuda.HOST_CALLS.clear()
    np.testing.assert_array_equal(np.asarray(x.at[big].add(1.0)), want)  # 7 dropped
    assert cupy_cuda.HOST_CALLS == {"ad.at_add": 1}
    i = srcjax.device_put(np.array([2, 0, -1]))
    want = X.copy()
    np.add.at(want, [2, 0, -1], 1.0)  # (row 2 twice: duplicates accumulate)
    np.testing.assert_array_equal(np.asarray(x.at[i].add(1.0)), want)
    np.testing.assert_array_equal(np.asarray(jnp.take(x, i, axis=1)), X[:, [2, 0, -1]])
