"""srcjax/frontend/normalize/inline.py: calls of user functions are inlined with
their locals renamed. Oracle: the normalized (flat) function returns what the
Python call chain returns, and no call of the helpers is left."""

import numpy as np
import pytest
from frontend_run import assert_same, normalized_text
from helpers import assert_close

import srcjax
import srcjax.numpy as jnp
from srcjax.example_libraries import optimizers


def _square(v):
    t = v * v  # a local named like the caller's
    return t


def _affine(v, w=2.0, *, b=1.0):
    return v * w + b


def _early(v):
    if jnp.sum(v) > 0:
        return v
    return -v


def _kwargs(v, **kw):
    return _affine(v, **kw)


def caller(x):
    t = x + 1.0
    return _square(t) + t


def with_keywords(x):
    return _affine(x) + _affine(x, 3.0) + _affine(x, b=-1.0) + _affine(x, w=0.5, b=0.0)


def with_early_return(x):
    return _early(x) + _early(-x)


def forwarding_kwargs(x):
    return _kwargs(x, w=4.0, b=0.5)


def twice(x):
    return _square(_square(x))


class Model:
    def __init__(self, w):
        self.w = w

    def apply(self, v):
        return v * self.w


MODEL = Model(3.0)


def bound_method(x):
    return MODEL.apply(x)


X = jnp.asarray(np.array([0.5, -2.0]))


@pytest.mark.parametrize(
    "f", [caller, with_keywords, with_early_return, forwarding_kwargs, twice, bound_method]
)
def test_inlined_function_gives_pythons_values(f):
    assert_same(f, X)


def test_no_call_of_a_user_function_is_left_and_locals_are_renamed():
    text = normalized_text(caller)
    assert "_square(" not in text
    lines = [line.strip() for line in text.splitlines()]
    # the caller's t keeps its name, the helper's t is renamed
    assert [line for line in lines if line.startswith("t = ")] == ["t = x + 1.0"]


def _layer(w, x, act=jnp.tanh):
    return act(x * w)


def test_a_function_passed_by_keyword_is_differentiated_as_a_positional_one():
    # bug 11: `layer(w, x, act=f)` gave NoDerivativeRuleError for `act`
    import srcjax
    import srcjax.nn

    by_keyword = srcjax.grad(lambda w: _layer(w, 2.0, act=srcjax.nn.relu))(0.7)
    np.testing.assert_allclose(float(by_keyword), 2.0, rtol=1e-6)  # JAX 0.10.2: 2.0
    sin_kw = srcjax.grad(lambda w: _layer(w, 2.0, act=jnp.sin))(0.7)
    sin_pos = srcjax.grad(lambda w: _layer(w, 2.0, jnp.sin))(0.7)
    np.testing.assert_allclose(float(sin_kw), 2.0 * np.cos(1.4), rtol=1e-6)
    np.testing.assert_allclose(float(sin_kw), float(sin_pos), rtol=1e-6)


def _optimizer_inside(w):
    init, update, get = optimizers.sgd(0.1)
    return srcjax.numpy.sum(get(update(0, w, init(w))) ** 2)


def test_an_error_inside_inlined_srcjax_code_names_the_users_call():
    """Fresh user: an optimizer built inside a differentiated function was refused
    with the error at srcjax/example_libraries/optimizers.py:172, a line the user
    never wrote. The error names the user's call and says where inside srcjax."""
    from srcjax.errors import UnsupportedSyntaxError

    with pytest.raises(UnsupportedSyntaxError) as info:
        srcjax.grad(_optimizer_inside)(np.ones(3, np.float32))
    err = info.value
    assert err.loc.filename == __file__
    assert err.loc.lineno == _optimizer_inside.__code__.co_firstlineno + 1
    assert "inside srcjax's `sgd`" in str(err) and "optimizers.py" in str(err)


def _posonly(x, /, y):
    return x * y


def _posonly_defaults(a, b=2.0, /, c=3.0, *, d=4.0):
    return a * b + c * d


def f_positional_only(x):
    def inner(u, /, v=1.5):
        return u - v

    return (
        _posonly(x, 3.0)
        + _posonly_defaults(x)
        + _posonly_defaults(x, 5.0)
        + _posonly_defaults(x, 5.0, c=1.0)
        + _posonly_defaults(x, 1.0, 2.0, d=0.5)
        + inner(x)
        + inner(x, 2.0)
    )


def _top_posonly(x, /, y):
    return jnp.sum(jnp.sin(x) * y)


def test_positional_only_parameters_are_bound_as_python_binds_them():
    """Fresh-user bug (session 11): the inliner ignored positional-only
    parameters (`_posonly(x, 3.0)` was "`_posonly` takes 1 arguments, 2 given"),
    and a transformed function with one was refused. Oracle: the Python call,
    and the derivative by hand."""
    x = np.array([0.5, -1.25, 2.0])
    assert_same(f_positional_only, jnp.asarray(x))
    g = srcjax.grad(lambda v: jnp.sum(f_positional_only(v)))(x)
    np.testing.assert_allclose(g, np.full(3, 3.0 + 2 + 5 + 5 + 1 + 1 + 1), rtol=1e-6)
    np.testing.assert_allclose(srcjax.grad(_top_posonly)(x, 4.0), 4.0 * np.cos(x), rtol=1e-6)
    np.testing.assert_allclose(srcjax.jit(_top_posonly)(x, 4.0), 4.0 * np.sin(x).sum(), rtol=1e-6)


def _posonly_by_keyword(x):
    return _posonly(x=x, y=2.0)


def test_a_positional_only_parameter_passed_by_keyword_is_pythons_type_error():
    with pytest.raises(
        TypeError, match="positional-only arguments passed as keyword arguments: 'x'"
    ):
        srcjax.jit(_posonly_by_keyword)(np.ones(2))


def _switching_step(s, p):
    def high(s):
        return s * p

    def low(s):
        return s + p

    return srcjax.lax.switch(jnp.where(s > 1.0, 0, 1), [high, low], s)


def _switching_sim(p):
    return srcjax.lax.fori_loop(0, 6, lambda i, s: _switching_step(s, p), jnp.asarray(2.0))


def _switching_sim_loop(p):
    s = 2.0
    for _ in range(6):
        s = s * p if s > 1.0 else s + p
    return s


def test_a_local_def_is_no_recursion_when_ids_are_reused(monkeypatch, x64):
    """Fresh-user bug 31: `high` "calls itself" on code without recursion, in some
    environments only. The recursion stack held the id of the lambda's def, a
    temporary freed while the lambda's body (`_switching_step`, with its `def
    high`) was inlined; a def allocated there could take that id. Every object
    given one id forces the reuse. Oracle: a Python loop and float64 central
    differences of it."""
    from srcjax.frontend.normalize import inline

    monkeypatch.setattr(inline, "id", lambda obj: 0, raising=False)
    monkeypatch.setenv("SRCJAX_DISK_CACHE", "0")  # (a hit would not normalize)
    p = 1.3
    assert_close(srcjax.jit(_switching_sim)(p), _switching_sim_loop(p), rtol=1e-12)
    fd = (_switching_sim_loop(p + 1e-6) - _switching_sim_loop(p - 1e-6)) / 2e-6
    assert_close(srcjax.jacfwd(_switching_sim)(p), fd, rtol=1e-7)
    assert_close(srcjax.grad(_switching_sim)(p), fd, rtol=1e-7)
