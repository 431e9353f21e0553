"""Type trees of the values a Numba loop kernel reads and writes, and their scalar leaves.

Every value a compiled loop touches has an abstract value from jit's inference:
a scalar, a small array of fixed shape (at most :data:`MAX_ELEMENTS` elements),
or a tuple of those. :func:`tree` turns it into a type tree; a kernel names an
array ``x`` of shape ``(2, 3)`` as the six scalars ``x__0_0 ... x__1_2``
(:func:`_el`) and a tuple ``c`` as its items ``c__t0, c__t1, ...``
(:func:`_leaves`). Anything the kernels cannot hold raises :class:`Refuse` with
the reason, and the loop keeps NumPy.
"""

from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np

__all__ = ["Refuse", "MAX_ELEMENTS", "tree"]

#: the largest array a kernel scalarizes (elements); a larger one keeps NumPy
MAX_ELEMENTS = 64
_DTYPES = {"float32", "float64", "int32", "int64", "bool"}


class Refuse(Exception):
    """This loop is no region (the reason, for the comment in generated code)."""


def _conv(dt: str) -> str:
    return "np.bool_" if dt == "bool" else f"np.{dt}"


def tree(aval: Any, x64: bool, rows: bool = False, limit: int = 0) -> Any:
    """``aval`` as a type tree: ``("t", [children])`` for a tuple, ``("a", dtype,
    shape, weak)`` for a scalar or array (a weak Python scalar: the default
    float/int dtype, as in JAX). ``rows``: an array the loop reads only by row
    (``xs[k]``, passed whole and indexed in the kernel): its row's size counts.
    ``limit``: the most elements an array may have (default :data:`MAX_ELEMENTS`)."""
    if isinstance(aval, (tuple, list)):
        if rows:
            raise Refuse("rows of a tuple")
        return ("t", tuple(tree(a, x64, limit=limit) for a in aval))
    shape = getattr(aval, "shape", None)
    if shape is None or not hasattr(aval, "ptype"):
        raise Refuse("a value that is no array, scalar or tuple")
    shape = tuple(shape)
    if rows and not shape:
        raise Refuse("rows of a scalar")
    counted = shape[1:] if rows else shape
    size = int(np.prod(counted)) if counted else 1
    if size > (limit or MAX_ELEMENTS) or 0 in shape:
        raise Refuse(f"an array of {size} elements")
    dt = np.dtype(aval.dtype)
    if aval.ptype is not None:
        if aval.ptype is bool:
            dt = np.dtype(bool)
        elif aval.ptype is int:
            dt = np.dtype(np.int64 if x64 else np.int32)
        elif aval.ptype is complex:
            dt = np.dtype(np.complex128 if x64 else np.complex64)
        else:
            dt = np.dtype(np.float64 if x64 else np.float32)
    if dt.name not in _DTYPES:
        raise Refuse(f"dtype {dt.name}")
    return ("a", dt.name, shape, aval.ptype is not None)


def _el(leaf: str, idx: Tuple[int, ...]) -> str:
    return leaf if not idx else f"{leaf}__{'_'.join(map(str, idx))}"


def _leaves(prefix: str, t: Any, access: str) -> List[Tuple[str, Any, str]]:
    """``(leaf name, leaf tree, Python access expression)`` under ``prefix``."""
    if t[0] == "t":
        out = []
        for k, c in enumerate(t[1]):
            out.extend(_leaves(f"{prefix}__t{k}", c, f"{access}[{k}]"))
        return out
    return [(prefix, t, access)]


def _same(a: Any, b: Any) -> bool:
    """The same type tree (weakness aside: a weak and a strong int32 are both int32)."""
    if a[0] != b[0]:
        return False
    if a[0] == "t":
        return len(a[1]) == len(b[1]) and all(map(_same, a[1], b[1]))
    return a[1:3] == b[1:3]
