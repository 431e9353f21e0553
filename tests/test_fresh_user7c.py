"""Fresh-user round 7 leftovers (/work/userprogs7/REPORT.md item 12): an
operator with a string operand under jit / grad raised NumPy's UFuncTypeError
("ufunc 'multiply' did not contain a loop ...") from generated code. JAX
0.10.2's errors, recorded (jit, grad and eager alike):

- ``x * "a"`` and ``"a" * x``: TypeError "Only integer scalar arrays can be
  converted to a scalar index."
- ``x + "a"``: TypeError "unsupported operand type(s) for +: ... and 'str'"
  (JAX names its tracer / ArrayImpl type; srcjax eager names 'Array')
- ``x < "a"``: TypeError "'<' not supported between instances of ... and 'str'"
"""

import traceback

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

HERE = __file__


def times_a(x):
    return x * "a"


def a_times(x):
    return "a" * x


def plus_a(x):
    return x + "a"


def pow_a(x):
    return x ** "a"


def less_a(x):
    return x < "a"


CASES = [
    (times_a, "Only integer scalar arrays can be converted to a scalar index."),
    (a_times, "Only integer scalar arrays can be converted to a scalar index."),
    (plus_a, "unsupported operand type(s) for +: 'Array' and 'str'"),
    (pow_a, "unsupported operand type(s) for ** or pow(): 'Array' and 'str'"),
    (less_a, "'<' not supported between instances of 'Array' and 'str'"),
]


@pytest.mark.parametrize("fn, message", CASES)
@pytest.mark.parametrize("transform", ["jit", "grad"])
def test_string_operand_is_jaxs_type_error_at_the_users_line(fn, message, transform):
    if transform == "jit":
        call = lambda: srcjax.jit(fn)(np.ones(3, np.float32))  # noqa: E731
    else:
        call = lambda: srcjax.grad(lambda x: jnp.sum(fn(x)))(jnp.ones(3))  # noqa: E731
    with pytest.raises(TypeError) as info:
        call()
    assert type(info.value) is TypeError  # (not NumPy's UFuncTypeError)
    assert str(info.value) == message
    line = fn.__code__.co_firstlineno + 1
    frames = [(f.filename, f.lineno) for f in traceback.extract_tb(info.value.__traceback__)]
    assert (HERE, line) in frames
    assert "\n".join(info.value.__notes__).startswith(f"at {HERE}:{line}:")


def test_string_operand_eager_message_unchanged():
    with pytest.raises(TypeError, match="unsupported operand type"):
        plus_a(jnp.ones(3))
