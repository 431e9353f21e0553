"""``jax.lax``'s elementwise functions beyond ``_ops``: ``real``/``imag``/``conj``,
``select_n``, the new elementwise primitives (``nextafter``,
``population_count``, ``clz``, ``zeta``, ``betainc``, ``complex``, the Bessel
functions ...) with their derivatives, and ``reduce_precision``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import dtypes as _dt
from ...frontend import nodes as N
from ...primitives.ad import astype as _astype
from ...primitives.elementwise import conj as _conj
from ...primitives.elementwise import defderiv as _defderiv
from ...primitives.elementwise import exp as _exp
from ...primitives.elementwise import greater_equal as _greater_equal
from ...primitives.elementwise import imag as _imag
from ...primitives.elementwise import log as _log
from ...primitives.elementwise import log1p as _log1p
from ...primitives.elementwise import new_elementwise
from ...primitives.elementwise import real as _real
from ...primitives.elementwise import sign as _sign
from ...primitives.elementwise import where as _where
from ...primitives.registry import Primitive, register
from ...primitives.special import gammaln
from .._ops._static import _canonical_dtype_impl, _same_dtypes_impl
from .._ops.elementwise import integer_pow
from ._static import _static

# ---------------------------------------------------------------------------
# elementwise


def _check_complex_impl(name, x):
    """Static: JAX's TypeError unless ``x`` is complex."""
    d = _dt.dtype_of(x)
    if d.kind != "c":
        raise TypeError(
            f"{name} does not accept dtype {d.name}. Accepted dtypes are subtypes of"
            " complexfloating."
        )
    return d


_check_complex = _static("ad.lax_check_complex", _check_complex_impl).facts(effectful=True)
_check_complex.samples = lambda rng: [(("real", np.ones(2, np.complex64)), {})]


def _complex_of_impl(x):
    """Static: the complex dtype ``lax.conj`` gives ``x`` (floats widen to
    complex; TypeError for other dtypes, as JAX)."""
    d = _dt.dtype_of(x)
    if d.kind == "c":
        return d
    if d.kind != "f":
        raise TypeError(
            f"conj does not accept dtype {d.name}. Accepted dtypes are subtypes of"
            " floating, complexfloating."
        )
    return _dt.canonicalize_dtype(np.complex128 if d.itemsize == 8 else np.complex64)


_complex_of = _static("ad.lax_complex_of", _complex_of_impl)
_complex_of.samples = lambda rng: [((np.ones(2, np.float32),), {})]


def real(x: Any) -> Any:
    """Real part of a complex array (jax.lax.real): ``x``'s real dtype
    (complex64 -> float32). TypeError for a real ``x``, as JAX (``jnp.real``
    accepts those)."""
    _check_complex("real", x)
    return _real(x)


def imag(x: Any) -> Any:
    """Imaginary part of a complex array (jax.lax.imag); as :func:`real`."""
    _check_complex("imag", x)
    return _imag(x)


def conj(x: Any) -> Any:
    """Complex conjugate (jax.lax.conj): floating or complex ``x``; the result
    is complex (float32 -> complex64, as JAX). TypeError for other dtypes."""
    return _conj(_astype(x, _complex_of(x)))


def reciprocal(x: Any) -> Any:
    """Elementwise ``1 / x`` (jax.lax.reciprocal, ``integer_pow(x, -1)``):
    ``x``'s inexact dtype; integers raise TypeError, as JAX."""
    return integer_pow(x, -1)


def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise (jax.lax.select_n).

    Args:
        which: bool (then at most two cases: False picks ``cases[0]``) or
            integer array, 0-d or of the cases' shape. An integer out of range
            picks the nearest end (as XLA:CPU does).
        cases: one or more arrays of one shape and dtype.

    Returns:
        An array of the cases' shape and dtype; differentiable in the cases.

    Raises:
        ValueError for no case; TypeError (JAX's messages) for a float
        ``which``, a bool ``which`` with more than two cases, mismatched case
        shapes or dtypes, or a ``which`` of another shape.
    """
    _select_n_check(which, cases)
    out = cases[0]
    for i in range(1, len(cases)):
        out = _where(_greater_equal(which, i), cases[i], out)
    return out


def _select_n_check_impl(which, cases, which_batched=False, cases_batched=False):
    """Static: JAX's checks of ``select_n``. Under vmap (``*_batched``) the
    operands carry a leading batch axis the checks look past."""
    if len(cases) == 0:
        raise ValueError("select_n() must have at least one case")
    dw = _dt.dtype_of(which)
    if dw.kind not in "biu":
        raise TypeError(f"select `which` must be boolean or integer type, got {dw.name}.")
    if dw.kind == "b" and len(cases) > 2:
        raise TypeError("select with boolean `which` cannot have > 2 cases.")
    shapes = [tuple(np.shape(c))[int(cases_batched) :] for c in cases]
    if len(set(shapes)) != 1:
        raise TypeError(f"select cases must have the same shapes, got {shapes}.")
    dts = [_dt.dtype_of(c) for c in cases]
    if len(set(dts)) != 1:
        raise TypeError(
            "lax.select requires arguments to have the same dtypes, got "
            + ", ".join(d.name for d in dts)
            + ". (Tip: jnp.where is a similar function that does automatic type"
            " promotion on inputs)."
        )
    ws = tuple(np.shape(which))[int(which_batched) :]
    if ws not in ((), shapes[0]):
        raise TypeError(
            "select `which` must be scalar or have the same shape as cases, got `which` shape"
            f" {ws} but case shape {shapes[0]}."
        )
    return True


_select_n_check = register(
    Primitive("ad.lax_select_n_check", _select_n_check_impl, kind="internal", differentiable=False)
)


def _select_n_check_batch(c):
    """The checks on one example's shapes (a batched tuple of cases holds every
    case batched: vmap materializes a display with any batched item)."""
    bw, bc = c.batched("which"), c.batched("cases")
    if not (bw or bc):
        return c.rebuild(), False
    return c.rebuild(which_batched=N.const(bw), cases_batched=N.const(bc)), False


_select_n_check.def_batch(_select_n_check_batch)
_select_n_check.samples = lambda rng: [((np.array([0, 1]), (np.ones(2), np.zeros(2))), {})]


_elementwise = new_elementwise  # (one helper for every module that adds elementwise primitives)


def _out(r):
    return r if r.ndim else r[()]


def _float_args(name, *xs):
    """The operands of a float-only lax function in their one canonical dtype
    (JAX's TypeError for other dtypes or mixed ones)."""
    dt = _same_dtypes_impl(name, "float", *(xs * 2 if len(xs) == 1 else xs))
    return [np.asarray(x, dt) for x in xs], dt


def _scipy(fname, name, *xs):
    """SciPy's ``fname`` on float-only operands (computed in float64 for
    float32 inputs, rounded once)."""
    from ...primitives.special import _scipy_special

    args, dt = _float_args(name, *xs)
    wide = [a.astype(np.float64) if a.dtype.itemsize < 8 else a for a in args]
    with np.errstate(all="ignore"):
        r = np.asarray(getattr(_scipy_special(), fname)(*wide)).astype(dt)
    return _out(r)


def _nextafter(x1, x2):
    """The next representable float after ``x1`` toward ``x2``, elementwise
    (jax.lax.nextafter): floats of one dtype (TypeError otherwise); ``x1``
    itself where ``x1 == x2``, NaN if either is NaN; denormals are produced
    (``nextafter(0, 1)`` is the smallest subnormal). Not differentiable (as JAX)."""
    (a, b), _ = _float_args("nextafter", x1, x2)
    return _out(np.asarray(np.nextafter(a, b)))


def _int_operand(name, x):
    d = _dt.dtype_of(x)
    if d.kind not in "iu":
        raise TypeError(
            f"{name} does not accept dtype {d.name}. Accepted dtypes are subtypes of integer."
        )
    a = np.asarray(x, d)
    return a, d, np.dtype(f"u{d.itemsize}")


def _population_count(x):
    """Number of set bits of each element (jax.lax.population_count): integer
    ``x`` (a negative one counts its two's complement bits), result in ``x``'s
    dtype. TypeError for other dtypes. Not differentiable."""
    a, d, u = _int_operand("population_count", x)
    return _out(np.bitwise_count(a.view(u) if a.ndim else a.astype(u)).astype(d))


def _clz(x):
    """Number of leading zero bits of each element (jax.lax.clz): integer ``x``
    (its bit width for 0, 0 for a negative one), in ``x``'s dtype. TypeError
    for other dtypes. Not differentiable."""
    a, d, u = _int_operand("clz", x)
    bits = d.itemsize * 8
    y = a.view(u) if a.ndim else a.astype(u)
    y = np.array(y, u, ndmin=1)
    count = np.zeros(y.shape, np.int64)
    s = bits // 2
    while s >= 1:
        top_zero = (y >> u.type(bits - s)) == 0
        count += np.where(top_zero, s, 0)
        y = np.where(top_zero, y << u.type(s), y)
        s //= 2
    count += (y >> u.type(bits - 1)) == 0
    return _out(count.astype(d).reshape(np.shape(a)))


def _zeta(x, q):
    """The Hurwitz zeta function ``sum_k (k + q) ** -x`` (jax.lax.zeta; SciPy's
    ``zeta(x, q)``): floats of one dtype; NaN for ``x < 1``. Not
    differentiable, as in JAX."""
    return _scipy("zeta", "zeta", x, q)


def _bessel_i0e(x):
    """``exp(-|x|) I0(x)``, elementwise (jax.lax.bessel_i0e): float ``x``, same
    dtype."""
    return _scipy("i0e", "bessel_i0e", x)


def _bessel_i1e(x):
    """``exp(-|x|) I1(x)``, elementwise (jax.lax.bessel_i1e): float ``x``, same
    dtype."""
    return _scipy("i1e", "bessel_i1e", x)


def _betainc(a, b, x):
    """The regularized incomplete beta function ``I_x(a, b)``, elementwise
    (jax.lax.betainc): floats of one dtype; NaN outside ``a, b > 0``,
    ``0 <= x <= 1``. Differentiable in ``x``; a derivative in ``a`` or ``b``
    raises NoDerivativeRuleError (JAX: ValueError)."""
    return _scipy("betainc", "betainc", a, b, x)


def _complex(x, y):
    """``x + i y`` elementwise (jax.lax.complex): floats of one dtype
    (float32 -> complex64); infinities and NaNs go to their part unchanged.
    Differentiable in both (cotangent ``g``: ``re(g)``, ``-im(g)``, as JAX)."""
    (a, b), dt = _float_args("complex", x, y)
    out = np.empty(
        np.broadcast_shapes(a.shape, b.shape), np.complex128 if dt.itemsize == 8 else np.complex64
    )
    out.real = a
    out.imag = b
    return _out(out)


nextafter = _elementwise(
    "lax.nextafter", _nextafter, hint="lax.nextafter has no derivative (as in JAX)"
)
population_count = _elementwise("lax.population_count", _population_count, differentiable=False)
clz = _elementwise("lax.clz", _clz, differentiable=False)
zeta = _elementwise(
    "lax.zeta", _zeta, domain=(1.5, 3.0), hint="lax.zeta has no derivative (as in JAX)"
)
bessel_i0e = _elementwise("lax.bessel_i0e", _bessel_i0e)
bessel_i1e = _elementwise("lax.bessel_i1e", _bessel_i1e)
betainc = _elementwise("lax.betainc", _betainc, domain=(0.1, 0.9))
complex = _elementwise("lax.complex", _complex)  # noqa: A001
for _p in (population_count, clz):
    _p.samples = lambda rng: [((np.array([0, 1, -1, 7, 2**20], np.int32),), {})]


def _bessel_i0e_x(g, ans, x):
    return g * (bessel_i1e(x) - _sign(x) * ans)


def _bessel_i1e_x(g, ans, x):
    nz = x != 0
    safe = _where(nz, x, 1.0)
    d = bessel_i0e(x) - ans * (_sign(x) + 1.0 / safe)
    return g * _where(nz, d, 0.5)


def _betainc_x(g, ans, a, b, x):
    lbeta = gammaln(a) + gammaln(b) - gammaln(a + b)
    return g * _exp((b - 1) * _log1p(-x) + (a - 1) * _log(x) - lbeta)


_defderiv(bessel_i0e, _bessel_i0e_x)
_defderiv(bessel_i1e, _bessel_i1e_x)
_defderiv(betainc, None, None, _betainc_x)
# no rules in a and b: differentiating there raises with JAX's words
betainc.missing_rule_hint = (
    "Betainc gradient with respect to a and b not supported (as in JAX); wrap them in"
    " lax.stop_gradient if they are not meant to be differentiated"
)


def _complex_vjp_x(g, ans):
    return _real(g)


def _complex_vjp_y(g, ans):
    return -_imag(g)


def _complex_jvp_x(t, ans):
    return complex(t, t * 0)


def _complex_jvp_y(t, ans):
    return complex(t * 0, t)


complex.def_vjp(_complex_vjp_x, _complex_vjp_y)
complex.def_jvp(_complex_jvp_x, _complex_jvp_y)


# ---------------------------------------------------------------------------
# reduce_precision


#: float dtype -> (exponent bits, mantissa bits, unsigned type of its width)
_FLOAT_LAYOUT = {
    np.dtype(np.float16): (5, 10, np.uint16),
    np.dtype(np.float32): (8, 23, np.uint32),
    np.dtype(np.float64): (11, 52, np.uint64),
}


def _reduce_precision(operand, exponent_bits, mantissa_bits):
    """``operand`` rounded to a float format with ``exponent_bits`` exponent
    and ``mantissa_bits`` mantissa bits, kept in its own dtype
    (jax.lax.reduce_precision; XLA's ReducePrecision). The mantissa is rounded
    to nearest, ties to even; then magnitudes beyond the narrow format's range
    become infinities and those at or below its smallest normal exponent
    become (signed) zeros (no subnormals in the narrow format); NaNs stay NaN.
    ``operand``: float16/32/64 (bfloat16 is not supported); ``exponent_bits
    >= 1`` and ``mantissa_bits >= 0`` (ValueError otherwise; TypeError for a
    non-float operand). Derivative: the same rounding of the cotangent (linear,
    as JAX)."""
    if int(exponent_bits) != exponent_bits or int(mantissa_bits) != mantissa_bits:
        raise TypeError("reduce_precision: exponent_bits and mantissa_bits must be ints")
    e, m = int(exponent_bits), int(mantissa_bits)
    if e < 1 or m < 0:
        raise ValueError(
            f"reduce_precision: exponent_bits must be >= 1 and mantissa_bits >= 0, got {e}, {m}"
        )
    d = _dt.dtype_of(operand)
    if d not in _FLOAT_LAYOUT:
        raise TypeError(
            f"reduce_precision does not accept dtype {d.name}. Accepted dtypes are"
            " float16, float32, float64."
        )
    ne, nm, u = _FLOAT_LAYOUT[d]
    x = np.array(operand, d, ndmin=1)
    bits = x.view(u).copy()
    one = u(1)
    if m < nm:
        shift = u(nm - m)
        last = one << shift
        lsb = (bits >> shift) & one
        bits = (bits + lsb + ((last >> one) - one)) & ~(last - one)
    if e < ne:
        sign = one << u(ne + nm)
        expmask = ((one << u(ne)) - one) << u(nm)
        bias = (1 << (ne - 1)) - 1
        rbias = (1 << (e - 1)) - 1
        exp = bits & expmask
        over = exp > (u(bias + rbias) << u(nm))
        under = exp <= (u(bias - rbias) << u(nm))
        signed_zero = bits & sign
        bits = np.where(over, signed_zero | expmask, np.where(under, signed_zero, bits))
    out = bits.view(d)
    nan = np.isnan(x)
    if nan.any():
        out = np.where(nan, x, out)
    return _out(out.reshape(np.shape(operand)))


reduce_precision = register(
    Primitive("lax.reduce_precision", _reduce_precision, kind="elementwise")
)


def _reduce_precision_operand(g, ans, exponent_bits, mantissa_bits):
    return reduce_precision(g, exponent_bits, mantissa_bits)


_defderiv(reduce_precision, _reduce_precision_operand)
reduce_precision.samples = lambda rng: [
    ((rng.uniform(-2.0, 2.0, s), 11, 52), {}) for s in [(), (3,)]
]


# ---------------------------------------------------------------------------
# bitcast_convert_type


def _bitcast_convert_type(operand, new_dtype):
    """``operand``'s bits read as ``new_dtype`` (jax.lax.bitcast_convert_type;
    little-endian, as JAX on the CPU). Equal widths keep the shape
    (``float32(1.0)`` -> ``int32`` 1065353216); a narrower ``new_dtype`` adds a
    trailing axis of ``old_bits // new_bits`` (float32 ``(3,)`` -> uint16
    ``(3, 2)``, low half first); a wider one needs the last axis to have
    ``new_bits // old_bits`` entries and removes it (ValueError otherwise, JAX's
    text). Both dtypes are canonicalized (float64 is float32 unless x64); bool
    and complex operands or targets raise TypeError unless the dtypes are equal.
    The result is never weakly typed. Not differentiable: as in JAX, the
    derivative through it is zero."""
    d = _dt.dtype_of(operand)
    to = np.dtype(_canonical_dtype_impl(new_dtype))
    x = np.asarray(operand, d)
    if d == to:
        return _out(x.copy())
    if d.kind in "bc" or to.kind in "bc":
        raise TypeError(
            "lax.bitcast_convert_type does not support bool or complex values unless the"
            f" operand and destination types match. Got operand dtype={d.name},"
            f" new_dtype=dtype('{to.name}'). Consider using the arr.view() method instead."
        )
    x = np.array(x, order="C")  # (not ascontiguousarray: it makes 0-d arrays 1-d)
    if d.itemsize == to.itemsize:
        return _out(x.view(to))
    if d.itemsize > to.itemsize:
        return x.reshape(x.shape + (1,)).view(to)
    ratio = to.itemsize // d.itemsize
    if x.ndim == 0 or x.shape[-1] != ratio:
        n = x.shape[-1] if x.ndim else 1
        raise ValueError(
            f"Attempting to convert array of shape {x.shape} from {d.name} of size"
            f" {d.itemsize * 8} bits to {to.name} of size {to.itemsize * 8}, bits but"
            f" {n} * {d.itemsize * 8} != {to.itemsize * 8}"
        )
    return _out(x.view(to).reshape(x.shape[:-1]))


bitcast_convert_type = register(
    Primitive(
        "lax.bitcast_convert_type", _bitcast_convert_type, kind="structural", differentiable=False
    )
)
# under vmap the example axis leads and the bits are regrouped on the last axis
bitcast_convert_type.def_batch(lambda c: c.rebuild())
bitcast_convert_type.samples = lambda rng: [
    ((rng.uniform(-2.0, 2.0, s).astype(np.float32), np.int32), {}) for s in [(), (3,)]
]


# ---------------------------------------------------------------------------
