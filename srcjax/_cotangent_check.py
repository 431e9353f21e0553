"""``jax_enable_checks``: every cotangent a transform returns has its primal's
shape and dtype.

JAX's rule (``jax.grad``, ``jax.vjp``, ``jax.jacrev``): the gradient of an input
is a pytree of the input's structure whose every leaf has the leaf's shape and
dtype; an integer or boolean leaf (``allow_int``) gets a ``float0`` gradient of
its shape. A cotangent of another shape broadcasts silently in the parameter
update that follows (issue 21: a parameter rebound by ``y *= x`` got the
rebinding's shape), so under the checks (on in the test suite, see
:mod:`srcjax.config`) the API boundaries of ``grad``, ``value_and_grad``,
``vjp``, ``jacrev`` and ``vmap`` of a gradient assert it.
"""

from __future__ import annotations

import functools
from typing import Any, Optional, Sequence

import numpy as np

from .dtypes import float0

__all__ = ["check_cotangents", "check_jacobian", "CheckedPullback"]


def _expected(primal: Any) -> tuple:
    """(shape, dtype) of the cotangent of primal leaf ``primal`` (canonicalized
    by the caller as JAX canonicalizes arguments: a Python float is float32
    unless x64)."""
    dt = np.result_type(primal) if not hasattr(primal, "dtype") else np.dtype(primal.dtype)
    if dt.kind in "biu":
        dt = float0
    return np.shape(primal), dt


def _got(ct: Any) -> tuple:
    dt = getattr(ct, "dtype", None)
    if dt is None and type(ct) in (float, complex):
        # a weakly typed cotangent (of a Python float primal): the default dtype
        from . import dtypes

        return (), dtypes.dtype_of(ct)
    return np.shape(ct), np.dtype(dt) if dt is not None else np.result_type(ct)


def _fail(what: str, where: str, got: tuple, want: tuple) -> None:
    raise AssertionError(
        f"{what}: the cotangent of {where} has shape {got[0]} and dtype {got[1]}, but its "
        f"primal has shape {want[0]} and dtype {want[1]} (JAX's rule: a cotangent has its "
        "primal's shape and dtype)"
    )


def check_cotangents(
    tu: Any,
    cts: Sequence[Any],
    primals: Sequence[Any],
    what: str,
    names: Sequence[str],
    batch: int = 0,
) -> None:
    """Assert that each ``cts[i]`` is a pytree of ``primals[i]``'s structure
    whose leaves have its leaves' shapes and dtypes; with ``batch``, each
    cotangent leaf has ``batch`` leading axes more (``vmap`` of a gradient: the
    primals given are one example's)."""
    for ct, primal, name in zip(cts, primals, names):
        leaves, td = tu.tree_flatten(primal)
        try:
            ct_leaves = td.flatten_up_to(ct)
        except (ValueError, TypeError) as e:
            raise AssertionError(
                f"{what}: the cotangent of {name} does not have its primal's structure ({td}): {e}"
            ) from None
        for k, (p, c) in enumerate(zip(leaves, ct_leaves)):
            where = name if len(leaves) == 1 else f"{name} (leaf {k})"
            want = _expected(p)
            shape, dt = _got(c)
            if shape[batch:] != want[0] or len(shape) != len(want[0]) + batch or dt != want[1]:
                _fail(what, where, (shape[batch:] if batch else shape, dt), want)


def check_jacobian(tu: Any, jac: Any, primals: Sequence[Any], what: str) -> None:
    """``jacrev``: every leaf of the Jacobian ``jac`` (output structure outside,
    ``primals``' structure inside) ends with its primal leaf's shape and has its
    dtype."""
    p_leaves = [leaf for p in primals for leaf in tu.tree_leaves(p)]
    j_leaves = tu.tree_leaves(jac)
    if not p_leaves or len(j_leaves) % len(p_leaves):
        return  # (a structure this check does not follow)
    for k, c in enumerate(j_leaves):
        want = _expected(p_leaves[k % len(p_leaves)])
        shape, dt = _got(c)
        n = len(want[0])
        if tuple(shape[len(shape) - n :]) != want[0] or dt != want[1]:
            _fail(what, f"input leaf {k % len(p_leaves)}", (shape, dt), want)


class CheckedPullback(functools.partial):
    """``vjp``'s pullback (a ``functools.partial`` of generated code, so it stays
    transformable) that checks the cotangents it returns when called."""

    _primals: tuple = ()
    _tu: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        out = super().__call__(*args, **kwargs)
        cts = out if isinstance(out, tuple) else (out,)
        names = [f"primal {i}" for i in range(len(self._primals))]
        check_cotangents(self._tu, cts, self._primals, "vjp", names)
        return out


def checked_pullback(tu: Any, fn: Any, args: tuple, primals: tuple) -> Any:
    p = CheckedPullback(fn, *args)
    p._primals = tuple(primals)
    p._tu = tu
    return p


def grad_output_cotangents(out: Any, with_value: bool, has_aux: bool, tuple_out: bool) -> tuple:
    """The gradients in the output of ``grad``/``value_and_grad``, one per argnum."""
    grads = out[1] if with_value else (out[0] if has_aux else out)
    return tuple(grads) if tuple_out else (grads,)


def batched_primal(tu: Any, x: Any, axis: Optional[int]) -> Any:
    """One example of vmap argument ``x`` mapped at ``axis`` (an int or None for
    all its leaves): a zero-cost stand-in with the example's shape and dtype."""
    if axis is None:
        return x

    def one(v: Any) -> Any:
        a = np.asarray(v)
        ax = axis if axis >= 0 else a.ndim + axis
        return np.broadcast_to(np.zeros((), a.dtype), a.shape[:ax] + a.shape[ax + 1 :])

    return tu.tree_map(one, x)


def _grad_of(fun: Any) -> Any:
    """The ``grad``/``value_and_grad`` object ``fun`` is, directly or under
    ``jit``; else None (by their ``kind``: this module imports no transform)."""
    while getattr(fun, "kind", None) == "jit":
        fun = fun.fun
    return fun if getattr(fun, "kind", None) == "grad" else None


def check_transform_output(fun: Any, out: Any, args: tuple, kwargs: dict) -> None:
    """``jit(fun)(*args)`` returned ``out``: check it where ``fun`` returns
    gradients."""
    g = _grad_of(fun)
    if g is not None and not kwargs and not g._bound_kwargs:
        g._checked(out, tuple(g._bound) + tuple(args))  # (canonicalizes them)


def check_vmapped_grad(tu: Any, vm: Any, out: Any, args: tuple, axes: Any) -> None:
    """``vmap`` of a gradient (``vm``, called with ``args`` mapped at ``axes``)
    returned ``out``: each example's gradient has that example's primal's shape
    and dtype, one batch axis in front (``out_axes=0``). Mappings this does not
    follow (pytree ``in_axes``, other ``out_axes``, bound arguments) are left
    unchecked."""
    g = _grad_of(vm._inner)
    if g is None or vm._pbound or vm._pkw or g._bound or g._bound_kwargs or vm.out_axes != 0:
        return
    specs = axes if isinstance(axes, tuple) else (axes,) * len(args)
    if len(specs) != len(args) or not all(a is None or isinstance(a, int) for a in specs):
        return
    n = len(args)
    pos = [a if a >= 0 else n + a for a in g.argnums]
    if not all(0 <= i < n for i in pos):
        return
    cts = grad_output_cotangents(out, g.with_value, g.has_aux, g.tuple_out)
    primals = [batched_primal(tu, args[i], specs[i]) for i in pos]
    names = [f"argument {a}" for a in g.argnums]
    check_cotangents(tu, cts, primals, f"vmap of {g.kind_label()}", names, batch=1)
