"""The abstract value of one primitive's result, for :class:`.interp._Interp`
(which inherits these rules): shape rules for comparisons, elementwise
functions and reductions, with JAX's weak types; any other pure primitive run
on one-element (zero-stride) stand-ins of its operands (:meth:`_ResultRules.small`),
a static result where every operand is static. The rules read the
interpreter's environment through its ``aval_of``, ``static_value``,
``_unknown_count``, ``_appended_operand`` and ``receivers``."""

from __future__ import annotations

import ast
import math
import operator
from typing import Any, Callable, List

import gast
import numpy as np

from ... import dtypes
from ...frontend import nodes as N
from ...frontend.normalize import Op
from .avals import HOLE, Aval, _container_stand_in, _leaves
from .common import _SCALAR_TYPES, _UNKNOWN, _Static
from .propagate import _PY_BINOPS, _PY_CMP, _PY_UNARY, _py_binop
from .stand_ins import _array_tree, _stand_in_budget

#: Python numbers (weakly typed, but bool) as constants and stand-in results
_NUMBER_TYPES = _SCALAR_TYPES + (complex,)


#: result kinds of a weak elementwise result: (Python type, its Aval dtype)
_WEAK_KINDS = {
    "f": (float, np.dtype(np.float64)),
    "i": (int, np.dtype(np.int64)),
    "c": (complex, np.dtype(np.complex128)),
}
_WEAK_KINDS_PTYPES = (int, float, complex)


def _weak_type(operands: List[Aval]) -> bool:
    """JAX's weak type of an elementwise result of ``operands`` (the rule eager
    calls use: :func:`srcjax.dtypes.weak_promotion`)."""
    try:
        return dtypes.weak_promotion(
            [(a.ptype if a.ptype is not None else a.dtype, a.weak_type) for a in operands]
        )[1]
    except (TypeError, ValueError, KeyError):
        return False


_PY_BINOPS_ALL = dict(_PY_BINOPS)
_PY_BINOPS_ALL.update(
    {
        gast.MatMult: operator.matmul,
        gast.BitAnd: operator.and_,
        gast.BitOr: operator.or_,
        gast.BitXor: operator.xor,
        gast.LShift: operator.lshift,
        gast.RShift: operator.rshift,
    }
)
_PY_UNARY_ALL = dict(_PY_UNARY)
_PY_UNARY_ALL.update({gast.Invert: operator.invert, gast.Not: operator.not_})


class _ResultRules:
    """The per-kind result rules of :class:`.interp._Interp` (a mixin)."""

    def _operands(self, op: Op, env, make) -> tuple:
        """(args, kwargs) for calling the impl with stand-ins from ``make(aval)``."""
        sig = op.prim.signature
        args, kwargs = [], {}
        skipped = False
        for pname, p in sig.parameters.items():
            if pname not in op.bound:
                skipped = skipped or p.kind != p.VAR_POSITIONAL
                continue
            v = op.bound[pname]
            vals = [self._stand_in(x, env, make) for x in (v if isinstance(v, list) else [v])]
            if p.kind == p.VAR_POSITIONAL:
                args.extend(vals)
            elif p.kind == p.KEYWORD_ONLY:
                kwargs[pname] = vals[0]
            elif p.kind == p.VAR_KEYWORD:
                raise ValueError("**kwargs")
            elif kwargs or skipped:  # after a default: by keyword
                kwargs[pname] = vals[0]
            else:
                args.append(vals[0])
        return args, kwargs

    def _global_function(self, node: Any, env) -> Any:
        """The function a global name holds (``lax.max`` given to a window plan), else None."""
        if not isinstance(node, gast.Name):
            return None
        f = self.static_value(node, env, any_value=True)
        return f if callable(f) and not isinstance(f, type) else None

    def _stand_in(self, node: Any, env, make) -> Any:
        if isinstance(node, gast.Name):
            a = self.aval_of(node, env)
            if not isinstance(a, Aval):
                v = self.static_value(node, env)
                if v is _UNKNOWN:
                    f = self._global_function(node, env)
                    return _container_stand_in(a, make) if f is None else f
                return v
            return make(a)
        if isinstance(node, gast.Constant):
            return node.value
        if isinstance(node, gast.Attribute):
            v = self.static_value(node, env)
            if v is not _UNKNOWN:
                return v
        if isinstance(node, gast.Slice):  # an index: x[1:], x[::2]
            parts = (node.lower, node.upper, node.step)
            return slice(*[None if p is None else self._stand_in(p, env, make) for p in parts])
        if isinstance(node, gast.Tuple):  # x[:, None], x[i, 0]
            return tuple(self._stand_in(e, env, make) for e in node.elts)
        if (
            isinstance(node, gast.Call)
            and not node.keywords
            and self.static_value(node.func, env, any_value=True) is slice
        ):  # (the index of ``x.at[1:].add(v)``: ``ad.at_add(x, slice(1, None, None), v)``)
            return slice(*[self._stand_in(a, env, make) for a in node.args])
        return ast.literal_eval(N.to_source(node))

    def compare(self, s: Any, env) -> Any:
        """A comparison ``a < b``: bool of the operands' broadcast shape."""
        e = s.value
        if len(e.ops) != 1 or type(e.ops[0]) not in _PY_CMP:
            return None
        operands = []
        for x in (e.left, e.comparators[0]):
            a = self.aval_of(x, env)
            if not isinstance(a, Aval):
                return None
            operands.append(a)
        r = self._eval_form(s, env)
        weak = _weak_type(operands)
        if isinstance(r, _NUMBER_TYPES):
            if not all(a.weak for a in operands):
                return None
            a = Aval.of(r)
            a.wt = weak  # (a comparison of weak Python scalars: JAX's weak bool)
            return a
        shape = np.broadcast_shapes(*[a.shape for a in operands])
        return Aval(shape, np.asarray(r).dtype, wt=weak)

    def elementwise(self, s: Any, env) -> Any:
        op = s.sj_op
        operands = []
        known = unknown = 0  # operands that are Python numbers known now / not
        for v in op.bound.values():
            for x in v if isinstance(v, list) else [v]:
                if isinstance(x, gast.Name):
                    a = self.aval_of(x, env)
                    if isinstance(a, _Static) and type(a.value) in _NUMBER_TYPES:
                        a = Aval.of(a.value)  # (a known number by an array: n * log(x))
                        known += 1
                    elif isinstance(a, Aval):
                        unknown += 1
                    else:
                        return None
                    operands.append(a)
                elif isinstance(x, gast.Constant) and type(x.value) in _NUMBER_TYPES:
                    operands.append(Aval.of(x.value))  # (y * 2.5: weak float32)
        if known and not unknown:
            return None  # (numbers known now only: static, see small)
        shape = np.broadcast_shapes(*[a.shape for a in operands]) if operands else ()
        r = self._eval_form(s, env)
        if type(r) in _NUMBER_TYPES:  # (not np.float64: int32 scalar * 3.5 is weak)
            return Aval.of(r) if not shape else None
        dt = np.asarray(r).dtype
        if (
            not shape
            and operands
            and op.prim.weak_result
            and dt.kind in _WEAK_KINDS
            and all(a.ptype in _WEAK_KINDS_PTYPES for a in operands)
        ):
            # a function of weak scalars only is weak (JAX; jnp.sin(1.0) is weak
            # float32; a Python bool is strong): held as a NumPy scalar at run
            # time (promote's `boxed`)
            return Aval((), _WEAK_KINDS[dt.kind][1], _WEAK_KINDS[dt.kind][0])
        # any other weakly typed result (2.5 * int32_array): a weak array
        # (dt is NumPy's, which may be wider than JAX's until promote casts)
        weak = (
            op.prim.weak_result
            and dtypes.can_be_weak(dtypes.canonicalize_dtype(dt))
            and _weak_type(operands)
        )
        return Aval(shape, dt, wt=bool(operands) and weak)

    def _eval_form(self, s: Any, env, make: Callable = Aval.proxy, exact: bool = False) -> Any:
        """Evaluate the statement's expression on one-element stand-ins, in the
        form it is written (a Python operator runs NumPy's operator; a call runs
        the primitive's implementation), so dtypes are what the code computes.
        ``exact``: every operand is a static value, no stand-in (see _py_binop)."""
        e = s.value
        if isinstance(e, gast.BinOp) and type(e.op) in _PY_BINOPS_ALL:
            ab = [self._stand_in(v, env, make) for v in (e.left, e.right)]
            return _py_binop(_PY_BINOPS_ALL[type(e.op)], *ab, exact=exact)
        if isinstance(e, gast.UnaryOp) and type(e.op) in _PY_UNARY_ALL:
            return _PY_UNARY_ALL[type(e.op)](self._stand_in(e.operand, env, make))
        if isinstance(e, gast.Compare) and len(e.ops) == 1 and type(e.ops[0]) in _PY_CMP:
            return _PY_CMP[type(e.ops[0])](
                self._stand_in(e.left, env, make), self._stand_in(e.comparators[0], env, make)
            )
        args, kwargs = self._operands(s.sj_op, env, make)
        return s.sj_op.prim.impl(*args, **kwargs)

    def reduction(self, s: Any, env) -> Any:
        op = s.sj_op
        x = self.aval_of(op.bound.get("x", op.bound.get("a")), env)
        if isinstance(x, Aval) and "y" in op.bound:  # (ad.sum_of_products: x * y summed)
            y = self.aval_of(op.bound["y"], env)
            if not isinstance(y, Aval):
                return None
            try:
                x = Aval(np.broadcast_shapes(x.shape, y.shape), x.dtype)
            except ValueError:
                return None
        if not isinstance(x, Aval) or set(op.bound) - {"x", "y", "a", "axis", "keepdims"}:
            return None
        axis_node = op.bound.get("axis")
        keep_node = op.bound.get("keepdims")
        if any(n is not None and self._unknown_count(n, env) for n in (axis_node, keep_node)):
            return None  # an axis from a loop counter
        axis = None if axis_node is None else self._stand_in(axis_node, env, Aval.proxy)
        keep = False if keep_node is None else self._stand_in(keep_node, env, Aval.proxy)
        nd = len(x.shape)
        if axis is None:
            axes = tuple(range(nd))
        else:
            axes = tuple(a % nd for a in (axis if isinstance(axis, tuple) else (axis,)))
        shape = tuple(
            (1 if i in axes else d) for i, d in enumerate(x.shape) if keep or i not in axes
        )
        args, kwargs = self._operands(op, env, lambda a: np.ones((2,) * len(a.shape), a.dtype))
        r = op.prim.impl(*args, **kwargs)
        if np.ndim(r) != len(shape):
            # not a reduction of those axes: a scan of the reduction kind (cumsum
            # keeps x's shape; its aval was x's without the axis: a jitted
            # ``jnp.ndim(jnp.cumsum(x, axis=1))`` was 1 for a matrix)
            return None
        return Aval(shape, np.asarray(r).dtype)

    def _keeps_weak(self, op: Op, r: Any, env) -> bool:
        """Whether the result ``r`` of a function that moves or copies elements
        is weakly typed, as JAX's: ``keeps_weak`` primitives (``jnp.reshape``,
        ``jnp.zeros_like``) by the weak rule over their operands, an item
        ``x[idx]`` and a helper that returns its ``identity_operand`` rearranged
        (ad.expand_to_rank's ``x``) as that operand."""
        prim = op.prim
        if prim.weak_from is not None:  # (jnp.full's fill_value; a dtype makes it strong)
            dt = op.bound.get("dtype")
            if dt is not None and not (isinstance(dt, gast.Constant) and dt.value is None):
                return False
            names = [op.bound.get(prim.weak_from)]
        elif prim.weak_items is not None:  # (jnp.stack([a, b]): the items' rule)
            dt = op.bound.get("dtype")
            if dt is not None and not (isinstance(dt, gast.Constant) and dt.value is None):
                return False
            seq = op.bound.get(prim.weak_items)
            seq = self.aval_of(seq, env) if isinstance(seq, gast.AST) else None
            if not isinstance(seq, (list, tuple)) or not seq:
                return False
            avals = list(seq)
            if not all(isinstance(a, Aval) for a in avals):
                return False
            return dtypes.can_be_weak(dtypes.canonicalize_dtype(r.dtype)) and _weak_type(avals)
        elif prim.keeps_weak:
            static = prim.static_params
            names = [x for p, x in op.bound.items() if p not in static]
        elif prim.part == "item":
            names = [op.bound.get("x")]
        elif prim.identity_operand is not None:
            names = [op.bound.get(prim.identity_operand)]
        else:
            return False
        avals = [self.aval_of(x, env) if isinstance(x, gast.AST) else None for x in names]
        if prim.weak_from is not None and isinstance(avals[0], _Static):
            avals = [Aval.of(avals[0].value)]  # (a Python number known now: weak)
        if not avals or not all(isinstance(a, Aval) for a in avals):
            return False
        if not prim.keeps_weak:  # (the operand itself, its dtype unchanged)
            return avals[0].weak_type and avals[0].dtype == r.dtype
        return dtypes.can_be_weak(dtypes.canonicalize_dtype(r.dtype)) and _weak_type(avals)

    def _weak_leaves(self, op: Op, tree: Any, env) -> Any:
        """``tree`` (abstract values of a result) with the leaves weak that are
        weak in every operand ``op.prim.weak_leaves_from`` names (vmap's
        ``ad.batch_broadcast(0, n)``: a weak int32 array, as JAX batches the
        weak constant; ``ad.select`` of two weak values)."""
        ins = [op.bound.get(n) for n in op.prim.weak_leaves_from]
        ins = [self.aval_of(x, env) if isinstance(x, gast.AST) else None for x in ins]

        def mark(out: Any, ins: list) -> Any:
            if isinstance(out, Aval):
                weak = all(isinstance(a, Aval) and a.weak_type for a in ins)
                if weak and dtypes.can_be_weak(dtypes.canonicalize_dtype(out.dtype)):
                    return Aval(out.shape, out.dtype, wt=True)
                return out
            if isinstance(out, dict):
                subs = {k: [a.get(k) if isinstance(a, dict) else None for a in ins] for k in out}
                return {k: mark(v, subs[k]) for k, v in out.items()}
            if type(out) is tuple:
                n = len(out)
                subs = [
                    [a[i] if isinstance(a, tuple) and len(a) == n else None for a in ins]
                    for i in range(n)
                ]
                return tuple(mark(v, sub) for v, sub in zip(out, subs))
            return out

        return mark(tree, ins)

    def _unknown_number_operand(self, op: Any, env) -> bool:
        """Whether, for a primitive that names the operands it reads for their
        shapes (``shape_only``), another operand (an option) is not known now: an
        array or a Python number passed in, whose stand-in's value is no option
        of the call (ad.dof_scale's ``ddof`` given as an argument)."""
        if not op.prim.shape_only:
            return False
        for pname, v in op.bound.items():
            if pname in op.prim.shape_only:
                continue
            for x in v if isinstance(v, list) else [v]:
                if isinstance(x, gast.Name) and isinstance(self.aval_of(x, env), Aval):
                    return True
        return False

    def small(self, s: Any, env) -> Any:
        """Any pure primitive on small operands: run it on zero-stride stand-ins
        (ones; zeros where ones fail, e.g. an index into an axis of length 1).
        A result that is a Python value (``ndim - 1``) is static when every
        operand is. Shapes that depend on values (boolean masks, ``nonzero``
        without ``size=``) are left unknown."""
        op = s.sj_op
        total = 0
        static = True
        for pname, v in op.bound.items():
            for x in v if isinstance(v, list) else [v]:
                index = (
                    (op.prim.part == "item" and pname == "idx")
                    or (op.prim.row_operands and pname == op.prim.row_operands[1])
                    or pname == op.prim.weak_from  # (jnp.full(3, n): n's value is no shape)
                )
                if (
                    isinstance(x, gast.AST)
                    and not (index and isinstance(x, gast.Name))
                    and self._unknown_count(x, env)
                ):
                    return None  # (one integer index x[i] keeps its shape whatever i is)
                dt = self.static_value(x, env) if isinstance(x, gast.Name) else None
                if isinstance(dt, (type, np.dtype)):
                    continue  # (jnp.ones(shape, bool): a dtype name, known now)
                if op.prim.static_result and self._global_function(x, env) is not None:
                    continue  # (ad.window_kind(lax.max): the function, passed as it is)
                for a in _leaves(self.aval_of(x, env)) if isinstance(x, gast.Name) else ():
                    if a is HOLE:
                        continue
                    if isinstance(a, _Static):
                        if isinstance(a.value, tuple) and all(type(d) is int for d in a.value):
                            total += math.prod(a.value)  # a shape argument
                        continue
                    if not isinstance(a, Aval):
                        return None
                    static = False
                    if a.dtype == np.bool_ and op.prim.part == "item" and pname == "idx":
                        return None  # x[mask] (a mask's own items, mask[None], are known)
                    total += a.size
        if total > _stand_in_budget(op.prim):
            return None  # (the helpers of generated code: products, sums; cheap on stand-ins)
        if op.prim.value_shaped and "size" not in op.bound:
            return None

        def run(fill):
            def make(a: Aval):
                if a.weak:
                    return a.ptype(fill)
                return np.broadcast_to(np.full((), fill, a.dtype), a.shape)

            if not isinstance(s.value, gast.Call):
                return self._eval_form(s, env, make, exact=static)
            args, kwargs = self._operands(op, env, make)
            return op.prim.impl(*args, **kwargs)

        try:
            r = run(1)
        except Exception:  # noqa: BLE001 - try zeros
            if static:  # (the values themselves raise, x.shape[0] // 0: unknown here,
                return None  # and the code raises when it runs, as Python does)
            r = run(0)
        if isinstance(r, (np.ndarray, np.generic)):
            wt = self._keeps_weak(op, r, env)
            if op.prim.weak_leaves_from and not wt:
                return self._weak_leaves(op, Aval(np.shape(r), r.dtype), env)
            return Aval(np.shape(r), r.dtype, wt=wt)
        if type(r) in (int, float) and not static and op.prim.identity_operand is not None:
            a = self.aval_of(op.bound.get(op.prim.identity_operand), env)
            if isinstance(a, Aval) and a.ptype is type(r):
                return a  # a helper handing its weak operand back (ad.broadcast_like)
        if (
            type(r) is list
            and not static
            and isinstance(s, gast.Assign)
            and s.targets[0].id not in self.receivers
        ):
            # a list result no method is ever called on (``ad.unstack_like``: the
            # cotangent of a stacked list, read by ``ad.part``): a fixed list
            items = [HOLE if v is None else _array_tree(v) for v in r]
            if r and all(v is not None for v in items):
                return items
        if (op.prim.pure or op.prim.weak_leaves_from) and type(r) in (dict, tuple) and not static:
            tree = _array_tree(r)  # a helper's dict or tuple of arrays (never a list:
            if tree is not None:  # generated code appends to lists)
                return self._weak_leaves(op, tree, env) if op.prim.weak_leaves_from else tree
        if static and type(r) in (int, float, bool, tuple) and isinstance(s.value, gast.BinOp):
            # shape arithmetic: ndim - 1, and Python's own on it: 0.5 * n (user8 p04's
            # 0.5 * x.shape[0] * log(2 pi) left its loss, hence its seed, unknown)
            return _Static(r)
        if static and op.prim.static_for_constants and type(r) in (int, bool, tuple, str):
            return _Static(r)  # axes from ranks: ad.batch_axis(None, 2)
        if (
            op.prim.from_shapes
            and (type(r) in (int, float, bool, tuple, str) or r is None)
            and not self._appended_operand(op, env)
            and not self._unknown_number_operand(op, env)
        ):
            # from shapes, dtypes and options only: ad.mean_scale's 1 / n,
            # ad.conv_dtype's None (keep the operands' dtypes; p03's CNN step ran
            # every conv plan on each call behind its unknown branch)
            return _Static(r)
        if static and op.prim.pure and type(r) in (int, float, bool):
            return _Static(r)  # a helper of static values: ad.expand_to_rank(0.005, 1)
        if static and op.prim.static_result and (r is None or type(r) in (int, bool, tuple, str)):
            # options only (ad.window_kind(lax.max): its function operand is
            # passed as it is), decided now: the branches on it fold
            return _Static(r)
        return None
