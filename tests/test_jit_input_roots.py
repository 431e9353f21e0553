"""jit's key walk collects the memory owners of the arguments' arrays
(``signature._canon(..., roots)``) so the output boundary does not walk the
arguments again. Oracle: ``outputs._input_roots`` of the canonical arguments
(the second walk it replaces), and NumPy's ``shares_memory`` on the results."""

import collections

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax.jit_api.outputs import _input_roots
from srcjax.tree_util import register_pytree_node_class


@register_pytree_node_class
class Layer:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def tree_flatten(self):
        return (self.w, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


Pair = collections.namedtuple("Pair", "a b")


def _arrays(rng, n):
    return [rng.standard_normal((3, 2)).astype(np.float32) for _ in range(n)]


def _cases():
    rng = np.random.default_rng(0)
    a, b, c, d = _arrays(rng, 4)
    base = rng.standard_normal((4, 3, 2)).astype(np.float32)
    yield (a,), {}
    yield (a[1:],), {}  # a view: its owner
    yield ([a, (b, {"z": c, "y": base[1]})],), {}
    yield (Layer(a, b), [Layer(c, d)]), {}
    yield (Pair(a, b), np.float64(2.0), 3.0), {}
    yield (a.astype(np.float64),), {}  # canonicalized: a new float32 array
    yield (srcjax.numpy.asarray(a), {"k": srcjax.numpy.asarray(b)}), {}
    yield (a,), {"kw": [b, c]}


@pytest.mark.parametrize("case", list(range(8)))
def test_the_key_walk_finds_the_roots_the_boundary_walk_finds(case):
    args, kwargs = list(_cases())[case]
    jf = srcjax.jit(lambda *a, **k: 0)
    roots = []
    _, cargs, ckwargs = jf._key(args, kwargs, None, roots)
    assert None not in roots
    assert set(roots) == _input_roots(cargs, ckwargs, frozenset())


def test_donated_arguments_are_not_roots():
    rng = np.random.default_rng(1)
    a, b = _arrays(rng, 2)
    jf = srcjax.jit(lambda x, y: x + y, donate_argnums=(0,))
    roots = []
    _, cargs, ckwargs = jf._key((a, [b]), {}, None, roots)
    assert set(roots) == _input_roots(cargs, ckwargs, frozenset({0})) == {id(b)}


def test_outputs_that_are_inputs_are_copied():
    rng = np.random.default_rng(2)
    a, b, c = _arrays(rng, 3)
    model = Layer(a, b)

    @srcjax.jit
    def f(m, xs, k):
        return Layer(m.w, m.b * 2), [xs[0], k["v"]], jnp.sum(m.w)

    out = f(model, [c], {"v": a[1:]})
    leaves = srcjax.tree_util.tree_leaves(out)
    for leaf in leaves:
        for inp in (a, b, c):
            assert not np.shares_memory(np.asarray(leaf), inp)
    np.testing.assert_array_equal(np.asarray(out[0].w), a)
    np.testing.assert_array_equal(np.asarray(out[1][1]), a[1:])


def test_const_arrays_are_made_once_read_only_and_keep_signed_zeros():
    from srcjax.primitives.ad.sums import _const_array

    a = _const_array(0.9, "float32")
    assert a is _const_array(0.9, "float32") and not a.flags.writeable
    assert a.dtype == np.float32 and a == np.float32(0.9)
    assert _const_array(1, "float32") is not _const_array(1.0, "float64")
    assert np.signbit(_const_array(-0.0, "float32")) and not np.signbit(
        _const_array(0.0, "float32")
    )
    assert np.isnan(_const_array(float("nan"), "float32"))
