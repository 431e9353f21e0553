"""srcjax/frontend/normalize/canonical.py: assignment expressions, loop `else`
and `match` rewritten to plain statements (fresh-user report F4-M4).

Two oracles: the rewritten function, compiled back to Python, returns what the
original returns for every input; and each form under grad (float64 central
differences of the plain function), jit and vmap (a Python loop of the plain
function) gives the plain function's values. What is still refused names the
syntax as a user writes it, with file:line:col."""

import ast
import dataclasses
import enum
import inspect
import textwrap
import typing

import gast
import numpy as np
import pytest
from helpers import assert_close, fd_grad

import srcjax
import srcjax.numpy as jnp
from srcjax import errors
from srcjax.frontend.normalize.canonical import canonicalize

pytestmark = pytest.mark.usefixtures("x64")


class Mode(enum.Enum):
    A = 1
    B = 2


class Cfg:
    def __init__(self, kind, scale):
        self.kind = kind
        self.scale = scale


# -- assignment expressions ------------------------------------------------------------


def walrus_if(x):
    if (y := x * 2.0) > 1.0:
        return y
    return x


def walrus_elif(x):
    if x > 3.0:
        return x
    elif (y := x * x) > 1.0:
        return y + x
    return -x


def walrus_value_and_args(x):
    z = jnp.sin(a := x * 3.0) + (b := a + 1.0)
    return jnp.maximum(z, c := b * 0.5) + c


def walrus_return(x):
    return (y := x * x) * y


def walrus_while(x):
    k = 0.0
    while (z := x * k) < 3.0:
        k = k + 1.0
        if k > 50.0:
            continue
    return z


def walrus_and(x):
    if x > 1.0 and (y := x * x) > 4.0:
        return y
    return x


def walrus_or(x):
    z = x < 0.5 or (w := x * 3.0) < 5.0
    if z:
        return x * 2.0
    return w


def walrus_conditional(x):
    return (y := x * 2.0) + y if x > 1.0 else (z := x - 1.0) * z


def walrus_while_and(x):
    k = 0.0
    while k < 100.0 and (z := x * k) < 3.0:
        k = k + 1.0
    return z


def walrus_reads_its_name(x):
    n = 4.0
    s = 0.0
    while (n := n - 1.0) > 0.0:
        s = s + x * n
    if (x := x * 2.0) > 1.0:
        return s + x
    return s


def walrus_rebinds_its_read(x):
    # `x` is read (x * 1.0) before `:=` rebinds it: hoisting would change the
    # value, so this one stays (and is refused)
    return x * 1.0 + (x := 2.0)


# -- else on loops ---------------------------------------------------------------------------


def for_else_no_break(x):
    for i in range(3):
        x = x * 2.0
    else:
        x = x + 1.0
    return x


def for_else_break(x):
    for i in range(4):
        if i == 2:
            break
        x = x * 2.0
    else:
        x = x + 100.0
    return x


def for_else_never_breaks(x):
    for i in range(4):
        if i == 7:
            break
        x = x * 2.0
    else:
        x = x + 100.0
    return x


def while_else_break(x):
    n = 0
    while n < 5:
        if x > 3.0:
            break
        x = x * 2.0
        n += 1
    else:
        x = x + 100.0
    return x


# -- match ---------------------------------------------------------------------------------------


def match_literal(x, mode):
    match mode:
        case "a":
            return x * 2.0
        case "b" | "c":
            return x * x
        case _:
            return x


def match_value_and_guard(x, mode):
    match mode:
        case Mode.A if x > 1.0:
            return x * 3.0
        case Mode.A:
            return x - 1.0
        case other:
            return x * other.value


def match_sequence(x, shape):
    match shape:
        case (n,):
            return x * n
        case [n, m]:
            return x * n + m
        case [n, *rest]:
            return x * (n + len(rest))
    return x


def match_mapping_and_class(x, cfg):
    match cfg:
        case {"scale": s}:
            return x * s
        case Cfg(kind="sq", scale=s):
            return x * x * s
        case Cfg(scale=s):
            return x + s
    return x


class Pair(typing.NamedTuple):
    w: float
    b: float


@dataclasses.dataclass
class Scale:
    s: float


def match_positional(x, p):
    match p:
        case Pair(w, b):
            return x * w + b
        case Scale(s):
            return x * s
        case str(name):
            return x * len(name)
    return x


def match_or_captures_and_rest(x, p):
    match p:
        case [s] | (s, _):
            return x * s
        case {"w": w, **others} if len(others) > 0:
            return x * w + others["b"]
        case {"w": w}:
            return x * w
    return x


def match_nested_or_capture(x, p):
    match p:
        case [(1 | 2) as n, m]:
            return x * n + m
        case [[a] | (a, _), m]:
            return x * a * m
    return x


def match_positional_class(x, cfg):
    match cfg:
        case Cfg(k, s):  # noqa: F841
            return x * s
    return x


def _rewritten(fn):
    node = gast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
    canonicalize(node)
    return node


def _compiled(fn):
    node = _rewritten(fn)
    mod = gast.gast_to_ast(gast.Module(body=[node], type_ignores=[]))
    ns = dict(fn.__globals__)
    exec(compile(ast.fix_missing_locations(mod), "<canonical>", "exec"), ns)
    return ns[fn.__name__]


SCALARS = [-2.0, -0.3, 0.2, 0.7, 1.3, 2.9, 4.5]

PLAIN = [
    (walrus_if, ()),
    (walrus_elif, ()),
    (walrus_value_and_args, ()),
    (walrus_return, ()),
    (walrus_while, ()),
    (walrus_and, ()),
    (walrus_or, ()),
    (walrus_conditional, ()),
    (walrus_while_and, ()),
    (walrus_reads_its_name, ()),
    (for_else_no_break, ()),
    (for_else_break, ()),
    (for_else_never_breaks, ()),
    (while_else_break, ()),
    (match_literal, ("a",)),
    (match_literal, ("c",)),
    (match_literal, ("z",)),
    (match_value_and_guard, (Mode.A,)),
    (match_value_and_guard, (Mode.B,)),
    (match_sequence, ((3,),)),
    (match_sequence, ([2, 5],)),
    (match_sequence, ((1, 2, 3, 4),)),
    (match_mapping_and_class, ({"scale": 3.0},)),
    (match_mapping_and_class, (Cfg("sq", 2.0),)),
    (match_mapping_and_class, (Cfg("lin", 2.0),)),
    (match_positional, (Pair(2.0, 1.0),)),
    (match_positional, (Scale(3.0),)),
    (match_positional, ("abc",)),
    (match_positional, (None,)),
    (match_or_captures_and_rest, ([3.0],)),
    (match_or_captures_and_rest, ((2.0, 9.0),)),
    (match_or_captures_and_rest, ({"w": 2.0, "b": 1.5},)),
    (match_or_captures_and_rest, ({"w": 2.0},)),
    (match_or_captures_and_rest, (7,)),
]


@pytest.mark.parametrize("fn,rest", PLAIN, ids=lambda v: getattr(v, "__name__", repr(v)))
def test_rewritten_function_returns_what_the_original_returns(fn, rest):
    new = _compiled(fn)
    kinds = (gast.NamedExpr, gast.Match)
    assert not any(isinstance(n, kinds) for n in gast.walk(_rewritten(fn)))
    for x in SCALARS:
        x = x + 10.0 if fn is walrus_while and x <= 0 else x  # (terminates)
        assert new(x, *rest) == fn(x, *rest)


def test_no_break_else_just_follows_the_loop():
    loop = _rewritten(for_else_no_break).body[0]
    assert isinstance(loop, gast.For) and loop.orelse == []
    assert "loop_broke" not in {
        n.id for n in gast.walk(_rewritten(for_else_no_break)) if isinstance(n, gast.Name)
    }


@pytest.mark.parametrize("fn,rest", PLAIN, ids=lambda v: getattr(v, "__name__", repr(v)))
def test_grad_and_jvp_match_finite_differences(fn, rest):
    for x in [0.2, 0.7, 1.3, 2.9, 4.5]:
        x = x + 10.0 if fn in (walrus_while, walrus_while_and) else x  # (smooth there)
        want = fd_grad(lambda v: fn(float(v), *rest), np.float64(x))
        assert_close(srcjax.grad(fn)(x, *rest), want, rtol=1e-5, atol=1e-6)
        primal, tangent = srcjax.jvp(lambda v: fn(v, *rest), (x,), (1.0,))
        assert_close(primal, fn(x, *rest))
        assert_close(tangent, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn,rest", PLAIN, ids=lambda v: getattr(v, "__name__", repr(v)))
def test_jit_matches_python(fn, rest):
    jitted = srcjax.jit(lambda v: fn(v, *rest))  # (a list or dict: not a static argument)
    for x in SCALARS:
        x = x + 10.0 if fn is walrus_while and x <= 0 else x
        assert_close(jitted(x), fn(x, *rest))


@pytest.mark.parametrize("fn,rest", PLAIN, ids=lambda v: getattr(v, "__name__", repr(v)))
def test_vmap_matches_a_python_loop(fn, rest):
    xs = np.array([x + 10.0 if fn is walrus_while and x <= 0 else x for x in SCALARS])
    want = [fn(float(x), *rest) for x in xs]
    got = srcjax.vmap(lambda v: fn(v, *rest))(xs)
    assert_close(got, want)


@pytest.mark.parametrize(
    "fn,rest,message",
    [
        (walrus_rebinds_its_read, (), r"assignment expressions \(`:=`\) after `x` is read"),
    ],
)
def test_still_refused_names_the_syntax_and_the_place(fn, rest, message):
    with pytest.raises(
        NotImplementedError, match=r"test_frontend_canonical.py:\d+:\d+: " + message
    ):
        srcjax.grad(fn)(1.0, *rest)


def _walrus_in_a_chained_comparison(x):
    return 0.0 < x < (y := x * 2.0) + 1.0  # noqa: F841


def _walrus_in_a_comprehension(x):
    return sum([(t := x * k) for k in range(3)]) + t


@pytest.mark.parametrize(
    "fn,message",
    [
        (_walrus_in_a_chained_comparison, "in a chained comparison"),
        (_walrus_in_a_comprehension, "in a comprehension"),
    ],
)
def test_walrus_evaluated_conditionally_or_elsewhere_is_refused_with_the_reason(fn, message):
    with pytest.raises(
        NotImplementedError, match=r":\d+:\d+: assignment expressions \(`:=`\) " + message
    ):
        srcjax.jit(fn)(1.0)


def match_on_a_value(x, k):
    match k:
        case 0:
            return x * 2.0
        case 1 | 2:
            return x * x
        case _:
            return -x


def test_match_on_a_traced_subject_under_jit_and_vmap():
    xs = np.array([0.5, 1.5, 2.5, 3.5])
    ks = np.array([0, 1, 2, 3])
    want = [match_on_a_value(float(x), int(k)) for x, k in zip(xs, ks)]
    assert_close(srcjax.vmap(match_on_a_value)(xs, ks), want)
    jitted = srcjax.jit(match_on_a_value)
    assert_close([jitted(x, k) for x, k in zip(xs, ks)], want)
    grads = [srcjax.grad(match_on_a_value)(x, k) for x, k in zip(xs, ks)]
    assert_close(grads, [2.0, 3.0, 5.0, -1.0])


def test_match_on_a_static_argument_under_jit():
    """The report's example: `mode` a static Python value."""
    jitted = srcjax.jit(match_literal, static_argnums=1)
    assert_close(jitted(3.0, "a"), 6.0)
    assert_close(jitted(3.0, "b"), 9.0)
    assert_close(jitted(3.0, "q"), 3.0)
    assert_close(srcjax.grad(match_literal)(3.0, "b"), 6.0)


def test_nested_capturing_or_pattern_is_refused_at_the_pattern():
    with pytest.raises(
        NotImplementedError,
        match=r"test_frontend_canonical.py:\d+:\d+: `match` statements with an or-pattern",
    ):
        srcjax.grad(match_nested_or_capture)(1.0, ([4.0], 2.0))


def test_positional_pattern_of_a_class_without_match_args_points_at_the_pattern():
    """Python raises TypeError ("Cfg() accepts 0 positional sub-patterns"); srcjax
    cannot read `Cfg.__match_args__` and says so at the pattern."""
    with pytest.raises(
        errors.ResolutionError,
        match=r"test_frontend_canonical.py:\d+:14: cannot resolve `Cfg.__match_args__`",
    ):
        srcjax.grad(match_positional_class)(1.0, Cfg("a", 1.0))


def test_a_builtin_class_pattern_matches_the_subject_itself():
    """`case float(v)`: v is the subject (the function closes over the float:
    srcjax.grad's non-differentiated float argument is not a Python float inside)."""

    def f(x):
        return match_float(x, 4.0)

    assert match_float(1.5, 4.0) == 6.0
    assert_close(srcjax.grad(f)(1.5), 4.0)
    assert_close(srcjax.jit(f)(1.5), 6.0)
    assert_close(srcjax.vmap(f)(np.array([1.0, 2.0])), [4.0, 8.0])


def match_float(x, p):
    match p:
        case float(v) if v > 0:
            return x * v
    return x
