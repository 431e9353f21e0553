"""Structural operations on Python lists and dicts, for the in-place methods of
user code.

srcjax treats lists and dicts as values: the normalizer rewrites ``l.insert(i,
v)``, ``l.pop(i)``, ``del d[k]``, ``l + m``, ``l * 3``, ``l.clear()`` ... into
rebindings (``l = ad.insert(l, j, v)``) over the primitives here, which carry
derivative and batching rules like every other primitive. Positions are made
nonnegative first (``ad.seq_pos``), so the rules never need a list's length to
read a negative index: cotangent lists are sparse (``None`` holes, possibly
shorter than the primal list).
"""

from __future__ import annotations

import operator

import numpy as np

from .ad import zeros_like
from .ad.linear import def_adjoint_of, def_linear, def_with_adjoint
from .control import part
from .control._trees import dict_without
from .registry import Primitive, register

__all__: list = []


def _reg(public, impl, differentiable=True, tree=True):
    prim = register(Primitive(public, impl, kind="internal", differentiable=differentiable))
    prim.returns_tree = tree
    return prim


# ---------------------------------------------------------------------------- positions
def _seq_pos(x, i, insert=False):
    """The position that ``x.pop(i)`` / ``del x[i]`` (or, with ``insert``,
    ``x.insert(i, v)``) acts on: for a list, ``i`` made nonnegative (IndexError as
    Python's when out of range; clamped to ``[0, len(x)]`` for insert, as
    ``list.insert`` does); for a dict, the key itself (KeyError when missing).
    Any other object (a deque) gets ``i`` as it is: its own methods run."""
    if isinstance(x, dict):
        if not insert and i not in x:
            raise KeyError(i)
        return i
    if isinstance(x, list):
        n = len(x)
        i = operator.index(i)
        if insert:
            return min(max(i + n, 0) if i < 0 else i, n)
        if not -n <= i < n:
            raise IndexError("list index out of range" if n else "pop from empty list")
        return i + n if i < 0 else i
    return i


seq_pos = _reg("ad.seq_pos", _seq_pos, differentiable=False, tree=False)


def _seq_index(x, v):
    """The position of the first item of list ``x`` equal to ``v`` (``x.remove(v)``):
    ValueError as Python's when there is none. Another object (a set, a deque)
    runs its own ``remove`` and gives ``None`` (``ad.delitem`` then keeps it)."""
    if not isinstance(x, list):
        x.remove(v)
        return None
    for i, item in enumerate(x):
        if item is v or bool(item == v):
            return i
    raise ValueError("list.remove(x): x not in list")


seq_index = _reg("ad.seq_index", _seq_index, differentiable=False, tree=False)


def _emptied(x):
    """An empty container of ``x``'s type (``x.clear()``); another object (a
    set) is cleared by its own method and returned."""
    if isinstance(x, (list, dict)):
        return type(x)()
    x.clear()
    return x


emptied = _reg("ad.emptied", _emptied, differentiable=False)


# ---------------------------------------------------------------------------- copies
def _as_list(x):
    """``list(x)``: a new list of the items of a list or tuple (appending to it
    leaves ``x`` alone), the keys of a dict; an array stays the array (the
    transforms read its rows the same way)."""
    if isinstance(x, (list, tuple, dict)):
        return list(x)
    return x


as_list = _reg("ad.as_list", _as_list)


def _as_tuple(x):
    """``tuple(l)`` of a list: a tuple of its items (a copy)."""
    if isinstance(x, (list, tuple, dict)):
        return tuple(x)
    return x


as_tuple = _reg("ad.as_tuple", _as_tuple)


def _shallow_copy(x):
    """``x.copy()`` of a value the normalizer cannot tell apart (a container
    argument: a dict or a list; an array): a new dict/list with the same items,
    or a copy of the array. Its derivative is the identity."""
    if type(x) is dict or type(x) is list:
        return type(x)(x)
    return np.array(x, copy=True)


shallow_copy = _reg("ad.shallow_copy", _shallow_copy)
shallow_copy.def_vjp(lambda g, ans, x: g)
shallow_copy.def_jvp(lambda t, ans, x: shallow_copy(t))
shallow_copy.samples = lambda rng: [((rng.normal(size=(2, 3)),), {})]


def _carry_canon(x):
    """A lax loop's initial carry as JAX computes with it: a Python float is a
    float32 scalar unless x64 (user R: ``t + 0.01`` from ``t = 0.0`` ran in
    float64 under jit, 100 steps to t = 1 where JAX takes 101). Python ints stay
    (a weak int carry a body promotes is JAX's weak float, which NumPy's int32
    would widen to float64). Its derivative is the identity."""
    from .. import config
    from ..tree_util import tree_map

    if config.x64_enabled:
        return x

    def leaf(v):
        t = type(v)
        if t is float:
            return np.float32(v)
        if t is complex:
            return np.complex64(v)
        return v

    return tree_map(leaf, x)


carry_canon = _reg("ad.carry_canon", _carry_canon)
# (a Python float leaf is JAX's weak float32: weak to jit's abstract values)
carry_canon.facts(keeps_weak=True)


def _carry_canon_avals(avals):
    """jit's abstract value of ``ad.carry_canon(x)`` for a tuple or list ``x``
    (an initial carry ``(0.0, 1)``): ``x``'s, each Python float or complex item
    a weakly typed float32 or complex64 scalar, as JAX computes with it; None
    where there is none (or with x64 on: the carry stays as it is)."""
    from .. import config

    x = avals.get("x")
    if type(x) not in (tuple, list) or config.x64_enabled:
        return None
    found = []

    def leaf(a):
        if type(a) in (tuple, list):
            return type(a)(leaf(v) for v in a)
        p = getattr(a, "ptype", None)
        if p is float or p is complex:
            found.append(a)
            return (), np.dtype(np.float32 if p is float else np.complex64), True
        return a

    t = leaf(x)
    return {"tree": t} if found else None


carry_canon.facts(result_shape=_carry_canon_avals)
carry_canon.def_vjp(lambda g, ans, x: g)
carry_canon.def_jvp(lambda t, ans, x: t)
carry_canon.samples = lambda rng: [((rng.normal(size=(2, 3)),), {})]


def _seq_cotangent(g, x):
    """The cotangent of ``x`` from that of ``list(x)`` / ``tuple(x)``: ``g`` itself
    (a list and a tuple cotangent mean the same), none for a dict (its keys). A
    list's is a list: the reverse of its appends pops it (a tuple comes from
    ``ad.fill_holes`` of a carry that holds ``tuple(x)``)."""
    if isinstance(x, dict):
        return None
    if type(g) is tuple and type(x) is list:
        return list(g)
    return g


seq_cotangent = _reg("ad.seq_cotangent", _seq_cotangent)


def_with_adjoint(as_list, seq_cotangent)
def_with_adjoint(as_tuple, seq_cotangent)
def_linear(seq_cotangent)
as_list.samples = lambda rng: [
    (((rng.normal(size=(2,)), rng.normal()),), {}),
    ((rng.normal(size=(3, 2)),), {}),
]
as_tuple.samples = lambda rng: [(([rng.normal(size=(2,)), rng.normal()],), {})]
seq_cotangent.samples = lambda rng: [((rng.normal(size=(3,)), rng.normal(size=(3,))), {})]


# ---------------------------------------------------------------------------- concatenation
def _concat(a, b):
    """``a + b`` for two lists or two tuples (Python's concatenation; also
    ``l.extend(m)`` and ``l += m`` of lists). Anything else is a TypeError, as in
    JAX, where arrays do not add to lists."""
    if (isinstance(a, list) and isinstance(b, list)) or (
        isinstance(a, tuple) and isinstance(b, tuple)
    ):
        return a + b
    raise TypeError(
        f'can only concatenate {type(a).__name__} (not "{type(b).__name__}") to {type(a).__name__}'
    )


concat = _reg("ad.concat", _concat)


def _concat_vjp_a(g, ans, a, b):
    return part(g, slice(None, len(a)))


def _concat_vjp_b(g, ans, a, b):
    return part(g, slice(len(a), None))


def _def_join_jvps(p):
    """The jvps of ``p(a, b)``, a container joined from two (``ad.concat``: ``a +
    b``, ``ad.dict_update``: ``{**a, **b}``), linear in both together: the tangent
    for one operand is ``p`` of it and zeros like the other. (Rules over the
    operands in order, as :mod:`.ad.linear`'s.)"""

    def jvp_a(t, ans, *operands):
        return p(t, zeros_like(*operands[1:]))

    def jvp_b(t, ans, *operands):
        return p(zeros_like(*operands[:1]), t)

    p.def_jvp(jvp_a, jvp_b)


concat.def_vjp(_concat_vjp_a, _concat_vjp_b)
_def_join_jvps(concat)


def _concat_samples(rng):
    return [
        (([rng.normal(size=(2,)), rng.normal()], [rng.normal(size=(3,))]), {}),
        (((rng.normal(size=(2,)),), (rng.normal(), rng.normal(size=(2, 2)))), {}),
    ]


concat.samples = _concat_samples


def _repeat(x, n):
    """``x * n`` for a list or tuple ``x`` and an integer ``n`` (``[v] * 3``)."""
    if not isinstance(x, (list, tuple)):
        raise TypeError(f"can't multiply sequence by non-int of type '{type(x).__name__}'")
    return x * operator.index(n)


repeat = _reg("ad.repeat", _repeat)


def _repeat_vjp(g, ans, x, n):
    return fold(g, len(x), n)


def _repeat_jvp(t, ans, x, n):
    return repeat(t, n)


repeat.def_vjp(_repeat_vjp)
repeat.def_jvp(_repeat_jvp)
repeat.samples = lambda rng: [(([rng.normal(size=(2,)), rng.normal()], 3), {})]


def _fold(g, size, n):
    """The cotangent of ``x`` from that of ``x * n``: the ``n`` blocks of ``size``
    items summed (holes, ``None``, are zeros; a hole stays a hole)."""
    if g is None:
        return None
    out = [None] * size
    for j, item in enumerate(list(g)[: size * operator.index(n)]):
        if item is not None:
            k = j % size
            out[k] = item if out[k] is None else out[k] + item
    return tuple(out) if isinstance(g, tuple) else out


fold = _reg("ad.fold", _fold)


def_adjoint_of(fold, repeat)  # fold(g, len(x), n): the length stands for x
fold.samples = lambda rng: [
    (([rng.normal(size=(2,)), rng.normal(), rng.normal(size=(2,)), rng.normal()], 2, 2), {})
]


# ---------------------------------------------------------------------------- insert / delete
def _insert(x, idx, v):
    """``x.insert(idx, v)`` as a new list (``idx`` nonnegative: ``ad.seq_pos``);
    another object (a deque) runs its own ``insert`` and is returned."""
    if not isinstance(x, list):
        x.insert(idx, v)
        return x
    out = list(x)
    out.insert(idx, v)
    return out


insert = _reg("ad.insert", _insert)


def _insert_vjp_x(g, ans, x, idx, v):
    return delitem(g, idx)


def _insert_vjp_v(g, ans, x, idx, v):
    return part(g, idx, v)


def _insert_jvp_x(t, ans, x, idx, v):
    return insert(t, idx, zeros_like(v))


def _insert_jvp_v(t, ans, x, idx, v):
    return insert(zeros_like(x), idx, t)


insert.def_vjp(_insert_vjp_x, None, _insert_vjp_v)
insert.def_jvp(_insert_jvp_x, None, _insert_jvp_v)
insert.samples = lambda rng: [
    (([rng.normal(size=(2,)), rng.normal()], 1, rng.normal(size=(3,))), {})
]


def _delitem(x, idx):
    """``del x[idx]`` as a new container: a nonnegative list position
    (``ad.seq_pos``) or a dict key. A missing key, or a position past the end of
    a (sparse, cotangent) list, leaves the container as it is; ``None`` (a zero
    cotangent) stays ``None``. Another object (a deque) is changed by ``del``,
    unless ``idx`` is ``None`` (its ``remove`` ran already)."""
    if x is None:
        return None
    if isinstance(x, dict):
        return dict_without(x, idx)
    if isinstance(x, list):
        out = list(x)
        if idx < len(out):
            del out[idx]
        return out
    if idx is not None:
        del x[idx]
    return x


delitem = _reg("ad.delitem", _delitem)


delitem.samples = lambda rng: []  # its adjoint leaves a hole: checked through grad


def _undelete(g, idx):
    """The cotangent of ``x`` from that of ``ad.delitem(x, idx)``: a hole
    (``None``) put back at list position ``idx``; a dict cotangent is already
    one of ``x`` (the deleted key is a hole)."""
    if g is None or isinstance(g, dict):
        return g
    out = list(g)
    if idx <= len(out):
        out.insert(idx, None)
    return out


undelete = _reg("ad.undelete", _undelete)


def_linear(delitem, undelete)
def_linear(undelete, delitem)
undelete.samples = lambda rng: []  # a list with a hole: checked through grad


# ---------------------------------------------------------------------------- dict update
def _dict_update(d, m):
    """``d.update(m)`` as a new dict (``{**d, **m}``; ``m`` a dict). Another
    object (a set) runs its own ``update`` and is returned."""
    if not isinstance(d, dict):
        d.update(m)
        return d
    if not isinstance(m, dict):
        raise TypeError(
            f"dict.update with a {type(m).__name__} is not supported in transformed "
            "functions: pass a dict, or key=value arguments"
        )
    out = dict(d)
    out.update(m)
    return out


dict_update = _reg("ad.dict_update", _dict_update)


def _drop_keys(g, m):
    """A dict cotangent without the keys of ``m`` (``None``, zero, stays ``None``)."""
    if g is None:
        return None
    return {k: v for k, v in g.items() if k not in m}


drop_keys = _reg("ad.drop_keys", _drop_keys)


def _take_keys(g, m):
    """A dict cotangent restricted to the keys of ``m`` (``None`` stays ``None``)."""
    if g is None:
        return None
    return {k: v for k, v in g.items() if k in m}


take_keys = _reg("ad.take_keys", _take_keys)


def _dict_update_vjp_d(g, ans, d, m):
    return drop_keys(g, m)


def _dict_update_vjp_m(g, ans, d, m):
    return take_keys(g, m)


dict_update.def_vjp(_dict_update_vjp_d, _dict_update_vjp_m)
_def_join_jvps(dict_update)
def_linear(drop_keys)  # masks: their own transposes
def_linear(take_keys)
for _p in (dict_update, drop_keys, take_keys):
    _p.samples = lambda rng: []  # dicts: checked through grad (tests/test_list_dict_methods.py)


# ---------------------------------------------------------------------------- batching
def _batch_containers(*operands, index=None):
    """vmap of a container operation: the container operands made batched (leaf
    by leaf); a per-example position or count falls back to a loop (``None``)."""

    def rule(c):
        if index is not None and c.batched(index):
            return None
        changes = {}
        for name in operands:
            v = c.bound.get(name)
            if v is not None and not (hasattr(v, "value") and v.value is None):
                changes[name] = c.materialize(v)
        return c.rebuild(**changes)

    return rule


def _same_for_all(*operands):
    """A position (or an empty container) that is the same for every example, or
    a loop over the examples when an operand it reads is per-example."""

    def rule(c):
        if any(c.batched(name) for name in operands):
            return None
        return c.rebuild(), False

    return rule


as_list.def_batch(_batch_containers("x"))
shallow_copy.def_batch(_batch_containers("x"))
carry_canon.def_batch(_batch_containers("x"))
as_tuple.def_batch(_batch_containers("x"))
seq_cotangent.def_batch(_batch_containers("g", "x"))
concat.def_batch(_batch_containers("a", "b"))
dict_update.def_batch(_batch_containers("d", "m"))
drop_keys.def_batch(_batch_containers("g"))
take_keys.def_batch(_batch_containers("g"))
repeat.def_batch(_batch_containers("x", index="n"))
fold.def_batch(_batch_containers("g", index="n"))
insert.def_batch(_batch_containers("x", "v", index="idx"))
delitem.def_batch(_batch_containers("x", index="idx"))
undelete.def_batch(_batch_containers("g", index="idx"))
seq_pos.def_batch(_same_for_all("i"))
seq_index.def_batch(_same_for_all("x", "v"))
emptied.def_batch(_same_for_all())
