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


def _guarded_sqrt_sum(x):
    return jnp.sum(jnp.where(x > 0, jnp.sqrt(x), 0.0))


#: the transformations' calls (fresh-user round 6, item 9: repro_13's grad of a
#: where-guarded sqrt warned 'invalid value encountered in sqrt' under
#: simplefilter("always")); values are JAX 0.10.2's
TRANSFORMED = {
    "grad_where_sqrt": (
        lambda: srcjax.grad(_guarded_sqrt_sum)(np.array([-1.0, 4.0], np.float32)),
        [np.nan, 0.25],
    ),
    "jit_grad_where_sqrt": (
        lambda: srcjax.jit(srcjax.grad(_guarded_sqrt_sum))(np.array([-1.0, 4.0], np.float32)),
        [np.nan, 0.25],
    ),
    "value_and_grad_log0": (
        lambda: srcjax.value_and_grad(lambda x: jnp.sum(jnp.log(x)))(np.zeros(2, np.float32)),
        (-np.inf, [np.inf, np.inf]),
    ),
    "jit_exp_overflow": (lambda: srcjax.jit(jnp.exp)(np.float32(100.0)), np.inf),
    "jit_reciprocal_0": (lambda: srcjax.jit(lambda v: 1.0 / v)(np.zeros(2, np.float32)), np.inf),
    "vmap_sqrt": (lambda: srcjax.vmap(jnp.sqrt)(np.array([-1.0, 4.0], np.float32)), [np.nan, 2]),
}


@pytest.mark.parametrize("action", ["always", "error"])
@pytest.mark.parametrize("case", sorted(TRANSFORMED))
def test_transformations_are_silent_under_the_users_filters(case, action):
    # a filter the user adds after import srcjax comes first (warnings.simplefilter,
    # pytest -W error): the filter of _fp_warnings.install is not consulted, the
    # transformation's call ignores NumPy's floating-point errors itself
    thunk, want = TRANSFORMED[case]
    thunk()  # (built: a first call's transformation is not what is checked)
    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter(action)
        got = thunk()
        # the user's own NumPy still warns after the call (errstate restored)
        with pytest.warns(RuntimeWarning) if action == "always" else pytest.raises(RuntimeWarning):
            np.float32(1.0) / np.float32(0.0)
    assert [str(w.message) for w in log if w.category is RuntimeWarning] == []
    for g, w in zip(*(tuple(v) if isinstance(v, tuple) else (v,) for v in (got, want))):
        np.testing.assert_equal(np.asarray(g, np.float64), np.asarray(w, np.float64))


def test_debug_nans_still_raises_inside_a_quiet_call():
    srcjax.config.update("jax_debug_nans", True)
    try:
        with pytest.raises(FloatingPointError):
            srcjax.jit(lambda v: jnp.log(v) * 0.0 + jnp.sqrt(v))(np.float32(-1.0))
    finally:
        srcjax.config.update("jax_debug_nans", False)


def test_filter_alone_decides_until_the_user_adds_one():
    # srcjax's filter decides while the filter list is the one it was installed in
    # (no errstate needed); a filter the user inserts after it (same list, one
    # longer) or a list replaced by catch_warnings turns the errstate back on
    f = srcjax.jit(lambda a: a / a)
    with warnings.catch_warnings(record=True) as log:
        _fp_warnings.install()
        assert _fp_warnings.filters_clean()
        np.testing.assert_equal(np.asarray(f(0.0)), np.nan)
        warnings.simplefilter("error")
        assert not _fp_warnings.filters_clean()
        np.testing.assert_equal(np.asarray(f(0.0)), np.nan)  # (no RuntimeWarning raised)
        np.testing.assert_equal(np.asarray(srcjax.grad(jnp.sqrt)(0.0)), np.inf)
    assert [w for w in log if w.category is RuntimeWarning] == []


def test_a_filter_set_before_import_is_not_clean(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(
        "import warnings\n"
        "warnings.simplefilter('error', RuntimeWarning)\n"
        "import srcjax\n"
        "from srcjax import _fp_warnings\n"
        "assert not _fp_warnings.filters_clean()\n"
        "print(float(srcjax.jit(lambda a: a / a)(0.0)))\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "nan"
