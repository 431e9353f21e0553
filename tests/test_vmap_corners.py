"""vmap corner cases found by user L: user classes with ``__getitem__``/operators,
dead branches of a constant ``if``, per-example slice bounds, shape queries in
``assert``/``raise``, error messages naming one example's axes and shapes.

Expected values were recorded from jax 0.10.2 on CPU (noted at each test)."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax, tree_util


# -- user classes (r24) ---------------------------------------------------------------
class Pair:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __getitem__(self, i):
        return self.a if i == 0 else self.b

    def total(self):
        return self.a + self.b


class SeqPair(Pair):
    # __len__ and a __getitem__ that never raises IndexError: NumPy reads it as an
    # endless sequence (stacking these hung)
    def __mul__(self, s):
        return SeqPair(self.a * s, self.b * s)

    def __len__(self):
        return 2


@tree_util.register_pytree_node_class
class TreePair(SeqPair):
    def __mul__(self, s):
        return TreePair(self.a * s, self.b * s)

    def tree_flatten(self):
        return (self.a, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


class Affine:
    def __init__(self, c):
        self.c = c

    def __call__(self, t):
        return self.c * t + 1.0


def pair_item(x):
    return Pair(x, x * 2)[1] * 2.0


def seq_scaled(x):
    return (SeqPair(x, x * 2) * 3.0)[1]


def tree_scaled(x):
    return (TreePair(x, x * 2) * 3.0)[1]


def call_object(x):
    return Affine(x)(2.0)


def last_item_and_len(x):
    w = SeqPair(x, x * 2)
    return w[len(w) - 1] + len(w)


def attrs_and_method(x):
    v = Pair(x, x * 2)
    return v.a * 3.0 + v.total()


def test_user_class_getitem_and_operators():
    xs = np.array([1.0, 2.0], np.float32)
    # jax 0.10.2: [4. 8.] and [6. 12.] (also for the registered class)
    np.testing.assert_array_equal(srcjax.vmap(pair_item)(xs), [4.0, 8.0])
    np.testing.assert_array_equal(srcjax.vmap(seq_scaled)(xs), [6.0, 12.0])
    np.testing.assert_array_equal(srcjax.vmap(tree_scaled)(xs), [6.0, 12.0])
    np.testing.assert_array_equal(srcjax.jit(srcjax.vmap(seq_scaled))(xs), [6.0, 12.0])
    np.testing.assert_array_equal(
        srcjax.vmap(srcjax.vmap(pair_item))(np.ones((2, 3))), np.full((2, 3), 4.0)
    )
    # jax 0.10.2: [6. 12.] (attributes and a method of a per-example object)
    np.testing.assert_array_equal(srcjax.vmap(attrs_and_method)(xs), [6.0, 12.0])
    # jax 0.10.2: [4. 6.] (len() of a per-example object is its own __len__)
    np.testing.assert_array_equal(srcjax.vmap(last_item_and_len)(xs), [4.0, 6.0])
    # a Python loop over the examples
    np.testing.assert_array_equal(srcjax.vmap(call_object)(xs), [2.0 * v + 1.0 for v in xs])


# -- dead branches and per-example slice bounds (r07, r07b) ---------------------------
M = np.arange(12.0, dtype=np.float32).reshape(3, 4)
IDX = np.array([[0, 1], [2, 3], [3, 3]], np.int32)


def dead_slice(r, i):
    return r[i[0] : i[0] + 1] if False else r[i]


def flag_off(r, i):
    use_slice = False
    if use_slice:
        return r[i[0] : i[0] + 1]
    return r[i]


def test_constant_if_batches_only_the_live_branch():
    # jax 0.10.2: [[0 1] [6 7] [11 11]]
    want = [[0.0, 1.0], [6.0, 7.0], [11.0, 11.0]]
    np.testing.assert_array_equal(srcjax.vmap(dead_slice)(M, IDX), want)
    np.testing.assert_array_equal(srcjax.vmap(flag_off)(M, IDX), want)


def live_slice(r, i):
    return r[i : i + 1]


def test_per_example_slice_bound_is_a_clear_index_error():
    # jax 0.10.2: IndexError "Slice entries must be static integers"
    with pytest.raises(IndexError, match="slice .* differs per example") as info:
        srcjax.vmap(live_slice)(M, np.array([0, 2, 3], np.int32))
    assert "test_vmap_corners.py" in str(info.value)
    # the fixed-size per-example window it suggests (jax 0.10.2: [[0] [6] [11]])
    got = srcjax.vmap(lambda r, i: lax.dynamic_slice(r, (i,), (1,)))(
        M, np.array([0, 2, 3], np.int32)
    )
    np.testing.assert_array_equal(got, [[0.0], [6.0], [11.0]])


# -- shape queries in assert / raise (r17) --------------------------------------------
def checked(x):
    assert x.ndim == 1 and x.shape == (3,) and len(x) == 3 and x.size == 3 and jnp.shape(x) == (3,)
    return x * 2


def wrong_shape(x):
    assert x.shape == (4,), f"got {x.shape}"
    return x


def raises_with_shape(x):
    if x.shape[0] != 4:
        raise ValueError(f"bad shape {x.shape}")
    return x


def test_assert_and_raise_see_one_example():
    x = np.ones((2, 3), np.float32)
    # jax 0.10.2: [[2 2 2] [2 2 2]]
    np.testing.assert_array_equal(srcjax.vmap(checked)(x), np.full((2, 3), 2.0))
    np.testing.assert_array_equal(srcjax.jit(srcjax.vmap(checked))(x), np.full((2, 3), 2.0))
    # jax 0.10.2: AssertionError "got (3,)", ValueError "bad shape (3,)"
    with pytest.raises(AssertionError, match=r"got \(3,\)"):
        srcjax.vmap(wrong_shape)(x)
    with pytest.raises(ValueError, match=r"bad shape \(3,\)"):
        srcjax.vmap(raises_with_shape)(x)


# -- messages naming one example (r26, r18) -------------------------------------------
def take_row(a, i):
    return a[i]


def test_out_of_bounds_clamps_per_example():
    # JAX's gather clamps an index out of bounds of one example's axis (was
    # NumPy's IndexError; issue 16); jax 0.10.2: [0, 7, 11] and [0, 4, 11]
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(
        srcjax.vmap(take_row)(a, np.array([0, 9, -1], np.int32)), [0, 7, 11]
    )
    np.testing.assert_array_equal(
        srcjax.vmap(take_row)(a, np.array([0, -5, -1], np.int32)), [0, 4, 11]
    )
    # in bounds: the rows, as a loop
    np.testing.assert_array_equal(srcjax.vmap(take_row)(a, np.array([0, 3, -1])), [0.0, 7.0, 11.0])


def helper(w, x):
    return jnp.dot(w, x)


def loss(w, x):
    return jnp.sum(helper(w, x) ** 2)


def test_contraction_error_names_example_shapes_and_line():
    # jax 0.10.2 (eager, grad, vmap, vmap of grad alike): TypeError "dot_general
    # requires contracting dimensions to have the same shape, got (2,) and (3,)."
    w, xs = np.ones((3, 2), np.float32), np.ones((4, 3), np.float32)
    for f in (
        srcjax.vmap(loss, in_axes=(None, 0)),
        srcjax.vmap(srcjax.grad(loss), in_axes=(None, 0)),
    ):
        with pytest.raises(TypeError, match=r"got \(2,\) and \(3,\)") as info:
            f(w, xs)
        assert "test_vmap_corners.py" in str(info.value)
    with pytest.raises(TypeError, match=r"got \(2,\) and \(3,\)"):
        srcjax.vmap(lambda a, b: a @ b)(np.ones((4, 3, 2), np.float32), xs)


class Scale:
    def __init__(self, a):
        self.a = a

    def __matmul__(self, v):
        return self.a * v


def scale_matmul(x):
    return Scale(3.0) @ x


def object_matmul(x):
    return Scale(x) @ 2.0


def test_user_class_matmul_per_example():
    # jax 0.10.2: [3. 6.] and [2. 4.] (the class's own __matmul__)
    xs = np.array([1.0, 2.0], np.float32)
    np.testing.assert_array_equal(srcjax.vmap(scale_matmul)(xs), [3.0, 6.0])
    np.testing.assert_array_equal(srcjax.vmap(object_matmul)(xs), [2.0, 4.0])


# -- an effect called as a statement with a batched *args operand (helper W) ----------
def test_effect_statement_with_batched_varargs_runs_per_example():
    """A primitive called for its effect (no result used) whose batched operand is
    one of its ``*args`` was not batched: it ran once on the whole batch."""
    from srcjax.primitives import registry

    seen = []
    name = "ad.test_varargs_effect"
    prim = registry.register(
        registry.Primitive(
            name,
            lambda *xs: seen.append([np.shape(x) for x in xs]),
            kind="internal",
            differentiable=False,
        )
    )
    prim.def_batch(lambda c: None)  # no rule: one call per example

    def f(x):
        prim(x, 2.0)
        return x

    try:
        out = srcjax.vmap(f)(np.ones((2, 3), np.float32))
    finally:
        del registry.REGISTRY[name]
    np.testing.assert_array_equal(out, np.ones((2, 3)))
    assert seen == [[(3,), ()], [(3,), ()]]  # a Python loop's calls


# -- lax.select_n with a per-example `which` (helper V) ---------------------------------
SX = np.array([[0.5, 1.25, -2.0], [3.0, 0.25, -0.75]], np.float32)


def _select(w, a, b):
    return lax.select_n(w, a, b)


def test_select_n_with_a_per_example_which():
    # its shape checks saw the batch axis: TypeError "`which` must be scalar ..."
    w = np.array([0, 1], np.int32)
    # jax 0.10.2 for each in_axes
    want = [[0.5, 1.25, -2.0], [-3.0, -0.25, 0.75]]
    np.testing.assert_array_equal(srcjax.vmap(_select)(w, SX, -SX), want)
    got = srcjax.vmap(_select, in_axes=(0, None, None))(w, SX[0], -SX[0])
    np.testing.assert_array_equal(got, [[0.5, 1.25, -2.0], [-0.5, -1.25, 2.0]])
    got = srcjax.vmap(_select, in_axes=(None, 0, 0))(np.array([0, 1, 1], np.int32), SX, -SX)
    np.testing.assert_array_equal(got, [[0.5, -1.25, 2.0], [3.0, -0.25, 0.75]])
    with pytest.raises(TypeError, match="same shape"):  # one example's shapes differ
        srcjax.vmap(_select)(np.zeros((2, 2), np.int32), SX, -SX)


# -- an array-valued condition per example (user Y) -----------------------------------
def _branchy(x):
    if x > 0:
        return jnp.sum(x)
    return -jnp.sum(x)


def _loopy(x):
    while x > 0.5:
        x = x / 2
    return jnp.sum(x)


def test_an_array_condition_per_example_is_ambiguous():
    # was a (2, 2) result from a scalar function (if) and numbers (while); JAX raises
    xs = np.array([[1.0, -2.0], [1.0, -2.0]], np.float32)
    for f in (_branchy, _loopy):
        with pytest.raises(TypeError, match="ambiguous") as e:
            srcjax.vmap(f)(xs)
        assert "test_vmap_corners.py" in str(e.value)
    with pytest.raises(ValueError, match="ambiguous"):  # NumPy's type too
        srcjax.vmap(lambda x: lax.cond(x > 0, jnp.sum, lambda v: -jnp.sum(v), x))(xs)


def test_scalar_conditions_per_example_still_branch():
    # one bool per example, also under two vmaps: jax [1.5, 2.0] and [[1.5, 2.0]] * 2
    xs = np.array([1.5, -2.0], np.float32)
    np.testing.assert_array_equal(srcjax.vmap(_branchy)(xs), [1.5, 2.0])
    np.testing.assert_array_equal(
        srcjax.vmap(srcjax.vmap(_branchy))(np.stack([xs, xs])), [[1.5, 2.0]] * 2
    )
    np.testing.assert_allclose(
        srcjax.vmap(_loopy)(np.array([3.0, 0.25], np.float32)), [0.375, 0.25]
    )


def _tagged(x):
    tag = f"{x.shape}:{x.ndim}"  # one example's shape and rank
    return x.sum() + len(tag)


def test_fstring_of_a_shape_under_vmap_sees_one_example():
    # was the batch's shape (2, 3), then len() of an unsized object (user Y);
    # jax: len("(3,):1") = 6, so [9. 9.]
    np.testing.assert_array_equal(srcjax.vmap(_tagged)(np.ones((2, 3), np.float32)), [9.0, 9.0])
    np.testing.assert_array_equal(srcjax.jit(_tagged)(np.ones(3, np.float32)), 9.0)
