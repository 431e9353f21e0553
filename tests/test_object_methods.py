"""Methods of plain (unregistered) objects called inside transformed code.

srcjax inlines user functions and the methods of registered pytree classes;
a method of any other object runs as it is. Given a differentiated or batched
value, such a method may keep it in the object (``acc.add(v)``: ``self.total
+= v``), where no transform can follow it. JAX traces through the object (grad
of the accumulator below is 3.0); srcjax used to give 0.0 (grad, jvp, jacfwd)
and a per-example mix under vmap. It must refuse, naming the user's line.
"""

import dataclasses

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax.errors import NoDerivativeRuleError, TransformValueError


class Acc:
    def __init__(self):
        self.total = 0.0

    def add(self, v):
        self.total = self.total + v

    def scaled(self, s):
        return self.total * s


def accumulate(a):
    acc = Acc()
    for i in range(3):
        acc.add(a * i)
    return acc.total


def accumulate_assigned(a):
    acc = Acc()
    r = acc.add(a * 2.0)  # noqa: F841 (the result is unused: the call is for its effect)
    return acc.total + a


def reads_only(a):
    acc = Acc()  # a method given no differentiated value: it just runs
    return a * acc.scaled(2.0) + len([acc])


@pytest.mark.parametrize("f", [accumulate, accumulate_assigned])
def test_grad_refuses_an_object_method_given_a_differentiated_value(f):
    assert f(1.0) == 3.0  # (eager; JAX's grad of both is 3.0, never the 0.0 of before)
    with pytest.raises(NoDerivativeRuleError) as e:
        srcjax.grad(f)(1.0)
    msg = str(e.value)
    assert "test_object_methods.py" in msg and ".add" in msg
    with pytest.raises(NoDerivativeRuleError):
        srcjax.value_and_grad(f)(np.float32(1.0))
    with pytest.raises(NoDerivativeRuleError):
        srcjax.vjp(f, 1.0)


@pytest.mark.parametrize("f", [accumulate, accumulate_assigned])
def test_jvp_refuses_an_object_method_given_a_differentiated_value(f):
    with pytest.raises(NoDerivativeRuleError) as e:
        srcjax.jvp(f, (1.0,), (1.0,))
    assert "test_object_methods.py" in str(e.value)
    with pytest.raises(NoDerivativeRuleError):
        srcjax.jacfwd(f)(1.0)


def test_object_methods_without_differentiated_arguments_still_run():
    # d/da (a * 0.0 + 1) = 0.0: the object holds no differentiated value
    assert float(srcjax.grad(reads_only)(2.0)) == 0.0
    assert float(srcjax.jvp(reads_only, (2.0,), (1.0,))[1]) == 0.0
    # jit runs the Python as it is: the accumulator's value is right (3.0 as JAX)
    assert float(srcjax.jit(accumulate)(1.0)) == 3.0
    np.testing.assert_allclose(srcjax.jit(accumulate_assigned)(jnp.float32(2.0)), 6.0)


@pytest.mark.parametrize("f", [accumulate, accumulate_assigned])
def test_vmap_refuses_an_object_method_given_a_batched_value(f):
    # the examples shared one accumulator: [[3, 6], [3, 6]] where JAX gives [3, 6]
    with pytest.raises(TransformValueError) as e:
        srcjax.vmap(f)(jnp.array([1.0, 2.0]))
    assert "test_object_methods.py" in str(e.value) and "batched" in str(e.value)


def test_vmap_runs_object_methods_given_no_batched_value():
    # a * acc.scaled(2.0) + len([acc]) = 1: the method is given no batched value
    got = srcjax.vmap(reads_only)(jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(got, [1.0, 1.0])


@dataclasses.dataclass
class State:
    x: object
    v: object


@dataclasses.dataclass
class RegisteredState:
    x: object
    v: object


srcjax.tree_util.register_dataclass(RegisteredState, data_fields=["x", "v"], meta_fields=[])


def _oscillate(cls):
    def energy_after(x0):
        s = cls(x0, 0.0 * x0)
        for _ in range(3):
            s = cls(s.x + 0.1 * s.v, s.v - 0.1 * s.x)
        return s.x**2 + s.v**2

    return energy_after


def test_an_unregistered_class_built_from_a_transformed_value_is_refused():
    f = _oscillate(State)
    assert np.isclose(f(1.0), 1.030301)  # eager (and jit) run the Python as it is
    assert np.isclose(srcjax.jit(f)(1.0), 1.030301)
    with pytest.raises(NoDerivativeRuleError, match="no pytree") as e:
        srcjax.grad(f)(1.0)
    assert "register_dataclass" in str(e.value)


def test_a_registered_dataclass_is_transformed():
    # values recorded from jax 0.10.2 (State registered with register_dataclass)
    f = _oscillate(RegisteredState)
    np.testing.assert_allclose(srcjax.grad(f)(1.0), 2.060602, rtol=1e-6)
    np.testing.assert_allclose(
        srcjax.vmap(f)(jnp.array([1.0, 2.0])), [1.030301, 4.121204], rtol=1e-6
    )


def _step(s, dt):
    return State(s.x + dt * s.v, s.v - dt * s.x)


def _energy_after(x0):
    s = State(x0, 0.0)
    for _ in range(3):
        s = _step(s, 0.1)  # the instance handed to a function: a copy named step_s
    return s.x**2 + s.v**2


def test_vmap_of_plain_objects_handed_to_a_function():
    # an internal AttributeError before ('numpy.ndarray' object has no attribute 'x');
    # jax 0.10.2: [1.030301 4.121204]
    got = srcjax.vmap(_energy_after)(jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(got, [1.030301, 4.121204], rtol=1e-6)


class _Dense:
    """A plain config object (no pytree) with an optional activation."""

    def __init__(self, act=None):
        self.act = act

    def apply(self, w, x):
        y = x * w
        if self.act is not None:
            y = self.act(y)
        return y


class _Net:
    def __init__(self, act=None):
        self.d = _Dense(act)

    def loss(self, w, x):
        return jnp.sum(self.d.apply(w, x) ** 2)


def test_an_optional_activation_of_a_plain_object_is_static():
    """Fresh-user bug 40: `if self.act is not None:` with act None kept the branch,
    and its `self.act(y)` (a call of None) raised 'no derivative rule for
    self.act'. JAX 0.10.2: grad 0.75 at w = 0.3, x = (0.5, -1); with tanh the
    analytic derivative of sum(tanh(w x)^2)."""
    x = np.array([0.5, -1.0], np.float32)
    assert_close = np.testing.assert_allclose
    for net in (_Net(), _Net(jnp.tanh)):
        want_v = float(net.loss(0.3, x))
        assert_close(float(srcjax.jit(net.loss)(0.3, x)), want_v, rtol=1e-6)
    assert_close(float(srcjax.grad(_Net().loss)(0.3, x)), 0.75, rtol=1e-6)
    t = np.tanh(0.3 * x.astype(np.float64))
    want = float(np.sum(2 * t * (1 - t**2) * x))
    assert_close(float(srcjax.grad(_Net(jnp.tanh).loss)(0.3, x)), want, rtol=1e-5)


class _Residual(_Dense):
    def apply(self, w, x):
        return x + super().apply(w, x)


class _Stack:
    def __init__(self):
        self.layers = [_Dense(jnp.tanh), _Dense(jnp.sin), _Dense()]

    def loss(self, w, x):
        h = x
        for layer in self.layers:
            h = layer.apply(w, h)
        return jnp.sum(h**2)


class _ResNet:
    def __init__(self):
        self.d = _Residual(jnp.tanh)

    def loss(self, w, x):
        return jnp.sum(self.d.apply(w, x) ** 2)


def test_a_loop_over_plain_layers_and_super_in_a_plain_method(x64):
    """Bug 40's other cases: `for layer in self.layers: h = layer.apply(w, h)`
    ("calls a method of an object srcjax does not transform") and a subclass's
    super().apply(w, x) reading self.act. JAX 0.10.2 gave 0.12423603 and
    2.9979572 in float32 for two of these models; oracle here: float64 central
    differences of the Python methods, and their values."""
    from helpers import fd_grad

    x = np.array([0.5, -1.0])
    for net in (_Stack(), _ResNet()):
        assert np.isclose(float(srcjax.jit(net.loss)(0.3, x)), float(net.loss(0.3, x)), rtol=1e-12)
        fd = fd_grad(lambda w, net=net: net.loss(w, x), np.float64(0.3))
        np.testing.assert_allclose(float(srcjax.grad(net.loss)(0.3, x)), fd, rtol=1e-7)
        ws = np.array([0.3, -0.7])
        per = srcjax.vmap(srcjax.grad(net.loss), in_axes=(0, None))(ws, x)
        want = [fd_grad(lambda w, net=net: net.loss(w, x), np.float64(v)) for v in ws]
        np.testing.assert_allclose(per, want, rtol=1e-7)
