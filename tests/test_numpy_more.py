"""jax.numpy breadth (srcjax/numpy/_more/): JAX functions srcjax lacked.

Expected values: recorded from JAX 0.10.2 (CPU) into ``data/numpy_more_jax.npz``
by running the ``_compute_*`` functions below with ``jax``
(``SRCJAX_RECORD_JAX=1 pytest tests/test_numpy_more.py`` re-records); the same
functions run with srcjax must give the same shapes, dtypes and values
(derivatives included). Derivatives also against float64 finite differences,
vmap against Python loops, jit against eager.
"""

# ruff: noqa: E501, E731
from __future__ import annotations

import pathlib

import numpy as np
import pytest
from helpers import assert_matches_recorded, fd_grad, jax_recorded

import srcjax
import srcjax.numpy as jnp

RECORDED = pathlib.Path(__file__).parent / "data" / "numpy_more_jax.npz"

F = np.float32
X = np.array([[1.5, np.nan, 2.0, 0.5], [np.nan, -0.5, 3.0, 7.0], [np.nan] * 4], F)
V = np.array([0.3, -1.2, 2.5, 0.7, 1.1], F)
W = np.array([1.0, 0.5, -2.0], F)
A2 = np.array([[3.0, 1.0, 2.0, 5.0, 4.0, 1.0], [0.0, -1.0, 7.0, 7.0, 2.0, 3.0]], F)
V2 = np.array([0.3, -1.2, 2.5, 0.7, 1.1], F)


def _compute_a(jnp, jax):
    r = {}
    r["aeq1"] = jnp.array_equal(V, V)
    r["aeq2"] = jnp.array_equal(V, V[:3])
    r["aeq3"] = jnp.array_equal(X, X, equal_nan=True)
    r["aeq4"] = jnp.array_equal(X, X)
    r["aeqv1"] = jnp.array_equiv(np.ones((2, 3)), np.ones(3))
    r["aeqv2"] = jnp.array_equiv(np.ones((2, 3)), np.ones(2))
    r["isreal"] = jnp.isreal(np.array([1 + 0j, 1j, 2], np.complex64))
    r["iscomplex"] = jnp.iscomplex(np.array([1 + 0j, 1j, 2], np.complex64))
    r["isreal_f"] = jnp.isreal(V)
    r["bshape"] = np.array(jnp.broadcast_shapes((2, 1), (3,), 1))
    ba = jnp.broadcast_arrays(V[:, None], W, 2.0)
    for i, b in enumerate(ba):
        r[f"barr{i}"] = b
    for nm in ("nanmedian",):
        r["nmed"] = jnp.nanmedian(X)
        r["nmed1"] = jnp.nanmedian(X, axis=1)
        r["nmed0k"] = jnp.nanmedian(X, axis=0, keepdims=True)
    for m in ("linear", "lower", "higher", "midpoint", "nearest"):
        r["nq_" + m] = jnp.nanquantile(X, np.array([0.1, 0.5, 0.9], F), axis=1, method=m)
    r["nq_f16"] = jnp.nanquantile(X.astype(np.float16), 0.3, axis=1)
    r["nq_f16m"] = jnp.nanquantile(X.astype(np.float16), 0.3, axis=1, method="lower")
    r["nq_f16s"] = jnp.nanquantile(X.astype(np.float16), np.array([0.3, 0.7], F), axis=1)
    r["nq_iq"] = jnp.nanquantile(np.arange(4), np.array(0.3, F))
    r["nq_int"] = jnp.nanquantile(np.arange(10).reshape(2, 5), 0.3, axis=1)
    r["nq_tuple"] = jnp.nanquantile(X, 0.25, axis=(0, 1))
    r["nq_keep"] = jnp.nanquantile(X, np.array([0.2, 0.6], F), axis=1, keepdims=True)
    r["npct"] = jnp.nanpercentile(X, 40, axis=1)
    r["npct2"] = jnp.nanpercentile(X, np.array([10.0, 95.0], F))
    r["corr"] = jnp.corrcoef(np.array([[1.0, 2, 3, 4], [2, 1, 4, 3], [0, 1, 0, 2]], F))
    r["corr_xy"] = jnp.corrcoef(V, V**2)
    r["corr_1"] = jnp.corrcoef(V)
    for mode in ("valid", "same", "full"):
        r["corrl_" + mode] = jnp.correlate(V, W, mode)
        r["corrl_sw_" + mode] = jnp.correlate(W, V, mode)
        r["corrl_e_" + mode] = jnp.correlate(V[:4], np.array([1.0, 2, 3, 4], F), mode)
        r["corrl_e2_" + mode] = jnp.correlate(V[:4], np.array([1.0, 2], F), mode)
    r["corrl_c"] = jnp.correlate(
        np.array([1 + 1j, 2, 3j], np.complex64), np.array([1j, 1], np.complex64), "full"
    )
    r["corrl_i"] = jnp.correlate(np.array([1, 2, 3]), np.array([1, 1]))
    r["grad1"] = jnp.gradient(V)
    r["grad_h"] = jnp.gradient(V, 0.5)
    r["grad_x"] = jnp.gradient(V, np.array([0.0, 1, 1.5, 3, 4.5], F))
    g = jnp.gradient(X[:2, :3] * 0 + np.arange(6, dtype=F).reshape(2, 3) ** 2)
    r["grad2a"], r["grad2b"] = g
    r["grad2ax"] = jnp.gradient(np.arange(12, dtype=F).reshape(3, 4) ** 2, 2.0, axis=1)
    r["grad2both"] = jnp.gradient(
        np.arange(12, dtype=F).reshape(3, 4) ** 2, 2.0, np.array([0, 1, 3, 4], F)
    )[1]
    r["grad_int"] = jnp.gradient(np.array([1, 4, 9, 16]))
    r["geom"] = jnp.geomspace(1, 1000, 4)
    r["geom2"] = jnp.geomspace(-2.0, -32.0, 5, endpoint=False)
    r["geom3"] = jnp.geomspace(np.array([1.0, 2], F), np.array([100.0, 50], F), 3, axis=1)
    r["geom_int"] = jnp.geomspace(1, 256, 9, dtype=np.int32)
    r["ind"] = jnp.indices((2, 3))
    s0, s1 = jnp.indices((2, 3), sparse=True)
    r["inds0"] = s0
    r["inds1"] = s1
    r["ind_f"] = jnp.indices((2,), dtype=np.float32)
    r["diagflat"] = jnp.diagflat(np.array([[1, 2], [3, 4]], F), 1)
    r["diagflat2"] = jnp.diagflat(V[:3], -2)
    r["vander"] = jnp.vander(V[:4])
    r["vander2"] = jnp.vander(np.array([1, 2, 3]), 5, increasing=True)
    u = jnp.unravel_index(np.array([0, 5, 11, 12, -1, -3, 40]), (3, 4))
    r["unr0"], r["unr1"] = u
    r["unr_s"] = jnp.unravel_index(7, (3, 4))[1]
    r["rmi"] = jnp.ravel_multi_index((np.array([0, 1, 2]), np.array([3, 0, 1])), (3, 4))
    r["rmi_F"] = jnp.ravel_multi_index(
        (np.array([0, 1, 2]), np.array([3, 0, 1])), (3, 4), order="F"
    )
    r["rmi_clip"] = jnp.ravel_multi_index(
        (np.array([0, 5, -2]), np.array([3, 0, 9])), (3, 4), mode="clip"
    )
    r["rmi_wrap"] = jnp.ravel_multi_index(
        (np.array([0, 5, -2]), np.array([3, 0, 9])), (3, 4), mode="wrap"
    )
    A = np.arange(12, dtype=F).reshape(3, 4)
    r["ins1"] = jnp.insert(A, 1, 99.0, axis=1)
    r["ins2"] = jnp.insert(A, np.array([0, 2, 2, 4]), np.array([-1.0, -2, -3, -4], F), axis=1)
    r["ins3"] = jnp.insert(A, 2, np.array([7.0, 8, 9, 10], F), axis=0)
    r["ins4"] = jnp.insert(V, slice(1, 4), 0.0)
    r["ins5"] = jnp.insert(A, np.array([1]), np.array([[5.0], [6], [7]], F), axis=1)
    r["ins6"] = jnp.insert(A, -1, 1)
    r["del1"] = jnp.delete(A, 1, axis=1)
    r["del2"] = jnp.delete(A, np.array([0, 2, 2]), axis=1)
    r["del3"] = jnp.delete(A, slice(0, 4, 2))
    r["del4"] = jnp.delete(A, np.array([True, False, True]), axis=0)
    r["del5"] = jnp.delete(A, np.array([3, 0, -1]), axis=1, assume_unique_indices=True)
    r["del6"] = jnp.delete(V, -2)
    r["gcd"] = jnp.gcd(np.array([12, 18, -24, 0, 0, 7]), np.array([8, 0, 36, 0, 5, 13]))
    r["gcd_b"] = jnp.gcd(np.array([[12], [9]]), np.array([6, 15, 4]))
    r["gcd_s"] = jnp.gcd(12, 18)
    r["lcm"] = jnp.lcm(np.array([12, 18, -24, 0, 0, 7]), np.array([8, 0, 36, 0, 5, 13]))
    Z = np.array([0.0, 1.0, -2.0, 3.5, 1e-30, -0.3, np.inf, -np.inf, np.nan, 6e37], F)
    m, e = jnp.frexp(Z)
    r["frexp_m"] = m
    r["frexp_e"] = e
    m, e = jnp.frexp(np.array([1, 8, -3]))
    r["frexp_im"] = m
    r["frexp_ie"] = e
    r["ldexp"] = jnp.ldexp(Z, np.array([1, 3, -2, 0, 100, -130, 2, 1, 1, 5], np.int32))
    r["ldexp2"] = jnp.ldexp(np.array([1.5, 3.0], F), 200)
    r["ldexp3"] = jnp.ldexp(np.array([1, 3]), np.array([2, -1]))
    fr, wh = jnp.modf(np.array([-3.4, -5.7, 0.6, 1.5, -0.0, np.inf], F))
    r["modf_f"] = fr
    r["modf_w"] = wh
    fr, wh = jnp.modf(np.array([3, -2]))
    r["modf_if"] = fr
    r["nextafter"] = jnp.nextafter(
        np.array([0.0, 1.0, -1.0, 2.0], F), np.array([1.0, 2.0, -2.0, 2.0], F)
    )
    r["nextafter_i"] = jnp.nextafter(1, 2)
    r["nextafter_w"] = jnp.nextafter(np.float16(1.0), 2.0)
    r["spacing"] = jnp.spacing(np.array([0.0, 0.25, 1.0, -1.0, 1e30, -0.0, np.inf], F))
    r["spacing16"] = jnp.spacing(np.array([0.0, 1.0, -1.0], np.float16))
    r["spacing_i"] = jnp.spacing(np.array([1, 3]))
    r["i0"] = jnp.i0(np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 10.0], F))
    r["i0_i"] = jnp.i0(np.array([-2, 0, 3]))
    r["i0_16"] = jnp.i0(np.array([0.5, 1.5], np.float16))
    # derivatives
    r["g_nmed"] = jax.grad(lambda x: jnp.sum(jnp.nanmedian(x, axis=1) ** 2))(
        np.nan_to_num(X, nan=0.0) + np.arange(12, dtype=F).reshape(3, 4) * 0.1
    )
    r["g_nq"] = jax.grad(lambda x: jnp.sum(jnp.nanquantile(x, 0.3, axis=1)))(X)
    r["g_nq_q"] = jax.grad(lambda q: jnp.sum(jnp.nanquantile(X, q, axis=1)))(F(0.3))
    r["g_corrl"] = jax.grad(
        lambda a, v: jnp.sum(jnp.correlate(a, v, "same") * np.arange(5, dtype=F)), argnums=(0, 1)
    )(V, W)[1]
    r["g_grad"] = jax.grad(
        lambda x: jnp.sum(jnp.gradient(x, np.array([0.0, 1, 1.5, 3, 4.5], F)) ** 2)
    )(V)
    r["g_i0"] = jax.vmap(jax.grad(jnp.i0))(np.array([-2.0, -1.0, 0.0, 1.0, 2.0], F))
    r["g_i0_2"] = jax.vmap(jax.grad(jax.grad(jnp.i0)))(np.array([-2.0, 0.5, 1.0, 2.0], F))
    r["g_frexp"] = jax.vmap(jax.grad(lambda x: jnp.frexp(x)[0]))(np.array([0.3, 3.0, -5.0, 1.0], F))
    r["g_ldexp"] = jax.vmap(jax.grad(lambda x: jnp.ldexp(x, 3)))(np.array([0.3, 3.0, -5.0, 1.0], F))
    r["g_modf"] = jax.vmap(jax.grad(lambda x: jnp.modf(x)[0]))(np.array([0.3, 3.5, -5.2], F))
    r["g_ins"] = jax.grad(
        lambda a, v: jnp.sum(
            jnp.insert(a, np.array([0, 2, 2]), v, axis=1) * np.arange(21, dtype=F).reshape(3, 7)
        ),
        argnums=(0, 1),
    )(A, np.array([1.0, 2, 3], F))[1]
    r["g_del"] = jax.grad(lambda a: jnp.sum(jnp.delete(a, np.array([0, 2, 2]), axis=1) ** 2))(A)
    r["g_vander"] = jax.grad(lambda x: jnp.sum(jnp.vander(x, 4)))(np.array([0.5, 1.5, -2.0], F))
    r["g_geom"] = jax.grad(lambda a, b: jnp.sum(jnp.geomspace(a, b, 5)), argnums=(0, 1))(
        F(2.0), F(50.0)
    )[1]
    r["g_corrcoef"] = jax.grad(lambda x: jnp.sum(jnp.corrcoef(x) * (1 - np.eye(3, dtype=F))))(
        np.array([[1.0, 2, 3, 4], [2, 1, 4, 3], [0, 1, 0, 2]], F)
    )
    return r


def _compute_b(jnp, jax):
    r = {}
    for k in (0, 2, 5, -1):
        r[f"part{k}"] = jnp.partition(A2, k)
        r[f"apart{k}"] = jnp.argpartition(A2, k)
    r["part_ax0"] = jnp.partition(A2, 1, axis=0)
    r["apart_ax0"] = jnp.argpartition(A2, 0, axis=0)
    r["part_u"] = jnp.partition(np.array([3, 0, 2, 255, 1], np.uint8), 2)
    r["apart_i"] = jnp.argpartition(np.array([3, 0, 2, 2, 1, 2]), 2)
    r["resize"] = jnp.resize(V2, (3, 4))
    r["resize2"] = jnp.resize(A2, 4)
    r["rollaxis"] = jnp.rollaxis(np.zeros((2, 3, 4, 5), F), 3, 1)
    r["rollaxis2"] = jnp.rollaxis(np.zeros((2, 3, 4, 5), F), 0, 3)
    r["trim"] = jnp.trim_zeros(np.array([0, 0, 1, 2, 0, 3, 0]))
    r["trim_f"] = jnp.trim_zeros(np.array([0, 0, 1, 2, 0, 3, 0.0]), "f")
    r["trim_2d"] = jnp.trim_zeros(np.array([[0, 0, 0], [0, 1, 0], [0, 0, 2], [0, 0, 0]]))
    r["trim_all0"] = jnp.trim_zeros(np.zeros(3))
    ph = np.array([0.0, 3.0, 6.5, 0.2, -3.5, 1.0], F)
    r["unwrap"] = jnp.unwrap(ph)
    r["unwrap2"] = jnp.unwrap(ph.reshape(2, 3), axis=0, discont=2.0)
    r["unwrap_p"] = jnp.unwrap(np.array([0, 5, 9, 2, 7]), period=8)
    r["tril_from0"], r["tril_from1"] = jnp.tril_indices_from(np.zeros((3, 4)), 1)
    r["triu_from0"], r["triu_from1"] = jnp.triu_indices_from(np.zeros((4, 3)), -1)
    r["diag_from0"], r["diag_from1"], r["diag_from2"] = jnp.diag_indices_from(np.zeros((3, 3, 3)))
    r["mask_ind0"], r["mask_ind1"] = jnp.mask_indices(3, jnp.triu, 1)
    r["mask_indsz0"], _ = jnp.mask_indices(3, jnp.triu, 0, size=8)
    cs = [
        np.arange(6, dtype=F).reshape(2, 3),
        np.full((2, 3), -1.0, F),
        np.array([10.0, 20, 30], F),
    ]
    r["choose"] = jnp.choose(np.array([[0, 1, 2], [2, 1, 0]]), cs)
    r["choose_wrap"] = jnp.choose(np.array([[0, 4, -1], [2, 1, 0]]), cs, mode="wrap")
    r["choose_clip"] = jnp.choose(np.array([[0, 4, -1], [2, 1, 0]]), cs, mode="clip")
    cond = np.array([True, False, True])
    r["compress"] = jnp.compress(cond, A2, axis=1)
    r["compress0"] = jnp.compress(np.array([False, True]), A2, axis=0)
    r["compress_n"] = jnp.compress(cond, A2)
    r["compress_sz"] = jnp.compress(
        np.array([False, True, True, False, True, False]), A2, axis=1, size=4, fill_value=-9
    )
    r["extract"] = jnp.extract(A2 > 2, A2)
    r["extract_sz"] = jnp.extract(A2 > 2, A2, size=6, fill_value=0.5)
    r["place"] = jnp.place(A2, A2 > 2, np.array([10.0, 20.0], F), inplace=False)
    r["place1"] = jnp.place(A2, A2 < 0, 9.0, inplace=False)
    r["put"] = jnp.put(A2, np.array([0, 5, 7]), np.array([-1.0, -2.0], F), inplace=False)
    r["put_oob"] = jnp.put(
        A2, np.array([-1, 100, -20, 3]), np.array([-1.0, -2.0, -3.0, -4.0], F), inplace=False
    )
    r["put_clip"] = jnp.put(
        A2, np.array([-1, 100]), np.array([-1.0, -2.0], F), mode="clip", inplace=False
    )
    r["put_wrap"] = jnp.put(
        A2, np.array([-1, 13]), np.array([-1.0, -2.0], F), mode="wrap", inplace=False
    )
    idx = np.array([[0, 2], [5, 1]])
    r["pal"] = jnp.put_along_axis(
        A2, idx, np.array([[100.0, 200.0], [300.0, 400.0]], F), axis=1, inplace=False
    )
    r["pal0"] = jnp.put_along_axis(A2, np.array([[1, 0, 1, 0, 1, 0]]), 0.5, axis=0, inplace=False)
    r["pal_none"] = jnp.put_along_axis(A2, np.array([3, -1]), 7.0, axis=None, inplace=False)
    r["cprod"] = jnp.cumulative_prod(np.array([1.0, 2, 3, 4], F))
    r["cprod_ax"] = jnp.cumulative_prod(A2, axis=1, include_initial=True)
    r["cprod_i8"] = jnp.cumulative_prod(np.array([1, 2, 3], np.int8))
    r["cprod_dt"] = jnp.cumulative_prod(np.array([1, 2, 3], np.int32), dtype=np.float32)
    M = np.arange(24, dtype=F).reshape(2, 3, 4) / 7
    r["matvec"] = jnp.matvec(M, np.arange(4, dtype=F))
    r["matvec_b"] = jnp.matvec(M[0], np.arange(8, dtype=F).reshape(2, 4))
    r["vecmat"] = jnp.vecmat(np.arange(3, dtype=F), M)
    r["vecmat_c"] = jnp.vecmat(np.array([1j, 2], np.complex64), np.ones((2, 2), F))
    r["bcount"] = jnp.bitwise_count(np.array([0, 1, -1, 7, -8, 255, 2**30]))
    r["bcount_u8"] = jnp.bitwise_count(np.array([0, 255, 7], np.uint8))
    r["bcount_b"] = jnp.bitwise_count(np.array([True, False]))
    B = np.array([[1, 0, 1, 1, 0, 0, 0, 1, 1, 1], [0, 1, 0, 0, 0, 0, 1, 1, 0, 0]], np.int32)
    r["pack"] = jnp.packbits(B)
    r["pack1"] = jnp.packbits(B, axis=1)
    r["pack1l"] = jnp.packbits(B, axis=1, bitorder="little")
    r["pack0"] = jnp.packbits(B.astype(bool), axis=0)
    P = np.array([[7, 200], [1, 128]], np.uint8)
    r["unpack"] = jnp.unpackbits(P)
    r["unpack1"] = jnp.unpackbits(P, axis=1)
    r["unpack0l"] = jnp.unpackbits(P, axis=0, bitorder="little")
    r["unpack_c"] = jnp.unpackbits(P, axis=1, count=5)
    r["unpack_c2"] = jnp.unpackbits(P, axis=1, count=20)
    for name in ("bartlett", "blackman", "hamming", "hanning"):
        for M_ in (0, 1, 5, 8):
            r[f"{name}{M_}"] = getattr(jnp, name)(M_)
    r["kaiser"] = jnp.kaiser(7, 3.5)
    r["kaiser1"] = jnp.kaiser(1, 3.5)
    # derivatives
    r["g_part"] = jax.grad(lambda a: jnp.sum(jnp.partition(a, 2) * np.arange(6, dtype=F)))(A2)
    r["g_unwrap"] = jax.grad(lambda p: jnp.sum(jnp.unwrap(p) ** 2))(ph)
    r["g_choose"] = jax.grad(
        lambda c: jnp.sum(jnp.choose(np.array([[0, 1, 2], [2, 1, 0]]), [c, c * 2, c**2]))
    )(np.arange(6, dtype=F).reshape(2, 3))
    r["g_compress"] = jax.grad(
        lambda a: jnp.sum(
            jnp.compress(
                np.array([False, True, True, False, True, False]), a, axis=1, size=4, fill_value=-9
            )
            ** 2
        )
    )(A2)
    r["g_place"] = jax.grad(
        lambda a, v: jnp.sum(jnp.place(a, A2 > 2, v, inplace=False) ** 2), argnums=(0, 1)
    )(A2, np.array([10.0, 20.0], F))[1]
    r["g_put"] = jax.grad(
        lambda a, v: jnp.sum(jnp.put(a, np.array([0, 5, 7]), v, inplace=False) ** 2), argnums=(0, 1)
    )(A2, np.array([-1.0, -2.0, 3.0], F))[0]
    r["g_pal"] = jax.grad(
        lambda a, v: jnp.sum(jnp.put_along_axis(a, idx, v, axis=1, inplace=False) ** 3),
        argnums=(0, 1),
    )(A2, np.array([[1.0, 2.0], [3.0, 4.0]], F))[1]
    r["g_cprod"] = jax.grad(
        lambda a: jnp.sum(jnp.cumulative_prod(a, axis=1, include_initial=True))
    )(A2)
    r["g_matvec"] = jax.grad(lambda m: jnp.sum(jnp.matvec(m, np.arange(4, dtype=F)) ** 2))(M)
    r["g_kaiser"] = jax.grad(lambda b: jnp.sum(jnp.kaiser(6, b)))(F(2.5))
    r["g_resize"] = jax.grad(
        lambda v: jnp.sum(jnp.resize(v, (3, 4)) * np.arange(12, dtype=F).reshape(3, 4))
    )(V2)
    return r


def _compute_c(jnp, jax):
    r = {}
    a = np.array([3, 1, 3, 7, 1, 2], np.int32)
    b = np.array([[7, 5], [1, 9]], np.int32)
    r["uv"] = jnp.unique_values(a)
    r["uv_size"] = jnp.unique_values(a, size=6, fill_value=-1)
    r["uc_v"], r["uc_c"] = jnp.unique_counts(a)
    r["ui_v"], r["ui_i"] = jnp.unique_inverse(b)
    r["ua_v"], r["ua_i"], r["ua_inv"], r["ua_c"] = jnp.unique_all(a)
    r["union"] = jnp.union1d(a, b)
    r["union_size"] = jnp.union1d(a, b, size=8)
    r["setdiff"] = jnp.setdiff1d(a, b)
    r["setdiff_size"] = jnp.setdiff1d(a, b, size=4, fill_value=-5)
    r["setdiff_size2"] = jnp.setdiff1d(a, b, size=4)
    r["setdiff_u"] = jnp.setdiff1d(np.array([4, 2, 8]), b, assume_unique=True)
    r["intersect"] = jnp.intersect1d(a, b)
    r["intersect_f"] = jnp.intersect1d(np.array([1.5, 2.0, 3.0], F), np.array([3, 1, 2]))
    r["setxor"] = jnp.setxor1d(a, b)
    r["isdtype"] = np.array(
        [
            jnp.isdtype(np.float32, "real floating"),
            jnp.isdtype(np.int8, ("integral", "bool")),
            jnp.isdtype(np.uint16, "signed integer"),
            jnp.isdtype(np.complex64, "numeric"),
            jnp.isdtype(np.float32, np.float32),
            jnp.isdtype(np.bool_, "numeric"),
        ]
    )
    r["can_cast"] = np.array(
        [
            jnp.can_cast(np.float64, np.float32),
            jnp.can_cast(np.int8, np.int16),
            jnp.can_cast(np.int32, np.float32),
            jnp.can_cast(np.float32, np.int32, "unsafe"),
            jnp.can_cast(np.float32, np.float16, "same_kind"),
        ]
    )
    r["mgrid"] = jnp.mgrid[0:3, 0:2]
    r["mgrid_f"] = jnp.mgrid[0:1:5j]
    r["mgrid_f2"] = jnp.mgrid[0:1:0.25, -1:1:3j]
    o = jnp.ogrid[0:3, 1:5:2]
    r["ogrid0"], r["ogrid1"] = o
    r["r_"] = jnp.r_[1, 2, np.array([3.0, 4.0], F)]
    r["r_slice"] = jnp.r_[0:4, 7]
    r["c_"] = jnp.c_[np.array([1, 2]), np.array([3, 4])]
    M = np.arange(24, dtype=F).reshape(2, 3, 4) / 5
    r["along"] = jnp.apply_along_axis(jnp.cumsum, 1, M)
    r["along_s"] = jnp.apply_along_axis(lambda v: jnp.sum(v**2), 2, M)
    r["along_2"] = jnp.apply_along_axis(lambda v: jnp.outer(v, v), 0, M)
    r["over"] = jnp.apply_over_axes(jnp.sum, M, [0, 2])
    x = np.linspace(-2, 2, 9, dtype=F)
    r["pw"] = jnp.piecewise(x, [x < 0, x >= 0], [lambda t: -t, lambda t: t**2])
    r["pw_default"] = jnp.piecewise(x, [x < -1, x > 1], [-1.0, lambda t: 2 * t, 0.5])
    r["pw_int"] = jnp.piecewise(np.arange(5), [np.arange(5) > 2], [lambda t: t * 10])
    A2_ = np.ones((2, 2), F)
    r["block1"] = jnp.block([np.array([1.0, 2.0], F), np.array([3.0], F)])
    r["block2"] = jnp.block([[A2_, 2 * A2_], [3 * A2_[:1], np.zeros((1, 2), F)]])
    r["block_s"] = jnp.block([[1.0, 2.0], [3.0, 4.0]])
    r["block3"] = jnp.block([[[A2_, A2_]], [[A2_, A2_]]])
    p1 = np.array([1.0, -3.0, 2.0], F)
    p2 = np.array([2.0, 5.0], F)
    r["polyadd"] = jnp.polyadd(p1, p2)
    r["polyadd_i"] = jnp.polyadd(np.array([1, 2]), np.array([3, 4, 5]))
    r["polysub"] = jnp.polysub(p2, p1)
    r["polymul"] = jnp.polymul(p1, p2)
    r["polymul_i"] = jnp.polymul(np.array([1, 2]), np.array([3, 4]))
    r["polyder"] = jnp.polyder(np.array([1.0, 2, 3, 4, 5], F), 2)
    r["polyder0"] = jnp.polyder(p1, 0)
    r["polyint"] = jnp.polyint(p1)
    r["polyint_k"] = jnp.polyint(p1, 2, np.array([1.0, 2.0], F))
    q, rem = jnp.polydiv(np.array([1.0, -3, 0, 5, 2], F), np.array([2.0, 1, 1], F))
    r["polydiv_q"], r["polydiv_r"] = q, rem
    r["poly"] = jnp.poly(np.array([1.0, -2.0, 0.5], F))
    r["poly0"] = jnp.poly(np.zeros((0,), F))
    xs = np.linspace(-1, 2, 7, dtype=F)
    ys = (2 * xs**2 - xs + 0.5 + 0.01 * np.sin(7 * xs)).astype(F)
    r["polyfit"] = jnp.polyfit(xs, ys, 2)
    r["polyfit_w"] = jnp.polyfit(xs, np.stack([ys, xs], 1), 1, w=np.linspace(1, 2, 7, dtype=F))
    c, res_, rank, sv, rc = jnp.polyfit(xs, ys, 1, full=True)
    r["polyfit_full_c"], r["polyfit_full_res"], r["polyfit_full_rank"], r["polyfit_full_sv"] = (
        c,
        res_,
        rank,
        sv,
    )
    pts = np.array([[0.1, 0.2], [0.5, 0.9], [0.5, 0.1], [0.9, 0.9], [0.3, 0.3]], F)
    h, ex, ey = jnp.histogram2d(pts[:, 0], pts[:, 1], bins=3)
    r["h2"], r["h2_ex"], r["h2_ey"] = h, ex, ey
    h, ex, ey = jnp.histogram2d(
        pts[:, 0], pts[:, 1], bins=(2, 3), range=[(0, 1), (0, 1)], density=True
    )
    r["h2d"], r["h2d_ex"], r["h2d_ey"] = h, ex, ey
    h, edges = jnp.histogramdd(
        pts, bins=[np.array([0.0, 0.5, 1.0], F), 2], weights=np.arange(5, dtype=F)
    )
    r["hdd"], r["hdd_e0"], r["hdd_e1"] = h, edges[0], edges[1]
    # derivatives
    r["g_along"] = jax.grad(
        lambda m: jnp.sum(jnp.apply_along_axis(lambda v: jnp.sum(jnp.sin(v)) * v, 1, m))
    )(M)
    r["g_block"] = jax.grad(lambda a: jnp.sum(jnp.block([[a, 2 * a], [a**2, a]]) ** 2))(A2_)
    r["g_polydiv"] = jax.grad(lambda u: jnp.sum(jnp.polydiv(u, np.array([2.0, 1, 1], F))[0]))(
        np.array([1.0, -3, 0, 5, 2], F)
    )
    r["g_polyfit"] = jax.grad(lambda y: jnp.sum(jnp.polyfit(xs, y, 2) ** 2))(ys)
    r["g_poly"] = jax.grad(lambda z: jnp.sum(jnp.poly(z) ** 2))(np.array([1.0, -2.0, 0.5], F))
    r["g_h2w"] = jax.grad(lambda w: jnp.sum(jnp.histogramdd(pts, bins=2, weights=w)[0] ** 2))(
        np.arange(5, dtype=F)
    )
    return r


def _compute(jnp, jax):
    r = _compute_a(jnp, jax)
    r.update(_compute_b(jnp, jax))
    r.update(_compute_c(jnp, jax))
    return {k: np.asarray(v) for k, v in r.items()}


def _compute_with_jax():
    import jax
    import jax.numpy as jjnp

    return _compute(jjnp, jax)


@pytest.fixture(scope="module")
def recorded():
    return jax_recorded(RECORDED, _compute_with_jax)


@pytest.fixture(scope="module")
def ours():
    with np.errstate(all="ignore"):
        return _compute(jnp, srcjax)


def test_matches_jax(ours, recorded):
    assert_matches_recorded(ours, recorded, rtol=2e-6, atol=1e-6)


# ---------------------------------------------------------------------------
# derivatives against float64 central differences

_R = np.random.default_rng(3)
D5 = _R.normal(size=5)
D23 = _R.normal(size=(2, 3))
D34 = _R.normal(size=(3, 4))

FD_CASES = {
    "nanquantile": (lambda x: jnp.sum(jnp.nanquantile(x, np.array([0.2, 0.7]), axis=1) ** 2), D34),
    "nanmedian": (lambda x: jnp.sum(jnp.sin(jnp.nanmedian(x, axis=0))), D34),
    "correlate_same": (lambda x: jnp.sum(jnp.correlate(x, D5[:3], "same") ** 2), D5),
    "correlate_v": (lambda v: jnp.sum(jnp.correlate(D5, v, "full") ** 2), D5[:3]),
    "gradient_x": (lambda x: jnp.sum(jnp.gradient(D5, x) ** 2), np.cumsum(np.abs(D5)) + 0.5),
    "gradient_f": (lambda f: jnp.sum(jnp.stack(jnp.gradient(f, 0.5)) ** 3), D34),
    "corrcoef": (lambda x: jnp.sum(jnp.corrcoef(x) * (1 - np.eye(3))), D34),
    "insert": (lambda v: jnp.sum(jnp.insert(D34, np.array([0, 2]), v, axis=1) ** 2), D34[:, :2]),
    "delete": (lambda a: jnp.sum(jnp.delete(a, np.array([1, 1, 3]), axis=1) ** 3), D34),
    "partition": (lambda a: jnp.sum(jnp.partition(a, 1) * np.arange(4.0)), D34),
    "unwrap": (lambda p: jnp.sum(jnp.unwrap(3 * p) ** 2), D5),
    "ldexp": (lambda x: jnp.sum(jnp.ldexp(x, np.array([1, -2, 3, 0, 5]))), D5),
    "i0": (lambda x: jnp.sum(jnp.i0(x)), D5),
    "i0_grad": (lambda x: jnp.sum(srcjax.vmap(srcjax.grad(jnp.i0))(x)), D5),
    "kaiser": (lambda b: jnp.sum(jnp.kaiser(6, b[0])), np.array([2.5])),
    "geomspace": (lambda e: jnp.sum(jnp.geomspace(e[0], e[1], 4)), np.array([2.0, 30.0])),
    "vander": (lambda x: jnp.sum(jnp.vander(x, 3) ** 2), D5),
    "put_along_axis": (
        lambda v: jnp.sum(
            jnp.put_along_axis(D34, np.array([[0], [3], [1]]), v, axis=1, inplace=False) ** 2
        ),
        D34[:, :1],
    ),
    "choose": (lambda c: jnp.sum(jnp.choose(np.array([0, 1, 1, 0]), [c, c**2]) ** 2), D34[0]),
    "matvec": (lambda m: jnp.sum(jnp.matvec(m, D34[0]) ** 2), D34),
    "modf": (lambda x: jnp.sum(jnp.modf(3 * x)[0] ** 2), D5),
    "polyfit": (lambda y: jnp.sum(jnp.polyfit(np.linspace(-1, 2, 5), y, 2) ** 2), D5),
    "polydiv": (lambda u: jnp.sum(jnp.polydiv(u, np.array([2.0, 1.0]))[1] ** 2), D5),
    "poly": (lambda z: jnp.sum(jnp.poly(z) ** 2), D5[:3]),
    "block": (lambda a: jnp.sum(jnp.block([[a, 2 * a], [a**2, a]]) ** 2), D23),
    "apply_along_axis": (lambda m: jnp.sum(jnp.apply_along_axis(jnp.cumsum, 1, m) ** 2), D23),
}


@pytest.mark.parametrize("name", sorted(FD_CASES))
def test_grad_matches_finite_differences(name, x64):
    f, x = FD_CASES[name]
    g = srcjax.grad(f)(x)
    np.testing.assert_allclose(g, fd_grad(f, x), rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------
# vmap against a Python loop, jit against eager

_B = _R.normal(size=(3, 4, 5)).astype(np.float32)
_IDX = np.array([[0, 2], [4, 1], [3, 3], [1, 0]])

VMAP_CASES = {
    "nanmedian": lambda x: jnp.nanmedian(x, axis=1),
    "nanquantile": lambda x: jnp.nanquantile(x, 0.3),
    "correlate": lambda x: jnp.correlate(x[0], x[1, :3], "same"),
    "partition": lambda x: jnp.partition(x, 2),
    "argpartition": lambda x: jnp.argpartition(x, 1, axis=0),
    "gradient": lambda x: jnp.gradient(x, axis=1),
    "insert": lambda x: jnp.insert(x, np.array([1, 3]), x[0, :2, None], axis=0),
    "delete": lambda x: jnp.delete(x, np.array([0, 2]), axis=1),
    "compress_size": lambda x: jnp.compress(x[0] > 0, x[1], size=3),
    "put_along_axis": lambda x: jnp.put_along_axis(x, _IDX, 1.0, axis=1, inplace=False),
    "frexp": lambda x: jnp.add(jnp.frexp(x)[0], jnp.frexp(x)[1]),
    "i0": lambda x: jnp.i0(x),
    "unwrap": lambda x: jnp.unwrap(4 * x),
    "corrcoef": lambda x: jnp.corrcoef(x),
    "kaiser": lambda x: jnp.kaiser(5, x[0, 0] + 3),
    "unravel": lambda x: jnp.unravel_index(jnp.argmax(x), (4, 5))[0],
    "apply_along_axis": lambda x: jnp.apply_along_axis(jnp.cumsum, 0, x),
    "polymul": lambda x: jnp.polymul(x[0], x[1]),
    "histogram2d": lambda x: jnp.histogram2d(x[0], x[1], bins=3, range=[(-2, 2), (-2, 2)])[0],
}


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_vmap_matches_loop(name):
    f = VMAP_CASES[name]
    got = srcjax.vmap(f)(_B)
    want = np.stack([f(b) for b in _B])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert got.dtype == want.dtype


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_jit_matches_eager(name):
    f = VMAP_CASES[name]
    got = srcjax.jit(f)(_B[0])
    want = f(_B[0])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert np.asarray(got).dtype == np.asarray(want).dtype


def test_gcd_under_vmap_and_jit():
    a = np.array([[12, 18, 0], [7, 30, 9]], np.int32)
    b = np.array([[8, 27, 5], [21, 12, 0]], np.int32)
    want = np.gcd(a, b)
    np.testing.assert_array_equal(srcjax.vmap(jnp.gcd)(a, b), want)
    np.testing.assert_array_equal(srcjax.jit(jnp.gcd)(a, b), want)
    np.testing.assert_array_equal(srcjax.jit(jnp.lcm)(a, b), np.lcm(a, b))


# ---------------------------------------------------------------------------
# errors (JAX's classes)


def test_errors():
    with pytest.raises(ValueError, match="in-place"):
        jnp.put(np.zeros(3), np.array([0]), 1.0)
    with pytest.raises(ValueError, match="in-place"):
        jnp.put_along_axis(np.zeros(3), np.array([0]), 1.0, axis=0)
    with pytest.raises(ValueError, match="in-place"):
        jnp.place(np.zeros(3), np.array([True, False, True]), 1.0)
    with pytest.raises(NotImplementedError):
        jnp.gradient(np.ones(3), edge_order=1)
    with pytest.raises(ValueError, match="too small"):
        jnp.gradient(np.ones(1))
    with pytest.raises(ValueError, match="invalid entry"):
        jnp.choose(np.array([0, 3]), [np.ones(2), np.zeros(2)])
    with pytest.raises(ValueError, match="invalid entry"):
        jnp.ravel_multi_index((np.array([0, 3]), np.array([0, 0])), (3, 4))
    with pytest.raises(ValueError, match="integers"):
        jnp.gcd(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="ldexp"):
        jnp.ldexp(np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="complex"):
        jnp.frexp(np.ones(2, np.complex64))
    with pytest.raises(ValueError, match="mode"):
        jnp.correlate(np.ones(3), np.ones(2), "bad")
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.correlate(np.ones((3, 2)), np.ones(2))
    with pytest.raises(ValueError, match="Incompatible shapes"):
        jnp.broadcast_shapes((2,), (3,))
    with pytest.raises(NotImplementedError):
        jnp.partition(np.ones(3, np.complex64), 1)
    with pytest.raises(TypeError):
        jnp.packbits(np.ones(3))
    with pytest.raises(TypeError):
        jnp.unpackbits(np.ones(3, np.int32))
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.compress(np.array([True, False, False, True]), np.ones(3))
    with pytest.raises(ValueError, match="Only 2-D"):
        jnp.tril_indices_from(np.ones(3))
    with pytest.raises(NotImplementedError, match="functools.partial"):
        jnp.apply_along_axis(lambda v, c: v * c, 0, np.ones(3), 2.0)
    with pytest.raises(ValueError, match="Mismatched list depths"):
        jnp.block([[np.ones(2)], np.ones(2)])
    with pytest.raises(ValueError, match="tuples"):
        jnp.block((np.ones(2),))
    with pytest.raises(ValueError, match="Unrecognized"):
        jnp.isdtype(np.float32, "floating")
    with pytest.raises(NotImplementedError):
        jnp.intersect1d(np.ones(2), np.ones(2), return_indices=True)
    with pytest.raises(TypeError, match="same length"):
        jnp.polyfit(np.ones(3), np.ones(4), 1)
