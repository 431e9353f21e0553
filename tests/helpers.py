"""Shared test oracles: float64 central differences."""

from __future__ import annotations

import numpy as np


def fd_grad(f, x, eps=1e-6):
    """Central-difference gradient of scalar ``f`` at float64 array ``x``."""
    x = np.array(x, dtype=np.float64)
    g = np.zeros_like(x)
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
