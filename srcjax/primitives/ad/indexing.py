"""Operator ``[]`` (``ad.getitem``) and its adjoint ``ad.index_adjoint`` (arrays:
a scatter that accumulates duplicate indices; containers: the same container,
zeros elsewhere).
"""

from __future__ import annotations

import sys

import numpy as np

from srcjax._prng_key import PRNGKeyArray

from ..registry import Primitive, register
from ._common import _internal, _structural
from .linear import def_adjoint_pair, def_with_adjoint
from .oob import adjoint_clamps, clamp_index, gather_clamped, gather_filled, scatter_dropped
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
    masks, tuples, ``None`` and ``Ellipsis``; an out-of-bounds integer index is
    clamped, a negative one wrapped once first, as JAX's gather does
    (:mod:`.oob`). Python lists, tuples and dicts are indexed as containers
    (pytree access; out of bounds: Python's IndexError).
    """
    try:
        return x[idx]  # (NumPy's own indexing in bounds: nothing added)
    except IndexError:
        if isinstance(x, (list, tuple, dict, PRNGKeyArray, str)):
            raise
        return gather_clamped(x, idx)
    except TypeError:
        if isinstance(x, (list, tuple, dict, PRNGKeyArray)) or hasattr(x, "__getitem__"):
            raise
        return _getitem(np.asarray(x), idx)  # (a Python number: x[()])


getitem = _structural("ad.getitem", _getitem).facts(part="item")
getitem.op = "[]"
getitem.facts(row_operands=("x", "idx"))


def _probe(v):
    return sys.getrefcount(v)


def _calibrate():
    """What ``sys.getrefcount`` says (1) in a helper about its argument when
    nothing but the caller's one local name holds it, (2) about a helper's own
    local that nothing else holds. Measured, not assumed: what a call adds to
    the count differs between Python versions."""
    held = []
    return _probe(held), sys.getrefcount(held)


#: (on Python >= 3.14 the interpreter's stack may borrow references, so a count
#: cannot tell that nothing else holds a value: the helpers below then never
#: clear a slot or reuse a buffer, as srcjax._array_ops' elision is off there)
_ONE_HOLDER, _OWN = (
    _calibrate() if sys.version_info < (3, 14) and hasattr(sys, "getrefcount") else (-1, -1)
)


def _take_item(x, idx, by_item=False):
    """``x[idx]`` of a list that generated code reads item by item and never again
    (jit's update loop over a gradient, ``for (w, b), (dw, db) in zip(params,
    grads)``: see ``transforms/optimize/release.take_dead_items``): the list's slot
    is cleared when nothing but the caller's one name holds the list, so each
    item is freed once the caller is done with it instead of when the function
    returns. Any other holder (a user's list, an alias still alive) and the list is
    left as it is: the value read is the same either way. ``by_item``: the caller
    reads the value only by ``take_item``/``scaled_item`` of constant indices, so
    a tuple that nothing else holds comes back as a list of its items (whose
    slots can be cleared in turn)."""
    v = x[idx]
    if type(x) is list and sys.getrefcount(x) == _ONE_HOLDER:
        x[idx] = None
    if by_item and type(v) is tuple and sys.getrefcount(v) == _OWN:
        return list(v)
    return v


take_item = register(Primitive("ad.take_item", _take_item, kind="internal", differentiable=False))
take_item.facts(effectful=True)
take_item.samples = lambda rng: []


def _scaled_item(c, x, idx):
    """``c * take_item(x, idx)``, computed in the item's own buffer when nothing
    else holds it (a gradient leaf taken by an update loop: ``w - lr * dw`` is
    then ``lr * dw`` in ``dw``'s memory, and NumPy adds ``w`` into that
    temporary, so the new parameter needs no buffer of its own). Only for a
    Python number ``c`` and a float array that owns its data, where the product
    has the array's dtype; otherwise ``c * item`` as written (bit for bit the same
    values either way: IEEE multiplication commutes)."""
    v = x[idx]
    if type(x) is list and sys.getrefcount(x) == _ONE_HOLDER:
        x[idx] = None
    if (
        type(c) in (float, int)
        and type(v) is np.ndarray
        and v.dtype.kind == "f"
        and v.base is None
        and v.flags.writeable
        and sys.getrefcount(v) == _OWN
    ):
        return np.multiply(v, c, out=v)
    return c * v


scaled_item = register(
    Primitive("ad.scaled_item", _scaled_item, kind="internal", differentiable=False)
)
scaled_item.facts(effectful=True)
scaled_item.samples = lambda rng: []


def _index_adjoint(g, x, idx, mode=None):
    """The adjoint of ``x[idx]``: zeros shaped like ``x`` with ``g`` scattered in.

    Duplicate integer indices accumulate (``np.add.at`` semantics). For dict /
    list / tuple ``x`` the result is the same container with ``zeros_like``
    everywhere except at ``idx``, which holds ``g``.

    Out of bounds as JAX (:func:`.oob.adjoint_clamps`): ``g`` is written at the
    clamped index (scalar integer indices, ``mode="clip"``) or dropped (an
    integer array in the index, ``"fill"``, ``"drop"``).

    ``g`` may be a hole (``None``: the element's cotangent is zero, e.g. an
    unused element of a loop's carry or per-step output); for an array ``x`` the
    result is then zeros (NumPy would store ``None`` as NaN).
    """
    if isinstance(x, dict):
        if type(x) is dict and idx in x:  # (no zeros built for the item g replaces)
            return {k: g if k == idx else _zeros_like(v) for k, v in x.items()}
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
    try:
        return _scatter_add_into(np.zeros(shape, dtype=dtype), idx, g)
    except IndexError:
        if adjoint_clamps(shape, idx, mode):
            return _scatter_add_into(np.zeros(shape, dtype=dtype), clamp_index(shape, idx), g)
        zeros = np.zeros(shape, dtype=dtype)
        return scatter_dropped(_scatter_add_into, zeros, idx, g)


def _scatter_add_into(out, idx, g):
    if is_basic_index(idx):
        out[idx] = g
        return out
    pos = flat_positions(out.shape, idx)
    np.add.at(out.reshape(-1), pos.reshape(-1), np.broadcast_to(g, pos.shape).reshape(-1))
    return out


# (pure: a new array from its operands; out of bounds clamps or drops, never
# raises. jit drops an unread one: the primal gradient of jacfwd(jacrev(f)))
index_adjoint = _internal("ad.index_adjoint", _index_adjoint).facts(pure=True)


def _index_take(g, idx, mode=None):
    """``g[idx]`` as JAX's transposes read it (the cotangent of the updates of
    ``x.at[idx]``, the second-order rule of ``x[idx]``): out of bounds, zero for
    ``mode`` "fill"/"drop" (the updates' default), the clamped index's value
    otherwise (JAX's gather, also for "promise_in_bounds", where JAX documents
    the gradient of an index out of bounds as not correct)."""
    if isinstance(g, (list, tuple, dict)):
        return g[idx]  # (a container's cotangent: its item, as ``x[idx]``)
    try:
        return np.asarray(g)[idx]
    except IndexError:
        if mode in ("fill", "drop"):
            return gather_filled(g, idx, 0)
        return gather_clamped(g, idx)


index_take = _internal("ad.index_take", _index_take)


def_with_adjoint(getitem, index_adjoint)
# (index_take and index_adjoint: each other's transpose, both passing ``mode`` on)
def_adjoint_pair(index_take, index_adjoint)

INDEX_SAMPLES = [
    ((4, 5), (1, slice(None))),
    ((4, 5), (slice(None, None, -2), slice(1, 4))),
    ((4, 5), (np.array([0, 2, 2, -1]),)),
    ((4, 5), (np.array([0, 2, 2]), np.array([1, 3, 3]))),
    ((4, 5), (Ellipsis, None, 2)),
    ((6,), np.array([True, False, True, True, False, False])),
    ((3, 4), np.array([[1, 1], [0, 2]])),
    ((3, 4), (slice(None), np.array([3, 0, 3]))),
    # out of bounds: scalar indices clamp, and so does the cotangent (JAX's
    # dynamic_slice). (An index array clamps too, but JAX's cotangent drops those
    # entries, which is not the derivative: OOB_ARRAY_SAMPLES, checked in the
    # modes whose rules are derivatives)
    ((4, 5), (1, 7)),
    ((4, 5), (-9, slice(None))),
]
OOB_ARRAY_SAMPLES = [
    ((4, 5), (np.array([0, 6, -1, -8]),)),
    ((3, 4), (slice(None), np.array([5, 0, -5]))),
]


def _getitem_samples(rng):
    return [((rng.normal(size=s), idx), {}) for s, idx in INDEX_SAMPLES]


def _index_adjoint_samples(rng):
    out = []
    for s, idx in INDEX_SAMPLES:
        x = rng.normal(size=s)
        out.append(((rng.normal(size=np.shape(_getitem(x, idx))), x, idx), {}))
    x = rng.normal(size=(5,))
    i = np.array([0, 6, -8, 2])
    out.append(((rng.normal(size=(4,)), x, i), {"mode": "clip"}))
    out.append(((rng.normal(size=(4,)), x, i), {"mode": "fill"}))
    return out


def _index_take_samples(rng):
    out = [((rng.normal(size=s), idx), {}) for s, idx in INDEX_SAMPLES[-2:]]
    for mode in ("drop", "clip"):
        out += [((rng.normal(size=s), idx), {"mode": mode}) for s, idx in OOB_ARRAY_SAMPLES]
    return out


getitem.samples = _getitem_samples
index_adjoint.samples = _index_adjoint_samples
index_take.samples = _index_take_samples
