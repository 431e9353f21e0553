"""Records JAX's results for tests/test_oob_transforms.py (run where JAX is
installed: ``python tools/record_oob.py``; writes tests/data/oob_transforms.json).

The cases are tests/oob_cases.py's: an index form (the index written in the
function's source) and an expression (a gather or an ``.at`` update in a mode).
JAX gives, for the float32 ``x = arange(12).reshape(3, 4) + 1`` and the update
value ``v = 2``: the value, the gradient of ``sum(w * f(x, v))`` in ``x`` and
``v`` (``w`` a fixed weight per output element), ``vmap`` over two ``x`` and,
for the index forms that can be passed as an argument, ``vmap`` over two
indices (values and gradients).
"""

import json
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..", "tests")
OUT = os.path.join(TESTS, "data", "oob_transforms.json")
sys.path.insert(0, TESTS)

from oob_cases import FORMS, cases, module_source, tolist, weights  # noqa: E402


def main():
    import jax
    import jax.numpy as jnp

    path = os.path.join(tempfile.mkdtemp(), "oob_cases_jax.py")
    with open(path, "w") as f:
        f.write(module_source("jax.numpy"))
    sys.path.insert(0, os.path.dirname(path))
    import oob_cases_jax as m

    x = jnp.arange(12, dtype=jnp.float32).reshape(3, 4) + 1
    v = jnp.float32(2.0)
    xs = jnp.stack([x, 2 * x])
    rec = {}
    for n, (key, k, _e) in enumerate(cases()):
        form, as_arg, other = FORMS[k]
        f = getattr(m, f"f{n}")
        out = f(x, v)
        w = weights(np.shape(out))
        r = {"value": tolist(out), "vmap_x": tolist(jax.vmap(f, (0, None))(xs, v))}
        try:
            gx, gv = jax.grad(getattr(m, f"loss{n}"), argnums=(0, 1))(x, v, w)
            r["grad_x"], r["grad_v"] = tolist(gx), float(gv)
        except NotImplementedError:  # (JAX: scatter_mul gradients need unique indices)
            pass
        if as_arg:
            i2 = np.stack([eval(form), eval(other)])  # noqa: S307 (the forms above)
            r["vmap_i"] = tolist(jax.vmap(getattr(m, f"fi{n}"), (None, None, 0))(x, v, i2))
            lossi = getattr(m, f"lossi{n}")
            try:
                gi = jax.vmap(jax.grad(lossi), (None, None, 0, None))(x, v, i2, w)
                r["vmap_i_grad_x"] = tolist(gi)
            except NotImplementedError:
                pass
        rec[key] = r
    with open(OUT, "w") as f:
        text = json.dumps(
            {"jax": jax.__version__, "cases": rec}, sort_keys=True, separators=(",", ":")
        )
        f.write(text.replace('},"', '},\n"') + "\n")  # (one case a line)
    print(f"{len(rec)} cases -> {OUT}")


if __name__ == "__main__":
    main()
