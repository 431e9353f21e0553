"""The one lazy loader of compiled (Numba) kernels, ``primitives.lazy_kernels``,
that float32 cumsum (primitives/reductions/cumulative.py) and the threefry
kernels (random/_threefry.py) share: loaded at the first use only, once; a
loader that fails or finds no Numba gives None for good (the NumPy path, no
second attempt); turned off and on without loading again; a new loader starts
over. Oracle: counts of the loader's calls."""

import numpy as np

from srcjax.primitives.lazy_kernels import LazyKernel


def test_loaded_once_at_first_use():
    calls = []
    k = LazyKernel("test kernel")
    assert k.get() is None  # (no loader: no Numba access set up)
    k.set_loader(lambda: calls.append(1) or "kernel")
    assert calls == []  # setting a loader loads nothing
    assert k.get() == "kernel" and k.get() == "kernel"
    assert calls == [1]


def test_a_failure_or_no_numba_is_remembered():
    calls = []

    def broken():
        calls.append(1)
        raise TypeError("numba cannot type this")

    k = LazyKernel("test kernel")
    k.set_loader(broken)
    assert k.get() is None and k.get() is None
    assert calls == [1]
    k.set_loader(lambda: calls.append(2))  # (returns None: Numba unavailable)
    assert k.get() is None and k.get() is None
    assert calls == [1, 2]


def test_off_and_on_without_loading_again():
    calls = []
    k = LazyKernel("test kernel")
    k.set_loader(lambda: calls.append(1) or "kernel")
    k.use(False)
    assert k.get() is None and calls == []
    k.use(True)
    assert k.get() == "kernel"
    k.use(False)
    assert k.get() is None
    k.use(True)
    assert k.get() == "kernel" and calls == [1]


def test_the_two_users_share_it():
    """cumsum's scan kernel and the threefry kernels are LazyKernels; with
    either off, the NumPy path gives the same values (cumsum: np.cumsum in
    float64 rounded once)."""
    import srcjax.numpy as jnp
    from srcjax.primitives.reductions import cumulative
    from srcjax.random import _threefry

    assert isinstance(cumulative.SCAN_KERNEL, LazyKernel)
    assert isinstance(_threefry.KERNELS, LazyKernel)
    x = np.random.default_rng(0).standard_normal((4, 8192)).astype(np.float32)
    want = np.cumsum(x, axis=1, dtype=np.float64).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.cumsum(x, axis=1)), want)
    cumulative.SCAN_KERNEL.use(False)
    try:
        np.testing.assert_array_equal(np.asarray(jnp.cumsum(x, axis=1)), want)
    finally:
        cumulative.SCAN_KERNEL.use(True)
