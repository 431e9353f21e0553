"""NumPy's own generalized-ufunc loops (``matvec``, ``vecmat``, ``vecdot``) called
from Numba kernels on whole arrays.

An array-mode kernel (:mod:`.arrays`) computes R6's ``ad.matvec(x, d)`` as
NumPy's call does, to the bit: it calls the very inner loop ``np.matvec`` runs
for float32 (or float64) operands (which itself picks BLAS or its own loop from
the strides), with the arguments NumPy's iterator passes for arrays of at most
one loop dimension: ``dimensions = [n_outer, core sizes...]`` and ``steps =
[outer strides..., core strides...]``. The loop's address is read from
``PyUFuncObject.functions`` (:func:`.ufuncs.table_pointer`) and checked, once a
process, on small and BLAS-sized stacks against the gufunc itself
(:func:`loop_pointer`): a NumPy whose table reads otherwise raises, and the
kernel keeps NumPy. As with :mod:`.ufuncs`, the address is an argument of the
kernel, so kernels stay in Numba's on-disk cache.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np

from .ufuncs import table_pointer

__all__ = ["CORES", "loop_pointer", "gucalls"]

#: the gufuncs kernels call: each operand's core dimensions (letters), result last
CORES: Dict[str, Tuple[str, str, str]] = {
    "matvec": ("mn", "n", "m"),
    "vecmat": ("n", "nm", "m"),
    "vecdot": ("n", "n", ""),
}
_CODES = {"float32": "f", "float64": "d"}
_POINTERS: Dict[Tuple[str, str], int] = {}


def loop_pointer(name: str, dtype: str) -> int:
    """The address of ``np.<name>``'s inner loop for ``dtype`` operands, checked
    against ``np.<name>`` (``RuntimeError`` when it computes anything else)."""
    got = _POINTERS.get((name, dtype))
    if got is not None:
        return got
    uf = getattr(np, name, None)
    if uf is None or uf.signature is None or name not in CORES:
        raise RuntimeError(f"np.{name} is no gufunc this NumPy has")
    ptr = table_pointer(uf, _CODES[dtype])
    _check(uf, name, ptr, np.dtype(dtype))
    _POINTERS[(name, dtype)] = ptr
    return ptr


def layout(core: Tuple[str, ...], shapes: list, strides: list) -> Tuple[list, list]:
    """``(dimensions, steps)`` of one call of a gufunc's loop over operands of
    ``shapes``/``strides`` (at most one loop dimension, leading, the same for all)."""
    outer = len(shapes[0]) - len(core[0])
    dims = [shapes[0][0] if outer else 1]
    seen = ""
    for c, shape in zip(core, shapes):
        for q, letter in enumerate(c):
            if letter not in seen:
                seen += letter
                dims.append(shape[outer + q])
    steps = [st[0] if outer else 0 for st in strides]
    for c, st in zip(core, strides):
        steps.extend(st[outer + q] for q in range(len(c)))
    return dims, steps


def _check(uf: Any, name: str, ptr: int, dt: np.dtype) -> None:
    """Call the loop at ``ptr`` as :func:`gucalls` does on a few stacks (one small,
    one large enough for BLAS, one without a loop dimension) and compare with ``uf``."""
    import ctypes

    loop = ctypes.CFUNCTYPE(
        None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p
    )(ptr)
    rng = np.random.default_rng(7)
    core = CORES[name]
    for outer, size in (((3,), 5), ((2,), 67), ((), 9)):
        sizes = {"m": size + 2, "n": size}
        ops = [rng.standard_normal(outer + tuple(sizes[x] for x in c)).astype(dt) for c in core[:2]]
        with np.errstate(all="ignore"):
            want = uf(*ops)
        out = np.full(want.shape, np.nan, dt)
        arrs = ops + [out]
        dims, steps = layout(core, [a.shape for a in arrs], [a.strides for a in arrs])
        args = (ctypes.c_void_p * 3)(*[a.ctypes.data for a in arrs])
        cd = (ctypes.c_ssize_t * len(dims))(*dims)
        cs = (ctypes.c_ssize_t * len(steps))(*steps)
        loop(args, cd, cs, None)
        if not np.array_equal(out, want):
            raise RuntimeError(f"np.{name}'s loop read here computes another thing")


_GUCALLS: Dict[str, Any] = {}


def gucalls(*names: str) -> Tuple[Any, ...]:
    """The intrinsics ``gu(ptr, a, b, out)`` of the gufuncs ``names``: NumPy's loop
    at ``ptr`` over arrays ``a``, ``b`` into ``out`` (one dtype, float32 or float64;
    at most one loop dimension, leading; shapes checked by the kernel's planner)."""
    from numba.extending import intrinsic

    for name in names:
        if name not in _GUCALLS:
            _GUCALLS[name] = intrinsic(_intrinsic(CORES[name]))
    return tuple(_GUCALLS[n] for n in names)


def _intrinsic(core: Tuple[str, ...]) -> Any:
    def gu(typingctx: Any, ptr: Any, a: Any, b: Any, out: Any) -> Any:
        return _typed(core, ptr, (a, b, out))

    return gu


def _typed(core: Tuple[str, ...], ptr: Any, arrs: Tuple[Any, ...]) -> Any:
    from llvmlite import ir
    from numba.core import cgutils, types

    if not isinstance(ptr, types.Integer) or not all(isinstance(a, types.Array) for a in arrs):
        return None
    dt = arrs[0].dtype
    if dt not in (types.float32, types.float64) or any(a.dtype != dt for a in arrs):
        return None
    outer = arrs[0].ndim - len(core[0])
    if outer not in (0, 1) or any(a.ndim - len(c) != outer for a, c in zip(arrs, core)):
        return None
    sig = types.none(ptr, *arrs)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        intp = context.get_value_type(types.intp)
        i8p = ir.IntType(8).as_pointer()
        shapes, strides, data = [], [], []
        for t, v in zip(arrs, args[1:]):
            s = context.make_array(t)(context, builder, v)
            shapes.append(cgutils.unpack_tuple(builder, s.shape, t.ndim))
            strides.append(cgutils.unpack_tuple(builder, s.strides, t.ndim))
            data.append(builder.bitcast(s.data, i8p))
        dims, steps = layout(core, shapes, strides)
        dims = [d if isinstance(d, ir.Value) else ir.Constant(intp, d) for d in dims]
        steps = [s if isinstance(s, ir.Value) else ir.Constant(intp, s) for s in steps]

        def stack(ty: Any, values: list) -> Any:
            buf = cgutils.alloca_once(builder, ty, size=len(values))
            for j, v in enumerate(values):
                builder.store(v, builder.gep(buf, [ir.Constant(ir.IntType(32), j)]))
            return buf

        argv, dv, sv = stack(i8p, data), stack(intp, dims), stack(intp, steps)
        fnty = ir.FunctionType(
            ir.VoidType(), [i8p.as_pointer(), intp.as_pointer(), intp.as_pointer(), i8p]
        )
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        builder.call(fn, [argv, dv, sv, ir.Constant(i8p, None)])
        return context.get_dummy_value()

    return sig, codegen
