"""The Primitive facts that replaced the transforms' tests of primitive names
(``prim.public == "ad.getitem"`` and the like in reverse/, batching/,
optimize/, fusion.py and analysis/activity.py, as of main 62407df): each fact holds for
exactly the primitives the old test named, so the transforms behave as before;
and a few end-to-end values through the code that reads them."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_close

import srcjax
import srcjax.lax  # noqa: F401
import srcjax.numpy as jnp
from srcjax.primitives.registry import REGISTRY


def _with(fact):
    return {p.public for p in set(REGISTRY.values()) if getattr(p, fact)}


def _values(fact):
    return {p.public: getattr(p, fact) for p in set(REGISTRY.values()) if getattr(p, fact)}


def test_each_fact_holds_for_the_names_the_transforms_tested():
    assert _values("container_from") == {
        "ad.setitem": ("x",),
        "ad.tree_add": ("a",),
        "ad.tree_index_adjoint": ("x",),
        "ad.cotangent_like": ("x",),
    }
    assert _values("row_operands") == {"ad.getitem": ("x", "idx"), "ad.tree_slice": ("xs", "i")}
    assert _with("trip_count") == {"ad.scan_length", "ad.seq_len", "ad.bscan_length"}
    # (read by jit's optimize/shape_only.py)
    assert _values("shape_only") == {
        "ad.expand_reduced": ("x",),
        "ad.row_stand_in": ("x",),
        # (and, for their from_shapes results, the operands that are no option)
        "ad.mean_scale": ("ans", "x"),
        "ad.dof_scale": ("x", "ans"),
    }
    assert _with("prints_per_example") == {"ad.print_examples"}
    assert _with("carry_check") == {"ad.check_carry"}
    assert _values("cast_dtype_param") == {"ad.astype": "dtype", "ad.astype_weak": "dtype"}
    assert _with("matrix_product") == {"jnp.matmul", "jnp.dot"}
    assert _with("value_shaped") == {"jnp.nonzero", "jnp.flatnonzero", "jnp.argwhere", "jnp.unique"}
    # (fusion's REDUCTIONS table, keyed by name before)
    assert _values("fused_reduction") == {
        "jnp.sum": "sum",
        "jnp.mean": "mean",
        "jnp.max": "max",
        "jnp.min": "min",
    }


def test_operator_spellings_the_transforms_read_are_unique():
    # optimize's algebra and promotion, and vmap's `+` of tuples, find jnp.multiply,
    # add, subtract, power, floor_divide by Primitive.op; ad.getitem/ad.getattr by
    # Primitive.part
    ops = {}
    for p in set(REGISTRY.values()):
        if p.op:
            ops.setdefault(p.op, set()).add(p.public)
    for spelling, name in [
        ("*", "jnp.multiply"),
        ("+", "jnp.add"),
        ("-", "jnp.subtract"),
        ("**", "jnp.power"),
        ("//", "jnp.floor_divide"),
    ]:
        assert ops[spelling] == {name}
    parts = {p.public: p.part for p in set(REGISTRY.values()) if p.part in ("item", "attr")}
    assert parts == {"ad.getitem": "item", "ad.getattr": "attr"}


@pytest.mark.usefixtures("x64")
def test_jit_shape_rules_read_the_facts():
    # matrix_product: (3, 4) @ (4, 2) under jit; cast_dtype_param: astype keeps the shape
    a = np.arange(12.0).reshape(3, 4)
    b = np.arange(8.0).reshape(4, 2)
    f = srcjax.jit(lambda a, b: jnp.dot(a, b).astype(jnp.float32) * 1.0)
    out = f(a, b)
    assert out.shape == (3, 2) and out.dtype == np.float32
    assert_close(np.asarray(out), a @ b)
    # value_shaped: nonzero's length depends on the values (size given: static)
    g = srcjax.jit(lambda x: jnp.nonzero(x, size=3, fill_value=-1)[0])
    np.testing.assert_array_equal(np.asarray(g(np.array([0.0, 2.0, 0.0, 5.0]))), [1, 3, -1])


@pytest.mark.usefixtures("x64")
def test_vmap_and_grad_through_container_facts():
    # container_from (ad.setitem): a dict updated under vmap stays a dict
    def f(x):
        d = {"a": x}
        d["b"] = x * 2.0
        return d["a"] + d["b"]

    xs = np.arange(3.0)
    assert_close(np.asarray(srcjax.vmap(f)(xs)), 3.0 * xs)

    # row_operands (ad.getitem as a row read of a loop): grad of a sum of rows
    def g(xs):
        s = 0.0
        for k in range(xs.shape[0]):
            s = s + jnp.sin(xs[k]) * k
        return jnp.sum(s)

    x = np.linspace(0.1, 0.9, 6).reshape(3, 2)
    assert_close(np.asarray(srcjax.grad(g)(x)), np.cos(x) * np.arange(3.0)[:, None])
