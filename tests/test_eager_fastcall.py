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


@pytest.fixture(autouse=True)
def checks_off():
    """The shortcuts are installed only with jax_enable_checks off (a user's
    default; tests/conftest.py turns the checks on for the suite)."""
    old = srcjax.config.jax_enable_checks
    srcjax.config.update("jax_enable_checks", False)
    try:
        yield
    finally:
        srcjax.config.update("jax_enable_checks", old)


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
    for n, (name, _body, args, argnums, _axes) in enumerate(CASES)
    if argnums is not None
    for mode in ("grad", "value_and_grad", "jvp")
    if mode != "jvp" or len(args) == 1
]


@pytest.mark.parametrize("n,name,mode", _GRAD_CASES, ids=[f"{c[1]}-{c[2]}" for c in _GRAD_CASES])
def test_later_calls_return_what_the_first_call_did(m, n, name, mode):
    """Oracle: the first call (the full path), itself checked against JAX by
    tests/test_weak_transforms.py; its gradient dtypes against JAX's record here."""
    _, _body, args, argnums, _ = CASES[n]
    f = getattr(m, f"f{n}")
    if mode == "jvp":

        def g(x):
            return srcjax.jvp(f, (x,), (x,))

    else:
        g = getattr(srcjax, mode)(f, argnums=argnums)
    calls = [
        [describe(v) for v in srcjax.tree_util.tree_leaves(g(*arguments(args, jnp)))]
        for _ in range(4)
    ]
    for later in calls[1:]:
        assert later == calls[0]
    if mode != "jvp" and len(args) == 1 and not args[0].startswith("WEAK("):
        assert g._fast  # (the later calls ran a shortcut: one float or scalar argument)
    if mode == "jvp":
        return  # (tests/test_weak_transforms.py checks the first call against JAX)
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
    assert float in g._fast
    srcjax.config.update("jax_enable_checks", True)  # (the fixture restores it)
    assert g._fast == {}
    np.testing.assert_allclose(float(g(1.0)), _exact_logistic_grad(1.0), rtol=1e-6)
    assert g._fast == {}  # (none installed while checks are on)


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


def _dlogistic(x):
    e = np.exp(np.asarray(x, np.float64))
    return e / (e + 1.0) ** 2


def test_jvp_repeated_calls_of_leaf_arguments_match_float64():
    """jvp's steady state (an entry per argument types): value and tangent
    against float64, dtype kept, every call alike."""
    x = np.array([0.5, -1.0, 2.0], np.float32)
    v = np.array([1.0, 2.0, -3.0], np.float32)
    for p, t in [
        (np.float32(0.5), np.float32(2.0)),
        (x, v),
        (jnp.asarray(x), jnp.asarray(v)),
        (jnp.asarray(np.float32(0.5)), jnp.asarray(np.float32(2.0))),
        (np.float16(0.5), np.float16(2.0)),
    ]:
        want_v = 1 / (1 + np.exp(-np.asarray(p, np.float64)))
        want_t = _dlogistic(p) * np.asarray(t, np.float64)
        rtol = 2e-3 if np.asarray(p).dtype == np.float16 else 1e-6
        for container in (tuple, list, tuple):
            out, tan = srcjax.jvp(logistic, container([p]), container([t]))
            assert type(out) is srcjax.Array and type(tan) is srcjax.Array
            assert out.dtype == tan.dtype == np.asarray(p).dtype
            np.testing.assert_allclose(np.asarray(out, np.float64), want_v, rtol=rtol)
            np.testing.assert_allclose(np.asarray(tan, np.float64), want_t, rtol=rtol)


def test_jvp_checks_still_apply_after_the_shortcut():
    """JAX's errors for the tangents, whatever calls came before (the entry
    checks dtype and shape and otherwise takes the full path)."""
    x, v = jnp.ones(3), jnp.ones(3)
    for _ in range(2):
        srcjax.jvp(logistic, (x,), (v,))
    with pytest.raises(TypeError, match="equal types"):
        srcjax.jvp(logistic, (x,), (jnp.ones(3, jnp.float16),))
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        srcjax.jvp(logistic, (x,), (jnp.ones(4),))
    with pytest.raises(TypeError, match="dtypes must be equal"):
        srcjax.jvp(logistic, (x,), (jnp.ones(3, jnp.int32),))
    with pytest.raises(TypeError, match="tuples or lists"):
        srcjax.jvp(logistic, np.ones(1, np.float32), (np.float32(1.0),))
    with pytest.raises(ValueError, match="different primal and tangent lengths"):
        srcjax.jvp(logistic, (x,), (v, v))
    with pytest.raises(TypeError, match="real- or complex-valued inputs"):
        srcjax.jvp(logistic, (jnp.ones(3, jnp.int32),), (jnp.ones(3, jnp.int32),))
    # and a float64 ndarray narrows to float32 (JAX's canonicalization)
    out, tan = srcjax.jvp(logistic, (np.ones(3),), (np.ones(3),))
    assert out.dtype == tan.dtype == np.float32


def test_jvp_outputs_share_no_memory_with_the_arguments():
    x, v = np.ones(3, np.float32), np.full(3, 2.0, np.float32)
    for _ in range(3):
        out, tan = srcjax.jvp(lambda a: a, (x,), (v,))
        assert not np.shares_memory(np.asarray(out), x)
        assert not np.shares_memory(np.asarray(tan), v)
        np.testing.assert_array_equal(np.asarray(tan), v)


def test_jvp_has_aux_and_clear_caches():
    def f(x):
        return jnp.sin(x), x * 2.0

    x = np.float32(0.5)
    for _ in range(3):
        out, tan, aux = srcjax.jvp(f, (x,), (np.float32(1.0),), has_aux=True)
        np.testing.assert_allclose(float(tan), np.cos(0.5), rtol=1e-6)
        assert float(aux) == 1.0 and type(aux) is srcjax.Array
        out, tan = srcjax.jvp(lambda y: f(y)[0], (x,), (np.float32(1.0),))
        np.testing.assert_allclose(float(out), np.sin(0.5), rtol=1e-6)
    from srcjax.api_fwd import _JVP_FAST

    assert f in _JVP_FAST
    srcjax.clear_caches()
    assert f not in _JVP_FAST


def test_a_repeated_pure_call_runs_once_with_the_same_values():
    """logistic's source calls jnp.exp(x) twice; grad's generated code calls it
    once (CSE after the transform: the adjoints are summed as before, so the
    float32 results are JAX's bit for bit: 0.19661194, recorded). (jvp's code
    still calls it twice: forward-mode statements carry no primitive facts.)"""
    src = srcjax.source(srcjax.grad(logistic), 1.0)
    assert src.count("exp(x)") == 1 and "common subexpression" in src  # (np.exp: float32 code)
    r = srcjax.grad(logistic)(1.0)
    assert repr(r) == "Array(0.19661194, dtype=float32, weak_type=True)"
    out, tan = srcjax.jvp(logistic, (np.float32(1.0),), (np.float32(1.0),))
    assert float(out) == float(np.float32(0.7310586))  # (JAX's, recorded)
    np.testing.assert_allclose(float(tan), _exact_logistic_grad(1.0), rtol=1e-6)
    v, gr = srcjax.value_and_grad(logistic)(np.float32(1.0))
    assert float(gr) == float(r)


def test_fresh_grads_of_one_function_share_entries_by_options():
    """``srcjax.grad(f)(x)`` written in a loop makes a new grad per call: they
    share the entries of grads with the same options, and only those (a
    value_and_grad, a tuple argnums, has_aux keep their own results' form)."""
    want = _exact_logistic_grad(1.0)
    for _ in range(3):
        r = srcjax.grad(logistic)(1.0)
        assert (r.dtype, r.weak_type) == (np.float32, True)
        np.testing.assert_allclose(float(r), want, rtol=1e-6)
    assert float in srcjax.grad(logistic)._fast
    for _ in range(2):
        v, r = srcjax.value_and_grad(logistic)(1.0)
        np.testing.assert_allclose((float(v), float(r)), (1 / (1 + np.exp(-1.0)), want), rtol=1e-6)
        (r,) = srcjax.grad(logistic, argnums=(0,))(1.0)
        assert r.weak_type
        np.testing.assert_allclose(float(r), want, rtol=1e-6)
        r, aux = srcjax.grad(lambda x: (logistic(x), 2.0 * x), has_aux=True)(1.0)
        np.testing.assert_allclose((float(r), float(aux)), (want, 2.0), rtol=1e-6)


def test_entries_keep_no_function_alive():
    """The shared tables are held weakly by the function; an entry that referred
    to its function (jvp's fallback did) kept every function called twice
    alive for good."""
    import gc
    import weakref

    def make():
        def f(x):
            return jnp.sum(jnp.exp(x) * 2.0)

        return f

    refs = []
    for call in (
        lambda f: srcjax.grad(f)(1.0),
        lambda f: srcjax.grad(f)(jnp.ones(2)),
        lambda f: srcjax.value_and_grad(f)(np.float32(1.0)),
        lambda f: srcjax.grad(lambda x: (f(x), x), has_aux=True)(1.0),
        lambda f: srcjax.jvp(f, (np.float32(1.0),), (np.float32(1.0),)),
        lambda f: srcjax.jvp(f, (jnp.ones(2),), (jnp.ones(2),)),
    ):
        f = make()
        for _ in range(3):
            call(f)
        refs.append(weakref.ref(f))
        del f
    gc.collect()
    assert [r() for r in refs] == [None] * len(refs)


def _f32_bits(x):
    return np.asarray(x, np.float32).view(np.uint32).item()


def _loop_sin(x):
    for _ in range(2):
        x = jnp.sin(x)
    return x


def _mixed(x):
    return jnp.tanh(x) * 3.0 - jnp.sin(x) / (x + 2.0) + jnp.cos(-x) * x


def test_float32_scalar_code_calls_numpy_with_the_same_bits():
    """grad's float32-scalar code (api/scalar_code.py: np.exp for jnp.exp, the
    seed 1.0, no ad.project_real) against the generic generated code on the same
    float32 scalar, bit for bit, at ordinary and extreme arguments (exp overflow,
    nan, inf, signed zero), for a Python float and a float32 scalar argument."""
    from srcjax.api import scalar_code

    for f in (logistic, _mixed):
        g = srcjax.grad(f)
        g(0.25)
        generic = g._cache[("leaf",)]
        special = scalar_code.specialize(generic)
        assert special is not None
        text = "".join(__import__("linecache").getlines(special.__code__.co_filename))
        assert "jnp." not in text and "ad." not in text and "np." in text
        with np.errstate(all="ignore"):
            for v in (0.25, -3.0, 0.0, -0.0, 1e-30, 88.0, 100.0, -100.0, np.inf, np.nan):
                want = generic(np.float32(v))
                for x in (v, np.float32(v), v):
                    r = g(x)
                    assert r.dtype == np.float32 and r.shape == ()
                    assert _f32_bits(r) == _f32_bits(want), (f.__name__, v)
                    assert type(r._buf) is np.float32
    r = srcjax.grad(logistic)(1.0)
    assert repr(r) == "Array(0.19661194, dtype=float32, weak_type=True)"  # JAX 0.10.2


def test_float32_scalar_code_declines_what_it_cannot_type():
    """A loop, a call it does not know (ad.zeros_like of a constant function) or
    x64 leave the generic code in place (results checked against float64)."""
    from srcjax.api import scalar_code

    g = srcjax.grad(_loop_sin)
    for _ in range(3):
        np.testing.assert_allclose(float(g(0.5)), np.cos(np.sin(0.5)) * np.cos(0.5), rtol=1e-6)
    assert scalar_code.specialize(g._cache[("leaf",)]) is None
    c = srcjax.grad(lambda x: 2.0)
    for _ in range(3):
        assert float(c(0.5)) == 0.0


def _branchy(x):
    y = jnp.sin(x) * 2.0
    if x.ndim == 0:
        y = y + jnp.cos(x)
    return jnp.maximum(y, 0.0) if True else y


def test_code_that_jumps_is_declined_without_parsing_and_nothing_else_is():
    """scalar_code skips parsing grad's text when the code jumps (a loop, an if,
    a conditional expression): it declines such code either way. Oracle: its
    decision on the parsed text, both seeds, for code that jumps and code that
    does not."""
    import ast
    import linecache

    from srcjax.api import scalar_code

    for f, accepted in ((logistic, True), (_mixed, True), (_loop_sin, False), (_branchy, False)):
        g = srcjax.grad(f)
        g(0.25)
        generic = g._cache[("leaf",)]
        lines = linecache.getlines(generic.__code__.co_filename)
        tree = ast.parse("".join(lines))
        full = None
        for seed in ("1.0", "np.float32(1.0)"):
            try:
                full = scalar_code._specialize(generic, seed, lines, tree)
                break
            except scalar_code._Untyped:
                continue
        assert (full is not None) is accepted, f.__name__
        assert scalar_code._branches(generic.__code__) is (not accepted), f.__name__
        scalar_code._DONE.pop(generic, None)
        assert (scalar_code.specialize(generic) is not None) is accepted, f.__name__


def test_source_shows_the_float32_scalar_code():
    """srcjax.source(g, 1.0) is the code the later calls run: NumPy's exp, the
    seed 1.0, the cotangent returned; for an Array or without an example the
    generic code."""
    g = srcjax.grad(logistic)
    text = srcjax.source(g, 1.0)
    assert "np.exp(x)" in text and "out_bar = 1.0" in text and "return x_bar\n" in text
    assert srcjax.source(g, np.float32(1.0)) == text
    for generic in (srcjax.source(g), srcjax.source(g, jnp.asarray(np.float32(1.0)))):
        assert "jnp.exp(x)" in generic and "ad.project_real" in generic
    assert "jnp.exp" in srcjax.source(srcjax.value_and_grad(logistic), 1.0)
