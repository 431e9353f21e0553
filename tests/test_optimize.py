"""Each optimization pass of srcjax.transforms.optimize, applied alone."""

from __future__ import annotations

import numpy as np

import srcjax.numpy as jnp
from srcjax.codegen import emit
from srcjax.frontend.normalize import normalize
from srcjax.frontend.source import get_source
from srcjax.transforms import optimize as opt

F32 = np.dtype(np.float32)


def norm(f):
    n = normalize(get_source(f))
    return n.node, n


def text(fdef):
    return emit.render(fdef, "t", "t.py")


def run(fdef, n, f, *args):
    src = get_source(f)
    g = emit.load(text(fdef), fdef.name, src.globals, src.closure, n.bindings, "opt_test")
    return g(*args)


def test_propagate_copies_and_constants():
    def f(x):
        y = x
        c = 2.0
        z = y * c
        return z

    fdef, n = norm(f)
    opt.propagate(fdef)
    opt.dce(fdef)
    t = text(fdef)
    assert "x * 2.0" in t and "y = x" not in t and "c = 2.0" not in t
    assert run(fdef, n, f, 3.0) == 6.0


def test_propagate_respects_reassignment_and_loops():
    def f(x):
        y = x
        x = x + 1.0
        s = 0.0
        for i in range(3):
            s = s + y
        return s + x

    fdef, n = norm(f)
    opt.propagate(fdef)
    assert run(fdef, n, f, 1.0) == f(1.0)


def test_fold_constants():
    def f(x):
        a = 2.0 * 0.5
        b = a + 3
        return x * b

    fdef, n = norm(f)
    opt.fold_constants(fdef)
    opt.dce(fdef)
    t = text(fdef)
    assert "x * 4.0" in t
    assert run(fdef, n, f, 2.0) == 8.0


def test_fold_keeps_division_by_zero_and_calls():
    def f(x):
        a = 1.0 / 0.0 if False else 1.0
        return jnp.sin(1.0) * x * a

    fdef, n = norm(f)
    opt.fold_constants(fdef)
    assert "jnp.sin(1.0)" in text(fdef)  # a strongly typed float32: not folded


def test_fold_is_none_of_constants():
    """`n is None` with a constant n (a default bound by jit): folded, so the
    generated code has no `4 is None` (a SyntaxWarning at load time)."""

    def f(x):
        n = 4
        m = None
        a = n is None
        b = m is None
        c = n is not None
        return x * (1.0 if a else 2.0) + (3.0 if b and c else 0.0)

    fdef, n = norm(f)
    opt.propagate(fdef)  # as the jit pipeline does first
    opt.fold_constants(fdef)
    t = text(fdef)
    assert " is None" not in t and " is not None" not in t, t
    assert run(fdef, n, f, 1.0) == f(1.0) == 5.0


def test_cse():
    def f(x):
        a = jnp.sin(x) * 2.0
        b = jnp.sin(x) * 2.0
        return a + b

    fdef, n = norm(f)
    opt.cse(fdef)
    opt.propagate(fdef)
    opt.dce(fdef)
    t = text(fdef)
    assert t.count("jnp.sin") == 1
    np.testing.assert_allclose(run(fdef, n, f, np.float32(0.3)), f(np.float32(0.3)))


def test_cse_not_across_reassignment():
    def f(x):
        a = x * 2.0
        x = x + 1.0
        b = x * 2.0
        return a + b

    fdef, n = norm(f)
    opt.cse(fdef)
    assert run(fdef, n, f, 1.0) == f(1.0)


def test_dce_keeps_side_effects():
    def f(x):
        unused = jnp.exp(x)  # noqa: F841 - removed by DCE
        print("side effect")
        lst = []
        lst.append(x)
        return x

    fdef, n = norm(f)
    opt.dce(fdef)
    t = text(fdef)
    assert "jnp.exp" not in t and "print" in t and "append" in t


def test_infer_avals():
    def f(x, b):
        y = x + b
        s = jnp.sum(y, axis=0)
        z = y * 2.0
        if s[0] > 0:
            w = z
        else:
            w = jnp.ones((3,))
        return z, s, w

    fdef, n = norm(f)
    env = opt.infer_avals(fdef, {"x": opt.Aval((4, 3), F32), "b": opt.Aval((3,), F32)})
    assert env["y"] == opt.Aval((4, 3), F32)
    assert env["s"] == opt.Aval((3,), F32)
    assert env["z"] == opt.Aval((4, 3), F32)
    assert env["w"] is None  # differs between branches


def test_infer_avals_loops_and_weak_scalars():
    def f(x, n):
        acc = x * 0.0
        for i in range(n):
            acc = acc + x
        grow = x
        while jnp.sum(grow) < 100.0:
            grow = jnp.concatenate([grow, grow])
        return acc, grow

    fdef, _ = norm(f)
    env = opt.infer_avals(fdef, {"x": opt.Aval((2,), F32), "n": opt.Aval.of(3)})
    assert env["acc"] == opt.Aval((2,), F32)
    assert env["grow"] is None


def _simplified(f, *avals):
    fdef, n = norm(f)
    params = [a.id for a in fdef.args.args]
    opt.infer_avals(fdef, dict(zip(params, avals)))
    opt.simplify(fdef, n.namer)
    opt.dce(fdef)
    return fdef, n, text(fdef)


def test_simplify_powers():
    def f(x):
        return x**2 + x**3 + x**4 + x**0.5 + x**1 + x**-1

    fdef, n, t = _simplified(f, opt.Aval((5,), F32))
    code = "\n".join(line.split("#")[0] for line in t.splitlines())
    assert "**" not in code and "ad.pow_half(x)" in code and "1.0 / x" in code
    x = np.linspace(0.5, 2, 5, dtype=np.float32)
    out = run(fdef, n, f, x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, f(x), rtol=1e-6)


def test_simplify_identities():
    def f(x):
        return (x * 1.0 + 0.0) - 0.0

    fdef, n, t = _simplified(f, opt.Aval((5,), F32))
    assert "1.0" not in t and "0.0" not in t
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(run(fdef, n, f, x), x)


def test_simplify_keeps_dtype_changing_forms():
    def f(x):
        return x * 1.0 + x**2  # int input: x * 1.0 is a float array

    _, _, t = _simplified(f, opt.Aval((5,), np.int32))
    assert "x * 1.0" in t and "x ** 2" in t


def test_bind_static():
    def f(x, n):
        for _ in range(n):
            x = x * 2.0
        return x

    fdef, n = norm(f)
    opt.bind_static(fdef, {"n": 3})
    opt.propagate(fdef)
    assert "range(3)" in text(fdef)


def test_cse_not_across_in_place_list_changes():
    """User E F23: jit's CSE reused `l[-1]` read before `l.append(v)` for the
    `l[-1]` after it (jit gave 0.7 where Python gives 1.4)."""
    import srcjax

    def f(x):
        lst = [x]
        v = lst[-1] * 2.0
        lst.append(v)
        return lst[-1]

    def g(x):
        lst = [x, x * 3.0]
        a = lst[-1]
        lst.pop()
        return a + lst[-1]

    assert srcjax.jit(f)(0.7) == np.float32(1.4)
    assert srcjax.jit(g)(1.0) == np.float32(4.0)
