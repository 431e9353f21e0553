"""Checks of what user functions return to the transforms: ``has_aux`` pairs
and ``custom_vjp`` backward rules (``ad.check_aux``, ``ad.check_bwd``), custom_jvp
rules (``ad.check_jvp_out``), and of the index users give ``lax.switch``
(``ad.check_switch_index``).
"""

from __future__ import annotations

import numpy as np

from ..registry import Primitive, register
from ._trees import _class_kind, leaves_alike


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


def _tangent_type(x, expected_of=None):
    """``x``'s type as JAX prints it (``float32[3]``), weak types stripped: a
    Python number has the default dtype of its kind. With ``expected_of`` (the
    primal), the tangent type JAX expects for it instead (its own dtype for a
    floating primal, float0 for an integer or bool one)."""
    from ... import dtypes

    shape = list(np.shape(x))
    dt = getattr(x, "dtype", None)
    if dt is None:
        dt = np.result_type(type(x)) if isinstance(x, (bool, int, float, complex)) else None
    name = "?" if dt is None else dtypes.canonicalize_dtype(dt).name
    if expected_of is not None and dt is not None and np.dtype(dt).kind not in "fcV":
        name = "float0"
    return f"{name}{shape}"


def _jvp_out_mismatch(p, t):
    """Whether tangent leaf ``t`` does not fit primal leaf ``p`` (JAX's
    custom_jvp rule check)."""
    from ... import dtypes

    if np.shape(p) != np.shape(t):
        return True
    pd, td = getattr(p, "dtype", None), getattr(t, "dtype", None)
    if pd is None or td is None or pd.kind not in "fc":
        return False  # (a Python number's dtype is weak; an integer primal's tangent varies)
    if td.kind in "biu":
        return True
    return dtypes.canonicalize_dtype(pd) != dtypes.canonicalize_dtype(td)


def _check_jvp_out(out, rule=None, fun=None):
    """A custom_jvp rule's ``(primal_out, tangent_out)`` of the rule named
    ``rule`` for the function ``fun``: JAX's TypeError when the two trees differ
    in structure, or a tangent leaf has another shape or dtype than its primal
    (an integer or bool tangent for a floating primal: user bug 06, grad then
    gave 0.0; a tangent of another shape was reported as a vjp cotangent error:
    fresh-user bug, session 11). Under vmap it runs per example (no batching
    rule), so shapes are per-example shapes."""

    who = f"Custom JVP rule {rule} for function {fun}" if rule else "Custom JVP rule"
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(
            f"{who} must produce a pair (list or tuple of length two) representing "
            f"primal and tangent outputs, but got {type(out).__name__}"
        )
    ps, ts = leaves_alike(
        *out,
        lambda ptree, ttree: TypeError(
            f"{who} must produce primal and tangent outputs with equal container "
            f"(pytree) structures, but got {ptree} and {ttree} respectively."
        ),
    )
    bad = [(p, t) for p, t in zip(ps, ts) if _jvp_out_mismatch(p, t)]
    if not bad:
        return
    if len(ps) == 1:
        (p, t), p_type = bad[0], _tangent_type(bad[0][0])
        raise TypeError(
            f"{who} must produce primal and tangent outputs with corresponding shapes "
            f"and dtypes. Expected {_tangent_type(p, p)} (tangent type of {p_type}) but "
            f"got {_tangent_type(t)}."
        )
    lines = "\n".join(
        f"  primal {_tangent_type(p)} with tangent {_tangent_type(t)}, expecting tangent "
        f"{_tangent_type(p, p)}"
        for p, t in bad
    )
    raise TypeError(
        f"{who} must produce primal and tangent outputs with corresponding shapes and "
        f"dtypes, but got:\n{lines}"
    )


check_jvp_out = register(
    Primitive("ad.check_jvp_out", _check_jvp_out, kind="internal", differentiable=False)
)
check_jvp_out.facts(effectful=True)


def _check_star_len(xs, n, lead=0):
    """``f(*xs)`` expanded into ``n`` items, where ``n`` is the number of
    parameters the callee leaves to the star (``model(*params, x)`` with ``def
    model(w, b, x)``): Python's TypeError when ``xs`` has another length, instead
    of silently using its first ``n`` items. ``lead``: the batch axes vmap put
    before an array ``xs``'s items (its length is the axis after them)."""
    size = np.shape(xs)[lead] if lead and isinstance(xs, (np.ndarray, np.generic)) else len(xs)
    if size != n:
        raise TypeError(
            f"a star-argument (*args) gives {size} items where the call needs {n} "
            "(the callee's positional parameters)"
        )


check_star_len = register(
    Primitive("ad.check_star_len", _check_star_len, kind="internal", differentiable=False)
)
check_star_len.facts(effectful=True)


_PY_NUMBERS = (int, float, bool, complex)


def _check_weak_int(v, other=None):
    """A Python int constant ``v`` beyond int32 (``x + 2**31``) where JAX converts
    it to its weakly typed int32 (x64 off): JAX's OverflowError when it meets an
    array ``other``, or always (``other`` None: an argument of a ``jnp`` function),
    where NumPy would compute in float32 or wrap around. Emitted by the normalizer
    only for such constants (the common call has no check)."""
    if other is None or type(other) not in _PY_NUMBERS:
        from ...dtypes import check_int32_range

        check_int32_range(v)


check_weak_int = register(
    Primitive("ad.check_weak_int", _check_weak_int, kind="internal", differentiable=False)
)
check_weak_int.facts(effectful=True)
