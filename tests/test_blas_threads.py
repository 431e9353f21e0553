"""LAPACK calls on small matrices run on one BLAS thread
(srcjax/primitives/linalg/_blas_threads.py).

The fresh user's ``jit(grad(cholesky))`` of a 30x30 matrix alternated 60 us and
30-48 ms on a loaded machine (docs/issues/fresh-user-round5-2026-12-06.md, item
04): SciPy's OpenBLAS solved the 30x30 triangular systems of the gradient on two
threads and waited for a worker the kernel had not scheduled. These tests check
the mechanism, never a timing: the thread count the BLAS library has *during*
the LAPACK call (read by a spy wrapped around it), that it is restored after,
and that the values are unchanged (oracles: NumPy's general solve, float64
finite differences).
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

threadpoolctl = pytest.importorskip("threadpoolctl")
pytest.importorskip("scipy.linalg")

import srcjax  # noqa: E402
import srcjax.numpy as jnp  # noqa: E402
import srcjax.scipy.linalg as jsl  # noqa: E402
from srcjax.primitives.linalg import _blas_threads, triangular  # noqa: E402


def _blas_of(package):
    libs = _blas_threads._controllers(package)
    if not libs:
        pytest.skip(f"threadpoolctl finds no BLAS library for {package}")
    return libs


@pytest.fixture
def two_threads():
    """Every BLAS library on two threads for the test (then as before): the limit
    under test only acts on a library with more than one thread."""
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        yield


def _spy(monkeypatch, module, name, package):
    """Replace ``module.name`` by a wrapper recording the thread counts of
    ``package``'s BLAS libraries at each call."""
    seen = []
    real = getattr(module, name)

    def spy(*args, **kwargs):
        seen.append(max(c.get_num_threads() for c in _blas_of(package)))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return seen


def _spy_trsm(monkeypatch):
    """Record the thread counts of SciPy's BLAS at each ``trsm`` call of
    solve_triangular (triangular._tri_solve_2d)."""
    seen = []
    real = triangular._trsm

    def trsm_of(dtype):
        fn = real(dtype)

        def spy(*args, **kwargs):
            seen.append(max(c.get_num_threads() for c in _blas_of("scipy")))
            return fn(*args, **kwargs)

        return spy

    monkeypatch.setattr(triangular, "_trsm", trsm_of)
    return seen


def _lower(rng, n):
    return (np.tril(rng.normal(size=(n, n))) + n * np.eye(n)).astype(np.float32)


def test_small_triangular_solve_runs_on_one_thread(monkeypatch, two_threads):
    rng = np.random.default_rng(0)
    # 40 x 40 columns: over trsm's own one-thread guard, under SMALL_WORK
    assert 40 * 40 >= triangular.TRSM_OWN_GUARD and 40**3 <= _blas_threads.SMALL_WORK
    a, b = _lower(rng, 40), rng.normal(size=(40, 40)).astype(np.float32)
    seen = _spy_trsm(monkeypatch)
    x = np.asarray(jsl.solve_triangular(a, b, lower=True))
    assert seen == [1]
    assert max(c.get_num_threads() for c in _blas_of("scipy")) == 2  # restored
    np.testing.assert_allclose(x, np.linalg.solve(a.astype(np.float64), b), rtol=1e-4, atol=1e-5)


def test_tiny_triangular_solve_calls_trsm_directly(monkeypatch, two_threads):
    """Under trsm's own guard (rows * columns < 1024) OpenBLAS keeps the solve on
    the calling thread itself: no limit is set (it would cost more than the solve)."""
    rng = np.random.default_rng(5)
    a, b = _lower(rng, 12), rng.normal(size=(12,)).astype(np.float32)
    seen = _spy_trsm(monkeypatch)
    x = np.asarray(jsl.solve_triangular(a, b, lower=True))
    assert seen == [2]
    np.testing.assert_allclose(x, np.linalg.solve(a.astype(np.float64), b), rtol=1e-5, atol=1e-6)


def test_large_triangular_solve_keeps_its_threads(monkeypatch, two_threads):
    rng = np.random.default_rng(1)
    n = 96  # 96**3 is over SMALL_WORK: the threads may help, they stay
    assert n**3 > _blas_threads.SMALL_WORK
    a, b = _lower(rng, n), rng.normal(size=(n, n)).astype(np.float32)
    seen = _spy_trsm(monkeypatch)
    x = np.asarray(jsl.solve_triangular(a, b, lower=True))
    assert seen == [2]
    np.testing.assert_allclose(x, np.linalg.solve(a.astype(np.float64), b), rtol=1e-4, atol=1e-5)


def test_small_eigh_runs_on_one_thread(monkeypatch, two_threads):
    rng = np.random.default_rng(2)
    m = rng.normal(size=(20, 20))
    s = (m + m.T).astype(np.float32)
    seen = _spy(monkeypatch, np.linalg, "eigh", "numpy")
    w, v = jnp.linalg.eigh(s)
    assert seen == [1]
    assert max(c.get_num_threads() for c in _blas_of("numpy")) == 2
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(s.astype(np.float64)), atol=1e-4)


def test_grad_of_cholesky_under_jit_solves_on_one_thread(monkeypatch, two_threads):
    """Item 04's program (30x30 there: under trsm's own guard now; 40x40 here):
    every triangular solve of the gradient runs on one thread, and the gradient
    is float64 finite differences'."""
    rng = np.random.default_rng(3)
    x = rng.uniform(-3, 3, (40, 1))
    k = np.exp(-0.5 * (x - x.T) ** 2) + 0.1 * np.eye(40)

    def f(k):
        return jnp.sum(jnp.log(jnp.diag(jnp.linalg.cholesky(k))))

    seen = _spy_trsm(monkeypatch)
    g = np.asarray(srcjax.jit(srcjax.grad(f))(k.astype(np.float32)))
    assert seen and set(seen) == {1}

    # sum(log(diag(chol(K)))) = log det(K) / 2: its derivative along a symmetric E
    e = np.zeros((40, 40))
    e[3, 7] = e[7, 3] = 1.0
    h = 1e-6
    fd = (np.linalg.slogdet(k + h * e)[1] - np.linalg.slogdet(k - h * e)[1]) / (4 * h)
    np.testing.assert_allclose(g[3, 7] + g[7, 3], fd, rtol=2e-3, atol=1e-4)


def test_threads_are_restored_when_the_call_raises(two_threads):
    _blas_of("numpy")

    def boom():
        assert max(c.get_num_threads() for c in _blas_of("numpy")) == 1
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        _blas_threads.call_small("numpy", 8, boom)
    assert max(c.get_num_threads() for c in _blas_of("numpy")) == 2


def test_a_user_limit_of_one_thread_is_left_alone(monkeypatch):
    """With the library already on one thread nothing is set or restored."""
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        libs = _blas_of("numpy")
        calls = []
        for c in libs:
            monkeypatch.setattr(c, "set_num_threads", lambda n, calls=calls: calls.append(n))
        assert _blas_threads.call_small("numpy", 8, lambda: 7) == 7
        assert calls == []


def test_without_threadpoolctl_calls_run_as_they_are(monkeypatch):
    monkeypatch.setattr(_blas_threads, "_FOUND", {})
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # import fails
    rng = np.random.default_rng(4)
    a, b = _lower(rng, 40), rng.normal(size=(40, 40)).astype(np.float32)
    x = np.asarray(jsl.solve_triangular(a, b, lower=True))
    np.testing.assert_allclose(x, np.linalg.solve(a.astype(np.float64), b), rtol=1e-4, atol=1e-5)
    assert _blas_threads._FOUND["scipy"] == []
