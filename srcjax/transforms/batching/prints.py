"""``print`` and ``debug.print`` on batched values: one line per example for
``debug.print`` (as JAX), masked to the examples running a per-example
branch, and the loops over examples they print in."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import gast

from ...frontend import nodes as N
from ...frontend.normalize import Op
from ...primitives.hooks import PER_EXAMPLE_PRINTS


class _Prints:
    """Print statements under vmap (a mixin of :class:`~.batcher.Batcher`)."""

    def _callee(self, func: Any) -> Any:
        """The object a call's ``func`` (a name or a dotted attribute) names, or None."""
        import builtins

        parts = []
        while isinstance(func, gast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, gast.Name):
            return None
        src = self.norm.src
        name = func.id
        if name in self.bindings:
            obj = self.bindings[name]
        elif name in src.closure:
            try:
                obj = src.closure[name].cell_contents
            except ValueError:
                return None
        elif name in src.globals:
            obj = src.globals[name]
        else:
            obj = getattr(builtins, name, None)
        for a in reversed(parts):
            obj = getattr(obj, a, None)
        return obj

    def print_stmt(self, s: Any, op: Optional[Op]) -> Optional[List[Any]]:
        """``print(...)`` / ``srcjax.debug.print(...)`` on batched values (or inside
        a per-example branch): ``ad.print_examples``, which prints one line per
        running example for ``debug.print`` (as JAX) and masks the examples not
        running in ``print``'s arrays."""
        import builtins

        value = s.value
        if (
            op is not None
            and op.kind == "prim"
            and op.prim.prints_per_example
            and isinstance(value, gast.Call)
        ):
            return self.print_rows(s, value)
        if op is None or op.kind != "inactive" or not isinstance(value, gast.Call):
            return None
        if any(isinstance(a, gast.Starred) for a in value.args) or any(
            k.arg is None for k in value.keywords
        ):
            return None
        fn = self._callee(value.func)
        per_example = any(fn is p for p in PER_EXAMPLE_PRINTS)  # (fn: any object)
        if fn is not builtins.print and not per_example:
            return None
        operands = list(value.args) + [k.value for k in value.keywords]
        batched = [self.is_batched(a) for a in operands]
        if not any(batched) and not (per_example and self.example_masks):
            return None
        masks = gast.Tuple(elts=[N.clone(m) for m, _ in self.example_masks], ctx=gast.Load())
        pols = gast.Tuple(elts=[N.const(p) for _, p in self.example_masks], ctx=gast.Load())
        flags = gast.Tuple(elts=[N.const(b) for b in batched], ctx=gast.Load())
        args = gast.Tuple(elts=list(value.args), ctx=gast.Load())
        kws = gast.Dict(
            keys=[N.const(k.arg) for k in value.keywords],
            values=[k.value for k in value.keywords],
        )
        call = N.call("ad.print_examples", [value.func, masks, pols, flags, args, kws])
        return [self.at(gast.Expr(value=call), s)]

    def print_rows(self, s: Any, value: Any) -> Optional[List[Any]]:
        """``ad.print_examples(...)`` of an inner vmap, batched again: a loop over
        this pass's examples, each printing its own rows, skipping the examples
        that do not run the call here (this pass's per-example branches)."""
        batched_names = sorted(n for n in N.names_in(value) if n in self.bat)
        mask_names = [n for m, _ in self.example_masks for n in N.names_in(m)]
        if not batched_names and not self.example_masks:
            return None
        i = self.namer.fresh("row")
        names = set(batched_names) | {n for n in mask_names if n in self.bat}
        body, renamed = self._example_rows(names, i)
        call = gast.Expr(value=renamed(value))
        tests = []
        for m, pol in self.example_masks:
            m = renamed(m)
            tests.append(m if pol else gast.UnaryOp(op=gast.Not(), operand=m))
        if tests:
            test = tests[0] if len(tests) == 1 else gast.BoolOp(op=gast.And(), values=tests)
            body.append(gast.If(test=test, body=[call], orelse=[]))
        else:
            body.append(call)
        return [self._example_loop(i, body, s, "printing: one pass per example")]

    def _example_rows(self, names: Any, i: str) -> Tuple[List[Any], Callable[[Any], Any]]:
        """For a loop over the examples with index ``i``: statements binding each
        batched name in ``names`` to its row (``ad.tree_row``, which also takes
        containers), and a function renaming those names in a copy of a node."""
        renames: Dict[str, str] = {}
        body: List[Any] = []
        for n in sorted(names):
            r = self.namer.fresh(n + "_row")
            renames[n] = r
            body.append(N.assign(r, N.call("ad.tree_row", [N.name(n), N.name(i)])))

        def renamed(node: Any) -> Any:
            node = N.clone(node)
            for sub in gast.walk(node):
                if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Load):
                    sub.id = renames.get(sub.id, sub.id)
            return node

        return body, renamed

    def _example_loop(self, i: str, body: List[Any], s: Any, note: str) -> Any:
        """``for i in range(batch): body``, at ``s``'s origin, with ``note``."""
        loop = gast.For(
            target=N.name(i, store=True),
            iter=N.call(N.name("range"), [N.name(self.size_name)]),
            body=body,
            orelse=[],
            type_comment=None,
        )
        self.at(loop, s)
        loop.sj_note = note
        return loop
