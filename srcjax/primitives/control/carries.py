"""Loop carries of the lax loops: the check that a body keeps its carry's
structure, shapes and dtypes (weakly typed Python scalars may widen).
"""

from __future__ import annotations

import numpy as np

from ..._prng_key import PRNGKeyArray
from ..registry import Primitive, register
from ._trees import leaves_alike

# ======================================================= loop carries (lax loops)
_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _is_weak(x):
    return type(x) in (bool, int, float, complex)


def _leaf_dtype(x):
    from ... import dtypes

    if _is_weak(x):
        return np.dtype(dtypes.dtype_of(x))
    if isinstance(x, PRNGKeyArray):
        return x.dtype
    return np.dtype(dtypes.canonicalize_dtype(np.result_type(x)))


def _carry_leaf_ok(b, a):
    """Whether JAX accepts carry leaf ``a`` out of a body given ``b``: equal
    dtypes; a weakly typed ``b`` (a Python scalar) promoted to ``a``'s kind; or a
    wider dtype of the same kind (NumPy's promotion of ``float32 + int32``, where
    JAX keeps float32)."""
    db, da = _leaf_dtype(b), _leaf_dtype(a)
    if db == da:
        return True
    if _is_weak(b):
        return _KIND_ORDER.get(da.kind, -1) >= _KIND_ORDER.get(db.kind, 9)
    return db.kind == da.kind and da.itemsize >= db.itemsize


_ARRAYS = (np.ndarray, np.generic)
#: dtype kinds a weakly typed Python int / float carry may become (see _carry_leaf_ok)
_WEAK_OK = {int: "iufc", float: "fc"}


def _carry_same(b, a, bb, ab) -> bool:
    """A few attribute compares that accept what :func:`_check_carry` accepts
    in the common cases (equal dtypes and shapes; a Python int or float that
    became an array of a kind JAX promotes it to; tuples, lists and dicts of
    those). False means: ask the full check."""
    if isinstance(a, _ARRAYS):
        if isinstance(b, _ARRAYS):
            return b.dtype == a.dtype and b.shape[bb:] == a.shape[ab:]
        kinds = _WEAK_OK.get(type(b))
        return kinds is not None and a.dtype.kind in kinds and a.shape[ab:] == ()
    tb = type(b)
    if tb is not type(a):
        return False
    if tb is tuple or tb is list or (tb.__base__ is tuple and hasattr(b, "_fields")):
        return len(b) == len(a) and all(_carry_same(x, y, bb, ab) for x, y in zip(b, a))
    if tb is dict:
        return b.keys() == a.keys() and all(_carry_same(b[k], a[k], bb, ab) for k in b)
    return b is None or tb is float or tb is int or tb is bool


def _check_carry(what, before, after, before_batch=0, after_batch=0):
    """JAX's TypeError when a loop body (``what``: ``"scan body"``,
    ``"while_loop body"``) changes its carry ``before`` into ``after``: another
    pytree structure, an array of another shape, or another dtype (a Python
    scalar carry may be promoted, and a dtype NumPy's promotion widened within
    its kind is JAX's dtype; see :func:`_carry_leaf_ok`). ``before_batch`` /
    ``after_batch``: leading (vmap) axes of the leaves not compared. Returns None."""
    if _carry_same(before, after, before_batch, after_batch):
        return None  # (the common cases, cheap: called on every pass of a loop)
    return _check_carry_full(what, before, after, before_batch, after_batch)


def _check_carry_full(what, before, after, before_batch=0, after_batch=0):
    """:func:`_check_carry` without its shortcut for the common cases."""
    lb, la = leaves_alike(
        before,
        after,
        lambda tb, ta: TypeError(
            f"{what} function carry input and carry output must have the same pytree "
            f"structure, but they differ:\n  input carry: {tb}\n  output carry: {ta}"
        ),
    )
    for i, (b, a) in enumerate(zip(lb, la)):
        sb, sa = np.shape(b)[before_batch:], np.shape(a)[after_batch:]
        if sb != sa or not _carry_leaf_ok(b, a):
            raise TypeError(
                f"{what} function carry input and carry output must have equal types "
                f"(e.g. shapes and dtypes of arrays) but they differ: carry leaf {i} is "
                f"{_leaf_dtype(b).name}{list(sb)} on input but "
                f"{_leaf_dtype(a).name}{list(sa)} on output"
            )


check_carry = register(
    Primitive("ad.check_carry", _check_carry, kind="internal", differentiable=False)
).facts(effectful=True, carry_check=True)
check_carry.samples = lambda rng: [(("scan body", (np.ones(2), 1), (np.ones(2), 2)), {})]


def _check_carry_batch(c):
    """Under vmap: the same check per example, the mapped axes skipped (counted,
    so nested vmaps skip one more each)."""
    from ...frontend import nodes as N

    _, bb = c.static("before_batch")
    _, ab = c.static("after_batch")
    expr = c.rebuild(
        before_batch=N.const((bb or 0) + int(c.batched("before"))),
        after_batch=N.const((ab or 0) + int(c.batched("after"))),
    )
    return expr, False


check_carry.def_batch(_check_carry_batch)
