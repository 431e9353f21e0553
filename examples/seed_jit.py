"""The JAX quickstart's jit example, by source transformation.

    python examples/seed_jit.py            # times cube and jit(cube) on ones((10000, 10000))
    python examples/seed_jit.py --show     # ...and prints the generated source
    python examples/seed_jit.py --n 2000   # a smaller array

``jit(cube)`` specializes ``cube`` on the argument's shape and dtype and runs
``x * x * x`` as one fused pass over cache-sized chunks on every core, writing
into a reused output buffer, instead of two full-size passes and temporaries.
"""

import argparse
import time

import numpy as np

import srcjax
import srcjax.numpy as jnp

try:
    jit = srcjax.jit
except AttributeError:  # until srcjax/__init__.py exports it
    from srcjax.jit_api import jit


def cube(x):
    return x * x * x


def timed(fn, x, repeats=5):
    fn(x)  # warm-up (for jit: specialization and code generation)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        y = fn(x)
        best = min(best, time.perf_counter() - t0)
        del y
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10000, help="array side (default 10000)")
    parser.add_argument("--show", action="store_true", help="print the generated source")
    args = parser.parse_args(argv)

    x = jnp.ones((args.n, args.n))
    jit_cube = jit(cube)
    if args.show:
        print(srcjax.source(jit_cube, x))
    assert np.array_equal(jit_cube(x), cube(x))
    t_plain = timed(cube, x)
    t_jit = timed(jit_cube, x)
    print(f"cube(x):     {t_plain * 1e3:8.2f} ms")
    print(f"jit_cube(x): {t_jit * 1e3:8.2f} ms   ({t_plain / t_jit:.1f}x faster)")


if __name__ == "__main__":
    main()
