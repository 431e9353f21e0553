"""pmap's results are sharded Arrays (srcjax/_sharding.py, srcjax/pmap_api.py).

Strings marked "JAX" were printed by jax 0.10.2 with
``XLA_FLAGS=--xla_force_host_platform_device_count=2`` for
``jax.pmap(lambda x: x * 2)(jnp.arange(6.).reshape(2, 3))`` (CI has no jax).
"""

import pickle

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import _spmd as spmd
from srcjax import lax, pmap_api
from srcjax.backends import runtime
from srcjax.sharding import NamedSharding, PartitionSpec, SingleDeviceSharding


@pytest.fixture
def two():
    before = srcjax.config.read("jax_num_cpu_devices")
    srcjax.config.update("jax_num_cpu_devices", 2)
    yield srcjax.devices()
    srcjax.config.update("jax_num_cpu_devices", before)


def double(x):
    return x * 2


def test_result_is_a_sharded_array_as_jax_prints_it(two):
    y = srcjax.pmap(double)(jnp.arange(6.0).reshape(2, 3))
    assert isinstance(y, srcjax.Array) and not isinstance(y, np.ndarray)
    assert repr(y) == "Array([[ 0.,  2.,  4.],\n       [ 6.,  8., 10.]], dtype=float32)"  # JAX
    assert repr(y.sharding) == (  # JAX
        "NamedSharding(mesh=Mesh('_internal_pmap_axis_name': 2, axis_types=(Auto,)), "
        "spec=P('_internal_pmap_axis_name',), memory_kind=device)"
    )
    assert isinstance(y.sharding, NamedSharding)
    assert y.devices() == set(two) and y.sharding.device_set == set(two)
    assert y.device is y.sharding  # JAX: an array on several devices answers its sharding
    assert y.is_fully_addressable and not y.is_fully_replicated
    assert y.sharding.shard_shape(y.shape) == (1, 3)  # JAX
    assert y.sharding.num_devices == 2
    shards = y.addressable_shards
    assert [s.device for s in shards] == two
    assert [s.index for s in shards] == [  # JAX
        (slice(0, 1, None), slice(None, None, None)),
        (slice(1, 2, None), slice(None, None, None)),
    ]
    assert [s.replica_id for s in shards] == [0, 0]
    np.testing.assert_array_equal(shards[1].data, [[6.0, 8.0, 10.0]])  # JAX
    assert isinstance(shards[1].data, srcjax.Array) and shards[1].data.shape == (1, 3)
    np.testing.assert_array_equal(y.addressable_data(0), [[0.0, 2.0, 4.0]])
    assert y.sharding.devices_indices_map(y.shape) == {d: s.index for d, s in zip(two, shards)}


def test_result_indexes_and_converts_like_any_array(two):
    y = srcjax.pmap(double)(jnp.arange(6.0).reshape(2, 3))
    want = np.arange(6.0, dtype=np.float32).reshape(2, 3) * 2
    a = np.asarray(y)
    assert a.dtype == np.float32 and not a.flags.writeable
    np.testing.assert_array_equal(a, want)
    np.testing.assert_array_equal(y[1], want[1])
    np.testing.assert_array_equal(y[:, 1:], want[:, 1:])
    assert float(jnp.sum(y)) == 30.0  # JAX
    np.testing.assert_array_equal(y + 1, want + 1)
    np.testing.assert_array_equal(srcjax.jit(lambda v: v.T)(y), want.T)
    assert y.tolist() == want.tolist()
    assert isinstance(y + 1, srcjax.Array) and isinstance((y + 1).sharding, SingleDeviceSharding)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(y)), want)
    np.testing.assert_array_equal(srcjax.pmap(double)(y), want * 2)  # fed back in
    with pytest.raises(TypeError, match="immutable"):
        y[0, 0] = 1.0


def test_out_axes_and_replicated_results(two):
    x = jnp.arange(6.0).reshape(2, 3)
    y = srcjax.pmap(double, out_axes=1)(x)
    assert y.shape == (3, 2)
    assert y.sharding.spec == PartitionSpec(None, "_internal_pmap_axis_name")  # JAX
    assert y.addressable_shards[0].index == (slice(None), slice(0, 1, None))  # JAX
    r = srcjax.pmap(lambda v: lax.psum(v, "i"), axis_name="i", out_axes=None)(x)
    np.testing.assert_array_equal(r, [3.0, 5.0, 7.0])
    assert r.is_fully_replicated and r.sharding.spec == PartitionSpec()
    assert [s.index for s in r.addressable_shards] == [(slice(None),)] * 2


def test_ordinary_arrays_have_a_single_device_sharding():
    a = jnp.arange(3.0)
    assert a.sharding == SingleDeviceSharding(srcjax.devices()[0])
    assert a.devices() == {srcjax.devices()[0]} and a.device == srcjax.devices()[0]
    assert a.is_fully_replicated and a.is_fully_addressable
    (s,) = a.addressable_shards
    assert s.index == (slice(None),)
    np.testing.assert_array_equal(s.data, [0.0, 1.0, 2.0])


def test_large_outputs_are_stacked_by_the_devices(two):
    # outputs of >= 1 MiB per device are copied into one pooled buffer by the
    # device threads (pmap_api._Collector); the numbers are np.stack's
    x = np.random.default_rng(0).standard_normal((2, 300_000)).astype(np.float32)

    def f(v):
        return {"a": jnp.sin(v), "b": (v * 2).reshape(3, -1)}

    for out_axes in (0, 1, -1):
        got = srcjax.pmap(f, out_axes=out_axes)(x)
        for k in ("a", "b"):
            rows = [np.asarray(srcjax.jit(f)(x[i])[k]) for i in range(2)]
            ax = out_axes if out_axes >= 0 else out_axes + rows[0].ndim + 1
            np.testing.assert_array_equal(got[k], np.stack(rows, axis=ax))
            assert got[k].sharding.spec[ax] == "_internal_pmap_axis_name"
            assert [s.device for s in got[k].addressable_shards] == two


def test_outputs_computed_in_their_rows_of_the_stacked_output(two, monkeypatch):
    # from the second call with the same shapes, each device's output allocation is
    # offered its row of the stacked output (pmap_api._Collector.places); whatever
    # lands elsewhere (an intermediate took the row, an input returned) is copied
    x = np.random.default_rng(1).standard_normal((2, 2_500_000)).astype(np.float32)

    def f(v):
        b = jnp.sin(v) * 2.0
        a = jnp.cos(v) + b
        return a, b, v, jnp.exp(-v * v)

    def want(v):
        return [np.stack([np.asarray(o) for o in srcjax.jit(f)(r)]) for r in v]

    lent = []
    take = spmd.take_place

    def spy(shape, dtype):
        got = take(shape, dtype)
        lent.append(got is not None)
        return got

    monkeypatch.setattr(spmd, "take_place", spy)
    g = srcjax.pmap(f)
    results = [g(x), g(x + 1.0), g(x * 2.0)]
    assert any(lent)  # rows were handed out (calls 2 and 3)
    for k, scale in zip(results, (x, x + 1.0, x * 2.0)):  # earlier results intact
        ref = want(scale)
        for j in range(4):
            np.testing.assert_array_equal(np.asarray(k[j]), np.stack([r[j] for r in ref]))
    assert not np.shares_memory(np.asarray(results[1][0]), np.asarray(results[2][0]))


def test_each_device_uses_its_share_of_the_cores(two):
    seen = []

    def probe(v):
        seen.append(spmd.threads(runtime.NUM_THREADS))
        return v

    assert pmap_api._threads() == max(1, runtime.NUM_THREADS // 2)  # what pmap passes
    spmd.run(probe, [(1,), (2,)], "i", cores=max(1, runtime.NUM_THREADS // 2))
    assert seen == [max(1, runtime.NUM_THREADS // 2)] * 2
    assert spmd.threads(runtime.NUM_THREADS) == runtime.NUM_THREADS  # outside: the pool
