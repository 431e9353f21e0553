"""Pytree utilities called inside transformed code: ``tree_leaves`` and its
adjoint, constructing a registered pytree class, ``tree_unflatten`` like a
tree, and ``s._replace(f=v)`` on a namedtuple known only at run time.
"""

from __future__ import annotations

import collections

import numpy as np

from ...errors import NonDifferentiableError
from ..ad.linear import def_linear, def_transpose_pair
from ..registry import Primitive, register
from ..registry import alias as registry_alias
from ._trees import _class_kind, _fill, _unflatten_sparse, broadcast_source, dict_like
from .cotangents import _tree_add


# -- pytree utilities called inside transformed code ---------------------------------
def _tree_leaves_prim(tree, is_leaf=None):
    """The leaves of ``tree`` in flattening order (``jax.tree_util.tree_leaves``),
    as a primitive: ``sum(jnp.sum(w ** 2) for w in tree_leaves(params))`` inside a
    differentiated function."""
    from ...tree_util import tree_leaves as _leaves

    return _leaves(tree, is_leaf)


tree_leaves_p = register(Primitive("ad.tree_leaves", _tree_leaves_prim, kind="internal"))
tree_leaves_p.returns_tree = True


def _tree_leaves_adjoint(g, tree):
    """The cotangent of ``tree`` from that of its leaf list ``g`` (``None`` items,
    or ``g`` itself ``None``, are zero: the result keeps them as holes)."""
    from ...tree_util import tree_structure

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


tree_leaves_p.def_vjp(tree=_tree_leaves_vjp)
tree_leaves_p.def_jvp(tree=_tree_leaves_jvp)
tree_leaves_p.samples = lambda rng: []  # containers: tested through grad
tree_leaves_adjoint.samples = lambda rng: []


def _alias_tree_utilities():
    from ... import tree_util

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
    vmapped construction sees broadcast views of one argument), or two batch
    broadcasts of one scalar value (each made new memory: bug 30)."""
    if a is b:
        return True
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
        return False
    source = broadcast_source(a)
    if source is not None and source is broadcast_source(b):
        return a.shape == b.shape
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
        from ...tree_util import _namedtuple_kind

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
    from ...pytree import unflatten_like

    return unflatten_like(tree, leaves)


tree_unflatten_like = register(
    Primitive("ad.tree_unflatten_like", _tree_unflatten_like, kind="internal")
)
tree_unflatten_like.returns_tree = True


def _tree_leaves_dense(g, like):
    """The leaves of the cotangent ``g`` of a pytree shaped like ``like``, holes
    (``None``, missing dict keys) filled with zeros: one per leaf of ``like``, in
    flattening order."""
    from ...tree_util import tree_leaves as _leaves

    return _leaves(_fill(g, like))


tree_leaves_dense = register(Primitive("ad.tree_leaves_dense", _tree_leaves_dense, kind="internal"))
tree_leaves_dense.returns_tree = True
def_linear(tree_leaves_adjoint, tree_leaves_dense)


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


nt_replace.def_vjp(x=_nt_replace_vjp_x, v=_nt_replace_vjp_v)
nt_replace.def_jvp(x=_nt_replace_jvp_x, v=_nt_replace_jvp_v)
def_linear(nt_drop)
def_transpose_pair(nt_field, nt_embed)
