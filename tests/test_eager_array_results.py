"""Every array an eager public call returns is an srcjax Array (fresh user 8,
r_numpy_leak.py): ``ops.segment_sum``, ``jnp.bincount``, ``lax.reduce_window``,
``flatten_util.ravel_pytree`` and ``scipy.linalg.lu_factor`` returned a NumPy
ndarray, so ``.at`` raised, ``alias = s; alias += 100`` wrote into ``s`` and
``s[5]`` raised where JAX clamps. The cause: compositions ending in an ``ad.*``
helper (``ad.take_adjoint``, ``ad.ravel_tree``), whose eager calls returned
buffers; such a helper now returns Arrays when given one
(``registry._internal_result``).

The audit calls every public function of the namespaces below with argument
lists built from a few sample inputs (those a function does not take raise and
are skipped; a floor on the number that ran keeps the audit from passing
empty), plus explicit calls for signatures the samples do not fit, and checks
every array leaf of each result. Values are JAX 0.10.2's, recorded by hand."""

import inspect
import warnings

import numpy as np
import pytest

import srcjax
import srcjax.flatten_util as flatten_util
import srcjax.lax as lax
import srcjax.nn as nn
import srcjax.numpy as jnp
import srcjax.ops as ops
import srcjax.random as random
import srcjax.scipy.linalg
import srcjax.scipy.special
import srcjax.scipy.stats
import srcjax.tree_util as tree_util


def _leaves(r):
    if isinstance(r, (list, tuple)):
        for v in r:
            yield from _leaves(v)
    elif isinstance(r, dict):
        for v in r.values():
            yield from _leaves(v)
    else:
        yield r


def _numpy_leaks(r) -> list:
    """The array leaves of ``r`` that are not srcjax Arrays (a float0 gradient
    is a NumPy array in JAX too: jax's TypedNdArray, no jax.Array)."""
    return [
        v
        for v in _leaves(r)
        if isinstance(v, np.ndarray) and not isinstance(v, srcjax.Array) and v.dtype.kind != "V"
    ]


def _samples():
    return {
        "m": jnp.arange(1.0, 7.0).reshape(2, 3),
        "sq": jnp.array([[2.0, 1.0], [1.0, 3.0]]),
        "v": jnp.array([0.5, 1.5, 2.5]),
        "i": jnp.array([0, 1, 1]),
        "s": jnp.array(0.5),
        "k": random.PRNGKey(0),
    }


def _candidates(x):
    s = _samples()
    return [
        (x,),
        (x, 0),
        (x, 1),
        (x, x),
        (x, s["i"]),
        (x, s["i"], 2),
        (x, (2, 3)),
        (x, x, x),
        (s["k"], x),
        (s["k"], (2, 3)),
    ]


#: names not to call: I/O, no array in or out, or calls that wait or print
_SKIP = {"load", "save", "savez", "fromfile", "from_dlpack", "frombuffer", "print_options"}


def _public(mod):
    for name in sorted(getattr(mod, "__all__", None) or dir(mod)):
        f = getattr(mod, name, None)
        if name.startswith("_") or name in _SKIP or not callable(f):
            continue
        if inspect.isclass(f) or inspect.ismodule(f):
            continue
        yield name


_MODULES = {
    "jnp": jnp,
    "jnp.linalg": jnp.linalg,
    "jnp.fft": jnp.fft,
    "lax": lax,
    "nn": nn,
    "scipy.linalg": srcjax.scipy.linalg,
    "scipy.special": srcjax.scipy.special,
    "scipy.stats.norm": srcjax.scipy.stats.norm,
    "ops": ops,
    "random": random,
    "flatten_util": flatten_util,
    "tree_util": tree_util,
}


def _audit(mod):
    ran, leaks = 0, []
    for name in _public(mod):
        f = getattr(mod, name)
        for key in ("m", "v", "i", "sq", "s"):
            for args in _candidates(_samples()[key]):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        r = f(*args)
                except Exception:  # noqa: BLE001 - arguments this function does not take
                    continue
                ran += 1
                if _numpy_leaks(r):
                    leaks.append(f"{name}{tuple(type(a).__name__ for a in args)}")
    return ran, leaks


#: at least this many calls run per namespace (the audit is not empty)
_FLOOR = {"ops": 8, "flatten_util": 3, "tree_util": 20, "random": 20}


@pytest.mark.parametrize("name", sorted(_MODULES))
def test_every_public_function_returns_srcjax_arrays(name):
    ran, leaks = _audit(_MODULES[name])
    assert ran >= _FLOOR.get(name, 30), f"only {ran} calls ran"
    assert not leaks, f"NumPy arrays returned by {leaks}"


_ids = jnp.array([0, 0, 1])

_EXPLICIT = {
    # JAX 0.10.2's values
    "segment_sum": (lambda: ops.segment_sum(jnp.arange(3.0), _ids, num_segments=2), [1.0, 2.0]),
    "segment_max": (lambda: ops.segment_max(jnp.arange(3.0), _ids, num_segments=2), [1.0, 2.0]),
    "segment_min": (lambda: ops.segment_min(jnp.arange(3.0), _ids, num_segments=2), [0.0, 2.0]),
    "segment_prod": (
        lambda: ops.segment_prod(jnp.arange(1.0, 4.0), _ids, num_segments=2),
        [2.0, 3.0],
    ),
    "segment_sum_numpy": (
        lambda: ops.segment_sum(np.arange(3.0), np.array([0, 0, 1]), num_segments=2),
        [1.0, 2.0],
    ),
    "bincount": (lambda: jnp.bincount(jnp.array([0, 1, 1]), length=3), [1, 2, 0]),
    "bincount_numpy": (lambda: jnp.bincount(np.array([0, 1, 1]), length=3), [1, 2, 0]),
    "reduce_window": (
        lambda: lax.reduce_window(jnp.arange(4.0), -jnp.inf, lax.max, (2,), (1,), "VALID"),
        [1.0, 2.0, 3.0],
    ),
    "ravel_pytree": (lambda: flatten_util.ravel_pytree({"a": jnp.ones(2)})[0], [1.0, 1.0]),
    "ravel_pytree_numpy": (lambda: flatten_util.ravel_pytree({"a": np.ones(2)})[0], [1.0, 1.0]),
    "lu_factor": (
        lambda: srcjax.scipy.linalg.lu_factor(jnp.array([[1.0, 2.0], [3.0, 4.0]])),
        ([[3.0, 4.0], [1 / 3, 2 / 3]], [1, 1]),
    ),
}


@pytest.mark.parametrize("name", sorted(_EXPLICIT))
def test_reported_functions_return_srcjax_arrays(name):
    call, want = _EXPLICIT[name]
    r = call()
    assert not _numpy_leaks(r), [type(v) for v in _leaves(r)]
    got = [np.asarray(v) for v in r] if isinstance(r, tuple) else [np.asarray(r)]
    want = list(want) if isinstance(want, tuple) else [want]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_segment_sum_result_behaves_as_jax_array():
    """r_numpy_leak.py's consequences, with JAX 0.10.2's answers: ``+=`` on
    another name rebinds (s stays [1, 2]), ``s[5]`` clamps to 2, ``.at`` works."""
    s = ops.segment_sum(jnp.arange(3.0), _ids, num_segments=2)
    alias = s
    alias += 100.0
    np.testing.assert_array_equal(np.asarray(s), [1.0, 2.0])
    assert float(s[5]) == 2.0
    np.testing.assert_array_equal(np.asarray(s.at[0].set(0.0)), [0.0, 2.0])


def test_allow_int_gradient_is_float0_as_jax():
    """The int argument's gradient under allow_int is a float0 NumPy array in
    JAX 0.10.2 as well (TypedNdArray, not a jax.Array): shape () dtype float0."""
    g = srcjax.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert float(g[0]) == 3.0
    assert g[1].shape == () and g[1].dtype.kind == "V"
