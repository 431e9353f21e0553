"""srcjax.scipy.linalg against JAX.

Expected values are JAX 0.10.2's (CPU, float32), recorded with
/tmp/jv/bin/python from the same inputs (rounded to 7 decimals);
expm's float64 gradient is checked against central differences.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
import srcjax.scipy.linalg as L

A = np.array(
    [[0.1, -0.3, 0.2, 0.1], [0.4, 0.9, -0.5, 0.3], [-0.9, 0.1, 0.7, -0.6], [0.3, 0.5, 0.2, -0.4]],
    np.float32,
)
W = np.arange(16.0, dtype=np.float32).reshape(4, 4) / 10
b = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
S = A @ A.T + np.eye(4, dtype=np.float32)
Sn = S + np.triu(np.ones((4, 4), np.float32), 1) * 0.3  # not symmetric: the triangle read matters

# fmt: off
# recorded from JAX 0.10.2 (jax.scipy.linalg on the inputs above)
EXPM_005 = [[1.0046648, -0.015292, 0.0104177, 0.0046958], [0.0211993, 1.0460002, -0.025837, 0.0156237], [-0.0460798, 0.0051682, 1.0351709, -0.0303007], [0.0149177, 0.0252309, 0.0098343, 0.9802758]]
EXPM_GRAD_005 = [[-0.004184, 0.0965186, 0.1936168, 0.2932819], [0.4282504, 0.5431391, 0.6241154, 0.7409361], [0.8177539, 0.9412201, 1.0026169, 1.1308126], [1.1828537, 1.3130425, 1.3542084, 1.4918162]]
EXPM_05 = [[1.0061978, -0.1835847, 0.146759, 0.0153966], [0.3443635, 1.5625495, -0.3453975, 0.2235011], [-0.5615681, 0.0726363, 1.3626984, -0.3301879], [0.1472462, 0.2788461, 0.0800775, 0.8287858]]
EXPM_GRAD_05 = [[-0.054986, 0.0447703, 0.1301289, 0.2164244], [0.7053981, 1.0565555, 0.8265475, 1.1811417], [0.9479466, 1.3841993, 0.9639043, 1.4113866], [1.0145934, 1.486704, 0.9415224, 1.4284632]]
EXPM_15 = [[0.476655, -0.8601812, 0.8421982, -0.2755652], [2.5754142, 3.6843026, -1.9024377, 1.4098841], [-2.3583405, 0.5232854, 2.0147016, -1.1332287], [0.5957221, 1.159297, 0.0195574, 0.7168584]]
EXPM_GRAD_15 = [[-0.1385527, -0.1377363, 0.0951247, 0.0652507], [1.447451, 3.6565108, 1.1244867, 2.8991799], [0.8558089, 2.9711113, 0.3926581, 1.9874421], [0.5461902, 2.4513214, 0.1102623, 1.483964]]
EXPM_6 = [[-66.8623734, -24.8713531, 22.5160503, -27.3942184], [198.9959564, 91.7046814, -65.647377, 81.5322418], [69.1183853, 58.3922806, -47.43367, 36.1212082], [74.4386597, 45.4908791, -31.1349487, 32.7527046]]
EXPM_GRAD_6 = [[14.2221642, 160.3740845, 7.9590759, 86.1750183], [-40.6977615, 303.9606628, 20.7695541, 126.4508133], [-21.9117298, -37.5025635, 12.6217117, -26.7666798], [-9.8025208, 130.2416077, 15.7369652, 60.2802505]]
EXPM_40 = [[-139513692160.0, -72822022144.0, 33661278208.0, -53823070208.0], [648483897344.0, 342412066816.0, -160393035776.0, 251412365312.0], [421056544768.0, 221885038592.0, -107199807488.0, 164109598720.0], [347629682688.0, 183976820736.0, -87375233024.0, 135185825792.0]]
EXPM_GRAD_40 = [[-974602764288.0, 4555583520768.0, 2676876115968.0, 2363651260416.0], [-552002453504.0, 2563547070464.0, 1505074085888.0, 1327566946304.0], [256679673856.0, -1198023507968.0, -696640339968.0, -619350720512.0], [-391231766528.0, 1827441213440.0, 1073678385152.0, 947993444352.0]]
EXPM_UPPER = [[1.105171, -0.5079121, 0.4369136, -0.0616516], [0.0, 2.4596031, -1.1146262, 0.6455153], [0.0, 0.0, 2.0137527, -0.7327815], [0.0, 0.0, 0.0, 0.67032]]
LU_P = [[0.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]
LU_L = [[1.0, 0.0, 0.0, 0.0], [-0.4444445, 1.0, 0.0, 0.0], [-0.3333334, 0.564706, 1.0, 0.0], [-0.1111111, -0.3058824, 0.4074074, 1.0]]
LU_U = [[-0.9, 0.1, 0.7, -0.6], [0.0, 0.9444444, -0.1888889, 0.0333333], [0.0, 0.0, 0.54, -0.6188235], [0.0, 0.0, 0.0, 0.2956427]]
LU_GRAD = [[1.0392487, 2.0096393, 3.2701874, 0.5912853], [-0.3528228, 1.964497, 0.7649894, 1.0824714], [-1.8391224, 1.614625, 2.0192502, -1.1460503], [0.0066469, 0.9546652, -0.2522984, -1.4785411]]
LUF = [[-0.9, 0.1, 0.7, -0.6], [-0.4444445, 0.9444444, -0.1888889, 0.0333333], [-0.3333334, 0.564706, 0.54, -0.6188235], [-0.1111111, -0.3058824, 0.4074074, 0.2956427]]
PIV = [2.0, 1.0, 3.0, 3.0]
LUS0 = [4.4252033, -1.1164336, 3.1208546, -4.0162129]
LUS1 = [11.6064854, 3.2792935, 0.6153283, -3.0619013]
LUS_GRAD_A = [[-51.3610535, 12.9578705, -36.2221527, 46.6141167], [-14.5115385, 3.6611135, -10.2341976, 13.1703415], [-2.7229517, 0.6869733, -1.9203507, 2.4712901], [13.5495348, -3.4184096, 9.555748, -12.2972479]]
LUS1_GRAD_B = [9.6127558, 23.2596817, 96.2809296, 99.7341385]
SOLVE_POS_L = [0.7822089, -1.2214309, -0.3059168, 2.3183846]
SOLVE_POS_U = [0.5809915, -1.8226522, -0.7032815, 2.8595161]
SOLVE_POS_GRAD = [[-0.6118507, 0.9554141, 0.2392909, -1.8134611], [0.9554141, -1.4918934, -0.3736563, 2.8317466], [0.2392909, -0.3736563, -0.0935851, 0.7092329], [-1.8134611, 2.8317466, 0.7092329, -5.3749075]]
SOLVE_GEN = [[4.4252033, 8.8504066], [-1.1164336, -2.2328672], [3.1208546, 6.2417092], [-4.0162129, -8.0324259]]
SOLVE_POS_NOTPD = [np.nan, np.nan, np.nan, np.nan]
EIGH_W = [1.038052, 1.1713721, 2.2782419, 3.1823339]
QR_R = [[-1.034408, -0.3770273, 0.7250524], [0.0, -1.0088857, 0.0660485], [0.0, 0.0, -0.5384576], [0.0, 0.0, 0.0]]
QR_ECON_Q = [[-0.0966737, 0.3334853, -0.4606994], [-0.3866946, -0.7475628, 0.3161821], [0.8700629, -0.4242674, -0.1804806], [-0.290021, -0.3872135, -0.8094513]]
SCHUR_T_DIAG = [-0.4461946, 0.5457694, 0.5457694, 0.654656]
# fmt: on


def _close(got, want, rtol=2e-5, atol=2e-6):
    np.testing.assert_allclose(
        np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=rtol, atol=atol
    )


def _expm_loss(a):
    return jnp.sum(L.expm(a) * W)


SCALES = {"005": 0.05, "05": 0.5, "15": 1.5, "6": 6.0, "40": 40.0}


@pytest.mark.parametrize("key", list(SCALES))
def test_expm_and_its_gradient_match_jax(key):
    """Each scale picks another Pade degree / number of squarings."""
    a = np.float32(SCALES[key]) * A
    want, want_grad = globals()[f"EXPM_{key}"], globals()[f"EXPM_GRAD_{key}"]
    out = L.expm(a)
    assert out.dtype == np.float32
    _close(out, want, rtol=1e-5 if SCALES[key] < 10 else 1e-4)
    _close(srcjax.grad(_expm_loss)(a), want_grad, rtol=2e-4 if SCALES[key] < 10 else 1e-3)


def test_expm_upper_jit_vmap_batch_and_nan():
    _close(L.expm(np.triu(A), upper_triangular=True), EXPM_UPPER)
    _close(srcjax.jit(L.expm)(np.float32(1.5) * A), EXPM_15)
    stack = np.stack([np.float32(0.05) * A, np.float32(6.0) * A])
    _close(srcjax.vmap(L.expm)(stack), [EXPM_005, EXPM_6], rtol=1e-5)
    _close(L.expm(stack), [EXPM_005, EXPM_6], rtol=1e-5)  # batched directly
    assert np.isnan(L.expm(np.float32(1e6) * A)).all()  # needs more than 16 squarings
    assert L.expm(np.eye(2, dtype=np.int32)).dtype == np.float32
    with pytest.raises(ValueError, match="square"):
        L.expm(np.ones((2, 3), np.float32))


def test_expm_float64_gradient_against_finite_differences():
    old = srcjax.config.jax_enable_x64
    srcjax.config.update("jax_enable_x64", True)
    try:
        rng = np.random.default_rng(3)
        w = rng.normal(size=(3, 3))

        def loss(a):
            return jnp.sum(L.expm(a) * w)

        for scale in (0.01, 0.3, 2.0, 9.0):  # Pade 3, 7, 13 and squarings
            a = scale * rng.normal(size=(3, 3))
            g = srcjax.grad(loss)(a)
            assert g.dtype == np.float64
            fd = np.zeros((3, 3))
            eps = 1e-6 * max(1.0, scale)
            for i in range(3):
                for j in range(3):
                    e = np.zeros((3, 3))
                    e[i, j] = eps
                    fd[i, j] = (float(loss(a + e)) - float(loss(a - e))) / (2 * eps)
            np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8 * np.abs(fd).max())
            import scipy.linalg as sl

            np.testing.assert_allclose(L.expm(a), sl.expm(a), rtol=1e-12, atol=1e-14)
    finally:
        srcjax.config.update("jax_enable_x64", old)


def _lu_loss(a):
    _, low, up = L.lu(a)
    return jnp.sum(low * W) + jnp.sum(up**2)


def _lu_solve_loss(a):
    return jnp.sum(L.lu_solve(L.lu_factor(a), b) * b)


def _lu_solve_t_loss(bb):
    return jnp.sum(L.lu_solve(L.lu_factor(A), bb, trans=1) ** 2)


def test_lu_lu_factor_lu_solve_match_jax():
    p, low, up = L.lu(A)
    _close(p, LU_P)
    _close(low, LU_L)
    _close(up, LU_U)
    f, piv = L.lu_factor(A)
    _close(f, LUF)
    assert piv.dtype == np.int32
    np.testing.assert_array_equal(piv, PIV)
    _close(L.lu_solve((f, piv), b), LUS0)
    _close(L.lu_solve((f, piv), b, trans=1), LUS1)
    _close(L.lu_solve((f, piv), np.stack([b, 2 * b], 1)), np.stack([LUS0, 2 * np.array(LUS0)], 1))
    _close(srcjax.grad(_lu_loss)(A), LU_GRAD, rtol=1e-4, atol=1e-5)
    _close(srcjax.grad(_lu_solve_loss)(A), LUS_GRAD_A, rtol=1e-4, atol=1e-4)
    _close(srcjax.grad(_lu_solve_t_loss)(b), LUS1_GRAD_B, rtol=1e-4, atol=1e-4)
    pl, up2 = L.lu(A, permute_l=True)
    _close(pl @ up2, A, atol=1e-6)


def test_lu_batched_vmap_jit_and_second_order():
    stack = np.stack([A, A.T + 0.1])
    f, piv = L.lu_factor(stack)
    for i in range(2):
        fi, pi = L.lu_factor(stack[i])
        _close(f[i], fi)
        np.testing.assert_array_equal(piv[i], pi)
    got = srcjax.vmap(L.lu_factor)(stack)
    _close(got[0], f)
    np.testing.assert_array_equal(got[1], piv)
    x = L.lu_solve((f, piv), b)  # a vector per matrix (b broadcast)
    _close(x, [np.linalg.solve(stack[0], b), np.linalg.solve(stack[1], b)], rtol=1e-5, atol=1e-5)
    _close(srcjax.jit(_lu_solve_loss)(A), np.sum(np.linalg.solve(A, b) * b), rtol=1e-5)
    gv = srcjax.vmap(srcjax.grad(_lu_loss))(stack)
    _close(gv[0], LU_GRAD, rtol=1e-4, atol=1e-5)
    # hessian-vector product through lu (float64) against differences of the gradient
    old = srcjax.config.jax_enable_x64
    srcjax.config.update("jax_enable_x64", True)
    try:
        a = A.astype(np.float64)
        v = np.cos(np.arange(16.0)).reshape(4, 4)
        gfun = srcjax.grad(_lu_loss)
        _, hv = srcjax.jvp(gfun, (a,), (v,))
        fd = (gfun(a + 1e-6 * v) - gfun(a - 1e-6 * v)) / 2e-6
        np.testing.assert_allclose(hv, fd, rtol=1e-6, atol=1e-7)
    finally:
        srcjax.config.update("jax_enable_x64", old)
    with pytest.raises(NotImplementedError, match="3x4"):
        srcjax.grad(lambda a: jnp.sum(L.lu_factor(a)[0]))(np.ones((3, 4), np.float32))


def _solve_pos_loss(s):
    return jnp.sum(L.solve(s, b, assume_a="pos", lower=True) * b)


def test_solve_assume_pos_reads_a_triangle_and_has_jax_gradient():
    _close(L.solve(Sn, b, assume_a="pos", lower=True), SOLVE_POS_L, rtol=1e-5)
    _close(L.solve(Sn, b, assume_a="pos"), SOLVE_POS_U, rtol=1e-5)
    _close(srcjax.grad(_solve_pos_loss)(Sn), SOLVE_POS_GRAD, rtol=1e-4, atol=1e-5)
    assert np.isnan(L.solve(-S, b, assume_a="pos")).all()
    _close(L.solve(A, np.stack([b, 2 * b], 1)), SOLVE_GEN, rtol=1e-5)
    with pytest.raises(ValueError, match="assume_a"):
        L.solve(A, b, assume_a="banded")
    _close(L.inv(A) @ A, np.eye(4), atol=1e-5)
    _close(L.det(A), np.linalg.det(A.astype(np.float64)), rtol=1e-5)


def test_qr_svd_eigh_schur():
    _close(L.eigh(Sn, lower=False)[0], EIGH_W, rtol=1e-5)
    _close(L.eigh(Sn, lower=False, eigvals_only=True), EIGH_W, rtol=1e-5)
    (r,) = L.qr(A[:, :3], mode="r")
    _close(r, QR_R, atol=1e-6)
    q, r = L.qr(A[:, :3], mode="economic")
    _close(q, QR_ECON_Q, atol=1e-6)
    q, r = L.qr(A)
    _close(q @ r, A, atol=1e-6)
    with pytest.raises(ValueError, match="mode"):
        L.qr(A, mode="bad")
    with pytest.raises(NotImplementedError):
        L.eigh(A, b=A)
    u, s, vt = L.svd(A)
    _close((u * s) @ vt, A, atol=1e-6)
    t, z = L.schur(A)
    _close(np.sort(np.diag(t)), np.sort(SCHUR_T_DIAG), atol=1e-6)
    _close(z @ t @ z.T, A, atol=1e-5)
    with pytest.raises(Exception, match="schur has no derivative"):
        srcjax.grad(lambda a: jnp.sum(L.schur(a)[0]))(A)
