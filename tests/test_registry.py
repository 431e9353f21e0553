"""The registry (srcjax.primitives.registry): primitive facts that the transforms
read, by-name lookups that fail loudly, and rules attached by primitive."""

from __future__ import annotations

import numpy as np
import pytest

import srcjax
import srcjax.lax  # noqa: F401
import srcjax.nn  # noqa: F401
import srcjax.scipy.stats  # noqa: F401
from srcjax.primitives import batch_rules
from srcjax.primitives.registry import REGISTRY, STATIC_PARAM_NAMES, Primitive, by_public


def _with(fact):
    return {p.public for p in REGISTRY.values() if getattr(p, fact)}


# The sets of names the transforms held before these facts moved onto the
# primitives (reverse.py, forward.py, batching.py, optimize.py at c1a605b): each
# fact holds for the same primitives, so the transforms behave as before.
def test_array_result_is_the_old_array_helper_list():
    assert _with("array_result") == {
        "ad.unbroadcast",
        "ad.expand_reduced",
        "ad.matmul_left",
        "ad.matmul_right",
        "ad.transposed",
        "ad.matmul_left_t",
        "ad.matrix_dot",
        "ad.zero_where_counted",
        "ad.vecdot",
        "ad.matvec",
        "ad.vecmat",
        "ad.broadcast_copy",
        "ad.shape_stand_in",
        "ad.dot_left",
        "ad.dot_right",
        "ad.seed",
        "ad.one",
        "ad.seed_holomorphic",
        "ad.broadcast_like",
        "ad.bunbroadcast",
        "ad.bbroadcast_like",
        "ad.bmatmul",
        "ad.bmatmul_left",
        "ad.bmatmul_right",
        "ad.bdot_left",
        "ad.bdot_right",
    }


def test_tree_valued_and_same_structure_are_the_old_lists():
    assert _with("tree_valued") == {
        "ad.setitem",
        "ad.tree_add",
        "ad.part",
        "ad.forget",
        "ad.tree_index_adjoint",
        "ad.select",  # (its tangent terms add leafwise: a while_loop's tuple carry)
    }
    same = {p.public: p.same_structure for p in REGISTRY.values() if p.same_structure}
    assert same == {
        "ad.batch_broadcast": ("x",),
        "ad.batch_unbroadcast": ("g",),
        "ad.project_real": ("g", "x"),
        "ad.tree_row": ("x",),
        "ad.branch_input": ("x",),
    }


def test_shape_changing_covers_the_elementwise_kind_of_the_old_list():
    # the old list also named nn.softmax and nn.log_softmax, which are of kind
    # "nn", where the reverse-mode check that reads it never looks
    assert _with("shape_changing") == {"jnp.where", "jnp.clip", "nn.one_hot"}
    assert by_public("nn.softmax").kind != "elementwise"


def test_effectful_is_what_the_old_substring_match_found():
    old = {
        p.public
        for p in REGISTRY.values()
        if any(w in p.public for w in ("print", "callback", "check_"))
    }
    # and the two helpers that empty a dead list's slots as jit's update loop reads
    # them (transforms/optimize/release.take_dead_items), and the ufunc call that
    # writes a trip's row into its stack (transforms/optimize/stack_rows.py)
    assert _with("effectful") == old | {"ad.take_item", "ad.scaled_item", "ad.ufunc_into"}
    assert "ad.check_carry" in old and "ad.debug_callback" in old


def test_shape_queries_answer_from_an_abstract_value():
    from srcjax.transforms.optimize import Aval

    a = Aval((3, 4), np.dtype(np.float32))
    got = {p.public: p.shape_query(a) for p in REGISTRY.values() if p.shape_query}
    assert got == {
        "jnp.shape": (3, 4),
        "jnp.ndim": 2,
        "jnp.size": 12,
        "jnp.iscomplexobj": False,
        "jnp.isrealobj": True,
    }
    assert _with("static_for_constants") == {
        "ad.axis_or_zero",
        "ad.batch_axis",
        "ad.batch_einsum_spec",
        "ad.batch_perm",
        "ad.batch_shape",
        "ad.floordiv",
        "ad.inverse_permutation",
        "ad.round",
        "ad.scan_length",
    }


def test_static_params_default_to_the_vocabulary_and_can_be_set():
    s = by_public("jnp.sum")
    assert s.static_params == {"axis", "keepdims", "dtype", "where", "promote_integers"}
    assert s.static_params <= STATIC_PARAM_NAMES
    assert "a" not in s.static_params and "x" not in s.static_params

    def impl(x, scale, mode="same"):
        return x * scale

    p = Primitive("test_registry.scaled", impl)
    assert p.static_params == {"mode"}
    p.static_params = ("mode", "scale")
    assert p.static_params == {"mode", "scale"}
    with pytest.raises(TypeError, match="no parameters \\['nope'\\]"):
        p.static_params = ("nope",)


def test_facts_reject_unknown_names():
    p = Primitive("test_registry.id", lambda x: x)
    assert p.facts(array_result=True) is p and p.array_result
    with pytest.raises(TypeError, match="unknown primitive facts \\['array_reslt'\\]"):
        p.facts(array_reslt=True)


def test_namespace_is_the_public_name_prefix():
    assert by_public("jnp.sin").namespace == "jnp"
    assert by_public("ad.unbroadcast").namespace == "ad"
    assert by_public("nn.relu").namespace == "nn"


def test_unknown_names_fail_loudly():
    """Regression: batch_rules attached rules to a list of public names and
    silently skipped the names it did not find. Now rules attach to primitive
    objects only: a name is refused outright."""
    with pytest.raises(KeyError, match="no primitive 'jnp.no_such_thing' is registered"):
        by_public("jnp.no_such_thing")
    with pytest.raises(TypeError, match="'jnp.no_such_thing' is not a Primitive"):
        batch_rules._def(["jnp.no_such_thing"], lambda c: None)


def test_every_batch_rule_name_is_a_primitive():
    # (importing batch_rules attached them all; none was skipped)
    assert by_public("jnp.sum").batch is not None
    assert by_public("ad.check_cond_types").batch is not None
    assert srcjax.vmap(lambda x: x.sum())(np.ones((2, 3), np.float32)).tolist() == [3.0, 3.0]
