"""Comprehensions: ``[elt for x in it if c]`` becomes a loop appending to a
fresh list (``{k: v ...}`` a loop storing into a fresh dict), with loop
variables of its own; one over items known now (a static list) is unrolled into
its items (:meth:`ComprehensionsMixin._unrolled_comprehension`).
"""

from __future__ import annotations

from typing import Any, List, Optional

import gast

from ...errors import (
    UnsupportedSyntaxError,
)
from .. import nodes as N
from .anf import Op
from .common import _unsupported


def _substitute_name(node: Any, name: str, item: Any) -> Any:
    """``node`` with the loads of ``name`` replaced by copies of ``item``, except
    inside a lambda or def that binds ``name`` itself (its defaults are outside).
    A lambda's capture idiom ``lambda v, k=k: ...`` loses the parameter ``k``:
    its body reads the item (lax.switch passes the operands only)."""

    def is_capture(a, d):
        return a.id == name and isinstance(d, gast.Name) and d.id == name

    class Sub(gast.NodeTransformer):
        def visit_Name(self, n):
            if n.id == name and isinstance(n.ctx, gast.Load):
                return gast.copy_location(N.clone(item), n)
            return n

        def visit_Lambda(self, n):
            args = n.args
            first = len(args.args) - len(args.defaults)
            for k, (a, d) in enumerate(zip(args.args[first:], args.defaults)):
                if is_capture(a, d):
                    del args.args[first + k], args.defaults[k]
                    break
            n.args = self.visit(args)
            if name not in {a.id for a in n.args.args + n.args.kwonlyargs}:
                n.body = self.visit(n.body)
            return n

        def visit_FunctionDef(self, n):
            return n  # (a def in a comprehension is not an expression)

    return Sub().visit(node)


class ComprehensionsMixin:
    """The comprehension converter of :class:`Normalizer`."""

    def comprehension(self, e):
        if any(g.is_async for g in e.generators):
            raise _unsupported(e, "async comprehensions", src=self.src)
        first = e.generators[0]
        if self._is_iter_call(first.iter):  # [f(v) for v in iter(xs)]: over xs
            first.iter = first.iter.args[0]
        # a fresh result name: `xs = [2 * x for x in xs]` must read the old xs
        t = self.temp("items")
        self.namer.comprehension_results.add(t)
        # the loop variables are the comprehension's own (Python 3 scoping):
        # fresh names, so `[x * 2 for x in xs]` leaves an outer `x` alone
        fresh = {}
        for gen in e.generators:
            for node in gast.walk(gen.target):
                if isinstance(node, gast.Name):
                    fresh[node.id] = self.temp(node.id)

        def own(node):
            node = N.clone(node)
            for n in gast.walk(node):
                if isinstance(n, gast.Name) and n.id in fresh:
                    n.id = fresh[n.id]
            return node

        e = N.clone(e)
        # (the first iterable is read in the enclosing scope; each later one, as
        # the conditions, may read the earlier loop variables: `for b in a`)
        e.generators = [
            gast.comprehension(
                target=own(gen.target),
                iter=gen.iter if k == 0 else own(gen.iter),
                ifs=[own(c) for c in gen.ifs],
                is_async=gen.is_async,
            )
            for k, gen in enumerate(e.generators)
        ]
        if isinstance(e, gast.DictComp):
            e.key, e.value = own(e.key), own(e.value)
        else:
            e.elt = own(e.elt)
        if isinstance(e, gast.DictComp):
            # {k: v for ...} is a loop of d[k] = v into an empty dict
            self.emit(N.assign(t, gast.Dict(keys=[], values=[])), Op("pack", elts=[]))
            key = gast.Subscript(value=N.name(t), slice=e.key, ctx=gast.Store())
            app = gast.Assign(targets=[key], value=e.value, type_comment=None)
        else:
            self.emit(N.assign(t, gast.List(elts=[], ctx=gast.Load())), Op("pack", elts=[]))
            app = N.expr_stmt(N.call(N.attr(N.name(t), "append"), [e.elt]))
        N.copy_origin(app, e)
        body = [app]
        # `[e for a in A if c for b in B]`: loops nested in order, each one's
        # conditions around the loops inside it
        for gen in reversed(e.generators):
            for cond in reversed(gen.ifs):
                body = [gast.If(test=cond, body=body, orelse=[])]
            loop = gast.For(
                target=gen.target, iter=gen.iter, body=body, orelse=[], type_comment=None
            )
            N.copy_origin(loop, e)
            body = [loop]
        for n in N.assigned_names([loop]):
            self.locals.add(n)
        self.locals.add(t)
        self.stmt(loop)
        return N.name(t), Op("copy", elts=[N.name(t)])

    def _static_seq(self, node: Any) -> Optional[Any]:
        """The list or tuple a global/closed-over ``node`` names now, else None."""
        if not isinstance(node, (gast.Name, gast.Attribute, gast.Subscript)):
            return None
        status, obj = self.resolve(node)
        return obj if status == "found" and isinstance(obj, (list, tuple)) else None

    def _static_items(self, node: Any) -> Optional[List[Any]]:
        """Expressions for the items of a sequence known now: a display's items,
        ``range`` of constants, or ``SEQ[j]`` for a global list/tuple ``SEQ``
        (recorded as a dependency, its items too for a list)."""
        if isinstance(node, (gast.List, gast.Tuple)):
            return list(node.elts)
        if (
            isinstance(node, gast.Call)
            and self.resolve(node.func) == ("found", range)
            and not node.keywords
        ):
            try:
                bounds = [self._static_value(b) for b in node.args]
                return [N.const(v) for v in range(*bounds)]
            except (UnsupportedSyntaxError, TypeError, ValueError):
                return None
        seq = self._static_seq(node)
        if seq is None:
            return None
        self._record_dependency(node, seq)
        if isinstance(seq, list):  # changed in place: the items are compared
            self.deps.append(("items", seq, None, tuple(seq)))
        out = []
        for j in range(len(seq)):
            item = gast.Subscript(value=N.clone(node), slice=N.const(j), ctx=gast.Load())
            out.append(gast.copy_location(item, node))
        return out

    def _unrolled_comprehension(self, comp: Any) -> Optional[List[Any]]:
        """``[elt for k in items]`` over items known now: ``elt`` once per item,
        with ``k`` replaced by the item's expression (a lambda's parameter named
        ``k`` keeps its own binding; its default ``k=k`` reads the item)."""
        if len(comp.generators) != 1:
            return None
        gen = comp.generators[0]
        if gen.ifs or gen.is_async or not isinstance(gen.target, gast.Name):
            return None
        items = self._static_items(gen.iter)
        if items is None:
            return None
        name = gen.target.id
        return [_substitute_name(N.clone(comp.elt), name, item) for item in items]

    def lambdas_unrolled(self, comp: Any) -> Optional[Any]:
        """``[lambda v, j=j: v * j for j in range(3)]`` over items known now: the
        list display of its lambdas, each with its item (a list of local
        functions, called or iterated as ``[lambda ..., lambda ...]`` is). None
        when the element is no lambda or the items are not known. A lambda that
        reads the loop variable without capturing it (``lambda v: v * j``) reads
        its last value in Python (late binding): refused, with the capture as a
        hint."""
        if not isinstance(comp.elt, gast.Lambda):
            return None
        gen = comp.generators[0] if len(comp.generators) == 1 else None
        lam = comp.elt
        if gen is not None and isinstance(gen.target, gast.Name):
            name = gen.target.id
            params = {a.id for a in lam.args.args + lam.args.kwonlyargs}
            late = name not in params and any(
                isinstance(n, gast.Name) and n.id == name for n in gast.walk(lam.body)
            )
            if late:
                raise UnsupportedSyntaxError(
                    f"each lambda built here reads `{name}` when it is called, so all "
                    f"of them see its last value (Python's late binding)",
                    self.loc(lam),
                    f"capture the value as a default: lambda ..., {name}={name}: ...",
                )
        elts = self._unrolled_comprehension(comp)
        if elts is None:
            return None
        return gast.copy_location(gast.List(elts=elts, ctx=gast.Load()), comp)
