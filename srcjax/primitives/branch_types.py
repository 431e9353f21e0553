"""JAX's TypeError when the branches of a conditional give outputs of different
types: ``lax.cond`` / ``lax.switch`` run eagerly (:mod:`srcjax.lax`) and, under
vmap, a ``lax.cond`` whose branches both run for a mixed batch
(``ad.check_cond_types`` in :mod:`srcjax.primitives.batch_rules.runtime_select`).

It lives with the primitives, below both users, so that neither imports upward.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_branch_types", "structure_mismatch", "type_mismatch"]


def check_branch_types(what: str, names: tuple, out: Any, other: Any, lead: tuple = (0, 0)) -> None:
    """Raise JAX's TypeError when two branches' outputs differ in pytree structure,
    shape or dtype (weak Python scalars count by their canonical dtype).

    ``what`` is ``"cond"`` or ``"switch"``, ``names`` the two branches' names for
    the message, ``out`` / ``other`` their outputs (pytrees of arrays or scalars).
    ``lead``: how many leading (vmap batch) axes each side's leaves carry, left
    out of the shapes compared."""
    from ..tree_util import tree_flatten
    from .control.carries import _leaf_dtype

    la, ta = tree_flatten(out)
    lb, tb = tree_flatten(other)
    if ta != tb:
        structure_mismatch(what, names, ta, tb)
    for a, b in zip(la, lb):
        sa, sb = np.shape(a)[lead[0] :], np.shape(b)[lead[1] :]
        type_mismatch(what, names, (sa, _leaf_dtype(a)), (sb, _leaf_dtype(b)))


def structure_mismatch(what: str, names: tuple, ta: Any, tb: Any) -> None:
    """Raise JAX's TypeError for branch outputs of treedefs ``ta`` and ``tb``."""
    raise TypeError(
        f"{what} branch outputs must have the same pytree structure, but they differ: "
        f"{names[0]} output is {ta} but {names[1]} output is {tb}"
    )


def type_mismatch(what: str, names: tuple, a: tuple, b: tuple) -> None:
    """Raise JAX's TypeError unless the (shape, dtype) pairs ``a`` and ``b`` match."""
    (sa, da), (sb, db) = a, b
    if tuple(sa) == tuple(sb) and np.dtype(da) == np.dtype(db):
        return
    ka = f"{np.dtype(da).name}{list(sa)}"
    kb = f"{np.dtype(db).name}{list(sb)}"
    why = "shapes" if tuple(sa) != tuple(sb) else "dtypes"
    raise TypeError(
        f"{what} branches must have equal output types but they differ: the "
        f"output of {names[0]} has type {ka} but the corresponding output of "
        f"{names[1]} has type {kb}, so the {why} do not match"
    )
