"""Fresh-user round 6 (/work/userprogs6/REPORT.md): each failing input with the
values JAX 0.10.2 gives (recorded from the repro files), or a NumPy /
Python-loop oracle."""

import functools
import operator
import warnings
from functools import reduce

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (NumPy's divide by zero)
        return fn(*args)


def test_grad_at_a_literal_point_inside_jit_is_ieee():
    """Item 01 (repro_01.py): inside jit, grad at a Python-literal point computed
    in Python floats and raised ZeroDivisionError; JAX gives -inf and nan (the
    point is a float32 value, not a literal)."""
    f = srcjax.jit(lambda: srcjax.grad(lambda v: 1.0 / v)(0.0))
    assert float(_quiet(f)) == -np.inf
    g = srcjax.jit(lambda: srcjax.grad(lambda v: v**0.0)(0.0))
    assert np.isnan(float(_quiet(g)))
    h = srcjax.jit(lambda x: srcjax.grad(lambda v: 1.0 / v)(0.0) + x)
    np.testing.assert_array_equal(np.asarray(_quiet(h, np.zeros(2, np.float32))), [-np.inf] * 2)
    val, grad = _quiet(srcjax.jit(lambda: srcjax.value_and_grad(lambda v: 1.0 / v)(0.0)))
    assert (float(val), float(grad)) == (np.inf, -np.inf)
    # an ordinary point keeps its value and dtype
    r = srcjax.jit(lambda: srcjax.grad(lambda v: v * v)(3.0))()
    assert float(r) == 6.0 and r.dtype == np.float32


#: jit of grad at a Python-literal point: (function, JAX 0.10.2's leaves as
#: (dtype, weak_type, value)). The gradient has its primal's type (a literal: weak
#: float32), whatever the output's; a weak gradient promotes as a Python float.
_GRAD_AT_LITERAL = {
    "v*v": (lambda: srcjax.grad(lambda v: v * v)(3.0), [("float32", True, 6.0)]),
    "v*v*v, twice": (
        lambda: srcjax.grad(srcjax.grad(lambda v: v * v * v))(3.0),
        [("float32", True, 18.0)],
    ),
    "constant": (lambda: srcjax.grad(lambda v: 2.0)(3.0), [("float32", True, 0.0)]),
    "strong output": (
        lambda: srcjax.grad(lambda v: v * np.float32(2))(3.0),
        [("float32", True, 2.0)],
    ),
    "value_and_grad": (
        lambda: srcjax.value_and_grad(lambda v: v * v)(3.0),
        [("float32", True, 9.0), ("float32", True, 6.0)],
    ),
    "argnums, one strong": (
        lambda: srcjax.grad(lambda v, w: v * w, argnums=(0, 1))(3.0, np.float32(2)),
        [("float32", True, 2.0), ("float32", False, 3.0)],
    ),
}


@pytest.mark.parametrize("name", sorted(_GRAD_AT_LITERAL))
def test_grad_at_a_literal_point_inside_jit_is_weak(name):
    """jit(lambda: grad(lambda v: v * v)(3.0))() was a strong float32 since 2a3d620:
    ad.seed of a weak output and ad.cotangent_like onto a weak primal gave strong
    abstract values (and the fold made the cotangent_like a copy)."""
    fn, want = _GRAD_AT_LITERAL[name]
    got = srcjax.tree_util.tree_leaves(srcjax.jit(fn)())
    assert [(np.asarray(g).dtype.name, g.weak_type, float(g)) for g in got] == want


def test_grad_at_a_literal_point_inside_jit_promotes_weakly():
    """The weak gradient plus a float16 argument is float16 (JAX 0.10.2:
    Array(7., dtype=float16)); srcjax gave float32."""
    f = srcjax.jit(lambda y: srcjax.grad(lambda v: v * v)(3.0) + y)
    r = f(np.float16(1))
    assert r.dtype == np.float16 and not r.weak_type and float(r) == 7.0
    r = srcjax.jit(lambda x: srcjax.grad(lambda v: v * x)(3.0))(np.float32(2))
    assert r.dtype == np.float32 and r.weak_type and float(r) == 2.0


def _shrink(x):
    def cond(s):
        y, n = s
        return (jnp.max(jnp.abs(y)) > 0.5) & (n < 20)

    y, n = srcjax.lax.while_loop(cond, lambda s: (s[0] * 0.7, s[1] + 1), (x, 0))
    return jnp.sum(y) + n


def test_jvp_of_vmap_of_while_loop_with_tuple_carry():
    """Item 02 (repro_02.py): jvp(vmap(f)) with a tuple-carry while_loop raised
    NumPy's 'inhomogeneous shape' (the tangent rule of the per-example select
    made zeros_like of a tuple and added tuples with +). JAX 0.10.2's values."""
    x = np.array([[1.0, 2.0], [0.1, 0.2], [3.0, -1.0]], np.float32)
    out, tan = srcjax.jvp(srcjax.vmap(_shrink), (x,), (np.ones_like(x),))
    np.testing.assert_allclose(np.asarray(out), [4.7202997, 0.3, 6.235298], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tan), [0.4802, 2.0, 0.23529798], rtol=1e-5)
    # jit of it, and the per-example jvp as the oracle for a dict carry
    out2, tan2 = srcjax.jit(lambda p, t: srcjax.jvp(srcjax.vmap(_shrink), (p,), (t,)))(
        x, np.ones_like(x)
    )
    np.testing.assert_allclose(np.asarray(tan2), np.asarray(tan), rtol=1e-6)

    def halve(x):
        d = srcjax.lax.while_loop(
            lambda d: d["v"].sum() > 1.0,
            lambda d: {"v": d["v"] * 0.5, "k": d["k"] + 1},
            {"v": x, "k": 0},
        )
        return d["v"].sum() * d["k"]

    _, tb = srcjax.jvp(srcjax.vmap(halve), (x,), (np.ones_like(x),))
    each = [float(srcjax.jvp(halve, (r,), (np.ones(2, np.float32),))[1]) for r in x]
    np.testing.assert_allclose(np.asarray(tb), each, rtol=1e-6)


def test_einsum_with_summed_ellipsis():
    """Item 04 (repro_04.py): an ellipsis the explicit output leaves out is
    summed (JAX 0.10.2: 4324.0 and [60, 66, 72, 78]); srcjax raised NumPy's
    ValueError, eagerly and under jit. Gradients vs the NumPy closed form."""
    y = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert float(jnp.einsum("...d,...d->", y, y)) == 4324.0
    np.testing.assert_array_equal(np.asarray(jnp.einsum("...ij->j", y)), [60, 66, 72, 78])
    f = srcjax.jit(lambda a: jnp.einsum("...d,...d->", a, a))
    assert float(f(y)) == 4324.0
    np.testing.assert_allclose(np.asarray(srcjax.grad(f)(y)), 2 * y)
    g = srcjax.grad(lambda a: jnp.einsum("...ij->j", a) @ np.arange(4.0, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(g(y)), np.broadcast_to(np.arange(4.0), y.shape))
    np.testing.assert_allclose(
        np.asarray(srcjax.vmap(lambda a: jnp.einsum("...d,...d->", a, a))(y)),
        (y * y).sum(axis=(1, 2)),
    )
    # a lower-rank operand's axes align from the right
    v = np.arange(4, dtype=np.float32)
    assert float(jnp.einsum("...d,...d->", y, v)) == float((y * v).sum())


def _model(x, scale=1.0, shift=0.0):
    return x * scale + shift


def _apply(x, **kwargs):  # a wrapper forwarding options
    return jnp.sum(_model(x, **kwargs) ** 2)


def _both(*args, **kw):
    return sum(args) * kw["s"]


def _both_sum(*args, **kw):
    return jnp.sum(args[0] * args[1]) * kw.get("s", 1.0)


def test_keywords_through_star_star_kwargs():
    """Item 12 (repro_12.py): jit of ``f(*args, **kw)`` called with a keyword
    said "unexpected keyword argument" (JAX 0.10.2: [4, 4, 4]), and grad of a
    function taking ``**kwargs`` was refused (JAX: [8, 8, 8]). Positional
    arguments are differentiated, keywords passed through (closed form
    2 * scale * (x * scale + shift))."""
    x = np.ones(3, np.float32)
    np.testing.assert_array_equal(np.asarray(srcjax.jit(_both)(x, x, s=2.0)), [4.0] * 3)
    np.testing.assert_array_equal(np.asarray(srcjax.grad(_apply)(x, scale=2.0)), [8.0] * 3)
    for kw in [{}, {"shift": 1.0}, {"scale": 3.0, "shift": -1.0}, {"scale": 2.0}]:
        s, b = kw.get("scale", 1.0), kw.get("shift", 0.0)
        want = 2 * s * (x * s + b)
        np.testing.assert_allclose(np.asarray(srcjax.grad(_apply)(x, **kw)), want)
        np.testing.assert_allclose(np.asarray(srcjax.jit(srcjax.grad(_apply))(x, **kw)), want)
        v, g = srcjax.value_and_grad(_apply)(x, **kw)
        assert float(v) == float(((x * s + b) ** 2).sum())
        np.testing.assert_allclose(np.asarray(g), want)
    g = srcjax.grad(_both_sum, argnums=1)
    np.testing.assert_allclose(np.asarray(g(x, 2 * x, s=3.0)), [3.0] * 3)
    np.testing.assert_allclose(np.asarray(g(x, 2 * x)), [1.0] * 3)


def test_readme_extras_are_the_names_pip_publishes():
    """Item 13(c): README's ``.[ml_dtypes,numba]`` was rejected by pip 23.2 (the
    metadata publishes the normalized name ``ml-dtypes``, PEP 685). Every extra
    pyproject declares is already in normalized form, and every extra README
    names is one of them."""
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parent.parent
    text = (root / "pyproject.toml").read_text()
    section = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    extras = set(re.findall(r"^([A-Za-z0-9_.-]+)\s*=", section, re.M))  # (no tomllib on 3.10)
    assert {"ml-dtypes", "numba", "scipy"} <= extras, sorted(extras)
    assert all(re.sub(r"[-_.]+", "-", e).lower() == e for e in extras), sorted(extras)
    readme = (root / "README.md").read_text()
    named = re.findall(r"\.\[([^\]]+)\]", readme)
    assert named
    for group in named:
        assert set(group.split(",")) <= extras, group


def test_segment_sum_under_jit_warns_nothing():
    """Item 13(a): jit over srcjax.ops.segment_sum emitted NumPy's FutureWarning
    about ``np.str`` from srcjax's own normalizer (JAX: 4.0, no warning)."""
    x, ids = np.ones(4, np.float32), np.array([0, 1, 1, 2])
    f = srcjax.jit(lambda x, ids: jnp.sum(srcjax.ops.segment_sum(x, ids, num_segments=3)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(f(x, ids)) == 4.0


def test_at_mul_sort_statement_and_dsplit():
    """Item 05 (repro_05.py): ``.at[i].mul`` under grad was refused (JAX 0.10.2's
    grad: 1.0); ``x.sort()`` as a statement on an array was refused with a
    message about sorting a list; ``jnp.dsplit`` was missing (oracle: NumPy)."""
    import pytest

    f = lambda x: jnp.sum(jnp.ones(3).at[1].mul(x))  # noqa: E731
    assert float(srcjax.grad(f)(2.0)) == 1.0
    assert float(srcjax.jit(f)(2.0)) == 4.0

    def sort_stmt(x):
        x.sort()
        return jnp.sum(x * x)

    with pytest.raises(srcjax.errors.UnsupportedSyntaxError) as info:
        srcjax.grad(sort_stmt)(np.array([3.0, 1.0], np.float32))
    assert "`x.sort()` as a statement" in str(info.value) and "list" not in str(info.value)
    assert "x = jnp.sort(x)" in str(info.value)
    y = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for spec in (2, [1, 3]):
        got = jnp.dsplit(y, spec)
        want = np.dsplit(y, spec)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), w)
    g = srcjax.grad(lambda a: jnp.sum(jnp.dsplit(a, 2)[1] ** 2))(y)
    np.testing.assert_array_equal(np.asarray(g), np.where(np.arange(4) >= 2, 2 * y, 0))
    with pytest.raises(ValueError, match="3 or more dimensions"):
        jnp.dsplit(np.ones((2, 2)), 2)


def test_int32_scalar_times_python_float_under_jit_is_weak():
    """Item 06 (repro_06.py): jit(f)(np.int32(2), 3.5) with f = x * y + 1 gave a
    strong float32; JAX 0.10.2: Array(8., dtype=float32, weak_type=True) (the
    abstract interpreter took NumPy's float64 scalar stand-in for a Python
    float). A 1-element array was already right."""
    f = srcjax.jit(lambda x, y: x * y + 1)
    for x in (np.int32(2), np.array(2, np.int32)):
        r = f(x, 3.5)
        assert float(r) == 8.0 and r.dtype == np.float32 and r.weak_type
    r = srcjax.jit(lambda x: x * 3.5)(np.int32(2))
    assert float(r) == 7.0 and r.dtype == np.float32 and r.weak_type
    r = srcjax.jit(lambda x: x * np.float32(3.5))(np.int32(2))
    assert r.dtype == np.float32 and not r.weak_type


def _reduce_product(x):
    return jnp.sum(functools.reduce(lambda a, b: a * b, [x, x + 1, 2 * x], 1.0))


def _reduce_add(x):
    return functools.reduce(operator.add, [jnp.sum(r) for r in x])


def _reduce_max(x):
    return reduce(jnp.maximum, list(x)).sum()


def test_functools_reduce_under_transforms():
    """Item 05 (repro_05.py): functools.reduce under grad had no derivative rule.
    Values, gradients and vmap as JAX 0.10.2 gives them (recorded)."""
    xs = np.arange(6, dtype=np.float32).reshape(3, 2) + 1
    want = {
        _reduce_product: (1064.0, [[10, 32], [66, 112], [170, 240]], [28, 232, 804]),
        _reduce_add: (21.0, [[1, 1], [1, 1], [1, 1]], [3, 7, 11]),
        _reduce_max: (11.0, [[0, 0], [0, 0], [1, 1]], [3, 7, 11]),
    }
    for fn, (value, grad, batched) in want.items():
        assert float(srcjax.jit(fn)(xs)) == value
        np.testing.assert_array_equal(np.asarray(srcjax.grad(fn)(xs)), grad)
        np.testing.assert_array_equal(np.asarray(srcjax.vmap(fn)(xs[:, None, :])), batched)
    # the repro's list of arrays: JAX's [2, 2] and [6, 6]
    g = srcjax.grad(lambda ys: jnp.sum(_reduce_add_sq(ys)))(
        [np.ones(2, np.float32), np.full(2, 3.0, np.float32)]
    )
    np.testing.assert_array_equal(np.asarray(g[0]), [2.0, 2.0])
    np.testing.assert_array_equal(np.asarray(g[1]), [6.0, 6.0])


def _reduce_add_sq(ys):
    return functools.reduce(operator.add, [y**2 for y in ys])
