"""The out-of-bounds cases of tests/test_oob_transforms.py: index forms written
in a function's source and expressions (gathers, ``.at`` updates in each mode),
built into a module of functions (:func:`module_source`). tools/record_oob.py
runs them under JAX and records the results in tests/data/oob_transforms.json."""

import numpy as np

#: index forms: (source, can be an argument, a second index of the same shape)
FORMS = [
    ("5", True, "-7"),
    ("-7", True, "2"),
    ("np.array([3, -1, 9, -9])", True, "np.array([-9, 2, 0, 4])"),
    ("np.array([[0, 7], [-4, 2]])", True, "np.array([[2, -1], [5, 0]])"),
    ("(1, 6)", False, None),
    ("(np.array([0, 3]), np.array([4, 1]))", False, None),
    ("(slice(None), np.array([-1, 4, 1]))", False, None),
    ("(np.array([2, 5]), slice(None))", False, None),
    ("(None, np.array([2, -8]))", False, None),
    ("(Ellipsis, np.array([5, 0]))", False, None),
    ("(-4, slice(1, 3))", False, None),
    ("(1, np.array([6, 0]))", False, None),
    ("np.array([True, False, True])", False, None),
]
GATHERS = ["x[{i}]", "x.at[{i}].get()"] + [
    f"x.at[{{i}}].get(mode='{m}')" for m in ("clip", "fill", "drop", "promise_in_bounds")
]
GATHERS.append("x.at[{i}].get(mode='fill', fill_value=-1.0)")
UPDATES = [
    f"x.at[{{i}}].{op}(v{kw})"
    for op, kws in [
        ("set", ("", "clip", "drop", "fill", "promise_in_bounds")),
        ("add", ("", "clip", "drop", "promise_in_bounds")),
        ("multiply", ("", "clip")),
        ("min", ("", "clip")),
        ("max", ("", "clip")),
    ]
    for kw in [f", mode='{k}'" if k else "" for k in kws]
]


def cases():
    """[(key, form index, expression template)] in a fixed order."""
    out = []
    for k, (form, _, _) in enumerate(FORMS):
        exprs = GATHERS + UPDATES
        if form.startswith("np.array([True"):
            exprs = ["x[{i}]", "x.at[{i}].set(v)", "x.at[{i}].add(v)"]
        for e in exprs:
            out.append((f"{form} | {e}", k, e))
    return out


def module_source(jnp_module: str) -> str:
    """The functions of every case, as a module importing ``jnp_module``."""
    lines = ["import numpy as np", f"import {jnp_module} as jnp", ""]
    for n, (_, k, e) in enumerate(cases()):
        form, as_arg, _ = FORMS[k]
        lines += [f"def f{n}(x, v):", f"    return {e.format(i=form)}", ""]
        lines += [f"def loss{n}(x, v, w):", f"    return jnp.sum(w * f{n}(x, v))", ""]
        if as_arg:
            lines += [f"def fi{n}(x, v, i):", f"    return {e.format(i='i')}", ""]
            lines += [f"def lossi{n}(x, v, i, w):", f"    return jnp.sum(w * fi{n}(x, v, i))", ""]
    return "\n".join(lines)


def weights(shape):
    return np.cos(np.arange(int(np.prod(shape)))).reshape(shape).astype(np.float32) + 2


def tolist(a):
    a = np.asarray(a)
    return a.tolist()
