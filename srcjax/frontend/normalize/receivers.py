"""Objects built inside transformed code whose methods are called (bug 12):
``MLP(2).apply(w, x)``, ``m = MLP(2); m.apply(w, x)`` with ``MLP`` a plain user
class (no pytree) built from values known while transforming are built while
transforming, as JAX's trace runs ``__init__``, and are then known objects,
as a module-level instance is (their methods inlined with ``self`` bound);
``Lin(w).loss(x)`` with ``Lin`` a registered pytree class names the
construction first, so its type is known and ``loss`` is inlined.
"""

from __future__ import annotations

from typing import Any, Optional

import gast

from .. import nodes as N
from .common import (
    _fold_constant,
    _is_namedtuple_class,
    _is_user_class,
    _tree_registry,
    plain_object,
)

_STATIC_TYPES = (bool, int, float, complex, str, type(None))
_NOTHING = object()


def _static_value(norm: Any, a: Any) -> Any:
    """The value of argument ``a`` when it is known while transforming (a
    literal, a tuple of literals, a module-level number or string, a static
    attribute of a typed value), else ``_NOTHING``."""
    if isinstance(a, gast.Starred):
        return _NOTHING
    folded = _fold_constant(a)
    if isinstance(folded, gast.Constant):
        return folded.value
    if isinstance(folded, gast.Tuple):
        return tuple(c.value for c in folded.elts)
    known, value = norm.static_key(a)
    if known:
        return value
    if isinstance(a, gast.Name) and a.id not in norm.locals:
        status, obj = norm.resolve(a)
        if status == "found" and type(obj) in _STATIC_TYPES:
            return obj
    return _NOTHING


def _never_mutated(cls: type) -> bool:
    """Whether no method of ``cls`` but ``__init__`` assigns an attribute (an
    accumulator's ``self.total = ...`` must keep its state per call, at run
    time); False where a method's source cannot be read."""
    import inspect

    from ..source import get_source

    for klass in cls.__mro__[:-1]:
        for name, fn in vars(klass).items():
            fn = getattr(fn, "__func__", fn)  # (classmethod, staticmethod)
            if name == "__init__" or not inspect.isfunction(fn):
                continue
            try:
                node = get_source(fn).node
            except Exception:  # noqa: BLE001 - unknown: built at run time
                return False
            for n in gast.walk(node):
                if isinstance(n, gast.Attribute) and isinstance(n.ctx, (gast.Store, gast.Del)):
                    return False
                if isinstance(n, gast.Name) and n.id in ("setattr", "delattr", "__dict__"):
                    return False
    return True


def plain_instance(norm: Any, e: Any) -> Optional[Any]:
    """The instance the call ``e`` builds, built now, when ``e`` constructs a
    plain user class (no pytree, no namedtuple) from arguments known while
    transforming and its ``__init__`` succeeds; None otherwise."""
    if not isinstance(e, gast.Call):
        return None
    status, cls = norm.resolve(e.func)
    if status != "found" or not isinstance(cls, type) or not _is_user_class(cls):
        return None
    if cls in _tree_registry() or _is_namedtuple_class(cls) or not _never_mutated(cls):
        return None
    args = [_static_value(norm, a) for a in e.args]
    kws = {k.arg: _static_value(norm, k.value) for k in e.keywords}
    if None in kws or any(v is _NOTHING for v in args + list(kws.values())):
        return None
    try:
        obj = cls(*args, **kws)
    except Exception:  # noqa: BLE001 - built at run time instead, as before
        return None
    if not plain_object(obj):
        return None
    norm._record_dependency(e.func, cls)  # (a redefined class transforms again)
    return obj


def bind_instance(norm: Any, obj: Any, source_name: Optional[str] = None) -> Any:
    """A name of the normalized code bound to ``obj``, known while transforming
    (resolved to ``obj`` as a module-level object is); ``source_name`` (a local
    assigned once) is made to stand for it too."""
    tmp = norm.namer.fresh(type(obj).__name__.lower() or "obj")
    norm.bindings[tmp] = obj
    norm.static_params[tmp] = obj
    if source_name is not None:
        norm.static_params[source_name] = obj
    ref = N.name(tmp)
    ref.sj_resolved = True
    return ref


def built_receiver(norm: Any, e: Any) -> Any:
    """The call ``e`` (``C(...).method(...)``) with its receiver named: a plain
    instance built now (see :func:`plain_instance`), or a registered pytree
    class's construction normalized to a local whose class is known. Other
    calls are returned as they are."""
    func = e.func
    if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Call)):
        return e
    built = func.value
    obj = plain_instance(norm, built)
    if obj is not None:
        recv = bind_instance(norm, obj)
    else:
        status, cls = norm.resolve(built.func)
        if status != "found" or not isinstance(cls, type) or cls not in _tree_registry():
            return e
        atom = norm.atom(built, base=cls.__name__.lower())
        if not isinstance(atom, gast.Name):
            return e
        recv = N.name(norm._source_alias(atom.id, cls.__name__.lower()))
    method = N.copy_origin(gast.Attribute(value=recv, attr=func.attr, ctx=gast.Load()), func)
    return N.copy_origin(gast.Call(func=method, args=e.args, keywords=e.keywords), e)
