"""Checks of what user functions return to the transforms: ``has_aux`` pairs
and ``custom_vjp`` backward rules (``ad.check_aux``, ``ad.check_bwd``), custom_jvp
rules (``ad.check_jvp_out``), and of the index users give ``lax.switch``
(``ad.check_switch_index``).
"""

from __future__ import annotations

import numpy as np

from ..registry import Primitive, register
from ._trees import _class_kind


def _check_aux(out):
    """``has_aux=True`` requires ``fun`` to return a pair ``(output, aux)`` (as JAX)."""
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        what = f"a {type(out).__name__}"
        if isinstance(out, (tuple, list)):
            what += f" of length {len(out)}"
        raise TypeError(
            f"has_aux=True requires the function to return a pair (output, aux); it returned {what}"
        )


check_aux = register(Primitive("ad.check_aux", _check_aux, kind="internal", differentiable=False))
check_aux.facts(effectful=True)


def _check_bwd(out, n, name, primals=None):
    """``out`` of a custom_vjp ``bwd`` rule, checked to hold one cotangent per
    differentiable argument (``jax.custom_vjp`` raises TypeError too) and, given
    the differentiable ``primals`` (a tuple), each shaped like its argument, leaf
    by leaf (``None`` is a zero cotangent): JAX's ValueError otherwise (a scalar
    cotangent for a vector input used to become a scalar "gradient")."""
    if not isinstance(out, (tuple, list)) or len(out) != n:
        got = (
            f"a {type(out).__name__} of length {len(out)}"
            if isinstance(out, (tuple, list))
            else (f"a {type(out).__name__}")
        )
        raise TypeError(
            f"the custom_vjp bwd rule of {name} must return a tuple of {n} cotangent(s), "
            f"one per differentiable argument; it returned {got}"
        )
    if primals is not None:
        for i, (ct, p) in enumerate(zip(out, primals)):
            _check_bwd_leaf(ct, p, f"output[{i}]", name)
    return out


def _check_bwd_leaf(ct, p, path, name):
    if ct is None:
        return
    if isinstance(p, (dict, list, tuple)) or _class_kind(p) is not None:
        from ...tree_util import tree_flatten

        cl, ctree = tree_flatten(ct, is_leaf=lambda v: v is None)
        pl, ptree = tree_flatten(p)
        if len(cl) != len(pl):
            raise ValueError(
                f"Custom VJP bwd rule of {name} must produce an output with the same "
                f"container structure as the args tuple of the primal function, but at "
                f"{path} it produced {ctree} for an input of structure {ptree}"
            )
        for j, (a, b) in enumerate(zip(cl, pl)):
            _check_bwd_leaf(a, b, f"{path} leaf {j}", name)
        return
    cs, ps = np.shape(ct), np.shape(p)
    if cs != ps:
        dt = np.result_type(ct).name
        raise ValueError(
            f"Custom VJP bwd rule of {name} must produce an output with the same shape "
            f"as the args tuple of the primal function, but at {path} the bwd rule "
            f"produced an output of shape {dt}{list(cs)} corresponding to an input of "
            f"shape {np.result_type(p).name}{list(ps)}"
        )


check_bwd = register(Primitive("ad.check_bwd", _check_bwd, kind="internal", differentiable=False))
check_bwd.facts(effectful=True)


def _check_switch_index(index):
    """JAX's TypeError for a ``lax.switch`` index whose dtype is no integer (a
    float, a bool): it used to be clipped and truncated (user bug 06)."""
    dt = getattr(index, "dtype", None)
    if dt is not None and dt.kind in "iu":
        return  # the common case, an integer array
    from ... import dtypes

    dt = dtypes.dtype_of(index)
    if dt.kind not in "iu":
        value = index.item() if np.ndim(index) == 0 and hasattr(index, "item") else index
        raise TypeError(f"Index type must be an integer, got {value} as {dt}")


check_switch_index = register(
    Primitive("ad.check_switch_index", _check_switch_index, kind="internal", differentiable=False)
)
check_switch_index.facts(effectful=True)


def _check_jvp_out(out):
    """A custom_jvp rule's ``(primal_out, tangent_out)``: JAX's TypeError where a
    leaf of a floating primal has an integer or bool tangent (it used to be taken
    as is; grad then gave 0.0: user bug 06)."""
    from ...tree_util import tree_leaves

    primal, tangent = out
    ps, ts = tree_leaves(primal), tree_leaves(tangent)
    if len(ps) != len(ts):
        return
    for p, t in zip(ps, ts):
        pd, td = getattr(p, "dtype", None), getattr(t, "dtype", None)
        if pd is not None and td is not None and pd.kind in "fc" and td.kind in "biu":
            p_type = f"{pd.name}{list(np.shape(p))}"
            raise TypeError(
                "Custom JVP rule must produce primal and tangent outputs with "
                f"corresponding shapes and dtypes. Expected {p_type} (tangent type of "
                f"{p_type}) but got {td.name}{list(np.shape(t))}."
            )


check_jvp_out = register(
    Primitive("ad.check_jvp_out", _check_jvp_out, kind="internal", differentiable=False)
)
check_jvp_out.facts(effectful=True)


def _check_star_len(xs, n):
    """``f(*xs)`` expanded into ``n`` items, where ``n`` is the number of
    parameters the callee leaves to the star (``model(*params, x)`` with ``def
    model(w, b, x)``): Python's TypeError when ``xs`` has another length, instead
    of silently using its first ``n`` items."""
    if len(xs) != n:
        raise TypeError(
            f"a star-argument (*args) gives {len(xs)} items where the call needs {n} "
            "(the callee's positional parameters)"
        )


check_star_len = register(
    Primitive("ad.check_star_len", _check_star_len, kind="internal", differentiable=False)
)
check_star_len.facts(effectful=True)
