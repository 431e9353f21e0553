"""Convolutions and windowed reductions (``jax.lax.conv_general_dilated``,
``lax.conv``, ``lax.conv_with_general_padding``, ``lax.conv_transpose``,
``lax.conv_dimension_numbers``, ``lax.reduce_window``), JAX 0.10.2 semantics.

One primitive computes every convolution: ``ad.conv`` in the canonical layout
(``lhs`` ``(N, C, *spatial)``, ``rhs`` ``(O, I, *window)``, result ``(N //
batch_group_count, O, *out_spatial)``) with explicit ``(lo, hi)`` padding (either
may be negative: a crop). Its implementation zero-stuffs ``lhs`` for
``lhs_dilation``, pads, takes strided windows with
``numpy.lib.stride_tricks.sliding_window_view`` (``rhs_dilation`` and the strides
are steps of that view) and does one batched ``matmul`` over the feature (or
batch) groups. Its adjoints are convolutions again (the ``lhs`` one with the
flipped kernel, strides as ``lhs_dilation``; the ``rhs`` one with the batch and
feature dimensions swapped), written with ``ad.conv`` itself, so derivatives of
any order work; its tangents are ``ad.conv`` with the tangent in place of one
operand. Its batching rule folds the vmapped axis into the batch dimension, the
output features, or (both operands batched) the feature or batch groups.

The public functions are compositions (plain Python that transformed code
inlines): static bookkeeping (dimension numbers, string padding, dtype checks)
in non-differentiable ``ad.conv_*`` helpers, transposes to and from the
canonical layout, and ``ad.conv``.

``reduce_window`` supports the monoids JAX has dedicated primitives for:
``lax.add`` (a convolution with a kernel of ones, so its derivatives are
convolutions), ``lax.max`` and ``lax.min`` (``ad.reduce_window_chooser``, whose
derivatives route the tangent/cotangent through the element each window
selected, the first in window order among ties, as XLA's select-and-scatter).
"""

from __future__ import annotations

import math
import operator
from typing import Any, Callable, NamedTuple, Optional, Sequence, Tuple, Union

import gast
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .. import dtypes as _dt
from ..frontend import nodes as N
from .ad import astype as _astype
from .ad import reshape as _reshape
from .creation import asarray as _asarray
from .creation import shape as _shape
from .elementwise import add as _add_p
from .elementwise import maximum as _maximum
from .elementwise import minimum as _minimum
from .registry import Primitive, register
from .structural import flip as _flip
from .structural import swapaxes as _swapaxes
from .structural import transpose as _transpose

__all__ = [
    "ConvDimensionNumbers",
    "conv_dimension_numbers",
    "conv_general_dilated",
    "conv",
    "conv_with_general_padding",
    "conv_transpose",
    "padtype_to_pads",
    "reduce_window",
]


class ConvDimensionNumbers(NamedTuple):
    """Where the batch, feature and spatial dimensions of a convolution are
    (jax.lax.ConvDimensionNumbers): ``lhs_spec`` is ``(batch dimension, feature
    dimension, spatial dimensions...)``, ``rhs_spec`` ``(out feature dimension, in
    feature dimension, spatial dimensions...)``, ``out_spec`` like ``lhs_spec``;
    each a tuple of axis numbers."""

    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


DimensionNumbers = Union[None, ConvDimensionNumbers, Tuple[str, str, str]]
Padding = Union[str, Sequence[Tuple[int, int]]]
#: what the functions accept as an array, and as a dtype (annotations only)
ArrayLike = Union[np.ndarray, np.generic, bool, int, float, complex]
DTypeLike = Any


# ---------------------------------------------------------------------------
# static bookkeeping (plain Python on shapes and options)


def _dilate_dim(n: int, d: int) -> int:
    """Length of ``n`` items with ``d - 1`` holes between neighbours."""
    return 0 if n == 0 else (n - 1) * d + 1


def _stride_dim(n: int, window: int, stride: int) -> int:
    """How many windows of size ``window`` fit in ``n`` at ``stride``."""
    return max((n - window) // stride + 1, 0)


def padtype_to_pads(
    in_shape: Sequence[int],
    window_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: str,
) -> list:
    """``(lo, hi)`` padding pairs for a padding name (jax.lax.padtype_to_pads).

    Args:
        in_shape, window_shape, window_strides: sequences of ints, one per
            spatial dimension (the window already dilated).
        padding: ``"VALID"`` (no padding), ``"SAME"`` (output size
            ``ceil(in / stride)``; an odd total puts the extra element at the end)
            or ``"SAME_LOWER"`` (the extra element at the start); any case.

    Returns:
        A list of ``(lo, hi)`` int pairs.

    Raises:
        RuntimeError for an unknown name (as JAX), TypeError for a non-string.
    """
    if not isinstance(padding, str):
        raise TypeError(f"Unknown padding type: {padding}.")
    kind = padding.upper()
    if kind not in ("VALID", "SAME", "SAME_LOWER"):
        raise RuntimeError(
            f"Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got {padding}."
        )
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        out = -(-int(n) // int(s))
        total = max((out - 1) * int(s) + int(w) - int(n), 0)
        small, big = total // 2, total - total // 2
        pads.append((small, big) if kind == "SAME" else (big, small))
    return pads


def _spec_permutations(specs: Sequence[str]) -> Tuple[tuple, tuple, tuple]:
    """Axis permutations of three dimension strings (JAX's
    ``conv_general_permutations``): spatial axes ordered as in the rhs string."""
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(pairs):
        if not specs[i].count(a) == specs[i].count(b) == 1:
            raise TypeError(
                f"convolution dimension_numbers[{i}] must contain the characters"
                f" '{a}' and '{b}' exactly once, got {specs[i]}."
            )
        if len(specs[i]) != len(set(specs[i])):
            raise TypeError(
                f"convolution dimension_numbers[{i}] cannot have duplicate characters,"
                f" got {specs[i]}."
            )
    lhs_s, rhs_s, out_s = specs
    if not (set(lhs_s) - {"N", "C"} == set(rhs_s) - {"O", "I"} == set(out_s) - {"N", "C"}):
        raise TypeError(
            "convolution dimension_numbers elements must each have the same set of"
            f" spatial characters, got {tuple(specs)}."
        )

    def perm(spec, pair, ordered):
        spatial = [i for i, ch in enumerate(spec) if ch not in pair]
        if ordered:
            spatial = sorted(spatial, key=lambda i: rhs_s.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)

    return (
        perm(lhs_s, pairs[0], True),
        perm(rhs_s, pairs[1], False),
        perm(out_s, pairs[2], True),
    )


def conv_dimension_numbers(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], dimension_numbers: DimensionNumbers
) -> ConvDimensionNumbers:
    """``dimension_numbers`` as a :class:`ConvDimensionNumbers`
    (jax.lax.conv_dimension_numbers).

    Args:
        lhs_shape, rhs_shape: the operands' shapes (tuples of ints, equal lengths).
        dimension_numbers: ``None`` (``NC...``, ``OI...``, ``NC...``: axis order
            ``(0, 1, 2, ...)`` for all three), a :class:`ConvDimensionNumbers`
            (returned as it is; JAX's own named tuple is accepted too), or a
            tuple/list of three strings such as ``("NHWC", "HWIO", "NHWC")``:
            ``N``/``C`` batch and feature of lhs and output, ``O``/``I`` output and
            input features of rhs, other letters spatial dimensions matched by
            letter (ordered as in the rhs string).

    Returns:
        A :class:`ConvDimensionNumbers` of three int tuples.

    Raises:
        TypeError (as JAX) for unequal ranks, strings of the wrong length, missing
        or repeated letters, or another kind of value.
    """
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if _is_spec_triple(dimension_numbers):
        return ConvDimensionNumbers(*(tuple(int(a) for a in s) for s in dimension_numbers))
    lhs_shape, rhs_shape = tuple(lhs_shape), tuple(rhs_shape)
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(
            "convolution requires lhs and rhs ndim to be equal, got"
            f" {len(lhs_shape)} and {len(rhs_shape)}."
        )
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)):
        raise TypeError(
            "convolution dimension_numbers must be tuple/list or None, got"
            f" {type(dimension_numbers)}."
        )
    if len(dimension_numbers) != 3:
        raise TypeError(
            "convolution dimension_numbers list/tuple must be length 3, got"
            f" {len(dimension_numbers)}."
        )
    if not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError(
            "convolution dimension_numbers elements must be strings, got"
            f" {tuple(type(s) for s in dimension_numbers)}."
        )
    for i, s in enumerate(dimension_numbers):
        if len(s) != len(lhs_shape):
            raise TypeError(
                f"convolution dimension_numbers[{i}] must have len equal to the ndim of"
                f" lhs and rhs, got {len(s)} for lhs and rhs shapes {lhs_shape} and"
                f" {rhs_shape}."
            )
    return ConvDimensionNumbers(*_spec_permutations(dimension_numbers))


def _is_spec_triple(dn: Any) -> bool:
    """Three sequences of ints (a ConvDimensionNumbers of another library)."""
    if not isinstance(dn, tuple) or len(dn) != 3 or not hasattr(dn, "_fields"):
        return False
    return all(
        isinstance(s, (tuple, list)) and all(isinstance(a, (int, np.integer)) for a in s)
        for s in dn
    )


def _as_int(a: Any, what: str) -> int:
    """``a`` as an int (an integral float too, as JAX takes it); TypeError else."""
    try:
        return int(operator.index(a))
    except TypeError:
        if isinstance(a, (float, np.floating)) and float(a) == int(a):
            return int(a)
        raise TypeError(f"conv_general_dilated {what} must be ints, got {a!r}") from None


def _int_tuple(name: str, v: Any, n: int) -> tuple:
    """``v`` (None: ones, or a sequence of ``n`` ints) as a tuple of ints."""
    if v is None:
        return (1,) * n
    if not isinstance(v, (tuple, list, np.ndarray)):
        raise TypeError(f"conv_general_dilated {name} must be a sequence of ints, got {v!r}")
    out = tuple(_as_int(a, name) for a in v)
    if len(out) != n:
        raise ValueError(
            f"conv_general_dilated {name} must have one entry per spatial dimension ({n}),"
            f" got {v!r}"
        )
    return out


def _conv_plan_impl(
    lhs_shape,
    rhs_shape,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    dimension_numbers,
    feature_group_count,
    batch_group_count,
):
    """Static: ``conv_general_dilated``'s arguments checked (JAX's errors) and
    turned into the canonical call: ``(lhs_perm, rhs_perm, strides, padding pairs,
    lhs_dilation, rhs_dilation, feature_group_count, batch_group_count,
    out_perm)``, where ``out_perm`` takes the canonical result to ``out_spec``."""
    lhs_shape, rhs_shape = tuple(lhs_shape), tuple(rhs_shape)
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lp, rp, op = (tuple(int(a) for a in s) for s in dn)
    if len(lhs_shape) != len(rhs_shape):
        raise ValueError(
            "conv_general_dilated lhs and rhs must have the same number of dimensions,"
            f" but got {lhs_shape} and {rhs_shape}."
        )
    nd = len(lhs_shape)
    if nd < 2:
        raise TypeError(
            f"conv_general_dilated needs operands of rank 2 or more, got shape {lhs_shape}"
        )
    for name, s in (("lhs_spec", lp), ("rhs_spec", rp), ("out_spec", op)):
        if sorted(s) != list(range(nd)):
            raise TypeError(
                f"convolution dimension_numbers.{name} must be a permutation of"
                f" range({nd}), got {s}"
            )
    nsp = nd - 2
    if not isinstance(window_strides, (tuple, list, np.ndarray)):
        raise TypeError(f"'{type(window_strides).__name__}' object is not iterable")
    strides = tuple(_as_int(a, "window_strides") for a in window_strides)
    fgc = _as_int(feature_group_count, "feature_group_count")
    bgc = _as_int(batch_group_count, "batch_group_count")
    lhs_t = tuple(lhs_shape[a] for a in lp)
    rhs_t = tuple(rhs_shape[a] for a in rp)
    if lhs_dilation is None:
        ld = (1,) * nsp
    else:
        ld = _int_tuple("lhs_dilation", lhs_dilation, nsp)
        if isinstance(padding, str) and any(d != 1 for d in ld):
            raise ValueError(
                "String padding is not implemented for transposed convolution using this"
                " op. Please either exactly specify the required padding or use"
                " conv_transpose."
            )
    rd = _int_tuple("rhs_dilation", rhs_dilation, nsp)
    if fgc <= 0:
        raise ValueError(
            f"conv_general_dilated feature_group_count must be a positive integer, got {fgc}."
        )
    c_in = lhs_t[1]
    if c_in % fgc:
        raise ValueError(
            "conv_general_dilated feature_group_count must divide lhs feature dimension"
            f" size, but {fgc} does not divide {c_in}."
        )
    if c_in // fgc != rhs_t[1]:
        raise ValueError(
            "conv_general_dilated lhs feature dimension size divided by"
            " feature_group_count must equal the rhs input feature dimension size, but"
            f" {c_in} // {fgc} != {rhs_t[1]}."
        )
    if rhs_t[0] % fgc:
        raise ValueError(
            "conv_general_dilated rhs output feature dimension size must be a multiple"
            f" of feature_group_count, but {rhs_t[0]} is not a multiple of {fgc}."
        )
    if bgc <= 0:
        raise ValueError(
            f"conv_general_dilated batch_group_count must be a positive integer, got {bgc}."
        )
    if bgc > 1 and lhs_t[0] % bgc:
        raise ValueError(
            "conv_general_dilated batch_group_count must divide lhs batch dimension size,"
            f" but {bgc} does not divide {lhs_t[0]}."
        )
    if rhs_t[0] % bgc:
        raise ValueError(
            "conv_general_dilated rhs output feature dimension size must be a multiple"
            f" of batch_group_count, but {rhs_t[0]} is not a multiple of {bgc}."
        )
    if bgc > 1 and fgc > 1:
        raise ValueError(
            "At most one of batch_group_count and feature_group_count may be > 1, got"
            f" batch_group_count={bgc} and feature_group_count={fgc}"
        )
    if nsp != len(strides):
        raise ValueError(
            "conv_general_dilated window and window_strides must have the same number"
            f" of dimensions, but got {nsp} and {len(strides)}"
        )
    if any(s <= 0 for s in strides):
        raise ValueError(f"conv_general_dilated window_strides must be positive, got {strides}")
    if any(d <= 0 for d in ld + rd):
        raise TypeError(f"All dilations must be positive, got {ld + rd}.")
    if isinstance(padding, str):
        eff = [_dilate_dim(k, r) for k, r in zip(rhs_t[2:], rd)]
        pads = tuple(tuple(p) for p in padtype_to_pads(lhs_t[2:], eff, strides, padding))
    else:
        try:
            pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        except (ValueError, TypeError):
            raise ValueError(
                "padding argument to conv_general_dilated should be a string or a sequence"
                f" of (low, high) pairs, got {padding}"
            ) from None
        if len(pads) != nsp:
            raise TypeError(
                f"Wrong number of explicit pads for convolution: expected {nsp}, got {len(pads)}."
            )
    for n, d, (lo, hi) in zip(lhs_t[2:], ld, pads):
        if _dilate_dim(n, d) + lo + hi < 0:
            raise ValueError(
                "Negative padding is larger than the size of the corresponding dimension:"
                f" got padding={pads} for lhs_shape[2:]={lhs_t[2:]}"
            )
    out_perm = tuple(int(a) for a in np.argsort(op))
    return lp, rp, strides, pads, ld, rd, fgc, bgc, out_perm


def _conv_dtype_impl(lhs, rhs, preferred_element_type):
    """Static: the dtype to cast both operands to (``preferred_element_type``,
    canonical), or None to keep theirs. TypeError (JAX's) when the operands'
    canonical dtypes differ or the preferred type is narrower or incompatible."""
    dl, dr = _dt.dtype_of(lhs), _dt.dtype_of(rhs)
    if dl != dr:
        raise TypeError(
            "lax.conv_general_dilated requires arguments to have the same dtypes, got"
            f" {dl.name}, {dr.name}."
        )
    if preferred_element_type is None:
        return None
    want = _dt.canonicalize_dtype(preferred_element_type)
    if not (dl.kind in "iu" and want.kind == "f"):
        for kinds in ("iu", "f", "c"):
            if dl.kind in kinds and want.kind not in kinds:
                raise TypeError(
                    "Input type is incompatible with `preferred_element_type`. The compatible"
                    " combinations of (input_type, preferred_element_type) are (integral,"
                    " integral), (integral, floating), (floating, floating), (complex, complex."
                )
        if dl.kind == "i" and want.kind != "i":
            raise TypeError(
                "`preferred_element_type` must have the same signedness as the original type."
            )
    if want.itemsize < dl.itemsize:
        raise TypeError("`preferred_element_type` must not be narrower than the original type.")
    return None if want == dl else want


def _conv_transpose_plan_impl(
    lhs_shape, rhs_shape, strides, padding, rhs_dilation, dimension_numbers, use_consistent
):
    """Static: ``conv_transpose``'s ``(dimension numbers, padding pairs, rhs spatial
    axes, rhs O axis, rhs I axis, rhs_dilation)`` (JAX's ``_conv_transpose_padding``
    for ``"SAME"``/``"VALID"``, or for pairs taken as the forward conv's padding)."""
    lhs_shape, rhs_shape = tuple(lhs_shape), tuple(rhs_shape)
    nd = len(lhs_shape)
    if nd != len(rhs_shape) or nd < 2:
        raise TypeError(
            "conv_transpose needs lhs and rhs of one rank, at least 2; got shapes"
            f" {lhs_shape} and {rhs_shape}"
        )
    if dimension_numbers is None:
        defaults = {
            2: ("NC", "IO", "NC"),
            3: ("NHC", "HIO", "NHC"),
            4: ("NHWC", "HWIO", "NHWC"),
            5: ("NHWDC", "HWDIO", "NHWDC"),
        }
        if nd not in defaults:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = defaults[nd]
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    nsp = nd - 2
    k_sp = [rhs_shape[a] for a in dn.rhs_spec[2:]]
    strides = _int_tuple("strides", strides, nsp)
    rd = _int_tuple("rhs_dilation", rhs_dilation, nsp)
    if use_consistent or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        eff = [_dilate_dim(k, r) for k, r in zip(k_sp, rd)]
        per = [padding] * nsp if isinstance(padding, str) else [tuple(p) for p in padding]
        pads = tuple(_transpose_padding(k, s, p) for k, s, p in zip(eff, strides, per))
    else:
        pads = padding
    return (
        dn,
        pads,
        tuple(int(a) for a in dn.rhs_spec[2:]),
        int(dn.rhs_spec[0]),
        int(dn.rhs_spec[1]),
        strides,
        rd,
    )


def _transpose_padding(k: int, s: int, padding: Any) -> tuple:
    """Padding of the transposed convolution for one spatial dimension (kernel
    ``k``, stride ``s``) given the forward conv's ``padding`` (JAX's rule)."""
    if padding == "SAME":
        pad_len = k + s - 2
        pad_a = k - 1 if s > k - 1 else int(math.ceil(pad_len / 2))
    elif padding == "VALID":
        pad_len = k + s - 2 + max(k - s, 0)
        pad_a = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        pad_a, pad_len = pads[0], sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return pad_a, pad_len - pad_a


def _lhs_adjoint_plan_impl(
    lhs_shape, rhs_shape, window_strides, padding, lhs_dilation, rhs_dilation, fgc, bgc
):
    """Static: the convolution giving the cotangent of ``lhs``: ``(kernel shape 1,
    kernel perm, kernel shape 2, flipped axes, padding, out shape 1, out perm, out
    shape 2)``. The kernel ``(O, I, *K)`` becomes ``(G * I, O / G, *K)`` (``G`` the
    feature or batch groups), spatially flipped; the output ``(N / B, B * C, ...)``
    goes back to ``(N, C, ...)`` for batch groups ``B``."""
    n, c = lhs_shape[0], lhs_shape[1]
    o, i = rhs_shape[0], rhs_shape[1]
    sp, ks = tuple(lhs_shape[2:]), tuple(rhs_shape[2:])
    nsp = len(sp)
    g = fgc * bgc
    out_sp = _conv_out_spatial(sp, ks, window_strides, padding, lhs_dilation, rhs_dilation)
    pads = []
    for L, K, s, (lo, _hi), d, r, Y in zip(
        sp, ks, window_strides, padding, lhs_dilation, rhs_dilation, out_sp
    ):
        kd = _dilate_dim(K, r)
        before = kd - lo - 1
        after = _dilate_dim(L, d) + kd - 1 - _dilate_dim(Y, s) - before
        pads.append((before, after))
    k1 = (g, o // g, i) + ks
    kperm = (0, 2, 1) + tuple(range(3, 3 + nsp))
    k2 = (g * i, o // g) + ks
    flips = tuple(range(2, 2 + nsp))
    if bgc > 1:
        o1 = (n // bgc, bgc, c) + sp
        operm = (1, 0, 2) + tuple(range(3, 3 + nsp))
    else:
        o1 = (n, c) + sp
        operm = tuple(range(3 + nsp - 1))
    return k1, kperm, k2, flips, tuple(pads), o1, operm, (n, c) + sp


def _rhs_adjoint_plan_impl(
    lhs_shape, rhs_shape, window_strides, padding, lhs_dilation, rhs_dilation, fgc, bgc
):
    """Static: the convolution giving the cotangent of ``rhs``: ``(padding,
    feature groups, batch groups)``; its lhs is ``lhs`` with batch and features
    swapped, its kernel the output cotangent likewise, its result ``(I, O, *K)``."""
    sp, ks = tuple(lhs_shape[2:]), tuple(rhs_shape[2:])
    out_sp = _conv_out_spatial(sp, ks, window_strides, padding, lhs_dilation, rhs_dilation)
    pads = []
    for L, K, s, (lo, _hi), d, r, Y in zip(
        sp, ks, window_strides, padding, lhs_dilation, rhs_dilation, out_sp
    ):
        total = (K - 1) * r + _dilate_dim(Y, s)
        pads.append((lo, total - lo - _dilate_dim(L, d)))
    # feature groups of the forward conv are batch groups here, and vice versa
    return tuple(pads), bgc, fgc


def _conv_out_spatial(sp, ks, strides, padding, ld, rd):
    return tuple(
        _stride_dim(_dilate_dim(n, d) + lo + hi, _dilate_dim(k, r), s)
        for n, k, s, (lo, hi), d, r in zip(sp, ks, strides, padding, ld, rd)
    )


def _batch_plan_impl(lhs_shape, rhs_shape, lhs_batched, rhs_batched, fgc, bgc):
    """Static: how a vmapped ``ad.conv`` folds the batch axis ``B`` (axis 0 of the
    batched operands) into one canonical convolution: ``(lhs shape 1, lhs perm,
    lhs shape 2, rhs shape 1, rhs perm, rhs shape 2, feature groups, batch groups,
    out shape 1, out perm, out shape 2)``.

    - lhs only: ``B`` joins the batch dimension (inside each batch group);
    - rhs only: ``B`` joins the output features (inside each group);
    - both, without batch groups: ``B`` multiplies the feature groups;
    - both, with batch groups: ``B`` multiplies the batch groups.
    """
    lhs_shape, rhs_shape = tuple(lhs_shape), tuple(rhs_shape)
    lb, rb = bool(lhs_batched), bool(rhs_batched)
    B = lhs_shape[0] if lb else rhs_shape[0]
    ls = lhs_shape[1:] if lb else lhs_shape
    rs = rhs_shape[1:] if rb else rhs_shape
    n, c, sp = ls[0], ls[1], ls[2:]
    o, i, ks = rs[0], rs[1], rs[2:]
    nsp = len(sp)
    out_n = n // bgc
    g = fgc * bgc
    ident = lambda k: tuple(range(k))  # noqa: E731

    def keep(shape):
        return shape, ident(len(shape)), shape

    if lb and not rb:
        l1 = (B, bgc, n // bgc, c) + sp
        lperm = (1, 0) + tuple(range(2, 4 + nsp))
        l2 = (B * n, c) + sp
        lhs = (l1, lperm, l2)
        rhs = keep(rhs_shape)
        new_f, new_b = fgc, bgc
        o1 = (B, out_n, o, -1)
        out = (o1, ident(4), "split")
    elif rb and not lb:
        lhs = keep(lhs_shape)
        r1 = (B, g, o // g, i) + ks
        rperm = (1, 0) + tuple(range(2, 4 + nsp))
        r2 = (B * o, i) + ks
        rhs = (r1, rperm, r2)
        new_f, new_b = fgc, bgc
        o1 = (out_n, g, B, o // g, -1)
        out = (o1, (2, 0, 1, 3, 4), "split")
    elif bgc == 1:
        l1 = lhs_shape
        lperm = (1, 0) + tuple(range(2, 3 + nsp))
        l2 = (n, B * c) + sp
        lhs = (l1, lperm, l2)
        rhs = (rhs_shape, ident(len(rhs_shape)), (B * o, i) + ks)
        new_f, new_b = B * fgc, 1
        o1 = (n, B, o, -1)
        out = (o1, (1, 0, 2, 3), "split")
    else:
        lhs = (lhs_shape, ident(len(lhs_shape)), (B * n, c) + sp)
        rhs = (rhs_shape, ident(len(rhs_shape)), (B * o, i) + ks)
        new_f, new_b = 1, B * bgc
        o1 = (out_n, B, o, -1)
        out = (o1, (1, 0, 2, 3), "split")
    return lhs + rhs + (new_f, new_b) + out


def _batch_out_shape_impl(y_shape, plan):
    """Static: (shape 1, perm, shape 2) taking a folded result back to ``(B,
    out_n, O, *spatial)``: the spatial axes are flattened to one for the
    permutation and restored after it."""
    o1, perm = plan[8], plan[9]
    sp = tuple(y_shape[2:])
    flat = int(np.prod(sp, dtype=np.int64)) if sp else 1
    shape1 = tuple(flat if d == -1 else d for d in o1)
    moved = tuple(shape1[p] for p in perm)
    features = int(np.prod(moved[2:-1], dtype=np.int64))
    return shape1, perm, (moved[0], moved[1], features) + sp


# ---------------------------------------------------------------------------
# the canonical convolution


def _placement(n: int, d: int, lo: int, size: int):
    """Where items ``0..n-1`` of an axis land after dilation by ``d`` and padding
    ``lo`` in an axis of ``size``: ``(source slice, destination slice)``, or None
    when none lands inside."""
    if n == 0 or size <= 0:
        return None
    first = max(0, -(lo // d))  # ceil(-lo / d), at least 0
    last = min(n - 1, (size - 1 - lo) // d) if size - 1 - lo >= 0 else -1
    if last < first:
        return None
    start = lo + first * d
    return slice(first, last + 1), slice(start, start + (last - first) * d + 1, d)


def _dilate_pad(x: np.ndarray, lead: int, dil, pads, fill) -> np.ndarray:
    """``x`` with its axes from ``lead`` on dilated (``d - 1`` holes between
    neighbours) and padded by ``(lo, hi)`` (negative values crop), the new
    places set to ``fill``."""
    sp = x.shape[lead:]
    if all(d == 1 for d in dil) and all(lo == 0 and hi == 0 for lo, hi in pads):
        return x
    sizes = tuple(max(_dilate_dim(n, d) + lo + hi, 0) for n, d, (lo, hi) in zip(sp, dil, pads))
    out = np.full(x.shape[:lead] + sizes, fill, dtype=x.dtype)
    src, dst = [slice(None)] * lead, [slice(None)] * lead
    for n, d, (lo, _), size in zip(sp, dil, pads, sizes):
        place = _placement(n, d, lo, size)
        if place is None:
            return out
        src.append(place[0])
        dst.append(place[1])
    out[tuple(dst)] = x[tuple(src)]
    return out


def _undilate_unpad(z: np.ndarray, lead: int, shape, dil, pads) -> np.ndarray:
    """The inverse reading of :func:`_dilate_pad`: the entries of ``z`` (its
    axes from ``lead`` on padded and dilated from ``shape``) that hold the
    original items, zero where an item was cropped away."""
    out = np.zeros(z.shape[:lead] + tuple(shape), dtype=z.dtype)
    src, dst = [slice(None)] * lead, [slice(None)] * lead
    for n, d, (lo, _), size in zip(shape, dil, pads, z.shape[lead:]):
        place = _placement(n, d, lo, size)
        if place is None:
            return out
        dst.append(place[0])
        src.append(place[1])
    out[tuple(dst)] = z[tuple(src)]
    return out


def _windows(x: np.ndarray, lead: int, window, strides, wdil) -> np.ndarray:
    """A view ``x.shape[:lead] + out_spatial + window`` of the strided, dilated
    windows of ``x``'s axes from ``lead`` on (every window fits)."""
    eff = tuple(_dilate_dim(k, r) for k, r in zip(window, wdil))
    axes = tuple(range(lead, x.ndim))
    v = sliding_window_view(x, eff, axis=axes) if axes else x
    idx = (slice(None),) * lead
    idx += tuple(slice(None, None, s) for s in strides)
    idx += tuple(slice(None, None, r) for r in wdil)
    return v[idx]


def _compute_dtype(dt: np.dtype) -> np.dtype:
    """The dtype a convolution is computed in: float32 for 16-bit floats (as
    XLA:CPU accumulates them), int32 for bool, else ``dt``."""
    if dt.kind == "b":
        return np.dtype(np.int32)
    if dt.kind == "f" and dt.itemsize < 4:
        return np.dtype(np.float32)
    if dt.kind == "V" or dt.name == "bfloat16":
        return np.dtype(np.float32)
    return dt


#: output positions from which the columns layout (C*K, M) beats rows (M, C*K)
#: (measured on 2 cores: a (32, 3, 32, 32) batch with 16 3x3 filters takes ~1 ms
#: that way, 3-18 ms the other; 256 examples of 4x4 the reverse)
_COLUMNS_LAST = 64


def _conv_impl(
    lhs,
    rhs,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    feature_group_count,
    batch_group_count,
):
    """Canonical convolution (XLA's ConvGeneralDilated with dimension numbers
    ``NC...``/``OI...``/``NC...``).

    Args:
        lhs: ``(N, C, *S)`` array; rhs: ``(O, I, *K)`` array of the same dtype,
            with ``C == I * feature_group_count``.
        window_strides, lhs_dilation, rhs_dilation: one positive int per spatial
            dimension; padding: one ``(lo, hi)`` int pair per spatial dimension
            (negative values crop the dilated ``lhs``).
        feature_group_count, batch_group_count: positive ints, one of them 1.

    Returns:
        ``(N // batch_group_count, O, *out)`` of the operands' dtype, ``out[d] =
        max(0, (dilated S[d] + lo + hi - dilated K[d]) // stride + 1)``.
    """
    lhs = _dt.canonicalize_value(np.asarray(lhs))
    rhs = _dt.canonicalize_value(np.asarray(rhs))
    dt = np.result_type(lhs.dtype, rhs.dtype)
    fgc, bgc = int(feature_group_count), int(batch_group_count)
    n, c = lhs.shape[:2]
    o, i = rhs.shape[:2]
    sp, ks = lhs.shape[2:], rhs.shape[2:]
    out_sp = _conv_out_spatial(sp, ks, window_strides, padding, lhs_dilation, rhs_dilation)
    out_shape = (n // bgc, o) + out_sp
    g = fgc * bgc
    if 0 in out_shape or 0 in ks or i == 0 or c == 0:
        return np.zeros(out_shape, dt)
    cdt = _compute_dtype(dt)
    x = _dilate_pad(lhs.astype(cdt, copy=False), 2, lhs_dilation, padding, 0)
    w = _windows(x, 2, ks, window_strides, rhs_dilation)  # (N, C, *out_sp, *ks)
    nsp = len(sp)
    m = int(np.prod(out_sp, dtype=np.int64))
    kk = int(np.prod(ks, dtype=np.int64))
    ysp = tuple(range(3, 3 + nsp))
    ksp = tuple(range(3 + nsp, 3 + 2 * nsp))
    # groups: (bgc, N / bgc, C) for batch groups, (N, fgc, C / fgc) for feature
    # groups; the group axis is 0 or 1 of ``w``'s three leading axes
    lead = (bgc, n // bgc, c) if bgc > 1 else (n, g, c // g)
    ci = lead[2]
    w = w.reshape(lead + w.shape[2:])
    f = rhs.astype(cdt, copy=False).reshape(g, o // g, ci * kk)
    if m >= _COLUMNS_LAST:
        # many output positions: columns (.., C*K, M), one matmul per example and
        # group straight into the (.., O, M) layout
        cols = w.transpose((0, 1, 2) + ksp + ysp).reshape(lead[:2] + (ci * kk, m))
        if bgc > 1:
            res = np.matmul(f[:, None], cols).transpose(1, 0, 2, 3)  # (N/bgc, g, O/g, M)
        else:
            res = np.matmul(f[None], cols)  # (N, g, O/g, M)
        out = np.ascontiguousarray(res).reshape(out_shape)
    else:
        # few output positions: rows (g, N*M, C*K), one matmul per group
        if bgc > 1:
            cols = w.transpose((0, 1) + ysp + (2,) + ksp).reshape(g, (n // bgc) * m, ci * kk)
        else:
            cols = w.transpose((1, 0) + ysp + (2,) + ksp).reshape(g, n * m, ci * kk)
        res = np.matmul(cols, f.transpose(0, 2, 1))  # (g, out_n * m, o // g)
        res = res.reshape((g, n // bgc, m, o // g)).transpose(1, 0, 3, 2)
        out = np.ascontiguousarray(res).reshape(out_shape)
    if cdt != dt:
        out = (out != 0) if dt.kind == "b" else out.astype(dt)
    return out


conv_p = register(Primitive("ad.conv", _conv_impl, kind="internal"))


def _static(public: str, impl: Callable) -> Primitive:
    p = register(Primitive(public, impl, kind="internal", differentiable=False))
    p.def_batch(lambda c: (c.rebuild(), False))  # shapes and options only: unbatched
    p.static_result = True
    return p


_conv_plan = _static("ad.conv_plan", _conv_plan_impl)
_conv_dtype = _static("ad.conv_dtype", _conv_dtype_impl)
_conv_transpose_plan = _static("ad.conv_transpose_plan", _conv_transpose_plan_impl)
_lhs_adjoint_plan = _static("ad.conv_lhs_adjoint_plan", _lhs_adjoint_plan_impl)
_rhs_adjoint_plan = _static("ad.conv_rhs_adjoint_plan", _rhs_adjoint_plan_impl)
_batch_plan = _static("ad.conv_batch_plan", _batch_plan_impl)
_batch_out_shape = _static("ad.conv_batch_out_shape", _batch_out_shape_impl)


# -- derivative rules (convolutions again: differentiable to any order)


def _conv_vjp_lhs(
    g,
    ans,
    lhs,
    rhs,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    feature_group_count,
    batch_group_count,
):
    plan = _lhs_adjoint_plan(
        _shape(lhs),
        _shape(rhs),
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        feature_group_count,
        batch_group_count,
    )
    kernel = _reshape(_transpose(_reshape(rhs, plan[0]), plan[1]), plan[2])
    kernel = _flip(kernel, plan[3])
    out = conv_p(
        g,
        kernel,
        lhs_dilation,
        plan[4],
        window_strides,
        rhs_dilation,
        feature_group_count * batch_group_count,
        1,
    )
    return _reshape(_transpose(_reshape(out, plan[5]), plan[6]), plan[7])


def _conv_vjp_rhs(
    g,
    ans,
    lhs,
    rhs,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    feature_group_count,
    batch_group_count,
):
    plan = _rhs_adjoint_plan(
        _shape(lhs),
        _shape(rhs),
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        feature_group_count,
        batch_group_count,
    )
    out = conv_p(
        _swapaxes(lhs, 0, 1),
        _swapaxes(g, 0, 1),
        rhs_dilation,
        plan[0],
        lhs_dilation,
        window_strides,
        plan[1],
        plan[2],
    )
    return _swapaxes(out, 0, 1)


def _conv_jvp_lhs(
    t,
    ans,
    lhs,
    rhs,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    feature_group_count,
    batch_group_count,
):
    return conv_p(
        t,
        rhs,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        feature_group_count,
        batch_group_count,
    )


def _conv_jvp_rhs(
    t,
    ans,
    lhs,
    rhs,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    feature_group_count,
    batch_group_count,
):
    return conv_p(
        lhs,
        t,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        feature_group_count,
        batch_group_count,
    )


conv_p.def_vjp(_conv_vjp_lhs, _conv_vjp_rhs)
conv_p.def_jvp(_conv_jvp_lhs, _conv_jvp_rhs)


def _conv_samples(rng):
    def r(*shape):
        return rng.normal(size=shape)

    return [
        # 1-D, stride 2, asymmetric padding
        ((r(2, 3, 7), r(4, 3, 3), (2,), ((1, 2),), (1,), (1,), 1, 1), {}),
        # 2-D, lhs and rhs dilation, a negative (cropping) pad
        ((r(1, 2, 5, 4), r(3, 2, 2, 2), (1, 2), ((2, -1), (1, 1)), (2, 1), (1, 2), 1, 1), {}),
        # feature groups
        ((r(2, 4, 6), r(6, 2, 3), (1,), ((1, 1),), (1,), (2,), 2, 1), {}),
        # batch groups
        ((r(4, 2, 5), r(6, 2, 2), (2,), ((0, 1),), (1,), (1,), 1, 2), {}),
        # 3-D
        (
            (
                r(1, 2, 3, 3, 4),
                r(2, 2, 2, 1, 2),
                (1, 1, 2),
                ((0, 0), (1, 0), (0, 1)),
                (1, 1, 1),
                (1, 1, 1),
                1,
                1,
            ),
            {},
        ),
    ]


conv_p.samples = _conv_samples
_conv_plan.samples = lambda rng: [
    (((2, 3, 5), (4, 3, 2), (1,), "SAME", None, None, None, 1, 1), {})
]
_conv_dtype.samples = lambda rng: [((np.ones(2), np.ones(2), None), {})]
_conv_transpose_plan.samples = lambda rng: [
    (((2, 5, 3), (2, 3, 4), (2,), "SAME", None, None, False), {})
]
_lhs_adjoint_plan.samples = lambda rng: [
    (((2, 3, 5), (4, 3, 2), (1,), ((0, 0),), (1,), (1,), 1, 1), {})
]
_rhs_adjoint_plan.samples = lambda rng: [
    (((2, 3, 5), (4, 3, 2), (1,), ((0, 0),), (1,), (1,), 1, 1), {})
]
_batch_plan.samples = lambda rng: [(((3, 2, 3, 5), (4, 3, 2), True, False, 1, 1), {})]
_batch_out_shape.samples = lambda rng: [
    (((6, 4, 4), _batch_plan_impl((3, 2, 3, 5), (4, 3, 2), True, False, 1, 1)), {})
]


# -- batching: fold the vmapped axis into the convolution


def _item(node: Any, k: int) -> Any:
    return gast.Subscript(value=N.clone(node), slice=N.const(k), ctx=gast.Load())


def _conv_batch_rule(c):
    others = [
        "window_strides",
        "padding",
        "lhs_dilation",
        "rhs_dilation",
        "feature_group_count",
        "batch_group_count",
    ]
    if any(c.batched(p) for p in others):
        return None  # a per-example option: loop over the examples
    lb, rb = c.batched("lhs"), c.batched("rhs")
    lhs, rhs = c.arg("lhs"), c.arg("rhs")
    plan = c.let(
        "conv_fold",
        N.call(
            "ad.conv_batch_plan",
            [
                N.call("jnp.shape", [N.clone(lhs)]),
                N.call("jnp.shape", [N.clone(rhs)]),
                N.const(lb),
                N.const(rb),
                c.arg("feature_group_count"),
                c.arg("batch_group_count"),
            ],
        ),
    )

    def fold(x, k, base):
        if not c.batched(base):
            return x
        a = c.let(base + "_f", N.call("jnp.reshape", [x, _item(plan, k)]))
        a = c.let(base + "_f", N.call("jnp.transpose", [a, _item(plan, k + 1)]))
        return c.let(base + "_f", N.call("jnp.reshape", [a, _item(plan, k + 2)]))

    lf = fold(lhs, 0, "lhs")
    rf = fold(rhs, 3, "rhs")
    y = c.let(
        "conv_y",
        c.rebuild(
            lhs=lf,
            rhs=rf,
            feature_group_count=_item(plan, 6),
            batch_group_count=_item(plan, 7),
        ),
    )
    back = c.let("conv_back", N.call("ad.conv_batch_out_shape", [N.call("jnp.shape", [y]), plan]))
    y = c.let("conv_y", N.call("jnp.reshape", [y, _item(back, 0)]))
    y = c.let("conv_y", N.call("jnp.transpose", [y, _item(back, 1)]))
    return N.call("jnp.reshape", [y, _item(back, 2)])


conv_p.def_batch(_conv_batch_rule)


# ---------------------------------------------------------------------------
# public convolutions: compositions


def conv_general_dilated(
    lhs: ArrayLike,
    rhs: ArrayLike,
    window_strides: Sequence[int],
    padding: Padding,
    lhs_dilation: Optional[Sequence[int]] = None,
    rhs_dilation: Optional[Sequence[int]] = None,
    dimension_numbers: DimensionNumbers = None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    precision: Any = None,
    preferred_element_type: Optional[DTypeLike] = None,
) -> np.ndarray:
    """General n-dimensional convolution with dilation and groups
    (jax.lax.conv_general_dilated,
    https://docs.jax.dev/en/latest/_autosummary/jax.lax.conv_general_dilated.html).

    Args:
        lhs: array of rank ``n + 2`` (batch, feature and ``n`` spatial axes, laid
            out as ``dimension_numbers`` says).
        rhs: kernel of rank ``n + 2`` (output feature, input feature, ``n``
            spatial axes), the same dtype as ``lhs``.
        window_strides: ``n`` positive ints.
        padding: ``"SAME"``, ``"SAME_LOWER"``, ``"VALID"``, or ``n`` ``(lo, hi)`` int
            pairs (negative values crop).
        lhs_dilation, rhs_dilation: None or ``n`` positive ints (lhs dilation is a
            transposed convolution; it needs explicit padding).
        dimension_numbers: None (``NC...``/``OI...``/``NC...``), three strings such
            as ``("NHWC", "HWIO", "NHWC")``, or a :class:`ConvDimensionNumbers`.
        feature_group_count, batch_group_count: positive ints, at most one of
            them above 1 (XLA's semantics).
        precision: accepted and ignored (NumPy computes at full precision).
        preferred_element_type: None, or a dtype at least as wide as the inputs'
            (e.g. int8 inputs with ``int32``): the operands are converted to it.

    Returns:
        An array laid out as ``out_spec``: batch ``N // batch_group_count``, feature
        ``O``, spatial sizes ``max(0, (dilated in + lo + hi - dilated window) //
        stride + 1)``; dtype: the inputs' (or ``preferred_element_type``). Float16
        is accumulated in float32, bool as OR of ANDs.

    Raises:
        TypeError for different operand dtypes, bad dimension numbers or a
        narrower ``preferred_element_type``; ValueError for sizes that do not
        match (features, groups), bad padding or string padding with
        ``lhs_dilation``; RuntimeError for an unknown padding name (all as JAX).

    Differentiable in both operands to any order (the adjoints are convolutions);
    batches under vmap without a loop.
    """
    cast = _conv_dtype(lhs, rhs, preferred_element_type)
    if cast is None:
        lhs = _asarray(lhs)
        rhs = _asarray(rhs)
    else:
        lhs = _astype(lhs, cast)
        rhs = _astype(rhs, cast)
    plan = _conv_plan(
        _shape(lhs),
        _shape(rhs),
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dimension_numbers,
        feature_group_count,
        batch_group_count,
    )
    x = _transpose(lhs, plan[0])
    w = _transpose(rhs, plan[1])
    y = conv_p(x, w, plan[2], plan[3], plan[4], plan[5], plan[6], plan[7])
    return _transpose(y, plan[8])


def conv(
    lhs: ArrayLike,
    rhs: ArrayLike,
    window_strides: Sequence[int],
    padding: Padding,
    precision: Any = None,
    preferred_element_type: Optional[DTypeLike] = None,
) -> np.ndarray:
    """Convolution in the ``NC...``/``OI...`` layout without dilation or groups
    (jax.lax.conv): ``conv_general_dilated(lhs, rhs, window_strides, padding)``.

    Args:
        lhs: ``(N, C, *spatial)``; rhs: ``(O, C, *window)``, the same dtype.
        window_strides: one positive int per spatial axis.
        padding: ``"SAME"``, ``"SAME_LOWER"``, ``"VALID"`` or ``(lo, hi)`` pairs.
        precision: ignored; preferred_element_type: as
            :func:`conv_general_dilated`.

    Returns:
        ``(N, O, *out_spatial)``, the inputs' dtype. Errors as
        :func:`conv_general_dilated`.
    """
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        None,
        None,
        None,
        1,
        1,
        precision,
        preferred_element_type,
    )


def conv_with_general_padding(
    lhs: ArrayLike,
    rhs: ArrayLike,
    window_strides: Sequence[int],
    padding: Padding,
    lhs_dilation: Optional[Sequence[int]],
    rhs_dilation: Optional[Sequence[int]],
    precision: Any = None,
    preferred_element_type: Optional[DTypeLike] = None,
) -> np.ndarray:
    """Convolution in the ``NC...``/``OI...`` layout with dilations
    (jax.lax.conv_with_general_padding): ``conv_general_dilated`` with
    ``lhs_dilation`` and ``rhs_dilation`` (None or one positive int per spatial
    axis). Shapes, dtypes and errors as :func:`conv_general_dilated`."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        None,
        1,
        1,
        precision,
        preferred_element_type,
    )


def conv_transpose(
    lhs: ArrayLike,
    rhs: ArrayLike,
    strides: Sequence[int],
    padding: Padding,
    rhs_dilation: Optional[Sequence[int]] = None,
    dimension_numbers: DimensionNumbers = None,
    transpose_kernel: bool = False,
    precision: Any = None,
    preferred_element_type: Optional[DTypeLike] = None,
    use_consistent_padding: bool = False,
) -> np.ndarray:
    """Transposed ("fractionally strided") convolution (jax.lax.conv_transpose):
    ``conv_general_dilated`` with unit strides and ``lhs_dilation=strides``.

    Args:
        lhs: array of rank ``n + 2``; rhs: kernel of rank ``n + 2``, same dtype.
        strides: ``n`` positive ints (the dilation of ``lhs``).
        padding: ``"SAME"`` or ``"VALID"`` (the padding of the forward conv this
            transposes, JAX's rule), or ``(lo, hi)`` pairs used as they are (as
            the forward conv's padding with ``use_consistent_padding=True``).
        rhs_dilation: None or ``n`` positive ints.
        dimension_numbers: None gives TensorFlow's layout (``NHWC``/``HWIO``/
            ``NHWC`` for 2-D; ``NC``/``IO``, ``NHC``/``HIO``, ``NHWDC``/``HWDIO``
            for 0, 1 and 3 spatial axes), else as :func:`conv_general_dilated`.
        transpose_kernel: flip the kernel's spatial axes and swap its input and
            output feature axes (the gradient of a forward conv, Keras's
            Conv2DTranspose).
        precision: ignored; preferred_element_type: as
            :func:`conv_general_dilated`.

    Returns:
        The transposed convolution, laid out as the output spec; spatial size
        ``(in - 1) * stride + dilated window - lo' - hi'`` for its padding.

    Raises:
        ValueError for an unknown padding or rank above 5 without
        ``dimension_numbers``; otherwise as :func:`conv_general_dilated`.
    """
    plan = _conv_transpose_plan(
        _shape(lhs),
        _shape(rhs),
        strides,
        padding,
        rhs_dilation,
        dimension_numbers,
        use_consistent_padding,
    )
    if transpose_kernel:
        rhs = _swapaxes(_flip(rhs, plan[2]), plan[3], plan[4])
    ones = _transpose_ones(plan[5])
    return conv_general_dilated(
        lhs,
        rhs,
        ones,
        plan[1],
        plan[5],
        plan[6],
        plan[0],
        1,
        1,
        precision,
        preferred_element_type,
    )


def _transpose_ones_impl(strides):
    """Static: unit strides, one per spatial axis."""
    return (1,) * len(strides)


_transpose_ones = _static("ad.conv_unit_strides", _transpose_ones_impl)
_transpose_ones.samples = lambda rng: [(((2, 2),), {})]


# ---------------------------------------------------------------------------
# reduce_window: add (a convolution with ones), max and min (a chooser primitive)


def _window_plan_impl(
    operand_shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
):
    """Static: ``reduce_window``'s options checked (JAX's errors) and made explicit:
    ``(window, strides, padding pairs, base dilation, window dilation)``."""
    shape = tuple(operand_shape)
    nd = len(shape)

    def ints(name, v, default_none):
        if v is None:
            return (1,) * len(window) if default_none else None
        try:
            return tuple(operator.index(a) for a in v)
        except TypeError:
            raise TypeError(f"reduce_window {name} must be a sequence of ints, got {v!r}") from None

    try:
        window = tuple(operator.index(a) for a in window_dimensions)
    except TypeError:
        raise TypeError(
            f"reduce_window window_dimensions must be a sequence of ints, got {window_dimensions!r}"
        ) from None
    strides = ints("window_strides", window_strides, True)
    bd = ints("base_dilation", base_dilation, True)
    wd = ints("window_dilation", window_dilation, True)
    if nd != len(window):
        raise TypeError(
            "reduce_window got the wrong number of window_dimensions for operand: got"
            f" operand shape {shape} with window_dimensions {window}."
        )
    for name, v in (("window_strides", strides), ("base_dilation", bd), ("window_dilation", wd)):
        if len(v) != len(window):
            raise TypeError(
                f"reduce_window got inconsistent {name} and window_dimensions: got"
                f" {name} {v} and window_dimensions {window}."
            )
    for name, v in (
        ("window_dimensions", window),
        ("window_strides", strides),
        ("base_dilation", bd),
        ("window_dilation", wd),
    ):
        if any(a <= 0 for a in v):
            raise TypeError(f"reduce_window {name} must have every entry positive, got {v}.")
    if isinstance(padding, str):
        eff = [_dilate_dim(k, r) for k, r in zip(window, wd)]
        pads = tuple(tuple(p) for p in padtype_to_pads(shape, eff, strides, padding))
    else:
        try:
            pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        except (TypeError, ValueError):
            raise ValueError(
                f"reduce_window padding must be a string or (low, high) pairs, got {padding}"
            ) from None
        if len(pads) != nd:
            raise TypeError(
                f"reduce_window got {len(pads)} padding pairs for an operand of rank {nd}"
            )
    for n, b, (lo, hi) in zip(shape, bd, pads):
        if _dilate_dim(n, b) + lo + hi < 0:
            raise ValueError(
                f"reduce_window padding {pads} is larger than the operand shape {shape}"
            )
    return window, strides, pads, bd, wd


#: more callables ``reduce_window`` accepts as its computation: id -> ``"add"``,
#: ``"max"`` or ``"min"``. :mod:`srcjax.lax` adds ``lax.add``, ``lax.max`` and
#: ``lax.min`` when it is imported (:func:`def_window_computation`).
_WINDOW_COMPUTATIONS: dict = {}
_WINDOW_KEEP: list = []  # (keeps the callables alive, so their ids stay theirs)


def def_window_computation(fn, kind: str) -> None:
    """Let ``reduce_window`` accept ``fn`` as the computation ``kind`` (``"add"``,
    ``"max"`` or ``"min"``). Raises ValueError for another kind."""
    if kind not in ("add", "max", "min"):
        raise ValueError(f"reduce_window computations are add, max or min, not {kind!r}")
    _WINDOW_KEEP.append(fn)
    _WINDOW_COMPUTATIONS[id(fn)] = kind


def _window_kind_impl(computation):
    """Static: ``"add"``, ``"max"`` or ``"min"`` for the supported computations;
    NotImplementedError for the others."""
    kinds = {
        id(_add_p): "add",
        id(_add_p.impl): "add",
        id(operator.add): "add",
        id(_maximum): "max",
        id(_maximum.impl): "max",
        id(_minimum): "min",
        id(_minimum.impl): "min",
        **_WINDOW_COMPUTATIONS,
    }
    kind = kinds.get(id(computation))
    if kind is None:
        raise NotImplementedError(
            "srcjax lax.reduce_window supports computation=lax.add, lax.max or lax.min"
            f" (or jnp.add / jnp.maximum / jnp.minimum), not {computation!r}"
        )
    return kind


def _identity(kind: str, dt: np.dtype):
    if kind == "add":
        return dt.type(0)
    if dt.kind == "b":
        return dt.type(kind == "min")
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return dt.type(info.min if kind == "max" else info.max)
    return dt.type(-np.inf if kind == "max" else np.inf)


def _window_init_impl(kind, operand, init_value):
    """Static: whether ``init_value`` is the identity of ``kind`` for
    ``operand``'s dtype (then it changes nothing). TypeError for a non-scalar
    init value or an operand that is a container (JAX's pytrees of operands need a
    variadic computation, which srcjax does not support)."""
    if isinstance(operand, (tuple, list, dict)):
        raise TypeError(
            "srcjax lax.reduce_window takes one array operand (with lax.add, lax.max or"
            f" lax.min), got a {type(operand).__name__}"
        )
    if np.ndim(init_value) != 0:
        raise TypeError(
            f"reduce_window init_value must be a scalar, got shape {np.shape(init_value)}"
        )
    dt = _dt.dtype_of(operand)
    v = np.asarray(init_value)
    return bool(v == _identity(kind, dt))


def _window_sum_parts_impl(shape, operand, plan):
    """Static: ``(shape as (1, 1, *shape), the kernel of ones (1, 1, *window) in
    operand's dtype)`` for the window sum as a convolution (``operand`` gives
    only its dtype: under vmap it carries the batch axis, ``shape`` does not)."""
    dt = _dt.dtype_of(operand)
    return (1, 1) + tuple(shape), np.ones((1, 1) + tuple(plan[0]), dt)


def _window_out_shape_impl(y_shape):
    """Static: a window sum's result shape (the canonical conv's without its two
    leading unit axes)."""
    return tuple(y_shape[2:])


_window_plan = _static("ad.window_plan", _window_plan_impl)
_window_kind = _static("ad.window_kind", _window_kind_impl)
_window_init = _static("ad.window_init_is_identity", _window_init_impl)
_window_sum_parts = _static("ad.window_sum_parts", _window_sum_parts_impl)
_window_out_shape = _static("ad.window_out_shape", _window_out_shape_impl)
_window_plan.samples = lambda rng: [(((4, 5), (2, 2), (1, 2), "SAME", None, None), {})]
_window_kind.samples = lambda rng: [((operator.add,), {})]
_window_init.samples = lambda rng: [(("max", np.ones(3), -np.inf), {})]
_window_sum_parts.samples = lambda rng: [
    (((3, 4), np.ones((3, 4)), ((2, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1))), {})
]
_window_out_shape.samples = lambda rng: [(((1, 1, 3, 4),), {})]


# -- the chooser (max / min over windows) and its selections


def _select_positions(x: np.ndarray, select_max, window, strides, padding, bd, wd):
    """``(windows' reductions, flat index of each window's selected element in
    the padded, dilated block of one leading row, that block's shape)`` for
    ``x`` of shape ``lead + spatial`` (``len(window)`` spatial axes; the leading
    axes are independent rows)."""
    nsp = len(window)
    lead_shape = x.shape[: x.ndim - nsp]
    sp = x.shape[x.ndim - nsp :]
    rows = int(np.prod(lead_shape, dtype=np.int64))
    kind = "max" if select_max else "min"
    xl = x.reshape((rows,) + sp)
    big = _dilate_pad(xl, 1, bd, padding, _identity(kind, x.dtype))
    out_sp = tuple(
        _stride_dim(p, _dilate_dim(k, r), s)
        for p, k, r, s in zip(big.shape[1:], window, wd, strides)
    )
    return big, out_sp, lead_shape, rows


def _chooser_flat(x, select_max, window, strides, padding, bd, wd):
    """Flat indices (into one row of the padded block) of the selected elements,
    shape ``(rows, *out_spatial)``, the padded block's spatial shape, and the
    layout ``(lead_shape, out_spatial)``: the first extreme in window order."""
    big, out_sp, lead_shape, rows = _select_positions(
        x, select_max, window, strides, padding, bd, wd
    )
    kk = int(np.prod(window, dtype=np.int64))
    if 0 in out_sp or rows == 0 or kk == 0:
        return np.zeros((rows,) + out_sp, np.intp), big.shape[1:], lead_shape, out_sp
    k = _window_arg_extreme(big, select_max, window, strides, wd, out_sp)
    offs = np.unravel_index(k, window)
    pos = []
    for d, (s, r) in enumerate(zip(strides, wd)):
        base = np.arange(out_sp[d]) * s
        base = base.reshape((1,) * (1 + d) + (-1,) + (1,) * (len(out_sp) - d - 1))
        pos.append(base + offs[d] * r)
    flat = np.ravel_multi_index(pos, big.shape[1:]) if pos else np.zeros_like(k)
    return flat, big.shape[1:], lead_shape, out_sp


def _reduce_window_chooser_impl(
    operand, select_max, window_dimensions, window_strides, padding, base_dilation, window_dilation
):
    """Maximum (``select_max``) or minimum over strided, dilated windows of the
    padded, base-dilated ``operand`` (JAX's reduce_window_max / _min with the
    identity as init value: padding and holes never win).

    Args:
        operand: array ``lead + spatial``; the options describe the trailing
            ``len(window_dimensions)`` axes (leading axes are independent).
        window_dimensions, window_strides, base_dilation, window_dilation: tuples
            of positive ints; padding: ``(lo, hi)`` pairs.

    Returns:
        ``lead + out_spatial``, operand's dtype (NaN propagates).
    """
    x = _dt.canonicalize_value(np.asarray(operand))
    big, out_sp, lead_shape, rows = _select_positions(
        x,
        select_max,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )
    kk = int(np.prod(window_dimensions, dtype=np.int64))
    if 0 in out_sp or rows == 0 or kk == 0:
        kind = "max" if select_max else "min"
        return np.full(lead_shape + out_sp, _identity(kind, x.dtype), x.dtype)
    red = _window_extreme(
        big, select_max, window_dimensions, window_strides, window_dilation, out_sp
    )
    return red.reshape(lead_shape + out_sp)


def _window_slices(window, strides, wdil, out_sp):
    """For each window offset (in window order), the index of the strided slice of
    a ``rows + spatial`` block holding that offset's element of every window."""
    for offs in np.ndindex(*window):
        idx = (slice(None),)
        for i, r, s, n in zip(offs, wdil, strides, out_sp):
            start = i * r
            idx += (slice(start, start + (n - 1) * s + 1, s),)
        yield idx


def _window_arg_extreme(big, select_max, window, strides, wdil, out_sp):
    """The flat window offset of each window's first maximum (minimum) of ``big``,
    NaN first as ``np.argmax``, by one pass over the offsets (see
    :func:`_window_extreme`). Shape ``rows + out_spatial``, intp."""
    best = None
    for k, idx in enumerate(_window_slices(window, strides, wdil, out_sp)):
        part = big[idx]
        if best is None:
            best = part.copy()
            arg = np.zeros(part.shape, np.intp)
            nan = np.isnan(best) if best.dtype.kind in "fc" else None
            continue
        better = part > best if select_max else part < best
        if nan is not None:  # a NaN wins once, and nothing beats it after
            pn = np.isnan(part)
            better = (better & ~nan) | (pn & ~nan)
            nan |= pn
        np.copyto(best, part, where=better)
        arg[better] = k
    return arg


def _window_extreme(big, select_max, window, strides, wdil, out_sp):
    """The maximum (minimum) over windows of ``big`` (``rows + spatial``, padding
    applied): one strided slice per window offset, folded with ``np.maximum``
    (``np.minimum``) into the output. A reduction over the window axes of a
    sliding-window view is ~60x slower (a 2x2 max-pool of a (32, 16, 32, 32) batch:
    12 ms against 0.2 ms). NaN propagates, as with ``np.max``."""
    fold = np.maximum if select_max else np.minimum
    out = None
    for idx in _window_slices(window, strides, wdil, out_sp):
        part = big[idx]
        if out is None:
            out = part.copy()
        else:
            fold(out, part, out=out)
    return out


def _window_gather_impl(
    tangent,
    operand,
    select_max,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
):
    """``tangent`` read where each window of ``operand`` has its selected element
    (JAX's select_and_gather_add; zero where that is padding): the tangent of the
    chooser. ``tangent`` has ``operand``'s shape; result: the chooser's shape,
    ``tangent``'s dtype."""
    t = np.asarray(tangent)
    x = _dt.canonicalize_value(np.asarray(operand))
    if t.shape != x.shape:
        x = np.broadcast_to(x, np.broadcast_shapes(x.shape, t.shape))
        t = np.broadcast_to(t, x.shape)
    flat, block, lead_shape, out_sp = _chooser_flat(
        x,
        select_max,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )
    rows = flat.shape[0]
    tl = t.reshape((rows,) + t.shape[len(lead_shape) :])
    tb = _dilate_pad(tl, 1, base_dilation, padding, 0).reshape(rows, -1)
    if tb.shape[1] == 0:
        return np.zeros(lead_shape + out_sp, t.dtype)
    got = np.take_along_axis(tb, flat.reshape(rows, -1), axis=1)
    return got.reshape(lead_shape + out_sp)


def _window_scatter_impl(
    cotangent,
    operand,
    select_max,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
):
    """``cotangent`` (the chooser's shape) added into the places of ``operand``
    each window selected (JAX's select_and_scatter_add): the chooser's adjoint.
    Result: ``operand``'s shape, ``cotangent``'s dtype."""
    g = np.asarray(cotangent)
    x = _dt.canonicalize_value(np.asarray(operand))
    nsp = len(window_dimensions)
    if g.ndim - nsp != x.ndim - nsp or g.shape[: g.ndim - nsp] != x.shape[: x.ndim - nsp]:
        lead = np.broadcast_shapes(g.shape[: g.ndim - nsp], x.shape[: x.ndim - nsp])
        x = np.broadcast_to(x, lead + x.shape[x.ndim - nsp :])
        g = np.broadcast_to(g, lead + g.shape[g.ndim - nsp :])
    flat, block, lead_shape, out_sp = _chooser_flat(
        x,
        select_max,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )
    rows = flat.shape[0]
    size = int(np.prod(block, dtype=np.int64))
    sp = x.shape[len(lead_shape) :]
    if size == 0 or flat.size == 0:
        return np.zeros(x.shape, g.dtype)
    idx = (flat.reshape(rows, -1) + (np.arange(rows) * size)[:, None]).ravel()
    gl = g.reshape(-1)
    if g.dtype.kind == "c":
        z = np.bincount(idx, gl.real, rows * size) + 1j * np.bincount(idx, gl.imag, rows * size)
    else:
        z = np.bincount(idx, gl.astype(np.float64), rows * size)
    z = z.astype(g.dtype).reshape((rows,) + tuple(block))
    out = _undilate_unpad(z, 1, sp, base_dilation, padding)
    return out.reshape(x.shape)


reduce_window_chooser = register(
    Primitive("ad.reduce_window_chooser", _reduce_window_chooser_impl, kind="internal")
)
window_gather = register(Primitive("ad.window_gather", _window_gather_impl, kind="internal"))
window_scatter = register(Primitive("ad.window_scatter", _window_scatter_impl, kind="internal"))


def _chooser_vjp(
    g,
    ans,
    operand,
    select_max,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
):
    return window_scatter(
        g,
        operand,
        select_max,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )


def _chooser_jvp(
    t,
    ans,
    operand,
    select_max,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
):
    return window_gather(
        t,
        operand,
        select_max,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )


def _gather_vjp(
    h,
    ans,
    tangent,
    operand,
    select_max,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
):
    return window_scatter(
        h,
        operand,
        select_max,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )


def _gather_jvp(
    s,
    ans,
    tangent,
    operand,
    select_max,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
):
    return window_gather(
        s,
        operand,
        select_max,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )


def _scatter_vjp(
    h,
    ans,
    cotangent,
    operand,
    select_max,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
):
    return window_gather(
        h,
        operand,
        select_max,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )


def _scatter_jvp(
    s,
    ans,
    cotangent,
    operand,
    select_max,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
):
    return window_scatter(
        s,
        operand,
        select_max,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )


reduce_window_chooser.def_vjp(operand=_chooser_vjp)
reduce_window_chooser.def_jvp(operand=_chooser_jvp)
# linear in the first argument; ``operand`` only selects (piecewise constant)
window_gather.def_vjp(tangent=_gather_vjp)
window_gather.def_jvp(tangent=_gather_jvp)
window_scatter.def_vjp(cotangent=_scatter_vjp)
window_scatter.def_jvp(cotangent=_scatter_jvp)


def _chooser_samples(rng):
    # distinct values: the selection is locally constant, as finite differences need
    def r(*shape):
        return rng.permutation(int(np.prod(shape))).reshape(shape) * 0.1 + rng.uniform(
            0, 0.01, shape
        )

    return [
        ((r(2, 5), True, (2, 2), (1, 2), ((0, 1), (1, 0)), (1, 1), (1, 1)), {}),
        (
            (
                r(
                    6,
                ),
                False,
                (3,),
                (2,),
                ((1, 1),),
                (1,),
                (1,),
            ),
            {},
        ),
        ((r(4, 3), True, (2, 2), (1, 1), ((1, 0), (0, 1)), (2, 1), (1, 2)), {}),
        (
            (
                r(2, 3, 4),
                False,
                (2, 1, 2),
                (1, 1, 1),
                ((0, 0), (0, 0), (-1, 1)),
                (1, 1, 1),
                (1, 1, 1),
            ),
            {},
        ),
    ]


def _gather_samples(rng):
    out = []
    for (x, *rest), kw in _chooser_samples(rng):
        out.append(((rng.normal(size=x.shape), x, *rest), kw))
    return out


def _scatter_samples(rng):
    out = []
    for (x, *rest), kw in _chooser_samples(rng):
        ans = _reduce_window_chooser_impl(x, *rest)
        out.append(((rng.normal(size=ans.shape), x, *rest), kw))
    return out


reduce_window_chooser.samples = _chooser_samples
window_gather.samples = _gather_samples
window_scatter.samples = _scatter_samples


def _window_batch_rule(first):
    """vmap: leading axes are independent rows, so a batched call is the same
    call with every array argument batched (unbatched ones broadcast)."""
    arrays = [first, "operand"] if first else ["operand"]
    options = [
        "select_max",
        "window_dimensions",
        "window_strides",
        "padding",
        "base_dilation",
        "window_dilation",
    ]

    def rule(c):
        if any(c.batched(p) for p in options):
            return None
        return c.rebuild(**{p: c.materialize(c.arg(p)) for p in arrays})

    return rule


reduce_window_chooser.def_batch(_window_batch_rule(None))
window_gather.def_batch(_window_batch_rule("tangent"))
window_scatter.def_batch(_window_batch_rule("cotangent"))


def reduce_window(
    operand: ArrayLike,
    init_value: ArrayLike,
    computation: Callable,
    window_dimensions: Sequence[int],
    window_strides: Optional[Sequence[int]] = None,
    padding: Padding = "VALID",
    base_dilation: Optional[Sequence[int]] = None,
    window_dilation: Optional[Sequence[int]] = None,
) -> np.ndarray:
    """Reduction over strided, dilated windows of the padded operand
    (jax.lax.reduce_window, https://docs.jax.dev/en/latest/_autosummary/jax.lax.reduce_window.html).

    Args:
        operand: array of any rank (one array; JAX's pytrees of operands are not
            supported).
        init_value: scalar; the padding value and the start of every reduction.
        computation: ``lax.add``, ``lax.max`` or ``lax.min`` (or ``jnp.add``,
            ``jnp.maximum``, ``jnp.minimum``, ``operator.add``).
        window_dimensions: one positive int per axis of ``operand``.
        window_strides, base_dilation, window_dilation: None (ones) or one
            positive int per axis.
        padding: ``"VALID"`` (default), ``"SAME"``, ``"SAME_LOWER"`` or ``(lo, hi)``
            pairs, one per axis.

    Returns:
        Array of ``operand``'s dtype, axis ``d`` of size ``max(0, (dilated n + lo
        + hi - dilated window) // stride + 1)``. Average pooling is
        ``reduce_window(x, 0., lax.add, ...) / window_size``.

    Raises:
        NotImplementedError for another ``computation``; TypeError/ValueError for
        options that do not match the operand (JAX's checks).

    Derivatives: add is a convolution with a kernel of ones (its derivatives are
    convolutions); max/min send the cotangent to the element each window
    selected (the first among ties), as JAX. An ``init_value`` other than the
    identity enters once per window, as on JAX's CPU backend: ``init + sum`` of
    the operand's elements (padding adds nothing), ``max(init, max)``.
    """
    kind = _window_kind(computation)
    identity = _window_init(kind, operand, init_value)
    plan = _window_plan(
        _shape(operand), window_dimensions, window_strides, padding, base_dilation, window_dilation
    )
    if kind == "add":
        parts = _window_sum_parts(_shape(operand), operand, plan)
        y = conv_p(_reshape(operand, parts[0]), parts[1], plan[1], plan[2], plan[3], plan[4], 1, 1)
        out = _reshape(y, _window_out_shape(_shape(y)))
        if not identity:
            out = out + init_value
    else:
        out = reduce_window_chooser(
            operand, kind == "max", plan[0], plan[1], plan[2], plan[3], plan[4]
        )
        if not identity:
            if kind == "max":
                out = _maximum(out, init_value)
            else:
                out = _minimum(out, init_value)
    return out
