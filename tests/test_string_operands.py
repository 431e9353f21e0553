"""A string operand of an operator or of an elementwise ``jnp`` function (round 7
item 12, session 15's debt): JAX's TypeError, not NumPy's ("ufunc 'multiply' did
not contain a loop ..."), eagerly and under jit, vmap and grad, at the user's
line. Messages: JAX 0.10.2, recorded (``x * "a"``: str's repetition asks the
array for an index; ``jnp.add(x, "a")``: JAX's jitted function cannot read the
string as an array, its path the parameter's name; ``<function add at 0x...>``
is the public name here). ``x == "a"`` is False, as JAX's."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp


def times_a(x):
    return x * "a"


def a_minus(x):
    return "a" - x


def plus_a(x):
    return x + "a"


def add_a(x):
    return jnp.add(x, "a")


def where_a(x):
    return jnp.where(x > 0, "a", 1.0)


INDEX = "Only integer scalar arrays can be converted to a scalar index."
CASES = [
    (times_a, INDEX),
    (a_minus, "unsupported operand type(s) for -: 'str' and 'Array'"),
    (plus_a, "unsupported operand type(s) for +: 'Array' and 'str'"),
    (
        add_a,
        "Error interpreting argument to jnp.add as an abstract array. The problematic "
        "value is of type <class 'str'> and was passed to the function at path y.",
    ),
    (
        where_a,
        "Error interpreting argument to jnp.where as an abstract array. The problematic "
        "value is of type <class 'str'> and was passed to the function at path x.",
    ),
]

MODES = {
    "eager": lambda f: f,
    "jit": srcjax.jit,
    "vmap": srcjax.vmap,
    "grad": lambda f: srcjax.grad(lambda x: jnp.sum(f(x))),
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("f,message", CASES, ids=[c[0].__name__ for c in CASES])
def test_jax_message_at_the_users_line(f, message, mode):
    with pytest.raises(TypeError) as ei:
        MODES[mode](f)(jnp.ones(3))
    text = str(ei.value)
    assert message in text
    assert "ufunc" not in text and "DType" not in text
    if mode != "eager":  # (eagerly the traceback is the user's own)
        full = text + "".join(getattr(ei.value, "__notes__", []))
        assert f"test_string_operands.py:{f.__code__.co_firstlineno + 1}" in full


def test_equality_with_a_string_is_false():
    # JAX 0.10.2: jnp.ones(3) == "a" is False; jax.jit of it: [False False False]
    assert (jnp.ones(3) == "a") is False
    for t in (srcjax.jit, srcjax.vmap):
        np.testing.assert_array_equal(np.asarray(t(lambda x: x == "a")(jnp.ones(3))), [False] * 3)


def test_python_ints_and_strings_stay_python():
    # a static int times a string is Python's repetition (JAX: the same, no array)
    f = srcjax.jit(lambda x, n: x + len(n * "ab"), static_argnums=1)
    np.testing.assert_array_equal(np.asarray(f(jnp.ones(2), 3)), [7.0, 7.0])
