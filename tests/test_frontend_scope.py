"""srcjax/frontend/normalize/scope.py: name resolution (locals, globals, module
tables, getattr on modules) and the user globals generated code must not take
for its own names. Oracle: what Python resolves the same names to."""

import numpy as np
import pytest
from frontend_run import assert_same, normalized

import srcjax.numpy as jnp
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
