"""srcjax/frontend/normalize/expressions.py: expressions to atoms (operators,
comparison chains, short-circuit and/or, conditional expressions, subscripts,
attributes, dunder calls). Oracle: the normalized function returns what Python
computes."""

import numpy as np
import pytest
from frontend_run import assert_same, normalized_text

import srcjax.numpy as jnp


def operators(x, y):
    return (x + y) * (x - y) / (1.0 + y * y) - x**2 % 3.0 + -x


def comparison_chain(a):
    return 0 < a < 5, a == 3 or a > 4


def short_circuit(a, b):
    return (a and b) or (not a and 7)


def conditional_expression(x, flag):
    return jnp.sin(x) if flag else jnp.cos(x)


def subscripts(a):
    return a[1:, 0], a[..., -1], a[::2]


def attributes(a):
    return a.T @ a, a.shape[0], a.ndim


def matmul_and_unary(a):
    return -(a @ a) + (+a)


def folded_constants(x):
    return x * (2.0 * 3.0) + (-(1.0))


A = jnp.asarray(np.arange(6.0).reshape(2, 3) / 3.0)


@pytest.mark.parametrize(
    "f, args",
    [
        (operators, (np.array([1.0, 2.5]), np.array([0.5, -1.0]))),
        (comparison_chain, (3,)),
        (comparison_chain, (7,)),
        (short_circuit, (0, 5)),
        (short_circuit, (2, 0)),
        (short_circuit, (2, 3)),
        (conditional_expression, (np.array([0.3]), True)),
        (conditional_expression, (np.array([0.3]), False)),
        (subscripts, (A,)),
        (attributes, (A,)),
        (matmul_and_unary, (np.eye(2) * 2.0,)),
        (folded_constants, (np.array([1.0, 2.0]),)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_normalized_expression_gives_pythons_values(f, args):
    assert_same(f, *args)


def test_one_primitive_per_assignment():
    text = normalized_text(operators)
    body = [line.strip() for line in text.splitlines()[1:]]
    for line in body:
        if " = " in line:
            rhs = line.split(" = ", 1)[1]
            assert sum(rhs.count(op) for op in (" + ", " - ", " * ", " / ", " % ")) <= 1, line


def test_a_negated_constant_is_folded():
    assert "-1.0" in normalized_text(folded_constants)
