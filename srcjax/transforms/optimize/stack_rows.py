"""A loop's per-trip list of rows written into its stack as they are made
(:func:`rows_into_stacks`).

A scan's ``ys`` (R3's hidden states) and a reverse loop's per-trip cotangents
(the operands of the sums after it: :mod:`.trip_order`) are lists, one value
appended on every trip, stacked once after the loop: ``S = ad.tree_stack(L)``
(``ad.tree_stack_rev(L)`` after a ``reversed`` loop, in the forward trips'
order). The stack copies every row once more (R3: 50 rows of 32 x 64 float32,
~20 us a stack). Where the appended value is made on the trip by one NumPy
ufunc, the ufunc can write it into its row of the stack at once:

- ``L`` as :func:`.trip_order._loop_stacks` finds it (made empty before the
  loop ``for k in range(n)`` or ``for k in reversed(range(n))``, ``n`` a
  constant >= 1; appended once a trip at the top level of the body, used
  nowhere else; read after the loop by its stacking in the forward trips'
  order alone, whose result is bound once);
- the value ``v`` appended is bound once in the body, at its top level before
  the append, by an elementwise primitive whose result is the ufunc's of the
  same name (``jnp.tanh``, ``a * b``): operands that are names of strong
  float32 or float64 arrays of the result's dtype (the primitive's dtype rules
  then change nothing: NumPy's result is its result), the result a strong
  array of at least :data:`MIN_ROW` elements.

Then ``L = []`` goes, ``B = ad.empty_rows((n, *shape), dtype)`` is made just
before the loop, the binding
``v = ad.ufunc_into(B, k, "tanh", x)`` (``np.tanh(x, out=B[k])``; ``v`` is that
row, a view), the append goes and the stacking is ``S = B``. Each trip writes
its own row once, and nothing writes an array a name holds after it is made,
so the rows the trips' values are stay as they were made. The bits are the
ufunc's either way."""

from __future__ import annotations

from typing import Any, Optional

import gast
import numpy as np

from ...frontend import nodes as N
from ...frontend.normalize import Op
from ...primitives import registry
from .avals import Aval
from .common import _is_assign, _new_assign
from .rowmaps import _reversed_trips, _trips
from .trip_order import _as_copy, _loop_stacks
from .trips import _appended, _is_empty_list

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
#: the fewest elements of a row written in place: below ~1000 the call with
#: ``out=`` costs more than the stack's copy saves (50 trips of ``np.tanh``,
#: process time: 512 elements 30 -> 33 us, 1024 even, 2048 48 -> 46 us, 8192
#: 128 -> 96 us), and rows of at most 64 elements are the Numba scalar kernels'
#: (backends/numba_cpu/trees.py), which take a loop with its list
MIN_ROW = 1024


def rows_into_stacks(fdef: Any, namer: Any) -> bool:
    """Rewrite the lists of the module's form in the top-level loops of ``fdef``;
    returns whether anything changed (then re-infer the abstract values)."""
    if namer is None or {"range", "reversed", "np"} & set(N.assigned_names(fdef.body)):
        return False
    counts = N.store_counts(fdef)
    changed = False
    body = fdef.body
    for loop in [s for s in body if isinstance(s, gast.For)]:
        rev = _reversed_trips(loop)
        n = rev if rev is not None else _trips(loop)
        if n is None or n < 1 or loop.orelse or not isinstance(loop.target, gast.Name):
            continue
        k = loop.target.id
        if k in N.assigned_names(loop.body):
            continue
        public = "ad.tree_stack" if rev is None else "ad.tree_stack_rev"
        for lst, (value, site) in _loop_stacks(body, loop, counts, public).items():
            made = _ufunc_row(loop, lst, value)
            if made is None:
                continue
            stmt, ufunc, args = made
            aval = stmt.sj_aval
            buf = namer.fresh(f"{site.targets[0].id}_buf")
            alloc = registry.REGISTRY["ad.empty_rows"]
            shape = (n, *aval.shape)
            bound = {
                "shape": N.const(shape),
                "dtype": N.const(aval.dtype.name),
            }
            new = _new_assign(
                buf,
                N.call(alloc.public, list(bound.values())),
                Op("prim", prim=alloc, bound=bound),
                site,
            )
            new.sj_aval = Aval(shape, aval.dtype)
            # (made just before the loop: not alive while the work before it runs)
            body[:] = [t for t in body if not _is_empty_list(t, lst)]
            body.insert(body.index(loop), new)
            into = registry.REGISTRY["ad.ufunc_into"]
            bound = {"out": N.name(buf), "i": N.name(k), "name": N.const(ufunc), "args": args}
            call = N.call(
                into.public, [N.name(buf), N.name(k), N.const(ufunc), *[N.clone(a) for a in args]]
            )
            stmt.value = N.copy_origin(call, stmt.value)
            stmt.sj_op = Op("prim", prim=into, bound=bound)
            loop.body = [t for t in loop.body if (_appended(t) or ("",))[0] != lst]
            _as_copy(site, buf)
            changed = True
    return changed


def _ufunc_row(loop: Any, lst: str, value: str) -> Optional[tuple]:
    """``(statement, ufunc name, operand names)`` of the statement of ``loop``'s
    body that binds ``value``, the value appended to ``lst``, when it has the
    module's form, else None."""
    binds = [s for s in loop.body if value in N.assigned_names([s])]
    if len(binds) != 1 or any(
        value in N.assigned_names([t]) for t in N.walk_stmts(loop.body) if t not in loop.body
    ):
        return None
    s = binds[0]
    pos = loop.body.index(s)
    if not any((_appended(t) or ("",))[0] == lst for t in loop.body[pos + 1 :]):
        return None
    if not _is_assign(s) or s.sj_op.kind != "prim" or s.sj_op.prim.kind != "elementwise":
        return None
    public = s.sj_op.prim.public
    ufunc = getattr(np, public[4:], None) if public.startswith("jnp.") else None
    if not isinstance(ufunc, np.ufunc) or ufunc.nout != 1:
        return None
    e = s.value
    if isinstance(e, gast.BinOp):
        args = [e.left, e.right]
    elif isinstance(e, gast.Call) and not e.keywords:
        args = list(e.args)
    else:
        return None
    out = getattr(s, "sj_aval", None)
    if not _strong_float(out) or out.size < MIN_ROW or len(args) != ufunc.nin:
        return None
    ins = getattr(s, "sj_avals_in", None) or {}
    for a in args:
        if not isinstance(a, gast.Name) or a.id == value:
            return None
        av = ins.get(a.id)
        if not _strong_float(av) or av.dtype != out.dtype:
            return None
    return s, ufunc.__name__, args


def _strong_float(a: Any) -> bool:
    return isinstance(a, Aval) and a.ptype is None and not a.wt and a.dtype in _FLOATS
