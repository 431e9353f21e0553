"""NumPy's own ufunc loops called from Numba kernels, one element at a time.

NumPy computes ``sin``, ``exp``, ``tanh``, ``arctan2``... of float32 and float64
with its own SIMD code (and SVML where the CPU has AVX-512), which differs from
the C library's ``sinf``/``exp`` that Numba calls by an ulp here and there
(thousands of 20,000 random inputs for most float32 functions). A jitted loop
that runs first as NumPy code and later as a Numba kernel (tiered compilation,
:mod:`.tiers`) must give the same numbers in both tiers, so a kernel calls the
very loop NumPy's ufunc runs: :func:`loop_pointer` reads it from the ufunc's
table of loops (``PyUFuncObject.functions``, checked against calls of the ufunc
before use), and the intrinsics of :func:`ufcalls` call it for one element
(``dimensions = {1}``), its operands and result in stack slots.

The pointer is an argument of the kernel, never a constant in its code, so
kernels stay in Numba's on-disk cache across processes (addresses move).
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np

__all__ = ["loop_pointer", "table_pointer", "ufcalls", "LOOPED"]

#: functions whose NumPy loops differ from the C library's (IEEE-exact ones and hypot,
#: sqrt/abs/floor/ceil/maximum/minimum/square/negative, stay Numba's own)
LOOPED = frozenset(
    "sin cos tan arcsin arccos arctan sinh cosh tanh exp expm1 log log1p arctan2".split()
)
_CODES = {"float32": "f", "float64": "d"}
_POINTERS: Dict[Tuple[str, str], int] = {}


def loop_pointer(name: str, dtype: str) -> int:
    """The address of ``np.<name>``'s inner loop for ``dtype`` operands; checked
    against the ufunc on a few values (raises ``RuntimeError`` when this NumPy's
    layout is not the one read here)."""
    got = _POINTERS.get((name, dtype))
    if got is not None:
        return got
    uf = getattr(np, name)
    ptr = table_pointer(uf, _CODES[dtype])
    _check(uf, ptr, np.dtype(dtype))
    _POINTERS[(name, dtype)] = ptr
    return ptr


def table_pointer(uf: Any, c: str) -> int:
    """The address of ``uf``'s inner loop for operands and result of type code
    ``c``, read from ``PyUFuncObject.functions`` (the caller checks what it
    computes; raises ``RuntimeError`` when the table is not laid out as read here)."""
    import ctypes

    sig = c * uf.nin + "->" + c
    if sig not in uf.types:
        raise RuntimeError(f"np.{uf.__name__} has no {sig} loop")
    name = uf.__name__
    i = uf.types.index(sig)
    word = ctypes.sizeof(ctypes.c_void_p)
    base = id(uf) + object.__basicsize__ + 4 * ctypes.sizeof(ctypes.c_int)
    functions = ctypes.c_void_p.from_address(base).value
    data = ctypes.c_void_p.from_address(base + word).value
    ntypes = ctypes.c_int.from_address(base + 2 * word).value
    if ntypes != uf.ntypes or not functions:
        raise RuntimeError(f"np.{name}: an unknown ufunc layout")
    if data and ctypes.c_void_p.from_address(data + i * word).value:
        raise RuntimeError(f"np.{name}: its {sig} loop takes data")
    return ctypes.c_void_p.from_address(functions + i * word).value


def _check(uf: Any, ptr: int, dt: np.dtype) -> None:
    import ctypes

    loop = ctypes.CFUNCTYPE(
        None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p
    )(ptr)
    xs = np.array([0.3, -1.7, 2.5, 0.0, 1e-3, 0.9], dt)
    ys = np.array([1.1, 0.4, -2.0, 3.0, 0.7, 0.2], dt)
    ops = [xs, ys][: uf.nin]
    out = np.empty_like(xs)
    args = (ctypes.c_void_p * (uf.nin + 1))(*[a.ctypes.data for a in ops], out.ctypes.data)
    dims = (ctypes.c_ssize_t * 1)(len(xs))
    steps = (ctypes.c_ssize_t * (uf.nin + 1))(*[dt.itemsize] * (uf.nin + 1))
    with np.errstate(all="ignore"):
        loop(args, dims, steps, None)
        want = uf(*ops)
    if not np.array_equal(out, want, equal_nan=True):
        raise RuntimeError(f"np.{uf.__name__}'s loop read here computes another thing")


_UFCALLS = None


def ufcalls() -> Any:
    """The intrinsics ``(ufcall1, ufcall2, ufmap1, ufmap2)``: ``ufcall1(ptr, x)``/
    ``ufcall2(ptr, x, y)`` is NumPy's loop at ``ptr`` applied to one float32 or
    float64 element (operands of one dtype); ``ufmap1(ptr, xs)``/``ufmap2(ptr,
    xs, ys)`` to the elements of equally long tuples, in one call."""
    global _UFCALLS
    if _UFCALLS is None:
        from numba.extending import intrinsic

        @intrinsic
        def ufcall1(typingctx: Any, ptr: Any, x: Any) -> Any:
            return _typed(ptr, (x,))

        @intrinsic
        def ufcall2(typingctx: Any, ptr: Any, x: Any, y: Any) -> Any:
            return _typed(ptr, (x, y))

        @intrinsic
        def ufmap1(typingctx: Any, ptr: Any, xs: Any) -> Any:
            return _typed(ptr, (xs,), many=True)

        @intrinsic
        def ufmap2(typingctx: Any, ptr: Any, xs: Any, ys: Any) -> Any:
            return _typed(ptr, (xs, ys), many=True)

        _UFCALLS = (ufcall1, ufcall2, ufmap1, ufmap2)
    return _UFCALLS


def _typed(ptr: Any, xs: Tuple[Any, ...], many: bool = False) -> Any:
    """The signature and code of one call of NumPy's loop at ``ptr``: on scalars
    ``xs`` (one element), or with ``many`` on tuples of ``n`` elements each (one
    call over ``n`` elements, as NumPy's own call on the array; a tuple back)."""
    from llvmlite import ir
    from numba.core import cgutils, types

    if not isinstance(ptr, types.Integer):
        return None
    n = 1
    if many:
        if not all(isinstance(x, types.UniTuple) and x == xs[0] for x in xs):
            return None
        n, ty = xs[0].count, xs[0].dtype
        res = xs[0]
    else:
        if any(x != xs[0] for x in xs):
            return None
        ty = res = xs[0]
    if ty not in (types.float32, types.float64):
        return None
    sig = res(ptr, *xs)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        ft = context.get_value_type(ty)
        intp = context.get_value_type(types.intp)
        i8p = ir.IntType(8).as_pointer()
        k = len(xs) + 1
        argv = cgutils.alloca_once(builder, i8p, size=k)
        steps = cgutils.alloca_once(builder, intp, size=k)
        dims = cgutils.alloca_once(builder, intp)
        builder.store(ir.Constant(intp, n), dims)
        bufs = [cgutils.alloca_once(builder, ft, size=n) for _ in range(k)]
        for b, v in zip(bufs, args[1:]):
            for j in range(n):
                item = builder.extract_value(v, j) if many else v
                builder.store(item, builder.gep(b, [ir.Constant(ir.IntType(32), j)]))
        size = ir.Constant(intp, 4 if ty == types.float32 else 8)
        for j in range(k):
            at = ir.Constant(ir.IntType(32), j)
            builder.store(builder.bitcast(bufs[j], i8p), builder.gep(argv, [at]))
            builder.store(size, builder.gep(steps, [at]))
        fnty = ir.FunctionType(
            ir.VoidType(), [i8p.as_pointer(), intp.as_pointer(), intp.as_pointer(), i8p]
        )
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        builder.call(fn, [argv, dims, steps, ir.Constant(i8p, None)])
        out = [
            builder.load(builder.gep(bufs[-1], [ir.Constant(ir.IntType(32), j)])) for j in range(n)
        ]
        return context.make_tuple(builder, res, out) if many else out[0]

    return sig, codegen
