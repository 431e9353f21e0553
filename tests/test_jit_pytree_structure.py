"""jit specialized on the structure of pytree arguments (registered classes,
dicts, lists): the treedef and leaf shapes in the key, cotangents and tree_map
leaves decided at transformation time (transforms/optimize/pytrees.py). The
oracle is the same function run eagerly (srcjax.disable_jit) and finite
differences where a gradient is returned."""

import re

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import tree_util as tu


@tu.register_pytree_node_class
class Linear:
    def __init__(self, weight, bias):
        self.weight = weight
        self.bias = bias

    def __call__(self, x):
        return x @ self.weight + self.bias

    def tree_flatten(self):
        return (self.weight, self.bias), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


@tu.register_pytree_node_class
class MLP:
    def __init__(self, layers, act="tanh"):
        self.layers = layers
        self.act = act

    def __call__(self, x):
        f = jnp.tanh if self.act == "tanh" else jnp.sin
        for layer in self.layers[:-1]:
            x = f(layer(x))
        return self.layers[-1](x)

    def tree_flatten(self):
        return (self.layers,), self.act

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, act=aux)


def make_model(sizes, seed=0, act="tanh"):
    rng = np.random.default_rng(seed)
    layers = [
        Linear(
            (rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
            rng.standard_normal(n).astype(np.float32) * 0.1,
        )
        for m, n in zip(sizes[:-1], sizes[1:])
    ]
    return MLP(layers, act)


def loss(model, x, y):
    return jnp.mean((model(x) - y) ** 2)


def adam_step(model, state, x, y):
    m, v, t = state
    value, grads = srcjax.value_and_grad(loss)(model, x, y)
    t = t + 1
    m = tu.tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
    v = tu.tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, v, grads)
    mhat = 1 / (1 - 0.9**t)
    vhat = 1 / (1 - 0.999**t)
    model = tu.tree_map(
        lambda p, m, v: p - 0.01 * (m * mhat) / (jnp.sqrt(v * vhat) + 1e-8), model, m, v
    )
    return model, (m, v, t), value


def inputs(sizes, seed=0, act="tanh"):
    model = make_model(sizes, seed, act)
    zeros = tu.tree_map(np.zeros_like, model)
    state = (zeros, tu.tree_map(np.zeros_like, model), np.float32(0.0))
    rng = np.random.default_rng(seed + 1)
    x = rng.standard_normal((8, sizes[0])).astype(np.float32)
    y = rng.standard_normal((8, sizes[-1])).astype(np.float32)
    return model, state, x, y


def assert_trees_close(a, b, rtol=2e-5, atol=1e-6):
    la, ta = tu.tree_flatten(a)
    lb, tb = tu.tree_flatten(b)
    assert ta == tb
    for u, w in zip(la, lb):
        np.testing.assert_allclose(np.asarray(u), np.asarray(w), rtol=rtol, atol=atol)


def run_steps(step, args, n=3):
    model, state, x, y = args
    values = []
    for _ in range(n):
        model, state, value = step(model, state, x, y)
        values.append(value)
    return model, state, values


def test_adam_on_a_class_model_matches_eager():
    jitted = srcjax.jit(adam_step)
    args = inputs((5, 7, 6, 3))
    got = run_steps(jitted, args)
    with srcjax.disable_jit():
        want = run_steps(adam_step, args)
    assert isinstance(got[0], MLP) and isinstance(got[0].layers[1], Linear)
    assert_trees_close(got, want)
    # the cotangent is built from its leaves, no sparse pieces merged at run time
    text = srcjax.source(jitted, *args)
    for helper in ("ad.attr_adjoint", "ad.tree_add", "ad.tree_index_adjoint", "ad.leaves_upto"):
        assert helper not in text, helper
    assert "for layer" not in text and "tape" not in text  # layers unrolled


def test_gradient_of_a_class_model_against_finite_differences():
    model, _, x, y = inputs((3, 4, 2), seed=3)
    g = srcjax.jit(srcjax.grad(loss))(model, x, y)
    w = np.asarray(model.layers[0].weight, np.float64)
    eps = 1e-3
    for i, j in [(0, 0), (2, 3), (1, 2)]:
        plus, minus = w.copy(), w.copy()
        plus[i, j] += eps
        minus[i, j] -= eps

        def at(wv):
            layers = [Linear(wv.astype(np.float32), model.layers[0].bias)] + model.layers[1:]
            return float(loss(MLP(layers), x, y))

        fd = (at(plus) - at(minus)) / (2 * eps)
        np.testing.assert_allclose(np.asarray(g.layers[0].weight)[i, j], fd, rtol=2e-2, atol=1e-4)


def test_a_new_treedef_specializes_again():
    jitted = srcjax.jit(adam_step)
    n0 = jitted._cache_size()  # (srcjax.jit of one function is one object)
    for sizes, act in [((4, 5, 2), "tanh"), ((4, 5, 5, 2), "tanh"), ((4, 5, 2), "sin")]:
        args = inputs(sizes, act=act)
        got = run_steps(jitted, args, n=2)
        with srcjax.disable_jit():
            want = run_steps(adam_step, args, n=2)
        assert_trees_close(got, want)
        assert got[0].act == act  # aux data kept
    # three layers instead of two, and other aux data: three specializations
    assert jitted._cache_size() == n0 + 3
    args = inputs((4, 5, 2), act="sin")
    jitted(*args)
    assert jitted._cache_size() == n0 + 3  # the same treedef and shapes: reused
    bigger = inputs((4, 6, 2), act="sin")  # one leaf shape changed
    jitted(*bigger)
    assert jitted._cache_size() == n0 + 4


def test_equal_aux_data_shares_a_specialization():
    @tu.register_pytree_node_class
    class Scaled:
        def __init__(self, w, cfg):
            self.w, self.cfg = w, cfg

        def tree_flatten(self):
            return (self.w,), self.cfg

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(children[0], aux)

    @srcjax.jit
    def f(s, x):
        return jnp.sum(s.w * x) * s.cfg[1]

    w = np.ones(3, np.float32)
    assert float(f(Scaled(w, ("a", 2.0)), w)) == 6.0
    assert float(f(Scaled(w, ("a", 2.0)), w)) == 6.0  # an equal, distinct tuple
    assert f._cache_size() == 1
    assert float(f(Scaled(w, ("a", 3.0)), w)) == 9.0
    assert f._cache_size() == 2


def test_dict_parameters_with_grad_and_tree_map_match_eager():
    def step(params, x):
        g = srcjax.grad(lambda p: jnp.sum(jnp.tanh(x @ p["w"] + p["b"]) ** 2))(params)
        return tu.tree_map(lambda p, g: p - 0.5 * g, params, g)

    rng = np.random.default_rng(0)
    params = {"w": rng.standard_normal((3, 2)).astype(np.float32), "b": np.ones(2, np.float32)}
    x = rng.standard_normal((4, 3)).astype(np.float32)
    got = srcjax.jit(step)(params, x)
    want = step(params, x)
    assert_trees_close(got, want)
    text = srcjax.source(srcjax.jit(step), params, x)
    assert "ad.tree_add" not in text and "ad.index_adjoint" not in text


@tu.register_pytree_node_class
class Computed:
    """A class whose child is computed by tree_flatten (no attribute holds it)."""

    def __init__(self, w):
        self.params = {"w": w}

    def tree_flatten(self):
        return (self.params["w"],), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0])


def test_a_child_that_is_no_attribute_is_left_to_run_time():
    def step(c, x):
        return tu.tree_map(lambda p: p * x, c), tu.tree_leaves(c), jnp.sum(c.params["w"])

    w = np.linspace(0, 1, 4).astype(np.float32)
    x = np.arange(4.0, dtype=np.float32)
    got = srcjax.jit(step)(Computed(w), x)
    want = step(Computed(w), x)
    assert_trees_close(got, want)


def test_complex_leaves_keep_their_projection():
    @srcjax.jit
    def step(p, x):
        g = srcjax.grad(lambda p: jnp.sum(jnp.abs(p[0] * x) ** 2) + jnp.sum(jnp.abs(p[1])))(p)
        return tu.tree_map(lambda a, b: a - 0.1 * b, p, g)

    p = [np.array([1 + 2j, 3 - 1j], np.complex64), np.array([0.5 + 0.5j], np.complex64)]
    x = np.array([1.0, 2.0], np.float32)
    with srcjax.disable_jit():
        want = step(p, x)
    assert_trees_close(step(p, x), want)


@pytest.mark.parametrize("n", [1, 2, 4])
def test_layer_loops_of_any_length(n):
    sizes = (3,) + (4,) * n + (2,)
    model, _, x, y = inputs(sizes, seed=n)
    got = srcjax.jit(srcjax.value_and_grad(loss))(model, x, y)
    want = srcjax.value_and_grad(loss)(model, x, y)
    assert_trees_close(got, want)


RATE = np.float32(0.5)  # (a NumPy scalar: read live; a Python float is folded)
PY_RATE = 0.5


def _decay(params):
    return tu.tree_map(lambda p: p * RATE, params)


def _py_decay(params):
    return tu.tree_map(lambda p: p * PY_RATE, params)


def _decay_steps(x, n):
    for _ in range(n):
        x = x * RATE
    return x


def test_a_global_read_in_a_loop_is_read_once_per_call_and_still_live():
    global RATE
    f = srcjax.jit(_decay_steps, static_argnums=1)
    x = np.ones(3, np.float32)
    text = srcjax.source(f, x, 3)
    # the global is read once, before the loop (whatever name the loop passes give it)
    code = [line.split("#")[0] for line in text.splitlines()]
    reads = [i for i, line in enumerate(code) if re.search(r"\bRATE\b", line)]
    loop = next(i for i, line in enumerate(code) if line.strip().startswith("for "))
    assert len(reads) == 1 and reads[0] < loop, text
    np.testing.assert_allclose(f(x, 3), 0.125)
    RATE = np.float32(0.25)
    try:
        np.testing.assert_allclose(f(x, 3), 0.25**3)  # the next call sees it
    finally:
        RATE = np.float32(0.5)


def test_a_tree_map_over_known_leaves_is_written_out_and_reads_the_global_live():
    """jit knows the dict's structure: tree_map's loop over its leaves is written
    out leaf by leaf (no loop, no flatten or unflatten at run time), and the
    global is still read on every call."""
    global RATE
    f = srcjax.jit(_decay)
    params = {"a": np.ones(2, np.float32), "b": np.ones(3, np.float32)}
    text = srcjax.source(f, params)
    body = text.split("\n", 1)[1]  # (after the header line)
    assert "for " not in body and "ad.tree_leaves" not in body and "unflatten" not in body
    np.testing.assert_allclose(f(params)["b"], 0.5)
    RATE = np.float32(0.25)
    try:
        np.testing.assert_allclose(f(params)["a"], 0.25)  # the next call sees it
    finally:
        RATE = np.float32(0.5)


def test_a_python_float_global_read_in_a_loop_is_a_guarded_constant():
    global PY_RATE
    f = srcjax.jit(_py_decay)
    params = {"a": np.ones(2, np.float32), "b": np.ones(3, np.float32)}
    text = srcjax.source(f, params)
    assert "PY_RATE" not in text and "0.5" in text  # folded into the code
    np.testing.assert_allclose(f(params)["b"], 0.5)
    PY_RATE = 0.25
    try:
        np.testing.assert_allclose(f(params)["a"], 0.25)  # the next call sees it
    finally:
        PY_RATE = 0.5


def test_the_call_boundary_walks_a_class_model():
    # jit's boundary (unwrap, key, unalias, wrap) tests registered classes before
    # its isinstance chains: an input leaf returned inside a class is a copy, a
    # float64 leaf is keyed and passed as float32, Arrays inside come in as buffers
    model = make_model((3, 4, 2))
    f = srcjax.jit(lambda m, s: (m, m.layers[0].weight * s))
    out, w2 = f(model, 2.0)
    assert type(out) is MLP and type(out.layers) is list and type(out.layers[1]) is Linear
    assert out.act == "tanh"
    assert_trees_close(out, model, rtol=0, atol=0)
    for leaf, given in zip(tu.tree_leaves(out), tu.tree_leaves(model)):
        assert type(leaf) is srcjax.Array
        assert not np.shares_memory(np.asarray(leaf), given)
    np.testing.assert_array_equal(np.asarray(w2), model.layers[0].weight * 2)
    wide = tu.tree_map(lambda a: a.astype(np.float64), model)
    out64, _ = f(wide, 2.0)
    assert {np.asarray(a).dtype for a in tu.tree_leaves(out64)} == {np.dtype(np.float32)}
    assert_trees_close(out64, model, rtol=0, atol=0)
    again, w2b = f(out, 2.0)  # Arrays in: the same specialization's values
    assert_trees_close(again, model, rtol=0, atol=0)
    np.testing.assert_array_equal(np.asarray(w2b), np.asarray(w2))


@tu.register_pytree_node_class
class _Tagged:
    """A class whose aux data is unhashable (a list): keyed by its type tree."""

    def __init__(self, a, tags):
        self.a = a
        self.tags = tags

    def tree_flatten(self):
        return (self.a,), list(self.tags)

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0], aux)


def test_one_walk_unwraps_orders_and_keys_the_arguments():
    # a call's arguments are walked once (_Jit._key with weak=None): Arrays inside
    # lists of dicts come in as buffers, a dict given out of JAX's key order is
    # seen in it, a weakly typed Array of one axis promotes as a Python scalar,
    # and a class with unhashable aux data holding an Array is rebuilt on buffers
    a = np.arange(3, dtype=np.float32)
    b = np.full(3, 2.0, np.float32)
    first = srcjax.jit(lambda ps: [list(p.values())[0] * 3 for p in ps])
    got = first([{"b": jnp.asarray(b), "a": jnp.asarray(a)}])
    np.testing.assert_array_equal(np.asarray(got[0]), a * 3)  # "a" first, as in JAX
    assert type(got[0]) is srcjax.Array
    got = first([{"b": b, "a": a}])  # the same key with buffers: the same values
    np.testing.assert_array_equal(np.asarray(got[0]), a * 3)
    assert first._cache_size() == 1
    w = 2.5 * jnp.arange(3)  # weakly typed float32
    assert w.weak_type
    half = np.ones(3, np.float16)
    prod = srcjax.jit(lambda u, h: u * h)(w, half)
    assert np.asarray(prod).dtype == np.float16
    np.testing.assert_array_equal(np.asarray(prod), (np.arange(3) * 2.5).astype(np.float16))
    g = srcjax.jit(lambda t: t.a * 2)
    for leaf in (a, jnp.asarray(a)):
        out = g(_Tagged(leaf, ["x"]))
        assert type(out) is srcjax.Array
        np.testing.assert_array_equal(np.asarray(out), a * 2)


def test_trees_of_a_known_structure_are_returned_as_leaves_and_built_once():
    # the step's model and optimizer state come back as leaf lists: no treedef
    # computed per call, no instance built in the code and again at the boundary
    # (optimize/flat_results.py); the results are as eager, with the aux data
    jitted = srcjax.jit(adam_step)
    args = inputs((5, 7, 6, 3))
    text = srcjax.source(jitted, *args)
    assert "leaves: jit's boundary builds" in text
    assert "ad.tree_def" not in text and "ad.unflatten_upto" not in text
    got = run_steps(jitted, args)
    with srcjax.disable_jit():
        want = run_steps(adam_step, args)
    assert_trees_close(got, want)
    model, (m, v, t), _ = got
    for tree in (model, m, v):
        assert type(tree) is MLP and tree.act == "tanh" and type(tree.layers) is list
        assert all(type(leaf) is srcjax.Array for leaf in tu.tree_leaves(tree))
    assert type(t) is srcjax.Array
    sin = make_model((5, 7, 3), act="sin")  # other aux data: another treedef
    out = jitted(sin, (tu.tree_map(np.zeros_like, sin),) * 2 + (np.float32(0),), *args[2:])
    assert out[0].act == "sin" and out[1][0].act == "sin"


def test_a_returned_argument_tree_is_still_a_copy():
    # a leaf list of the argument itself returned (tree_map of the identity):
    # the boundary copies what aliases the inputs, as before
    model = make_model((3, 4, 2))
    f = srcjax.jit(lambda m: (tu.tree_map(lambda a: a, m), m.layers[0].bias.sum()))
    out, _ = f(model)
    assert type(out) is MLP
    for leaf, given in zip(tu.tree_leaves(out), tu.tree_leaves(model)):
        np.testing.assert_array_equal(np.asarray(leaf), given)
        assert not np.shares_memory(np.asarray(leaf), given)
