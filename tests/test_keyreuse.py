"""The static PRNG key-reuse check (srcjax/frontend/keyreuse.py).

True positives name both places; the false-positive cases are the idioms JAX
users write correctly (split in a helper, keys in a list, fold_in with the loop
index, a key per branch, clone, a key carried and split through a lax loop).
"""

import warnings

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax, random
from srcjax.frontend.keyreuse import KeyReuseError, KeyReuseWarning, check
from srcjax.frontend.normalize import normalize
from srcjax.frontend.source import get_source

K = random.key(0)


@pytest.fixture
def mode():
    before = srcjax.config.read("key_reuse_check")
    yield lambda m: srcjax.config.update("key_reuse_check", m)
    srcjax.config.update("key_reuse_check", before)


def findings(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", KeyReuseWarning)
        return check(normalize(get_source(fn)).node)


def lines(fn):
    """(first line, second line) of each finding, relative to ``fn``'s def."""
    base = fn.__code__.co_firstlineno
    return [(f.first.loc.lineno - base, f.second.loc.lineno - base) for f in findings(fn)]


# ----------------------------------------------------------------------------- true positives
def two_draws(key):
    x = random.normal(key, (3,))
    y = random.uniform(key, (3,))
    return x + y


def draw_then_split(key):
    x = random.normal(key)
    key, sub = random.split(key)
    return x + random.normal(sub)


def loop_without_split(key, x):
    for i in range(3):
        x = x + random.normal(key)
    return x


def fori_without_split(key):
    def body(i, acc):
        return acc + random.uniform(key)

    return lax.fori_loop(0, 4, body, 0.0)


def fold_in_constant_in_loop(key):
    s = 0.0
    for i in range(3):
        s = s + random.normal(random.fold_in(key, 7))
    return s


def same_item_twice(key):
    keys = random.split(key, 3)
    return random.normal(keys[1]) + random.uniform(keys[1])


def reuse_after_branch(key, x):
    if x > 0:
        y = random.normal(key)
    else:
        y = 0.0
    return y + random.uniform(key)


def test_true_positives_name_both_lines():
    assert lines(two_draws) == [(1, 2)]
    assert lines(draw_then_split) == [(1, 2)]
    assert lines(same_item_twice) == [(2, 2)]
    assert lines(reuse_after_branch) == [(2, 5)]
    (f,) = findings(two_draws)
    assert f.first.what == "normal" and f.second.what == "uniform" and not f.loop
    assert "already consumed at test_keyreuse.py:" in f.message()


def test_loops_count_as_reuse_when_not_resplit():
    assert lines(loop_without_split) == [(2, 2)]
    assert findings(loop_without_split)[0].loop
    assert "every iteration" in findings(loop_without_split)[0].message()
    assert len(findings(fori_without_split)) == 1 and findings(fori_without_split)[0].loop
    assert lines(fold_in_constant_in_loop) == [(3, 3)]


# ----------------------------------------------------------------------------- false positives
def next_key(key):
    return random.split(key)


def split_in_helper(key):
    key, sub = next_key(key)
    a = random.normal(sub)
    key, sub = next_key(key)
    return a + random.normal(sub)


def keys_in_a_list(key):
    k1, k2 = random.split(key)
    ks = [k1, k2]
    return random.normal(ks[0]) + random.normal(ks[1])


def fold_in_loop_index(key):
    s = 0.0
    for i in range(4):
        s = s + random.normal(random.fold_in(key, i))
    return s


def fold_in_fori_index(key):
    def body(i, acc):
        return acc + random.uniform(random.fold_in(key, i))

    return lax.fori_loop(0, 4, body, 0.0)


def key_per_branch(key, x):
    if x > 0:
        return random.normal(key)
    return random.uniform(key)


def split_in_loop(key, x):
    for i in range(3):
        key, sub = random.split(key)
        x = x + random.normal(sub)
    return x


def carried_through_scan(key, xs):
    def body(k, x):
        k, sub = random.split(k)
        return k, x * random.uniform(sub)

    return lax.scan(body, key, xs)


def loop_over_split_keys(key):
    s = 0.0
    for k in random.split(key, 3):
        s = s + random.normal(k)
    return s


def cloned(key):
    return random.normal(random.clone(key)) + random.normal(key)


def distinct_items(key):
    keys = random.split(key, 3)
    return random.normal(keys[0]) + random.normal(keys[1]) + random.normal(keys[2])


@pytest.mark.parametrize(
    "fn",
    [
        split_in_helper,
        keys_in_a_list,
        fold_in_loop_index,
        fold_in_fori_index,
        key_per_branch,
        split_in_loop,
        carried_through_scan,
        loop_over_split_keys,
        cloned,
        distinct_items,
    ],
)
def test_no_false_positive(fn):
    assert findings(fn) == []


# ----------------------------------------------------------------------------- the option
def test_warns_when_transforming(mode):
    mode("warn")

    def g(key):
        a = random.normal(key)
        b = random.normal(key)
        return a + b

    with pytest.warns(KeyReuseWarning, match="random.normal already consumed") as rec:
        out = srcjax.jit(g)(K)
    assert rec[0].filename == __file__ and rec[0].lineno == g.__code__.co_firstlineno + 2
    np.testing.assert_array_equal(out, 2 * random.normal(K))  # it still runs


def test_error_mode_raises_located(mode):
    mode("error")

    def g(key, x):
        return random.normal(key, (2,)) * x + random.uniform(key, (2,))

    with pytest.raises(KeyReuseError, match=r"test_keyreuse.py:\d+:\d+: PRNG key reused"):
        srcjax.jit(g)(K, 1.0)
    with pytest.raises(KeyReuseError):
        srcjax.vmap(g, in_axes=(0, None))(random.split(K, 2), 1.0)
    with pytest.raises(KeyReuseError):
        srcjax.grad(lambda x: jnp.sum(g(K, x)))(1.0)


def test_off_is_silent(mode):
    mode("off")

    def g(key):
        return random.normal(key) + random.normal(key)

    with warnings.catch_warnings():
        warnings.simplefilter("error", KeyReuseWarning)
        srcjax.jit(g)(K)


def test_option_values():
    assert srcjax.config.read("key_reuse_check") == "warn"  # the default
    with pytest.raises(ValueError, match="key_reuse_check"):
        srcjax.config.update("key_reuse_check", "loud")


def test_reuse_inside_a_grad_nested_in_jit_names_the_users_lines(mode):
    """Session 15's debt (round 7 item 12): the reuse inside ``grad(loss)`` under
    jit was reported a second time at a line of grad's generated file in the
    cache (and, with random.beta, an internal random.split); a reuse spanning the
    jitted code and the grad now names the user's grad call."""
    mode("warn")

    def loss(w, key):
        a = random.beta(key, 2.0, 3.0, (3,))
        b = random.beta(key, 2.0, 3.0, (3,))
        return jnp.sum(w * a * b)

    def loss1(w, key):
        return jnp.sum(w * random.normal(key, (3,)))

    def outer(w, key):
        a = random.normal(key, (3,))
        return srcjax.grad(loss1)(w, key) * a

    w = jnp.ones(3)
    for fn, line in [
        (lambda w, k: srcjax.grad(loss)(w, k), loss.__code__.co_firstlineno + 2),
        (outer, outer.__code__.co_firstlineno + 2),
    ]:
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            srcjax.jit(fn)(w, K)
        got = [(r.filename, r.lineno) for r in rec if issubclass(r.category, KeyReuseWarning)]
        assert got == [(__file__, line)]
