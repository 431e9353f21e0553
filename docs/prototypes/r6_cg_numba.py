"""Prototype (not used by srcjax): R6's CG loop as one Numba kernel that calls
NumPy's own gufunc loops (matvec, vecmat, vecdot) through their pointers, with
the elementwise float32 statements as loops. Bit for bit the NumPy loop; numbers
in docs/bench-2026-12-06-r6c.md.

    OPENBLAS_NUM_THREADS=1 python docs/prototypes/r6_cg_numba.py
"""

import ctypes
import time

import numpy as np
from numba import njit


def gufunc_ptr(uf, sig):
    i = uf.types.index(sig)
    word = ctypes.sizeof(ctypes.c_void_p)
    base = id(uf) + object.__basicsize__ + 4 * ctypes.sizeof(ctypes.c_int)
    functions = ctypes.c_void_p.from_address(base).value
    return ctypes.c_void_p.from_address(functions + i * word).value


PROTO = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
MV = PROTO(gufunc_ptr(np.matvec, "ff->f"))
VM = PROTO(gufunc_ptr(np.vecmat, "ff->f"))
VD = PROTO(gufunc_ptr(np.vecdot, "ff->f"))
f32 = np.float32


@njit(nogil=True, cache=False)
def _mv(x, d, out, args, dims, steps):
    # out[p] = x[p] @ d[p]  (matvec: (m,n),(n)->(m))
    args[0] = x.ctypes.data
    args[1] = d.ctypes.data
    args[2] = out.ctypes.data
    dims[0] = x.shape[0]
    dims[1] = x.shape[1]
    dims[2] = x.shape[2]
    steps[0] = x.strides[0]
    steps[1] = d.strides[0]
    steps[2] = out.strides[0]
    steps[3] = x.strides[1]
    steps[4] = x.strides[2]
    steps[5] = d.strides[1]
    steps[6] = out.strides[1]
    MV(args.ctypes.data, dims.ctypes.data, steps.ctypes.data, 0)


@njit(nogil=True, cache=False)
def _vm(g, x, out, args, dims, steps):
    # vecmat: (m),(m,n)->(n): out[p] = g[p] @ x[p]
    args[0] = g.ctypes.data
    args[1] = x.ctypes.data
    args[2] = out.ctypes.data
    dims[0] = x.shape[0]
    dims[1] = x.shape[1]
    dims[2] = x.shape[2]
    steps[0] = g.strides[0]
    steps[1] = x.strides[0]
    steps[2] = out.strides[0]
    steps[3] = g.strides[1]
    steps[4] = x.strides[1]
    steps[5] = x.strides[2]
    steps[6] = out.strides[1]
    VM(args.ctypes.data, dims.ctypes.data, steps.ctypes.data, 0)


@njit(nogil=True, cache=False)
def _vd(a, b, out, args, dims, steps):
    args[0] = a.ctypes.data
    args[1] = b.ctypes.data
    args[2] = out.ctypes.data
    dims[0] = a.shape[0]
    dims[1] = a.shape[1]
    steps[0] = a.strides[0]
    steps[1] = b.strides[0]
    steps[2] = out.strides[0]
    steps[3] = a.strides[1]
    steps[4] = b.strides[1]
    VD(args.ctypes.data, dims.ctypes.data, steps.ctypes.data, 0)


@njit(nogil=True, cache=False)
def cg_loop(x, d, p, r, rr, exp, mul4, mul7, n1, n2, m1, m2, trips):
    P, S, F = x.shape
    args = np.empty(3, np.intp)
    dims = np.empty(3, np.intp)
    steps = np.empty(7, np.intp)
    z = np.empty((P, S), np.float32)
    g = np.empty((P, S), np.float32)
    mrd = np.empty((P, F), np.float32)
    s1 = np.empty(P, np.float32)
    rrn = np.empty(P, np.float32)
    d = d.copy()
    p = p.copy()
    r = r.copy()
    rr = rr.copy()
    add6 = np.empty((P, F), np.float32)
    for _ in range(trips):
        _mv(x, d, z, args, dims, steps)
        for i in range(P):
            for j in range(S):
                zd = z[i, j]
                ld = zd * exp[i, j]
                a = zd if not (n1 and m1[i, j]) else np.float32(0)
                b = ld if not (n2 and m2[i, j]) else np.float32(0)
                g[i, j] = mul7 * ((a - b) * exp[i, j])
        _vm(g, x, mrd, args, dims, steps)
        for i in range(P):
            for k in range(F):
                m15 = mul4 * d[i, k]
                add6[i, k] = (m15 + m15) + mrd[i, k]
        _vd(d, add6, s1, args, dims, steps)
        for i in range(P):
            alpha = rr[i] / s1[i]
            for k in range(F):
                p[i, k] = p[i, k] + alpha * d[i, k]
                r[i, k] = r[i, k] - alpha * add6[i, k]
        _vd(r, r, rrn, args, dims, steps)
        for i in range(P):
            dv = rrn[i] / rr[i]
            for k in range(F):
                d[i, k] = r[i, k] + dv * d[i, k]
            rr[i] = rrn[i]
    return d, p, r, rr


def numpy_loop(x, d, p, r, rr, exp, mul4, mul7, trips):
    for _ in range(trips):
        z_dot = np.matvec(x, d)
        logaddexp_dot = z_dot * exp
        mul15 = mul4 * d
        add3 = mul15 + mul15
        add4 = z_dot - logaddexp_dot
        exp_dot = add4 * exp
        mul17 = mul7 * exp_dot
        mrd = np.vecmat(mul17, x)
        add6 = add3 + mrd
        sum_1 = np.vecdot(d, add6)
        alpha = rr / sum_1
        al = alpha[:, None]
        p = p + al * d
        r = r - al * add6
        rr_new = np.vecdot(r, r)
        div = rr_new / rr
        d = r + div[:, None] * d
        rr = rr_new
    return d, p, r, rr


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 200, 20)).astype(f32)
    w = (rng.standard_normal((16, 20)) * 0.1).astype(f32)
    z = np.matvec(x, w)
    s = (1 / (1 + np.exp(-z))).astype(f32)
    r = rng.standard_normal((16, 20)).astype(f32)
    d = r.copy()
    p = np.zeros_like(r)
    rr = np.vecdot(r, r)
    mul4 = f32(0.005)
    mul7 = f32(0.005)
    m = np.zeros((16, 200), bool)
    a = numpy_loop(x, d, p, r, rr, s, mul4, mul7, 8)
    t0 = time.time()
    b = cg_loop(x, d, p, r, rr, s, mul4, mul7, 0, 0, m, m, 8)
    print("compile", time.time() - t0)
    print("bitwise equal:", all(np.array_equal(u, v) for u, v in zip(a, b)))

    def cpu(fn, n=300):
        out = []
        for _ in range(7):
            t = time.process_time()
            for _ in range(n):
                fn()
            out.append((time.process_time() - t) / n)
        return np.median(out) * 1e6

    for _ in range(2):
        print(
            "numpy 8 trips %.1f us" % cpu(lambda: numpy_loop(x, d, p, r, rr, s, mul4, mul7, 8)),
            "numba 8 trips %.1f us"
            % cpu(lambda: cg_loop(x, d, p, r, rr, s, mul4, mul7, 0, 0, m, m, 8)),
        )
