"""srcjax/frontend/normalize/resolve.py: calls resolved by the callee kind -> handler
table (CALL_RULES). Each subject below has one call of one kind; the test checks
which rule normalized it and that the normalized function computes what the
Python function computes."""

import collections

import numpy as np
import pytest
from frontend_run import assert_same, normalized

import srcjax
import srcjax.numpy as jnp
from srcjax import lax
from srcjax.errors import ResolutionError, UnsupportedSyntaxError
from srcjax.frontend.normalize import resolve

Pair = collections.namedtuple("Pair", ["a", "b"])


def _helper(v):
    return v * 3.0


def f_primitive(x):
    return jnp.sin(x)


def f_user_function(x):
    return _helper(x)


def f_lambda(x):
    return (lambda y: y * 2.0)(x)


def f_local_function(x):
    def sq(y):
        return y * y

    return sq(x)


def f_at_update(x):
    return x.at[0].set(5.0)


def f_at_subtract(x):
    return x.at[1].subtract(2.0)


def f_method(x):
    return x.sum()


def f_lax(x):
    return lax.fori_loop(0, 3, lambda i, c: c * 2.0, x)


def f_host_numpy(x):
    return x * np.prod(x.shape)


def f_dict(x):
    d = {"a": x}
    return dict(d, b=x)


def f_pytree_class(x):
    return Pair(x, 2.0 * x)


def f_replace(x):
    p = Pair(x, x)
    return p._replace(b=3.0)


def f_transform_factory(x):
    return srcjax.grad(lambda y: jnp.sum(y * y))(x)


def f_builtin(x):
    return float(len(x))


def f_missing(x):
    return no_such_function(x)  # noqa: F821


def f_not_inside(x):
    return srcjax.vjp(jnp.sin, x)


def _recorded(rule, seen):
    def handle(norm, callee, target):
        out = rule.handle(norm, callee, target)
        if out is not None:
            seen.append(rule.kind)
        return out

    return resolve.CallRule(rule.kind, rule.matches, handle)


def kinds(f, monkeypatch):
    """The kinds of the rules that normalized ``f``'s calls (inner calls first)."""
    seen = []
    rules = tuple(_recorded(r, seen) for r in resolve.CALL_RULES)
    monkeypatch.setattr(resolve, "CALL_RULES", rules)
    normalized(f)
    monkeypatch.undo()
    return seen


X = np.array([0.5, -1.25, 2.0])


@pytest.mark.parametrize(
    "f, expected",
    [
        (f_primitive, ["primitive"]),
        (f_user_function, ["user_function"]),
        (f_lambda, ["lambda"]),
        (f_local_function, ["local_function"]),
        (f_at_update, ["at_update"]),
        (f_at_subtract, ["at_update", "at_update"]),  # x.at[i].add(-v)
        (f_method, ["method"]),
        (f_lax, ["lax"]),
        (f_host_numpy, ["host_numpy"]),
        (f_dict, ["dict"]),
        (f_pytree_class, ["pytree_class"]),
        (f_replace, ["pytree_class", "namedtuple_replace"]),
        (f_builtin, ["inactive", "inactive"]),  # len, float: no derivative
    ],
)
def test_each_callee_kind_goes_to_its_handler_and_keeps_the_values(f, expected, monkeypatch):
    assert kinds(f, monkeypatch) == expected
    assert_same(f, jnp.asarray(X))


def test_a_transform_factory_called_inside_is_its_handler():
    seen = []
    rules = tuple(_recorded(r, seen) for r in resolve.CALL_RULES)
    old = resolve.CALL_RULES
    resolve.CALL_RULES = rules
    try:
        normalized(f_transform_factory)
    finally:
        resolve.CALL_RULES = old
    assert seen[-1] == "transform_factory"
    # the value: d/dy sum(y*y) = 2y
    np.testing.assert_allclose(np.asarray(f_transform_factory(X)), 2 * X)


def test_missing_and_not_inside_raise_from_their_handlers():
    with pytest.raises(ResolutionError):
        normalized(f_missing)
    with pytest.raises(UnsupportedSyntaxError, match="inside a transformed function"):
        normalized(f_not_inside)


def test_the_table_maps_each_kind_to_one_handler():
    table = resolve.CALL_RULES
    names = [r.kind for r in table]
    assert len(set(names)) == len(names)
    assert resolve.CALL_HANDLERS == {r.kind: r.handle for r in table}
    assert resolve.CALL_HANDLERS["primitive"] is resolve._primitive
    assert resolve.CALL_HANDLERS["at_update"] is resolve._at_update
    # syntax first, then typed values, then what the callee is bound to; the last
    # rule takes every call
    assert names[0] == "at_update" and names[-1] == "unknown"
    assert names.index("typed") < names.index("lax") < names.index("primitive")
    assert table[-1].matches(None, None)


def test_callee_resolves_once_lazily():
    calls = []

    class FakeNorm:
        def resolve(self, func):
            calls.append(func)
            return "found", jnp.sin

    import gast

    e = gast.parse("jnp.sin(x)").body[0].value
    c = resolve.Callee(e)
    assert calls == []
    norm = FakeNorm()
    assert c.status(norm) == "found" and c.obj(norm) is jnp.sin
    assert c.found(norm) is jnp.sin and c.function(norm) is jnp.sin
    assert len(calls) == 1
    assert resolve._is_primitive(norm, c) and c.prim.public == "jnp.sin"


class _Base:
    def act(self, x):
        return jnp.tanh(x)


class _Scaled(_Base):
    def act(self, x):
        return super().act(x) * 2.0


def test_zero_argument_super_in_a_transformed_method():
    """User bug 07: super() in a jitted method ran in generated code, which has
    no __class__ cell: a bare RuntimeError. Now super().act(x) inlines the base
    class's method. JAX 0.10.2: [0, 1.5231884, 1.9280552]; the derivative at
    0.5 is 2 (1 - tanh(0.5)^2)."""
    np.testing.assert_allclose(
        srcjax.jit(_Scaled().act)(jnp.arange(3.0)), [0.0, 1.5231884, 1.9280552], rtol=1e-6
    )
    np.testing.assert_allclose(
        srcjax.grad(_Scaled().act)(0.5), 2.0 * (1.0 - np.tanh(0.5) ** 2), rtol=1e-6
    )


class _KeepsSuper(_Base):
    def act(self, x):
        s = super()
        return s.act(x)


def test_super_kept_as_a_value_is_a_located_error():
    with pytest.raises(UnsupportedSyntaxError, match=r"super\(\).*not supported") as err:
        srcjax.jit(_KeepsSuper().act)(1.0)
    assert "test_frontend_resolve.py:" in str(err.value)
