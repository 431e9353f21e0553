"""Finite-difference oracles (float64 central differences)."""

from __future__ import annotations

import numpy as np

__all__ = ["fd_grad"]


def fd_grad(f, x, eps: float = 1e-6) -> np.ndarray:
    """Central-difference gradient of scalar ``f`` at ``x`` (float64, same shape)."""
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
