"""Dtype promotion for jit (:func:`promote`): where NumPy's result dtype would
differ from JAX's, the operands are cast (weak Python scalars held boxed), and
integer powers and floor divisions take JAX's paths."""

from __future__ import annotations

import warnings
from typing import Any, Dict, List, Optional, Set

import gast
import numpy as np

from ... import dtypes
from ...frontend import nodes as N
from ...frontend.normalize import Op
from .algebra import _prim
from .avals import Aval
from .common import _SCALAR_TYPES, _assigned, _is_assign, _new_assign, _Static, _subst_stmt
from .interp import _Interp


# ---------------------------------------------------------------------------- promotion
def promote(fdef: Any, namer: Any, boxed: Optional[Dict[str, Any]] = None) -> bool:
    """JAX's dtype promotion where the generated NumPy code would differ.

    Primitives written as Python operators (``x / 2``, ``a + b``: that is how
    both ``jnp.divide(x, 2)`` and ``x / 2`` are emitted) run NumPy's operator,
    whose promotion is NumPy's: ``int32 / 2``, ``int32 + float32``,
    ``int32 * 1.5`` and ``bool * 2.0`` are float64 there, float32 in JAX (and in
    the eager primitives). For each such statement whose operands' abstract
    values are known (run :func:`infer_avals` first), the result dtype of the
    primitive's own implementation (JAX's rule: the eager result) is compared
    with what the statement computes as written; only where they differ are
    operands converted first (``x_f32 = ad.astype(x, 'float32')``), as JAX
    converts them, so matching code (all-float32 chains) is left as plain
    operators and ufuncs. Operands of unknown abstract value are left alone.

    ``boxed`` maps parameter names that are weakly typed (a Python float
    argument) but held as a NumPy scalar at run time to that dtype: NumPy
    treats those as strongly typed (``float16_array * np.float32(s)`` is
    float32; JAX says float16), so they are converted too where it matters.

    Returns whether anything changed (then re-run :func:`infer_avals` and this
    pass: a converted statement changes the abstract values that follow it; a
    round only decides statements whose inputs it has not changed).
    """
    boxed = dict(boxed or {})
    _boxed_closure(fdef.body, boxed)
    state = {"dirty": set(), "changed": False, "created": _created_arrays(fdef.body)}
    fdef.body = _promote_block(fdef.body, namer, boxed, state)
    return state["changed"]


def _boxed_closure(body: List[Any], boxed: Dict[str, Any]) -> None:
    """Names that may hold a boxed weak scalar: assigned (copied, or computed by
    an elementwise primitive into a weak value) from a boxed one."""
    changed = True
    while changed:
        changed = False
        for s in N.walk_stmts(body):
            if not _is_assign(s) or s.targets[0].id in boxed:
                continue
            if s.sj_op.kind not in ("copy", "prim"):
                continue
            res = getattr(s, "sj_aval", None)
            if s.sj_op.kind == "prim" and s.sj_op.prim.kind != "elementwise":
                ident = s.sj_op.bound.get(s.sj_op.prim.identity_operand or "")
                if isinstance(ident, gast.Name) and ident.id in boxed and getattr(res, "weak", 0):
                    # a helper handing a boxed weak operand back (ad.broadcast_like)
                    boxed[s.targets[0].id] = boxed[ident.id]
                    changed = True
                continue
            src = [n for n in N.names_in(s.value) if n in boxed]
            if not src:
                if isinstance(s.value, gast.Call) and isinstance(res, Aval) and res.weak:
                    # a jnp function of weak Python scalars (jnp.sin(n)): weak, and
                    # a NumPy scalar of the default dtype at run time
                    boxed[s.targets[0].id] = dtypes.dtype_of(res.ptype(1))
                    changed = True
                continue
            if s.sj_op.kind == "copy" or (isinstance(res, Aval) and res.weak):
                boxed[s.targets[0].id] = boxed[src[0]]
                changed = True


def _promote_block(stmts: List[Any], namer, boxed, state) -> List[Any]:
    out: List[Any] = []
    for s in stmts:
        if isinstance(s, gast.If):
            s.body = _promote_block(s.body, namer, boxed, state) or [gast.Pass()]
            s.orelse = _promote_block(s.orelse, namer, boxed, state)
            out.append(s)
            continue
        if isinstance(s, (gast.While, gast.For)):
            before = state["changed"]
            state["changed"] = False
            s.body = _promote_block(s.body, namer, boxed, state) or [gast.Pass()]
            if state["changed"]:
                # a loop-carried value may have changed: everything assigned in
                # the loop waits for the next round
                state["dirty"] |= _assigned(s)
            state["changed"] = state["changed"] or before
            out.append(s)
            continue
        if not _is_assign(s):
            state["dirty"] |= _assigned(s)
            out.append(s)
            continue
        used = set(N.names_in(s.value))
        target = s.targets[0].id
        if used & state["dirty"]:
            state["dirty"].add(target)
            out.append(s)
            continue
        new = _promote_one(s, namer, boxed, state["created"])
        if new is None:
            out.append(s)
            continue
        out.extend(new)
        state["dirty"].add(target)
        state["changed"] = True
    return out


def _no_global(name: str) -> Any:
    raise KeyError(name)  # the operands' avals are all in the environment


def _computed_dtypes(s: Any, avals: Dict[str, Any], boxed: Dict[str, Any]) -> Optional[tuple]:
    """(JAX's result dtype, the set of dtypes the statement computes as written)
    on one-element stand-ins, or None when unknown or not an array result."""
    op = s.sj_op
    if op.prim.shape_query is not None:
        return None  # (jnp.ndim(x) is a Python int whatever x's dtype: nothing to match)
    interp = _Interp(_no_global, set())
    env = dict(avals)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            # (JAX's dtype: weak arrays given as the Python scalars they promote as)
            args, kwargs = interp._operands(op, env, Aval.jax_proxy)
            ref = op.prim.impl(*args, **kwargs)
            if not isinstance(ref, (np.ndarray, np.generic)):
                if not any(isinstance(a, Aval) and a.wt and a.ptype is None for a in env.values()):
                    return None  # weak (Python scalar) result: nothing to match
                ref = np.asarray(ref, dtypes.dtype_of(ref))  # (of weak arrays: arrays)
            written = {np.asarray(interp._eval_form(s, env)).dtype}
            written |= _pow_fast_paths(s, interp, env)
            names = [n for n in avals if n in boxed and isinstance(avals[n], Aval)]
            if names:  # as held at run time: NumPy scalars
                env_rt = dict(env)
                for n in names:
                    a = avals[n]
                    env_rt[n] = Aval((), boxed[n]) if a.weak else a
                written.add(np.asarray(interp._eval_form(s, env_rt)).dtype)
    except Exception:  # noqa: BLE001 - unknown: leave the statement alone
        return None
    return np.asarray(ref).dtype, written


def _pow_fast_paths(s: Any, interp: "_Interp", env: Dict[str, Any]) -> set:
    """``x ** p`` on an array takes value-dependent shortcuts in NumPy (``p``
    of 2 runs ``square``, 0.5 ``sqrt`` ...), with their own result dtypes: the
    dtypes for the exponents that trigger one, when ``p`` is a scalar known
    only by its type."""
    e = s.value
    if not (isinstance(e, gast.BinOp) and isinstance(e.op, gast.Pow)):
        return set()
    p = env.get(e.right.id) if isinstance(e.right, gast.Name) else None
    if not isinstance(p, Aval) or not p.weak:
        return set()
    x = interp._stand_in(e.left, env, Aval.proxy)
    out = set()
    for v in (2, 0.5, -1, 1, 0):
        try:
            out.add(np.asarray(x ** p.ptype(v)).dtype)
        except (TypeError, ValueError, ArithmeticError):
            pass
    return out


def _int_power_stmt(s: Any, avals: Dict[str, Any]) -> bool:
    """Whether ``x ** y`` computes integers with an exponent that is an array
    (not a constant, so possibly negative)."""
    res = getattr(s, "sj_aval", None)
    y = s.sj_op.bound.get("y")
    return (
        isinstance(res, Aval)
        and res.dtype.kind in "iu"
        and isinstance(y, gast.Name)
        and isinstance(avals.get(y.id), Aval)
        and avals[y.id].dtype.kind in "iub"
    )


def _half_broadcast_divide(s: Any, avals: Dict[str, Any]) -> bool:
    """Whether ``x / y`` computes float16 with ``y`` a constant, a weak scalar or
    an array smaller than the result (broadcast)."""
    res = getattr(s, "sj_aval", None)
    if not isinstance(res, Aval) or res.dtype != np.float16:
        return False
    y = s.sj_op.bound.get("y")
    if isinstance(y, gast.Constant):
        return True
    a = avals.get(y.id) if isinstance(y, gast.Name) else None
    return isinstance(a, Aval) and (a.weak or a.size < res.size)


def _int_result(s: Any) -> bool:
    """Whether the statement's result is known to be an integer array."""
    res = getattr(s, "sj_aval", None)
    return isinstance(res, Aval) and res.dtype.kind in "iu"


def _int_or_float_result(s: Any, op: str) -> bool:
    """Whether the result of ``//`` (an integer or float array) or ``%`` (a
    float array) is one NumPy's operator computes otherwise than JAX."""
    res = getattr(s, "sj_aval", None)
    return isinstance(res, Aval) and res.dtype.kind in ("iuf" if op == "//" else "f")


def _weak_int_by_zero(s: Any, op: Any, operands: List[str]) -> bool:
    """``n // m`` or ``n % m`` on weak ints, one a traced argument (not a static
    count) and the divisor not a nonzero constant: the divisor may be zero."""
    if op.prim.op not in ("//", "%") or not _int_result(s):
        return False
    y = op.bound.get("y")
    if isinstance(y, gast.Constant) and y.value:
        return False
    given = getattr(s, "sj_avals_in", None) or {}
    return any(isinstance(given.get(n), Aval) for n in operands)


def _created_arrays(stmts: List[Any]) -> Set[str]:
    """Names bound by a creation primitive somewhere (``a = jnp.array(lst)``):
    arrays, whatever abstract value jit infers for them."""
    out: Set[str] = set()
    for s in N.walk_stmts(stmts):
        op = getattr(s, "sj_op", None)
        if _is_assign(s) and op.kind == "prim" and op.prim.kind == "creation":
            out.add(s.targets[0].id)
    return out


def _promote_one(
    s: Any, namer, boxed: Dict[str, Any], created: Set[str] = frozenset()
) -> Optional[List[Any]]:
    op = s.sj_op
    if op.kind != "prim":
        return None
    operator_form = isinstance(s.value, (gast.BinOp, gast.UnaryOp))
    avals = dict(getattr(s, "sj_avals_in", None) or {})
    for n, a in avals.items():  # a static count (x.shape[0]) is a weak scalar
        if isinstance(a, _Static) and type(a.value) in _SCALAR_TYPES:
            avals[n] = Aval.of(a.value)
    operands = []
    for v in op.bound.values():
        for x in v if isinstance(v, list) else [v]:
            if isinstance(x, gast.Name) and x.id not in operands:
                operands.append(x.id)
    if not operands:
        return None
    if isinstance(s.value, gast.BinOp) and op.prim.kind == "elementwise":
        for v in (s.value.left, s.value.right):
            if not (isinstance(v, gast.Constant) and type(v.value) is int):
                continue
            for n in operands:
                a = avals.get(n)
                if isinstance(a, Aval) and not a.weak and a.dtype.kind in "iu":
                    info = np.iinfo(a.dtype)
                    if not info.min <= v.value <= info.max:
                        # a weak int beyond the array's integer type: NumPy's
                        # operator raises, the primitive converts it as JAX does
                        s.value = N.call(
                            op.prim.public, [N.clone(s.value.left), N.clone(s.value.right)]
                        )
                        return [s]
    if not all(isinstance(avals.get(n), Aval) for n in operands):
        if operator_form and op.prim.op in ("//", "**") and any(n in created for n in operands):
            # an integer `//` or `**` of an array of unknown dtype (jnp.array of a
            # list: no abstract value): NumPy's operator gives 0 for `//` by zero
            # and refuses negative powers; the primitive is JAX's (round 7, items
            # 02 and 03: jit gave [0 0 0 0] where eager and JAX give [-2 -2 -1 -2])
            s.value = N.call(op.prim.public, [N.clone(op.bound["x"]), N.clone(op.bound["y"])])
            return [s]
        if (
            isinstance(s.value, gast.BinOp)
            and op.prim.kind == "elementwise"
            and all(isinstance(avals.get(n), Aval) or avals.get(n) is None for n in operands)
            and any(isinstance(avals.get(n), Aval) and not avals[n].weak for n in operands)
        ):
            # an array operator with an operand of unknown dtype (the result of
            # a call jit cannot see into): call the primitive, whose
            # implementation applies JAX's promotion at run time
            s.value = N.call(op.prim.public, [N.clone(s.value.left), N.clone(s.value.right)])
            return [s]
        return None
    if all(avals[n].weak and avals[n].ptype is not bool for n in operands):
        if operator_form and _weak_int_by_zero(s, op, operands):
            # Python ints (jit's weak arguments) raise ZeroDivisionError where
            # JAX's traced int32 divides by zero: call the primitive
            s.value = N.call(op.prim.public, [N.clone(op.bound["x"]), N.clone(op.bound["y"])])
            return [s]
        return None  # weakly typed in, weakly typed out: nothing to match yet
    if operator_form and op.prim.op == "**" and _int_power_stmt(s, avals):
        # NumPy's ``**`` refuses integers to negative integer powers; JAX's
        # power gives 0 (1 and -1 for bases 1 and -1): call the primitive
        s.value = N.call("jnp.power", [N.clone(op.bound["x"]), N.clone(op.bound["y"])])
        return [s]
    if operator_form and op.prim.op in ("//", "%") and _int_or_float_result(s, op.prim.op):
        # NumPy's integer ``//`` by zero gives 0; JAX's floor_divide -1/-2 (or
        # the unsigned maximum); NumPy's float ``//`` and ``%`` sign a zero
        # result otherwise than JAX (-0.0 // -0.7): call the primitive
        s.value = N.call(op.prim.public, [N.clone(op.bound["x"]), N.clone(op.bound["y"])])
        return [s]
    if operator_form and op.prim.op == "/" and _half_broadcast_divide(s, avals):
        # XLA divides float16 by a broadcast divisor as x * (1 / y): the
        # primitive does, NumPy's ``/`` rounds the exact quotient
        s.value = N.call("jnp.true_divide", [N.clone(op.bound["x"]), N.clone(op.bound["y"])])
        return [s]
    if not operator_form and not any(
        (n in boxed and avals[n].weak) or avals[n].wt for n in operands
    ):
        return None  # a call to the primitive itself: JAX's promotion already
    dts = _computed_dtypes(s, avals, boxed)
    if dts is None:
        return None
    want, written = dts
    if written == {want}:
        return None
    # convert the operands (strongly typed ones of another dtype, weak arrays,
    # and boxed weak scalars) to the result dtype first, as JAX does: weakly
    # typed where the promoted type is weak (2.5 * int32_array)
    res = getattr(s, "sj_aval", None)  # (its weak type: JAX's rule, optimize/interp.py)
    weak = op.prim.weak_result and isinstance(res, Aval) and res.weak_type
    cast_prim = "ad.astype_weak" if weak else "ad.astype"
    casts: List[Any] = []
    table: Dict[str, Any] = {}
    new_avals = dict(avals)
    for n in operands:
        a = avals[n]
        is_boxed = n in boxed and a.weak
        strong = not a.weak or a.ptype is bool  # JAX: a Python bool is a bool
        if not is_boxed and (not strong or (not a.weak and a.dtype == want)):
            continue
        c = namer.fresh(f"{n}_{want.name}")
        value = N.call(cast_prim, [N.name(n), N.const(want.name)])
        cast = _new_assign(
            c,
            value,
            Op("prim", prim=_prim(cast_prim), bound={"x": N.name(n), "dtype": N.const(want.name)}),
            s,
        )
        cast.sj_aval = Aval(a.shape, want, wt=weak)
        cast.sj_avals_in = {n: a}
        casts.append(cast)
        table[n] = N.name(c)
        new_avals.pop(n, None)
        new_avals[c] = cast.sj_aval
    if casts:
        _subst_stmt(s, table)
        s.sj_avals_in = {k: new_avals.get(k) for k in N.names_in(s.value)}
        check = _computed_dtypes(s, s.sj_avals_in, {})
        if check is not None and check[1] == {want}:
            return casts + [s]
    # otherwise convert the result
    t = s.targets[0].id
    raw = namer.fresh(f"{t}_raw")
    s.targets[0] = N.name(raw, store=True)
    value = N.call(cast_prim, [N.name(raw), N.const(want.name)])
    fix = _new_assign(
        t,
        value,
        Op("prim", prim=_prim(cast_prim), bound={"x": N.name(raw), "dtype": N.const(want.name)}),
        s,
    )
    return casts + [s, fix]
