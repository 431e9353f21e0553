"""What a jit specialization assumes about the module globals and closure
cells its code reads, and the guards that specialize again when an assumption
stops holding (dependencies, see
:func:`srcjax.frontend.normalize.dependencies_valid`):

- a Python int, float, bool or tuple of them is a constant of the
  specialization (:func:`_foldable`), guarded by identity, as JAX bakes it in
  at trace time;
- an array (a NumPy array, or an Array's buffer) is still read live, on every
  call, but its shape and dtype are known to the optimizer (:func:`_array_aval`),
  guarded by an ``"aval"`` dependency: rebinding the variable to an array of the
  same type, shape and dtype keeps the specialization, anything else specializes
  again. What is computed from such an array then has known abstract values too
  (a closed-over matrix in a loop body: its carry checks drop, its products and
  their adjoints take their direct paths).

A variable rebound (or, for an array, reshaped) more than ``jitted._MAX_REBINDS``
times is read live as unknown by later specializations (:func:`rebound`)."""

from __future__ import annotations

import builtins
from typing import Any, Dict, Optional

import numpy as np

from .._array import Array, unwrap_tree
from ..codegen import emit
from ..frontend import nodes as N
from ..frontend.normalize.anf import _GENERATED_NAMES, Op
from ..frontend.normalize.normalizer import aval_holds, current_value
from ..transforms import optimize as opt


def _resolver(src: Any, bindings: dict, arrays: Optional[Dict[str, Any]] = None) -> Any:
    """``resolve(name)``: the value generated code's free ``name`` reads now (an
    Array as its buffer). ``resolve.array_avals``: the abstract values of the
    global arrays the specialization is guarded on (name -> ``Aval``), which
    the optimizer's abstract interpreter takes as known."""

    def resolve(name: str) -> Any:
        if name in bindings:
            value = bindings[name]
            if not isinstance(value, emit.UserGlobal):
                return value
            name = value.name  # the user's variable, read live
        cell = src.closure.get(name)
        if cell is not None:
            return unwrap_tree(cell.cell_contents)
        if name in src.globals:
            return unwrap_tree(src.globals[name])
        # a builtin the module does not shadow (``bool`` in ``jnp.ones(s, bool)``)
        return getattr(builtins, name)

    resolve.array_avals = dict(arrays or {})
    return resolve


def _foldable(v: Any) -> bool:
    """A value jit specializes on when a module global (or closure cell) holds it:
    a Python int, float (finite) or bool, or a tuple of those. Immutable, so an
    identity check of the variable is a complete guard."""
    t = type(v)
    if t is int or t is bool:
        return True
    if t is float:
        return v == v and v not in (float("inf"), float("-inf"))
    if t is tuple:
        return all(_foldable(x) for x in v)
    return False


def _live_read(globals_: Any, cells: dict, bindings: dict, name: str) -> Optional[tuple]:
    """Where generated code's read of the free name ``name`` ends (through the
    globals of generated code transformed again, ``jit(value_and_grad(f))``):
    ``("fixed", None, None, value)`` for a value bound while transforming,
    ``("dict", module_globals, name, value)`` or ``("cell", cell, None, value)``
    for a user's variable read live (the form of a dependency, see
    :func:`srcjax.frontend.normalize.dependencies_valid`), None when unbound."""
    while True:
        if name in bindings:
            value = bindings[name]
            if not isinstance(value, emit.UserGlobal):
                return ("fixed", None, None, value)
            name = value.name
        cell = cells.get(name)
        if cell is not None:
            try:
                return ("cell", cell, None, cell.cell_contents)
            except ValueError:
                return None
        if isinstance(globals_, emit.GeneratedGlobals):
            if dict.__contains__(globals_, name):
                return ("fixed", None, None, dict.__getitem__(globals_, name))
            bindings = {}
            name = globals_.aliases.get(name, name)
            globals_, cells = globals_.user_globals, globals_.cells
            continue
        if not isinstance(globals_, dict) or name not in globals_:
            return None
        return ("dict", globals_, name, globals_[name])


def _globals_to_fold(fdef: Any, src: Any, bindings: dict, volatile: set) -> tuple:
    """The module globals (and closure cells) the normalized ``fdef`` reads that
    the specialization assumes something about: ``(values, guards, arrays)``,
    ``values`` the name -> :func:`_foldable` value to bind as a constant (JAX
    bakes it in at trace time), ``arrays`` the name -> abstract value of an
    array read live (:func:`_array_aval`), and ``guards`` the dependencies that
    specialize again when one is rebound (see
    :func:`srcjax.frontend.normalize.dependencies_valid`). Variables in
    ``volatile`` (``(id(where), key)``: rebound too often) are assumed nothing
    about."""
    import gast

    local = {a.id for a in fdef.args.args} | {
        n.id for n in N.walk(fdef) if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)
    }
    if fdef.args.vararg is not None:
        local.add(fdef.args.vararg.id)
    if fdef.args.kwarg is not None:
        local.add(fdef.args.kwarg.id)
    if any(isinstance(n, (gast.Global, gast.Nonlocal)) for n in N.walk(fdef)):
        return {}, ()
    free = sorted(
        {
            n.id
            for n in N.walk(fdef)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id not in local
        }
    )
    values, guards, arrays = {}, [], {}
    for name in free:
        if name in _GENERATED_NAMES:
            continue  # a namespace or builtin of generated code (a user's `ad` is `ad_`)
        slot = _live_read(src.globals, src.closure, bindings, name)
        if slot is None:
            continue
        kind, where, key, value = slot
        aval = None if _foldable(value) else _array_aval(value)
        if aval is None and not _foldable(value):
            continue
        if kind != "fixed":
            if (id(where), key) in volatile:
                continue
            if aval is not None:  # (read live: its type, shape and dtype guarded)
                slot = ("aval", where, key, (type(value), aval.shape, aval.dtype))
            guards.append(slot)
        if aval is not None:
            arrays[name] = aval
        else:
            values[name] = value
    return values, tuple(guards), arrays


def _array_aval(v: Any) -> Any:
    """The abstract value of a global holding a NumPy array of numbers or a
    (strongly typed) Array of one; None for anything else (a weak Array, a
    device array, a container: read live, unknown)."""
    buf = v._buf if type(v) is Array else v
    if type(buf) is not np.ndarray or buf.dtype.kind not in "biufc":
        return None
    return opt.Aval(buf.shape, buf.dtype)


def rebound(dep: tuple) -> bool:
    """Whether the variable of a guard on a global's value (a folded scalar, or a
    global array's type, shape and dtype) no longer holds what it held."""
    kind, where, key, obj = dep
    if kind == "aval":
        return not aval_holds(where, key, obj)
    if kind == "attr":  # (an object's attribute: fold_object_attributes)
        return getattr(where, "__dict__", {}).get(key, _ABSENT) is not obj
    if kind not in ("dict", "cell") or not _foldable(obj):
        return False
    return current_value(where, None if kind == "cell" else key) is not obj


def fold_object_attributes(fdef: Any, objects: Dict[str, Any], volatile: set) -> tuple:
    """Replace each read ``p.name`` of a parameter ``p`` in ``objects`` (a static
    object: the instance of ``jit(Net(2.0))``, a method's ``self`` under
    ``static_argnums``), never assigned in ``fdef``, by the value its instance
    attribute holds when that value is :func:`_foldable`, as JAX bakes ``self.s``
    in at trace time (a Python float: weakly typed, so ``jnp.sin(x) * self.s`` is
    weak). Returns the guards (``("attr", obj, name, value)`` dependencies) that
    specialize again when an attribute is rebound; attributes in ``volatile``
    (rebound too often) stay live reads."""
    import gast

    stored = N.rebound_names(fdef)
    objects = {p: o for p, o in objects.items() if p not in stored}
    guards: Dict[tuple, tuple] = {}
    if not objects:
        return ()

    class Fold(gast.NodeTransformer):
        def visit_Assign(self, node: Any) -> Any:
            was = node.value
            self.generic_visit(node)
            if node.value is not was and isinstance(node.value, gast.Constant):
                node.sj_op = Op("copy", elts=[node.value])  # (t = self.s: a constant now)
            return node

        def visit_Attribute(self, node: Any) -> Any:
            self.generic_visit(node)
            v = node.value
            if not (
                isinstance(v, gast.Name) and v.id in objects and isinstance(node.ctx, gast.Load)
            ):
                return node
            obj = objects[v.id]
            value = getattr(obj, "__dict__", {}).get(node.attr, _ABSENT)  # (no properties)
            if value is _ABSENT or not _foldable(value) or (id(obj), node.attr) in volatile:
                return node
            guards[(id(obj), node.attr)] = ("attr", obj, node.attr, value)
            return gast.copy_location(N.const(value), node)

    Fold().visit(fdef)
    return tuple(guards.values())


_ABSENT = object()
