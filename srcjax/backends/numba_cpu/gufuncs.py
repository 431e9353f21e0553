"""NumPy's own generalized-ufunc loops (``matvec``, ``vecmat``, ``vecdot``, ``matmul``) called
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

#: the gufuncs kernels call: each operand's core dimensions (letters), result last;
#: np.matmul by operand ranks, an upper-case letter a dimension the operand lacks
#: (matmul's optional ``n?``/``m?``: size 1, stride 0, as NumPy passes them)
CORES: Dict[str, Tuple[str, str, str]] = {
    "matvec": ("mn", "n", "m"),
    "vecmat": ("n", "nm", "m"),
    "vecdot": ("n", "n", ""),
    "matmul": ("nk", "km", "nm"),
    "matmul_vm": ("Nk", "km", "Nm"),
    "matmul_mv": ("nk", "kM", "nM"),
    "matmul_vv": ("Nk", "kM", "NM"),
}
#: the NumPy gufunc of each entry of :data:`CORES` (default: its own name)
_GUFUNC = {"matmul_vm": "matmul", "matmul_mv": "matmul", "matmul_vv": "matmul"}
_CODES = {"float32": "f", "float64": "d"}
_POINTERS: Dict[Tuple[str, str], int] = {}


def loop_pointer(name: str, dtype: str) -> int:
    """The address of ``np.<name>``'s inner loop for ``dtype`` operands, checked
    against ``np.<name>`` (``RuntimeError`` when it computes anything else)."""
    got = _POINTERS.get((name, dtype))
    if got is not None:
        return got
    uf = getattr(np, _GUFUNC.get(name, name), None)
    if uf is None or uf.signature is None or name not in CORES:
        raise RuntimeError(f"np.{name} is no gufunc this NumPy has")
    ptr = table_pointer(uf, _CODES[dtype])
    _check(uf, name, ptr, np.dtype(dtype))
    _POINTERS[(name, dtype)] = ptr
    return ptr


def present(c: str) -> str:
    """The core dimensions an operand has (:data:`CORES`' lower-case letters)."""
    return "".join(x for x in c if x.islower())


def _stride(shape: Any, stride: Any) -> Any:
    return 0 if shape == 1 else stride


def layout(
    core: Tuple[str, ...], shapes: list, strides: list, pick: Any = _stride
) -> Tuple[list, list]:
    """``(dimensions, steps)`` of one call of a gufunc's loop over operands of
    ``shapes``/``strides`` (at most one loop dimension, leading, the same for all),
    as NumPy's gufunc call passes them: a core dimension of size 1, or one the
    operand lacks, has stride 0 (``pick(size, stride)``: the stride passed)."""
    outer = len(shapes[0]) - len(present(core[0]))
    dims = [shapes[0][0] if outer else 1]
    steps = [st[0] if outer else 0 for st in strides]
    seen = ""
    for c, shape in zip(core, shapes):
        q = outer
        for letter in c:
            if letter.lower() not in seen:
                seen += letter.lower()
                dims.append(shape[q] if letter.islower() else 1)
            q += letter.islower()
    for c, shape, st in zip(core, shapes, strides):
        q = outer
        for letter in c:
            steps.append(pick(shape[q], st[q]) if letter.islower() else 0)
            q += letter.islower()
    return dims, steps


def _check(uf: Any, name: str, ptr: int, dt: np.dtype) -> None:
    """Call the loop at ``ptr`` as :func:`gucalls` does on a few stacks (small, large
    enough for BLAS, without a loop dimension, with core dimensions of size 1) and
    compare with ``uf``."""
    import ctypes

    loop = ctypes.CFUNCTYPE(
        None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p
    )(ptr)
    rng = np.random.default_rng(7)
    core = CORES[name]
    for outer, size in (((3,), 5), ((2,), 67), ((), 9), ((), 70), ((2,), 1), ((), 1)):
        if outer and name in _GUFUNC:
            continue  # (a stack of vectors is no matmul operand)
        sizes = {"m": size + 2, "n": size, "k": size + 1}
        shapes = [outer + tuple(sizes[x] for x in present(c)) for c in core[:2]]
        ops = [rng.standard_normal(shape).astype(dt) for shape in shapes]
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
    outer = arrs[0].ndim - len(present(core[0]))
    if outer not in (0, 1) or any(a.ndim - len(present(c)) != outer for a, c in zip(arrs, core)):
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
        one, zero = ir.Constant(intp, 1), ir.Constant(intp, 0)

        def pick(size: Any, stride: Any) -> Any:
            return builder.select(builder.icmp_signed("==", size, one), zero, stride)

        dims, steps = layout(core, shapes, strides, pick)
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
