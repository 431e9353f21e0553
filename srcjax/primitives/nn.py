"""Neural-network primitives (``srcjax.nn``): activations, softmax, one-hot.

Each is one primitive (rather than a composite of ``jnp`` calls) so generated
derivative code stays short (``x_bar = y_bar * ans * (1 - ans)`` for the
sigmoid) and the subgradient conventions are JAX's own: ``relu'(0) = 0``,
``relu6`` passes the gradient only strictly inside ``(0, 6)``, ``leaky_relu'(0)
= 1``, ``celu'(0) = 1``. The elementwise activations share one rule for JVP and
VJP (see :func:`srcjax.primitives.elementwise.defderiv`). ``softmax`` and
``log_softmax`` reduce over ``axis``; their rules use ``jnp.sum``.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from ..dtypes import INEXACT_SUSPECT, UNARY_SUSPECT
from .ad import accumulate, sum  # jnp.sum (used by the softmax rules); 16-bit sums in float32
from .elementwise import (  # rules below call these primitives by name
    _as_inexact,
    abs,
    defderiv,
    exp,
    expm1,
    logical_and,
    minimum,
    tanh,
    where,
)
from .elementwise.arithmetic import _true_divide_impl as _div  # float16 as XLA divides
from .elementwise.exponentials import logaddexp_values
from .registry import Primitive, register
from .special import erf

__all__ = [
    "sigmoid",
    "relu",
    "relu6",
    "gelu",
    "softplus",
    "silu",
    "swish",
    "elu",
    "celu",
    "selu",
    "leaky_relu",
    "log_sigmoid",
    "soft_sign",
    "hard_tanh",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "log1mexp",
    "softmax",
    "log_softmax",
    "one_hot",
]

_ndarray = np.ndarray


def _nn(public: str, impl, *aliases, **kw) -> Primitive:
    kw.setdefault("kind", "elementwise")
    return register(Primitive(public, impl, **kw), *aliases)


def _float_in(x):
    """``x`` as an array of its JAX float dtype (no copy for float arrays)."""
    if type(x) is _ndarray and x.dtype.kind == "f" and x.dtype not in INEXACT_SUSPECT:
        return x
    return _as_inexact(x)


def _out(r):
    return r if r.ndim else r[()]


# -- sigmoid family -------------------------------------------------------------
def _sigmoid(x):
    """Logistic sigmoid ``1 / (1 + exp(-x))``, elementwise, without overflow."""
    x = _float_in(x)
    return _out(_logistic(x))


def _logistic(x):
    # exp of a non-positive number only: no overflow, ~1 ulp accurate everywhere
    e = np.exp(-np.abs(x))
    if x.dtype.char in "efd":
        # the numerator where(x >= 0, 1, e) without np.where (3-4 us on 512
        # elements, most of a small sigmoid): e <= 1, so the larger of e and
        # the bool (1 where x >= 0, 0 elsewhere) is it, bit for bit; a NaN stays
        return np.maximum(e, x >= 0) / (1 + e)
    return np.where(x >= 0, 1, e) / (1 + e)


sigmoid = _nn("nn.sigmoid", _sigmoid, c_expr="(1 / (1 + exp(-({x}))))")


def _sigmoid_x(g, ans, x):
    return g * ans * (1 - ans)


defderiv(sigmoid, _sigmoid_x)


def _log_sigmoid(x):
    """``log(sigmoid(x)) = -softplus(-x)``, elementwise, stable for large ``|x|``."""
    x = _float_in(x)
    return _out(-logaddexp_values(0, -x))


log_sigmoid = _nn(
    "nn.log_sigmoid", _log_sigmoid, c_expr="(-(fmax(-({x}), 0) + log1p(exp(-fabs({x})))))"
)


def _log_sigmoid_x(g, ans, x):
    return g * sigmoid(-x)


defderiv(log_sigmoid, _log_sigmoid_x)


def _softplus(x):
    """``log(1 + exp(x))`` (``logaddexp(x, 0)``), elementwise, without overflow."""
    x = _float_in(x)
    return _out(logaddexp_values(x, 0))


softplus = _nn("nn.softplus", _softplus, c_expr="(fmax({x}, 0) + log1p(exp(-fabs({x}))))")


def _softplus_x(g, ans, x):
    return g * sigmoid(x)


defderiv(softplus, _softplus_x)


def _silu(x):
    """SiLU / swish: ``x * sigmoid(x)``, elementwise."""
    x = _float_in(x)
    return _out(x * _logistic(x))


silu = _nn("nn.silu", _silu, c_expr="(({x}) / (1 + exp(-({x}))))")
swish = silu


def _silu_x(g, ans, x):
    s = sigmoid(x)
    return g * s * (1 + x * (1 - s))


defderiv(silu, _silu_x)


# -- rectifiers -------------------------------------------------------------------
def _relu(x):
    """``max(x, 0)``, elementwise. Derivative 0 at 0 (JAX: ``select(x > 0, g, 0)``)."""
    r = np.maximum(x, 0)
    return r if r.dtype not in UNARY_SUSPECT else _dt.canonicalize_value(r)


relu = _nn("nn.relu", _relu, c_expr="sj_max({x}, 0)")


def _relu_x(g, ans, x):
    return where(x > 0, g, 0)


defderiv(relu, _relu_x)


def _relu6(x):
    """``min(max(x, 0), 6)``, elementwise. Gradient only strictly inside (0, 6)."""
    r = np.minimum(np.maximum(x, 0), 6)
    return r if r.dtype not in UNARY_SUSPECT else _dt.canonicalize_value(r)


relu6 = _nn("nn.relu6", _relu6, c_expr="sj_min(sj_max({x}, 0), 6)")


def _relu6_x(g, ans, x):
    return where(logical_and(x > 0, x < 6), g, 0)


defderiv(relu6, _relu6_x)
relu6.test_domain = (-3.0, 9.0)


def _leaky_relu(x, negative_slope=0.01):
    """``x`` where ``x >= 0`` else ``negative_slope * x`` (derivative 1 at 0, JAX)."""
    x = _float_in(x)
    return np.where(x >= 0, x, negative_slope * x)


leaky_relu = _nn(
    "nn.leaky_relu",
    _leaky_relu,
    c_expr="(({x}) >= 0 ? ({x}) : {negative_slope} * ({x}))",
    broadcasting=True,
)


def _leaky_relu_x(g, ans, x, negative_slope=0.01):
    return where(x >= 0, g, negative_slope * g)


def _leaky_relu_slope(g, ans, x, negative_slope=0.01):
    # a learned slope (PReLU): d/ds of s * x below 0
    return where(x >= 0, 0.0, g * x)


defderiv(leaky_relu, _leaky_relu_x, _leaky_relu_slope)


def _elu(x, alpha=1.0):
    """``x`` where ``x > 0`` else ``alpha * (exp(x) - 1)``, elementwise."""
    x = _float_in(x)
    return _out(np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0))))


elu = _nn("nn.elu", _elu, c_expr="(({x}) > 0 ? ({x}) : {alpha} * expm1({x}))", broadcasting=True)


def _elu_x(g, ans, x, alpha=1.0):
    return where(x > 0, g, g * (ans + alpha))


def _elu_alpha(g, ans, x, alpha=1.0):
    return where(x > 0, 0.0, g * expm1(minimum(x, 0.0)))


defderiv(elu, _elu_x, _elu_alpha)


def _celu(x, alpha=1.0):
    """Continuously differentiable ELU: ``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``."""
    x = _float_in(x)
    return _out(np.maximum(x, 0) + alpha * np.expm1(np.minimum(x, 0) / alpha))


celu = _nn(
    "nn.celu",
    _celu,
    c_expr="(sj_max({x}, 0) + {alpha} * expm1(sj_min({x}, 0) / {alpha}))",
    broadcasting=True,
)


def _celu_x(g, ans, x, alpha=1.0):
    return where(x > 0, g, g * exp(x / alpha))


def _celu_alpha(g, ans, x, alpha=1.0):
    # d/da [a * expm1(m / a)] = expm1(m / a) - (m / a) * exp(m / a), m = min(x, 0)
    u = minimum(x, 0.0) / alpha
    return g * (expm1(u) - u * exp(u))


defderiv(celu, _celu_x, _celu_alpha)

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _selu(x):
    """Scaled ELU: ``scale * elu(x, alpha)`` with the self-normalizing constants."""
    x = _float_in(x)
    return _out(_SELU_SCALE * np.where(x > 0, x, _SELU_ALPHA * np.expm1(np.minimum(x, 0))))


selu = _nn(
    "nn.selu", _selu,
    c_expr="(1.0507009873554805 * (({x}) > 0 ? ({x}) : 1.6732632423543772 * expm1({x})))",
)  # fmt: skip


def _selu_x(g, ans, x):
    return where(x > 0, 1.0507009873554805 * g, g * (ans + 1.7580993408473766))


defderiv(selu, _selu_x)


# -- GELU -------------------------------------------------------------------------
_SQRT_2_OVER_PI = 0.7978845608028654


def _gelu(x, approximate=True):
    """Gaussian error linear unit. ``approximate=True`` (JAX's default) uses
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))``; ``False`` the exact
    ``0.5 x (1 + erf(x / sqrt(2)))`` (needs SciPy)."""
    x = _float_in(x)
    if approximate:
        return _out(0.5 * x * (1 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x)))))
    return _out(0.5 * x * (1 + erf.impl(x * 0.7071067811865476)))  # (a buffer, not an Array)


gelu = _nn("nn.gelu", _gelu)


def _gelu_x(g, ans, x, approximate=True):
    if approximate:
        t = tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))
        d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * 0.7978845608028654 * (1 + 0.134145 * x * x)
    else:
        d = 0.5 * (1 + erf(x * 0.7071067811865476)) + x * exp(-0.5 * x * x) * 0.3989422804014327
    return g * d


defderiv(gelu, _gelu_x)
gelu.samples = lambda rng: [
    ((rng.uniform(-3, 3, s),), {"approximate": a}) for s in [(), (3,), (2, 3)] for a in (True, False)
]  # fmt: skip


# -- other elementwise activations ----------------------------------------------
def _soft_sign(x):
    """``x / (|x| + 1)``, elementwise."""
    x = _float_in(x)
    return _out(x / (np.abs(x) + 1))


soft_sign = _nn("nn.soft_sign", _soft_sign, c_expr="(({x}) / (fabs({x}) + 1))")


def _soft_sign_x(g, ans, x):
    return g / ((abs(x) + 1) * (abs(x) + 1))


def _hard_tanh(x):
    """``-1`` below -1, ``1`` above 1, ``x`` in between (derivative 1 on [-1, 1])."""
    x = _float_in(x)
    return _out(np.where(x > 1, 1, np.where(x < -1, -1, x)).astype(x.dtype, copy=False))


hard_tanh = _nn("nn.hard_tanh", _hard_tanh, c_expr="(({x}) > 1 ? 1 : (({x}) < -1 ? -1 : ({x})))")


def _hard_tanh_x(g, ans, x):
    return where(x > 1, 0, where(x < -1, 0, g))


def _hard_sigmoid(x):
    """``relu6(x + 3) / 6``, elementwise."""
    x = _float_in(x)
    return _out(np.minimum(np.maximum(x + 3, 0), 6) / 6)


hard_sigmoid = _nn("nn.hard_sigmoid", _hard_sigmoid, c_expr="(sj_min(sj_max(({x}) + 3, 0), 6) / 6)")


def _hard_sigmoid_x(g, ans, x):
    return where(logical_and(x > -3, x < 3), g / 6, 0)


def _hard_silu(x):
    """Hard SiLU / hard swish: ``x * hard_sigmoid(x)``, elementwise."""
    x = _float_in(x)
    return _out(x * (np.minimum(np.maximum(x + 3, 0), 6) / 6))


hard_silu = _nn("nn.hard_silu", _hard_silu, c_expr="(({x}) * sj_min(sj_max(({x}) + 3, 0), 6) / 6)")
hard_swish = hard_silu


def _hard_silu_x(g, ans, x):
    return g * (hard_sigmoid(x) + where(logical_and(x > -3, x < 3), x / 6, 0))


defderiv(soft_sign, _soft_sign_x)
defderiv(hard_tanh, _hard_tanh_x)
defderiv(hard_sigmoid, _hard_sigmoid_x)
defderiv(hard_silu, _hard_silu_x)
hard_sigmoid.test_domain = hard_silu.test_domain = (-5.0, 5.0)


def _log1mexp(x):
    """``log(1 - exp(-x))`` for ``x >= 0`` (jax.nn.log1mexp): ``log(-expm1(-x))``
    below ``log 2``, ``log1p(-exp(-x))`` above (Maechler's split); NaN for
    ``x < 0``, ``-inf`` at 0."""
    x = _float_in(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        small = np.log(-np.expm1(-x))
        large = np.log1p(-np.exp(-x))
    return _out(np.where(x < np.log(2.0), small, large).astype(x.dtype, copy=False))


log1mexp = _nn("nn.log1mexp", _log1mexp)


def _log1mexp_x(g, ans, x):
    return g / expm1(x)  # JAX's custom rule (inf at 0)


defderiv(log1mexp, _log1mexp_x)
log1mexp.test_domain = (0.2, 3.0)


# -- softmax ----------------------------------------------------------------------
def shifted_exp(x, axis, b=None, finite_shift=False):
    """``(exp(x - m), m)`` for ``m = max(x, axis, keepdims=True)``: the stable
    pieces of softmax, log_softmax, logsumexp and logsumexp's derivatives (NumPy,
    not a primitive; ``x`` an inexact array). ``b``: logsumexp's scale factors
    (broadcastable to ``x``); entries where ``b == 0`` are left out of the max
    and get ``exp(-inf) = 0``, as in JAX. ``finite_shift``: a non-finite max is
    replaced by 0 (logsumexp's convention; softmax keeps it, so an infinite input
    gives NaNs as in JAX)."""
    if b is not None:
        x = np.where(np.asarray(b) != 0, x, -np.inf).astype(x.dtype, copy=False)
    if np.size(x):
        m = np.max(np.real(x), axis=axis, keepdims=True)
    else:  # empty: the max over nothing is -inf (JAX's reduction identity), no error
        m = np.max(np.real(x), axis=axis, keepdims=True, initial=-np.inf)
    if finite_shift:
        m = np.where(np.isfinite(m), m, 0).astype(m.dtype, copy=False)
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, as in JAX
        return np.exp(x - m), m


def _masked(x, axis, where):
    """``(x with -inf where the mask is false, the mask broadcast to x)``."""
    w = np.broadcast_to(np.asarray(where, dtype=bool), x.shape)
    return np.where(w, x, np.asarray(-np.inf, x.dtype)), w


def _softmax(x, axis=-1, where=None):
    """``exp(x) / sum(exp(x), axis)`` computed with a max shift (no overflow)
    (jax.nn.softmax). ``axis``: an int, tuple of ints or None (all axes).
    ``where``: an optional bool mask broadcastable to ``x``; only the selected
    elements enter the max and the sum, and the others are 0 in the result (a
    slice with nothing selected is all 0), as in JAX. Shape: ``x``'s; dtype:
    ``x``'s inexact dtype (the default float for integers)."""
    x = _float_in(x)
    if where is None:
        e, _ = shifted_exp(x, axis)
        return _out(_div(e, accumulate(np.sum, e, axis=axis, keepdims=True)))
    xs, w = _masked(x, axis, where)
    e, _ = shifted_exp(xs, axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = _div(e, accumulate(np.sum, np.where(w, e, 0), axis=axis, keepdims=True))
    return _out(np.where(w, r, np.asarray(0, r.dtype)))


softmax = _nn("nn.softmax", _softmax, kind="nn")


def _softmax_x(g, ans, x, axis=-1, where=None):
    # ans is 0 where the mask is false, so JAX's masked sum is the plain one
    return ans * (g - sum(g * ans, axis=axis, keepdims=True))


defderiv(softmax, _softmax_x)


def _log_softmax(x, axis=-1, where=None):
    """``x - logsumexp(x, axis, keepdims=True)``, computed stably
    (jax.nn.log_softmax). ``where``: an optional bool mask broadcastable to
    ``x``; only the selected elements enter the logsumexp, the others are
    ``-inf`` in the result, as in JAX. Shape: ``x``'s; dtype: ``x``'s inexact
    dtype."""
    x = _float_in(x)
    if where is None:
        e, m = shifted_exp(x, axis)
        if not np.size(x):  # an empty slice: log(0) = -inf, without a warning (as JAX)
            return _out(x - m)
        return _out(x - m - np.log(accumulate(np.sum, e, axis=axis, keepdims=True)))
    xs, w = _masked(x, axis, where)
    e, m = shifted_exp(xs, axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = xs - m - np.log(accumulate(np.sum, np.where(w, e, 0), axis=axis, keepdims=True))
    return _out(np.where(w, r, np.asarray(-np.inf, r.dtype)))


log_softmax = _nn("nn.log_softmax", _log_softmax, kind="nn")


def _mask_zero(v, where=None):
    """``v`` where the bool mask ``where`` (broadcastable to ``v``) is true, 0
    elsewhere; ``v`` itself without a mask (log_softmax's masked derivatives)."""
    if where is None:
        return v
    v = np.asarray(v)
    return np.where(np.broadcast_to(where, v.shape), v, np.zeros((), v.dtype))


mask_zero = register(Primitive("ad.mask_zero", _mask_zero, kind="internal"))


def _mask_zero_v(g, ans, v, where=None):
    return mask_zero(g, where)


defderiv(mask_zero, _mask_zero_v)
mask_zero.samples = lambda rng: [
    ((rng.normal(size=(2, 3)),), {}),
    ((rng.normal(size=(2, 3)),), {"where": np.array([True, False, True])}),
]


def _log_softmax_vjp(g, ans, x, axis=-1, where=None):
    return mask_zero(g - exp(ans) * sum(mask_zero(g, where), axis=axis, keepdims=True), where)


def _log_softmax_jvp(g, ans, x, axis=-1, where=None):
    return mask_zero(g - sum(exp(ans) * g, axis=axis, keepdims=True), where)


log_softmax.def_vjp(_log_softmax_vjp)
log_softmax.def_jvp(_log_softmax_jvp)

_AXIS_SAMPLES = [((2, 3), -1), ((2, 3), 0), ((4,), -1), ((2, 3, 2), (0, 2)), ((3, 2), 1)]
log_softmax.samples = lambda rng: [
    ((rng.uniform(-2, 2, s),), {"axis": a}) for s, a in _AXIS_SAMPLES
]  # fmt: skip
# (masked log_softmax outputs are -inf, which finite differences cannot check:
# tests/test_nn.py checks them)
softmax.samples = lambda rng: log_softmax.samples(rng) + [
    ((rng.uniform(-2, 2, (2, 3)),), {"where": np.array([[True, False, True], [False, True, True]])}),
    ((rng.uniform(-2, 2, (2, 3)),), {"axis": 0, "where": np.array([True, False, True])}),
]  # fmt: skip


# -- one_hot ----------------------------------------------------------------------
def _one_hot(x, num_classes, *, dtype=None, axis=-1):
    """One-hot encoding: ``x[..., None] == arange(num_classes)`` as ``dtype``
    (default float), with the new axis at ``axis``. Out-of-range values give
    all-zero rows. Not differentiable."""
    x = np.asarray(x)
    dt = _dt.default_float() if dtype is None else _dt.canonicalize_dtype(dtype)
    out_ndim = x.ndim + 1
    ax = axis + out_ndim if axis < 0 else axis
    if not 0 <= ax < out_ndim:
        raise ValueError(f"one_hot: axis {axis} out of range for {out_ndim} dimensions")
    classes = np.arange(num_classes).reshape((num_classes,) + (1,) * (out_ndim - 1 - ax))
    return np.equal(np.expand_dims(x, ax), classes).astype(dt)


one_hot = _nn("nn.one_hot", _one_hot, kind="nn", differentiable=False)
one_hot.facts(shape_changing=True)


# JAX computes gelu with a strongly typed constant or conversion: strongly typed
# results whatever the operands' weak types (registry.Primitive.weak_result)
gelu.facts(weak_result=False)
