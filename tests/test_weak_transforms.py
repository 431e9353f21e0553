"""Weak types (JAX's weakly typed Python scalars) inside and out of transforms,
as JAX 0.10.2 has them: ``grad(lambda x: x * 2.)(1.0)`` and ``jit(...)(1.0)``
are weakly typed float32 Arrays, a Python float argument times a float16 array
stays float16 eagerly and under ``jit``/``grad``/``value_and_grad``/``vmap``,
and a gradient has its primal's dtype and weak type. Every case of
tests/weak_cases.py in every mode against tests/data/weak_transforms.json
(recorded by tools/record_weak.py; no JAX here): dtype, weak type, shape and
values of each result leaf."""

import importlib.util
import json
import os
import sys

import numpy as np
import pytest
from weak_cases import (
    CASES,
    ELEMENTWISE,
    arguments,
    describe,
    elementwise_operands,
    elementwise_result,
    module_source,
    structural_result,
)

import srcjax
import srcjax.numpy as jnp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
from record_weak import modes  # noqa: E402

with open(os.path.join(HERE, "data", "weak_transforms.json")) as _f:
    RECORDED = json.load(_f)["cases"]
with open(os.path.join(HERE, "data", "weak_elementwise.json")) as _f:
    _RECORDED = json.load(_f)
    RECORDED_ELEMENTWISE, RECORDED_STRUCTURAL = _RECORDED["results"], _RECORDED["structural"]
BY_NAME = {c[0]: (n, c) for n, c in enumerate(CASES)}
#: where srcjax still differs from JAX, and why (strict: a fix shows up as XPASS)
KNOWN: dict = {}
KEYS = [
    pytest.param(name, mode, marks=pytest.mark.xfail(reason=KNOWN[name, mode], strict=True))
    if (name, mode) in KNOWN
    else (name, mode)
    for name in RECORDED
    for mode in sorted(RECORDED[name])
]
_RTOL = {"float16": 2e-3, "bfloat16": 1e-2}


@pytest.fixture(scope="module")
def m(tmp_path_factory):
    path = tmp_path_factory.mktemp("weak") / "weak_cases_srcjax.py"
    path.write_text(module_source("srcjax.numpy"))
    spec = importlib.util.spec_from_file_location("weak_cases_srcjax", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(m, name, mode):
    n, (_, _body, args, argnums, in_axes) = BY_NAME[name]
    run = modes(srcjax, jnp, getattr(m, f"f{n}"), arguments(args, jnp), argnums, in_axes)[mode]
    return [describe(v) for v in srcjax.tree_util.tree_leaves(run())]


def test_every_case_is_recorded():
    assert sorted(RECORDED) == sorted(BY_NAME)


@pytest.mark.parametrize("name,mode", KEYS)
def test_dtype_weak_type_and_values(m, name, mode):
    want, got = RECORDED[name][mode], _run(m, name, mode)
    assert len(got) == len(want)
    for w, g in zip(want, got):
        if "python" in w or "numpy" in w or "foreign" in w:
            # JAX returns the input itself (jvp/value_and_grad of the identity):
            # srcjax returns an Array of it; the values agree
            np.testing.assert_allclose(np.ravel(g["value"]), np.ravel(w["value"]), rtol=1e-6)
            continue
        assert (g.get("dtype"), g.get("shape")) == (w["dtype"], w["shape"]), (g, w)
        assert g["weak_type"] == w["weak_type"], (g, w)
        np.testing.assert_allclose(
            np.asarray(g["value"], float),
            np.asarray(w["value"], float),
            rtol=_RTOL.get(w["dtype"], 1e-6),
        )


def test_describe_sees_python_scalars():
    assert describe(1.0) == {"python": "float", "value": [1.0]}


def test_the_issue_examples():
    """Issue 16's examples, spelled as in the issue (JAX 0.10.2's reprs)."""
    assert repr(srcjax.grad(lambda x: x * 2.0)(1.0)) == "Array(2., dtype=float32, weak_type=True)"
    assert repr(srcjax.jit(lambda x: x * 2.0)(1.0)) == "Array(2., dtype=float32, weak_type=True)"
    assert repr(srcjax.jit(lambda n: n + 1)(3)) == "Array(4, dtype=int32, weak_type=True)"
    assert repr(srcjax.jit(lambda x: x > 0)(True)) == "Array(True, dtype=bool)"
    h = np.array([0.5, 2.0], np.float16)
    assert srcjax.jit(lambda x, y: x * y)(3.0, h).dtype == np.float16
    assert srcjax.vmap(lambda x, y: x * y, in_axes=(None, 0))(3.0, h).dtype == np.float16
    v, g = srcjax.jit(srcjax.value_and_grad(lambda x, y: (x * y).sum()))(3.0, h)
    assert (v.dtype, v.weak_type, g.dtype, g.weak_type) == (np.float16, False, np.float32, True)
    # a weak Array argument is weak too; a float32 argument stays strong
    assert srcjax.grad(lambda x: x * 2.0)(jnp.asarray(1.0)).weak_type
    assert not srcjax.grad(lambda x: x * 2.0)(np.float32(1.0)).weak_type


_NN_BOOL = (
    "JAX's nn functions convert a bool array by a weakly typed promotion "
    "(nn.relu(bool_array) is weak int32)"
)
_DTYPE = "a dtype difference of srcjax's, not of weak types (as before weak arrays)"
#: where srcjax's eager result still differs from JAX's, and why (strict: the
#: test fails when one of them starts to match, so the entry is removed)
KNOWN_ELEMENTWISE = {
    **{
        (f"nn.{n}", "B"): _NN_BOOL
        for n in "celu elu hard_sigmoid hard_silu leaky_relu relu selu soft_sign softplus".split()
    },
    **{
        ("jnp.nan_to_num", p): "JAX returns an integer operand itself (a weak one stays weak)"
        for p in ("WI", "WI,2.5", "WI,I32", "WI,W")
    },
    ("jnp.isfinite", "WI"): "JAX answers an integer operand with a strong constant",
    ("jnp.rint", "WI"): "JAX converts an integer operand to float strongly",
    ("jnp.power", "B,1"): "JAX's integer-exponent path (a strong result)",
    ("jnp.power", "W,I32"): "JAX's integer-exponent path (a strong result)",
    ("jnp.round", "W,1"): "JAX scales by a strongly typed 10**decimals (decimals=0: weak)",
    ("special.log_ndtr", "W,1"): "special.log_ndtr takes no second operand in srcjax",
    **{
        (n, "W,1j"): "srcjax refuses complex operands here (JAX computes in complex64)"
        for n in ("jnp.arctan2", "jnp.logaddexp", "jnp.logaddexp2")
    },
    **{
        k: _DTYPE
        for k in [
            ("jnp.conj", "B"),
            ("jnp.positive", "B"),
            ("jnp.square", "B"),
            ("nn.hard_tanh", "B"),
            ("nn.hard_tanh", "WI"),
            ("nn.leaky_relu", "B,1"),
            ("nn.relu6", "B"),
            ("nn.relu6", "WI"),
            *[(f"nn.{n}", p) for n in ("celu", "elu", "leaky_relu") for p in ("W,I32", "WI,I32")],
        ]
    },
}


def test_every_elementwise_function_is_recorded():
    assert sorted(RECORDED_ELEMENTWISE) == sorted(ELEMENTWISE)


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise_weak_types(name):
    """Each elementwise function on weak arrays (0.5 * int32_array, bool_array +
    1), strong arrays and Python numbers, eagerly: JAX 0.10.2's result dtype and
    weak type (tests/data/weak_elementwise.json)."""
    import srcjax.lax
    import srcjax.nn
    import srcjax.scipy.special

    namespaces = {"jnp": jnp, "lax": srcjax.lax, "nn": srcjax.nn, "special": srcjax.scipy.special}
    operands = elementwise_operands(jnp, namespaces)
    for pattern, want in RECORDED_ELEMENTWISE[name].items():
        with np.errstate(all="ignore"):  # (log of a bool array's False ...)
            got = elementwise_result(namespaces, name, pattern, operands)
        if (name, pattern) in KNOWN_ELEMENTWISE:
            assert got != want, f"{name}({pattern}) matches JAX now: remove it from KNOWN"
        else:
            assert got == want, (pattern, got, want)


def test_known_elementwise_differences_are_recorded():
    for name, pattern in KNOWN_ELEMENTWISE:
        assert pattern in RECORDED_ELEMENTWISE[name], (name, pattern)


#: where srcjax's eager structural result still differs from JAX's (strict)
KNOWN_STRUCTURAL = {
    "W @ W": "matmul keeps no weak type",
    "W.at[0].set(1.0)": ".at[] updates keep no weak type",
}


@pytest.mark.parametrize("expr", sorted(RECORDED_STRUCTURAL))
def test_structural_weak_types(expr):
    """Functions that move or copy a weak array's elements, eagerly: JAX 0.10.2's
    dtype and weak type (tests/data/weak_elementwise.json, "structural")."""
    operands = elementwise_operands(jnp, {})
    got, want = structural_result(expr, jnp, operands), RECORDED_STRUCTURAL[expr]
    if expr in KNOWN_STRUCTURAL:
        assert got != want, f"{expr} matches JAX now: remove it from KNOWN_STRUCTURAL"
    else:
        assert got == want, (got, want)


def test_python_float_keywords_and_pairs_without_jit():
    """A Python float passed by keyword, or next to a float16 array, is JAX's weak
    scalar in eager value_and_grad and jvp too (it was a float32 scalar: float32
    values). Oracle: JAX 0.10.2's reprs, recorded by hand."""
    h = np.array([0.1, 0.25, 3.0], np.float16)

    def f(y, s=1.0):
        return (y * s).sum()

    assert repr(srcjax.value_and_grad(f)(h, s=2.0)) == (
        "(Array(6.7, dtype=float16), Array([2., 2., 2.], dtype=float16))"
    )
    assert repr(srcjax.value_and_grad(lambda x, y: (x * y).sum())(2.0, h)) == (
        "(Array(6.7, dtype=float16), Array(3.3496094, dtype=float32, weak_type=True))"
    )
    assert repr(srcjax.jvp(lambda x, y: x * y, (2.0, h), (1.0, h))) == (
        "(Array([0.2, 0.5, 6. ], dtype=float16), Array([0.2998, 0.75  , 9.    ], dtype=float16))"
    )


def test_weak_values_under_disable_jit_and_on_later_calls():
    """The weak-typed specialization is no jit: disable_jit leaves it on (JAX's
    value_and_grad is weak there too), and later calls (fastcall) and calls after
    clear_caches give the first call's result. Oracle: JAX 0.10.2's repr."""
    want = "(Array(2., dtype=float32, weak_type=True), Array(2., dtype=float32, weak_type=True))"
    vg = srcjax.value_and_grad(lambda x: x * 2.0)
    with srcjax.disable_jit():
        assert repr(vg(1.0)) == want
    assert [repr(vg(1.0)) for _ in range(3)] == [want] * 3
    srcjax.clear_caches()
    assert repr(vg(1.0)) == want


def test_python_int_arguments_to_grad_are_jaxs_type_error():
    """grad needs float inputs: a Python int is JAX's TypeError, also next to a
    Python float (the call that takes the weak-typed specialization) and from
    value_and_grad. Oracle: JAX 0.10.2 raises TypeError for each call."""
    calls = [
        lambda: srcjax.grad(lambda x: x * 2.0)(3),
        lambda: srcjax.grad(lambda x, n: x * n, argnums=1)(3.0, 3),
        lambda: srcjax.value_and_grad(lambda x, n: x * n, argnums=1)(3.0, 3),
        lambda: srcjax.value_and_grad(lambda x, n: x * n, argnums=(0, 1))(3.0, 3),
    ]
    for call in calls:
        with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
            call()


def test_a_gradient_the_abstract_values_cannot_see_is_still_weak():
    """The gradient of a Python float is weak also where the specialization
    returns it as a zero (ad.zeros_like: a nested grad's result does not depend
    on x). Oracle: JAX 0.10.2's gradient, Array(0., dtype=float32,
    weak_type=True), and value 6.25 (JAX computes it in float16; srcjax in
    float32, the nested gradient's weak type unknown inside)."""
    h = np.array([0.5, 2.0], np.float16)

    def f(x, y):
        return jnp.sum(srcjax.grad(lambda z: (z * y).sum())(x) * y)

    value, g = srcjax.value_and_grad(f)(2.0, h)
    assert repr(g) == "Array(0., dtype=float32, weak_type=True)"
    assert float(value) == 6.25


def _scale_or_shift(x, mode):
    return x * 2.0 if mode == "double" else x + 1.0


def test_vmap_without_jit_follows_jaxs_weak_types_call_after_call():
    """Issue 16: vmap without jit (it computed strong arrays). JAX 0.10.2's reprs,
    one transformed function called with int32, float16, then int32 again."""
    i32, h = np.arange(3, dtype=np.int32), np.arange(3, dtype=np.float16)
    v = srcjax.vmap(lambda x: x * 2.5)
    want = "Array([0. , 2.5, 5. ], dtype=float32, weak_type=True)"
    assert repr(v(i32)) == want
    assert repr(v(h)) == "Array([0. , 2.5, 5. ], dtype=float16)"
    assert repr(v(i32)) == want
    w = srcjax.vmap(lambda x, s: x * s, in_axes=(0, None))
    assert repr(w(i32, 1.5)) == "Array([0. , 1.5, 3. ], dtype=float32, weak_type=True)"
    assert repr(w(h, 1.5)) == "Array([0. , 1.5, 3. ], dtype=float16)"
    # the result is a new array, never the argument's memory (as before)
    x = jnp.ones(3)
    y = srcjax.vmap(lambda a: a)(x)
    assert not np.shares_memory(np.asarray(y), np.asarray(x))


def test_vmap_of_a_signature_jit_cannot_take_runs_the_batched_code():
    """A str argument (jit refuses it): vmap runs its batched code as generated
    (strong float32 here, where JAX's is weak; values as a Python loop)."""
    i32 = np.arange(3, dtype=np.int32)
    v = srcjax.vmap(_scale_or_shift, in_axes=(0, None))
    for mode in ("double", "shift", "double"):
        got = v(i32, mode)
        assert got.dtype == np.float32
        want = [_scale_or_shift(float(a), mode) for a in i32]
        np.testing.assert_allclose(np.asarray(got), want)


def test_vmap_of_grad_of_a_python_float_is_its_default_float_dtype():
    """vmap(grad(f), in_axes=(None, 0))(2.0, float16_y) was float16: the batched
    cotangent of a Python float kept the cotangent's dtype. Oracle: JAX 0.10.2's
    reprs (jit of it too; value_and_grad's value stays float16; bfloat16 y: JAX's
    is weak, srcjax's strong, the dtype as JAX's)."""

    def f(x, y):
        return jnp.sum(x * y)

    h = np.array([[0.5, 2.0], [1.0, -3.0], [0.25, 4.0]], np.float16)
    want = "Array([ 2.5 , -2.  ,  4.25], dtype=float32, weak_type=True)"
    vg = srcjax.vmap(srcjax.grad(f), in_axes=(None, 0))
    assert repr(vg(2.0, h)) == want
    assert repr(srcjax.jit(vg)(2.0, h)) == want
    value, g = srcjax.vmap(srcjax.value_and_grad(f), in_axes=(None, 0))(2.0, h)
    assert repr(value) == "Array([ 5. , -4. ,  8.5], dtype=float16)"
    assert repr(g) == want
    fc = srcjax.vmap(srcjax.grad(lambda x, y: jnp.real(jnp.sum(x * y))), in_axes=(None, 0))
    assert repr(fc(2.0, h.astype(np.complex64) * (1 + 2j))) == want
    got = vg(2.0, jnp.asarray(h, jnp.bfloat16))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got), [2.5, -2.0, 4.25])


def test_a_python_float_not_differentiated_stays_a_python_float():
    """grad(f)(1.5, 4.0) gave f a float32 scalar for the 4.0 it does not
    differentiate; JAX 0.10.2 passes it on as the Python float (its grad closes
    over the arguments not differentiated): the values below are JAX's."""

    def f(x, p):
        return x * (2.0 if isinstance(p, float) else 3.0)

    assert repr(srcjax.grad(f)(1.5, 4.0)) == "Array(2., dtype=float32, weak_type=True)"
    assert repr(srcjax.grad(f, argnums=1)(4.0, 1.5)) == "Array(0., dtype=float32, weak_type=True)"
    value, g = srcjax.value_and_grad(lambda x, p: p * p + x)(1.5, 4.0)
    assert repr(value) == "Array(17.5, dtype=float32, weak_type=True)"
    assert repr(g) == "Array(1., dtype=float32, weak_type=True)"


def test_eager_grad_of_weak_leaves_in_containers_is_weak():
    """Eager grad gave strong gradient leaves for weakly typed leaves of a dict,
    list or tuple argument (jit(grad) gave weak). Oracle: JAX 0.10.2's reprs
    (jnp.array(0.0) is weak there too; a float32 scalar leaf stays strong)."""
    weak2 = "Array(2., dtype=float32, weak_type=True)"
    g = srcjax.grad(lambda d: d["a"] * 2.0)({"a": jnp.array(0.0)})
    assert repr(g["a"]) == weak2
    g = srcjax.grad(lambda d: d["a"] * 2.0)({"a": 0.0})
    assert repr(g["a"]) == weak2
    g = srcjax.grad(lambda d: d["a"] * 2.0 + jnp.sum(d["b"]))({"a": 0.0, "b": jnp.ones(2)})
    assert repr(g["a"]) == weak2
    assert repr(g["b"]) == "Array([1., 1.], dtype=float32)"
    g = srcjax.grad(lambda t: t[0] * 2.0 + t[1])((0.0, jnp.array(1.0)))
    assert repr(g) == f"({weak2}, Array(1., dtype=float32, weak_type=True))"
    g = srcjax.grad(lambda v: v[0] * v[1])([2.0, jnp.float32(3.0)])
    assert repr(g) == "[Array(3., dtype=float32, weak_type=True), Array(2., dtype=float32)]"
