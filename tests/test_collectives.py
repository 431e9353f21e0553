"""Collectives over a named axis (srcjax/primitives/collectives.py) under vmap and
pmap (srcjax/pmap_api.py), against values recorded from JAX 0.10.2 on 4 forced
host devices (tests/data/collectives_jax.npz): values, shapes, dtypes; also
under grad (JAX's psum-transposes-to-psum semantics), jit, nested maps.

Re-record with JAX installed: ``SRCJAX_RECORD_JAX=1 XLA_FLAGS=
--xla_force_host_platform_device_count=4 python -m pytest tests/test_collectives.py``."""

import pathlib

import numpy as np
import pytest
from helpers import assert_matches_recorded, jax_recorded

import srcjax
from srcjax import lax as slax

DATA = pathlib.Path(__file__).parent / "data" / "collectives_jax.npz"


@pytest.fixture(autouse=True)
def four_cpu_devices():
    """The recording's 4 host devices (pmap refuses a longer axis than there are
    devices, as JAX)."""
    before = srcjax.config.read("jax_num_cpu_devices")
    srcjax.config.update("jax_num_cpu_devices", 4)
    yield
    srcjax.config.update("jax_num_cpu_devices", before)


def _outer_normalize(jax, jnp, lax):
    """grad(vmap(...)) of a function with a collective (module-level functions:
    a transformed function reads `lax` as a global)."""
    if jax is srcjax:
        return _srcjax_outer_normalize
    import jax as jx

    def outer(xs):
        return jx.numpy.sum(jx.vmap(lambda x: x / jx.lax.psum(x, "i"), axis_name="i")(xs) ** 2)

    return outer


def _sq_psum(y):
    return slax.psum(y**2, "i")


def _srcjax_jvp_psum(x):
    return srcjax.jvp(_sq_psum, (x,), (x,))[1]


def _jvp_psum(jax, lax):
    if jax is srcjax:
        return _srcjax_jvp_psum
    return lambda x: jax.jvp(lambda y: lax.psum(y**2, "i"), (x,), (x,))[1]


def _normalize(x):
    return x / slax.psum(x, "i")


def _srcjax_outer_normalize(xs):
    return srcjax.numpy.sum(srcjax.vmap(_normalize, axis_name="i")(xs) ** 2)


def _compute(jax, jnp, lax):
    xs = np.arange(1.0, 4.0, dtype=np.float32)
    m = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    vm = lambda f, **kw: jax.vmap(f, axis_name="i", **kw)  # noqa: E731
    r = {}
    r["psum"] = vm(lambda x: lax.psum(x, "i"))(xs)
    r["normalize"] = vm(lambda x: x / lax.psum(x, "i"))(xs)
    r["psum_const"] = vm(lambda x: lax.psum(2.0, "i") * x)(xs)
    r["psum_tuple_name"] = vm(lambda x: lax.psum(x, ("i",)))(xs)
    r["pmean"] = vm(lambda x: lax.pmean(x, "i"))(m)
    r["pmax"] = vm(lambda x: lax.pmax(x, "i"))(m)
    r["pmin"] = vm(lambda x: lax.pmin(x, "i") + x)(m)
    r["all_gather"] = vm(lambda x: lax.all_gather(x, "i"))(xs)
    r["all_gather_rows"] = vm(lambda x: lax.all_gather(x, "i").sum(0) - x)(m)
    r["axis_index"] = vm(lambda x: lax.axis_index("i").astype(jnp.float32) * x)(xs)
    r["axis_index_int"] = vm(lambda x: lax.axis_index("i"))(xs)
    r["ppermute"] = vm(lambda x: lax.ppermute(x, "i", [(0, 1), (1, 2), (2, 0)]))(xs)
    r["ppermute_rows"] = vm(lambda x: lax.ppermute(x, "i", [(0, 2), (2, 0), (1, 1)]))(m[:3])
    r["psum_int"] = vm(lambda x: lax.psum(x, "i"))(np.arange(3, dtype=np.int32))
    r["nested"] = jax.vmap(
        jax.vmap(lambda x: lax.psum(x, "j") + 10 * lax.psum(x, "i"), axis_name="j"),
        axis_name="i",
    )(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    r["nested_both"] = jax.vmap(
        jax.vmap(lambda x: lax.psum(x, ("i", "j")), axis_name="j"), axis_name="i"
    )(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    # derivatives
    r["grad_psum"] = vm(jax.grad(lambda x: lax.psum(x**2, "i")))(xs)
    r["grad_normalize"] = vm(jax.grad(lambda x: x / lax.psum(x, "i")))(xs)
    r["grad_outer_normalize"] = jax.grad(_outer_normalize(jax, jnp, lax))(xs)
    r["grad_pmean"] = vm(jax.grad(lambda x: lax.pmean(x, "i") * x))(xs)
    r["grad_all_gather"] = vm(jax.grad(lambda x: lax.all_gather(x, "i")[0] * x))(xs)
    r["grad_ppermute"] = vm(
        jax.grad(lambda x: lax.ppermute(x, "i", [(0, 1), (1, 2), (2, 0)]) * x**2)
    )(xs)
    r["jvp_psum"] = vm(_jvp_psum(jax, lax))(xs)
    r["jit_vmap"] = jax.jit(vm(lambda x: x - lax.pmean(x, "i")))(m)
    # pmap (4 devices)
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    r["pmap_normal"] = jax.pmap(lambda k: jax.random.normal(k, (2, 3)))(keys)
    r["pmap_psum"] = jax.pmap(lambda x: x / lax.psum(jnp.sum(x), "d"), axis_name="d")(m)
    r["pmap_in_axes"] = jax.pmap(lambda x, y: x * y, in_axes=(0, None))(m, xs)
    r["pmap_static"] = jax.pmap(lambda x, n: x**n, static_broadcasted_argnums=1)(m, 2)
    r["pmap_grad"] = jax.pmap(
        jax.grad(lambda w, x: jnp.sum((x * w - 1.0) ** 2)), in_axes=(None, 0)
    )(np.float32(0.5), m)
    r["pmap_out_axes"] = jax.pmap(lambda x: x * 2.0, out_axes=1)(m)
    return {k: np.asarray(v) for k, v in r.items()}


def _compute_with_jax():
    import jax
    import jax.numpy as jjnp
    from jax import lax

    return _compute(jax, jjnp, lax)


def test_values_shapes_dtypes_match_jax():
    import srcjax.numpy as sjnp

    recorded = jax_recorded(DATA, _compute_with_jax)
    assert_matches_recorded(_compute(srcjax, sjnp, slax), recorded, rtol=2e-6, atol=1e-7)


def _uses_psum(x):
    return slax.psum(x, "i")


def test_unbound_axis_name_is_a_name_error():
    with pytest.raises(NameError, match="unbound axis name: i"):
        slax.psum(1.0, "i")
    with pytest.raises(NameError, match="unbound axis name: i"):
        srcjax.vmap(_uses_psum, axis_name="j")(np.ones(2, np.float32))
    with pytest.raises(NameError):
        srcjax.jit(_uses_psum)(np.ones(2, np.float32))


def test_pmap_decorator_form_and_source():
    @srcjax.pmap
    def double(x):
        return x * 2.0

    np.testing.assert_array_equal(double(np.ones((2, 3), np.float32)), 2.0)

    @srcjax.pmap(axis_name="d")
    def centered(x):
        return x - slax.pmean(x, "d")

    np.testing.assert_array_equal(centered(np.array([1.0, 3.0], np.float32)), [-1.0, 1.0])
    # the per-device program: each device's x is a scalar, the collective runs
    # between the devices
    text = srcjax.source(centered, np.array([1.0, 3.0], np.float32))
    assert "for x: float32[]" in text and "lax.pmean(x, 'd')" in text


def _pmax_times(x):
    return slax.pmax(x, "i") * x


def test_pmax_derivative_is_an_error_not_a_zero():
    """JAX raises for pmax's derivative; a non-differentiable primitive would
    have given a silent zero for the pmax path."""
    with pytest.raises(Exception, match="derivative rule"):
        srcjax.vmap(srcjax.grad(_pmax_times), axis_name="i")(np.arange(1.0, 3.0, dtype=np.float32))


def _psum_in_branch(x):
    if x > 0:
        return slax.psum(x, "i")
    return x


def _psum_in_while(x):
    while x < 3.0:
        x = x + slax.psum(x, "i")
    return x


def _gather_outer(x):
    return srcjax.vmap(lambda y: slax.all_gather(y, "i"))(x)


def _pmap_loss(xs):
    return srcjax.numpy.sum(srcjax.pmap(_psum_times, axis_name="d")(xs) ** 2)


def _psum_times(x):
    return slax.psum(x, "d") * x


def test_collectives_where_they_would_give_other_numbers_than_jax_are_errors():
    """Fresh-user run 5: a psum inside a per-example branch or loop summed stand-in
    values of the examples that skipped it (silently wrong); axis_index_groups was
    ignored; all_gather over an outer axis inside an inner vmap gathered along the
    wrong axis. Each is now an error at the user's line."""
    xs = np.array([1.0, -2.0, 0.5], np.float32)
    with pytest.raises(srcjax.errors.TransformValueError, match="differs per example"):
        srcjax.vmap(_psum_in_branch, axis_name="i")(xs)
    with pytest.raises(srcjax.errors.TransformValueError, match="differs per example"):
        srcjax.vmap(_psum_in_while, axis_name="i")(xs)
    with pytest.raises(srcjax.errors.TransformValueError, match="axis_index_groups"):
        srcjax.vmap(lambda x: slax.psum(x, "i", axis_index_groups=[[0, 1]]), axis_name="i")(xs)
    with pytest.raises(srcjax.errors.TransformValueError, match="all_gather"):
        srcjax.vmap(_gather_outer, axis_name="i")(np.ones((3, 3), np.float32))


def test_grad_and_jit_of_a_function_calling_pmap():
    """Fresh-user run 5: grad/jit of a function that calls srcjax.pmap failed
    inside pmap_api.py; values as grad of the vmap form (JAX 0.10.2 pmap agrees)."""
    xs = np.arange(12, dtype=np.float32).reshape(4, 3) - 5.0
    g = srcjax.grad(_pmap_loss)(xs)
    s = xs.sum(axis=0)
    # loss = sum_d sum_j (s_j x_dj)^2 -> d/dx_kj = 2 s_j^2 x_kj + 2 s_j sum_d x_dj^2
    want = 2 * s**2 * xs + 2 * s * (xs**2).sum(axis=0)
    np.testing.assert_allclose(g, want, rtol=1e-6)
    assert srcjax.jit(_pmap_loss)(xs) == pytest.approx(float(((s * xs) ** 2).sum()))


def _dp_loss(w, x):
    return srcjax.numpy.sum((x @ w["a"] + w["b"]) ** 2)


def _dp_step(w, x):
    g = srcjax.grad(_dp_loss)(w, x)
    g = slax.pmean(g, "d")  # a dict of gradients, as in data-parallel training
    return {k: w[k] - 0.1 * g[k] for k in w.keys()}


def test_pmean_of_a_pytree_of_gradients():
    """Fresh-user run 5: psum/pmean rejected dicts and tuples, so the usual
    `lax.pmean(grads, "batch")` of data-parallel training failed."""
    w = {"a": np.ones((3, 2), np.float32), "b": np.zeros(2, np.float32)}
    xs = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    new = srcjax.pmap(_dp_step, axis_name="d", in_axes=(None, 0))(w, xs)
    gs = [srcjax.grad(_dp_loss)(w, x) for x in xs]
    for k in w:
        want = w[k] - 0.1 * np.mean([g[k] for g in gs], axis=0)
        assert new[k].shape == (4,) + w[k].shape and new[k].dtype == np.float32
        np.testing.assert_allclose(new[k], np.broadcast_to(want, new[k].shape), rtol=1e-6)
    pair = srcjax.vmap(lambda t: slax.psum((t, 2 * t), "i"), axis_name="i")(np.ones(3, np.float32))
    np.testing.assert_array_equal(pair[0], [3.0] * 3)
    np.testing.assert_array_equal(pair[1], [6.0] * 3)
    assert srcjax.vmap(lambda t: slax.psum(1, "i"), axis_name="i")(np.ones(3)).dtype == np.int32


def _total(x, name):
    return srcjax.lax.psum(x, name)


def test_axis_name_through_a_helper_parameter():
    """lax-breadth report: psum(x, name) in a helper given name="i" was refused under
    vmap ('axis_name must be a constant'): the parameter is bound to a constant."""
    x = np.arange(1.0, 4.0)
    got = srcjax.vmap(lambda v: v / _total(v, "i"), axis_name="i")(x)
    np.testing.assert_allclose(got, x / x.sum())
