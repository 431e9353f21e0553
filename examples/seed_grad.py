"""The JAX quickstart's first gradient, by source transformation.

    python examples/seed_grad.py          # prints the derivative of logistic at 1.0
    python examples/seed_grad.py --show   # ...and the generated gradient source

The derivative of the logistic function s(x) = 1 / (1 + exp(-x)) is s(x)(1 - s(x));
at x = 1.0 that is 0.1966119332... srcjax, like JAX, computes in float32 by
default, so the last printed digit depends on the order of the float32
operations in the generated code (JAX on CPU prints 0.19661197).
"""

import argparse

import srcjax
import srcjax.numpy as jnp


def logistic(x):
    return 1.0 / (1.0 + jnp.exp(-x))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print the generated gradient source")
    parser.add_argument("--x", type=float, default=1.0, help="where to evaluate (default 1.0)")
    args = parser.parse_args(argv)

    dlogistic = srcjax.grad(logistic)
    if args.show:
        print(srcjax.source(dlogistic))
    value = dlogistic(args.x)
    print(f"grad(logistic)({args.x}) = {float(value):.8f}")


if __name__ == "__main__":
    main()
