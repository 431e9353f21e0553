"""Operator ``[]`` (``ad.getitem``) and its adjoint ``ad.index_adjoint`` (arrays:
a scatter that accumulates duplicate indices; containers: the same container,
zeros elsewhere).
"""

from __future__ import annotations

import numpy as np

from srcjax._prng_key import PRNGKeyArray

from ._common import _internal, _structural
from .linear import def_adjoint_pair
from .zeros import _zeros_like

# ---------------------------------------------------------------------------
# getitem (operator ``[]``) and its adjoint


def is_basic_index(idx):
    """True when ``x[idx]`` is NumPy basic indexing (no gather, no duplicates)."""
    items = idx if isinstance(idx, tuple) else (idx,)
    for it in items:
        if it is None or it is Ellipsis or isinstance(it, slice):
            continue
        if isinstance(it, (bool, np.bool_)):
            return False
        if isinstance(it, (int, np.integer)):
            continue
        if isinstance(it, np.ndarray) and it.ndim == 0 and it.dtype.kind in "iu":
            continue
        return False
    return True


def flat_positions(shape, idx):
    """Flat positions, in an array of ``shape``, selected by any index ``idx``."""
    size = 1
    for n in shape:
        size *= int(n)
    return np.arange(size).reshape(shape)[idx]


def _getitem(x, idx):
    """``x[idx]`` (operator ``[]``), with NumPy/JAX indexing semantics.

    Arrays: basic indexing, slices with steps, integer arrays (gather), boolean
    masks, tuples, ``None`` and ``Ellipsis``. Python lists, tuples and dicts are
    indexed as containers (pytree access).
    """
    if isinstance(x, (list, tuple, dict, PRNGKeyArray)):
        return x[idx]
    return np.asarray(x)[idx]


getitem = _structural("ad.getitem", _getitem).facts(part="item")
getitem.op = "[]"
getitem.facts(row_operands=("x", "idx"))


def _index_adjoint(g, x, idx):
    """The adjoint of ``x[idx]``: zeros shaped like ``x`` with ``g`` scattered in.

    Duplicate integer indices accumulate (``np.add.at`` semantics). For dict /
    list / tuple ``x`` the result is the same container with ``zeros_like``
    everywhere except at ``idx``, which holds ``g``.

    ``g`` may be a hole (``None``: the element's cotangent is zero, e.g. an
    unused element of a loop's carry or per-step output); for an array ``x`` the
    result is then zeros (NumPy would store ``None`` as NaN).
    """
    if isinstance(x, dict):
        out = {k: _zeros_like(v) for k, v in x.items()}
        out[idx] = g
        return out
    if isinstance(x, (list, tuple)):
        out = [_zeros_like(v) for v in x]
        if isinstance(idx, slice):
            for i, gi in zip(range(len(x))[idx], g):
                out[i] = gi
        else:
            out[idx] = g
        if isinstance(x, tuple):
            return type(x)(*out) if hasattr(x, "_fields") else tuple(out)
        return out
    shape = np.shape(x)
    if g is None:
        xdt = np.result_type(x)
        return np.zeros(shape, dtype=xdt if xdt.kind in "fc" else np.float32)
    gdt = np.result_type(g)
    dtype = gdt if gdt.kind in "fc" else np.result_type(x)
    out = np.zeros(shape, dtype=dtype)
    if is_basic_index(idx):
        out[idx] = g
        return out
    pos = flat_positions(shape, idx)
    np.add.at(out.reshape(-1), pos.reshape(-1), np.broadcast_to(g, pos.shape).reshape(-1))
    return out


index_adjoint = _internal("ad.index_adjoint", _index_adjoint)


def_adjoint_pair(getitem, index_adjoint)


INDEX_SAMPLES = [
    ((4, 5), (1, slice(None))),
    ((4, 5), (slice(None, None, -2), slice(1, 4))),
    ((4, 5), (np.array([0, 2, 2, -1]),)),
    ((4, 5), (np.array([0, 2, 2]), np.array([1, 3, 3]))),
    ((4, 5), (Ellipsis, None, 2)),
    ((6,), np.array([True, False, True, True, False, False])),
    ((3, 4), np.array([[1, 1], [0, 2]])),
    ((3, 4), (slice(None), np.array([3, 0, 3]))),
]


def _getitem_samples(rng):
    return [((rng.normal(size=s), idx), {}) for s, idx in INDEX_SAMPLES]


def _index_adjoint_samples(rng):
    out = []
    for s, idx in INDEX_SAMPLES:
        x = rng.normal(size=s)
        out.append(((rng.normal(size=np.shape(x[idx])), x, idx), {}))
    return out


getitem.samples = _getitem_samples
index_adjoint.samples = _index_adjoint_samples
