"""Abstract interpretation of a normalized body: :func:`infer_avals` annotates
each assignment with its result's abstract value (``sj_aval``), by shape rules
for the common kinds and by running primitives on one-element stand-ins
(those result rules: :mod:`.interp_rules`, a mixin of :class:`_Interp`)."""

from __future__ import annotations

import ast
import contextlib
import types
import warnings
from typing import Any, Callable, Dict, List, Optional

import gast
import numpy as np

from ... import dtypes
from ...frontend import nodes as N
from .avals import (
    Aval,
    ClassAval,
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
from .interp_rules import _NUMBER_TYPES, _ResultRules
from .lax_carries import carry_merge
from .loop_facts import _runs, _tape_list, _tape_restores, grown_lists, sole_growths
from .stand_ins import _arrays_only, _zeros_stand_in, ruled_aval


class _Interp(_ResultRules):
    def __init__(self, resolve: Callable[[str], Any], locals_: set) -> None:
        self.resolve = resolve
        self.locals = locals_
        self.receivers: set = set()  # names some method is called on (l.append)
        self.restores: Dict[str, Any] = {}  # x = tape.pop(): see _tape_restores
        self.tapes: set = set()
        self.sole: Dict[int, Any] = {}  # loop id -> lists grown only there (sole_growths)
        self.grown: Dict[str, Any] = {}  # a list's name -> what grown_lists gave it
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
            t = self.aval_of(s.test, env) if isinstance(s.test, gast.Name) else None
            if isinstance(t, _Static) and type(t.value) in (bool, int):
                if not getattr(s, "sj_lax_branches", None):  # (power's rule: a known dtype)
                    return self.block(s.body if t.value else s.orelse, dict(env))
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
            merge = carry_merge(s, not self.unsure)  # (a lax loop's carries: JAX's rule)
            for _ in range(4):
                self.trial += 1
                try:
                    out = self.block(s.body, dict(cur))
                finally:
                    self.trial -= 1
                new = dict(cur)
                for k in names:
                    new[k] = merge(k, cur[k], out.get(k)) if k in cur else None
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
                grown = grown_lists(s, env, last, cur, self.locals, self.sole)
                for k in self.sole.get(id(s), ()):
                    if grown.get(k) is not cur.get(k):  # (exact: see _appended_operand)
                        self.grown[k] = grown[k]
                cur = grown
            return cur
        if _is_carry_check(s):
            # the carries it compares, for drop_carry_checks
            s.sj_avals_in = {n: self.aval_of(N.name(n), env) for n in N.names_in(s.value)}
            s.sj_avals_sure = not self.unsure
            if isinstance(s, gast.Assign):  # (vmap's `unused = ad.check_carry(...)`)
                env = dict(env)
                env[s.targets[0].id] = None
            return env
        if isinstance(s, gast.Assign):
            env = dict(env)
            val = None
            assigned = None
            if _is_assign(s):
                # (one walk of the value: its reads, and what it stores, which after
                # the plain target is what the statement stores: _assigned(s))
                loads, stores = N.loads_and_stores(s.value)
                if getattr(s.targets[0], "annotation", None) is None:
                    assigned = set([s.targets[0].id] + stores)
                s.sj_avals_in = {n: self.aval_of(N.name(n), env) for n in loads}
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
            for k in _assigned(s) if assigned is None else assigned:
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
                if isinstance(s.value, gast.List):
                    return list(items)
                return _static_ints(s.value.elts, items) or tuple(items)
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
            if v is not _UNKNOWN:
                return _Static(v)
            return self.module_float(s.value, env)
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
            if sl is not None and not self._appended_operand(op, env):
                # (params[:-1] of a list of layers; not items[:] of a list appended
                # to: its length at run time is not its display's)
                return base[sl]
            if isinstance(base, (list, tuple)) and _same_items(base):
                if not self._appended_operand(op, env) and _int_index(self.aval_of(idx, env)):
                    return base[0]  # (any item: jacfwd's one-hot basis ``seq[i]``)
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
        if prim.result_shape is not None and (r := ruled_aval(op, env, self.aval_of)) is not None:
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
                    # (weak as x is, whatever the fill value: jnp.zeros_like(w),
                    # jnp.full_like(w, float32_v), as JAX's lax.full_like)
                    wt = prim.keeps_weak and x.weak_type
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

    def _appended_operand(self, op: Any, env) -> bool:
        """Whether an operand is a list some method is called on (``l.append``):
        its display's abstract value may not hold what it holds at run time
        (unless that value is what :func:`.loop_facts.grown_lists` gave the
        list after the one loop that changes it: ``ys[::-1]`` of a reverse
        scan's outputs)."""
        for v in op.bound.values():
            for x in v if isinstance(v, list) else [v]:
                if not (isinstance(x, gast.Name) and x.id in self.receivers):
                    continue
                a = self.aval_of(x, env)
                if isinstance(a, list) and a is not self.grown.get(x.id):
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
        if fn is slice and not call.keywords and 1 <= len(args) <= 3:
            # slice(None, None, -1) of x[::-1]'s adjoint and batched reads: an index
            # known now, so the helpers it feeds run on stand-ins (jacfwd of a grad)
            if all(a is None or type(a) is int for a in args):
                return _Static(slice(*args))
            return None
        if type(fn).__name__ == "_HostCall" and not call.keywords:
            with contextlib.suppress(Exception):  # (else left to run time)
                r = fn(*args) if all(type(a) in (int, float) for a in args) else None
                return _Static(r) if type(r) in (int, float, bool) else None
        return None

    def module_float(self, node: Any, env: Dict[str, Any]) -> Optional[Aval]:
        """``jnp.inf``, ``np.pi``, ``math.e``: a module's float constant is a
        weakly typed float scalar, as JAX's trace takes it (None otherwise; an
        object's attribute may be rebound, a module's constant is not)."""
        base = self.static_value(node.value, env, any_value=True)
        if not isinstance(base, types.ModuleType):
            return None
        v = getattr(base, node.attr, None)
        return Aval.of(v) if type(v) is float else None

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

    walked = N.walk_with_parents(fdef)  # (one walk for the receivers and the tapes)
    receivers = list_receivers(fdef, walked)
    sole = sole_growths(fdef)
    restores, tapes = _tape_restores(fdef, params, walked[0])
    for _ in range(_RESTORE_ROUNDS):
        interp = _Interp(resolve or no_globals, locals_)
        interp.restores, interp.tapes, interp.receivers = restores, tapes, receivers
        interp.sole = sole
        env = interp.block(fdef.body, dict(params))
        if not tapes:
            break
        # (a restore's value is read from this inference's annotations: when they
        # know more than the last ones did, the reverse loop's values do too)
        again, tapes = _tape_restores(fdef, params, walked[0])
        if again == restores:
            break
        restores = again
    return env


#: inferences at most in one infer_avals while the tape restores' abstract values
#: change (a scan's reverse loop: its restores are known after one inference, the
#: values computed from them after the next)
_RESTORE_ROUNDS = 3


def _same_items(items: Any) -> bool:
    """Whether a list's or tuple's items are arrays of one abstract value (its
    item at an index not known now has it too)."""
    return bool(items) and all(isinstance(a, Aval) and a == items[0] for a in items)


def _int_index(a: Any) -> bool:
    """An integer scalar index (a loop's counter), not a slice or an array."""
    return isinstance(a, Aval) and a.shape == () and np.dtype(a.dtype).kind in "iu"


def _static_ints(elts: List[Any], items: List[Any]) -> Optional[tuple]:
    """A tuple display of known ints, names bound to them and int constants (``(T,
    4, D // 4)``, the shape of a reshape under vmap, where ``4`` is a literal of
    the user's code): each item static, as a display of constants only is (an int
    constant's own abstract value is a weak int, which left ``ad.batch_shape``
    and everything after that reshape unknown: user8 p01). None otherwise."""
    out = []
    for e, a in zip(elts, items):
        if isinstance(e, gast.Constant) and type(e.value) is int:
            out.append(_Static(e.value))
        elif isinstance(a, _Static) and type(a.value) is int:
            out.append(a)
        else:
            return None
    return tuple(out)
