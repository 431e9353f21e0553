"""pmap on CPU devices as threads (srcjax/pmap_api.py, srcjax/backends/spmd.py).

Values marked "JAX" were recorded from jax 0.10.2 with
``XLA_FLAGS=--xla_force_host_platform_device_count=2`` (CI has no jax).
"""

import threading

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import _spmd as spmd
from srcjax import lax, random
from srcjax.backends._devices import cpu_device_count


@pytest.fixture
def ndev():
    before = srcjax.config.read("jax_num_cpu_devices")

    def set_(n):
        srcjax.config.update("jax_num_cpu_devices", n)

    yield set_
    srcjax.config.update("jax_num_cpu_devices", before)


X = np.arange(12.0, dtype=np.float32).reshape(2, 2, 3)
Y = np.arange(8.0, dtype=np.float32).reshape(2, 4)


def test_device_count_configuration(ndev, monkeypatch):
    monkeypatch.delenv("SRCJAX_CPU_DEVICES", raising=False)
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    assert cpu_device_count() == 1 and srcjax.device_count() == 1  # JAX's default
    monkeypatch.setenv("XLA_FLAGS", "--foo --xla_force_host_platform_device_count=3")
    assert cpu_device_count() == 3
    monkeypatch.setenv("SRCJAX_CPU_DEVICES", "5")
    assert cpu_device_count() == 5
    ndev(2)
    assert [repr(d) for d in srcjax.devices()] == ["CpuDevice(id=0)", "CpuDevice(id=1)"]
    assert srcjax.local_device_count() == 2 and srcjax.devices()[1].id == 1
    monkeypatch.setenv("SRCJAX_CPU_DEVICES", "zero")
    ndev(-1)
    with pytest.raises(ValueError, match="SRCJAX_CPU_DEVICES"):
        cpu_device_count()


def test_more_entries_than_devices_is_jax_value_error(ndev):
    ndev(2)
    with pytest.raises(ValueError, match="requires 3 logical devices, but only 2"):
        srcjax.pmap(lambda v: v)(jnp.arange(3.0))
    with pytest.raises(ValueError, match="inconsistent sizes"):
        srcjax.pmap(lambda a, b: a + b)(jnp.ones(2), jnp.ones(1))
    with pytest.raises(ValueError, match="num_local_devices=1"):
        srcjax.pmap(lambda v: v, devices=srcjax.devices()[:1])(jnp.ones(2))


def test_each_device_runs_on_its_own_thread(ndev):
    ndev(2)
    seen = []

    def record(v):
        seen.append(threading.get_ident())
        return v

    def f(x):
        return srcjax.pure_callback(record, x, x) * 2.0

    out = srcjax.pmap(f)(jnp.arange(2.0))
    np.testing.assert_array_equal(out, [0.0, 2.0])
    assert len(set(seen)) == 2


def test_collectives_match_jax(ndev):
    ndev(2)

    def pm(f):
        return srcjax.pmap(f, "i")

    # JAX 0.10.2, 2 host devices
    assert pm(lambda v: lax.all_to_all(v, "i", 0, 0))(X).tolist() == [
        [[0.0, 1.0, 2.0], [6.0, 7.0, 8.0]],
        [[3.0, 4.0, 5.0], [9.0, 10.0, 11.0]],
    ]
    a2a = [[[0.0, 6.0], [1.0, 7.0], [2.0, 8.0]], [[3.0, 9.0], [4.0, 10.0], [5.0, 11.0]]]
    assert pm(lambda v: lax.all_to_all(v, "i", 0, 1))(X).tolist() == a2a
    assert pm(lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True))(X).shape == (2, 1, 6)
    assert pm(lambda v: lax.psum_scatter(v, "i"))(X).tolist() == [
        [6.0, 8.0, 10.0],
        [12.0, 14.0, 16.0],
    ]
    assert pm(lambda v: lax.psum_scatter(v, "i", tiled=True))(Y).tolist() == [
        [4.0, 6.0],
        [8.0, 10.0],
    ]
    shuffled = [[4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0]]
    assert pm(lambda v: lax.pshuffle(v, "i", [1, 0]))(Y).tolist() == shuffled
    assert pm(lambda v: lax.ppermute(v, "i", [(0, 1)]))(Y).tolist() == [[0.0] * 4, Y[0].tolist()]
    assert pm(lambda v: lax.all_gather(v, "i", tiled=True))(Y).shape == (2, 8)
    assert pm(lambda v: lax.all_gather(v, "i", axis=1))(Y)[0].tolist() == [
        [0.0, 4.0],
        [1.0, 5.0],
        [2.0, 6.0],
        [3.0, 7.0],
    ]
    groups = pm(lambda v: lax.psum(v, "i", axis_index_groups=[[0], [1]]))(jnp.arange(2.0))
    assert groups.tolist() == [0.0, 1.0]
    np.testing.assert_allclose(
        pm(lambda v: v / lax.psum(jnp.sum(v), "i"))(Y), Y / Y.sum(), rtol=1e-7
    )
    assert pm(lambda v: lax.pmax(v, "i"))(Y).tolist() == [Y[1].tolist()] * 2
    assert pm(lambda v: lax.pmin(v, "i"))(Y).tolist() == [Y[0].tolist()] * 2
    assert pm(lambda v: lax.pmean(v, "i"))(Y).tolist() == [Y.mean(0).tolist()] * 2
    idx = pm(lambda v: lax.axis_index("i"))(Y)
    assert idx.tolist() == [0, 1] and idx.dtype == np.int32
    # the same collectives under vmap(axis_name=...) (JAX gives the same numbers)
    vm = srcjax.vmap(lambda v: lax.all_to_all(v, "i", 0, 1), axis_name="i")
    assert vm(X).tolist() == a2a
    vs = srcjax.vmap(lambda v: lax.psum_scatter(v, "i"), axis_name="i")
    assert vs(X).tolist() == [[6.0, 8.0, 10.0], [12.0, 14.0, 16.0]]
    assert (
        srcjax.vmap(lambda v: lax.pshuffle(v, "i", [1, 0]), axis_name="i")(Y).tolist() == shuffled
    )


def test_collectives_are_differentiable(ndev):
    ndev(2)
    # JAX: pmap(lambda v: grad(lambda w: psum(w * v, "i"))(1.0), "i")(arange(2.)) == [0, 2]
    g = srcjax.pmap(lambda v: srcjax.grad(lambda w: lax.psum(w * v, "i"))(1.0), "i")
    np.testing.assert_array_equal(g(jnp.arange(2.0)), [0.0, 2.0])

    def loss(w, x):
        return jnp.sum(lax.all_to_all(x * w, "i", 0, 0) ** 2)

    x = np.arange(4.0, dtype=np.float32).reshape(2, 2)
    got = srcjax.pmap(srcjax.grad(loss), "i", in_axes=(None, 0))(np.float32(1.5), x)
    want = srcjax.vmap(srcjax.grad(loss), axis_name="i", in_axes=(None, 0))(np.float32(1.5), x)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_data_parallel_gradient_step_matches_one_device(ndev):
    ndev(2)
    rng = np.random.default_rng(0)
    w = rng.normal(size=3).astype(np.float32)
    xs = rng.normal(size=(2, 8, 3)).astype(np.float32)
    ys = rng.normal(size=(2, 8)).astype(np.float32)

    def loss(w, x, y):
        return jnp.mean((x @ w - y) ** 2)

    def step(w, x, y):
        g = srcjax.grad(loss)(w, x, y)
        return w - 0.1 * lax.pmean(g, "d")

    new = srcjax.pmap(step, "d", in_axes=(None, 0, 0))(w, xs, ys)
    ref = w - 0.1 * srcjax.grad(loss)(w, xs.reshape(16, 3), ys.reshape(16))
    np.testing.assert_allclose(new[0], ref, rtol=1e-5)
    np.testing.assert_array_equal(new[0], new[1])


def test_pmap_shards_typed_keys_and_nests(ndev):
    ndev(2)
    keys = random.split(random.key(7), 2)
    got = srcjax.pmap(lambda k: random.normal(k, (2,)))(keys)
    np.testing.assert_array_equal(got, np.stack([random.normal(k, (2,)) for k in keys]))
    out = srcjax.pmap(lambda k: random.split(k))(keys)
    assert isinstance(out, random.PRNGKeyArray) and out.shape == (2, 2)
    # a vmap inside: its collective over the pmap axis sums across devices, per example
    inner = srcjax.pmap(lambda v: srcjax.vmap(lambda r: lax.psum(r, "i"))(v), "i")(X)
    np.testing.assert_array_equal(inner, np.stack([X.sum(0)] * 2))
    # a pmap inside a device's program runs on that device (as vmap)
    nested = srcjax.pmap(lambda v: srcjax.pmap(lambda r: lax.psum(r, "j"), "j")(v))(
        Y.reshape(2, 2, 2)
    )
    np.testing.assert_array_equal(
        nested,
        np.stack([Y.reshape(2, 2, 2)[i].sum(0, keepdims=True).repeat(2, 0) for i in range(2)]),
    )


def test_a_failing_device_ends_the_call_with_its_error(ndev):
    ndev(2)

    def f(v):
        s = lax.psum(v, "i")
        if lax.axis_index("i") == 1:
            raise RuntimeError("device 1 failed")
        return lax.psum(s, "i")  # device 0 waits here: the failure must release it

    with pytest.raises(RuntimeError, match="device 1 failed"):
        spmd.run(lambda v: f(v), [(np.float32(1.0),), (np.float32(2.0),)], "i")


def test_static_and_out_axes(ndev):
    ndev(2)
    got = srcjax.pmap(lambda x, n: x**n, static_broadcasted_argnums=1)(Y, 2)
    np.testing.assert_array_equal(got, Y**2)
    got = srcjax.pmap(lambda x: x * 2.0, out_axes=1)(Y)
    np.testing.assert_array_equal(got, (Y * 2.0).T)
    got = srcjax.pmap(lambda d: d["a"] + d["b"], in_axes=({"a": 0, "b": None},))({"a": Y, "b": 1.0})
    np.testing.assert_array_equal(got, Y + 1.0)
    text = srcjax.source(srcjax.pmap(lambda v: lax.psum(v, "i"), "i"), Y)
    assert "float32[4]" in text and "lax.psum(v, 'i')" in text


# JAX 0.10.2, 4 host devices: pmap(f, "i")(X4) for f(v) = grad(lambda w: sum(sin(C(w * v)) *
# c))(1.5), C a collective with axis_index_groups or all_gather's axis/tiled (their
# derivatives ignored those options: psum over all devices, a ShapeError for axis=1)
X4 = np.arange(16.0, dtype=np.float32).reshape(4, 2, 2) / 4
GROUPS = [[0, 2], [1, 3]]
GRADS_JAX = {
    "psum_groups": (
        [0.1841, 0.0327, 0.3311, 0.2473],
        lambda u: lax.psum(u, "i", axis_index_groups=GROUPS),
    ),
    "pmean_groups": (
        [-0.3324, -0.8234, -1.3735, -1.8926],
        lambda u: lax.pmean(u, "i", axis_index_groups=GROUPS),
    ),
    "all_gather_axis1": (
        [3.0349, -13.5712, -31.647, 34.7403],
        lambda u: lax.all_gather(u, "i", axis=1),
    ),
    "all_gather_tiled": (
        [0.9672, -8.9471, -36.4095, 34.4216],
        lambda u: lax.all_gather(u, "i", tiled=True),
    ),
    "all_gather_groups": (
        [0.4836, -1.706, -10.4604, 7.9054],
        lambda u: lax.all_gather(u, "i", axis_index_groups=GROUPS),
    ),
    "all_gather_tiled_axis1_groups": (
        [0.8282, -2.9379, -8.3759, 7.9585],
        lambda u: lax.all_gather(u, "i", axis=1, tiled=True, axis_index_groups=GROUPS),
    ),
}


@pytest.mark.parametrize("case", sorted(GRADS_JAX))
def test_collective_derivatives_keep_groups_and_gather_options(ndev, case):
    ndev(4)
    want, coll = GRADS_JAX[case]
    c = np.arange(32.0, dtype=np.float32) / 8

    def f(v):
        def loss(w):
            y = coll(w * v)
            return jnp.sum(jnp.sin(y) * c[: y.size].reshape(y.shape))

        return srcjax.grad(loss)(1.5)

    np.testing.assert_allclose(srcjax.pmap(f, "i")(X4), want, rtol=2e-4, atol=2e-4)


def test_all_to_all_length_error_is_jax(ndev):
    ndev(2)
    with pytest.raises(ValueError, match=r"x.shape\[split_axis\], but they are 2 and 4"):
        srcjax.pmap(lambda v: lax.all_to_all(v, "i", 0, 0), "i")(np.ones((2, 4)))
