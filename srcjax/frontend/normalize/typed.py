"""Typed values: the static types of locals (namedtuples, registered classes,
sequences of known length), calls on typed values (methods inlined,
``_replace``), recorded per assigned name.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from typing import Any, Optional

import gast

from ...errors import UnsupportedSyntaxError
from ...primitives import registry
from .. import nodes as N
from .anf import Op
from .common import _fold_constant, _is_library_function, _is_namedtuple_class, _plain_method
from .typetree import _attr_type, _constant_type, _item_type


def _callee_base(func: Any) -> str:
    if isinstance(func, gast.Attribute):
        return func.attr
    if isinstance(func, gast.Subscript) and isinstance(func.value, gast.Name):
        return func.value.id + "_i"
    return "module"


def _static_method(cls: type, name: str) -> Any:
    import inspect

    try:
        fn = inspect.getattr_static(cls, name)
    except AttributeError:
        return None
    if isinstance(fn, staticmethod) and isinstance(fn.__func__, types.FunctionType):
        return fn.__func__
    return None


class TypedMixin:
    """Type tracking of :class:`Normalizer`."""

    def _track_seq_len(self, t: str, op: Optional[Op], value: Any) -> None:
        """Record the static length of a display assigned to ``t`` (or copied from
        a name whose length is known); see ``seq_lens``."""
        n = None
        if op is None or op.kind not in ("pack", "copy"):
            pass
        elif isinstance(value, (gast.Tuple, gast.List)):
            if not any(isinstance(v, gast.Starred) for v in value.elts):
                n = len(value.elts)
        elif op.kind == "copy" and isinstance(value, gast.Name):
            n = self.seq_lens.get(value.id)
            n = None if n == -1 else n
        if n is None:
            if t in self.seq_lens:
                self.seq_lens[t] = -1
        elif self.seq_lens.setdefault(t, n) != n:
            self.seq_lens[t] = -1

    def static_seq_len(self, node: Any) -> Optional[int]:
        """The length of the tuple/list ``node`` (a display, or a local name that
        holds displays of one length wherever it is assigned), or None."""
        if isinstance(node, (gast.Tuple, gast.List)):
            if any(isinstance(v, gast.Starred) for v in node.elts):
                return None
            return len(node.elts)
        if isinstance(node, gast.Name):
            n = self.seq_lens.get(self.var(node.id))
            return None if n is None or n < 0 else n
        return None

    def _type_assign(self, t: str, op: Optional[Op], value: Any = None) -> None:
        """Track the type tree of ``t`` through copies, attribute reads, indexing
        of typed values and tuple displays holding them (an ``enumerate`` item
        ``(i, layer)``); any other assignment forgets it."""
        ty = None
        if op is not None and op.kind == "pack" and isinstance(value, (gast.Tuple, gast.List)):
            items = tuple(self.type_of(e) for e in op.elts)
            if any(i is not None for i in items):
                ty = ("items", items)
        elif op is not None and op.kind == "copy" and op.elts:
            ty = self.type_of(op.elts[0])
        elif op is not None and op.kind == "prim" and op.prim.part == "attr":
            ty = _attr_type(self.type_of(op.bound.get("x")), op.bound.get("name"))
        elif op is not None and op.kind == "prim" and op.prim.part == "item":
            ty = _item_type(self.type_of(op.bound.get("x")), op.bound.get("idx"))
        elif getattr(op, "construct_class", None) is not None:
            # an instance built here: its class is known, its fields only at run time
            ty = ("class", op.construct_class, (), (), (), ())
        if ty is None:
            self.types.pop(t, None)
        else:
            self.types[t] = ty

    def type_of(self, node: Any) -> Any:
        if isinstance(node, gast.Name):
            return self.types.get(node.id)
        return None

    def class_of(self, node: Any) -> Any:
        """The registered pytree class of the value of atom ``node``, if known."""
        ty = self.type_of(node)
        return ty[1] if ty is not None and ty[0] == "class" else None

    def expr_type(self, e: Any) -> Any:
        """The type tree of expression ``e`` (a local name, its attributes and
        items), decided without emitting anything; ``None`` when unknown."""
        if isinstance(e, gast.Name):
            if e.id in self.locals:
                return self.types.get(self.var(e.id))
            return _constant_type(*self.lookup_global(e.id))
        if isinstance(e, gast.Attribute):
            return _attr_type(self.expr_type(e.value), N.const(e.attr))
        if isinstance(e, gast.Subscript):
            idx = _fold_constant(e.slice) if not isinstance(e.slice, gast.Constant) else e.slice
            ty = self.expr_type(e.value)
            if ty is not None and ty[0] == "seq" and not isinstance(e.slice, gast.Slice):
                return ty[1]
            if isinstance(e.slice, gast.Slice):  # self.layers[:-1] of known layers
                return _item_type(ty, e.slice)
            return _item_type(ty, idx) if idx is not None else None
        return None

    def namedtuple_replace(self, e: Any) -> Optional[tuple]:
        """``s._replace(vel=v)`` on a namedtuple whose class is known here: the
        construction ``State(s.pos, v)``, differentiable in every field."""
        recv = self.atom(e.func.value)
        cls = self.class_of(recv)
        kws = {k.arg: k.value for k in e.keywords}
        if cls is None and kws and None not in kws:
            # the class is known only at run time (a namedtuple argument): one
            # ad.nt_replace per field, differentiable in the tuple and the values
            prim = registry.by_public("ad.nt_replace")
            node, op = None, None
            cur = recv
            for name, value in kws.items():
                v = self.atom(value)
                node, op = self.prim_call(prim, [cur, N.const(name), v], [], e, pre_atomized=3)
                if name != list(kws)[-1]:
                    t = self.temp("replaced")
                    self.emit(N.assign(t, node), op)
                    cur = N.name(t)
            return node, op
        if cls is None or not _is_namedtuple_class(cls):
            return None
        if None in kws or any(k not in cls._fields for k in kws):
            return None  # (Python raises the error when the call runs)
        values = []
        for f in cls._fields:
            src = kws.get(f) or gast.Attribute(value=e.func.value, attr=f, ctx=gast.Load())
            N.copy_origin(src, e)
            values.append(self.atom(src))
        return self._construction(cls, values, e)

    def _construction(self, cls: type, values: list, e: Any) -> tuple:
        """``ad.construct(cls, *values)`` for the call ``e``: a new instance of
        the registered class ``cls`` from its fields' atoms."""
        cname = self.namer.fresh(cls.__name__)
        self.bindings[cname] = cls
        prim = registry.by_public("ad.construct")
        node, op = self.prim_call(
            prim, [N.name(cname)] + values, [], e, pre_atomized=1 + len(values)
        )
        op.construct_class = cls
        return node, op

    def dataclass_replace(self, e: Any) -> tuple:
        """``dataclasses.replace(m, b=v)`` where ``m``'s class is a dataclass
        registered as a pytree and known here: the construction ``Lin(m.w, v)``,
        differentiable in every field (user bug 10); any other receiver is an
        error naming the call (the function's source cannot be inlined)."""
        kws = {k.arg: k.value for k in e.keywords}
        recv = self.atom(e.args[0]) if len(e.args) == 1 else None
        cls = self.class_of(recv) if recv is not None else None
        fields = dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else ()
        if not fields or None in kws or any(f.name not in kws for f in fields if not f.init):
            raise UnsupportedSyntaxError(
                "dataclasses.replace(obj, field=value, ...) inside a transformed function "
                "needs obj to be an instance of a dataclass registered as a pytree "
                "(tree_util.register_dataclass / register_pytree_node) that the function "
                "receives or builds",
                self.loc(e),
                hint="register the dataclass, or construct the new instance "
                "explicitly: Lin(w=m.w, b=new_b)",
            )
        values = []
        for f in fields:
            if not f.init:
                continue
            src = kws.get(f.name) or gast.Attribute(
                value=N.clone(recv), attr=f.name, ctx=gast.Load()
            )
            N.copy_origin(src, e)
            values.append(self.atom(src))
        return self._construction(cls, values, e)

    def typed_call(self, e: Any, target: Optional[str] = None) -> Optional[tuple]:
        """``obj(x)`` / ``obj.method(x)`` where ``obj`` is known to be a registered
        pytree class instance (``model(x)``, ``self.layers[0](h)``, ``m.apply(x)``):
        the method's source is inlined with ``obj`` as ``self``, so its ``self.w``
        reads are differentiable attribute reads."""
        func = e.func
        ty = self.expr_type(func)
        if ty is not None and ty[0] == "class":
            fn = _plain_method(ty[1], "__call__")
            if fn is not None:
                return self.inline_method(fn, [self.typed_atom(func, ty, _callee_base(func))], e)
            return None
        if not isinstance(func, gast.Attribute):
            return None
        ty = self.expr_type(func.value)
        if ty is None or ty[0] != "class":
            return None
        fn = _plain_method(ty[1], func.attr)
        if fn is not None:
            return self.inline_method(fn, [self.typed_atom(func.value, ty)], e)
        static = _static_method(ty[1], func.attr)
        if static is not None:
            return self.inline_method(static, [], e)
        fns = dict(ty[4])
        if func.attr in fns:  # self.act(y), act static (aux data): known here
            fn = fns[func.attr]
            prim = registry.lookup_callable(fn)
            if prim is not None:
                return self.prim_call(prim, e.args, e.keywords, e)
            if isinstance(fn, (types.FunctionType, functools.partial)) and not (
                _is_library_function(fn)
            ):
                return self.inline(fn, e, target)
        return None

    def typed_atom(self, e: Any, ty: Any, base: Optional[str] = None) -> Any:
        """``atom(e)``, with type tree ``ty`` known for it (a constant receiver,
        ``m.layers[0]`` of a closed-over ``m``, is an untyped constant otherwise)."""
        a = self.atom(e, base=base)
        if self.type_of(a) is None and isinstance(a, gast.Name):
            t = self.temp(base or "self")
            self.emit(N.assign(t, N.clone(a)), Op("copy", elts=[a]))
            self.types[t] = ty
            return N.name(t)
        return a
