#!/usr/bin/env python
"""Check grad of N random programs against finite differences (outside CI).

    python tools/fuzz.py            # 10,000 programs
    python tools/fuzz.py -n 500 --seed 7
    python tools/fuzz.py -n 400 --vmap --vmap2 --jit   # + vmap, reverse over reverse, jit
    python tools/fuzz.py -n 400 --eager    # + .at updates and x += ...: eager vs jit/grad

Each mismatch is shrunk to a minimal program and printed as a reproducer.
The generator is srcjax.testing.programs, the same one the hypothesis test uses.
"""

import argparse
import sys
import tempfile

import numpy as np

import srcjax
from srcjax.testing import programs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=10_000, help="programs to check (default 10000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-stmts", type=int, default=8)
    ap.add_argument("--jit", action="store_true", help="also check jit and jit(grad) vs eager")
    ap.add_argument("--vmap", action="store_true", help="also check vmap and vmap(grad) vs a loop")
    ap.add_argument(
        "--vmap2",
        action="store_true",
        help="also check vmap(grad(<grad(f), v>)) (reverse over reverse) vs a loop",
    )
    ap.add_argument(
        "--eager",
        action="store_true",
        help="programs with .at updates and augmented assignment (to the argument too), "
        "called directly on an srcjax.Array vs jit and value_and_grad; the argument "
        "must be unchanged afterwards",
    )
    args = ap.parse_args(argv)
    srcjax.config.update("jax_enable_x64", True)
    # srcjax's self-checks: generated code reads back as its tree, cotangents have
    # their primals' shapes and dtypes (a failure is reported as a mismatch)
    srcjax.config.update("jax_enable_checks", True)
    tmp = tempfile.mkdtemp(prefix="srcjax_fuzz_")
    failures = 0
    for k in range(args.n):
        rng = np.random.default_rng([args.seed, k])
        prog = programs.generate(rng, max_stmts=args.max_stmts, updates=args.eager)
        x = rng.normal(size=3)
        problem = programs.check_program(prog, x, tmp)
        if problem is None and args.eager:
            problem = programs.check_eager(prog, x, tmp)
            if problem is not None:
                failures += 1
                print(f"--- eager mismatch (seed {args.seed}, program {k}):\n{problem}")
                continue
        if problem is None and args.vmap:
            problem = programs.check_vmap(prog, rng.normal(size=(4, 3)), tmp)
            if problem is not None:
                failures += 1
                print(f"--- vmap mismatch (seed {args.seed}, program {k}):\n{problem}")
                continue
        if problem is None and args.vmap2:
            xs2, v = rng.normal(size=(4, 3)), rng.normal(size=3)
            problem = programs.check_vmap_hvp(prog, xs2, v, tmp)
            if problem is not None:
                failures += 1
                print(f"--- vmap(grad(grad)) mismatch (seed {args.seed}, program {k}):\n{problem}")
                continue
        if problem is None and args.jit:
            problem = programs.check_jit(prog, x, tmp)
            if problem is not None:
                failures += 1
                print(f"--- jit mismatch (seed {args.seed}, program {k}):\n{problem}")
                continue
        if problem is not None:
            failures += 1
            small = programs.shrink(prog, x, tmp)
            print(f"--- mismatch (seed {args.seed}, program {k}), shrunk reproducer:")
            print(programs.check_program(small, x, tmp))
            print(f"x = np.array({x.tolist()!r})")
        if (k + 1) % 500 == 0:
            print(f"{k + 1} programs checked, {failures} mismatches", file=sys.stderr)
    print(f"{args.n - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
