"""``jax.numpy`` set operations and the array-API ``unique_*`` functions, the
static dtype predicates (``isdtype``, ``can_cast``) and the index tricks
(``s_``, ``mgrid``, ``r_`` ...)."""

from __future__ import annotations

import collections as _collections

import numpy as _np

from ... import dtypes as _dt
from ...primitives.ad import default_int, reshape, sum
from ...primitives.creation import arange, asarray, full, ones, shape
from ...primitives.elementwise import logical_and, logical_not, where
from ...primitives.setops import flatnonzero as _flatnonzero
from ...primitives.setops import unique as _unique
from ...primitives.structural import concatenate, ravel, sort, take
from .._functions import isin as _isin
from ._static import result_dtype

# ---------------------------------------------------------------------------
# set operations and the array-API unique_* functions

UniqueAllResult = _collections.namedtuple(
    "UniqueAllResult", ["values", "indices", "inverse_indices", "counts"]
)
UniqueCountsResult = _collections.namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = _collections.namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def unique_values(x, size=None, fill_value=None):
    """The sorted unique values of ``x``, flattened (jax.numpy.unique_values;
    NaNs are not merged). ``size``/``fill_value`` as ``jnp.unique``."""
    return _unique(x, equal_nan=False, size=size, fill_value=fill_value)


def unique_counts(x, size=None, fill_value=None):
    """``(values, counts)`` of the unique values of ``x``
    (jax.numpy.unique_counts), a namedtuple; ``size``/``fill_value`` as
    ``jnp.unique``."""
    v, c = _unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value)
    return UniqueCountsResult(v, c)


def unique_inverse(x, size=None, fill_value=None):
    """``(values, inverse_indices)`` of ``x`` (jax.numpy.unique_inverse), a
    namedtuple; ``inverse_indices`` has ``x``'s shape."""
    v, inv = _unique(x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value)
    return UniqueInverseResult(v, reshape(inv, shape(x)))


def unique_all(x, size=None, fill_value=None):
    """``(values, indices, inverse_indices, counts)`` of ``x``
    (jax.numpy.unique_all), a namedtuple; ``inverse_indices`` has ``x``'s
    shape."""
    v, i, inv, c = _unique(
        x,
        return_index=True,
        return_inverse=True,
        return_counts=True,
        equal_nan=False,
        size=size,
        fill_value=fill_value,
    )
    return UniqueAllResult(v, i, reshape(inv, shape(x)), c)


def union1d(ar1, ar2, size=None, fill_value=None):
    """The sorted unique values found in either array (jax.numpy.union1d,
    flattened); ``size``/``fill_value`` pad or cut as ``jnp.unique``."""
    return _unique(
        concatenate([ravel(asarray(ar1)), ravel(asarray(ar2))]), size=size, fill_value=fill_value
    )


def setdiff1d(ar1, ar2, assume_unique=False, size=None, fill_value=None):
    """The sorted unique values of ``ar1`` not in ``ar2`` (jax.numpy.setdiff1d,
    flattened). With ``size`` the result is padded with ``fill_value`` (0 by
    default) or cut, as JAX."""
    a1 = ravel(asarray(ar1))
    a2 = ravel(asarray(ar2))
    if fill_value is None:
        fill_value = 0
    n1 = shape(a1)[0]
    if n1 == 0:
        return full((0 if size is None else size,), fill_value, dtype=a1.dtype)
    if not assume_unique:
        a1 = _unique(a1, size=None if size is None else n1)
    mask = logical_not(_isin(a1, a2))
    if size is None:
        return take(a1, _flatnonzero(mask))
    if not assume_unique:
        n_unique = n1 + 1 - sum(a1 == a1[0], dtype=default_int())
        mask = logical_and(mask, arange(n1) < n_unique)
    picked = take(a1, _flatnonzero(mask, size=size, fill_value=0))
    return where(
        arange(size) < sum(mask, dtype=default_int()), picked, asarray(fill_value, dtype=a1.dtype)
    )


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, size=None, fill_value=None):
    """The sorted unique values found in both arrays (jax.numpy.intersect1d,
    flattened). ``return_indices`` and ``size`` raise NotImplementedError in
    srcjax."""
    if return_indices or size is not None:
        raise NotImplementedError(
            "srcjax jnp.intersect1d: return_indices= and size= are not supported"
        )
    a1 = ravel(asarray(ar1))
    a2 = ravel(asarray(ar2))
    dt = result_dtype(a1, a2)
    a1 = asarray(a1, dtype=dt)
    a2 = asarray(a2, dtype=dt)
    if not assume_unique:
        a1 = _unique(a1)
        a2 = _unique(a2)
    aux = sort(concatenate([a1, a2]))
    if shape(aux)[0] == 0:
        return aux
    return take(aux[:-1], _flatnonzero(aux[1:] == aux[:-1]))


def setxor1d(ar1, ar2, assume_unique=False, size=None, fill_value=None):
    """The sorted values found in exactly one of the arrays
    (jax.numpy.setxor1d, flattened). ``size`` raises NotImplementedError in
    srcjax."""
    if size is not None:
        raise NotImplementedError("srcjax jnp.setxor1d: size= is not supported")
    a1 = ravel(asarray(ar1))
    a2 = ravel(asarray(ar2))
    dt = result_dtype(a1, a2)
    a1 = asarray(a1, dtype=dt)
    a2 = asarray(a2, dtype=dt)
    if not assume_unique:
        a1 = _unique(a1)
        a2 = _unique(a2)
    aux = concatenate([a1, a2])
    if shape(aux)[0] == 0:
        return aux
    aux = sort(aux)
    t = ones((1,), dtype=bool)
    flag = concatenate([t, aux[1:] != aux[:-1], t])
    return take(aux, _flatnonzero(logical_and(flag[1:], flag[:-1])))


# ---------------------------------------------------------------------------
# dtype predicates (static)

_ISDTYPE_KINDS = {
    "bool": "b",
    "signed integer": "i",
    "unsigned integer": "u",
    "integral": "iu",
    "real floating": "f",
    "complex floating": "c",
    "numeric": "iufc",
}


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind`` (jax.numpy.isdtype, the array API):
    ``kind`` a dtype (equality), one of ``'bool'``, ``'signed integer'``,
    ``'unsigned integer'``, ``'integral'``, ``'real floating'``, ``'complex
    floating'``, ``'numeric'``, or a tuple of those. A Python bool. Raises
    ValueError for an unknown kind name, TypeError for another kind type."""
    d = _np.dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _ISDTYPE_KINDS:
                raise ValueError(f"Unrecognized data type kind: {k!r}.")
            if d.kind in _ISDTYPE_KINDS[k]:
                return True
        else:
            try:
                if d == _np.dtype(k):
                    return True
            except TypeError:
                raise TypeError(
                    f"Expected kind to be a dtype, string, or tuple; got {k!r}"
                ) from None
    return False


def can_cast(from_, to, casting="safe"):
    """Whether a cast from ``from_`` (a dtype or an array's dtype) to ``to``
    is allowed under ``casting`` (jax.numpy.can_cast: NumPy's rule on the
    dtypes as given). A Python bool."""
    if isinstance(from_, (_np.ndarray, _np.generic)):
        src = from_.dtype
    else:
        src = _np.dtype(from_)
    return bool(_np.can_cast(src, _np.dtype(to), casting=casting))


# ---------------------------------------------------------------------------
# index tricks (host-side objects, as NumPy's)

s_ = _np.s_
index_exp = _np.index_exp


def _grid_dtype(a):
    a = _np.asarray(a)
    if a.dtype.kind == "f":
        return a.astype(_dt.default_float())
    if a.dtype.kind in "iu":
        return a.astype(_dt.default_int())
    return a


class _MGrid:
    """``jnp.mgrid``: a dense mesh grid from slices (``mgrid[0:3, 0:2]`` has
    shape ``(2, 3, 2)``; a complex step ``5j`` means 5 points, endpoint
    included), default int or float dtype (jax.numpy.mgrid). Host values:
    constants inside transformed code."""

    def __getitem__(self, key):
        return _grid_dtype(_np.mgrid[key])


class _OGrid:
    """``jnp.ogrid``: an open mesh grid from slices, a list of arrays of shape
    ``(1, .., n, .., 1)`` (one array for one slice) (jax.numpy.ogrid)."""

    def __getitem__(self, key):
        out = _np.ogrid[key]
        if isinstance(out, (list, tuple)):
            return [_grid_dtype(o) for o in out]
        return _grid_dtype(out)


class _Concat:
    """``jnp.r_`` / ``jnp.c_``: NumPy's concatenation tricks (slices become
    ``arange``/``linspace``, string directives), with JAX's canonical dtypes.
    Host values: not differentiable inside transformed code (use
    ``jnp.concatenate`` there)."""

    def __init__(self, np_obj):
        self._obj = np_obj

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        items = tuple(_np.asarray(k) if isinstance(k, _np.ndarray) else k for k in items)
        out = self._obj[items if isinstance(key, tuple) else items[0]]
        return _np.asarray(out, _dt.canonicalize_dtype(_np.asarray(out).dtype))


mgrid = _MGrid()
ogrid = _OGrid()
r_ = _Concat(_np.r_)
c_ = _Concat(_np.c_)
