"""srcjax/frontend/normalize/typed.py: values of known types (namedtuples,
registered pytree classes): _replace, methods inlined, attribute reads. Oracle:
the Python methods run on the same values."""

import collections
import dataclasses
from typing import Any

import numpy as np
import pytest
from frontend_run import assert_same, normalized_text

import srcjax
import srcjax.numpy as jnp
from srcjax import tree_util
from srcjax.frontend.normalize import ClassKind, type_tree
from srcjax.tree_util import register_dataclass

State = collections.namedtuple("State", ["pos", "vel"])


@tree_util.register_dataclass
@dataclasses.dataclass
class Linear:
    w: object
    b: object

    def __call__(self, v):
        return v @ self.w + self.b

    def scaled(self, k):
        return Linear(self.w * k, self.b)


def replace(s, dt):
    return s._replace(pos=s.pos + dt * s.vel)


def fields(s):
    return s.pos * s.vel, s[0]


def call_instance(layer, x):
    return layer(x)


def method_returning_an_instance(layer, x):
    return layer.scaled(2.0)(x)


def build_then_call(w, b, x):
    return Linear(w, b)(x)


def kinds_of(args):
    """The argument kinds the public transforms pass (srcjax/api/args.py): a
    ClassKind for a value holding registered classes, which carries its type."""
    out = []
    for a in args:
        ty = type_tree(a)
        out.append(ClassKind(ty) if ty is not None else "leaf")
    return tuple(out)


W = jnp.asarray(np.array([[1.0, 0.5], [-1.0, 2.0]]))
B = jnp.asarray(np.array([0.25, 0.0]))
X = jnp.asarray(np.array([1.5, -0.5]))


@pytest.mark.parametrize(
    "f, args",
    [
        (replace, (State(X, B), 0.1)),
        (fields, (State(X, B),)),
        (call_instance, (Linear(W, B), X)),
        (method_returning_an_instance, (Linear(W, B), X)),
        (build_then_call, (W, B, X)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_typed_calls_give_pythons_values(f, args):
    assert_same(f, *args, kinds=kinds_of(args))


def test_methods_of_typed_values_are_inlined():
    text = normalized_text(call_instance, kinds_of((Linear(W, B), X)))
    assert "layer(" not in text and "@" in text


@dataclasses.dataclass
class _Lin:
    w: Any
    b: Any


register_dataclass(_Lin, data_fields=["w", "b"], meta_fields=[])


def _replace_loss(m):
    m2 = dataclasses.replace(m, b=m.b + 1.0)
    return jnp.sum(m2.w * 3.0 + m2.b)


def test_dataclasses_replace_of_a_registered_dataclass_is_differentiable():
    """User bug 10: dataclasses.replace(m, b=...) inside grad was inlined and
    failed with '`replace` takes 0 arguments, 1 given'. JAX 0.10.2:
    Lin(w=[3, 3], b=[1, 1])."""
    m = _Lin(jnp.ones(2), jnp.zeros(2))
    g = srcjax.grad(_replace_loss)(m)
    assert isinstance(g, _Lin)
    np.testing.assert_allclose(g.w, [3.0, 3.0])
    np.testing.assert_allclose(g.b, [1.0, 1.0])
    np.testing.assert_allclose(srcjax.jit(_replace_loss)(m), 8.0)


def test_dataclasses_replace_of_an_unknown_class_is_a_clear_error():
    @dataclasses.dataclass
    class Plain:
        b: Any

    p = Plain(1.0)

    def f(x):
        return dataclasses.replace(p, b=x).b * 2.0

    with pytest.raises(Exception, match=r"dataclasses.replace") as err:
        srcjax.grad(f)(1.0)
    assert "takes 0 arguments" not in str(err.value)
