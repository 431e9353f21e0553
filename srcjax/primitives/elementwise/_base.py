"""Makers of the elementwise primitives: ``defderiv`` (the rule maker: one
derivative per operand) and the implementation makers (the hot path: a ufunc
call with JAX's result dtypes and broadcasting errors), ``new_elementwise``.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ... import dtypes as _dt
from ...dtypes import (
    BINARY_INEXACT_SUSPECT,
    BINARY_SUSPECT,
    INEXACT_SUSPECT,
    UNARY_SUSPECT,
    fix_binary,
    fix_binary_inexact,
    fix_inexact,
    fix_unary,
    half_mixed,
)
from ..registry import Primitive, register

_ndarray = np.ndarray
_F32 = np.float32
_PI = math.pi


# -- rule maker ---------------------------------------------------------------
def defderiv(prim: Primitive, *rules, **named) -> Primitive:
    """Register elementwise derivative rules as both VJP and JVP rules.

    For an elementwise primitive the derivative with respect to each operand is
    multiplication by a partial derivative (or a select), which is its own
    transpose: ``rule(g, ans, <params it reads>)`` is the JVP contribution when ``g`` is
    that operand's tangent and the VJP contribution (before un-broadcasting)
    when ``g`` is the output cotangent. ``None`` skips a parameter.
    """
    prim.def_vjp(*rules, **named)
    prim.def_jvp(*rules, **named)
    return prim


def _doc(fn, doc: str):
    fn.__doc__ = doc
    return fn


# -- implementation makers (the hot path) -------------------------------------
def _binary_impl(ufunc, name: str, doc: str):
    """Arithmetic binary ufunc: JAX result dtype via ``result_type``."""

    def impl(x, y):
        try:
            r = ufunc(x, y)
        except OverflowError:  # a Python int beyond the other operand's integer type
            return _wrapped_weak_int(ufunc, x, y)
        except ValueError as e:
            raise _broadcast_error(name, x, y, e) from None
        if r.dtype in BINARY_SUSPECT or half_mixed(r, x, y):
            return fix_binary(ufunc, r, x, y)
        return r

    impl.__name__ = impl.__qualname__ = name
    return _doc(impl, doc)


def _broadcast_error(name: str, x, y, err: ValueError) -> Exception:
    """JAX's error for operands that do not broadcast (a TypeError there, NumPy's
    ValueError: :class:`srcjax.errors.ShapeError` is both); another ValueError
    ``err`` as it is."""
    from ...errors import ShapeError

    sx, sy = np.shape(x), np.shape(y)
    try:
        np.broadcast_shapes(sx, sy)
    except ValueError:
        return ShapeError(f"{name} got incompatible shapes for broadcasting: {sx}, {sy}.")
    return err


def _wrapped_weak_int(ufunc, x, y):
    """``ufunc(x, y)`` where one operand is a Python int out of the other's integer
    dtype's range: JAX converts the weakly typed int to that dtype (it wraps:
    ``int8_array * 300`` multiplies by 44); NumPy raises OverflowError."""
    from ...dtypes import cast

    arr = y if type(x) is int else x
    dt = np.asarray(arr).dtype
    if dt.kind not in "iu":
        raise OverflowError(f"Python integer out of bounds for {dt.name}")
    return ufunc(cast(x, dt), cast(y, dt))


def _binary_inexact_impl(ufunc, name: str, doc: str):
    """Float-valued binary ufunc (``/``, ``arctan2``): ints promote to float."""

    def impl(x, y):
        try:
            r = ufunc(x, y)
        except ValueError as e:
            raise _broadcast_error(name, x, y, e) from None
        if r.dtype in BINARY_INEXACT_SUSPECT or half_mixed(r, x, y):
            return fix_binary_inexact(ufunc, r, x, y)
        return r

    impl.__name__ = impl.__qualname__ = name
    return _doc(impl, doc)


def _predicate_impl(ufunc, name: str, doc: str, nargs: int = 2):
    """Boolean-valued ufunc: NumPy's result is already JAX's."""
    if nargs == 2:

        def impl(x, y):
            return ufunc(x, y)

    else:

        def impl(x):
            return ufunc(x)

    impl.__name__ = impl.__qualname__ = name
    return _doc(impl, doc)


def _checked_unary_impl(ufunc, name: str, doc: str, suspect: set, fix):
    """A unary ufunc whose result dtype is recomputed by ``fix`` when it is in
    ``suspect`` (a set of ``dtypes`` updated in place when x64 changes)."""

    def impl(x):
        r = ufunc(x)
        if type(r) is _F32 or r.dtype not in suspect:  # (float32 is never suspect)
            return r
        return fix(ufunc, r, x)

    impl.__name__ = impl.__qualname__ = name
    if ufunc.nin == 1 and "f->f" in ufunc.types:
        # what impl is on a float32 scalar: the ufunc (grad's float32 code calls
        # it directly: api/scalar_code.py)
        impl.float32_ufunc = ufunc
    return _doc(impl, doc)


def _unary_impl(ufunc, name: str, doc: str):
    """Dtype-preserving unary ufunc (``-x``, ``abs``, ``floor``)."""
    return _checked_unary_impl(ufunc, name, doc, UNARY_SUSPECT, fix_unary)


def _inexact_impl(ufunc, name: str, doc: str):
    """Float-valued unary ufunc (``sin``, ``exp``): ints promote to float."""
    return _checked_unary_impl(ufunc, name, doc, INEXACT_SUSPECT, fix_inexact)


def _as_inexact(x):
    """``x`` as an array of JAX's float dtype for it (no copy for float arrays)."""
    if type(x) is _ndarray and x.dtype.kind in "fc" and x.dtype not in INEXACT_SUSPECT:
        return x
    return np.asarray(x, dtype=_dt.to_inexact_dtype(_dt.dtype_of(x)))


def signed_zero(r, like):
    """The float array ``r`` with its zeros signed as ``like`` (broadcast against
    it): JAX's ``sign``, ``//`` and ``%`` give ``-0.0`` where NumPy's ufunc gives
    ``+0.0`` or the other way round. ``r`` itself when it holds no zero."""
    zero = r == 0
    if not zero.any():
        return r
    return np.where(zero, np.copysign(r.dtype.type(0), np.asarray(like, r.dtype)), r)


def _ew(public: str, impl, *aliases, **kw) -> Primitive:
    kw.setdefault("kind", "elementwise")
    return register(Primitive(public, impl, **kw), *[a for a in aliases if a is not None])


def new_elementwise(
    public: str,
    impl,
    differentiable: bool = True,
    domain: tuple = (-2.0, 2.0),
    hint: Optional[str] = None,
) -> Primitive:
    """Register a broadcasting elementwise primitive ``public`` (rules added by the
    caller), tested by the registry on ``domain``; ``hint``: what to say when a
    derivative is asked of it and it has none. Shared by the modules that add
    elementwise functions outside this one (lax/_ops.py, lax/_more.py,
    primitives/more.py)."""
    p = _ew(public, impl, broadcasting=True, differentiable=differentiable, test_domain=domain)
    if hint is not None:
        p.missing_rule_hint = hint
    return p


def _binop(public, ufunc, doc, op=None, c_expr=None, *aliases, inexact=False, maker=None, **kw):
    name = public.rsplit(".", 1)[-1]
    if maker is None:
        maker = _binary_inexact_impl if inexact else _binary_impl
    return _ew(
        public, maker(ufunc, name, doc), ufunc, *aliases, op=op, broadcasting=True,
        c_expr=c_expr, **kw,
    )  # fmt: skip


def _unop(public, ufunc, doc, c_expr=None, *aliases, inexact=True, **kw):
    name = public.rsplit(".", 1)[-1]
    maker = _inexact_impl if inexact else _unary_impl
    return _ew(public, maker(ufunc, name, doc), ufunc, *aliases, c_expr=c_expr, **kw)
