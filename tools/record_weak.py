"""Records JAX's results for tests/test_weak_transforms.py (run where JAX is
installed: ``python tools/record_weak.py``; writes tests/data/weak_transforms.json
and tests/data/weak_elementwise.json).

For each case of tests/weak_cases.py: the leaves (dtype, weak_type, shape,
values) of the function called eagerly on Arrays (``jnp.asarray`` of each
argument), under ``jit``, and where the case says so under ``grad``,
``value_and_grad``, ``jvp`` (tangents of ones) and ``vmap``.
"""

import importlib.util
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..", "tests")
OUT = os.path.join(TESTS, "data", "weak_transforms.json")
sys.path.insert(0, TESTS)

from weak_cases import (  # noqa: E402
    CASES,
    ELEMENTWISE,
    PATTERNS,
    STRUCTURAL,
    arguments,
    describe,
    elementwise_operands,
    elementwise_result,
    module_source,
    structural_result,
)

OUT_ELEMENTWISE = os.path.join(TESTS, "data", "weak_elementwise.json")


def modes(api, jnp, f, args, argnums, in_axes) -> dict:
    """Every mode of one case: {mode: a function computing its result} (shared
    with the test)."""
    out = {"eager": lambda: f(*[jnp.asarray(a) for a in args]), "jit": lambda: api.jit(f)(*args)}
    if argnums is not None:
        out["grad"] = lambda: api.grad(f, argnums=argnums)(*args)
        out["value_and_grad"] = lambda: api.value_and_grad(f, argnums=argnums)(*args)
        out["jit_grad"] = lambda: api.jit(api.grad(f, argnums=argnums))(*args)
        if len(args) == 1:
            out["jvp"] = lambda: api.jvp(f, (args[0],), (args[0],))
    if in_axes is not None:
        out["vmap"] = lambda: api.vmap(f, in_axes=in_axes)(*args)
        out["jit_vmap"] = lambda: api.jit(api.vmap(f, in_axes=in_axes))(*args)
    return out


def main():
    import jax
    import jax.numpy as jnp

    path = os.path.join(tempfile.mkdtemp(), "weak_cases_jax.py")
    with open(path, "w") as fh:
        fh.write(module_source("jax.numpy"))
    spec = importlib.util.spec_from_file_location("weak_cases_jax", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    rec = {}
    for n, (name, _body, args, argnums, in_axes) in enumerate(CASES):
        a = arguments(args, jnp)
        ms = modes(jax, jnp, getattr(m, f"f{n}"), a, argnums, in_axes)
        rec[name] = {
            k: [describe(v) for v in jax.tree_util.tree_leaves(run())] for k, run in ms.items()
        }
    with open(OUT, "w") as fh:
        json.dump({"jax": jax.__version__, "cases": rec}, fh, indent=1, sort_keys=True)
        fh.write("\n")
    print(f"wrote {len(rec)} cases to {OUT}")
    record_elementwise()


def record_elementwise():
    """JAX's dtype and weak type of each function of ELEMENTWISE on each operand
    pattern of PATTERNS (eager; the patterns JAX refuses are left out)."""
    import jax
    import jax.nn
    import jax.numpy as jnp
    import jax.scipy.special

    namespaces = {"jnp": jnp, "lax": jax.lax, "nn": jax.nn, "special": jax.scipy.special}
    operands = elementwise_operands(jnp, namespaces)
    rec = {}
    for name in ELEMENTWISE:
        for pattern in PATTERNS:
            r = elementwise_result(namespaces, name, pattern, operands)
            if "error" not in r:
                rec.setdefault(name, {})[pattern] = r
    structural = {e: structural_result(e, jnp, operands) for e in STRUCTURAL}
    with open(OUT_ELEMENTWISE, "w") as fh:
        out = {"jax": jax.__version__, "results": rec, "structural": structural}
        json.dump(out, fh, indent=1, sort_keys=True)
        fh.write("\n")
    print(f"wrote {sum(map(len, rec.values()))} results to {OUT_ELEMENTWISE}")


if __name__ == "__main__":
    main()
