"""The steady-state eager call of ``grad``/``value_and_grad`` (srcjax/api/fastcall.py):
the first call of an argument type installs a shortcut, later calls run it. Every
later call must return what the first one did (dtype, weak type, values), which
in turn is checked against JAX's recorded values (tests/data/weak_transforms.json)
and float64 oracles; argument kinds that change re-specialize, options that
change (x64, checks, debug_nans) and clear_caches take effect at once, and
errors keep their location."""

import importlib.util
import json
import os

import numpy as np
import pytest
from weak_cases import CASES, arguments, describe, module_source

import srcjax
import srcjax.numpy as jnp
from srcjax.errors import ShapeError

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "data", "weak_transforms.json")) as _f:
    RECORDED = json.load(_f)["cases"]


def logistic(x):
    return jnp.exp(x) / (jnp.exp(x) + 1.0)


def _exact_logistic_grad(x):
    e = np.exp(np.float64(x))
    return e / (e + 1.0) ** 2


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    path = tmp_path_factory.mktemp("fastcall") / "fastcall_cases.py"
    path.write_text(module_source("srcjax.numpy"))
    spec = importlib.util.spec_from_file_location("fastcall_cases", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_GRAD_CASES = [
    (n, name, mode)
    for n, (name, _body, _args, argnums, _axes) in enumerate(CASES)
    if argnums is not None
    for mode in ("grad", "value_and_grad")
]


@pytest.mark.parametrize("n,name,mode", _GRAD_CASES, ids=[f"{c[1]}-{c[2]}" for c in _GRAD_CASES])
def test_later_calls_return_what_the_first_call_did(m, n, name, mode):
    """Oracle: the first call (the full path), itself checked against JAX by
    tests/test_weak_transforms.py; its gradient dtypes against JAX's record here."""
    _, _body, args, argnums, _ = CASES[n]
    api = getattr(srcjax, mode)
    g = api(getattr(m, f"f{n}"), argnums=argnums)
    calls = [
        [describe(v) for v in srcjax.tree_util.tree_leaves(g(*arguments(args, jnp)))]
        for _ in range(4)
    ]
    for later in calls[1:]:
        assert later == calls[0]
    # the gradient leaves (the last ones) have JAX's dtype and weak type
    want = RECORDED[name][mode]
    k = len(want) - (1 if mode == "value_and_grad" else 0)
    for w, got in zip(want[-k:], calls[0][-k:]):
        if "dtype" in w:
            assert (got["dtype"], got["weak_type"]) == (w["dtype"], w["weak_type"])


def test_w3_repeated_float_calls_match_jax_and_float64():
    """grad(logistic)(1.0): JAX's Array(0.19661194, dtype=float32, weak_type=True)."""
    g = srcjax.grad(logistic)
    for _ in range(3):
        r = g(1.0)
        assert repr(r) == "Array(0.19661194, dtype=float32, weak_type=True)"
        np.testing.assert_allclose(float(r), _exact_logistic_grad(1.0), rtol=1e-6)


def test_value_and_grad_gradient_stays_weak_after_the_first_call():
    """The earlier shortcut returned a strong gradient from the second call on
    (only the first call's gradient was weak); JAX's is weak every time."""
    vg = srcjax.value_and_grad(logistic)
    for _ in range(3):
        v, gr = vg(1.0)
        assert gr.weak_type and gr.dtype == np.float32
        np.testing.assert_allclose(float(gr), _exact_logistic_grad(1.0), rtol=1e-6)
        np.testing.assert_allclose(float(v), 1 / (1 + np.exp(-1.0)), rtol=1e-6)
    aux = srcjax.grad(lambda x: (x * 2.0, x), has_aux=True)
    for _ in range(3):
        gr, a = aux(1.0)
        assert gr.weak_type and float(gr) == 2.0 and float(a) == 1.0


def test_argument_kinds_changing_after_the_shortcut():
    """Each argument type keeps its own semantics whichever came first: a
    float64 scalar narrows to float32 (strong), a float32 Array stays strong, a
    float64 ndarray narrows, a vector is a vector, an int raises JAX's TypeError."""
    g = srcjax.grad(logistic)
    want = _exact_logistic_grad(0.5)
    for _ in range(2):
        r = g(0.5)
        assert (r.dtype, r.weak_type) == (np.float32, True)
        for x in (np.float32(0.5), np.float64(0.5), jnp.asarray(np.float32(0.5))):
            r = g(x)
            assert (r.dtype, r.weak_type, r.shape) == (np.float32, False, ())
            np.testing.assert_allclose(float(r), want, rtol=1e-6)
        r = g(jnp.asarray(0.5))  # a weakly typed Array: as a Python float
        assert (r.dtype, r.weak_type) == (np.float32, True)
        with pytest.raises(TypeError, match="real- or complex-valued inputs"):
            g(1)
    s = srcjax.grad(lambda x: jnp.sum(logistic(x)))
    for _ in range(2):
        for x in (np.full(3, 0.5, np.float64), jnp.full(3, 0.5), np.full(3, 0.5, np.float32)):
            r = s(x)
            assert (type(r), r.dtype, r.shape) == (srcjax.Array, np.float32, (3,))
            np.testing.assert_allclose(np.asarray(r), np.full(3, want), rtol=1e-6)
        r = s(np.float32(0.5))
        assert r.shape == () and r.dtype == np.float32


def test_x64_switched_after_the_shortcut(x64):
    g = srcjax.grad(logistic)
    r = g(1.0)
    assert (r.dtype, r.weak_type) == (np.float64, True)
    np.testing.assert_allclose(float(g(1.0)), _exact_logistic_grad(1.0), rtol=1e-14)
    srcjax.config.update("jax_enable_x64", False)
    r = g(1.0)
    assert (r.dtype, r.weak_type) == (np.float32, True)
    srcjax.config.update("jax_enable_x64", True)
    assert g(np.float64(1.0)).dtype == np.float64
    assert g(1.0).dtype == np.float64


def test_debug_nans_switched_on_after_the_shortcut():
    g = srcjax.grad(lambda x: jnp.log(x) * 2.0)
    assert float(g(2.0)) == float(g(2.0)) == 1.0
    srcjax.config.update("jax_debug_nans", True)
    try:
        with pytest.raises(FloatingPointError):
            g(-1.0)
    finally:
        srcjax.config.update("jax_debug_nans", False)
    with np.errstate(invalid="ignore"):  # (log(-1) is nan; its derivative 2 / x is not)
        assert float(g(-1.0)) == float(g(-1.0)) == -2.0


def test_checks_switched_on_after_the_shortcut():
    """jax_enable_checks checks the gradient's dtype each call: the shortcut
    installed before must not skip it (the check passes here; its result is the
    same)."""
    g = srcjax.grad(logistic)
    g(1.0)
    g(1.0)
    srcjax.config.update("jax_enable_checks", True)
    try:
        assert g._fast == {}
        np.testing.assert_allclose(float(g(1.0)), _exact_logistic_grad(1.0), rtol=1e-6)
        assert g._fast == {}  # (none installed while checks are on)
    finally:
        srcjax.config.update("jax_enable_checks", False)


def test_clear_caches_forgets_the_shortcut():
    g = srcjax.grad(logistic)
    g(1.0)
    g(1.0)
    assert float in g._fast
    srcjax.clear_caches()
    assert g._fast == {}
    np.testing.assert_allclose(float(g(1.0)), _exact_logistic_grad(1.0), rtol=1e-6)


def _helper(x):
    return x * 2.0


def test_a_redefined_callee_is_seen_on_the_next_call():
    global _helper
    g = srcjax.grad(lambda x: _helper(x) + 0.0)
    assert float(g(1.0)) == float(g(1.0)) == 2.0
    old = _helper
    try:

        def _helper(x):
            return x * 3.0

        assert float(g(1.0)) == 3.0
    finally:
        _helper = old


def test_shape_error_in_the_shortcut_names_the_user_line():
    """The matmul's ValueError raised inside a shortcut call is JAX's located
    ShapeError, as on the full path."""
    w = jnp.ones(3)

    def f(x):
        return jnp.sum(x @ w)

    g = srcjax.grad(f)
    np.testing.assert_allclose(np.asarray(g(jnp.ones(3))), np.ones(3))
    np.testing.assert_allclose(np.asarray(g(jnp.ones(3))), np.ones(3))
    with pytest.raises(ShapeError, match=r"test_eager_fastcall\.py:\d+"):
        g(jnp.ones(4))


def test_keywords_and_more_arguments_take_the_full_path():
    g = srcjax.grad(lambda x, y=2.0: x * y)
    assert float(g(1.0)) == float(g(1.0)) == 2.0
    assert float(g(1.0, 3.0)) == 3.0
    assert float(g(1.0, y=4.0)) == 4.0
    with pytest.raises(TypeError, match="positional arguments"):
        g()  # (JAX's TypeError: argnums=0 needs one positional argument)
