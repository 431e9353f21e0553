"""jnp.fft: values, dtypes, errors, derivatives, vmap and jit.

Oracles: NumPy's float64 FFTs (values), JAX 0.10.2 (dtypes, errors, and the
gradients, Hessians, vmap(grad), jit(grad) and jvp values recorded in ``JAX``
below by running the loss block with jax/jax.numpy in place of srcjax), central
differences in float64 (every transform's adjoint, including the Hermitian
weights of rfft/irfft, with complex inputs split into real and imaginary
parameters), and Python loops (vmap).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import fd_grad

import srcjax
import srcjax.numpy as jnp


# --- losses: JAX's values below come from exec'ing the text from here to the end marker
# with np = numpy and jnp = jax.numpy, then jax.value_and_grad / vmap / jit / hessian / jvp
# on the inputs each test uses (the extra keys: see the test reading them)
def X(*shape, k=0.7, off=0.0):
    """Deterministic float32 test data."""
    i = np.arange(int(np.prod(shape)))
    v = np.sin(i * k + off) + 0.3 * np.cos(i * 1.9 + off)
    return v.reshape(shape).astype(np.float32)


W = (np.cos(np.arange(5) * 0.9) + 1j * np.sin(np.arange(5) * 0.4)).astype(np.complex64)


def rfft_power(x):
    return jnp.sum(jnp.abs(jnp.fft.rfft(x)) ** 2)


def rfft_n_ortho(x):
    return jnp.sum(jnp.abs(jnp.fft.rfft(x, n=10, norm="ortho")) ** 3)


def irfft_filter(x):
    return jnp.sum(jnp.fft.irfft(jnp.fft.rfft(x) * W[:5]) ** 3)


def irfft_odd_n(x):
    return jnp.sum(jnp.sin(jnp.fft.irfft(x * (1 + 0.5j), n=7, norm="forward")))


def irfftn_axes(x):
    return jnp.sum(jnp.cos(jnp.fft.irfftn(x * (0.3 - 1j) + 0.2j, s=(4, 6), axes=(1, 0))))


def fft_real(x):
    return jnp.sum(jnp.real(jnp.fft.fft(x)) * jnp.arange(6.0) + jnp.imag(jnp.fft.fft(x)) ** 2)


def ifft_abs(x):
    return jnp.sum(jnp.abs(jnp.fft.ifft(x * 1j + 0.5, n=8, norm="ortho")))


def fftn_s_axes(x):
    y = jnp.fft.fftn(x, s=(3, 5), axes=(1, 0), norm="ortho")
    return jnp.sum(jnp.abs(y) ** 2 * jnp.arange(15.0).reshape(5, 3))


def fft2_ifft2(x):
    return jnp.sum(jnp.real(jnp.fft.ifft2(jnp.fft.fft2(x) ** 2)))


def rfft2_irfft2(x):
    return jnp.sum(jnp.fft.irfft2(jnp.fft.rfft2(x, norm="forward") ** 2, s=(3, 5)) ** 2)


def rfftn_3d(x):
    return jnp.sum(jnp.abs(jnp.fft.rfftn(x, axes=(0, 2))) ** 2 * jnp.arange(2.0)[:, None, None])


def hfft_n(x):
    return jnp.sum(jnp.fft.hfft(x * (1 - 2j), n=7) ** 2)


def hfft_ortho(x):
    return jnp.sum(jnp.fft.hfft(x + 0.5j * x[::-1], norm="ortho") ** 2)


def ihfft_forward(x):
    return jnp.sum(jnp.abs(jnp.fft.ihfft(x, norm="forward") * W[:4]) ** 2)


def shifts(x):
    w = jnp.arange(15.0).reshape(3, 5)
    return jnp.sum(jnp.fft.fftshift(x, axes=1) * w + jnp.fft.ifftshift(x) ** 2 * w)


def irfft_complex(z):
    return jnp.sum(jnp.fft.irfft(z, n=8) ** 3)


def fft_complex(z):
    return jnp.sum(jnp.abs(jnp.fft.fft(z, n=6)) ** 3)


def freq_d(d):
    return jnp.sum(jnp.fft.fftfreq(7, d) * jnp.arange(7.0)) + jnp.sum(jnp.fft.rfftfreq(8, d) ** 2)


LOSSES = {
    "rfft_power7": (rfft_power, X(7)),
    "rfft_power8": (rfft_power, X(8)),
    "rfft_n_ortho": (rfft_n_ortho, X(7)),
    "irfft_filter": (irfft_filter, X(8)),
    "irfft_odd_n": (irfft_odd_n, X(4)),
    "irfftn_axes": (irfftn_axes, X(3, 4)),
    "fft_real": (fft_real, X(6)),
    "ifft_abs": (ifft_abs, X(6)),
    "fftn_s_axes": (fftn_s_axes, X(4, 3)),
    "fft2_ifft2": (fft2_ifft2, X(3, 4)),
    "rfft2_irfft2": (rfft2_irfft2, X(3, 5)),
    "rfftn_3d": (rfftn_3d, X(2, 3, 4)),
    "hfft_n": (hfft_n, X(4)),
    "hfft_ortho": (hfft_ortho, X(5)),
    "ihfft_forward": (ihfft_forward, X(6)),
    "shifts": (shifts, X(3, 5)),
    "irfft_complex": (irfft_complex, (X(5) + 1j * X(5, off=1.0)).astype(np.complex64)),
    "fft_complex": (fft_complex, (X(5) + 1j * X(5, off=1.0)).astype(np.complex64)),
    "freq_d": (freq_d, np.float32(0.3)),
}


def jvp_filter(x):
    return jnp.fft.irfft(jnp.fft.rfft(x) * W[:4], n=7)


# --- end of losses ---


# Recorded with jax 0.10.2 (CPU, float32) from the loss block above: ``name`` is the value
# of LOSSES[name] at its input, ``name.grad`` jax.grad's result; the others as named.
# fmt: off
JAX = {
    'rfft_power7': ((), [13.19012]),
    'rfft_power7.grad': ((7,), [3.8159163, 5.5465317, 6.953033, 9.511278, 4.588478, -2.8336287, -3.5587835]),
    'rfft_power8': ((), [16.260231]),
    'rfft_power8.grad': ((8,), [3.8099942, 4.880429, 7.3952694, 9.411569, 4.692923, -4.696896, -4.6182346, -5.57444]),
    'rfft_n_ortho': ((), [1.463318]),
    'rfft_n_ortho.grad': ((7,), [0.5089725, 0.93773717, 1.2805786, 1.3479407, 0.50606894, -0.6177843, -0.87021947]),
    'irfft_filter': ((), [0.9779973]),
    'irfft_filter.grad': ((8,), [0.65927774, 0.5591726, 0.38894415, 2.9793894, 0.52638346, 0.5598263, 0.23751211, 1.1214497]),
    'irfft_odd_n': ((), [-0.9942742]),
    'irfft_odd_n.grad': ((4,), [3.3693411, -0.74588025, 1.3507819, 3.2384813]),
    'irfftn_axes': ((), [23.776358]),
    'irfftn_axes.grad': ((3, 4), [-0.0011172892, 0.008687824, -0.002772873, -0.014864795, -0.020383088, 0.075371176, 0.084301025, 0.08517321, 0.097240016, 0.019882223, -0.06940936, -0.060235027]),
    'fft_real': ((), [2.6335974]),
    'fft_real.grad': ((6,), [15.0, 4.1829944, -0.97324014, -3.0, -5.02676, -10.182995]),
    'ifft_abs': ((), [4.9275107]),
    'ifft_abs.grad': ((6,), [0.22638229, 0.2809115, 0.70320284, 1.3276908, 0.6894456, -1.7868888]),
    'fftn_s_axes': ((), [48.514896]),
    'fftn_s_axes.grad': ((4, 3), [1.9339113, 4.800063, 11.707784, 17.300465, 3.0578322, -12.73658, -13.027666, -14.7214575, -13.838128, -4.2950153, 11.943265, 13.364614]),
    'fft2_ifft2': ((), [3.3477945]),
    'fft2_ifft2.grad': ((3, 4), [3.6593957, 3.6593957, 3.6593957, 3.6593957, 3.6593957, 3.6593957, 3.6593957, 3.6593957, 3.6593957, 3.6593957, 3.6593957, 3.6593957]),
    'rfft2_irfft2': ((), [0.0037337046]),
    'rfft2_irfft2.grad': ((3, 5), [0.0011190285, 0.001307874, 0.0014597921, 0.0016264026, 0.0013411442, -0.002080105, -0.0022942964, -0.002348498, -0.0023029703, -0.001889276, 0.00128802, 0.0013112191, 0.001211958, 0.0010100967, 0.0008528326]),
    'rfftn_3d': ((), [44.94043]),
    'rfftn_3d.grad': ((2, 3, 4), [0.08226609, 4.3061447, 5.806796, 13.625849, 6.3767223, -4.1734066, -0.57373905, -8.968225, -11.377686, -2.3457115, 0.5952172, 4.251025, -0.08226609, -4.3061447, -5.806796, -13.625849, -6.3767223, 4.1734066, 0.57373905, 8.968225, 11.377686, 2.3457115, -0.5952172, -4.251025]),
    'hfft_n': ((), [147.58527]),
    'hfft_n.grad': ((4,), [4.199999, 76.61232, 104.74231, 155.90726]),
    'hfft_ortho': ((), [5.506802]),
    'hfft_ortho.grad': ((5,), [0.59999996, 2.736154, 3.740797, 5.5681157, 0.8207322]),
    'ihfft_forward': ((), [9.266809]),
    'ihfft_forward.grad': ((6,), [5.8971415, 4.1196566, 7.2327394, 5.9866714, 6.2148886, 0.1822393]),
    'shifts': ((), [67.04079]),
    'shifts.grad': ((3, 5), [9.8, 18.322464, 18.963188, 24.499712, 10.848786, 3.1003907, 1.9717717, 9.0, 3.2132244, 5.8538847, 27.257568, 28.295109, 20.474998, 17.097332, 6.3033733]),
    'irfft_complex': ((), [0.23211792]),
    'irfft_complex.grad': ((5,), [0.31043252-0.0j, 0.4831646+0.1133659j, 0.34439477+0.122447744j, 0.20401947+0.056706324j, 0.09063535-0.0j]),
    'fft_complex': ((), [100.79541]),
    'fft_complex.grad': ((5,), [9.927435-50.08358j, 36.109688-50.96827j, 59.018753-42.224876j, 71.06151-8.7565155j, 33.24906+29.86891j]),
    'freq_d': ((), [-1.458333]),
    'freq_d.grad': ((), [-12.500002]),
    'vmap_grad.irfft_filter': ((3, 8), [1.4849501, 1.125957, 0.46727902, 4.0331697, 1.5302658, 0.45065743, 1.3937025, -0.25231862, 2.1694405, 1.6911337, 0.43574333, 3.546845, 1.2954724, 0.25513345, 0.5197245, -0.03244829, 2.1575859, 1.721755, 0.29709026, 2.1336355, 0.76083726, 0.57092756, 0.92330146, 0.51846033]),
    'vmap_grad.rfft_power': ((4, 7), [6.757282, 6.0470157, 6.9487457, 11.893467, 11.709203, 9.545685, 12.300546, 8.552158, 3.8433144, 3.56818, 4.014039, -1.1233808, -3.5974166, -1.9580226, -11.174079, -14.179555, -11.156894, -10.43938, -12.666654, -9.204342, -5.2403426, 3.4810312, 5.5758796, 10.66665, 10.057902, 9.213485, 12.951872, 12.462898]),
    'vmap_grad.fftn_s_axes': ((2, 4, 3), [2.8165526, 5.1945724, 12.688477, 19.098595, 9.937244, -3.0162387, -4.7300515, -11.206833, -18.77223, -15.355165, -0.8154893, 5.397034, 9.911624, 17.89304, 9.124714, 4.6577215, -2.1266642, -12.840991, -18.179111, -16.500862, -6.134182, -1.9886432, 3.8087745, 16.59115]),
    'vmap_grad.hfft_n': ((3, 4), [4.1999993, 129.62279, -122.93643, 103.64552, 8.685172, 2.380532, -57.181877, 180.03577, 10.671965, -147.83359, -20.380066, 62.506813]),
    'jit_grad.rfft2_irfft2': ((3, 5), [-0.00012219962, 0.00096300495, 0.0008087617, -0.00039309845, -0.0010381846, -0.0020958988, 0.00049501174, 0.0024546206, 0.0010477172, -0.0016880295, -0.0013463728, -0.0010342383, 0.00073769304, 0.001582873, 0.0002761427]),
    'jit.irfftn_axes': ((), [23.79346]),
    'hessian.rfft_n_ortho': ((7, 7), [1.2966995, 0.7923337, 0.21476501, 0.08368474, 0.28721592, 0.060585037, 0.18182886, 0.7923336, 1.3245008, 0.71658844, 0.31494427, 0.14693895, 0.18182887, -0.11146632, 0.21476492, 0.71658844, 1.4246802, 0.7798427, 0.20955727, -0.025112316, -0.09015344, 0.08368474, 0.31494427, 0.7798427, 1.319293, 0.6077913, -0.062425032, -0.20675725, 0.28721592, 0.14693895, 0.20955728, 0.60779124, 1.0473107, 0.42614636, 0.18696374, 0.060585063, 0.18182886, -0.025112376, -0.062425032, 0.42614636, 1.2966995, 0.7923337, 0.18182887, -0.11146632, -0.09015356, -0.20675725, 0.1869637, 0.7923336, 1.3245009]),
    'hessian.irfft_odd_n': ((4, 4), [0.9942743, 1.375872, 2.7046218, -0.6814829, 1.3758719, 4.6103168, -2.1758094, 9.405446, 2.704622, -2.1758099, 8.606519, 3.166726, -0.68148315, 9.405446, 3.166727, 2.7035537]),
    'jvp.jvp_filter': ((7,), [0.017405681, 0.16011107, -0.04076345, -0.8037698, -0.7786856, -0.60561585, 0.43110135]),
    'hfft.forward': ((7,), [0.73114675, 0.19718014, 0.051392164, -0.017467465, -0.05360263, -0.02368125, -0.5849677]),
    'ihfft.ortho': ((4,), [1.0081466+0.0j, -0.5896077+0.54269004j, 0.36159062+0.30383408j, 0.18273447+0.0j]),
    'fftfreq': ((7,), [0.0, 0.4761905, 0.952381, 1.4285715, -1.4285715, -0.952381, -0.4761905]),
    'rfftfreq': ((5,), [0.0, 0.5, 1.0, 1.5, 2.0]),
    'fftfreq.int32': ((6,), [0.0, 1.0, 3.0, -5.0, -3.0, -1.0]),
    'rfftfreq.int32': ((4,), [0.0, 0.16666667, 0.33333334, 0.5]),
}
# fmt: on


def _want(key):
    shape, values = JAX[key]
    return np.asarray(values).reshape(shape)


def _close_to_jax(got, key, rtol=2e-5):
    want = _want(key)
    got = np.asarray(got)
    assert got.shape == want.shape, (key, got.shape, want.shape)
    scale = float(np.max(np.abs(want))) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, err_msg=key)


# -- derivatives against JAX ------------------------------------------------------------


@pytest.mark.parametrize("name", list(LOSSES))
def test_value_and_grad_match_jax(name):
    f, x = LOSSES[name]
    value, grad = srcjax.value_and_grad(f)(x)
    _close_to_jax(value, name)
    _close_to_jax(grad, name + ".grad")
    # a gradient has its primal's dtype: real float32 for real inputs, even
    # through complex intermediates (JAX's convention)
    assert np.asarray(grad).dtype == np.asarray(x).dtype


def test_vmap_grad_jit_grad_hessian_jvp_match_jax():
    got = srcjax.vmap(srcjax.grad(irfft_filter))(X(3, 8, k=0.45, off=0.2))
    _close_to_jax(got, "vmap_grad.irfft_filter")
    _close_to_jax(srcjax.vmap(srcjax.grad(rfft_power))(X(4, 7, k=0.3)), "vmap_grad.rfft_power")
    got = srcjax.vmap(srcjax.grad(fftn_s_axes))(X(2, 4, 3, k=0.6))
    _close_to_jax(got, "vmap_grad.fftn_s_axes")
    got = srcjax.vmap(srcjax.grad(hfft_n), in_axes=1)(X(4, 3, k=0.8))
    _close_to_jax(got, "vmap_grad.hfft_n")
    _close_to_jax(srcjax.jit(srcjax.grad(rfft2_irfft2))(X(3, 5, k=1.1)), "jit_grad.rfft2_irfft2")
    _close_to_jax(srcjax.jit(irfftn_axes)(X(3, 4, k=0.2)), "jit.irfftn_axes")
    _close_to_jax(srcjax.hessian(rfft_n_ortho)(X(7)), "hessian.rfft_n_ortho")
    _close_to_jax(srcjax.hessian(irfft_odd_n)(X(4)), "hessian.irfft_odd_n")
    _, t = srcjax.jvp(jvp_filter, (X(6),), (X(6, off=2.0),))
    _close_to_jax(t, "jvp.jvp_filter")


# -- every transform's derivative by central differences (float64) ----------------------
# A loss that reads both parts of a complex output with position-dependent weights;
# complex inputs are ``p[0] + 1j * p[1]`` so that the gradient of each part is checked
# (irfft ignores the imaginary parts of its DC and Nyquist bins: zero gradient there).


def _probe(y):
    w = jnp.cos(jnp.arange(y.size) * 1.3).reshape(y.shape)
    return jnp.sum(jnp.real(y) * w + 0.7 * jnp.real(y) ** 2 + jnp.imag(y) * jnp.real(y) * w)


def _c(p):
    return p[0] + 1j * p[1]


def d_fft_pad(p):
    return _probe(jnp.fft.fft(p, n=9))


def d_fft_crop_axis0(p):
    return _probe(jnp.fft.fft(_c(p), n=4, axis=0))


def d_ifft_ortho(p):
    return _probe(jnp.fft.ifft(_c(p), norm="ortho"))


def d_rfft_pad_even(p):
    return _probe(jnp.fft.rfft(p, n=8))


def d_rfft_odd_forward(p):
    return _probe(jnp.fft.rfft(p, norm="forward"))


def d_irfft_default(p):
    return _probe(jnp.fft.irfft(_c(p)))


def d_irfft_crop_odd(p):
    return _probe(jnp.fft.irfft(_c(p), n=7, norm="ortho"))


def d_irfftn_crop_pad(p):
    return _probe(jnp.fft.irfftn(_c(p), s=(3, 6), axes=(0, 1)))


def d_rfftn_axes_forward(p):
    return _probe(jnp.fft.rfftn(p, s=(4, 5), axes=(1, 0), norm="forward"))


def d_hfft(p):
    return _probe(jnp.fft.hfft(_c(p), n=6))


def d_ihfft(p):
    return _probe(jnp.fft.ihfft(p, n=5, norm="ortho"))


def d_fft2_ifft2(p):
    return _probe(jnp.fft.fft2(_c(p), s=(2, 5))) + _probe(jnp.fft.ifft2(_c(p), axes=(0, 1)))


def d_rfft2_irfft2(p):
    return _probe(jnp.fft.rfft2(p[0])) + _probe(jnp.fft.irfft2(_c(p), s=(4, 4)))


def d_shifts(p):
    return _probe(jnp.fft.fftshift(p[0], axes=0)) + _probe(jnp.fft.ifftshift(p[1]))


FD_CASES = [
    (d_fft_pad, (7,)),
    (d_fft_crop_axis0, (2, 5, 3)),
    (d_ifft_ortho, (2, 6)),
    (d_rfft_pad_even, (5,)),
    (d_rfft_odd_forward, (7,)),
    (d_irfft_default, (2, 5)),
    (d_irfft_crop_odd, (2, 6)),
    (d_irfftn_crop_pad, (2, 4, 3)),
    (d_rfftn_axes_forward, (3, 4)),
    (d_hfft, (2, 4)),
    (d_ihfft, (6,)),
    (d_fft2_ifft2, (2, 3, 4)),
    (d_rfft2_irfft2, (2, 3, 4)),
    (d_shifts, (2, 3, 5)),
]


@pytest.mark.parametrize("f, shape", FD_CASES, ids=[f.__name__ for f, _ in FD_CASES])
def test_grad_matches_finite_differences(f, shape, x64):
    p = X(*shape, k=0.9, off=0.4).astype(np.float64)
    got = srcjax.grad(f)(p)
    assert np.asarray(got).dtype == np.float64
    np.testing.assert_allclose(got, fd_grad(f, p), rtol=1e-6, atol=1e-7)


def test_rfft_irfft_adjoints_are_not_the_inverses(x64):
    # rfft's adjoint (JAX's pairing re(g t)) at a cotangent on one bin k is
    # re(w^(jk)): half of what the inverse-transform guess gives for an interior bin
    _, pull = srcjax.vjp(jnp.fft.rfft, np.zeros(6))
    for k, mult in ((0, 1.0), (1, 2.0), (3, 1.0)):  # DC, interior, Nyquist (n even)
        g = np.zeros(4, complex)
        g[k] = 1.0
        (got,) = pull(g)
        want = np.cos(2 * np.pi * k * np.arange(6) / 6)  # re(sum_k g_k w^(jk))
        np.testing.assert_allclose(got, want, atol=1e-12)
        # the naive guess n * irfft(conj(g)) counts an interior bin twice
        np.testing.assert_allclose(mult * got, 6 * np.fft.irfft(g, 6), atol=1e-12)
    _, pull = srcjax.vjp(jnp.fft.irfft, np.zeros(4, complex))
    (got,) = pull(np.cos(np.arange(6.0)))
    zbar = np.fft.rfft(np.cos(np.arange(6.0))).conj() / 6 * np.array([1, 2, 2, 1])
    np.testing.assert_allclose(got, zbar, atol=1e-12)


@pytest.mark.parametrize("f, shape", FD_CASES[:10], ids=[f.__name__ for f, _ in FD_CASES[:10]])
def test_jvp_matches_finite_differences(f, shape, x64):
    p = X(*shape, k=0.9, off=0.4).astype(np.float64)
    t = X(*shape, k=0.5, off=1.0).astype(np.float64)
    _, got = srcjax.jvp(f, (p,), (t,))
    eps = 1e-6
    want = (f(p + eps * t) - f(p - eps * t)) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_second_order_through_rfft_matches_finite_differences(x64):
    p = X(5, k=0.9, off=0.4).astype(np.float64)
    g = srcjax.grad(d_rfft_pad_even)
    h = srcjax.jacfwd(srcjax.grad(d_rfft_pad_even))(p)
    want = np.stack([fd_grad(lambda q, i=i: g(q)[i], p) for i in range(5)])
    np.testing.assert_allclose(h, want, rtol=1e-5, atol=1e-6)
    h2 = srcjax.hessian(d_irfft_crop_odd)(X(2, 6).astype(np.float64))
    np.testing.assert_allclose(h2, np.swapaxes(h2, 0, 2).swapaxes(1, 3), atol=1e-12)


# -- values against NumPy ------------------------------------------------------------------


def _c64(*shape, off=0.0):
    return (X(*shape, off=off) + 1j * X(*shape, k=1.3, off=off)).astype(np.complex64)


VALUE_CASES = [
    ("fft", jnp.fft.fft, np.fft.fft, (5, 6), dict(n=4, axis=0, norm="ortho")),
    ("fft_pad", jnp.fft.fft, np.fft.fft, (6,), dict(n=9)),
    ("ifft", jnp.fft.ifft, np.fft.ifft, (3, 7), dict(norm="forward")),
    ("rfft", jnp.fft.rfft, np.fft.rfft, (4, 9), dict(n=8)),
    ("irfft", jnp.fft.irfft, np.fft.irfft, (3, 5), dict(axis=0, n=5)),
    ("irfft_default", jnp.fft.irfft, np.fft.irfft, (2, 5), {}),
    ("hfft", jnp.fft.hfft, np.fft.hfft, (6,), dict(norm="ortho")),
    ("hfft_fwd", jnp.fft.hfft, np.fft.hfft, (3, 4), dict(n=5, norm="forward")),
    ("ihfft", jnp.fft.ihfft, np.fft.ihfft, (7,), {}),
    ("ihfft_fwd", jnp.fft.ihfft, np.fft.ihfft, (2, 6), dict(n=8, axis=0, norm="forward")),
    ("fft2", jnp.fft.fft2, np.fft.fft2, (2, 3, 4), dict(s=(4, 2))),
    ("ifft2", jnp.fft.ifft2, np.fft.ifft2, (3, 4, 2), dict(axes=(0, 2), norm="ortho")),
    ("rfft2", jnp.fft.rfft2, np.fft.rfft2, (4, 6), {}),
    ("irfft2", jnp.fft.irfft2, np.fft.irfft2, (3, 4), dict(s=(3, 7))),
    ("fftn", jnp.fft.fftn, np.fft.fftn, (2, 3, 4), {}),
    ("fftn_s", jnp.fft.fftn, np.fft.fftn, (2, 3, 4), dict(s=(5, 2))),  # the last axes
    ("ifftn", jnp.fft.ifftn, np.fft.ifftn, (2, 3, 4), dict(axes=(2, 0), norm="forward")),
    ("rfftn", jnp.fft.rfftn, np.fft.rfftn, (3, 4, 5), dict(axes=(-1, 0))),
    ("irfftn", jnp.fft.irfftn, np.fft.irfftn, (3, 4, 5), dict(s=(2, 4, 6), norm="ortho")),
    ("fftshift", jnp.fft.fftshift, np.fft.fftshift, (4, 5), {}),
    ("ifftshift", jnp.fft.ifftshift, np.fft.ifftshift, (4, 5), dict(axes=(1,))),
]
# NumPy 2 deprecates s without axes; JAX (and srcjax) take the last len(s) axes
NUMPY_AXES = {"fftn_s": (1, 2), "irfftn": (0, 1, 2)}
REAL_ONLY = {"rfft", "ihfft", "ihfft_fwd", "rfft2", "rfftn", "fftshift", "ifftshift"}


@pytest.mark.parametrize("case", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_values_match_numpy(case):
    name, ours, ref, shape, kw = case
    x = X(*shape) if name in REAL_ONLY else _c64(*shape)
    got = ours(x, **kw)
    np_kw = dict(kw, axes=NUMPY_AXES[name]) if name in NUMPY_AXES else kw
    want = ref(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64), **np_kw)
    assert got.shape == want.shape
    kind = want.dtype.kind
    assert got.dtype == {"c": np.complex64, "f": np.float32}[kind]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-5 * np.max(np.abs(want)))


def test_float64_values_with_x64(x64):
    x = X(3, 8).astype(np.float64)
    z = x + 1j * X(3, 8, off=2.0)
    for got, want in [
        (jnp.fft.rfft(x), np.fft.rfft(x)),
        (jnp.fft.fftn(z, s=(4, 6)), np.fft.fftn(z, s=(4, 6), axes=(0, 1))),
        (jnp.fft.irfft(z, n=9, norm="ortho"), np.fft.irfft(z, n=9, norm="ortho")),
        (jnp.fft.hfft(z), np.fft.hfft(z)),
        (jnp.fft.ihfft(x, axis=0), np.fft.ihfft(x, axis=0)),
    ]:
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_hfft_ihfft_freq_values_match_jax():
    _close_to_jax(jnp.fft.hfft(LOSSES["irfft_complex"][1], n=7, norm="forward"), "hfft.forward")
    _close_to_jax(jnp.fft.ihfft(X(7), n=6, norm="ortho"), "ihfft.ortho")
    _close_to_jax(jnp.fft.fftfreq(7, 0.3), "fftfreq")
    _close_to_jax(jnp.fft.rfftfreq(8, 0.25), "rfftfreq")
    got = jnp.fft.fftfreq(6, 0.1, dtype=jnp.int32)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, _want("fftfreq.int32"))
    got = jnp.fft.rfftfreq(6, dtype=jnp.int32)  # JAX: int / int is float32
    assert got.dtype == np.float32
    _close_to_jax(got, "rfftfreq.int32")
    assert jnp.fft.fftfreq(5).dtype == np.float32
    assert jnp.fft.rfftfreq(5, dtype=jnp.float16).dtype == np.float16
    assert jnp.fft.fftfreq(6, dtype=jnp.complex64).dtype == np.complex64


# -- dtypes (JAX 0.10.2's, recorded) -------------------------------------------------------


@pytest.mark.parametrize("dt", [np.int8, np.int32, np.bool_, np.float16, np.float32, np.float64])
def test_real_and_integer_inputs_give_complex64(dt):
    x = np.ones(4, dt)
    assert jnp.fft.fft(x).dtype == np.complex64
    assert jnp.fft.irfft(x).dtype == np.float32
    assert jnp.fft.hfft(x).shape == (6,) and jnp.fft.hfft(x).dtype == np.float32
    if dt != np.float16:
        assert jnp.fft.rfft(x).dtype == np.complex64
        assert jnp.fft.ihfft(x).dtype == np.complex64
    np.testing.assert_allclose(jnp.fft.fft(x), [4, 0, 0, 0])


def test_dtypes_with_x64(x64):
    assert jnp.fft.fft(np.ones(4, np.float64)).dtype == np.complex128
    assert jnp.fft.rfft(np.ones(4, np.float64)).dtype == np.complex128
    assert jnp.fft.irfft(np.ones(4, np.complex128)).dtype == np.float64
    # JAX: 32-bit and smaller inputs stay single precision under x64
    assert jnp.fft.fft(np.ones(4, np.int32)).dtype == np.complex64
    assert jnp.fft.fft(np.ones(4, np.float32)).dtype == np.complex64
    assert jnp.fft.irfft(np.ones(4, np.float16)).dtype == np.float32
    assert jnp.fft.fft(np.ones(4, np.int64)).dtype == np.complex128
    assert jnp.fft.fftfreq(5).dtype == np.float64


def test_edge_shapes_as_jax():
    x = np.ones((3, 4), np.float32)
    # no axes: the converted input (JAX 0.10.2: complex64, float32, complex64)
    assert jnp.fft.fftn(x, axes=()).dtype == np.complex64
    assert jnp.fft.rfftn(x, axes=()).dtype == np.float32
    assert jnp.fft.irfftn(x, axes=()).dtype == np.complex64
    assert jnp.fft.irfft(np.ones((2, 1), np.complex64)).shape == (2, 0)
    assert jnp.fft.fft(np.ones((3, 0), np.float32)).shape == (3, 0)
    np.testing.assert_array_equal(jnp.fft.fft(np.ones((3, 0), np.float32), n=2), np.zeros((3, 2)))
    assert complex(jnp.fft.fftn(np.float32(2.0))) == 2.0
    np.testing.assert_array_equal(jnp.fft.fftshift(np.arange(5.0)), [3.0, 4.0, 0.0, 1.0, 2.0])
    assert jnp.fft.fftshift(np.arange(3)).dtype == np.int32


# -- errors (JAX's messages) ----------------------------------------------------------------


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: jnp.fft.fft(np.ones(4), norm="bad"), ValueError, "Invalid norm value bad"),
        (lambda: jnp.fft.fftn(np.ones((3, 3)), axes=(0, 0)), ValueError, "repeated axes"),
        (lambda: jnp.fft.fftn(np.ones((3, 3)), axes=(0, -2)), ValueError, "repeated axes"),
        (lambda: jnp.fft.fftn(np.ones((3, 3)), s=(0, 2)), ValueError, "Shape should be positive"),
        (lambda: jnp.fft.fft(np.ones(3), n=0), ValueError, "Shape should be positive"),
        (
            lambda: jnp.fft.fftn(np.ones((3, 3)), s=(2,), axes=(0, 1)),
            ValueError,
            "different lengths",
        ),
        (lambda: jnp.fft.fft(np.ones((3, 3)), axis=[0]), ValueError, "does not support multiple"),
        (lambda: jnp.fft.fft(np.ones((3, 3)), axis=2), ValueError, "out of bounds"),
        (lambda: jnp.fft.fft2(np.ones((2, 2, 2)), axes=(0, 1, 2)), ValueError, "only supports 2"),
        (lambda: jnp.fft.fftn(np.ones((2, 2)), s=(2, 2, 2)), ValueError, "at least as many"),
        (lambda: jnp.fft.rfft(np.ones(3, np.complex64)), ValueError, "only real valued"),
        (lambda: jnp.fft.ihfft(np.ones(3, np.complex64)), ValueError, "only real valued"),
        (lambda: jnp.fft.rfft(np.ones(3, np.float16)), ValueError, "float32 or float64"),
        (lambda: jnp.fft.fft([1.0, 2.0]), TypeError, "requires ndarray or scalar"),
        (lambda: jnp.fft.fftshift([1.0, 2.0]), TypeError, "requires ndarray or scalar"),
        (lambda: jnp.fft.fft(np.ones(3), n=2.0), TypeError, "integer"),
        (lambda: jnp.fft.fft(1.0), ValueError, "out of bounds"),
        (lambda: jnp.fft.fftshift(np.ones(3), axes=1), ValueError, "out of bounds"),
        (lambda: jnp.fft.fftfreq([4]), ValueError, "only takes an int"),
        (lambda: jnp.fft.rfftfreq(4, [1.0]), ValueError, "only takes a single value"),
    ],
)
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def bad_axis(x):
    return jnp.fft.fft(x, axis=1)


def test_per_example_axis_checked_under_vmap():
    # the batched operand has one more axis; the per-example check still refuses
    with pytest.raises(ValueError, match="out of bounds"):
        srcjax.vmap(bad_axis)(np.ones((3, 4), np.float32))


# -- vmap against a loop, jit against eager ---------------------------------------------------


def v_fft(x):
    return jnp.fft.fft(x, n=6)


def v_ifft(x):
    return jnp.fft.ifft(x, axis=0, norm="ortho")


def v_rfft(x):
    return jnp.fft.rfft(x)


def v_irfft(x):
    return jnp.fft.irfft(x * (1 + 1j), n=7)


def v_hfft(x):
    return jnp.fft.hfft(x - 0.5j)


def v_ihfft(x):
    return jnp.fft.ihfft(x, n=5)


def v_fft2(x):
    return jnp.fft.fft2(x, s=(3, 3))


def v_rfft2(x):
    return jnp.fft.rfft2(x, norm="forward")


def v_irfft2(x):
    return jnp.fft.irfft2(x + 1j * x[::-1], s=(2, 4))


def v_fftn(x):
    return jnp.fft.fftn(x)


def v_ifftn(x):
    return jnp.fft.ifftn(x, axes=(0,))


def v_rfftn(x):
    return jnp.fft.rfftn(x, s=(4,), axes=(-2,))


def v_irfftn(x):
    return jnp.fft.irfftn(x, s=(3, 4))


def v_shift(x):
    return jnp.fft.fftshift(x) + jnp.fft.ifftshift(x, axes=-1) * 2.0


V_CASES = [v_fft, v_ifft, v_rfft, v_irfft, v_hfft, v_ihfft, v_fft2, v_rfft2, v_irfft2]
V_CASES += [v_fftn, v_ifftn, v_rfftn, v_irfftn, v_shift]


@pytest.mark.parametrize("f", V_CASES, ids=[f.__name__ for f in V_CASES])
def test_vmap_matches_loop_and_jit_matches_eager(f):
    xs = X(5, 3, 4, k=0.37)
    want = np.stack([f(x) for x in xs])
    got = srcjax.vmap(f)(xs)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    got = srcjax.vmap(f, in_axes=2)(np.moveaxis(xs, 0, 2))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    eager = f(xs[0])
    jitted = srcjax.jit(f)(xs[0])
    assert jitted.dtype == eager.dtype and jitted.shape == eager.shape
    np.testing.assert_allclose(jitted, eager, rtol=1e-6, atol=1e-6)


def test_nested_vmap_and_vmap_of_jvp():
    xs = X(2, 3, 4, 6, k=0.21)
    got = srcjax.vmap(srcjax.vmap(v_irfftn))(xs)
    want = np.stack([np.stack([v_irfftn(x) for x in row]) for row in xs])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)

    def tangent(x):
        return srcjax.jvp(v_rfft2, (x,), (x * 0.5,))[1]

    got = srcjax.vmap(tangent)(xs[0])
    np.testing.assert_allclose(got, np.stack([v_rfft2(x * 0.5) for x in xs[0]]), atol=1e-6)
