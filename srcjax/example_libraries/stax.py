"""``srcjax.example_libraries.stax``: JAX's small neural-network library.

The API follows ``jax.example_libraries.stax`` (JAX 0.10.2,
https://docs.jax.dev/en/latest/jax.example_libraries.stax.html). A *layer* is
a pair ``(init_fun, apply_fun)``:

- ``init_fun(rng, input_shape) -> (output_shape, params)``: ``rng`` a PRNG key,
  ``input_shape`` a tuple whose batch entry may be ``-1``; the parameters are
  drawn with :mod:`srcjax.random` with JAX's key splits, so the same key gives
  the same initial parameters as JAX (float32);
- ``apply_fun(params, inputs, rng=None, **kwargs) -> outputs``: ``rng`` is
  needed by :func:`Dropout` only; :func:`serial` and :func:`parallel` split it
  for their layers as JAX does, and pass the other keywords on.

Layers compose with :func:`serial`, :func:`parallel`, :func:`FanOut`,
:data:`FanInSum`, :func:`FanInConcat`; the layer constructors are
:func:`Dense`, :func:`GeneralConv` / :func:`Conv`, :func:`GeneralConvTranspose`
/ :func:`ConvTranspose` / :func:`Conv1DTranspose`, :func:`BatchNorm`, the
pooling layers :func:`MaxPool`, :func:`SumPool`, :func:`AvgPool`,
:data:`Flatten`, :data:`Identity`, :func:`Dropout`, :func:`shape_dependent`,
:func:`elementwise`, and the activations :data:`Relu`, :data:`Tanh`, ...

Every ``apply_fun`` is plain srcjax code: ``grad``/``jit``/``vmap`` of a loss
that calls one inline it, layer by layer, into one generated function.

As in JAX, ``Dropout(rate)`` *keeps* each input with probability ``rate``
(and scales the kept ones by ``1 / rate``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import lax, random
from .. import nn as _nn
from .. import numpy as jnp
from ..nn import (  # noqa: F401 - re-exported, as JAX's stax module has them
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from ..nn.initializers import glorot_normal, normal, ones, zeros

# (JAX's stax module names these too; ported code reads stax.randn(), stax.glorot())
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax

__all__ = [
    "AvgPool",
    "BatchNorm",
    "Conv",
    "Conv1DTranspose",
    "ConvTranspose",
    "Dense",
    "Dropout",
    "Elu",
    "Exp",
    "FanInConcat",
    "FanInSum",
    "FanOut",
    "Flatten",
    "Gelu",
    "GeneralConv",
    "GeneralConvTranspose",
    "Identity",
    "LeakyRelu",
    "LogSoftmax",
    "MaxPool",
    "Relu",
    "Selu",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "SumPool",
    "Tanh",
    "elementwise",
    "parallel",
    "serial",
    "shape_dependent",
]

#: ``(init_fun, apply_fun)``
Layer = tuple

# (the default initializers, made once as JAX's defaults are)
_GLOROT_NORMAL = glorot_normal()
_NORMAL = normal()
_NORMAL_TINY = normal(1e-6)


def _output_shape(fn: Callable, input_shape: Sequence[int], n_in: int, n_out: int) -> tuple:
    """The shape ``fn`` gives an input of ``input_shape``, whose batch entry (at
    ``n_in``; ``-1`` allowed) is carried to ``n_out`` of the output: ``fn`` runs
    once on a zero input with a batch of one."""
    shape = list(input_shape)
    batch = shape[n_in]
    shape[n_in] = 1
    out = list(np.shape(fn(np.zeros(shape, np.float32))))
    out[n_out] = batch
    return tuple(out)


# --- dense and convolutional layers -----------------------------------------------------


def Dense(out_dim: int, W_init: Callable = _GLOROT_NORMAL, b_init: Callable = _NORMAL) -> Layer:
    """A fully connected layer ``inputs @ W + b``: ``W`` of shape ``(in_dim,
    out_dim)`` from ``W_init``, ``b`` of shape ``(out_dim,)`` from ``b_init``
    (keys ``split(rng)``, as JAX)."""

    def init_fun(rng, input_shape):
        output_shape = tuple(input_shape[:-1]) + (out_dim,)
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return output_shape, (W, b)

    def apply_fun(params, inputs, rng=None, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _kernel_shape(rhs_spec: str, lhs_spec: str, input_shape, out_chan, filter_shape) -> list:
    spatial = iter(filter_shape)
    return [
        out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I" else next(spatial)
        for c in rhs_spec
    ]


def _conv_init(conv, dimension_numbers, out_chan, filter_shape, W_init, b_init):
    """The ``init_fun`` of a convolution layer computing ``conv(x, kernel)``: the
    output shape (from a zero kernel), the kernel (``W_init``, by default Glorot
    normal over the kernel's I/O axes) and the bias (1 except along the output's
    channel axis)."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(rhs_spec, lhs_spec, input_shape, out_chan, filter_shape)
        kernel = np.zeros(kernel_shape, np.float32)
        output_shape = _output_shape(
            lambda x: conv(x, kernel), input_shape, lhs_spec.index("N"), out_spec.index("N")
        )
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        W, b = W_init(k1, kernel_shape), b_init(k2, bias_shape)
        return output_shape, (W, b)

    return init_fun


def GeneralConv(
    dimension_numbers: tuple,
    out_chan: int,
    filter_shape: Sequence[int],
    strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    W_init: Callable | None = None,
    b_init: Callable = _NORMAL_TINY,
) -> Layer:
    """A convolution with ``dimension_numbers = (lhs_spec, rhs_spec, out_spec)``
    (e.g. ``("NHWC", "HWIO", "NHWC")``), ``out_chan`` output channels and a
    ``filter_shape`` window; ``padding`` is ``"VALID"``, ``"SAME"`` or explicit
    pairs. ``W_init`` defaults to Glorot normal over the kernel's I/O axes; the
    bias has shape 1 except along the output's channel axis."""
    one = (1,) * len(filter_shape)
    strides = strides or one

    def conv(x, kernel):
        return lax.conv_general_dilated(
            x, kernel, strides, padding, one, one, dimension_numbers=dimension_numbers
        )

    init_fun = _conv_init(conv, dimension_numbers, out_chan, filter_shape, W_init, b_init)

    def apply_fun(params, inputs, rng=None, **kwargs):
        W, b = params
        out = lax.conv_general_dilated(
            inputs, W, strides, padding, one, one, dimension_numbers=dimension_numbers
        )
        return out + b

    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv.__doc__ = "``GeneralConv`` in NHWC layout with an HWIO kernel."


def GeneralConvTranspose(
    dimension_numbers: tuple,
    out_chan: int,
    filter_shape: Sequence[int],
    strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    W_init: Callable | None = None,
    b_init: Callable = _NORMAL_TINY,
) -> Layer:
    """A transposed convolution (``lax.conv_transpose``), parameters as in
    :func:`GeneralConv`."""
    strides = strides or (1,) * len(filter_shape)

    def conv(x, kernel):
        return lax.conv_transpose(x, kernel, strides, padding, dimension_numbers=dimension_numbers)

    init_fun = _conv_init(conv, dimension_numbers, out_chan, filter_shape, W_init, b_init)

    def apply_fun(params, inputs, rng=None, **kwargs):
        W, b = params
        out = lax.conv_transpose(inputs, W, strides, padding, dimension_numbers=dimension_numbers)
        return out + b

    return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
Conv1DTranspose.__doc__ = "``GeneralConvTranspose`` in NHC layout with an HIO kernel."
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))
ConvTranspose.__doc__ = "``GeneralConvTranspose`` in NHWC layout with an HWIO kernel."


# --- normalization ----------------------------------------------------------------------


def BatchNorm(
    axis: Any = (0, 1, 2),
    epsilon: float = 1e-5,
    center: bool = True,
    scale: bool = True,
    beta_init: Callable = zeros,
    gamma_init: Callable = ones,
) -> Layer:
    """Batch normalization over ``axis`` (``nn.standardize`` with ``epsilon``),
    then ``gamma * z + beta`` with parameters of the shape of the other axes
    (``()`` in place of one that ``center``/``scale`` turns off). No running
    statistics, as JAX's stax."""
    axis = (axis,) if np.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, rng=None, **kwargs):
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = _nn.standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z

    return init_fun, apply_fun


# --- elementwise layers -----------------------------------------------------------------


def elementwise(fun: Callable, **fun_kwargs: Any) -> Layer:
    """A layer without parameters applying ``fun(inputs, **fun_kwargs)``."""
    f = functools.partial(fun, **fun_kwargs) if fun_kwargs else fun

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, rng=None, **kwargs):
        return f(inputs)

    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(_nn.relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(_nn.log_softmax, axis=-1)
Softmax = elementwise(_nn.softmax, axis=-1)
Softplus = elementwise(_nn.softplus)
Sigmoid = elementwise(_nn.sigmoid)
Elu = elementwise(_nn.elu)
LeakyRelu = elementwise(_nn.leaky_relu)
Selu = elementwise(_nn.selu)
Gelu = elementwise(_nn.gelu)


# --- pooling ----------------------------------------------------------------------------


def _window_sizes(inputs, window_shape, strides, padding, spec):
    """How many input elements each pooling window covers (its padding left
    out), with size-1 axes where the batch and channel axes are."""
    if spec is None:
        non_spatial = (0, inputs.ndim - 1)
    else:
        non_spatial = (spec.index("N"), spec.index("C"))
    spatial_shape = tuple(inputs.shape[i] for i in range(inputs.ndim) if i not in non_spatial)
    spatial_window = tuple(w for i, w in enumerate(window_shape) if i not in non_spatial)
    spatial_strides = tuple(s for i, s in enumerate(strides) if i not in non_spatial)
    one = jnp.ones(spatial_shape, dtype=inputs.dtype)
    sizes = lax.reduce_window(one, 0.0, lax.add, spatial_window, spatial_strides, padding)
    for i in sorted(non_spatial):
        sizes = jnp.expand_dims(sizes, i)
    return sizes


def _pooling_layer(reducer: Callable, init_val: float, average: bool, what: str) -> Callable:
    def PoolingLayer(
        window_shape: Sequence[int],
        strides: Sequence[int] | None = None,
        padding: str = "VALID",
        spec: str | None = None,
    ) -> Layer:
        window_shape = tuple(window_shape)
        strides = tuple(strides) if strides else (1,) * len(window_shape)
        if spec is None:
            non_spatial = (0, len(window_shape) + 1)  # NHWC
        else:
            non_spatial = (spec.index("N"), spec.index("C"))
        for i in sorted(non_spatial):
            window_shape = window_shape[:i] + (1,) + window_shape[i:]
            strides = strides[:i] + (1,) + strides[i:]
        n_axis = non_spatial[0]

        def init_fun(rng, input_shape):
            output_shape = _output_shape(
                lambda x: lax.reduce_window(x, init_val, reducer, window_shape, strides, padding),
                input_shape,
                n_axis,
                n_axis,
            )
            return output_shape, ()

        def apply_fun(params, inputs, rng=None, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, window_shape, strides, padding)
            if average:
                return out / _window_sizes(inputs, window_shape, strides, padding, spec)
            return out

        return init_fun, apply_fun

    PoolingLayer.__name__ = PoolingLayer.__qualname__ = what
    PoolingLayer.__doc__ = (
        f"{what}(window_shape, strides=None, padding='VALID', spec=None): pooling over "
        "the spatial axes (``spec`` names the layout, default NHWC)"
        + (", each window's sum divided by its number of (unpadded) inputs" if average else "")
        + "."
    )
    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -np.inf, False, "MaxPool")
SumPool = _pooling_layer(lax.add, 0.0, False, "SumPool")
AvgPool = _pooling_layer(lax.add, 0.0, True, "AvgPool")


# --- shape layers and combinators -------------------------------------------------------


def _flatten():
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, rng=None, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


#: Flattens all but the leading (batch) axis.
Flatten = _flatten()


def _identity():
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, rng=None, **kwargs):
        return inputs

    return init_fun, apply_fun


#: Returns its input.
Identity = _identity()


def FanOut(num: int) -> Layer:
    """``num`` copies of the input, as a list (for :func:`parallel`)."""

    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, rng=None, **kwargs):
        return [inputs] * num

    return init_fun, apply_fun


def _fan_in_sum():
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, rng=None, **kwargs):
        return sum(inputs)

    return init_fun, apply_fun


#: The sum of a list of inputs.
FanInSum = _fan_in_sum()


def FanInConcat(axis: int = -1) -> Layer:
    """A list of inputs concatenated along ``axis``."""

    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        first = tuple(input_shape[0])
        return first[:ax] + (size,) + first[ax + 1 :], ()

    def apply_fun(params, inputs, rng=None, **kwargs):
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


_DROPOUT_KEY = (
    "Dropout layer requires apply_fun to be called with a PRNG key argument. That is, "
    "instead of `apply_fun(params, inputs)`, call it like `apply_fun(params, inputs, rng)` "
    "where `rng` is a PRNG key (e.g. from `srcjax.random.key`)."
)


def _dropout_needs_key():
    raise ValueError(_DROPOUT_KEY)


def Dropout(rate: float, mode: str = "train") -> Layer:
    """Dropout with JAX stax's convention: in ``mode="train"`` each input is
    *kept* with probability ``rate`` and the kept ones scaled by ``1 / rate``;
    other modes return the input. ``apply_fun`` needs ``rng`` (a ValueError
    without it, as JAX)."""

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, rng=None, **kwargs):
        if rng is None:
            _dropout_needs_key()
        if mode == "train":
            keep = random.bernoulli(rng, rate, inputs.shape)
            return jnp.where(keep, inputs / rate, 0)
        return inputs

    return init_fun, apply_fun


def serial(*layers: Layer) -> Layer:
    """The layers applied one after the other. ``init_fun`` gives each layer the
    key ``split(rng)[1]`` of a running ``rng``; ``apply_fun`` gives each the row
    of ``split(rng, len(layers))`` (when ``rng`` is given), as JAX."""
    nlayers = len(layers)
    init_funs = tuple(layer[0] for layer in layers)
    apply_funs = tuple(layer[1] for layer in layers)
    no_keys = (None,) * nlayers

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, rng=None, **kwargs):
        rngs = no_keys if rng is None else random.split(rng, nlayers)
        for fun, param, key in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=key, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """The layers applied side by side: the ``k``-th to the ``k``-th input of a
    sequence (often after :func:`FanOut`, before :data:`FanInSum`); keys are the
    rows of ``split(rng, len(layers))``."""
    nlayers = len(layers)
    init_funs = tuple(layer[0] for layer in layers)
    apply_funs = tuple(layer[1] for layer in layers)
    no_keys = (None,) * nlayers

    def init_fun(rng, input_shape):
        rngs = random.split(rng, nlayers)
        made = [init(k, shape) for init, k, shape in zip(init_funs, rngs, input_shape)]
        return tuple(m[0] for m in made), tuple(m[1] for m in made)

    def apply_fun(params, inputs, rng=None, **kwargs):
        rngs = no_keys if rng is None else random.split(rng, nlayers)
        outs = []
        for fun, param, x, key in zip(apply_funs, params, inputs, rngs):
            outs.append(fun(param, x, rng=key, **kwargs))
        return outs

    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[tuple], Layer]) -> Layer:
    """A layer made by ``make_layer(input_shape)`` once the input's shape is
    known (at ``init_fun`` and at each ``apply_fun`` call).

    Its ``apply_fun`` runs eagerly only: inside ``grad``/``jit``/``vmap``,
    srcjax cannot yet inline the ``apply_fun`` of a layer made at apply time
    (local functions returned through two factories); make the layer at module
    level there."""

    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, rng=None, **kwargs):
        _, apply = make_layer(inputs.shape)
        return apply(params, inputs, rng=rng, **kwargs)

    return init_fun, apply_fun
