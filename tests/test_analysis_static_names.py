"""srcjax.analysis.static_names: names that hold the same Python value for
every example under vmap, and constants every binding agrees on, checked
against sets worked out by hand; vmap of the same function against a Python
loop over the examples."""

import gast
import numpy as np
from helpers import assert_close

import srcjax
import srcjax.numpy as jnp
from srcjax.analysis.static_names import (
    constant_names,
    constant_values,
    is_constant,
    is_static_expr,
    static_names,
)
from srcjax.frontend.normalize import normalize
from srcjax.frontend.source import get_source


def meta(x, flag):
    n = jnp.ndim(x)  # a shape query: static
    k = 3  # a plain constant: not static metadata (k = 1 / k = 2 in branches is data)
    window = (1, 2, 2)  # an option passed on: a constant display
    sl = slice(None, None, -1)  # a constant slice: static
    if flag:
        m = 1
    else:
        m = 2
    y = x[sl] * k
    w = window[0]  # an item of a constant display: static once something is
    return y * w + n + m


def _body(fn):
    return list(normalize(get_source(fn)).node.body)


def test_static_names_by_hand():
    assert static_names(_body(meta)) == {"n", "sl", "w"}


def test_constants_by_hand():
    body = _body(meta)
    # m has two different values; tuples and scalars count, every binding agreeing
    assert constant_values(body) == {"k": 3, "window": (1, 2, 2)}
    assert constant_names(body) == {"k", "m", "window"}


def test_static_expressions():
    def expr(src):
        return gast.parse(src).body[0].value

    assert is_static_expr(expr("slice(None, None, -1)"))
    assert is_static_expr(expr("(slice(1, 2), 0)"))
    assert not is_static_expr(expr("(1, 2)"))  # plain constants are data
    assert not is_static_expr(expr("slice(n)"))
    assert is_constant(expr("-1")) and is_constant(expr("2.5")) and not is_constant(expr("x"))


def test_vmap_matches_a_python_loop():
    xs = np.arange(12.0).reshape(3, 4)
    flags = np.array([True, False, True])
    got = np.asarray(srcjax.vmap(meta)(xs, flags))
    want = np.stack([meta(x, bool(f)) for x, f in zip(xs, flags)])
    assert_close(got, want)
