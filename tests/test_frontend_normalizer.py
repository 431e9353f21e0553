"""srcjax/frontend/normalize/normalizer.py: the driver and normalize(): the
output language's invariants and the errors for what it refuses."""

import gast
import numpy as np
import pytest
from frontend_run import assert_same, normalized

import srcjax.numpy as jnp
from srcjax.errors import RecursionUnsupportedError, UnsupportedSyntaxError
from srcjax.frontend.normalize import dependencies_valid, param_names
from srcjax.frontend.source import get_source


def _helper(v):
    return jnp.tanh(v) * 2.0


def program(x, ad, n):
    out = []
    for i in range(n):
        if i == 2:
            continue
        out.append(_helper(x) * i + ad)
    if n > 10:
        return x
    return out


def recursive(x):
    return recursive(x / 2.0)


def with_global(x):
    global STATE
    return x


STATE = 0


def test_values():
    assert_same(program, jnp.asarray(np.array([0.5, -0.5])), 1.5, 4)


def test_invariants_of_the_normalized_body():
    node = normalized(program).node
    assigns = [s for s in gast.walk(node) if isinstance(s, gast.Assign)]
    assert all(getattr(s, "sj_op", None) is not None for s in assigns)
    # every primitive call knows the user's line it came from
    prims = [s for s in assigns if s.sj_op.kind == "prim"]
    assert prims and all(getattr(s, "sj_origin", None) is not None for s in prims)
    returns = [s for s in gast.walk(node) if isinstance(s, gast.Return)]
    assert len(returns) == 1 and node.body[-1] is returns[0]
    assert not any(isinstance(s, (gast.Break, gast.Continue)) for s in gast.walk(node))


def test_a_parameter_named_like_a_namespace_is_renamed():
    assert param_names(get_source(program)) == ["x", "ad_", "n"]


def test_refusals():
    with pytest.raises(RecursionUnsupportedError):
        normalized(recursive)
    with pytest.raises(UnsupportedSyntaxError, match="`global`"):
        normalized(with_global)


def test_dependencies_stay_valid_until_a_name_is_rebound():
    global _helper
    deps = normalized(program).deps
    assert deps and dependencies_valid(deps)
    old = _helper
    try:
        _helper = lambda v: v  # noqa: E731
        assert not dependencies_valid(deps)
    finally:
        _helper = old
    assert dependencies_valid(deps)
