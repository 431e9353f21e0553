"""srcjax.pure_callback, srcjax.debug.callback and srcjax.named_call against JAX
0.10.2's behaviour (the shapes each callback receives under vmap, the errors):
eager, jit, vmap with each vmap_method (nested too), grad."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import ShapeDtypeStruct
from srcjax.errors import NoDerivativeRuleError

X = np.arange(3.0, dtype=np.float32)
SDS = ShapeDtypeStruct((3,), np.float32)
SEEN: list = []


def host_sin_plus(x, y):
    SEEN.append((type(x), np.shape(x), np.shape(y), x.dtype, y.dtype))
    return np.sin(x) + y


@pytest.fixture(autouse=True)
def _clear():
    SEEN.clear()
    yield
    SEEN.clear()


def call_cb(x):
    return srcjax.pure_callback(host_sin_plus, SDS, x, 1.0) * 2


def test_eager_and_jit():
    got = srcjax.pure_callback(host_sin_plus, SDS, X, 1.0)
    np.testing.assert_allclose(got, np.sin(X) + 1, rtol=1e-6)
    assert got.dtype == np.float32 and isinstance(got, np.ndarray)
    # a Python scalar argument reaches the callback as a float32 0-d array (JAX)
    assert SEEN == [(np.ndarray, (3,), (), np.float32, np.float32)]
    SEEN.clear()
    f = srcjax.jit(call_cb)
    np.testing.assert_allclose(f(X), 2 * (np.sin(X) + 1), rtol=1e-6)
    np.testing.assert_allclose(f(X + 1), 2 * (np.sin(X + 1) + 1), rtol=1e-6)
    assert len(SEEN) == 2  # once per call: jit never runs it on stand-ins


def vm(x, method):
    return srcjax.pure_callback(host_sin_plus, SDS, x, 1.0, vmap_method=method)


@pytest.mark.parametrize(
    "method, calls, y_shape",
    # what JAX 0.10.2 hands the callback for vmap over a (2, 3) x with y = 1.0
    [
        ("sequential", 2, ()),
        ("sequential_unrolled", 2, ()),
        ("expand_dims", 1, (1,)),
        ("legacy_vectorized", 1, ()),
    ],
)
def test_vmap_methods(method, calls, y_shape):
    xs = np.stack([X, X + 1])
    got = srcjax.vmap(functools.partial(vm, method=method))(xs)
    np.testing.assert_allclose(got, np.sin(xs) + 1, rtol=1e-6)
    assert len(SEEN) == calls
    assert SEEN[0][2] == y_shape
    assert SEEN[0][1] == ((3,) if calls == 2 else (2, 3))


def test_vmap_broadcast_all_and_none():
    xs = np.stack([X, X + 1])
    # broadcast_all tiles y to (2,): sin(x) of shape (2, 3) + (2,) fails in the
    # callback, as it does in JAX
    with pytest.raises(ValueError):
        srcjax.vmap(functools.partial(vm, method="broadcast_all"))(xs)
    assert SEEN[0][2] == (2,)
    with pytest.raises(NotImplementedError, match="vmap_method=None"):
        srcjax.vmap(functools.partial(vm, method=None))(xs)


def scalar_cb(x):
    return srcjax.pure_callback(
        host_sin_plus, ShapeDtypeStruct((), np.float32), x, 1.0, vmap_method="expand_dims"
    )


def scalar_seq(x):
    return srcjax.pure_callback(
        host_sin_plus, ShapeDtypeStruct((), np.float32), x, 1.0, vmap_method="sequential"
    )


def test_nested_vmap():
    xs = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    got = srcjax.vmap(srcjax.vmap(scalar_cb))(xs)
    np.testing.assert_allclose(got, np.sin(xs) + 1, rtol=1e-6)
    assert SEEN == [(np.ndarray, (2, 3), (1, 1), np.float32, np.float32)]  # as JAX
    SEEN.clear()
    got = srcjax.vmap(srcjax.vmap(scalar_seq))(xs)
    np.testing.assert_allclose(got, np.sin(xs) + 1, rtol=1e-6)
    assert len(SEEN) == 6 and SEEN[0][1] == ()
    got = srcjax.jit(srcjax.vmap(scalar_cb))(X)
    np.testing.assert_allclose(got, np.sin(X) + 1, rtol=1e-6)


def unbatched_cb(x):
    z = np.zeros(3, np.float32)
    return srcjax.pure_callback(host_sin_plus, SDS, z, 1.0, vmap_method="expand_dims") + x


def double_p(d):
    return {"a": d["p"] * 2}


def tree_cb(d):
    return srcjax.pure_callback(double_p, {"a": SDS}, d, vmap_method="expand_dims")


def test_unbatched_arguments_and_pytrees():
    xs = np.stack([X, X + 1])
    # no batched argument: one unbatched call (JAX runs no batching rule)
    np.testing.assert_allclose(srcjax.vmap(unbatched_cb)(xs), xs + 1, rtol=1e-6)
    assert SEEN == [(np.ndarray, (3,), (), np.float32, np.float32)]
    out = tree_cb({"p": X})
    np.testing.assert_array_equal(out["a"], 2 * X)
    out = srcjax.vmap(tree_cb)({"p": xs})
    np.testing.assert_array_equal(out["a"], 2 * xs)
    two = srcjax.pure_callback(lambda x: [x, 2 * x], [SDS, SDS], X)
    np.testing.assert_array_equal(two[1], 2 * X)
    kw = srcjax.pure_callback(lambda x, k=0: x + k, SDS, X, k=3.0)  # eager keywords
    np.testing.assert_array_equal(kw, X + 3)


def diff_arg(x):
    return srcjax.pure_callback(host_sin_plus, SDS, x, 1.0).sum()


def diff_other(y):
    return y * srcjax.pure_callback(host_sin_plus, SDS, X, 1.0).sum()


def test_grad():
    with pytest.raises(NoDerivativeRuleError, match="custom_jvp") as e:
        srcjax.grad(diff_arg)(X)
    assert isinstance(e.value, NotImplementedError)
    with pytest.raises(NotImplementedError):
        srcjax.jvp(diff_arg, (X,), (X,))
    # a callback on no differentiated path is fine (JAX 0.10.2: 4.7507687)
    np.testing.assert_allclose(srcjax.grad(diff_other)(2.0), np.sum(np.sin(X) + 1), rtol=1e-6)


def test_result_checks():
    with pytest.raises(RuntimeError, match=r"Expected: \(3,\), Actual: \(4,\)"):
        srcjax.pure_callback(lambda x: np.zeros(4, np.float32), SDS, X)
    with pytest.raises(RuntimeError, match="Expected: float32, Actual: int32"):
        srcjax.pure_callback(lambda x: np.zeros(3, np.int32), SDS, X)
    # float64 canonicalizes to float32 without x64: accepted, as in JAX
    assert srcjax.pure_callback(lambda x: np.zeros(3), SDS, X).dtype == np.float32
    with pytest.raises(ValueError, match="64-bit"):
        srcjax.pure_callback(host_sin_plus, ShapeDtypeStruct((3,), np.float64), X, 1.0)
    with pytest.raises(ValueError, match="vmap_method"):
        srcjax.pure_callback(host_sin_plus, SDS, X, 1.0, vmap_method="foo")


LOG: list = []


def log_cb(x):
    LOG.append(np.array(x))


def with_debug(x):
    srcjax.debug.callback(log_cb, x * 2)
    return jnp.sum(x * x)


def test_debug_callback():
    LOG.clear()
    assert srcjax.debug.callback(log_cb, X) is None
    with_debug(X)
    srcjax.jit(with_debug)(X)
    assert len(LOG) == 3
    np.testing.assert_array_equal(LOG[2], 2 * X)
    LOG.clear()
    xs = np.stack([X, X + 1])
    srcjax.vmap(with_debug)(xs)  # JAX: one call per example
    assert [v.tolist() for v in LOG] == [(2 * X).tolist(), (2 * X + 2).tolist()]
    LOG.clear()
    g = srcjax.grad(with_debug)(X)  # primal values, no effect on the derivative
    np.testing.assert_array_equal(g, 2 * X)
    assert len(LOG) == 1 and LOG[0].tolist() == (2 * X).tolist()
    LOG.clear()
    srcjax.vmap(srcjax.vmap(with_debug))(np.arange(4.0, dtype=np.float32).reshape(2, 2, 1))
    assert [float(v[0]) for v in LOG] == [0.0, 2.0, 4.0, 6.0]


def twice(x):
    return x * 2


def uses_named(x):
    return srcjax.named_call(twice, name="twice")(x) + 1


def test_named_call():
    f = srcjax.named_call(twice, name="twice")
    assert f(3.0) == 6.0
    assert srcjax.grad(f)(3.0) == 2.0
    assert srcjax.jit(uses_named)(3.0) == 7.0
    assert srcjax.grad(uses_named)(3.0) == 2.0
    np.testing.assert_array_equal(srcjax.vmap(uses_named)(X), 2 * X + 1)
    with pytest.raises(TypeError):
        srcjax.named_call(3, name="x")


def inline_lambda(x):
    return srcjax.pure_callback(lambda v: v + 1, SDS, x)


def test_lambda_inside_transformed_code_is_a_value():
    # was a limit of srcjax's normalizer (an UnsupportedSyntaxError); a lambda
    # argument reading no local is now a function value (fresh-user F4-M5,
    # tests/test_callback_lambda.py)
    np.testing.assert_array_equal(srcjax.jit(inline_lambda)(X), X + 1)
    np.testing.assert_array_equal(inline_lambda(X), X + 1)  # eagerly any callable


def branchy(x):
    if x.sum() > 3:
        srcjax.debug.callback(log_cb, x)
    else:
        srcjax.debug.callback(log_cb, -x)
    return x


def test_debug_callback_in_per_example_branches():
    # under vmap, a batched `if` runs both branches; only the examples that take
    # a branch call its callback (as srcjax.debug.print shows only them), with
    # their own values, one call each; the branches in order (then, else)
    LOG.clear()
    xs = np.stack([X, X + 1])
    srcjax.vmap(branchy)(xs)
    assert [v.tolist() for v in LOG] == [(X + 1).tolist(), (-X).tolist()]
    LOG.clear()
    nested = np.stack([xs, np.stack([X + 2, X - 1])])  # sums 3, 6 / 9, 0
    srcjax.vmap(srcjax.vmap(branchy))(nested)
    assert [v.tolist() for v in LOG] == [
        (X + 1).tolist(),
        (X + 2).tolist(),
        (-X).tolist(),
        (1 - X).tolist(),
    ]
