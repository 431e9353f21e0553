"""jit's reverse loops read the values grad's tape restores as rows of stacks the
program made (optimize/tape_rows.py) and make exact elementwise work on such
rows once for all rows (optimize/rowwise.py). A wrong proof is a silent wrong
gradient, so every scan shape here is checked against float64 central
differences of the same program run eagerly, and against grad without jit:
programs where the pushed value is the ys row (the rewrite applies) and where it
is not (the carry changed after the ys row is emitted, ys a function of h, ys
the carry the trip began with, h rebound in a branch, nested scans, reverse
scans, unrolled scans)."""

import re

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax

T, B, D, H = 6, 3, 2, 4


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    p = {
        "wx": (rng.standard_normal((D, H)) / 2).astype(np.float32),
        "wh": (rng.standard_normal((H, H)) / 2).astype(np.float32),
    }
    xs = rng.standard_normal((T, B, D)).astype(np.float32)
    return p, xs


def _pre(p, h, x):
    return x @ p["wx"] + h @ p["wh"]


def cell_plain(p):  # ys is the new carry: R3's case
    def cell(h, x):
        h = jnp.tanh(_pre(p, h, x))
        return h, h

    return cell


def cell_carry_after_ys(p):  # the carry changes after its ys row is emitted
    def cell(h, x):
        h = jnp.tanh(_pre(p, h, x))
        y = h
        h = h * 0.5 + 0.25
        return h, y

    return cell


def cell_ys_of_h(p):  # ys a function of h, not h
    def cell(h, x):
        h = jnp.tanh(_pre(p, h, x))
        return h, jnp.sin(h) * 2.0

    return cell


def cell_old_carry(p):  # ys the carry the trip began with
    def cell(h, x):
        new = jnp.tanh(_pre(p, h, x))
        return new, h

    return cell


def cell_branch(p):  # h rebound in a branch
    def cell(h, x):
        h = jnp.tanh(_pre(p, h, x))
        h = lax.cond(jnp.sum(x) > 0, lambda a: a * 0.5, lambda a: jnp.tanh(a + 1.0), h)
        return h, h

    return cell


def cell_nested(p):  # an inner scan rebinds h
    def cell(h, x):
        def inner(c, _):
            c = jnp.tanh(c @ p["wh"] + x @ p["wx"])
            return c, c

        h, hs = lax.scan(inner, h, None, length=3)
        return h, hs[1]

    return cell


def _total(hT, out):
    return jnp.sum(out * out) * 0.5 + jnp.sum(hT * jnp.arange(H, dtype=hT.dtype))


def _h0(xs):
    return jnp.zeros((B, H), xs.dtype)


def loss_plain(p, xs):
    return _total(*lax.scan(cell_plain(p), _h0(xs), xs))


def loss_carry_after_ys(p, xs):
    return _total(*lax.scan(cell_carry_after_ys(p), _h0(xs), xs))


def loss_ys_of_h(p, xs):
    return _total(*lax.scan(cell_ys_of_h(p), _h0(xs), xs))


def loss_old_carry(p, xs):
    return _total(*lax.scan(cell_old_carry(p), _h0(xs), xs))


def loss_branch(p, xs):
    return _total(*lax.scan(cell_branch(p), _h0(xs), xs))


def loss_nested(p, xs):
    return _total(*lax.scan(cell_nested(p), _h0(xs), xs))


def loss_reverse(p, xs):
    return _total(*lax.scan(cell_plain(p), _h0(xs), xs, reverse=True))


def loss_reverse_old_carry(p, xs):
    return _total(*lax.scan(cell_old_carry(p), _h0(xs), xs, reverse=True))


def loss_h0_given(p, xs):  # a carry that begins nonzero: row "-1" of the stacked states
    h0 = jnp.full((B, H), 0.3, xs.dtype) + jnp.sin(xs[0, :, :1])
    return _total(*lax.scan(cell_plain(p), h0, xs))


def loss_h0_of_params(p, xs):  # ... and one that depends on the parameters
    return _total(*lax.scan(cell_plain(p), jnp.tanh(xs[0] @ p["wx"] + 0.5), xs))


def loss_unroll(p, xs):
    return _total(*lax.scan(cell_plain(p), _h0(xs), xs, unroll=2))


def loss_unroll_carry_after_ys(p, xs):
    return _total(*lax.scan(cell_carry_after_ys(p), _h0(xs), xs, unroll=3))


CASES = {name[5:]: f for name, f in sorted(globals().items()) if name.startswith("loss_")}


def _central_differences(loss, p, xs, eps=1e-6):
    """float64 central differences of ``loss`` run eagerly (no jit, no grad)."""
    srcjax.config.update("jax_enable_x64", True)
    try:
        q = {k: v.astype(np.float64) for k, v in p.items()}
        x64 = xs.astype(np.float64)
        out = {}
        for k in q:
            num = np.zeros_like(q[k])
            for idx in np.ndindex(q[k].shape):
                a, b = {**q, k: q[k].copy()}, {**q, k: q[k].copy()}
                a[k][idx] += eps
                b[k][idx] -= eps
                num[idx] = (float(loss(a, x64)) - float(loss(b, x64))) / (2 * eps)
            out[k] = num
        return out
    finally:
        srcjax.config.update("jax_enable_x64", False)


@pytest.mark.parametrize("name", sorted(CASES))
def test_scan_gradients_against_float64_differences(name):
    loss = CASES[name]
    p, xs = _inputs(hash(name) % 97)
    v, g = srcjax.jit(srcjax.value_and_grad(loss))(p, xs)
    plain = srcjax.grad(loss)(p, xs)  # (no jit: no optimizer)
    want = _central_differences(loss, p, xs)
    for k in p:
        assert np.asarray(g[k]).dtype == np.float32
        np.testing.assert_allclose(np.asarray(g[k]), want[k], rtol=2e-3, atol=2e-4)
        np.testing.assert_allclose(np.asarray(g[k]), np.asarray(plain[k]), rtol=2e-5, atol=2e-6)


def _reverse_loop(src):
    return src.split("for k in reversed(range(")[1].split("\n    if ")[0]


def test_the_restored_hidden_state_is_a_row_of_the_stacked_ys():
    p, xs = _inputs()
    f = srcjax.jit(srcjax.value_and_grad(loss_plain))
    f(p, xs)
    src = srcjax.source(f, p, xs)
    stacks = re.findall(r"(\w+) = ad\.tree_stack\(\w+\)", src)
    assert len(stacks) == 1, src
    rev = _reverse_loop(src)
    # the trip reads no hidden state: its tanh derivative is made once, before
    # the loop, and wh's cotangent contracts the stacked states the trips began
    # with (optimize/trip_order.py), after it; nothing is popped
    code = "\n".join(line.split("#")[0] for line in src.splitlines())
    assert "1 - " not in rev and "tape" not in code and stacks[0] not in rev, rev
    assert re.search(rf"\w+ = 1 - {stacks[0]} \* {stacks[0]}\b", src), src
    assert re.search(rf"= ad\.rows_before\({stacks[0]}, \w+_init\)", src), src


# --- the proof's conditions, on loops written by hand as grad writes them (a
# tape list pushed in a forward loop and popped in a reverse one): jit against
# the same function run as plain Python. Each variant breaks one condition.


def tape_ok(xs):
    tape = []
    h = jnp.zeros(3, xs.dtype)
    x = h
    for k in range(5):
        tape.append(x)
        x = xs[k]
        tape.append(h)
        h = jnp.tanh(x + h)
    acc = jnp.zeros(3, xs.dtype)
    for k in reversed(range(5)):
        acc = acc * 0.5 + h * x
        h = tape.pop()
        x = tape.pop()
    return acc


def tape_pushes_the_new_value(xs):
    tape = []
    h = jnp.zeros(3, xs.dtype)
    x = h
    for k in range(5):
        x = xs[k]
        tape.append(x)  # (the value the trip made, not the one it began with)
        h = jnp.tanh(x + h)
    acc = jnp.zeros(3, xs.dtype)
    for k in reversed(range(5)):
        acc = acc * 0.5 + h * x
        x = tape.pop()
    return acc


def tape_rebinds_in_a_branch(xs):
    tape = []
    h = jnp.zeros(3, xs.dtype)
    x = h
    for k in range(5):
        tape.append(x)
        x = xs[k]
        if k % 2 == 0:
            x = x * 2.0
        h = jnp.tanh(x + h)
    acc = jnp.zeros(3, xs.dtype)
    for k in reversed(range(5)):
        acc = acc * 0.5 + h * x
        x = tape.pop()
    return acc


def tape_rebinds_between(xs):
    tape = []
    h = jnp.zeros(3, xs.dtype)
    x = h
    for k in range(5):
        tape.append(x)
        x = xs[k]
        h = jnp.tanh(x + h)
    x = x * 3.0
    acc = jnp.zeros(3, xs.dtype)
    for k in reversed(range(5)):
        acc = acc * 0.5 + h * x
        x = tape.pop()
    return acc


def tape_reads_after_the_pop(xs):
    tape = []
    h = jnp.zeros(3, xs.dtype)
    x = h
    for k in range(5):
        tape.append(x)
        x = xs[k]
        h = jnp.tanh(x + h)
    acc = jnp.zeros(3, xs.dtype)
    for k in reversed(range(5)):
        acc = acc * 0.5 + h * x
        x = tape.pop()
        x = x * 2.0  # (the last binding is no pop: what the next trip reads is not xs[k])
    return acc


@pytest.mark.parametrize(
    "f",
    [
        tape_ok,
        tape_pushes_the_new_value,
        tape_rebinds_in_a_branch,
        tape_rebinds_between,
        tape_reads_after_the_pop,
    ],
)
def test_hand_written_tapes_against_plain_python(f):
    xs = np.random.default_rng(3).standard_normal((5, 3)).astype(np.float32)
    got = np.asarray(srcjax.jit(f)(xs))
    np.testing.assert_allclose(got, np.asarray(f(xs)), rtol=1e-6, atol=1e-7)


def test_the_row_read_where_the_proof_holds():
    xs = np.random.default_rng(3).standard_normal((5, 3)).astype(np.float32)
    j = srcjax.jit(tape_ok)
    j(xs)
    rev = _reverse_loop(srcjax.source(j, xs))
    assert rev.splitlines()[1].split("#")[0].strip() == "x = xs[k]", rev
    assert "x = tape.pop()" not in rev  # (the restore no trip reads: dropped)


# --- rowwise: exact elementwise work on rows, made once for all rows


def rows_exact(xs, w):
    acc = jnp.zeros(3, xs.dtype)
    for k in range(5):
        x = xs[k]
        d = 1 - x * w  # (rows and an invariant: made for all rows)
        acc = acc * 0.5 + d
    return acc


def rows_with_a_variant(xs, w):
    acc = jnp.ones(3, xs.dtype)
    for k in reversed(range(5)):
        x = xs[k]
        d = x * acc  # (acc changes in the loop)
        acc = acc * 0.5 + d
    return acc


def rows_rebound(xs, w):
    tape = []
    x = w
    for k in range(5):
        tape.append(x)
        x = jnp.sin(xs[k])
    acc = jnp.zeros(3, xs.dtype)
    for k in reversed(range(5)):
        x = xs[k]
        acc = acc * 0.5 + x * x
        x = tape.pop()  # (x is no row after this)
        acc = acc + x * w
    return acc


def rows_broadcast_wider(xs, w):
    acc = jnp.zeros((4, 3), xs.dtype)
    ww = jnp.ones((4, 3), xs.dtype) * w
    for k in range(5):
        x = xs[k]
        d = x * ww  # (a result wider than the row)
        acc = acc * 0.5 + d
    return acc


@pytest.mark.parametrize("f", [rows_exact, rows_with_a_variant, rows_rebound, rows_broadcast_wider])
def test_rowwise_against_plain_python(f):
    rng = np.random.default_rng(4)
    xs = rng.standard_normal((5, 3)).astype(np.float32)
    w = rng.standard_normal(3).astype(np.float32)
    j = srcjax.jit(f)
    np.testing.assert_array_equal(np.asarray(j(xs, w)), np.asarray(f(xs, w)))
    if f is rows_exact:
        src = srcjax.source(j, xs, w)
        assert re.search(r"\w+_rows = 1 - xs \* w", src), src
        assert "1 - " not in src.split("for k in range(5)")[1]


# --- trip_order: the reverse loop's lists stacked in trip order, lists of rows
# read as their arrays


def loss_xs_rows(xs, w):
    def cell(h, x):
        h = jnp.tanh(h @ w + x)
        return h, x * 3.0 - h  # (x's cotangent on each trip: a row of 3 * ys_bar, plus)

    hT, out = lax.scan(cell, jnp.zeros((B, H), xs.dtype), xs)
    return jnp.sum(out * out) + jnp.sum(hT)


def test_cotangent_of_the_scanned_inputs_keeps_its_trip_order():
    rng = np.random.default_rng(5)
    xs = rng.standard_normal((T, B, H)).astype(np.float32)
    w = (rng.standard_normal((H, H)) / 2).astype(np.float32)
    gx, gw = srcjax.jit(srcjax.grad(loss_xs_rows, argnums=(0, 1)))(xs, w)
    px, pw = srcjax.grad(loss_xs_rows, argnums=(0, 1))(xs, w)
    np.testing.assert_allclose(np.asarray(gx), np.asarray(px), rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(np.asarray(gw), np.asarray(pw), rtol=2e-5, atol=2e-6)
    srcjax.config.update("jax_enable_x64", True)
    try:
        x64, w64 = xs.astype(np.float64), w.astype(np.float64)
        eps = 1e-6
        for idx in [(0, 0, 0), (2, 1, 3), (T - 1, B - 1, H - 1)]:
            a, b = x64.copy(), x64.copy()
            a[idx] += eps
            b[idx] -= eps
            num = (float(loss_xs_rows(a, w64)) - float(loss_xs_rows(b, w64))) / (2 * eps)
            np.testing.assert_allclose(float(np.asarray(gx)[idx]), num, rtol=2e-3, atol=2e-4)
    finally:
        srcjax.config.update("jax_enable_x64", False)


def test_r3_reverse_loop_reads_stacks_and_keeps_no_tape(tmp_path):
    # the generated code of the bench's R3 (tools/real_programs): the reverse
    # trip reads rows of the stacked tanh derivative; no tape is kept; wo's and wx's gradients
    # contract the stacked states and xs themselves
    from tools.real_programs.load import load

    m = load("R3", "srcjax", str(tmp_path))
    args = m.make_inputs(np.random.default_rng(0))
    m.step(*args)
    src = srcjax.source(m.step, *args)
    code = "\n".join(line.split("#")[0].rstrip() for line in src.splitlines())
    assert "tape" not in code, code
    # (the states written into their stack as the trips make them: stack_rows.py)
    assert re.search(r"\n    (\w+) = ad\.empty_rows\(\(50, 32, 64\), 'float32'\)\n", code), code
    assert re.search(r"= ad\.ufunc_into\((\w+), k, 'tanh', \w+\)\n", code), code
    assert re.search(r"= 1 - (\w+) \* \1\n", code), code
    assert re.search(r"ad\.bmatmul_right\(sub_bar, \w+_rows, wo, True, False\)", code), code
    assert re.search(r"ad\.bmatmul_right\(\w+, xs, wx, True, False\)", code), code
    # wh's gradient contracts the states the trips began with, stacked once
    # after the loop: the reverse trip reads none (ad.matrix_dot needs no `a`)
    rev = code.split("for k in reversed(range(50)):")[1].split("\n    if ")[0]
    assert "row_before" not in rev and "_rows" in rev and "ad.matrix_dot(" in rev, rev
    got = re.search(r"(\w+) = ad\.rows_before\((\w+_rows), \w+_init\)", code)
    assert got and got.group(2) not in rev, code
    assert re.search(rf"ad\.bmatmul_right\(\w+, {got.group(1)}, wh, True, False\)", code), code
