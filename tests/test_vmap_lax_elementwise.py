"""Every ``lax`` elementwise function under ``vmap(.., in_axes=(None, 0))``
followed by ``@ w``, eagerly and under ``jit(vmap)`` (user 08: ``lax.rsqrt(x) @
w`` returned a ``(6,)`` object array of per-row Arrays, silently, while
``jnp.exp`` in its place was right), and the per-example stacking fallback,
which must never build an object array out of arrays.

Expected values: a Python loop over the examples (each row's eager call), and
for the reproducer the values recorded from jax 0.10.2 on CPU."""

import numpy as np
import pytest

import srcjax
from srcjax import lax
from srcjax.errors import TransformValueError
from srcjax.primitives.batch_rules.runtime_index import _stack_objects

# the float -> float elementwise functions of jax.lax taking one operand
UNARY = (
    "abs acos acosh asin asinh atan atanh bessel_i0e bessel_i1e cbrt ceil cos cosh "
    "digamma erf erf_inv erfc exp exp2 expm1 floor lgamma log log1p logistic neg "
    "round rsqrt sign sin sinh sqrt square tan tanh"
).split()
# ... and two operands of one dtype
BINARY = "add atan2 div max min mul nextafter pow rem sub".split()

_X = (np.arange(24, dtype=np.float32).reshape(6, 4) % 7 + 1) / 8  # in (0, 1)
_W = np.arange(48, dtype=np.float32).reshape(4, 12) / 48


def _domain(name):
    return _X + 1 if name == "acosh" else _X  # (acosh: x >= 1)


def _check(fn, x, w):
    want = np.stack([np.asarray(fn(w, v)) for v in x])  # per example, eagerly
    assert want.shape == (6, 12) and want.dtype == np.float32
    for got in (srcjax.vmap(fn, (None, 0))(w, x), srcjax.jit(srcjax.vmap(fn, (None, 0)))(w, x)):
        got = np.asarray(got)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", UNARY)
def test_unary_then_matmul_under_vmap(name):
    op = getattr(lax, name)
    _check(lambda w, v: op(v) @ w, _domain(name), _W)


@pytest.mark.parametrize("name", BINARY)
def test_binary_then_matmul_under_vmap(name):
    op = getattr(lax, name)
    _check(lambda w, v: op(v, v[::-1]) @ w, _X, _W)


def test_rsqrt_matmul_reproducer_matches_jax():
    x = (np.arange(24, dtype=np.float32).reshape(6, 4) % 7) + 1
    fn = lambda w, v: lax.rsqrt(v) @ w  # noqa: E731
    # jax 0.10.2: jax.jit(jax.vmap(fn, (None, 0)))(w, x)[:, :3]
    head = [
        [0.84045184, 0.89846134, 0.9564709],
        [1.0410442, 1.087574, 1.1341038],
        [0.7297478, 0.7762409, 0.82273406],
        [1.1248212, 1.1767653, 1.2287095],
        [0.65479302, 0.6950599, 0.73532683],
        [1.03656602, 1.09203315, 1.14750028],
    ]
    for f in (srcjax.vmap(fn, (None, 0)), srcjax.jit(srcjax.vmap(fn, (None, 0)))):
        got = f(_W, x)
        assert got.shape == (6, 12) and got.dtype == np.float32
        np.testing.assert_allclose(np.asarray(got)[:, :3], head, rtol=1e-6)
        assert np.asarray(got.sum(-1)).shape == (6,)


def test_stacking_arrays_never_gives_an_object_array():
    rows = [srcjax.numpy.ones(3) * i for i in range(4)]  # srcjax Arrays
    out = _stack_objects(rows)
    assert out.dtype == np.float32 and out.shape == (4, 3)
    np.testing.assert_array_equal(out[:, 0], [0, 1, 2, 3])


def test_stacking_a_mix_of_arrays_and_objects_is_an_error():
    class Thing:
        pass

    with pytest.raises(TransformValueError, match="mix arrays and other objects"):
        _stack_objects([Thing(), np.ones(3)])
    # objects of a user's class alone still make a batch of objects
    out = _stack_objects([Thing(), Thing()])
    assert out.dtype == object and out.shape == (2,)


# -- implementations return buffers ----------------------------------------------
# Generated code calls each primitive's implementation on plain buffers and reads
# the result as one (``type(a) is np.ndarray`` fast paths, the per-example
# fallback for user objects); an implementation that calls a public function
# (``jnp.sqrt`` ...) instead of its implementation got an Array back (lax.rsqrt,
# nn.gelu(approximate=False), ad.nan_deviation, ad.sum_of_products,
# ad.dot_left/right, ad.unravel_leaves).

#: the helpers whose results are Arrays by design: jit's last call, returning a
#: weakly typed value to the user (primitives/ad/casts.py)
_RETURNS_ARRAY = {"ad.weak_value", "ad.weak_leaves"}


def _holds_array(v, depth=0):
    from srcjax._array import Array

    if isinstance(v, Array):
        return True
    if isinstance(v, (list, tuple)) and depth < 3:
        return any(_holds_array(x, depth + 1) for x in v)
    if isinstance(v, dict) and depth < 3:
        return any(_holds_array(x, depth + 1) for x in v.values())
    return False


def _sample_calls():
    import srcjax.nn  # noqa: F401  (registers the nn primitives)
    import srcjax.scipy.special  # noqa: F401
    from srcjax.primitives import batch_rules  # noqa: F401
    from srcjax.primitives.registry import REGISTRY

    for name, p in sorted(REGISTRY.items()):
        if p.kind == "custom" or name in _RETURNS_ARRAY:
            continue
        if p.samples is not None:
            samples = p.samples(np.random.default_rng(0))
        elif p.kind == "elementwise" and p.test_domain:
            # operands in the primitive's test domain for its required parameters
            n = sum(
                1
                for q in p.signature.parameters.values()
                if q.default is q.empty and q.kind == q.POSITIONAL_OR_KEYWORD
            )
            lo, hi = p.test_domain
            samples = [(tuple(np.linspace(lo, hi, 3) for _ in range(n)), {})]
        else:
            continue
        for args, kwargs in samples:
            for dt in (np.float64, np.float32):
                cast = tuple(
                    a.astype(dt) if isinstance(a, np.ndarray) and a.dtype == np.float64 else a
                    for a in args
                )
                yield name, p, cast, kwargs


def test_no_implementation_returns_an_array():
    ran, bad = set(), set()
    for name, p, args, kwargs in _sample_calls():
        try:
            with np.errstate(all="ignore"):
                r = p.impl(*args, **kwargs)
        except Exception:  # noqa: BLE001  (a sample meant for another dtype)
            continue
        ran.add(name)
        if _holds_array(r):
            bad.add(name)
    assert len(ran) > 300, len(ran)
    assert {"lax.rsqrt", "nn.gelu", "ad.nan_deviation", "ad.sum_of_products"} <= ran
    assert not bad, sorted(bad)


def test_gelu_exact_then_matmul_under_vmap():
    _check(lambda w, v: srcjax.nn.gelu(v, approximate=False) @ w, _X - 0.5, _W)


def test_nanvar_gradient_then_matmul_under_vmap():
    x = np.where(np.arange(24).reshape(6, 4) % 5 == 0, np.nan, _X).astype(np.float32)
    _check(lambda w, v: srcjax.grad(srcjax.numpy.nanvar)(v) @ w, x, _W)


def test_unravel_then_matmul_under_vmap():
    from srcjax.flatten_util import ravel_pytree

    flat, unravel = ravel_pytree({"a": np.ones(4, np.float32), "b": np.arange(3, dtype=np.int32)})
    xs = np.stack([np.asarray(flat) * (i + 1) for i in range(6)])
    _check(lambda w, v: unravel(v)["a"] @ w, xs, _W)
