"""User names never collide with the names generated code uses for srcjax's
namespaces (``ad``, ``jnp``, ``np``, ``lax``, ``nn``, ``special``, ``custom``,
``_rt``) or for the builtins it calls (``range``, ``len``, ``min``, ...).

A user found that a module global ``ad = 3.0`` broke jit, grad and vmap of any
function reading it (``'float' * '_RegistryNamespace'``), and a local variable
``ad`` broke grad (``'numpy.ndarray' object has no attribute 'seed'``) and vmap.
Expected numbers: JAX 0.10.2 (recorded as literals; JAX is not installed in CI)
or plain Python.
"""

import numpy as np
import pytest
from helpers import assert_close, fd_grad

import srcjax
import srcjax.numpy as jnp

pytestmark = pytest.mark.usefixtures("x64")

ad = 3.0  # an "advection" coefficient
lax = 0.5
custom = 2.0


def uses_global_ad(x):
    return x * ad


def uses_local_ad(x):
    ad = x * 3
    return jnp.sum(ad * x)


def test_a_global_named_ad():
    # JAX: jit 6.0, grad 3.0, vmap [6, 6] (x = 2), jvp 3.0
    assert_close(srcjax.jit(uses_global_ad)(2.0), 6.0)
    assert_close(srcjax.grad(uses_global_ad)(2.0), 3.0)
    assert_close(srcjax.vmap(uses_global_ad)(np.full(2, 2.0)), [6.0, 6.0])
    assert_close(srcjax.jvp(uses_global_ad, (2.0,), (1.0,))[1], 3.0)
    assert_close(srcjax.jit(srcjax.grad(uses_global_ad))(2.0), 3.0)
    assert_close(srcjax.hessian(uses_global_ad)(2.0), 0.0)


def test_a_global_named_ad_is_read_live():
    global ad
    g = srcjax.grad(uses_global_ad)
    assert_close(g(2.0), 3.0)
    ad = 5.0
    try:
        assert_close(g(2.0), 5.0)  # generated code reads the module's current value
    finally:
        ad = 3.0


def test_a_local_named_ad():
    # JAX: grad [6, 6] at ones(2), vmap [6, 6] over ones((2, 2))
    x = np.ones(2)
    assert_close(srcjax.grad(uses_local_ad)(x), [6.0, 6.0])
    assert_close(srcjax.vmap(uses_local_ad)(np.ones((2, 2))), [6.0, 6.0])
    assert_close(srcjax.jit(uses_local_ad)(x), 6.0)
    assert_close(srcjax.jvp(uses_local_ad, (x,), (np.ones(2),))[1], 12.0)
    assert_close(srcjax.vmap(srcjax.grad(uses_local_ad))(np.ones((2, 2))), np.full((2, 2), 6.0))
    assert_close(srcjax.hessian(uses_local_ad)(x), 6.0 * np.eye(2))


def every_namespace_name(x, lax):
    np = x * lax  # noqa: F841 (shadows numpy on purpose)
    jnp = np * custom
    nn = jnp + ad
    special = nn * nn
    _rt = special + 1.0
    min = _rt * 2.0  # noqa: A001 (generated code calls the builtin min)
    total = 0.0
    for a, b in zip([min, _rt], [x, x]):
        total = total + a * b
    return total


def _every_namespace_name_python(x, lax):
    v = ((x * lax * custom + ad) ** 2 + 1.0) * 2.0
    return v * x + ((x * lax * custom + ad) ** 2 + 1.0) * x


def test_locals_params_and_closures_named_like_namespaces():
    x, p = 0.7, 1.3
    want = _every_namespace_name_python(x, p)
    assert_close(srcjax.jit(every_namespace_name)(x, p), want)
    g = srcjax.grad(every_namespace_name, argnums=(0, 1))(x, p)
    assert_close(g[0], fd_grad(lambda v: _every_namespace_name_python(v, p), x))
    assert_close(g[1], fd_grad(lambda v: _every_namespace_name_python(x, v), p))
    xs = np.array([0.7, -0.2, 1.1])
    assert_close(srcjax.vmap(every_namespace_name, in_axes=(0, None))(xs, p),
                 [_every_namespace_name_python(v, p) for v in xs])  # fmt: skip
    assert_close(srcjax.jvp(lambda v: every_namespace_name(v, p), (x,), (1.0,))[1], g[0])
    # keyword arguments by the user's parameter name (generated code calls it lax_)
    assert_close(srcjax.jit(every_namespace_name)(x, lax=p), want)
    assert_close(srcjax.jit(every_namespace_name, static_argnames="lax")(x, lax=p), want)
    assert_close(srcjax.grad(every_namespace_name)(x, lax=p), g[0])
    assert_close(srcjax.grad(srcjax.grad(every_namespace_name))(x, p),
                 fd_grad(lambda v: srcjax.grad(every_namespace_name)(v, p), x), rtol=1e-5)  # fmt: skip


def closure_named_ad():
    ad = 4.0
    jnp = 0.25

    def f(x):
        return x * ad + jnp

    return f


def test_closure_cells_named_like_namespaces():
    f = closure_named_ad()
    assert_close(srcjax.grad(f)(2.0), 4.0)
    assert_close(srcjax.jit(f)(2.0), 8.25)
    assert_close(srcjax.vmap(f)(np.array([1.0, 2.0])), [4.25, 8.25])


def test_generated_code_keeps_the_user_names_readable():
    text = srcjax.source(srcjax.grad(uses_local_ad), np.ones(2))
    assert "ad_ = " in text and "ad.seed(" in text
