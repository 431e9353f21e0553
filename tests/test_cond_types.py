"""lax.cond / lax.switch branches with different output types raise JAX's
TypeError under jit (from the abstract values of both branches) and under vmap
(a mixed batch runs both branches), as eagerly (user L r22).

Expected values and error kinds were recorded from jax 0.10.2 on CPU."""

import gast
import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax
from srcjax.frontend.normalize import normalize
from srcjax.frontend.source import get_source
from srcjax.primitives.batch_rules import _check_cond_types


def _probe(x):
    return lax.cond(x > 0, lambda v: v, lambda v: -v, x)


def _normalizer_marks_branches() -> bool:
    """Whether the normalizer marks a lax.cond's `if` for the output type check
    (srcjax/frontend/normalize/lax_calls.py, ``sj_lax_branches``)."""
    node = normalize(get_source(_probe)).node
    return any(getattr(n, "sj_lax_branches", None) for n in gast.walk(node))


marked = pytest.mark.skipif(
    not _normalizer_marks_branches(),
    reason="the normalizer does not mark lax.cond/switch ifs yet (sj_lax_branches)",
)


def shape_mismatch(x):
    return lax.cond(x > 0, lambda v: v, lambda v: jnp.stack([v, v]), x)


def tuple_list(x):
    return lax.cond(x > 0, lambda v: (v, v), lambda v: [v, v], x)


def dict_keys(x):
    return lax.cond(x > 0, lambda v: {"a": v}, lambda v: {"b": v}, x)


def weak_int(x):
    return lax.cond(x > 0, lambda v: v, lambda v: 1, x)


def matrices(x):
    return lax.cond(x.sum() > 0, lambda v: v @ v.T, lambda v: v.T @ v, x)


def switch_dtypes(i):
    return lax.switch(i, [lambda: 1.0, lambda: jnp.int32(1), lambda: 2.0])


BAD = [
    (shape_mismatch, 1.0, np.array([1.0, -1.0], np.float32), "shapes do not match"),
    (tuple_list, 1.0, np.array([1.0, -1.0], np.float32), "pytree structure"),
    (dict_keys, 1.0, np.array([1.0, -1.0], np.float32), "pytree structure"),
    (weak_int, 2.0, np.array([2.0, -2.0], np.float32), "dtypes do not match"),
    (
        matrices,
        np.ones((2, 3), np.float32),
        np.stack([np.ones((2, 3)), -np.ones((2, 3))]),
        "shapes",
    ),
    (switch_dtypes, 1, np.array([0, 1, 2], np.int32), "dtypes do not match"),
]


@pytest.mark.parametrize("f,x,xs,what", BAD, ids=lambda v: getattr(v, "__name__", ""))
def test_eager_raises(f, x, xs, what):
    with pytest.raises(TypeError, match=what):
        f(x)


@marked
@pytest.mark.parametrize("f,x,xs,what", BAD, ids=lambda v: getattr(v, "__name__", ""))
def test_jit_raises(f, x, xs, what):
    # jax 0.10.2: TypeError for each of these under jit
    with pytest.raises(TypeError, match=what):
        srcjax.jit(f)(x)


@marked
@pytest.mark.parametrize("f,x,xs,what", BAD, ids=lambda v: getattr(v, "__name__", ""))
def test_vmap_mixed_batch_raises(f, x, xs, what):
    # jax 0.10.2: TypeError under vmap (before: the scalar branch was broadcast)
    with pytest.raises(TypeError, match=what):
        srcjax.vmap(f)(xs)


def weak_float_ok(x):
    return lax.cond(x > 0, lambda v: v, lambda v: 1.0, x)


def loop(x):
    def body(i, c):
        return lax.cond(i % 2 == 0, lambda c: c + 1.0, lambda c: c * 2.0, c)

    return lax.fori_loop(0, 5, body, x)


def smooth(x):
    return lax.cond(x > 0, lambda v: v * 2.0, lambda v: jnp.sin(v), x)


def test_matching_types_still_run():
    # values recorded from jax 0.10.2: a weak 1.0 matches float32 (JAX ignores
    # weak types); a cond in a loop; vmap(grad) through a cond under jit
    assert srcjax.jit(weak_float_ok)(np.float32(2.0)) == 2.0
    assert srcjax.jit(weak_float_ok)(np.float32(-2.0)) == 1.0
    np.testing.assert_array_equal(
        srcjax.vmap(weak_float_ok)(np.array([2.0, -2.0], np.float32)), [2.0, 1.0]
    )
    assert srcjax.jit(loop)(np.float32(1.0)) == 11.0
    np.testing.assert_array_equal(srcjax.vmap(loop)(np.array([1.0, 2.0], np.float32)), [11.0, 15.0])
    g = srcjax.jit(srcjax.vmap(srcjax.grad(smooth)))(np.array([1.0, -1.0], np.float32))
    np.testing.assert_allclose(g, [2.0, 0.5403023], rtol=1e-6)


@marked
def test_switch_vmap_all_pairs():
    # a batch reaching only branches 1 and 2, and one reaching all three
    for idx in ([1, 2], [0, 1, 2], [2, 0, 1]):
        with pytest.raises(TypeError, match="switch branches"):
            srcjax.vmap(switch_dtypes)(np.array(idx, np.int32))


def test_check_cond_types_helper():
    take = np.array([True, False])
    # batched scalar vs an unbatched (2,) value: per-example shapes () and (2,)
    with pytest.raises(TypeError, match=r"float32\[\] .* float32\[2\]"):
        _check_cond_types(
            take,
            np.zeros(2, np.float32),
            np.zeros(2, np.float32),
            True,
            False,
            "cond",
            "true_fun",
            "false_fun",
        )
    # equal per-example types pass
    _check_cond_types(
        take, np.zeros((2, 3), np.float32), np.zeros(3, np.float32), True, False, "cond", "a", "b"
    )
