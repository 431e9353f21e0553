"""``jax.numpy``'s multidimensional histograms (``histogramdd``,
``histogram2d``) as compositions of primitives."""

from __future__ import annotations

import builtins as _builtins

import numpy as _np

from ...primitives.ad import moveaxis, reshape, sum
from ...primitives.creation import asarray, shape
from ...primitives.elementwise import where
from ...primitives.structural import diff, stack
from ...primitives.structural import searchsorted as _searchsorted
from .._functions import bincount as _bincount
from .._functions import histogram_bin_edges as _histogram_bin_edges
from ._static import inexact_of
from .indexing import ravel_multi_index

# ---------------------------------------------------------------------------
# multidimensional histograms


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """A D-dimensional histogram of ``sample`` (``(N, D)``)
    (jax.numpy.histogramdd). ``bins``: an int (for every dimension) or one
    int/edge array per dimension; ``range``: None or one ``(lo, hi)``/None
    per dimension; ``weights``: ``(N,)``. Returns ``(hist, [edges...])``:
    ``hist`` of shape ``(nbins_0, ..., nbins_D-1)``, the default int counts
    (JAX's bincount) or the weights' dtype; with ``density``, normalized by
    the total and the bin volumes. Differentiable in ``weights``. Raises
    ValueError for mismatched bins/range/weights."""
    sample = asarray(sample)
    if weights is None:
        sample = asarray(sample, dtype=inexact_of(sample))
    else:
        weights = asarray(weights)
        if shape(weights) != shape(sample)[:1]:
            raise ValueError("should have one weight for each sample.")
        dt = inexact_of(sample, weights)
        sample = asarray(sample, dtype=dt)
        weights = asarray(weights, dtype=dt)
    N = shape(sample)[0]
    D = shape(sample)[1]
    if range is not None and (
        len(range) != D or any(r is not None and _np.shape(r)[0] != 2 for r in range)
    ):
        raise ValueError(
            f"For sample.shape={(N, D)}, range must be a sequence of {D} pairs or Nones;"
            f" got range={range}"
        )
    if isinstance(bins, (list, tuple)):
        if len(bins) != D:
            raise ValueError("should be a bin for each dimension.")
        per_dim = list(bins)
    else:
        per_dim = [bins] * D
    idx = []
    edges = []
    for i in _builtins.range(D):
        r_i = None if range is None else range[i]
        e = _histogram_bin_edges(sample[:, i], per_dim[i], r_i, weights)
        b = _searchsorted(e, sample[:, i], side="right")
        b = where(sample[:, i] == e[-1], b - 1, b)
        idx.append(b)
        edges.append(e)
    nbins = tuple(shape(e)[0] + 1 for e in edges)
    flat = ravel_multi_index(tuple(idx), nbins, mode="clip")
    total = 1
    for nb in nbins:
        total = total * nb
    hist = reshape(_bincount(flat, weights, 0, length=total), nbins)
    for d in _builtins.range(D):
        hist = moveaxis(moveaxis(hist, d, 0)[1:-1], 0, d)
    if density:
        hist = asarray(hist, dtype=sample.dtype)
        hist = hist / sum(hist)
        for d in _builtins.range(D):
            de = diff(edges[d])
            hist = hist / reshape(de, (1,) * d + (-1,) + (1,) * (D - d - 1))
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """A 2-D histogram of the points ``(x[i], y[i])`` (jax.numpy.histogram2d):
    ``histogramdd`` of ``stack([x, y], -1)``; ``bins`` an int, a pair, or one
    edge array for both. Returns ``(hist, x_edges, y_edges)``."""
    if isinstance(bins, (list, tuple)):
        nb = len(bins)
    elif _np.ndim(bins) == 0:
        nb = 1
    else:
        nb = shape(bins)[0]
    if nb != 1 and nb != 2:
        e = asarray(bins)
        bins = [e, e]
    sample = stack([asarray(x), asarray(y)], axis=-1)
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]
