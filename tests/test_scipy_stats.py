"""srcjax.scipy.stats (and the special functions it added) against JAX.

Expected values are JAX 0.10.2's (CPU, float32), recorded with
/tmp/jv/bin/python from the same inputs: the forward values and the gradients
of ``sum(f(*args))`` with respect to every argument (x, shape parameters, loc,
scale, mean, cov). jit and vmap are checked against the eager values, dtypes
against JAX's promotion, x64 against SciPy.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
import srcjax.scipy.special as SS
import srcjax.scipy.stats as S

f32 = np.float32
X = f32([-0.7, 0.3, 1.1, 2.5])
P = f32([0.05, 0.3, 0.75, 0.99])
K = f32([-1.0, 0.0, 1.0, 3.0])
U = f32([-0.2, 0.2, 0.9, 1.4])
# (id, distribution, function, args); floats are differentiated (every argument)
CASES = [
    ("norm.logpdf", "norm", "logpdf", (X, f32(0.4), f32(1.7))),
    ("norm.pdf", "norm", "pdf", (X, 0.4, f32([1.0, 2.0, 0.5, 3.0]))),
    ("norm.cdf", "norm", "cdf", (X, f32(0.4), f32(1.7))),
    ("norm.logcdf", "norm", "logcdf", (f32([-30.0, -3.0, 0.0, 2.0]), f32(0.4), f32(1.7))),
    ("norm.sf", "norm", "sf", (X, f32(0.4), f32(1.7))),
    ("norm.logsf", "norm", "logsf", (f32([-2.0, 0.0, 3.0, 30.0]), f32(0.4), f32(1.7))),
    ("norm.ppf", "norm", "ppf", (P, f32(0.4), f32(1.7))),
    ("norm.isf", "norm", "isf", (P, f32(0.4), f32(1.7))),
    ("bernoulli.logpmf", "bernoulli", "logpmf", (K, f32(0.3))),
    ("bernoulli.pmf", "bernoulli", "pmf", (K, f32([0.1, 0.3, 0.6, 0.9]))),
    ("bernoulli.cdf", "bernoulli", "cdf", (f32([-1.0, 0.0, 0.5, 1.0]), f32(0.3))),
    ("poisson.logpmf", "poisson", "logpmf", (f32([-1.0, 0.0, 2.0, 2.5]), f32(1.7))),
    ("poisson.pmf", "poisson", "pmf", (K, f32(2.5))),
    ("poisson.cdf", "poisson", "cdf", (f32([-1.0, 0.0, 2.0, 4.5]), f32(1.7))),
    ("beta.logpdf", "beta", "logpdf", (U, f32(2.0), f32(3.5))),
    (
        "beta.pdf",
        "beta",
        "pdf",
        (f32([0.1, 0.5, 1.2, 1.9]), f32(1.5), f32(2.5), f32(0.2), f32(1.5)),
    ),
    ("gamma.logpdf", "gamma", "logpdf", (X, f32(2.5))),
    ("gamma.pdf", "gamma", "pdf", (X, f32(1.5), f32(-0.5), f32(2.0))),
    ("expon.logpdf", "expon", "logpdf", (X, f32(0.1), f32(2.0))),
    ("expon.pdf", "expon", "pdf", (X,)),
    ("expon.cdf", "expon", "cdf", (X, f32(0.1), f32(2.0))),
    ("laplace.logpdf", "laplace", "logpdf", (X, f32(0.1), f32(2.0))),
    ("laplace.pdf", "laplace", "pdf", (X,)),
    ("laplace.cdf", "laplace", "cdf", (X, f32(0.1), f32(2.0))),
    ("cauchy.logpdf", "cauchy", "logpdf", (X, f32(0.1), f32(2.0))),
    ("cauchy.pdf", "cauchy", "pdf", (X,)),
    ("cauchy.cdf", "cauchy", "cdf", (X, f32(0.1), f32(2.0))),
    ("cauchy.ppf", "cauchy", "ppf", (P, f32(0.1), f32(2.0))),
    ("logistic.logpdf", "logistic", "logpdf", (X, f32(0.1), f32(2.0))),
    ("logistic.pdf", "logistic", "pdf", (X,)),
    ("logistic.cdf", "logistic", "cdf", (X, f32(0.1), f32(2.0))),
    ("logistic.ppf", "logistic", "ppf", (P, f32(0.1), f32(2.0))),
    ("t.logpdf", "t", "logpdf", (X, f32(3.5), f32(0.1), f32(2.0))),
    ("t.pdf", "t", "pdf", (X, f32(1.5))),
    ("uniform.logpdf", "uniform", "logpdf", (X, f32(-0.5), f32(2.0))),
    ("uniform.pdf", "uniform", "pdf", (U,)),
    ("chi2.logpdf", "chi2", "logpdf", (f32([0.3, 1.1, 2.5, 6.0]), f32(3.0))),
    ("chi2.pdf", "chi2", "pdf", (X, f32(2.5), f32(-1.0), f32(1.5))),
    ("truncnorm.logpdf", "truncnorm", "logpdf", (X, f32(-1.0), f32(1.5), f32(0.2), f32(1.3))),
    (
        "truncnorm.logpdf_tail",
        "truncnorm",
        "logpdf",
        (f32([2.1, 2.5, 3.0, 4.0]), f32(2.0), f32(3.5)),
    ),
    ("truncnorm.pdf", "truncnorm", "pdf", (X, f32(-3.0), f32(-0.5))),
    ("dirichlet.logpdf", "dirichlet", "logpdf", (f32([0.2, 0.3, 0.5]), f32([1.5, 2.0, 3.0]))),
    (
        "dirichlet.logpdf_short",
        "dirichlet",
        "logpdf",
        (f32([[0.2, 0.1], [0.3, 0.6]]), f32([1.5, 2.0, 3.0])),
    ),
    ("dirichlet.pdf", "dirichlet", "pdf", (f32([0.25, 0.75]), f32([2.0, 0.5]))),
    (
        "multivariate_normal.logpdf",
        "multivariate_normal",
        "logpdf",
        (
            f32([[0.2, 0.3, 0.5], [1.0, -1.0, 0.0]]),
            f32([0.1, -0.2, 0.3]),
            f32([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.5]]),
        ),
    ),
    (
        "multivariate_normal.pdf",
        "multivariate_normal",
        "pdf",
        (f32([0.2, 0.3]), f32([0.1, -0.2]), f32([[1.2, 0.4], [0.4, 0.9]])),
    ),
    (
        "multivariate_normal.logpdf_iso",
        "multivariate_normal",
        "logpdf",
        (f32([[0.2, 0.3], [1.0, -1.0]]), f32([0.1, -0.2]), f32(1.7)),
    ),
    (
        "multivariate_normal.logpdf_scalar",
        "multivariate_normal",
        "logpdf",
        (f32([0.2, 0.3, 1.0]), f32(0.1), f32(1.7)),
    ),
]


# fmt: off
# recorded from JAX 0.10.2: case id -> (f(*args), [d sum(f) / d arg for each arg], dtype)
JAX = {
    'norm.logpdf': (
        [-1.65890944 , -1.451296926, -1.534341931, -2.212542534],
        [[ 0.380622834,  0.034602072, -0.242214546, -0.726643562], 0.5536332130432129, -1.1072665452957153],
        'float32',
    ),
    'norm.pdf': (
        [0.217852175, 0.199221954, 0.299454898, 0.104084641],
        [[ 0.239637405,  0.004980549, -0.838473797, -0.024286414], 0.6181422472000122, [ 0.045748979, -0.099361941,  0.574953616, -0.017694391]],
        'float32',
    ),
    'norm.cdf': (
        [0.25879699 , 0.476546347, 0.659744024, 0.891639411],
        [[0.190346479, 0.234266281, 0.215597525, 0.109422095], -0.7496323585510254, -0.08699818700551987],
        'float32',
    ),
    'norm.logcdf': (
        [-163.695098877,   -3.783184052,   -0.898966014,   -0.190322161],
        [[10.551718712,  1.396009088,  0.560860872,  0.182290956], -12.690879821777344, 191.44200134277344],
        'float32',
    ),
    'norm.sf': (
        [0.74120301 , 0.523453653, 0.340255946, 0.108360589],
        [[-0.190346479, -0.234266281, -0.215597525, -0.109422095], 0.7496323585510254, 0.08699818700551987],
        'float32',
    ),
    'norm.logsf': (
        [-8.230572194e-02, -5.225443840e-01, -2.763332367e+00, -1.553641205e+02],
        [[ -0.094062023,  -0.384926051,  -1.155133009, -10.275724411], 11.909845352172852, 180.46182250976562],
        'float32',
    ),
    'norm.ppf': (
        [-2.396251202, -0.491480798,  1.546632648,  4.354792118],
        [[16.483150482,  4.889375687,  5.34967041 , 63.784801483], 4.0, 0.8315839767456055],
        'float32',
    ),
    'norm.isf': (
        [ 3.196251392,  1.29148078 , -0.746632695, -3.554792166],
        [[-16.483146667,  -4.889375687,  -5.34967041 , -63.784801483], 4.0, -0.8315839767456055],
        'float32',
    ),
    'bernoulli.logpmf': (
        [        -np.inf, -0.356674969, -1.203972816,         -np.inf],
        [[ 0.         , -0.847297847, -0.847297847,  0.         ], 1.904761791229248],
        'float32',
    ),
    'bernoulli.pmf': (
        [0.         , 0.699999988, 0.600000024, 0.         ],
        [[ 0.         , -0.593108475,  0.243279099,  0.         ], [-0., -1.,  1.,  0.]],
        'float32',
    ),
    'bernoulli.cdf': (
        [0.         , 0.699999988, 0.699999988, 1.         ],
        [[0., 0., 0., 0.], -2.0],
        'float32',
    ),
    'poisson.logpmf': (
        [        -np.inf, -1.700000525, -1.331890941,         -np.inf],
        [[         np.nan,  1.107843637, -0.392156005,  0.         ], -0.8235294818878174],
        'float32',
    ),
    'poisson.pmf': (
        [0.         , 0.082084961, 0.205212504, 0.21376285 ],
        [[         np.nan,  0.122594394,  0.101273634, -0.072642401], -0.1624598503112793],
        'float32',
    ),
    'poisson.cdf': (
        [0.         , 0.182683423, 0.757223248, 0.970385253],
        [[0., 0., 0., 0.], -0.510235607624054],
        'float32',
    ),
    'beta.logpdf': (
        [        -np.inf,  0.58954525 , -3.104980469,         -np.inf],
        [[ -0.         ,   1.875      , -23.888885498,   0.         ], np.nan, np.nan],
        'float32',
    ),
    'beta.pdf': (
        [0.         , 1.086498141, 0.533520937, 0.         ],
        [[-0.         ,  0.452707469, -1.333802462,  0.         ], np.nan, np.nan, 0.8810949921607971, -0.28135257959365845],
        'float32',
    ),
    'gamma.logpdf': (
        [        -np.inf, -2.390642166, -1.241717696, -1.410246849],
        [[ 0.         ,  4.         ,  0.363636255, -0.399999976], -2.301842212677002],
        'float32',
    ),
    'gamma.pdf': (
        [0.         , 0.239186749, 0.226743236, 0.154180273],
        [[ 0.         ,  0.029898338, -0.042514361, -0.051393427], -0.22987402975559235, 0.06400945037603378, -0.21091283857822418],
        'float32',
    ),
    'expon.logpdf': (
        [        -np.inf, -0.793147206, -1.193147182, -1.89314723 ],
        [[-0. , -0.5, -0.5, -0.5], 1.5, -0.5999999642372131],
        'float32',
    ),
    'expon.pdf': (
        [0.         , 0.740818202, 0.332871079, 0.082084998],
        [[-0.         , -0.740818202, -0.332871079, -0.082084998]],
        'float32',
    ),
    'expon.cdf': (
        [0.         , 0.095162578, 0.393469334, 0.698805809],
        [[0.         , 0.452418715, 0.303265333, 0.150597095], -0.9062811136245728, -0.377591073513031],
        'float32',
    ),
    'laplace.logpdf': (
        [-1.786294341, -1.486294389, -1.886294365, -2.586294413],
        [[ 0.5, -0.5, -0.5, -0.5], 1.0, -0.8999999761581421],
        'float32',
    ),
    'laplace.pdf': (
        [0.24829264 , 0.370409101, 0.16643554 , 0.041042499],
        [[ 0.24829264 , -0.370409101, -0.16643554 , -0.041042499]],
        'float32',
    ),
    'laplace.cdf': (
        [0.335160017, 0.547581315, 0.696734667, 0.849402905],
        [[0.167580009, 0.226209357, 0.151632667, 0.075298548], -0.6207205653190613, -0.12176352739334106],
        'float32',
    ),
    'cauchy.logpdf': (
        [-1.986297011, -1.847827315, -2.061020613, -2.729875088],
        [[ 0.344827622, -0.099009909, -0.400000006, -0.491803288], 0.6459856033325195, -1.0620040893554688],
        'float32',
    ),
    'cauchy.pdf': (
        [0.213630795, 0.292027414, 0.144031614, 0.043904807],
        [[ 0.200726911, -0.160749033, -0.143379882, -0.030279178]],
        'float32',
    ),
    'cauchy.cdf': (
        [0.378881067, 0.531725526, 0.647583604, 0.778857946],
        [[0.137202531, 0.157579154, 0.127323955, 0.065227434], -0.4873330593109131, -0.10281180590391159],
        'float32',
    ),
    'cauchy.ppf': (
        [-12.527510643,  -1.353084922,   2.099999905,  63.741092682],
        [[ 256.75302124 ,    9.599852562,   12.56637001 , 6368.305175781], 4.0, 25.780248641967773],
        'float32',
    ),
    'logistic.logpdf': (
        [-2.119177818, -2.081940651, -2.141301155, -2.419712067],
        [[ 0.098687649, -0.024979189, -0.122459337, -0.268524796], 0.31727567315101624, -1.5745675563812256],
        'float32',
    ),
    'logistic.pdf': (
        [0.221712843, 0.244458318, 0.187369868, 0.07010372 ],
        [[ 0.074578784, -0.036396176, -0.09378241 , -0.059467837]],
        'float32',
    ),
    'logistic.cdf': (
        [0.401312351, 0.524979174, 0.622459352, 0.768524826],
        [[0.120130375, 0.124688022, 0.117501855, 0.088947207], -0.45126745104789734, -0.12990424036979675],
        'float32',
    ),
    'logistic.ppf': (
        [-5.788877964, -1.594595551,  2.297224522,  9.290242195],
        [[ 42.105262756,   9.523809433,  10.666666985, 202.020385742], 4.0, 1.9019966125488281],
        'float32',
    ),
    't.logpdf': (
        [-1.783196688, -1.689040661, -1.83785522 , -2.45797658 ],
        [[ 0.245901659, -0.064102575, -0.300000042, -0.546558738], 0.10832896828651428, 0.6647596955299377, -1.0893585681915283],
        'float32',
    ),
    't.pdf': (
        [0.239311993, 0.316799432, 0.162674382, 0.0437425  ],
        [[ 0.210450247, -0.149433702, -0.165075481, -0.035276208], 0.09999662637710571],
        'float32',
    ),
    'uniform.logpdf': (
        [        -np.inf, -0.693147182, -0.693147182,         -np.inf],
        [[0., 0., 0., 0.], 0.0, -1.0],
        'float32',
    ),
    'uniform.pdf': (
        [0., 1., 1., 0.],
        [[0., 0., 0., 0.]],
        'float32',
    ),
    'chi2.logpdf': (
        [-1.67092526 , -1.421283722, -1.710793495, -3.02305913 ],
        [[ 1.166666627, -0.045454562, -0.300000012, -0.416666657], -0.6595807075500488],
        'float32',
    ),
    'chi2.pdf': (
        [0.187123448, 0.193450063, 0.167042136, 0.119019315],
        [[ 0.093561709, -0.027281418, -0.035794746, -0.031171728], -0.2411220371723175, 0.0006861835718154907, -0.316645085811615],
        'float32',
    ),
    'truncnorm.logpdf': (
        [-1.16545856 , -0.928772092, -1.16545856 ,         -np.inf],
        [[ 0.532544434, -0.05917161 , -0.532544494, -0.         ], 0.9372202157974243, -0.5016578435897827, 0.05917167663574219, -1.565771460533142],
        'float32',
    ),
    'truncnorm.logpdf_tail': (
        [ 0.669523954, -0.25047636 , -1.62547636 ,         -np.inf],
        [[-2.099999905, -2.5        , -3.         , -0.         ], 7.193199157714844, -0.11626720428466797],
        'float32',
    ),
    'truncnorm.pdf': (
        [1.016492486, 0.         , 0.         , 0.         ],
        [[ 0.711544752, -0.         , -0.         , -0.         ], 0.014665110036730766, -1.1649940013885498],
        'float32',
    ),
    'dirichlet.logpdf': (
        1.6952123641967773,
        [[2.5        , 3.333333254, 4.         ], [0.146983624, 0.166154206, 0.176980197]],
        'float32',
    ),
    'dirichlet.logpdf_short': (
        [1.695212364, 1.020134449],
        [[[-1.5        , -1.666667938],
 [-0.666666746, -5.000001431]], [-0.399179935,  1.025455594, -0.156865358]],
        'float32',
    ),
    'dirichlet.pdf': (
        0.21650640666484833,
        [[ 0.866025627, -0.144337609], [-0.239439234,  0.515065432]],
        'float32',
    ),
    'multivariate_normal.logpdf': (
        [-3.398451567, -3.938709974],
        [[[ 0.02762828 , -0.494438529, -0.06925007 ],
 [-0.59921056 ,  0.957301915,  0.112307109]], [ 0.571582258, -0.462863386, -0.043057039], [[-0.343952447, -0.139355183, -0.020252088],
 [-0.139355183, -0.492390126,  0.203635097],
 [-0.020252088,  0.203635097, -0.676620424]]],
        'float32',
    ),
    'multivariate_normal.pdf': (
        0.14336207509040833,
        [[ 0.017141113, -0.08726386 ], [-0.017141113,  0.08726386 ], [[-0.069098011,  0.025948802],
 [ 0.025948802, -0.06693843 ]]],
        'float32',
    ),
    'multivariate_normal.logpdf_iso': (
        [-2.444975853, -2.794975758],
        [[[-0.058823526, -0.29411763 ],
 [-0.529411733,  0.470588207]], [ 0.588235259, -0.176470578], -0.8806227445602417],
        'float32',
    ),
    'multivariate_normal.logpdf_scalar': (
        [-1.187193751, -1.196017385, -1.422487855],
        [[-0.058823526, -0.117647059, -0.529411733], 0.7058823108673096, -0.7335639595985413],
        'float32',
    ),
}
# fmt: on

IDS = [c[0] for c in CASES]


def _fn(dist, fname):
    return getattr(getattr(S, dist), fname)


def _grad_all(fn, args):
    """grad of sum(fn(*args)) with respect to every argument (fixed arities:
    transformed functions take no *args)."""
    n = len(args)
    if n == 1:
        return (srcjax.grad(lambda a: jnp.sum(fn(a)))(*args),)
    if n == 2:
        return srcjax.grad(lambda a, b: jnp.sum(fn(a, b)), argnums=(0, 1))(*args)
    if n == 3:
        return srcjax.grad(lambda a, b, c: jnp.sum(fn(a, b, c)), argnums=(0, 1, 2))(*args)
    if n == 4:
        h = lambda a, b, c, d: jnp.sum(fn(a, b, c, d))  # noqa: E731
        return srcjax.grad(h, argnums=(0, 1, 2, 3))(*args)
    h = lambda a, b, c, d, e: jnp.sum(fn(a, b, c, d, e))  # noqa: E731
    return srcjax.grad(h, argnums=(0, 1, 2, 3, 4))(*args)


def _close(got, want, rtol=2e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=rtol, atol=atol, equal_nan=True)  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_dtypes_and_grads_match_jax(case):
    cid, dist, fname, args = case
    want, want_grads, want_dtype = JAX[cid]
    fn = _fn(dist, fname)
    out = fn(*args)
    assert np.asarray(out).dtype == np.dtype(want_dtype)
    _close(out, want)
    grads = _grad_all(fn, args)
    assert len(grads) == len(want_grads)
    for g, w, a in zip(grads, want_grads, args):
        assert np.shape(g) == np.shape(a)
        _close(g, w, rtol=1e-4, atol=1e-5)


def _norm_logpdf_sum(x, loc, scale):
    return jnp.sum(S.norm.logpdf(x, loc, scale))


def _mvn(x, mean, cov):
    return S.multivariate_normal.logpdf(x, mean, cov)


@pytest.mark.parametrize(
    "cid", ["norm.logcdf", "beta.logpdf", "t.logpdf", "truncnorm.logpdf", "poisson.cdf",
            "gamma.pdf", "multivariate_normal.logpdf", "dirichlet.logpdf_short"],
)  # fmt: skip
def test_jit_matches_jax(cid):
    _, dist, fname, args = CASES[IDS.index(cid)]
    out = srcjax.jit(_fn(dist, fname))(*args)
    assert np.asarray(out).dtype == np.dtype(JAX[cid][2])
    _close(out, JAX[cid][0])


def test_vmap_over_x_and_scale_and_mvn_batch():
    """vmap over the points (and over a per-example scale) gives the rows of the
    broadcast call, which JAX's values check."""
    cid = "norm.pdf"  # scale per point: vmap over both
    _, _, _, args = CASES[IDS.index(cid)]
    got = srcjax.vmap(S.norm.pdf, in_axes=(0, None, 0))(*args)
    _close(got, JAX[cid][0])
    cid = "multivariate_normal.logpdf"
    _, _, _, args = CASES[IDS.index(cid)]
    _close(srcjax.vmap(_mvn, in_axes=(0, None, None))(*args), JAX[cid][0])
    # a batch of covariances (the second scaled by 2) against the loop
    x, mean, cov = args
    covs = np.stack([cov, 2 * cov])
    got = srcjax.vmap(_mvn, in_axes=(None, None, 0))(x[0], mean, covs)
    _close(got, [_mvn(x[0], mean, cov), _mvn(x[0], mean, 2 * cov)])
    # vmap of grad: per-example gradients of the loss in loc
    g = srcjax.vmap(srcjax.grad(_norm_logpdf_sum, argnums=1), in_axes=(None, 0, None))(
        X, f32([0.4, -1.0]), f32(1.7)
    )
    _close(g[0], JAX["norm.logpdf"][1][1])  # loc 0.4, scale 1.7 (recorded case)
    _close(g[1], np.sum(X + 1.0) / 1.7**2, rtol=1e-5)  # d/dloc: sum(x - loc) / scale**2


def test_dtypes_follow_jax_promotion():
    # recorded from JAX 0.10.2: integer inputs give float32, float16 stays float16,
    # ppf of a Python float is the default float
    a = S.norm.logpdf(np.int32([1, 2]), 0, 1)
    assert a.dtype == np.float32
    _close(a, [-1.4189385, -2.9189386])
    b = S.poisson.logpmf(np.int32([1, 2]), 2)
    assert b.dtype == np.float32
    _close(b, [-1.3068528, -1.306853])
    assert S.norm.ppf(0.3).dtype == np.float32
    assert S.norm.logpdf(np.float16([1.0]), 0, 1).dtype == np.float16
    old = srcjax.config.jax_enable_x64
    srcjax.config.update("jax_enable_x64", True)
    try:
        assert S.norm.logpdf(1.0).dtype == np.float64
        assert S.norm.logpdf(f32(1.0), 0.0, 1.0).dtype == np.float32  # weak scalars
        # float64 values against SciPy
        import scipy.stats as ss

        x = np.array([-3.0, 0.2, 4.5])
        np.testing.assert_allclose(S.t.logpdf(x, 2.5, 0.3, 1.2), ss.t.logpdf(x, 2.5, 0.3, 1.2),
                                   rtol=1e-13)  # fmt: skip
        np.testing.assert_allclose(S.beta.logpdf(np.array([0.1, 0.6]), 2.5, 0.7),
                                   ss.beta.logpdf(np.array([0.1, 0.6]), 2.5, 0.7), rtol=1e-13)  # fmt: skip
        np.testing.assert_allclose(
            S.truncnorm.logpdf(x, -1.0, 5.0, 0.5, 2.0),
            ss.truncnorm.logpdf(x, -1.0, 5.0, 0.5, 2.0),
            rtol=1e-12,
        )
        np.testing.assert_allclose(S.poisson.cdf(np.array([0.0, 3.0, 7.5]), 3.3),
                                   ss.poisson.cdf([0.0, 3.0, 7.5], 3.3), rtol=1e-13)  # fmt: skip
    finally:
        srcjax.config.update("jax_enable_x64", old)


def test_errors_as_jax():
    with pytest.raises(ValueError, match="must be one-dimensional"):
        S.dirichlet.logpdf(np.ones((2, 2)), np.ones((2, 2)))
    with pytest.raises(ValueError, match="one entry fewer"):
        S.dirichlet.logpdf(np.ones(4), np.ones(2))
    with pytest.raises(ValueError, match="incompatible shapes"):
        S.multivariate_normal.logpdf(np.ones(3), np.ones(3), np.eye(2))
    with pytest.raises(NotImplementedError, match="allow_singular"):
        S.multivariate_normal.logpdf(np.ones(3), np.ones(3), np.eye(3), allow_singular=True)


# -- special functions added for the distributions ------------------------------------
A = f32([0.5, 1.5, 2.0, 4.0])
B = f32([3.0, 0.7, 2.0, 1.5])
XG = f32([0.3, 1.0, 2.5, 6.0])


def _betaln_sum(a, b):
    return jnp.sum(SS.betaln(a, b))


def _gammainc_sum(a, x):
    return jnp.sum(SS.gammainc(a, x))


def _gammaincc_sum(a, x):
    return jnp.sum(SS.gammaincc(a, x))


def test_betaln_gammainc_gammaincc_match_jax():
    # recorded from JAX 0.10.2
    _close(SS.betaln(A, B), [0.06453848, 0.04313707, -1.7917603, -2.2868376])
    ga, gb = srcjax.grad(_betaln_sum, argnums=(0, 1))(A, B)
    _close(ga, [-3.0666664, -0.5078032, -0.8333332, -0.35497546], rtol=1e-5)
    _close(gb, [-0.18037206, -1.7643167, -0.8333332, -1.5746032], rtol=1e-5)
    _close(SS.gammainc(A, XG), [0.5614221, 0.42759314, 0.7127025, 0.84879625])
    _close(SS.gammaincc(A, XG), [0.4385779, 0.5724069, 0.2872975, 0.15120377])
    gx = [0.76309067, 0.41510737, 0.2052125, 0.08923499]
    _close(srcjax.grad(_gammainc_sum, argnums=1)(A, XG), gx, rtol=1e-5)
    _close(srcjax.grad(_gammaincc_sum, argnums=1)(A, XG), -np.array(gx), rtol=1e-5)
    _close(srcjax.jit(SS.gammaincc)(A, XG), [0.4385779, 0.5724069, 0.2872975, 0.15120377])
    assert SS.betaln(1, 2).dtype == np.float32
    np.testing.assert_array_equal(np.isnan(SS.gammainc(f32([-1.0, 0.0, 1.0]), f32([1.0, 1.0, -1.0]))),
                                  [True, False, True])  # fmt: skip


def test_gammainc_derivative_in_a_is_a_clear_error():
    with pytest.raises(NotImplementedError, match="with respect to a"):
        srcjax.grad(_gammainc_sum, argnums=0)(A, XG)


# gamma/chi2/truncnorm cdf, logcdf, sf, logsf (user I: missing). Values recorded
# from JAX 0.10.2 at these points; gradients in x, scale and loc too (a gradient in
# x of gamma.cdf also checks that the constant shape parameter stays inactive: its
# gammainc derivative in a raises).
_CDF_X = np.array([-1.0, 0.0, 0.3, 1.2, 3.5, 9.0], np.float32)
_CDF_RECORDED = {
    "gamma.cdf": [0.0, 0.0, 0.001777, 0.083116, 0.524564, 0.963339],
    "chi2.cdf": [0.0, 0.03086, 0.109314, 0.374124, 0.798592, 0.990692],
    "truncnorm.cdf": [0.0, 0.194894, 0.332161, 0.703717, 1.0, 1.0],
    "gamma.logcdf": [-np.inf, -np.inf, -6.333063, -2.48752, -0.645188, -0.03735],
    "chi2.logcdf": [-np.inf, -3.478308, -2.213532, -0.983167, -0.224905, -0.009351],
    "truncnorm.logcdf": [-np.inf, -1.6353, -1.102136, -0.351379, 0.0, 0.0],
    "gamma.sf": [1.0, 1.0, 0.998223, 0.916884, 0.475436, 0.036661],
    "chi2.sf": [1.0, 0.96914, 0.890686, 0.625875, 0.201408, 0.009308],
    "truncnorm.sf": [1.0, 0.805106, 0.667839, 0.296283, 0.0, 0.0],
    "gamma.logsf": [0.0, 0.0, -0.001778, -0.086774, -0.743523, -3.306038],
    "chi2.logsf": [0.0, -0.031346, -0.115763, -0.468604, -1.602423, -4.676903],
    "truncnorm.logsf": [0.0, -0.216781, -0.403708, -1.21644, -np.inf, -np.inf],
}
_CDF_ARGS = {"gamma": (2.5, 0.1, 1.5), "chi2": (3.0, -0.2, 0.8), "truncnorm": (-0.5, 2.0, 0.2, 1.3)}


@pytest.mark.parametrize("name", sorted(_CDF_RECORDED))
def test_cdf_family_matches_jax(name):
    dist, fn = name.split(".")
    f = getattr(getattr(S, dist), fn)
    got = f(_CDF_X, *_CDF_ARGS[dist])
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, _CDF_RECORDED[name], rtol=2e-5, atol=2e-6)


def test_cdf_family_gradients_match_jax():
    g = srcjax.grad(lambda x: jnp.sum(S.gamma.cdf(x, 2.5, 0.1, 1.5)))(_CDF_X)
    np.testing.assert_allclose(g, [0.0, 0.0, 0.021369, 0.151266, 0.1774, 0.019205], atol=2e-6)
    g = srcjax.grad(lambda s: jnp.sum(S.chi2.logsf(_CDF_X[2:], 3.0, -0.2, s)))(0.8)
    np.testing.assert_allclose(g, 10.059793, rtol=1e-5)
    g = srcjax.grad(lambda x: jnp.sum(S.truncnorm.cdf(x, -0.5, 2.0, 0.2, 1.3)))(_CDF_X)
    np.testing.assert_allclose(g, [0.0, 0.453511, 0.457554, 0.34138, 0.0, 0.0], atol=2e-6)
    g = srcjax.grad(lambda m: jnp.sum(S.truncnorm.logsf(_CDF_X, -0.5, 2.0, m, 1.3)))(0.2)
    np.testing.assert_allclose(g, 2.400629, rtol=1e-5)
