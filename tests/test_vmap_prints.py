"""vmap of print statements: srcjax.debug.print (in primitives.hooks'
PER_EXAMPLE_PRINTS, which the batching transform reads) prints a line per
example, print prints the batch once."""

import builtins

import numpy as np

import srcjax
from srcjax import numpy as jnp
from srcjax.primitives.hooks import PER_EXAMPLE_PRINTS


def test_debug_print_is_registered_and_builtin_print_is_not():
    assert srcjax.debug.print in PER_EXAMPLE_PRINTS
    assert builtins.print not in PER_EXAMPLE_PRINTS


def _debug_print_row(x):
    srcjax.debug.print("s={s:.1f}", s=jnp.sum(x))
    return x * 2.0


def _print_row(x):
    print("x", x)
    return x * 2.0


def test_vmap_prints_one_line_per_example_for_debug_print(capsys):
    xs = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    out = srcjax.vmap(_debug_print_row)(xs)
    np.testing.assert_allclose(np.asarray(out), xs * 2.0)
    assert capsys.readouterr().out.splitlines() == ["s=1.0", "s=5.0", "s=9.0"]


def test_vmap_prints_the_batch_once_for_print(capsys):
    xs = np.arange(4.0, dtype=np.float32).reshape(2, 2)
    srcjax.vmap(_print_row)(xs)
    assert capsys.readouterr().out.splitlines() == ["x [[0. 1.]", " [2. 3.]]"]  # one print


def test_vmap_of_a_lambda_that_is_a_debug_print_prints_per_example(capsys):
    """F4-08: ``vmap(lambda x: debug.print(...))`` printed the whole batch on one
    line (the print is the lambda's return value); JAX (0.10.2) prints
    ``lambda v 0`` / ``lambda v 1``, as for the same body in a ``def``, and the
    vmapped function returns None."""
    out = srcjax.vmap(lambda x: srcjax.debug.print("lambda v {}", x))(jnp.arange(2))
    assert out is None
    assert capsys.readouterr().out == "lambda v 0\nlambda v 1\n"
    srcjax.jit(srcjax.vmap(lambda x: srcjax.debug.print("jit v {v}", v=x)))(jnp.arange(2))
    assert capsys.readouterr().out == "jit v 0\njit v 1\n"
