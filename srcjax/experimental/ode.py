"""``srcjax.experimental.ode.odeint``: JAX's adaptive ODE solver.

The method is JAX's (``jax.experimental.ode``, JAX 0.10.2): Dormand-Prince
5(4) steps, Hairer-Norsett-Wanner's initial step size, the RMS error norm
``sqrt(mean((err / (atol + rtol * max(|y0|, |y1|)))**2))``, the step-size
controller with safety 0.9 and factors in ``[0.2, 10]``, and the solution at
each requested time from the 4th-order polynomial that JAX fits to each step.
Reverse mode is the adjoint method: the augmented system (state, adjoint,
time and parameter cotangents) integrated backwards between the requested
times with the same solver and tolerances, as JAX does.

How srcjax runs it: the solver is an ordinary eager NumPy loop over the user's
``func`` (JAX's ``lax.while_loop`` inside ``lax.scan``, written as Python
``while``/``for``). Two primitives of the registry hold it,
``custom.odeint_solve`` (the forward solve) and ``custom.odeint_adjoint`` (the
backward solve, calling ``srcjax.vjp`` of ``func`` at each stage), and
``custom_vjp`` joins them, so transformed code calls them as opaque functions:
``jit`` calls the solver from the generated code, ``grad``/``vjp``/``jacrev``
use the adjoint rule, ``vmap`` solves once per example (the step sequence
differs per example, as the masked while loop of JAX's batched solver does in
effect). Like JAX, forward mode (``jvp``, ``jacfwd``) is not available.

``func`` must be a function srcjax can differentiate when a derivative is
taken. Inside a transformed function (``jit``, ``grad``, ``vmap``) it may be
defined there: the locals it reads are passed to it after ``*args`` (JAX's
``closure_convert``; ``NestedMixin.closure_converted`` in the normalizer), so
they are differentiated; a ``func`` with other than plain positional
parameters must be defined at module level. ``args`` are floating arrays:
integer ``args`` cannot be differentiated through, as in JAX, whose ``grad``
fails on them too.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

import numpy as np

from .. import dtypes as _dt
from .._array import on_buffers
from ..custom import custom_vjp
from ..primitives.registry import Primitive, register
from ..tree_util import tree_flatten, tree_leaves, tree_unflatten

__all__ = ["odeint"]

# ---------------------------------------------------------------------------
# the Dormand-Prince 5(4) tableau (Dormand & Prince 1980; Shampine 1986 for
# the midpoint weights of the dense output)

_ALPHA = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0, 0.0)
_BETA = (
    (1 / 5, 0, 0, 0, 0, 0, 0),
    (3 / 40, 9 / 40, 0, 0, 0, 0, 0),
    (44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0),
    (35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0),
)
# the 5th-order weights (the last row of beta: the FSAL property)
_C_SOL = _BETA[5]
# 5th-order minus 4th-order weights: the local error estimate
_C_ERR = (
    35 / 384 - 1951 / 21600,
    0,
    500 / 1113 - 22642 / 50085,
    125 / 192 - 451 / 720,
    -2187 / 6784 - -12231 / 42400,
    11 / 84 - 649 / 6300,
    -1.0 / 60.0,
)
_C_MID = (
    6025192743 / 30085553152 / 2,
    0,
    51252292925 / 65400821598 / 2,
    -2691868925 / 45128329728 / 2,
    187940372067 / 1594534317056 / 2,
    -1776094331 / 19743644256 / 2,
    11237099 / 235043384 / 2,
)


# ---------------------------------------------------------------------------
# pytrees as one flat vector (eager NumPy; the solver works on vectors)


class _Flat:
    """A pytree's structure, leaf shapes and dtypes, to ravel it into one
    vector of the promoted ``dtype`` and cut such vectors back."""

    def __init__(self, tree: Any, dtype: Any = None) -> None:
        leaves, self.treedef = tree_flatten(tree)
        leaves = [np.asarray(v) for v in leaves]
        self.shapes = [v.shape for v in leaves]
        # (a Python float state is float32 unless x64, as JAX holds it)
        self.dtypes = [_dt.canonicalize_dtype(v.dtype) for v in leaves]
        self.sizes = [v.size for v in leaves]
        self.cuts = np.cumsum([0] + self.sizes)
        if dtype is None:
            dtype = np.result_type(*self.dtypes) if leaves else _dt.default_float()
            dtype = _dt.to_inexact_dtype(_dt.canonicalize_dtype(dtype))
        self.dtype = np.dtype(dtype)

    def ravel(self, tree: Any, lead: tuple = ()) -> np.ndarray:
        """``tree``'s leaves (each with ``lead`` extra leading axes) as one
        ``lead + (n,)`` array."""
        leaves = tree_leaves(tree)
        parts = [np.asarray(v, dtype=self.dtype).reshape(lead + (-1,)) for v in leaves]
        if not parts:
            return np.zeros(lead + (0,), self.dtype)
        return np.concatenate(parts, axis=-1)

    def unravel(self, flat: np.ndarray) -> Any:
        """The pytree of a ``(..., n)`` array: leaf ``i`` of shape ``flat.shape[:-1]
        + shapes[i]`` in its own dtype."""
        lead = flat.shape[:-1]
        leaves = [
            flat[..., a:b].reshape(lead + s).astype(d, copy=False)
            for a, b, s, d in zip(self.cuts[:-1], self.cuts[1:], self.shapes, self.dtypes)
        ]
        return tree_unflatten(self.treedef, leaves)


def _vector_field(func: Callable, flat: _Flat, args: tuple) -> Callable:
    """``f(y, t)`` on flat vectors: ``func(unravel(y), t, *args)`` raveled."""

    def f(y: np.ndarray, t: Any) -> np.ndarray:
        return flat.ravel(func(flat.unravel(y), t, *args))

    return f


# ---------------------------------------------------------------------------
# the solver (flat state vectors in one dtype)


def _norm(x: np.ndarray) -> Any:
    return np.sqrt(np.sum(x * x))


def _initial_step(f: Callable, t0: Any, y0: np.ndarray, f0: np.ndarray, rtol, atol) -> Any:
    """The first step size for a method of order 4 (Hairer, Norsett & Wanner,
    Solving ODEs I, Sec. II.4), as JAX chooses it."""
    dt = y0.dtype.type
    scale = (atol + np.abs(y0) * rtol).astype(y0.dtype)
    d0 = _norm(y0 / scale)
    d1 = _norm(f0 / scale)
    h0 = dt(1e-6) if (d0 < 1e-5 or d1 < 1e-5) else dt(0.01 * d0 / d1)
    f1 = f(y0 + h0 * f0, t0 + h0)
    d2 = _norm((f1 - f0) / scale) / h0
    if d1 <= 1e-15 and d2 <= 1e-15:
        h1 = np.maximum(dt(1e-6), h0 * dt(1e-3))
    else:
        h1 = (dt(0.01) / np.maximum(d1, d2)) ** dt(1.0 / 5.0)
    return np.minimum(dt(100.0) * h0, h1)


def _tableau(dtype: np.dtype) -> tuple:
    return tuple(np.asarray(c, dtype) for c in (_ALPHA, _BETA, _C_SOL, _C_ERR, _C_MID))


def _dopri_step(f: Callable, y0, f0, t0, h, tab) -> tuple:
    """One Dormand-Prince step of size ``h`` from ``(t0, y0)`` with ``f0 =
    f(y0, t0)``: ``(y1, f1, error estimate, stage derivatives k (7, n))``."""
    alpha, beta, c_sol, c_err, _ = tab
    k = np.zeros((7,) + y0.shape, y0.dtype)
    k[0] = f0
    for i in range(1, 7):
        yi = y0 + h * (beta[i - 1] @ k)
        k[i] = f(yi, t0 + h * alpha[i - 1])
    y1 = h * (c_sol @ k) + y0
    return y1, k[6], h * (c_err @ k), k


def _dense_output(y0, y1, k, h, tab) -> np.ndarray:
    """The coefficients ``(5, n)`` (highest power first) of the 4th-order
    polynomial in the relative time ``s`` in ``[0, 1]`` of a step through
    ``y0``, the midpoint estimate and ``y1`` with slopes ``h k[0]``, ``h k[6]``."""
    c_mid = tab[4]
    ym = y0 + h * (c_mid @ k)
    d0, d1 = h * k[0], h * k[6]
    a = -2.0 * d0 + 2.0 * d1 - 8.0 * y0 - 8.0 * y1 + 16.0 * ym
    b = 5.0 * d0 - 3.0 * d1 + 18.0 * y0 + 14.0 * y1 - 32.0 * ym
    c = -4.0 * d0 + d1 - 11.0 * y0 - 5.0 * y1 + 16.0 * ym
    return np.stack([a, b, c, d0, y0]).astype(y0.dtype, copy=False)


def _error_ratio(err, rtol, atol, y0, y1) -> Any:
    tol = (atol + rtol * np.maximum(np.abs(y0), np.abs(y1))).astype(err.dtype)
    return np.sqrt(np.mean((err / tol) ** 2))


def _next_step(h, ratio) -> Any:
    """The step size after a step of size ``h`` with error ratio ``ratio``:
    ``h * clip(0.9 * ratio**(-1/5), 0.2, 10)`` (not below ``h`` after an
    accepted step), ``10 h`` for a zero error."""
    one = type(ratio)
    lower = one(1.0) if ratio < 1 else one(0.2)
    factor = np.minimum(one(10.0), np.maximum(ratio ** one(-1.0 / 5.0) * one(0.9), lower))
    return h * one(10.0) if ratio == 0 else h * factor


def _polyval(coeffs, s) -> np.ndarray:
    out = np.zeros_like(coeffs[0])
    for c in coeffs:
        out = out * s + c
    return out


def _solve_flat(f: Callable, y0: np.ndarray, ts: np.ndarray, rtol, atol, mxstep, hmax):
    """The solution ``(len(ts), n)`` of ``y' = f(y, t)``, ``y(ts[0]) = y0``, at
    each time of ``ts``."""
    tab = _tableau(y0.dtype)
    rtol, atol = y0.dtype.type(rtol), y0.dtype.type(atol)
    hmax = y0.dtype.type(hmax)
    t = ts[0]
    y = y0
    fy = f(y0, t)
    h = np.clip(_initial_step(f, t, y0, fy, rtol, atol), 0.0, hmax)
    coeffs = np.stack([y0] * 5)
    last_t = t
    out = [y0]
    for target in ts[1:]:
        i = 0
        while t < target and i < mxstep and h > 0:
            y1, f1, err, k = _dopri_step(f, y, fy, t, h, tab)
            ratio = _error_ratio(err, rtol, atol, y, y1)
            new_h = np.clip(_next_step(h, ratio), 0.0, hmax)
            if ratio <= 1.0:  # accept the step
                coeffs = _dense_output(y, y1, k, h, tab)
                last_t, t = t, t + h
                y, fy = y1, f1
            h = new_h
            i += 1
        s = (target - last_t) / (t - last_t)
        out.append(_polyval(coeffs, s.astype(y0.dtype)))
    return np.stack(out)


def _times(t: Any) -> np.ndarray:
    ts = _dt.canonicalize_value(np.asarray(t))
    if not np.issubdtype(ts.dtype, np.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    return ts


def _solve_impl(func, rtol, atol, mxstep, hmax, y0, ts, args):
    """The solution pytree (leaves with a leading axis ``len(ts)``)."""
    flat = _Flat(y0)
    ts = _times(ts)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ys = _solve_flat(
            _vector_field(func, flat, args), flat.ravel(y0), ts, rtol, atol, mxstep, hmax
        )
    return flat.unravel(ys)


# ---------------------------------------------------------------------------
# the adjoint


def _augmented(func: Callable, state: _Flat, args: tuple) -> Callable:
    """The backward-in-time augmented dynamics on the flat state ``(y, y_bar,
    t0_bar, args_bar)`` in negative time ``s = -t``: ``(-f, y_bar df/dy,
    y_bar df/dt, y_bar df/dargs)``."""
    from ..api_fwd import vjp

    def f(x: np.ndarray, s: Any) -> np.ndarray:
        y, y_bar, _, _ = state.unravel(x)
        y_dot, pullback = vjp(func, y, -s, *args)
        cts = pullback(y_bar)
        return state.ravel((_neg(y_dot), cts[0], cts[1], tuple(cts[2:])))

    return f


def _neg(tree: Any) -> Any:
    leaves, td = tree_flatten(tree)
    return tree_unflatten(td, [-np.asarray(v) for v in leaves])


def _zeros_like(tree: Any) -> Any:
    leaves, td = tree_flatten(tree)
    return tree_unflatten(td, [np.zeros(np.shape(v), _ct_dtype(v)) for v in leaves])


def _ct_dtype(v: Any) -> np.dtype:
    return _dt.to_inexact_dtype(_dt.canonicalize_dtype(np.asarray(v).dtype))


def _adjoint_impl(func, rtol, atol, mxstep, hmax, res, g):
    """``(y0_bar, ts_bar, args_bar)`` for the cotangent ``g`` of the solution."""
    ys, ts, args = res
    ts = _times(ts)
    flat = _Flat(ys)  # leaves with the leading time axis
    n_t = len(ts)
    ys_f = flat.ravel(ys, (n_t,))
    g_f = flat.ravel(g, (n_t,))
    y_tree = _Flat(_index(ys, 0))
    y_bar = g_f[-1]
    t0_bar = np.zeros((), ts.dtype)
    args_bar = _zeros_like(args)
    ts_bar = np.zeros(n_t, ts.dtype)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for i in range(n_t - 1, 0, -1):
            y_i = y_tree.unravel(ys_f[i])
            f_i = y_tree.ravel(func(y_i, ts[i], *args))
            t_bar = np.real(np.dot(f_i, g_f[i])).astype(ts.dtype)
            ts_bar[i] = t_bar
            t0_bar = t0_bar - t_bar
            start = (y_i, y_tree.unravel(y_bar), t0_bar, args_bar)
            state = _Flat(start)
            sol = _solve_flat(
                _augmented(func, state, args),
                state.ravel(start),
                np.asarray([-ts[i], -ts[i - 1]]),
                rtol,
                atol,
                mxstep,
                hmax,
            )
            _, yb, t0_bar, args_bar = state.unravel(sol[-1])
            y_bar = y_tree.ravel(yb) + g_f[i - 1]
    ts_bar[0] = t0_bar
    return y_tree.unravel(y_bar), ts_bar, args_bar


def _index(tree: Any, i: int) -> Any:
    leaves, td = tree_flatten(tree)
    return tree_unflatten(td, [np.asarray(v)[i] for v in leaves])


def _register(name: str, impl: Callable, hint: str) -> Primitive:
    prim = register(Primitive(f"custom.{name}", on_buffers(impl), kind="custom"))
    prim.samples = lambda rng: []  # (runs the user's func: tested in tests/test_ode.py)
    prim.missing_rule_hint = hint
    prim.__doc__ = impl.__doc__
    return prim


odeint_solve = _register(
    "odeint_solve",
    _solve_impl,
    "odeint is differentiable in reverse mode (grad, vjp, jacrev), not in forward mode, as in JAX",
)
# (no rule: a second derivative is an error, never a silent zero)
odeint_adjoint = _register(
    "odeint_adjoint",
    _adjoint_impl,
    "second derivatives of odeint (grad of grad, hessian) are not implemented in srcjax "
    "(JAX differentiates its adjoint solve)",
)


@functools.partial(custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
def _odeint(func, rtol, atol, mxstep, hmax, y0, ts, args):
    return odeint_solve(func, rtol, atol, mxstep, hmax, y0, ts, args)


def _odeint_fwd(func, rtol, atol, mxstep, hmax, y0, ts, args):
    ys = odeint_solve(func, rtol, atol, mxstep, hmax, y0, ts, args)
    return ys, (ys, ts, args)


def _odeint_bwd(func, rtol, atol, mxstep, hmax, res, g):
    return odeint_adjoint(func, rtol, atol, mxstep, hmax, res, g)


_odeint.defvjp(_odeint_fwd, _odeint_bwd)


def odeint(
    func: Callable,
    y0: Any,
    t: Any,
    *args: Any,
    rtol: float = 1.4e-8,
    atol: float = 1.4e-8,
    mxstep: float = np.inf,
    hmax: float = np.inf,
) -> Any:
    """Solve ``dy/dt = func(y, t, *args)`` from ``y(t[0]) = y0`` at the times
    ``t`` with JAX's adaptive Dormand-Prince solver (``jax.experimental.ode.odeint``,
    https://docs.jax.dev/en/latest/jax.experimental.ode.html).

    Args:
        func: ``func(y, t, *args)`` returning a pytree of ``y0``'s structure and
            shapes (the time derivative).
        y0: the initial state, an array or a pytree of arrays (floating).
        t: 1-D array of float times, strictly increasing; ``t[0]`` is the time
            of ``y0``.
        *args: extra arguments of ``func``: arrays, scalars or pytrees of them.
        rtol, atol: the relative and absolute local error tolerances.
        mxstep: the most steps (accepted or rejected) between two times of ``t``.
        hmax: the largest step size.

    Returns:
        A pytree of ``y0``'s structure whose leaves have a leading axis of length
        ``len(t)``: the solution at each time (``[0]`` is ``y0``). Dtype:
        ``y0``'s leaves' (float32 unless x64).

    Derivatives: reverse mode (``grad``, ``vjp``, ``jacrev``) in ``y0``, ``t``
    and ``args`` by the adjoint ODE, solved backwards with the same tolerances,
    as JAX. Works eagerly and under ``jit`` and ``vmap`` (one solve per example).

    Inside a transformed function, a ``func`` defined there that reads its
    locals gets them as extra arguments after ``*args`` (closure conversion, as
    JAX's odeint does), when its parameters are plain positional ones.

    Raises:
        TypeError when an ``args`` leaf is not an array or a scalar, or ``t``
        is not floating (JAX's messages).
    """
    for a in tree_leaves(args):
        if not _is_array_like(a):
            raise TypeError(f"The contents of odeint *args must be arrays or scalars, but got {a}.")
    return _odeint(func, rtol, atol, mxstep, hmax, y0, t, args)


#: inside transformed code, a local ``func`` reading the transformed function's
#: locals is closure-converted: they are passed after ``*args`` (normalize/resolve.py)
odeint.__srcjax_closure_convert__ = (2, 3)


def _is_array_like(a: Any) -> bool:
    if isinstance(a, (bool, int, float, complex, np.ndarray, np.generic)):
        return True
    return hasattr(a, "shape") and hasattr(a, "dtype")
