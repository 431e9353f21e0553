"""Runtime helpers of a batched ``if``: the per-example selection
``ad.select`` and its cotangents (``ad.select_ct``), the safe inputs of a branch
run for every example (``ad.branch_input``), and the checks that both branches
give one structure and shape (``ad.check_branch_values``,
``ad.check_cond_types``)."""

from __future__ import annotations

import numpy as np

from ..._prng_key import PRNGKeyArray, key_base, rewrap
from ...errors import TransformValueError
from ..branch_types import check_branch_types
from ..control._trees import _class_kind, class_map
from ..control.cotangents import fill_holes
from ..creation import zeros_like
from ._base import _def_rules, _reg
from .runtime_trees import _lift


def _aligned(take, v):
    """``take`` reshaped to broadcast against batched ``v`` (same leading axes)."""
    k = np.ndim(take)
    return np.reshape(take, np.shape(take) + (1,) * (np.ndim(v) - k))


def _tree_zeros(x):
    if x is None:
        return None
    if isinstance(x, dict):
        return {k: _tree_zeros(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        vals = [_tree_zeros(v) for v in x]
        return type(x)(*vals) if hasattr(x, "_fields") else type(x)(vals)
    if _class_kind(x) is not None:
        return class_map(_tree_zeros, x)
    x = np.asarray(x)
    return np.zeros(x.shape, x.dtype)


def _select(take, a, b):
    """Per example: ``a`` where ``take`` else ``b`` (``take`` holds one flag per
    example, its axes the leading axes of ``a`` and ``b``). Per-example ranks are
    aligned; containers are selected leaf by leaf; ``None`` (a value undefined on
    one path) gives the other."""
    if a is None and b is None:
        return None
    if a is None or b is None:
        # None is a value not assigned yet on that path, or a zero cotangent (a
        # hole): the examples that take it get zeros, never the other path's value
        other = a if b is None else b
        if isinstance(other, (dict, list, tuple)) or _class_kind(other) is not None:
            zeros = _tree_zeros(other)
        else:
            o = np.asarray(other)
            zeros = np.zeros(o.shape, o.dtype)
        a, b = (other, zeros) if b is None else (zeros, other)
    a_tree = isinstance(a, (dict, list, tuple)) or _class_kind(a) is not None
    b_tree = isinstance(b, (dict, list, tuple)) or _class_kind(b) is not None
    if a_tree != b_tree or (a_tree and type(a) is not type(b)):
        _branch_mismatch(f"a {_kind_of(a)} in one, a {_kind_of(b)} in the other")
    if isinstance(a, dict):
        # a key missing on one side is a hole of a sparse cotangent (ad.forget)
        keys = list(a) + [k for k in b if k not in a]
        return {k: _select(take, a.get(k), b.get(k)) for k in keys}
    if isinstance(a, (list, tuple)):
        if len(a) != len(b) and isinstance(a, tuple):
            # (lists of different lengths: the tapes higher-order adjoint code
            # replays in branches, `tape = tape + [v]`, are selected item by item)
            _branch_mismatch(
                f"a {type(a).__name__} of {len(a)} items in one, of {len(b)} in the other"
            )
        vals = [_select(take, x, y) for x, y in zip(a, b)]
        return type(a)(*vals) if hasattr(a, "_fields") else type(a)(vals)
    if _class_kind(a) is not None:
        return class_map(lambda x, y: _select(take, x, y), a, b)
    if isinstance(a, PRNGKeyArray) or isinstance(b, PRNGKeyArray):
        return rewrap(
            a if isinstance(a, PRNGKeyArray) else b, _select(take, key_base(a), key_base(b))
        )
    k = np.ndim(take)
    a = np.asarray(a)
    b = np.asarray(b)
    if a.ndim > k and b.ndim > k and a.shape[k:] != b.shape[k:]:
        # (a per-example scalar is let through: adjoint code selects zero
        # cotangents held as scalars against arrays)
        _branch_mismatch(f"per-example shape {a.shape[k:]} in one, {b.shape[k:]} in the other")
    nd = max(a.ndim, b.ndim)
    a = _lift(a, nd - k, k)
    b = _lift(b, nd - k, k)
    return np.where(np.reshape(take, np.shape(take) + (1,) * (nd - k)), a, b)


select = _reg("ad.select", _select).facts(tree_valued=True, weak_leaves_from=("a", "b"))


def _check_branch_values(take, a, b, a_batched, b_batched, name, none_is_value=True):
    """Raise unless the values the two branches of a per-example ``if`` give the
    user's variable ``name`` have one structure and one per-example shape: both
    ``None`` or neither, lists of one length, dicts with one key set, arrays of one
    per-example shape (``a_batched``/``b_batched``: whether ``a``/``b`` carry the
    batch axes, those of ``take``; ``none_is_value`` False: a None on one side is
    a path that left the name unset, not checked). :func:`_select` lets these through, as the
    zero cotangents and tapes of generated adjoint code need; a user's value has
    no per-example answer then (Python gives each example its own structure)."""
    k = np.ndim(take)
    if type(a) is np.ndarray and type(b) is np.ndarray:
        # the common case, two arrays of one shape: one comparison (~1 us a call)
        sa = a.shape[k:] if a_batched else a.shape
        sb = b.shape[k:] if b_batched else b.shape
        if sa == sb:
            return

    def walk(x, y, path):
        where = f"`{name}{path}`" if name else f"the returned value{path}"
        if (x is None or y is None) and not none_is_value:
            return
        if (x is None) != (y is None):
            kind = _kind_of(x if y is None else y)
            article = "an" if kind[0] in "aeiou" else "a"
            _branch_mismatch(f"{where} is None in one and {article} {kind} in the other")
        if x is None:
            return
        x_tree = isinstance(x, (dict, list, tuple)) or _class_kind(x) is not None
        y_tree = isinstance(y, (dict, list, tuple)) or _class_kind(y) is not None
        if x_tree or y_tree:
            if type(x) is not type(y):
                _branch_mismatch(f"{where} is a {_kind_of(x)} in one, a {_kind_of(y)} in the other")
            if isinstance(x, dict):
                if set(x) != set(y):
                    _branch_mismatch(
                        f"{where} has keys {sorted(map(str, x))} in one, "
                        f"{sorted(map(str, y))} in the other"
                    )
                for key in x:
                    walk(x[key], y[key], f"{path}[{key!r}]")
            elif isinstance(x, (list, tuple)):
                if len(x) != len(y):
                    _branch_mismatch(
                        f"{where} is a {type(x).__name__} of {len(x)} items in one, "
                        f"of {len(y)} in the other"
                    )
                for i, (u, v) in enumerate(zip(x, y)):
                    walk(u, v, f"{path}[{i}]")
            return
        sx = np.shape(x)[k:] if a_batched else np.shape(x)
        sy = np.shape(y)[k:] if b_batched else np.shape(y)
        if sx != sy:
            _branch_mismatch(f"{where} has per-example shape {sx} in one, {sy} in the other")

    walk(a, b, "")


check_branch_values = _reg("ad.check_branch_values", _check_branch_values, differentiable=False)
check_branch_values.facts(effectful=True)


def _check_cond_types(take, a, b, a_batched, b_batched, what, name_a, name_b):
    """JAX's TypeError when the two branches of a ``lax.cond`` (``what`` "cond")
    or of two ``lax.switch`` branches (``what`` "switch"), both run for a mixed
    batch under vmap, give outputs of different pytree structure, per-example
    shape or dtype (``a_batched``/``b_batched``: whether ``a``/``b`` carry the
    batch axes of ``take``). :func:`_select` would broadcast one of them."""
    k = np.ndim(take)
    lead = (k if a_batched else 0, k if b_batched else 0)
    check_branch_types(what, (name_a, name_b), a, b, lead)


check_cond_types = _reg("ad.check_cond_types", _check_cond_types, differentiable=False)
check_cond_types.facts(effectful=True)


def _kind_of(x) -> str:
    if isinstance(x, (dict, list, tuple)):
        return type(x).__name__
    if _class_kind(x) is not None:
        return type(x).__name__
    return "array"


def _generated_caller():
    """Location of the innermost line of srcjax-generated code on the stack (its
    message then names the user's line that line comes from), or None."""
    import sys

    from ...errors import ORIGINS, Location

    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_filename in ORIGINS:
            return Location(f.f_code.co_filename, f.f_lineno)
        f = f.f_back
    return None


def _branch_mismatch(what: str):
    """A batched ``if`` whose branches give a name values of different structures
    or per-example shapes: no per-example selection exists (JAX's lax.cond refuses
    too); never broadcast one into the other."""
    raise TransformValueError(
        "under vmap, the branches of an `if` (or the passes of a loop) that differ per "
        f"example give a value different structures or shapes: {what} (JAX's lax.cond "
        "requires both branches to give the same pytree structure, shape and dtype)",
        _generated_caller(),
        hint="make both branches give the same structure and shape (e.g. compute both "
        "and choose with jnp.where), or move the condition out of the vmapped function",
    )


def _pair_map(fn, a, b):
    """``fn(a_leaf, b_leaf)`` over the structure of ``a`` with ``b``'s matching
    items (containers and registered classes); a ``None`` on either side (a zero
    cotangent) stays ``None``."""
    if a is None or b is None:
        return None
    if isinstance(a, dict):
        return {
            k: _pair_map(fn, v, b.get(k) if isinstance(b, dict) else b[k]) for k, v in a.items()
        }
    if isinstance(a, (list, tuple)):
        vals = [_pair_map(fn, v, b[i]) for i, v in enumerate(a)]
        return type(a)(*vals) if hasattr(a, "_fields") else type(a)(vals)
    if _class_kind(a) is not None:
        return class_map(lambda v, bv: _pair_map(fn, v, bv), a, b)
    return fn(a, b)


def _select_ct(g, take, x, which):
    """The cotangent of operand ``x`` of ``select(take, a, b)`` (``which`` True for
    ``a``): ``g`` masked to the examples that chose it, summed to ``x``'s shape.
    Containers leaf by leaf; a sparse cotangent keeps its holes (``None``)."""

    def leaf(g, x):
        g = np.asarray(g)
        k = np.ndim(take)
        t = _aligned(take, g)
        masked = np.where(t if which else np.logical_not(t), g, np.zeros((), g.dtype))
        xs = np.shape(x)
        lifted = xs[:k] + (1,) * (g.ndim - len(xs)) + xs[k:]
        axes = tuple(i for i, n in enumerate(lifted) if n == 1 and g.shape[i] != 1)
        if axes:
            masked = masked.sum(axis=axes, keepdims=True)
        return masked.reshape(xs)

    return _pair_map(leaf, g, x)


select_ct = _reg("ad.select_ct", _select_ct)
select_ct.samples = lambda rng: [
    ((rng.normal(size=(3, 2)), np.array([True, False, True]), rng.normal(size=(3, 2)), True), {}),
    ((rng.normal(size=(3, 2)), np.array([True, False, True]), rng.normal(size=(3, 1)), False), {}),
]


def _select_ct_adjoint(h, take, g, which):
    """The transpose of :func:`_select_ct` in ``g``: ``h`` (shaped like ``x``)
    broadcast to ``g``'s shape and masked to the examples with ``take == which``."""

    def leaf(g, h):
        g = np.asarray(g)
        h = np.asarray(h)
        k = np.ndim(take)
        hs = np.shape(h)
        lifted = np.reshape(h, hs[:k] + (1,) * (g.ndim - len(hs)) + hs[k:])
        full = np.broadcast_to(lifted, g.shape)
        t = _aligned(take, g)
        return np.where(t if which else np.logical_not(t), full, np.zeros((), full.dtype))

    return _pair_map(leaf, g, h)


select_ct_adjoint = _reg("ad.select_ct_adjoint", _select_ct_adjoint)
select_ct_adjoint.samples = lambda rng: [
    ((rng.normal(size=(3, 2)), np.array([True, False, True]), rng.normal(size=(3, 2)), True), {}),
    ((rng.normal(size=(3, 1)), np.array([True, False, True]), rng.normal(size=(3, 2)), False), {}),
]


def _select_ct_vjp(h, ans, g, take, which):
    return select_ct_adjoint(h, take, g, which)


def _select_ct_jvp(t, ans, take, x, which):
    return select_ct(t, take, x, which)


def _select_ct_adjoint_vjp(k, ans, h, take, which):
    return select_ct(k, take, h, which)


def _select_ct_adjoint_jvp(t, ans, take, g, which):
    return select_ct_adjoint(t, take, g, which)


# (second-order derivatives of vmapped code with a batched `if`: hessian(loss) where
# loss vmaps a function with a branch)
_def_rules(select_ct, "g", _select_ct_vjp, _select_ct_jvp)
_def_rules(select_ct_adjoint, "h", _select_ct_adjoint_vjp, _select_ct_adjoint_jvp)


def _select_vjp_a(g, ans, take, a):
    return select_ct(g, take, a, True)


def _select_vjp_b(g, ans, take, b):
    return select_ct(g, take, b, False)


def _select_jvp_a(t, ans, take, b):
    # (fill_holes: zeros like b also when b is a container, a while_loop's tuple
    # carry under jvp(vmap(f)); the two terms add by ad.tree_add, tree_valued)
    return select(take, t, fill_holes(None, b))


def _select_jvp_b(t, ans, take, a):
    return select(take, fill_holes(None, a), t)


def _select_samples(rng):
    take = np.array([True, False, True])
    return [
        ((take, rng.normal(size=(3, 2)), rng.normal(size=(3, 2))), {}),
        ((take, rng.normal(size=(3,)), rng.normal(size=(3, 2))), {}),
    ]


select.samples = _select_samples


def _branch_input(take, x, which=True):
    """``x`` where ``take == which``, elsewhere the value of ``x`` at the first
    example with ``take == which``: the inputs of a branch evaluated for every example, safe
    for those that do not take it (they compute what a taking example computes;
    the gradient does not flow through the substitute)."""
    if x is None:
        return None  # not assigned yet on this path (see batching.batch)
    if isinstance(x, dict):
        return {k: _branch_input(take, v, which) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        vals = [_branch_input(take, v, which) for v in x]
        return type(x)(*vals) if hasattr(x, "_fields") else type(x)(vals)
    if _class_kind(x) is not None:
        return class_map(lambda v: _branch_input(take, v, which), x)
    if isinstance(x, PRNGKeyArray):
        return rewrap(x, _branch_input(take, x._base_array, which))
    take = np.asarray(take)
    if not which:
        take = np.logical_not(take)
    x = np.asarray(x)
    if take.size == 0 or take.all() or x.ndim < take.ndim:
        return x
    flat = int(np.argmax(take.reshape(-1)))
    if not take.reshape(-1)[flat]:
        return x
    idx = np.unravel_index(flat, take.shape)
    fill = x[idx]
    return np.where(_aligned(take, x), x, fill)


branch_input = _reg("ad.branch_input", _branch_input).facts(same_structure=("x",))
# its rules are the identity's: the substitute values of the examples that do not take
# the branch get no gradient (their results are discarded by ad.select), so finite
# differences agree only where every example takes it
branch_input.samples = lambda rng: [
    ((np.array([True, True, True]), rng.normal(size=(3, 2))), {}),
    ((np.array([False, False]), rng.normal(size=(2, 3)), False), {}),
]


def _branch_input_vjp(g, ans, take, which=True):
    return select(take, g, zeros_like(g)) if which else select(take, zeros_like(g), g)


def _branch_input_jvp(t, ans, take, which=True):
    return select(take, t, zeros_like(t)) if which else select(take, zeros_like(t), t)


select.def_vjp(a=_select_vjp_a, b=_select_vjp_b)
select.def_jvp(a=_select_jvp_a, b=_select_jvp_b)
_def_rules(branch_input, "x", _branch_input_vjp, _branch_input_jvp)
