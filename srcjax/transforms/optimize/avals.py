"""Abstract values (:class:`Aval`: shape, dtype, weak type), how they merge at
joins, and the static branch-type check of ``lax.cond`` under jit."""

from __future__ import annotations

import math
from typing import Any, Dict, Optional

import numpy as np

from ... import dtypes
from ...primitives.branch_types import structure_mismatch, type_mismatch
from .common import _Static


class Aval:
    """Abstract value of an array or scalar: shape, dtype, and weak type.

    ``ptype`` is the Python type (``float``, ``int``, ``complex``, ``bool``) of
    a Python scalar (weakly typed, as JAX's, except ``bool``), ``None`` for
    arrays and NumPy scalars. ``wt`` marks an array (or NumPy scalar) JAX
    types weakly (``2.5 * int32_array``, a comparison of weak values, a weak
    operand converted by :func:`.promote`): held at run time as a NumPy value
    of its dtype (strong to NumPy), it promotes as the Python scalar of its
    kind (:meth:`jax_proxy`). :attr:`weak_type` is JAX's flag for either.
    """

    __slots__ = ("shape", "dtype", "ptype", "wt")

    def __init__(self, shape: tuple, dtype: Any, ptype: Optional[type] = None, wt: bool = False):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.ptype = ptype
        self.wt = wt

    @property
    def weak(self) -> bool:
        """A Python scalar (held as one, or boxed: see :func:`.promote`)."""
        return self.ptype is not None

    @property
    def weak_type(self) -> bool:
        """JAX's weak type: a Python int/float/complex, or a weak array."""
        return self.wt or (self.ptype is not None and self.ptype is not bool)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @staticmethod
    def of(x: Any) -> Optional["Aval"]:
        if isinstance(x, (np.ndarray, np.generic)):  # first: np.float64 is a float
            return Aval(np.shape(x), x.dtype)
        if isinstance(x, bool):
            return Aval((), np.bool_, bool)
        if isinstance(x, int):
            return Aval((), np.int64, int)
        if isinstance(x, float):
            return Aval((), np.float64, float)
        if isinstance(x, complex):
            return Aval((), np.complex128, complex)
        return None

    def proxy(self) -> Any:
        """A one-element stand-in with this value's dtype, rank and weak type,
        as the generated code holds it at run time."""
        if self.ptype is not None:
            return self.ptype(1)
        if not self.shape:
            return self.dtype.type(1)
        return np.ones((1,) * len(self.shape), self.dtype)

    def jax_proxy(self) -> Any:
        """A stand-in that promotes as JAX's value does: a weak array as a
        Python scalar of its kind (a weak bool as a bool), else :meth:`proxy`."""
        if self.wt and self.ptype is None:
            return _WEAK_PROXY[self.dtype.kind]
        return self.proxy()

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, Aval)
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.ptype is other.ptype
            and self.wt == other.wt
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.ptype, self.wt))

    def __repr__(self) -> str:
        if self.ptype is not None:
            return f"weak {self.ptype.__name__}"
        weak = " weak" if self.wt else ""
        return f"{self.dtype.name}[{','.join(map(str, self.shape))}]{weak}"


#: the Python scalar a weak array of each dtype kind promotes as
_WEAK_PROXY = {"b": True, "i": 1, "u": 1, "f": 1.0, "c": 1 + 0j}


class ClassAval:
    """Abstract value of an instance of a registered pytree class, from jit's
    signature (whose key holds the same: the class, its aux data, which attribute
    is which child and the children's keys): ``children`` are the abstract values
    of ``tree_flatten``'s children in order, ``layout`` maps an attribute that
    holds a child to its index (attributes that are no child are not in it)."""

    __slots__ = ("type", "aux", "layout", "children")

    def __init__(self, type_: type, aux: Any, layout: Dict[str, int], children: tuple) -> None:
        self.type = type_
        self.aux = aux
        self.layout = dict(layout)
        self.children = tuple(children)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, ClassAval) or self.type is not other.type:
            return False
        try:
            same_aux = bool(self.aux == other.aux)
        except Exception:  # noqa: BLE001 - aux data without a usable ==
            same_aux = self.aux is other.aux
        return same_aux and self.layout == other.layout and self.children == other.children

    __hash__ = None  # (aux data need not be hashable here)

    def __repr__(self) -> str:
        inner = ", ".join(repr(c) for c in self.children)
        return f"{self.type.__name__}[{self.aux!r}]({inner})"


def _merge(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    if isinstance(a, (Aval, _Static, ClassAval)) or isinstance(b, (Aval, _Static, ClassAval)):
        return a if a == b else None
    if type(a) is not type(b):
        return None
    if isinstance(a, dict):
        if a.keys() != b.keys():
            return None
        return {k: _merge(a[k], b[k]) for k in a}
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return None
        items = [_merge(x, y) for x, y in zip(a, b)]
        if hasattr(a, "_fields"):  # a named tuple takes its fields positionally
            return type(a)(*items)
        return type(a)(items)
    return None


def _merge_env(a: Dict[str, Any], b: Dict[str, Any]) -> Dict[str, Any]:
    out = {}
    for k in set(a) | set(b):
        out[k] = _merge(a.get(k), b.get(k)) if (k in a and k in b) else None
    return out


def check_branch_avals(what: str, names: tuple, a: Any, b: Any) -> None:
    """The static form of ``lax.cond``'s branch check for jit
    (:func:`srcjax.primitives.branch_types.check_branch_types`): ``a`` and ``b``
    are the abstract values inferred for the two branches' output (:class:`Aval`
    leaves in tuples/lists/dicts; ``None`` where unknown, never an error).

    Raises:
        TypeError: JAX's message, where both are known and differ.
    """
    if a is None or b is None:
        return
    if isinstance(a, Aval) and isinstance(b, Aval):

        def key(v: Aval) -> tuple:
            if v.weak:
                return v.shape, np.dtype(dtypes.dtype_of(v.ptype(0)))
            return v.shape, np.dtype(dtypes.canonicalize_dtype(v.dtype))

        type_mismatch(what, names, key(a), key(b))
        return
    containers = (dict, list, tuple)
    if not isinstance(a, containers) or not isinstance(b, containers):
        return  # a static value or one unknown side: nothing sure to compare
    if type(a) is not type(b):
        structure_mismatch(what, names, f"a {type(a)}", f"a {type(b)}")
    if isinstance(a, dict):
        if set(a) != set(b):
            structure_mismatch(
                what,
                names,
                f"a dict with keys {sorted(str(k) for k in a)}",
                f"a dict with keys {sorted(str(k) for k in b)}",
            )
        for k in a:
            check_branch_avals(what, names, a[k], b[k])
        return
    if len(a) != len(b):
        structure_mismatch(
            what,
            names,
            f"a {type(a).__name__} of {len(a)} items",
            f"a {type(b).__name__} of {len(b)} items",
        )
    for x, y in zip(a, b):
        check_branch_avals(what, names, x, y)


def _describe_aval(a: Any) -> str:
    return f"{np.dtype(a.dtype).name}[{','.join(map(str, a.shape))}]"


def _leaves(a: Any) -> list:
    """The abstract values in a (possibly container) abstract value."""
    if isinstance(a, (list, tuple)):
        return [x for e in a for x in _leaves(e)]
    if isinstance(a, dict):
        return [x for e in a.values() for x in _leaves(e)]
    return [a]


class _Hole:
    """An item of a list that is ``None`` at run time: a sparse list cotangent
    (``ad.bgetitem_adjoint(ct, parts, 2)`` of ``q, k, v = jnp.split(...)``: the
    items no cotangent reached), so ``ad.tree_add`` and ``ad.fill_none`` of such
    lists are known (the reverse pass of a split was unknown from there on)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "hole"


HOLE = _Hole()


def _container_stand_in(a: Any, make) -> Any:
    """Stand-ins for a list, tuple, named tuple or dict of known values."""
    if isinstance(a, Aval):
        return make(a)
    if a is HOLE:
        return None
    if isinstance(a, _Static):
        return a.value
    if isinstance(a, list):
        return [_container_stand_in(e, make) for e in a]
    if isinstance(a, tuple):
        items = [_container_stand_in(e, make) for e in a]
        return type(a)(*items) if hasattr(a, "_fields") else tuple(items)
    if isinstance(a, dict):
        return {k: _container_stand_in(v, make) for k, v in a.items()}
    raise ValueError("unknown operand")


def check_pred(pred: Any) -> None:
    """JAX's TypeError for a ``lax.cond`` predicate that is no scalar (the
    generated ``if pred:`` raised NumPy's "truth value ... is ambiguous": bug 37)."""
    if isinstance(pred, Aval) and pred.shape != ():
        dims = ",".join(str(d) for d in pred.shape)
        raise TypeError(
            f"Pred must be a scalar, got {pred.dtype.name}[{dims}] of shape {pred.shape}."
        )
