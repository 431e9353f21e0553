"""srcjax.analysis.liveness: the names a normalized block reads before writing
them, checked against sets worked out by hand, and vmap (which reads them for
what a batched branch or loop carries) against a Python loop over examples."""

import numpy as np
from helpers import assert_close

import srcjax
import srcjax.numpy as jnp
from srcjax.analysis.liveness import live_in, reads_before_write
from srcjax.frontend.normalize import normalize
from srcjax.frontend.source import get_source


def _body(fn):
    return list(normalize(get_source(fn)).node.body)[:-1]  # without the return


def branches_and_loop(x, n):
    y = x * 2.0
    if n > 0:
        z = y + 1.0
        w = 1.0
    else:
        z = y - x
    for i in range(n):
        acc = acc + z * i  # noqa: F821 - read before any write: live on entry
    return acc + w


def test_live_in_by_hand():
    # normalized: y = x * 2.0; cond = n > 0; if cond: z = ...; w = 1.0 else: z = ...
    #             for i in range(n): mul = z * i; acc = acc + mul;  out = acc + w
    # z is written on both paths (not live); w on one only (live: read after the
    # if); acc is read in the loop before any write; i is written by the for
    assert live_in(_body(branches_and_loop)) == {"x", "n", "range", "acc", "w"}


def test_reads_before_write_by_hand():
    # in order; a loop counts as a whole (its target and temporaries are reads),
    # a write in either branch of an if counts as a write after it
    assert reads_before_write(_body(branches_and_loop)) == ["x", "n", "range", "i", "acc", "mul"]


def nested(a, m):
    t = a
    while m > 0:
        for j in range(m):
            u = t * j
            t = u + 1.0
        m = m - 1
    return t


def test_nested_loops_by_hand():
    # t and m are written before the loops; inside, u and t are written before
    # the reads that follow them: nothing but the parameters and range is live
    assert live_in(_body(nested)) == {"a", "m", "range"}
    assert set(reads_before_write(_body(nested))) >= {"a", "m"}


def carried(x):
    s = 0.0
    t = x
    for k in range(3):
        s = s + t * k
        t = t * 0.5
    if x > 0.0:
        r = s
    else:
        r = -s
    return r


def test_vmap_of_carried_values_matches_a_python_loop():
    xs = np.array([-1.5, 0.25, 2.0])
    got = np.asarray(srcjax.vmap(carried)(xs))
    assert_close(got, np.array([carried(float(x)) for x in xs]))

    # and a batched while carrying two values
    def halve(x):
        n = 0
        v = x
        while v > 1.0:
            v = v / 2.0
            n = n + 1
        return v + n

    xs = np.array([0.5, 3.0, 9.0])
    want = [halve(float(x)) for x in xs]
    assert_close(np.asarray(srcjax.vmap(halve)(jnp.asarray(xs))), np.array(want))
