"""``srcjax.lax``: JAX's structured control flow, as plain Python.

Called directly, each function runs its Python equivalent, on initial carries
and operands canonicalized as JAX does (a Python ``1.0`` is float32, ``0``
int32 unless x64; 64-bit arrays become 32-bit). Inside a function
that srcjax transforms, the normalizer rewrites each call into the Python
control flow it stands for (``cond`` becomes ``if``, ``fori_loop`` a ``for``,
``while_loop`` a ``while``, ``scan`` a loop that stacks its outputs), so every
transform differentiates and batches them like any Python loop. In particular
reverse mode works through ``while_loop`` (JAX refuses it): the trip count is
taped as for a Python ``while``.

Semantics and signatures follow ``jax.lax`` (https://docs.jax.dev/en/latest/jax.lax.html).
"""

from __future__ import annotations

import sys as _sys
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .. import dtypes
from .._array import wrap_owned as _wrap_owned
from .._array import wrap_weak as _wrap_weak
from ..codegen.emit import register_namespace as _register_namespace
from ..primitives import collectives as _collectives
from ..primitives import registry as _registry
from ..primitives.branch_types import check_branch_types as _check_branch_types
from ..primitives.collectives import *  # noqa: F403  (psum, pmean, ... all_to_all: jax.lax's collectives)
from ..primitives.control import leading_length as _leading_length
from ..primitives.control import stop_gradient
from ..primitives.control.custom_checks import _check_switch_index
from ..primitives.conv import *  # noqa: F403  (conv_general_dilated, conv_transpose, reduce_window ...)
from ..primitives.creation import asarray as jnp_asarray
from ..primitives.creation import shape as jnp_shape
from ..primitives.elementwise import logaddexp as jnp_logaddexp
from ..primitives.elementwise import maximum as jnp_maximum
from ..primitives.elementwise import minimum as jnp_minimum
from ..primitives.elementwise import where as _jnp_where
from ..primitives.reductions import top_k
from ..primitives.structural import concatenate as jnp_concatenate
from ..primitives.structural import dynamic_slice, dynamic_update_slice
from ..primitives.structural import flip as jnp_flip
from ..primitives.structural import moveaxis as jnp_moveaxis
from ..primitives.structural import reshape as jnp_reshape
from ..primitives.structural import stack as jnp_stack
from . import _carry_types
from . import _more as _lax_more  # noqa: E402
from ._more import *  # noqa: F403,E402  (Precision, reduce_*, select_n, custom_root ...)
from ._ops import *  # noqa: F403,E402  (add, exp, pad, dot_general ...: jax.lax's basic operations)


def __getattr__(name: str) -> Any:
    """``lax.complex``: served here, not bound as a global, because this
    module's code means the builtin ``complex``."""
    if name == "complex":
        return _lax_more.complex
    raise AttributeError(f"module 'srcjax.lax' has no attribute {name!r}")


__all__ = [
    "cond",
    "switch",
    "select",
    "fori_loop",
    "while_loop",
    "scan",
    "map",
    "stop_gradient",
    "dynamic_slice",
    "dynamic_update_slice",
    "top_k",
    "associative_scan",
    "cummax",
    "cummin",
    "cumlogsumexp",
    "dynamic_slice_in_dim",
    "dynamic_update_slice_in_dim",
    *_collectives.__all__,
]


# code object -> whether its source uses ``.at[...]`` (see _eager)
_USES_AT: dict = {}


def _eager(fn: Callable) -> Callable:
    """``fn`` as an eagerly called ``lax`` function runs it: ``fn`` itself, or
    ``srcjax.jit(fn)`` when its source uses ``x.at[...]``, which NumPy arrays do
    not have (transformed code rewrites it), or augmented assignment (``c += x``
    on a NumPy array writes into it: the caller's init and every stacked output
    would share the carry's buffer; transformed code computes ``c = c + x``, JAX's
    value semantics). JAX also compiles the functions an
    eager ``lax.fori_loop`` is given; like JAX's, the compiled body is cached per
    function object, so a body defined anew on each call is compiled each time."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return fn
    uses = _USES_AT.get(code)
    if uses is None:
        import gast

        from ..frontend.source import get_source

        try:
            node = get_source(fn).node
        except Exception:  # noqa: BLE001 - no source: run it as it is
            node = None
        uses = _USES_AT[code] = node is not None and any(
            (isinstance(n, gast.Attribute) and n.attr == "at") or isinstance(n, gast.AugAssign)
            for n in gast.walk(node)
        )
    if not uses:
        return fn
    from ..jit_api import jit

    return jit(fn)


def _canonical_leaf(x: Any) -> Any:
    t = type(x)
    if t is bool:
        return np.bool_(x)
    if t is int or t is float or t is complex:
        return dtypes.dtype_of(x).type(x)  # OverflowError for an int beyond int32, as JAX
    return dtypes.canonicalize_value(x)


def _canonical(tree: Any, weak: bool = False) -> Any:
    """Initial carries and operands as JAX holds them: Python scalars in their
    default dtypes (``1.0`` is float32, ``0`` int32 unless x64) and 64-bit arrays
    canonicalized, so an eager loop computes in the dtypes JAX's does. ``weak``:
    a Python float or complex becomes a weakly typed Array, so what a branch
    computes from it alone is weak, as JAX's (user 06: ``lax.cond(True, f, g,
    1.0, 2.0)``); loops keep NumPy scalars (weak Arrays cost 3.4x per step)."""
    from ..tree_util import tree_map

    return tree_map(_weak_leaf if weak else _canonical_leaf, tree)


def _weak_leaf(x: Any) -> Any:
    t = type(x)
    if t is float or t is complex:
        return _wrap_weak(dtypes.dtype_of(x).type(x))
    return _canonical_leaf(x)


def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)`` (``jax.lax.cond``).

    ``pred`` is a boolean scalar (a Python bool or a 0-d array). Only the branch
    taken runs, as in JAX.
    """
    if np.shape(pred) != ():
        raise TypeError(f"Pred must be a scalar, got {pred!r} of shape {np.shape(pred)}.")
    given, operands = operands, _canonical(operands, weak=True)
    out = _eager(true_fun)(*operands) if pred else _eager(false_fun)(*operands)
    out = _canonical(out, weak=True)  # a branch returning 1.0: weak float32, as JAX's
    other = _other_branch(false_fun if pred else true_fun, operands)
    if other is not _SKIPPED:
        names = ("true_fun", "false_fun") if pred else ("false_fun", "true_fun")
        _check_branch_types("cond", names, out, other)
    return _wrap_owned(out, given)  # Arrays of their own memory, as every eager result


_SKIPPED = object()


def _other_branch(fn: Callable, operands: tuple) -> Any:
    """The output of a branch not taken, run to compare output types (JAX traces
    every branch); ``_SKIPPED`` when it raises on these values (JAX, tracing it
    abstractly, would not)."""
    try:
        with np.errstate(all="ignore"):
            return _canonical(_eager(fn)(*operands), weak=True)
    except Exception:  # noqa: BLE001 - a value-dependent failure of a branch not taken
        return _SKIPPED


def switch(index: Any, branches: Sequence[Callable], *operands: Any) -> Any:
    """``branches[clamp(index)](*operands)`` (``jax.lax.switch``); the index is clamped
    to ``[0, len(branches) - 1]``.

    Raises:
        TypeError: an index whose dtype is not an integer (a float, a bool), as JAX.
    """
    _check_switch_index(index)
    i = int(np.clip(index, 0, len(branches) - 1))
    given, operands = operands, _canonical(operands, weak=True)
    out = _canonical(_eager(branches[i])(*operands), weak=True)
    for j, fn in enumerate(branches):
        if j != i:
            other = _other_branch(fn, operands)
            if other is not _SKIPPED:
                _check_branch_types("switch", (f"branch {i}", f"branch {j}"), out, other)
    return _wrap_owned(out, given)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """Elementwise ``pred ? on_true : on_false`` (``jax.lax.select``); shapes must match."""
    from .. import numpy as jnp

    return jnp.where(pred, on_true, on_false)


def _check_carry(what: Optional[str], before: Any, after: Any) -> Any:
    """JAX's TypeError when a loop body changes its carry's pytree structure, an
    array's shape or dtype (checked once, on the first iteration: see
    ``ad.check_carry``); ``before`` is the initial carry as given (Python scalars
    are weakly typed). Returns ``after`` with the leaves NumPy's promotion
    widened (``float32 + int32`` is float64) in JAX's carry dtype (``what``
    None: only that, on later iterations)."""
    from ..primitives.control import _check_carry as check
    from ..primitives.control import _leaf_dtype
    from ..tree_util import tree_flatten, tree_unflatten

    if what is not None:
        check(what, before, after)
    lb, _ = tree_flatten(before)
    la, ta = tree_flatten(after)
    out = []
    for b, a in zip(lb, la):
        db = _leaf_dtype(b)
        da = _leaf_dtype(a)
        if type(b) not in (bool, int, float, complex) and da != db and da.kind == db.kind:
            a = np.asarray(a).astype(db)
        out.append(_canonical_leaf(a))
    return tree_unflatten(ta, out)


def _check_unroll(unroll: Any) -> None:
    """JAX's check of ``unroll`` (a bool or a non-negative int); srcjax runs every
    loop as a Python loop, so the value has no other effect."""
    if isinstance(unroll, (bool, np.bool_)):
        return
    if not isinstance(unroll, (int, np.integer)):
        raise TypeError(
            f"The `unroll` argument to `scan` expects a concrete `int` or `bool`, got {unroll!r}"
        )
    if unroll < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")


def fori_loop(
    lower: int, upper: int, body_fun: Callable, init_val: Any, *, unroll: Any = None
) -> Any:
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)`` (``jax.lax.fori_loop``).

    ``unroll`` (None, a bool or a non-negative int, keyword-only as in JAX) is
    checked and otherwise ignored: the result is the same. Raises TypeError (as
    JAX) when the body changes the carry's structure or shapes or when ``lower``
    and ``upper`` have different dtypes, ValueError for a negative ``unroll``."""
    if unroll is not None:
        _check_unroll(unroll)
    lo_t, hi_t = dtypes.dtype_of(lower), dtypes.dtype_of(upper)
    weak = type(lower) in (int, float) or type(upper) in (int, float)
    if lo_t != hi_t and not (weak and lo_t.kind == hi_t.kind):
        # (user R: fori_loop(0, 2.5, ...) ran two passes; a Python scalar bound
        # takes the other's type when of the same kind, as JAX's weak types)
        raise TypeError(
            "lower and upper arguments to fori_loop must have equal types, "
            f"got {lo_t.name} and {hi_t.name}"
        )
    body_fun = _eager(body_fun)
    lo, hi = int(lower), int(upper)
    # (JAX's carry types: a weak initial leaf the body promotes is converted)
    start, typed = _carry_types.first_trip(
        init_val, lambda c: (body_fun(lo, c), None) if lo < hi else None, _canonical_leaf
    )
    val = _canonical(start)
    for i in range(lo, hi):
        new = typed[0] if typed is not None and i == lo else body_fun(i, val)
        if i == lo:
            new = _check_carry("scan body", init_val, new)
        else:
            new = _check_carry(None, val, new)
        val = new
    if typed is not None:
        val = _carry_types.retype(val, typed[2])
    return _wrap_owned(val, (init_val,))


def while_loop(cond_fun: Callable, body_fun: Callable, init_val: Any) -> Any:
    """``while cond_fun(val): val = body_fun(val)`` (``jax.lax.while_loop``).
    Raises TypeError (as JAX) when the body changes the carry's structure or shapes."""
    cond_fun, body_fun = _eager(cond_fun), _eager(body_fun)
    # (JAX's carry types: a weak initial leaf the body promotes is converted)
    start, typed = _carry_types.first_trip(
        init_val, lambda c: (body_fun(c), None) if cond_fun(c) else None, _canonical_leaf
    )
    val = _canonical(start)
    first = True
    if typed is not None:  # the first trip, run with JAX's types
        val = _check_carry("while_loop body", init_val, typed[0])
        first = False
    while cond_fun(val):
        new = body_fun(val)
        if first:
            new = _check_carry("while_loop body", init_val, new)
            first = False
        else:
            new = _check_carry(None, val, new)
        val = new
    if typed is not None:
        val = _carry_types.retype(val, typed[2])
    return _wrap_owned(val, (init_val,))


def _tree_index(xs: Any, i: int) -> Any:
    from ..tree_util import tree_map

    return tree_map(lambda a: a[i], xs)


def _tree_stack(items: list) -> Any:
    from ..tree_util import tree_map

    if not items:
        return None
    return tree_map(lambda *leaves: np.stack([np.asarray(v) for v in leaves]), *items)


def scan(
    f: Callable,
    init: Any,
    xs: Any = None,
    length: Optional[int] = None,
    reverse: bool = False,
    unroll: int = 1,
) -> Any:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs`` and stack the
    ``y`` (``jax.lax.scan``). Returns ``(carry, ys)``; ``reverse=True`` scans from the
    end (``ys`` stays in input order); ``length`` is needed when ``xs`` is None.
    ``unroll`` (a bool or a non-negative int) is checked and otherwise ignored.
    Raises TypeError (as JAX) when the body changes the carry's structure or
    shapes, ValueError for a negative ``unroll``."""
    _check_unroll(unroll)
    n = _leading_length(xs)
    if n is None:
        if length is None:
            raise ValueError("scan got no xs and no length")
        n = int(length)
    elif length is not None and int(length) != n:
        raise ValueError(f"scan got length={length} but xs have leading size {n}")
    xs = _canonical(xs)
    f = _eager(f)
    ys = [None] * n
    order = range(n - 1, -1, -1) if reverse else range(n)
    # (JAX's carry types: a weak initial leaf the body promotes is converted; the
    # first trip's types are the results')
    start, typed = _carry_types.first_trip(
        init,
        lambda c: (
            _scan_pair(f(c, None if xs is None else _tree_index(xs, order[0]))) if n else None
        ),
        _canonical_leaf,
    )
    carry = _canonical(start)
    for k, i in enumerate(order):
        if k == 0 and typed is not None:
            new, y = typed[0], typed[1]
        else:
            x = None if xs is None else _tree_index(xs, i)
            new, y = _scan_pair(f(carry, x))
        if k == 0:
            new = _check_carry("scan body", init, new)
        else:
            new = _check_carry(None, carry, new)
        carry = new
        ys[i] = y
    if n == 0:
        return _wrap_owned((carry, _empty_ys(f, carry, xs)), (init, xs))
    stacked = _tree_stack(ys)
    if typed is not None:
        carry = _carry_types.retype(carry, typed[2])
        stacked = _carry_types.retype(stacked, typed[3])
    return _wrap_owned((carry, stacked), (init, xs))


def _scan_pair(out: Any) -> tuple:
    """A scan body's ``(carry, y)``; JAX's TypeError for any other output."""
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        from ..tree_util import tree_map

        kinds = tree_map(lambda v: f"{np.dtype(dtypes.dtype_of(v)).name}{list(np.shape(v))}", out)
        raise TypeError(f"scan body output must be a pair, got {kinds}.")
    return out[0], out[1]


def _empty_ys(f: Callable, carry: Any, xs: Any) -> Any:
    """The stacked outputs of a scan of length 0: leaves of shape ``(0,) + y's``
    and ``y``'s dtype, from one run of the body on zeros shaped like an item of
    ``xs`` (JAX traces the body abstractly; None if that run fails)."""
    from ..tree_util import tree_map

    x = None if xs is None else tree_map(lambda a: np.zeros(np.shape(a)[1:], a.dtype), xs)
    try:
        with np.errstate(all="ignore"):
            _, y = _scan_pair(f(carry, x))
    except TypeError:
        raise
    except Exception:  # noqa: BLE001 - a value-dependent failure on the zeros
        return None
    return tree_map(lambda v: np.zeros((0,) + np.shape(v), dtypes.dtype_of(v)), _canonical(y))


def map(f: Callable, xs: Any, *, batch_size: Optional[int] = None) -> Any:  # noqa: A001
    """``stack([f(x) for x in xs])`` over the leading axis (``jax.lax.map``): each
    leaf of the result has shape ``(n,) + f's output shape``. ``batch_size``
    (keyword-only, as in JAX) only changes how JAX groups the calls; srcjax
    computes the same values one example at a time. Raises TypeError for a
    ``batch_size`` that is not an int."""
    if batch_size is not None and not isinstance(batch_size, (int, np.integer)):
        raise TypeError(f"lax.map: batch_size must be an int, got {batch_size!r}")
    n = _leading_length(xs)
    given, xs, f = xs, _canonical(xs), _eager(f)
    return _wrap_owned(_tree_stack([f(_tree_index(xs, i)) for i in range(n or 0)]), (given,))


for _name in ("cond", "switch", "fori_loop", "while_loop", "scan", "map"):
    # the normalizer rewrites calls to these into Python control flow
    globals()[_name].__srcjax_lax__ = _name


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0):
    """``dynamic_slice`` along one axis (jax.lax.dynamic_slice_in_dim).

    Args:
        operand: array of any shape and dtype.
        start_index: int (or 0-d int array); negative counts from the end, then it
            is clamped so the window fits.
        slice_size: static int, at most ``operand.shape[axis]``.
        axis: the axis to slice (negative counts from the end).

    Returns:
        A copy of shape ``operand.shape`` with ``slice_size`` at ``axis``, same dtype.

    Raises:
        TypeError when ``slice_size`` does not fit (as JAX).
    """
    shape = np.shape(operand)
    ax = axis % len(shape)
    starts = [start_index if k == ax else 0 for k in range(len(shape))]
    sizes = [slice_size if k == ax else d for k, d in enumerate(shape)]
    return dynamic_slice(operand, starts, sizes)


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    """``dynamic_update_slice`` along one axis (jax.lax.dynamic_update_slice_in_dim).

    Args:
        operand: array of any shape and dtype.
        update: array of ``operand``'s rank, no larger along any axis; cast to
            ``operand``'s dtype.
        start_index: int position along ``axis`` (negative counts from the end;
            clamped so ``update`` fits); the other axes start at 0.
        axis: the axis (negative counts from the end).

    Returns:
        A copy of ``operand`` (same shape and dtype) with ``update`` written in.

    Raises:
        TypeError when ``update`` does not fit (as JAX).
    """
    nd = np.ndim(operand)
    ax = axis % nd
    starts = [start_index if k == ax else 0 for k in range(nd)]
    return dynamic_update_slice(operand, update, starts)


_registry.alias(_jnp_where, select)  # lax.select is jnp.where to the transforms


# ---------------------------------------------------------------------------
# associative_scan and the cumulative reductions built on it: compositions of
# primitives, inlined by transformed code like user functions (their derivatives
# and batching come from the primitives and from ``fn``)


def _slice_axis(x, start, stop, step, axis):
    """``x[start:stop:step]`` along ``axis``."""
    return jnp_moveaxis(jnp_moveaxis(x, axis, 0)[start:stop:step], 0, axis)


def _interleave(a, b, axis):
    """``a[0], b[0], a[1], b[1], ...`` along ``axis`` (``a`` as long as ``b`` or
    one longer)."""
    a0 = jnp_moveaxis(a, axis, 0)
    b0 = jnp_moveaxis(b, axis, 0)
    nb = jnp_shape(b0)[0]
    pairs = jnp_stack([a0[:nb], b0], axis=1)
    out = jnp_reshape(pairs, (2 * nb,) + jnp_shape(b0)[1:])
    if jnp_shape(a0)[0] > nb:
        out = jnp_concatenate([out, a0[nb:]], axis=0)
    return jnp_moveaxis(out, 0, axis)


def _scan_depth(n):
    """Static: how often the odd/even recursion of associative_scan halves ``n``."""
    depth = 0
    while n >= 2:
        n = n // 2
        depth += 1
    return depth


def _is_sequence_impl(x):
    """Static: whether ``x`` is a tuple or list (associative_scan's elements)."""
    return isinstance(x, (tuple, list))


def _register_is_sequence():
    from ..primitives.registry import Primitive, register

    p = register(
        Primitive("ad.is_sequence", _is_sequence_impl, kind="internal", differentiable=False)
    )
    p.def_batch(lambda c: (c.rebuild(), False))  # the same for every example
    return p


_is_sequence = _register_is_sequence()


def _scan_pack(elems, leaves):
    """``leaves`` in ``elems``' structure: an array, a tuple or a list of arrays."""
    if _is_sequence(elems):
        if isinstance(elems, tuple):
            return tuple(leaves)
        return leaves
    return leaves[0]


def _scan_unpack(elems, tree):
    """The arrays of ``tree`` (structured like ``elems``) as a list."""
    if _is_sequence(elems):
        return [v for v in tree]
    return [tree]


def associative_scan(fn, elems, reverse=False, axis=0):
    """All prefix reductions of ``elems`` along ``axis`` with the associative
    ``fn`` (jax.lax.associative_scan, JAX 0.10.2): result ``[i]`` is
    ``fn(...fn(fn(e[0], e[1]), e[2])..., e[i])``, computed by JAX's parallel
    odd/even algorithm (``O(log n)`` calls of ``fn`` on slices; the same tree, so
    rounding and tie-breaking follow JAX's).

    Args:
        fn: ``fn(a, b)`` of two pytrees shaped like ``elems`` with any length
            along ``axis``, returning one such pytree; applied elementwise along
            ``axis`` (a lambda, a def or a library function).
        elems: an array, or a tuple or list of arrays, all of one length along
            ``axis`` (JAX takes any pytree; a dict raises NotImplementedError).
        reverse: scan from the end (``result[i]`` reduces ``e[i:]``).
        axis: the scanned axis (negative counts from the end).

    Returns:
        A pytree of ``elems``' structure, shapes and dtypes (those ``fn`` gives).
        Differentiable and batchable through ``fn`` (grad, jit, vmap; not yet
        vmap of grad, which the batching of its list-building code refuses).

    Raises:
        ValueError when the leaves' lengths along ``axis`` differ or a leaf is 0-d.
    """
    if isinstance(elems, dict):
        raise NotImplementedError(
            "srcjax lax.associative_scan: elems must be an array or a tuple/list of arrays"
        )
    leaves = _scan_unpack(elems, elems)
    if len(jnp_shape(leaves[0])) == 0:
        raise ValueError("associative_scan: the elements must have at least one dimension")
    ax = axis % len(jnp_shape(leaves[0])) if axis < 0 else axis
    n = jnp_shape(leaves[0])[ax]
    for leaf in leaves:
        if jnp_shape(leaf)[ax] != n:
            raise ValueError(
                "Array inputs to associative_scan must have the same first dimension."
                f" (saw: {[jnp_shape(v) for v in leaves]})"
            )
    if reverse:
        leaves = [jnp_flip(v, ax) for v in leaves]
    nl = len(leaves)
    levels = []  # every level's leaves, one flat list
    for v in leaves:
        levels.append(v)
    cur = leaves
    depth = _scan_depth(n)
    for _ in range(depth):
        a = [_slice_axis(v, 0, -1, 2, ax) for v in cur]
        b = [_slice_axis(v, 1, None, 2, ax) for v in cur]
        cur = _scan_unpack(elems, fn(_scan_pack(elems, a), _scan_pack(elems, b)))
        for v in cur:
            levels.append(v)
    res = cur
    for k in range(depth - 1, -1, -1):
        el = [levels[k * nl + i] for i in range(nl)]
        if jnp_shape(el[0])[ax] % 2 == 0:
            left = [_slice_axis(v, 0, -1, 1, ax) for v in res]
        else:
            left = res
        right = [_slice_axis(v, 2, None, 2, ax) for v in el]
        even = _scan_unpack(elems, fn(_scan_pack(elems, left), _scan_pack(elems, right)))
        even = [
            jnp_concatenate([_slice_axis(v, 0, 1, 1, ax), e], axis=ax) for v, e in zip(el, even)
        ]
        res = [_interleave(e, r, ax) for e, r in zip(even, res)]
    if reverse:
        res = [jnp_flip(v, ax) for v in res]
    return _scan_pack(elems, res)


def cummax(operand, axis=0, reverse=False):
    """Running maximum along ``axis`` (jax.lax.cummax; from the end with
    ``reverse``). Shape and dtype: ``operand``'s. Its derivative is that of
    ``associative_scan(lax.max)``, as in JAX (ties split the cotangent evenly).
    Raises ValueError for a 0-d operand (JAX: TypeError)."""
    return associative_scan(jnp_maximum, jnp_asarray(operand), reverse, axis)


def cummin(operand, axis=0, reverse=False):
    """Running minimum along ``axis`` (jax.lax.cummin); as :func:`cummax`."""
    return associative_scan(jnp_minimum, jnp_asarray(operand), reverse, axis)


def cumlogsumexp(operand, axis=0, reverse=False):
    """Running ``log(sum(exp(x)))`` along ``axis`` (jax.lax.cumlogsumexp), as
    ``associative_scan(logaddexp)`` like JAX's definition and derivative. Shape
    and dtype: ``operand``'s (floating)."""
    return associative_scan(jnp_logaddexp, jnp_asarray(operand), reverse, axis)


_register_namespace("lax", _sys.modules[__name__])  # generated code's `lax`
