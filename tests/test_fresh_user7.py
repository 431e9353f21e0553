"""Fresh-user round 7 (/work/userprogs7/REPORT.md items 4, 6, 7, 9, 10, 12):
each failing input with the values JAX 0.10.2 gives (recorded from the repro
files), or a NumPy / Python-loop oracle."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp


def test_python_int_and_bool_arguments_have_array_attributes():
    """Item 7 (repro_05.py): a Python int/bool argument to jit stayed a Python
    scalar, so ``x.size`` raised AttributeError; JAX traces a weak 0-d array.
    JAX 0.10.2: f(3) = 3.0, f(True) = 1.0; ndim 0, size 1, itemsize 4 / 1."""
    f = srcjax.jit(lambda x: x.sum() / x.size)
    assert float(f(3)) == 3.0 and float(f(True)) == 1.0
    g = srcjax.jit(lambda x: (x.ndim, x.size, x.itemsize, x.astype(jnp.float32) * x.size))
    assert [int(v) for v in g(3)[:3]] == [0, 1, 4]
    assert [int(v) for v in g(True)[:3]] == [0, 1, 1]
    assert float(g(3)[3]) == 3.0
    h = srcjax.jit(lambda x: (x.dtype == jnp.int32, x.shape == ()))
    assert [bool(v) for v in h(3)] == [True, True]
    assert bool(srcjax.jit(lambda x: x.dtype == jnp.bool_)(True))

    # an int argument still drives range() (srcjax allows it; a loop of n trips)
    def loop(n, y):
        for _ in range(n):
            y = y * 2
        return y

    assert float(srcjax.jit(loop)(3, 1.0)) == 8.0

    # rebound to an array, the attribute is the array's
    def rebound(x):
        x = jnp.zeros(5) + x
        return x.size

    assert int(srcjax.jit(rebound)(3)) == 5


#: dir(jax.Array) of JAX 0.10.2 (public names), recorded
_JAX_ARRAY_NAMES = (
    "T addressable_data addressable_shards all any argmax argmin argpartition argsort astype"
    " at byteswap choose clip committed compress conj conjugate copy copy_to_host_async"
    " cumprod cumsum device diagonal dot dtype flat flatten global_shards imag"
    " is_fully_addressable is_fully_replicated item itemsize mT max mean min nbytes ndim"
    " nonzero prod ptp ravel real repeat reshape round searchsorted shape sharding size sort"
    " squeeze std sum swapaxes take to_device trace transpose var view"
).split()

#: data attributes read from the NumPy value at run time (the same meaning;
#: ``.at`` is rewritten by the frontend); ``item``/``view``/``byteswap``: NumPy's
#: method of the same signature and meaning
_RUNTIME = set("dtype shape size ndim itemsize nbytes real imag flat at item view byteswap".split())
#: known gaps: device placement attributes (no device inside a jit specialization)
_GAPS = {"device", "sharding", "committed"}


def test_every_jax_array_method_is_mapped_or_refused_under_jit():
    """Item 6 (repro_01.py, repro_12.py): methods of jax.Array that had no entry
    ran NumPy's method on the generated code's ndarray (``mask.nonzero(size=3)``:
    'takes no keyword arguments'; ``x.ptp()``: no attribute). The audit: each
    public name of jax.Array is a primitive, a srcjax.numpy function, an
    attribute, a located error, or NumPy's method with the same meaning."""
    from srcjax.primitives import methods as M

    handled = (
        set(M.METHODS)
        | set(M.FUNCTION_METHODS)
        | set(M.ATTRIBUTES)
        | set(M.NOT_UNDER_TRANSFORMS)
        | _RUNTIME
        | _GAPS
    )
    assert sorted(set(_JAX_ARRAY_NAMES) - handled) == []
    aliases = {"max": "jnp.max", "min": "jnp.min", "conjugate": "jnp.conj", "flatten": "jnp.ravel"}
    for name in set(_JAX_ARRAY_NAMES) & set(M.METHODS):
        public = M.METHODS[name].public
        assert public.split(".")[-1] in (name, "amax", "amin") or public == aliases.get(name), (
            name,
            public,
        )
    for name in M.FUNCTION_METHODS:
        assert callable(getattr(jnp, name))


def test_array_methods_under_jit_take_jax_signatures():
    """JAX 0.10.2 values (repro_01.py, repro_12.py)."""
    x = np.array([[0.3, 1.7, 1.2], [2.5, -0.4, 0.9]], np.float32)
    m = np.array([True, False, True])
    nz = srcjax.jit(lambda a: a.nonzero(size=3, fill_value=0)[0])(m)
    assert np.asarray(nz).tolist() == [0, 2, 0]
    assert np.isclose(float(srcjax.jit(lambda a: a.ptp())(x)), 2.9000000953674316)
    ptp0 = srcjax.jit(lambda a: a.ptp(axis=0))(x)
    np.testing.assert_allclose(np.asarray(ptp0), np.ptp(x, axis=0), rtol=1e-6)
    # a.compress(c, axis=1) is jnp.compress(c, a, axis=1)
    c = np.array([True, False, True])
    comp = srcjax.jit(lambda a: a.compress(c, axis=1))(x)
    np.testing.assert_array_equal(np.asarray(comp), x[:, [0, 2]])
    ch = srcjax.jit(lambda a: jnp.array([0, 1]).choose([a[0, :2], a[1, :2]]))(x)
    np.testing.assert_array_equal(np.asarray(ch), np.array([0.3, -0.4], np.float32))
    part = np.asarray(srcjax.jit(lambda a: a.argpartition(1, axis=1))(x))
    np.testing.assert_array_equal(np.sort(part, axis=1), [[0, 1, 2]] * 2)
    np.testing.assert_array_equal(np.take_along_axis(x, part, 1)[:, 1], np.sort(x, 1)[:, 1])
    srt = np.sort(x[0])
    assert int(srcjax.jit(lambda a: a.searchsorted(1.0))(srt)) == 1
    np.testing.assert_array_equal(np.asarray(srcjax.jit(lambda a: a.conjugate())(x)), x)
    # grad of ptp: +1 at the max, -1 at the min (float64 oracle: max - min)
    g = np.asarray(srcjax.grad(lambda a: a.ptp())(x))
    np.testing.assert_array_equal(g, [[0, 0, 0], [1, -1, 0]])
    with pytest.raises(srcjax.errors.UnsupportedSyntaxError, match="to_device") as info:
        srcjax.jit(lambda a: a.to_device(None))(x)
    assert "test_fresh_user7.py" in str(info.value)


def test_eager_compress_and_round():
    """Item 10 (repro_12.py): ``a.compress(c, axis=1)`` passed the array as the
    condition; ``round(array)`` had no ``__round__``. JAX 0.10.2: [[0.3, 1.2],
    [2.5, 0.9]]; round(a.sum()) = Array(6, int32); round(a, 1) keeps float32."""
    a = jnp.asarray(np.array([[0.3, 1.7, 1.2], [2.5, -0.4, 0.9]], np.float32))
    comp = a.compress(jnp.array([True, False, True]), axis=1)
    np.testing.assert_array_equal(np.asarray(comp), np.array([[0.3, 1.2], [2.5, 0.9]], np.float32))
    r = round(a.sum())
    assert int(r) == 6 and r.dtype == np.int32
    assert int(round(a[0, 1])) == 2 and round(jnp.asarray(2.5)).dtype == np.int32
    assert int(round(jnp.asarray(2.5))) == 2  # half to even
    r1 = round(a, 1)
    assert r1.dtype == np.float32
    np.testing.assert_allclose(np.asarray(r1), np.round(np.asarray(a), 1))


def test_strict_zip_list_of_starmap_and_iter_under_transforms():
    """Item 9 (repro_11.py, repro_16.py). JAX 0.10.2: jit(f)(x) = 0.19999999;
    grad(g)(x) = [1, 0.5, 0]; sum(w for w in iter(ws)) = [4, 1];
    list(iter(ws))[0] * 3 = [3, 6]. A strict zip of unequal lengths raises
    Python's ValueError (as JAX's trace does)."""
    import itertools

    x = np.array([0.5, 1.0, -0.3], np.float32)

    def f(x):
        pairs = [(x[0], x[1]), (x[1], x[2])]
        return jnp.sum(jnp.stack(list(itertools.starmap(jnp.multiply, pairs))))

    assert np.isclose(float(srcjax.jit(f)(x)), 0.19999999)

    def g(x):
        return sum(a * b for a, b in zip([x[0]], [x[1]], strict=True))

    np.testing.assert_array_equal(np.asarray(srcjax.grad(g)(x)), [1.0, 0.5, 0.0])
    assert float(srcjax.jit(g)(x)) == 0.5

    def k(xs, ys):
        return sum(a * b for a, b in zip(xs, ys, strict=True))

    gk = srcjax.grad(k)([x[0], x[1]], [x[2], x[0]])
    assert [float(v) for v in gk] == [float(x[2]), float(x[0])]
    with pytest.raises(ValueError, match="zip\\(\\) argument 2 is shorter than argument 1"):
        srcjax.jit(k)([x[0], x[1]], [x[2]])
    with pytest.raises(ValueError, match="argument 2 is longer"):
        srcjax.jit(k)([x[0]], [x[2], x[1]])
    loose = srcjax.jit(lambda xs, ys: sum(a * b for a, b in zip(xs, ys, strict=False)))
    assert np.isclose(float(loose([x[0], x[1]], [x[2]])), 0.5 * -0.3)

    ws = [np.array([1.0, 2.0], np.float32), np.array([3.0, -1.0], np.float32)]
    out = srcjax.jit(lambda ws: sum(w for w in iter(ws)))(ws)
    np.testing.assert_array_equal(np.asarray(out), [4.0, 1.0])
    out = srcjax.jit(lambda ws: list(iter(ws))[0] * 3)(ws)
    np.testing.assert_array_equal(np.asarray(out), [3.0, 6.0])


def test_einsum_label_size_mismatch_is_jax_s_error():
    """Item 12: NumPy's 'operands could not be broadcast together with remapped
    shapes'; JAX 0.10.2: "Size of label 'j' for operand 1 (3) does not match
    previous terms (4)." (srcjax compares in operand order: operand 1 has 4)."""
    a, b = np.ones((2, 3), np.float32), np.ones((4, 5), np.float32)
    msg = "Size of label 'j' for operand 1 \\(4\\) does not match previous terms \\(3\\)"
    with pytest.raises(ValueError, match=msg):
        jnp.einsum("ij,jk->ik", jnp.asarray(a), jnp.asarray(b))
    with pytest.raises(ValueError, match=msg):
        srcjax.jit(lambda a, b: jnp.einsum("ij,jk->ik", a, b))(a, b)
    # a size of 1 still broadcasts (NumPy's einsum; the check is once per shapes)
    out = jnp.einsum("ij,ij->ij", jnp.ones((2, 3)), jnp.full((1, 3), 2.0))
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 3), 2.0))


def _beta_after_normal(key):
    a = srcjax.random.normal(key, (2,))
    b = srcjax.random.beta(key, 2.0, 3.0, (2,))  # reuse of `key` (the line warned at)
    return a, b


def test_key_reuse_warning_names_the_users_call():
    """Item 12 (repro_15.py): the KeyReuseWarning of a key reused by random.beta
    was located at srcjax/random/_compose.py:134 and named the internal
    random.split; now it is at the user's line, naming random.beta."""
    import inspect
    import warnings

    from srcjax.frontend.keyreuse import _REPORTED, KeyReuseWarning

    _REPORTED.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        srcjax.jit(_beta_after_normal)(srcjax.random.PRNGKey(0))
    found = [w for w in caught if issubclass(w.category, KeyReuseWarning)]
    assert len(found) == 1
    lines, start = inspect.getsourcelines(_beta_after_normal)
    assert found[0].filename == __file__
    assert found[0].lineno == start + 2
    assert "random.beta consumes the key that random.normal" in str(found[0].message)


def test_subnormals_are_kept_as_sharp_bits_md_says():
    """Item 4 (repro_04.py): XLA:CPU flushes float32 subnormals (JAX 0.10.2:
    exp(-90.) > 0 is False; log(exp([-80, -90, -100])) = [-80, -inf, -inf]
    eagerly); srcjax keeps them, as NumPy does, and docs/sharp_bits.md says so.
    This pins the documented values (NumPy float32 is the oracle)."""
    x = np.array([-80.0, -90.0, -100.0], np.float32)
    want = np.log(np.exp(x))
    for f in (lambda v: jnp.log(jnp.exp(v)), srcjax.jit(lambda v: jnp.log(jnp.exp(v)))):
        np.testing.assert_array_equal(np.asarray(f(jnp.asarray(x))), want)
    assert bool(jnp.exp(-90.0) > 0) and bool(srcjax.jit(lambda v: jnp.exp(v) > 0)(-90.0))
    assert np.isclose(want[2], -99.98309, atol=1e-4)


def test_fill_diagonal_with_jax_signature():
    """Item 11 (repro_12.py): jnp.fill_diagonal was missing. JAX 0.10.2 values;
    inplace=True and wrap=True are JAX's NotImplementedError."""
    out = jnp.fill_diagonal(jnp.zeros((3, 4)), 5.0, inplace=False)
    np.testing.assert_array_equal(np.asarray(out), np.eye(3, 4) * 5)
    out = jnp.fill_diagonal(jnp.zeros((2, 2, 2)), 3, inplace=False)
    np.testing.assert_array_equal(np.asarray(out).ravel(), [3, 0, 0, 0, 0, 0, 0, 3])
    out = jnp.fill_diagonal(jnp.zeros((3, 3), jnp.int32), jnp.array([1.5, 2.5, 3.5]), inplace=False)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), np.diag([1, 2, 3]))
    out = jnp.fill_diagonal(jnp.zeros((4, 3)), jnp.array([1.0, 2.0]), inplace=False)
    np.testing.assert_array_equal(np.asarray(out), [[1, 0, 0], [0, 2, 0], [0, 0, 1], [0, 0, 0]])
    with pytest.raises(ValueError, match="All dimensions of input must be of equal length"):
        jnp.fill_diagonal(jnp.zeros((2, 3, 2)), 5.0, inplace=False)
    with pytest.raises(NotImplementedError, match="must use inplace=False"):
        jnp.fill_diagonal(jnp.zeros((3, 3)), 5.0)
    g = srcjax.grad(lambda a: jnp.fill_diagonal(a, 2 * a[0, 1], inplace=False).sum())
    np.testing.assert_array_equal(np.asarray(g(jnp.ones((2, 2)))), [[0, 5], [1, 0]])
    x = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    out = srcjax.jit(lambda a: jnp.fill_diagonal(a, a[0], inplace=False))(x)
    np.testing.assert_array_equal(np.asarray(out), [[0, 1, 2], [3, 1, 5], [6, 7, 2]])


def test_any_all_take_where():
    """Item 11 (repro_12.py): jnp.any/all(where=) were a TransformTypeError.
    JAX 0.10.2: True, True, [True, False], [True, False, True]."""
    x = np.array([[0.3, 1.7, 1.2], [2.5, -0.4, 0.9]], np.float32)
    assert bool(srcjax.jit(lambda a: (a > 1).any(where=a < 2))(x))
    assert bool(srcjax.jit(lambda a: (a > 1).all(where=a > 1.5))(x))
    r = jnp.any(jnp.asarray(x) > 1, axis=1, where=jnp.asarray(x) < 2)
    np.testing.assert_array_equal(np.asarray(r), [True, False])
    r = jnp.all(jnp.asarray(x) > 0, axis=0, where=jnp.asarray(x) < 2)
    np.testing.assert_array_equal(np.asarray(r), [True, False, True])
    r = srcjax.vmap(lambda a: jnp.any(a > 1, where=a < 2))(x)
    np.testing.assert_array_equal(np.asarray(r), [True, False])


def test_dict_get_is_differentiable():
    """Item 11 (repro_12.py): grad through d.get('w') was a NoDerivativeRuleError.
    JAX 0.10.2: grad(sum(p.get('w') ** 2)) = 2 w; a missing key's default."""
    x = np.array([[0.3, 1.7, 1.2], [2.5, -0.4, 0.9]], np.float32)
    g = srcjax.grad(lambda p: jnp.sum(p.get("w") ** 2))({"w": x})["w"]
    np.testing.assert_allclose(np.asarray(g), 2 * x, rtol=1e-6)

    def f(p):
        return jnp.sum(p["w"] * 2 + p.get("b", 0.0))

    assert sorted(srcjax.grad(f)({"w": x})) == ["w"]
    gb = srcjax.grad(f)({"w": x, "b": 1.0})
    assert float(gb["b"]) == 6.0
    assert np.isclose(float(srcjax.jit(f)({"w": x})), 2 * x.sum())
    assert np.isclose(float(srcjax.jit(f)({"w": x, "b": 1.0})), 2 * x.sum() + 6)

    def h(v):
        d = {"a": v}
        return d.get("a") * 3 + (d.get("z") is None)

    assert float(srcjax.grad(h)(2.0)) == 3.0


def test_ragged_array_items_give_a_shape_error_at_the_users_line():
    """Item 12: jnp.array([x, [1.]]) gave NumPy's "inhomogeneous shape"
    ValueError; JAX 0.10.2 raises a TypeError about the items' shapes
    ("Cannot concatenate arrays with different numbers of dimensions: got (1,),
    (1, 1)."). srcjax: a TypeError naming the items' shapes, at the user's line."""
    x = np.ones((2, 3), np.float32)
    with pytest.raises(TypeError, match=r"different shapes.*got \(3,\), \(1,\)"):
        jnp.array([jnp.asarray(x[0]), jnp.ones(1)])
    with pytest.raises(TypeError, match=r"different shapes.*got \(\), \(1,\)") as info:
        srcjax.jit(lambda a: jnp.array([a[0, 0], [1.0]]))(x)
    assert any("test_fresh_user7.py" in n for n in getattr(info.value, "__notes__", []))
    # a well-formed list is unchanged
    np.testing.assert_array_equal(np.asarray(jnp.array([[1.0], [2.0]])), [[1.0], [2.0]])


def test_astype_takes_copy():
    """Item 11 (repro_12.py): a.astype(f16, copy=False) was a TransformTypeError
    under jit. JAX 0.10.2: [0.300048828125, 1.7001953125, 1.2001953125] float16."""
    x = np.array([[0.3, 1.7, 1.2], [2.5, -0.4, 0.9]], np.float32)
    out = srcjax.jit(lambda a: a.astype(jnp.float16, copy=False))(x)
    assert out.dtype == np.float16
    assert np.asarray(out).ravel()[:3].tolist() == [0.300048828125, 1.7001953125, 1.2001953125]
    eager = jnp.asarray(x).astype(jnp.float16, copy=True)
    assert eager.dtype == np.float16 and np.asarray(eager).tolist() == np.asarray(out).tolist()
    g = srcjax.grad(lambda a: a.astype(jnp.float32, copy=False).sum())(x)
    np.testing.assert_array_equal(np.asarray(g), np.ones_like(x))
