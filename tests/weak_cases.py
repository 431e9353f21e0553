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
]


def module_source(numpy_module: str) -> str:
    """A module defining ``f<n>(*args)`` for each case, with ``jnp`` the given
    module (``"jax.numpy"`` or ``"srcjax.numpy"``)."""
    lines = ["import numpy as np", f"import {numpy_module} as jnp", ""]
    for n, (_name, body, args, _argnums, _axes) in enumerate(CASES):
        params = ", ".join("xy"[i] for i in range(len(args)))
        lines += [f"def f{n}({params}):", f"    return {body}", ""]
    return "\n".join(lines)


def arguments(args: list, jnp) -> list:
    """The case's arguments: ``WEAK(v)`` is ``jnp.asarray(v)`` (a weakly typed
    Array), the rest as written."""
    out = []
    for a in args:
        if a.startswith("WEAK("):
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
