"""Name resolution: what a name or attribute chain of user code is bound to
(a local, a global found when transforming, a closure cell, missing), how
generated code reads it, and the dependencies recorded for the cache.
"""

from __future__ import annotations

import ast
import builtins
import types
from typing import Any, Optional

import gast

from ..._array import buffer, unwrap_tree
from ...errors import (
    UnsupportedSyntaxError,
)
from .. import hooks
from .. import nodes as N
from .. import record as _record
from .anf import _GENERATED_NAMES, Op, UserGlobal
from .common import _fold_constant, _GlobalFn, _is_static_callable, plain_object


def _is_plain_data(x: Any) -> bool:
    """Numbers, strings, None and tuples/lists/dicts of them (transform options)."""
    if x is None or isinstance(x, (bool, int, float, str)):
        return True
    if isinstance(x, (tuple, list)):
        return all(_is_plain_data(v) for v in x)
    if isinstance(x, dict):
        return all(_is_plain_data(k) and _is_plain_data(v) for k, v in x.items())
    return False


def _is_scalar_value(v: Any) -> bool:
    """A Python number, bool, str or None, or a tuple of them: a value inlined
    code reads as a constant, immutable, so an identity check of the variable
    holding it is a complete guard."""
    t = type(v)
    if t is tuple:
        return all(_is_scalar_value(x) for x in v)
    return t in (int, float, bool, complex, str) or v is None


class ScopeMixin:
    """Name resolution of :class:`Normalizer` (see the module docstring)."""

    # -- resolution ----------------------------------------------------------
    def lookup_global(self, id_: str) -> tuple:
        """('found', obj) or ('missing', None) for a non-local name."""
        if id_ in self.src.closure:
            cell = self.src.closure[id_]
            try:
                obj = cell.cell_contents
            except ValueError:
                _record.note_lookup(cell, id_, _record.MISSING)
                return "missing", None
            _record.note_lookup(cell, id_, obj)
            return "found", unwrap_tree(obj)
        try:
            obj = self.src.globals[id_]
        except KeyError:
            pass
        else:
            _record.note_lookup(self.src.globals, id_, obj)
            return "found", unwrap_tree(obj)
        if hasattr(builtins, id_):
            obj = getattr(builtins, id_)
            _record.note_lookup(self.src.globals, id_, obj)
            return "found", obj
        _record.note_lookup(self.src.globals, id_, _record.MISSING)
        return "missing", None

    def resolve(self, expr: Any) -> tuple:
        """Statically evaluate a name/attribute chain: ('local', root) / ('found', obj) /
        ('missing', None) / ('dynamic', None)."""
        if isinstance(expr, gast.Name):
            if expr.id in self.static_params:
                # a parameter of an inlined function bound to a known function
                # (hvp(f, x, v) calling grad(f)): resolved like that function
                return "found", self.static_params[expr.id]
            if expr.id in self.locals:
                return "local", expr.id
            return self.lookup_global(expr.id)
        if isinstance(expr, gast.Attribute):
            status, obj = self.resolve(expr.value)
            if status == "found":
                try:
                    return "found", buffer(getattr(obj, expr.attr))
                except AttributeError:
                    return "missing", None
            if status == "local":
                return "local", obj
            return status, None
        if isinstance(expr, gast.Subscript):
            # ACTIVATIONS["tanh"](x), ACTIVATIONS[self.act](x): a function table that
            # is a module constant, read with a key known while transforming
            known, key = self.static_key(expr.slice)
            if not known or not isinstance(key, (str, int)):
                return "dynamic", None
            status, obj = self.resolve(expr.value)
            if status == "found" and isinstance(obj, (dict, list, tuple)):
                try:
                    item = obj[key]
                except (KeyError, IndexError, TypeError):
                    return "dynamic", None
                if callable(item) and not isinstance(item, type):
                    if isinstance(obj, dict):  # rebinding the entry invalidates the code
                        self.deps.append(("dict", obj, key, item))
                    return "found", item
            if status == "local":
                return "local", obj
        if (
            isinstance(expr, gast.Call)
            and len(expr.args) == 2
            and not expr.keywords
            and self.resolve(expr.func) == ("found", getattr)
        ):
            # getattr(jax.nn, self.act)(x): an attribute of a module constant named
            # by a key known while transforming
            known, key = self.static_key(expr.args[1])
            status, obj = self.resolve(expr.args[0])
            if known and isinstance(key, str) and status == "found":
                try:
                    return "found", getattr(obj, key)
                except AttributeError:
                    return "missing", None
        return "dynamic", None

    def static_key(self, e: Any) -> tuple:
        """``(True, value)`` for an expression whose value is known while
        transforming: a constant, or a static str/int/bool/None attribute of a
        registered class instance (``self.act``: aux data, part of the key, see
        :func:`type_tree`); else ``(False, None)``."""
        if isinstance(e, gast.Constant):
            return True, e.value
        if isinstance(e, gast.Attribute):
            ty = self.expr_type(e.value)
            if ty is not None and ty[0] == "class":
                consts = dict(ty[5])
                if e.attr in consts:
                    return True, consts[e.attr]
        return False, None

    def global_ref(self, node: Any) -> Any:
        """A reference to a global/closure name inside inlined code from another
        module, or to one named like a namespace of generated code (``ad``)."""
        if isinstance(node, gast.Name) and node.id in _GENERATED_NAMES:
            renamed = self._shadowing_global(node.id)
            if renamed is not None:
                return N.name(renamed)
        if (
            isinstance(node, gast.Name)
            and node.id in self.src.closure
            and self.src.closure is not self.root_closure
            and node.id not in self.root_closure
        ):
            # a closure cell of an inlined function that the transformed function
            # does not close over itself (upd's `idx` in `def loss: upd(x)`): its
            # value, read now, as other names of inlined code are
            status, obj = self.lookup_global(node.id)
            if status == "found" and type(obj) is str and self._srcjax_source():
                # a string a maker of srcjax's own closes over (``lax.add``'s
                # name): the literal, as if written in the function
                return N.copy_origin(N.const(obj), node)
            if status == "found":
                new = self.namer.fresh(node.id)
                self.bindings[new] = obj
                self._guard_scalar(node.id)
                return N.name(new)
        if not isinstance(node, gast.Name):
            return node
        if self.src.globals is self.root_globals:
            if self.inlined:
                alias = self._inlined_global(node.id)
                if alias is not None:
                    return N.name(alias)
            return node
        status, obj = self.lookup_global(node.id)
        if status != "found":
            return node
        if isinstance(obj, types.ModuleType) or obj is getattr(builtins, node.id, object()):
            if self.root_globals.get(node.id, obj) is obj:
                self.bindings.setdefault(node.id, obj)
                return node
        new = self.namer.fresh(node.id)
        self.bindings[new] = obj
        self._guard_scalar(node.id)
        return N.name(new)

    def _guard_scalar(self, name: str) -> None:
        """For a variable of another module (or a closure cell of an inlined
        function) whose value, a Python scalar, inlined code reads at
        transformation time: a dependency on it, so rebinding it transforms
        again and the next call sees the new value, as a same-module global
        (fresh-user round 6, item 15: ``cfgmod.SCALE`` read by ``cfgmod.helper``
        stayed 3.0 under jit). srcjax's own modules' constants are not guarded."""
        if self._srcjax_source():
            return
        cell = self.src.closure.get(name)
        if cell is not None:
            try:
                value = cell.cell_contents
            except ValueError:
                return
            dep = ("cell", cell, None, value)
        elif name in self.src.globals:
            value = self.src.globals[name]
            dep = ("dict", self.src.globals, name, value)
        else:
            return
        if _is_scalar_value(value):
            self.deps.append(dep)

    def _srcjax_source(self) -> bool:
        """Whether the function being inlined is srcjax's own."""
        mod = self.src.globals.get("__name__", "")
        return isinstance(mod, str) and mod.startswith("srcjax.")

    def _inlined_global(self, name: str) -> Optional[str]:
        """For a module-level variable ``name`` (data, not a function, class or
        module) that inlined code of the transformed function's own module reads:
        the fresh name generated code reads it by, bound to the user's variable
        itself, live. Read by its own name, it would be captured by a local of
        the caller (``lr`` of ``sgd`` inlined where the caller has ``lr = 100.``)
        or by a name of generated code (a scan's loop counter ``k``): user X's
        silently wrong gradients. None for names that need no protection."""
        if name in self.src.closure:
            return None  # (closure cells: see global_ref)
        status, obj = self.lookup_global(name)
        if status != "found" or name not in self.src.globals:
            return None  # missing, or a builtin
        if callable(obj) or isinstance(obj, (types.ModuleType, type)):
            return None  # calls and attribute chains resolve these by name
        return self._shadowing_global(name)

    def _shadowing_global(self, name: str) -> Optional[str]:
        """For a user global/closure variable ``name`` that generated code would
        take for its own (``ad = 3.0`` vs the ``ad`` namespace, a global ``min``):
        the name generated code reads it by (``ad_``), bound to the user's
        variable itself, live, in the root function's module; None when ``name``
        means what generated code means by it (numpy as ``np``, a builtin)."""
        status, obj = self.lookup_global(name)
        if status != "found" or hooks.means_the_same(name, obj):
            return None
        # (the entry holds the scope's dicts: an id is never that of another scope's
        # dict made after this one was freed, which read another closure's value)
        key = (name, id(self.src.globals), id(self.src.closure))
        known = self.namer.user_globals.get(key)
        if known is not None and known[1] is self.src.globals and known[2] is self.src.closure:
            return known[0]
        new = self.namer.fresh(name)
        own_cell = name in self.src.closure and self.src.closure is self.root_closure
        global_ = name not in self.src.closure and name not in self.root_closure
        # read live where generated code's globals resolve the alias to this very
        # variable: the root's own cell, or a global no cell of the root hides
        live = self.src.globals is self.root_globals and (own_cell or global_)
        # (a variable of another module, or a closure cell of an inlined function,
        # is read at transformation time, as other names of inlined code are)
        self.bindings[new] = UserGlobal(name) if live else obj
        if not live:
            self._guard_scalar(name)
        self.namer.user_globals[key] = (new, self.src.globals, self.src.closure)
        return new

    def snapshot_defaults(self, fdef: Any) -> Any:
        """``fdef`` with its default values computed now, as Python evaluates them
        when the ``def`` runs (``def g(t, k=k)`` then ``k = ...``: g keeps the old
        k). Each becomes an atom of this scope, marked so that inlining a call
        does not rename it again."""
        if not any(not isinstance(d, gast.Constant) for d in fdef.args.defaults):
            return fdef
        fdef = N.clone(fdef)
        fixed = []
        for d in fdef.args.defaults:
            if not isinstance(d, gast.Constant):
                value = self.atom(d, base=f"{fdef.name}_default")
                if isinstance(value, gast.Name):
                    # a copy: the name itself may be rebound before the call
                    t = self.temp(f"{fdef.name}_default")
                    self.emit(N.assign(t, value), Op("copy", elts=[value]))
                    value = N.name(t)
                    value.sj_resolved = True
                d = value
            fixed.append(d)
        fdef.args.defaults = fixed
        return fdef

    def rename_all(self, node: Any) -> Any:
        node = N.clone(node)
        for n in gast.walk(node):
            if isinstance(n, gast.Name):
                if getattr(n, "sj_resolved", False):
                    continue  # already a name of the normalized code
                if n.id in self.locals:
                    n.id = self.var(n.id)
                elif isinstance(n.ctx, gast.Load):
                    new = self.global_ref(n)
                    n.id = new.id
        return node

    def _record_dependency(self, func: Any, obj: Any) -> None:
        """Remember where an inlined callee came from, so a redefinition (the usual
        notebook workflow) invalidates the generated code."""
        if isinstance(func, gast.Name):
            if func.id in self.locals or func.id in self.static_params:
                # a parameter bound to a function (rk4_step(f, ...) called with f=lotka):
                # not looked up in the globals, where `f` may name something else
                # (a global `f = jax.jit(...)` made every call rebuild: user J)
                return
            cell = self.src.closure.get(func.id)
            if cell is not None:
                self.deps.append(("cell", cell, None, obj))
            else:
                self.deps.append(("dict", self.src.globals, func.id, obj))
        elif isinstance(func, gast.Attribute):
            status, base = self.resolve(func.value)
            if status == "found":
                self.deps.append(("attr", base, func.attr, obj))
        elif isinstance(func, gast.Subscript) and isinstance(func.slice, gast.Constant):
            status, table = self.resolve(func.value)
            if status == "found" and isinstance(table, dict):
                self.deps.append(("dict", table, func.slice.value, obj))

    def function_atom(self, a: Any) -> Any:
        """An argument atom; a library function named by an attribute (``jnp.sin``
        passed to a helper) is bound as the object, so the callee knows it; a
        lambda (``lax.associative_scan(lambda a, b: a + b, xs)``) is bound to a
        fresh local name first, as ``fn = lambda ...`` would be."""
        a = self.fn_expr(a, objects=False)  # helper(partial(f, w), x): a lambda
        if isinstance(a, gast.Lambda):
            tmp = self.namer.fresh("fn")
            self.stmt(N.assign(tmp, a))
            return N.name(tmp)
        if isinstance(a, gast.Attribute):
            status, obj = self.resolve(a)
            if status == "found" and _is_static_callable(obj):
                tmp = self.namer.fresh(a.attr)
                self.bindings[tmp] = obj
                return N.name(tmp)
        return self.atom(a)

    def _known_function(self, atom: Any) -> Any:
        """The function an argument atom statically is (a global or bound
        function, a srcjax transform of one), else None."""
        if not isinstance(atom, gast.Name):
            return None
        bound = self.local_fns.get(atom.id)
        if isinstance(bound, _GlobalFn) and bound.held and not bound.runtime:
            # g = jnp.sin (or a module function) passed on: the function it names
            status, obj = self.resolve(bound.node)
            if status == "found":
                return obj
        if atom.id in self.rename.values():
            return None
        if atom.id in self.static_params:
            return self.static_params[atom.id]
        if atom.id in self.locals or (atom.id in self.namer.made and atom.id not in self.bindings):
            return None  # (a value computed here, e.g. an inlined call's result `out`)
        if atom.id in self.bindings:
            obj = self.bindings[atom.id]
        else:
            status, obj = self.lookup_global(atom.id)
            if status != "found":
                return None
        if isinstance(obj, types.ModuleType):  # helper(jnp, x): N.sum is jnp.sum
            return obj
        return obj if _is_static_callable(obj) else None

    def _known_object(self, atom: Any) -> Any:
        """The plain object (an instance of a user class that is no pytree, or a
        namedtuple of functions) a module-level name passed as an argument is, else
        None: a method inlined
        with it as ``self`` resolves ``self.energy`` (``grad(self.energy)``) and
        reads ``self.k`` from it (user X: ``jit(s.force)``, ``grad`` of a function
        calling ``s.force``)."""
        if not isinstance(atom, gast.Name) or atom.id in self.locals:
            return None
        if atom.id in self.bindings:  # (a bound method's self, bound while inlining)
            obj = self.bindings[atom.id]
        elif atom.id in self.rename.values() or atom.id in self.namer.made:
            return None
        else:
            status, obj = self.lookup_global(atom.id)
            if status != "found":
                return None
        if isinstance(obj, tuple) and hasattr(obj, "_fields") and obj:
            # a module-level namedtuple of functions (an optax-style optimizer's
            # init/update, passed to a train step: opt.update(g, s) is its function,
            # not a dict's update)
            return obj if all(_is_static_callable(f) for f in obj) else None
        return obj if plain_object(obj) and not callable(obj) else None

    # -- srcjax transforms called inside transformed code ---------------------------
    def _static_function(self, node: Any) -> Any:
        if isinstance(node, gast.Call) and node.args:
            # jvp(grad(f), ...): a transform of a known function is known too
            st, factory = self.resolve(node.func)
            if st == "found" and (
                getattr(factory, "__srcjax_factory__", False)
                or getattr(factory, "__srcjax_jit__", False)
            ):
                inner = self._static_function(node.args[0])
                extra = [self._static_value(a) for a in node.args[1:]]
                kws = {k.arg: self._static_value(k.value) for k in node.keywords}
                return factory(inner, *extra, **kws)
        status, obj = self.resolve(node)
        if status != "found" or not callable(obj):
            raise UnsupportedSyntaxError(
                f"a transform inside a transformed function needs a function known before "
                f"the call; `{N.to_source(node)}` is computed at run time",
                self.loc(node),
                "pass a module-level function (or define it outside)",
            )
        return obj

    def _static_value(self, node: Any) -> Any:
        c = _fold_constant(node)
        if isinstance(c, gast.Constant):
            return c.value
        if isinstance(c, gast.Tuple):
            return tuple(x.value for x in c.elts)
        try:  # nested displays of constants: in_axes=({"w": None, "b": 0}, 1)
            return ast.literal_eval(N.to_source(node).strip())
        except (ValueError, SyntaxError, TypeError):
            pass
        if isinstance(node, (gast.Name, gast.Attribute)):
            status, obj = self.resolve(node)  # a module-level constant: AXES = (0, None)
            if status == "found" and _is_plain_data(obj):
                return obj
        raise UnsupportedSyntaxError(
            "options of a transform used inside a transformed function must be constants",
            self.loc(node),
        )
