"""Abstract interpretation of a normalized body: :func:`infer_avals` annotates
each assignment with its result's abstract value (``sj_aval``), by shape rules
for the common kinds and by running primitives on one-element stand-ins."""

from __future__ import annotations

import ast
import contextlib
import math
import operator
import warnings
from typing import Any, Callable, Dict, List, Optional

import gast
import numpy as np

from ... import dtypes
from ...frontend import nodes as N
from ...frontend.normalize import Op
from .avals import (
    HOLE,
    Aval,
    ClassAval,
    _container_stand_in,
    _describe_aval,
    _leaves,
    _merge,
    _merge_env,
    check_branch_avals,
    check_pred,
)
from .carry_checks import _is_carry_check
from .common import (
    _ARRAY_ATTRS,
    _EVAL_KINDS,
    _SCALAR_TYPES,
    _UNKNOWN,
    PURE_KINDS,
    _assigned,
    _is_assign,
    _Static,
    list_receivers,
)
from .loop_facts import _runs, _tape_list, _tape_restores, grown_lists
from .propagate import _PY_BINOPS, _PY_CMP, _PY_UNARY, _py_binop
from .stand_ins import _array_tree, _arrays_only, _stand_in_budget, _zeros_stand_in, ruled_aval

#: Python numbers (weakly typed, but bool) as constants and stand-in results
_NUMBER_TYPES = _SCALAR_TYPES + (complex,)


class _Interp:
    def __init__(self, resolve: Callable[[str], Any], locals_: set) -> None:
        self.resolve = resolve
        self.locals = locals_
        self.receivers: set = set()  # names some method is called on (l.append)
        self.restores: Dict[str, Any] = {}  # x = tape.pop(): see _tape_restores
        self.tapes: set = set()
        self.unsure = 0  # > 0 inside a loop whose abstract values did not converge
        self.trial = 0  # > 0 in a loop's passes before its abstract values settle

    def aval_of(self, node: Any, env: Dict[str, Any]) -> Any:
        if isinstance(node, gast.Name):
            if node.id in env:
                return env[node.id]
            if node.id in self.locals:
                return None
            try:
                v = self.resolve(node.id)
            except Exception:  # noqa: BLE001 - unknown global: no information
                return None
            if isinstance(v, (_NUMBER_TYPES, np.generic)):
                return Aval.of(v)
            return getattr(self.resolve, "array_avals", {}).get(node.id)  # (global arrays)
        if isinstance(node, gast.Constant):
            return Aval.of(node.value) if isinstance(node.value, _NUMBER_TYPES) else None
        return None

    def block(self, stmts: List[Any], env: Dict[str, Any]) -> Dict[str, Any]:
        for s in stmts:
            env = self.stmt(s, env)
        return env

    def stmt(self, s: Any, env: Dict[str, Any]) -> Dict[str, Any]:
        if isinstance(s, gast.If):
            a = self.block(s.body, dict(env))
            b = self.block(s.orelse, dict(env))
            if isinstance(s.test, gast.Constant) and not getattr(s, "sj_lax_branches", None):
                return b if not s.test.value else a  # `if False:` (b = None kept known)
            lax_branches = getattr(s, "sj_lax_branches", None)
            if lax_branches is not None and not self.trial and not self.unsure:
                what, t, names = lax_branches
                try:
                    if what == "cond":
                        check_pred(self.aval_of(s.test, env))
                    check_branch_avals(what, names, a.get(t), b.get(t))  # JAX's TypeError
                except TypeError as e:  # located at the user's lax.cond / switch (user Y)
                    from ...errors import Location, TransformTypeError

                    raise TransformTypeError(str(e), Location.of(s)) from None
            return _merge_env(a, b)
        if isinstance(s, (gast.While, gast.For)):
            names = _assigned(s)
            cur = dict(env)
            if isinstance(s, gast.For):
                for k in N.assigned_names([gast.Expr(value=s.target)]):
                    cur[k] = None
                item = self.loop_item(s, env)
                if item is not None:
                    cur[s.target.id] = item
            converged = False
            for _ in range(4):
                self.trial += 1
                try:
                    out = self.block(s.body, dict(cur))
                finally:
                    self.trial -= 1
                new = dict(cur)
                for k in names:
                    new[k] = _merge(cur[k], out.get(k)) if k in cur else None
                if isinstance(s, gast.For):
                    for k in N.assigned_names([gast.Expr(value=s.target)]):
                        new[k] = None
                    if item is not None:
                        new[s.target.id] = item
                if repr(sorted(new.items())) == repr(sorted(cur.items())):
                    converged = True
                    break
                cur = new
            self.unsure += not converged
            try:
                last = self.block(s.body, dict(cur))  # final pass: annotations under loop facts
            finally:
                self.unsure -= not converged
            if converged and _runs(s, lambda n: self.aval_of(N.name(n), env)):
                # a loop that surely runs a trip: after it, a name it assigns
                # holds what the last trip left (the value before the loop, such
                # as grad's forward declaration `x = None`, is not merged in)
                after = dict(cur)
                for k in names:
                    after[k] = last.get(k)
                cur = after
            if converged and not self.unsure and isinstance(s, gast.For):
                cur = grown_lists(s, env, last, cur, self.locals)
            return cur
        if _is_carry_check(s):
            # the carries it compares, for drop_carry_checks
            s.sj_avals_in = {n: self.aval_of(N.name(n), env) for n in N.names_in(s.value)}
            s.sj_avals_sure = not self.unsure
            return env
        if isinstance(s, gast.Assign):
            env = dict(env)
            val = None
            if _is_assign(s):
                s.sj_avals_in = {n: self.aval_of(N.name(n), env) for n in N.names_in(s.value)}
                try:
                    t = s.targets[0].id
                    if t in self.restores and _tape_list(s.value, "pop", 0) in self.tapes:
                        val = self.restores[t]
                    else:
                        with warnings.catch_warnings(), np.errstate(all="ignore"):
                            warnings.simplefilter("ignore")
                            val = self.value(s, env)
                except Exception as e:  # noqa: BLE001 - no information
                    if getattr(e, "srcjax_user_error", False):
                        raise  # (the user's code is wrong for these arguments)
                    val = None
                s.sj_aval = val
                s.sj_sure = not self.unsure  # (a loop whose facts converged)
            for k in _assigned(s):
                env[k] = None
            if _is_assign(s):
                env[s.targets[0].id] = val
            return env
        env = dict(env)
        for k in _assigned(s):
            env[k] = None
        return env

    def loop_item(self, s: Any, env: Dict[str, Any]) -> Any:
        """The abstract value of a ``for`` loop's target (a plain name): a weak
        int over ``range(...)`` (or ``reversed`` of it), a row of an array, or the merge of a list's
        items; None when unknown."""
        if not isinstance(s.target, gast.Name):
            return None
        it = s.iter
        if (
            isinstance(it, gast.Call)
            and isinstance(it.func, gast.Name)
            and it.func.id == "reversed"
            and it.func.id not in env
            and it.func.id not in self.locals
            and len(it.args) == 1
        ):
            it = it.args[0]  # (a reverse sweep's reversed(range(n)): the same ints)
        if (
            isinstance(it, gast.Call)
            and isinstance(it.func, gast.Name)
            and it.func.id == "range"
            and it.func.id not in env
            and it.func.id not in self.locals
        ):
            return Aval((), np.int64, int)
        a = self.aval_of(it, env)
        if isinstance(a, Aval) and a.shape and not a.weak:
            return Aval(a.shape[1:], a.dtype)
        if isinstance(a, _Static) and isinstance(a.value, tuple):
            vals = {type(v) for v in a.value}
            return Aval((), np.int64, int) if vals == {int} else None
        if isinstance(a, (list, tuple)) and a:
            out = a[0]
            for x in a[1:]:
                out = _merge(out, x)
            return out
        return None

    # -- one assignment ------------------------------------------------------------
    def value(self, s: Any, env: Dict[str, Any]) -> Any:
        op = s.sj_op
        if op.kind == "copy":
            if isinstance(s.value, gast.Tuple):  # axes or a shape: `axis = (1,)`
                try:
                    return _Static(ast.literal_eval(N.to_source(s.value)))
                except (ValueError, SyntaxError):
                    return None
            if isinstance(s.value, gast.Constant) and type(s.value.value) is str:
                return _Static(s.value.value)  # an einsum spec known now
            return self.aval_of(s.value, env) if N.is_atom(s.value) else None
        if op.kind == "pack":
            if isinstance(s.value, gast.Tuple) and all(
                isinstance(e, gast.Constant) and type(e.value) is int for e in s.value.elts
            ):
                # a shape made of constants (`(n, HIDDEN)` once n and the module
                # global are known): static, as the copy of a tuple constant is
                return _Static(tuple(e.value for e in s.value.elts))
            if isinstance(s.value, (gast.Tuple, gast.List)):
                items = [self.aval_of(e, env) for e in s.value.elts]
                return tuple(items) if isinstance(s.value, gast.Tuple) else list(items)
            if isinstance(s.value, gast.Dict) and all(
                isinstance(k, gast.Constant) for k in s.value.keys
            ):
                return {k.value: self.aval_of(v, env) for k, v in zip(s.value.keys, s.value.values)}
            return None
        if op.kind == "pop" and isinstance(s.value, gast.Call) and len(s.value.args) == 2:
            # ad.pop_like(lst, like): an item of the list, or zeros like ``like``
            # once it is empty: known when those all have one abstract value
            items = self.aval_of(s.value.args[0], env)
            like = self.aval_of(s.value.args[1], env)
            if (
                N.to_source(s.value.func).strip() == "ad.pop_like"
                and isinstance(like, Aval)
                and type(items) is list
                and items
                and all(isinstance(a, Aval) and a == like for a in items)
            ):
                return like
            return None
        if op.kind == "inactive" and isinstance(s.value, gast.Compare):
            return self.compare(s, env)
        if op.kind in ("inactive", "unknown") and isinstance(s.value, gast.Call):
            return self.host_call(s.value, env)  # np.sqrt(8): run now, as JAX's trace does
        if op.kind == "inactive" and isinstance(s.value, gast.Attribute):
            base = self.aval_of(s.value.value, env)
            if isinstance(base, Aval) and not base.weak and s.value.attr in _ARRAY_ATTRS:
                return _Static(_ARRAY_ATTRS[s.value.attr](base))  # t = x.shape
            v = self.static_value(s.value, env)  # t = np.int32
            return None if v is _UNKNOWN else _Static(v)
        if op.kind != "prim":
            return None
        prim = op.prim
        if prim.trip_count and all(
            (isinstance(v, gast.Name) and _arrays_only(self.aval_of(v, env)))
            or (isinstance(v, gast.Constant) and v.value is None)
            for v in op.bound.values()
        ):
            # ad.scan_length(xs, None): the leading size of xs's leaves (never a
            # list's length: lists appended to keep their display's abstract value)
            try:
                args, kwargs = self._operands(op, env, _zeros_stand_in)
                r = prim.impl(*args, **kwargs)
            except Exception:  # noqa: BLE001 - not known now
                return None
            return _Static(r) if type(r) is int else None
        if prim.shape_query is not None:  # jnp.ndim(x): known with x's shape
            x = self.aval_of(op.bound.get("a", op.bound.get("x")), env)
            if isinstance(x, _Static) and type(x.value) in _SCALAR_TYPES:
                x = Aval.of(x.value)  # a Python number known now (1 / n)
            if isinstance(x, Aval) and set(op.bound) <= {"a", "x"}:
                # (a weak Python scalar's shape is (), as JAX's jnp.ndim(1.0) is 0)
                return _Static(prim.shape_query(x))
        if prim.part == "item":  # x[idx]
            base = self.aval_of(op.bound.get("x"), env)
            idx = op.bound.get("idx")
            if (
                isinstance(base, Aval)
                and isinstance(idx, gast.Constant)
                and isinstance(idx.value, str)
            ):
                # params["w"] of an argument specialized as an array (srcjax show
                # --args 'f32[50]' for a dict parameter): NumPy's error at run time
                from ...errors import Location, TransformTypeError

                err = TransformTypeError(
                    f"indexing an array of type {_describe_aval(base)} with the key "
                    f"{idx.value!r}: this value was given as an array, but the code reads "
                    "it as a dict",
                    Location.of(s),
                    'pass a dict (srcjax show: --args \'{"w": f32[50], "b": f32[]}\')',
                )
                err.srcjax_user_error = True
                raise err
            if (
                isinstance(base, _Static)
                and isinstance(base.value, tuple)
                and not self._unknown_count(idx, env)  # (shape[k] of a loop's k: unknown)
            ):
                try:  # t[0] of a shape
                    v = base.value[self._stand_in(idx, env, Aval.proxy)]
                except Exception:  # noqa: BLE001 - not a static index
                    v = None
                if type(v) in (int, tuple):
                    return _Static(v)
            if isinstance(base, (dict, list, tuple)) and isinstance(idx, gast.Constant):
                try:
                    return base[idx.value]
                except (KeyError, IndexError, TypeError):
                    return None
            sl = N.static_slice(idx) if isinstance(base, (list, tuple)) else None
            if sl is not None:
                return base[sl]  # (params[:-1] of a list of layers)
            if isinstance(base, (dict, list, tuple)) and not isinstance(idx, gast.Constant):
                return None  # an item not known now (a stand-in index would pick one)
        if prim.part == "attr":  # a field of a named-tuple argument (state.t)
            base = self.aval_of(op.bound.get("x"), env)
            name = op.bound.get("name")
            if (
                isinstance(base, tuple)
                and hasattr(base, "_fields")
                and isinstance(name, gast.Constant)
                and name.value in base._fields
            ):
                return getattr(base, name.value)
            if (
                isinstance(base, ClassAval)
                and isinstance(name, gast.Constant)
                and name.value in base.layout
            ):
                return base.children[base.layout[name.value]]  # model.layers, layer.weight
        if prim.result_shape is not None and (r := ruled_aval(op, env, self.aval_of)):
            return r  # (a rule on abstract values: ad.jac_columns)
        if prim.kind == "elementwise":
            r = self.elementwise(s, env)
            if r is not None or not any(
                isinstance(self.aval_of(x, env), _Static)
                for x in op.bound.values()
                if isinstance(x, gast.Name)
            ):
                return r
            return self.small(s, env)  # static operands: ndim - 1
        if prim.cast_dtype_param is not None:  # ad.astype(x, dtype)
            x = self.aval_of(op.bound.get("x"), env)
            dt = self.static_value(op.bound.get(prim.cast_dtype_param), env)
            if isinstance(x, Aval) and dt is not _UNKNOWN:
                # (promote's conversion of an operand to a weak promoted type: weak)
                return Aval(x.shape, dtypes.canonicalize_dtype(dt), wt=prim.cast_weak)
        if prim.kind == "reduction":
            r = self.reduction(s, env)
            if r is not None:
                return r
        if prim.kind == "creation" and prim.name.endswith("_like"):
            x = self.aval_of(op.bound.get("a", op.bound.get("x")), env)
            if isinstance(x, Aval) and set(op.bound) <= {"a", "x", "fill_value"}:
                fill = op.bound.get("fill_value")
                if fill is None or not x.weak:
                    # (weak as x and the fill value are: jnp.zeros_like(w), as JAX's)
                    f = self.aval_of(fill, env) if fill is not None else x
                    wt = prim.keeps_weak and x.weak_type and isinstance(f, Aval) and f.weak_type
                    return Aval(x.shape, x.dtype, wt=wt)
        if prim.matrix_product:  # jnp.matmul, jnp.dot
            a = self.aval_of(op.bound.get("a", op.bound.get("x")), env)
            b = self.aval_of(op.bound.get("b", op.bound.get("y")), env)
            if (
                isinstance(a, Aval)
                and isinstance(b, Aval)
                and len(a.shape) >= 2
                and len(b.shape) == 2
                and a.shape[-1] == b.shape[0]
                and not a.weak
                and not b.weak
                and set(op.bound) <= {"a", "b", "x", "y"}  # (preferred_element_type: below)
            ):
                # a call has JAX's result dtype, the operator ``@`` NumPy's; a
                # stack of matrices by one matrix (matmul and dot agree then)
                rt = dtypes.result_type if isinstance(s.value, gast.Call) else np.result_type
                return Aval(a.shape[:-1] + (b.shape[1],), rt(a.dtype, b.dtype))
        if getattr(prim, "communicates", False):
            # a collective exchanges values with the other pmap devices: never run on
            # stand-ins while building (the others are not there)
            return None
        if prim.kind in PURE_KINDS or (
            prim.kind in _EVAL_KINDS and not prim.effectful  # (checks raise on stand-ins)
        ):
            # any other primitive: its implementation on stand-ins of the operands
            return self.small(s, env)
        return None

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

    def _stand_in(self, node: Any, env, make) -> Any:
        if isinstance(node, gast.Name):
            a = self.aval_of(node, env)
            if not isinstance(a, Aval):
                v = self.static_value(node, env)
                if v is _UNKNOWN:
                    return _container_stand_in(a, make)
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
        return ast.literal_eval(N.to_source(node))

    def _appended_operand(self, op: Any, env) -> bool:
        """Whether an operand is a list some method is called on (``l.append``):
        its display's abstract value may not hold what it holds at run time."""
        for v in op.bound.values():
            for x in v if isinstance(v, list) else [v]:
                if (
                    isinstance(x, gast.Name)
                    and x.id in self.receivers
                    and isinstance(self.aval_of(x, env), list)
                ):
                    return True
        return False

    def _unknown_count(self, node: Any, env) -> bool:
        """Whether ``node`` holds, or is built from, a Python int whose value is not
        part of the specialization (a loop counter, a module global, read live):
        its stand-in (1) could give a wrong shape (zeros(n), split(key, PATHS),
        x[i:i + 3])."""
        if not isinstance(node, gast.AST):
            return False
        for n in N.walk(node):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                for a in _leaves(self.aval_of(n, env)):
                    if isinstance(a, Aval) and a.ptype is int:
                        return True
        return False

    def host_call(self, call: Any, env: Dict[str, Any]) -> Any:
        """np.sqrt(8) (a normalizer's ``_HostCall`` of Python numbers): static."""
        fn = self.static_value(call.func, env, any_value=True)
        args = [a.value if isinstance(a, gast.Constant) else _UNKNOWN for a in call.args]
        if type(fn).__name__ == "_HostCall" and not call.keywords:
            with contextlib.suppress(Exception):  # (else left to run time)
                r = fn(*args) if all(type(a) in (int, float) for a in args) else None
                return _Static(r) if type(r) in (int, float, bool) else None
        return None

    def static_value(self, node: Any, env: Dict[str, Any], any_value: bool = False) -> Any:
        """The value of a dtype argument known at transformation time (a string
        constant, or a global or attribute naming a dtype or scalar type:
        ``np.int32``, ``float``, ``jnp.float16``), else ``_UNKNOWN``."""
        if isinstance(node, gast.Constant):
            return node.value if isinstance(node.value, str) else _UNKNOWN
        if isinstance(node, gast.Name) and isinstance(env.get(node.id), _Static):
            return env[node.id].value
        path = []
        while isinstance(node, gast.Attribute):
            path.append(node.attr)
            node = node.value
        if not isinstance(node, gast.Name) or node.id in env or node.id in self.locals:
            return _UNKNOWN
        try:
            v = self.resolve(node.id)
            for attr in reversed(path):
                v = getattr(v, attr)
        except Exception:  # noqa: BLE001 - unknown global
            return _UNKNOWN
        if (
            any_value
            or isinstance(v, np.dtype)
            or (isinstance(v, type) and issubclass(v, (np.generic, *_SCALAR_TYPES, complex)))
        ):
            return v
        if isinstance(v, type) and isinstance(getattr(v, "dtype", None), np.dtype):
            return v.dtype.type  # jnp.int32 (srcjax.numpy's scalar types)
        return _UNKNOWN

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
        for v in op.bound.values():
            for x in v if isinstance(v, list) else [v]:
                if isinstance(x, gast.Name):
                    a = self.aval_of(x, env)
                    if not isinstance(a, Aval):
                        return None
                    operands.append(a)
                elif isinstance(x, gast.Constant) and type(x.value) in _NUMBER_TYPES:
                    operands.append(Aval.of(x.value))  # (y * 2.5: weak float32)
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
        if prim.keeps_weak:
            static = prim.static_params
            names = [x for p, x in op.bound.items() if p not in static]
        elif prim.part == "item":
            names = [op.bound.get("x")]
        elif prim.identity_operand is not None:
            names = [op.bound.get(prim.identity_operand)]
        else:
            return False
        avals = [self.aval_of(x, env) if isinstance(x, gast.AST) else None for x in names]
        if not avals or not all(isinstance(a, Aval) for a in avals):
            return False
        if not prim.keeps_weak:  # (the operand itself, its dtype unchanged)
            return avals[0].weak_type and avals[0].dtype == r.dtype
        return dtypes.can_be_weak(dtypes.canonicalize_dtype(r.dtype)) and _weak_type(avals)

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
                index = (op.prim.part == "item" and pname == "idx") or (
                    op.prim.row_operands and pname == op.prim.row_operands[1]
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
                    if a.dtype == np.bool_ and op.prim.part == "item":
                        return None  # x[mask]
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
            return Aval(np.shape(r), r.dtype, wt=self._keeps_weak(op, r, env))
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
        if op.prim.pure and type(r) in (dict, tuple) and not static:
            tree = _array_tree(r)  # a helper's dict or tuple of arrays (never a list:
            if tree is not None:  # generated code appends to lists)
                return tree
        if static and type(r) in (int, bool, tuple) and isinstance(s.value, gast.BinOp):
            return _Static(r)  # shape arithmetic: ndim - 1
        if static and op.prim.static_for_constants and type(r) in (int, bool, tuple, str):
            return _Static(r)  # axes from ranks: ad.batch_axis(None, 2)
        if (
            op.prim.from_shapes
            and type(r) in (int, float, bool, tuple, str)
            and not self._appended_operand(op, env)
        ):
            return _Static(r)  # from shapes and options only: ad.mean_scale's 1 / n
        if static and op.prim.pure and type(r) in (int, float, bool):
            return _Static(r)  # a helper of static values: ad.expand_to_rank(0.005, 1)
        return None


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


def infer_avals(
    fdef: Any, params: Dict[str, Any], resolve: Optional[Callable[[str], Any]] = None
) -> Dict[str, Any]:
    """Annotate assignments with abstract values, given the parameters' ``Aval``
    (or pytrees of them, or ``None`` for unknown). ``resolve(name)`` reads a
    global or closure value (scalars there are taken as weak constants).
    Returns the environment at the end of the body."""
    locals_ = set(params) | set(N.assigned_names(fdef.body))

    def no_globals(name):
        raise KeyError(name)

    interp = _Interp(resolve or no_globals, locals_)
    interp.restores, interp.tapes = _tape_restores(fdef, params)
    interp.receivers = list_receivers(fdef)
    return interp.block(fdef.body, dict(params))
