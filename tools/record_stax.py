"""Record jax.example_libraries.stax's numbers for tests/test_stax.py.

    python tools/record_stax.py jax tests/data/stax_jax.npz   # jax 0.10.2 was used
    python tools/record_stax.py srcjax                         # prints srcjax's

For each case: the output shape init_fun gives, the parameter leaves and the
apply output (npz keys CASE/shape, CASE/param0 ..., CASE/out).
"""

import os
import sys

import numpy as np


def models(stax):
    """Each case: (layer, input shape, apply with an rng?)."""
    return {
        "convnet": (
            stax.serial(
                stax.Conv(4, (3, 3), padding="SAME"),
                stax.BatchNorm(),
                stax.Relu,
                stax.MaxPool((2, 2), strides=(2, 2)),
                stax.Conv(3, (2, 2), strides=(2, 1)),
                stax.Tanh,
                stax.AvgPool((2, 2), padding="SAME"),
                stax.Flatten,
                stax.Dense(5),
                stax.Gelu,
                stax.Dense(3),
                stax.LogSoftmax,
            ),
            (2, 8, 8, 3),
            False,
        ),
        "residual": (
            stax.serial(
                stax.FanOut(2),
                stax.parallel(stax.Dense(4), stax.serial(stax.Dense(4), stax.Sigmoid)),
                stax.FanInSum,
                stax.Softplus,
                stax.Elu,
                stax.LeakyRelu,
                stax.Selu,
                stax.Exp,
                stax.Softmax,
            ),
            (3, 5),
            False,
        ),
        "concat": (
            stax.serial(
                stax.FanOut(2), stax.parallel(stax.Identity, stax.Dense(2)), stax.FanInConcat()
            ),
            (3, 5),
            False,
        ),
        "transpose": (
            stax.serial(
                stax.ConvTranspose(2, (3, 3), strides=(2, 2), padding="SAME"),
                stax.SumPool((2, 2), strides=(1, 2)),
                stax.BatchNorm(axis=(0, 1, 2), center=False),
            ),
            (2, 4, 5, 3),
            False,
        ),
        "conv1d_transpose": (stax.Conv1DTranspose(3, (2,), strides=(2,)), (2, 6, 2), False),
        "nchw": (
            stax.serial(
                stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (2, 2), padding="SAME"),
                stax.AvgPool((2, 2), strides=(2, 2), padding="SAME", spec="NCHW"),
                stax.BatchNorm(axis=(0, 2, 3), scale=False),
            ),
            (2, 2, 5, 5),
            False,
        ),
        "dropout": (
            stax.serial(stax.Dense(6), stax.Dropout(0.7), stax.Relu, stax.Dense(2)),
            (4, 3),
            True,
        ),
    }


def run(jnp, stax, random):
    out = {}
    for name, (layer, shape, with_rng) in models(stax).items():
        init_fun, apply_fun = layer
        out_shape, params = init_fun(random.PRNGKey(0), (-1,) + shape[1:])
        x = np.sin(np.arange(np.prod(shape), dtype=np.float32) * 0.37).reshape(shape)
        kw = {"rng": random.PRNGKey(1)} if with_rng else {}
        y = apply_fun(params, jnp.asarray(x), **kw)
        leaves = [np.asarray(v).tolist() for v in _leaves(params)]
        out[name] = (tuple(out_shape), leaves, np.asarray(y).tolist())
    return out


def _leaves(tree):
    if isinstance(tree, (list, tuple)):
        return [v for t in tree for v in _leaves(t)]
    return [tree]


if __name__ == "__main__":
    if sys.argv[1] == "jax":
        import jax.numpy as jnp
        from jax import random
        from jax.example_libraries import stax
    else:
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        import srcjax.numpy as jnp
        from srcjax import random
        from srcjax.example_libraries import stax
    out = run(jnp, stax, random)
    if len(sys.argv) > 2:
        arrays = {}
        for name, (shape, leaves, y) in out.items():
            arrays[f"{name}/shape"] = np.asarray(shape, np.int64)
            for i, v in enumerate(leaves):
                arrays[f"{name}/param{i}"] = np.asarray(v, np.float32)
            arrays[f"{name}/out"] = np.asarray(y, np.float32)
        np.savez_compressed(sys.argv[2], **arrays)
    else:
        print(repr(out))
