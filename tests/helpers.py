"""Shared test oracles: float64 central differences."""

from __future__ import annotations

import numpy as np


def fd_grad(f, x, eps=1e-6):
    """Central-difference gradient of scalar ``f`` at float64 array ``x`` (any
    memory order: a C-ordered copy is perturbed, so ``reshape(-1)`` is a view;
    a Fortran-ordered ``x`` gave all zeros when the reshape was a copy)."""
    x = np.array(x, dtype=np.float64, order="C")
    g = np.zeros_like(x, order="C")
    flat = x.reshape(-1)
    gf = g.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        hi = float(f(x.copy()))
        flat[i] = old - eps
        lo = float(f(x.copy()))
        flat[i] = old
        gf[i] = (hi - lo) / (2 * eps)
    return g


def assert_close(a, b, rtol=1e-6, atol=1e-8):
    np.testing.assert_allclose(
        np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), rtol=rtol, atol=atol
    )


def jax_recorded(path, compute_with_jax):
    """The values recorded from JAX in the ``.npz`` at ``path`` (a dict of arrays).
    With ``SRCJAX_RECORD_JAX=1`` and JAX installed, they are recorded first:
    ``compute_with_jax()`` runs the test's programs with real JAX."""
    import os

    if os.environ.get("SRCJAX_RECORD_JAX"):
        import pytest

        pytest.importorskip("jax")
        np.savez(path, **compute_with_jax())
    with np.load(path) as d:
        return dict(d)


def assert_matches_recorded(ours, recorded, rtol=1e-6, atol=0.0):
    """Every recorded JAX value has its srcjax counterpart with the same shape,
    dtype and value (exact for integers and bools, NaN equal to NaN)."""
    assert sorted(ours) == sorted(recorded)
    for key, want in recorded.items():
        got = np.asarray(ours[key])
        assert got.shape == want.shape, key
        assert got.dtype == want.dtype, key
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=key)
        else:
            np.testing.assert_array_equal(got, want, err_msg=key)
