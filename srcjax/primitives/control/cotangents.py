"""Seeding, checking and sparse cotangents: ``ad.seed`` (``grad``'s 1), the checks
of a user-given cotangent (``vjp``), ``ad.cotangent_like``, ``ad.setitem``,
``lax.stop_gradient``.

The adjoint of ``w = params["w"]`` is a container holding ``w_bar`` at "w" and
*nothing* elsewhere: ``None`` stands for a zero cotangent (``ad.tree_add``,
``ad.part``, ``ad.forget``, the tape's ``ad.push``/``ad.pop``); ``ad.densify``
and ``ad.fill_holes`` fill the holes with zeros once, at the end.
"""

from __future__ import annotations

import numpy as np

from ..._array import _IMMUTABLE
from ...errors import NonDifferentiableError
from ..ad.linear import def_identity, def_linear
from ..direct_forms import Literal, strong_arrays
from ..registry import Primitive, register
from ..registry import alias as registry_alias
from ._trees import _class_kind, _fill, _unflatten_sparse, dict_like, dict_without

__all__ = ["stop_gradient"]


_ONES: dict = {}
#: NumPy float scalar type -> its 1 (the seed of a scalar output: the common case)
_SCALAR_ONES = {t: t(1.0) for t in (np.float16, np.float32, np.float64)}


def _seed(out):
    """Cotangent seed for ``grad``: 1 of ``out``'s dtype.

    Raises TypeError as JAX does when ``out`` is not a real floating scalar
    (``grad`` requires real scalar outputs; see ``jax.grad``).
    """
    one = _SCALAR_ONES.get(type(out))
    if one is not None:
        return one  # a float scalar, first (W3's per-call cost)
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
    if dt.kind != "f" and dt.name != "bfloat16":  # (ml_dtypes' bfloat16: kind "V")
        raise NonDifferentiableError(
            f"grad requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {dt.name}.",
            hint="for holomorphic functions use a real loss; for integers, cast to float",
        )
    return dt.type(1.0)


def _seed_direct(avals):
    """jit's seed of a float32/float64 scalar output: the constant, which reads
    nothing (grad's forward value is then computed only where it is used)."""
    out = avals.get("out")
    if strong_arrays(out) and out.shape == ():
        return "ad.one", (Literal(out.dtype.name),)
    return None


def _seed_shape(avals):
    """jit's abstract value of the seed of a weakly typed float array (grad at a
    literal point inside jit): weak as ``out`` (JAX's seed is ``ones_like(out)``);
    of a weak Python float (or a weak scalar Array jit holds as one), ``out``'s
    own abstract value: ``jit(lambda p: p - 0.1 * grad(f)(p))`` stays weak."""
    out = avals.get("out")
    if getattr(out, "ptype", None) is float and out.shape == ():
        return {"tree": out}
    if getattr(out, "ptype", True) is not None or not getattr(out, "wt", False):
        return None
    return (tuple(out.shape), out.dtype, True) if out.dtype.kind == "f" else None


seed = register(Primitive("ad.seed", _seed, kind="internal", differentiable=False))
seed.facts(array_result=True, pure=True, direct=_seed_direct, result_shape=_seed_shape)


def _one(dtype):
    """1 of ``dtype`` (a name), a NumPy scalar: jit's form of ``ad.seed``."""
    return _SCALAR_ONES[np.dtype(dtype).type]


one = register(Primitive("ad.one", _one, kind="internal", differentiable=False))
one.facts(array_result=True, pure=True)
one.samples = lambda rng: [(("float32",), {}), (("float64",), {})]


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
    from ...errors import TransformValueError
    from ...tree_util import tree_structure

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
    from ...dtypes import canonicalize_dtype
    from ...errors import TransformValueError

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


def_identity(check_cotangent)  # a check: the value passes through
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
# (an array of x's shape and dtype is the result as it is: jit copies it)
cotangent_like.facts(container_from=("x",), identity_operand="ct")


def _cotangent_like_shape(avals):
    """jit's abstract value of ``ad.cotangent_like(ct, x)`` for a float array ``x``
    (whatever ``ct``'s is: a gradient read from a global's product): ``x``'s, its
    weak type too (JAX: a gradient has its primal's type; grad at a literal point
    inside jit is weak whatever the output's type). None for a Python number."""
    x = avals.get("x")
    if not (hasattr(x, "shape") and hasattr(x, "dtype")) or getattr(x, "ptype", True):
        return None
    if np.dtype(x.dtype).kind != "f":
        return None
    return tuple(x.shape), x.dtype, x.weak_type


cotangent_like.facts(result_shape=_cotangent_like_shape)


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
    if isinstance(x, (tuple, str)) or not hasattr(x, "shape"):
        raise TypeError(f"'{type(x).__name__}' object does not support item assignment")
    raise TypeError(_IMMUTABLE)  # (an array: JAX's message)


setitem = register(Primitive("ad.setitem", _setitem, kind="structural")).facts(tree_valued=True)
setitem.facts(container_from=("x",))


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
    if type(a) is np.ndarray and type(b) is np.ndarray:
        return a + b  # (the common leaf: what the general path ends in)
    if type(a) is dict and type(b) is dict:  # (a parameter dict's cotangent, per trip)
        out = dict(a)
        for k, v in b.items():
            x = out.get(k)
            out[k] = v if x is None else _tree_add(x, v)
        return out
    if type(a) is list and type(b) is list and len(a) == len(b):
        # the common container first (a list's cotangents, the parameters of a
        # layer loop): one comprehension, the holes taken inline
        return [y if x is None else x if y is None else _tree_add(x, y) for x, y in zip(a, b)]
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


def _tree_add_direct(avals):
    """jit's ``a + b`` for two arrays of one shape and float dtype (no zero
    cotangent, no container: the helper's last line)."""
    a, b = avals.get("a"), avals.get("b")
    if strong_arrays(a, b) and a.shape == b.shape:
        return "jnp.add", ("a", "b")
    return None


tree_add = register(Primitive("ad.tree_add", _tree_add, kind="internal")).facts(tree_valued=True)


def _tree_add_shape(avals):
    """jit's abstract value of the sum of two cotangents of a weak Python float
    (or of a weak scalar Array jit holds as one): weak as they are, as JAX's
    ``add`` of weak operands (``value_and_grad(lambda a: a * a)`` at a weak point)."""
    a, b = avals.get("a"), avals.get("b")
    if getattr(a, "ptype", None) is float and getattr(b, "ptype", None) is float:
        if a.shape == () and b.shape == () and a.dtype == b.dtype:
            return {"tree": a}
    return None


tree_add.facts(container_from=("a",), pure=True, direct=_tree_add_direct)
tree_add.facts(result_shape=_tree_add_shape)


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
    from ..ad import index_adjoint

    return index_adjoint(ct, x, idx)


tree_index_adjoint = register(
    Primitive("ad.tree_index_adjoint", _tree_index_adjoint, kind="internal")
).facts(tree_valued=True, container_from=("x",))


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


pop = register(Primitive("ad.pop", _pop, kind="internal", differentiable=False)).facts(stack="pop")


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
        return dict_without(ct, idx)
    if isinstance(ct, (list, tuple)):
        out = list(ct)
        out[idx] = None
        return out
    out = np.array(ct, copy=True)
    out[idx] = 0
    return out


forget = register(Primitive("ad.forget", _forget, kind="internal")).facts(tree_valued=True)


def_linear(forget)
forget.samples = lambda rng: [((rng.normal(size=(2, 3)), 1), {})]


def _pop_like(lst, like):
    """Pop the last entry of a list cotangent; a hole gives zeros like ``like``."""
    out = None if lst is None or not lst else lst.pop()
    if out is None:
        return _fill(None, like)
    return out


pop_like = register(
    Primitive("ad.pop_like", _pop_like, kind="internal", differentiable=False)
).facts(stack="pop")


def _push(lst, v):
    """Append ``v`` to a list cotangent (``None`` = empty) and return the list."""
    if lst is None:
        lst = []
    lst.append(v)
    return lst


push = register(Primitive("ad.push", _push, kind="internal", differentiable=False)).facts(
    stack="push"
)


def mark_tree_outputs() -> None:
    """Flag the registered primitives whose result is a Python container."""
    from ..registry import REGISTRY

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


def _densify(ct, like):
    """A cotangent with its holes filled: ``None`` becomes zeros like ``like`` (arrays);
    containers keep their (sparse) structure."""
    if ct is None and not isinstance(like, (dict, list, tuple)):
        return _fill(None, like)
    return ct


densify = register(Primitive("ad.densify", _densify, kind="internal"))
densify.facts(pure=True, identity_operand="ct")


def_linear(densify)
densify.samples = lambda rng: [((rng.normal(size=(3,)), rng.normal(size=(3,))), {})]


def _fill_holes(ct, like, inexact=False):
    """``ct`` with every hole (``None``, also inside containers) filled with zeros
    of the shape and dtype of the matching part of ``like``: the cotangent a
    custom_vjp's ``bwd`` receives (JAX passes zeros for an unused output).
    ``inexact=True`` (a lax loop's carried cotangent, see
    reverse/control_flow.py) fills only float and complex leaves of arrays,
    numbers, tuples, lists and dicts: the holes of integer and bool leaves stay
    (no cotangent flows into them), and so does a hole of any other container
    (a namedtuple or registered class: left as it is)."""
    if inexact:
        return _fill_inexact(ct, like)
    return _fill(ct, like)


def _fill_inexact(ct, like):
    t = type(like)
    if t is dict and (ct is None or type(ct) is dict):
        g = ct or {}
        return {k: _fill_inexact(g.get(k), v) for k, v in like.items()}
    if (t is tuple or t is list) and (ct is None or len(ct) == len(like)):
        # (a list, as ad.tree_index_adjoint and ad.tree_add build a tuple's: the
        # cotangent a trip leaves has the structure of the one it starts from)
        g = ct or [None] * len(like)
        return [_fill_inexact(a, b) for a, b in zip(g, like)]
    if ct is not None or not _inexact_leaf(like):
        return ct
    return _fill(None, like)


def _inexact_leaf(x) -> bool:
    """Whether ``x`` is a float or complex array or number."""
    if isinstance(x, (float, complex)):
        return True
    dt = getattr(x, "dtype", None)
    return hasattr(x, "shape") and getattr(dt, "kind", None) in ("f", "c")


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
