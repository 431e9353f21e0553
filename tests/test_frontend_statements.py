"""srcjax/frontend/normalize/statements.py: assignments (tuple, starred, augmented,
subscript and attribute targets), if/return, del and nested defs in normalized
form. Oracle: the normalized function returns what the Python function returns."""

import numpy as np
import pytest
from frontend_run import assert_same, normalized

import srcjax.numpy as jnp
from srcjax.errors import UnsupportedSyntaxError


def tuple_targets(x):
    a, (b, c) = x, (2.0 * x, 3.0)
    a, b = b, a
    return a - b + c


def starred(x):
    first, *rest = [x, 2.0 * x, 3.0 * x]
    return first + rest[-1], len(rest)


def augmented(x):
    y = x
    y += 2.0
    y *= x
    y -= 1.0
    y /= 4.0
    y **= 2
    return y


def augmented_subscript(x):
    d = {"a": x, "b": 1.0}
    d["a"] += 3.0
    lst = [x, x]
    lst[1] *= 2.0
    return d["a"] + lst[1] + d["b"]


def branches(x, flag):
    if flag:
        y = jnp.sin(x)
    else:
        y = jnp.cos(x)
    return y * 2.0


def nested_def(x):
    def scale(v, k=3.0):
        return v * k

    return scale(x) + scale(x, k=0.5)


def deletes(x):
    d = {"a": x, "b": 2.0 * x}
    del d["a"]
    lst = [x, 2.0 * x, 3.0 * x]
    del lst[0]
    return d, lst


def annotated(x):
    y: float = x * 2.0
    return y


X = jnp.asarray(np.array([0.5, 1.5]))  # (immutable, as JAX arrays: y += 1 rebinds y)


@pytest.mark.parametrize(
    "f, args",
    [
        (tuple_targets, (X,)),
        (starred, (X,)),
        (augmented, (X,)),
        (augmented_subscript, (X,)),
        (branches, (X, True)),
        (branches, (X, False)),
        (nested_def, (X,)),
        (deletes, (X,)),
        (annotated, (X,)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_normalized_statements_give_pythons_values(f, args):
    assert_same(f, *args)


def test_every_computed_assignment_carries_an_op():
    import gast

    norm = normalized(augmented)
    assigns = [s for s in gast.walk(norm.node) if isinstance(s, gast.Assign)]
    assert assigns and all(getattr(s, "sj_op", None) is not None for s in assigns)
    assert {s.sj_op.kind for s in assigns} <= {"prim", "copy", "pack", "inactive", "unknown"}


def test_unsupported_statements_are_errors_at_their_line():
    def uses_try(x):
        try:
            return x
        except ValueError:
            return x

    with pytest.raises(UnsupportedSyntaxError, match="`try`"):
        normalized(uses_try)
