"""JAX dtype semantics on top of NumPy.

What JAX does and this module reproduces:

- **Canonical dtypes.** With ``jax_enable_x64`` off (the default) there are no
  64-bit types: ``float64 -> float32``, ``int64 -> int32``, ``uint64 -> uint32``,
  ``complex128 -> complex64`` (:func:`canonicalize_dtype`). Python floats
  become ``float32`` and Python ints ``int32`` (:func:`default_float`,
  :func:`default_int`).
- **Weak types.** Python scalars (``int``, ``float``, ``complex``) are *weakly
  typed*: they take the dtype of the array they meet, so ``float32_array * 2.0``
  stays ``float32`` and ``int8_array + 1`` stays ``int8``. NumPy 2 (NEP 50)
  does the same for arrays and NumPy scalars, but not everywhere
  (``int32_array * 2.0`` is ``float64`` in NumPy, ``float32`` in JAX).
- **The promotion lattice.** Mixed strong types promote along JAX's lattice,
  not NumPy's table: an integer meeting a float gives that float
  (``int32 + float16 -> float16``; NumPy says ``float64``); ``uint8 + int8 ->
  int16`` in both (:func:`promote_types`, :func:`result_type`).
- **Inexact promotion.** Functions that need a float (``sin``, ``/``) turn
  ``bool`` and integers of up to 32 bits into ``float32`` and 64-bit integers
  into ``float64`` (:func:`to_inexact_dtype`).

The hot paths of the elementwise primitives call a NumPy ufunc and then test
the result dtype against one of the small sets below (``BINARY_SUSPECT`` ...);
only a result dtype in that set (one where NumPy *may* disagree with JAX) takes
the slow path through :func:`fix_binary` and friends, which recompute with the
JAX dtype. The sets are updated in place when ``jax_enable_x64`` changes.
"""

from __future__ import annotations

from typing import Any, Dict, FrozenSet, Optional, Tuple

import numpy as np

from ._prng_key import KeyDType, extended, prng_key
from .config import config as _config
from .config import on_change as _on_change

__all__ = [
    "bool_",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "float0",
    "dtype",
    "canonicalize_dtype",
    "default_float",
    "default_int",
    "default_uint",
    "default_complex",
    "is_weakly_typed",
    "dtype_of",
    "promote_types",
    "result_type",
    "weak_promotion",
    "can_be_weak",
    "to_inexact_dtype",
    "issubdtype",
    "extended",
    "prng_key",
    "finfo",
    "iinfo",
    "x64_enabled",
]

# -- scalar types (the objects users write as jnp.float32 ...) ----------------
bool_ = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64
complex64, complex128 = np.complex64, np.complex128
#: the dtype of the gradient of an integer or boolean input (``jax.dtypes.float0``:
#: no data; ``grad(..., allow_int=True)`` returns zeros of it)
float0 = np.dtype([("float0", "V")])
dtype = np.dtype


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """``numpy.issubdtype`` that also knows typed-key dtypes
    (``jax.numpy.issubdtype``): a ``key<fry>`` dtype is a sub-dtype of itself,
    :class:`prng_key`, :class:`extended` and ``np.generic``, and of nothing
    else; no NumPy dtype is a sub-dtype of a key dtype."""
    if isinstance(arg1, KeyDType) or (isinstance(arg1, type) and issubclass(arg1, extended)):
        if isinstance(arg2, KeyDType):
            return arg1 == arg2
        t1 = arg1.type if isinstance(arg1, KeyDType) else arg1
        return isinstance(arg2, type) and issubclass(t1, arg2)
    if isinstance(arg2, KeyDType):
        return False
    if isinstance(arg2, type) and issubclass(arg2, extended):
        return False
    return np.issubdtype(arg1, arg2)


finfo = np.finfo
iinfo = np.iinfo

_B = np.dtype(np.bool_)
_I8, _I16, _I32, _I64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
_U8, _U16, _U32, _U64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
_F16, _F32, _F64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
_C64, _C128 = np.dtype(np.complex64), np.dtype(np.complex128)

# bfloat16 and the float8 types are ml_dtypes' (the library JAX uses; the optional
# extra srcjax[ml-dtypes]). It is not imported with srcjax (importing it costs
# 0.15-0.5 s): a bfloat16 value reaches srcjax only after its user imported
# ml_dtypes, and the promotion lattice takes bfloat16 in at its first join
# (_Joins.__missing__) or when jnp.bfloat16 is read (ml_dtype).
_BF16: Optional[np.dtype] = None

#: the ml_dtypes types JAX exposes as jnp.<name> and jax.dtypes.<name>
ML_DTYPES = (
    "bfloat16",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float4_e2m1fn",
    "int2",
    "int4",
    "uint2",
    "uint4",
)


def ml_dtype(name: str, where: str = "srcjax.dtypes") -> Any:
    """The ml_dtypes scalar type ``name`` (one of :data:`ML_DTYPES`), importing
    ml_dtypes on first use. Raises AttributeError (as a missing module attribute)
    naming the extra ``srcjax[ml-dtypes]`` when ml_dtypes is not installed, or
    when the installed version lacks ``name``."""
    try:
        import ml_dtypes
    except ImportError:
        raise AttributeError(
            f"{where}.{name} needs the ml_dtypes package: pip install "
            "'srcjax[ml-dtypes]' (or pip install ml_dtypes)"
        ) from None
    value = getattr(ml_dtypes, name, None)
    if value is None:
        raise AttributeError(f"module {where!r} has no attribute {name!r}")
    if name == "bfloat16":
        _add_bfloat16(np.dtype(value))
    return value


def __getattr__(name: str) -> Any:
    """``srcjax.dtypes.bfloat16`` ...: the ml_dtypes types (see :func:`ml_dtype`)."""
    if name in ML_DTYPES:
        return ml_dtype(name)
    raise AttributeError(f"module 'srcjax.dtypes' has no attribute {name!r}")


_TO_32BIT: Dict[np.dtype, np.dtype] = {_I64: _I32, _U64: _U32, _F64: _F32, _C128: _C64}

_TO_INEXACT: Dict[np.dtype, np.dtype] = {
    _B: _F32,
    _I8: _F32,
    _U8: _F32,
    _I16: _F32,
    _U16: _F32,
    _I32: _F32,
    _U32: _F32,
    _I64: _F64,
    _U64: _F64,
}


def x64_enabled() -> bool:
    """Whether ``jax_enable_x64`` is on."""
    return _X64[0]


_X64 = [bool(_config.jax_enable_x64)]


# dtype (or scalar type) -> canonical dtype, and -> canonical inexact dtype, for
# the builtin numeric types; rebuilt when jax_enable_x64 changes. Lookups in
# these dicts are the fast path of canonicalize_dtype / to_inexact_dtype.
_CANON: Dict[Any, np.dtype] = {}
_INEXACT: Dict[Any, np.dtype] = {}
_NUMERIC = [_B, _I8, _I16, _I32, _I64, _U8, _U16, _U32, _U64, _F16, _F32, _F64, _C64, _C128]


def _rebuild_tables() -> None:
    _CANON.clear()
    _INEXACT.clear()
    for d in _NUMERIC:
        c = d if _X64[0] else _TO_32BIT.get(d, d)
        i = _TO_INEXACT.get(d, d)
        i = i if _X64[0] else _TO_32BIT.get(i, i)
        for key in (d, d.type):
            _CANON[key] = c
            _INEXACT[key] = i
    _CANON[float] = _CANON[_F64]
    _CANON[int] = _CANON[_I64]
    _CANON[complex] = _CANON[_C128]
    _CANON[bool] = _B


def canonicalize_dtype(dt: Any) -> np.dtype:
    """The dtype JAX actually uses for ``dt``: 64-bit types become 32-bit ones
    unless ``jax_enable_x64`` is on. ``canonicalize_dtype(float)`` is the
    default float."""
    c = _CANON.get(dt)
    if c is not None:
        return c
    d = np.dtype(dt)
    if _X64[0]:
        return d
    return _TO_32BIT.get(d, d)


def default_float() -> np.dtype:
    """``float32``, or ``float64`` with ``jax_enable_x64``."""
    return _F64 if _X64[0] else _F32


def default_int() -> np.dtype:
    """``int32``, or ``int64`` with ``jax_enable_x64``."""
    return _I64 if _X64[0] else _I32


def default_uint() -> np.dtype:
    """``uint32``, or ``uint64`` with ``jax_enable_x64``."""
    return _U64 if _X64[0] else _U32


def default_complex() -> np.dtype:
    """``complex64``, or ``complex128`` with ``jax_enable_x64``."""
    return _C128 if _X64[0] else _C64


def to_inexact_dtype(dt: Any) -> np.dtype:
    """The float dtype a float-valued function uses for input dtype ``dt``
    (JAX: bool and ints up to 32 bits -> float32, 64-bit ints -> float64),
    canonicalized."""
    i = _INEXACT.get(dt)
    if i is not None:
        return i
    d = np.dtype(dt)
    return canonicalize_dtype(_TO_INEXACT.get(d, d))


# -- the promotion lattice ----------------------------------------------------
# Nodes are NumPy dtypes (strong types) and the strings "i*", "f*", "c*" (the
# weak types of Python int, float and complex). Edges go from a type to the
# types it promotes to directly; the join of two types is their least upper
# bound. This is JAX's "standard" lattice; bfloat16 (ml_dtypes) joins it once
# ml_dtypes is in use (_add_bfloat16); the float8 types are left out.
_WEAK_INT, _WEAK_FLOAT, _WEAK_COMPLEX = "i*", "f*", "c*"
_EDGES: Dict[Any, Tuple[Any, ...]] = {
    _B: (_WEAK_INT,),
    _WEAK_INT: (_U8, _I8),
    _U8: (_U16, _I16),
    _U16: (_U32, _I32),
    _U32: (_U64, _I64),
    _U64: (_WEAK_FLOAT,),
    _I8: (_I16,),
    _I16: (_I32,),
    _I32: (_I64,),
    _I64: (_WEAK_FLOAT,),
    _WEAK_FLOAT: (_F16, _WEAK_COMPLEX),
    _F16: (_F32,),
    _F32: (_F64, _C64),
    _F64: (_C128,),
    _WEAK_COMPLEX: (_C64,),
    _C64: (_C128,),
    _C128: (),
}


def _upper_sets() -> Dict[Any, FrozenSet[Any]]:
    ups: Dict[Any, FrozenSet[Any]] = {}

    def up(node: Any) -> FrozenSet[Any]:
        if node not in ups:
            acc = {node}
            for nxt in _EDGES[node]:
                acc |= up(nxt)
            ups[node] = frozenset(acc)
        return ups[node]

    for n in _EDGES:
        up(n)
    return ups


_UPPER = _upper_sets()


def _join_nodes(a: Any, b: Any) -> Any:
    common = _UPPER[a] & _UPPER[b]
    for c in common:
        if common <= _UPPER[c]:
            return c
    raise TypeError(f"no common type for {a} and {b}")  # pragma: no cover (lattice is total)


class _Joins(dict):
    """``(node, node) -> join``. A lookup with a bfloat16 dtype the lattice does
    not know yet (ml_dtypes was imported after srcjax) adds bfloat16 first."""

    def __missing__(self, key: Tuple[Any, Any]) -> Any:
        for k in key:
            if _BF16 is None and _is_bfloat16(k):
                _add_bfloat16(k)
                return dict.__getitem__(self, key)
        raise KeyError(key)


def _all_joins() -> Dict[Tuple[Any, Any], Any]:
    return {(a, b): _join_nodes(a, b) for a in _EDGES for b in _EDGES}


_JOIN: Dict[Tuple[Any, Any], Any] = _Joins(_all_joins())


def _is_bfloat16(d: Any) -> bool:
    return isinstance(d, np.dtype) and d.kind == "V" and d.name == "bfloat16"


def _add_bfloat16(bf16: np.dtype) -> None:
    """Put ml_dtypes' bfloat16 into the lattice (JAX's: weak float -> bfloat16 ->
    float32, so ``bfloat16 + float16`` is float32) and the canonical-dtype tables."""
    global _BF16
    if _BF16 is not None:
        return
    _BF16 = bf16
    _NUMERIC.append(bf16)
    _EDGES[_WEAK_FLOAT] = (_F16, bf16, _WEAK_COMPLEX)
    _EDGES[bf16] = (_F32,)
    _UPPER.clear()
    _UPPER.update(_upper_sets())
    _JOIN.update(_all_joins())
    _rebuild_tables()


_WEAK_NODES = {_WEAK_INT, _WEAK_FLOAT, _WEAK_COMPLEX}


def is_weakly_typed(x: Any) -> bool:
    """``True`` for Python ``int``, ``float`` and ``complex`` scalars (not
    ``bool``, not NumPy scalars), which JAX treats as weakly typed."""
    t = type(x)
    return t is float or t is int or t is complex


def _node(x: Any) -> Any:
    """The lattice node of a value, dtype or scalar type (canonicalized)."""
    t = type(x)
    if t is float:
        return _WEAK_FLOAT
    if t is int:
        return _WEAK_INT
    if t is bool:
        return _B
    if t is complex:
        return _WEAK_COMPLEX
    d = getattr(x, "dtype", None)
    c = _CANON.get(d) if isinstance(d, np.dtype) else None
    if c is not None:
        return c
    if isinstance(d, np.dtype):
        return canonicalize_dtype(d)
    if x is float:
        return _WEAK_FLOAT
    if x is int:
        return _WEAK_INT
    if x is complex:
        return _WEAK_COMPLEX
    if x is bool:
        return _B
    if isinstance(x, (np.dtype, str)) or (isinstance(x, type) and issubclass(x, np.generic)):
        return canonicalize_dtype(x)
    if isinstance(x, bool):
        return _B
    if isinstance(x, int):
        return _WEAK_INT
    if isinstance(x, float):
        return _WEAK_FLOAT
    if isinstance(x, complex):
        return _WEAK_COMPLEX
    return canonicalize_dtype(np.asarray(x).dtype)


def _materialize(node: Any) -> np.dtype:
    # identity tests: comparing a NumPy dtype with a string parses the string
    if node is _WEAK_FLOAT:
        return default_float()
    if node is _WEAK_INT:
        return default_int()
    if node is _WEAK_COMPLEX:
        return default_complex()
    return canonicalize_dtype(node)


def dtype_of(x: Any) -> np.dtype:
    """The canonical dtype JAX gives ``x``: Python scalars get the default
    dtypes, arrays and NumPy scalars their (canonicalized) dtype."""
    return _materialize(_node(x))


def promote_types(a: Any, b: Any) -> np.dtype:
    """JAX's ``promote_types`` for two dtypes (both strongly typed): the join in
    JAX's lattice, not canonicalized (``promote_types(int32, float64)`` is float64
    also while x64 is off, as ``jnp.promote_types``; the arrays JAX computes with
    are then 32-bit: see :func:`result_type`). A 64-bit join of two narrower
    types (``int32`` and ``uint32``) is canonicalized, as JAX's is."""
    a, b = np.dtype(a), np.dtype(b)
    r = _JOIN[a, b]
    if a in _TO_32BIT or b in _TO_32BIT:
        return r
    return canonicalize_dtype(r)


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """JAX's result dtype for an operation on ``args`` (values, dtypes or scalar
    types). Python scalars are weakly typed; the result is canonicalized.

    ``result_type(int32_array, 2.0)`` is ``float32``; ``result_type(float16_array,
    2.0)`` is ``float16``; ``result_type(int32_array, float16_array)`` is
    ``float16``. With ``return_weak_type_flag=True`` returns ``(dtype, weak)``.
    """
    if not args:
        raise ValueError("at least one array or dtype is required")
    node = _node(args[0])
    for a in args[1:]:
        node = _JOIN[node, _node(a)]
    dt = _materialize(node)
    if return_weak_type_flag:
        return dt, node in _WEAK_NODES
    return dt


#: the weak lattice node of each dtype kind (a weakly typed array promotes as the
#: Python scalar of its kind; a weak bool as a bool, the bottom of the lattice)
_WEAK_NODE_OF_KIND = {"i": _WEAK_INT, "u": _WEAK_INT, "f": _WEAK_FLOAT, "c": _WEAK_COMPLEX}


def weak_promotion(operands: Any) -> Tuple[np.dtype, bool]:
    """JAX's (result dtype, weak type) of an elementwise operation, the one rule
    eager calls (``Primitive.__call__``, the Array operators) and jit's abstract
    values (``optimize/interp.py``) share. ``operands`` are ``(t, weak)`` pairs:
    ``t`` a dtype, an array, or a Python scalar type (``float``: weak by itself),
    ``weak`` whether that operand is weakly typed (``srcjax.Array.weak_type``).

    As JAX's ``dtypes.result_type`` with ``return_weak_type_flag``: the operands
    are joined in the lattice, a weak one as the weak node of its kind (a weak
    float32 array as ``float``), and the result is weak when the join is a weak
    node (``2.5 * int32_array`` is weak float32; ``2.5 * float16_array`` strong
    float16; ``1j * float16_array`` strong complex64). One operand keeps its own
    weak type (``-w``, ``jnp.sin(w)``, ``~b`` for a weak bool ``b``); a join that
    is bool is strong (``b & True``). The dtype is the join, materialized (a weak
    node as the default dtype of its kind)."""
    node = None
    for t, weak in operands:
        n = _node(t)
        if weak and n not in _WEAK_NODES:
            n = _WEAK_NODE_OF_KIND.get(np.dtype(n).kind, n)
        node = n if node is None else _JOIN[node, n]
    if node is None:
        raise ValueError("at least one operand is required")
    if len(operands) == 1:
        return _materialize(node), bool(operands[0][1])
    return _materialize(node), node in _WEAK_NODES


def can_be_weak(dt: Any) -> bool:
    """Whether a result of dtype ``dt`` may be weakly typed: the default dtype of
    its kind (int32, float32, complex64; 64-bit with x64) or bool. A function
    that returns another dtype (``bitwise_count``'s uint8) converted its result
    strongly, as JAX does."""
    d = np.dtype(dt)
    return d.kind == "b" or (
        d.kind in "ifc" and (d == default_float() or d == default_int() or d == default_complex())
    )


def result_type_inexact(*args: Any) -> np.dtype:
    """:func:`result_type` turned into a float/complex dtype (JAX's
    ``promote_args_inexact``): ``int32 / int32 -> float32``."""
    return to_inexact_dtype(result_type(*args))


# -- hot-path fix-ups used by the elementwise primitives ----------------------
#: result dtypes of a binary arithmetic ufunc for which NumPy may disagree with JAX
BINARY_SUSPECT: set = set()
#: result dtypes of a dtype-preserving unary ufunc (neg, abs, floor ...) to fix
UNARY_SUSPECT: set = set()
#: result dtypes of a float-valued unary ufunc (sin, exp ...) to check
INEXACT_SUSPECT: set = set()
#: result dtypes of a float-valued binary ufunc (/, arctan2, logaddexp ...) to check
BINARY_INEXACT_SUSPECT: set = set()


def _refresh(name: str = "jax_enable_x64", value: Any = None) -> None:
    if name != "jax_enable_x64":
        return
    _X64[0] = bool(_config.jax_enable_x64)
    _rebuild_tables()
    wide = {_F64, _I64, _U64, _C128}
    for s in (BINARY_SUSPECT, UNARY_SUSPECT, INEXACT_SUSPECT, BINARY_INEXACT_SUSPECT):
        s.clear()
    if _X64[0]:
        # int32 + float32 -> float64 in NumPy, float32 in JAX; int + complex64 ...
        BINARY_SUSPECT.update({_F64, _C128})
        # sin(int32) -> float64 in NumPy, float32 in JAX; sin(int8) -> float16
        INEXACT_SUSPECT.update({_F16, _F64})
        BINARY_INEXACT_SUSPECT.update({_F16, _F64, _C128})
    else:
        BINARY_SUSPECT.update(wide)
        UNARY_SUSPECT.update(wide)
        INEXACT_SUSPECT.update(wide | {_F16})
        BINARY_INEXACT_SUSPECT.update(wide | {_F16})


_refresh()
_on_change(_refresh)


_PY_SCALARS = (float, int, complex, bool)


def cast(a: Any, dt: np.dtype) -> Any:
    """``a`` converted to ``dt`` (Python and NumPy scalars become NumPy scalars;
    a complex value to a real dtype raises ``TypeError``)."""
    if type(a) in _PY_SCALARS:
        if type(a) is int and dt.kind in "iu":
            info = np.iinfo(dt)
            if not info.min <= a <= info.max:
                # a weakly typed int beyond the array's integer type wraps, as
                # JAX converts it (int8_array * 300 multiplies by 44), unless it
                # does not fit int32 itself (x64 off): JAX's OverflowError
                check_int32_range(a)
                return np.array(a, np.int64).astype(dt)[()]
        return dt.type(a)
    d = getattr(a, "dtype", None)
    if d == dt:
        return a
    if d is not None and d.kind == "c" and dt.kind != "c":
        raise TypeError("would drop an imaginary part")
    return a.astype(dt) if d is not None else np.asarray(a, dtype=dt)


_cast = cast


def _recompute(ufunc: Any, dt: np.dtype, r: Any, args: Tuple[Any, ...]) -> Any:
    """``ufunc(*args)`` computed in dtype ``dt``: the inputs are converted first,
    as JAX converts them before the operation."""
    try:
        out = ufunc(*[_cast(a, dt) for a in args])
        if out.dtype == dt:
            return out
    except (TypeError, ValueError, OverflowError):
        pass
    try:
        return ufunc(*args, dtype=dt)
    except (TypeError, ValueError):
        return r.astype(dt)


def _has_dtype(rd: np.dtype, *xs: Any) -> bool:
    """Whether one of ``xs`` is an array (or NumPy scalar) of dtype ``rd``. (A
    Python scalar has none: ``rd == None`` would be true for float64, which is
    ``np.dtype(None)``.)"""
    for x in xs:
        d = getattr(x, "dtype", None)
        if d is not None and d == rd:
            return True
    return False


def half_mixed(r: Any, x: Any, y: Any) -> bool:
    """Whether a float32 result ``r`` of a binary ufunc comes from a float16 and a
    16-bit integer operand (``int16 + float16``): NumPy says float32, JAX float16
    (the one such pair that :data:`BINARY_SUSPECT` cannot see)."""
    return r.dtype is _F32 and (
        getattr(x, "dtype", None) is _F16 or getattr(y, "dtype", None) is _F16
    )


def fix_binary(ufunc: Any, r: Any, x: Any, y: Any) -> Any:
    """Slow path of a binary ufunc whose result dtype is in ``BINARY_SUSPECT``:
    recompute in JAX's result dtype when NumPy's differs."""
    rd = r.dtype
    if _X64[0] and _has_dtype(rd, x, y):
        return r  # an operand already has the result's 64-bit type
    dt = result_type(x, y)
    if dt == rd:
        return r
    return _recompute(ufunc, dt, r, (x, y))


def fix_binary_inexact(ufunc: Any, r: Any, x: Any, y: Any) -> Any:
    """Slow path of a float-valued binary ufunc (``/``, ``arctan2``): the result
    dtype is ``to_inexact(result_type(x, y))`` (``int32 / int32 -> float32``)."""
    rd = r.dtype
    if _X64[0] and _has_dtype(rd, x, y):
        return r
    dt = to_inexact_dtype(result_type(x, y))
    if dt == rd:
        return r
    return _recompute(ufunc, dt, r, (x, y))


def fix_unary(ufunc: Any, r: Any, x: Any) -> Any:
    """Slow path of a dtype-preserving unary ufunc with a 64-bit result while
    x64 is off: recompute in the canonical dtype."""
    return _recompute(ufunc, canonicalize_dtype(r.dtype), r, (x,))


def fix_inexact(ufunc: Any, r: Any, x: Any) -> Any:
    """Slow path of a float-valued unary ufunc (``sin``, ``exp``): the result
    dtype is ``to_inexact(dtype_of(x))`` (``sin(int32) -> float32``)."""
    rd = r.dtype
    d = getattr(x, "dtype", None)
    if d is not None and d == rd and _X64[0]:
        return r
    dt = to_inexact_dtype(dtype_of(x))
    if dt.kind == "c" and rd.kind == "f":  # abs-like: complex in, real out
        dt = np.dtype(dt.char.lower())
    if dt == rd:
        return r
    return _recompute(ufunc, dt, r, (x,))


_I32_RANGE = np.iinfo(np.int32)
_U32_RANGE = np.iinfo(np.uint32)


def check_int32_range(x: Any) -> None:
    """Raise JAX's OverflowError when integer ``x`` (a Python int or an integer
    array) does not fit the 32-bit type it becomes while x64 is off, instead of
    letting NumPy wrap it around (``jnp.asarray(2**40)`` is an error in JAX, not
    0)."""
    if _X64[0]:
        return
    if isinstance(x, (bool, np.bool_)):
        return
    if isinstance(x, int):
        if not _I32_RANGE.min <= x <= _I32_RANGE.max:
            raise OverflowError(f"Python int {x} too large to convert to int32")
        return
    a = np.asarray(x)
    if a.dtype.kind not in "iu" or a.dtype.itemsize < 8 or a.size == 0:
        return
    info = _U32_RANGE if a.dtype.kind == "u" else _I32_RANGE
    lo, hi = a.min(), a.max()
    if lo < info.min or hi > info.max:
        bad = hi if hi > info.max else lo
        raise OverflowError(
            f"integer {bad} too large to convert to {np.dtype(info.dtype).name} "
            "(64-bit integers need srcjax.config.update('jax_enable_x64', True))"
        )


def canonicalize_value(r: Any) -> Any:
    """``r`` cast to its canonical dtype (64-bit -> 32-bit while x64 is off)."""
    d = getattr(r, "dtype", None)
    if d is None or _X64[0]:
        return r
    c = _TO_32BIT.get(d)
    return r if c is None else r.astype(c)
