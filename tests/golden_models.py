"""User functions whose generated code is pinned by tests/test_golden.py."""

import srcjax.numpy as jnp


def loss(w, x, y):
    h = jnp.tanh(x @ w)
    err = h - y
    return jnp.mean(err**2)


def grow(x):
    while x < 10.0:
        x = x * 1.7
    return x


def branch(x):
    if x > 0:
        y = jnp.sqrt(x)
    else:
        y = -2.0 * x
    return y


def rnn(h, xs, w):
    for x in xs:
        h = jnp.tanh(h * w + x)
    return jnp.sum(h)


def params_loss(params, x):
    h = jnp.tanh(x @ params["w"] + params["b"])
    return jnp.sum(h * h)


def walrus_branch(x):
    if (y := x * 2.0) > 1.0:
        return y
    return x


def loop_else_break(x):
    for i in range(4):
        if x > 5.0:
            break
        x = x * 2.0
    else:
        x = x + 1.0
    return x


def match_kind(x, k):
    match k:
        case 0:
            return x * 2.0
        case 1 | 2:
            return x * x
        case _:
            return -x
