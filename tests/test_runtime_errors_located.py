"""Errors raised at run time inside generated code point at the user's code
(fresh-user round 6, item 8): the traceback carries a frame at the user's full
path and line (JAX's tracebacks show the user's line where tracing failed), and
a note after the message names ``path:line:col`` with the line and a caret.
Before, the generated cache file was the only frame (its line's comment named
the user's file by its base name) and jit's matmul message began with the
cache path. Messages and types are JAX 0.10.2's, recorded here:

- ``jit(lambda a, b: a + b)(f32[3], f32[4])``: TypeError "add got incompatible
  shapes for broadcasting: (3,), (4,)."
- ``jit(lambda a, b: a * b)(f32[2,3], f32[4])``: ValueError "Incompatible shapes
  for broadcasting: shapes=[(2, 3), (4,)]"
- ``x[0] = 1.0`` on an array: TypeError "JAX arrays are immutable and do not
  support in-place item assignment. Instead of x[idx] = y, use ..."
- ``vmap(lambda a, b: a + b)(np.ones(3), np.ones(4))`` (float64 NumPy inputs):
  "... argument a of type float32[3];" (the canonical dtype)
- ``vmap(g, out_axes=3)(f32[2,3])``: ValueError "axis 3 is out of bounds for
  array of dimension 2"
"""

import traceback

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax.errors import ShapeError

HERE = __file__


def _frames(err):
    return [(f.filename, f.lineno) for f in traceback.extract_tb(err.__traceback__)]


def _notes(err):
    return "\n".join(getattr(err, "__notes__", []))


def add(a, b):
    return a + b  # broadcast


def mul(a, b):
    return a * b


def matmul(a, b):
    h = a @ b
    return h.sum()


def reshape(x):
    y = x.reshape(4, 4)
    return y + 1.0


def assign(x):
    x[0] = 1.0
    return x


def line_of(fn, k=1):
    return fn.__code__.co_firstlineno + k


@pytest.mark.parametrize("transform", [srcjax.jit, srcjax.grad])
def test_broadcast_error_is_jaxs_at_the_users_line(transform):
    f = add if transform is srcjax.jit else (lambda a, b: jnp.sum(add(a, b)))
    with pytest.raises(TypeError) as info:
        transform(f)(np.ones(3, np.float32), np.ones(4, np.float32))
    assert str(info.value) == "add got incompatible shapes for broadcasting: (3,), (4,)."
    assert isinstance(info.value, ShapeError) and isinstance(info.value, ValueError)
    line = line_of(add)
    assert (HERE, line) in _frames(info.value)
    if transform is srcjax.jit:
        # path:line:col of `a + b` (column 12, 1-based), the line and a caret under it
        want = f"at {HERE}:{line}:12\n    return a + b  # broadcast\n           ^^^^^"
        assert _notes(info.value) == want
    else:  # (grad's code spells the sum otherwise: the caret under its operator)
        want = f"at {HERE}:{line}:14\n    return a + b  # broadcast\n             ^"
        assert _notes(info.value) == want


def test_broadcast_of_different_ranks_is_jaxs_value_error():
    with pytest.raises(ValueError) as info:
        srcjax.jit(mul)(np.ones((2, 3), np.float32), np.ones(4, np.float32))
    assert str(info.value) == "Incompatible shapes for broadcasting: shapes=[(2, 3), (4,)]"
    assert (HERE, line_of(mul)) in _frames(info.value)


def test_matmul_message_first_then_the_users_place():
    with pytest.raises(TypeError) as info:
        srcjax.jit(matmul)(np.ones((3, 4), np.float32), np.ones((5, 2), np.float32))
    want = "dot_general requires contracting dimensions to have the same shape, got (4,) and (5,)."
    assert str(info.value) == want  # (was '/root/.cache/srcjax/...py:3:9: dot_general ...')
    line = line_of(matmul)
    assert (HERE, line) in _frames(info.value)
    assert _notes(info.value).startswith(f"at {HERE}:{line}:9\n    h = a @ b\n")


def test_primitive_error_in_generated_code_gets_the_users_frame():
    with pytest.raises(ValueError, match=r"cannot reshape array of shape \(10,\)") as info:
        srcjax.jit(reshape)(np.ones(10, np.float32))
    assert (HERE, line_of(reshape)) in _frames(info.value)
    assert f"{HERE}:{line_of(reshape)}:" in _notes(info.value)


@pytest.mark.parametrize("transform", ["jit", "grad"])
def test_item_assignment_is_jaxs_message(transform):
    if transform == "jit":
        call = lambda: srcjax.jit(assign)(jnp.ones(3))  # noqa: E731
    else:
        call = lambda: srcjax.grad(lambda x: jnp.sum(assign(x)))(jnp.ones(3))  # noqa: E731
    with pytest.raises(TypeError) as info:
        call()
    assert str(info.value) == (
        "JAX arrays are immutable and do not support in-place item assignment. Instead of "
        "x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
        "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html"
    )
    assert (HERE, line_of(assign)) in _frames(info.value)


def test_item_assignment_of_a_tuple_is_pythons_message():
    def f(x):
        t = (x, x)
        t[0] = x
        return t[0]

    with pytest.raises(TypeError, match="'tuple' object does not support item assignment"):
        srcjax.jit(f)(jnp.ones(3))


def test_vmap_sizes_name_the_canonical_dtype():
    with pytest.raises(ValueError) as info:
        srcjax.vmap(lambda a, b: a + b)(np.ones(3), np.ones(4))
    assert str(info.value) == (
        "vmap got inconsistent sizes for array axes to be mapped:\n"
        "  * one axis had size 3: axis 0 of argument a of type float32[3];\n"
        "  * one axis had size 4: axis 0 of argument b of type float32[4]"
    )


def twice(a):
    return a * 2


@pytest.mark.parametrize("axes", [3, -4])
def test_vmap_bad_out_axes_is_a_value_error_naming_out_axes(axes):
    with pytest.raises(ValueError) as info:
        srcjax.vmap(twice, out_axes=axes)(np.ones((2, 3), np.float32))
    assert not isinstance(info.value, IndexError)  # (NumPy's AxisError is one)
    assert str(info.value) == (
        f"vmap out_axes={axes}: axis {axes} is out of bounds for array of dimension 2"
    )
    assert _notes(info.value).startswith(f"at {HERE}:{twice.__code__.co_firstlineno}:1")


def test_errors_outside_generated_code_are_untouched():
    def boom(x):
        raise KeyError("mine")

    with pytest.raises(KeyError) as info:
        boom(1)
    assert not hasattr(info.value, "__notes__")
    # an error srcjax raises before running generated code keeps its message
    with pytest.raises(TypeError, match="not an array") as info:
        srcjax.jit(lambda s: s)("a")
    assert not hasattr(info.value, "__notes__")


def test_results_unchanged():
    np.testing.assert_array_equal(
        np.asarray(srcjax.jit(add)(np.ones(3, np.float32), np.ones(3, np.float32))), 2.0
    )


def float_index(x):
    return x[1.0] * 2.0


@pytest.mark.parametrize(
    "index, dtype",
    [
        (1.0, "float64"),
        (np.float32(1), "float32"),
        (np.array([1.0]), "float64"),
        ((0, 1.5), "float64"),
    ],
)
def test_float_index_is_jaxs_type_error(index, dtype):
    # JAX 0.10.2: TypeError, the indexer's dtype as given (NumPy: an IndexError
    # 'only integers, slices ... are valid indices')
    with pytest.raises(TypeError) as info:
        jnp.ones(3)[index]
    assert (
        str(info.value)
        == f"Indexer must have integer or boolean type, got indexer with type {dtype}"
    )


def test_float_index_under_jit_names_the_users_line():
    with pytest.raises(TypeError, match="Indexer must have integer or boolean type") as info:
        srcjax.jit(float_index)(np.ones(3, np.float32))
    assert (HERE, line_of(float_index)) in _frames(info.value)
