"""Differentiating with respect to instances of registered pytree classes whose
attributes are read inside the transformed function (the Equinox/Flax pattern).

Oracles: the same computation on a dict of parameters (which srcjax has long
handled) and float64 central differences.
"""

import dataclasses
import typing

import numpy as np
import pytest
from helpers import assert_close, fd_grad

import srcjax
import srcjax.numpy as jnp
from srcjax import tree_util as tu


@tu.register_pytree_node_class
class Linear:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def tree_flatten(self):
        return (self.w, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    def __call__(self, x):
        return jnp.tanh(x @ self.w + self.b)

    def apply(self, x):
        return jnp.tanh(x @ self.w + self.b)


@tu.register_pytree_node_class
class MLP:
    """A model holding a list of layers, plus static aux data (a scale)."""

    def __init__(self, layers, scale=1.0):
        self.layers, self.scale = layers, scale

    def tree_flatten(self):
        return (self.layers,), self.scale

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0], aux)


@tu.register_pytree_node_class
class Transposed:
    """Stores w transposed: the child tree_flatten returns is computed."""

    def __init__(self, w):
        self.w = w

    def tree_flatten(self):
        return (self.w.T,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0].T)


@tu.register_pytree_node_class
class Reordered:
    """Children in another order than __init__'s, and a property over a child."""

    def __init__(self, w, b):
        self._w, self.b = w, b

    @property
    def w(self):
        return self._w

    def tree_flatten(self):
        return (self.b, self._w), "aux"

    @classmethod
    def tree_unflatten(cls, aux, children):
        b, w = children
        return cls(w, b)


@tu.register_dataclass
@dataclasses.dataclass
class Affine:
    a: np.ndarray
    c: np.ndarray
    power: int = dataclasses.field(default=2, metadata={"static": True})


def loss(m, x):
    return jnp.sum(jnp.tanh(x @ m.w + m.b) ** 2)


def loss_dict(p, x):
    return jnp.sum(jnp.tanh(x @ p["w"] + p["b"]) ** 2)


def loss_aux(m, x):
    h = jnp.tanh(x @ m.w + m.b)
    return jnp.sum(h**2), jnp.mean(h)


def loss_aux_dict(p, x):
    h = jnp.tanh(x @ p["w"] + p["b"])
    return jnp.sum(h**2), jnp.mean(h)


def predict(m, x):
    return jnp.tanh(x @ m.w + m.b)


def predict_dict(p, x):
    return jnp.tanh(x @ p["w"] + p["b"])


def mlp_loss(m, x):
    h = x
    for layer in m.layers:
        h = jnp.tanh(h @ layer.w + layer.b)
    return m.scale * jnp.sum(h**2)


def mlp_loss_dict(ps, x, scale):
    h = x
    for p in ps:
        h = jnp.tanh(h @ p["w"] + p["b"])
    return scale * jnp.sum(h**2)


def reordered_loss(m, x):
    return jnp.sum(jnp.sin(x @ m.w + m.b))


def affine_loss(m, x):
    return jnp.sum((m.a * x + m.c) ** m.power)


def transposed_loss(m, x):
    return jnp.sum(x @ m.w)


def _data(seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(3, 2)).astype(dtype)
    b = rng.normal(size=(2,)).astype(dtype)
    x = rng.normal(size=(4, 3)).astype(dtype)
    return w, b, x


@pytest.fixture
def x64():
    srcjax.config.update("jax_enable_x64", True)
    yield
    srcjax.config.update("jax_enable_x64", False)


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def _fd(f, m, eps=1e-6):
    """Central differences of scalar ``f`` with respect to every leaf of ``m``."""
    leaves, tdef = tu.tree_flatten(m)
    out = []
    for i, leaf in enumerate(leaves):
        g = np.zeros_like(leaf)
        for j in np.ndindex(leaf.shape):
            hi = [v.copy() for v in leaves]
            lo = [v.copy() for v in leaves]
            hi[i][j] += eps
            lo[i][j] -= eps
            g[j] = (f(tu.tree_unflatten(tdef, hi)) - f(tu.tree_unflatten(tdef, lo))) / (2 * eps)
        out.append(g)
    return tu.tree_unflatten(tdef, out)


# -- grad and friends -----------------------------------------------------------


def test_grad_is_an_instance_of_the_class(x64):
    w, b, x = _data()
    g = srcjax.grad(loss)(Linear(w, b), x)
    ref = srcjax.grad(loss_dict)({"w": w, "b": b}, x)
    assert type(g) is Linear
    _close(g.w, ref["w"])
    _close(g.b, ref["b"])
    fd = _fd(lambda m: float(loss(m, x)), Linear(w, b))
    _close(g.w, fd.w, 1e-6)
    _close(g.b, fd.b, 1e-6)


def test_grad_float32_dtypes():
    w, b, x = _data(dtype=np.float32)
    g = srcjax.grad(loss)(Linear(w, b), x)
    ref = srcjax.grad(loss_dict)({"w": w, "b": b}, x)
    assert g.w.dtype == np.float32 and g.b.dtype == np.float32
    np.testing.assert_allclose(g.w, ref["w"], rtol=1e-5)


def test_value_and_grad_and_has_aux(x64):
    w, b, x = _data(1)
    m, p = Linear(w, b), {"w": w, "b": b}
    v, g = srcjax.value_and_grad(loss)(m, x)
    vr, gr = srcjax.value_and_grad(loss_dict)(p, x)
    _close(v, vr)
    _close(g.w, gr["w"])
    (v, aux), g = srcjax.value_and_grad(loss_aux, has_aux=True)(m, x)
    (vr, auxr), gr = srcjax.value_and_grad(loss_aux_dict, has_aux=True)(p, x)
    _close(aux, auxr)
    _close(g.b, gr["b"])
    g, aux = srcjax.grad(loss_aux, has_aux=True)(m, x)
    _close(g.w, gr["w"])


def test_grad_with_respect_to_both_arguments(x64):
    w, b, x = _data(2)
    gm, gx = srcjax.grad(loss, argnums=(0, 1))(Linear(w, b), x)
    gp, gxr = srcjax.grad(loss_dict, argnums=(0, 1))({"w": w, "b": b}, x)
    _close(gm.w, gp["w"])
    _close(gx, gxr)


def test_an_attribute_read_twice_accumulates(x64):
    def twice(m, x):
        return jnp.sum(x @ m.w) + jnp.sum(m.w**2) + jnp.sum(m.w * m.b[0])

    w, b, x = _data(3)
    g = srcjax.grad(twice)(Linear(w, b), x)
    fd = _fd(lambda m: float(twice(m, x)), Linear(w, b))
    _close(g.w, fd.w, 1e-6)
    _close(g.b, fd.b, 1e-6)


def test_untouched_children_are_zeros(x64):
    def only_w(m, x):
        return jnp.sum(x @ m.w)

    w, b, x = _data()
    g = srcjax.grad(only_w)(Linear(w, b), x)
    assert type(g) is Linear
    _close(g.b, np.zeros(2))
    assert g.b.dtype == np.float64


def test_jit_of_grad(x64):
    w, b, x = _data(4)
    g = srcjax.jit(srcjax.grad(loss))(Linear(w, b), x)
    ref = srcjax.grad(loss_dict)({"w": w, "b": b}, x)
    assert type(g) is Linear
    _close(g.w, ref["w"])
    _close(srcjax.jit(loss)(Linear(w, b), x), loss_dict({"w": w, "b": b}, x))


def test_grad_of_jit(x64):
    w, b, x = _data(4)
    g = srcjax.grad(srcjax.jit(loss))(Linear(w, b), x)
    ref = srcjax.grad(loss_dict)({"w": w, "b": b}, x)
    _close(g.b, ref["b"])


def test_vmap_of_grad_per_example_with_the_model_unbatched(x64):
    w, b, x = _data(5)
    g = srcjax.vmap(srcjax.grad(loss), in_axes=(None, 0))(Linear(w, b), x[:, None, :])
    assert type(g) is Linear
    assert g.w.shape == (4, 3, 2) and g.b.shape == (4, 2)
    for i in range(4):
        ref = srcjax.grad(loss_dict)({"w": w, "b": b}, x[i : i + 1])
        _close(g.w[i], ref["w"])
        _close(g.b[i], ref["b"])


def test_vmap_over_a_batch_of_models(x64):
    rng = np.random.default_rng(6)
    ws, bs = rng.normal(size=(5, 3, 2)), rng.normal(size=(5, 2))
    x = rng.normal(size=(4, 3))
    out = srcjax.vmap(loss, in_axes=(0, None))(Linear(ws, bs), x)
    _close(out, [loss_dict({"w": ws[i], "b": bs[i]}, x) for i in range(5)])
    g = srcjax.vmap(srcjax.grad(loss), in_axes=(0, None))(Linear(ws, bs), x)
    assert type(g) is Linear and g.w.shape == (5, 3, 2)
    for i in range(5):
        ref = srcjax.grad(loss_dict)({"w": ws[i], "b": bs[i]}, x)
        _close(g.w[i], ref["w"])
        _close(g.b[i], ref["b"])


def test_jvp_with_a_tangent_object(x64):
    w, b, x = _data(7)
    rng = np.random.default_rng(70)
    tw, tb = rng.normal(size=w.shape), rng.normal(size=b.shape)
    y, t = srcjax.jvp(loss, (Linear(w, b), x), (Linear(tw, tb), np.zeros_like(x)))
    yr, tr = srcjax.jvp(loss_dict, ({"w": w, "b": b}, x), ({"w": tw, "b": tb}, np.zeros_like(x)))
    _close(y, yr)
    _close(t, tr)


def test_vjp(x64):
    w, b, x = _data(8)
    y, f_vjp = srcjax.vjp(predict, Linear(w, b), x)
    ct = np.ones_like(y)
    gm, gx = f_vjp(ct)
    yr, fr = srcjax.vjp(predict_dict, {"w": w, "b": b}, x)
    gp, gxr = fr(ct)
    assert type(gm) is Linear
    _close(gm.w, gp["w"])
    _close(gx, gxr)


def test_jacrev_and_jacfwd(x64):
    w, b, x = _data(9)
    p = {"w": w, "b": b}
    ref = srcjax.jacrev(predict_dict)(p, x)
    for jac in (srcjax.jacrev, srcjax.jacfwd):
        J = jac(predict)(Linear(w, b), x)
        assert type(J) is Linear
        assert J.w.shape == (4, 2, 3, 2)
        _close(J.w, ref["w"])
        _close(J.b, ref["b"])


def test_hessian_of_a_small_model(x64):
    w, b, x = _data(10)
    H = srcjax.hessian(loss)(Linear(w, b), x)
    Hd = srcjax.hessian(loss_dict)({"w": w, "b": b}, x)
    assert type(H) is Linear and type(H.w) is Linear
    _close(H.w.w, Hd["w"]["w"])
    _close(H.w.b, Hd["w"]["b"])
    _close(H.b.w, Hd["b"]["w"])
    _close(H.b.b, Hd["b"]["b"])


def test_grad_of_grad(x64):
    def inner(m, x):
        g = srcjax.grad(loss)(m, x)
        return jnp.sum(g.w**2) + jnp.sum(g.b)

    def inner_dict(p, x):
        g = srcjax.grad(loss_dict)(p, x)
        return jnp.sum(g["w"] ** 2) + jnp.sum(g["b"])

    w, b, x = _data(11)
    g = srcjax.grad(inner)(Linear(w, b), x)
    ref = srcjax.grad(inner_dict)({"w": w, "b": b}, x)
    _close(g.w, ref["w"], 1e-9)
    _close(g.b, ref["b"], 1e-9)


# -- nested classes, aux data, reordered children --------------------------------------


def _mlp(seed=12):
    rng = np.random.default_rng(seed)
    sizes = [3, 4, 2]
    layers = [
        Linear(rng.normal(size=(m, n)), rng.normal(size=(n,))) for m, n in zip(sizes, sizes[1:])
    ]
    return MLP(layers, 0.5), rng.normal(size=(5, 3))


def test_nested_classes_list_of_layers(x64):
    m, x = _mlp()
    g = srcjax.grad(mlp_loss)(m, x)
    assert type(g) is MLP and g.scale == 0.5
    assert isinstance(g.layers, list) and all(type(layer) is Linear for layer in g.layers)
    ps = [{"w": layer.w, "b": layer.b} for layer in m.layers]
    ref = srcjax.grad(mlp_loss_dict)(ps, x, 0.5)
    for gl, rl in zip(g.layers, ref):
        _close(gl.w, rl["w"])
        _close(gl.b, rl["b"])
    gj = srcjax.jit(srcjax.grad(mlp_loss))(m, x)
    _close(gj.layers[1].w, ref[1]["w"])


def test_nested_classes_hessian_matches_finite_differences_of_grad(x64):
    m, x = _mlp(13)
    H = srcjax.hessian(mlp_loss)(m, x)
    # one column: d(grad)/d(layers[0].b[1]) by central differences of grad
    eps = 1e-6
    hi, lo = _mlp(13)[0], _mlp(13)[0]
    hi.layers[0].b[1] += eps
    lo.layers[0].b[1] -= eps
    ghi, glo = srcjax.grad(mlp_loss)(hi, x), srcjax.grad(mlp_loss)(lo, x)
    col = (ghi.layers[1].w - glo.layers[1].w) / (2 * eps)
    _close(H.layers[1].w.layers[0].b[..., 1], col, 1e-5)


def test_property_over_a_child_and_reordered_children(x64):
    w, b, x = _data(14)
    g = srcjax.grad(reordered_loss)(Reordered(w, b), x)
    assert type(g) is Reordered
    fd = _fd(lambda m: float(reordered_loss(m, x)), Reordered(w, b))
    _close(g.w, fd.w, 1e-6)
    _close(g.b, fd.b, 1e-6)


def test_aliased_children(x64):
    # w is b: the probe through tree_unflatten tells the children apart
    rng = np.random.default_rng(15)
    v = rng.normal(size=(2,))

    def f(m):
        return jnp.sum(jnp.sin(m.w)) + 3.0 * jnp.sum(m.b)

    g = srcjax.grad(f)(Linear(v, v))
    _close(g.w, np.cos(v))
    _close(g.b, np.full(2, 3.0))


def test_registered_dataclass_with_a_static_field(x64):
    rng = np.random.default_rng(16)
    m = Affine(rng.normal(size=3), rng.normal(size=3), power=3)
    x = rng.normal(size=3)
    g = srcjax.grad(affine_loss)(m, x)
    assert type(g) is Affine and g.power == 3
    _close(g.a, 3 * (m.a * x + m.c) ** 2 * x)
    _close(g.c, 3 * (m.a * x + m.c) ** 2)
    # the static int exponent is a constant for forward mode too (no 0 * log(<0) = nan)
    _close(srcjax.jacfwd(affine_loss)(m, x).a, g.a)
    H = srcjax.hessian(affine_loss)(m, x)
    _close(H.a.a, np.diag(6 * (m.a * x + m.c) * x**2))
    assert "power_bar" not in srcjax.source(srcjax.grad(affine_loss), m, x)


def test_attribute_that_is_no_child_is_a_clear_error(x64):
    rng = np.random.default_rng(17)
    m = Transposed(rng.normal(size=(3, 2)))
    x = rng.normal(size=(4, 3))
    with pytest.raises(NotImplementedError, match=r"attribute \.w of a Transposed"):
        srcjax.grad(transposed_loss)(m, x)
    # without differentiating it works
    _close(srcjax.jit(transposed_loss)(m, x), np.sum(x @ m.w))


# -- method calls on the model inside transformed code ------------------------------------


@tu.register_pytree_node_class
class Net:
    """Layers called as modules (``layer(h)``), a helper method, a stored submodule."""

    def __init__(self, layers, head):
        self.layers, self.head = layers, head

    def tree_flatten(self):
        return (self.layers, self.head), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    def features(self, x):
        h = x
        for layer in self.layers:
            h = layer(h)
        return h

    def __call__(self, x):
        return self.head.apply(self.features(x))

    @staticmethod
    def penalty(v):
        return jnp.sum(v**2)


def call_loss(m, x):
    return jnp.sum(m(x) ** 2)


def apply_loss(m, x):
    return jnp.sum(m.apply(x) ** 2)


def net_loss(net, x):
    return jnp.sum(net(x) ** 2) + 0.1 * net.penalty(net.head.w)


def net_loss_dict(ps, head, x):
    h = x
    for p in ps:
        h = jnp.tanh(h @ p["w"] + p["b"])
    out = jnp.tanh(h @ head["w"] + head["b"])
    return jnp.sum(out**2) + 0.1 * jnp.sum(head["w"] ** 2)


def _net(seed=20):
    rng = np.random.default_rng(seed)
    sizes = [3, 4, 4]
    layers = [
        Linear(rng.normal(size=(m, n)), rng.normal(size=(n,))) for m, n in zip(sizes, sizes[1:])
    ]
    head = Linear(rng.normal(size=(4, 2)), rng.normal(size=(2,)))
    return Net(layers, head), rng.normal(size=(5, 3))


def _net_ref(net, x, transform=None):
    ps = [{"w": layer.w, "b": layer.b} for layer in net.layers]
    head = {"w": net.head.w, "b": net.head.b}
    return srcjax.grad(net_loss_dict, argnums=(0, 1))(ps, head, x)


def test_call_and_method_of_the_model_are_inlined(x64):
    w, b, x = _data(21)
    ref = srcjax.grad(loss_dict)({"w": w, "b": b}, x)
    for f in (call_loss, apply_loss):
        g = srcjax.grad(f)(Linear(w, b), x)
        assert type(g) is Linear
        _close(g.w, ref["w"])
        _close(g.b, ref["b"])
    src = srcjax.source(srcjax.grad(call_loss), Linear(w, b), x)
    assert "self.w" in src and " m(x)" not in src


def test_network_of_modules(x64):
    net, x = _net()
    g = srcjax.grad(net_loss)(net, x)
    ps, head = _net_ref(net, x)
    assert type(g) is Net and type(g.head) is Linear
    for gl, rl in zip(g.layers, ps):
        _close(gl.w, rl["w"])
        _close(gl.b, rl["b"])
    _close(g.head.w, head["w"])
    _close(g.head.b, head["b"])
    gj = srcjax.jit(srcjax.grad(net_loss))(net, x)
    _close(gj.layers[0].w, ps[0]["w"])
    _close(
        srcjax.jit(net_loss)(net, x),
        net_loss_dict(
            [{"w": la.w, "b": la.b} for la in net.layers], {"w": net.head.w, "b": net.head.b}, x
        ),
    )


def test_network_of_modules_vmap_of_grad_per_example(x64):
    net, x = _net(22)
    g = srcjax.vmap(srcjax.grad(net_loss), in_axes=(None, 0))(net, x[:, None, :])
    assert type(g) is Net and g.head.w.shape == (5, 4, 2)
    for i in range(5):
        ps, head = _net_ref(net, x[i : i + 1])
        _close(g.layers[1].b[i], ps[1]["b"])
        _close(g.head.w[i], head["w"])


def test_network_of_modules_hessian_of_a_small_net(x64):
    net, x = _net(23)
    H = srcjax.hessian(net_loss)(net, x)
    eps = 1e-6
    hi, lo = _net(23)[0], _net(23)[0]
    hi.head.b[0] += eps
    lo.head.b[0] -= eps
    col = (srcjax.grad(net_loss)(hi, x).layers[0].w - srcjax.grad(net_loss)(lo, x).layers[0].w) / (
        2 * eps
    )
    _close(H.layers[0].w.head.b[..., 0], col, 1e-5)


def test_vmap_over_a_batch_of_nested_models(x64):
    m, x = _mlp(24)
    rng = np.random.default_rng(24)
    batch = MLP(
        [
            Linear(rng.normal(size=(3,) + la.w.shape), rng.normal(size=(3,) + la.b.shape))
            for la in m.layers
        ],
        0.5,
    )
    out = srcjax.vmap(mlp_loss, in_axes=(0, None))(batch, x)
    for i in range(3):
        one = MLP([Linear(la.w[i], la.b[i]) for la in batch.layers], 0.5)
        _close(out[i], mlp_loss(one, x))
    g = srcjax.vmap(srcjax.grad(mlp_loss), in_axes=(0, None))(batch, x)
    for i in range(3):
        one = MLP([Linear(la.w[i], la.b[i]) for la in batch.layers], 0.5)
        ref = srcjax.grad(mlp_loss)(one, x)
        _close(g.layers[1].w[i], ref.layers[1].w)


def test_vmap_of_a_model_call(x64):
    w, b, x = _data(25)
    out = srcjax.vmap(lambda m, xi: m(xi), in_axes=(None, 0))(Linear(w, b), x)
    _close(out, np.tanh(x @ w + b))


def test_method_on_a_value_of_unknown_class_is_still_a_clear_error(x64):
    w, b, x = _data(26)

    def f(ms, x):
        return jnp.sum(ms[0](x))  # ms is a list: its items are typed, so this works

    g = srcjax.grad(f)([Linear(w, b)], x)
    assert type(g[0]) is Linear

    def h(m, x, fn):
        return jnp.sum(fn(m.w) * x[0, 0])

    # a function argument is part of the specialization now (user J: act=jnp.tanh
    # defaults), so a lambda works; a callable object of an unknown class does not
    g = srcjax.grad(h)(Linear(w, b), x, lambda v: v)
    np.testing.assert_allclose(g.w, np.full_like(w, x[0, 0]))

    class Scale:  # unhashable (it defines __eq__): no part of a key, a run-time value
        def __call__(self, v):
            return v * 2.0

        def __eq__(self, other):
            return isinstance(other, Scale)

    with pytest.raises(Exception, match="no derivative rule"):
        srcjax.grad(h)(Linear(w, b), x, Scale())


@tu.register_pytree_node_class
class Converting:
    """__init__ converts its children: a None child would become array(nan)."""

    def __init__(self, w, b):
        self.w = np.asarray(w, dtype=np.float64)
        self.b = np.asarray(b, dtype=np.float64)

    def tree_flatten(self):
        return (self.w, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def test_class_whose_init_converts_its_children(x64):
    w, b, x = _data(27)
    g = srcjax.grad(loss)(Converting(w, b), x)
    ref = srcjax.grad(loss_dict)({"w": w, "b": b}, x)
    assert type(g) is Converting
    _close(g.w, ref["w"])
    _close(g.b, ref["b"])
    g = srcjax.grad(lambda m, x: jnp.sum(x @ m.w))(Converting(w, b), x)
    _close(g.b, np.zeros(2))


# -- a function in aux data called as self.act(...) (the Equinox MLP pattern) -----


def _my_act(z):
    return jnp.sin(z) * z


@tu.register_pytree_node_class
class ActDense:
    """The activation function is static aux data, called as ``self.act(y)``."""

    def __init__(self, w, act):
        self.w, self.act = w, act

    def tree_flatten(self):
        return (self.w,), self.act

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0], aux)

    def __call__(self, x):
        return self.act(x @ self.w)


def act_loss(m, x):
    return jnp.sum(m(x) ** 2)


_ACTS = [
    (jnp.tanh, lambda z: 1 - np.tanh(z) ** 2, np.tanh),
    (srcjax.nn.relu, lambda z: (z > 0).astype(z.dtype), lambda z: np.maximum(z, 0)),
    (_my_act, lambda z: np.cos(z) * z + np.sin(z), lambda z: np.sin(z) * z),
]


@pytest.mark.parametrize("act,dact,act_np", _ACTS)
def test_static_function_attribute_called_as_a_method(x64, act, dact, act_np):
    w, _, x = _data(30)
    z = x @ w
    y = act_np(z)
    gw = x.T @ (2 * y * dact(z))
    gx = (2 * y * dact(z)) @ w.T
    m = ActDense(w, act)
    g = srcjax.grad(act_loss)(m, x)
    assert type(g) is ActDense and g.act is act
    _close(g.w, gw)
    _close(srcjax.grad(act_loss, argnums=1)(m, x), gx)
    _close(srcjax.jit(srcjax.grad(act_loss))(m, x).w, gw)
    _close(srcjax.jacrev(act_loss)(m, x).w, gw)
    _close(srcjax.jacfwd(act_loss, argnums=1)(m, x), gx)
    _, t = srcjax.jvp(act_loss, (m, x), (ActDense(np.ones_like(w), act), np.zeros_like(x)))
    _close(t, gw.sum())
    _, vjp = srcjax.vjp(act_loss, m, x)
    _close(vjp(1.0)[0].w, gw)
    h = srcjax.hessian(act_loss, argnums=1)(m, x[:1])
    f = lambda xx: act_loss(m, xx)  # noqa: E731
    eps = 1e-6
    e = np.zeros_like(x[:1])
    e[0, 0] = eps
    fd = (srcjax.grad(f)(x[:1] + e) - srcjax.grad(f)(x[:1] - e)) / (2 * eps)
    _close(h[:, :, 0, 0], fd, tol=1e-5)


def test_a_different_static_function_respecializes(x64):
    w, _, x = _data(31)
    grad = srcjax.grad(act_loss)
    g1 = grad(ActDense(w, jnp.tanh), x)
    g2 = grad(ActDense(w, _my_act), x)
    z = x @ w
    _close(g1.w, x.T @ (2 * np.tanh(z) * (1 - np.tanh(z) ** 2)))
    y = np.sin(z) * z
    _close(g2.w, x.T @ (2 * y * (np.cos(z) * z + np.sin(z))))


# -- a closed-over (constant) model: derivatives with respect to the input -------


def _closure_ref(m, x):
    """The same MLP written with dicts and plain functions."""
    ps = [{"w": layer.w, "b": layer.b} for layer in m.layers]
    return srcjax.grad(lambda xx: mlp_loss_dict(ps, xx, m.scale))(x)


@tu.register_pytree_node_class
class CallMLP(MLP):
    def __call__(self, x):
        h = x
        for layer in self.layers:
            h = layer(h)
        return h


def _call_mlp(seed):
    m, x = _mlp(seed)
    return CallMLP(m.layers, m.scale), x


_GLOBAL_MLP = _call_mlp(40)[0]
_GLOBAL_LAYERS = _GLOBAL_MLP.layers


def test_closed_over_model_with_a_list_of_layers(x64):
    m, x = _call_mlp(41)
    ref = _closure_ref(m, x)
    # m(xx), with m a closure cell and a global
    g = srcjax.grad(lambda xx: m.scale * jnp.sum(m(xx) ** 2))(x)
    _close(g, ref)
    gg = srcjax.grad(lambda xx: _GLOBAL_MLP.scale * jnp.sum(_GLOBAL_MLP(xx) ** 2))(x)
    _close(gg, _closure_ref(_GLOBAL_MLP, x))
    _close(srcjax.jit(srcjax.grad(lambda xx: m.scale * jnp.sum(m(xx) ** 2)))(x), ref)
    per = srcjax.vmap(srcjax.grad(lambda xi: m.scale * jnp.sum(m(xi) ** 2)))(x)
    _close(per, ref)
    _close(srcjax.jacfwd(lambda xx: m.scale * jnp.sum(m(xx) ** 2))(x), ref)


def test_closed_over_layer_item_and_loop_over_closed_over_layers(x64):
    m, x = _call_mlp(42)
    layers = m.layers
    w0, b0 = layers[0].w, layers[0].b
    t = np.tanh(x @ w0 + b0)
    ref0 = (2 * t * (1 - t**2)) @ w0.T
    _close(srcjax.grad(lambda xx: jnp.sum(m.layers[0](xx) ** 2))(x), ref0)
    _close(srcjax.grad(lambda xx: jnp.sum(_GLOBAL_MLP.layers[1](xx @ w0) ** 2))(x).shape, x.shape)

    def f(xx):
        h = xx
        for layer in layers:
            h = layer(h)
        return m.scale * jnp.sum(h**2)

    _close(srcjax.grad(f)(x), _closure_ref(m, x))

    def g(xx):
        h = xx
        for layer in _GLOBAL_LAYERS:
            h = layer(h)
        return _GLOBAL_MLP.scale * jnp.sum(h**2)

    _close(srcjax.grad(g)(x), _closure_ref(_GLOBAL_MLP, x))


def test_closed_over_model_with_a_static_activation(x64):
    w, _, x = _data(43)
    m = ActDense(w, _my_act)
    z = x @ w
    y = np.sin(z) * z
    gx = (2 * y * (np.cos(z) * z + np.sin(z))) @ w.T
    _close(srcjax.grad(lambda xx: act_loss(m, xx))(x), gx)
    _close(srcjax.grad(lambda xx: jnp.sum(m(xx) ** 2))(x), gx)


@tu.register_pytree_node_class
class _Affine:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def tree_flatten(self):
        return (self.w, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    def __call__(self, x):
        return jnp.tanh(x @ self.w + self.b)


@tu.register_pytree_node_class
class _Scaled:
    def __init__(self, w):
        self.w = 2.0 * w  # a field computed from the argument

    def tree_flatten(self):
        return (self.w,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = cls.__new__(cls)
        obj.w = children[0]
        return obj


_X3 = np.array([0.0, 1.0, 2.0])


def _loss_building_a_model(w, b):
    return jnp.sum(_Affine(w, b)(_X3) ** 2)


def _loss_building_a_model_by_keyword(w, b):
    m = _Affine(b=b, w=w)
    return jnp.sum(m(_X3) ** 2)


def test_constructing_a_registered_class_inside_a_differentiated_function(x64):
    """grad(lambda w, b: sum(Linear(w, b)(x))) raised "no derivative rule for
    `Linear(w, b)`" (JAX differentiates through the constructor). Construction is
    a primitive whose derivative maps the instance's children back to the
    arguments they are. Oracle: central differences; a field computed from an
    argument is a clear error, never a silent zero."""
    rng = np.random.default_rng(0)
    w, b = rng.normal(size=(3, 2)) * 0.3, rng.normal(size=2) * 0.3
    for f in (_loss_building_a_model, _loss_building_a_model_by_keyword):
        gw, gb = srcjax.grad(f, argnums=(0, 1))(w, b)
        assert_close(gw, fd_grad(lambda v, f=f: f(v, b), w), rtol=1e-6, atol=1e-8)
        assert_close(gb, fd_grad(lambda v, f=f: f(w, v), b), rtol=1e-6, atol=1e-8)
        assert_close(srcjax.jit(srcjax.grad(f))(w, b), gw)
        assert_close(srcjax.jacfwd(f)(w, b), gw)
        hb = srcjax.hessian(f, argnums=1)(w, b)
        gfun = srcjax.grad(f, argnums=1)
        fd = np.stack([(gfun(w, b + 1e-6 * e) - gfun(w, b - 1e-6 * e)) / 2e-6 for e in np.eye(2)])
        assert_close(hb, fd, rtol=1e-5, atol=1e-7)
    ws = np.stack([w, w * 0.5])
    want = np.stack([srcjax.grad(_loss_building_a_model)(v, b) for v in ws])
    assert_close(srcjax.vmap(srcjax.grad(_loss_building_a_model), in_axes=(0, None))(ws, b), want)
    with pytest.raises(TypeError, match="not one of the instance's pytree children"):
        srcjax.grad(lambda v: jnp.sum(_Scaled(v).w))(w)


def test_constructing_with_the_same_array_twice(x64):
    """_Affine(w, w) and _Affine(w, stop_gradient(w)): each argument owns its own
    child (by position among equal values). Oracle: analytic gradients."""
    w = np.array([[0.5]])
    x = np.array([2.0])

    def both(v):
        m = _Affine(v, v[0])
        return jnp.sum(m.w * x) + jnp.sum(m.b)

    def stopped(v):
        m = _Affine(v, srcjax.lax.stop_gradient(v))
        return jnp.sum(m.w * 3.0) + jnp.sum(m.b * 5.0)

    assert_close(srcjax.grad(both)(w), [[3.0]])
    assert_close(srcjax.grad(stopped)(w), [[3.0]])


@tu.register_pytree_node_class
class _SliceMLP:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers[:-1]:
            x = jnp.tanh(layer(x))
        return self.layers[-1](x)

    def tree_flatten(self):
        return (self.layers,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def test_loop_over_a_slice_of_layers(x64):
    """`for layer in self.layers[:-1]` under grad raised "no derivative rule for
    `layer`": a slice of a list of modules lost its type (fresh-user run 2).
    Oracle: central differences of each layer's weights."""
    rng = np.random.default_rng(2)
    ws = [rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(3, 1))]
    x = rng.normal(size=(2, 3))

    def loss_of(weights):
        return jnp.sum(_SliceMLP([_Affine(w, np.zeros(w.shape[1])) for w in weights])(x) ** 2)

    def loss(m):
        return jnp.sum(m(x) ** 2)

    model = _SliceMLP([_Affine(w, np.zeros(w.shape[1])) for w in ws])
    g = srcjax.grad(loss)(model)
    for i in range(3):
        fd = fd_grad(lambda w, i=i: loss_of(ws[:i] + [w] + ws[i + 1 :]), ws[i])
        assert_close(g.layers[i].w, fd, rtol=1e-6, atol=1e-8)


@srcjax.tree_util.register_pytree_node_class
class _StepLin:
    def __init__(self, w):
        self.w = w

    def tree_flatten(self):
        return (self.w,), None

    @classmethod
    def tree_unflatten(cls, aux, ch):
        return cls(*ch)

    def __call__(self, x):
        return self.w * x


def _step_loss(m, x):
    return srcjax.numpy.sum(m(x) ** 2)


def _step(m, x):
    return srcjax.grad(_step_loss)(m, x)


def test_vmap_of_a_step_that_calls_grad_on_a_model():
    """User E F12: vmap of a train step that calls grad(loss)(model, x), with
    model(x) in the loss, had 'no derivative rule for m' (the inner grad was
    specialized without the model's class)."""
    m = _StepLin(np.ones(3, np.float32))
    xs = np.stack([np.arange(3.0), np.arange(3.0)]).astype(np.float32)
    got = srcjax.vmap(_step, in_axes=(None, 0))(m, xs)
    np.testing.assert_allclose(got.w, [[0.0, 2.0, 8.0]] * 2)  # d/dw sum((w x)^2) = 2 w x^2


@tu.register_pytree_node_class
class _Lin:
    def __init__(self, w, scale=1.0):
        self.w = w
        self.scale = scale

    def tree_flatten(self):
        return (self.w,), self.scale

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, aux)

    def __call__(self, x):
        return jnp.tanh(x @ self.w) * self.scale


def _lin_loss(model, x):
    return jnp.sum(model(x))


@srcjax.jit
def _lin_step(model, x):
    g = srcjax.grad(_lin_loss)(model, x)
    return tu.tree_map(lambda p, q: p - 0.1 * q, model, g)


def test_jit_of_a_step_calling_grad_of_a_model_method(x64):
    # User C bug 2 (known since session 4): jit(step) with grad(loss)(model, x)
    # inside, loss calling model(x), had 'no derivative rule for model': jit did not
    # pass the registered class's type tree to the code it transforms.
    w = np.arange(6.0).reshape(3, 2) / 10
    x = np.arange(3.0)
    for scale in (1.0, 2.0):  # a static field
        model = _Lin(w, scale)
        got = _lin_step(model, x)
        want = w - 0.1 * fd_grad(lambda v, s=scale: _lin_loss(_Lin(v, s), x), w)
        assert isinstance(got, _Lin) and got.scale == scale
        assert_close(got.w, want, rtol=1e-6)
    # aux data is part of the treedef, which jax.jit keys on: a new scale, a new
    # specialization (as in JAX; before the treedef was in the key it was reused)
    assert _lin_step._cache_size() == 2


@tu.register_pytree_node_class
class _Scale:
    def __init__(self, s):
        self.s = s

    def tree_flatten(self):
        return (self.s,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0])

    def __call__(self, x):
        return x * self.s


@tu.register_pytree_node_class
class _Seq:
    def __init__(self, layers):
        self.layers = layers

    def tree_flatten(self):
        return (self.layers,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0])

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_loop_over_layers_of_different_classes(x64):
    """User J: a Sequential whose layers are of different classes (built from a
    config) said 'no derivative rule for layer'; the loop is unrolled over the
    items, each inlining its own class. Oracle: the same model written out."""
    w, b, x = _data(31)
    model = _Seq([Linear(w, b), _Scale(np.float64(1.5)), Linear(w.T @ w, b)])

    def loss(m, x):
        return jnp.sum(m(x) ** 2)

    def by_hand(lin1, s, lin2, x):
        return jnp.sum(lin2(lin1(x) * s) ** 2)

    g = srcjax.grad(loss)(model, x)
    g1, gs, g2 = srcjax.grad(by_hand, argnums=(0, 1, 2))(model.layers[0], 1.5, model.layers[2], x)
    assert type(g.layers[1]) is _Scale
    np.testing.assert_allclose(g.layers[0].w, g1.w, rtol=1e-6)
    np.testing.assert_allclose(g.layers[1].s, gs, rtol=1e-6)
    np.testing.assert_allclose(g.layers[2].b, g2.b, rtol=1e-6)
    np.testing.assert_allclose(srcjax.jit(loss)(model, x), loss(model, x), rtol=1e-6)


@tu.register_pytree_node_class
class _SeqSpecs:
    def __init__(self, layers, specs):
        self.layers, self.specs = layers, specs

    def tree_flatten(self):
        return (self.layers,), self.specs

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0], aux)

    def __call__(self, x):
        skip = x
        for layer, spec in zip(self.layers, self.specs):
            if spec == "residual":
                x = x + 0.5 * skip
                skip = x
                continue
            x = layer(x)
        return x


def test_zipped_loop_over_mixed_layers_with_continue(x64):
    """User J p5: zip(self.layers, self.specs) with `continue` for residual specs over
    layers of different classes. Oracle: the same computation written out."""
    rng = np.random.default_rng(32)
    w = rng.normal(size=(3, 3))
    b = rng.normal(size=(3,))
    x = rng.normal(size=(4, 3))
    model = _SeqSpecs([Linear(w, b), _Scale(np.float64(1.5)), Linear(w, b)], ("d", "s", "residual"))

    def loss(m, x):
        return jnp.sum(m(x) ** 2)

    def by_hand(l1, s, x):
        return jnp.sum((l1(x) * s + 0.5 * x) ** 2)

    g = srcjax.grad(loss)(model, x)
    g1, gs = srcjax.grad(by_hand, argnums=(0, 1))(model.layers[0], 1.5, x)
    np.testing.assert_allclose(g.layers[0].w, g1.w, rtol=1e-6)
    np.testing.assert_allclose(g.layers[1].s, gs, rtol=1e-6)
    assert not np.any(g.layers[2].w)  # the residual pass skips its layer
    np.testing.assert_allclose(srcjax.jit(loss)(model, x), loss(model, x), rtol=1e-6)


_ACTS = {"tanh": jnp.tanh, "relu": srcjax.nn.relu, "sin": jnp.sin}


@tu.register_pytree_node_class
class _ActDense:
    """A layer whose activation is named in its aux data (a config string)."""

    def __init__(self, w, act):
        self.w, self.act = w, act

    def tree_flatten(self):
        return (self.w,), self.act

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0], aux)

    def __call__(self, x):
        return _ACTS[self.act](x @ self.w)


@tu.register_pytree_node_class
class _GetattrDense(_ActDense):
    def __call__(self, x):
        return getattr(jnp, self.act)(x @ self.w)


def _layer_data(seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(3, 3)), rng.normal(size=(3, 3)), rng.normal(size=(4, 3))


def _grad_w(loss, layers, x, k):
    """float64 central differences of loss in layers[k].w (the oracle)."""

    def at(w):
        ls = list(layers)
        ls[k] = type(ls[k])(w, ls[k].act)
        return loss(ls, x)

    return fd_grad(at, layers[k].w)


def _seq_loss(layers, x):
    for layer in layers:
        x = layer(x)
    return jnp.sum(x**2)


@pytest.mark.parametrize("cls", [_ActDense, _GetattrDense])
def test_function_table_indexed_by_a_static_attribute(x64, cls):
    """User J p5: ACTS[self.act](x) (and getattr(jnp, self.act)(x)) in layers of a
    list built from a config: the key is aux data, known while transforming.
    Oracle: float64 central differences."""
    w1, w2, x = _layer_data(41)
    layers = [cls(w1, "tanh"), cls(w2, "sin"), cls(w1, "tanh")]
    g = srcjax.grad(_seq_loss)(layers, x)
    assert [layer.act for layer in g] == ["tanh", "sin", "tanh"]
    for k in range(3):
        assert_close(g[k].w, _grad_w(_seq_loss, layers, x, k), rtol=1e-6)
    want = np.sum(np.tanh(np.sin(np.tanh(x @ w1) @ w2) @ w1) ** 2)
    np.testing.assert_allclose(srcjax.jit(_seq_loss)(layers, x), want, rtol=1e-12)
    # another activation is another specialization, not a stale one
    other = [cls(w1, "sin"), cls(w2, "sin"), cls(w1, "tanh")]
    want = np.sum(np.tanh(np.sin(np.sin(x @ w1) @ w2) @ w1) ** 2)
    np.testing.assert_allclose(srcjax.jit(_seq_loss)(other, x), want, rtol=1e-12)


def _enum_loss(layers, x):
    for i, layer in enumerate(layers, start=1):
        x = layer(x) * i
    return jnp.sum(x**2)


def _break_loss(layers, x):
    for i, layer in enumerate(layers):
        if jnp.max(jnp.abs(x)) > 2.5:
            break
        x = layer(x)
    return jnp.sum(x**2)


def _none_loss(layers, x):
    for layer in layers:
        if layer is None:
            continue
        x = layer(x)
    return jnp.sum(x**2)


def test_enumerate_break_and_none_slots_over_mixed_layers(x64):
    """Loops over layers of different classes with enumerate (and start), a
    data-dependent break, and None slots skipped with `continue`.
    Oracle: float64 central differences."""
    w1, w2, x = _layer_data(42)
    layers = [_ActDense(w1, "tanh"), _GetattrDense(w2, "sin"), _ActDense(w1, "relu")]
    g = srcjax.grad(_enum_loss)(layers, x)
    for k in range(3):
        assert_close(g[k].w, _grad_w(_enum_loss, layers, x, k), rtol=1e-6)
    # a break taken after the first layer (on x * 3 below), or never
    for scale, broke in ((3.0, True), (0.2, False)):
        g = srcjax.grad(_break_loss)(layers, x * scale)
        for k in range(3):
            assert_close(g[k].w, _grad_w(_break_loss, layers, x * scale, k), rtol=1e-6)
        assert np.any(g[2].w) != broke
    with_none = [layers[0], None, layers[1], None]
    g = srcjax.grad(_none_loss)(with_none, x)
    assert g[1] is None and g[3] is None
    assert_close(g[0].w, _grad_w(_none_loss, [layers[0], layers[1]], x, 0), rtol=1e-6)
    assert_close(g[2].w, _grad_w(_none_loss, [layers[0], layers[1]], x, 1), rtol=1e-6)
    np.testing.assert_allclose(
        srcjax.jit(_none_loss)(with_none, x), _none_loss([layers[0], layers[1]], x), rtol=1e-12
    )


class _TrainState(typing.NamedTuple):
    model: Linear
    step: float


def test_model_in_a_namedtuple_state_and_vmap_of_a_model(x64):
    """User K r2b/r2: grad(loss)(state.model, x) with the model in a NamedTuple
    train state ('no derivative rule for m'), and vmap(model)(x) (Equinox's idiom,
    refused). Oracle: float64 central differences."""
    w, b, x = _data(51)
    state = _TrainState(Linear(w, b), np.float64(3.0))

    def loss(m, x):
        return jnp.sum(m(x) ** 2)

    def step(s, x):
        return srcjax.grad(loss)(s.model, x).w

    want = fd_grad(lambda v: loss(Linear(v, b), x), w)
    assert_close(step(state, x), want, rtol=1e-6)
    assert_close(srcjax.jit(step)(state, x), want, rtol=1e-6)
    g = srcjax.grad(lambda s, x: loss(s.model, x))(state, x)
    assert_close(g.model.w, want, rtol=1e-6)

    def vloss(m, x):
        return jnp.sum(srcjax.vmap(m)(x) ** 2)

    assert_close(srcjax.grad(vloss)(state.model, x).w, want, rtol=1e-6)
    assert_close(srcjax.jit(vloss)(state.model, x), loss(state.model, x), rtol=1e-12)


def _ck_layer(x, w):
    return jnp.tanh(x * w)


def test_checkpoint_of_a_module_function_inside_a_loss(x64):
    """User K r8: f = jax.checkpoint(layer) inside a loss failed with an error in
    srcjax's own extras.py; lax.scan(jax.checkpoint(body), ...) was refused.
    checkpoint is an identity here. Oracle: float64 central differences."""
    from srcjax import lax

    x = np.arange(1.0, 4.0)

    def loss_a(w, x):
        f = srcjax.checkpoint(_ck_layer)
        return jnp.sum(f(f(x, w), w))

    def loss_b(w, x):
        def body(c, _):
            return jnp.tanh(c * w), None

        return jnp.sum(lax.scan(srcjax.checkpoint(body), x, None, length=4)[0])

    for loss in (loss_a, loss_b):
        want = fd_grad(lambda v, loss=loss: loss(v, x), 0.5)
        assert_close(srcjax.grad(loss)(0.5, x), want, rtol=1e-6)
        assert_close(srcjax.jit(loss)(0.5, x), loss(0.5, x), rtol=1e-12)


@tu.register_pytree_node_class
class _Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __getitem__(self, i):
        return self.a if i == 0 else self.b

    def __mul__(self, s):
        return _Pair(self.a * s, self.b * s)

    def __len__(self):
        return 2

    def tree_flatten(self):
        return (self.a, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def test_operators_and_indexing_of_class_instances_call_their_methods(x64):
    """Helper Q / user L r24: (Pair(x, 2x) * 3.0)[1] under grad hung in np.shape of
    the object (its __len__ and never-failing __getitem__). A registered class's
    own __mul__ and __getitem__ are inlined. Value from jax 0.10.2: 6.0."""

    def g(x):
        return (_Pair(x, x * 2) * 3.0)[1]

    assert float(srcjax.grad(g)(1.0)) == 6.0
    assert float(srcjax.jit(g)(1.5)) == 9.0
    np.testing.assert_allclose(srcjax.vmap(srcjax.grad(g))(np.array([1.0, 2.0])), [6.0, 6.0])


# -- flatten returning a list attribute itself as the children (user 05) --------------
class _ListMLP:
    def __init__(self, layers):
        self.layers = layers


class _TupleMLP:
    def __init__(self, layers, scale):
        self.layers, self.scale = layers, scale


def _flatten_list_mlp(m):
    return m.layers, None  # (JAX takes any iterable of children: the list's items)


tu.register_pytree_node(_ListMLP, _flatten_list_mlp, lambda aux, ch: _ListMLP(list(ch)))
tu.register_pytree_node(
    _TupleMLP, lambda m: (m.layers, m.scale), lambda aux, ch: _TupleMLP(tuple(ch), aux)
)


def _layers_loss(m, x):
    for w in m.layers:
        x = jnp.tanh(x @ w)
    return jnp.sum(x)


def _scaled_layers_loss(m, x):
    for w in m.layers:
        x = jnp.tanh(x @ w)
    return jnp.sum(x) * m.scale


def _user05_layers():
    return [np.ones((2, 3), np.float32) * 0.1, np.ones((3, 1), np.float32) * 0.2]


def test_flatten_returning_the_list_attribute_itself():
    """User 05: register_pytree_node(MLP, lambda m: (m.layers, None), ...) raised a
    NotImplementedError naming MLP.tree_flatten, which the class has not. The
    children are the list's items, as in JAX. Values from jax 0.10.2."""
    m = _ListMLP(_user05_layers())
    x = np.ones((4, 2), np.float32)
    for g in (srcjax.grad(_layers_loss)(m, x), srcjax.jit(srcjax.grad(_layers_loss))(m, x)):
        assert type(g) is _ListMLP and type(g.layers) is list
        np.testing.assert_allclose(g.layers[0], np.full((2, 3), 0.7581519), rtol=1e-6)
        np.testing.assert_allclose(g.layers[1], np.full((3, 1), 0.7785315), rtol=1e-6)
    _, t = srcjax.jvp(lambda m: _layers_loss(m, x), (m,), (m,))
    np.testing.assert_allclose(t, 0.92201006, rtol=1e-6)  # jax 0.10.2
    xs = np.stack([x, 2 * x, 3 * x])
    gv = srcjax.vmap(srcjax.grad(_layers_loss), (None, 0))(m, xs)
    for k in range(3):
        gk = srcjax.grad(_layers_loss)(m, xs[k])
        np.testing.assert_allclose(gv.layers[1][k], gk.layers[1], rtol=1e-6)


def test_flatten_returning_a_tuple_attribute_with_aux():
    m = _TupleMLP(tuple(_user05_layers()), 2.0)
    x = np.ones((4, 2), np.float32)
    g = srcjax.grad(_scaled_layers_loss)(m, x)
    assert type(g.layers) is tuple and g.scale == 2.0
    np.testing.assert_allclose(g.layers[0], np.full((2, 3), 2 * 0.7581519), rtol=1e-6)
    np.testing.assert_allclose(g.layers[1], np.full((3, 1), 2 * 0.7785315), rtol=1e-6)


class _TransposedFn:
    def __init__(self, w):
        self.w = w


def _flatten_transposed(m):
    return (m.w.T,), None


tu.register_pytree_node(_TransposedFn, _flatten_transposed, lambda aux, ch: _TransposedFn(ch[0].T))


def test_attribute_error_names_the_registered_flatten_function(x64):
    rng = np.random.default_rng(5)
    m = _TransposedFn(rng.normal(size=(3, 2)))
    x = rng.normal(size=(4, 3))
    with pytest.raises(NotImplementedError, match=r"flatten function _flatten_transposed \(") as e:
        srcjax.grad(transposed_loss)(m, x)
    assert "tree_flatten" not in str(e.value) and "test_pytree_classes.py" in str(e.value)
    # a register_pytree_node_class class is still named by its method
    with pytest.raises(NotImplementedError, match=r"Transposed\.tree_flatten does not"):
        srcjax.grad(transposed_loss)(Transposed(m.w), x)
