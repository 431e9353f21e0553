"""Registry-driven tests of every primitive's derivative rules.

For each differentiable :class:`~srcjax.primitives.registry.Primitive` in the
registry, on float64 inputs (``jax_enable_x64`` on for the duration):

- every VJP rule ``rule(g, ans, *args, **kwargs)``, summed back to the operand's
  shape for broadcasting primitives, must match central differences of
  ``sum(g * impl(*args, **kwargs))``;
- every JVP rule ``rule(t, ans, *args, **kwargs)`` must match the directional
  derivative ``(impl(x + eps t) - impl(x - eps t)) / (2 eps)``;
- every operand generated as a float array must have both rules, and rules
  must be ``def`` functions with the signature ``(g, ans, <the impl parameters
  they read>)`` (the impl's names, kinds and defaults, in its order), so the
  transforms can inline them; rules are run here as the transforms bind them,
  by name (``transforms.rules.call_rule``).

Inputs come from ``p.samples(rng)`` when the primitive sets it (``[(args,
kwargs), ...]``), otherwise random arrays in ``p.test_domain`` for the impl's
required parameters and for every parameter with a rule, on scalar, vector and
matrix shapes (plus broadcasting pairs for ``broadcasting=True`` primitives).
Adding a primitive adds its tests; test ids are the public names.
"""

from __future__ import annotations

import inspect
import math

import gast
import numpy as np
import pytest

import srcjax.nn  # noqa: F401  (registers the nn primitives)
import srcjax.numpy  # noqa: F401  (registers every jnp primitive)
import srcjax.scipy.special  # noqa: F401
from srcjax.config import config
from srcjax.frontend.source import get_source
from srcjax.primitives import batch_rules  # noqa: F401  (vmap helpers carry rules too)
from srcjax.primitives.registry import REGISTRY
from srcjax.transforms.rules import call_rule, takes_operands

EPS = 1e-6
RTOL = 1e-5
ATOL = 1e-6

ALL = [p for p in REGISTRY.values() if p.kind != "custom"]  # user rules: test_custom.py
# user rules are tested in test_custom.py; primitives with a missing_rule_hint are
# deliberately rule-less (differentiating through them raises that hint)
DIFF = [p for p in ALL if p.differentiable and p.kind != "custom" and not p.missing_rule_hint]


@pytest.fixture(autouse=True, scope="module")
def _x64():
    """The checks run in float64: turn x64 on for this module, then restore it."""
    old = config.jax_enable_x64
    config.update("jax_enable_x64", True)
    yield
    config.update("jax_enable_x64", old)


# -- inputs -----------------------------------------------------------------------
def _positional_names(p):
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [q.name for q in p.signature.parameters.values() if q.kind in kinds]


def _varargs_name(p):
    for q in p.signature.parameters.values():
        if q.kind == inspect.Parameter.VAR_POSITIONAL:
            return q.name
    return None


def _auto_array_params(p):
    """Parameters that get random arrays: required ones and those with rules."""
    names = []
    for q in p.signature.parameters.values():
        if q.kind in (q.VAR_POSITIONAL, q.VAR_KEYWORD):
            continue
        if q.default is q.empty or q.name in p.vjps or q.name in p.jvps:
            names.append(q.name)
    return names


def _shape_sets(p, n):
    same = [[s] * n for s in [(), (3,), (2, 3)]]
    if not p.broadcasting or n < 2:
        return same
    mixed = [
        [(2, 3)] + [(3,)] * (n - 1),
        [(3,)] + [(2, 3)] * (n - 1),
        [(2, 1) if i % 2 == 0 else (1, 3) for i in range(n)],
        [()] + [(2, 3)] * (n - 1),
    ]
    return same + mixed


def _auto_samples(p, rng):
    names = _auto_array_params(p)
    lo, hi = p.test_domain
    out = []
    pos = _positional_names(p)
    for shapes in _shape_sets(p, len(names)):
        vals = {n: rng.uniform(lo, hi, s) for n, s in zip(names, shapes)}
        args = []
        for n in pos:
            if n not in vals:
                break
            args.append(vals.pop(n))
        out.append((tuple(args), vals))
    return out


def _samples(p):
    rng = np.random.default_rng(sum(map(ord, p.public)))
    out = p.samples(rng) if p.samples is not None else _auto_samples(p, rng)
    if not out:
        # container-only primitives (ad.setitem) are checked through grad in
        # tests/test_reverse.py, not on arrays here
        pytest.skip(f"{p.public}: no array samples")
    return out


# -- slots: where each operand lives in (args, kwargs) ----------------------------
def _slots(p, args, kwargs):
    """``(param_name, location, argnum)`` for every operand: ``location`` is an
    int index into ``args`` or a str key of ``kwargs``; ``argnum`` is the index
    among varargs (or ``None``)."""
    pos = _positional_names(p)
    var = _varargs_name(p)
    out = []
    for i in range(len(args)):
        if i < len(pos):
            out.append((pos[i], i, None))
        elif var is not None:
            out.append((var, i, i - len(pos)))
    for k in kwargs:
        out.append((k, k, None))
    return out


def _flatten(v):
    """Leaves of an operand: itself, or the items of a (nested) list / tuple."""
    if isinstance(v, (list, tuple)):
        return [leaf for item in v for leaf in _flatten(item)]
    return [v]


def _unflatten(like, leaves):
    it = iter(leaves)

    def build(v):
        if isinstance(v, (list, tuple)):
            return type(v)(build(item) for item in v)
        return next(it)

    return build(like)


def _is_float_leaf(v):
    if isinstance(v, bool) or isinstance(v, type):
        return False
    if isinstance(v, float):
        return True
    d = getattr(v, "dtype", None)
    return isinstance(d, np.dtype) and d.kind == "f"


def _is_float(v):
    """A float array or scalar, or a list / tuple of them (pytree operands)."""
    leaves = _flatten(v)
    return bool(leaves) and all(_is_float_leaf(leaf) for leaf in leaves)


def _replace(args, kwargs, loc, value):
    args = list(args)
    kwargs = dict(kwargs)
    if isinstance(loc, int):
        args[loc] = value
    else:
        kwargs[loc] = value
    return args, kwargs


def _get(args, kwargs, loc):
    return args[loc] if isinstance(loc, int) else kwargs[loc]


def _call_rule(p, rule, g, ans, args, kwargs, argnum):
    return call_rule(rule, p, g, ans, *args, argnum=argnum, **kwargs)


# -- output handling (arrays or tuples of arrays) -----------------------------------
def _leaves(out):
    if isinstance(out, (tuple, list)):
        return [np.asarray(o) for o in out]
    return [np.asarray(out)]


def _pack_like(out, leaves):
    if isinstance(out, (tuple, list)):
        return type(out)(leaves) if not hasattr(out, "_fields") else type(out)(*leaves)
    return leaves[0]


def _random_cotangent(out, rng):
    leaves = [
        rng.normal(size=o.shape) if o.dtype.kind == "f" else np.zeros(o.shape) for o in _leaves(out)
    ]
    return _pack_like(out, leaves)


def _unbroadcast(a, shape):
    a = np.asarray(a)
    while a.ndim > len(shape):
        a = a.sum(axis=0)
    for i, n in enumerate(shape):
        if n == 1 and a.shape[i] != 1:
            a = a.sum(axis=i, keepdims=True)
    return a


def _loss(p, g, args, kwargs):
    out = p.impl(*args, **kwargs)
    return math.fsum(
        float(np.sum(gi * oi)) for gi, oi in zip(_leaves(g), _leaves(out)) if oi.dtype.kind == "f"
    )


def _describe(args, kwargs):
    def one(a):
        return f"array{np.shape(a)}" if isinstance(a, np.ndarray) else repr(a)

    inner = [one(a) for a in args] + [f"{k}={one(v)}" for k, v in kwargs.items()]
    return "inputs (" + ", ".join(inner) + ")"


# -- the checks ---------------------------------------------------------------------
def _operands(p):
    """(args, kwargs, param, loc, argnum) for every float operand of every sample."""
    cases = []
    for args, kwargs in _samples(p):
        for name, loc, argnum in _slots(p, args, kwargs):
            if _is_float(_get(args, kwargs, loc)):
                cases.append((args, kwargs, name, loc, argnum))
    return cases


def _check_has_rules(p):
    for name in set(p.vjps) | set(p.jvps):
        assert name in p.vjps, f"{p.public}: a jvp rule for {name!r} but no vjp rule"
        assert name in p.jvps, f"{p.public}: a vjp rule for {name!r} but no jvp rule"
    assert p.vjps, f"{p.public} is differentiable but has no rules (or set differentiable=False)"
    if p.samples is None:
        # auto-generated inputs: every required array operand must be differentiable
        for name in _auto_array_params(p):
            assert name in p.vjps, f"{p.public}: float operand {name!r} has no vjp/jvp rules"


def _perturbed(value, leaf_i, delta):
    """``value`` with ``delta`` added to its ``leaf_i``-th leaf (floats stay floats)."""
    leaves = _flatten(value)
    base = np.array(leaves[leaf_i], dtype=float)
    new = base + delta
    leaves = list(leaves)
    leaves[leaf_i] = new if np.ndim(leaves[leaf_i]) else float(new)
    return _unflatten(value, leaves)


@pytest.mark.parametrize("p", DIFF, ids=[p.public for p in DIFF])
def test_vjp_rules(p):
    _check_has_rules(p)
    rng = np.random.default_rng(7)
    checked = 0
    for args, kwargs, name, loc, argnum in _operands(p):
        rule = p.vjps.get(name)
        if rule is None:
            continue
        value = _get(args, kwargs, loc)
        ans = p.impl(*args, **kwargs)
        g = _random_cotangent(ans, rng)
        got_tree = _call_rule(p, rule, g, ans, args, kwargs, argnum)
        got_leaves = _flatten(got_tree) if isinstance(value, (list, tuple)) else [got_tree]
        leaves = _flatten(value)
        assert len(got_leaves) == len(leaves), f"{p.public}: vjp for {name!r} has wrong structure"
        for li, (got, leaf) in enumerate(zip(got_leaves, leaves)):
            got = np.real(np.asarray(got)).astype(float)  # a real input's part (ad.project_real)
            shape = np.shape(leaf)
            if p.broadcasting:
                got = _unbroadcast(got, shape)
            assert got.shape == shape, (
                f"{p.public}: vjp for {name!r} has shape {got.shape}, not {shape}"
            )
            want = np.zeros(shape)
            for idx in np.ndindex(*shape):
                e = np.zeros(shape)
                e[idx] = EPS
                a_p, k_p = _replace(args, kwargs, loc, _perturbed(value, li, e))
                a_m, k_m = _replace(args, kwargs, loc, _perturbed(value, li, -e))
                want[idx] = (_loss(p, g, a_p, k_p) - _loss(p, g, a_m, k_m)) / (2 * EPS)
            np.testing.assert_allclose(
                got, want, rtol=RTOL, atol=ATOL,
                err_msg=f"{p.public}: vjp for {name!r}, {_describe(args, kwargs)}",
            )  # fmt: skip
        checked += 1
    assert checked, f"{p.public}: no float operand with a rule was tested"


@pytest.mark.parametrize("p", DIFF, ids=[p.public for p in DIFF])
def test_jvp_rules(p):
    _check_has_rules(p)
    rng = np.random.default_rng(11)
    checked = 0
    for args, kwargs, name, loc, argnum in _operands(p):
        rule = p.jvps.get(name)
        if rule is None:
            continue
        value = _get(args, kwargs, loc)
        ans = p.impl(*args, **kwargs)
        leaves = _flatten(value)
        t_leaves = [rng.normal(size=np.shape(leaf)) for leaf in leaves]
        t_arg = _unflatten(value, [t if np.ndim(t) else float(t) for t in t_leaves])
        if not isinstance(value, (list, tuple)):
            t_arg = t_leaves[0] if np.ndim(t_leaves[0]) else float(t_leaves[0])
        got = _call_rule(p, rule, t_arg, ans, args, kwargs, argnum)
        plus, minus = value, value
        for li, t in enumerate(t_leaves):
            plus = _perturbed(plus, li, EPS * t)
            minus = _perturbed(minus, li, -EPS * t)
        a_p, k_p = _replace(args, kwargs, loc, plus)
        a_m, k_m = _replace(args, kwargs, loc, minus)
        out_p, out_m = p.impl(*a_p, **k_p), p.impl(*a_m, **k_m)
        for got_i, ans_i, hi, lo in zip(_leaves(got), _leaves(ans), _leaves(out_p), _leaves(out_m)):
            if ans_i.dtype.kind != "f":
                continue
            want = (hi.astype(float) - lo.astype(float)) / (2 * EPS)
            if p.broadcasting:
                got_i = np.broadcast_to(got_i, want.shape)
            assert np.shape(got_i) == want.shape, (
                f"{p.public}: jvp for {name!r} has shape {np.shape(got_i)}, not {want.shape}"
            )
            np.testing.assert_allclose(
                np.asarray(got_i, dtype=float), want, rtol=RTOL, atol=ATOL,
                err_msg=f"{p.public}: jvp for {name!r}, {_describe(args, kwargs)}",
            )  # fmt: skip
        checked += 1
    assert checked, f"{p.public}: no float operand with a rule was tested"


RULED = [p for p in ALL if p.vjps or p.jvps]
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _signature_problem(p, rule):
    """What is wrong with ``rule``'s signature for ``p`` (None: nothing): it must
    be ``(g, ans, <parameters of p's impl>)``, those parameters a subsequence of
    the impl's (same names and kinds, a default only if the impl's), plus
    ``argnum`` for a varargs rule; and its body may read no parameter of the
    impl it does not declare (the inliner binds declared names only)."""
    impl = p.signature.parameters
    params = list(inspect.signature(rule).parameters.values())
    if len(params) < 2 or any(q.kind != q.POSITIONAL_OR_KEYWORD for q in params[:2]):
        return "does not start with (g, ans)"
    if takes_operands(rule, p):  # a linear-map maker's (g, ans, *operands)
        if len(params) != 3:
            return f"takes *operands and more: {params}"
        if not all(q.kind in _POSITIONAL for q in impl.values()):
            return "takes *operands but the impl has a keyword-only parameter"
        return None
    order = list(impl)
    last = -1
    for q in params[2:]:
        if q.name == "argnum" and q.kind == q.KEYWORD_ONLY:
            continue
        if q.kind == q.VAR_POSITIONAL:
            star = [n for n, v in impl.items() if v.kind == v.VAR_POSITIONAL]
            if not star:
                return f"takes *{q.name} but the impl has no varargs"
            name = star[0]
        else:
            name = q.name
            if name not in impl:
                return f"names {name!r}, not a parameter of the impl"
            if impl[name].kind != q.kind:
                return f"takes {name!r} as {q.kind.name}, the impl as {impl[name].kind.name}"
            if q.default is not q.empty and q.default != impl[name].default:
                return f"gives {name!r} the default {q.default!r}, the impl {impl[name].default!r}"
        if order.index(name) < last:
            return f"declares {name!r} out of the impl's order"
        last = order.index(name)
    fdef = get_source(rule).node
    declared = {q.name for q in params}
    body = [n for st in fdef.body for n in gast.walk(st)]
    local = {n.id for n in body if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}
    read = {n.id for n in body if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
    undeclared = sorted(
        (read & set(impl))
        - declared
        - local
        - set(rule.__globals__)
        - set(rule.__code__.co_freevars)
    )
    if undeclared:
        return f"reads {undeclared} without declaring them"
    return None


@pytest.mark.parametrize("p", RULED, ids=[p.public for p in RULED])
def test_rule_signatures(p):
    """Rules take ``(g, ans, <the impl parameters they read>)`` and have
    readable source: the transforms inline them, binding the impl's arguments
    by name (:func:`srcjax.transforms.rules.call_rule` runs them the same way)."""
    for kind, table in (("vjp", p.vjps), ("jvp", p.jvps)):
        for name, rule in table.items():
            inspect.getsource(rule)  # the transforms read and inline it
            problem = _signature_problem(p, rule)
            assert problem is None, f"{p.public}: {kind} rule for {name!r} {problem}"


def test_rule_signature_check_catches_a_parameter_the_primitive_lacks():
    add = REGISTRY["jnp.add"]

    def names_a_missing_param(g, ans, x, axis):
        return g

    def reads_an_undeclared_param(g, ans, x):
        return g * y  # noqa: F821  (the point: y is the impl's, not declared)

    def out_of_order(g, ans, y, x):
        return g

    def fine(g, ans, y):
        return g * y

    assert "not a parameter" in _signature_problem(add, names_a_missing_param)
    assert "without declaring" in _signature_problem(add, reads_an_undeclared_param)
    assert "out of the impl's order" in _signature_problem(add, out_of_order)
    assert _signature_problem(add, fine) is None


def test_every_primitive_has_a_docstring():
    missing = [p.public for p in ALL if not (p.impl.__doc__ or "").strip()]
    assert not missing, f"primitives without a docstring: {missing}"


# -- higher-order spot checks (rules of rules) ----------------------------------------
def test_sinc_derivatives_at_zero():
    """sinc'(0) = 0 and sinc''(0) = -pi**2/3 through the rules (JAX)."""
    from srcjax.primitives.elementwise import _sinc_x, sinc, sinc_maclaurin

    x = np.array(0.0)
    assert float(call_rule(_sinc_x, sinc, 1.0, sinc(x), x)) == 0.0
    second = call_rule(sinc_maclaurin.jvps["x"], sinc_maclaurin, 1.0, None, x, 1)
    np.testing.assert_allclose(second, -(np.pi**2) / 3, rtol=1e-12)
    # the rule's far branch stays finite at 0 (no NaN leaks through where)
    assert np.isfinite(
        call_rule(_sinc_x, sinc, 1.0, sinc(np.array([0.0, 0.5])), np.array([0.0, 0.5]))
    ).all()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(
    "name, args, want",
    [
        ("jnp.abs", (0.0,), 1.0),  # JAX: select(x >= 0, g, -g)
        ("jnp.abs", (-0.0,), 1.0),
        ("jnp.sqrt", (0.0,), np.inf),
        ("nn.relu", (0.0,), 0.0),
        ("nn.relu6", (6.0,), 0.0),
        ("nn.leaky_relu", (0.0,), 1.0),
        ("nn.celu", (0.0,), 1.0),
        ("jnp.sinc", (0.0,), 0.0),
    ],
)
def test_subgradient_conventions(name, args, want):
    p = REGISTRY[name]
    x = np.array(args[0])
    got = call_rule(p.vjps["x"], p, np.array(1.0), p.impl(x), x)
    assert float(got) == want


@pytest.mark.parametrize(
    "name, x, y, want_x, want_y",
    [
        ("jnp.maximum", 1.0, 1.0, 0.5, 0.5),
        ("jnp.minimum", -2.0, -2.0, 0.5, 0.5),
        ("jnp.maximum", 0.0, -0.0, 0.5, 0.5),
        ("jnp.maximum", 2.0, 1.0, 1.0, 0.0),
        ("jnp.fmin", 1.0, np.nan, 1.0, 0.0),
        # fmax/fmin: a tie goes to the second operand (JAX 0.10.2: grad of fmax(x, 0)
        # at 0 is 0, of fmax(0, x) is 1); maximum/minimum split it
        ("jnp.fmax", 0.0, 0.0, 0.0, 1.0),
        ("jnp.fmin", 2.0, 2.0, 0.0, 1.0),
        ("jnp.fmax", np.nan, 1.0, 0.0, 1.0),
        ("jnp.logaddexp", 1000.0, 1001.0, 0.2689414213699951, 0.7310585786300049),
        ("jnp.logaddexp", np.inf, np.inf, 1.0, 1.0),
        ("jnp.power", 0.0, 2.0, 0.0, 0.0),  # d/dy uses log(1) at x == 0, as JAX
    ],
)
def test_binary_conventions(name, x, y, want_x, want_y):
    p = REGISTRY[name]
    x, y = np.array(x), np.array(y)
    ans = p.impl(x, y)
    np.testing.assert_allclose(
        float(call_rule(p.vjps["x"], p, np.array(1.0), ans, x, y)), want_x, rtol=1e-12
    )
    np.testing.assert_allclose(
        float(call_rule(p.vjps["y"], p, np.array(1.0), ans, x, y)), want_y, rtol=1e-12
    )


def test_clip_ties_split_like_jax():
    """jnp.clip is minimum(maximum(x, lo), hi): 0.5 at either bound (JAX)."""
    p = REGISTRY["jnp.clip"]
    x = np.array([-2.0, -1.0, 0.0, 0.5, 1.0, 2.0])
    ans = p.impl(x, 0.0, 1.0)
    got = call_rule(p.vjps["x"], p, np.ones(6), ans, x, 0.0, 1.0)
    np.testing.assert_array_equal(got, [0.0, 0.0, 0.5, 1.0, 0.5, 0.0])
    got_lo = call_rule(p.vjps["min"], p, np.ones(6), ans, x, 0.0, 1.0)
    np.testing.assert_array_equal(got_lo, [1.0, 1.0, 0.5, 0.0, 0.0, 0.0])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_where_keeps_nan_of_unselected_branch_rule():
    """where's cotangent to the unselected branch is exactly 0, so a NaN or inf
    partial there gives NaN, as in JAX (0 * inf)."""
    p = REGISTRY["jnp.where"]
    c = np.array([True, False])
    g = np.array([1.0, 1.0])
    np.testing.assert_array_equal(call_rule(p.vjps["x"], p, g, None, c, 1.0, 2.0), [1.0, 0.0])
    np.testing.assert_array_equal(call_rule(p.vjps["y"], p, g, None, c, 1.0, 2.0), [0.0, 1.0])
    sqrt = REGISTRY["jnp.sqrt"]
    y_bar = call_rule(p.vjps["y"], p, np.array(1.0), None, np.array(True), 0.0, sqrt.impl(0.0))
    assert np.isnan(call_rule(sqrt.vjps["x"], sqrt, y_bar, sqrt.impl(np.array(0.0)), np.array(0.0)))


@pytest.mark.parametrize("p", DIFF, ids=[p.public for p in DIFF])
def test_jvp_vjp_consistency(p):
    """<vjp(u), v> == <u, jvp(v)> for random u, v: the two rules are transposes."""
    rng = np.random.default_rng(13)
    checked = 0
    for args, kwargs, name, loc, argnum in _operands(p):
        if name not in p.vjps or name not in p.jvps:
            continue
        value = _get(args, kwargs, loc)
        if isinstance(value, (list, tuple)):
            continue  # list operands: covered by the two rule tests above
        ans = p.impl(*args, **kwargs)
        if (
            not isinstance(ans, (np.ndarray, np.generic, float))
            or np.asarray(ans).dtype.kind != "f"
        ):
            continue
        u = rng.normal(size=np.shape(ans))
        v = rng.normal(size=np.shape(value))
        v_arg = v if np.ndim(v) else float(v)
        u_arg = u if np.ndim(u) else float(u)
        vj = _call_rule(p, p.vjps[name], u_arg, ans, args, kwargs, argnum)
        vj = np.real(np.asarray(vj)).astype(float)  # real operands: ad.project_real
        if p.broadcasting:
            vj = _unbroadcast(vj, np.shape(value))
        jv = np.asarray(_call_rule(p, p.jvps[name], v_arg, ans, args, kwargs, argnum), dtype=float)
        jv = np.broadcast_to(jv, np.shape(ans))
        lhs, rhs = float(np.sum(vj * v)), float(np.sum(u * jv))
        assert np.isclose(lhs, rhs, rtol=1e-7, atol=1e-9), (
            f"{p.public}: <vjp(u), v> = {lhs} but <u, jvp(v)> = {rhs} for {name!r}, "
            f"{_describe(args, kwargs)}"
        )
        checked += 1
    if not checked:
        pytest.skip(f"{p.public}: no array operand with both rules")


def test_batched_matmul_adjoint_rules():
    """vmap's internal matmul helpers carry rules too (jacfwd(jacrev(f)) and
    jacrev(jacrev(f)) differentiate jacrev's batched code): the same checks."""
    from srcjax.primitives import batch_rules as br

    for p in (br.bmatmul, br.bmatmul_left, br.bmatmul_right, br.bdot):
        assert p.samples(np.random.default_rng(0)), p.public
        test_vjp_rules(p)
        test_jvp_rules(p)
        test_jvp_vjp_consistency(p)
