"""Reverse mode's deferred sums over a lax loop's trips: the cotangent of an
operand the loop does not change (an RNN's ``W_h`` in ``h @ W_h``) is a sum over
the trips of one product per trip (``h_k^T @ g_k``). Instead of one small GEMM
and one addition per reverse trip, the reverse loop pushes each trip's operands
on lists, and one call after it contracts the stacked operands over the trip
axis (``ad.bmatmul_right(G, H, W_h, True, False)``: one GEMM over all trips and
rows). Which rule calls can be summed this way is the fact ``stack_sum`` of
their primitive (see :mod:`srcjax.primitives.registry`, :func:`stack_sum_form`).

vmap's batched form of such a rule, ``ad.bmatmul_right(g, a, w, True, False)``
(a GRU under ``vmap``, U2), already sums over the examples: its fact names the
parameters the call must pass as these constants (``ab=True, bb=False``: ``g``
and ``a`` hold one row per example, ``w`` none) and joins the trips' operands by
``jnp.concatenate`` (trips times examples rows, every one an example of the
same call): one GEMM over all trips' and examples' rows, exact in structure
for any per-example ranks; the sum's rounding order changes."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set

import gast

from ...frontend import nodes as N
from ...primitives.registry import by_public, stack_sum_form
from .hoist import is_lax_loop
from .prune import _is_reversed


class _Deferred:
    """One loop's deferred sums: the names it may defer (defined before it and
    not assigned in it), the lists of each site (stable over the fixpoint's
    passes) and the sites the last pass found."""

    def __init__(self, invariant: Set[str]) -> None:
        self.invariant = invariant
        self.lists: Dict[Any, Dict[str, str]] = {}
        self.sites: List[Any] = []


class _DeferredSums:
    """Deferred sums of loop-invariant cotangents (a mixin of :class:`~.generate.Reverse`)."""

    defer: Optional[_Deferred] = None

    def deferral_for(self, s: Any, defined: Set[str], body_defs: Set[str]) -> Optional[_Deferred]:
        """A :class:`_Deferred` for loop ``s`` when its trips can be stacked: a
        ``for`` over a count no later vmap makes per-example (as for row reads)
        whose body checks a lax carry (``lax.scan``/``fori_loop``: every trip's
        values then have one shape), else None."""
        if not self.fixed_range(s) or not is_lax_loop(s):
            return None
        return _Deferred({n for n in defined if n not in body_defs})

    def defer_sum(self, out: List[Any], name: str, expr: Any, s: Any) -> bool:
        """Push the operands of ``expr``, a contribution to the cotangent of the
        loop-invariant ``name``, on the loop's lists instead of adding it now;
        False (nothing emitted) where it cannot be deferred."""
        d = self.defer
        if d is None or name not in d.invariant:
            return False
        call = _primitive_call(expr)
        if call is None:
            return False
        prim, args = call
        form = stack_sum_form(prim)
        if form is None:
            return False
        stacked, target, flags, given, join = form
        params = list(prim.signature.parameters)
        if len(args) > len(params):
            return False
        bound = dict(zip(params, args))
        for pname, value in given:
            arg = bound.get(pname)
            if not (isinstance(arg, gast.Constant) and arg.value is value):
                return False
        bars = set(self.bars.values())
        for pname, arg in bound.items():
            per_trip = isinstance(arg, gast.Name) and (arg.id in bars or arg.id not in d.invariant)
            if per_trip != (pname in stacked):
                return False
            if not isinstance(arg, (gast.Name, gast.Constant)):
                return False
        key = (id(s), name, len([x for x in d.sites if x[2] is s and x[0] == name]))
        lists = d.lists.get(key)
        if lists is None:
            lists = d.lists[key] = {p: self.namer.fresh(f"{name}_{p}_trips") for p in stacked}
        pushes = [
            self._at(
                N.expr_stmt(N.call(N.attr(N.name(lists[p]), "append"), [N.clone(bound[p])])), s
            )
            for p in stacked
        ]
        self._collect_reads(pushes)
        out.extend(pushes)
        d.sites.append((name, (target, flags, params, bound, lists, join), s))
        return True

    def deferred_sums(self, d: _Deferred, loop: Any, out: List[Any], nz: Set[str], must) -> None:
        """The lists before the reverse loop ``loop`` (in ``out``) and, after it,
        each deferred contribution computed once from the stacked lists (when
        the loop ran; zeros otherwise, for names with no cotangent yet)."""
        if not d.sites:
            return
        # the batched products' helpers (ad.bmatmul_right ...) are registered by
        # vmap's rules, imported here only for the generated code that calls them
        from ...primitives import batch_rules  # noqa: F401

        at = out.index(loop)
        made: List[str] = []
        for _, (_t, _f, _p, _b, lists, _j), s in d.sites:
            for lst in lists.values():
                if lst not in made:
                    made.append(lst)
                    out.insert(at, self._at(N.assign(lst, gast.List(elts=[], ctx=gast.Load())), s))
                    at += 1
        ran_body: List[Any] = []
        fresh: List[str] = []
        for name, (target, flags, params, bound, lists, join), s in d.sites:
            args = []
            for p in params:
                if p in lists:  # (nested: each stack is freed after its product)
                    args.append(N.call(_JOINS[join], [N.name(lists[p])]))
                elif p in bound:
                    args.append(N.clone(bound[p]))
            expr = N.call(target, args + [N.const(f) for f in flags])
            self._collect_reads([expr])
            if name in nz:
                value = self.add_cotangents(name, N.name(self.bar(name)), expr)
            else:
                value = expr
                nz.add(name)
                fresh.append(name)
            ran_body.append(self._at(N.assign(self.bar(name), value), s))
        rng = loop.iter.args[0] if _is_reversed(loop.iter) else loop.iter
        ran = gast.Compare(
            left=N.call(N.name("len"), [N.clone(rng)]), ops=[gast.Gt()], comparators=[N.const(0)]
        )
        self._collect_reads([ran])
        zeros = []
        for name in fresh:
            zeros.append(N.assign(self.bar(name), self.zero_for(name, name in must)))
            self.materialized.add(name)
        self._collect_reads(zeros)
        out.append(self._at(gast.If(test=ran, body=ran_body, orelse=zeros), loop))


#: how a ``stack_sum`` form joins the trips' operands: a new leading axis, or
#: the examples' leading axis made longer (see the module)
_JOINS = {"stack": "ad.tree_stack", "concatenate": "jnp.concatenate"}


def _primitive_call(expr: Any):
    """``(primitive, positional args)`` of a call ``ns.name(args)`` of a
    registered primitive without keywords, else None."""
    if not isinstance(expr, gast.Call) or expr.keywords:
        return None
    path = N.to_source(expr.func).strip()
    if "." not in path:
        return None
    try:
        prim = by_public(path)
    except KeyError:
        return None
    if any(isinstance(a, gast.Starred) for a in expr.args):
        return None
    return prim, list(expr.args)
