"""srcjax.primitives.batch_rules.runtime_*: the helpers batched code calls, each
checked against a Python loop over the examples (or NumPy on one example).

Every helper acts on a batch (leading axis of size B) as the per-example
operation acts on each example; the loop ``np.stack([op(x[i]) for i in
range(B)])`` is the oracle. Their derivative rules are checked by
tests/test_rules.py (every registered primitive with samples)."""

import numpy as np
import pytest

from srcjax.primitives.ad.indexing import _getitem
from srcjax.primitives.batch_rules import runtime_index as ri
from srcjax.primitives.batch_rules import runtime_products as rp
from srcjax.primitives.batch_rules import runtime_select as rs
from srcjax.primitives.batch_rules import runtime_shape as rsh
from srcjax.primitives.batch_rules import runtime_trees as rt

B = 4
rng = np.random.default_rng(0)


def loop(fn, *batched):
    """``fn`` per example of the batched operands, the results stacked."""
    return np.stack([fn(*(b[i] for b in batched)) for i in range(B)])


# ------------------------------------------------------------------ runtime_trees
def test_batch_broadcast_and_its_adjoint():
    x = rng.normal(size=(2, 3))
    b = rt._batch_broadcast(x, B)
    assert b.shape == (B, 2, 3) and all(np.array_equal(b[i], x) for i in range(B))
    b1 = rt._batch_broadcast(x, B, 1)
    assert b1.shape == (2, B, 3) and np.array_equal(b1[:, 3], x)
    # containers leaf by leaf, None stays
    t = rt._batch_broadcast({"a": x, "b": [None, 1.5]}, B)
    assert t["b"][0] is None and t["b"][1].shape == (B,)
    # the adjoint sums over the new axis
    g = rng.normal(size=(B, 2, 3))
    np.testing.assert_allclose(rt._batch_unbroadcast(g, B), sum(g[i] for i in range(B)))
    assert rt._batch_unbroadcast(None, B) is None


def test_lift_inserts_unit_axes_after_the_batch_axes():
    x = rng.normal(size=(B, 3))
    assert rt._lift(x, 3).shape == (B, 1, 1, 3)
    assert rt._lift(x, 1).shape == (B, 3)  # already of rank >= 1: unchanged
    assert rt._lift(np.zeros((2, B, 3)), 2, nb=2).shape == (2, B, 1, 3)
    assert rt._lift(2.0, 3) == 2.0  # a Python number stays one (weak type)


def test_tree_batch_in_and_out_move_axes_as_a_loop_over_examples():
    x = {"a": rng.normal(size=(3, B)), "b": rng.normal(size=(2,))}
    axes = {"a": 1, "b": None}
    xb = rt._tree_batch_in(x, axes, B)
    for i in range(B):
        np.testing.assert_array_equal(xb["a"][i], x["a"][:, i])
        np.testing.assert_array_equal(xb["b"][i], x["b"])
    back = rt._tree_batch_out(xb, {"a": 1, "b": 0})
    np.testing.assert_array_equal(back["a"], x["a"])
    assert back["b"].shape == (B, 2)
    with pytest.raises(ValueError, match="tree prefix"):
        rt._tree_batch_in(x, {"a": 1}, B)
    assert rt._tree_axis_size(x, axes) == B


def test_tree_batch_in_adjoint_sums_broadcast_leaves():
    x = {"a": rng.normal(size=(3, B)), "b": rng.normal(size=(2,))}
    g = {"a": rng.normal(size=(B, 3)), "b": rng.normal(size=(B, 2))}
    ct = rt._tree_batch_in_adjoint(g, x, {"a": 1, "b": None})
    np.testing.assert_allclose(ct["a"], g["a"].T)
    np.testing.assert_allclose(ct["b"], g["b"].sum(axis=0))


def test_tree_stack_and_tree_row_are_inverse():
    rows = [{"w": rng.normal(size=(2,)), "n": (np.float64(i),)} for i in range(B)]
    st = rt._tree_stack(rows)
    assert st["w"].shape == (B, 2) and st["n"][0].shape == (B,)
    for i in range(B):
        r = rt._tree_row(st, i)
        np.testing.assert_array_equal(r["w"], rows[i]["w"])
        assert r["n"][0] == i


def test_tree_axis_sum_is_psum_over_the_examples():
    x = rng.normal(size=(B, 3))
    np.testing.assert_allclose(rt._tree_axis_sum(x, B, True), x.sum(axis=0))
    np.testing.assert_allclose(rt._tree_axis_sum(x[0], B, False), B * x[0])
    np.testing.assert_allclose(rt._tree_axis_sum(x, B, True, scale=1 / B), x.mean(axis=0))
    ints = np.arange(B * 2).reshape(B, 2)
    assert rt._tree_axis_sum(ints, B, True, scale=0.5).dtype.kind == "f"  # pmean of ints
    assert rt._tree_axis_sum(2.0, B, False) == 2.0 * B


# ------------------------------------------------------------------ runtime_select
def test_select_is_a_per_example_where():
    take = np.array([True, False, True, False])
    a = rng.normal(size=(B, 2, 3))
    b = rng.normal(size=(B, 2, 3))
    want = loop(lambda t, u, v: u if t else v, take, a, b)
    np.testing.assert_array_equal(rs._select(take, a, b), want)
    # per-example ranks are aligned: a per-example scalar against a matrix
    s = rng.normal(size=(B,))
    want = loop(lambda t, u, v: np.broadcast_to(u, v.shape) if t else v, take, s, b)
    np.testing.assert_array_equal(rs._select(take, s, b), want)
    # a None side gives zeros where it is taken
    np.testing.assert_array_equal(
        rs._select(take, None, b), loop(lambda t, v: 0 * v if t else v, take, b)
    )


def test_select_refuses_different_per_example_shapes():
    take = np.array([True, False, True, False])
    with pytest.raises(Exception, match="different structures or shapes"):
        rs._select(take, rng.normal(size=(B, 2)), rng.normal(size=(B, 3)))


def test_select_ct_masks_and_sums_to_the_operand():
    take = np.array([True, False, True, False])
    g = rng.normal(size=(B, 3))
    x = rng.normal(size=(B, 1))  # broadcast per example along the last axis
    want = loop(lambda t, gi: (gi if t else 0 * gi).sum(keepdims=True), take, g)
    np.testing.assert_allclose(rs._select_ct(g, take, x, True), want)
    want = loop(lambda t, gi: (0 * gi if t else gi).sum(keepdims=True), take, g)
    np.testing.assert_allclose(rs._select_ct(g, take, x, False), want)


def test_branch_input_substitutes_a_taking_example():
    take = np.array([False, True, False, True])
    x = rng.normal(size=(B, 2))
    got = rs._branch_input(take, x)
    for i in range(B):
        np.testing.assert_array_equal(got[i], x[i] if take[i] else x[1])


def test_check_cond_types_reads_past_the_batch_axes():
    take = np.array([True, False, True, False])
    a = np.zeros((B, 3), np.float32)
    assert (
        rs._check_cond_types(take, a, np.zeros(3, np.float32), True, False, "cond", "t", "f")
        is None
    )
    with pytest.raises(TypeError, match="shapes do not match"):
        rs._check_cond_types(take, a, np.zeros(2, np.float32), True, False, "cond", "t", "f")


# ------------------------------------------------------------------ runtime_index
def test_static_metadata_helpers():
    assert ri._batch_axis(None, 4) == (1, 2, 3)
    assert ri._batch_axis(0, 3) == 1 and ri._batch_axis(-1, 3) == -1
    assert ri._batch_axis((0, -1), 3) == (1, -1)
    assert ri._batch_shape(B, (2, 3)) == (B, 2, 3) and ri._batch_shape(B, 5) == (B, 5)
    x = rng.normal(size=(B, 2, 3, 5))
    per = np.transpose(x[0], (2, 0, 1))
    np.testing.assert_array_equal(np.transpose(x, ri._batch_perm((2, 0, 1), 4))[0], per)
    np.testing.assert_array_equal(np.transpose(x, ri._batch_perm(None, 4))[0], x[0].T)
    assert ri._squeeze_axes((B, 1, 3, 1)) == (1, 3)
    assert ri._batch_pad_width(1, 3) == ((0, 0), (1, 1), (1, 1))
    assert ri._batch_starts(np.array([2, 1])) == (0, 2, 1)
    assert ri._static_join(None, 3) == 3 and ri._static_join((2, 3), (2, 3)) == (2, 3)
    with pytest.raises(Exception, match="static argument"):
        ri._static_join(1, 2)


@pytest.mark.parametrize(
    "idx",
    [
        1,
        (slice(None), 0),
        (np.array([2, 0]), slice(None)),
        (np.array([1, 0]), slice(None), np.array([0, 2])),
    ],
    ids=["int", "slice-int", "array-slice", "arrays-split-by-slice"],
)
def test_batch_index_indexes_every_example_alike(idx):
    x = rng.normal(size=(B, 3, 4, 5))
    np.testing.assert_array_equal(x[ri._batch_index(idx, B)], loop(lambda xi: xi[idx], x))


def test_gather_index_with_per_example_indices():
    x = rng.normal(size=(B, 5, 3))
    i = np.array([0, 4, 2, 1])  # one index per example
    got = x[ri._gather_index((i,), (True,), B)]
    np.testing.assert_array_equal(got, np.stack([x[b][i[b]] for b in range(B)]))
    # behind a slice: x[:, i] per example
    got = x[
        ri._gather_index((slice(None), np.array([2, 0, 1, 1])), (False, True), B, shape=x.shape)
    ]
    np.testing.assert_array_equal(got, np.stack([x[b][:, [2, 0, 1, 1][b]] for b in range(B)]))
    # out of bounds of one example's axis: the batched index is out of bounds of
    # the same axis, and the gather clamps it as JAX does per example (issue 16)
    idx = ri._gather_index((np.array([0, 5, 1, -9]),), (True,), B, shape=x.shape)
    got = _getitem(x, idx)
    np.testing.assert_array_equal(got, np.stack([x[b][[0, 4, 1, 0][b]] for b in range(B)]))


def test_bsearchsorted_row_by_row():
    a = np.sort(rng.normal(size=(B, 6)), axis=1)
    v = rng.normal(size=(B, 3))
    got = ri._bsearchsorted(a, v)
    np.testing.assert_array_equal(got, loop(np.searchsorted, a, v))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(
        ri._bsearchsorted(a, v, "right"), loop(lambda p, q: np.searchsorted(p, q, "right"), a, v)
    )


def test_example_len_and_size():
    x = rng.normal(size=(B, 3, 2))
    assert ri._example_len(x) == 3 and ri._example_size(x) == 6
    assert ri._example_len([1, 2]) == 2
    with pytest.raises(TypeError, match="unsized"):
        ri._example_len(rng.normal(size=(B,)))


# ------------------------------------------------------------------ runtime_products
def test_bunbroadcast_sums_to_the_per_example_shape():
    g = rng.normal(size=(B, 2, 3))
    x = rng.normal(size=(B, 1, 3))
    np.testing.assert_allclose(
        rp._bunbroadcast(g, x, True, True), loop(lambda gi: gi.sum(0, keepdims=True), g)
    )
    xs = rng.normal(size=(3,))  # unbatched x, batched g: still per example
    np.testing.assert_allclose(rp._bunbroadcast(g, xs, True, False), loop(lambda gi: gi.sum(0), g))


def test_bdot_per_example():
    a = rng.normal(size=(B, 3))
    b = rng.normal(size=(3, 2))
    np.testing.assert_allclose(rp._bdot(a, b, True, False), loop(lambda ai: np.dot(ai, b), a))
    bb = rng.normal(size=(B, 3))
    np.testing.assert_allclose(rp._bdot(a, bb, True, True), loop(np.dot, a, bb))


def test_rhs_column():
    a = rng.normal(size=(B, 3, 3))
    b = rng.normal(size=(B, 3))
    assert rp._rhs_column(b, a).shape == (B, 3, 1)
    assert rp._rhs_column(rng.normal(size=(B, 3, 2)), a).shape == (B, 3, 2)


# ------------------------------------------------------------------ runtime_shape
def test_bdiag_both_ways():
    v = rng.normal(size=(B, 3))
    np.testing.assert_array_equal(rsh._bdiag(v, 1), loop(lambda vi: np.diag(vi, 1), v))
    m = rng.normal(size=(B, 3, 4))
    np.testing.assert_array_equal(rsh._bdiag(m, -1), loop(lambda mi: np.diag(mi, -1), m))


def test_bjoin_and_bsplit():
    p = [rng.normal(size=(B, 2)), rng.normal(size=(B, 3))]
    np.testing.assert_array_equal(rsh._bjoin(p, "hstack"), loop(lambda u, w: np.hstack([u, w]), *p))
    q = [rng.normal(size=(B, 3)), rng.normal(size=(B, 2, 3))]
    np.testing.assert_array_equal(rsh._bjoin(q, "vstack"), loop(lambda u, w: np.vstack([u, w]), *q))
    g = rng.normal(size=(B, 5))
    pieces = rsh._bsplit(g, p, "hstack")
    np.testing.assert_array_equal(pieces[0], g[:, :2])
    np.testing.assert_array_equal(pieces[1], g[:, 2:])


def test_bbroadcast_like_aligns_per_example_ranks():
    x = rng.normal(size=(B, 3))
    like = np.zeros((2, 3))
    np.testing.assert_array_equal(
        rsh._bbroadcast_like(x, like, True, False), loop(lambda xi: np.broadcast_to(xi, (2, 3)), x)
    )


def test_fold_and_unfold_axes():
    x = rng.normal(size=(2, B, 3, 5))
    f = rsh._fold_axes(x, 1)
    assert f.shape == (2, B * 3, 5)
    np.testing.assert_array_equal(f[1, 3 * 2 + 1], x[1, 2, 1])
    np.testing.assert_array_equal(rsh._unfold_axes(f, B, 1), x)
    assert rsh._axis_len(x, 2) == 3


def test_bkron_shape_reshapes_to_the_per_example_kron():
    a = rng.normal(size=(B, 2, 3))
    b = rng.normal(size=(4, 1))
    sa, sb, out = (rsh._bkron_shape(a, b, True, False, w) for w in (0, 1, 2))
    got = np.reshape(np.reshape(a, sa) * np.reshape(b, sb), out)
    np.testing.assert_allclose(got, loop(lambda ai: np.kron(ai, b), a))
