"""jnp functions written as compositions of primitives (srcjax/numpy/_functions.py),
checked against values recorded from JAX 0.10.2 (tests/data/functions_jax.npz):
values, shapes and dtypes, eagerly and under grad, vmap and jit.

To re-record with JAX installed: ``SRCJAX_RECORD_JAX=1 python -m pytest
tests/test_functions.py`` (overwrites the .npz from jax itself)."""

import pathlib

import numpy as np
from helpers import assert_matches_recorded, jax_recorded

import srcjax
import srcjax.numpy as sjnp

DATA = pathlib.Path(__file__).parent / "data" / "functions_jax.npz"


def _compute(jax, jnp):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 4)).astype(np.float32)
    v = rng.normal(size=(4,)).astype(np.float32)
    z = np.array([1 + 2j, -1 - 0.5j, 3.0], np.complex64)
    b = a.copy()
    b[0, :] = np.nan
    b[1, 2] = np.nan
    r = {}
    r["atleast_shapes"] = np.array(
        [
            np.asarray(jnp.atleast_1d(1.0)).shape + (0, 0),
            np.asarray(jnp.atleast_2d(v)).shape + (0,),
            np.asarray(jnp.atleast_3d(a)).shape,
            np.asarray(jnp.atleast_3d(v)).shape,
        ],
        dtype=object,
    ).astype(str)
    r["atleast_many"] = np.array(len(jnp.atleast_1d(1.0, v)))
    r["column_stack"] = jnp.column_stack([v, v * 2, a.T])
    r["dstack"] = jnp.dstack([a, a + 1])
    r["hsplit"] = jnp.hsplit(a, 2)[1]
    r["vsplit"] = jnp.vsplit(np.ones((4, 2), np.float32) * np.arange(4)[:, None], [1])[1]
    r["fliplr"] = jnp.fliplr(a)
    r["flipud"] = jnp.flipud(a)
    for k in range(-1, 5):
        r[f"rot90_{k}"] = jnp.rot90(a, k)
    r["rot90_axes"] = jnp.rot90(np.arange(24.0).reshape(2, 3, 4).astype(np.float32), 1, (2, 0))
    r["permute_dims"] = jnp.permute_dims(np.arange(24.0).reshape(2, 3, 4), (2, 0, 1))
    r["tri"] = jnp.tri(3, 4, 1)
    r["tri_int"] = jnp.tri(3, dtype=jnp.int32)
    r["copysign"] = jnp.copysign(v, np.array([1.0, -0.0, 0.0, -2.0], np.float32))
    r["heaviside"] = jnp.heaviside(np.array([-1.0, 0.0, 2.0, np.nan], np.float32), 0.5)
    q, m = jnp.divmod(np.array([7, -7, 7, -7]), np.array([2, 2, -2, -2]))
    r["divmod_q"], r["divmod_r"] = q, m
    r["angle"] = jnp.angle(z)
    r["angle_deg"] = jnp.angle(z, deg=True)
    r["angle_real"] = jnp.angle(np.array([-1.0, 2.0]))
    r["iscomplexobj"] = np.array([jnp.iscomplexobj(z), jnp.iscomplexobj(a)])
    r["isscalar"] = np.array(
        [jnp.isscalar(1.0), jnp.isscalar(np.float32(1)), jnp.isscalar(v), jnp.isscalar([1])]
    )
    r["ptp"] = jnp.ptp(a, axis=1)
    r["ptp_all"] = jnp.ptp(a)
    r["select"] = jnp.select([a > 0.5, a < -0.5], [a, 2 * a], -1.0)
    r["cumulative_sum"] = jnp.cumulative_sum(v, include_initial=True)
    r["cumulative_sum_axis"] = jnp.cumulative_sum(a, axis=1)
    r["ediff1d"] = jnp.ediff1d(a, to_end=np.array([9.0]), to_begin=0.0)
    r["vecdot"] = jnp.vecdot(a, v)
    r["vecdot_complex"] = jnp.vecdot(z, z)
    r["isin"] = jnp.isin(np.array([[1, 2], [3, 4]]), np.array([2, 4, 6]))
    r["isin_invert"] = jnp.isin(np.array([1, 2]), np.array([2]), invert=True)
    r["digitize"] = jnp.digitize(v, np.array([-1.0, 0.0, 1.0], np.float32))
    r["digitize_right"] = jnp.digitize(
        np.array([0.0, 1.0, 2.5]), np.array([0.0, 1.0, 2.0]), right=True
    )
    r["digitize_decreasing"] = jnp.digitize(np.array([0.0, 1.0, 2.5]), np.array([2.0, 1.0, 0.0]))
    r["nanargmax"] = jnp.nanargmax(b, axis=1)
    r["nanargmin"] = jnp.nanargmin(b, axis=1)
    # derivatives and transforms
    r["grad_ptp"] = jax.grad(lambda x: jnp.sum(jnp.ptp(x, axis=0) ** 2))(a)
    r["grad_select"] = jax.grad(
        lambda x: jnp.sum(jnp.select([x > 0.5, x < -0.5], [x * x, jnp.sin(x)], 0.0))
    )(a)
    r["grad_rot90"] = jax.grad(lambda x: jnp.sum(jnp.rot90(x) * jnp.arange(12.0).reshape(4, 3)))(a)
    r["grad_copysign"] = jax.grad(lambda x: jnp.sum(jnp.copysign(x, -1.0) * x))(v)
    r["grad_vecdot"] = jax.grad(lambda x: jnp.sum(jnp.vecdot(x, v) ** 2))(a)
    r["grad_cumulative_sum"] = jax.grad(
        lambda x: jnp.sum(jnp.cumulative_sum(x, include_initial=True) ** 2)
    )(v)
    r["vmap_atleast_2d"] = jax.vmap(lambda x: jnp.atleast_2d(x).sum(0))(a)
    r["jit_rot90"] = jax.jit(lambda x: jnp.rot90(x, 3))(a)
    r["jit_dstack"] = jax.jit(lambda x: jnp.dstack([x, x]))(a)
    r["vmap_select"] = jax.vmap(lambda x: jnp.select([x > 0], [x], 5.0))(a)
    return {k: np.asarray(v) for k, v in r.items()}


def _compute_with_jax():
    import jax
    import jax.numpy as jjnp

    return _compute(jax, jjnp)


def test_values_shapes_dtypes_match_jax():
    recorded = jax_recorded(DATA, _compute_with_jax)
    assert_matches_recorded(_compute(srcjax, sjnp), recorded, rtol=1e-5, atol=1e-6)


def test_varargs_helper_is_inlined_under_transforms():
    """A `def f(*xs)` helper called from transformed code binds `xs` to a tuple
    (atleast_1d(*arys) needs it); each inlined call gets its own tuple."""
    from helpers_varargs import pair_total, single_total

    a = np.ones(2, np.float32)
    b = np.arange(2.0, dtype=np.float32)
    assert pair_total(a, b) == np.float32(33.0)
    np.testing.assert_array_equal(srcjax.grad(pair_total)(a, b), 30.0 * a)
    assert srcjax.jit(pair_total)(a, b) == np.float32(33.0)
    np.testing.assert_array_equal(
        srcjax.vmap(pair_total)(np.stack([a, b]), np.stack([b, a])), [33.0, 21.0]
    )
    # total() with no arguments, then total(a): the second call reads its own tuple
    np.testing.assert_array_equal(srcjax.grad(single_total)(a), 2.0 * a)


def test_cumulative_sum_accumulates_small_ints_as_sum():
    """Fresh-user run 5: cumulative_sum kept int8 and overflowed ([100, -56, 44]);
    JAX 0.10.2 accumulates in int32 (uint8 in uint32), as sum does."""
    got = sjnp.cumulative_sum(np.array([100, 100, 100], np.int8))
    assert got.dtype == np.int32 and list(got) == [100, 200, 300]
    assert sjnp.cumulative_sum(np.ones(3, np.uint8)).dtype == np.uint32
    assert sjnp.cumulative_sum(np.ones(3, np.float16)).dtype == np.float16


def test_rot90_by_a_full_turn_is_canonical():
    """Fresh-user run 5: rot90(k=4) of an int64 array returned int64 (JAX: int32)."""
    assert sjnp.rot90(np.arange(4).reshape(2, 2), 4).dtype == np.int32
