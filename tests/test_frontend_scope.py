"""srcjax/frontend/normalize/scope.py: name resolution (locals, globals, module
tables, getattr on modules) and the user globals generated code must not take
for its own names. Oracle: what Python resolves the same names to."""

import numpy as np
import pytest
from frontend_run import assert_same, normalized

import srcjax
import srcjax.numpy as jnp
from srcjax import lax
from srcjax.frontend.normalize.anf import UserGlobal

ad = 3.0  # a user global named like generated code's `ad` namespace
ACTIVATIONS = {"tanh": jnp.tanh, "sin": jnp.sin}
SCALE = 0.5


def shadowing_global(x):
    return x * ad


def table_lookup(x):
    return ACTIVATIONS["tanh"](x) + ACTIVATIONS["sin"](x)


def getattr_of_a_module(x):
    return getattr(jnp, "cos")(x)  # noqa: B009  (the getattr resolution is the point)


def module_data(x):
    return x * SCALE


X = jnp.asarray(np.array([0.2, -0.4]))


@pytest.mark.parametrize("f", [shadowing_global, table_lookup, getattr_of_a_module, module_data])
def test_resolved_names_give_pythons_values(f):
    assert_same(f, X)


def test_a_global_named_like_a_namespace_is_read_live_by_another_name():
    norm = normalized(shadowing_global)
    live = {k: v for k, v in norm.bindings.items() if isinstance(v, UserGlobal)}
    assert list(live.values())[0].name == "ad" and "ad" not in live  # (ad_ or so)


def test_resolve_statuses():
    import gast

    from srcjax.frontend.normalize import Normalizer
    from srcjax.frontend.source import get_source

    norm = Normalizer(get_source(table_lookup))
    norm.locals.add("x")
    expr = lambda s: gast.parse(s).body[0].value  # noqa: E731
    assert norm.resolve(expr("x")) == ("local", "x")
    assert norm.resolve(expr("jnp.tanh")) == ("found", jnp.tanh)
    assert norm.resolve(expr('ACTIVATIONS["sin"]')) == ("found", jnp.sin)
    assert norm.resolve(expr("no_such_name"))[0] == "missing"
    assert norm.resolve(expr("x.T"))[0] == "local"


def lax_binary_ops(x, y):
    return lax.sub(x, y) * lax.ge(x, y)


def test_strings_a_srcjax_maker_closes_over_are_literals():
    # lax.sub is made by lax._ops.elementwise._binary: its name and dtype kinds
    # are closure cells, written into the generated code as the literals they hold
    a, b = jnp.asarray(np.array([1.0, 2.0])), jnp.asarray(np.array([2.0, 1.0]))
    assert_same(lax_binary_ops, a, b)
    text = srcjax.source(srcjax.jit(lax_binary_ops), a, b)
    assert "ad.lax_same_dtypes('sub', 'num', x, y)" in text
    assert "ad.lax_same_dtypes('ge', 'any', x, y)" in text
    with pytest.raises(TypeError, match="lax.sub requires arguments to have the same dtypes"):
        srcjax.jit(lax_binary_ops)(a, jnp.asarray(np.array([1, 2], np.int32)))


def _scaled_by_a_closure_named_ad(c):
    ad = c  # a closure cell named like generated code's `ad` namespace

    def f(x):
        return x * ad

    return f


_SCALERS = [_scaled_by_a_closure_named_ad(float(k)) for k in range(1, 5)]


def _sum_of_scalers(x):
    return _SCALERS[0](x) + _SCALERS[1](x) + _SCALERS[2](x) + _SCALERS[3](x)


def test_shadowing_closures_of_inlined_functions_when_ids_are_reused(monkeypatch):
    """Each inlined function's `ad` cell gets its own alias: the alias table was
    keyed on the ids of the closures' dicts, which are made per inlined call and
    may be freed, so a later closure could take an id and read another one's
    value (every object given one id forces it: all four read 1.0, grad 4.0).
    Oracle: Python's call, 1 + 2 + 3 + 4."""
    from srcjax.frontend.normalize import scope

    monkeypatch.setattr(scope, "id", lambda obj: 0, raising=False)
    monkeypatch.setenv("SRCJAX_DISK_CACHE", "0")  # (a hit would not normalize)
    assert _sum_of_scalers(1.0) == 10.0
    assert float(srcjax.grad(_sum_of_scalers)(1.0)) == 10.0
    assert float(srcjax.jit(_sum_of_scalers)(2.0)) == 20.0
