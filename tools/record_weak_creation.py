"""Prints JAX's dtypes and weak types for tests/weak_creation_cases.py, the
table EXPECTED of tests/test_weak_creation.py (run where JAX is installed:
``python tools/record_weak_creation.py``, then paste the output)."""

import importlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))


def describe(v) -> str:
    """'float32w' for a weak float32 array, 'float32' for a strong one, the
    type's name for a Python number."""
    if isinstance(v, (bool, int, float, complex)):
        return type(v).__name__
    return f"{v.dtype}{'w' if v.weak_type else ''}"


def results(m, leaves) -> dict:
    out = {}
    for name in sorted(dir(m)):
        if name[:2] in ("c_", "g_", "t_", "l_", "v_"):
            out[name] = " ".join(describe(v) for v in leaves(getattr(m, name)()))
    return out


def main():
    import jax
    import jax.numpy as jnp

    m = importlib.import_module("weak_creation_cases")
    m.jax, m.jnp, m.lax = jax, jnp, jax.lax
    print(f"# recorded from JAX {jax.__version__} by tools/record_weak_creation.py")
    print("EXPECTED = {")
    for name, d in results(m, jax.tree_util.tree_leaves).items():
        print(f"    {name!r}: {d!r},")
    print("}")


if __name__ == "__main__":
    main()
