"""Programs JAX runs that srcjax refused (user9's report, items 6-9). Expected
values recorded from JAX 0.10.2."""

import numpy as np

import srcjax
import srcjax.numpy as jnp
import srcjax.scipy as jsp
import srcjax.scipy.linalg
import srcjax.scipy.stats  # noqa: F401

X = jnp.arange(20.0).reshape(4, 5) ** 1.5
T = jnp.cos(jnp.arange(20.0)).reshape(4, 5)
XS = jnp.linspace(-1, 1, 40).reshape(2, 4, 5)
COV = jnp.eye(5) * 2.0 + 0.3


def test_jvp_of_corrcoef_treats_dtype_queries_as_static():
    # corrcoef asks iscomplexobj of a differentiated value: static information
    tan = srcjax.jvp(jnp.corrcoef, (X,), (T,))[1]
    want_row1 = [-0.02414524555206299, -6.05e-09, 0.0001360150199616328, 0.0022813219111412764]
    np.testing.assert_allclose(tan[1], want_row1, atol=2e-6, rtol=1e-4)
    np.testing.assert_allclose(tan, np.asarray(tan).T, atol=1e-6)
    f = lambda v: jnp.cov(v) * jnp.isrealobj(v) + np.iscomplexobj(v)  # noqa: E731
    np.testing.assert_allclose(
        srcjax.jvp(f, (X,), (T,))[1][0, :2], [-4.6206255, -6.755869], rtol=1e-5
    )
    assert jnp.iscomplexobj(X) is False and jnp.isrealobj(X) is True
    assert srcjax.vmap(lambda v: jnp.sum(v) * jnp.iscomplexobj(v + 1j))(X).tolist() == [
        float(np.sum(r)) for r in np.asarray(X)
    ]


def test_vmap_of_mvn_logpdf_with_shared_mean_and_cov():
    f = lambda a: jsp.stats.multivariate_normal.logpdf(a, jnp.zeros(5) + 0.1, COV)  # noqa: E731
    want = [
        [-7.324570655822754, -7.006170749664307, -6.781694412231445, -6.651141166687012],
        [-6.614511489868164, -6.671804428100586, -6.823020935058594, -7.068160057067871],
    ]
    np.testing.assert_allclose(srcjax.vmap(f)(XS), want, rtol=1e-5)
    np.testing.assert_allclose(srcjax.jit(srcjax.vmap(f))(XS), want, rtol=1e-5)
    chol = jnp.linalg.cholesky(COV)
    solve = lambda b: jsp.linalg.solve_triangular(chol, b, lower=True)  # noqa: E731
    got = srcjax.vmap(solve)(XS[..., None])[..., 0].sum(axis=-1)
    np.testing.assert_allclose(
        got,
        [
            [-2.3286867141723633, -1.651882529258728, -0.9750779867172241, -0.29827365279197693],
            [0.3785308003425598, 1.0553351640701294, 1.7321395874023438, 2.4089438915252686],
        ],
        rtol=1e-5,
    )


def _max_twice_plus_min(x):
    return max(x) * 2 + min(x)  # builtin max/min over an array's elements


def test_builtin_max_min_over_elements_differentiate():
    x = jnp.array([1.0, 3.0, 2.0])
    assert _max_twice_plus_min(x) == 7.0
    np.testing.assert_array_equal(srcjax.grad(_max_twice_plus_min)(x), [1.0, 2.0, 0.0])  # JAX
    np.testing.assert_array_equal(srcjax.jit(srcjax.grad(_max_twice_plus_min))(x), [1, 2, 0])
    ties = jnp.array([[1.0, 3.0, 2.0], [3.0, 3.0, 0.0]])  # Python keeps the first of ties
    np.testing.assert_array_equal(
        srcjax.vmap(srcjax.grad(_max_twice_plus_min))(ties), [[1, 2, 0], [2, 0, 1]]
    )
    assert srcjax.jvp(_max_twice_plus_min, (x,), (jnp.array([1.0, 10.0, 100.0]),))[1] == 21.0


X5 = jnp.array([-2.5, -0.3, 0.0, 0.7, 4.0])
# JAX 0.10.2: values and vmap(grad) at X5
BESSEL = {
    "i0": (
        [
            3.289839506149292,
            1.0226268768310547,
            1.0000001192092896,
            1.1263030767440796,
            11.301920890808105,
        ],
        [
            -2.5167160034179688,
            -0.15169388055801392,
            0.0,  # JAX 0.10.2: 1.0000001 (its rule); i0'(0) = i1(0) = 0
            0.3718796968460083,
            9.759466171264648,
        ],
    ),
    "i0e": (
        [
            0.2700464725494385,
            0.757580578327179,
            1.0000001192092896,
            0.5593055486679077,
            0.20700190961360931,
        ],
        [0.06346184015274048, 0.6452029943466187, 0.0, -0.37463557720184326, -0.028251037001609802],
    ),
    "i1": (
        [-2.5167160034179688, -0.15169386565685272, 0.0, 0.3718796968460083, 9.759467124938965],
        [2.2831530570983887, 0.5169807076454163, 0.5, 0.59504634141922, 8.862054824829102],
    ),
    "i1e": (
        [-0.206584632396698, -0.11237756907939911, 0.0, 0.18466998636722565, 0.1787508726119995],
        [
            -0.01917201280593872,
            0.27061113715171814,
            0.5,
            0.11082127690315247,
            -0.016436681151390076,
        ],
    ),
}


def test_bessel_i0e_i1e_i0_i1_values_and_gradients():
    for name, (vals, grads) in BESSEL.items():
        f = getattr(jsp.special, name)
        np.testing.assert_allclose(f(X5), vals, rtol=2e-6, atol=1e-7, err_msg=name)
        np.testing.assert_allclose(srcjax.vmap(srcjax.grad(f))(X5), grads, rtol=2e-5, atol=1e-6)
        assert f(jnp.float16(1.5)).dtype == np.float16 and f(3).dtype == np.float32
    np.testing.assert_allclose(
        srcjax.jit(lambda v: jsp.special.i1e(v) * jsp.special.i0e(v))(X5),
        [-0.05578745, -0.08513507, 0.0, 0.10328694, 0.03700177],
        rtol=1e-5,
    )


def test_sort_complex():
    got = jnp.sort_complex(jnp.array([3 + 1j, 1 - 2j, 1 + 0j, 3 - 1j, 2.0]))
    assert np.asarray(got).tolist() == [(1 - 2j), (1 + 0j), (2 + 0j), (3 - 1j), (3 + 1j)]
    assert jnp.sort_complex(jnp.array([3, 1, 2])).dtype == np.complex64
    m = jnp.sort_complex(jnp.array([[5.0, 3.0, 4.0], [9.0, 2.0, 6.0]]))
    assert np.asarray(m).tolist() == [[3, 4, 5], [2, 6, 9]] and m.dtype == np.complex64
