"""srcjax/frontend/normalize/receivers.py: methods of objects built inside the
transformed function (bug 12): a plain class built from values known while
transforming is built then (as JAX's trace runs ``__init__``), a registered
pytree class's construction is named so its methods inline. Oracle: gradients
recorded from JAX 0.10.2 and float64 finite differences; an object whose
methods assign attributes stays a run-time value (refused when differentiated)."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import errors


class MLP:
    def __init__(self, depth, scale=1.0):
        self.depth = depth
        self.scale = scale

    def apply(self, w, x):
        for _ in range(self.depth):
            x = jnp.tanh(x @ w)
        return self.scale * x


@srcjax.tree_util.register_pytree_node_class
class Lin:
    def __init__(self, w):
        self.w = w

    def tree_flatten(self):
        return (self.w,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    def loss(self, x):
        return jnp.sum((x @ self.w) ** 2)


class Counter:
    def __init__(self):
        self.total = 0.0

    def add(self, v):
        self.total = self.total + v
        return self.total


def direct_mlp(w, x):
    return jnp.sum(MLP(2).apply(w, x))


def named_mlp(w, x):
    m = MLP(2, scale=1.0)
    return jnp.sum(m.apply(w, x))


def direct_lin(w):
    return Lin(w).loss(jnp.arange(3.0))


def counter_inside(x):
    c = Counter()
    return jnp.sum(c.add(x))


W = jnp.eye(3) * 0.5
X = jnp.arange(3.0)
#: JAX 0.10.2: grad(direct_mlp)(W, X)
MLP_GRAD = [
    [0.0, 0.0, 0.0],
    [0.9621171951293945, 0.8112534284591675, 0.5833467245101929],
    [1.7615941762924194, 1.468249797821045, 1.025531530380249],
]


@pytest.mark.parametrize("f", [direct_mlp, named_mlp])
def test_a_plain_object_built_inside_has_its_method_differentiated(f):
    np.testing.assert_allclose(np.asarray(srcjax.grad(f)(W, X)), MLP_GRAD, rtol=1e-5)
    np.testing.assert_allclose(float(srcjax.jit(f)(W, X)), float(direct_mlp(W, X)), rtol=1e-6)

    # float64 finite differences of the same function in NumPy
    def numpy_f(w):
        x = np.arange(3.0)
        for _ in range(2):
            x = np.tanh(x @ w)
        return x.sum()

    w0, h = np.eye(3) * 0.5, 1e-6
    e = np.zeros((3, 3))
    e[1, 2] = h
    fd = (numpy_f(w0 + e) - numpy_f(w0 - e)) / (2 * h)
    np.testing.assert_allclose(MLP_GRAD[1][2], fd, rtol=1e-5)


def test_a_pytree_class_built_inside_has_its_method_inlined():
    g = srcjax.grad(direct_lin)(jnp.ones((3, 2)))
    np.testing.assert_allclose(np.asarray(g), [[0, 0], [6, 6], [12, 12]])  # JAX 0.10.2


def test_an_object_whose_methods_assign_attributes_is_still_refused():
    with pytest.raises(errors.NoDerivativeRuleError):
        srcjax.grad(counter_inside)(jnp.ones(2))
