"""A ``@`` whose contracted dimensions differ, under jit and grad (fresh-user bug
F4-E2): generated code runs NumPy's ``@``, whose gufunc ValueError reached the
user; JAX (0.10.2) raises TypeError "dot_general requires contracting dimensions
to have the same shape, got (5,) and (3,)." as srcjax's eager matmul and vmap
do. Now a located :class:`srcjax.errors.ShapeError` (TypeError and ValueError)
naming the user's line (since fresh-user round 6, item 8: a note with the
full path:line:col and a traceback frame there, JAX's message first)."""

import os
import traceback

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax.errors import ShapeError

WANT = "dot_general requires contracting dimensions to have the same shape, got (5,) and (3,)."


def mlp(w, x):
    h = x @ w  # the mismatch
    return jnp.sum(jnp.tanh(h))


LINE = mlp.__code__.co_firstlineno + 1


@pytest.mark.parametrize(
    "transform",
    [srcjax.jit, srcjax.grad, srcjax.value_and_grad, lambda f: srcjax.vmap(f, (None, 0))],
)
def test_matmul_mismatch_is_jax_type_error_at_the_users_line(transform):
    x = np.ones((4, 5), np.float32)
    if transform not in (srcjax.jit, srcjax.grad, srcjax.value_and_grad):
        x = np.ones((7, 4, 5), np.float32)
    with pytest.raises(TypeError) as info:
        transform(mlp)(np.ones((3, 2), np.float32), x)
    assert isinstance(info.value, ShapeError)
    msg = str(info.value)
    assert WANT in msg
    # the place: in the message (vmap), or (jit, grad: JAX's message first) in
    # the note after it, with the full path, and as a traceback frame
    where = msg + "\n".join(getattr(info.value, "__notes__", []))
    assert f"{os.path.basename(__file__)}:{LINE}" in where
    if transform in (srcjax.jit, srcjax.grad, srcjax.value_and_grad):
        assert f"{__file__}:{LINE}:" in where
        frames = traceback.extract_tb(info.value.__traceback__)
        assert (__file__, LINE) in [(f.filename, f.lineno) for f in frames]


def test_other_value_errors_pass_through():
    def bad(x):
        return x.reshape(4, 4)

    with pytest.raises(ValueError, match="reshape"):
        srcjax.jit(bad)(np.ones(10, np.float32))
