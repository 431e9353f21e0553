"""jit's known-structure pass (transforms/optimize/pytrees.py) on a written-out
layer loop: ``ad.zeros_like`` of a container place (the start of the loop's
cotangent sum) is a table with no entries, so a hand-written Adam step over a
``{'l': [{'w', 'b'}, ...], 'o'}`` pytree is straight-line code on its leaves.

Oracle: values recorded from JAX 0.10.2 (jax.jit, CPU): the loss and the sum of
each leaf after three steps (float32; sums in float64).
"""

import numpy as np

import srcjax
import srcjax.numpy as jnp

# three jax.jit steps of _make's step (JAX 0.10.2, CPU)
JAX_LOSS = 1.3969842195510864
JAX_SUMS = {
    "p": [
        -0.06046300008893013,
        -2.7079916819930077,
        -0.02983746537938714,
        -3.002590994350612,
        4.038363054394722,
    ],
    "m": [
        0.0030057455005589873,
        -0.16759630512569856,
        -0.002040448227489833,
        -0.4723707875746186,
        0.1343906084803166,
    ],
    "v": [
        9.816424566544413e-07,
        0.00046595398505200336,
        2.212082025332407e-06,
        0.0022997194586624192,
        0.0002281327010478229,
    ],
}


def _make():
    rng = np.random.default_rng(5)
    P = {
        "l": [
            {
                "w": (rng.standard_normal((8, 8)) * 0.3).astype(np.float32),
                "b": np.zeros(8, np.float32),
            }
            for _ in range(2)
        ],
        "o": rng.standard_normal(8).astype(np.float32),
    }
    X = rng.standard_normal((32, 8)).astype(np.float32)
    Y = rng.standard_normal(32).astype(np.float32)
    tm, leaves = srcjax.tree_util.tree_map, srcjax.tree_util.tree_leaves

    def loss(p):
        h = X
        for layer in p["l"]:
            h = jnp.tanh(h @ layer["w"] + layer["b"])
        return jnp.mean((h @ p["o"] - Y) ** 2)

    def step(c):
        p, m, v, t = c
        lv, g = srcjax.value_and_grad(loss)(p)
        n = jnp.sqrt(sum(jnp.sum(x * x) for x in leaves(g)))
        g = tm(lambda x: x * jnp.minimum(1.0, 1.0 / (n + 1e-6)), g)
        t = t + 1
        m = tm(lambda a, b: 0.9 * a + 0.1 * b, m, g)
        v = tm(lambda a, b: 0.999 * a + 0.001 * b * b, v, g)
        p = tm(
            lambda q, a, b: q - 1e-2 * (a / (1 - 0.9**t)) / (jnp.sqrt(b / (1 - 0.999**t)) + 1e-8),
            p,
            m,
            v,
        )
        return (p, m, v, t), lv

    z = tm(np.zeros_like, P)
    return step, (P, z, z, np.int32(0))


def test_an_adam_step_over_a_layer_list_is_straight_line_code():
    step, c = _make()
    f = srcjax.jit(step)
    src = srcjax.source(f, c)
    code = "\n".join(line.split("#")[0] for line in src.splitlines())
    # (the cotangent and tree_map's flattening decided now: no helper walks a tree)
    for helper in ("ad.tree_leaves", "ad.leaves_upto", "ad.index_adjoint", "ad.zeros_like"):
        assert helper not in code, helper
    assert "for " not in code
    for _ in range(3):
        c, lv = f(c)
    p, m, v, t = c
    assert int(t) == 3 and lv.dtype == np.float32
    np.testing.assert_allclose(float(lv), JAX_LOSS, rtol=1e-5)
    for name, tree in (("p", p), ("m", m), ("v", v)):
        sums = [
            float(np.sum(np.asarray(x, np.float64))) for x in srcjax.tree_util.tree_leaves(tree)
        ]
        np.testing.assert_allclose(sums, JAX_SUMS[name], rtol=2e-4, atol=1e-9)
