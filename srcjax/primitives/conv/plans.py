"""Static bookkeeping of convolutions and windows: plain Python on shapes and
options (dimension numbers, string padding, dilation, output shapes, dtype
checks), registered as non-differentiable ``ad.conv_*`` helpers where
transformed code calls them.
"""

from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple, Sequence, Tuple, Union

import numpy as np

from ... import dtypes as _dt

__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "padtype_to_pads"]


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
