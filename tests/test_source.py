"""Frontend: finding the source of every kind of callable."""

import functools
import linecache

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax.errors import SourceUnavailableError
from srcjax.frontend.source import get_source, unwrap_callable


def test_notebook_cell_source_from_linecache():
    # IPython compiles each cell under a fake file name and registers its text
    # in linecache; srcjax must read it from there.
    cell = "import srcjax.numpy as jnp\ndef cubic(x):\n    return jnp.sum(x ** 3)\n"
    name = "<ipython-input-7-0123456789ab>"
    linecache.cache[name] = (len(cell), None, cell.splitlines(True), name)
    ns = {}
    exec(compile(cell, name, "exec"), ns)
    g = srcjax.grad(ns["cubic"])(np.array([1.0, 2.0], dtype=np.float32))
    assert np.allclose(g, [3.0, 12.0])
    assert "cubic.py" not in srcjax.source(srcjax.grad(ns["cubic"]))


def test_two_lambdas_on_one_line_and_lambda_in_call():
    sq, cube = (lambda x: x * x), (lambda x: x * x * x)
    assert np.isclose(srcjax.grad(sq)(3.0), 6.0)
    assert np.isclose(srcjax.grad(cube)(3.0), 27.0)
    out = list(map(lambda f: float(f(2.0)), [srcjax.grad(lambda x: jnp.sin(x) * 2.0)]))
    assert np.isclose(out[0], 2 * np.cos(2.0), rtol=1e-6)


def test_nested_closure_three_levels():
    def outer(a):
        def middle(b):
            def inner(x):
                return jnp.sum(x * a * b)

            return inner

        return middle

    f = outer(2.0)(5.0)
    assert np.allclose(srcjax.grad(f)(np.ones(2, dtype=np.float32)), [10.0, 10.0])


def test_partial_and_method_unwrap():
    def f(a, b, c):
        return a * b * c

    fn, args, kwargs = unwrap_callable(functools.partial(f, 1.0, c=3.0))
    assert fn is f and args == (1.0,) and kwargs == {"c": 3.0}
    assert np.isclose(srcjax.grad(functools.partial(f, 2.0), argnums=0)(5.0, 3.0), 6.0)


def test_builtin_has_no_source():
    with pytest.raises(SourceUnavailableError) as info:
        srcjax.grad(len)([1.0])
    assert "not a Python function" in str(info.value)


def test_grad_of_a_primitive_directly():
    assert np.isclose(srcjax.grad(jnp.sin)(0.5), np.cos(0.5), rtol=1e-6)
    assert np.isclose(srcjax.grad(jnp.tanh)(0.5), 1 - np.tanh(0.5) ** 2, rtol=1e-6)


def test_source_keeps_real_line_numbers():
    src = get_source(test_builtin_has_no_source)
    import inspect

    assert src.node.lineno == inspect.getsourcelines(test_builtin_has_no_source)[1]


def _cache_probe(x):
    return x * 3.0


def test_unusable_cache_directory_falls_back_with_a_warning(monkeypatch, tmp_path):
    """User E F21: SRCJAX_CACHE_DIR that cannot be created (or a read-only home)
    made every transform fail with NotADirectoryError from internals."""
    import warnings

    import srcjax
    from srcjax.codegen import cache

    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("SRCJAX_CACHE_DIR", str(blocker / "sub"))
    monkeypatch.setattr(cache, "_FALLBACK", {})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = srcjax.grad(_cache_probe)(1.0)
    assert g == 3.0
    assert any("SRCJAX_CACHE_DIR" in str(w.message) for w in caught)
    assert "srcjax-" in cache.cache_dir()


def _sin_times(x):
    return srcjax.numpy.sin(x) * x


def test_source_of_the_functions_vjp_and_linearize_return():
    """srcjax.source(vjp_fn) was refused (a partial of the generated function)."""
    _, vjp_fn = srcjax.vjp(_sin_times, np.float32(1.0))
    text = srcjax.source(vjp_fn)
    assert "def _sin_times_vjp(x, out_bar_in):" in text and "x_bar" in text
    _, lin = srcjax.linearize(_sin_times, np.float32(1.0))
    text = srcjax.source(lin)
    assert "def _sin_times_linearize(x, x_dot):" in text and "out_dot" in text
    np.testing.assert_allclose(vjp_fn(np.float32(1.0))[0], np.sin(1.0) + np.cos(1.0), rtol=1e-6)


def test_source_of_a_transform_of_a_partial_before_any_call():
    """API-breadth report: srcjax.source(vmap(functools.partial(...))) raised
    AttributeError (__code__) when nothing had been called yet."""
    import functools

    g = functools.partial(lambda a, x: a * x, 2.0)
    text = srcjax.source(srcjax.vmap(g))
    assert "def lambda_vmap(x):" in text
    np.testing.assert_array_equal(srcjax.vmap(g)(np.ones(3, np.float32)), [2.0, 2.0, 2.0])


class _Scaled:
    @staticmethod
    @functools.lru_cache(maxsize=None)
    def _unused():  # pragma: no cover - only its source is read
        return 0

    def method(self, x):
        y = jnp.sin(x)  # a comment with a ) paren
        return y * 2.0


def _one_liner(x): return x * 3.0  # noqa: E704  # fmt: skip


def _whole_file_node(fn):
    """The def of ``fn`` found by parsing its whole file (the reference)."""
    import gast

    text = "".join(linecache.getlines(fn.__code__.co_filename))
    first = fn.__code__.co_firstlineno
    for n in gast.walk(gast.parse(text)):
        if isinstance(n, gast.FunctionDef) and n.name == fn.__code__.co_name:
            if min([n.lineno] + [d.lineno for d in n.decorator_list]) == first:
                return n
    raise AssertionError("not found")


def _positions(node):
    import gast

    return [
        (type(n).__name__, n.lineno, n.col_offset, n.end_lineno, n.end_col_offset)
        for n in gast.walk(node)
        if hasattr(n, "lineno")
    ]


def test_a_def_parsed_alone_has_the_positions_of_the_whole_file_parse():
    # get_source parses only the function's lines (a first grad parsed whole rule
    # modules); lines and columns must be those of the file, also for a method
    # (indented), a decorated function and a one-line def
    def nested(x):
        if x > 0:
            return x
        return -x

    for fn in (_Scaled.method, _Scaled._unused.__wrapped__, _one_liner, nested):
        assert _positions(get_source(fn).node) == _positions(_whole_file_node(fn))
    assert np.isclose(srcjax.grad(_Scaled().method)(0.5), 2 * np.cos(0.5))
    assert srcjax.grad(_one_liner)(1.0) == 3.0


def test_bound_method_of_an_array_is_its_jnp_function():
    """User bug 09: jit(x.sum)() transformed Array.sum's forwarder (`*args`) and
    failed with a star-arguments error inside srcjax. JAX 0.10.2: 6.0, [1, 3, 6], 2.0."""
    x = jnp.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(srcjax.jit(x.sum)(), 6.0)
    np.testing.assert_allclose(srcjax.jit(x.cumsum)(), [1.0, 3.0, 6.0])
    np.testing.assert_allclose(srcjax.jit(x.mean)(), 2.0)
