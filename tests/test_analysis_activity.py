"""srcjax.analysis.activity: which names of a normalized function carry a
derivative, checked against activity worked out by hand for small functions,
and grad/jvp of the same functions against float64 central differences (the
analysis deciding wrongly shows as a wrong or missing derivative)."""

import numpy as np
import pytest
from helpers import assert_close, fd_grad

import srcjax
import srcjax.numpy as jnp
from srcjax import lax
from srcjax.analysis.activity import analyze_activity, single_packs
from srcjax.errors import NoDerivativeRuleError
from srcjax.frontend.normalize import normalize
from srcjax.frontend.source import get_source

pytestmark = pytest.mark.usefixtures("x64")


def _user_names(fn):
    code = fn.__code__
    return set(code.co_varnames[: code.co_nlocals])


def activity(fn, wrt, **kw):
    """The analysis of ``fn``'s normalized body (without its return), restricted
    to the user's own names (normalization adds temporaries)."""
    norm = normalize(get_source(fn))
    body = list(norm.node.body)[:-1]
    act = analyze_activity(body, wrt, src=norm.src, **kw)
    user = _user_names(fn)
    return act, act.active & user, act.containers & user, act.maybe & user


def jvp_fd(f, args, i, eps=1e-6):
    """d f / d args[i] by central differences (scalar args)."""
    lo = list(args)
    hi = list(args)
    lo[i] -= eps
    hi[i] += eps
    return (float(f(*hi)) - float(f(*lo))) / (2 * eps)


# ------------------------------------------------------------ straight line
def straight(x, y):
    a = jnp.sin(x)
    n = jnp.argmax(a)  # integer-valued: never active
    b = a * y
    c = jnp.cos(y)  # depends on y only
    return b + n + c


def test_straight_line_by_hand():
    _, active, _, _ = activity(straight, ["x"])
    assert active == {"x", "a", "b"}
    _, active, _, _ = activity(straight, ["y"])
    assert active == {"y", "b", "c"}
    _, active, _, _ = activity(straight, ["x", "y"])
    assert active == {"x", "y", "a", "b", "c"}


def test_straight_line_derivatives():
    x, y = 0.7, -1.3
    gx, gy = srcjax.grad(straight, argnums=(0, 1))(x, y)
    assert_close(gx, jvp_fd(straight, (x, y), 0))
    assert_close(gy, jvp_fd(straight, (x, y), 1))
    _, t = srcjax.jvp(straight, (x, y), (1.0, 0.0))
    assert_close(t, np.cos(x) * y)


# ------------------------------------------------------------ loops: a fixpoint
def late(x, y):
    s = 0.0
    t = 1.0
    for _ in range(3):
        s = s + t  # active only from the second trip on: after t is
        t = t * x
    u = y * 2.0
    return s + u


def test_loop_activity_reaches_the_fixpoint():
    _, active, _, _ = activity(late, ["x"])
    assert active == {"x", "s", "t"}
    _, active, _, _ = activity(late, ["y"])
    assert active == {"y", "u"}
    # reverse mode walks loop bodies twice per sweep: the same fixpoint
    _, active2, _, _ = activity(late, ["x"], loop_passes=2)
    assert active2 == {"x", "s", "t"}


def test_loop_derivatives():
    x, y = 1.3, 0.4
    # s = 1 + x + x**2: ds/dx = 1 + 2x
    assert_close(srcjax.grad(late)(x, y), 1 + 2 * x)
    assert_close(srcjax.grad(late)(x, y), jvp_fd(late, (x, y), 0))
    _, t = srcjax.jvp(late, (x, y), (0.0, 1.0))
    assert_close(t, 2.0)


# ------------------------------------------------------------ stop_gradient, branches
def branchy(x, y):
    z = lax.stop_gradient(x)
    if y > 0:
        w = x * z
    else:
        w = y
    return w


def test_stop_gradient_and_branches_by_hand():
    _, active, _, _ = activity(branchy, ["x"])
    assert active == {"x", "w"}  # z = stop_gradient(x) is not
    _, active, _, _ = activity(branchy, ["y"])
    assert active == {"y", "w"}  # the else branch counts, wherever it runs


def test_stop_gradient_derivatives():
    x = 0.9
    assert_close(srcjax.grad(branchy)(x, 1.0), x)  # d(x * const)/dx
    assert_close(srcjax.grad(branchy, argnums=1)(x, -1.0), 1.0)
    _, t = srcjax.jvp(branchy, (x, 1.0), (1.0, 0.0))
    assert_close(t, x)


# ------------------------------------------------------------ packs and lists
def packed(x, y):
    p = (x * 2.0, y)
    u = p[0]
    v = p[1]
    return u * 3.0 + v


def test_elements_of_a_pack_by_hand():
    act, active, containers, _ = activity(packed, ["x"])
    assert active == {"x", "p", "u"}  # v = p[1] is y, not active
    assert "p" in containers
    assert set(single_packs(normalize(get_source(packed)).node.body)) >= {"p"}


def listed(x):
    acc = []
    for i in range(3):
        acc.append(x * i)
    last = acc.pop()
    return last + acc[0]


def test_list_append_and_pop_by_hand():
    _, active, containers, _ = activity(listed, ["x"])
    assert {"x", "acc", "last"} <= active
    assert "i" not in active
    assert "acc" in containers


def test_pack_and_list_derivatives():
    x = 0.6
    assert_close(srcjax.grad(packed)(x, 5.0), 6.0)
    assert_close(srcjax.grad(packed, argnums=1)(x, 5.0), 1.0)
    assert_close(srcjax.grad(listed)(x), fd_grad(listed, x))  # 2x + 0x: 2
    _, t = srcjax.jvp(listed, (x,), (1.0,))
    assert_close(t, 2.0)


# ------------------------------------------------------------ containers (reverse mode)
def from_params(params, x):
    w = params["w"]
    h = w * x
    return h


def test_containers_flow_from_a_tree_parameter():
    act, active, containers, maybe = activity(
        from_params, ["params"], containers={"params"}, loop_passes=2
    )
    assert active == {"params", "w", "h"}
    assert "params" in containers
    g = srcjax.grad(from_params)({"w": 1.5}, 2.0)
    assert_close(g["w"], 2.0)


# ------------------------------------------------------------ refused: a method keeping a value
class Acc:
    def __init__(self):
        self.total = 0.0

    def add(self, v):
        self.total = self.total + v


def keeps(x, acc):
    acc.add(x)
    return x * 1.0


def test_method_of_an_untransformed_object_with_an_active_value():
    norm = normalize(get_source(keeps))
    body = list(norm.node.body)[:-1]
    with pytest.raises(NoDerivativeRuleError, match="calls a method of an object"):
        analyze_activity(body, ["x"], src=norm.src)
    analyze_activity(body, ["acc"], src=norm.src)  # x inactive: no error
