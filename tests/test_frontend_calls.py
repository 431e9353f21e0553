"""srcjax/frontend/normalize/calls.py: primitives, Python builtins, methods of
arrays and NumPy on host values in normalized code. Oracle: Python/NumPy on the
same values."""

import math

import numpy as np
import pytest
from frontend_run import assert_same, normalized

import srcjax.numpy as jnp


def builtins_(x, n):
    return len(x), abs(-2.5), min(n, 3), max([1.0, n]), sum([1.0, 2.0, n]), round(2.6)


def casts_and_isinstance(x, n):
    return float(n) * x, int(2.9), bool(n), isinstance(n, int)


def ranges(n):
    return [i * 2 for i in range(1, n, 2)], list(reversed([1, 2, 3]))


def array_methods(a):
    return (
        a.sum(axis=0),
        a.mean(),
        a.reshape(-1),
        a.max(),
        a.astype(jnp.float32).dtype == jnp.float32,
    )


def host_numpy(a):
    return a * np.prod(a.shape) + math.pi


def primitive_keywords(a):
    return jnp.sum(a, axis=1, keepdims=True), jnp.clip(a, 0.1, 0.5)


A = jnp.asarray(np.arange(1.0, 7.0).reshape(2, 3) / 10.0)


@pytest.mark.parametrize(
    "f, args",
    [
        (builtins_, (A, 4)),
        (casts_and_isinstance, (A, 3)),
        (ranges, (7,)),
        (array_methods, (A,)),
        (host_numpy, (A,)),
        (primitive_keywords, (A,)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_calls_give_pythons_values(f, args):
    assert_same(f, *args)


def test_a_primitive_call_is_one_prim_op_with_its_bound_parameters():
    import gast

    norm = normalized(primitive_keywords)
    ops = [s.sj_op for s in gast.walk(norm.node) if getattr(s, "sj_op", None) is not None]
    prims = {op.prim.public: op.bound for op in ops if op.kind == "prim"}
    assert {"jnp.sum", "jnp.clip"} <= set(prims)
    assert "axis" in prims["jnp.sum"] and "keepdims" in prims["jnp.sum"]
