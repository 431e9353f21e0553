"""No NumPy RuntimeWarnings for inf/nan arithmetic in srcjax's code or generated
code (fresh-user bug F4-N1): JAX computes these silently. The values are JAX's
(jax 0.10.2); the user's own NumPy calls still warn (the filter is scoped to
srcjax's files and the generated files)."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import _fp_warnings


@srcjax.custom_jvp
def log1pexp(x):
    return jnp.log(1.0 + jnp.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * (1.0 - 1.0 / (1.0 + jnp.exp(x)))


def _where_trick(x):
    return jnp.where(x > 0.0, jnp.sqrt(x), 0.0)


CASES = {
    # (thunk, jax 0.10.2's value)
    "grad_sqrt_0": (lambda: srcjax.grad(jnp.sqrt)(0.0), np.inf),
    "where_trick": (lambda: srcjax.grad(_where_trick)(0.0), np.nan),
    "log1pexp_100": (lambda: log1pexp(100.0), np.inf),
    "grad_log1pexp_100": (lambda: srcjax.grad(log1pexp)(100.0), 1.0),
    "divide_0_0": (lambda: jnp.divide(0.0, 0.0), np.nan),
    "jit_divide_0_0": (lambda: srcjax.jit(lambda a: a / a)(0.0), np.nan),
    "floordiv_0": (lambda: jnp.asarray(1.0) // 0, np.inf),
    "mod_0": (lambda: jnp.asarray(1.0) % 0, np.nan),
    "int8_overflow": (lambda: jnp.asarray(100, jnp.int8) * jnp.asarray(2, jnp.int8), -56),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_no_runtime_warning_and_jax_value(case):
    thunk, want = CASES[case]
    with warnings.catch_warnings(record=True) as log:
        # (pytest imported srcjax inside its own catch_warnings: the filter added
        # then is gone; a user's `import srcjax` keeps it, see below)
        _fp_warnings.install()
        got = thunk()
    assert [str(w.message) for w in log if w.category is RuntimeWarning] == []
    np.testing.assert_equal(np.asarray(got, np.float64), want)


def test_users_own_numpy_still_warns():
    with warnings.catch_warnings(record=True) as log:
        np.float32(1.0) / np.float32(0.0)
    assert any(w.category is RuntimeWarning for w in log)


def test_a_fresh_process_gets_no_warnings(tmp_path):
    code = (
        "import srcjax, srcjax.numpy as jnp\n"
        "print(srcjax.grad(jnp.sqrt)(0.0), jnp.divide(0.0, 0.0),"
        " srcjax.grad(lambda x: jnp.where(x > 0, jnp.sqrt(x), 0.0))(0.0))\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    script = tmp_path / "user.py"  # (a file: srcjax reads the lambda's source)
    script.write_text(code)
    r = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=root, check=True
    )
    assert r.stdout.split() == ["inf", "nan", "nan"]
    assert "Warning" not in r.stderr
