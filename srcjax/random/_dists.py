"""The continuous and discrete distributions of ``jax.random`` built on
:mod:`srcjax.random`'s bits, ``uniform`` and ``normal``.

Each ``_<name>_from(keys, ...)`` takes a batch of keys ``(..., 2)`` and
returns ``keys.shape[:-1] + shape``; the public primitive checks that it got a
single key, and vmap's rule calls the batched helper ``ad.random_<name>_b``
(see :func:`srcjax.random._register._batch_rule`).

The arithmetic follows JAX 0.10.2's definitions step for step with XLA:CPU's
float32 rounding (``._xla32``), so the values equal JAX's bit for bit on the
same machine. Only float32 is implemented: XLA's float64 ``log``/``exp``/
``erf_inv`` kernels are not reproduced, so ``dtype=float64`` raises
``NotImplementedError``.
"""

from __future__ import annotations

import inspect

import numpy as np

from ..primitives.elementwise import defderiv as _defderiv
from ..primitives.elementwise import exp as _exp
from ..primitives.elementwise import log as _log
from ..primitives.elementwise import where as _where
from ..primitives.registry import Primitive, register
from ..primitives.special import digamma as _digamma
from . import _gammagrad as _gg
from ._base import _key, _keys
from ._dist_impls import (
    _F,
    _cauchy_from,
    _double_sided_maxwell_from,
    _gamma_from,
    _geometric_from,
    _lognormal_from,
    _maxwell_from,
    _pareto_from,
    _poisson_from,
    _rayleigh_from,
    _triangular_from,
    _truncated_normal_from,
    _wald_from,
    _weibull_min_from,
)
from ._register import _batch_rule, _internal, _key_samples, _ks, _prim

# =========================================================================== public functions
_COMMON = """
    Args:
        key: a key, typed (shape ``()``) or raw (uint32 ``(2,)``); use ``srcjax.vmap`` for a batch.
{args}        dtype: float32 (the default float dtype unless ``jax_enable_x64``).

    Returns:
        float32 array of {shape_doc}.

    Raises:
        TypeError: an invalid key or shape; a parameter that is a list or complex.
        ValueError: parameter shapes that do not broadcast to ``shape``; a
            non-float dtype; a batch of keys.
        NotImplementedError: float64.

    {extra}"""


def _doc(text: str, args: str, shape_doc: str, extra: str = "") -> str:
    return text + _COMMON.format(args=args, shape_doc=shape_doc, extra=extra)


_NO_GRAD = (
    "Not differentiable in its parameters in srcjax (JAX differentiates through "
    "them): asking for that derivative raises a 'no derivative rule' error."
)
_SHAPE_DOC = "``shape`` (default: the parameters' broadcast shape)"


def _one(key, name):
    return _key(key, name)


def truncated_normal_(key, lower, upper, shape=None, dtype=None):
    return _truncated_normal_from(_one(key, "truncated_normal"), lower, upper, shape, dtype)


def cauchy_(key, shape=(), dtype=None):
    return _cauchy_from(_one(key, "cauchy"), shape, dtype)


def lognormal_(key, sigma=1.0, shape=None, dtype=None):
    return _lognormal_from(_one(key, "lognormal"), sigma, shape, dtype)


def pareto_(key, b, shape=None, dtype=None):
    return _pareto_from(_one(key, "pareto"), b, shape, dtype)


def rayleigh_(key, scale, shape=None, dtype=None):
    return _rayleigh_from(_one(key, "rayleigh"), scale, shape, dtype)


def maxwell_(key, shape=(), dtype=None):
    return _maxwell_from(_one(key, "maxwell"), shape, dtype)


def double_sided_maxwell_(key, loc, scale, shape=(), dtype=None):
    return _double_sided_maxwell_from(_one(key, "double_sided_maxwell"), loc, scale, shape, dtype)


def weibull_min_(key, scale, concentration, shape=(), dtype=None):
    return _weibull_min_from(_one(key, "weibull_min"), scale, concentration, shape, dtype)


def triangular_(key, left, mode, right, shape=None, dtype=None):
    return _triangular_from(_one(key, "triangular"), left, mode, right, shape, dtype)


def wald_(key, mean, shape=None, dtype=None):
    return _wald_from(_one(key, "wald"), mean, shape, dtype)


def geometric_(key, p, shape=None, dtype=None):
    return _geometric_from(_one(key, "geometric"), p, shape, dtype)


def gamma_(key, a, shape=None, dtype=None):
    return _gamma_from(_one(key, "gamma"), a, shape, dtype, False)


def loggamma_(key, a, shape=None, dtype=None):
    return _gamma_from(_one(key, "loggamma"), a, shape, dtype, True)


def poisson_(key, lam, shape=None, dtype=None):
    return _poisson_from(_one(key, "poisson"), lam, shape, dtype)


truncated_normal_.__doc__ = _doc(
    "Standard normal values truncated to ``(lower, upper)``\n    "
    "(``jax.random.truncated_normal``): ``sqrt(2) * erf_inv(uniform(key, shape,\n    "
    "minval=erf(lower/sqrt2), maxval=erf(upper/sqrt2)))`` clipped into the open\n    "
    "interval, with XLA:CPU's float32 ``erf``/``erf_inv``. Bit for bit with\n    "
    "scalar bounds; with array bounds and large outputs (e.g. ``(400, 50)``) XLA\n    "
    "evaluates the bounds' transforms in another order and values can differ.\n",
    "        lower, upper: float bounds, scalars or arrays.\n"
    "        shape: the result's shape (default: lower and upper broadcast).\n",
    _SHAPE_DOC,
    _NO_GRAD,
)
cauchy_.__doc__ = _doc(
    "Standard Cauchy values (``jax.random.cauchy``): ``tan(pi * (u - 0.5))`` for\n    "
    "``u = uniform(key, shape, minval=eps, maxval=1)``; ``tan`` is the C library's\n    "
    "``tanf``, as XLA:CPU calls it.\n",
    "        shape: the result's shape (default ``()``).\n",
    "``shape``",
)
lognormal_.__doc__ = _doc(
    "Lognormal values (``jax.random.lognormal``): ``exp(sigma * normal(key, shape))``.\n",
    "        sigma: scale of the underlying normal (default 1).\n"
    "        shape: the result's shape (default ``sigma``'s shape).\n",
    _SHAPE_DOC,
    _NO_GRAD,
)
pareto_.__doc__ = _doc(
    "Pareto values (``jax.random.pareto``): ``exp(exponential(key, shape) / b)``.\n",
    "        b: the shape parameter.\n        shape: the result's shape (default ``b``'s shape).\n",
    _SHAPE_DOC,
    _NO_GRAD,
)
rayleigh_.__doc__ = _doc(
    "Rayleigh values (``jax.random.rayleigh``): ``scale * sqrt(-2 log(u))``.\n",
    "        scale: the scale parameter.\n        shape: the result's shape (default ``scale``'s shape).\n",
    _SHAPE_DOC,
    _NO_GRAD,
)
maxwell_.__doc__ = _doc(
    "One-sided Maxwell values (``jax.random.maxwell``): the norm of 3 standard\n    "
    "normals. Bit for bit with JAX below 64 and from 2000 values on; in between\n    "
    "XLA mixes two summation orders and some values differ by an ulp.\n",
    "        shape: the result's shape (default ``()``).\n",
    "``shape``",
)
double_sided_maxwell_.__doc__ = _doc(
    "Double-sided Maxwell values (``jax.random.double_sided_maxwell``):\n    "
    "``sign * maxwell * scale + loc`` with Rademacher signs (key split in two).\n    "
    "As JAX, the result's shape is ``shape + broadcast(loc, scale).shape`` (just\n    "
    "the parameters' shape when ``shape`` is empty). Same ulp caveat as maxwell.\n",
    "        loc, scale: location and scale.\n        shape: leading shape (default ``()``).\n",
    "``shape + broadcast_shapes(loc.shape, scale.shape)``",
    _NO_GRAD,
)
weibull_min_.__doc__ = _doc(
    "Weibull values (``jax.random.weibull_min``): ``(-log1p(-u)) ** (1 /\n    "
    "concentration) * scale``; ``pow`` is the C library's ``powf``, as XLA:CPU.\n",
    "        scale, concentration: the parameters (broadcasting to ``shape``).\n"
    "        shape: the result's shape (default ``()``).\n",
    "``shape``",
    _NO_GRAD,
)
triangular_.__doc__ = _doc(
    "Triangular values (``jax.random.triangular``) by inverting the CDF.\n",
    "        left, mode, right: the parameters.\n"
    "        shape: the result's shape (default: the parameters broadcast).\n",
    _SHAPE_DOC,
    _NO_GRAD,
)
wald_.__doc__ = _doc(
    "Wald (inverse Gaussian) values (``jax.random.wald``), Michael-Schucany-Haas\n    "
    "with a normal from the first and a uniform from the second key of a split.\n",
    "        mean: the mean.\n        shape: the result's shape (default ``mean``'s shape).\n",
    _SHAPE_DOC,
    _NO_GRAD,
)
geometric_.__doc__ = (
    "Geometric values, the number of trials to the first success\n    "
    "(``jax.random.geometric``): ``floor(log(u) / log1p(-p)) + 1``.\n\n    "
    "Args:\n        key: a key: typed (shape ``()``) or raw (uint32, shape ``(2,)``).\n"
    "        p: success probability (float).\n"
    "        shape: the result's shape (default ``p``'s shape).\n"
    "        dtype: an integer dtype (default int32, int64 with x64).\n\n    "
    "Returns:\n        integer array of ``shape``.\n\n    "
    "Raises:\n        TypeError: a non-integer dtype; an invalid key.\n"
    "        ValueError: ``p`` not broadcasting to ``shape``; a batch of keys.\n"
)
poisson_.__doc__ = (
    "Poisson random values (``jax.random.poisson``), JAX's algorithm: Knuth's\n    "
    "(products of uniforms, one draw of the whole shape per round) for ``lam < 10``\n    "
    "or NaN, Hormann's transformed rejection otherwise, both from the same key;\n    "
    "0 where ``lam == 0``. Bit for bit with JAX for ``lam < 10``; for ``lam >= 10``\n    "
    "the accept test uses SciPy's ``lgamma`` (XLA's float32 one is not reproduced):\n    "
    "an acceptance flips now and then and, as JAX redraws the whole array until\n    "
    "every value is accepted, about 4% of such values differ from JAX's (same\n    "
    "distribution: tested by moments). Not differentiable (integer values).\n\n    "
    "Args:\n        key: a key: typed (shape ``()``) or raw (uint32, shape ``(2,)``).\n"
    "        lam: the rates (>= 0), real scalar or array.\n"
    "        shape: the result's shape (default ``lam``'s shape).\n"
    "        dtype: an integer dtype (default int32, int64 with x64).\n\n    "
    "Returns:\n        integer array of ``shape``.\n\n    "
    "Raises:\n        TypeError: a non-integer dtype; an invalid key; a list or complex ``lam``.\n"
    "        ValueError: ``lam`` not broadcasting to ``shape``; a batch of keys.\n"
)
_GAMMA_NOTE = (
    "Key usage, the rejection loop and the arithmetic follow JAX's\n    "
    "``_gamma_one`` (Marsaglia-Tsang; alpha < 1 boosted by ``u ** (1/alpha)``),\n    "
    "but NOT bit-exact: XLA:CPU computes ``1 / sqrt(d)`` with the processor's\n    "
    "approximate ``rsqrt`` instruction refined by Newton steps (its bits depend on\n    "
    "the CPU vendor), srcjax with a correctly rounded division. The draws then\n    "
    "differ from JAX's by a few ulps for some ``a`` (and, very rarely, an\n    "
    "acceptance decision flips).\n"
)
gamma_.__doc__ = _doc(
    "Gamma(a, 1) values (``jax.random.gamma``).\n\n    " + _GAMMA_NOTE,
    "        a: the shape parameter, > 0.\n        shape: the result's shape (default ``a``'s shape).\n",
    _SHAPE_DOC,
    "Differentiable in ``a`` by implicit reparameterization, as JAX: ``dx/da =\n"
    "    -(dP/da) / (dP/dx)`` for the CDF ``P(a, x)`` (``random_gamma_grad``, JAX's\n"
    "    series / continued fraction, evaluated in float64); second derivatives too\n"
    "    (also reverse over reverse, which JAX refuses); a third raises 'no\n"
    "    derivative rule'.",
)
loggamma_.__doc__ = _doc(
    "Logs of Gamma(a, 1) values computed in log space (``jax.random.loggamma``).\n\n    "
    + _GAMMA_NOTE,
    "        a: the shape parameter, > 0.\n        shape: the result's shape (default ``a``'s shape).\n",
    _SHAPE_DOC,
    "Differentiable in ``a`` as JAX: ``d log(x) / da = G(a, x) / x`` with ``G``\n"
    "    gamma's implicit derivative and ``x = exp(log x)`` (0 replaced by the\n"
    "    smallest normal float32).",
)


_HELPERS: dict = {}


def _register_elementwise(public, impl, domain, hint):
    p = register(Primitive(public, impl, kind="elementwise", broadcasting=True))
    p.test_domain = domain
    p.missing_rule_hint = hint
    return p


def _register_all():
    f32 = np.float32
    table = [
        # name, public impl, batched impl, public samples, batched samples, param
        (
            "truncated_normal",
            truncated_normal_,
            _truncated_normal_from,
            lambda k: ((k, f32(-1.0), f32(2.0), (4,)), {}),
            (f32(-1.0), f32(2.0), (3,)),
            True,
        ),
        ("cauchy", cauchy_, _cauchy_from, lambda k: ((k, (4,)), {}), ((3,), None), False),
        (
            "lognormal",
            lognormal_,
            _lognormal_from,
            lambda k: ((k, f32(0.5), (4,)), {}),
            (f32(0.5), (3,), None),
            True,
        ),
        (
            "pareto",
            pareto_,
            _pareto_from,
            lambda k: ((k, f32(2.0), (4,)), {}),
            (f32(2.0), (3,), None),
            True,
        ),
        (
            "rayleigh",
            rayleigh_,
            _rayleigh_from,
            lambda k: ((k, f32(1.5), (4,)), {}),
            (f32(1.5), (3,), None),
            True,
        ),
        ("maxwell", maxwell_, _maxwell_from, lambda k: ((k, (4,)), {}), ((3,), None), False),
        (
            "double_sided_maxwell",
            double_sided_maxwell_,
            _double_sided_maxwell_from,
            lambda k: ((k, f32(0.5), f32(2.0), (4,)), {}),
            (f32(0.5), f32(2.0), (3,), None),
            True,
        ),
        (
            "weibull_min",
            weibull_min_,
            _weibull_min_from,
            lambda k: ((k, f32(1.5), f32(2.0), (4,)), {}),
            (f32(1.5), f32(2.0), (3,), None),
            True,
        ),
        (
            "triangular",
            triangular_,
            _triangular_from,
            lambda k: ((k, f32(-1.0), f32(0.2), f32(1.0), (4,)), {}),
            (f32(-1.0), f32(0.2), f32(1.0), (3,), None),
            True,
        ),
        (
            "wald",
            wald_,
            _wald_from,
            lambda k: ((k, f32(1.5), (4,)), {}),
            (f32(1.5), (3,), None),
            True,
        ),
        (
            "geometric",
            geometric_,
            _geometric_from,
            lambda k: ((k, f32(0.3), (4,)), {}),
            (f32(0.3), (3,), None),
            False,
        ),
        (
            "poisson",
            poisson_,
            _poisson_from,
            lambda k: ((k, f32(3.0), (4,)), {}),
            (f32(12.0), (3,), None),
            False,
        ),
        (
            "gamma",
            gamma_,
            _gamma_from,
            lambda k: ((k, f32(1.5), (4,)), {}),
            (f32(1.5), (3,), None),
            True,
        ),
        (
            "loggamma",
            loggamma_,
            lambda keys, a, shape=None, dtype=None: _gamma_from(keys, a, shape, dtype, True),
            lambda k: ((k, f32(0.5), (4,)), {}),
            (f32(0.5), (3,), None),
            True,
        ),
    ]
    out = {}
    for name, pub, frm, samp, bsamp, has_param in table:
        sig = inspect.signature(pub)

        def b_impl(key, *args, _frm=frm, _name=name, _sig=sig, **kw):
            bound = _sig.bind(key, *args, **kw)
            bound.apply_defaults()
            rest = list(bound.arguments.values())[1:]
            return _frm(_keys(key, _name), *rest)

        b_impl.__signature__ = inspect.signature(pub)
        b_impl.__doc__ = f"vmap's ``{name}``: keys ``(..., 2)`` -> ``(...,) + shape`` (internal)."
        p = _prim(
            f"random.{name}",
            pub,
            lambda rng, _s=samp: [_s(k) for k in _key_samples(rng)],
            differentiable=has_param,
        )
        if has_param:
            p.missing_rule_hint = (
                f"srcjax.random.{name} is not differentiable in its parameters "
                "(JAX is: it differentiates through the sampler)"
            )
        helper = _internal(
            f"ad.random_{name}_b", b_impl, lambda rng, _b=bsamp: [((_ks(rng),) + _b, {})]
        )
        p.def_batch(_batch_rule(helper))
        helper.def_batch(_batch_rule(helper))
        out[name] = p
        _HELPERS[name] = helper
    return out


_PRIMS = _register_all()


# =========================================================================== gamma's derivative
def _random_gamma_grad(a, x):
    """``dx/da`` of Gamma(a, 1) samples ``x`` by implicit reparameterization
    (``jax.lax.random_gamma_grad``): ``-(dP/da) / (dP/dx)`` for the CDF ``P(a,
    x)``, with JAX's series / continued fraction (see ``_gammagrad``).

    ``a``, ``x``: broadcastable real arrays or scalars; result: their broadcast
    shape, JAX's inexact promotion of their dtypes (float32 for Python floats).
    NaN for ``a <= 0``, ``x < 0`` or NaN inputs, 0 at ``x = 0``. Differentiable
    in ``x`` and ``a`` once more; a third derivative in ``a`` raises 'no derivative
    rule'."""
    return _gg.gamma_grad(a, x)


def _random_gamma_grad_da(a, x):
    """``d/da`` of :func:`_random_gamma_grad` at fixed ``x`` (internal; shapes
    and dtypes as it). Not differentiable: a further derivative raises."""
    return _gg.gamma_grad_da(a, x)


random_gamma_grad = _register_elementwise(
    "ad.random_gamma_grad", _random_gamma_grad, (0.5, 3.0), hint=None
)
random_gamma_grad_da = _register_elementwise(
    "ad.random_gamma_grad_da",
    _random_gamma_grad_da,
    (0.5, 3.0),
    hint=(
        "srcjax differentiates gamma samples in `a` twice at most (the third "
        "derivative of the implicit reparameterization is not implemented)"
    ),
)


def _rgg_a(g, ans, a, x):
    return g * random_gamma_grad_da(a, x)


def _rgg_x(g, ans, a, x):
    return g * (_digamma(a) - _log(x) + ans * (1.0 - (a - 1.0) / x))


def _rgg_samples(rng):
    out = []
    for s in [(), (3,), (2, 3)]:
        a = rng.uniform(0.3, 4.0, s)
        out.append(((a, a * rng.uniform(0.2, 2.5, s)), {}))  # series and fraction
    out.append(((rng.uniform(0.5, 2.0, (3,)), rng.uniform(2.5, 6.0, (2, 3))), {}))
    return out


_defderiv(random_gamma_grad, _rgg_a, _rgg_x)
random_gamma_grad.samples = _rgg_samples
random_gamma_grad_da.samples = _rgg_samples


def _gamma_a(g, ans, a):
    return g * random_gamma_grad(a, ans)


def _loggamma_a(g, ans, a):
    # JAX: d log(x) / da = G(a, x) / x with x = exp(log x), 0 replaced by tiny
    s = _exp(ans)
    s = _where(s == 0, _TINY, s)
    return g * random_gamma_grad(a, s) / s


_TINY = _F(np.finfo(np.float32).tiny)
_IMPLICIT_HINT = (
    "srcjax.random.{} is differentiable in `a` only (implicit reparameterization, "
    "as JAX); its rule is not the derivative of the sampler's arithmetic, so the "
    "registry's finite-difference checks skip it (tests/test_random_dists.py checks it)"
)
for _name, _rule in (("gamma", _gamma_a), ("loggamma", _loggamma_a)):
    for _p in (_PRIMS[_name], _HELPERS[_name]):
        _p.broadcasting = True
        _p.differentiable = True
        _p.missing_rule_hint = _IMPLICIT_HINT.format(_name)
        _p.def_vjp(a=_rule)
        _p.def_jvp(a=_rule)
truncated_normal = _PRIMS["truncated_normal"]
cauchy = _PRIMS["cauchy"]
lognormal = _PRIMS["lognormal"]
pareto = _PRIMS["pareto"]
rayleigh = _PRIMS["rayleigh"]
maxwell = _PRIMS["maxwell"]
double_sided_maxwell = _PRIMS["double_sided_maxwell"]
weibull_min = _PRIMS["weibull_min"]
triangular = _PRIMS["triangular"]
wald = _PRIMS["wald"]
geometric = _PRIMS["geometric"]
poisson = _PRIMS["poisson"]
gamma = _PRIMS["gamma"]
loggamma = _PRIMS["loggamma"]
