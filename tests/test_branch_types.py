"""srcjax.primitives.branch_types: JAX's TypeError for conditional branches whose
outputs differ in pytree structure, shape or dtype (lax.cond / lax.switch, and
vmap's ad.check_cond_types with leading batch axes left out)."""

import numpy as np
import pytest

from srcjax.primitives.branch_types import check_branch_types, type_mismatch

NAMES = ("true_fun", "false_fun")


def test_equal_outputs_pass():
    a = {"x": np.zeros((2, 3), np.float32), "y": (np.int32(1),)}
    b = {"x": np.ones((2, 3), np.float32), "y": (np.int32(5),)}
    assert check_branch_types("cond", NAMES, a, b) is None


def test_structure_mismatch_names_both_treedefs():
    with pytest.raises(TypeError, match="cond branch outputs must have the same pytree structure"):
        check_branch_types("cond", NAMES, (np.zeros(2),), [np.zeros(2)])


def test_shape_mismatch():
    with pytest.raises(TypeError, match=r"float32\[2\].*float32\[3\], so the shapes do not match"):
        check_branch_types("cond", NAMES, np.zeros(2, np.float32), np.zeros(3, np.float32))


def test_dtype_mismatch_counts_python_scalars_weakly():
    # a Python float is float32 (JAX's default dtype), as a float32 array is
    check_branch_types("cond", NAMES, 1.0, np.float32(2.0))
    with pytest.raises(TypeError, match="int32.*float32.*so the dtypes do not match"):
        check_branch_types("switch", ("branch 0", "branch 1"), 1, 2.0)


def test_lead_leaves_batch_axes_out():
    # (vmap: one side carries a batch axis of 4, the other none)
    check_branch_types("cond", NAMES, np.zeros((4, 3)), np.zeros(3), lead=(1, 0))
    with pytest.raises(TypeError, match="shapes do not match"):
        check_branch_types("cond", NAMES, np.zeros((4, 3)), np.zeros(3), lead=(0, 0))


def test_type_mismatch_on_pairs():
    assert type_mismatch("cond", NAMES, ((2,), np.float32), ([2], "float32")) is None
    with pytest.raises(TypeError, match="the output of true_fun has type float64"):
        type_mismatch("cond", NAMES, ((), np.float64), ((), np.float32))


def test_check_branch_avals_the_static_form_under_jit():
    # (srcjax.transforms.optimize.check_branch_avals: the same errors from the
    # abstract values jit infers; None where unknown, never an error)
    from srcjax.transforms.optimize import Aval, check_branch_avals

    f32 = Aval((2,), np.float32)
    check_branch_avals("cond", NAMES, f32, Aval((2,), np.float32))
    check_branch_avals("cond", NAMES, None, f32)
    check_branch_avals("cond", NAMES, (f32, 3), (f32, 4))  # static leaves: not compared
    with pytest.raises(TypeError, match="so the shapes do not match"):
        check_branch_avals("cond", NAMES, {"a": f32}, {"a": Aval((3,), np.float32)})
    with pytest.raises(TypeError, match="a dict with keys"):
        check_branch_avals("cond", NAMES, {"a": f32}, {"b": f32})
    with pytest.raises(TypeError, match="a tuple of 1 items"):
        check_branch_avals("cond", NAMES, (f32,), (f32, f32))
    # a weak Python float counts by its canonical dtype (float32 without x64)
    check_branch_avals("cond", NAMES, Aval((), np.float64, float), Aval((), np.float32))
