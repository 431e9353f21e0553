"""A list of functions indexed and called (fresh-user round 7, item 11: lambdas
as values): ``acts = [jnp.tanh, lambda z: z * 2]; acts[i](x)``. A constant index
calls that function; an index known only at run time (a loop's ``i``, a Python
int in JAX, where a list index is never traced) dispatches with an ``if`` chain,
each function inlined in its branch, so grad and vmap see the code (a list of
jnp functions called by index was a run-time call before: no derivative).
Expected: JAX 0.10.2 (``jax.jit(f)(x)``, ``jax.grad(f)(x)``), recorded."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax.errors import UnsupportedSyntaxError

X = np.arange(1, 7, dtype=np.float32) / 4


def loop_index(x):
    acts = [jnp.tanh, lambda z: z * 2]
    out = 1.0 * x  # (`out = x`: refused by the list-copy analysis of 2c64ccd, see the report)
    for i in range(2):
        out = acts[i](out)
    return out.sum()


def constant_index(x):
    acts = [lambda z: jnp.sin(z), jnp.cos, lambda z: z**2]
    return (acts[0](x) + acts[-1](x) * acts[1](x)).sum()


def while_index(x):
    acts = (jnp.tanh, jnp.exp)
    i = 0
    out = 1.0 * x
    while i < 2:
        out = acts[i](out)
        i += 1
    return out.sum()


CASES = {
    loop_index: (
        7.71442174911499,
        [1.8800296783447266, 1.5728954076766968, 1.193171501159668, 0.8399486541748047]
        + [0.5608296990394592, 0.36141344904899597],
    ),
    constant_index: (
        6.080099105834961,
        [1.4379059076309204, 1.6353087425231934, 1.4458003044128418, 0.7794358730316162]
        + [-0.3791601359844208, -1.9614149332046509],
    ),
    while_index: (
        11.701872825622559,
        [1.2008854150772095, 1.24843168258667, 1.1259382963180542, 0.8994537591934204]
        + [0.6549466252326965, 0.4467609226703644],
    ),
}


@pytest.mark.parametrize("f", list(CASES), ids=lambda f: f.__name__)
def test_indexed_function_lists_as_jax(f):
    value, grad = CASES[f]
    for g in (f, srcjax.jit(f)):
        np.testing.assert_allclose(float(g(X)), value, rtol=1e-6)
    for d in (srcjax.grad(f), srcjax.jit(srcjax.grad(f))):
        np.testing.assert_allclose(np.asarray(d(X)), grad, rtol=1e-5)
    got = np.asarray(srcjax.vmap(f)(np.stack([X, X])))
    np.testing.assert_allclose(got, [value, value], rtol=1e-6)


def test_a_constant_index_out_of_range_is_located():
    def f(x):
        acts = [jnp.tanh, lambda z: z * 2]
        return acts[2](x)

    with pytest.raises(UnsupportedSyntaxError, match=r"test_function_lists.py:\d+:\d+: index 2"):
        srcjax.jit(f)(X)


def test_listed_functions_that_only_read_keep_an_alias_of_the_argument():
    """``out = x`` then ``out = acts[i](out)``: the list-copy analysis (copies.py)
    asks whether the call may change ``out`` in place; each function the list
    holds only reads it (jnp functions), so the copy is no alias to refuse.
    JAX 0.10.2: jit value 11.701872825622559 (as while_index)."""

    def f(x):
        acts = (jnp.tanh, jnp.exp)
        out = x
        for i in range(2):
            out = acts[i](out)
        return out.sum()

    np.testing.assert_allclose(float(srcjax.jit(f)(X)), 11.701872825622559, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(srcjax.grad(f)(X)), CASES[while_index][1], rtol=1e-5)
