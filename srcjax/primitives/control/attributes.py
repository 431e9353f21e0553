"""Attribute reads on pytrees (namedtuple fields, registered classes) and
Python's builtin ``sum``, with their adjoints.
"""

from __future__ import annotations

import numpy as np

from ..ad import unbroadcast
from ..ad.linear import def_adjoint_of, def_transpose_pair
from ..registry import Primitive, register
from ._trees import _class_kind, _is_static, _Probe, _unflatten_sparse
from .cotangents import _part
from .scan import broadcast_like

# ---------------------------------------------------------------------------
# Attribute reads on pytrees (namedtuple fields) and Python's builtin sum.


def _getattr(x, name):
    """``x.name`` for pytree nodes: namedtuple fields and the attributes of
    registered pytree class instances (differentiable in ``x``)."""
    if x is None:  # the zero tangent/cotangent of a node
        return None
    return getattr(x, name)


getattr_ = register(Primitive("ad.getattr", _getattr, kind="structural")).facts(part="attr")


def _attr_slot(x, name, kind):
    """``(children, aux, k)``: ``x.name`` is child ``k`` of ``x``'s one-level
    flatten; ``k`` is ``None`` when the attribute is static (aux data, or not a
    floating value), and a tuple of child indices when the attribute is a list
    or tuple whose items are children (``flatten`` returning ``(m.layers,
    aux)``: JAX takes any iterable of children, here that list's items). Raises
    NotImplementedError when ``x.name`` is a floating value that is no child (a
    child computed or stored transposed by the flatten function): its
    derivative would silently be lost."""
    children, aux = kind.flatten(x)
    children = list(children)
    value = getattr(x, name)
    hits = [i for i, c in enumerate(children) if c is value]
    if len(hits) == 1:
        return children, aux, hits[0]
    try:  # aliased children (w is b) or a property over a child: probe unflatten
        probes = [_Probe() for _ in children]
        got = getattr(kind.unflatten(aux, tuple(probes)), name)
        for i, pr in enumerate(probes):
            if got is pr:
                return children, aux, i
        if isinstance(got, (list, tuple)) and len(got) == len(value):
            at = {id(pr): i for i, pr in enumerate(probes)}
            if got and all(id(g) in at for g in got):
                return children, aux, tuple(at[id(g)] for g in got)
    except Exception:  # noqa: BLE001 - __init__ that computes on its children
        pass
    if hits:
        return children, aux, hits[0]
    if isinstance(value, (list, tuple)) and value:
        # the items are children (found by identity, each one once)
        items = [[i for i, c in enumerate(children) if c is v] for v in value]
        if all(len(h) == 1 for h in items):
            return children, aux, tuple(h[0] for h in items)
    if _is_static(value, aux):
        return children, aux, None
    cls = type(x).__name__
    fn = _flatten_name(kind, cls)
    raise NotImplementedError(
        f"differentiating through the attribute .{name} of a {cls} is not supported: "
        f"{fn} does not return it (or its items) as children (it computes or reorders "
        "its children, e.g. stores w transposed), so its derivative cannot be placed "
        f"in a {cls}; return the attribute itself from {fn}, or read the child the "
        "gradient should go to"
    )


def _flatten_name(kind, cls):
    """How to name the flatten function the user registered for ``cls`` in a
    message: ``Cls.tree_flatten`` (register_pytree_node_class), else the
    function's name and where it is defined."""
    fn = kind.flatten
    code = getattr(fn, "__code__", None)
    if code is not None and "tree_flatten" in code.co_names and fn.__module__ == "srcjax.pytree":
        return f"{cls}.tree_flatten"
    where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
    return f"the flatten function {getattr(fn, '__qualname__', fn)!s}{where} registered for {cls}"


def _static_attr(x, name):
    """``x.name`` for a static attribute of a registered pytree class instance
    (aux data, an int, a function): a constant, never differentiated or batched."""
    return getattr(x, name)


static_attr = register(
    Primitive("ad.static_attr", _static_attr, kind="structural", differentiable=False)
).facts(part="static_attr")
static_attr.samples = lambda rng: []


def _attr_adjoint(ct, x, name):
    """Sparse cotangent of ``x`` from the cotangent ``ct`` of ``x.name``: a list
    for a namedtuple; for a registered class, an instance of it with ``ct`` in
    the child ``x.name`` is and ``None`` (zero) in the others."""
    if ct is None:
        return None
    fields = getattr(type(x), "_fields", None)
    if fields is not None:
        out = [None] * len(fields)
        out[fields.index(name)] = ct
        return out
    kind = _class_kind(x)
    if kind is not None:
        children, aux, k = _attr_slot(x, name, kind)
        if k is None:
            return None
        out = [None] * len(children)
        if isinstance(k, tuple):  # a list attribute of children: its items' cotangents
            for j, i in enumerate(k):
                out[i] = _part(ct, j)
        else:
            out[k] = ct
        return _unflatten_sparse(kind, aux, out, children)
    raise NotImplementedError(
        f"differentiating through the attribute .{name} of a {type(x).__name__} is not "
        "supported: it is not a pytree node; register the class "
        "(srcjax.tree_util.register_pytree_node_class), or keep the parameters in a "
        "namedtuple or a dict"
    )


attr_adjoint = register(Primitive("ad.attr_adjoint", _attr_adjoint, kind="internal"))


def _attr_part(ct, x, name):
    """The part of a (sparse) cotangent or tangent ``ct`` of ``x`` that belongs
    to ``x.name`` (``None`` for a zero hole): the adjoint of ``ad.attr_adjoint``."""
    if ct is None:
        return None
    fields = getattr(type(x), "_fields", None)
    if fields is not None:
        return _part(ct, fields.index(name))
    kind = _class_kind(x)
    if kind is not None:
        _, _, k = _attr_slot(x, name, kind)
        if k is None:  # static: a zero tangent (forward mode has no None holes)
            from ..ad import _zeros_like

            return _zeros_like(getattr(x, name))
        if type(ct) is type(x):
            flat = list(kind.flatten(ct)[0])
            if isinstance(k, tuple):  # a list attribute of children
                return type(getattr(x, name))(flat[i] for i in k)
            return flat[k]
    return getattr(ct, name)


attr_part = register(Primitive("ad.attr_part", _attr_part, kind="internal"))


def _getattr_vjp(g, ans, x, name):
    return attr_adjoint(g, x, name)


def _getattr_jvp(t, ans, x, name):
    return attr_part(t, x, name)


getattr_.def_vjp(_getattr_vjp)
getattr_.def_jvp(_getattr_jvp)
getattr_.samples = lambda rng: []  # containers only; tested through grad


def_transpose_pair(attr_adjoint, attr_part)
attr_adjoint.samples = lambda rng: []


attr_part.samples = lambda rng: []


def _pysum(x, start=0):
    """Python's builtin ``sum``: adds the items of a list, or the rows of an array."""
    total = start
    for item in x:
        total = total + item
    return total


pysum = register(Primitive("ad.pysum", _pysum, kind="reduction"), sum)


def _pysum_shape(avals):
    """jit's abstract value of ``sum`` of a list or tuple of weakly typed values:
    Python's ``0 + a + b ...``, weak as JAX computes it (``sum([1.0, 2.0])`` is a
    weak float32). Not for a strong item: the run time adds a Python float as the
    float32 scalar jit holds it (``sum([f16_x, 1.0])``: NumPy's float32, JAX's
    float16), which this value must not hide."""
    from ... import dtypes

    x = avals.get("x")
    if type(x) not in (list, tuple) or not x or "start" in avals:
        return None
    if not all(getattr(a, "weak_type", False) and hasattr(a, "ptype") for a in x):
        return None
    try:
        dt, weak = dtypes.weak_promotion(
            [(int, True)] + [(a.ptype or a.dtype, a.weak_type) for a in x]
        )
        shape = np.broadcast_shapes(*(a.shape for a in x))
    except (TypeError, ValueError, KeyError):
        return None
    return (tuple(shape), np.dtype(dt), weak)


pysum.facts(result_shape=_pysum_shape)


def _pysum_adjoint(ct, x):
    """Cotangent of ``x`` in ``sum(x)``: ``ct`` for every item (summed to its shape)."""
    from ..ad import unbroadcast

    if isinstance(x, (list, tuple)):
        return [unbroadcast(ct, item) for item in x]
    x = np.asarray(x)
    return np.broadcast_to(ct, x.shape[1:]) * np.ones((x.shape[0],) + (1,) * (x.ndim - 1), x.dtype)


pysum_adjoint = register(Primitive("ad.pysum_adjoint", _pysum_adjoint, kind="internal"))


def _pysum_vjp(g, ans, x, start=0):
    return pysum_adjoint(g, x)


def _pysum_jvp(t, ans, x, start=0):
    return pysum(t)


def _pysum_vjp_start(g, ans, x, start=0):
    return unbroadcast(g, start)


def _pysum_jvp_start(t, ans, x, start=0):
    return broadcast_like(t, ans)


pysum.def_vjp(_pysum_vjp, _pysum_vjp_start)
pysum.def_jvp(_pysum_jvp, _pysum_jvp_start)
pysum.samples = lambda rng: [
    ((rng.normal(size=(4, 3)),), {}),
    ((rng.normal(size=(4, 3)), rng.normal(size=(3,))), {}),
    (([rng.normal(size=(2,)), rng.normal(size=(2,))], rng.normal()), {}),
]


def_adjoint_of(pysum_adjoint, pysum)
pysum_adjoint.samples = lambda rng: [((rng.normal(size=(3,)), rng.normal(size=(4, 3))), {})]
