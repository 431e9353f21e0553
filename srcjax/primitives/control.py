"""Primitives the transforms themselves emit: seeding, zero handling, container
updates and ``stop_gradient``.

Public names live in the ``ad`` namespace of generated code (``ad.seed``),
except ``lax.stop_gradient`` (also ``srcjax.stop_gradient``).
"""

from __future__ import annotations

import collections

import numpy as np

from .._dict_order import sorted_keys
from .._prng_key import PRNGKeyArray
from ..errors import NonDifferentiableError
from . import hooks
from .ad import unbroadcast
from .registry import Primitive, register
from .registry import alias as registry_alias

__all__ = ["stop_gradient"]


_ONES: dict = {}


def _seed(out):
    """Cotangent seed for ``grad``: 1 of ``out``'s dtype.

    Raises TypeError as JAX does when ``out`` is not a real floating scalar
    (``grad`` requires real scalar outputs; see ``jax.grad``).
    """
    dt = getattr(out, "dtype", None)
    if dt is not None and dt.kind == "f" and out.shape == ():
        one = _ONES.get(dt)
        if one is None:
            one = _ONES[dt] = dt.type(1.0)
        return one
    if isinstance(out, (tuple, list, dict)):
        raise NonDifferentiableError(
            f"Gradient only defined for scalar-output functions; the output is a "
            f"{type(out).__name__}",
            hint="if the function returns (value, aux), pass has_aux=True; "
            "otherwise use srcjax.vjp / srcjax.jacrev",
        )
    shape = np.shape(out)
    if shape != ():
        raise NonDifferentiableError(
            f"Gradient only defined for scalar-output functions. Output had shape: {shape}.",
            hint="reduce the output (e.g. jnp.sum) or use srcjax.vjp / srcjax.jacrev",
        )
    if dt is None:
        if isinstance(out, float):
            return 1.0
        if isinstance(out, (bool, int, np.integer, np.bool_)):
            dt = np.asarray(out).dtype
        else:
            raise NonDifferentiableError(
                f"grad requires real-valued outputs; got a value of type {type(out).__name__}"
            )
    if dt.kind != "f":
        raise NonDifferentiableError(
            f"grad requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {dt.name}.",
            hint="for holomorphic functions use a real loss; for integers, cast to float",
        )
    return dt.type(1.0)


seed = register(Primitive("ad.seed", _seed, kind="internal", differentiable=False))
seed.facts(array_result=True)


def _seed_holomorphic(out):
    """Cotangent seed for ``grad(..., holomorphic=True)``: 1 of ``out``'s complex
    dtype; TypeError (JAX's message) for a real or non-scalar output."""
    dt = getattr(out, "dtype", None)
    if dt is None and isinstance(out, complex):
        return 1.0 + 0.0j
    if dt is None or dt.kind != "c":
        name = dt.name if dt is not None else type(out).__name__
        raise NonDifferentiableError(
            f"grad with holomorphic=True requires outputs with complex dtype, but got {name}.",
            hint="return a complex value, or use holomorphic=False for a real loss",
        )
    if np.shape(out) != ():
        raise NonDifferentiableError(
            "Gradient only defined for scalar-output functions. Output had shape: "
            f"{np.shape(out)}.",
            hint="reduce the output (e.g. jnp.sum) or use srcjax.vjp / srcjax.jacrev",
        )
    return dt.type(1.0)


seed_holomorphic = register(
    Primitive("ad.seed_holomorphic", _seed_holomorphic, kind="internal", differentiable=False)
).facts(array_result=True)
seed_holomorphic.samples = lambda rng: [((np.complex64(1.5 - 2j),), {})]


def _leaf_type(x, skip: int) -> str:
    shape = np.shape(x)[skip:]
    dt = getattr(x, "dtype", None)
    name = dt.name if dt is not None else type(x).__name__
    return f"{name}[{','.join(str(d) for d in shape)}]"


def _check_cotangent(ct, out, ct_batch=0, out_batch=0):
    """The output cotangent ``ct`` handed to a ``vjp`` function, checked against
    the primal output ``out`` as ``jax.vjp``'s pullback checks it: the output's
    pytree structure, and each leaf of the output's shape and (canonical)
    floating dtype. 64-bit cotangents narrow when x64 is off and Python scalars
    take the output's dtype (JAX canonicalizes both). As in srcjax's sparse
    cotangents, ``None`` stands for a zero cotangent and a list may stand for a
    tuple. ``ct_batch``/``out_batch`` count leading vmap
    axes to skip (set by the batching rule).

    Raises:
        ValueError (``TransformValueError``) on a structure, shape or dtype mismatch.
    """
    return _checked_ct(ct, out, ct_batch, out_batch, ct, out)


def _ct_mismatch(what: str, ct_all, out_all):
    from ..errors import TransformValueError
    from ..tree_util import tree_structure

    return TransformValueError(
        f"unexpected {what} of the cotangent passed to the function returned by vjp"
        f" (the cotangent has structure {tree_structure(ct_all)}, the differentiated "
        f"function's output {tree_structure(out_all)}). Pass a cotangent with the "
        "output's structure, shapes and dtypes, as jax.vjp requires."
    )


def _checked_ct(c, o, cb, ob, ct_all, out_all):
    if c is None:
        return c
    if isinstance(o, (list, tuple)):
        if not isinstance(c, (list, tuple)) or len(c) != len(o):
            raise _ct_mismatch("tree structure", ct_all, out_all)
        new = [_checked_ct(ci, oi, cb, ob, ct_all, out_all) for ci, oi in zip(c, o)]
        if all(a is b for a, b in zip(new, c)):
            return c
        return type(c)(*new) if hasattr(c, "_fields") else type(c)(new)
    if isinstance(o, dict):
        if not isinstance(c, dict) or set(c) != set(o):
            raise _ct_mismatch("tree structure", ct_all, out_all)
        new = {k: _checked_ct(v, o[k], cb, ob, ct_all, out_all) for k, v in c.items()}
        if all(new[k] is c[k] for k in c):
            return c
        return dict_like(c, new)
    kind = _class_kind(o)
    if kind is not None:
        if type(c) is not type(o):
            raise _ct_mismatch("tree structure", ct_all, out_all)
        cc, aux = kind.flatten(c)
        oc, _ = kind.flatten(o)
        new = [_checked_ct(ci, oi, cb, ob, ct_all, out_all) for ci, oi in zip(cc, oc)]
        if all(a is b for a, b in zip(new, cc)):
            return c
        return kind.unflatten(aux, tuple(new))
    if o is None:
        raise _ct_mismatch("tree structure", ct_all, out_all)
    if isinstance(c, (dict, list, tuple)) or _class_kind(c) is not None:
        raise _ct_mismatch("tree structure", ct_all, out_all)
    if np.ndim(c) < cb:  # an unbatched leaf inside a batched container
        return c
    return _checked_ct_leaf(c, o, cb, ob)


def _checked_ct_leaf(c, o, cb, ob):
    from ..dtypes import canonicalize_dtype
    from ..errors import TransformValueError

    o_dt = getattr(o, "dtype", None)
    if o_dt is None:
        o_dt = np.asarray(o).dtype
    c_dt = getattr(c, "dtype", None)
    o_shape = np.shape(o)[ob:]
    ok = np.shape(c)[cb:] == o_shape
    if ok and o_dt.kind in "fc" and c_dt is not None:
        # (compared as JAX types them: an output NumPy promotion made float64 while
        # x64 is off is float32 in JAX, and so is the cotangent a user passes)
        ok = canonicalize_dtype(c_dt) == canonicalize_dtype(o_dt)
    if not ok:
        raise TransformValueError(
            "unexpected shape/dtype of the cotangent passed to the function returned by "
            f"vjp: got {_leaf_type(c, cb)}, but expected "
            f"{o_dt.name}[{','.join(str(d) for d in o_shape)}] because the corresponding "
            "output of the differentiated function has that type."
        )
    if o_dt.kind in "fc" and (c_dt is None or c_dt != o_dt):
        return np.asarray(c, o_dt)
    return c


check_cotangent = register(Primitive("ad.check_cotangent", _check_cotangent, kind="internal"))
check_cotangent.facts(effectful=True)  # (checks raise on stand-ins)


def _check_cotangent_vjp(g, ans, ct, out, ct_batch=0, out_batch=0):
    return g


def _check_cotangent_jvp(t, ans, ct, out, ct_batch=0, out_batch=0):
    return t


check_cotangent.def_vjp(_check_cotangent_vjp)
check_cotangent.def_jvp(_check_cotangent_jvp)
check_cotangent.samples = lambda rng: [((rng.normal(size=(3,)), rng.normal(size=(3,))), {})]


def _cotangent_like(ct, x):
    """``ct`` as a cotangent for ``x``: a materialized scalar zero becomes zeros of
    ``x``'s shape and dtype; arrays are cast to ``x``'s floating dtype."""
    if isinstance(x, (dict, list, tuple)):
        return ct  # (before np.shape: that builds an object array of a container)
    xs = np.shape(x)
    if np.shape(ct) != xs:
        ct = np.broadcast_to(ct, xs).copy()
    dt = getattr(x, "dtype", None)
    if dt is not None and getattr(ct, "dtype", dt) != dt and dt.kind == "f":
        ct = np.asarray(ct, dtype=dt)
    if isinstance(ct, np.ndarray) and not ct.flags.writeable:
        ct = ct.copy()  # a broadcast view: gradients are ordinary arrays (g *= 0.5)
    return ct


cotangent_like = register(Primitive("ad.cotangent_like", _cotangent_like, kind="internal"))


def _cotangent_like_vjp(g, ans, ct, x):
    return g


def _cotangent_like_jvp(t, ans, ct, x):
    return cotangent_like(t, x)  # filling holes with zeros is linear


cotangent_like.def_vjp(_cotangent_like_vjp)
cotangent_like.def_jvp(_cotangent_like_jvp)
cotangent_like.samples = lambda rng: [((rng.normal(size=(3,)), rng.normal(size=(3,))), {})]


def _setitem(x, idx, v):
    """Functional ``x[idx] = v`` for Python containers (returns a new container).

    Arrays are immutable as in JAX: raises TypeError pointing to ``x.at[idx].set(v)``.
    """
    if isinstance(x, dict):
        out = dict(x)
        out[idx] = v
        return out
    if isinstance(x, list):
        out = list(x)
        out[idx] = v
        return out
    raise TypeError(
        f"'{type(x).__name__}' object does not support item assignment. JAX arrays are "
        "immutable. Instead of ``x[idx] = y``, use ``x = x.at[idx].set(y)`` or another "
        ".at[] method: https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html"
    )


setitem = register(Primitive("ad.setitem", _setitem, kind="structural")).facts(tree_valued=True)


def _setitem_vjp_x(g, ans, x, idx, v):
    return forget(g, idx)


def _setitem_vjp_v(g, ans, x, idx, v):
    return part(g, idx, v)


def _setitem_jvp_x(t, ans, x, idx, v):
    return setitem(t, idx, 0.0)


def _setitem_jvp_v(t, ans, x, idx, v):
    return tree_index_adjoint(t, x, idx)


setitem.def_vjp(_setitem_vjp_x, None, _setitem_vjp_v)
setitem.def_jvp(_setitem_jvp_x, None, _setitem_jvp_v)
setitem.samples = lambda rng: []  # containers only; tested through grad


def _stop_gradient(x):
    """Identity whose derivative is zero (``jax.lax.stop_gradient``). Pytrees pass
    through unchanged."""
    return x


stop_gradient = register(
    Primitive("lax.stop_gradient", _stop_gradient, kind="elementwise", differentiable=False)
)


# ---------------------------------------------------------------------------
# Sparse cotangents of Python containers.
#
# The adjoint of ``w = params["w"]`` is a container holding ``w_bar`` at "w"
# and *nothing* elsewhere: ``None`` stands for a zero cotangent, so reading
# six entries of a parameter dict does not allocate six dicts of zero arrays.
# ``ad.cotangent_like`` fills the holes with zeros once, at the end.


def _tree_add(a, b):
    """``a + b`` for cotangents that may be ``None`` (zero) or containers."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict_like(a, a.items())
        for k, v in b.items():
            out[k] = _tree_add(out.get(k), v)
        return out
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        n = max(len(a), len(b))
        kind = type(a) if isinstance(a, tuple) and not hasattr(a, "_fields") else list
        a = list(a) + [None] * (n - len(a))
        b = list(b) + [None] * (n - len(b))
        return kind(_tree_add(x, y) for x, y in zip(a, b))
    ka = _class_kind(a)
    if ka is not None and type(b) is type(a):
        ca, aux = ka.flatten(a)
        cb, _ = ka.flatten(b)
        ca, cb = list(ca), list(cb)
        out = [_tree_add(x, y) for x, y in zip(ca, cb)]
        return _unflatten_sparse(ka, aux, out, [x if x is not None else y for x, y in zip(ca, cb)])
    return a + b


tree_add = register(Primitive("ad.tree_add", _tree_add, kind="internal")).facts(tree_valued=True)


def _tree_add_vjp_a(g, ans, a, b):
    return densify(g, a)


def _tree_add_vjp_b(g, ans, a, b):
    return densify(g, b)


def _tree_add_jvp_a(t, ans, a, b):
    return t


def _tree_add_jvp_b(t, ans, a, b):
    return t


tree_add.def_vjp(_tree_add_vjp_a, _tree_add_vjp_b)
tree_add.def_jvp(_tree_add_jvp_a, _tree_add_jvp_b)
tree_add.samples = lambda rng: [((rng.normal(size=(3,)), rng.normal(size=(3,))), {})]


def _tree_index_adjoint(ct, x, idx):
    """The cotangent of ``x`` from ``x[idx]``'s cotangent ``ct``: sparse for containers,
    dense (scatter-add into zeros) for arrays."""
    if isinstance(x, dict):
        return {idx: ct}
    if isinstance(x, (list, tuple)):
        out = [None] * len(x)
        if isinstance(idx, slice):
            for j, v in zip(range(*idx.indices(len(x))), ct):
                out[j] = v
        else:
            out[idx] = ct
        return out
    if isinstance(idx, int) and not isinstance(idx, bool) and np.ndim(x) == 0:
        # x is a zero cotangent standing for a whole container (a hole a first-order
        # adjoint read items of: grad(grad) through a scan's tuple carry, user R):
        # it is a constant, so no cotangent flows back into it
        return None
    from .ad import index_adjoint

    return index_adjoint(ct, x, idx)


tree_index_adjoint = register(
    Primitive("ad.tree_index_adjoint", _tree_index_adjoint, kind="internal")
).facts(tree_valued=True)


def _tia_vjp(g, ans, ct, x, idx):
    return part(g, idx, ct)


def _tia_jvp(t, ans, ct, x, idx):
    return tree_index_adjoint(t, x, idx)


tree_index_adjoint.def_vjp(_tia_vjp)
tree_index_adjoint.def_jvp(_tia_jvp)
tree_index_adjoint.samples = lambda rng: [((rng.normal(size=(3,)), rng.normal(size=(2, 3)), 1), {})]


def _pop(lst):
    """Pop the last cotangent of a list's cotangent (``None`` = all zero)."""
    if lst is None:
        return None
    return lst.pop()


pop = register(Primitive("ad.pop", _pop, kind="internal", differentiable=False))


def dict_like(x, pairs):
    """A dict of ``x``'s type holding ``pairs``: a ``defaultdict`` keeps its
    ``default_factory`` (JAX's pytree node keeps it as aux data), an
    ``OrderedDict`` stays one."""
    if type(x) is dict:
        return dict(pairs)
    if isinstance(x, collections.defaultdict):
        return type(x)(x.default_factory, pairs)
    return type(x)(pairs)


def _jax_keys(x: dict):
    """``x``'s keys in the order JAX's pytrees give them: sorted for a dict or a
    defaultdict (``_dict_order``), as they are for an OrderedDict. A gradient's
    dicts come out in that order (``vjp``'s function gave the user's order)."""
    if type(x) is dict or type(x) is collections.defaultdict:
        return sorted_keys(x)
    return tuple(x)


def _fill(g, x):
    if type(g) is np.ndarray and type(x) is np.ndarray:
        # the common leaf first: an array cotangent of an array of its shape and dtype
        if g.shape == x.shape and g.dtype == x.dtype and g.flags.writeable:
            return g
    if g is None:
        if isinstance(x, dict):
            return dict_like(x, ((k, _fill(None, x[k])) for k in _jax_keys(x)))
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return type(x)(*[_fill(None, v) for v in x])
        if isinstance(x, (list, tuple)):
            return type(x)(_fill(None, v) for v in x)
        if x is None:
            return None
        kind = _class_kind(x)
        if kind is not None:
            xc, aux = kind.flatten(x)
            return kind.unflatten(aux, tuple(_fill(None, v) for v in xc))
        dt = getattr(x, "dtype", None)
        if dt is None:
            return np.zeros((), np.float32 if isinstance(x, float) else np.float64)
        return np.zeros(np.shape(x), dt if dt.kind in "fc" else np.float32)
    if isinstance(x, dict):
        gd = g if isinstance(g, dict) else {}
        return dict_like(x, ((k, _fill(gd.get(k), x[k])) for k in _jax_keys(x)))
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_fill(gi, v) for gi, v in zip(_seq(g, len(x)), x)])
    if isinstance(x, (list, tuple)):
        return type(x)(_fill(gi, v) for gi, v in zip(_seq(g, len(x)), x))
    kind = _class_kind(x)
    if kind is not None:
        xc, aux = kind.flatten(x)
        gc = list(kind.flatten(g)[0]) if type(g) is type(x) else [None] * len(xc)
        return kind.unflatten(aux, tuple(_fill(gi, v) for gi, v in zip(gc, xc)))
    shape = np.shape(x)
    if np.shape(g) != shape:
        g = np.broadcast_to(g, shape).copy()
    dt = getattr(x, "dtype", None)
    if dt is not None and dt.kind == "f" and getattr(g, "dtype", dt) != dt:
        g = np.asarray(g, dtype=dt)
    if isinstance(g, np.ndarray) and not g.flags.writeable:
        g = g.copy()  # a broadcast view: gradients are ordinary arrays
    return g


def _seq(g, n):
    if g is None:
        return [None] * n
    g = list(g)
    return g + [None] * (n - len(g))


def _cotangent_like_tree(ct, x):
    """Final form of ``x``'s cotangent: holes (``None``) become zeros of the right
    shape and dtype, scalars are broadcast, floating dtypes match ``x``."""
    return _fill(ct, x)


cotangent_like.impl = _cotangent_like_tree
registry_alias(cotangent_like, _cotangent_like_tree)


def _part(ct, idx, like=None):
    """``ct[idx]`` of a sparse container cotangent; a hole gives zeros like ``like``
    (or ``None`` when ``like`` is not given)."""
    out = None
    if ct is not None:
        if isinstance(ct, dict):
            out = ct.get(idx)
        elif isinstance(ct, (list, tuple)):
            try:
                out = ct[idx]
            except IndexError:
                out = None
        else:
            out = ct[idx]
    if out is None and like is not None:
        return _fill(None, like)
    return out


part = register(Primitive("ad.part", _part, kind="internal")).facts(tree_valued=True)


def _part_vjp(g, ans, ct, idx, like=None):
    return tree_index_adjoint(g, ct, idx)


def _part_jvp(t, ans, ct, idx, like=None):
    return part(t, idx, like)


part.def_vjp(_part_vjp)
part.def_jvp(_part_jvp)
part.samples = lambda rng: [((rng.normal(size=(2, 3)), 1), {})]


def _forget(ct, idx):
    """A copy of a container cotangent with the entry at ``idx`` set to zero (hole)."""
    if ct is None:
        return None
    if isinstance(ct, dict):
        out = dict(ct)
        out.pop(idx, None)
        return out
    if isinstance(ct, (list, tuple)):
        out = list(ct)
        out[idx] = None
        return out
    out = np.array(ct, copy=True)
    out[idx] = 0
    return out


forget = register(Primitive("ad.forget", _forget, kind="internal")).facts(tree_valued=True)


def _forget_vjp(g, ans, ct, idx):
    return forget(g, idx)


def _forget_jvp(t, ans, ct, idx):
    return forget(t, idx)


forget.def_vjp(_forget_vjp)
forget.def_jvp(_forget_jvp)
forget.samples = lambda rng: [((rng.normal(size=(2, 3)), 1), {})]


def _pop_like(lst, like):
    """Pop the last entry of a list cotangent; a hole gives zeros like ``like``."""
    out = None if lst is None or not lst else lst.pop()
    if out is None:
        return _fill(None, like)
    return out


pop_like = register(Primitive("ad.pop_like", _pop_like, kind="internal", differentiable=False))


def _push(lst, v):
    """Append ``v`` to a list cotangent (``None`` = empty) and return the list."""
    if lst is None:
        lst = []
    lst.append(v)
    return lst


push = register(Primitive("ad.push", _push, kind="internal", differentiable=False))


def mark_tree_outputs() -> None:
    """Flag the registered primitives whose result is a Python container."""
    from .registry import REGISTRY

    for public in (
        "jnp.split",
        "jnp.array_split",
        "jnp.hsplit",
        "jnp.vsplit",
        "jnp.unstack",
        "jnp.meshgrid",
        "jnp.linalg.slogdet",
        "jnp.linalg.eigh",
        "jnp.linalg.qr",
        "jnp.linalg.svd",
    ):
        if public in REGISTRY:
            REGISTRY[public].returns_tree = True


# ---------------------------------------------------------------------------
# Attribute reads on pytrees (namedtuple fields) and Python's builtin sum.


def _getattr(x, name):
    """``x.name`` for pytree nodes: namedtuple fields and the attributes of
    registered pytree class instances (differentiable in ``x``)."""
    if x is None:  # the zero tangent/cotangent of a node
        return None
    return getattr(x, name)


getattr_ = register(Primitive("ad.getattr", _getattr, kind="structural"))


def _class_kind(x):
    """The pytree node kind of an instance of a registered class (not a builtin
    container, namedtuple or None), else ``None``."""
    t = type(x)
    if t is np.ndarray or x is None or isinstance(x, (tuple, list, dict)):
        return None  # (arrays first: vmap's per-example loops ask for every row)
    if not _TREE_REGISTRY:
        from ..tree_util import _REGISTRY

        _TREE_REGISTRY.append(_REGISTRY)
    return _TREE_REGISTRY[0].get(t)


_TREE_REGISTRY: list = []  # tree_util's class registry (imported on first use)


class _Probe:
    """A stand-in child: ``tree_unflatten`` with probes tells which child an
    attribute reads (``m.w`` is child 0 when ``unflatten(aux, probes).w`` is probe 0)."""

    __slots__ = ()


def _in_aux(value, aux) -> bool:
    if value is aux:
        return True
    items = aux.values() if isinstance(aux, dict) else aux
    if isinstance(items, (tuple, list)) or isinstance(aux, dict):
        return any(v is value for v in items)
    return False


def class_map(fn, x, *others):
    """``fn(child, *other_children)`` over the children of ``x``, an instance of a
    registered pytree class, rebuilt as one (``None`` children allowed); ``others``
    are instances of the same class or ``None`` (all children ``None``)."""
    kind = _class_kind(x)
    children, aux = kind.flatten(x)
    children = list(children)
    rest = [
        list(kind.flatten(o)[0]) if type(o) is type(x) else [None] * len(children) for o in others
    ]
    out = [fn(c, *[r[i] for r in rest]) for i, c in enumerate(children)]
    return _unflatten_sparse(kind, aux, out, children)


def _attr_slot(x, name, kind):
    """``(children, aux, k)``: ``x.name`` is child ``k`` of ``x``'s one-level
    flatten; ``k`` is ``None`` when the attribute is static (aux data, or not a
    floating value). Raises NotImplementedError when ``x.name`` is a floating
    value that is no child (a child computed or stored transposed by
    ``tree_flatten``): its derivative would silently be lost."""
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
    except Exception:  # noqa: BLE001 - __init__ that computes on its children
        pass
    if hits:
        return children, aux, hits[0]
    if _is_static(value, aux):
        return children, aux, None
    cls = type(x).__name__
    raise NotImplementedError(
        f"differentiating through the attribute .{name} of a {cls} is not supported: "
        f"{cls}.tree_flatten does not return it as a child (it computes or reorders its "
        "children, e.g. stores w transposed), so its derivative cannot be placed in a "
        f"{cls}; return the attribute itself from tree_flatten, or read the child the "
        "gradient should go to"
    )


def _is_static(value, aux) -> bool:
    """An attribute value that is no child is static when it is aux data or holds
    no floating leaf (an int, a string, a function); a floating value computed from
    the children (w stored transposed) is not: its derivative would be lost."""
    if _in_aux(value, aux):
        return True
    from ..tree_util import tree_leaves

    try:
        return not any(_is_inexact(v) for v in tree_leaves(value))
    except Exception:  # noqa: BLE001
        return not _is_inexact(value)


def static_attrs(x) -> tuple:
    """The names of the instance attributes of ``x`` (a registered pytree class
    instance) that are static: constants for every transform (see ``_is_static``)."""
    kind = _class_kind(x)
    children, aux = kind.flatten(x)
    children = list(children)
    attrs = getattr(x, "__dict__", None) or {}
    return tuple(
        a
        for a in sorted(attrs)
        if not any(attrs[a] is c for c in children) and _is_static(attrs[a], aux)
    )


def _static_attr(x, name):
    """``x.name`` for a static attribute of a registered pytree class instance
    (aux data, an int, a function): a constant, never differentiated or batched."""
    return getattr(x, name)


static_attr = register(
    Primitive("ad.static_attr", _static_attr, kind="structural", differentiable=False)
)
static_attr.samples = lambda rng: []


def _is_inexact(v) -> bool:
    if isinstance(v, (float, complex)):
        return True
    dt = getattr(v, "dtype", None)
    return dt is not None and getattr(dt, "kind", "") in "fc"


def _unflatten_sparse(kind, aux, children, like):
    """``kind.unflatten`` with ``None`` (zero) children; where the class cannot
    take ``None`` (its ``__init__`` computes on children), zeros like ``like``."""
    if all(c is not None for c in children):
        return kind.unflatten(aux, tuple(children))
    try:
        out = kind.unflatten(aux, tuple(children))
        back = list(kind.flatten(out)[0])
        if len(back) == len(children) and all(b is c for b, c in zip(back, children)):
            return out
    except Exception:  # noqa: BLE001 - checked below with zeros
        pass
    # __init__ converts or checks its children (np.asarray(None) is not None)
    full = [_fill(None, lk) if c is None else c for c, lk in zip(children, like)]
    return kind.unflatten(aux, tuple(full))


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
            from .ad import _zeros_like

            return _zeros_like(getattr(x, name))
        if type(ct) is type(x):
            return list(kind.flatten(ct)[0])[k]
    return getattr(ct, name)


attr_part = register(Primitive("ad.attr_part", _attr_part, kind="internal"))


def _getattr_vjp(g, ans, x, name):
    return attr_adjoint(g, x, name)


def _getattr_jvp(t, ans, x, name):
    return attr_part(t, x, name)


getattr_.def_vjp(_getattr_vjp)
getattr_.def_jvp(_getattr_jvp)
getattr_.samples = lambda rng: []  # containers only; tested through grad


def _attr_adjoint_vjp(g, ans, ct, x, name):
    return attr_part(g, x, name)


def _attr_adjoint_jvp(t, ans, ct, x, name):
    return attr_adjoint(t, x, name)


attr_adjoint.def_vjp(_attr_adjoint_vjp)
attr_adjoint.def_jvp(_attr_adjoint_jvp)
attr_adjoint.samples = lambda rng: []


def _attr_part_vjp(g, ans, ct, x, name):
    return attr_adjoint(g, x, name)


def _attr_part_jvp(t, ans, ct, x, name):
    return attr_part(t, x, name)


attr_part.def_vjp(_attr_part_vjp)
attr_part.def_jvp(_attr_part_jvp)
attr_part.samples = lambda rng: []


def _pysum(x, start=0):
    """Python's builtin ``sum``: adds the items of a list, or the rows of an array."""
    total = start
    for item in x:
        total = total + item
    return total


pysum = register(Primitive("ad.pysum", _pysum, kind="reduction"), sum)


def _pysum_adjoint(ct, x):
    """Cotangent of ``x`` in ``sum(x)``: ``ct`` for every item (summed to its shape)."""
    from .ad import unbroadcast

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


def _pysum_adjoint_vjp(g, ans, ct, x):
    return pysum(g)


def _pysum_adjoint_jvp(t, ans, ct, x):
    return pysum_adjoint(t, x)


pysum_adjoint.def_vjp(_pysum_adjoint_vjp)
pysum_adjoint.def_jvp(_pysum_adjoint_jvp)
pysum_adjoint.samples = lambda rng: [((rng.normal(size=(3,)), rng.normal(size=(4, 3))), {})]


def _check_aux(out):
    """``has_aux=True`` requires ``fun`` to return a pair ``(output, aux)`` (as JAX)."""
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        what = f"a {type(out).__name__}"
        if isinstance(out, (tuple, list)):
            what += f" of length {len(out)}"
        raise TypeError(
            f"has_aux=True requires the function to return a pair (output, aux); it returned {what}"
        )


check_aux = register(Primitive("ad.check_aux", _check_aux, kind="internal", differentiable=False))
check_aux.facts(effectful=True)


def _check_bwd(out, n, name, primals=None):
    """``out`` of a custom_vjp ``bwd`` rule, checked to hold one cotangent per
    differentiable argument (``jax.custom_vjp`` raises TypeError too) and, given
    the differentiable ``primals`` (a tuple), each shaped like its argument, leaf
    by leaf (``None`` is a zero cotangent): JAX's ValueError otherwise (a scalar
    cotangent for a vector input used to become a scalar "gradient")."""
    if not isinstance(out, (tuple, list)) or len(out) != n:
        got = (
            f"a {type(out).__name__} of length {len(out)}"
            if isinstance(out, (tuple, list))
            else (f"a {type(out).__name__}")
        )
        raise TypeError(
            f"the custom_vjp bwd rule of {name} must return a tuple of {n} cotangent(s), "
            f"one per differentiable argument; it returned {got}"
        )
    if primals is not None:
        for i, (ct, p) in enumerate(zip(out, primals)):
            _check_bwd_leaf(ct, p, f"output[{i}]", name)
    return out


def _check_bwd_leaf(ct, p, path, name):
    if ct is None:
        return
    if isinstance(p, (dict, list, tuple)) or _class_kind(p) is not None:
        from ..tree_util import tree_flatten

        cl, ctree = tree_flatten(ct, is_leaf=lambda v: v is None)
        pl, ptree = tree_flatten(p)
        if len(cl) != len(pl):
            raise ValueError(
                f"Custom VJP bwd rule of {name} must produce an output with the same "
                f"container structure as the args tuple of the primal function, but at "
                f"{path} it produced {ctree} for an input of structure {ptree}"
            )
        for j, (a, b) in enumerate(zip(cl, pl)):
            _check_bwd_leaf(a, b, f"{path} leaf {j}", name)
        return
    cs, ps = np.shape(ct), np.shape(p)
    if cs != ps:
        dt = np.result_type(ct).name
        raise ValueError(
            f"Custom VJP bwd rule of {name} must produce an output with the same shape "
            f"as the args tuple of the primal function, but at {path} the bwd rule "
            f"produced an output of shape {dt}{list(cs)} corresponding to an input of "
            f"shape {np.result_type(p).name}{list(ps)}"
        )


check_bwd = register(Primitive("ad.check_bwd", _check_bwd, kind="internal", differentiable=False))
check_bwd.facts(effectful=True)


# ---------------------------------------------------------------------------
# lax.scan support: slicing and stacking pytrees along the leading axis.


def _leaves_map(fn, *trees):
    from ..tree_util import tree_map

    return tree_map(fn, *trees)


def leading_length(xs) -> int | None:
    """The common leading size of ``xs``'s leaves (``lax.scan``'s trip count),
    ``None`` when ``xs`` has no leaves. Raises ValueError when the sizes differ."""
    from ..tree_util import tree_leaves

    leaves = tree_leaves(xs)
    if not leaves:
        return None
    lengths = {np.shape(v)[0] for v in leaves}
    if len(lengths) != 1:
        raise ValueError(f"scan got leading axes of different sizes: {sorted(lengths)}")
    return lengths.pop()


def _scan_length(xs, length=None):
    """Trip count of ``lax.scan``: ``length`` or the leading size of ``xs``'s leaves."""
    n = None if xs is None else leading_length(xs)
    if n is None:
        if length is None:
            raise ValueError("scan got no xs and no length")
        return int(length)
    if length is not None and int(length) != n:
        raise ValueError(f"scan got length={length} but xs have leading size {n}")
    return n


scan_length = register(
    Primitive("ad.scan_length", _scan_length, kind="internal", differentiable=False)
)


def _keys(d):
    """The keys of the dict ``d`` as a list, in iteration order (``for k in d.items()``)."""
    if not isinstance(d, dict):
        raise TypeError(f"keys()/values()/items() need a dict, got {type(d).__name__}")
    return list(d)


keys = register(Primitive("ad.keys", _keys, kind="internal", differentiable=False))


def _seq_len(xs):
    """``len(xs)`` for ``for v in xs`` in transformed code (the loop reads
    ``xs[i]``). A dict is refused: Python iterates its keys, and ``xs[i]`` would
    read values (or fail with ``KeyError: 0``)."""
    if isinstance(xs, dict):
        raise TypeError(
            "`for k in d` over a dict is not supported inside transformed functions: "
            "write `for k in d.keys()` (or `.items()`, `.values()`)"
        )
    return len(xs)


seq_len = register(Primitive("ad.seq_len", _seq_len, kind="internal", differentiable=False))


def _tree_slice(xs, i):
    """``xs[i]`` for every leaf of the pytree ``xs``."""
    if isinstance(xs, np.ndarray):
        return xs[i]
    return _leaves_map(lambda a: a[i], xs)


tree_slice = register(Primitive("ad.tree_slice", _tree_slice, kind="structural"))


def _tree_slice_adjoint(ct, xs, i):
    """Cotangent of ``xs`` from that of ``xs[i]``: zeros with ``ct`` at row ``i``."""

    def one(c, a):
        out = np.zeros(np.shape(a), dtype=np.result_type(a, c))
        out[i] = c
        return out

    if isinstance(xs, np.ndarray) and ct is not None:
        return one(ct, xs)
    ct = _fill(ct, _tree_slice(xs, i))  # a sparse cotangent: holes become zeros
    return _leaves_map(one, ct, xs)


tree_slice_adjoint = register(
    Primitive("ad.tree_slice_adjoint", _tree_slice_adjoint, kind="internal")
)


def _tree_slice_vjp(g, ans, xs, i):
    return tree_slice_adjoint(g, xs, i)


def _tree_slice_jvp(t, ans, xs, i):
    return tree_slice(t, i)


tree_slice.def_vjp(_tree_slice_vjp)
tree_slice.def_jvp(_tree_slice_jvp)
tree_slice.samples = lambda rng: [((rng.normal(size=(4, 3)), 2), {})]


def _tsa_vjp(g, ans, ct, xs, i):
    return tree_slice(g, i)


def _tsa_jvp(t, ans, ct, xs, i):
    return tree_slice_adjoint(t, xs, i)


tree_slice_adjoint.def_vjp(_tsa_vjp)
tree_slice_adjoint.def_jvp(_tsa_jvp)
tree_slice_adjoint.samples = lambda rng: [((rng.normal(size=(3,)), rng.normal(size=(4, 3)), 1), {})]


def _tree_stack(items):
    """Stack a list of pytrees with equal structure leafwise along a new axis 0."""
    if not items:
        raise ValueError("cannot stack an empty list (scan of length 0)")
    first = items[0]
    if isinstance(first, (np.ndarray, np.generic, float, int)):
        return np.stack(items)
    return _leaves_map(lambda *leaves: np.stack(leaves), *items)


tree_stack = register(Primitive("ad.tree_stack", _tree_stack, kind="structural"))


def _tree_unstack(ct, items):
    """The cotangents of the items of ``tree_stack(items)``: a list, one per item."""
    n = len(items)
    if isinstance(ct, np.ndarray):
        return [ct[k] for k in range(n)]
    return [_leaves_map(lambda a, k=k: a[k], ct) for k in range(n)]


tree_unstack = register(Primitive("ad.tree_unstack", _tree_unstack, kind="internal"))


def _tree_stack_vjp(g, ans, items):
    return tree_unstack(g, items)


def _tree_stack_jvp(t, ans, items):
    return tree_stack(t)


tree_stack.def_vjp(_tree_stack_vjp)
tree_stack.def_jvp(_tree_stack_jvp)
tree_stack.samples = lambda rng: []  # list operand; covered by the lax.scan tests


def _tree_unstack_vjp(g, ans, ct, items):
    return tree_stack(g)


def _tree_unstack_jvp(t, ans, ct, items):
    return tree_unstack(t, items)


tree_unstack.def_vjp(_tree_unstack_vjp)
tree_unstack.def_jvp(_tree_unstack_jvp)
tree_unstack.samples = lambda rng: []


# -- the cotangent of an array read row by row in a loop ----------------------------------
# `for k in range(n): x1 = xs[k]` (lax.scan's xs, `for row in xs`): the reverse sweep
# pushes each row's cotangent on a list, and `ad.rows_adjoint` stacks them once after
# the loop, instead of adding a zero array of xs's size per trip (quadratic in n).


def _row_positions(n, start, last_first):
    """Rows of ``xs`` that a list of ``n`` row cotangents holds, in list order."""
    first = int(start)
    return range(first + n - 1, first - 1, -1) if last_first else range(first, first + n)


def _rows_adjoint(rows, xs, start=0, last_first=False, axis=0):
    """The cotangent of ``xs`` from the cotangents of its rows ``xs[start + j]``.

    ``rows``: a list of ``n`` cotangents (pytrees like a row of ``xs``; ``None`` or
    holes are zeros; Python scalars broadcast), one per trip of a loop that read
    rows ``start``, ``start + 1``, ... ``start + n - 1``; with ``last_first`` the
    list holds them from the last row read back to the first (the order in which
    the reverse sweep pushes them). ``axis``: how many leading (vmap) axes come
    before the rows' axis in every leaf of ``xs`` and of the row cotangents.
    Returns zeros like ``xs`` (dtype: the result type of ``xs`` and the
    cotangents) with the rows filled in; rows read twice (negative ``start``)
    add up."""
    from ..tree_util import tree_flatten, tree_unflatten

    n = len(rows)
    pos = _row_positions(n, start, last_first)
    leaves, treedef = tree_flatten(xs)
    lead = (slice(None),) * axis
    if isinstance(xs, np.ndarray):
        per_leaf = [list(rows)]
    else:
        per_leaf = [[] for _ in leaves]
        like = _tree_slice_at(xs, 0, axis) if n else None
        for r in rows:
            r_leaves = tree_flatten(_fill(r, like))[0]
            for lst, v in zip(per_leaf, r_leaves):
                lst.append(v)
    out = []
    for leaf, items in zip(leaves, per_leaf):
        a = np.asarray(leaf)
        row_shape = a.shape[:axis] + a.shape[axis + 1 :]
        kinds = {a.dtype}
        scalar = None
        dense = []
        for v in items:
            if v is None:
                dense.append(0)
                continue
            if isinstance(v, (np.ndarray, np.generic)):
                kinds.add(v.dtype)
            else:
                scalar = v  # a Python scalar: weakly typed
            dense.append(v)
        dtype = np.result_type(*kinds, *(() if scalar is None else (scalar,)))
        if dtype.kind == "f" and a.dtype.kind == "f":
            dtype = a.dtype  # (a floating array's cotangent has its dtype)
        res = np.zeros(a.shape, dtype)
        if n:
            block = np.stack([np.broadcast_to(v, row_shape) for v in dense], axis=axis)
            lo = int(start)
            if lo >= 0 and lo + n <= a.shape[axis]:
                if last_first:
                    block = np.flip(block, axis=axis)
                res[lead + (slice(lo, lo + n),)] = block
            else:  # negative positions: count from the end, and may meet others
                for j, p in enumerate(pos):
                    res[lead + (p,)] += block[lead + (j,)]
        out.append(res)
    return tree_unflatten(treedef, out)


def _tree_slice_at(xs, i, axis):
    if isinstance(xs, np.ndarray):
        return xs[(slice(None),) * axis + (i,)]
    return _leaves_map(lambda a: np.asarray(a)[(slice(None),) * axis + (i,)], xs)


def _rows_of(g, rows, start=0, last_first=False, axis=0):
    """The transpose of :func:`_rows_adjoint`: the list of rows of ``g`` that
    ``rows`` stand for, in the same order (``g[start + j]``, or from the last
    row back with ``last_first``)."""
    pos = _row_positions(len(rows), start, last_first)
    if g is None:
        return [None] * len(rows)
    return [_tree_slice_at(g, p, axis) for p in pos]


rows_adjoint = register(Primitive("ad.rows_adjoint", _rows_adjoint, kind="internal"))
rows_of = register(Primitive("ad.rows_of", _rows_of, kind="internal"))
rows_of.returns_tree = True


def _rows_adjoint_vjp(g, ans, rows, xs, start=0, last_first=False, axis=0):
    return rows_of(g, rows, start, last_first, axis)


def _rows_adjoint_jvp(t, ans, rows, xs, start=0, last_first=False, axis=0):
    return rows_adjoint(t, xs, start, last_first, axis)


def _rows_of_vjp(h, ans, g, rows, start=0, last_first=False, axis=0):
    return rows_adjoint(h, g, start, last_first, axis)


def _rows_of_jvp(t, ans, g, rows, start=0, last_first=False, axis=0):
    return rows_of(t, rows, start, last_first, axis)


rows_adjoint.def_vjp(_rows_adjoint_vjp)
rows_adjoint.def_jvp(_rows_adjoint_jvp)
rows_of.def_vjp(_rows_of_vjp)
rows_of.def_jvp(_rows_of_jvp)
rows_adjoint.samples = lambda rng: []  # a list operand: tests/test_lax.py checks them
rows_of.samples = lambda rng: []


def _rows_batch(first: str):
    """Under vmap: both operands batched, one more leading axis skipped."""

    def rule(c):
        if not (c.batched(first) or c.batched("rows")):
            return c.rebuild(), False
        from ..frontend import nodes as N

        _, ax = c.static("axis")
        return c.rebuild(
            **{first: c.materialize(c.arg(first)), "rows": c.materialize(c.arg("rows"))},
            axis=N.const((ax or 0) + 1),
        )

    return rule


rows_adjoint.def_batch(_rows_batch("xs"))
rows_of.def_batch(_rows_batch("g"))


def _broadcast_like(x, like):
    """``x`` broadcast to ``like``'s shape (a tangent of a broadcasting primitive)."""
    shape = np.shape(like)
    if np.shape(x) == shape:
        return x
    return np.broadcast_to(x, shape)


broadcast_like = register(Primitive("ad.broadcast_like", _broadcast_like, kind="internal"))
broadcast_like.facts(array_result=True)


def _broadcast_like_vjp(g, ans, x, like):
    return unbroadcast(g, x)


def _broadcast_like_jvp(t, ans, x, like):
    return broadcast_like(t, like)


broadcast_like.def_vjp(_broadcast_like_vjp)
broadcast_like.def_jvp(_broadcast_like_jvp)
broadcast_like.samples = lambda rng: [((rng.normal(size=(3,)), rng.normal(size=(2, 3))), {})]


# ---------------------------------------------------------------------------
# Jacobians: one-hot bases and assembly of columns (jacfwd) or rows (jacrev).


def _flat(tree):
    from ..tree_util import tree_flatten

    leaves, treedef = tree_flatten(tree)
    return [np.asarray(v) for v in leaves], treedef


def _basis(x):
    """One-hot pytrees like ``x``, one per element of its leaves, in flattened order."""
    leaves, treedef = _flat(x)
    out = []
    for i, leaf in enumerate(leaves):
        dt = leaf.dtype if leaf.dtype.kind in "fc" else np.float32
        for k in range(leaf.size):
            parts = [
                np.zeros(
                    v.shape, dt if j == i else (v.dtype if v.dtype.kind in "fc" else np.float32)
                )
                for j, v in enumerate(leaves)
            ]
            parts[i].reshape(-1)[k] = 1
            out.append(treedef.unflatten(parts))
    return out


basis = register(Primitive("ad.basis", _basis, kind="internal", differentiable=False))


def _blocks(items, outer, inner, items_index_outer):
    """Assemble a Jacobian with structure outer-tree of inner-tree of blocks."""
    o_leaves, o_def = _flat(outer)
    i_leaves, i_def = _flat(inner)
    flat_items = [_flat(it)[0] for it in items]
    result = []
    if items_index_outer:  # rows: items[k] is an inner-tree, k runs over outer elements
        off = 0
        for o in o_leaves:
            row_blocks = []
            for j, leaf in enumerate(i_leaves):
                stack = [flat_items[k][j] for k in range(off, off + o.size)]
                block = np.stack(stack) if stack else np.zeros((0,) + leaf.shape, leaf.dtype)
                row_blocks.append(block.reshape(o.shape + leaf.shape))
            result.append(i_def.unflatten(row_blocks))
            off += o.size
    else:  # columns: items[k] is an outer-tree, k runs over inner elements
        for jo, o in enumerate(o_leaves):
            row_blocks = []
            off = 0
            for leaf in i_leaves:
                stack = [flat_items[k][jo] for k in range(off, off + leaf.size)]
                block = np.stack(stack) if stack else np.zeros((0,) + o.shape, o.dtype)
                block = block.reshape(leaf.shape + o.shape)
                nd_in = leaf.ndim
                block = np.moveaxis(block, list(range(nd_in)), list(range(o.ndim, o.ndim + nd_in)))
                row_blocks.append(block)
                off += leaf.size
            result.append(i_def.unflatten(row_blocks))
    return o_def.unflatten(result)


def _unblocks(ct, outer, inner, items_index_outer):
    """The transpose of :func:`_blocks`: the list of item cotangents."""
    o_leaves, o_def = _flat(outer)
    i_leaves, i_def = _flat(inner)
    # the cotangent of a Jacobian of pytrees may be sparse (holes ``None``, dicts
    # with some keys, lists where the Jacobian has tuples): filled against the
    # Jacobian's own structure first (zeros of each block's shape)
    like = o_def.unflatten(
        [
            i_def.unflatten(
                [
                    np.broadcast_to(
                        np.zeros((), (leaf if items_index_outer else o).dtype),
                        o.shape + leaf.shape,
                    )
                    for leaf in i_leaves
                ]
            )
            for o in o_leaves
        ]
    )
    ct = _fill(ct, like)
    ct_outer = o_def.flatten_up_to(ct) if hasattr(o_def, "flatten_up_to") else None
    if ct_outer is None:
        from ..tree_util import tree_leaves

        flat = tree_leaves(ct)
        ct_outer = [flat[j * len(i_leaves) : (j + 1) * len(i_leaves)] for j in range(len(o_leaves))]
    else:
        ct_outer = [_flat(c)[0] for c in ct_outer]
    items = []
    if items_index_outer:
        for jo, o in enumerate(o_leaves):
            for k in range(o.size):
                parts = []
                for j, leaf in enumerate(i_leaves):
                    block = np.asarray(ct_outer[jo][j]).reshape((o.size,) + leaf.shape)
                    parts.append(block[k])
                items.append(i_def.unflatten(parts))
    else:
        for j, leaf in enumerate(i_leaves):
            for k in range(leaf.size):
                parts = []
                for jo, o in enumerate(o_leaves):
                    block = np.asarray(ct_outer[jo][j]).reshape(o.shape + (leaf.size,))
                    parts.append(block[..., k])
                items.append(o_def.unflatten(parts))
    return items


def _jac_columns(cols, x, out):
    """Jacobian from jvp columns: outer = ``out``'s tree, inner = ``x``'s tree."""
    return _blocks(cols, out, x, False)


def _jac_rows(rows, x, out):
    """Jacobian from vjp rows: outer = ``out``'s tree, inner = ``x``'s tree."""
    return _blocks(rows, out, x, True)


def _jac_columns_t(ct, x, out):
    """Transpose of ``jac_columns`` in its columns."""
    return _unblocks(ct, out, x, False)


def _jac_rows_t(ct, x, out):
    """Transpose of ``jac_rows`` in its rows."""
    return _unblocks(ct, out, x, True)


jac_columns = register(Primitive("ad.jac_columns", _jac_columns, kind="internal"))
jac_rows = register(Primitive("ad.jac_rows", _jac_rows, kind="internal"))
jac_columns_t = register(Primitive("ad.jac_columns_t", _jac_columns_t, kind="internal"))
jac_rows_t = register(Primitive("ad.jac_rows_t", _jac_rows_t, kind="internal"))


def _jc_vjp(g, ans, cols, x, out):
    return jac_columns_t(g, x, out)


def _jc_jvp(t, ans, cols, x, out):
    return jac_columns(t, x, out)


def _jr_vjp(g, ans, rows, x, out):
    return jac_rows_t(g, x, out)


def _jr_jvp(t, ans, rows, x, out):
    return jac_rows(t, x, out)


def _jct_vjp(g, ans, ct, x, out):
    return jac_columns(g, x, out)


def _jct_jvp(t, ans, ct, x, out):
    return jac_columns_t(t, x, out)


def _jrt_vjp(g, ans, ct, x, out):
    return jac_rows(g, x, out)


def _jrt_jvp(t, ans, ct, x, out):
    return jac_rows_t(t, x, out)


jac_columns.def_vjp(_jc_vjp)
jac_columns.def_jvp(_jc_jvp)
jac_rows.def_vjp(_jr_vjp)
jac_rows.def_jvp(_jr_jvp)
jac_columns_t.def_vjp(_jct_vjp)
jac_columns_t.def_jvp(_jct_jvp)
jac_rows_t.def_vjp(_jrt_vjp)
jac_rows_t.def_jvp(_jrt_jvp)
for _p in (jac_columns, jac_rows, jac_columns_t, jac_rows_t):
    _p.samples = lambda rng: []  # list operands; checked against finite differences in tests


def _custom_transpose(tangent_map, ct, position, *args):
    """``J^T ct`` for the linear map ``t -> tangent_map(*args, t)`` (the tangent of
    argument ``position``), by srcjax's reverse mode on ``tangent_map``'s source
    (the hook ``"transpose_linear"`` that :mod:`srcjax.api_fwd` provides). Used to
    differentiate ``custom_jvp`` functions in reverse mode."""
    return hooks.call("transpose_linear", tangent_map, ct, position, *args)


# differentiable, but with no rules: a second derivative through a custom_jvp
# rule in reverse mode raises instead of silently giving zero
custom_transpose = register(Primitive("ad.custom_transpose", _custom_transpose, kind="internal"))
custom_transpose.missing_rule_hint = (
    "second derivatives of a custom_jvp function that go through reverse mode are not "
    "supported yet; use forward-over-forward (jacfwd(jacfwd(f))) or srcjax.custom_vjp"
)
custom_transpose.samples = lambda rng: []


# ---------------------------------------------------------------------------
# Batched Jacobians (one vmap over a stacked one-hot basis instead of a loop).


def _prod(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _basis_stack(x, lead=0):
    """``eye(n)`` shaped ``(n, *s)``, ``n`` the size of ``s``: all one-hot tangents
    of ``x`` (per-example shape ``s``). ``x``'s first ``lead`` axes are vmap batch
    axes (the Jacobian called inside a vmapped function): the basis is the same for
    every example, a read-only broadcast ``(*x.shape[:lead], n, *s)``."""
    x = np.asarray(x)
    s = x.shape[lead:]
    n = _prod(s)
    dt = x.dtype if x.dtype.kind in "fc" else np.float32
    e = np.eye(n, dtype=dt).reshape((n,) + s)
    return np.broadcast_to(e, x.shape[:lead] + e.shape) if lead else e


def _lead_rule(*names):
    """Batching rule of a Jacobian helper whose operands ``names`` carry their vmap
    batch axes first, counted by the matching ``lead`` arguments (constants): one
    more axis for each batched operand. The result is batched when the first
    operand is (its leaves are what the result is made of); otherwise it depends on
    the other operands' per-example shapes only, the same for every example."""

    def rule(c):
        from ..frontend import nodes as N

        changes = {}
        for name, lead in names:
            if not c.batched(name):
                continue
            if c.is_container(c.arg(name)):
                return None  # a container with some unbatched leaves: per example
            ok, val = c.static(lead)
            if not ok:
                return None
            changes[lead] = N.const(int(val or 0) + 1)
        expr = c.rebuild(**changes)
        return expr if c.batched(names[0][0]) else (expr, False)

    return rule


basis_stack = register(
    Primitive("ad.basis_stack", _basis_stack, kind="internal", differentiable=False)
)
basis_stack.def_batch(_lead_rule(("x", "lead")))


def _cobasis_stack(out, lead=0):
    """One-hot cotangents for every element of the pytree ``out``, stacked: a tree
    like ``out`` whose leaves have a leading axis of ``out``'s total size. With
    ``lead`` vmap batch axes in front of every leaf, the same stack for every
    example, broadcast behind them (read-only)."""
    leaves, treedef = _flat(out)
    m = sum(_prod(v.shape[lead:]) for v in leaves)
    parts = []
    off = 0
    for v in leaves:
        vs = v.shape[lead:]
        size = _prod(vs)
        dt = v.dtype if v.dtype.kind in "fc" else np.float32
        block = np.zeros((m, size), dt)
        block[off : off + size] = np.eye(size, dtype=dt)
        block = block.reshape((m,) + vs)
        parts.append(np.broadcast_to(block, v.shape[:lead] + block.shape) if lead else block)
        off += size
    return treedef.unflatten(parts)


cobasis_stack = register(
    Primitive("ad.cobasis_stack", _cobasis_stack, kind="internal", differentiable=False)
)
cobasis_stack.def_batch(_lead_rule(("out", "lead")))


def _jac_from_columns(cols, x, lead=0, xlead=0):
    """Stacked jvp columns (a tree, leaves ``(*B, n, *So)``) -> leaves ``(*B, *So,
    *Sx)``; ``B`` the first ``lead`` axes (vmap's), ``Sx`` the shape of ``x``
    after its first ``xlead`` axes."""
    sx = np.shape(x)[xlead:]
    nx = len(sx)

    def one(c):
        c = np.asarray(c)
        pre = c.shape[:lead]
        so = c.shape[lead + 1 :]
        k = len(pre)
        r = np.moveaxis(
            c.reshape(pre + sx + so),
            list(range(k, k + nx)),
            list(range(k + len(so), k + len(so) + nx)),
        )
        return r if r.flags.writeable else r.copy()  # a view of a (broadcast) basis

    return _leaves_map(one, cols)


def _jac_to_columns(ct, x, lead=0, xlead=0):
    """Transpose of :func:`_jac_from_columns`."""
    sx = np.shape(x)[xlead:]
    nx = len(sx)
    n = _prod(sx)

    def one(c):
        c = np.asarray(c)
        pre = c.shape[:lead]
        so = c.shape[lead : c.ndim - nx]
        k = lead + len(so)
        moved = np.moveaxis(c, list(range(k, k + nx)), list(range(lead, lead + nx)))
        return moved.reshape(pre + (n,) + so)

    return _leaves_map(one, ct)


def _jac_from_rows(rows, out, lead=0, olead=0):
    """Stacked vjp rows ``(*B, m, *Sx)`` -> a tree like ``out`` with leaves ``(*B,
    *So, *Sx)``; ``B`` the first ``lead`` axes of ``rows`` (vmap's), ``So`` each
    leaf's shape after its first ``olead`` axes."""
    leaves, treedef = _flat(out)
    rows = np.asarray(rows)
    pre = rows.shape[:lead]
    sx = rows.shape[lead + 1 :]
    head = (slice(None),) * lead
    parts = []
    off = 0
    for v in leaves:
        vs = v.shape[olead:]
        size = _prod(vs)
        part = rows[head + (slice(off, off + size),)].reshape(pre + vs + sx)
        parts.append(part if part.flags.writeable else part.copy())  # a view of the basis
        off += size
    return treedef.unflatten(parts)


def _jac_to_rows(ct, out, lead=0, olead=0):
    """Transpose of :func:`_jac_from_rows`."""
    leaves, _ = _flat(out)
    cts, _ = _flat(ct)
    blocks = []
    for v, c in zip(leaves, cts):
        vs = v.shape[olead:]
        pre = c.shape[:lead]
        sx = c.shape[lead + len(vs) :]
        blocks.append(c.reshape(pre + (_prod(vs),) + sx))
    return np.concatenate(blocks, axis=lead)


jac_from_columns = register(Primitive("ad.jac_from_columns", _jac_from_columns, kind="internal"))
jac_to_columns = register(Primitive("ad.jac_to_columns", _jac_to_columns, kind="internal"))
jac_from_rows = register(Primitive("ad.jac_from_rows", _jac_from_rows, kind="internal"))
jac_to_rows = register(Primitive("ad.jac_to_rows", _jac_to_rows, kind="internal"))
jac_from_columns.def_batch(_lead_rule(("cols", "lead"), ("x", "xlead")))
jac_to_columns.def_batch(_lead_rule(("ct", "lead"), ("x", "xlead")))
jac_from_rows.def_batch(_lead_rule(("rows", "lead"), ("out", "olead")))
jac_to_rows.def_batch(_lead_rule(("ct", "lead"), ("out", "olead")))


def _jfc_vjp(g, ans, cols, x, lead=0, xlead=0):
    return jac_to_columns(g, x, lead, xlead)


def _jfc_jvp(t, ans, cols, x, lead=0, xlead=0):
    return jac_from_columns(t, x, lead, xlead)


def _jtc_vjp(g, ans, ct, x, lead=0, xlead=0):
    return jac_from_columns(g, x, lead, xlead)


def _jtc_jvp(t, ans, ct, x, lead=0, xlead=0):
    return jac_to_columns(t, x, lead, xlead)


def _jfr_vjp(g, ans, rows, out, lead=0, olead=0):
    return jac_to_rows(g, out, lead, olead)


def _jfr_jvp(t, ans, rows, out, lead=0, olead=0):
    return jac_from_rows(t, out, lead, olead)


def _jtr_vjp(g, ans, ct, out, lead=0, olead=0):
    return jac_from_rows(g, out, lead, olead)


def _jtr_jvp(t, ans, ct, out, lead=0, olead=0):
    return jac_to_rows(t, out, lead, olead)


jac_from_columns.def_vjp(_jfc_vjp)
jac_from_columns.def_jvp(_jfc_jvp)
jac_to_columns.def_vjp(_jtc_vjp)
jac_to_columns.def_jvp(_jtc_jvp)
jac_from_rows.def_vjp(_jfr_vjp)
jac_from_rows.def_jvp(_jfr_jvp)
jac_to_rows.def_vjp(_jtr_vjp)
jac_to_rows.def_jvp(_jtr_jvp)
jac_from_columns.samples = lambda rng: [
    ((rng.normal(size=(6, 4)), rng.normal(size=(2, 3))), {}),
    ((rng.normal(size=(5, 6, 4)), rng.normal(size=(5, 2, 3))), {"lead": 1, "xlead": 1}),
    ((rng.normal(size=(5, 6, 4)), rng.normal(size=(2, 3))), {"lead": 1}),
]
jac_to_columns.samples = lambda rng: [
    ((rng.normal(size=(4, 2, 3)), rng.normal(size=(2, 3))), {}),
    ((rng.normal(size=(5, 4, 2, 3)), rng.normal(size=(5, 2, 3))), {"lead": 1, "xlead": 1}),
]
jac_from_rows.samples = lambda rng: [
    ((rng.normal(size=(6, 3)), rng.normal(size=(2, 3))), {}),
    ((rng.normal(size=(5, 6, 3)), rng.normal(size=(5, 2, 3))), {"lead": 1, "olead": 1}),
]
jac_to_rows.samples = lambda rng: [
    ((rng.normal(size=(2, 3, 3)), rng.normal(size=(2, 3))), {}),
    ((rng.normal(size=(5, 2, 3, 3)), rng.normal(size=(5, 2, 3))), {"lead": 1, "olead": 1}),
]


def _densify(ct, like):
    """A cotangent with its holes filled: ``None`` becomes zeros like ``like`` (arrays);
    containers keep their (sparse) structure."""
    if ct is None and not isinstance(like, (dict, list, tuple)):
        return _fill(None, like)
    return ct


densify = register(Primitive("ad.densify", _densify, kind="internal"))


def _densify_vjp(g, ans, ct, like):
    return densify(g, like)


def _densify_jvp(t, ans, ct, like):
    return densify(t, like)


densify.def_vjp(_densify_vjp)
densify.def_jvp(_densify_jvp)
densify.samples = lambda rng: [((rng.normal(size=(3,)), rng.normal(size=(3,))), {})]


def _fill_holes(ct, like):
    """``ct`` with every hole (``None``, also inside containers) filled with zeros
    of the shape and dtype of the matching part of ``like``: the cotangent a
    custom_vjp's ``bwd`` receives (JAX passes zeros for an unused output)."""
    return _fill(ct, like)


fill_holes = register(Primitive("ad.fill_holes", _fill_holes, kind="internal"))


def _fill_holes_vjp(g, ans, ct, like):
    return g


def _fill_holes_jvp(t, ans, ct, like):
    return fill_holes(t, like)  # filling holes with zeros is linear


def _fill_holes_batch(c):
    # ``like`` is often a container the batching analysis cannot see (a custom
    # function's outputs): both operands batched, ``_fill`` then works leafwise
    # on the batched values as it does per example (here rather than in
    # batch_rules.py, which holds the rules of the other primitives)
    return c.rebuild(ct=c.materialize(c.arg("ct")), like=c.materialize(c.arg("like")))


fill_holes.def_vjp(_fill_holes_vjp)
fill_holes.def_jvp(_fill_holes_jvp)
fill_holes.def_batch(_fill_holes_batch)
fill_holes.samples = lambda rng: [((rng.normal(size=(3,)), rng.normal(size=(3,))), {})]


# -- pytree utilities called inside transformed code ---------------------------------
def _tree_leaves_prim(tree, is_leaf=None):
    """The leaves of ``tree`` in flattening order (``jax.tree_util.tree_leaves``),
    as a primitive: ``sum(jnp.sum(w ** 2) for w in tree_leaves(params))`` inside a
    differentiated function."""
    from ..tree_util import tree_leaves as _leaves

    return _leaves(tree, is_leaf)


tree_leaves_p = register(Primitive("ad.tree_leaves", _tree_leaves_prim, kind="internal"))
tree_leaves_p.returns_tree = True


def _tree_leaves_adjoint(g, tree):
    """The cotangent of ``tree`` from that of its leaf list ``g`` (``None`` items,
    or ``g`` itself ``None``, are zero: the result keeps them as holes)."""
    from ..tree_util import tree_structure

    treedef = tree_structure(tree)
    n = treedef.num_leaves
    items = [None] * n if g is None else list(g) + [None] * (n - len(g))
    return treedef.unflatten(items)


tree_leaves_adjoint = register(
    Primitive("ad.tree_leaves_adjoint", _tree_leaves_adjoint, kind="internal")
)
tree_leaves_adjoint.returns_tree = True


def _tree_leaves_vjp(g, ans, tree, is_leaf=None):
    return tree_leaves_adjoint(g, tree)


def _tree_leaves_jvp(t, ans, tree, is_leaf=None):
    return tree_leaves_p(t)


def _tla_vjp(h, ans, g, tree):
    return tree_leaves_dense(h, tree)


def _tla_jvp(t, ans, g, tree):
    return tree_leaves_adjoint(t, tree)


tree_leaves_p.def_vjp(tree=_tree_leaves_vjp)
tree_leaves_p.def_jvp(tree=_tree_leaves_jvp)
tree_leaves_adjoint.def_vjp(g=_tla_vjp)
tree_leaves_adjoint.def_jvp(g=_tla_jvp)
tree_leaves_p.samples = lambda rng: []  # containers: tested through grad
tree_leaves_adjoint.samples = lambda rng: []


def _alias_tree_utilities():
    from .. import tree_util

    registry_alias(tree_leaves_p, tree_util.tree_leaves)  # also srcjax.tree.leaves


_alias_tree_utilities()


# -- constructing a registered pytree class inside transformed code ------------------
def _construct(cls, *args):
    """``cls(*args)`` for a registered pytree class (``Linear(w, b)`` inside a
    differentiated function). Differentiable in the arguments that become the
    instance's children as they are (``self.w = w``), as most model classes do.
    ``collections.defaultdict(factory, {...})`` / ``OrderedDict({...})``: the
    values of the mapping argument are the children (see :func:`_construct_ct`)."""
    if cls is collections.defaultdict and args and isinstance(args[0], np.ndarray):
        # vmap broadcast the factory (a function, the same in every example)
        fs = args[0].ravel()
        if args[0].dtype == object and fs.size and all(f is fs[0] for f in fs):
            args = (fs[0],) + tuple(args[1:])
    return cls(*args)


def _dict_construct_arg(ans, index, args):
    """For ``ans`` a dict built by ``construct`` (``defaultdict(int, m)``,
    ``OrderedDict(m)``): ``"mapping"`` when ``args[index]`` is the mapping whose
    values became its values, ``"other"`` for an argument that carries no value
    (the factory), ``None`` when ``ans`` is no dict. A mapping given any other
    way (a list of pairs) cannot be differentiated: an error, never a zero."""
    if not isinstance(ans, dict):
        return None
    arg = args[index]
    if arg is None or (callable(arg) and not isinstance(arg, (dict, list, tuple, np.ndarray))):
        return "other"
    if isinstance(arg, np.ndarray) and arg.dtype == object:
        return "other"  # (a factory vmap broadcast)
    if isinstance(arg, dict) and set(arg) == set(ans):
        return "mapping"
    raise NonDifferentiableError(
        f"cannot differentiate constructing a {type(ans).__name__} from argument "
        f"{index + 1} ({type(arg).__name__}): only from a dict of its values",
        hint=f"build it as {type(ans).__name__}(..., {{key: value, ...}}), or pass it in",
    )


construct = register(Primitive("ad.construct", _construct, kind="internal"))
construct.returns_tree = True


def _same_value(a, b) -> bool:
    """``a is b``, or two views of the same array memory with the same layout (a
    vmapped construction sees broadcast views of one argument)."""
    if a is b:
        return True
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
        return False
    return (
        a.shape == b.shape
        and a.strides == b.strides
        and a.dtype == b.dtype
        and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    )


def _child_positions(obj, argnum, args):
    """Positions of the children of ``obj`` that are the value ``args[argnum]``
    itself. When several arguments are the same value (``Linear(w, w)``, or
    ``w`` and ``stop_gradient(w)``), the k-th of them owns the k-th matching
    child (constructors store their arguments in order)."""
    kind = _instance_kind(obj)
    children = list(kind.flatten(obj)[0]) if kind is not None else []
    arg = args[argnum]
    matches = [j for j, c in enumerate(children) if _same_value(c, arg)]
    dups = [i for i, a in enumerate(args) if _same_value(a, arg)]
    if len(dups) > 1:
        k = dups.index(argnum)
        if len(matches) == len(dups):
            matches = [matches[k]]
        elif k > 0:
            matches = []  # fewer children than arguments: the first one owns them
    return matches, children, kind


def _instance_kind(obj):
    """The pytree node kind of an instance ``construct`` built: a registered
    class's, or a namedtuple's."""
    kind = _class_kind(obj)
    if kind is None and isinstance(obj, tuple) and hasattr(obj, "_fields"):
        from ..tree_util import _namedtuple_kind

        kind = _namedtuple_kind(type(obj))
    return kind


def _construct_ct(g, ans, index, *args):
    """The cotangent of ``args[index]`` of ``construct(cls, *args)`` from that of
    the instance ``g`` (``None``: zero): the sum of the children that are that
    argument. An array argument that became no child as it is (``self.w =
    2 * w``) cannot be differentiated this way: an error, never a wrong zero."""
    arg = args[index]
    how = _dict_construct_arg(ans, index, args)
    if how == "other":
        return None
    if how == "mapping":  # the mapping's cotangent: the instance's, key by key
        return dict_like(
            arg, ((k, _fill(g.get(k) if isinstance(g, dict) else None, v)) for k, v in arg.items())
        )
    where, children, kind = _child_positions(ans, index, args)
    if not where:
        if isinstance(arg, np.ndarray) or isinstance(arg, (float, np.floating)):
            raise NonDifferentiableError(
                f"cannot differentiate constructing {type(ans).__name__}: its argument "
                f"{index + 1} is not one of the instance's pytree children as it is "
                "(the constructor computes a field from it)",
                hint="construct the instance outside the differentiated function and pass "
                "it in, or make the constructor store its arguments unchanged",
            )
        return None
    if g is None:
        return _fill(None, arg)  # dense zeros: the adjoint code goes on with them
    if type(g) is type(ans):
        gc = list(kind.flatten(g)[0])
    elif isinstance(g, (tuple, list)) and len(g) == len(children):
        gc = list(g)  # a namedtuple's cotangent held as a plain sequence
    else:
        gc = [None] * len(children)
    total = None
    for j in where:
        total = _tree_add(total, gc[j])
    return _fill(None, arg) if total is None else total


def _construct_tangent(t, ans, index, *args):
    """The tangent instance of ``construct(cls, *args)`` from the tangent ``t`` of
    ``args[index]``: ``t`` at the children that are that argument, zeros elsewhere."""
    how = _dict_construct_arg(ans, index, args)
    if how is not None:  # (a dict's values come from its mapping argument only)
        src = t if how == "mapping" and isinstance(t, dict) else {}
        return dict_like(ans, ((k, _fill(src.get(k), v)) for k, v in ans.items()))
    where, children, kind = _child_positions(ans, index, args)
    if kind is None:
        return None
    aux = kind.flatten(ans)[1]
    items = [t if j in where else _fill(None, c) for j, c in enumerate(children)]
    return _unflatten_sparse(kind, aux, items, children)


construct_ct = register(Primitive("ad.construct_ct", _construct_ct, kind="internal"))
construct_tangent = register(Primitive("ad.construct_tangent", _construct_tangent, kind="internal"))
construct_tangent.returns_tree = True


def _construct_vjp(g, ans, cls, *args, argnum):
    return construct_ct(g, ans, argnum, *args)


def _construct_jvp(t, ans, cls, *args, argnum):
    return construct_tangent(t, ans, argnum, *args)


def _construct_ct_vjp(h, out, g, ans, index, *args):
    return construct_tangent(h, ans, index, *args)


def _construct_ct_jvp(u, out, g, ans, index, *args):
    return construct_ct(u, ans, index, *args)


def _construct_tangent_vjp(h, out, t, ans, index, *args):
    return construct_ct(h, ans, index, *args)


def _construct_tangent_jvp(u, out, t, ans, index, *args):
    return construct_tangent(u, ans, index, *args)


construct.def_vjp(args=_construct_vjp)
construct.def_jvp(args=_construct_jvp)
construct_ct.def_vjp(g=_construct_ct_vjp)
construct_ct.def_jvp(g=_construct_ct_jvp)
construct_tangent.def_vjp(t=_construct_tangent_vjp)
construct_tangent.def_jvp(t=_construct_tangent_jvp)
construct_tangent.samples = lambda rng: []
construct.samples = lambda rng: []  # needs a class: tests/test_pytree_classes.py
construct_ct.samples = lambda rng: []


def _tree_unflatten_like(tree, leaves):
    """A pytree of ``tree``'s structure with ``leaves`` (a list, flattening
    order): the result of ``tree_map`` inside transformed code."""
    from ..tree_util import tree_structure

    return tree_structure(tree).unflatten(list(leaves))


tree_unflatten_like = register(
    Primitive("ad.tree_unflatten_like", _tree_unflatten_like, kind="internal")
)
tree_unflatten_like.returns_tree = True


def _tree_leaves_dense(g, like):
    """The leaves of the cotangent ``g`` of a pytree shaped like ``like``, holes
    (``None``, missing dict keys) filled with zeros: one per leaf of ``like``, in
    flattening order."""
    from ..tree_util import tree_leaves as _leaves

    return _leaves(_fill(g, like))


tree_leaves_dense = register(Primitive("ad.tree_leaves_dense", _tree_leaves_dense, kind="internal"))
tree_leaves_dense.returns_tree = True


def _tld_vjp(h, ans, g, like):
    return tree_unflatten_like(like, h)


def _tld_jvp(t, ans, g, like):
    return tree_leaves_dense(t, like)


tree_leaves_dense.def_vjp(g=_tld_vjp)
tree_leaves_dense.def_jvp(g=_tld_jvp)
tree_leaves_dense.samples = lambda rng: []


def _tul_vjp(g, ans, tree, leaves):
    return tree_leaves_dense(g, ans)


def _tul_jvp(t, ans, tree, leaves):
    return tree_unflatten_like(tree, t)


tree_unflatten_like.def_vjp(leaves=_tul_vjp)
tree_unflatten_like.def_jvp(leaves=_tul_jvp)
tree_unflatten_like.samples = lambda rng: []  # containers: tested through grad


# -- s._replace(f=v) on a namedtuple whose class is known only at run time ----------
def _nt_index(x, name):
    return type(x)._fields.index(name)


def _nt_replace(x, name, v):
    """``x._replace(**{name: v})`` (a namedtuple argument of a transformed function;
    the class is not part of the specialization, so it is resolved at run time)."""
    return x._replace(**{name: v})


def _nt_drop(g, x, name):
    """``g`` (a namedtuple's cotangent or tangent) with field ``name`` a hole:
    the part of ``x._replace(name=v)``'s cotangent that flows back to ``x``."""
    if g is None:
        return None
    items = list(g)
    items[_nt_index(x, name)] = None
    return type(x)(*items) if hasattr(g, "_fields") else type(g)(items)


def _nt_field(g, x, name):
    """Field ``name`` of ``g`` (by its position in ``x``'s class); None for a hole."""
    if g is None:
        return None
    return list(g)[_nt_index(x, name)]


def _nt_embed(t, x, name):
    """A namedtuple of ``x``'s class that is ``t`` at field ``name``, holes elsewhere."""
    k = _nt_index(x, name)
    return type(x)(*[t if i == k else None for i in range(len(type(x)._fields))])


nt_replace = register(Primitive("ad.nt_replace", _nt_replace, kind="internal"))
nt_drop = register(Primitive("ad.nt_drop", _nt_drop, kind="internal"))
nt_field = register(Primitive("ad.nt_field", _nt_field, kind="internal"))
nt_embed = register(Primitive("ad.nt_embed", _nt_embed, kind="internal"))
for _p in (nt_replace, nt_drop, nt_embed):
    _p.returns_tree = True
for _p in (nt_replace, nt_drop, nt_field, nt_embed):
    _p.samples = lambda rng: []  # structure only: tests/test_regressions.py


def _nt_replace_vjp_x(g, ans, x, name, v):
    return nt_drop(g, x, name)


def _nt_replace_vjp_v(g, ans, x, name, v):
    return nt_field(g, x, name)


def _nt_replace_jvp_x(t, ans, x, name, v):
    return nt_drop(t, x, name)


def _nt_replace_jvp_v(t, ans, x, name, v):
    return nt_embed(t, x, name)


def _nt_drop_vjp(h, ans, g, x, name):
    return nt_drop(h, x, name)


def _nt_field_vjp(h, ans, g, x, name):
    return nt_embed(h, x, name)


def _nt_embed_vjp(h, ans, t, x, name):
    return nt_field(h, x, name)


def _nt_drop_jvp(u, ans, g, x, name):
    return nt_drop(u, x, name)


def _nt_field_jvp(u, ans, g, x, name):
    return nt_field(u, x, name)


def _nt_embed_jvp(u, ans, t, x, name):
    return nt_embed(u, x, name)


nt_replace.def_vjp(x=_nt_replace_vjp_x, v=_nt_replace_vjp_v)
nt_replace.def_jvp(x=_nt_replace_jvp_x, v=_nt_replace_jvp_v)
nt_drop.def_vjp(g=_nt_drop_vjp)
nt_drop.def_jvp(g=_nt_drop_jvp)
nt_field.def_vjp(g=_nt_field_vjp)
nt_field.def_jvp(g=_nt_field_jvp)
nt_embed.def_vjp(t=_nt_embed_vjp)
nt_embed.def_jvp(t=_nt_embed_jvp)


# ============================================================== printing under vmap
def _print_examples(fn, masks, polarities, batched, args, kwargs):
    """``fn(*args, **kwargs)`` (``print`` or ``srcjax.debug.print``) as vmap runs
    it: ``batched[i]`` says whether the ``i``-th of ``args`` then ``kwargs``
    (in order) carries the batch axis; ``masks`` are the per-example flags of the
    per-example ``if``/masked loops around the call (``polarities``: True for
    a then branch or a loop body, False for an else branch), so an example
    that does not run the call is not shown.

    ``srcjax.debug.print`` prints one line per running example (as
    ``jax.debug.print`` under ``vmap``, in example order). ``print`` prints the
    whole batch once; inside a per-example branch or masked loop its batched
    arrays are masked arrays whose entries of the examples not running show as
    ``--`` (rather than the stand-in values those examples compute there)."""
    import builtins

    nargs = len(args)
    values = list(args) + list(kwargs.values())
    active = None
    for m, pol in zip(masks, polarities):
        m = np.asarray(m, dtype=bool)
        m = m if pol else ~m
        active = m if active is None else active & m
    if active is not None and active.ndim == 0:  # (a row of an outer vmap's mask)
        if not active:
            return None
        active = None
    if fn in hooks.PER_EXAMPLE_PRINTS:
        from .batch_rules import _tree_row

        size = None
        for v, b in zip(values, batched):
            if b:
                size = _batch_size(v)
                break
        if size is None and active is not None:
            size = active.shape[0]
        if size is None:  # nothing batched: once, as outside vmap
            return fn(*args, **kwargs)
        for row in range(size):
            if active is not None and not active[row]:
                continue
            vals = [_tree_row(v, row) if b else v for v, b in zip(values, batched)]
            fn(*vals[:nargs], **dict(zip(kwargs, vals[nargs:])))
        return None
    if fn is builtins.print and active is not None and not active.all():
        values = [_masked(v, active) if b else v for v, b in zip(values, batched)]
        return fn(*values[:nargs], **dict(zip(kwargs, values[nargs:])))
    return fn(*args, **kwargs)


def _batch_size(v):
    if isinstance(v, dict):
        v = next(iter(v.values()), None)
    elif isinstance(v, (list, tuple)):
        v = v[0] if len(v) else None
        return _batch_size(v) if isinstance(v, (list, tuple, dict)) else np.shape(v)[0]
    return np.shape(v)[0]


def _masked(v, active):
    """``v`` with the rows of the examples not running masked (``--``)."""
    if isinstance(v, dict):
        return dict_like(v, ((k, _masked(x, active)) for k, x in v.items()))
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return type(v)(_masked(x, active) for x in v)
    a = np.asarray(v)
    if a.ndim == 0 or a.shape[0] != active.shape[0]:
        return v
    mask = np.broadcast_to(~active.reshape(active.shape + (1,) * (a.ndim - 1)), a.shape)
    return np.ma.masked_array(a, mask=mask)


print_examples = register(
    Primitive("ad.print_examples", _print_examples, kind="internal", differentiable=False)
).facts(effectful=True)
print_examples.samples = lambda rng: []


# ======================================================= loop carries (lax loops)
_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _is_weak(x):
    return type(x) in (bool, int, float, complex)


def _leaf_dtype(x):
    from .. import dtypes

    if _is_weak(x):
        return np.dtype(dtypes.dtype_of(x))
    if isinstance(x, PRNGKeyArray):
        return x.dtype
    return np.dtype(dtypes.canonicalize_dtype(np.result_type(x)))


def _carry_leaf_ok(b, a):
    """Whether JAX accepts carry leaf ``a`` out of a body given ``b``: equal
    dtypes; a weakly typed ``b`` (a Python scalar) promoted to ``a``'s kind; or a
    wider dtype of the same kind (NumPy's promotion of ``float32 + int32``, where
    JAX keeps float32)."""
    db, da = _leaf_dtype(b), _leaf_dtype(a)
    if db == da:
        return True
    if _is_weak(b):
        return _KIND_ORDER.get(da.kind, -1) >= _KIND_ORDER.get(db.kind, 9)
    return db.kind == da.kind and da.itemsize >= db.itemsize


_ARRAYS = (np.ndarray, np.generic)
#: dtype kinds a weakly typed Python int / float carry may become (see _carry_leaf_ok)
_WEAK_OK = {int: "iufc", float: "fc"}


def _carry_same(b, a, bb, ab) -> bool:
    """A few attribute compares that accept what :func:`_check_carry` accepts
    in the common cases (equal dtypes and shapes; a Python int or float that
    became an array of a kind JAX promotes it to; tuples, lists and dicts of
    those). False means: ask the full check."""
    if isinstance(a, _ARRAYS):
        if isinstance(b, _ARRAYS):
            return b.dtype == a.dtype and b.shape[bb:] == a.shape[ab:]
        kinds = _WEAK_OK.get(type(b))
        return kinds is not None and a.dtype.kind in kinds and a.shape[ab:] == ()
    tb = type(b)
    if tb is not type(a):
        return False
    if tb is tuple or tb is list or (tb.__base__ is tuple and hasattr(b, "_fields")):
        return len(b) == len(a) and all(_carry_same(x, y, bb, ab) for x, y in zip(b, a))
    if tb is dict:
        return b.keys() == a.keys() and all(_carry_same(b[k], a[k], bb, ab) for k in b)
    return b is None or tb is float or tb is int or tb is bool


def _check_carry(what, before, after, before_batch=0, after_batch=0):
    """JAX's TypeError when a loop body (``what``: ``"scan body"``,
    ``"while_loop body"``) changes its carry ``before`` into ``after``: another
    pytree structure, an array of another shape, or another dtype (a Python
    scalar carry may be promoted, and a dtype NumPy's promotion widened within
    its kind is JAX's dtype; see :func:`_carry_leaf_ok`). ``before_batch`` /
    ``after_batch``: leading (vmap) axes of the leaves not compared. Returns None."""
    if _carry_same(before, after, before_batch, after_batch):
        return None  # (the common cases, cheap: called on every pass of a loop)
    return _check_carry_full(what, before, after, before_batch, after_batch)


def _check_carry_full(what, before, after, before_batch=0, after_batch=0):
    """:func:`_check_carry` without its shortcut for the common cases."""
    from ..tree_util import tree_flatten

    lb, tb = tree_flatten(before)
    la, ta = tree_flatten(after)
    if tb != ta:
        raise TypeError(
            f"{what} function carry input and carry output must have the same pytree "
            f"structure, but they differ:\n  input carry: {tb}\n  output carry: {ta}"
        )
    for i, (b, a) in enumerate(zip(lb, la)):
        sb, sa = np.shape(b)[before_batch:], np.shape(a)[after_batch:]
        if sb != sa or not _carry_leaf_ok(b, a):
            raise TypeError(
                f"{what} function carry input and carry output must have equal types "
                f"(e.g. shapes and dtypes of arrays) but they differ: carry leaf {i} is "
                f"{_leaf_dtype(b).name}{list(sb)} on input but "
                f"{_leaf_dtype(a).name}{list(sa)} on output"
            )


check_carry = register(
    Primitive("ad.check_carry", _check_carry, kind="internal", differentiable=False)
).facts(effectful=True)
check_carry.samples = lambda rng: [(("scan body", (np.ones(2), 1), (np.ones(2), 2)), {})]


def _check_carry_batch(c):
    """Under vmap: the same check per example, the mapped axes skipped (counted,
    so nested vmaps skip one more each)."""
    from ..frontend import nodes as N

    _, bb = c.static("before_batch")
    _, ab = c.static("after_batch")
    expr = c.rebuild(
        before_batch=N.const((bb or 0) + int(c.batched("before"))),
        after_batch=N.const((ab or 0) + int(c.batched("after"))),
    )
    return expr, False


check_carry.def_batch(_check_carry_batch)


# -- ``x // y`` in generated derivative code ------------------------------------------
def _floordiv(x, y):
    """``x // y`` as the user's code means it inside a JAX transform: Python
    numbers (and other objects) as Python computes them (``7 // 0`` raises
    ZeroDivisionError), and where an operand is an array or NumPy scalar,
    ``jnp.floor_divide`` (JAX's promotion, and XLA's integer division by zero:
    ``-1``/``-2`` signed, the maximum unsigned, where NumPy's ``//`` gives 0).
    grad/jvp/vjp/linearize code spells the user's ``//`` so (``driver.finish``), as
    jit and vmap already call ``jnp.floor_divide``."""
    arrays = (np.ndarray, np.generic)
    numbers = arrays + (int, float, bool)
    if (isinstance(x, arrays) or isinstance(y, arrays)) and (
        isinstance(x, numbers) and isinstance(y, numbers)
    ):
        from .elementwise import floor_divide as _fd

        return _fd.impl(x, y)
    return x // y


floordiv = register(Primitive("ad.floordiv", _floordiv, kind="internal", differentiable=False))
floordiv.samples = lambda rng: [
    ((np.array([7, -7, 0, 5, -5], np.int32), np.array([0, 0, 0, 2, 2], np.int32)), {}),
    ((np.array([[7], [0]], np.uint8), np.array([0, 3], np.uint8)), {}),
    ((rng.normal(size=(2, 3)), 0.75), {}),
    ((np.int32(7), np.int32(0)), {}),
    ((9, 4), {}),
]


def _floordiv_batch(c):
    """Elementwise with broadcasting: the per-example ranks aligned, as for
    ``jnp.floor_divide`` (``batch_rules.elementwise_rule``)."""
    from .batch_rules import elementwise_rule

    return elementwise_rule(c)


floordiv.def_batch(_floordiv_batch)


# ---------------------------------------------------------------------------
# jnp.array's adjoint, differentiated again (defined here: it needs cotangent_like)

from .creation import array as _array_p  # noqa: E402
from .creation import array_adjoint as _array_adjoint_p  # noqa: E402


def _array_adjoint_vjp_g(h, ans, g, like):
    """``h``, the cotangent of a list like ``like``, is sparse: an entry that got
    none (the constant of ``jnp.array([x, 2.0])``) is a hole, zeros here
    (``grad(grad(f))`` raised ``float * None``)."""
    return _array_p(cotangent_like(h, ans))


_array_adjoint_p.def_vjp(_array_adjoint_vjp_g)
