"""srcjax.random's distributions (srcjax/random/_dists.py) against values
recorded from JAX 0.10.2 (bit for bit where the docstrings say so), plus jit,
vmap over keys, errors, and moments of seeded large samples for the samplers
that are not bit-exact (gamma, loggamma)."""

import numpy as np
import pytest

import srcjax
from srcjax import random

A = [0.5, 1.0, 2.5, 4.0]
KEYS = [(0, 0), (0, 42), (123456, 987654321)]

# Values recorded from jax 0.10.2 (jaxlib 0.10.2, CPU): /tmp/jv/bin/python, jax.random.<name>(key, *args)
JAX_VALUES = {  # noqa: E501
    "truncated_normal": (
        (-1.5, 2.0, (5,)),
        [
            [
                1.4728459119796753,
                1.7251307964324951,
                -0.33360305428504944,
                -0.016286367550492287,
                0.2163902223110199,
            ],
            [
                0.029455246403813362,
                0.4837646782398224,
                0.32626238465309143,
                0.1957068294286728,
                -0.057450201362371445,
            ],
            [
                -1.1891281604766846,
                0.5514718294143677,
                0.009228374809026718,
                0.358842134475708,
                0.9613593220710754,
            ],
        ],
    ),
    "truncated_normal_arr": (
        (np.array([-6.0, -1.0, 0.5], np.float32), np.array([-5.0, 2.0, 6.0], np.float32), (2, 3)),
        [
            [
                [-5.012797832489014, 1.747393012046814, 0.8203330039978027],
                [-5.166577339172363, 0.31906944513320923, 0.6511536836624146],
            ],
            [
                [-5.166577339172363, 0.5684449076652527, 1.1830501556396484],
                [-5.124692440032959, 0.0691138207912445, 1.136967420578003],
            ],
            [
                [-5.999999523162842, 0.6321998238563538, 0.9924609065055847],
                [-5.090230464935303, 1.0214787721633911, 1.72223961353302],
            ],
        ],
    ),
    "cauchy": (
        ((5,),),
        [
            [
                6.027494430541992,
                14.837895393371582,
                -0.5817222595214844,
                -0.09874986857175827,
                0.22315962612628937,
            ],
            [
                -0.03548463061451912,
                0.6337261199951172,
                0.38244056701660156,
                0.1940706968307495,
                -0.15630900859832764,
            ],
            [
                -5.693408012390137,
                0.7544731497764587,
                -0.06339307129383087,
                0.4317449927330017,
                1.8224955797195435,
            ],
        ],
    ),
    "lognormal": (
        (0.7, (5,)),
        [
            [
                3.1138174533843994,
                4.1275553703308105,
                0.7382180094718933,
                0.9464547038078308,
                1.1311825513839722,
            ],
            [
                0.9803817868232727,
                1.3867907524108887,
                1.2299728393554688,
                1.1134710311889648,
                0.9168393611907959,
            ],
            [
                0.32739871740341187,
                1.4603724479675293,
                0.9652442932128906,
                1.2608716487884521,
                2.0074479579925537,
            ],
        ],
    ),
    "pareto": (
        (np.array(A, np.float32), (2, 4)),
        [
            [
                [365.1309814453125, 46.68507385253906, 1.175344705581665, 1.1712743043899536],
                [5.405529975891113, 1.1983267068862915, 1.1601371765136719, 1.3396081924438477],
            ],
            [
                [3.8252925872802734, 3.1230204105377197, 1.4668657779693604, 1.2285358905792236],
                [3.3135476112365723, 2.4146764278411865, 1.0315909385681152, 1.4521743059158325],
            ],
            [
                [1.1206048727035522, 3.3983781337738037, 1.2988170385360718, 1.281950831413269],
                [39.18895721435547, 7.257479190826416, 1.1136640310287476, 1.0239368677139282],
            ],
        ],
    ),
    "rayleigh": (
        (1.3, (5,)),
        [
            [
                0.42624181509017944,
                0.2705303430557251,
                1.9297384023666382,
                1.6004891395568848,
                1.37863028049469,
            ],
            [
                1.5556464195251465,
                1.1421679258346558,
                1.2791202068328857,
                1.3977335691452026,
                1.6413767337799072,
            ],
            [
                3.127676486968994,
                1.0853334665298462,
                1.5753997564315796,
                1.2502440214157104,
                0.7669909000396729,
            ],
        ],
    ),
    "maxwell": (
        ((2, 3),),
        [
            [
                [2.631096601486206, 0.9910328388214111, 0.9649305939674377],
                [3.078275203704834, 1.3358209133148193, 1.8929359912872314],
            ],
            [
                [0.553582489490509, 0.293285071849823, 1.708603024482727],
                [1.5084577798843384, 1.806052565574646, 1.0890284776687622],
            ],
            [
                [1.6851099729537964, 1.513106107711792, 1.9186216592788696],
                [1.4080594778060913, 0.657326877117157, 1.3636233806610107],
            ],
        ],
    ),
    "double_sided_maxwell": (
        (0.3, np.array([1.0, 2.0], np.float32), (3,)),
        [
            [
                [1.8457210063934326, 3.4482550621032715],
                [-1.7825305461883545, 4.8848347663879395],
                [2.4050211906433105, 2.125056743621826],
            ],
            [
                [-1.081021785736084, -1.0513780117034912],
                [2.5220212936401367, 1.6510999202728271],
                [1.9770557880401611, 1.9666705131530762],
            ],
            [
                [-0.9129701256752014, -1.7845377922058105],
                [1.9715311527252197, -6.388596057891846],
                [1.4074149131774902, 1.2010416984558105],
            ],
        ],
    ),
    "weibull_min": (
        (1.3, 2.5, (5,)),
        [
            [
                2.0039169788360596,
                2.2275664806365967,
                0.9045954346656799,
                1.0822598934173584,
                1.2145652770996094,
            ],
            [
                1.1081156730651855,
                1.3693751096725464,
                1.2777824401855469,
                1.2027212381362915,
                1.0590510368347168,
            ],
            [
                0.4131358861923218,
                1.4091469049453735,
                1.096673607826233,
                1.2966301441192627,
                1.6569972038269043,
            ],
        ],
    ),
    "triangular": (
        (-1.0, 0.3, 2.0, (5,)),
        [
            [
                1.4833779335021973,
                1.6694812774658203,
                0.13839221000671387,
                0.3538557291030884,
                0.518930196762085,
            ],
            [
                0.38519930839538574,
                0.722097635269165,
                0.6010663509368896,
                0.5037319660186768,
                0.3261682987213135,
            ],
            [
                -0.5354130268096924,
                0.7749629020690918,
                0.37126612663269043,
                0.6258240938186646,
                1.0974024534225464,
            ],
        ],
    ),
    "wald": (
        (np.array(A, np.float32), (4,)),
        [
            [0.2493320107460022, 0.41566526889801025, 0.8132444024085999, 0.5440406799316406],
            [0.5275740027427673, 1.6187800168991089, 0.4169776439666748, 1.475395679473877],
            [0.8133525848388672, 2.4470908641815186, 1.4163179397583008, 1.2763581275939941],
        ],
    ),
    "geometric": ((0.3, (6,)), [[1, 1, 4, 3, 2, 6], [3, 2, 2, 2, 3, 2], [9, 1, 3, 2, 1, 1]]),
}
GAMMA_VALUES = {
    "gamma": [
        [
            [0.8845648169517517, 0.726284921169281, 1.5440423488616943, 6.765570163726807],
            [0.3485542833805084, 0.8707789778709412, 1.9578142166137695, 1.6382712125778198],
        ],
        [
            [0.9994542002677917, 0.33158406615257263, 4.194111347198486, 2.86362361907959],
            [0.001689063967205584, 0.40695104002952576, 1.423751711845398, 0.657145619392395],
        ],
        [
            [0.7566152215003967, 1.0710455179214478, 1.904744029045105, 2.533889055252075],
            [0.08159049600362778, 3.83809232711792, 0.28864073753356934, 3.9136033058166504],
        ],
    ],
    "loggamma": [
        [
            [-0.12265952676534653, -0.3198128640651703, 0.4344038963317871, 1.91184663772583],
            [-1.0539612770080566, -0.13836705684661865, 0.6718286275863647, 0.49364155530929565],
        ],
        [
            [-0.0005458593368530273, -1.1038738489151, 1.4336814880371094, 1.0520877838134766],
            [-6.383581161499023, -0.8990623950958252, 0.3532954752445221, -0.4198496341705322],
        ],
        [
            [-0.2789003849029541, 0.06863528490066528, 0.644347608089447, 0.9297553300857544],
            [-2.50604248046875, 1.344975471496582, -1.2425724267959595, 1.3644585609436035],
        ],
    ],
}


def _key(k):
    return np.array(k, np.uint32)


@pytest.mark.parametrize("name", sorted(JAX_VALUES))
def test_bit_exact_against_jax(name):
    args, rows = JAX_VALUES[name]
    fn = getattr(random, name.replace("_arr", ""))
    for k, expected in zip(KEYS, rows):
        got = fn(_key(k), *args)
        exp = np.array(expected, dtype=got.dtype)
        assert got.dtype == (np.int32 if name == "geometric" else np.float32)
        assert got.shape == exp.shape
        np.testing.assert_array_equal(got, exp)


@pytest.mark.parametrize("name", ["gamma", "loggamma"])
def test_gamma_close_to_jax(name):
    # not bit-exact (XLA's 1/sqrt(d) uses the CPU's approximate rsqrt): a few ulps
    fn = getattr(random, name)
    for k, expected in zip(KEYS, GAMMA_VALUES[name]):
        got = fn(_key(k), np.array(A, np.float32), (2, 4))
        assert got.dtype == np.float32 and got.shape == (2, 4)
        np.testing.assert_allclose(got, np.array(expected, np.float32), rtol=2e-6, atol=2e-7)


def test_gamma_moments():
    k = random.PRNGKey(7)
    for a in (0.3, 1.0, 3.5):
        x = random.gamma(k, a, (20000,)).astype(np.float64)
        se = np.sqrt(a / 20000)
        assert abs(x.mean() - a) < 5 * se  # mean a, variance a
        assert abs(x.var() / a - 1) < 0.08
    lg = random.loggamma(k, 0.5, (20000,)).astype(np.float64)
    g = random.gamma(k, 0.5, (20000,)).astype(np.float64)
    assert abs(np.exp(lg).mean() - 0.5) < 5 * np.sqrt(0.5 / 20000)
    # same key stream: the log-space draw is the log of the plain one up to rounding
    assert np.median(np.abs(np.exp(lg) - g) / g) < 1e-5


def test_vmap_over_keys_and_jit_match_eager():
    keys = random.split(random.PRNGKey(3), 4)

    def f(k):
        return random.cauchy(k, (3,))

    def g(k):
        return random.gamma(k, 1.5, (2,))

    def h(k):
        return random.truncated_normal(k, -1.0, 2.0, (3,))

    for fn in (f, g, h):
        out = srcjax.vmap(fn)(keys)
        loop = np.stack([fn(k) for k in keys])
        np.testing.assert_array_equal(out, loop)
        np.testing.assert_array_equal(srcjax.jit(fn)(keys[0]), fn(keys[0]))


def test_vmap_over_parameters_is_a_loop():
    k = random.PRNGKey(1)

    def f(a):
        return random.pareto(k, a, (3,))

    a = np.array([0.5, 2.0], np.float32)
    np.testing.assert_array_equal(srcjax.vmap(f)(a), np.stack([f(x) for x in a]))


def test_parameter_derivative_is_a_clear_error():
    # srcjax has no rule for pareto's b (JAX differentiates through the sampler)
    k = random.PRNGKey(0)

    def f(b):
        return random.pareto(k, b, (2,)).sum()

    with pytest.raises(Exception, match="no derivative rule"):
        srcjax.grad(f)(1.5)


def test_errors():
    k = random.PRNGKey(0)
    # float64 is float32 while x64 is off, as in JAX
    assert random.cauchy(k, (2,), dtype=np.float64).dtype == np.float32
    with pytest.raises(ValueError):
        random.cauchy(k, (2,), dtype=np.int32)
    with pytest.raises(ValueError):
        random.pareto(k, np.ones(3, np.float32), (2,))
    with pytest.raises(ValueError):
        random.cauchy(random.split(k, 2), (2,))
    with pytest.raises(TypeError):
        random.gamma(k, [1.0, 2.0])


# =========================================================================== gamma's derivative
# and the samplers built on gamma. Values recorded from jax 0.10.2 (CPU) with
# /tmp/jv/bin/python: A and W as below, KEYS as above;
#   beta(k, A, 2.0, (2, 4)), dirichlet(k, A, (2,)), chisquare(k, A, (2, 4)),
#   t(k, A, (2, 4)), f(k, A, 3.0) (JAX's f fails for a shape larger than dfnum's);
#   grad_<name>: jax.grad(lambda a: (W * <name>(k, a, (2, 4))).sum())(A)
#     (beta: argnums (0, 1) at b = 2.0; dirichlet: (2,); f: W[0] * f(k, a, b) at b = 3.0);
#   hess_gamma: jax.vmap(jax.jacfwd(jax.grad(lambda a: gamma(k, a))))(A);
#   jvp_gamma: jax.jvp(lambda a: gamma(k, a, (2, 4)), (A,), (W[0],))[1].
W = np.array([[1.0, -2.0, 0.5, 3.0], [0.25, 1.5, -1.0, 2.0]], np.float32)
A32 = np.array(A, np.float32)
GAMMA_FAMILY = {
    "beta": [
        [
            [0.188022599, 0.337434649, 0.848061442, 0.812551677],
            [0.0432390347, 0.225967154, 0.155113325, 0.589860022],
        ],
        [
            [0.274971455, 0.0841566548, 0.805751801, 0.898948669],
            [0.0311839096, 0.0268490855, 0.555277944, 0.977113485],
        ],
        [
            [0.0574003942, 0.356717795, 0.340748191, 0.358984679],
            [0.845993876, 0.325158745, 0.453472167, 0.78573662],
        ],
    ],
    "chisquare": [
        [
            [1.10707927, 2.05815506, 1.07050741, 7.948668],
            [0.0901342481, 2.68317617e-05, 1.56651449, 0.918297648],
        ],
        [
            [0.591061473, 1.0126549, 4.80385208, 2.29241514],
            [7.08338939e-06, 0.16894424, 0.935842156, 0.146648616],
        ],
        [
            [0.691616356, 0.233941451, 1.50034654, 1.8929286],
            [0.00962838531, 0.141282603, 0.0278911907, 3.66982269],
        ],
    ],
    "dirichlet": [
        [
            [0.0891656801, 0.0732107982, 0.155642182, 0.681981385],
            [0.0723829716, 0.180831417, 0.406571954, 0.340213656],
        ],
        [
            [0.119141892, 0.0395271294, 0.499967217, 0.341363817],
            [0.00067846477, 0.163464502, 0.57189405, 0.263962924],
        ],
        [
            [0.12074367, 0.170921698, 0.303966612, 0.404368103],
            [0.0100457054, 0.472559303, 0.0355384573, 0.481856495],
        ],
    ],
    "f": [
        [0.106859155, 0.000159075862, 0.118123934, 0.48154068],
        [0.0336163752, 0.00242251949, 0.187859699, 0.21345152],
        [1.7197789, 28.5631008, 4.11589575, 5.68689632],
    ],
    "grad_beta": [
        [[0.339775324, -0.727190912, -0.0741142929, 0.262820333], -0.287069112],
        [[0.528955579, -0.484792948, -0.0926465765, 0.0729817525], -0.202481553],
        [[0.277180225, -0.157357365, -0.0126347439, 0.356110632], -0.53350246],
    ],
    "grad_chisquare": [
        [2.56236863, -3.80514765, -0.531271458, 5.44959688],
        [1.76411164, -2.00980639, 0.113253035, 2.69660473],
        [1.94296813, -0.526861906, 0.380259931, 4.2630806],
    ],
    "grad_dirichlet": [
        [-0.262336552, -0.194333941, -0.437278688, 0.318429589],
        [-0.0698997155, 0.12325196, -0.516388893, 0.442493647],
        [-0.113905877, -0.646266222, -0.192275986, 0.289285123],
    ],
    "grad_f": [
        [[0.596720994, -0.00312144845, 0.0351444259, 0.181719333], -0.0568499565],
        [[0.24678126, -0.0391665697, 0.0409564711, 0.145407468], 0.00778411329],
        [[0.0525553226, -30.352726, 0.654110014, -1.30366707], 52.2378769],
    ],
    "grad_gamma": [
        [2.04988503, -0.346196532, -0.527518094, 5.30981874],
        [1.8832103, -0.192763746, -0.110229373, 3.3698256],
        [1.75911021, 0.77390039, 0.166985482, 4.52889538],
    ],
    "grad_loggamma": [
        [2.79526329, -0.851215184, -0.212584496, 1.38115168],
        [5.09283543, -1.18120289, -0.394990563, 2.04051518],
        [3.53995037, -1.43397367, -0.787510216, 1.50038636],
    ],
    "grad_t": [
        [-10.1012402, -1378.04565, 0.264237165, 0.33572036],
        [-5.55136204, -257.222565, -0.222564921, 1.20869553],
        [-2.36096168, -0.30999577, -0.0601669922, -0.718118966],
    ],
    "hess_gamma": [
        [-0.880799532, 0.110018551, 0.00895740185, 0.00308950245],
        [-1.05475616, -0.419516474, -0.0882824585, -0.0410037674],
        [-0.664829016, 0.0266869068, -0.00693615945, -0.00410103798],
    ],
    "jvp_gamma": [
        [
            [1.77500963, -1.9855473, 0.415394127, 4.02073097],
            [1.09950197, -2.18580103, 0.47145611, 1.93363142],
        ],
        [
            [1.87778163, -1.26676619, 0.684503853, 2.63317132],
            [0.0217147972, -1.43200326, 0.397366613, 1.10498154],
        ],
        [
            [1.64799774, -2.42989063, 0.464714915, 2.46650171],
            [0.44445011, -4.27172136, 0.148864716, 3.0935905],
        ],
    ],
    "t": [
        [
            [3.61628318, -140.09967, -1.93375337, -1.65858853],
            [-0.521440327, 2.02196169, 0.496575534, -1.02787352],
        ],
        [
            [0.432145894, -31.686203, 2.60653973, 0.982668579],
            [3.22518969, 0.799812794, 0.728797376, -3.03410292],
        ],
        [
            [-0.434688598, -1.07162201, 0.604578018, 0.396688282],
            [3.12535429, -0.487154543, 0.679755867, 2.77247977],
        ],
    ],
}


def _close(got, want, rtol=2e-5, atol=2e-6):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", ["beta", "dirichlet", "chisquare", "t", "f"])
def test_gamma_family_values_close_to_jax(name):
    # not bit-exact: the gamma draws are a few ulps off JAX's (approximate rsqrt)
    calls = {
        "beta": lambda k: random.beta(k, A32, 2.0, (2, 4)),
        "dirichlet": lambda k: random.dirichlet(k, A32, (2,)),
        "chisquare": lambda k: random.chisquare(k, A32, (2, 4)),
        "t": lambda k: random.t(k, A32, (2, 4)),
        "f": lambda k: random.f(k, A32, 3.0),
    }
    for k, want in zip(KEYS, GAMMA_FAMILY[name]):
        got = calls[name](_key(k))
        assert got.dtype == np.float32 and got.shape == np.shape(want)
        _close(got, want)


def _loss(name):
    if name == "gamma":
        return lambda a, k: (W * random.gamma(k, a, (2, 4))).sum()
    if name == "loggamma":
        return lambda a, k: (W * random.loggamma(k, a, (2, 4))).sum()
    if name == "beta":
        return lambda a, b, k: (W * random.beta(k, a, b, (2, 4))).sum()
    if name == "dirichlet":
        return lambda a, k: (W * random.dirichlet(k, a, (2,))).sum()
    if name == "chisquare":
        return lambda a, k: (W * random.chisquare(k, a, (2, 4))).sum()
    if name == "t":
        return lambda a, k: (W * random.t(k, a, (2, 4))).sum()
    return lambda a, b, k: (W[0] * random.f(k, a, b)).sum()


@pytest.mark.parametrize("name", ["gamma", "loggamma", "beta", "dirichlet", "chisquare", "t", "f"])
def test_parameter_gradients_match_jax(name):
    loss = _loss(name)
    two = name in ("beta", "f")
    for k, want in zip(KEYS, GAMMA_FAMILY["grad_" + name]):
        if two:
            b = 2.0 if name == "beta" else 3.0
            ga, gb = srcjax.grad(loss, argnums=(0, 1))(A32, b, _key(k))
            _close(ga, want[0], rtol=1e-4, atol=1e-5)
            _close(gb, want[1], rtol=1e-4, atol=1e-5)
        else:
            _close(srcjax.grad(loss)(A32, _key(k)), want, rtol=1e-4, atol=1e-5)


def _gamma_draws(key):
    return (lambda a: random.gamma(key, a, (2, 4))), (lambda a: random.gamma(key, a))


def test_gamma_jvp_and_second_derivative_match_jax():
    for k, want_t, want_h in zip(KEYS, GAMMA_FAMILY["jvp_gamma"], GAMMA_FAMILY["hess_gamma"]):
        draws, draw = _gamma_draws(_key(k))
        _, tan = srcjax.jvp(draws, (A32,), (W[0],))
        _close(tan, want_t, rtol=2e-5)
        second = [srcjax.jacfwd(srcjax.grad(draw))(a) for a in A32]
        _close(second, want_h, rtol=1e-3, atol=1e-6)  # JAX differentiates its float32 loop
        # reverse over reverse works too (JAX refuses: its series is a while_loop)
        rr = [srcjax.grad(srcjax.grad(draw))(a) for a in A32]
        _close(rr, second, rtol=1e-6, atol=1e-9)


def test_gamma_gradient_against_the_cdf_identity():
    """Float64 oracle: holding u = P(a, x) fixed, x(a) = gammaincinv(a, u); its
    central differences in a give dx/da and d2x/da2 at the drawn sample."""
    sc = pytest.importorskip("scipy.special")
    key = random.PRNGKey(11)
    a = np.array([0.05, 0.3, 0.9, 1.0, 2.5, 7.0, 40.0, 300.0], np.float32)
    x = np.array([random.gamma(key, s) for s in a], np.float64)
    g1 = np.array([srcjax.grad(lambda s: random.gamma(key, s))(s) for s in a])
    g2 = np.array([srcjax.grad(srcjax.grad(lambda s: random.gamma(key, s)))(s) for s in a])
    a64 = a.astype(np.float64)
    u = sc.gammainc(a64, x)
    h = 1e-4 * a64
    xp, xm = sc.gammaincinv(a64 + h, u), sc.gammaincinv(a64 - h, u)
    np.testing.assert_allclose(g1, (xp - xm) / (2 * h), rtol=2e-5)
    h = 1e-3 * a64
    xp, x0, xm = (sc.gammaincinv(a64 + d, u) for d in (h, 0, -h))
    np.testing.assert_allclose(g2, (xp - 2 * x0 + xm) / (h * h), rtol=1e-3, atol=1e-6)


def test_loggamma_gradient_for_tiny_a():
    # d log x / da = G(a, x) / x: finite where x underflows float32 in linear space
    sc = pytest.importorskip("scipy.special")
    key = random.PRNGKey(5)
    a = np.float32(0.01)
    lx = float(random.loggamma(key, a))
    g = float(srcjax.grad(lambda s: random.loggamma(key, s))(a))
    a64 = 0.01
    lu = np.log(sc.gammainc(a64, np.exp(lx)))  # P(a, x), kept in float64
    h = 1e-6
    fd = np.log(sc.gammaincinv(a64 + h, np.exp(lu))) - np.log(sc.gammaincinv(a64 - h, np.exp(lu)))
    np.testing.assert_allclose(g, fd / (2 * h), rtol=1e-4)


def _gamma_loss(a, k):
    return (W * random.gamma(k, a, (2, 4))).sum()


def _beta_loss(a, k):
    return (W * random.beta(k, a, 1.5, (2, 4))).sum()


def _dirichlet_loss(a, k):
    return (W * random.dirichlet(k, a, (2,))).sum()


def _t_loss(a, k):
    return (W * random.t(k, a, (2, 4))).sum()


KEYS3 = random.split(random.PRNGKey(2), 3)


def _batched_gamma(a):
    return srcjax.vmap(lambda k: _gamma_loss(a, k))(KEYS3).sum()


def _batched_beta(a):
    return srcjax.vmap(lambda k: _beta_loss(a, k))(KEYS3).sum()


def _batched_dirichlet(a):
    return srcjax.vmap(lambda k: _dirichlet_loss(a, k))(KEYS3).sum()


def _batched_t(a):
    return srcjax.vmap(lambda k: _t_loss(a, k))(KEYS3).sum()


@pytest.mark.parametrize(
    "loss, batched",
    [
        (_gamma_loss, _batched_gamma),
        (_beta_loss, _batched_beta),
        (_dirichlet_loss, _batched_dirichlet),
        (_t_loss, _batched_t),
    ],
)
def test_gamma_family_gradients_under_vmap_and_jit(loss, batched):
    loop = np.stack([srcjax.grad(loss)(A32, k) for k in KEYS3])
    vm = srcjax.vmap(srcjax.grad(loss), in_axes=(None, 0))(A32, KEYS3)
    np.testing.assert_array_equal(vm, loop)
    np.testing.assert_array_equal(srcjax.jit(srcjax.grad(loss))(A32, KEYS3[1]), loop[1])
    np.testing.assert_allclose(srcjax.grad(batched)(A32), loop.sum(0), rtol=1e-6)


def test_gamma_third_derivative_is_a_clear_error():
    k = random.PRNGKey(0)
    g = lambda a: random.gamma(k, a)  # noqa: E731
    with pytest.raises(Exception, match="no derivative rule"):
        srcjax.grad(srcjax.grad(srcjax.grad(g)))(1.5)


def test_gamma_family_moments():
    k = random.PRNGKey(9)
    n = 20000
    x = random.beta(k, 2.0, 5.0, (n,)).astype(np.float64)
    assert abs(x.mean() - 2 / 7) < 5 * np.sqrt(10 / (49 * 8) / n)
    d = random.dirichlet(k, np.array([1.0, 2.0, 3.0], np.float32), (n,)).astype(np.float64)
    np.testing.assert_allclose(d.sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(d.mean(0), [1 / 6, 2 / 6, 3 / 6], atol=0.01)
    c = random.chisquare(k, 3.0, (n,)).astype(np.float64)
    assert abs(c.mean() - 3) < 5 * np.sqrt(6 / n) and abs(c.var() / 6 - 1) < 0.1
    tt = random.t(k, 5.0, (n,)).astype(np.float64)
    assert abs(tt.mean()) < 5 * np.sqrt(5 / 3 / n) and abs(tt.var() / (5 / 3) - 1) < 0.15
    ff = random.f(k, 4.0, 10.0, (n,)).astype(np.float64)
    assert abs(ff.mean() - 10 / 8) < 0.05


def test_gamma_family_errors():
    k = random.PRNGKey(0)
    with pytest.raises(ValueError, match="alpha.ndim"):
        random.dirichlet(k, 1.0)
    with pytest.raises(ValueError):
        random.dirichlet(k, np.ones((2, 3), np.float32), (4,))
    with pytest.raises(ValueError):
        random.beta(k, np.ones(3, np.float32), 1.0, (2,))
    with pytest.raises(ValueError):
        random.t(k, 2.0, dtype=np.int32)
    with pytest.raises(ValueError):
        random.chisquare(random.split(k, 2), 2.0)
    with pytest.raises(TypeError):
        random.beta(k, [1.0, 2.0], 1.0)
    # gamma's derivative: NaN outside the domain, 0 at x = 0 (JAX's random_gamma_grad)
    from srcjax.random._dists import random_gamma_grad

    got = random_gamma_grad(np.array([-1.0, 1.0, 2.0], np.float32), np.array([1.0, 0.0, -1.0]))
    assert np.isnan(got[0]) and got[1] == 0 and np.isnan(got[2])


# =========================================================================== key_impl / key_dtype / clone
def test_key_impl_dtype_clone_as_jax():
    # JAX 0.10.2: key_impl(PRNGKey(0)) == key_impl(key(0)) == key_impl(split(k, 3))
    # == 'threefry2x32' (a str); repr(key_dtype()) == 'key<fry>'; clone returns its input
    k = random.PRNGKey(0)
    ks = random.split(k, 3)
    for keys in (k, random.key(0), ks, np.array([0, 1], np.uint32)):
        assert random.key_impl(keys) == "threefry2x32"
    assert repr(random.key_dtype()) == "key<fry>" == str(random.key_dtype("threefry2x32"))
    assert random.key_dtype() == random.key_dtype("threefry2x32")
    assert len({random.key_dtype(), random.key_dtype(random.key_dtype())}) == 1
    np.testing.assert_array_equal(random.clone(k), k)
    assert random.clone(ks).dtype == np.uint32
    np.testing.assert_array_equal(srcjax.vmap(random.clone)(ks), ks)
    draw = srcjax.jit(lambda key: random.uniform(random.clone(key), (2,)))
    np.testing.assert_array_equal(draw(k), random.uniform(k, (2,)))
    per = srcjax.vmap(lambda key: random.normal(random.clone(key)))(ks)
    np.testing.assert_array_equal(per, np.stack([random.normal(x) for x in ks]))
    assert srcjax.jit(random.key_impl)(k) == "threefry2x32"
    assert srcjax.vmap(lambda key: random.normal(key) * (random.key_impl(key) == "threefry2x32"))(
        ks
    ).shape == (3,)
    # JAX's error classes
    with pytest.raises(ValueError, match="unrecognized PRNG implementation"):
        random.key_dtype("foo")
    with pytest.raises(TypeError):
        random.key_dtype(3)
    with pytest.raises(NotImplementedError, match="threefry2x32 only"):
        random.key_dtype("rbg")
    with pytest.raises(TypeError):
        random.key_impl(np.float32(1.0))
    with pytest.raises(TypeError):
        random.key_impl(np.array([1, 2, 3], np.uint32))


# =========================================================================== generalized_normal, ball,
# multivariate_normal, orthogonal. Recorded from jax 0.10.2 (CPU), KEYS as above, MEAN/COV/W3 below:
#   generalized_normal(k, 1.5, (4,)); ball(k, 3, 1.5, (2,));
#   multivariate_normal(k, MEAN, COV, (2,), method=m) and jax.grad of (W3 * that).sum() in
#   (mean, cov) ("mvn_<m>", "grad_mvn_<m>"); orthogonal(k, 3), orthogonal(k, 2, (), None, 4)
#   ("_wide"), orthogonal(k, 3, (2,), None, 2) ("_tall"); grad_generalized_normal:
#   jax.grad(lambda p: (W3[0] * generalized_normal(k, p, (3,))).sum())(1.5); grad_ball:
#   jax.grad(lambda p: (W3 * ball(k, 3, p, (2,))).sum())(1.5).
COV = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.5]], np.float32)
MEAN = np.array([1.0, -1.0, 0.5], np.float32)
W3 = np.array([[1.0, -2.0, 0.5], [0.25, 1.5, -1.0]], np.float32)
JAX_MORE = {
    "ball": [
        [[0.855138063, 0.347455859, 0.00817520265], [-0.812597275, 0.321659178, -0.0505659878]],
        [[0.343667954, 0.0519931912, 0.0179101564], [0.376013011, -0.0718014091, 0.280901611]],
        [[0.38802287, -0.337247342, -0.233216733], [-0.119666182, 0.0165131129, 0.371911824]],
    ],
    "generalized_normal": [
        [1.06039178, 0.0892082825, -1.37513375, 0.559142888],
        [-0.878237545, -0.206162453, 1.16047096, 0.102029689],
        [-0.452808112, -0.0784325153, 0.188177526, -0.715363681],
    ],
    "grad_ball": [-0.0343751535, -0.124544129, 0.315017164],
    "grad_generalized_normal": [-0.095465824, 0.00708556268, 0.0884037912],
    "grad_mvn_cholesky": [
        [
            [1.25, -0.5, -0.5],
            [
                [0.727373183, -0.683096409, 0.202853158],
                [-0.683096409, -2.09106994, 0.335788548],
                [0.202853158, 0.335788548, 0.556808591],
            ],
        ],
        [
            [1.25, -0.5, -0.5],
            [
                [-0.0538698249, 0.251152515, -0.107076406],
                [0.251152515, -0.639098167, 0.20132862],
                [-0.107076406, 0.20132862, -0.0509203039],
            ],
        ],
        [
            [1.25, -0.5, -0.5],
            [
                [-0.831719935, 1.24856722, -0.302170783],
                [1.24856722, 0.264463633, -0.223060429],
                [-0.302170783, -0.223060429, -0.822412431],
            ],
        ],
    ],
    "grad_mvn_eigh": [
        [
            [1.25, -0.5, -0.5],
            [
                [-0.2327158, 1.7203902, -1.70081997],
                [1.7203902, -4.25572634, 1.79253197],
                [-1.70081997, 1.79253197, 4.41222382],
            ],
        ],
        [
            [1.25, -0.5, -0.5],
            [
                [-0.336925775, 0.443043351, -0.158115044],
                [0.443043351, -0.711092472, 0.390000731],
                [-0.158115044, 0.390000731, 0.242939472],
            ],
        ],
        [
            [1.25, -0.5, -0.5],
            [
                [0.574702322, -1.39238763, 1.41640639],
                [-1.39238763, 0.994283795, -1.49142885],
                [1.41640639, -1.49142885, -3.88279676],
            ],
        ],
    ],
    "grad_mvn_svd": [
        [
            [1.25, -0.5, -0.5],
            [
                [-1.07460845, -0.709597349, 0.315261036],
                [1.05087805, 4.56124735, -0.144637629],
                [0.733517468, -2.01151228, -0.887295842],
            ],
        ],
        [
            [1.25, -0.5, -0.5],
            [
                [0.159288779, -0.307457268, 0.0466255434],
                [-0.457923144, 0.637797177, -0.0503320731],
                [0.236530423, -0.349568456, -0.254755914],
            ],
        ],
        [
            [1.25, -0.5, -0.5],
            [
                [1.22836041, -0.358470559, -0.0507744327],
                [-2.0517714, -1.40946722, 0.266097188],
                [0.447572321, 0.735973597, -0.952318549],
            ],
        ],
    ],
    "mvn_cholesky": [
        [[3.29476261, 1.46815228, 0.699552357], [0.888818264, -0.863077462, -0.13191855]],
        [[0.959971249, -0.573045373, 0.785946429], [1.21714675, -1.06173539, 0.634777367]],
        [[-1.25582528, -1.05790842, 0.454144239], [1.46831346, 0.048302412, 1.44914293]],
    ],
    "mvn_eigh": [
        [[0.912587464, 0.427034259, 2.22729874], [2.25943184, -0.278664172, 0.654643655]],
        [[0.423799753, -0.802707016, 0.597367644], [0.755383492, -1.25993395, 0.518950582]],
        [[0.807900548, -0.161200345, -0.272598803], [-0.840770721, -0.942860723, 0.876292944]],
    ],
    "mvn_svd": [
        [[-0.489241123, -3.40926123, -0.684025764], [1.13378394, -0.853386879, -0.134709001]],
        [[1.22163546, -1.41818058, 0.524805963], [0.753381908, -1.04609656, 0.650315881]],
        [[3.37419033, -0.479395747, 0.520708203], [0.955949962, -2.23134923, 0.773166418]],
    ],
    "orthogonal": [
        [
            [0.955410123, 0.294135749, 0.0259955786],
            [-0.0462898165, 0.236140877, -0.970615625],
            [-0.291631371, 0.926132619, 0.239226863],
        ],
        [
            [-0.0195297003, 0.995267749, 0.0951894745],
            [0.105943903, -0.0926115289, 0.990050018],
            [-0.994180441, -0.0294198394, 0.103633866],
        ],
        [
            [-0.895691395, 0.435853213, -0.0881414562],
            [0.185947135, 0.547166407, 0.816108227],
            [-0.403931409, -0.714591503, 0.571137846],
        ],
    ],
    "orthogonal_tall": [
        [
            [[0.960836649, 0.186048388], [-0.256750017, 0.318811208], [0.104271039, -0.929379046]],
            [[-0.212415576, 0.0775962174], [0.284915119, -0.948611259], [0.934720874, 0.306782812]],
        ],
        [
            [[-0.0879273415, 0.872263372], [0.918591321, 0.257802069], [-0.385303766, 0.415565729]],
            [[-0.91205132, 0.0986080617], [0.330043226, 0.752596855], [-0.243379653, 0.651056409]],
        ],
        [
            [[-0.848031998, 0.504325151], [-0.0268663261, 0.265857995], [0.529263437, 0.821569085]],
            [
                [-0.491071701, -0.815939546],
                [0.799224913, -0.282672733],
                [-0.346537292, 0.504319906],
            ],
        ],
    ],
    "orthogonal_wide": [
        [
            [0.922000289, -0.246372387, 0.100056484, -0.281433374],
            [0.313975334, 0.204423577, -0.708838105, 0.597644746],
        ],
        [
            [-0.0191713572, 0.200286463, -0.084010303, -0.975940704],
            [0.79932332, 0.530301869, 0.273907065, 0.0695506334],
        ],
        [
            [-0.792083263, -0.0250938274, 0.494345456, -0.357207149],
            [0.573313177, 0.198048443, 0.460212946, -0.648299932],
        ],
    ],
}


def test_more_samplers_close_to_jax():
    for i, k in enumerate(KEYS):
        key = _key(k)
        _close(random.generalized_normal(key, 1.5, (4,)), JAX_MORE["generalized_normal"][i])
        _close(random.ball(key, 3, 1.5, (2,)), JAX_MORE["ball"][i])
        for m in ("cholesky", "eigh", "svd"):
            got = random.multivariate_normal(key, MEAN, COV, (2,), method=m)
            assert got.dtype == np.float32 and got.shape == (2, 3)
            _close(got, JAX_MORE["mvn_" + m][i], rtol=1e-5, atol=1e-5)
        _close(random.orthogonal(key, 3), JAX_MORE["orthogonal"][i], rtol=1e-5, atol=1e-6)
        _close(random.orthogonal(key, 2, (), None, 4), JAX_MORE["orthogonal_wide"][i], atol=1e-6)
        tall = random.orthogonal(key, 3, (2,), None, 2)
        assert tall.shape == (2, 3, 2)
        _close(tall, JAX_MORE["orthogonal_tall"][i], rtol=1e-5, atol=1e-6)


def _mvn_loss(method):
    def loss(mu, c, key):
        return (W3 * random.multivariate_normal(key, mu, c, (2,), method=method)).sum()

    return loss


def _gn_loss(p, key):
    return (W3[0] * random.generalized_normal(key, p, (3,))).sum()


def _ball_loss(p, key):
    return (W3 * random.ball(key, 3, p, (2,))).sum()


def test_more_samplers_gradients_match_jax():
    for i, k in enumerate(KEYS):
        key = _key(k)
        _close(srcjax.grad(_gn_loss)(1.5, key), JAX_MORE["grad_generalized_normal"][i], rtol=1e-4)
        _close(srcjax.grad(_ball_loss)(1.5, key), JAX_MORE["grad_ball"][i], rtol=1e-4)
        for m in ("cholesky", "eigh", "svd"):
            gm, gc = srcjax.grad(_mvn_loss(m), argnums=(0, 1))(MEAN, COV, key)
            want = JAX_MORE["grad_mvn_" + m][i]
            _close(gm, want[0], rtol=1e-5, atol=1e-5)
            _close(gc, want[1], rtol=1e-4, atol=1e-5)


def test_more_samplers_vmap_jit_and_moments():
    keys = random.split(random.PRNGKey(4), 3)
    calls = [
        lambda k: random.generalized_normal(k, 1.5, (4,)),
        lambda k: random.ball(k, 3, 2, (2,)),
        lambda k: random.multivariate_normal(k, MEAN, COV, (2,), method="eigh"),
        lambda k: random.orthogonal(k, 3),
    ]
    for fn in calls:
        loop = np.stack([fn(x) for x in keys])
        np.testing.assert_array_equal(srcjax.vmap(fn)(keys), loop)
        np.testing.assert_array_equal(srcjax.jit(fn)(keys[2]), loop[2])
    k = random.PRNGKey(12)
    x = random.multivariate_normal(k, MEAN, COV, (20000,)).astype(np.float64)
    np.testing.assert_allclose(x.mean(0), MEAN, atol=0.05)
    np.testing.assert_allclose(np.cov(x.T), COV, atol=0.06)
    g = random.generalized_normal(k, 2.0, (20000,)).astype(np.float64)
    assert abs(g.var() - 0.5) < 0.03  # p = 2: normal with variance 1/2
    b = random.ball(k, 4, 2, (5000,)).astype(np.float64)
    r = np.linalg.norm(b, axis=-1)
    assert r.max() <= 1 and abs(np.mean(r**4) - 0.5) < 0.03  # P(r <= t) = t**4
    q = random.orthogonal(k, 4, (3,))
    np.testing.assert_allclose(
        q @ np.swapaxes(q, -1, -2), np.broadcast_to(np.eye(4), (3, 4, 4)), atol=1e-5
    )
    w = random.orthogonal(k, 2, (), None, 5)
    np.testing.assert_allclose(w @ w.T, np.eye(2), atol=1e-5)


def test_more_samplers_errors():
    k = random.PRNGKey(0)
    with pytest.raises(ValueError, match="method must be one of"):
        random.multivariate_normal(k, MEAN, COV, method="qr")
    with pytest.raises(ValueError, match="mean.ndim"):
        random.multivariate_normal(k, 1.0, COV)
    with pytest.raises(ValueError, match="cov.shape"):
        random.multivariate_normal(k, MEAN, np.eye(2, dtype=np.float32))
    with pytest.raises(ValueError):
        random.multivariate_normal(k, np.zeros((2, 3), np.float32), COV, (3,))
    with pytest.raises(TypeError):
        random.ball(k, 2.5)
    with pytest.raises(TypeError):
        random.orthogonal(k, 3.0)
    with pytest.raises(NotImplementedError, match="complex"):
        random.orthogonal(k, 3, dtype=np.complex64)
    with pytest.raises(ValueError):
        random.generalized_normal(k, 2.0, dtype=np.int32)


# =========================================================================== poisson
# Recorded from jax 0.10.2 (CPU): poisson(k, [0, 0.5, 3, 9.9], (2, 4)) for KEYS (Knuth's branch)
POISSON_KNUTH = [
    [[0, 0, 4, 11], [0, 0, 2, 13]],
    [[0, 1, 2, 7], [0, 0, 3, 9]],
    [[0, 1, 2, 8], [0, 0, 2, 6]],
]


def _poisson_mix(k):
    return random.poisson(k, np.array([3.0, 50.0, 1000.0], np.float32), (4, 3))


def test_poisson():
    lam = np.array([0.0, 0.5, 3.0, 9.9], np.float32)
    for k, want in zip(KEYS, POISSON_KNUTH):
        got = random.poisson(_key(k), lam, (2, 4))
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, want)  # bit for bit below lam = 10
    keys = random.split(random.PRNGKey(0), 3)
    loop = np.stack([_poisson_mix(k) for k in keys])
    np.testing.assert_array_equal(srcjax.vmap(_poisson_mix)(keys), loop)
    np.testing.assert_array_equal(srcjax.jit(_poisson_mix)(keys[1]), loop[1])
    # the rejection branch (lam >= 10): moments of a seeded sample
    for rate in (12.0, 300.0):
        x = random.poisson(random.PRNGKey(8), rate, (20000,)).astype(np.float64)
        assert abs(x.mean() - rate) < 5 * np.sqrt(rate / 20000)
        assert abs(x.var() / rate - 1) < 0.06
    assert random.poisson(random.PRNGKey(0), np.float32(np.nan)) == -1  # as JAX
    with pytest.raises(TypeError):
        random.poisson(random.PRNGKey(0), 2.0, dtype=np.float32)
    with pytest.raises(ValueError):
        random.poisson(random.PRNGKey(0), np.ones(3, np.float32), (2,))
