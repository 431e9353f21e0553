"""srcjax.example_libraries.optimizers against jax.example_libraries.optimizers.

The cases are tools/record_optimizers.py's (five steps of every optimizer on a
pytree with a dict, a tuple, a 0-d leaf; the schedules; clip_grads/l2_norm).
JAX_EAGER holds what that script printed with jax 0.10.2 (eager mode; JAX's jit
agrees with it to 1 ulp); srcjax runs the same program eagerly and under
srcjax.jit.
"""

import collections
import importlib.util
import os
import pickle

import numpy as np
import pytest
from helpers import fd_grad

import srcjax
import srcjax.numpy as jnp
from srcjax.example_libraries import optimizers
from srcjax.tree_util import tree_leaves, tree_structure

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _recorder():
    path = os.path.join(ROOT, "tools", "record_optimizers.py")
    spec = importlib.util.spec_from_file_location("record_optimizers", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# Recorded from jax 0.10.2: `python tools/record_optimizers.py jax` (eager values).
JAX_EAGER = {
    "sgd": [
        [0.3530350625514984, -1.3009153604507446, 2.046814203262329],
        0.15183167159557343,
        [
            [-0.3224760890007019, -0.1076015904545784, -0.1750081330537796],
            [-0.23560240864753723, -0.09373544901609421, 0.23375163972377777],
        ],
    ],
    "sgd_exp": [
        [0.4093073904514313, -0.6972874999046326, 2.026563882827759],
        0.3458428382873535,
        [
            [-0.6008748412132263, -0.30171388387680054, -0.18443456292152405],
            [-0.07886115461587906, 0.1436595469713211, 0.4822782576084137],
        ],
    ],
    "momentum": [
        [0.2908289432525635, -1.319258213043213, 2.0620391368865967],
        -0.16565163433551788,
        [
            [-0.07268714904785156, 0.09006384015083313, -0.16415730118751526],
            [-0.438922256231308, -0.4399166703224182, -0.172941654920578],
        ],
    ],
    "nesterov": [
        [0.2899666726589203, -1.6899020671844482, 2.0667190551757812],
        -0.10145361721515656,
        [
            [-0.032579198479652405, 0.10360473394393921, -0.16428451240062714],
            [-0.42215412855148315, -0.3895436227321625, -0.0907045304775238],
        ],
    ],
    "adagrad": [
        [0.4073549211025238, -0.34675320982933044, 2.094073534011841],
        0.6559877395629883,
        [
            [-0.905368983745575, -0.5056473016738892, -0.12390503287315369],
            [0.10606082528829575, 0.5057896375656128, 0.9057925343513489],
        ],
    ],
    "adagrad_m0": [
        [0.24482619762420654, -0.6106427311897278, 2.3012044429779053],
        0.4505915939807892,
        [
            [-0.6833512783050537, -0.2908526062965393, -0.1426023691892624],
            [-0.09723788499832153, 0.29484912753105164, 0.6949331760406494],
        ],
    ],
    "rmsprop": [
        [0.399383008480072, -0.36088261008262634, 2.1043975353240967],
        0.6457598805427551,
        [
            [-0.8941853046417236, -0.49488839507102966, -0.14426593482494354],
            [0.09594874829053879, 0.4952510893344879, 0.8952586650848389],
        ],
    ],
    "rmsprop_momentum": [
        [0.33910071849823, -0.4262585937976837, 2.166813373565674],
        0.5834264159202576,
        [
            [-0.8310521841049194, -0.4321057200431824, -0.12323985993862152],
            [0.03371477872133255, 0.43265342712402344, 0.8326647877693176],
        ],
    ],
    "adam": [
        [0.45014429092407227, -0.3000941574573517, 2.0499513149261475],
        0.700052797794342,
        [
            [-0.9500152468681335, -0.550031840801239, -0.15217074751853943],
            [0.15005739033222198, 0.5500405430793762, 0.9500407576560974],
        ],
    ],
    "adam_poly": [
        [0.4810236096382141, -0.26901888847351074, 2.018991470336914],
        0.7310091257095337,
        [
            [-0.9810026288032532, -0.5810055732727051, -0.1812215894460678],
            [0.18100988864898682, 0.5810070633888245, 0.9810070395469666],
        ],
    ],
    "adamax": [
        [0.4057563245296478, -0.34601128101348877, 2.097932815551758],
        0.6522327065467834,
        [
            [-0.9005267024040222, -0.5013033151626587, -0.1335083395242691],
            [0.10242950916290283, 0.5016945004463196, 0.9017025828361511],
        ],
    ],
    "sm3": [
        [0.4073549211025238, -0.34675320982933044, 2.094073534011841],
        0.6559877395629883,
        [
            [-0.905368983745575, -0.5142680406570435, -0.1570388525724411],
            [0.11483506858348846, 0.5057896375656128, 0.9057925343513489],
        ],
    ],
    "sm3_pw": [
        [0.3396000564098358, -0.4300275444984436, 2.1681406497955322],
        0.5821702480316162,
        [
            [-0.829109251499176, -0.44409894943237305, -0.11570005118846893],
            [0.04662591591477394, 0.4311697781085968, 0.8311845064163208],
        ],
    ],
    "exp": [
        0.10000000149011612,
        0.07937005162239075,
        0.06299605220556259,
        0.05000000074505806,
        0.039685025811195374,
        0.031498026102781296,
        0.02500000037252903,
        0.019842512905597687,
    ],
    "inv": [
        0.10000000149011612,
        0.08571428805589676,
        0.07500000298023224,
        0.06666667014360428,
        0.05999999865889549,
        0.05454545468091965,
        0.05000000074505806,
        0.04615384712815285,
    ],
    "inv_stair": [
        0.10000000149011612,
        0.10000000149011612,
        0.10000000149011612,
        0.06666667014360428,
        0.06666667014360428,
        0.06666667014360428,
        0.05000000074505806,
        0.05000000074505806,
    ],
    "poly": [
        0.10000000149011612,
        0.06062500178813934,
        0.032499998807907104,
        0.015625,
        0.009999999776482582,
        0.009999999776482582,
        0.009999999776482582,
        0.009999999776482582,
    ],
    "pw": [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.10000000149011612, 0.10000000149011612],
    "l2": 13.0,
    "clip": [[1.5, 2.0], [[6.0]]],
    "noclip": [[3.0, 4.0], [[12.0]]],
}


def _flat(v):
    if isinstance(v, list):
        return np.concatenate([_flat(u) for u in v]) if v else np.zeros(0)
    return np.ravel(np.asarray(v, dtype=np.float64))


@pytest.fixture(scope="module")
def results():
    return _recorder().run(srcjax, jnp, optimizers, srcjax.jit)


@pytest.mark.parametrize("case", sorted(JAX_EAGER))
def test_same_numbers_as_jax(results, case):
    modes = [m for (c, m) in results if c == case]
    assert modes, case
    for mode in modes:
        got = _flat(results[(case, mode)])
        want = _flat(JAX_EAGER[case])
        # float32 arithmetic in JAX's order: equal to a few ulps (XLA may fuse
        # multiply-adds, NumPy does not)
        np.testing.assert_allclose(got, want, rtol=3e-6, atol=1e-7, err_msg=f"{case} {mode}")


def test_train_step_under_jit_is_one_specialization():
    opt_init, opt_update, get_params = optimizers.adam(0.05)

    def loss(p, x, y):
        pred = jnp.tanh(x @ p["w"] + p["b"])
        return jnp.mean((pred - y) ** 2)

    @srcjax.jit
    def step(i, opt_state, x, y):
        value, g = srcjax.value_and_grad(loss)(get_params(opt_state), x, y)
        return opt_update(i, g, opt_state), value

    def step_eager(i, opt_state, x, y):
        value, g = srcjax.value_and_grad(loss)(get_params(opt_state), x, y)
        return opt_update(i, g, opt_state), value

    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 3)).astype(np.float32)
    y = np.tanh(x @ np.array([[1.0], [-2.0], [0.5]], np.float32))
    p0 = {"w": np.zeros((3, 1), np.float32), "b": np.zeros(1, np.float32)}
    s_jit = s_eager = opt_init(p0)
    losses = []
    for i in range(30):
        s_jit, value = step(i, s_jit, x, y)
        s_eager, _ = step_eager(i, s_eager, x, y)
        losses.append(float(value))
    for a, b in zip(tree_leaves(get_params(s_jit)), tree_leaves(get_params(s_eager))):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert losses[-1] < 0.1 * losses[0]
    assert step._cache_size() == 1  # the step number is not a static value


def test_update_checks_the_gradient_tree():
    opt_init, opt_update, _ = optimizers.sgd(0.1)
    state = opt_init({"w": jnp.ones(3), "b": jnp.zeros(())})
    with pytest.raises(TypeError, match="did not match the parameter tree"):
        opt_update(0, {"w": jnp.ones(3)}, state)
    with pytest.raises(TypeError, match="did not match the parameter tree"):
        srcjax.jit(opt_update)(0, {"w": jnp.ones(3)}, state)


def test_custom_optimizer_state_structure_is_checked():
    @optimizers.optimizer
    def bad(step_size):
        def init(x0):
            return x0, jnp.zeros_like(x0)

        def update(i, g, state):
            return state[0] - step_size * g  # drops the second array

        def get_params(state):
            return state[0]

        return init, update, get_params

    opt_init, opt_update, _ = bad(0.1)
    with pytest.raises(TypeError, match="did not match its input structure"):
        opt_update(0, jnp.ones(2), opt_init(jnp.ones(2)))


def test_custom_optimizer():
    @optimizers.optimizer
    def signsgd(step_size):
        """sign descent"""
        step_size = optimizers.make_schedule(step_size)

        def init(x0):
            return x0

        def update(i, g, x):
            return x - step_size(i) * jnp.sign(g)

        def get_params(x):
            return x

        return init, update, get_params

    assert signsgd.__doc__ == "sign descent"
    opt_init, opt_update, get_params = signsgd(0.5)
    s = opt_init([jnp.asarray([1.0, -1.0]), jnp.asarray(3.0)])
    s = srcjax.jit(opt_update)(0, [jnp.asarray([2.0, -0.1]), jnp.asarray(-1.0)], s)
    a, b = get_params(s)
    np.testing.assert_array_equal(a, [0.5, -0.5])
    assert float(b) == 3.5


def test_pack_unpack_round_trip_through_pickle():
    opt_init, opt_update, get_params = optimizers.momentum(0.1, 0.9)
    params = {"w": jnp.ones((2, 2)), "layers": [jnp.zeros(3), (jnp.ones(()),)]}
    state = opt_update(0, params, opt_init(params))
    marked = optimizers.unpack_optimizer_state(state)
    assert isinstance(marked["w"], optimizers.JoinPoint)
    back = optimizers.pack_optimizer_state(pickle.loads(pickle.dumps(marked)))
    assert tree_structure(back) == tree_structure(state)
    for a, b in zip(tree_leaves(back), tree_leaves(state)):
        np.testing.assert_array_equal(a, b)
    # the repacked state keeps training
    back = opt_update(1, params, back)
    np.testing.assert_allclose(get_params(back)["w"], 1.0 - 0.1 - 0.1 * 1.9, rtol=1e-6)
    with pytest.raises(TypeError, match="JoinPoint"):
        optimizers.pack_optimizer_state({"w": jnp.ones(2)})


def test_vmap_over_a_batch_of_gradients():
    opt_init, opt_update, get_params = optimizers.adam(0.01)
    p = {"w": jnp.ones((3,)), "b": jnp.zeros(())}
    grads = {"w": np.arange(12.0, dtype=np.float32).reshape(4, 3) - 5, "b": np.arange(4.0) - 1}
    batched = srcjax.vmap(lambda g: get_params(opt_update(0, g, opt_init(p))))(grads)
    for k in range(4):
        one = get_params(opt_update(0, {"w": grads["w"][k], "b": grads["b"][k]}, opt_init(p)))
        np.testing.assert_allclose(batched["w"][k], one["w"], rtol=1e-6)
        np.testing.assert_allclose(batched["b"][k], one["b"], rtol=1e-6)


def test_grad_through_updates(x64):
    """Differentiating through three momentum steps (meta-learning's shape),
    against central differences in float64."""
    opt_init, opt_update, get_params = optimizers.momentum(0.1, 0.9)

    def after_three_steps(w):
        s = opt_init({"w": w})
        for k in range(3):
            s = opt_update(k, {"w": jnp.sin(get_params(s)["w"])}, s)
        return jnp.sum(get_params(s)["w"] ** 2)

    w0 = np.array([0.3, -1.2])
    g = srcjax.grad(after_three_steps)(w0)
    eps = 1e-6
    fd = [
        (after_three_steps(w0 + e) - after_three_steps(w0 - e)) / (2 * eps) for e in np.eye(2) * eps
    ]
    np.testing.assert_allclose(g, fd, rtol=1e-7)


def test_schedules_inside_jit():
    sched = optimizers.piecewise_constant([2, 5], [1.0, 0.5, 0.1])
    f = srcjax.jit(lambda i: sched(i))
    np.testing.assert_array_equal(
        [f(i) for i in range(7)], np.float32([1, 1, 1, 0.5, 0.5, 0.5, 0.1])
    )
    with pytest.raises(ValueError, match="one shorter"):
        optimizers.piecewise_constant([1, 2], [1.0, 0.5])
    with pytest.raises(ValueError, match="sequences"):
        optimizers.piecewise_constant(1, [1.0, 0.5])
    with pytest.raises(TypeError):
        optimizers.make_schedule([0.1, 0.2])


def test_l2_norm_and_clip_grads_under_jit():
    g = {"a": jnp.asarray([3.0, 4.0]), "b": jnp.asarray([[12.0]])}
    assert float(srcjax.jit(optimizers.l2_norm)(g)) == 13.0
    clipped = srcjax.jit(optimizers.clip_grads)(g, 6.5)
    np.testing.assert_allclose(clipped["a"], [1.5, 2.0], rtol=1e-6)
    np.testing.assert_allclose(clipped["b"], [[6.0]], rtol=1e-6)


_Opt = collections.namedtuple("_Opt", ["init", "update"])


def _momentum_like(lr, mass):
    """An optax-style optimizer: init/update closures in a namedtuple."""

    def init(p):
        return (p, jnp.zeros_like(p))

    def update(g, state):
        p, v = state
        v = mass * v + g
        return (p - lr * v, v)

    return _Opt(init, update)


def _train(opt, w, steps=3):
    state = opt.init(w)
    for _ in range(steps):
        p, _ = state
        state = opt.update(2.0 * p + jnp.sin(p), state)
    return jnp.sum(state[0] ** 2)


_OPT = _momentum_like(0.1, 0.9)


def _train_with_module_optimizer(w):
    return _train(_OPT, w)


def _train_building_the_optimizer_inside(w):
    return _train(_momentum_like(0.1, 0.9), w)


def _train_with_srcjax_sgd_inside(w):
    init, update, get = optimizers.sgd(0.1)
    s = init(w)
    for i in range(3):
        s = update(i, 2.0 * get(s), s)
    return jnp.sum(get(s) ** 2)


def test_an_optimizer_built_inside_the_differentiated_function_is_refused_with_the_workaround(
    x64,
):
    """Issue 20: an optax-like optimizer (init/update closures in a namedtuple,
    or srcjax's own optimizers.sgd) constructed inside the differentiated
    function is refused; the error says to build it outside, and so built it
    differentiates through the training steps as float64 central differences do."""
    w = np.array([0.3, -1.2, 2.0])
    with pytest.raises(srcjax.errors.UnsupportedSyntaxError) as info:
        srcjax.grad(_train_building_the_optimizer_inside)(w)
    assert "(`init`) cannot be stored in a `_Opt`" in str(info.value)
    assert "build what holds `init`" in str(info.value)
    assert "outside the transformed function" in str(info.value)
    with pytest.raises(srcjax.errors.UnsupportedSyntaxError, match="call `sgd` outside"):
        srcjax.grad(_train_with_srcjax_sgd_inside)(w)
    want = fd_grad(lambda v: float(_train_with_module_optimizer(v)), w)
    for g in (srcjax.grad, lambda f: srcjax.jit(srcjax.grad(f))):
        np.testing.assert_allclose(g(_train_with_module_optimizer)(w), want, rtol=1e-7)
