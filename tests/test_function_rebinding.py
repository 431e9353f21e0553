"""A local name bound to a known function and rebound inside an ``if`` (fresh-user
bug 38: the rebinding was taken as unconditional under jit, vmap and grad: gelu
for activation="relu", cos for every x), and a local alias of a jnp/nn
function differentiated (bug 39: "no derivative rule for `g`").

Oracles: plain Python (the functions run eagerly on srcjax arrays), values
recorded from jax 0.10.2, float64 central differences."""

import numpy as np
from helpers import assert_close, fd_grad

import srcjax
import srcjax.numpy as jnp


def _rebind_fn(x):
    f = jnp.sin
    if x > 0:
        f = jnp.cos
    return f(x)


def _rebind_static(x, use_cos):
    f = jnp.sin
    if use_cos:
        f = jnp.cos
    return f(x)


def _mlp(w, x, activation):
    act = srcjax.nn.relu
    if activation == "gelu":
        act = srcjax.nn.gelu
    return jnp.sum(act(x @ w))


def _loop_rebind(x, names):
    act = srcjax.nn.relu
    for n in names:
        if n == "gelu":
            act = srcjax.nn.gelu
    return jnp.sum(act(x) * 2.0)


def _rebound_to_a_runtime_value(x, k):
    f = jnp.sin
    if x > 0:
        f = (jnp.cos, jnp.tanh)[k]  # a value known only at run time
    return f(x)


def _rebound_after_a_runtime_value(x, k):
    f = (jnp.cos, jnp.tanh)[k]
    if x > 0:
        f = jnp.sin
    return f(x)


def test_a_function_rebound_in_one_branch(x64):
    for x in (-2.5, 1.0):
        want = float(np.cos(x) if x > 0 else np.sin(x))
        assert_close(srcjax.jit(_rebind_fn)(x), want, rtol=1e-12)
        assert_close(srcjax.grad(_rebind_fn)(x), fd_grad(_rebind_fn, np.float64(x)), rtol=1e-7)
        for use_cos in (False, True):
            want = float(np.cos(x) if use_cos else np.sin(x))
            assert_close(srcjax.jit(_rebind_static, static_argnums=1)(x, use_cos), want)
            assert_close(srcjax.jit(_rebind_static)(x, use_cos), want)
    xs = np.array([-2.5, 1.0])
    assert_close(srcjax.vmap(_rebind_fn)(xs), [np.sin(-2.5), np.cos(1.0)], rtol=1e-12)
    assert_close(srcjax.vmap(srcjax.grad(_rebind_fn))(xs), [np.cos(-2.5), -np.sin(1.0)], rtol=1e-12)


def test_an_activation_chosen_by_a_static_string():
    """JAX 0.10.2: relu 1.5, grad [2, 0, -1, 0]; gelu 1.3995...; the loop over
    names that are not "gelu" keeps relu: 3.0."""
    w = jnp.array([[1.0, -1.0], [0.5, 2.0]])
    x = jnp.array([[2.0, -1.0]])
    assert_close(srcjax.jit(_mlp, static_argnums=2)(w, x, "relu"), 1.5)
    assert_close(srcjax.grad(_mlp)(w, x, "relu"), [[2.0, 0.0], [-1.0, 0.0]])
    assert_close(srcjax.jit(_mlp, static_argnums=2)(w, x, "gelu"), _mlp(w, x, "gelu"), rtol=1e-6)
    x3 = jnp.array([-0.5, 1.5])
    assert_close(srcjax.jit(_loop_rebind, static_argnums=1)(x3, ("relu", "x")), 3.0)
    got = srcjax.jit(_loop_rebind, static_argnums=1)(x3, ("relu", "gelu"))
    assert_close(got, _loop_rebind(x3, ("relu", "gelu")), rtol=1e-6)


def test_rebinding_to_and_from_a_run_time_value():
    """The binding the ``if`` may skip is a value known at run time only: the
    taken path's function, as in Python."""
    for x in (-0.5, 0.5):
        for k in (0, 1):
            for f in (_rebound_to_a_runtime_value, _rebound_after_a_runtime_value):
                assert_close(srcjax.jit(f)(x, k), f(x, k), rtol=1e-6)


def _shadow_local(x):
    act = jnp.sin  # noqa: F841 (a local shadowing a module-level function)
    return act(x) * 2.0


def act(x):
    return jnp.tanh(x)


def _local_alias(x):
    g = jnp.sin
    return g(x) * 2.0


def _local_alias_nn(x):
    nonlin = srcjax.nn.gelu
    return nonlin(x) * 2.0


def _alias_of_a_user_function(x):
    g = act
    return g(x) * 3.0


def test_a_local_alias_of_a_function_is_differentiated():
    """JAX 0.10.2: 1.7551651 for the sin aliases at 0.5, 1.7347399 for gelu."""
    for f, want in (
        (_shadow_local, 1.7551651),
        (_local_alias, 1.7551651),
        (_local_alias_nn, 1.7347399),
        (_alias_of_a_user_function, 3.0 * (1.0 - np.tanh(0.5) ** 2)),
    ):
        assert_close(srcjax.grad(f)(0.5), want, rtol=1e-6)
        assert_close(srcjax.jit(srcjax.grad(f))(0.5), want, rtol=1e-6)
        assert_close(srcjax.vmap(srcjax.grad(f))(jnp.array([0.5])), [want], rtol=1e-6)
