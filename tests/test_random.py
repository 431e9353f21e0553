"""srcjax.random against JAX, bit for bit.

``VECTORS`` are the test vectors of ``shared/prng/vectors.json`` (identical in
jax/jaxlib 0.4.13 ... 0.10.2); ``JAX`` holds values recorded from jax/jaxlib
0.10.2 on CPU (x86-64) with ``tools``-free scripts: float32 results as their
uint32 bit patterns, float64 ones as uint64, big arrays as a digest
(``sum(bits[i] * (i + 1)) mod 2**64``). The tests need no JAX.
"""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import random
from srcjax.config import config
from srcjax.random import _threefry

# fmt: off
VECTORS = {'legacy': {'cases': [{'bits5': [2467461003, 428148500, 1688610540, 3840466878, 2562233961],
                       'key': [0, 0],
                       'normal23': [['0x3e405a23', '0xbfa44492', '0x3f264044'],
                                    ['0x3f9fe12e', '0x3e7a565a', '0xbdf08971']],
                       'uniform5': ['0x3f131276', '0x3dcc2830', '0x3ec94c4c', '0x3f64e8de',
                                    '0x3f18b896']},
                      {'bits5': [3134548294, 3733159049, 843694964, 894150801, 801545058],
                       'key': [0, 42],
                       'normal23': [['0x3f1cbd6a', '0x3f8fb0f9', '0x3f919416'],
                                    ['0xbf500f3d', '0xbf63f195', '0x3e0142d1']],
                       'uniform5': ['0x3f3ad568', '0x3f5e837c', '0x3e492708', '0x3e552ea0',
                                    '0x3e3f1a68']},
                      {'bits5': [3115665281, 2516762499, 4261663970, 2203447534, 3814368215],
                       'key': [4146024105, 967050713],
                       'normal23': [['0x3f1959c9', '0x3e5e6d74', '0x3f291d47'],
                                    ['0x3d05ce3b', '0x3f9bb61a', '0x3f98d7a8']],
                       'uniform5': ['0x3f39b546', '0x3f1602be', '0x3f7e03d4', '0x3f0355f0',
                                    '0x3f635aa2']},
                      {'bits5': [310927892, 87303217, 4207726453, 3773898244, 706834738],
                       'key': [2718843009, 1272950319],
                       'normal23': [['0xbfbaa619', '0xc00302c5', '0xbfb64f02'],
                                    ['0x3f958e71', '0xbf79d06a', '0xbfa2cbf6']],
                       'uniform5': ['0x3d944310', '0x3ca68480', '0x3f7accce', '0x3f60f11e',
                                    '0x3e2885c0']},
                      {'bits5': [2775954248, 1844090573, 1203156693, 3506251837, 3415046527],
                       'key': [2716826189, 292468403],
                       'normal23': [['0x3ec0377e', '0xbe36461a', '0x3f92d4b7'],
                                    ['0x3f66cea9', '0x3f530816', '0xbf602679']],
                       'uniform5': ['0x3f2575b2', '0x3edbd52c', '0x3e8f6d6c', '0x3f50fd28',
                                    '0x3f4b8d78']}],
            'fold7': [2716826189, 292468403],
            'split2': [[4146024105, 967050713], [2718843009, 1272950319]],
            'split8': [[2292653872, 4174357202], [2646725894, 3731661025], [2709833381, 877817354],
                       [3184928187, 3657760615], [931858003, 1395580008], [3159319543, 3403909611],
                       [1595590687, 561027531], [207801998, 2609351694]]},
 'partitionable': {'cases': [{'bits5': [4070199207, 4202968722, 1427181096, 2012915765,
                                        2447653815],
                              'key': [0, 0],
                              'normal23': [['0x3fcfb2bd', '0x40019df0', '0xbede0017'],
                                           ['0xbda10222', '0x3e34512c', '0xbf78dad7']],
                              'uniform5': ['0x3f729a4e', '0x3f7a8436', '0x3eaa221c', '0x3eeff550',
                                           '0x3f11e43a']},
                             {'bits5': [2098992034, 2919706841, 2646866425, 2409546199,
                                        1935504149],
                              'key': [0, 42],
                              'normal23': [['0xbce7df15', '0x3eef2be8', '0x3e976661'],
                                           ['0x3e1d3b24', '0xbdfe04eb', '0x3e5e211a']],
                              'uniform5': ['0x3efa3824', '0x3f2e0730', '0x3f1dc3f8', '0x3f0f9ec0',
                                           '0x3ee6bae4']},
                             {'bits5': [3617712097, 783310428, 975722988, 518513098, 823833061],
                              'key': [1797259609, 2579123966],
                              'normal23': [['0x3f80838a', '0xbf6805b7', '0xbf3f8837'],
                                           ['0xbf95ef5a', '0xbf5f091d', '0x3f16be18']],
                              'uniform5': ['0x3f57a1e6', '0x3e3ac178', '0x3e68a160', '0x3df73f00',
                                           '0x3e446ac0']},
                             {'bits5': [31327077, 89727312, 2497208264, 1554082365, 957939715],
                              'key': [928981903, 3453687069],
                              'normal23': [['0xc01c5132', '0xc0024897', '0x3e527a30'],
                                           ['0xbeb50488', '0xbf4310bb', '0xbf96dac9']],
                              'uniform5': ['0x3bef0100', '0x3cab2400', '0x3f14d85e', '0x3eb942d4',
                                           '0x3e646400']},
                             {'bits5': [2040308410, 309011329, 797698236, 1971886965, 3110245311],
                              'key': [2716826189, 292468403],
                              'normal23': [['0xbd802f6f', '0xbfbb107f', '0xbf64cc9c'],
                                           ['0xbdd24067', '0x3f186204', '0x3e90d99b']],
                              'uniform5': ['0x3ef33944', '0x3d935910', '0x3e3e2fa0', '0x3eeb1134',
                                           '0x3f396292']}],
                   'fold7': [2716826189, 292468403],
                   'split2': [[1797259609, 2579123966], [928981903, 3453687069]],
                   'split8': [[1797259609, 2579123966], [928981903, 3453687069],
                              [4146024105, 2718843009], [2467461003, 3840466878],
                              [2285895361, 433833334], [1524306142, 1887795613],
                              [3792494674, 2909014575], [2716826189, 292468403]]}}
JAX = {'legacy': {'bits0': 2785874591,
            'bits16': [45869, 983, 33780],
            'bits7': [2954079971, 2575172198, 1139032965, 1681094280, 3276725750, 1223413151,
                      173471767],
            'bits8': [45, 179, 215, 3, 244],
            'fold_i32m1': [2398536845, 3890976714],
            'fold_max': [2398536845, 3890976714],
            'grad': [1032790618, 1087499692, 1097427840],
            'jit': [3202601456, 1065082328, 1037709856],
            'k2': [276534068, 1641862660],
            'normal0': 3191678229,
            'normal35': [[1077084636, 1072810202, 1062209357, 3203103896, 1056614512],
                         [1065629778, 1064001335, 3202735914, 1048723656, 3213516091],
                         [1060494685, 1035411128, 3194405080, 3205696125, 3221195752]],
            'normal7': [1056616479, 1048651751, 3206585511, 3196920161, 1060584018, 3205597484,
                        3219096301],
            'normal_digest': 630519235286583,
            'split1': [[4073741833, 2748900490]],
            'split22': [[[2954079971, 2575172198], [1139032965, 1035738655]],
                        [[3276725750, 1223413151], [173471767, 13772463]]],
            'split3': [[3134548294, 3733159049], [3746501087, 894150801], [801545058, 2363201431]],
            'unif0_range': 1047211166,
            'unif23_arr': [[1080658626, 1083130302, 1083424166],
                           [1065696548, 1071615284, 1080665264]],
            'unif7': [1060115374, 1058635266, 1049086084, 1053320940, 1061375708, 1049745304,
                      1025863552],
            'unif_digest': 1149732790794562,
            'vmap_fold': [[1832780943, 270669613], [64467757, 2916123636],
                          [2465931498, 255383827]],
            'vmap_normal': [[3204008726, 1068408959, 3216747954],
                            [3206970962, 3217450216, 3215338526],
                            [3203775159, 1054474142, 1061421610],
                            [3190546684, 1069718407, 3206805081]],
            'vmap_split': [[[1956506789, 3094622447], [3971843591, 3019633264],
                            [669256316, 44148297]],
                           [[4222304618, 1370819665], [2564004766, 1536820493],
                            [3944086983, 2833754945]]],
            'vmap_uniform_minval': [[1031138432, 1076744322], [1065730955, 1078090850],
                                    [1073867737, 1079437377]]},
 'part': {'bits0': 993572756,
          'bits16': [5026, 12505, 63993],
          'bits7': [2098992034, 2919706841, 2646866425, 2409546199, 1935504149, 2516274904,
                    321304473],
          'bits8': [162, 217, 249, 215, 21],
          'fold_i32m1': [2398536845, 3890976714],
          'fold_max': [2398536845, 3890976714],
          'grad': [986842202, 1063219971, 1057378023],
          'jit': [3205074580, 3199982872, 1058361676],
          'k2': [276534068, 1641862660],
          'normal0': 3169312533,
          'normal35': [[3208381848, 3203689854, 1062200953, 1035102194, 1069960177],
                       [1058284237, 3190919238, 3213429073, 3195954898, 3204325599],
                       [1048508014, 3210251535, 1062535150, 3174073275, 1058037723]],
          'normal7': [3169312533, 1055861736, 1050109537, 1042103076, 3187541227, 1046356250,
                      3216535225],
          'normal_digest': 626120183214554,
          'split1': [[2785874591, 2637538571]],
          'split22': [[[1832780943, 270669613], [64467757, 2916123636]],
                      [[2465931498, 255383827], [3134548294, 894150801]]],
          'split3': [[1832780943, 270669613], [64467757, 2916123636], [2465931498, 255383827]],
          'unif0_range': 3221937786,
          'unif23_arr': [[1075602198, 1080952624, 1081496314],
                         [1077118576, 1077108082, 1081113722]],
          'unif7': [1056585764, 1059981104, 1058915320, 1057988288, 1055308516, 1058405198,
                    1033450928],
          'unif_digest': 1189084657587136,
          'vmap_fold': [[1832780943, 270669613], [64467757, 2916123636], [2465931498, 255383827]],
          'vmap_normal': [[1065386890, 3211265463, 3208611895],
                          [3223081266, 3221375127, 1045592624],
                          [1067833190, 1068331260, 3201415122],
                          [3206494130, 1059058473, 1071074897]],
          'vmap_split': [[[4165894930, 804218099], [1353695780, 2116000888],
                          [2839387376, 2467677468]],
                         [[346279018, 360566543], [3968330031, 3923691647],
                          [3152301319, 792466127]]],
          'vmap_uniform_minval': [[1073362980, 1076758320], [1075696910, 1078101348],
                                  [1077841417, 1079444376]]},
 'seed_x32': [(0, [0, 0]), (42, [0, 42]), (-1, [0, 4294967295]), (4294967301, [0, 5]),
              (1099511627776, [0, 0]), (-9223372036854775808, [0, 0]),
              (9223372036854775807, [0, 4294967295])],
 'seed_x32_int32m1': [0, 4294967295],
 'seed_x32_int64': [0, 3],
 'seed_x64': [(4294967301, [1, 5]), (-1, [4294967295, 4294967295]),
              (9223372036854775807, [2147483647, 4294967295]),
              (-9223372036854775808, [2147483648, 0]), (1099511627793, [256, 17])],
 'seed_x64_int32m1': [0, 4294967295],
 'seed_x64_uint64': [4294967295, 4294967294],
 'x64_legacy': {'bits3': [11448910961424489185, 3335164408231075614, 12759067419831224368],
                'unif5': [4597330280321990456, 4600601758867843076, 4601225369978832300,
                          4606116102561192702, 4576975787857611904],
                'unif5_range': [13835502442803887432, 13831851379982684794, 13830954939010637785,
                                4609746259147609498, 13838304983694331384],
                'unif_digest': 6014643089316317328},
 'x64_part': {'bits3': [16361464305021946237, 14677550201367802350, 13922094229542273062],
              'unif5': [4606164215787962912, 4605341992104538038, 4604973117118295104,
                        4603765508100659466, 4589915737417636736],
              'unif5_range': [4609884584674573852, 4607520691584727339, 4605737933198540400,
                              4589616115078037452, 13837492159023372431],
              'unif_digest': 10713074127318376227}}
JAX2 = {'legacy': {'ber7': [0, 0, 1, 0, 0, 1, 1],
            'ber_arr': [0, 1, 1],
            'ber_digest': 254666,
            'berh23': [[0, 1, 1], [0, 1, 1]],
            'exp0': 1057910745,
            'exp5': [1067942465, 1073884591, 1046475552, 1047463895, 1045660925],
            'exp_digest': 315106619502993,
            'gum5': [1066656075, 1073446231, 3204011678, 3202792196, 3204750161],
            'gum_digest': 535136049511758,
            'vmap_gum': [[3208597237, 3205925264], [1040219310, 1052881941],
                         [1058276746, 1037364306]]},
 'part': {'ber7': [0, 0, 0, 0, 0, 0, 1],
          'ber_arr': [0, 0, 1],
          'ber_digest': 228639,
          'berh23': [[0, 0, 1], [0, 1, 1]],
          'exp0': 1059830450,
          'exp5': [1059830450, 1066517560, 1064645553, 1062388556, 1058625715],
          'exp_digest': 314898785692730,
          'gum5': [1051397706, 1064548236, 1060748383, 1057772792, 1047019407],
          'gum_digest': 557606694123797,
          'vmap_gum': [[1055457920, 3189265628], [1066577697, 1068991349],
                       [1063756783, 1066355696]]}}
# fmt: on

SCHEMES = [("partitionable", True), ("legacy", False)]
JAX_SCHEME = {True: "part", False: "legacy"}


@pytest.fixture
def scheme(request):
    old = config.jax_threefry_partitionable
    config.update("jax_threefry_partitionable", request.param)
    yield request.param
    config.update("jax_threefry_partitionable", old)


both = pytest.mark.parametrize("scheme", [True, False], indirect=True, ids=["part", "legacy"])


def bits_of(a):
    a = np.asarray(a)
    return a.view(np.uint32 if a.dtype.itemsize == 4 else np.uint64).tolist()


def digest(a):
    a = np.asarray(a)
    v = a.reshape(-1).view(np.uint32 if a.dtype.itemsize == 4 else np.uint64).astype(np.uint64)
    return int(np.sum(v * np.arange(1, v.size + 1, dtype=np.uint64), dtype=np.uint64))


def K(words):
    return np.array(words, np.uint32)


# -- threefry2x32 -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "key, ctr, out",
    [
        ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
        ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
        ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
    ],
)
def test_threefry_random123_known_answers(key, ctr, out):
    y = _threefry.threefry2x32(*(np.uint32(v) for v in key + ctr))
    assert (int(y[0]), int(y[1])) == out
    # vectorised over counters: the same answer in every lane
    y0, y1 = _threefry.threefry2x32(key[0], key[1], np.full(3, ctr[0], np.uint32), ctr[1])
    assert y0.tolist() == [out[0]] * 3 and y1.tolist() == [out[1]] * 3


# -- SPEC.md vectors (both schemes) --------------------------------------------------------
@pytest.mark.parametrize("name, part", SCHEMES)
def test_spec_vectors(name, part):
    v = VECTORS[name]
    old = config.jax_threefry_partitionable
    config.update("jax_threefry_partitionable", part)
    try:
        k0 = random.PRNGKey(0)
        assert random.split(k0).tolist() == v["split2"]
        assert random.split(k0, 8).tolist() == v["split8"]
        assert random.fold_in(k0, 7).tolist() == v["fold7"]
        for case in v["cases"]:
            k = K(case["key"])
            b = random.bits(k, (5,))
            assert b.dtype == np.uint32 and b.tolist() == case["bits5"]
            u = random.uniform(k, (5,))
            assert u.dtype == np.float32
            assert [hex(w) for w in bits_of(u)] == case["uniform5"]
            z = random.normal(k, (2, 3))
            assert z.dtype == np.float32 and z.shape == (2, 3)
            assert [[hex(w) for w in row] for row in bits_of(z)] == case["normal23"]
    finally:
        config.update("jax_threefry_partitionable", old)


def test_default_scheme_is_partitionable():
    assert config.jax_threefry_partitionable is True
    assert random.split(random.PRNGKey(0)).tolist() == VECTORS["partitionable"]["split2"]


# -- PRNGKey --------------------------------------------------------------------------------
def test_prng_key_seeds():
    for seed, words in JAX["seed_x32"]:
        k = random.PRNGKey(seed)
        assert k.dtype == np.uint32 and k.shape == (2,) and k.tolist() == words, seed
    assert random.PRNGKey(np.int32(-1)).tolist() == JAX["seed_x32_int32m1"]
    assert random.PRNGKey(np.int64(2**40 + 3)).tolist() == JAX["seed_x32_int64"]
    assert random.key_data(random.key(42)).tolist() == [0, 42]  # a typed key's data
    assert random.key_data(random.key(3)).tolist() == [0, 3]
    assert random.key_data(random.wrap_key_data(K([1, 2]))).tolist() == [1, 2]


def test_prng_key_seeds_x64(x64):
    for seed, words in JAX["seed_x64"]:
        assert random.PRNGKey(seed).tolist() == words, seed
    assert random.PRNGKey(np.int32(-1)).tolist() == JAX["seed_x64_int32m1"]
    assert random.PRNGKey(np.uint64(2**64 - 2)).tolist() == JAX["seed_x64_uint64"]


def test_prng_key_errors():
    with pytest.raises(OverflowError):
        random.PRNGKey(2**63)
    with pytest.raises(OverflowError):
        random.PRNGKey(-(2**63) - 1)
    with pytest.raises(TypeError, match="integer"):
        random.PRNGKey(1.5)
    with pytest.raises(TypeError, match="scalar seed"):
        random.PRNGKey(np.arange(2))


# -- recorded JAX values, every public function, both schemes ------------------------------
@both
def test_split_fold_in_bits_recorded(scheme):
    want = JAX[JAX_SCHEME[scheme]]
    k = random.PRNGKey(42)
    k2 = random.fold_in(random.PRNGKey(7), 3)
    assert k2.tolist() == want["k2"]
    s = random.split(k, 3)
    assert s.dtype == np.uint32 and s.shape == (3, 2) and s.tolist() == want["split3"]
    assert random.split(k, (2, 2)).tolist() == want["split22"]
    assert random.split(k2, 1).tolist() == want["split1"]
    assert random.split(k, 0).shape == (0, 2)
    assert random.fold_in(k, 2**32 - 1).tolist() == want["fold_max"]
    assert random.fold_in(k, np.int32(-1)).tolist() == want["fold_i32m1"]  # mod 2**32
    assert random.bits(k, (7,)).tolist() == want["bits7"]
    b0 = random.bits(k2)
    assert b0.shape == () and b0.dtype == np.uint32 and int(b0) == want["bits0"]
    b8 = random.bits(k, (5,), jnp.uint8)
    assert b8.dtype == np.uint8 and b8.tolist() == want["bits8"]
    b16 = random.bits(k, 3, jnp.uint16)
    assert b16.dtype == np.uint16 and b16.tolist() == want["bits16"]


@both
def test_uniform_normal_recorded(scheme):
    want = JAX[JAX_SCHEME[scheme]]
    k = random.PRNGKey(42)
    k2 = random.fold_in(random.PRNGKey(7), 3)
    assert bits_of(random.uniform(k, (7,))) == want["unif7"]
    u0 = random.uniform(k2, (), minval=-3.5, maxval=2.25)
    assert u0.shape == () and u0.dtype == np.float32 and bits_of(u0) == want["unif0_range"]
    u = random.uniform(k, (2, 3), minval=jnp.array([0.0, 1.0, 2.0]), maxval=5.0)
    assert bits_of(u) == want["unif23_arr"]
    z0 = random.normal(k)
    assert z0.shape == () and z0.dtype == np.float32 and bits_of(z0) == want["normal0"]
    assert bits_of(random.normal(k, (7,))) == want["normal7"]
    assert bits_of(random.normal(k2, (3, 5))) == want["normal35"]
    assert digest(random.normal(k, (257, 3))) == want["normal_digest"]
    assert digest(random.uniform(k2, (1001,), minval=-3.5, maxval=2.25)) == want["unif_digest"]


@both
def test_float64_recorded(scheme, x64):
    want = JAX["x64_" + JAX_SCHEME[scheme]]
    k = random.PRNGKey(2**40 + 17)
    b = random.bits(k, (3,))
    assert b.dtype == np.uint64 and b.tolist() == want["bits3"]
    u = random.uniform(k, (5,))
    assert u.dtype == np.float64 and bits_of(u) == want["unif5"]
    assert bits_of(random.uniform(k, (5,), minval=-3.5, maxval=2.25)) == want["unif5_range"]
    assert digest(random.uniform(k, (257, 3), minval=1e-3, maxval=7.1)) == want["unif_digest"]
    # normal's default dtype is float64 here (within 1 ulp of JAX: test_float64_normal)
    assert random.normal(k, (3,)).dtype == np.float64
    z = random.normal(k, (3,), jnp.float32)
    config.update("jax_enable_x64", False)
    assert z.tolist() == random.normal(k, (3,)).tolist()


def _exact_fma32(a, b, c) -> np.float32:
    """``a*b + c`` in exact rational arithmetic, rounded once to float32 (ties to
    even): the oracle of the float32 fused multiply-add."""
    from fractions import Fraction

    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    x = np.float32(float(exact))
    near = [np.nextafter(x, np.float32(-np.inf)), x, np.nextafter(x, np.float32(np.inf))]
    return min(near, key=lambda v: (abs(Fraction(float(v)) - exact), int(v.view(np.uint32)) & 1))


def test_fma_emulation_is_exact():
    """The float32 and float64 fused multiply-adds against exact rational arithmetic,
    on operands whose products nearly cancel the addend (where an unfused or
    double-rounded computation goes wrong)."""
    from fractions import Fraction

    rng = np.random.default_rng(0)
    n = 3000
    a = rng.normal(size=n).astype(np.float32)
    b = rng.normal(size=n).astype(np.float32)
    c = (-(a.astype(np.float64) * b) * rng.choice([0.5, 1e-3, 3.0, 1 - 2**-20], n)).astype(
        np.float32
    )
    z = _threefry.fma32(a, b, c)
    for i in range(n):
        assert z[i] == _exact_fma32(a[i], b[i], c[i])
    a = rng.random(n)
    b = rng.uniform(-10, 10, n)
    c = -a * b * (1 + rng.normal(size=n) * 1e-15)
    z = _threefry.fma64(a, b, c)
    for i in range(n):
        assert z[i] == float(Fraction(a[i]) * Fraction(b[i]) + Fraction(c[i]))


def test_fma32_double_rounding_ties():
    """fma32's fast path rounds the float64 sum once more; where that sum is a
    float32 tie the exact value is not (a tiny addend), and only the exact path
    gets the direction right: half of these differ from naive rounding."""
    from fractions import Fraction

    rng = np.random.default_rng(3)
    n = 4000
    a = (2 * rng.integers(1 << 22, (1 << 25) // 6, n) + 1).astype(np.float32)  # odd
    b = np.float32(1.5)  # a * b: exactly halfway between two float32 integers
    c = (rng.choice([-1, 1], n) * np.ldexp(1.0, rng.integers(-60, -35, n))).astype(np.float32)
    z = _threefry.fma32(a, b, c)
    naive = (a.astype(np.float64) * b + c).astype(np.float32)
    assert 0.3 * n < np.sum(z != naive) < 0.7 * n
    for i in range(0, n, 7):
        exact = Fraction(float(a[i])) * Fraction(1.5) + Fraction(float(c[i]))
        want = np.floor(float(exact)) if c[i] < 0 else np.ceil(float(exact))
        assert z[i] == np.float32(want)
    # results in and near float32's subnormal range take the exact path too
    a = (rng.normal(size=n) * 1e-20).astype(np.float32)
    b = (rng.normal(size=n) * 1e-19).astype(np.float32)
    c = (rng.normal(size=n) * 1e-39).astype(np.float32)
    z = _threefry.fma32(a, b, c)
    for i in range(0, n, 7):
        assert z[i] == _exact_fma32(a[i], b[i], c[i])
    assert _threefry.fma32(np.zeros(0, np.float32), np.float32(1), np.float32(2)).shape == (0,)


def test_large_draws_recorded():
    """Draws larger than one chunk of the chunked float32 functions (65536
    elements), bit for bit; digests recorded from jax 0.10.2 on CPU
    (jax.random.key(42), fold_in 1 and 2)."""
    k = random.key(42)
    assert digest(random.normal(k, (300, 500))) == 5576826812511723535
    assert digest(random.exponential(random.fold_in(k, 1), (70001,))) == 2591967618622768877
    assert digest(random.logistic(random.fold_in(k, 2), (70001,))) == 5228283989445332749


@both
def test_bernoulli_exponential_gumbel_recorded(scheme):
    want = JAX2[JAX_SCHEME[scheme]]
    k = random.PRNGKey(42)
    e = random.exponential(k, (5,))
    assert e.dtype == np.float32 and bits_of(e) == want["exp5"]
    assert bits_of(random.exponential(k)) == want["exp0"]
    assert bits_of(random.gumbel(k, (5,))) == want["gum5"]
    b = random.bernoulli(k, 0.3, (7,))
    assert b.dtype == np.bool_ and b.astype(int).tolist() == want["ber7"]
    b = random.bernoulli(k, jnp.array([0.1, 0.5, 0.9]))
    assert b.shape == (3,) and b.astype(int).tolist() == want["ber_arr"]
    b = random.bernoulli(k, jnp.array([0.1, 0.5, 0.9]), (2, 3), mode="high")
    assert b.astype(int).tolist() == want["berh23"]
    assert digest(random.exponential(k, (257, 3))) == want["exp_digest"]
    assert digest(random.gumbel(k, (257, 3))) == want["gum_digest"]
    assert digest(random.bernoulli(k, 0.5, (1001,)).astype(np.uint32)) == want["ber_digest"]
    g = srcjax.vmap(lambda kk: random.gumbel(kk, (2,)))(random.split(k, 3))
    assert bits_of(g) == want["vmap_gum"]


def test_bernoulli_exponential_gumbel_errors(x64):
    k = random.PRNGKey(0)
    with pytest.raises(TypeError, match="floating"):
        random.bernoulli(k, 1)
    with pytest.raises(ValueError, match="mode"):
        random.bernoulli(k, 0.5, mode="middle")
    assert random.exponential(k, (2,)).dtype == np.float64  # (values: test_random_float64.py)
    with pytest.raises(NotImplementedError, match="gumbel"):
        random.gumbel(k, (2,), jnp.float32, mode="high")
    assert random.exponential(k, (2,), jnp.float32).dtype == np.float32
    assert random.bernoulli(k, 0.5, (3,)).dtype == np.bool_  # float64 uniform under x64


# -- inside transformed code ----------------------------------------------------------------
@both
def test_vmap_over_keys_recorded(scheme):
    want = JAX[JAX_SCHEME[scheme]]
    keys = random.split(random.PRNGKey(0), 4)
    f = srcjax.vmap(lambda kk: random.normal(kk, (3,)))
    assert bits_of(f(keys)) == want["vmap_normal"]
    # one vectorised call, no per-example loop
    assert "random_normal_b" in srcjax.source(f) and "for " not in srcjax.source(f)
    k = random.PRNGKey(42)
    folds = srcjax.vmap(lambda i: random.fold_in(k, i))(np.arange(3))
    assert folds.tolist() == want["vmap_fold"]
    assert srcjax.vmap(lambda kk: random.split(kk, 3))(keys[:2]).tolist() == want["vmap_split"]
    g = srcjax.vmap(lambda m: random.uniform(k, (2,), minval=m, maxval=4.0))
    assert bits_of(g(np.array([0.0, 1.0, 2.0], np.float32))) == want["vmap_uniform_minval"]


def test_nested_vmap_and_batched_seeds():
    keys = random.split(random.PRNGKey(5), (2, 3))
    got = srcjax.vmap(srcjax.vmap(lambda kk: random.uniform(kk, (4,))))(keys)
    want = np.stack([np.stack([random.uniform(kk, (4,)) for kk in row]) for row in keys])
    assert got.dtype == np.float32 and np.array_equal(got, want)
    seeds = srcjax.vmap(random.PRNGKey)(np.array([0, 42, -1], np.int32))
    assert seeds.tolist() == [[0, 0], [0, 42], [0, 0xFFFFFFFF]]
    both_b = srcjax.vmap(random.fold_in)(keys[0], np.arange(3))
    assert both_b.tolist() == [random.fold_in(kk, i).tolist() for i, kk in enumerate(keys[0])]
    b = srcjax.vmap(lambda kk: random.bits(kk, (2,), jnp.uint8))(keys[1])
    assert b.dtype == np.uint8 and b.tolist() == [
        random.bits(kk, (2,), jnp.uint8).tolist() for kk in keys[1]
    ]


@both
def test_grad_with_noise_recorded(scheme):
    want = JAX[JAX_SCHEME[scheme]]
    k = random.PRNGKey(42)

    def loss(x, key):
        return jnp.sum((x * random.normal(key, x.shape)) ** 2)

    x = np.arange(1.0, 4.0, dtype=np.float32)
    g = srcjax.grad(loss)(x, k)
    w = np.array(want["grad"], np.uint32).view(np.float32)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, w, rtol=1e-6)
    # and through jit
    np.testing.assert_allclose(srcjax.jit(srcjax.grad(loss))(x, k), w, rtol=1e-6)


@both
def test_jit_of_a_function_taking_a_key(scheme):
    want = JAX[JAX_SCHEME[scheme]]
    k2 = random.fold_in(random.PRNGKey(7), 3)
    f = srcjax.jit(lambda key: random.uniform(key, (3,), minval=-1.0, maxval=1.0))
    out = f(k2)
    assert out.dtype == np.float32 and bits_of(out) == want["jit"]
    # keys stay uint32 through the jit cache: a second key reuses the specialization
    out2 = f(random.PRNGKey(1))
    assert bits_of(out2) == bits_of(
        random.uniform(random.PRNGKey(1), (3,), minval=-1.0, maxval=1.0)
    )

    @srcjax.jit
    def step(key):
        key, sub = random.split(key)
        return key, random.normal(sub, (2,))

    key, z = step(random.PRNGKey(0))
    sub = random.split(random.PRNGKey(0))[1]
    assert key.dtype == np.uint32 and key.tolist() == random.split(random.PRNGKey(0))[0].tolist()
    assert bits_of(z) == bits_of(random.normal(sub, (2,)))


def test_keys_in_a_loop_inside_grad():
    def loss(w, key):
        total = 0.0
        for i in range(3):
            key, sub = random.split(key)
            total = total + jnp.sum(w * random.uniform(sub, w.shape))
        return total

    w = np.ones(4, np.float32)
    k = random.PRNGKey(3)
    want = np.zeros(4, np.float32)
    key = k
    for i in range(3):
        key, sub = random.split(key)
        want = want + random.uniform(sub, (4,))
    np.testing.assert_allclose(srcjax.grad(loss)(w, k), want, rtol=1e-6)


def test_uniform_minval_derivative_is_a_clear_error():
    def f(m):
        return jnp.sum(random.uniform(random.PRNGKey(0), (3,), minval=m, maxval=2.0))

    with pytest.raises(Exception, match="minval"):
        srcjax.grad(f)(np.float32(0.5))


def test_user_variable_named_random():
    # a user variable named like the generated code's `random` namespace is renamed
    def f(x):
        random = 2.0
        return jnp.sum(x * random)

    assert srcjax.grad(f)(np.ones(2, np.float32)).tolist() == [2.0, 2.0]
    assert srcjax.jit(f)(np.ones(2, np.float32)) == 4.0


# -- errors -----------------------------------------------------------------------------------
def test_bad_keys():
    with pytest.raises(TypeError, match="shape"):
        random.normal(np.zeros(3, np.uint32), (2,))
    with pytest.raises(TypeError, match="uint32"):
        random.normal(np.zeros(2, np.int32), (2,))
    with pytest.raises(TypeError, match="uint32"):
        random.split(np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="key type"):
        random.uniform([0, 0], (2,))
    with pytest.raises(ValueError, match="single key.*vmap"):
        random.normal(np.zeros((3, 2), np.uint32), (2,))
    with pytest.raises(ValueError, match="single key"):
        random.split(np.zeros((3, 2), np.uint32))


def test_bad_arguments():
    k = random.PRNGKey(0)
    with pytest.raises(OverflowError, match="out of bounds for uint32"):
        random.fold_in(k, -1)
    with pytest.raises(OverflowError, match="out of bounds for uint32"):
        random.fold_in(k, 2**32)
    with pytest.raises(TypeError, match="scalar"):
        random.fold_in(k, np.arange(3))
    with pytest.raises(ValueError, match="float dtype"):
        random.uniform(k, (2,), dtype=jnp.int32)
    with pytest.raises(ValueError, match="unsigned"):
        random.bits(k, (2,), jnp.int32)
    with pytest.raises(NotImplementedError, match="float16"):
        random.exponential(k, (2,), dtype=jnp.float16)  # (uniform/normal have it)
    with pytest.raises(ValueError, match="broadcast"):
        random.uniform(k, (3,), minval=np.zeros((2, 3)))
    with pytest.raises(ValueError, match="broadcast"):
        random.uniform(k, (2,), minval=np.zeros(3))
    with pytest.raises(TypeError):
        random.split(k, 2.0)
    with pytest.raises(ValueError, match="negative"):
        random.normal(k, (-1,))
    assert random.normal(k, (0, 3)).shape == (0, 3)
    assert random.normal(k, 3).tolist() == random.normal(k, (3,)).tolist()  # as JAX


# -- randint, permutation, choice, categorical, laplace, logistic, rademacher ----------------
# recorded from jax/jaxlib 0.10.2 on CPU (integers as values, float32 as uint32 bits, big
# outputs as digest())
# fmt: off
JAX3 = {'legacy': {'cat': [3, 0, 3],
            'cat_ax0_shape': [[0, 2, 2, 0, 2], [1, 0, 1, 0, 0]],
            'cat_digest': 4274799,
            'cat_norep': [[3, 0, 3], [1, 2, 2], [0, 3, 1], [4, 4, 4]],
            'choice5': [2, 3, 7, 9, 4],
            'choice_norep': [[9, 0, 2], [6, 1, 4]],
            'choice_p': [4, 2, 4, 2, 2, 2, 2, 4],
            'choice_p300_digest': 76469047,
            'choice_p_norep': [4, 2, 0],
            'choice_x_ax1': [[0, 1065353216], [1077936128, 1082130432], [1086324736, 1088421888],
                             [1091567616, 1092616192]],
            'grad': [0, 0, 0],
            'jit_choice': [2, 9, 6],
            'laplace5': [3206386284, 3215696469, 1064250304, 1063275821, 1065110133],
            'laplace_digest': 628899213864175,
            'logistic5': [1065247580, 1072851366, 3216265353, 3215654569, 3216797096],
            'logistic_digest': 641413026732832,
            'perm10': [9, 0, 2, 6, 1, 4, 5, 8, 3, 7],
            'perm2000_digest': 1995575878,
            'perm_x_ax1': [[1073741824, 0, 1065353216], [1084227584, 1077936128, 1082130432],
                           [1090519040, 1086324736, 1088421888],
                           [1093664768, 1091567616, 1092616192]],
            'perm_x_ind': [[0, 1092616192, 1093664768], [1077936128, 1082130432, 1073741824],
                           [1086324736, 1088421888, 1090519040],
                           [1091567616, 1065353216, 1084227584]],
            'rad7': [-1, -1, 1, 1, -1, 1, 1],
            'rad_u8': [1, 1, 255, 1],
            'randint23': [[-2, 3, 100], [492, 334, 957]],
            'randint5': [2, 3, 7, 9, 4],
            'randint_empty': [5, 5, 5],
            'randint_full': [-1558008892, -255877411, 1116198065, -1801557693],
            'randint_i8_digest': 475805,
            'randint_u8': [116, 107, 61, 9, 72, 218],
            'vmap_cat': [[3, 3, 1], [3, 0, 0], [1, 4, 3]],
            'vmap_choice_p': [[2, 2, 3, 2], [3, 2, 2, 3], [2, 4, 3, 4]],
            'vmap_laplace': [[1033966325, 1033496856], [3217687301, 1024235556],
                             [3191891218, 1057192637]],
            'vmap_perm': [[1, 4, 2, 3, 0], [2, 4, 0, 1, 3], [2, 1, 3, 4, 0]],
            'vmap_randint': [[6, 0, 8, -1], [0, 2, -2, 7], [1, 3, 4, 4]]},
 'part': {'cat': [3, 0, 2],
          'cat_ax0_shape': [[1, 0, 2, 0, 0], [1, 0, 2, 0, 1]],
          'cat_digest': 4556019,
          'cat_norep': [[3, 0, 2], [1, 4, 3], [4, 2, 1], [0, 3, 4]],
          'choice5': [4, 4, 1, 9, 9],
          'choice_norep': [[7, 4, 2], [5, 3, 6]],
          'choice_p': [4, 3, 2, 2, 0, 2, 3, 4],
          'choice_p300_digest': 71597122,
          'choice_p_norep': [4, 2, 3],
          'choice_x_ax1': [[0, 0], [1077936128, 1077936128], [1086324736, 1086324736],
                           [1091567616, 1091567616]],
          'grad': [3224820590, 3230213266, 0],
          'jit_choice': [2, 0, 1],
          'laplace5': [1018894905, 3202624692, 3196551989, 3188016341, 1037359291],
          'laplace_digest': 632369138061335,
          'logistic5': [3174630288, 1061206556, 1056083882, 1048259700, 3192574452],
          'logistic_digest': 638324109665135,
          'perm10': [7, 4, 2, 5, 3, 6, 8, 9, 0, 1],
          'perm2000_digest': 2002589030,
          'perm_x_ax1': [[1073741824, 0, 1065353216], [1084227584, 1077936128, 1082130432],
                         [1090519040, 1086324736, 1088421888],
                         [1093664768, 1091567616, 1092616192]],
          'perm_x_ind': [[1077936128, 1088421888, 1073741824], [1086324736, 1082130432, 1084227584],
                         [1091567616, 1092616192, 1093664768], [0, 1065353216, 1090519040]],
          'rad7': [1, -1, -1, -1, 1, -1, 1],
          'rad_u8': [1, 1, 255, 255],
          'randint23': [[-2, 4, 100], [892, 4, 738]],
          'randint5': [4, 4, 1, 9, 9],
          'randint_empty': [5, 5, 5],
          'randint_full': [-1717628369, -1249751212, -1931596683, -155647737],
          'randint_i8_digest': 18446744073709015966,
          'randint_u8': [196, 18, 183, 193, 141, 107],
          'vmap_cat': [[0, 0, 4], [3, 4, 1], [1, 0, 1]],
          'vmap_choice_p': [[2, 4, 4, 4], [4, 4, 2, 3], [0, 0, 3, 4]],
          'vmap_laplace': [[3214128738, 1065424712], [1082607695, 1078671302],
                           [3218157239, 3219049508]],
          'vmap_perm': [[0, 2, 4, 1, 3], [0, 3, 1, 4, 2], [4, 3, 1, 0, 2]],
          'vmap_randint': [[4, 2, 4, -2], [-1, 7, 1, 0], [0, 7, 8, 8]]},
 'x64': {'cat_dtype': 'int64',
         'choice_p64': [13, 18, 20, 24, 38, 35],
         'perm': [2, 0, 4, 1, 3, 5],
         'perm_dtype': 'int64',
         'rad': [-1, -1, -1, -1, 1],
         'randint': [78222850268, -637385808516, -281551489001, 133917754057],
         'randint_dtype': 'int64'}}
# fmt: on

X34 = np.arange(12.0, dtype=np.float32).reshape(4, 3)
P5 = np.array([0.1, 0.0, 0.4, 0.2, 0.3], np.float32)
LOGITS = np.array(
    [[0.0, 1.0, -1.0, 2.0, 0.5], [3.0, -np.inf, 0.0, 0.0, 1.0], [0.1, 0.2, 0.3, 0.4, 0.5]],
    np.float32,
)


def idigest(a):
    v = np.asarray(a).reshape(-1).astype(np.int64).astype(np.uint64)
    return int(np.sum(v * np.arange(1, v.size + 1, dtype=np.uint64), dtype=np.uint64))


@both
def test_randint_recorded(scheme):
    want = JAX3[JAX_SCHEME[scheme]]
    k = random.PRNGKey(42)
    k2 = random.fold_in(random.PRNGKey(7), 3)
    r = random.randint(k, (5,), 0, 10)
    assert r.dtype == np.int32 and r.tolist() == want["randint5"]
    r = random.randint(k2, (2, 3), np.array([-5, 0, 100]), np.array([[5], [1000]]))
    assert r.shape == (2, 3) and r.tolist() == want["randint23"]
    r = random.randint(k, (6,), 0, 256, jnp.uint8)  # maxval past uint8: the whole range
    assert r.dtype == np.uint8 and r.tolist() == want["randint_u8"]
    r = random.randint(k, (1001,), -100, 100, jnp.int8)
    assert r.dtype == np.int8 and idigest(r) == want["randint_i8_digest"]
    assert random.randint(k2, (4,), -(2**31), 2**31 - 1).tolist() == want["randint_full"]
    assert random.randint(k, (3,), 5, 2).tolist() == want["randint_empty"] == [5, 5, 5]


@both
def test_permutation_recorded(scheme):
    want = JAX3[JAX_SCHEME[scheme]]
    k = random.PRNGKey(42)
    k2 = random.fold_in(random.PRNGKey(7), 3)
    p = random.permutation(k, 10)
    assert p.dtype == np.int32 and p.tolist() == want["perm10"]
    assert idigest(random.permutation(k2, 2000)) == want["perm2000_digest"]  # two sort rounds
    p = random.permutation(k, X34, axis=1)
    assert p.dtype == np.float32 and bits_of(p) == want["perm_x_ax1"]
    assert bits_of(random.permutation(k, X34, independent=True)) == want["perm_x_ind"]
    assert random.permutation(k, 1).tolist() == [0]
    assert random.permutation(k, 0).shape == (0,)


@both
def test_choice_recorded(scheme):
    want = JAX3[JAX_SCHEME[scheme]]
    k = random.PRNGKey(42)
    k2 = random.fold_in(random.PRNGKey(7), 3)
    c = random.choice(k, 10, (5,))
    assert c.dtype == np.int32 and c.tolist() == want["choice5"]
    c = random.choice(k, 10, (2, 3), replace=False)
    assert c.shape == (2, 3) and c.tolist() == want["choice_norep"]
    assert len(set(c.ravel().tolist())) == 6
    assert random.choice(k2, 5, (8,), p=P5).tolist() == want["choice_p"]
    assert random.choice(k2, 5, (3,), replace=False, p=P5).tolist() == want["choice_p_norep"]
    c = random.choice(k, X34, (2,), axis=1)
    assert c.shape == (4, 2) and bits_of(c) == want["choice_x_ax1"]
    # 300 weights: XLA's cumsum is a blocked tree, not a sequential sum
    p300 = np.arange(300, dtype=np.float32) % 7 + np.float32(0.5)
    assert idigest(random.choice(k, 300, (1000,), p=p300)) == want["choice_p300_digest"]
    assert random.choice(k, X34, (0,)).shape == (0,)  # JAX's shape for no draws


@both
def test_categorical_recorded(scheme):
    want = JAX3[JAX_SCHEME[scheme]]
    k = random.PRNGKey(42)
    k2 = random.fold_in(random.PRNGKey(7), 3)
    c = random.categorical(k, LOGITS)
    assert c.dtype == np.int32 and c.tolist() == want["cat"]
    assert random.categorical(k2, LOGITS, axis=0, shape=(2, 5)).tolist() == want["cat_ax0_shape"]
    c = random.categorical(k, LOGITS, shape=(4, 3), replace=False)
    assert c.tolist() == want["cat_norep"]
    assert all(len(set(col)) == 4 for col in c.T.tolist())
    c = random.categorical(k2, np.zeros((20, 50), np.float32), shape=(30, 20))
    assert idigest(c) == want["cat_digest"]


@both
def test_laplace_logistic_rademacher_recorded(scheme):
    want = JAX3[JAX_SCHEME[scheme]]
    k = random.PRNGKey(42)
    k2 = random.fold_in(random.PRNGKey(7), 3)
    v = random.laplace(k, (5,))
    assert v.dtype == np.float32 and bits_of(v) == want["laplace5"]
    assert digest(random.laplace(k2, (257, 3))) == want["laplace_digest"]
    v = random.logistic(k, (5,))
    assert v.dtype == np.float32 and bits_of(v) == want["logistic5"]
    assert digest(random.logistic(k2, (257, 3))) == want["logistic_digest"]
    v = random.rademacher(k, (7,))
    assert v.dtype == np.int32 and v.tolist() == want["rad7"]
    v = random.rademacher(k2, (4,), jnp.uint8)
    assert v.dtype == np.uint8 and v.tolist() == want["rad_u8"]


def test_new_samplers_x64(x64):
    want = JAX3["x64"]
    k = random.PRNGKey(2**40 + 17)
    r = random.randint(k, (4,), -(2**40), 2**40)
    assert r.dtype == np.int64 and str(r.dtype) == want["randint_dtype"]
    assert r.tolist() == want["randint"]
    p = random.permutation(k, 6)
    assert str(p.dtype) == want["perm_dtype"] and p.tolist() == want["perm"]
    assert random.choice(k, 40, (6,), p=np.arange(40.0)).tolist() == want["choice_p64"]
    c = random.categorical(k, np.zeros(3, np.float32))
    assert str(c.dtype) == want["cat_dtype"]
    assert random.rademacher(k, (5,)).tolist() == want["rad"]
    # float64 laplace/logistic/categorical/choice(p=): XLA's float64 log/log1p,
    # bit for bit (tests/test_random_float64.py records them from JAX)
    for f in (random.laplace, random.logistic):
        assert f(k, (2,)).dtype == np.float64


@both
def test_new_samplers_under_vmap_and_jit(scheme):
    want = JAX3[JAX_SCHEME[scheme]]
    keys = random.split(random.PRNGKey(0), 3)
    f = srcjax.vmap(lambda kk: random.randint(kk, (4,), -3, 9))
    assert f(keys).tolist() == want["vmap_randint"]
    assert "random_randint_b" in srcjax.source(f) and "for " not in srcjax.source(f)
    assert srcjax.vmap(lambda kk: random.permutation(kk, 5))(keys).tolist() == want["vmap_perm"]
    assert srcjax.vmap(lambda kk: random.categorical(kk, LOGITS))(keys).tolist() == want["vmap_cat"]
    g = srcjax.vmap(lambda kk: random.choice(kk, 5, (4,), p=P5))
    assert g(keys).tolist() == want["vmap_choice_p"]
    assert bits_of(srcjax.vmap(lambda kk: random.laplace(kk, (2,)))(keys)) == want["vmap_laplace"]
    # a batched non-key operand: the per-example loop, same numbers
    xs = np.stack([X34, X34 + 1, X34 * 2])
    got = srcjax.vmap(lambda x: random.permutation(keys[0], x, axis=1))(xs)
    assert np.array_equal(got, np.stack([random.permutation(keys[0], x, axis=1) for x in xs]))
    k2 = random.fold_in(random.PRNGKey(7), 3)
    jf = srcjax.jit(lambda kk: random.choice(kk, 10, (3,), replace=False))
    assert jf(k2).tolist() == want["jit_choice"]
    assert (
        jf(random.PRNGKey(1)).tolist() == random.choice(random.PRNGKey(1), 10, (3,), False).tolist()
    )


@both
def test_grad_of_a_loss_with_dropout_and_categorical(scheme):
    want = JAX3[JAX_SCHEME[scheme]]

    def loss(w, key):
        k1, kc = random.split(key)
        mask = random.bernoulli(k1, 0.7, w.shape)
        i = random.categorical(kc, jnp.log(jnp.array([0.2, 0.3, 0.5])))
        return jnp.sum(jnp.where(mask, w, 0.0) / 0.7) * w[i]

    w = np.array([1.0, -2.0, 3.0], np.float32)
    expect = np.array(want["grad"], np.uint32).view(np.float32)
    g = srcjax.grad(loss)(w, random.PRNGKey(42))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, expect, rtol=1e-6)
    np.testing.assert_allclose(
        srcjax.jit(srcjax.grad(loss))(w, random.PRNGKey(42)), expect, rtol=1e-6
    )


def test_new_samplers_errors():
    k = random.PRNGKey(0)
    with pytest.raises(TypeError, match="integer dtypes"):
        random.randint(k, (2,), 0, 5, jnp.float32)
    with pytest.raises(ValueError, match="broadcast"):
        random.randint(k, (3,), np.zeros(2, np.int32), 5)
    with pytest.raises(OverflowError):
        random.randint(k, (3,), 0, 2**31)
    with pytest.raises(TypeError, match="integer or at least 1-dimensional"):
        random.permutation(k, 2.5)
    with pytest.raises(TypeError, match="ndarray or scalar"):
        random.permutation(k, [1, 2])
    with pytest.raises(ValueError, match="out of bounds"):
        random.permutation(k, np.arange(4), 1)
    with pytest.raises(TypeError, match="sequence"):
        random.choice(k, 5, 3)
    with pytest.raises(ValueError, match="larger sample"):
        random.choice(k, 5, (6,), replace=False)
    with pytest.raises(ValueError, match="greater than 0"):
        random.choice(k, 0, (1,))
    with pytest.raises(ValueError, match="p must be None or a 1D vector"):
        random.choice(k, 5, (2,), p=np.ones(4, np.float32))
    with pytest.raises(ValueError, match="cannot exceed"):
        random.categorical(k, np.zeros((3, 4), np.float32), shape=(5, 3), replace=False)
    with pytest.raises(ValueError, match="broadcast"):
        random.categorical(k, np.zeros((3, 4), np.float32), shape=(2,))
    with pytest.raises(ValueError, match="float dtype"):
        random.categorical(k, np.zeros((3, 4), np.int32))
    with pytest.raises(ValueError, match="single key"):
        random.randint(np.zeros((3, 2), np.uint32), (2,), 0, 3)

    def f(x):
        return jnp.sum(random.permutation(k, x) * np.arange(3.0, dtype=np.float32))

    with pytest.raises(Exception, match="permut"):
        srcjax.grad(f)(np.ones(3, np.float32))


def test_float16_uniform_and_normal_are_bit_exact():
    """float16 draws were NotImplementedError (nn.initializers in float16 need them).
    Values recorded from JAX 0.10.2 (the uint16 bits), both counter layouts."""
    k = random.PRNGKey(0)
    u = random.uniform(k, (8,), jnp.float16, 0.1, 0.7)
    assert u.dtype == np.float16
    assert u.view(np.uint16).tolist() == [13461, 13130, 12352, 14310, 13226, 13708, 14642, 14500]
    n = random.normal(k, (8,), jnp.float16)
    assert n.view(np.uint16).tolist() == [47078, 47709, 48741, 13938, 47575, 45867, 15743, 15036]
    srcjax.config.update("jax_threefry_partitionable", False)
    try:
        n = random.normal(random.PRNGKey(3), (8,), jnp.float16).view(np.uint16).tolist()
        assert n == [15071, 47536, 14530, 49301, 14764, 13386, 12700, 46809]
        b = random.uniform(random.PRNGKey(1), (4000,), jnp.float16).view(np.uint16)
        b = np.asarray(b).astype(np.int64)  # (Array.astype is JAX's: int64 -> int32 without x64)
        assert (int(b.sum()), int((b * np.arange(4000)).sum() % 1000003)) == (55319642, 348254)
    finally:
        srcjax.config.update("jax_threefry_partitionable", True)
    keys = random.split(random.PRNGKey(0), 3)
    got = srcjax.vmap(lambda kk: random.normal(kk, (4,), jnp.float16))(keys)
    want = np.stack([random.normal(kk, (4,), jnp.float16) for kk in keys])
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


def test_uniform_with_an_infinite_bound_is_inf():
    # Helper N: fma32's round-to-odd step turned an infinite sum into NaN, so
    # uniform(minval=0, maxval=inf) gave NaN. jax 0.10.2: [inf inf inf].
    got = srcjax.random.uniform(srcjax.random.PRNGKey(0), (3,), minval=0.0, maxval=np.inf)
    assert np.all(np.isposinf(got))
    # finite bounds unchanged (jax 0.10.2's draws)
    np.testing.assert_array_equal(
        srcjax.random.uniform(srcjax.random.PRNGKey(0), (3,)),
        np.array([0.947667, 0.9785799, 0.33229148], np.float32),
    )


def test_float64_normal_and_multivariate_normal_match_jax(x64):
    """Fresh-user bug 15: under jax_enable_x64, random.normal (and
    multivariate_normal) raised NotImplementedError. JAX's recipe on the bit-exact
    float64 uniform, SciPy's erfinv for XLA's: within a few ulps of JAX 0.10.2."""
    got = random.normal(random.PRNGKey(0), (3,))
    assert got.dtype == np.float64
    want = [-0.2058421394796434, -0.7847657764467411, 1.8160866726679836]
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-14)
    want = [
        [-1.184284421837855, -0.11617040844628398, 0.17269028009903425],
        [0.9573071790540392, -0.8329541450744178, 0.6908051716286406],
    ]
    np.testing.assert_allclose(
        np.asarray(random.normal(random.PRNGKey(1), (2, 3))), want, rtol=1e-14
    )
    cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    mvn = random.multivariate_normal(random.PRNGKey(2), np.zeros(2), cov, (2,))
    want = [[-0.27098533137839176, -1.0437190837146044], [0.6060116676350873, 0.00643393771952189]]
    np.testing.assert_allclose(np.asarray(mvn), want, rtol=1e-12, atol=1e-15)
    config.update("jax_threefry_partitionable", False)
    try:
        legacy = random.normal(random.PRNGKey(0), (3,))
    finally:
        config.update("jax_threefry_partitionable", True)
    want = [0.1878440128937887, -1.2833422921291577, 0.6494182018294374]
    np.testing.assert_allclose(np.asarray(legacy), want, rtol=1e-14)
