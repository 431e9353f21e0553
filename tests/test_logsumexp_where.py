"""``logsumexp(..., where=mask)`` (jax.nn and jax.scipy.special; fresh-user bug
32: a TypeError eagerly, an UnsupportedSyntaxError under jit/grad). Only the
selected entries enter the max and the sum, whatever the others hold (a large
value, a NaN), and the gradient is 0 at the others. Oracle: values recorded from
jax 0.10.2."""

import numpy as np
import pytest
from helpers import assert_close

import srcjax
import srcjax.numpy as jnp
from srcjax.scipy import special

X1 = np.array([1.0, 2.0, 3.0, 40.0], np.float32)
M1 = np.array([True, True, True, False])
X = np.array([[1.0, 2.0, np.nan], [0.5, -1.0, 3.0]], np.float32)
M = np.array([[True, True, False], [True, False, True]])
B = np.array([2.0, 0.5, 1.5], np.float32)


def test_masked_logsumexp_and_its_gradient():
    for lse in (srcjax.nn.logsumexp, special.logsumexp):
        f = lambda x, lse=lse: lse(x, where=M1)  # noqa: E731
        for fn in (f, srcjax.jit(f)):
            assert_close(fn(X1), 3.407606, rtol=1e-6)
        for g in (srcjax.grad(f), srcjax.jit(srcjax.grad(f))):
            assert_close(g(X1), [0.09003057, 0.24472848, 0.66524094, 0.0], rtol=1e-5)


def test_masked_logsumexp_with_axis_weights_and_sign():
    assert_close(special.logsumexp(X, axis=1, where=M), [2.3132615, 3.0788898], rtol=1e-6)
    assert_close(
        special.logsumexp(X, axis=1, b=B, where=M, keepdims=True), [[2.2116852], [3.5093265]]
    )
    out, sign = special.logsumexp(X, axis=0, b=-B, where=M, return_sign=True)
    assert_close(out, [2.1672242, 1.3068528, 3.4054651], rtol=1e-6)
    assert_close(sign, [-1.0, -1.0, -1.0])
    g = srcjax.grad(lambda x: jnp.sum(special.logsumexp(x, axis=1, b=B, where=M)))(X)
    want = [[0.5953903, 0.40460968, 0.0], [0.09864977, 0.0, 0.90135014]]
    assert_close(g, want, rtol=1e-5)
    assert float(srcjax.nn.logsumexp(X, where=np.zeros_like(M))) == -np.inf
    per_row = srcjax.vmap(lambda r, w: srcjax.nn.logsumexp(r, where=w))(X, M)
    assert_close(per_row, [2.3132615, 3.0788898], rtol=1e-6)


def test_an_unknown_keyword_is_a_type_error_at_the_call():
    """JAX: TypeError "logsumexp() got an unexpected keyword argument 'wher'"; under
    jit srcjax's said UnsupportedSyntaxError."""
    with pytest.raises(TypeError, match="unexpected keyword argument 'wher'"):
        srcjax.nn.logsumexp(X1, wher=M1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'wher'") as info:
        srcjax.jit(lambda x: special.logsumexp(x, wher=M1))(X1)
    assert "test_logsumexp_where.py:" in str(info.value)
