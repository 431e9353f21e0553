"""Weakly typed results of jit (:func:`mark_weak_returns`): JAX returns a value
computed from weakly typed Python scalars only as a weakly typed Array
(``jit(lambda x: x * 2.0)(1.0)`` is ``Array(2., dtype=float32, weak_type=True)``).
jit holds a Python float argument as a NumPy scalar at run time (see
:func:`.promote`), so its results would come back strong; the abstract values
know better."""

from __future__ import annotations

from typing import Any, Dict

import gast

from ...frontend import nodes as N
from .avals import Aval

_WEAK_PTYPES = (float, int, complex)
#: helpers that give the cotangent of their second argument
_COTANGENT_OF = frozenset({"ad.project_real", "ad.unbroadcast"})


def mark_weak_returns(fdef: Any, env: Dict[str, Any]) -> bool:
    """Wrap each name returned by ``fdef``'s final ``return`` (a name or a tuple
    of names, also nested, through names assigned tuples) whose abstract value in
    ``env`` (:func:`.infer_avals`'s environment at the end of the body) is weakly
    typed (a Python float, int or complex, a
    weak array or bool: ``Aval.weak_type``), or which is the cotangent of a weak
    Python float (``ad.project_real(g, x)``), in ``ad.weak_value``, which makes it a
    weakly typed Array. Returns whether anything changed."""
    if not fdef.body or not isinstance(fdef.body[-1], gast.Return):
        return False
    ret = fdef.body[-1]
    # the top-level assignments of the names returned (the last one of each)
    assigned = {}
    for st in fdef.body[:-1]:
        if isinstance(st, gast.Assign) and len(st.targets) == 1:
            t = st.targets[0]
            if isinstance(t, gast.Name):
                assigned[t.id] = st.value

    def weak_name(e: Any, ptypes: tuple = _WEAK_PTYPES) -> bool:
        if not isinstance(e, gast.Name):
            return False
        a = env.get(e.id)
        if not isinstance(a, Aval):
            return False
        if ptypes is _WEAK_PTYPES and a.wt:
            return True  # a weak array (2.5 * int32_array), a weak bool (x > 0.5)
        return a.shape == () and a.ptype in ptypes

    def weak(e: Any) -> bool:
        if weak_name(e):
            return True
        if isinstance(e, gast.Name) and e.id in assigned:
            e = assigned[e.id]
        # a gradient's final projection onto its primal: the cotangent of a weak
        # Python float is weak (JAX: a gradient has its primal's type)
        return (
            isinstance(e, gast.Call)
            and N.to_source(e.func).strip() in _COTANGENT_OF
            and len(e.args) == 2
            and weak_name(e.args[1], (float,))
            and not strong_by_cast(e.args[0])
        )

    cast: list = []  # (the names computed from a strong_cast primitive's result, once)

    def strong_by_cast(g: Any) -> bool:
        """Whether the cotangent ``g`` is strong as JAX computes it: its abstract
        value is strong and it is computed from a ``strong_cast`` primitive's
        result (pow's derivative converts a weak base to a strong dtype, so
        ``grad(lambda x: x ** 2.0)(3.0)`` is strong float32 in JAX)."""
        if not isinstance(g, gast.Name):
            return False
        a = env.get(g.id)
        if isinstance(a, Aval) and a.weak_type:
            return False
        if not cast:
            cast.append(_cast_names(fdef, env))
        return g.id in cast[0]

    def weak_mask(a: Any, grad: bool = False) -> Any:
        """The weak leaves of the abstract value tree ``a`` as ``ad.weak_leaves``
        reads them (``True`` / ``False``, dicts by key, sequences as tuples);
        ``grad``: of a gradient of a value of that tree (weak where the primal is
        a weak float: a gradient has its primal's type)."""
        if isinstance(a, Aval):
            if grad:
                return a.ptype is float or (a.wt and a.dtype is not None and a.dtype.kind == "f")
            return a.weak_type
        if isinstance(a, dict):
            sub = {k: weak_mask(v, grad) for k, v in a.items()}
            ok = all(isinstance(k, (str, int)) for k in sub)
            return sub if ok and any(m is not False for m in sub.values()) else False
        if isinstance(a, (list, tuple)):
            sub = tuple(weak_mask(v, grad) for v in a)
            return sub if any(m is not False for m in sub) else False
        return False

    def mask_node(m: Any) -> Any:
        if isinstance(m, dict):
            return gast.Dict(
                keys=[N.const(k) for k in m], values=[mask_node(v) for v in m.values()]
            )
        if isinstance(m, tuple):
            return gast.Tuple(elts=[mask_node(v) for v in m], ctx=gast.Load())
        return N.const(m)

    def container_mask(e: Any) -> Any:
        """The weak leaves of a returned container (a dict or list value, or the
        gradient ``ad.cotangent_like(ct, p)`` of a container ``p``), else False."""
        if not isinstance(e, gast.Name):
            return False
        a = env.get(e.id)
        if isinstance(a, (dict, list, tuple)):
            return weak_mask(a)
        v = assigned.get(e.id)
        if (
            isinstance(v, gast.Call)
            and N.to_source(v.func).strip() == "ad.cotangent_like"
            and len(v.args) == 2
            and isinstance(v.args[1], gast.Name)
        ):
            return weak_mask(env.get(v.args[1].id), grad=True)
        if (
            isinstance(v, gast.Call)
            and N.to_source(v.func).strip() == "ad.unflatten_upto"
            and len(v.args) == 3
            and all(isinstance(x, gast.Name) for x in v.args[:2])
        ):
            # a gradient whose leaves' abstract values are known, built from them
            # (optimize/pytrees.py's dense cotangent_like): the leaves' weak types
            td = assigned.get(v.args[0].id)
            leaves = env.get(v.args[1].id)
            if (
                isinstance(td, gast.Call)
                and N.to_source(td.func).strip() == "ad.tree_def"
                and td.args
                and isinstance(td.args[0], gast.Name)
                and isinstance(leaves, list)
                and all(isinstance(a, Aval) for a in leaves)
            ):
                flags = iter([a.weak_type for a in leaves])
                m = weak_mask(_filled(env.get(td.args[0].id), flags))
                return m if next(flags, None) is None else False
        return False

    seen = set()

    def mark(e: Any) -> Any:
        """``e`` with its weak parts wrapped; a tuple (or a name assigned one, as
        value_and_grad's ``packed = (g0, g1); out1 = (out, packed)``) in place."""
        if isinstance(e, gast.Name) and isinstance(assigned.get(e.id), gast.Tuple):
            if e.id not in seen:  # (a name assigned a tuple holding itself: once)
                seen.add(e.id)
                mark(assigned[e.id])
            return e
        if isinstance(e, gast.Tuple):
            e.elts = [mark(x) for x in e.elts]
            return e
        if isinstance(e, gast.Dict):
            e.values = [mark(x) for x in e.values]
            return e
        if isinstance(e, gast.List):
            e.elts = [mark(x) for x in e.elts]
            return e
        if weak(e):
            changed.append(e)
            return N.call("ad.weak_value", [e])
        m = container_mask(e)
        if m is not False:
            changed.append(e)
            return N.call("ad.weak_leaves", [e, mask_node(m)])
        return e

    changed: list = []
    ret.value = mark(ret.value)
    return bool(changed)


def _filled(a: Any, flags: Any) -> Any:
    """The abstract value tree ``a`` with each leaf replaced, in order, by a
    scalar abstract value of the next weak flag's type (for :func:`weak_mask`)."""
    if isinstance(a, dict):
        return {k: _filled(v, flags) for k, v in a.items()}
    if isinstance(a, (list, tuple)):
        return type(a)(_filled(v, flags) for v in a) if type(a) in (list, tuple) else a
    if isinstance(a, Aval):
        return Aval(a.shape, a.dtype, wt=bool(next(flags, False)))
    return a


def _cast_names(fdef: Any, env: Dict[str, Any]) -> set:
    """The names ``fdef`` assigns a ``strong_cast`` primitive's result whose
    abstract value in ``env`` is strong (``pow_base = ad.pow_base(x, 1.0)``; an
    integer exponent's is weak), and the names computed from those, anywhere in
    its body (a fixpoint over every assignment, loops included)."""
    from ...primitives import registry

    flows = []
    sources = set()
    for st in N.walk(fdef):
        if not isinstance(st, (gast.Assign, gast.AugAssign)):
            continue
        targets = st.targets if isinstance(st, gast.Assign) else [st.target]
        outs = {n.id for t in targets for n in N.walk(t) if isinstance(n, gast.Name)}
        v = st.value
        if isinstance(v, gast.Call) and len(outs) == 1:
            p = registry.REGISTRY.get(N.to_source(v.func).strip())
            a = env.get(next(iter(outs)))
            if (
                p is not None
                and p.strong_cast
                and isinstance(a, Aval)
                and not a.weak_type
                and _weak_operands(v, env)
            ):
                sources |= outs
        if isinstance(v, gast.Call) and len(outs) == 1:
            p = registry.REGISTRY.get(N.to_source(v.func).strip())
            if p is not None and p.strong_reset:
                continue  # (JAX's convert back to the operand's type: weak again)
        reads = {n.id for n in N.walk(v) if isinstance(n, gast.Name)}
        flows.append((reads, outs))
    changed = bool(sources)
    while changed:
        changed = False
        for reads, outs in flows:
            if reads & sources and not outs <= sources:
                sources |= outs
                changed = True
    return sources


def _weak_operands(call: Any, env: Dict[str, Any]) -> bool:
    """Whether the operands of ``call`` (names with abstract values in ``env``,
    number literals) are weakly typed together (JAX's weak rule): a strong cast
    inside a call of weak operands is what makes its result strong (where an
    operand is strong, JAX's promotion converts the weak one, and the cotangent
    is converted back: weak)."""
    from .interp_rules import _weak_type

    avals = []
    for x in call.args:
        if isinstance(x, gast.Constant) and type(x.value) in (int, float, complex):
            avals.append(Aval.of(x.value))
        elif isinstance(x, gast.Name) and isinstance(env.get(x.id), Aval):
            avals.append(env[x.id])
        else:
            return False
    return bool(avals) and _weak_type(avals)
