"""``jnp.roots``: values, order and dtype recorded from jax 0.10.2 (CPU), which
computes the companion matrix's eigenvalues with LAPACK ``geev`` in ``p``'s
precision; numpy.roots checks the values (it strips trailing zeros and uses
float64, so it is compared as a set, to float32 precision)."""

import numpy as np
import pytest

import srcjax as jax
import srcjax.numpy as jnp

nan = complex(np.nan, np.nan)


def _eq(got, want, dtype=np.complex64):
    got = np.asarray(got)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.asarray(want, dtype))


def test_roots_match_jax():
    # every expected list below was printed by jax.numpy.roots on the same input
    _eq(jnp.roots(jnp.array([1.0, -3.0, 2.0])), [2, 1])
    _eq(jnp.roots(jnp.array([0.0, 0.0, 1.0, 2.0])), [-2])
    _eq(jnp.roots(jnp.array([1.0, 0.0, 1.0])), [1j, -1j])
    _eq(jnp.roots(jnp.array([2.0, -1.0, 0.0, 0.0])), [0, 0, 0.5])  # trailing zeros kept
    _eq(
        jnp.roots(jnp.array([1, -6, 11, -6])),  # ints promote to float32: float32 geev
        [2.999995231628418, 2.0000014305114746, 1.0000001192092896],
    )
    _eq(
        jnp.roots(jnp.array([1.0, 2.0, 3.0, 4.0, 5.0])),
        [
            -1.2878154516220093 + 0.8578967452049255j,
            -1.2878154516220093 - 0.8578967452049255j,
            0.28781571984291077 + 1.4160929918289185j,
            0.28781571984291077 - 1.4160929918289185j,
        ],
    )
    _eq(
        jnp.roots(jnp.array([1 + 1j, 2.0, 3.0])),
        [-0.11091423034667969 + 1.7850635051727295j, -0.8890860080718994 - 0.7850635051727295j],
    )
    _eq(jnp.roots(jnp.array([True, False, True])), [1j, -1j])


def test_roots_short_and_zero_inputs():
    for p in (jnp.array([3.0]), jnp.array([0.0, 0.0, 0.0]), 5.0):
        _eq(jnp.roots(p), [])
    _eq(jnp.roots(jnp.array([0.0, 0.0, 0.0]), strip_zeros=False), [nan, nan])


def test_roots_strip_zeros_false():
    _eq(jnp.roots(jnp.array([0.0, 1.0, 2.0]), strip_zeros=False), [-2, nan])
    _eq(jnp.roots(jnp.array([2.0, -1.0, 0.0, 0.0]), strip_zeros=False), [0.5, 0, 0])
    _eq(jnp.roots(jnp.array([0.0, 0.0, 1.0, -3.0, 2.0]), strip_zeros=False), [1, 2, nan, nan])
    _eq(
        jnp.roots(jnp.array([0.0, 1.0, 0.0, 0.0, -1.0]), strip_zeros=False),
        [-0.5 + 0.866025447845459j, -0.5 - 0.866025447845459j, 1, nan],
    )


class _x64:
    def __enter__(self):
        self.old = jax.config.read("jax_enable_x64")
        jax.config.update("jax_enable_x64", True)

    def __exit__(self, *exc):
        jax.config.update("jax_enable_x64", self.old)


def test_roots_against_numpy():
    rng = np.random.default_rng(0)
    for n in (2, 4, 7):
        p = rng.normal(size=n + 1)
        got = np.sort_complex(np.asarray(jnp.roots(p.astype(np.float32))))
        want = np.sort_complex(np.roots(p))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    with _x64():
        p = rng.normal(size=6)
        r = jnp.roots(p)
        assert r.dtype == np.complex128
        np.testing.assert_allclose(np.sort_complex(r), np.sort_complex(np.roots(p)), rtol=1e-12)


def test_roots_nonfinite_gives_nan():
    # jax: [nan+nanj, nan+nanj] for each
    for p in ([1.0, np.nan, 2.0], [1.0, np.inf, 2.0], [1e-30, 1e30, 1.0]):
        _eq(jnp.roots(np.array(p, np.float32)), [nan, nan])


def test_roots_jit_vmap():
    p = jnp.array([1.0, -3.0, 2.0])
    _eq(jax.jit(lambda p: jnp.roots(p, strip_zeros=False))(p), [2, 1])
    ps = jnp.array([[1.0, -3.0, 2.0], [0.0, 1.0, 2.0]])
    _eq(jax.vmap(lambda p: jnp.roots(p, strip_zeros=False))(ps), [[2, 1], [-2, nan]])
    # jax refuses strip_zeros=True under jit (value-dependent length); srcjax computes it
    _eq(jax.jit(jnp.roots)(jnp.array([0.0, 1.0, 2.0])), [-2])


def test_roots_errors():
    with pytest.raises(ValueError, match="rank-1"):
        jnp.roots(jnp.ones((2, 2)))
    with pytest.raises(NotImplementedError):  # NoDerivativeRuleError
        jax.jvp(
            lambda p: jnp.roots(p, strip_zeros=False), (p := jnp.array([1.0, -3.0, 2.0]),), (p,)
        )
