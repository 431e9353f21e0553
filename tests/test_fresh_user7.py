"""Fresh-user round 7 (/work/userprogs7/REPORT.md items 4, 6, 7, 9, 10, 12):
each failing input with the values JAX 0.10.2 gives (recorded from the repro
files), or a NumPy / Python-loop oracle."""

import srcjax
import srcjax.numpy as jnp


def test_python_int_and_bool_arguments_have_array_attributes():
    """Item 7 (repro_05.py): a Python int/bool argument to jit stayed a Python
    scalar, so ``x.size`` raised AttributeError; JAX traces a weak 0-d array.
    JAX 0.10.2: f(3) = 3.0, f(True) = 1.0; ndim 0, size 1, itemsize 4 / 1."""
    f = srcjax.jit(lambda x: x.sum() / x.size)
    assert float(f(3)) == 3.0 and float(f(True)) == 1.0
    g = srcjax.jit(lambda x: (x.ndim, x.size, x.itemsize, x.astype(jnp.float32) * x.size))
    assert [int(v) for v in g(3)[:3]] == [0, 1, 4]
    assert [int(v) for v in g(True)[:3]] == [0, 1, 1]
    assert float(g(3)[3]) == 3.0
    h = srcjax.jit(lambda x: (x.dtype == jnp.int32, x.shape == ()))
    assert [bool(v) for v in h(3)] == [True, True]
    assert bool(srcjax.jit(lambda x: x.dtype == jnp.bool_)(True))

    # an int argument still drives range() (srcjax allows it; a loop of n trips)
    def loop(n, y):
        for _ in range(n):
            y = y * 2
        return y

    assert float(srcjax.jit(loop)(3, 1.0)) == 8.0

    # rebound to an array, the attribute is the array's
    def rebound(x):
        x = jnp.zeros(5) + x
        return x.size

    assert int(srcjax.jit(rebound)(3)) == 5
