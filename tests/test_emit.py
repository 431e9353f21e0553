"""Rendering generated code (srcjax.codegen.emit, srcjax.frontend.nodes.to_source):
the text must read back as the tree it was rendered from (issue 21)."""

import ast
import itertools
import math

import gast
import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax.codegen import emit
from srcjax.frontend import nodes as N

pytestmark = pytest.mark.usefixtures("x64")


# ---------------------------------------------------------------- negative constants
# Programs whose constant folding leaves a negative number as the base of `**`,
# of an attribute or of a method call (issue 21: `(-0.1) ** 2` was emitted as
# `-0.1 ** 2`, which Python reads as `-(0.1 ** 2)`).
def f_sub(x):
    return x - (-0.1) ** 2


def f_pow(x):
    return x * (-2.0) ** 2 + (-x) ** 2


def f_attr(x):
    return x * (-2) ** 3 + (-1.5).real * x + (-1.5).imag + (-2.5).conjugate() * x


def f_neg(x):
    return -(x**2) + (-x) ** 3 - (-x) ** 2


def f_complex(x):
    return x * ((-1 - 2j) ** 2).real + x * ((-1j) ** 2).imag + x * (-2j).real


def f_renamed(x):
    y = -x
    z = y**2
    return z + (-(x)) ** 2 - -(x**2)


# Recorded from JAX 0.10.2 (jax_enable_x64) with jax.vmap(f)([1., 2.]),
# jax.grad(f)(1.5), jax.jit(f)(1.5), jax.jvp(f, (1.5,), (1.,)),
# jax.hessian(f)(1.5), jax.vmap(jax.grad(f))([1., 2.]).
JAX = {
    f_sub: ([0.99, 1.99], 1.0, 1.49, (1.49, 1.0), 0.0, [1.0, 1.0]),
    f_pow: ([5.0, 12.0], 7.0, 8.25, (8.25, 7.0), 2.0, [6.0, 8.0]),
    f_attr: ([-12.0, -24.0], -12.0, -18.0, (-18.0, -12.0), 0.0, [-12.0, -12.0]),
    f_neg: ([-3.0, -16.0], -12.75, -7.875, (-7.875, -12.75), -13.0, [-7.0, -20.0]),
    f_complex: ([-3.0, -6.0], -3.0, -4.5, (-4.5, -3.0), 0.0, [-3.0, -3.0]),
    f_renamed: ([3.0, 12.0], 9.0, 6.75, (6.75, 9.0), 6.0, [6.0, 12.0]),
}


@pytest.mark.parametrize("f", list(JAX), ids=lambda f: f.__name__)
def test_negative_constant_base_under_every_transform(f):
    vmapped, grad, jitted, jvp, hess, vmap_grad = JAX[f]
    xs = np.array([1.0, 2.0])
    np.testing.assert_allclose(srcjax.vmap(f)(xs), vmapped, rtol=1e-12)
    np.testing.assert_allclose(srcjax.grad(f)(1.5), grad, rtol=1e-12)
    np.testing.assert_allclose(srcjax.jit(f)(1.5), jitted, rtol=1e-12)
    np.testing.assert_allclose(srcjax.jvp(f, (1.5,), (1.0,)), jvp, rtol=1e-12)
    np.testing.assert_allclose(srcjax.hessian(f)(1.5), hess, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(srcjax.vmap(srcjax.grad(f))(xs), vmap_grad, rtol=1e-12)
    np.testing.assert_allclose(srcjax.jit(srcjax.grad(f))(1.5), grad, rtol=1e-12)


def test_issue_21_reported_values():
    # the issue's own inputs; JAX 0.10.2 (x64) gives these
    np.testing.assert_allclose(srcjax.vmap(f_sub)(jnp.ones(2)), [0.99, 0.99])
    np.testing.assert_allclose(srcjax.grad(f_pow)(1.0), 6.0)
    np.testing.assert_allclose(srcjax.vmap(f_pow)(jnp.ones(2)), [5.0, 5.0])
    assert "(-0.1) ** 2" in srcjax.source(srcjax.vmap(f_sub))


def test_negative_constant_base_with_an_array_exponent():
    # (-2.0) ** x: JAX 0.10.2 gives [-2, 4, -8] for x = [1, 2, 3] (vmap and jit)
    def f(x):
        return (-2.0) ** x

    np.testing.assert_allclose(srcjax.vmap(f)(np.array([1.0, 2.0, 3.0])), [-2.0, 4.0, -8.0])
    np.testing.assert_allclose(srcjax.jit(f)(3.0), -8.0)
    np.testing.assert_allclose(srcjax.jit(srcjax.vmap(f))(np.array([2.0, 4.0])), [4.0, 16.0])


# ---------------------------------------------------------------- to_source
def _const(v):
    return gast.Constant(value=v, kind=None)


NUMBERS = [-0.1, -2, 0.1, 3, -0.0, -math.inf, math.inf, math.nan, True, -(2**70)] + [
    complex(a, b)
    for a, b in itertools.product([0.0, -0.0, 1.5, -1.5, math.inf, math.nan], repeat=2)
]


def _same(a, b):
    return type(a) is type(b) and repr(a) == repr(b)


@pytest.mark.parametrize("v", NUMBERS, ids=repr)
def test_a_constant_reads_back_as_itself_in_every_context(v):
    # Python's own semantics as the oracle: the rendered text, evaluated,
    # gives what the operation on the constant gives
    contexts = [
        (lambda c: c, lambda v: v),
        (lambda c: gast.BinOp(left=c, op=gast.Pow(), right=_const(2)), lambda v: v**2),
        (lambda c: gast.BinOp(left=_const(2), op=gast.Pow(), right=c), lambda v: 2**v),
        (lambda c: gast.UnaryOp(op=gast.USub(), operand=c), lambda v: -v),
        (lambda c: gast.Attribute(value=c, attr="real", ctx=gast.Load()), lambda v: v.real),
        (
            lambda c: gast.Call(
                func=gast.Attribute(value=c, attr="conjugate", ctx=gast.Load()),
                args=[],
                keywords=[],
            ),
            lambda v: v.conjugate(),
        ),
    ]
    for build, expect in contexts:
        text = N.to_source(build(_const(v)))
        try:
            want = expect(v)
        except (OverflowError, ZeroDivisionError):
            continue
        got = eval(text, {"complex": complex})
        assert _same(got, want) or (got != got and want != want), (text, got, want)


def test_negative_constant_as_a_subscript_base_is_parenthesized():
    node = gast.Subscript(value=_const(-1.5), slice=_const(0), ctx=gast.Load())
    assert N.to_source(node) == "(-1.5)[0]"
    tup = gast.Subscript(value=_const((-1, 2)), slice=_const(0), ctx=gast.Load())
    assert eval(N.to_source(tup)) == -1


def test_to_source_leaves_the_tree_alone():
    node = gast.BinOp(left=_const(-0.1), op=gast.Pow(), right=_const(2))
    assert N.to_source(node) == "(-0.1) ** 2"
    assert isinstance(node.left, gast.Constant) and node.left.value == -0.1


# ---------------------------------------------------------------- the re-parse guard
def _fdef(body_src):
    return gast.parse("def f(x):\n" + body_src).body[0]


def test_checks_are_on_in_the_test_suite_and_off_by_default():
    assert srcjax.config.jax_enable_checks  # tests/conftest.py turns them on
    from srcjax.config import _DEFAULTS  # what a user's run starts with

    assert srcjax.config.jax_enable_checks == _DEFAULTS["jax_enable_checks"]


def test_guard_accepts_what_render_prints():
    fdef = _fdef("    y = x\n    return y\n")
    fdef.body[0].value = gast.BinOp(left=_const(-0.1), op=gast.Pow(), right=_const(2))
    text = emit.render(fdef, "header", "user.py")
    emit.check_reparse(fdef, text)
    assert "(-0.1) ** 2" in text


def test_guard_catches_text_that_reads_back_as_another_tree():
    # what gast's unparser prints for a negative constant base (the issue's bug)
    fdef = _fdef("    y = x\n    return y\n")
    fdef.body[0].value = gast.BinOp(left=_const(-0.1), op=gast.Pow(), right=_const(2))
    bad = "def f(x):\n    y = " + gast.unparse(fdef.body[0].value) + "\n    return y\n"
    assert "-0.1 ** 2" in bad
    with pytest.raises(AssertionError, match="does not read back"):
        emit.check_reparse(fdef, bad)
    # a dropped parenthesis of any kind
    fdef = _fdef("    return (x + 1) * 2\n")
    with pytest.raises(AssertionError, match="does not read back"):
        emit.check_reparse(fdef, "def f(x):\n    return x + 1 * 2\n")
    # a statement lost or added
    with pytest.raises(AssertionError, match="does not read back"):
        emit.check_reparse(fdef, "def f(x):\n    x = 1\n    return (x + 1) * 2\n")


def test_guard_ignores_comments_positions_and_ctx():
    fdef = _fdef("    if x:\n        y = 1\n    else:\n        y = 2\n    return y\n")
    comment = gast.Pass()
    comment.sj_comment = "forward"
    fdef.body.insert(0, comment)
    fdef.body[1].orelse = []  # an empty else is not printed
    text = emit.render(fdef, "h", "user.py")
    emit.check_reparse(fdef, text)
    ast.parse(text)


def test_namespaces_come_from_the_registry_public_modules_fill():
    """codegen imports no public module: srcjax.numpy, nn, scipy.special, random
    and lax register themselves (emit.register_namespace), in a fixed order, and
    the fast namespaces hold the public functions with primitives as their
    implementations; the CPU backend registers its runtime as `_rt`."""
    import srcjax.lax as lax
    import srcjax.numpy as jnp
    from srcjax.backends import get, runtime
    from srcjax.codegen import emit as E

    ns = E.namespaces()
    assert list(ns) == ["jnp", "np", "ad", "custom", "nn", "special", "random", "lax"]
    assert ns["jnp"].sin is jnp.sin.impl and ns["jnp"].nanquantile is jnp.nanquantile
    assert ns["lax"].fori_loop is lax.fori_loop
    get("cpu")
    assert E.means_the_same("_rt", runtime) and not E.means_the_same("_rt", jnp)
    assert E.means_the_same("jnp", jnp) and not E.means_the_same("jnp", lax)
    with pytest.raises(ValueError, match="no namespace 'torch'"):
        E.register_namespace("torch", jnp)


def test_lazy_namespaces_resolve_every_primitive_as_the_whole_namespace_did():
    """The namespaces are filled on first use (a disk-cache hit's first call does
    not build ~800 entries). Oracle: the registry and the public modules, as the
    namespaces were built whole before: every registered public name reached
    through its namespace is the primitive's implementation (nested ones too:
    jnp.linalg.norm), other names are the public module's attribute, unknown
    and dunder names raise AttributeError."""
    from srcjax.codegen import emit as E
    from srcjax.primitives import registry

    E.refresh_namespaces()
    ns = E.namespaces()
    checked = 0
    for public, prim in list(registry.REGISTRY.items()):
        parts = public.split(".")
        if parts[0] not in ns or parts[0] == "np" or len(parts) < 2:
            continue
        obj = ns[parts[0]]
        for p in parts[1:]:
            obj = getattr(obj, p)
        assert obj is prim.impl, public
        checked += 1
    assert checked > 500
    assert ns["jnp"].float32 is jnp.float32 and ns["jnp"].pi == math.pi
    assert ns["jnp"].linalg.__name__ == "srcjax.generated.jnp.linalg"
    assert ns["jnp"].linalg.inv is registry.REGISTRY["jnp.linalg.inv"].impl
    assert not hasattr(ns["jnp"], "no_such_function_here")
    assert not hasattr(ns["ad"], "__path__")


def test_nodes_walk_is_ast_walk():
    """frontend/nodes.walk (a faster walk for the name queries) yields the nodes
    ast.walk yields, in the same order (generated code's statement order follows
    names_in/assigned_names); oracle: ast.walk on srcjax's own sources."""
    import inspect

    from srcjax.codegen import diskcache
    from srcjax.transforms.optimize import algebra

    for mod in (N, algebra, diskcache):
        tree = gast.parse(inspect.getsource(mod))
        want = list(ast.walk(tree))
        got = list(N.walk(tree))
        assert len(got) == len(want) > 500
        assert all(a is b for a, b in zip(got, want))
    lam = gast.parse("f = lambda x, *a, k=[y for y in z if y], **kw: (x := k)").body[0]
    assert [type(n) for n in N.walk(lam)] == [type(n) for n in ast.walk(lam)]


# ------------------------------------------------- identity against literals (user9)
def _hist_of(a):
    return jnp.histogram(a, bins=4, range=(0, 1), weights=a)[0]


def test_generated_code_never_compares_a_literal_by_identity():
    import warnings

    f = srcjax.jit(_hist_of)
    # JAX 0.10.2's values
    np.testing.assert_allclose(
        f(jnp.linspace(0, 1, 10)), [0.33333334, 0.7777778, 1.2222223, 2.6666667], rtol=1e-6
    )
    text = srcjax.source(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a SyntaxWarning would raise here
        compile(text, "<generated>", "exec")
    assert "(0, 1) is" not in text


def test_literal_identity_rewrite():
    import warnings

    src = (
        "def f(x):\n    return ((0, 1) is None, None is not (1,), 2 is 2, (0, 1) is 'a', x is None)"
    )
    tree = gast.parse(src)
    emit._NoLiteralIdentity().visit(tree)
    text = N.to_source(tree)
    assert "(False, True, True, False, x is None)" in text
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compile(text, "<t>", "exec")
