"""Eager results never view the caller's NumPy buffer (fresh-user round 6,
items 03 and 16): JAX copies host arrays to its device, so a result must not
change when the caller later writes into the array it passed (a data loader or
replay buffer reusing its buffer), and every array result is an srcjax Array.

The oracle is the result itself, copied right after the call: writing into the
input afterwards must leave the result equal to that copy (JAX's behaviour,
recorded in /work/userprogs6/repro_03.py: ``jnp.split(a, 2)[0]`` stays
``[0, 1, 2]`` where srcjax gave ``[100, 101, 102]``)."""

import inspect
import warnings

import numpy as np
import pytest

import srcjax
import srcjax.lax as lax
import srcjax.numpy as jnp

# argument lists tried for every public function, the input first
_CANDIDATES = (
    lambda a: (a,),
    lambda a: (a, 0),
    lambda a: (a, 1),
    lambda a: (a, 2),
    lambda a: (a, a),
    lambda a: (a, (2, 3)),
    lambda a: (a, (1, 0)),
    lambda a: (a, np.float32),
    lambda a: (a, 0, 1),
    lambda a: (a, (0, 0), (1, 3)),
    lambda a: (a, 1, 0),
    lambda a: (a, a, a),
)
#: functions that read or write files, or take no array
_SKIP = {"load", "save", "savez", "fromfile", "from_dlpack", "frombuffer"}


def _input() -> np.ndarray:
    return np.arange(1, 7, dtype=np.float32).reshape(2, 3)


def _leaves(r):
    if isinstance(r, (list, tuple)):
        for v in r:
            yield from _leaves(v)
    elif isinstance(r, dict):
        for v in r.values():
            yield from _leaves(v)
    else:
        yield r


def _check_independent(call) -> bool:
    """Runs ``call(a)``; False when it raises. Asserts every array leaf of the
    result is an srcjax Array that keeps its value when ``a`` is written."""
    a = _input()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = call(a)
    except Exception:  # noqa: BLE001 - arguments this function does not take
        return False
    leaves = [v for v in _leaves(r) if isinstance(v, (np.ndarray, srcjax.Array))]
    before = [np.array(v, copy=True) for v in leaves]
    a += 100
    for v, b in zip(leaves, before):
        assert isinstance(v, srcjax.Array), f"a NumPy {type(v).__name__}, not an srcjax Array"
        np.testing.assert_array_equal(np.asarray(v), b, err_msg="the result views the input")
    return True


def _public(mod):
    for name in sorted(dir(mod)):
        f = getattr(mod, name)
        if name.startswith("_") or name in _SKIP or not callable(f):
            continue
        if inspect.isclass(f) or inspect.ismodule(f):
            continue
        yield name


@pytest.mark.parametrize(
    "mod,name", [("jnp", n) for n in _public(jnp)] + [("lax", n) for n in _public(lax)]
)
def test_public_function_result_does_not_view_numpy_input(mod, name):
    f = getattr(jnp if mod == "jnp" else lax, name)
    for args in _CANDIDATES:
        _check_independent(lambda a, args=args: f(*args(a)))


_ident = lambda x: x  # noqa: E731


@pytest.mark.parametrize(
    "call",
    [
        lambda a: lax.cond(True, _ident, lambda x: x * 2, a),
        lambda a: lax.cond(False, lambda x: x * 2, _ident, a),
        lambda a: lax.cond(True, lambda x: x[1:], lambda x: x[:1], a),
        lambda a: lax.switch(0, [_ident, _ident], a),
        lambda a: lax.while_loop(lambda c: False, _ident, a),
        lambda a: lax.fori_loop(0, 0, lambda i, c: c, a),
        lambda a: lax.scan(lambda c, x: (c, x), a, None, length=0)[0],
        lambda a: lax.scan(lambda c, x: (c, x), 0.0, a)[1],
        lambda a: lax.map(_ident, a),
        lambda a: lax.fori_loop(0, 0, lambda i, c: c, 1.0) + a[0, 0],
        lambda a: lax.map(_ident, a[0]),
        lambda a: jnp.split(a, 2)[0],
        lambda a: jnp.array_split(a, 2, axis=1),
        lambda a: jnp.hsplit(a, 3)[0],
        lambda a: jnp.vsplit(a, 2)[1],
        lambda a: lax.slice(a, (0, 0), (1, 3)),
        lambda a: lax.slice_in_dim(a, 0, 1),
        lambda a: lax.index_in_dim(a, 0),
        lambda a: lax.index_in_dim(a, 1, keepdims=False),
        lambda a: jnp.reshape(a, 6),
        lambda a: jnp.ravel(a),
        lambda a: jnp.transpose(a),
        lambda a: jnp.squeeze(a[None]),
        lambda a: jnp.expand_dims(a, 0),
        lambda a: jnp.swapaxes(a, 0, 1),
        lambda a: jnp.moveaxis(a, 0, 1),
        lambda a: jnp.broadcast_to(a, (2, 2, 3)),
        lambda a: jnp.diagonal(a),
        lambda a: jnp.real(a),
        lambda a: jnp.imag(a),
        lambda a: jnp.astype(a, np.float32),
        lambda a: jnp.asarray(a),
        lambda a: jnp.array(a, copy=False),
        lambda a: jnp.asarray(a)[1:],
        lambda a: srcjax.jit(_ident)(a),
        lambda a: srcjax.vmap(_ident)(a),
    ],
)
def test_named_results_do_not_view_numpy_input(call):
    assert _check_independent(call)


def test_split_values_as_jax():
    """repro_03's values (JAX 0.10.2): the pieces before the caller writes."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    parts = jnp.split(a, 2)
    s = lax.slice(a, (0, 0), (1, 3))
    a += 100
    np.testing.assert_array_equal(np.asarray(parts[0]), [[0.0, 1.0, 2.0]])
    np.testing.assert_array_equal(np.asarray(s), [[0.0, 1.0, 2.0]])
    assert type(lax.slice(jnp.arange(6.0).reshape(2, 3), (0, 0), (1, 3))) is srcjax.Array


def test_memmap_input_is_copied(tmp_path):
    """An ndarray subclass (np.memmap: a data loader's file-backed buffer) is the
    caller's memory too: results must not view it."""
    m = np.memmap(tmp_path / "buf.bin", dtype=np.float32, mode="w+", shape=(4,))
    m[:] = 1.0
    results = [jnp.asarray(m), jnp.reshape(m, (2, 2)), jnp.split(m, 2)[0], lax.slice(m, (1,), (3,))]
    m[:] = 7.0
    for r in results:
        assert isinstance(r, srcjax.Array)
        np.testing.assert_array_equal(np.asarray(r).ravel(), np.ones(np.size(r)))
