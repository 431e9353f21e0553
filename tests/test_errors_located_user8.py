"""Errors the fresh user 8 found unclear (session 16's debts), with JAX 0.10.2's
messages, each naming the user's ``file:line:col``:

- ``lax.add(f32, i32)`` inside jit was located in srcjax's
  ``lax/_ops/elementwise.py``: srcjax's code inlined at the user's call now
  carries that call's place.
- ``lax.dot_general`` with contracting sizes 3 and 4: NumPy's einsum message
  ("Size of label 'a' ..."); JAX: TypeError "dot_general requires contracting
  dimensions to have the same shape, got (3,) and (4,)." (batch dimensions: "...
  requires lhs batch dimensions and rhs batch dimensions to have the same shape").
- a reshape under vmap (and jacfwd, a vmap) named the batched shapes "(5, 6) into
  (5, 4, 2)"; JAX names one example's: "cannot reshape array of shape (6,) (size
  6) into shape (4, 2) ...". (Left: jit of vmap, whose code has the size folded,
  names the batched shapes.)
- ``jit(f)(object())``: NumPy's "loop of ufunc does not support argument 0 of type
  object"; JAX: TypeError "... not a valid JAX type" (grad, vmap) / "Error
  interpreting argument ... as an abstract array" (jit).
"""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax

HERE = __file__


def _notes(err):
    return "\n".join(getattr(err, "__notes__", []))


def _line_of(fn, k):
    return fn.__code__.co_firstlineno + k


def lax_add_mixed(x):
    y = x * 2.0
    return lax.add(y, jnp.ones(3, jnp.int32))


@pytest.mark.parametrize(
    "wrap",
    [srcjax.jit, lambda f: srcjax.grad(lambda x: jnp.sum(f(x))), srcjax.vmap],
    ids=["jit", "grad", "vmap"],
)
def test_lax_dtype_error_at_the_users_line(wrap):
    with pytest.raises(TypeError) as info:
        wrap(lax_add_mixed)(jnp.ones((3,)) if wrap is not srcjax.vmap else jnp.ones((2, 3)))
    assert str(info.value).startswith(
        "lax.add requires arguments to have the same dtypes, got float32, int32."
    )
    where = f"at {HERE}:{_line_of(lax_add_mixed, 2)}:5"
    assert where in _notes(info.value), _notes(info.value)
    assert "elementwise.py" not in _notes(info.value)


def contract(a, b):
    return lax.dot_general(a, b, (((1,), (0,)), ((), ())))


def batch_contract(a, b):
    return lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))


@pytest.mark.parametrize("wrap", [lambda f: f, srcjax.jit], ids=["eager", "jit"])
def test_dot_general_size_mismatch(wrap):
    with pytest.raises(TypeError) as info:
        wrap(contract)(jnp.ones((2, 3)), jnp.ones((4, 5)))
    assert str(info.value) == (
        "dot_general requires contracting dimensions to have the same shape, got (3,) and (4,)."
    )
    if wrap is srcjax.jit:
        assert f"at {HERE}:{_line_of(contract, 1)}:5" in _notes(info.value)
    with pytest.raises(TypeError) as info:
        wrap(batch_contract)(jnp.ones((2, 3, 4)), jnp.ones((3, 4, 5)))
    assert str(info.value) == (
        "dot_general requires lhs batch dimensions and rhs batch dimensions to have the "
        "same shape, got (2,) and (3,)."
    )
    # sizes that agree still contract (JAX 0.10.2's shape)
    out = wrap(batch_contract)(jnp.ones((2, 3, 4)), jnp.ones((2, 4, 5)))
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 3, 5), 4.0, np.float32))


def reshape_42(x):
    return jnp.reshape(x, (4, 2))


def method_reshape(x):
    return x.reshape(4)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: srcjax.vmap(reshape_42)(jnp.ones((5, 6))), "(6,) (size 6) into shape (4, 2)"),
        (
            lambda: srcjax.vmap(method_reshape)(jnp.ones((3, 2, 3))),
            "(2, 3) (size 6) into shape (4,)",
        ),
        (lambda: srcjax.jacfwd(reshape_42)(jnp.ones(6)), "(6,) (size 6) into shape (4, 2)"),
        (lambda: srcjax.jacrev(reshape_42)(jnp.ones(6)), "(6,) (size 6) into shape (4, 2)"),
    ],
    ids=["vmap", "method", "jacfwd", "jacrev"],
)
def test_reshape_error_names_one_examples_shapes(call, message):
    with pytest.raises(TypeError) as info:
        call()
    assert str(info.value) == f"cannot reshape array of shape {message}", str(info.value)
    fn = method_reshape if "(4,)" in message else reshape_42
    assert f"at {HERE}:{_line_of(fn, 1)}:" in _notes(info.value), _notes(info.value)


def test_reshape_of_an_unbatched_value_keeps_its_shapes():
    c = np.ones((5, 6), np.float32)

    def g(x):
        n = 5
        return jnp.reshape(c, (n, 4, 2)) + x

    with pytest.raises(TypeError) as info:
        srcjax.vmap(g)(jnp.ones(5))
    assert "(5, 6) (size 30) into shape (5, 4, 2)" in str(info.value)


def exp_of(x):
    return jnp.exp(x)


@pytest.mark.parametrize("arg", [object(), [object()]], ids=["object", "list"])
def test_jit_of_an_object_is_not_a_valid_jax_type(arg):
    with pytest.raises(TypeError) as info:
        srcjax.jit(exp_of)(arg)
    assert str(info.value).startswith("Argument of type object is not a valid JAX type")
    assert f"at {HERE}:{_line_of(exp_of, 1)}:12" in _notes(info.value), _notes(info.value)


def test_vmap_of_an_object_is_not_a_valid_jax_type():
    # JAX 0.10.2: TypeError "Argument '<object ...>' of type '<class 'object'>' is
    # not a valid JAX type"
    with pytest.raises(TypeError, match="of type '<class 'object'>' is not a valid JAX type"):
        srcjax.vmap(exp_of)(object())
