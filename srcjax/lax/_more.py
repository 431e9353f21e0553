"""More of ``jax.lax`` (JAX 0.10.2): precision enums, reductions, elementwise
special functions, structural helpers, ``reduce_precision``, ``custom_root``
and ``custom_linear_solve``.

Most functions here are compositions of registered primitives (plain Python
that transformed code inlines like a user function, so grad/jit/vmap come from
the primitives they call). New primitives are added only where NumPy/SciPy
compute something no existing primitive does (``nextafter``, ``clz``,
``population_count``, ``zeta``, the exponentially scaled Bessel functions,
``betainc``, ``complex``, ``reduce_precision``).

``precision=`` arguments (``Precision.HIGHEST``, ``'highest'``, a pair, a
:class:`DotAlgorithmPreset`) are accepted everywhere JAX accepts them and have
no effect: srcjax computes float32 products with NumPy/BLAS in float32 at
full float32 precision, which is what ``HIGHEST`` asks for on accelerators.
"""

from __future__ import annotations

import builtins as _builtins
import enum
from typing import Any, Callable, Optional, Sequence, Tuple, Union

import numpy as np

from .. import dtypes as _dt
from ..frontend import nodes as N
from ..primitives.ad import astype as _astype
from ..primitives.ad import broadcast_to as _broadcast_to
from ..primitives.ad import expand_dims as _expand_dims
from ..primitives.ad import reshape as _reshape
from ..primitives.collectives import psum as _psum
from ..primitives.control import stop_gradient as _stop_gradient
from ..primitives.creation import shape as _shape
from ..primitives.elementwise import arccosh as acosh
from ..primitives.elementwise import arcsinh as asinh
from ..primitives.elementwise import arctanh as atanh
from ..primitives.elementwise import bitwise_and as _bitwise_and
from ..primitives.elementwise import bitwise_or as _bitwise_or
from ..primitives.elementwise import bitwise_xor as _bitwise_xor
from ..primitives.elementwise import conj as _conj
from ..primitives.elementwise import defderiv as _defderiv
from ..primitives.elementwise import exp as _exp
from ..primitives.elementwise import greater_equal as _greater_equal
from ..primitives.elementwise import imag as _imag
from ..primitives.elementwise import log as _log
from ..primitives.elementwise import log1p as _log1p
from ..primitives.elementwise import new_elementwise
from ..primitives.elementwise import real as _real
from ..primitives.elementwise import sign as _sign
from ..primitives.elementwise import where as _where
from ..primitives.linalg import matmul as _matmul
from ..primitives.reductions import max as _rmax
from ..primitives.reductions import min as _rmin
from ..primitives.reductions import prod as _rprod
from ..primitives.reductions import sum as _rsum
from ..primitives.registry import Primitive, register
from ..primitives.special import erfc, gammaln, polygamma
from ..primitives.structural import argsort as _argsort
from ..primitives.structural import concatenate as _concatenate
from ..primitives.structural import dynamic_slice as _dynamic_slice
from ..primitives.structural import dynamic_update_slice as _dynamic_update_slice
from ..primitives.structural import moveaxis as _moveaxis
from ..primitives.structural import split as _split
from ..primitives.structural import squeeze as _squeeze
from ..primitives.structural import stack as _stack
from ..primitives.structural import take_along_axis as _take_along_axis
from ..primitives.structural import tile as _tile
from ..primitives.structural import transpose as _transpose
from ..scipy.special import gammainc as igamma
from ..scipy.special import gammaincc as igammac
from ._ops import _same_dtypes_impl, integer_pow, iota

__all__ = [
    "DotAlgorithmPreset",
    "Precision",
    "PrecisionLike",
    "acosh",
    "asinh",
    "atanh",
    "axis_size",
    "batch_matmul",
    "bessel_i0e",
    "bessel_i1e",
    "betainc",
    "broadcasted_iota",
    "clz",
    "collapse",
    "conj",
    "custom_linear_solve",
    "custom_root",
    "dynamic_index_in_dim",
    "dynamic_update_index_in_dim",
    "erfc",
    "igamma",
    "igammac",
    "imag",
    "nextafter",
    "optimization_barrier",
    "polygamma",
    "population_count",
    "real",
    "reciprocal",
    "reduce",
    "reduce_and",
    "reduce_max",
    "reduce_min",
    "reduce_or",
    "reduce_precision",
    "reduce_prod",
    "reduce_sum",
    "reduce_xor",
    "select_n",
    "sort_key_val",
    "split",
    "stack",
    "tile",
    "unstack",
    "with_sharding_constraint",
    "zeta",
]


# ---------------------------------------------------------------------------
# precision


class Precision(enum.Enum):
    """Precision of matrix products on accelerators (jax.lax.Precision).

    ``DEFAULT`` (aliases ``'default'``, ``'fastest'``, ``'bfloat16'``), ``HIGH``
    (``'high'``, ``'bfloat16_3x'``, ``'tensorfloat32'``) and ``HIGHEST``
    (``'highest'``, ``'float32'``); ``Precision('highest')`` looks an alias up.
    srcjax runs on the CPU, where JAX ignores it too: every srcjax product is
    computed in its dtype at full precision (``HIGHEST``). Unknown strings raise
    ValueError, as in JAX."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> Optional["Precision"]:
        return _PRECISION_STRINGS.get(value)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"Precision.{self.name}"

    def __str__(self) -> str:
        return self.name


_PRECISION_STRINGS = {
    "highest": Precision.HIGHEST,
    "float32": Precision.HIGHEST,
    "high": Precision.HIGH,
    "bfloat16_3x": Precision.HIGH,
    "tensorfloat32": Precision.HIGH,
    "default": Precision.DEFAULT,
    "bfloat16": Precision.DEFAULT,
    "fastest": Precision.DEFAULT,
    None: Precision.DEFAULT,
}


class DotAlgorithmPreset(enum.Enum):
    """Named dot-product algorithms (jax.lax.DotAlgorithmPreset), accepted as
    ``precision=`` and ignored: srcjax computes every product in its operands'
    (promoted) dtype."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"DotAlgorithmPreset.{self.name}"

    def __str__(self) -> str:
        return self.name


PrecisionLike = Union[
    None, str, Precision, Tuple[str, str], Tuple[Precision, Precision], DotAlgorithmPreset
]


def canonicalize_precision(precision: PrecisionLike) -> Any:
    """``precision`` as JAX canonicalizes it: None, a pair of :class:`Precision`
    or a :class:`DotAlgorithmPreset` (a preset's name as a string too). Raises
    ValueError, as JAX, for anything else."""
    if precision is None:
        return None
    if isinstance(precision, str):
        if precision in _PRECISION_STRINGS:
            p = Precision(precision)
            return p, p
        if precision in DotAlgorithmPreset.__members__:
            return DotAlgorithmPreset[precision]
    elif isinstance(precision, Precision):
        return precision, precision
    elif isinstance(precision, DotAlgorithmPreset):
        return precision
    elif isinstance(precision, (list, tuple)) and len(precision) == 2:
        if all(isinstance(p, Precision) for p in precision):
            return tuple(precision)
        if all(isinstance(p, str) and p in _PRECISION_STRINGS for p in precision):
            return Precision(precision[0]), Precision(precision[1])
    raise ValueError(
        "Precision argument must be one of: None, a string in "
        f"{[k for k in _PRECISION_STRINGS if k is not None]}, a lax.Precision value, a "
        f"pair of those, or a lax.DotAlgorithmPreset; got {precision!r}."
    )


# ---------------------------------------------------------------------------
# static helpers (shapes and dtypes only: the same for every example of a vmap)


def _static(public: str, impl: Callable) -> Primitive:
    p = register(Primitive(public, impl, kind="internal", differentiable=False))
    p.def_batch(lambda c: (c.rebuild(), False))
    return p


#: JAX's words for the accepted dtype kinds of the reductions
_REDUCE_KINDS = {
    "num": ("iufc", "number"),
    "any": ("biufc", "number, bool"),
}


def _reduce_check_impl(name, kinds, x, axes):
    """Static: JAX's checks of ``reduce_<op>(x, axes)``: ``x``'s dtype kind, the
    axes in bounds (no negative ones) and distinct. Returns ``(axes, dtype)``."""
    d = _dt.dtype_of(x)
    nd = np.ndim(x)
    if kinds == "logical":
        if d.kind not in "biu":
            raise TypeError(f"logical reduction requires operand dtype bool or int, got {d.name}.")
    else:
        ok, words = _REDUCE_KINDS[kinds]
        if d.kind not in ok:
            raise TypeError(
                f"{name} does not accept dtype {d.name}. Accepted dtypes are subtypes of {words}."
            )
    axes = tuple(int(a) for a in axes)
    if any(not 0 <= a < nd for a in axes):
        raise ValueError(
            f"reduction axes {axes} contains out-of-bounds indices for {d.name}{list(np.shape(x))}."
        )
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")
    return axes, d


_reduce_check = _static("ad.lax_reduce_check", _reduce_check_impl)
_reduce_check.samples = lambda rng: [(("reduce_sum", "num", np.ones((2, 3)), (1,)), {})]


def _tree_kind_impl(x):
    """Static: ``"tuple"``/``"list"`` for a tuple/list of operands, ``"array"``
    otherwise; NotImplementedError for a dict (JAX takes any pytree)."""
    if isinstance(x, dict):
        raise NotImplementedError(
            "srcjax lax.reduce: operands must be an array or a tuple/list of arrays (not a dict)"
        )
    if isinstance(x, tuple):
        return "tuple"
    if isinstance(x, list):
        return "list"
    return "array"


_tree_kind = _static("ad.lax_tree_kind", _tree_kind_impl)
_tree_kind.samples = lambda rng: [((np.ones(2),), {}), (((np.ones(2), np.ones(2)),), {})]


def _fold_plan_impl(shapes, n_inits, dimensions):
    """Static: how ``reduce`` folds: the permutation putting the reduced axes
    first, their total size ``n``, the kept shape, and the halving schedule
    (each level combines the first ``h`` rows with the next ``h``). JAX's
    errors for mismatched operands and bad dimensions."""
    shapes = [tuple(s) for s in shapes]
    if n_inits != len(shapes):
        raise ValueError(
            "reduce: operands and init_values must have the same number of leaves, got "
            f"{len(shapes)} and {n_inits}"
        )
    if len(set(shapes)) != 1:
        raise ValueError(f"reduce operands must all have the same shape, got {shapes}")
    shape = shapes[0]
    dims = tuple(int(d) for d in dimensions)
    if any(not 0 <= d < len(shape) for d in dims):
        raise ValueError(f"reduction axes {dims} contains out-of-bounds indices for shape {shape}.")
    if len(set(dims)) != len(dims):
        raise ValueError(f"duplicate value in 'axes' of reduction: {dims}")
    kept = tuple(a for a in range(len(shape)) if a not in dims)
    perm = dims + kept
    n = 1
    for d in dims:
        n *= shape[d]
    halves = []
    m = n
    while m > 1:
        halves.append(m // 2)
        m = m // 2 + m % 2
    return perm, n, tuple(shape[a] for a in kept), tuple(halves), len(dims) == 0


_fold_plan = _static("ad.lax_fold_plan", _fold_plan_impl)
_fold_plan.samples = lambda rng: [((((2, 3),), 1, (0,)), {})]


def _leaves(kind, x):
    """The arrays of ``x`` (structured as ``kind`` says) as a list."""
    if kind == "array":
        return [x]
    return [v for v in x]


def _pack(kind, leaves):
    """``leaves`` in the structure ``kind`` names."""
    if kind == "tuple":
        return tuple(leaves)
    if kind == "list":
        return leaves
    return leaves[0]


# ---------------------------------------------------------------------------
# reductions


def reduce_sum(operand: Any, axes: Sequence[int]) -> Any:
    """Sum over ``axes`` (jax.lax.reduce_sum).

    Args:
        operand: array of a number dtype (bool raises TypeError, as JAX).
        axes: distinct axes, each in ``[0, ndim)`` (negative axes raise
            ValueError, as JAX).

    Returns:
        ``operand`` summed over ``axes``: the other axes in order, ``operand``'s
        dtype (no promotion of small integers, unlike ``jnp.sum``).
    """
    ax, dt = _reduce_check("reduce_sum", "num", operand, axes)
    return _rsum(operand, ax, dt)


def reduce_prod(operand: Any, axes: Sequence[int]) -> Any:
    """Product over ``axes`` (jax.lax.reduce_prod); dtypes and checks as
    :func:`reduce_sum`. The derivative is exact at zeros (``jnp.prod``'s)."""
    ax, dt = _reduce_check("reduce_prod", "num", operand, axes)
    return _rprod(operand, ax, dt)


def reduce_max(operand: Any, axes: Sequence[int]) -> Any:
    """Maximum over ``axes`` (jax.lax.reduce_max): any dtype (bool too); NaN
    propagates; the derivative is split evenly among tied maxima, as JAX.
    Axes checked as :func:`reduce_sum`."""
    ax, dt = _reduce_check("reduce_max", "any", operand, axes)
    return _rmax(operand, ax)


def reduce_min(operand: Any, axes: Sequence[int]) -> Any:
    """Minimum over ``axes`` (jax.lax.reduce_min); as :func:`reduce_max`."""
    ax, dt = _reduce_check("reduce_min", "any", operand, axes)
    return _rmin(operand, ax)


def _logical_identity_impl(op, x):
    """Static: the identity of a bitwise reduction in ``x``'s dtype."""
    d = _dt.dtype_of(x)
    if op == "and":
        return np.ones((), d) if d.kind == "b" else np.asarray(-1).astype(d)
    return np.zeros((), d)


_logical_identity = _static("ad.lax_logical_identity", _logical_identity_impl)
_logical_identity.samples = lambda rng: [(("and", np.ones(2, np.int32)), {})]


def reduce_and(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise AND over ``axes`` (jax.lax.reduce_and): bool (logical all) or
    integer operands (TypeError otherwise, as JAX); ``operand``'s dtype. An
    empty reduction gives all bits set (True / -1)."""
    _reduce_check("reduce_and", "logical", operand, axes)
    return reduce(operand, _logical_identity("and", operand), _bitwise_and, axes)


def reduce_or(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise OR over ``axes`` (jax.lax.reduce_or); as :func:`reduce_and`
    (empty: False / 0)."""
    _reduce_check("reduce_or", "logical", operand, axes)
    return reduce(operand, _logical_identity("or", operand), _bitwise_or, axes)


def reduce_xor(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise XOR over ``axes`` (jax.lax.reduce_xor; for bools: an odd number
    of True); as :func:`reduce_and` (empty: False / 0)."""
    _reduce_check("reduce_xor", "logical", operand, axes)
    return reduce(operand, _logical_identity("xor", operand), _bitwise_xor, axes)


def reduce(
    operands: Any, init_values: Any, computation: Callable, dimensions: Sequence[int]
) -> Any:
    """Reduce ``operands`` over ``dimensions`` with ``computation``
    (jax.lax.reduce).

    The reduced elements are combined pairwise in a balanced tree (rows
    ``[0, h)`` with ``[h, 2h)``, an odd one carried), then combined once with
    the initial values: ``computation(init, folded)``. ``computation`` must be
    associative, as JAX requires (``lax.add``, ``lax.mul``, ``lax.max``,
    ``lax.min``, ``lax.bitwise_and``/``or``/``xor``, or a lambda/def of
    srcjax operations); it is called on whole slices, so it must be
    elementwise. Derivatives, vmap and jit come from ``computation`` (at exact
    ties of a max/min the cotangent is split as the pairwise tree gives;
    JAX's ``lax.reduce(x, -inf, lax.max, ...)`` splits it evenly).

    Args:
        operands: an array, or a tuple or list of arrays of one shape
            (``computation`` then takes and returns such tuples/lists). A dict
            raises NotImplementedError.
        init_values: scalars (one per operand, in ``operands``' structure);
            each is cast to its operand's dtype. Returned, broadcast, when the
            reduced size is 0.
        computation: ``computation(a, b)`` of two values structured as
            ``operands``.
        dimensions: distinct axes in ``[0, ndim)``; ``()`` returns
            ``operands`` unchanged (as JAX).

    Returns:
        ``operands``' structure, each leaf of the kept shape (the other axes in
        order) and the dtype ``computation`` gives.

    Raises:
        ValueError for mismatched shapes/leaf counts or out-of-bounds or
        repeated dimensions.
    """
    kind = _tree_kind(operands)
    leaves = _leaves(kind, operands)
    inits = _leaves(kind, init_values)
    plan = _fold_plan([_shape(v) for v in leaves], len(inits), dimensions)
    perm = plan[0]
    n = plan[1]
    kept = plan[2]
    halves = plan[3]
    if plan[4]:
        out = operands
    else:
        cur = [_reshape(_transpose(v, perm), (n,) + kept) for v in leaves]
        starts = [_astype(i, _dt_of(v)) for i, v in zip(inits, leaves)]
        if n == 0:
            out = _pack(kind, [_broadcast_to(i, kept) for i in starts])
        else:
            for h in halves:
                a = [v[:h] for v in cur]
                b = [v[h : 2 * h] for v in cur]
                c = _leaves(kind, computation(_pack(kind, a), _pack(kind, b)))
                cur = [_concatenate([ci, v[2 * h :]], 0) for ci, v in zip(c, cur)]
            folded = [v[0] for v in cur]
            out = computation(_pack(kind, starts), _pack(kind, folded))
    return out


def _dt_of_impl(x):
    """Static: ``x``'s canonical dtype."""
    return _dt.dtype_of(x)


_dt_of = _static("ad.lax_more_dtype_of", _dt_of_impl)
_dt_of.samples = lambda rng: [((np.ones(2),), {})]


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
    from ..primitives.special import _scipy_special

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


def _complex_vjp_x(g, ans, x, y):
    return _real(g)


def _complex_vjp_y(g, ans, x, y):
    return -_imag(g)


def _complex_jvp_x(t, ans, x, y):
    return complex(t, t * 0)


def _complex_jvp_y(t, ans, x, y):
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


def _reduce_precision_operand(g, ans, operand, exponent_bits, mantissa_bits):
    return reduce_precision(g, exponent_bits, mantissa_bits)


_defderiv(reduce_precision, _reduce_precision_operand)
reduce_precision.samples = lambda rng: [
    ((rng.uniform(-2.0, 2.0, s), 11, 52), {}) for s in [(), (3,)]
]


# ---------------------------------------------------------------------------
# structural


def dynamic_index_in_dim(
    operand: Any,
    index: Any,
    axis: int = 0,
    keepdims: bool = True,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """Item ``index`` of ``operand`` along ``axis`` (jax.lax.dynamic_index_in_dim).

    Args:
        operand: array of any shape and dtype.
        index: int or 0-d integer array (may vary under vmap); negative counts
            from the end unless ``allow_negative_indices`` is False (then it is
            clamped to 0); clamped into range, as ``dynamic_slice``.
        axis: the axis (negative counts from the end).
        keepdims: keep ``axis`` with size 1.

    Returns:
        A copy of ``operand``'s dtype, ``axis`` of size 1 or removed.
    """
    if not allow_negative_indices:
        index = _where(index < 0, 0, index)
    shape = _shape(operand)
    ax = axis % len(shape)
    starts = [index if k == ax else 0 for k in range(len(shape))]
    sizes = [1 if k == ax else n for k, n in enumerate(shape)]
    out = _dynamic_slice(operand, starts, sizes)
    if not keepdims:
        out = _squeeze(out, ax)
    return out


def dynamic_update_index_in_dim(
    operand: Any,
    update: Any,
    index: Any,
    axis: int,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """``operand`` with item ``index`` along ``axis`` replaced by ``update``
    (jax.lax.dynamic_update_index_in_dim).

    Args:
        operand: array of any shape and dtype.
        update: array of ``operand``'s shape with ``axis`` of size 1, or with
            ``axis`` removed; cast to ``operand``'s dtype.
        index: int or 0-d integer array; negative counts from the end (unless
            ``allow_negative_indices`` is False: clamped to 0), then clamped.
        axis: the axis (negative counts from the end).

    Returns:
        A copy of ``operand`` (same shape and dtype) with the item written.

    Raises:
        TypeError when ``update`` has the wrong rank or shape.
    """
    if not allow_negative_indices:
        index = _where(index < 0, 0, index)
    nd = len(_shape(operand))
    ax = axis % nd
    if len(_shape(update)) == nd - 1:
        update = _expand_dims(update, ax)
    starts = [index if k == ax else 0 for k in range(nd)]
    return _dynamic_update_slice(operand, update, starts)


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Any:
    """An array of ``shape`` whose value is its index along ``dimension``
    (jax.lax.broadcasted_iota), of ``dtype`` (canonicalized: int64 is int32
    unless x64)."""
    shape = tuple(shape)
    n = shape[dimension]
    v = iota(dtype, n)
    mid = tuple(n if k == dimension else 1 for k in range(len(shape)))
    return _broadcast_to(_reshape(v, mid), shape)


def collapse(operand: Any, start_dimension: int, stop_dimension: Optional[int] = None) -> Any:
    """``operand`` with axes ``start_dimension:stop_dimension`` merged into one
    (jax.lax.collapse; Python slice semantics, ``None`` = to the end): same
    dtype and size."""
    shape = _shape(operand)
    size = 1
    for n in shape[start_dimension:stop_dimension]:
        size = size * n
    head = shape[:start_dimension]
    tail = () if stop_dimension is None else shape[stop_dimension:]
    return _reshape(operand, tuple(head) + (size,) + tuple(tail))


def _batch_matmul_check_impl(lhs_shape, rhs_shape):
    """Static: JAX's checks of ``batch_matmul``."""
    if len(lhs_shape) != len(rhs_shape):
        raise ValueError(
            "batch_matmul requires lhs and rhs to have the same number of dimensions, "
            f"got {len(lhs_shape)} and {len(rhs_shape)}."
        )
    if len(lhs_shape) < 2:
        raise ValueError(
            f"batch_matmul requires lhs and rhs to have ndim >= 2, got {len(lhs_shape)}"
        )
    if tuple(lhs_shape[:-2]) != tuple(rhs_shape[:-2]):
        raise ValueError(
            "batch_matmul requires lhs batch dimensions and rhs batch dimensions to have"
            f" the same shape, got {tuple(lhs_shape[:-2])} and {tuple(rhs_shape[:-2])}."
        )
    return True


_batch_matmul_check = _static("ad.lax_batch_matmul_check", _batch_matmul_check_impl)
_batch_matmul_check.samples = lambda rng: [(((2, 3, 4), (2, 4, 5)), {})]


def batch_matmul(lhs: Any, rhs: Any, precision: PrecisionLike = None) -> Any:
    """Batched matrix product (jax.lax.batch_matmul): ``lhs`` ``(..., m, k)``
    and ``rhs`` ``(..., k, n)`` of one rank >= 2 and equal batch shapes give
    ``(..., m, n)`` in their promoted dtype. ``precision`` is accepted and
    ignored (see :class:`Precision`). ValueError for other shapes, as JAX."""
    _batch_matmul_check(_shape(lhs), _shape(rhs))
    return _matmul(lhs, rhs)


def sort_key_val(keys: Any, values: Any, dimension: int = -1, is_stable: bool = True) -> Any:
    """``keys`` sorted along ``dimension`` and ``values`` permuted the same way
    (jax.lax.sort_key_val). ``keys`` and ``values`` have one shape; NaN keys
    sort last; ties keep their order (the sort is always stable). Returns
    ``(sorted_keys, values)`` in their dtypes; differentiable in both (the
    permutation is constant)."""
    idx = _argsort(keys, dimension)
    return _take_along_axis(keys, idx, dimension), _take_along_axis(values, idx, dimension)


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """Arrays of one shape stacked along a new ``axis`` (jax.lax.stack)."""
    return _stack(operands, axis)


def unstack(x: Any, axis: int = 0) -> Any:
    """The slices of ``x`` along ``axis`` as a tuple of arrays
    (jax.lax.unstack), each of ``x``'s shape without ``axis``."""
    xm = _moveaxis(x, axis, 0)
    return tuple([xm[i] for i in range(_shape(xm)[0])])


def _split_points_impl(shape, sizes, axis):
    """Static: the cut positions of ``split`` (JAX's ValueError when the sizes
    do not add up to the axis length or one is negative)."""
    sizes = [int(s) for s in sizes]
    n = shape[axis]
    if any(s < 0 for s in sizes) or _builtins.sum(sizes) != n:
        raise ValueError(
            f"Sum of sizes {_builtins.sum(sizes)} must be equal to dimension {n} of the"
            f" operand shape {tuple(shape)}"
        )
    points = []
    acc = 0
    for s in sizes[:-1]:
        acc += s
        points.append(acc)
    return points


_split_points = _static("ad.lax_split_points", _split_points_impl)
_split_points.samples = lambda rng: [(((5,), (2, 3), 0), {})]


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> Any:
    """``operand`` cut along ``axis`` into pieces of the given ``sizes``
    (jax.lax.split): a list of arrays. ValueError when the sizes do not add up
    to the axis length."""
    return _split(operand, _split_points(_shape(operand), sizes, axis), axis)


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """``operand`` repeated ``reps[i]`` times along axis ``i`` (jax.lax.tile;
    ``jnp.tile``'s rule for ``reps`` longer than the rank)."""
    return _tile(operand, tuple(reps))


def axis_size(axis_name: Any) -> Any:
    """The size of the mapped axis ``axis_name`` (jax.lax.axis_size) inside
    ``vmap``/``pmap`` with that name: ``psum(1, axis_name)``. Raises NameError
    outside one, as JAX."""
    return _psum(1, axis_name)


def optimization_barrier(operand: Any) -> Any:
    """``operand`` itself (jax.lax.optimization_barrier: a barrier for XLA's
    scheduling; srcjax does not move computations across calls). Any pytree."""
    return operand


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """``x`` itself (jax.lax.with_sharding_constraint): srcjax runs on one host
    device, so there is nothing to shard."""
    return x


# ---------------------------------------------------------------------------
# implicit differentiation


def _first_order(x):
    """Identity; its derivative rules go through ``ad.implicit_once``, whose own
    rules raise: a second derivative of ``custom_root``/``custom_linear_solve``
    is refused rather than silently wrong."""
    return x


def _implicit_once(x):
    """Identity; differentiating it raises NotImplementedError."""
    return x


def _implicit_refused(x):
    """Raises: srcjax computes only first derivatives of custom_root and
    custom_linear_solve (reached only by a second derivative)."""
    raise NotImplementedError(
        "srcjax: lax.custom_root / lax.custom_linear_solve support first derivatives only"
        " (JAX supports higher ones)"
    )


_first = register(Primitive("ad.implicit_first", _first_order, kind="internal"))
_once = register(Primitive("ad.implicit_once", _implicit_once, kind="internal"))
_refused = register(
    Primitive("ad.implicit_refused", _implicit_refused, kind="internal", differentiable=False)
)
_refused.samples = lambda rng: []
_once.samples = lambda rng: []  # its rules raise by design


def _first_x(g, ans, x):
    return _once(g)


def _once_x(g, ans, x):
    return g * _refused(x)


_defderiv(_first, _first_x)
_defderiv(_once, _once_x)
_first.def_batch(lambda c: c.rebuild())
_once.def_batch(lambda c: c.rebuild())


def _implicit_value(x0, delta):
    """``x0`` in value; derivatives those of ``delta`` (first order only)."""
    d = _first(delta)
    return x0 + (d - _stop_gradient(d))


def custom_root(
    f: Callable, initial_guess: Any, solve: Callable, tangent_solve: Callable, has_aux: bool = False
) -> Any:
    """A root of ``f`` found by ``solve`` (jax.lax.custom_root).

    The value is ``solve(f, initial_guess)`` (with ``has_aux``: ``(root,
    aux)``), under jit and vmap too. Derivatives are NOT implemented yet: JAX
    differentiates the root implicitly (``dx = -J^{-1} df/dtheta``, solved by
    ``tangent_solve``); srcjax cannot yet transform the user's ``f`` inside
    this function, so a derivative through the root raises
    NotImplementedError at run time rather than differentiating ``solve``'s
    iterations (which would be silently wrong for bisection and the like).

    Args:
        f: ``f(x)`` of an array ``x`` giving an array of its shape.
        initial_guess: array.
        solve: ``solve(f, initial_guess)`` giving the root (and aux).
        tangent_solve: ``tangent_solve(g, y)`` solving ``g(x) = y``; not called.
        has_aux: whether ``solve`` returns ``(root, aux)``.

    Returns:
        The root (``initial_guess``' shape and dtype), or ``(root, aux)``.

    Under a transform, ``solve`` must be a module-level function (see
    :func:`custom_linear_solve`).
    """
    out = solve(f, initial_guess)
    if has_aux:
        sol = out[0]
    else:
        sol = out
    # f at the root ties the result to what f closes over, so that a derivative
    # in those reaches the refusing rule (a bisection's result has no
    # differentiable path to them at all)
    root = _no_root_derivative(sol, f(_stop_gradient(sol)))
    if has_aux:
        result = (root, _stop_gradient(out[1]))
    else:
        result = root
    return result


def _no_root_derivative_impl(x, residual):
    """``x``; its derivative rules raise (see ``custom_root``)."""
    return x


def _root_refused(x):
    """Raises: derivatives of lax.custom_root are not implemented."""
    raise NotImplementedError(
        "srcjax: derivatives of lax.custom_root are not implemented yet (JAX differentiates"
        " the root implicitly); wrap the root in lax.stop_gradient or differentiate a"
        " solver written with srcjax operations directly"
    )


_no_root_derivative = register(
    Primitive("ad.custom_root_value", _no_root_derivative_impl, kind="internal")
)
_root_refused_p = register(
    Primitive("ad.custom_root_refused", _root_refused, kind="internal", differentiable=False)
)
_root_refused_p.samples = lambda rng: []
_no_root_derivative.samples = lambda rng: []  # its rules raise by design


def _no_root_derivative_x(g, ans, x, residual):
    return g * _root_refused_p(x)


def _no_root_derivative_r(g, ans, x, residual):
    return _root_refused_p(residual) * 0


_no_root_derivative.def_vjp(_no_root_derivative_x, _no_root_derivative_r)
_no_root_derivative.def_jvp(_no_root_derivative_x, _no_root_derivative_r)
_no_root_derivative.def_batch(lambda c: c.rebuild() if c.batched("x") else None)


def custom_linear_solve(
    matvec: Callable,
    b: Any,
    solve: Callable,
    transpose_solve: Optional[Callable] = None,
    symmetric: bool = False,
    has_aux: bool = False,
) -> Any:
    """The solution ``x`` of ``matvec(x) = b`` by ``solve``, differentiated
    implicitly (jax.lax.custom_linear_solve).

    The value is ``solve(matvec, b)`` (with ``has_aux``: its first element;
    ``aux`` is returned with the derivative stopped). Its derivative, in ``b``
    and in what ``matvec`` closes over, is ``dx = solve(matvec, db - dA x)``:
    computed as the derivative of ``solve(matvec, b - matvec(x))`` through its
    right-hand side, which is exact when ``solve`` is linear in it (a direct
    solve; JAX's requirement ``solve(matvec, matvec(x)) == x``). srcjax
    differentiates ``solve`` in reverse mode too, so ``transpose_solve`` and
    ``symmetric`` are accepted and not used. First derivatives only (grad, jvp,
    vmap and jit of them); a second derivative raises NotImplementedError.
    Under a transform, ``solve`` must be a module-level function (or a
    srcjax/jnp one): a ``solve`` defined inside the calling function cannot
    yet be handed ``matvec`` (srcjax does not pass one local function to
    another; the transform then fails with a no-derivative-rule or NameError).

    Args:
        matvec: the linear map ``x -> A x`` on arrays of ``b``'s shape.
        b: array (a pytree of arrays is not supported).
        solve: ``solve(matvec, b)`` giving ``x`` (and aux).
        transpose_solve: accepted, unused.
        symmetric: accepted, unused.
        has_aux: whether ``solve`` returns ``(x, aux)``.

    Returns:
        ``x`` (``b``'s shape), or ``(x, aux)``.
    """
    out = solve(matvec, b)
    if has_aux:
        sol = out[0]
    else:
        sol = out
    x0 = _stop_gradient(sol)
    r = b - matvec(x0)
    if has_aux:
        delta = solve(matvec, r)[0]
    else:
        delta = solve(matvec, r)
    x = _implicit_value(x0, delta)
    if has_aux:
        result = (x, _stop_gradient(out[1]))
    else:
        result = x
    return result
