"""Host callbacks: ``srcjax.pure_callback`` (``jax.pure_callback``),
``srcjax.debug.callback`` (``jax.debug.callback``) and ``srcjax.named_call``.

srcjax does not trace: generated code is Python, so a callback is simply
called where the program reaches it, eagerly and under ``jit`` alike. What a
callback still needs from srcjax is JAX's contract around it:

- ``pure_callback`` is the primitive ``ad.pure_callback``: its arguments are
  handed to the callback as arrays (Python scalars canonicalized, as JAX puts
  them on the device first), its results are checked against
  ``result_shape_dtypes`` and returned with exactly those dtypes. It has no
  derivative (a differentiated argument is a ``NoDerivativeRuleError``
  carrying JAX's advice: wrap it in ``custom_jvp``/``custom_vjp``). Under
  ``vmap`` its batching rule writes the helper ``ad.pure_callback_batched``
  with the batch sizes (nested vmaps: one each, outermost first) and, per
  argument, which vmaps' axes it carries; the helper follows ``vmap_method``
  when it runs, as JAX's rule does: ``"sequential"`` (and
  ``"sequential_unrolled"``) call once per example, ``"expand_dims"`` calls
  once with a length-1 axis for each vmap an argument is not batched in,
  ``"broadcast_all"`` with such arguments broadcast, ``"legacy_vectorized"``
  with them as they are, and checks the results against the shapes with the
  batch sizes in front; ``None`` is JAX's NotImplementedError. jit neither
  evaluates a callback on stand-ins nor removes it.
- ``debug.callback`` (``ad.debug_callback``, not differentiable) runs the
  callback for its effect and returns None (no effect on derivatives; under
  ``vmap`` once per example, as JAX's rule, through
  ``ad.debug_callback_batched``; inside a per-example ``if`` only for the
  examples taking that branch, as srcjax's ``debug.print``).
- ``named_call`` names a function for profiles in JAX; srcjax has no
  profiles, so it returns the function itself (values and transforms are
  unchanged).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Optional

import numpy as np

from . import dtypes as _dt
from .primitives.registry import Primitive, register

__all__ = ["pure_callback", "debug_callback", "named_call"]

_VMAP_METHODS = (
    "sequential",
    "sequential_unrolled",
    "expand_dims",
    "broadcast_all",
    "legacy_vectorized",
    None,
)
_NO_DERIVATIVE = (
    "pure_callback has no derivative, as in JAX (which raises ValueError: pure "
    "callbacks support neither JVP nor transpose): give the function that calls it "
    "its own rule with srcjax.custom_jvp or srcjax.custom_vjp, or pass the argument "
    "through srcjax.lax.stop_gradient"
)


def _check_vmap_method(vmap_method: Any) -> None:
    if vmap_method not in _VMAP_METHODS:
        raise ValueError(
            f"vmap_method must be one of {list(_VMAP_METHODS)}, but got: {vmap_method!r}"
        )


def _as_device_array(x: Any) -> Any:
    """An argument leaf as JAX hands it to a callback: an array of its canonical
    dtype (Python floats float32 without x64); other objects as they are."""
    if isinstance(x, (np.ndarray, np.generic, bool, int, float, complex)):
        return _dt.canonicalize_value(np.asarray(x))
    return x


def _expected(result_shape_dtypes: Any, sizes: tuple) -> tuple:
    """``(treedef, [(shape, dtype)])`` of the results, the batch sizes in front;
    JAX's ValueError for a 64-bit dtype while x64 is off."""
    from .tree_util import tree_flatten

    leaves, treedef = tree_flatten(result_shape_dtypes)
    out = []
    for leaf in leaves:
        if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
            raise TypeError(
                "pure_callback: result_shape_dtypes must be a pytree of objects with "
                f"shape and dtype attributes (jax.ShapeDtypeStruct), got {leaf!r}"
            )
        dt = np.dtype(leaf.dtype)
        if _dt.canonicalize_dtype(dt) != dt:
            raise ValueError(
                "result_shape_dtypes cannot specify 64-bit types when `jax_enable_x64` is disabled"
            )
        out.append((tuple(sizes) + tuple(int(d) for d in leaf.shape), dt))
    return treedef, out


def _run(callback, result_shape_dtypes, sizes, args, kwargs) -> Any:
    from .tree_util import tree_leaves, tree_map

    treedef, expected = _expected(result_shape_dtypes, sizes)
    args = tree_map(_as_device_array, args)
    kwargs = tree_map(_as_device_array, kwargs)
    results = tree_leaves(callback(*args, **kwargs))
    if len(results) != len(expected):
        raise RuntimeError(
            f"pure_callback: the callback returned {len(results)} arrays, but "
            f"result_shape_dtypes describes {len(expected)}"
        )
    out = []
    for i, (r, (shape, dt)) in enumerate(zip(results, expected)):
        r = np.asarray(r)
        if r.shape != shape:
            raise RuntimeError(
                f"Incorrect output shape for return value #{i}: Expected: {shape}, "
                f"Actual: {r.shape}"
            )
        got = _dt.canonicalize_dtype(r.dtype)
        if got != dt:
            raise RuntimeError(
                f"Incorrect output dtype for return value #{i}: Expected: {dt}, Actual: {got}"
            )
        out.append(np.array(r, dtype=dt))  # a fresh array: never the callback's own
    return treedef.unflatten(out)


def _pure_callback(
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    *args: Any,
    sharding: Any = None,
    vmap_method: Optional[str] = None,
    **kwargs: Any,
) -> Any:
    """Call a pure Python function on the host and return its results
    (jax.pure_callback).

    Args:
        callback: called as ``callback(*args, **kwargs)`` with the pytrees of
            arrays given (Python scalars as 0-d arrays of their canonical
            dtype); must return a pytree with as many arrays as
            ``result_shape_dtypes`` has leaves.
        result_shape_dtypes: a pytree of objects with ``shape`` and ``dtype``
            (``srcjax.ShapeDtypeStruct``, arrays) describing the results.
        *args, **kwargs: the callback's arguments (keyword arguments only
            outside transformed code: inside one, a call with them is an
            UnsupportedSyntaxError; bind them with ``functools.partial``).
        sharding: accepted for JAX compatibility (one host: ignored).
        vmap_method: how ``vmap`` calls it (see the module docstring):
            ``"sequential"``, ``"sequential_unrolled"``, ``"expand_dims"``,
            ``"broadcast_all"``, ``"legacy_vectorized"`` or None (no vmap).

    Returns:
        A pytree of the structure of ``result_shape_dtypes`` whose arrays have
        its shapes and dtypes exactly (a result of another dtype that
        canonicalizes to it, float64 for float32 without x64, is converted).

    Raises:
        ValueError: an unknown ``vmap_method``, or a 64-bit dtype in
            ``result_shape_dtypes`` while x64 is off (as JAX).
        RuntimeError: a result of another shape or dtype (JAX's message).
        NotImplementedError: under ``vmap`` with ``vmap_method=None`` (as JAX);
            a derivative through it (``NoDerivativeRuleError``; JAX raises a
            ValueError there).
    """
    _check_vmap_method(vmap_method)
    return _run(callback, result_shape_dtypes, (), args, kwargs)


def _pure_callback_signature(
    callback, result_shape_dtypes, *args, sharding=None, vmap_method=None
):  # pragma: no cover - only its signature is used
    """What transformed code binds (no ``**kwargs``: see _pure_callback)."""


def _prepared(x, levels, sizes, method):
    """An argument of a batched pure_callback as the callback receives it:
    ``levels`` says, per vmap (outermost first), whether ``x`` carries that
    vmap's axis (those axes lead, in order). ``expand_dims`` adds an axis of
    length 1 for every other vmap, ``broadcast_all`` broadcasts to its size,
    ``legacy_vectorized`` leaves ``x`` as it is."""
    from .tree_util import tree_map

    if method == "legacy_vectorized" or all(levels):
        return x

    def leaf(v):
        v = np.asarray(_as_device_array(v))
        for axis, (on, size) in enumerate(zip(levels, sizes)):
            if not on:
                v = np.expand_dims(v, axis)
                if method == "broadcast_all":
                    v = np.broadcast_to(v, v.shape[:axis] + (size,) + v.shape[axis + 1 :])
        return v

    return tree_map(leaf, x)


def _row(x, i):
    from .tree_util import tree_map

    return tree_map(lambda v: np.asarray(v)[i], x)


def _sequential(callback, result_shape_dtypes, sizes, flags, args):
    """One call per example, the outermost vmap's examples first (JAX's
    ``lax.map`` over the batch), the results stacked."""
    from .tree_util import tree_map

    if not sizes:
        return _run(callback, result_shape_dtypes, (), args, {})
    rows = []
    for i in range(sizes[0]):
        sub = [_row(a, i) if f[0] else a for a, f in zip(args, flags)]
        rows.append(
            _sequential(callback, result_shape_dtypes, sizes[1:], [f[1:] for f in flags], sub)
        )
    if not rows:  # an empty batch: zeros of the batched result shapes
        treedef, expected = _expected(result_shape_dtypes, tuple(sizes))
        return treedef.unflatten([np.zeros(s, d) for s, d in expected])
    return tree_map(lambda *r: np.stack(r), *rows)


def _pure_callback_batched(callback, result_shape_dtypes, sizes, vmap_method, flags, *args):
    """``pure_callback`` under ``vmap`` (nested vmaps: one entry each in
    ``sizes``, the batch sizes outermost first, and in each argument's
    ``flags``, whether it carries that vmap's axis). ``vmap_method`` decides,
    as JAX's batching rule does: ``sequential``/``sequential_unrolled`` call
    once per example; ``expand_dims``, ``broadcast_all`` and
    ``legacy_vectorized`` call once on the arguments prepared by
    :func:`_prepared`, and the results must carry every batch axis; ``None``
    is JAX's NotImplementedError."""
    _check_vmap_method(vmap_method)
    sizes = tuple(int(s) for s in sizes)
    if vmap_method is None:
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method "
            "is one of 'sequential', 'sequential_unrolled', 'expand_dims', "
            "'broadcast_all', or 'legacy_vectorized'. Got vmap_method=None."
        )
    if vmap_method in ("sequential", "sequential_unrolled"):
        return _sequential(callback, result_shape_dtypes, sizes, flags, args)
    prepared = [_prepared(a, f, sizes, vmap_method) for a, f in zip(args, flags)]
    return _run(callback, result_shape_dtypes, sizes, prepared, {})


pure_callback = register(
    Primitive(
        "ad.pure_callback",
        _pure_callback,
        kind="internal",
        signature=inspect.signature(_pure_callback_signature),
    )
)
pure_callback.facts(missing_rule_hint=_NO_DERIVATIVE, effectful=True, calls_back=True)
pure_callback_batched = register(
    Primitive("ad.pure_callback_batched", _pure_callback_batched, kind="internal")
)
pure_callback_batched.facts(missing_rule_hint=_NO_DERIVATIVE, effectful=True)


def _size_tuple(c, sizes):
    """The node ``(size,) + sizes``: this vmap's batch size in front of the
    inner vmaps' (``sizes`` a node, None at the first vmap)."""
    import gast

    head = gast.Tuple(elts=[c.size], ctx=gast.Load())
    if sizes is not None:
        head = gast.BinOp(left=head, op=gast.Add(), right=sizes)
    return head


def _sizes_flags(c, sizes, flags):
    """The arguments, the batch sizes (:func:`_size_tuple`, bound to a name),
    and per argument whether it carries this vmap's axis in front of its
    ``flags`` (static)."""
    args = c.arg("args") or []
    size_node = c.let("callback_sizes", _size_tuple(c, sizes))
    old = list(flags) if flags is not None else [()] * len(args)
    new_flags = tuple((bool(c.bp.is_batched(a)),) + tuple(f) for a, f in zip(args, old))
    return args, size_node, new_flags


def _batch_call(c, sizes, flags):
    """``ad.pure_callback_batched`` for this vmap (see :func:`_sizes_flags`)."""
    from .frontend import nodes as N

    args, size_node, new_flags = _sizes_flags(c, sizes, flags)
    return c.call(
        "ad.pure_callback_batched",
        [
            c.arg("callback"),
            c.arg("result_shape_dtypes"),
            size_node,
            c.arg("vmap_method") if "vmap_method" in c.bound else N.const(None),
            N.const(new_flags),
            *args,
        ],
    )


def _pure_callback_batch(c):
    return _batch_call(c, None, None)


def _pure_callback_batched_batch(c):
    ok, flags = c.static("flags")
    if not ok:
        return None  # (not reached: the flags are always written as a constant)
    return _batch_call(c, c.arg("sizes"), flags)


pure_callback.def_batch(_pure_callback_batch)
pure_callback_batched.def_batch(_pure_callback_batched_batch)


def _sin_cb(x):
    return np.sin(x)


def _samples(rng):
    from .extras import ShapeDtypeStruct

    x = rng.normal(size=(2, 3))
    return [((_sin_cb, ShapeDtypeStruct((2, 3), np.float32), x), {"vmap_method": "sequential"})]


pure_callback.samples = _samples
pure_callback_batched.samples = lambda rng: []


def _debug_callback(
    callback: Callable[..., Any],
    *args: Any,
    ordered: bool = False,
    partitioned: bool = False,
    **kwargs: Any,
) -> None:
    """Call ``callback(*args, **kwargs)`` for its effect (jax.debug.callback).

    The arguments' array leaves reach the callback as arrays (Python scalars as
    0-d arrays of their canonical dtype). Returns None; the callback's result
    is discarded. It runs where the program reaches it: eagerly and under
    ``jit`` on every call, under ``grad``/``jvp`` with the primal values (it has
    no effect on derivatives), under ``vmap`` once per example with that
    example's values (JAX's rule), the outer vmap's examples first; inside a
    per-example ``if`` under ``vmap`` only for the examples taking the branch
    (JAX's vmap of ``lax.cond`` calls it for every example).
    ``ordered`` and ``partitioned`` are accepted for JAX compatibility (calls
    already happen in program order on one host). Keyword arguments for the
    callback: outside transformed code only (bind them with
    ``functools.partial`` inside)."""
    from .tree_util import tree_map

    callback(*tree_map(_as_device_array, args), **tree_map(_as_device_array, kwargs))
    return None


_MAX_DEBUG_ARGS = 16


def _debug_callback_signature() -> inspect.Signature:
    """What transformed code binds: ``callback`` and up to 16 arguments as
    separate parameters (vmap looks for batched operands of a call statement
    among single arguments), then JAX's keyword-only options."""
    P = inspect.Parameter
    params = [P("callback", P.POSITIONAL_OR_KEYWORD)]
    params += [P(f"arg{i}", P.POSITIONAL_OR_KEYWORD, default=None) for i in range(_MAX_DEBUG_ARGS)]
    params += [
        P("ordered", P.KEYWORD_ONLY, default=False),
        P("partitioned", P.KEYWORD_ONLY, default=False),
    ]
    return inspect.Signature(params)


def _debug_callback_batched(callback, sizes, flags, polarities, *items):
    """``debug.callback`` under ``vmap``: one call per example (nested vmaps:
    the outermost one's examples first). ``items`` are the per-example flags of
    the batched ``if``s around the call (``polarities``: True for a then
    branch, False for an else branch; one per flag) followed by the callback's
    arguments; ``flags`` says per item which vmaps' axes it carries. An
    example that does not run the call (its flags say so) is skipped, as
    srcjax's ``debug.print`` does (JAX's vmap of ``lax.cond`` runs both
    branches, so it calls the callback there too)."""
    sizes = tuple(int(s) for s in sizes)
    n = len(polarities)
    if not sizes:
        if all(bool(np.asarray(m)) == bool(p) for m, p in zip(items[:n], polarities)):
            _debug_callback(callback, *items[n:])
        return None
    for i in range(sizes[0]):
        sub = [_row(a, i) if f[0] else a for a, f in zip(items, flags)]
        _debug_callback_batched(callback, sizes[1:], [f[1:] for f in flags], polarities, *sub)
    return None


debug_callback = register(
    Primitive(
        "ad.debug_callback",
        _debug_callback,
        kind="internal",
        differentiable=False,
        signature=_debug_callback_signature(),
    )
)
debug_callback_batched = register(
    Primitive(
        "ad.debug_callback_batched", _debug_callback_batched, kind="internal", differentiable=False
    )
).facts(effectful=True)
debug_callback.facts(effectful=True, calls_back=True)


def _debug_batch(c):
    from .frontend import nodes as N

    names = [f"arg{i}" for i in range(_MAX_DEBUG_ARGS) if f"arg{i}" in c.bound]
    masks = [N.clone(m) for m, _ in c.bp.example_masks]
    pols = tuple(bool(p) for _, p in c.bp.example_masks)
    items = masks + [c.arg(n) for n in names]
    flags = tuple((bool(c.bp.is_batched(x)),) for x in items)
    size_node = c.let("callback_sizes", _size_tuple(c, None))
    return c.call(
        "ad.debug_callback_batched",
        [c.arg("callback"), size_node, N.const(flags), N.const(pols), *items],
    )


def _debug_batched_batch(c):
    from .frontend import nodes as N

    ok, flags = c.static("flags")
    ok2, pols = c.static("polarities")
    if not (ok and ok2):
        return None
    inner = len(flags[0]) if flags else 0
    masks = [N.clone(m) for m, _ in c.bp.example_masks]
    new_pols = tuple(bool(p) for _, p in c.bp.example_masks) + tuple(pols)
    items = masks + (c.arg("items") or [])
    old = [(False,) * inner for _ in masks] + [tuple(f) for f in flags]
    new_flags = tuple((bool(c.bp.is_batched(x)),) + f for x, f in zip(items, old))
    size_node = c.let("callback_sizes", _size_tuple(c, c.arg("sizes")))
    return c.call(
        "ad.debug_callback_batched",
        [c.arg("callback"), size_node, N.const(new_flags), N.const(new_pols), *items],
    )


debug_callback.def_batch(_debug_batch)
debug_callback_batched.def_batch(_debug_batched_batch)


def _print_cb(x):
    return None


debug_callback.samples = lambda rng: [((_print_cb, rng.normal(size=(2, 3))), {})]
debug_callback_batched.samples = lambda rng: []


def named_call(fun: Callable[..., Any], *, name: Optional[str] = None) -> Callable[..., Any]:
    """``fun`` under the name ``name`` for profiles (jax.named_call): values and
    transformations are those of ``fun`` itself, which srcjax returns (it has
    no profiler scopes to name). Raises ``TypeError`` when ``fun`` is not
    callable."""
    if not callable(fun):
        raise TypeError(f"named_call: expected a callable, got {fun!r}")
    return fun


# inside transformed code named_call(f, name=...)(x) is f(x), as jit(f)(x) is
named_call.__srcjax_jit__ = True  # type: ignore[attr-defined]
