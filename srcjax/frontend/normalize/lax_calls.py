"""``lax`` control flow in user code: ``cond``, ``switch``, ``while_loop``,
``fori_loop``, ``scan`` and ``map`` (and their carries) lowered to
normalized loops and branches.
"""

from __future__ import annotations

from typing import Any, List, Optional

import gast

from ...primitives import registry
from .. import nodes as N
from .anf import Op
from .common import _bind, _fold_constant, _unsupported


def _int_bound(atom: Any) -> Any:
    """A ``fori_loop`` bound: a float constant truncated to an int, as JAX does
    with Python scalar bounds (``fori_loop(0.0, 3.0, ...)`` runs 3 times)."""
    if isinstance(atom, gast.Constant) and type(atom.value) is float:
        return N.const(int(atom.value))
    return atom


#: the positions of the function arguments of lax control flow (a factory call
#: there makes the function: ``fori_loop(0, n, make_step(dt), x)``)
_FN_ARGS = {"cond": (1, 2), "fori_loop": (2,), "while_loop": (0, 1), "scan": (0,), "map": (0,)}


class LaxCallsMixin:
    """``lax`` control flow calls of :class:`Normalizer`."""

    def lax_call(self, kind: str, e: Any, target: Optional[str]) -> tuple:
        a = list(e.args)
        kw = {k.arg: k.value for k in e.keywords}
        # function arguments made by factory calls: inlined once, here
        a = [self.factory_made(x) if i in _FN_ARGS.get(kind, ()) else x for i, x in enumerate(a)]
        if kind == "scan" and "f" in kw:
            kw["f"] = self.factory_made(kw["f"])
        t = target or self.temp(kind + "_out" if kind != "map" else "mapped")
        if kind == "cond":
            if len(a) < 3:
                raise _unsupported(e, "lax.cond with fewer than 3 arguments", src=self.src)
            pred = self.atom(a[0], base="pred", force_name=not isinstance(a[0], gast.Name))
            ops = [self.atom(o) for o in a[3:]]
            branches = []
            for fn_node in (a[1], a[2]):
                saved, self.out = self.out, []
                r = self.call_value(fn_node, ops, e)
                self.emit(N.assign(t, r), Op("copy", elts=[r]))
                branches.append(self.out)
                self.out = saved
            node = gast.If(test=N.clone(pred), body=branches[0], orelse=branches[1])
            # the output type check of the branches (JAX's TypeError): jit's
            # abstract values, vmap's mixed batches (optimize.py, batching.py)
            node.sj_lax_branches = ("cond", t, ("true_fun", "false_fun"))
            self.emit(node)
            return N.name(t), Op("copy", elts=[N.name(t)])
        if kind == "switch":
            fns = self.switch_branches(a[1]) if len(a) >= 2 else None
            fns = fns and [self.factory_made(f) for f in fns]
            if not fns:
                raise _unsupported(
                    e,
                    "lax.switch with branches that cannot be resolved when transforming "
                    "(a list display, a local bound once to one or to a list comprehension, "
                    "or a module-level list/tuple of functions)",
                    src=self.src,
                )
            idx = self.atom(a[0], base="index")
            ops = [self.atom(o) for o in a[2:]]
            k = self.temp("branch")
            # JAX's TypeError for an index of a float (bool) dtype
            chk = registry.by_public("ad.check_switch_index")
            self.emit(
                N.expr_stmt(N.call(chk.public, [N.clone(idx)])),
                Op("prim", prim=chk, bound=_bind(chk, N.clone(idx))),
            )
            # jnp.clip, not int(): under vmap the index is a batched array, and the
            # chain of `if branch == j` below then selects per example
            clip = registry.by_public("jnp.clip")
            lo, hi = N.const(0), N.const(len(fns) - 1)
            self.emit(
                N.assign(k, N.call("jnp.clip", [N.clone(idx), lo, hi])),
                Op("prim", prim=clip, bound=_bind(clip, idx, lo, hi)),
            )
            chain: List[Any] = []
            for j in range(len(fns) - 1, -1, -1):
                saved, self.out = self.out, []
                r = self.call_value(fns[j], ops, e)
                self.emit(N.assign(t, r), Op("copy", elts=[r]))
                body, self.out = self.out, saved
                if j == len(fns) - 1:
                    chain = body
                    continue
                c = self.temp("cond")
                test_stmt = N.assign(c, N.parse_expr(f"{k} == {j}"))
                test_stmt.sj_op = Op("inactive", what="comparison")
                node = gast.If(test=N.name(c), body=body, orelse=chain)
                # branch j against the rest (checked already: branch j + 1's type)
                node.sj_lax_branches = ("switch", t, (f"branch {j}", f"branch {j + 1}"))
                chain = [test_stmt, node]
            self.out.extend(chain)
            return N.name(t), Op("copy", elts=[N.name(t)])
        if kind == "fori_loop":
            # Python float bounds run as JAX runs them: truncated to ints (bug 37)
            lo, hi = (_int_bound(self.atom(b)) for b in a[:2])
            val = self.temp("val")
            init = self.atom(a[3])
            self._start_carry(val, init)
            i = self.temp("i")
            saved, self.out = self.out, []
            r = self.call_value(a[2], [N.name(i), N.name(val)], e)
            self.emit(N.assign(val, r), Op("copy", elts=[r]))
            self.check_carry("fori_loop body", init, val)
            body, self.out = self.out, saved
            loop = gast.For(
                target=N.name(i, store=True),
                iter=N.call(N.name("range"), [lo, hi]),
                body=body,
                orelse=[],
                type_comment=None,
            )
            self.emit(loop)
            return N.name(val), Op("copy", elts=[N.name(val)])
        if kind == "while_loop":
            val = self.temp("val")
            init = self.atom(a[2])
            self._start_carry(val, init)
            c = self.temp("cond")

            def test_code():
                saved, self.out = self.out, []
                r = self.call_value(a[0], [N.name(val)], e)
                self.emit(N.assign(c, r), Op("copy", elts=[r]))
                code, self.out = self.out, saved
                return code

            self.out.extend(test_code())
            saved, self.out = self.out, []
            r = self.call_value(a[1], [N.name(val)], e)
            self.emit(N.assign(val, r), Op("copy", elts=[r]))
            self.check_carry("while_loop body", init, val)
            body, self.out = self.out, saved
            body += test_code()
            self.emit(gast.While(test=N.name(c), body=body, orelse=[]))
            return N.name(val), Op("copy", elts=[N.name(val)])
        if kind in ("scan", "map"):
            return self._scan(kind, a, kw, e, t)
        raise _unsupported(e, f"lax.{kind}", src=self.src)

    def _start_carry(self, name: str, init: Any) -> None:
        """``name = init`` for a lax loop's carry, with a Python float in it made
        float32 (``ad.carry_canon``: JAX's weak float computes in float32; user
        R) where ``init`` may hold one: a constant, or a name bound to a host
        value. The loop's carry check compares with ``init`` itself (weak types
        may be promoted, as in JAX)."""
        host = isinstance(init, gast.Constant) and isinstance(init.value, (float, complex))
        host = host or (isinstance(init, gast.Name) and init.id in self.host_names)
        host = host or isinstance(init, (gast.Tuple, gast.List))
        if host:
            self._prim_into(name, "ad.carry_canon", init)
        else:
            self.emit(N.assign(name, init), Op("copy", elts=[init]))

    def check_carry(self, what: str, init: Any, carry: str) -> None:
        """JAX's TypeError when a lax loop body changes its carry's structure,
        shapes or dtypes (``ad.check_carry``, run on every pass: a while_loop whose
        body breaks the carry's type may never reach its bound)."""
        chk = registry.by_public("ad.check_carry")
        args = [N.const(what), N.clone(init), N.name(carry)]
        self.emit(
            N.expr_stmt(N.call(chk.public, args)),
            Op("prim", prim=chk, bound=_bind(chk, *[N.clone(x) for x in args])),
        )

    def _scan(self, kind, a, kw, e, t) -> tuple:
        if kind == "scan":
            f = a[0] if a else kw.get("f")
            init = a[1] if len(a) > 1 else kw.get("init")
            xs = a[2] if len(a) > 2 else kw.get("xs", N.const(None))
            length = a[3] if len(a) > 3 else kw.get("length", N.const(None))
            rev = a[4] if len(a) > 4 else kw.get("reverse", N.const(False))
        else:
            f, xs = a[0], a[1]
            init, length, rev = None, N.const(None), N.const(False)
        rev_c = _fold_constant(rev)
        if not isinstance(rev_c, gast.Constant):
            raise _unsupported(e, "a non-constant `reverse=` in lax.scan", src=self.src)
        reverse = bool(rev_c.value)
        xs_a = self.atom(xs, base="xs")
        n = self.temp("n")
        length_a = self.atom(length)
        scan_len = registry.by_public("ad.scan_length")
        self.emit(
            N.assign(n, N.call(scan_len.public, [N.clone(xs_a), length_a])),
            Op("prim", prim=scan_len, bound=_bind(scan_len, N.clone(xs_a), length_a)),
        )
        carry = None
        if kind == "scan":
            carry = self.temp("carry")
            init_a = self.atom(init)
            self._start_carry(carry, init_a)
        ys = self.temp("ys")
        self.emit(N.assign(ys, gast.List(elts=[], ctx=gast.Load())), Op("pack", elts=[]))
        k = self.temp("k")
        saved, self.out = self.out, []
        i = k
        if reverse:
            i = self.temp("i")
            self.emit(N.assign(i, N.parse_expr(f"{n} - 1 - {k}")), Op("inactive", what="index"))
        x = self.temp("x")
        if isinstance(xs_a, gast.Constant) and xs_a.value is None:
            self.emit(N.assign(x, N.const(None)), Op("copy", elts=[N.const(None)]))
        else:
            sl = registry.by_public("ad.tree_slice")
            self.emit(
                N.assign(x, N.call(sl.public, [N.clone(xs_a), N.name(i)])),
                Op("prim", prim=sl, bound=_bind(sl, N.clone(xs_a), N.name(i))),
            )
        if kind == "scan":
            r = self.call_value(f, [N.name(carry), N.name(x)], e)
            getitem = registry.by_public("ad.getitem")
            y = self.temp("y")
            for nm, j in ((carry, 0), (y, 1)):
                node = gast.Subscript(value=N.clone(r), slice=N.const(j), ctx=gast.Load())
                self.emit(
                    N.assign(nm, node),
                    Op("prim", prim=getitem, bound=_bind(getitem, N.clone(r), N.const(j))),
                )
            self.check_carry("scan body", init_a, carry)
            y_atom = N.name(y)
        else:
            y_atom = self.call_value(f, [N.name(x)], e)
        self.emit(
            N.expr_stmt(N.call(N.attr(N.name(ys), "append"), [y_atom])),
            Op("append", elts=[y_atom], target=ys),
        )
        body, self.out = self.out, saved
        loop = gast.For(
            target=N.name(k, store=True),
            iter=N.call(N.name("range"), [N.name(n)]),
            body=body,
            orelse=[],
            type_comment=None,
        )
        self.emit(loop)
        if reverse:
            getitem = registry.by_public("ad.getitem")
            rv = self.temp("ys")
            idx = gast.Slice(lower=None, upper=None, step=N.const(-1))
            self.emit(
                N.assign(rv, gast.Subscript(value=N.name(ys), slice=idx, ctx=gast.Load())),
                Op("prim", prim=getitem, bound=_bind(getitem, N.name(ys), idx)),
            )
            ys = rv
        st = registry.by_public("ad.tree_stack")
        stacked = self.temp("stacked")
        self.emit(
            N.assign(stacked, N.call(st.public, [N.name(ys)])),
            Op("prim", prim=st, bound=_bind(st, N.name(ys))),
        )
        if kind == "map":
            return N.name(stacked), Op("copy", elts=[N.name(stacked)])
        elts = [N.name(carry), N.name(stacked)]
        return gast.Tuple(elts=elts, ctx=gast.Load()), Op("pack", elts=elts)
