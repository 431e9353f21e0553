"""Discrete Fourier transforms: ``jnp.fft.fftn``, ``ifftn``, ``rfftn``, ``irfftn``,
``fftshift`` and ``ifftshift`` (the 1-D, 2-D and Hermitian variants of
:mod:`srcjax.numpy.fft` are compositions of these).

Each transform is one primitive ``(a, s=None, axes=None, norm=None)`` with
JAX's semantics (``jax.numpy.fft``): the input is cropped or zero-padded to
``s`` along ``axes``, then transformed (NumPy's pocketfft, in the input's
precision); ``norm`` is ``None``/``"backward"``, ``"ortho"`` or ``"forward"``.
Dtypes as JAX: real and integer inputs of the complex transforms become
complex64 (complex128 only for 64-bit inputs with ``jax_enable_x64``),
``irfftn`` gives the matching real dtype, ``rfftn`` refuses complex and
float16 input as JAX does.

Derivatives follow JAX's convention for complex values (a cotangent pairs with
a tangent by ``re(g * t)``, no conjugation). The transforms are linear, so a
tangent is the transform of the tangent. Adjoints (``P`` crops or pads to the
input's shape along ``axes``, the transpose of the forward crop or pad):

- ``fftn``/``ifftn``: the DFT matrix is symmetric, so the adjoint is
  ``P(fftn(g))`` (``ifftn``), with the same ``norm``; the real part for a real
  input.
- ``rfftn`` (``x`` real, ``k`` over the half spectrum ``0..n//2``):
  ``x_bar_j = re(sum_k g_k w^(jk))``. ``irfftn`` of ``conj(g) / mask`` sums the
  Hermitian extension, in which every bin but the DC one (and the Nyquist one
  for even ``n``) appears twice; ``mask`` is 1 there and 2 elsewhere, so
  ``P(irfftn(conj(g) / mask, n, norm'))`` is the adjoint, where ``norm'`` swaps
  "backward" and "forward" (the adjoint of a forward transform scaled by ``c``
  is an inverse one scaled by ``c * N``).
- ``irfftn`` (complex ``z`` of length ``n//2 + 1`` to real ``x`` of length
  ``n``): ``x`` depends on each interior bin through ``2 re(z_k w^(-jk)) / n``
  and on the DC (and Nyquist) bin through its real part only, so the adjoint is
  ``P(mask * conj(rfftn(g, norm')))`` (real at DC and Nyquist).

Batching (vmap) moves the batch axis out of the way by giving the transform its
axes counted from the end (``ad.fft_batch_axes`` checks them against the
per-example rank). Static shape bookkeeping lives in non-differentiable
``ad.fft_*`` helpers, the same for every example of a vmap.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import dtypes as _dt
from ..frontend import nodes as N
from .ad import project_real
from .ad.linear import def_transpose_pair
from .creation import shape
from .elementwise import conj, real
from .registry import Primitive, register

__all__ = ["fftn", "ifftn", "rfftn", "irfftn", "fftshift", "ifftshift"]

_NORMS = (None, "backward", "ortho", "forward")
_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


# ---------------------------------------------------------------------------
# argument checks (JAX's messages)


def _operand(name, a):
    """``a`` as an array of its canonical dtype (Python scalars weakly typed);
    lists are refused as JAX refuses them."""
    if isinstance(a, (list, tuple)):
        raise TypeError(
            f"jax.numpy.fft.{name} requires ndarray or scalar arguments, got {type(a)} at"
            " position 0."
        )
    if isinstance(a, np.ndarray) and a.dtype == _dt.canonicalize_dtype(a.dtype):
        return a
    return np.asarray(a, dtype=_dt.dtype_of(a))


def _check_norm(norm):
    if norm not in _NORMS or (norm is not None and not isinstance(norm, str)):
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _plan(name, shp, s, axes):
    """``(s, axes)`` after JAX's checks: ``s`` a tuple of positive ints or None,
    ``axes`` a tuple of distinct non-negative axes of an array of shape ``shp``
    (every axis when both are None, the last ``len(s)`` when only ``axes`` is)."""
    ndim = len(shp)
    if s is not None:
        s = tuple(operator.index(v) for v in s)
        if any(v <= 0 for v in s):
            raise ValueError("Shape should be positive.")
    if axes is not None:
        if isinstance(axes, (int, np.integer)):
            raise TypeError(f"jax.numpy.fft.{name}: axes must be a sequence of ints, got {axes!r}")
        axes = tuple(operator.index(ax) for ax in axes)
        if s is not None and len(s) != len(axes):
            raise ValueError("Shape and axes have different lengths.")
        for ax in axes:
            if not -ndim <= ax < ndim:
                raise ValueError(f"axis {ax} is out of bounds for array of dimension {ndim}")
        given = axes
        axes = tuple(ax % ndim for ax in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(
                f"jax.numpy.fft.{name} does not support repeated axes. Got axes {given}."
            )
    elif s is None:
        axes = tuple(range(ndim))
    else:
        if len(s) > ndim:
            raise ValueError(
                f"FFT input shape {tuple(shp)} must have at least as many input dimensions"
                f" as fft_lengths {s}."
            )
        axes = tuple(range(ndim - len(s), ndim))
    return s, axes


def _lengths(name, shp, s, axes):
    """The transform lengths (the output's sizes along ``axes`` for all but
    ``rfftn``'s last axis): ``s``, else the input's sizes; ``irfftn``'s last is
    ``2 * (m - 1)`` for ``m`` input bins."""
    if s is not None:
        return tuple(s)
    out = [shp[ax] for ax in axes]
    if name == "irfftn" and out:
        out[-1] = max(0, 2 * (out[-1] - 1))
    return tuple(out)


def _converted(name, x):
    """``x`` in the dtype JAX's transform takes: complex for the complex
    transforms and irfftn, real floating for rfftn (complex and float16 refused)."""
    d = x.dtype
    if name == "rfftn":
        if d.kind == "c":
            raise ValueError("only real valued inputs supported for rfft")
        if d == np.float16:
            raise ValueError("RFFT input must be float32 or float64, got float16")
        want = _dt.to_inexact_dtype(d)
    else:
        f = _dt.to_inexact_dtype(d)
        want = (
            np.dtype(np.complex128) if f in (np.float64, np.complex128) else np.dtype(np.complex64)
        )
    return x if d == want else x.astype(want)


_NUMPY = {
    "fftn": np.fft.fftn,
    "ifftn": np.fft.ifftn,
    "rfftn": np.fft.rfftn,
    "irfftn": np.fft.irfftn,
}


def _transform(name, a, s, axes, norm):
    x = _operand(name, a)
    _check_norm(norm)
    s, axes = _plan(name, x.shape, s, axes)
    x = _converted(name, x)
    if not axes:
        return x.copy()  # no axes: JAX returns the converted input
    n = _lengths(name, x.shape, s, axes)
    out_shape = list(x.shape)
    for ax, k in zip(axes, n):
        out_shape[ax] = k
    if name == "rfftn":
        out_shape[axes[-1]] = n[-1] // 2 + 1
        out_dtype = np.result_type(x.dtype, np.complex64)
    elif name == "irfftn":
        out_dtype = np.finfo(x.dtype).dtype
    else:
        out_dtype = x.dtype
    if x.size == 0 or 0 in out_shape:
        return np.zeros(out_shape, out_dtype)
    out = _NUMPY[name](x, s=n, axes=axes, norm=norm)
    return out if out.dtype == out_dtype else out.astype(out_dtype)


# ---------------------------------------------------------------------------
# the transforms


def _fftn(a, s=None, axes=None, norm=None):
    """N-dimensional discrete Fourier transform (jax.numpy.fft.fftn).

    ``a``: an array (a list raises ``TypeError``). ``s``: the transform lengths
    (``a`` cropped or zero-padded to them), default ``a``'s sizes along
    ``axes``; ``axes``: default every axis, or the last ``len(s)`` ones. Result:
    ``a``'s shape with ``s`` along ``axes``; complex64 (complex128 for 64-bit
    input with ``jax_enable_x64``). ``norm``: None/"backward" (no scaling),
    "ortho" (``1/sqrt(n)``), "forward" (``1/n``). Raises ``ValueError`` for a
    bad ``norm``, non-positive ``s``, ``s`` and ``axes`` of different lengths,
    repeated or out-of-range axes (JAX's messages). Differentiable (adjoint:
    ``fftn`` of the cotangent, cropped/padded back)."""
    return _transform("fftn", a, s, axes, norm)


def _ifftn(a, s=None, axes=None, norm=None):
    """N-dimensional inverse discrete Fourier transform (jax.numpy.fft.ifftn).

    Arguments, shapes, dtypes and errors as :func:`fftn`; ``norm``
    None/"backward" scales by ``1/n``, "ortho" by ``1/sqrt(n)``, "forward" not
    at all. Differentiable (adjoint: ``ifftn`` of the cotangent)."""
    return _transform("ifftn", a, s, axes, norm)


def _rfftn(a, s=None, axes=None, norm=None):
    """N-dimensional DFT of real input (jax.numpy.fft.rfftn).

    ``a``: real (bool/int become float32); complex or float16 input raises
    ``ValueError`` as in JAX. The last axis of ``axes`` keeps ``s[-1] // 2 + 1``
    bins. Result complex64 (complex128 for float64 with ``jax_enable_x64``).
    Other arguments and errors as :func:`fftn`. Differentiable (adjoint: the
    Hermitian-weighted ``irfftn`` of the conjugate cotangent)."""
    return _transform("rfftn", a, s, axes, norm)


def _irfftn(a, s=None, axes=None, norm=None):
    """N-dimensional inverse of :func:`rfftn` (jax.numpy.fft.irfftn).

    ``a``: the half spectrum (real input is taken as complex); ``s``: the
    output lengths, default ``a``'s sizes with ``2 * (m - 1)`` on the last axis
    (``m`` bins); the input's last axis is cropped or padded to ``s[-1] // 2 +
    1``. The imaginary parts of the DC (and, for even length, Nyquist) bins are
    ignored. Result float32 (float64 for complex128 input with
    ``jax_enable_x64``). Errors as :func:`fftn`. Differentiable (adjoint: the
    conjugate of ``rfftn`` of the cotangent with interior bins doubled)."""
    return _transform("irfftn", a, s, axes, norm)


def _prim(public, impl, alias):
    return register(Primitive(public, impl, kind="linalg"), alias)


fftn = _prim("jnp.fft.fftn", _fftn, np.fft.fftn)
ifftn = _prim("jnp.fft.ifftn", _ifftn, np.fft.ifftn)
rfftn = _prim("jnp.fft.rfftn", _rfftn, np.fft.rfftn)
irfftn = _prim("jnp.fft.irfftn", _irfftn, np.fft.irfftn)


def _shift(a, axes, sign, name):
    x = _operand(name, a)
    if axes is None:
        axes = tuple(range(x.ndim))
    single = isinstance(axes, (int, np.integer))
    for ax in (axes,) if single else axes:
        ax = operator.index(ax)
        if not -x.ndim <= ax < x.ndim:
            raise ValueError(f"axis {ax} is out of bounds for array of dimension {x.ndim}")
    shifts = [sign * (x.shape[ax] // 2) for ax in ((axes,) if single else axes)]
    if not shifts:
        return x.copy()
    return np.roll(x, shifts, tuple((axes,) if single else axes))


def _fftshift(x, axes=None):
    """Shift the zero-frequency bin to the center (jax.numpy.fft.fftshift): a
    roll by ``n // 2`` along each of ``axes`` (an int, a sequence, or None for
    all). Shape and dtype of ``x``. Raises ``ValueError`` for an axis out of
    range. Differentiable (adjoint: ``ifftshift``)."""
    return _shift(x, axes, 1, "fftshift")


def _ifftshift(x, axes=None):
    """The inverse of :func:`fftshift` (jax.numpy.fft.ifftshift): a roll by
    ``-(n // 2)`` along each of ``axes``. Shape and dtype of ``x``.
    Differentiable (adjoint: ``fftshift``)."""
    return _shift(x, axes, -1, "ifftshift")


fftshift = register(Primitive("jnp.fft.fftshift", _fftshift, kind="structural"), np.fft.fftshift)
ifftshift = register(
    Primitive("jnp.fft.ifftshift", _ifftshift, kind="structural"), np.fft.ifftshift
)


# ---------------------------------------------------------------------------
# static helpers (the same for every example of a vmap)


def _unbatched_result(c):
    return c.rebuild(), False


def _static(public, impl):
    prim = register(Primitive(public, impl, kind="internal", differentiable=False))
    prim.def_batch(_unbatched_result)
    return prim


def _fft_axes(shp, s, axes, name):
    """Static: the transform's axes for an input of shape ``shp``, counted from
    the end (so that they name the same axes of a batched operand)."""
    _, axes = _plan(name, shp, s, axes)
    return tuple(ax - len(shp) for ax in axes)


def _fft_lengths(shp, s, axes, name):
    """Static: the transform lengths of ``name`` for an input of shape ``shp``."""
    s, axes = _plan(name, shp, s, axes)
    return _lengths(name, shp, s, axes)


def _fft_mask(lengths, axes):
    """Static: the Hermitian multiplicities of the half spectrum of the last
    transform axis (length ``lengths[-1]``): 1 for the DC bin and, for even
    lengths, the Nyquist bin, 2 for the others; float32, shaped to broadcast
    along ``axes[-1]`` (counted from the end). 1 for no axes."""
    if not axes:
        return np.ones((), np.float32)
    n = lengths[-1]
    m = n // 2 + 1
    mask = np.full(m, 2.0, np.float32)
    mask[0] = 1.0
    if n % 2 == 0:
        mask[-1] = 1.0
    return mask.reshape((m,) + (1,) * (-axes[-1] - 1))


def _fft_swap_norm(norm):
    """Static: the ``norm`` of the adjoint's transform (backward <-> forward)."""
    _check_norm(norm)
    return _SWAP[norm]


def _fft_n(n):
    """Static: ``s`` of a 1-D transform of length ``n`` (None: the input's)."""
    return None if n is None else (n,)


def _fft_axis(axis, name):
    """Static: ``axes`` of a 1-D transform along ``axis`` (JAX's error for a
    sequence)."""
    if isinstance(axis, (list, tuple)):
        raise ValueError(
            f"jax.numpy.fft.{name} does not support multiple axes. Please use"
            f" jax.numpy.fft.{name}n. Got axis = {axis!r}."
        )
    return (axis,)


def _fft_axes2(axes, name):
    """Static: ``axes`` of a 2-D transform (JAX's error unless there are two)."""
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{name} only supports 2 axes. Got axes = {axes!r}.")
    return tuple(axes)


def _fft_batch_axes(ndim, s, axes, name):
    """Static, for vmap: the axes of a per-example transform of an operand with
    one batch axis (``ndim`` counts it), checked against the per-example rank
    and counted from the end."""
    return _fft_axes((0,) * (ndim - 1), s, axes, name)


def _shift_batch_axes(ndim, axes):
    """Static, for vmap: ``axes`` of a per-example fftshift (``ndim`` counts the
    batch axis), checked and counted from the end."""
    nd = ndim - 1
    single = isinstance(axes, (int, np.integer))
    out = []
    for ax in range(nd) if axes is None else ((axes,) if single else axes):
        ax = operator.index(ax)
        if not -nd <= ax < nd:
            raise ValueError(f"axis {ax} is out of bounds for array of dimension {nd}")
        out.append(ax % nd - nd)
    return out[0] if single else tuple(out)


fft_axes = _static("ad.fft_axes", _fft_axes)
fft_lengths = _static("ad.fft_lengths", _fft_lengths)
fft_mask = _static("ad.fft_mask", _fft_mask)
fft_swap_norm = _static("ad.fft_swap_norm", _fft_swap_norm)
fft_n = _static("ad.fft_n", _fft_n)
fft_axis = _static("ad.fft_axis", _fft_axis)
fft_axes2 = _static("ad.fft_axes2", _fft_axes2)
fft_batch_axes = _static("ad.fft_batch_axes", _fft_batch_axes)
shift_batch_axes = _static("ad.fft_shift_batch_axes", _shift_batch_axes)
fft_axes.samples = lambda rng: [(((3, 4), None, None, "fftn"), {}), (((3, 4), (5,), (0,), "x"), {})]
fft_lengths.samples = lambda rng: [(((3, 4), None, None, "irfftn"), {})]
fft_mask.samples = lambda rng: [(((6,), (-1,)), {}), (((3, 5), (-2, -1)), {})]
fft_swap_norm.samples = lambda rng: [(("ortho",), {}), ((None,), {})]
fft_n.samples = lambda rng: [((4,), {}), ((None,), {})]
fft_axis.samples = lambda rng: [((0, "fft"), {})]
fft_axes2.samples = lambda rng: [(((-2, -1), "fft2"), {})]
fft_batch_axes.samples = lambda rng: [((3, None, None, "fftn"), {}), ((3, None, (0,), "fftn"), {})]
shift_batch_axes.samples = lambda rng: [((3, None), {}), ((3, 0), {})]


def _fft_fit(v, axes, shp):
    """``v`` cropped or zero-padded along ``axes`` (counted from the end) to the
    sizes of shape ``shp`` there: the transpose of a transform's crop/pad."""
    v = np.asarray(v)
    idx = [slice(None)] * v.ndim
    pad = [(0, 0)] * v.ndim
    for ax in axes:
        n, m = shp[ax], v.shape[ax]
        if m > n:
            idx[ax] = slice(0, n)
        elif m < n:
            pad[ax] = (0, n - m)
    out = v[tuple(idx)]
    if any(p != (0, 0) for p in pad):
        out = np.pad(out, pad)
    return out


fft_fit = register(Primitive("ad.fft_fit", _fft_fit, kind="internal"))


def _fft_fit_vjp(g, ans, v, axes, shp):
    return fft_fit(g, axes, shape(v))


def _fft_fit_jvp(t, ans, v, axes, shp):
    return fft_fit(t, axes, shp)


fft_fit.def_vjp(v=_fft_fit_vjp)
fft_fit.def_jvp(v=_fft_fit_jvp)
fft_fit.samples = lambda rng: [
    ((rng.normal(size=(3, 4)), (-1,), (3, 6)), {}),
    ((rng.normal(size=(3, 4)), (-2, -1), (2, 5)), {}),
    ((rng.normal(size=(2, 3, 4)), (-3,), (1, 3, 4)), {}),
]


def _fit_batch(c):
    if c.batched("axes") or c.batched("shp"):
        return None
    return c.rebuild()


fft_fit.def_batch(_fit_batch)


# ---------------------------------------------------------------------------
# derivative rules


def _fftn_vjp(g, ans, a, s=None, axes=None, norm=None):
    ax = fft_axes(shape(a), s, axes, "fftn")
    return project_real(fft_fit(fftn(g, None, ax, norm), ax, shape(a)), a)


def _fftn_jvp(t, ans, a, s=None, axes=None, norm=None):
    return fftn(t, s, axes, norm)


def _ifftn_vjp(g, ans, a, s=None, axes=None, norm=None):
    ax = fft_axes(shape(a), s, axes, "ifftn")
    return project_real(fft_fit(ifftn(g, None, ax, norm), ax, shape(a)), a)


def _ifftn_jvp(t, ans, a, s=None, axes=None, norm=None):
    return ifftn(t, s, axes, norm)


def _rfftn_vjp(g, ans, a, s=None, axes=None, norm=None):
    ax = fft_axes(shape(a), s, axes, "rfftn")
    n = fft_lengths(shape(a), s, axes, "rfftn")
    full = irfftn(conj(g) / fft_mask(n, ax), n, ax, fft_swap_norm(norm))
    return fft_fit(full, ax, shape(a))


def _rfftn_jvp(t, ans, a, s=None, axes=None, norm=None):
    return rfftn(t, s, axes, norm)


def _irfftn_vjp(g, ans, a, s=None, axes=None, norm=None):
    ax = fft_axes(shape(a), s, axes, "irfftn")
    n = fft_lengths(shape(a), s, axes, "irfftn")
    half = conj(rfftn(real(g), None, ax, fft_swap_norm(norm))) * fft_mask(n, ax)
    return project_real(fft_fit(half, ax, shape(a)), a)


def _irfftn_jvp(t, ans, a, s=None, axes=None, norm=None):
    return irfftn(t, s, axes, norm)


fftn.def_vjp(a=_fftn_vjp)
fftn.def_jvp(a=_fftn_jvp)
ifftn.def_vjp(a=_ifftn_vjp)
ifftn.def_jvp(a=_ifftn_jvp)
rfftn.def_vjp(a=_rfftn_vjp)
rfftn.def_jvp(a=_rfftn_jvp)
irfftn.def_vjp(a=_irfftn_vjp)
irfftn.def_jvp(a=_irfftn_jvp)


def_transpose_pair(fftshift, ifftshift)


# ---------------------------------------------------------------------------
# samples for the registry-driven tests (real inputs: the float operands they
# perturb; irfftn's are real parts of half spectra)


def _samples(rng):
    return [
        ((rng.normal(size=(5,)),), {}),
        ((rng.normal(size=(3, 4)),), {"axes": (0,)}),
        ((rng.normal(size=(2, 3, 4)),), {"s": (3, 6), "norm": "ortho"}),
        ((rng.normal(size=(4, 3)),), {"s": (2,), "axes": (-2,), "norm": "forward"}),
    ]


def _irfft_samples(rng):
    return [
        ((rng.normal(size=(4,)),), {}),
        ((rng.normal(size=(3, 4)),), {"axes": (0,), "norm": "ortho"}),
        ((rng.normal(size=(2, 3, 4)),), {"s": (3, 5)}),
        ((rng.normal(size=(4, 3)),), {"s": (4, 7), "norm": "forward"}),
    ]


fftn.samples = ifftn.samples = rfftn.samples = _samples
irfftn.samples = _irfft_samples
fftshift.samples = ifftshift.samples = lambda rng: [
    ((rng.normal(size=(5,)),), {}),
    ((rng.normal(size=(4, 5)),), {"axes": 0}),
    ((rng.normal(size=(2, 3, 4)),), {"axes": (0, -1)}),
]


# ---------------------------------------------------------------------------
# batching rules (vmap): the axes counted from the end, so the batch axis is
# never transformed


def _fft_batch(c):
    if c.batched("s") or c.batched("axes") or c.batched("norm"):
        return None
    a = c.arg("a")
    s = c.arg("s") if "s" in c.bound else N.const(None)
    axes = c.arg("axes") if "axes" in c.bound else N.const(None)
    return c.rebuild(axes=N.call("ad.fft_batch_axes", [c.ndim(a), s, axes, N.const(c.prim.name)]))


def _shift_batch(c):
    if c.batched("axes"):
        return None
    axes = c.arg("axes") if "axes" in c.bound else N.const(None)
    return c.rebuild(axes=N.call("ad.fft_shift_batch_axes", [c.ndim(c.arg("x")), axes]))


for _p in (fftn, ifftn, rfftn, irfftn):
    _p.def_batch(_fft_batch)
for _p in (fftshift, ifftshift):
    _p.def_batch(_shift_batch)
