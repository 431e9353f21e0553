"""srcjax/frontend/normalize/common.py: the operator table, constant folding and
the predicates the passes share. Oracle for the operator table: each operator's
primitive computes what NumPy's operator computes."""

import operator

import gast
import numpy as np
import pytest

from srcjax.frontend.normalize.common import (
    _BINOPS,
    _bind,
    _fold_constant,
    _is_library_function,
    _ops_table,
    plain_object,
)
from srcjax.primitives.registry import by_public

PY = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


@pytest.mark.parametrize("op", sorted(PY))
def test_each_operator_maps_to_a_primitive_computing_it(op, x64):
    table = _ops_table()
    # (comparisons stay Python Compare nodes in normalized code: no table maps them)
    assert op in set(_BINOPS.values()) | {"<", "<=", ">", ">=", "==", "!="}
    prim = table[op]
    a, b = np.array([1.5, -2.0, 3.0]), np.array([0.5, 4.0, -1.25])
    np.testing.assert_allclose(np.asarray(prim.impl(a, b)), PY[op](a, b), rtol=1e-15)


def _expr(text):
    return gast.parse(text).body[0].value


def test_constant_folding():
    assert _fold_constant(_expr("-1")).value == -1
    assert _fold_constant(_expr("+2.5")).value == 2.5
    t = _fold_constant(_expr("(0, -1)"))
    assert [c.value for c in t.elts] == [0, -1]
    assert _fold_constant(_expr("x")) is None
    assert _fold_constant(_expr("-x")) is None


def test_bind_by_signature():
    prim = by_public("jnp.sin")
    assert list(_bind(prim, "A")) == ["x"]
    with pytest.raises(TypeError):
        _bind(prim, "A", "B", "C", "D", "E", "F", "G")


def test_predicates():
    class Plain:
        pass

    assert plain_object(Plain()) and not plain_object(3.0) and not plain_object([1])
    assert _is_library_function(np.sum) and not _is_library_function(test_predicates)
