"""The weak-type cases of tests/test_weak_transforms.py: small functions whose
results' dtype and weak type depend on JAX's weak Python scalars, run eagerly
(on Arrays), under ``jit``, ``grad``, ``value_and_grad``, ``jvp`` and ``vmap``.
tools/record_weak.py runs them under JAX 0.10.2 and records dtype, weak type,
shape and values in tests/data/weak_transforms.json.

Each case: (name, function source, arguments, grad argnums or None, vmap
in_axes or None). Arguments are written as expressions over ``np``; a Python
scalar argument is JAX's weakly typed value.
"""

import numpy as np

_H = "np.array([0.1, 0.25, 3.0], np.float16)"
_H2 = "np.array([[0.1, 0.25, 3.0], [1.5, -2.0, 0.3]], np.float16)"
_F = "np.array([0.5, -1.25, 2.0], np.float32)"
_F2 = "np.array([[0.5, -1.25, 2.0], [1.0, 3.0, -0.5]], np.float32)"
_I8 = "np.array([1, -2, 5], np.int8)"
_I32 = "np.array([1, -2, 5], np.int32)"

CASES = [
    ("scale", "x * 2.0", ["1.0"], 0, None),
    ("ident", "x", ["1.0"], 0, None),
    ("poly", "x * x * 3.0 + 1.0", ["1.5"], 0, None),
    ("const", "2.0 + 0.0 * x", ["1.0"], 0, None),
    ("sin", "jnp.sin(x)", ["1.0"], 0, None),
    ("logistic", "jnp.exp(x) / (jnp.exp(x) + 1.0)", ["1.0"], 0, None),
    ("sqrt_pow", "jnp.sqrt(x) + x ** 2", ["2.0"], 0, None),
    ("int_add", "x + 1", ["3"], None, None),
    ("int_times_float", "x * 2.5", ["3"], None, None),
    ("int_floordiv", "x // 2", ["7"], None, None),
    ("compare", "x > 0.5", ["1.0"], None, None),
    ("complex", "x * 1j", ["2.0"], None, None),
    ("f32_scalar", "x * 2.0", ["np.float32(1.0)"], 0, None),
    ("weak_times_f16", "(x * y).sum()", ["1.0", _H], 0, None),
    ("weak_times_f16_wrt_y", "(x * y).sum()", ["1.0", _H], 1, None),
    ("weak_times_f16_both", "(x * y).sum() + x", ["1.0", _H], (0, 1), None),
    ("weak_times_f16_elem", "x * y", ["1.0", _H2], None, (None, 0)),
    ("weak_plus_f32", "(x + y).sum()", ["1.0", _F], 0, None),
    ("weak_plus_f32_elem", "x + y", ["1.0", _F2], None, (None, 0)),
    ("int_times_i8", "x * y", ["3", _I8], None, (None, 0)),
    ("float_times_i32", "x * y", ["1.5", _I32], None, (None, 0)),
    ("i32_div_int", "y / x", ["2", _I32], None, (None, 0)),
    ("f16_scale_sum", "jnp.sum(y * x) * x", ["2.0", _H], 0, None),
    ("sum_of_weak", "jnp.sum(x)", ["1.0"], 0, None),
    ("weak_array_arg", "x * 3.0", ["WEAK(1.0)"], 0, None),
    ("strong_f16_scalar", "x * 2.0", ["np.float16(1.5)"], 0, None),
    # weak arrays (JAX's weak types beyond 0-d): a weak float32 array takes the
    # dtype of a float16 operand, a strong int array's does not
    ("i32_times_float", "x * 2.5", [_I32], None, 0),
    ("weak_arr_times_f16", "(x * y) * z", ["1.5", _I32, _H], None, (None, 0, 0)),
    ("weak_arr_plus_i32", "(y * 2.5) + y", ["1.0", _I32], None, (None, 0)),
    ("weak_arr_arg", "x * y", ["WEAK_TIMES(2.5, " + _I32 + ")", _H], None, (0, 0)),
    ("weak_arr_arg_plus", "x + 1.0", ["WEAK_TIMES(2.5, " + _I32 + ")"], None, 0),
    ("grad_through_weak_arr", "(x * y * z).sum()", ["1.5", _I32, _H], 0, None),
    # functions that move or copy a weak array's elements keep its weak type
    (
        "weak_arr_moved",
        "jnp.zeros_like(x * y) + (x * y)[::-1].reshape(3, 1)",
        ["1.5", _I32],
        None,
        None,
    ),
    ("weak_arr_bcast_f16", "jnp.broadcast_to(x * y, (2, 3)) * z", ["1.5", _I32, _H2], None, None),
    # weak complex and bool
    ("complex_times_i32", "x * y", ["1j", _I32], None, (None, 0)),
    ("complex_times_f16", "x * y", ["1j", _H], None, (None, 0)),
    ("bool_plus_int", "x + 1", ["True"], None, None),
    ("compare_weak_arr", "x * y > 1.0", ["1.5", _I32], None, (None, 0)),
    ("invert_weak_bool", "~(x > 0.5)", ["1.0"], None, None),
    # a Python float divided by zero: inf (NumPy's semantics, not ZeroDivisionError)
    ("div_by_zero", "1.0 / (x - 1.0)", ["1.0"], 0, None),
    ("div_by_zero_const", "x / 0.0", ["1.0"], 0, None),
]


def module_source(numpy_module: str) -> str:
    """A module defining ``f<n>(*args)`` for each case, with ``jnp`` the given
    module (``"jax.numpy"`` or ``"srcjax.numpy"``)."""
    lines = ["import numpy as np", f"import {numpy_module} as jnp", ""]
    for n, (_name, body, args, _argnums, _axes) in enumerate(CASES):
        params = ", ".join("xyz"[i] for i in range(len(args)))
        lines += [f"def f{n}({params}):", f"    return {body}", ""]
    return "\n".join(lines)


def arguments(args: list, jnp) -> list:
    """The case's arguments: ``WEAK(v)`` is ``jnp.asarray(v)`` (a weakly typed
    Array), ``WEAK_TIMES(s, a)`` is ``s * jnp.asarray(a)`` (a weakly typed array
    for a Python float ``s`` and an integer array ``a``), the rest as written."""
    out = []
    for a in args:
        if a.startswith("WEAK_TIMES("):
            s, arr = eval(a[len("WEAK_TIMES") :], {"np": np})  # noqa: S307
            out.append(s * jnp.asarray(arr))
        elif a.startswith("WEAK("):
            out.append(jnp.asarray(eval(a[5:-1])))  # noqa: S307 (the cases above)
        else:
            out.append(eval(a, {"np": np}))  # noqa: S307
    return out


def describe(x) -> dict:
    """dtype, weak type, shape and values of one result leaf."""
    t = type(x)
    if t in (bool, int, float, complex):
        kind = {bool: "bool", int: "int", float: "float", complex: "complex"}[t]
        return {"python": kind, "value": _values(np.asarray(x))}
    if isinstance(x, np.generic):  # (JAX returns some inputs unconverted: jvp of x -> x)
        return {"numpy": x.dtype.name, "value": _values(np.asarray(x))}
    if not hasattr(x, "weak_type"):  # (JAX returns some inputs unconverted)
        return {"foreign": type(x).__name__, "value": _values(np.asarray(x))}
    a = np.asarray(x)
    return {
        "dtype": a.dtype.name,
        "weak_type": bool(getattr(x, "weak_type", False)),
        "shape": list(a.shape),
        "value": _values(a),
    }


def _values(a):
    a = np.asarray(a)
    if a.dtype.kind == "c":
        return [
            np.real(a).astype(float).ravel().tolist(),
            np.imag(a).astype(float).ravel().tolist(),
        ]
    return a.astype(float).ravel().tolist()


# -- eager elementwise functions of weak arrays --------------------------------------
#: the elementwise functions whose weak type tests/test_weak_transforms.py checks
#: eagerly, for each operand pattern of PATTERNS that JAX accepts (recorded in
#: tests/data/weak_elementwise.json by tools/record_weak.py)
ELEMENTWISE = """
jnp.abs jnp.add jnp.arccos jnp.arccosh jnp.arcsin jnp.arcsinh jnp.arctan jnp.arctan2
jnp.arctanh jnp.bitwise_and jnp.bitwise_count jnp.bitwise_not jnp.bitwise_or
jnp.bitwise_xor jnp.cbrt jnp.ceil jnp.clip jnp.conj jnp.cos jnp.cosh jnp.deg2rad jnp.equal
jnp.exp jnp.exp2 jnp.expm1 jnp.fabs jnp.floor jnp.floor_divide jnp.fmax jnp.fmin jnp.fmod
jnp.greater jnp.greater_equal jnp.hypot jnp.i0 jnp.imag jnp.isclose jnp.isfinite jnp.isinf
jnp.isnan jnp.isneginf jnp.isposinf jnp.left_shift jnp.less jnp.less_equal jnp.log
jnp.log10 jnp.log1p jnp.log2 jnp.logaddexp jnp.logaddexp2 jnp.logical_and jnp.logical_not
jnp.logical_or jnp.logical_xor jnp.maximum jnp.minimum jnp.mod jnp.multiply jnp.nan_to_num
jnp.negative jnp.nextafter jnp.not_equal jnp.positive jnp.power jnp.rad2deg jnp.real
jnp.reciprocal jnp.right_shift jnp.rint jnp.round jnp.sign jnp.signbit jnp.sin jnp.sinc
jnp.sinh jnp.sqrt jnp.square jnp.subtract jnp.tan jnp.tanh jnp.true_divide jnp.trunc
jnp.where lax.bessel_i0e lax.bessel_i1e lax.clz lax.complex lax.div
lax.nextafter lax.population_count lax.rem lax.rsqrt lax.shift_left
lax.shift_right_arithmetic lax.shift_right_logical lax.stop_gradient nn.celu
nn.elu nn.gelu nn.hard_sigmoid nn.hard_silu nn.hard_tanh nn.leaky_relu nn.log1mexp
nn.log_sigmoid nn.relu nn.relu6 nn.selu nn.sigmoid nn.silu nn.soft_sign nn.softplus
special.betaln special.digamma special.erf special.erfc special.erfinv special.gamma
special.gammaln special.log_ndtr special.logit special.ndtr special.ndtri
special.xlog1py special.xlogy
""".split()

#: operand patterns: W a weak float32 array (0.5 * int32_array), WI a weak int32
#: array (bool_array + 1), I32/F16/B strong arrays, Python numbers as written
PATTERNS = {
    "W": ("W",),
    "WI": ("WI",),
    "B": ("B",),
    "W,W": ("W", "W"),
    "W,F16": ("W", "F16"),
    "F16,W": ("F16", "W"),
    "W,I32": ("W", "I32"),
    "WI,I32": ("WI", "I32"),
    "WI,W": ("WI", "W"),
    "I32,2.0": ("I32", 2.0),
    "WI,2.5": ("WI", 2.5),
    "W,1": ("W", 1),
    "B,1": ("B", 1),
    "W,1j": ("W", 1j),
}


def elementwise_operands(jnp, namespaces: dict) -> dict:
    """The named operands of PATTERNS, made with ``jnp`` (JAX's or srcjax's)."""
    i32 = jnp.asarray(np.array([1, -2, 5], np.int32))
    return {
        "W": 0.5 * i32,
        "WI": (i32 > 0) + 1,
        "B": i32 > 0,
        "I32": i32,
        "F16": jnp.asarray(np.array([0.5, 0.25, 0.75], np.float16)),
    }


def elementwise_result(namespaces: dict, name: str, pattern: str, operands: dict):
    """``{"dtype", "weak_type"}`` of ``name`` on the pattern's operands, or
    ``{"error": type name}`` when the call raises."""
    ns, fn = name.split(".")
    args = [operands[a] if isinstance(a, str) else a for a in PATTERNS[pattern]]
    try:
        r = getattr(namespaces[ns], fn)(*args)
    except Exception as e:  # noqa: BLE001 - recorded as refused
        return {"error": type(e).__name__}
    return {"dtype": np.asarray(r).dtype.name, "weak_type": bool(getattr(r, "weak_type", False))}


# -- eager structural functions of weak arrays ---------------------------------------
#: expressions over the operands of :func:`elementwise_operands` (``W`` weak
#: float32, ``WI`` weak int32, ``B``/``I32``/``F16`` strong), evaluated with
#: ``jnp``: JAX keeps a weak array's type through functions that move or copy
#: its elements (recorded in tests/data/weak_elementwise.json, "structural")
STRUCTURAL = [
    "jnp.reshape(W, (3, 1))",
    "W.reshape(1, 3)",
    "WI.reshape(3, 1)",
    "W.T",
    "W.ravel()",
    "jnp.ravel(WI)",
    "jnp.transpose(W)",
    "jnp.broadcast_to(W, (2, 3))",
    "jnp.expand_dims(W, 0)",
    "jnp.squeeze(jnp.expand_dims(W, 0))",
    "jnp.flip(W)",
    "jnp.roll(W, 1)",
    "jnp.tile(W, 2)",
    "jnp.repeat(W, 2)",
    "jnp.zeros_like(W)",
    "jnp.ones_like(WI)",
    "jnp.full_like(W, 2)",
    "jnp.zeros_like(W, dtype=jnp.float32)",
    "W[0]",
    "W[1:]",
    "WI[::2]",
    "W[I32 > 0]",
    "jnp.asarray(W)",
    "jnp.array(WI)",
    "W.copy()",
    "W.astype(jnp.float32)",
    "W.sum()",
    "jnp.sort(W)",
    "jnp.concatenate([W, W])",
    "jnp.stack([W, WI])",
    "jnp.concatenate([W, F16])",
    "jnp.where(B, W, 1.0)",
    "jnp.where(B, W, F16)",
    "W @ W",
    "W.at[0].set(1.0)",
]


def structural_result(expr: str, jnp, operands: dict):
    """``{"dtype", "weak_type"}`` of the expression, or ``{"error": type name}``."""
    try:
        r = eval(expr, {"jnp": jnp, **operands})  # noqa: S307 (the expressions above)
    except Exception as e:  # noqa: BLE001 - recorded as refused
        return {"error": type(e).__name__}
    return {"dtype": np.asarray(r).dtype.name, "weak_type": bool(getattr(r, "weak_type", False))}
