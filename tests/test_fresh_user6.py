"""Fresh-user round 6 (/work/userprogs6/REPORT.md): each failing input with the
values JAX 0.10.2 gives (recorded from the repro files), or a NumPy /
Python-loop oracle."""

import warnings

import numpy as np

import srcjax


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (NumPy's divide by zero)
        return fn(*args)


def test_grad_at_a_literal_point_inside_jit_is_ieee():
    """Item 01 (repro_01.py): inside jit, grad at a Python-literal point computed
    in Python floats and raised ZeroDivisionError; JAX gives -inf and nan (the
    point is a float32 value, not a literal)."""
    f = srcjax.jit(lambda: srcjax.grad(lambda v: 1.0 / v)(0.0))
    assert float(_quiet(f)) == -np.inf
    g = srcjax.jit(lambda: srcjax.grad(lambda v: v**0.0)(0.0))
    assert np.isnan(float(_quiet(g)))
    h = srcjax.jit(lambda x: srcjax.grad(lambda v: 1.0 / v)(0.0) + x)
    np.testing.assert_array_equal(np.asarray(_quiet(h, np.zeros(2, np.float32))), [-np.inf] * 2)
    val, grad = _quiet(srcjax.jit(lambda: srcjax.value_and_grad(lambda v: 1.0 / v)(0.0)))
    assert (float(val), float(grad)) == (np.inf, -np.inf)
    # an ordinary point keeps its value and float32 dtype
    r = srcjax.jit(lambda: srcjax.grad(lambda v: v * v)(3.0))()
    assert float(r) == 6.0 and r.dtype == np.float32
