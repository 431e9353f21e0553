"""``srcjax.scipy.special``: special functions, as ``jax.scipy.special``.

The transcendental functions are computed by SciPy (an optional extra,
imported on first use). ``expit`` is the ``nn.sigmoid`` primitive;
``logsumexp`` (shared with ``srcjax.nn``) calls the reduction primitive, its
``where`` mask made zero weights.

``betaln``, ``gammainc`` and ``gammaincc`` are registered here (public names
``special.<name>``, elementwise, broadcasting), with derivative rules written
over the other special primitives; ``gammainc``/``gammaincc`` are
differentiable in ``x`` only (the derivative in ``a`` raises
``NotImplementedError``; JAX has it).
"""

from __future__ import annotations

import sys as _sys

import numpy as _np

from .. import dtypes as _dt
from .. import numpy as _jnp
from ..codegen.emit import register_namespace as _register_namespace
from ..primitives.elementwise import defderiv as _defderiv
from ..primitives.elementwise import exp as _exp
from ..primitives.elementwise import log as _log
from ..primitives.more import i0, i0e, i1, i1e
from ..primitives.nn import log_softmax, softmax
from ..primitives.nn import sigmoid as expit
from ..primitives.reductions import logsumexp as _logsumexp
from ..primitives.registry import Primitive as _Primitive
from ..primitives.registry import register as _register
from ..primitives.special import (
    _scipy_special,
    digamma,
    erf,
    erfc,
    erfinv,
    gamma,
    gammaln,
    log_ndtr,
    logit,
    ndtr,
    ndtri,
    polygamma,
    xlog1py,
    xlogx,
    xlogy,
)

__all__ = [
    "betaln",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfinv",
    "expit",
    "gamma",
    "gammainc",
    "gammaincc",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "gammaln",
    "kl_div",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "ndtr",
    "ndtri",
    "polygamma",
    "rel_entr",
    "softmax",
    "xlog1py",
    "xlogy",
]


def _binary_scipy(fname: str, a, b):
    """SciPy's ``fname(a, b)`` in JAX's inexact promotion of ``a`` and ``b``."""
    dt = _dt.result_type_inexact(a, b)
    a = _np.asarray(a, dtype=dt)
    b = _np.asarray(b, dtype=dt)
    with _np.errstate(all="ignore"):
        r = _np.asarray(getattr(_scipy_special(), fname)(a, b), dtype=dt)
    return r if r.ndim else r[()]


def _betaln(a, b):
    """``log(|B(a, b)|) = gammaln(a) + gammaln(b) - gammaln(a + b)``, elementwise
    (jax.scipy.special.betaln). ``a``, ``b``: broadcastable arrays or scalars;
    result: their broadcast shape, JAX's inexact promotion of their dtypes
    (integers give the default float). Differentiable in ``a`` and ``b``."""
    return _binary_scipy("betaln", a, b)


def _gammainc(a, x):
    """The regularized lower incomplete gamma function ``P(a, x)``, elementwise
    (jax.scipy.special.gammainc). ``a > 0``, ``x >= 0``; NaN outside. Shape: the
    broadcast of ``a`` and ``x``; dtype: JAX's inexact promotion. Differentiable
    in ``x``; a derivative in ``a`` raises ``NotImplementedError``."""
    return _binary_scipy("gammainc", a, x)


def _gammaincc(a, x):
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``,
    elementwise (jax.scipy.special.gammaincc). Domain, shapes, dtypes and
    derivatives as :func:`gammainc`."""
    return _binary_scipy("gammaincc", a, x)


def _sp2(public, impl):
    return _register(_Primitive(public, impl, kind="elementwise", broadcasting=True))


betaln = _sp2("special.betaln", _betaln)
gammainc = _sp2("special.gammainc", _gammainc)
gammaincc = _sp2("special.gammaincc", _gammaincc)


def _no_a_derivative(a):
    """Raises: srcjax has no derivative of the incomplete gamma functions in
    ``a`` (JAX computes it with a series); reached only by such a derivative."""
    raise NotImplementedError(
        "srcjax: the derivative of gammainc/gammaincc with respect to a is not "
        "implemented (only with respect to x); wrap a in lax.stop_gradient if "
        "it is not meant to be differentiated"
    )


_no_a = _register(
    _Primitive("ad.gammainc_no_da", _no_a_derivative, kind="internal", differentiable=False)
)
_no_a.samples = lambda rng: []


def _betaln_a(g, ans, a, b):
    return g * (digamma(a) - digamma(a + b))


def _betaln_b(g, ans, a, b):
    return g * (digamma(b) - digamma(a + b))


def _gammainc_x(g, ans, a, x):
    return g * _exp((a - 1) * _log(x) - x - gammaln(a))


def _gammaincc_x(g, ans, a, x):
    return -g * _exp((a - 1) * _log(x) - x - gammaln(a))


def _gammainc_a(g, ans, a):
    return g * _no_a(a)


_defderiv(betaln, _betaln_a, _betaln_b)
_defderiv(gammainc, _gammainc_a, _gammainc_x)
_defderiv(gammaincc, _gammainc_a, _gammaincc_x)
betaln.test_domain = (0.5, 3.0)


def _gammainc_samples(rng):
    # ``a`` as integer arrays: the registry's checks differentiate the float
    # operands, and gammainc has no derivative in ``a`` (its rule raises)
    return [((rng.integers(1, 4, s), rng.uniform(0.3, 3.0, s)), {}) for s in [(), (3,), (2, 3)]] + [
        ((_np.int64(2), rng.uniform(0.3, 3.0, (2, 3))), {})
    ]


gammainc.samples = gammaincc.samples = _gammainc_samples


# -- entropy functions: compositions following JAX's definitions ---------------------
def _real_inexact(*xs):
    """Static: JAX's inexact promotion of the arguments; ValueError for complex
    (JAX's message names the function in the caller)."""
    dt = _dt.result_type_inexact(*xs)
    if dt.kind == "c":
        raise ValueError("entr, rel_entr and kl_div do not support complex-valued inputs.")
    return dt


_real_inexact.__srcjax_inactive__ = True


def entr(x):
    """Elementwise entropy ``-x log x`` (jax.scipy.special.entr): 0 at 0,
    ``-inf`` for ``x < 0``. Dtype: ``x``'s inexact dtype. Derivative ``-(log x +
    1)`` (``inf`` at 0, as JAX). Raises ValueError for complex ``x``."""
    x = _jnp.astype(x, _real_inexact(x))
    return _jnp.where(x < 0, -_np.inf, -xlogx(x))


def rel_entr(p, q):
    """Elementwise relative entropy (jax.scipy.special.rel_entr): ``p log(p/q)``
    for ``p > 0, q > 0``, 0 for ``p == 0, q >= 0``, ``inf`` otherwise. ``p`` and
    ``q`` broadcast; dtype their inexact promotion. Differentiable in both where
    they are positive (JAX's safe-``where`` form: no NaN from the other cases).
    Raises ValueError for complex inputs."""
    dt = _real_inexact(p, q)
    p = _jnp.astype(p, dt)
    q = _jnp.astype(q, dt)
    both = _jnp.logical_and(p > 0, q > 0)
    p_zero = _jnp.logical_and(p == 0, q >= 0)
    safe_p = _jnp.where(both, p, 1)
    safe_q = _jnp.where(both, q, 1)
    value = xlogx(safe_p) - xlogy(safe_p, safe_q)
    return _jnp.where(both, value, _jnp.where(p_zero, _jnp.zeros_like(value), _np.inf))


def kl_div(p, q):
    """Elementwise KL divergence term (jax.scipy.special.kl_div):
    ``rel_entr(p, q) - p + q``. Broadcasts; inexact promotion of ``p`` and
    ``q``; ValueError for complex inputs."""
    dt = _real_inexact(p, q)
    p = _jnp.astype(p, dt)
    q = _jnp.astype(q, dt)
    return rel_entr(p, q) - p + q


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """``log(sum(b * exp(a)))`` over ``axis``, stable for large inputs
    (https://docs.jax.dev/en/latest/_autosummary/jax.scipy.special.logsumexp.html;
    also ``srcjax.nn.logsumexp``).

    Args:
        a: the array (integers give the default float dtype).
        axis: an int, a tuple of ints, or None (every axis).
        b: optional scale factors broadcastable to ``a``; zeros drop their terms.
        keepdims: keep the reduced axes with size 1.
        return_sign: return ``(log|s|, sign(s))`` of ``s = sum(b * exp(a))``;
            without it a negative ``s`` gives NaN, as in JAX.
        where: an optional bool mask broadcastable to ``a``: only the entries it
            selects enter the max and the sum, whatever the others hold (a
            slice with none gives ``-inf``); the gradient is 0 at the others.

    Returns:
        ``a``'s shape without the reduced axes (kept as 1 with ``keepdims``), of
        JAX's inexact promotion of ``a`` and ``b``; with ``return_sign`` a pair.

    Raises:
        ValueError: shapes that do not broadcast, an axis out of range.
    """
    if where is not None:
        if b is None:
            b = _jnp.where(where, 1.0, 0.0)
        else:
            b = _jnp.where(where, b, 0)
    return _logsumexp(a, axis, b, keepdims, return_sign)


_register_namespace("special", _sys.modules[__name__])  # generated code's `special`
