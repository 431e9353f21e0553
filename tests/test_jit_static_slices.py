"""jit types ``slice(a, b, c)`` of constant bounds (the index of ``x[::-1]``'s
adjoint and of batched reads in jacfwd-of-grad code) as a value known now
(optimize/interp.py ``host_call``), so the helpers it feeds run on stand-ins and
fold: ``jit(hessian(f))`` of a small vector is a few array operations.

Oracles: values recorded from JAX 0.10.2 (jax.jit(jax.hessian(f)), CPU).
"""

import numpy as np

import srcjax
import srcjax.numpy as jnp

X = np.array([0.3, 0.5, 0.7, -1.1], np.float32)
JAX = {
    "rev": [
        [0.3250722587108612, 0.0, 0.0, 1.4089325666427612],
        [0.0, -0.3355978727340698, 1.6424248218536377, 0.0],
        [0.0, 1.6424248218536377, -0.32210883498191833, 0.0],
        [1.4089325666427612, 0.0, 0.0, 0.26736223697662354],
    ],
    "steps": [
        [0.04466348886489868, 0.6000000238418579, 0.0, 0.0],
        [0.6000000238418579, 1.399999976158142, 1.0, 0.0],
        [0.0, 1.0, -2.9648423194885254, 1.399999976158142],
        [0.0, 0.0, 1.399999976158142, 0.0],
    ],
}


def _rev(v):
    return jnp.sum(jnp.sin(v) * v[::-1])


def _steps(v):
    return jnp.sum(v[1:] * v[:-1] ** 2) + jnp.sum(jnp.cos(v[::2]))


def test_jit_hessian_with_reversed_and_strided_reads():
    for name, fn in (("rev", _rev), ("steps", _steps)):
        f = srcjax.jit(srcjax.hessian(fn))
        h = f(X)
        assert h.dtype == np.float32 and h.shape == (4, 4)
        np.testing.assert_allclose(h, JAX[name], rtol=2e-6, atol=1e-7)
    code = "\n".join(
        ln.split("#")[0] for ln in srcjax.source(srcjax.jit(srcjax.hessian(_rev)), X).splitlines()
    )
    # (the batching helpers decided from the known shapes)
    for helper in ("ad.expand_to_rank", "ad.bbroadcast_like", "ad.bunbroadcast", "jnp.ndim"):
        assert helper not in code, helper


def _window_sums(x):
    # slice bounds from a loop counter: not known now, left to run time
    acc = jnp.float32(0.0)
    for i in range(3):
        acc = acc + jnp.sum(x[i : i + 2])
    return acc + jnp.sum(x[1:3])


def test_slices_of_unknown_bounds_still_run():
    # grad's reverse loop builds slice(i, add, None) from the counter: unknown now
    f = srcjax.jit(srcjax.value_and_grad(_window_sums))
    out, g = f(X)
    assert "slice(i, add, None)" in srcjax.source(f, X)
    want = sum(float(X[i] + X[i + 1]) for i in range(3)) + float(X[1] + X[2])
    np.testing.assert_allclose(float(out), want, rtol=1e-6)
    # (each element counted once per window and in x[1:3])
    np.testing.assert_array_equal(g, np.array([1.0, 3.0, 3.0, 1.0], np.float32))
