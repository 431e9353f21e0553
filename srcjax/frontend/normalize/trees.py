"""Pytree functions in user code: ``tree_map`` (with ``is_leaf``) and the
other ``tree_util`` functions the normalizer expands statically.
"""

from __future__ import annotations

from typing import Any, Optional

import gast

from ...errors import (
    UnsupportedSyntaxError,
)
from ...primitives import registry
from .. import nodes as N
from .anf import Op
from .common import _bind, _unsupported


class TreesMixin:
    """Pytree function calls of :class:`Normalizer`."""

    def tree_map_call(self, e: Any, target: Optional[str]) -> tuple:
        """``tree_map(f, tree, *rest)`` inside transformed code: the leaves as lists
        (``ad.tree_leaves``), a loop calling ``f`` on each (so transforms see its
        body), and the results put back in ``tree``'s structure
        (``ad.tree_unflatten_like``)."""
        is_leaf, args = self.is_leaf_option(e, None)
        if len(args) < 2:
            raise _unsupported(
                e,
                "`tree_map` without a tree inside a transformed function",
                "pass the tree (tree_map(f, tree, *rest))",
                src=self.src,
            )
        from ...primitives import tree_is_leaf  # noqa: F401  (registers ad.leaves_upto)

        trees = [self.atom(t) for t in args[1:]]
        leaves = []
        for k, t in enumerate(trees):
            if is_leaf is None and k == 0:
                nm = self._prim_into(self.temp("leaves"), "ad.tree_leaves", t)
            else:
                # JAX: the first tree's structure (is_leaf subtrees whole); the
                # others are flattened up to it, a ValueError where they differ
                # (user K: a misspelt key paired leaves by position)
                p = N.const(None) if is_leaf is None else N.clone(is_leaf)
                nm = self._prim_into(self.temp("leaves"), "ad.leaves_upto", t, trees[0], p)
            leaves.append(self._source_alias(nm.id, "leaves"))
        out = self._source_alias(None, "mapped")
        i = self._source_alias(None, "i")
        items = [
            gast.Subscript(value=N.name(lv), slice=N.name(i), ctx=gast.Load()) for lv in leaves
        ]
        call = gast.Call(func=e.args[0], args=items, keywords=[])
        loop = gast.For(
            target=N.name(i, store=True),
            iter=N.call(N.name("range"), [N.call(N.name("len"), [N.name(leaves[0])])]),
            body=[N.expr_stmt(N.call(N.attr(N.name(out), "append"), [call]))],
            orelse=[],
            type_comment=None,
        )
        init = N.assign(out, gast.List(elts=[], ctx=gast.Load()))
        for st in (init, loop):
            for node in gast.walk(st):
                if not hasattr(node, "lineno"):
                    gast.copy_location(node, e)
            self.stmt(st)
        mapped = N.name(self.var(out))
        if is_leaf is not None:
            return self._prim_node("ad.unflatten_upto", trees[0], mapped, is_leaf)
        prim = registry.by_public("ad.tree_unflatten_like")
        node = N.call(prim.public, [N.clone(trees[0]), mapped])
        return node, Op("prim", prim=prim, bound=_bind(prim, trees[0], mapped))

    def is_leaf_option(self, e: Any, position: Optional[int]) -> tuple:
        """``(is_leaf, args)`` of a tree_map/tree_leaves/tree_flatten call:
        ``is_leaf`` (keyword, or positional at ``position``) as a name bound to
        the function, or None when absent or ``None``; ``args`` the positional
        arguments before it. A lambda / nested def must read no local variable
        (it becomes a constant of the generated code and runs on the actual
        subtrees at run time); another value (a parameter) is passed as it is."""
        node = None
        for k in e.keywords:
            if k.arg != "is_leaf":
                raise _unsupported(
                    e,
                    f"`{k.arg}=` of a pytree function inside a transformed function",
                    "call it outside the transformed function",
                    src=self.src,
                )
            node = k.value
        args = list(e.args)
        if position is not None and len(args) > position:
            node = args[position]
            args = args[:position]
        if node is None or (isinstance(node, gast.Constant) and node.value is None):
            return None, args
        from ...primitives import tree_is_leaf  # noqa: F401  (registers ad.leaves_upto ...)

        lifted = self._lift(node)
        if lifted is not None:
            fobj, free = lifted
            if free:
                raise UnsupportedSyntaxError(
                    f"`is_leaf` reads local variables ({', '.join(free)}) inside a "
                    "transformed function",
                    self.loc(node),
                    "make is_leaf depend only on the node it is given (or on globals)",
                )
        else:
            status, fobj = self.resolve(node)
            if status != "found" or not callable(fobj):
                # a value (tree_reduce's own `is_leaf` parameter, None unless given):
                # passed as it is, called at run time
                atom = self.atom(node)
                if isinstance(atom, gast.Constant) and atom.value is None:
                    return None, args
                atom.sj_runtime_is_leaf = True
                return atom, args
        tmp = self.namer.fresh("is_leaf")
        self.bindings[tmp] = fobj
        return N.name(tmp), args

    def tree_function_call(self, obj: Any, e: Any) -> Optional[tuple]:
        """``tree_leaves(t, is_leaf)``, ``tree_flatten``, ``tree_structure`` and
        ``tree_unflatten`` inside transformed code (see
        :mod:`srcjax.primitives.tree_is_leaf`); None for other functions, and for
        ``tree_leaves`` without ``is_leaf`` (the primitive ``ad.tree_leaves``)."""
        from ... import tree_util

        if obj is tree_util.tree_unflatten:
            if e.keywords or len(e.args) != 2:
                return None
            from ...primitives import tree_is_leaf  # noqa: F401

            td, leaves = (self.atom(a) for a in e.args)
            return self._prim_node("ad.unflatten_upto", td, leaves, N.const(None))
        which = {
            id(tree_util.tree_leaves): "leaves",
            id(tree_util.tree_flatten): "flatten",
            id(tree_util.tree_structure): "structure",
        }.get(id(obj))
        if which is None:
            return None
        is_leaf, args = self.is_leaf_option(e, 1)
        if len(args) != 1:
            raise _unsupported(e, f"`tree_{which}` without a tree", src=self.src)
        if which == "leaves" and (is_leaf is None or getattr(is_leaf, "sj_runtime_is_leaf", 0)):
            return None  # the primitive ad.tree_leaves(tree, is_leaf)
        from ...primitives import tree_is_leaf  # noqa: F401

        t = self.atom(args[0])
        il = is_leaf if is_leaf is not None else N.const(None)
        if which == "structure":
            return self._prim_node("ad.tree_def", t, il)
        if is_leaf is None:
            leaves = self._prim_into(self.temp("leaves"), "ad.tree_leaves", t)
        else:
            leaves = self._prim_into(self.temp("leaves"), "ad.leaves_upto", t, t, N.clone(il))
        if which == "leaves":
            return leaves, Op("copy", elts=[leaves])
        td = self._prim_into(self.temp("treedef"), "ad.tree_def", t, N.clone(il))
        elts = [leaves, td]
        return gast.Tuple(elts=elts, ctx=gast.Load()), Op("pack", elts=elts)
