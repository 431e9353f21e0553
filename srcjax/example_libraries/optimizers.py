"""``srcjax.example_libraries.optimizers``: JAX's example optimizer library.

The API and the arithmetic follow ``jax.example_libraries.optimizers`` (JAX
0.10.2, https://docs.jax.dev/en/latest/jax.example_libraries.optimizers.html):
an optimizer is a triple ``(init_fun, update_fun, get_params)``::

    opt_init, opt_update, get_params = optimizers.adam(1e-3)
    opt_state = opt_init(params)                  # params: any pytree of arrays
    opt_state = opt_update(i, grads, opt_state)   # i: the step number (int)
    params = get_params(opt_state)

``opt_state`` is an :class:`OptimizerState`, a pytree (so it goes through
``jit``, ``vmap`` and ``grad`` like any argument) whose leaves are the per-leaf
optimizer states. A step size is a number or a *schedule*, a function of the
step number (``exponential_decay(...)``, ...). The same steps give JAX's numbers
(float32 arithmetic in the same order; checked in tests/test_optimizers.py
against values recorded from JAX).

The functions are plain srcjax code: a ``srcjax.jit``-ted training step inlines
``opt_update`` as it inlines the user's own functions, so the whole step is one
generated function (``srcjax.source(step, ...)`` shows it), and ``grad`` through
an update (meta-learning) differentiates it.

Write your own optimizer with the :func:`optimizer` decorator, as in JAX: it
turns a maker of per-array ``(init, update, get_params)`` into one on pytrees.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .. import numpy as jnp
from ..tree_util import register_pytree_node, tree_flatten, tree_map, tree_unflatten

__all__ = [
    "InitFn",
    "JoinPoint",
    "Optimizer",
    "OptimizerState",
    "ParamsFn",
    "Schedule",
    "UpdateFn",
    "adagrad",
    "adam",
    "adamax",
    "clip_grads",
    "constant",
    "exponential_decay",
    "inverse_time_decay",
    "l2_norm",
    "make_schedule",
    "momentum",
    "nesterov",
    "optimizer",
    "pack_optimizer_state",
    "piecewise_constant",
    "polynomial_decay",
    "rmsprop",
    "rmsprop_momentum",
    "sgd",
    "sm3",
    "unpack_optimizer_state",
]

#: ``schedule(step_number) -> step_size``
Schedule = Callable[[Any], Any]
#: ``init_fun(params) -> OptimizerState``
InitFn = Callable[[Any], "OptimizerState"]
#: ``update_fun(step, grads, opt_state) -> OptimizerState``
UpdateFn = Callable[[Any, Any, "OptimizerState"], "OptimizerState"]
#: ``get_params(opt_state) -> params``
ParamsFn = Callable[["OptimizerState"], Any]


class OptimizerState(NamedTuple):
    """An optimizer's state: ``packed_state`` holds, for each leaf of the
    parameter pytree (in ``tree_flatten`` order), the list of that leaf's state
    arrays; ``tree_def`` is the parameter pytree's structure and
    ``subtree_defs`` the structure of each leaf's state. A pytree whose children
    are ``packed_state`` only (the structures are its static data), as JAX's."""

    packed_state: Any
    tree_def: Any
    subtree_defs: Any


def _state_flatten(s: OptimizerState) -> tuple:
    return (s.packed_state,), (s.tree_def, s.subtree_defs)


def _state_unflatten(aux: tuple, children: Any) -> OptimizerState:
    return OptimizerState(children[0], aux[0], aux[1])


register_pytree_node(OptimizerState, _state_flatten, _state_unflatten)


class Optimizer(NamedTuple):
    """``(init_fn, update_fn, params_fn)``: what an optimizer maker returns."""

    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


_TREE_MISMATCH = (
    "optimizer update function was passed a gradient tree that did not match the "
    "parameter tree structure with which it was initialized: parameter tree {} and "
    "grad tree {}."
)
_STATE_MISMATCH = (
    "optimizer update function produced an output structure that did not match its "
    "input structure: input {} and output {}."
)


def optimizer(opt_maker: Callable[..., tuple]) -> Callable[..., Optimizer]:
    """Turn a maker of per-array ``(init, update, get_params)`` functions into a
    maker of :class:`Optimizer` triples on pytrees (``jax.example_libraries.
    optimizers.optimizer``).

    ``init(x0) -> state`` (a pytree of arrays), ``update(i, g, state) -> state``
    (the same structure) and ``get_params(state) -> x`` act on one parameter
    array. The returned ``init_fun`` applies ``init`` to every leaf of a
    parameter pytree; ``update_fun(i, grads, opt_state)`` raises ``TypeError``
    when ``grads`` has another structure than the parameters, or when
    ``update`` changes a state's structure, as JAX's does.
    """

    def tree_opt_maker(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        def tree_init(x0_tree):
            x0_leaves, tree = tree_flatten(x0_tree)
            states_flat = []
            subtrees = []
            for x0 in x0_leaves:
                state_leaves, state_def = tree_flatten(init(x0))
                states_flat.append(state_leaves)
                subtrees.append(state_def)
            return OptimizerState(tuple(states_flat), tree, tuple(subtrees))

        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grad_leaves, tree2 = tree_flatten(grad_tree)
            if tree2 != tree:
                raise TypeError(_TREE_MISMATCH.format(tree, tree2))
            new_flat = []
            for g, state_leaves, state_def in zip(grad_leaves, states_flat, subtrees):
                new_state = update(i, g, tree_unflatten(state_def, state_leaves))
                new_leaves, new_def = tree_flatten(new_state)
                if new_def != state_def:
                    raise TypeError(_STATE_MISMATCH.format(state_def, new_def))
                new_flat.append(new_leaves)
            return OptimizerState(tuple(new_flat), tree, subtrees)

        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            params = []
            for state_leaves, state_def in zip(states_flat, subtrees):
                params.append(get_params(tree_unflatten(state_def, state_leaves)))
            return tree_unflatten(tree, params)

        for made, given in (
            (tree_init, init),
            (tree_update, update),
            (tree_get_params, get_params),
        ):
            made.__doc__ = given.__doc__
        return Optimizer(tree_init, tree_update, tree_get_params)

    tree_opt_maker.__name__ = getattr(opt_maker, "__name__", "optimizer")
    tree_opt_maker.__qualname__ = getattr(opt_maker, "__qualname__", tree_opt_maker.__name__)
    tree_opt_maker.__doc__ = opt_maker.__doc__
    return tree_opt_maker


# --- the optimizers (each: per-array init/update/get_params) -----------------------


def _param_and_zeros(x0):
    """The state ``(x0, zeros_like(x0))``: the parameter and one buffer."""
    return x0, jnp.zeros_like(x0)


def _param_and_two_zeros(x0):
    """The state ``(x0, zeros_like(x0), zeros_like(x0))``: the parameter and two
    buffers."""
    return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)


def _param_of(state):
    """``get_params`` of the optimizers whose state tuple starts with the
    parameter."""
    return state[0]


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: ``x <- x - step_size(i) * g``.

    ``step_size``: a number or a schedule. Returns ``(init_fun, update_fun,
    get_params)``.
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size(i) * g

    def get_params(x):
        return x

    return init, update, get_params


@optimizer
def momentum(step_size, mass):
    """Gradient descent with momentum: ``v <- mass * v + g``, ``x <- x -
    step_size(i) * v`` (``v`` starts at zeros)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    return _param_and_zeros, update, _param_of


@optimizer
def nesterov(step_size, mass):
    """Nesterov's accelerated gradient: ``v <- mass * v + g``, ``x <- x -
    step_size(i) * (mass * v + g)``."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    return _param_and_zeros, update, _param_of


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad with momentum (Duchi et al. 2011): ``s <- s + g**2``, ``m <- (1 -
    momentum) * g / sqrt(s) + momentum * m`` (``0`` where ``s == 0``), ``x <- x -
    step_size(i) * m``."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        g_sq_inv_sqrt = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = (1.0 - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return _param_and_two_zeros, update, _param_of


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp (Tieleman and Hinton 2012): ``a <- gamma * a + (1 - gamma) * g**2``,
    ``x <- x - step_size(i) * g / sqrt(a + eps)``."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    return _param_and_zeros, update, _param_of


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum (Graves 2013): the RMSProp step accumulated in a
    momentum buffer, ``m <- momentum * m + step_size(i) * g / sqrt(a + eps)``,
    ``x <- x - m``."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1.0 - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    return _param_and_two_zeros, update, _param_of


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba 2015, https://arxiv.org/abs/1412.6980): moment
    estimates ``m``, ``v`` with bias correction by ``1 - b**(i + 1)`` (computed in
    the parameter's dtype), ``x <- x - step_size(i) * mhat / (sqrt(vhat) + eps)``."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        mhat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        vhat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps), m, v

    return _param_and_two_zeros, update, _param_of


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax (Adam with the infinity norm, Kingma and Ba 2015): ``u <- max(b2 *
    u, |g|)``, ``x <- x - step_size(i) / (1 - b1**(i + 1)) * m / (u + eps)``."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        lr = step_size(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        return x - lr * m / (u + eps), m, u

    return _param_and_two_zeros, update, _param_of


def _sm3_axis_view(ndim: int, v: Any, axis: int) -> Any:
    """``v`` (one accumulator per index of ``axis``) as an array of ``ndim``
    dimensions that broadcasts along the others."""
    # (a 0-d gradient, ndim 0: v itself, as a parameter of shape (1,))
    index = [None] * axis + [slice(None)] + [None] * (ndim - axis - 1)
    return v[tuple(index)]


def _sm3_other_axes(ndim: int, axis: int) -> tuple:
    return tuple(d for d in range(ndim) if d != axis)


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al. 2019, https://arxiv.org/abs/1901.11150): one accumulator
    vector per axis of each parameter (memory ``sum(shape)`` instead of
    ``prod(shape)``); a 0-d parameter is handled as shape ``(1,)``."""
    step_size = make_schedule(step_size)

    def init(x0):
        x_shape = x0.shape
        x0 = jnp.atleast_1d(x0)
        vs = [jnp.zeros(n, dtype=x0.dtype) for n in x0.shape]
        return x0, jnp.zeros_like(x0), vs, x_shape

    def update(i, g, state):
        x, m, vs, x_shape = state
        accum = _sm3_axis_view(g.ndim, vs[0], 0)
        for axis in range(1, len(vs)):
            accum = jnp.minimum(accum, _sm3_axis_view(g.ndim, vs[axis], axis))
        accum = accum + jnp.square(g)
        accum_inv_sqrt = jnp.where(accum > 0, 1.0 / jnp.sqrt(accum), 0)
        m = (1.0 - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [jnp.max(accum, axis=_sm3_other_axes(x.ndim, j)) for j in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state):
        x, _, _, x_shape = state
        return jnp.reshape(x, x_shape)

    return init, update, get_params


# --- step-size schedules --------------------------------------------------------------


def constant(step_size: Any) -> Schedule:
    """The schedule ``i -> step_size``."""

    def schedule(i):
        return step_size

    return schedule


def exponential_decay(step_size: Any, decay_steps: Any, decay_rate: Any) -> Schedule:
    """``i -> step_size * decay_rate ** (i / decay_steps)``."""

    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)

    return schedule


def inverse_time_decay(
    step_size: Any, decay_steps: Any, decay_rate: Any, staircase: bool = False
) -> Schedule:
    """``i -> step_size / (1 + decay_rate * i / decay_steps)``; with
    ``staircase=True`` the ratio ``i / decay_steps`` is floored."""
    if staircase:

        def schedule(i):
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))

    else:

        def schedule(i):
            return step_size / (1 + decay_rate * i / decay_steps)

    return schedule


def polynomial_decay(
    step_size: Any, decay_steps: Any, final_step_size: Any, power: float = 1.0
) -> Schedule:
    """From ``step_size`` to ``final_step_size`` over ``decay_steps`` steps along
    ``(1 - i / decay_steps) ** power``, then constant."""

    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """``values[k]`` for steps ``i`` with ``k`` boundaries below ``i`` (``i >
    boundaries[k-1]``). ``boundaries`` and ``values`` are sequences, ``values``
    one longer: else ``ValueError``, as JAX."""
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i):
        return values[jnp.sum(i > boundaries)]

    return schedule


def make_schedule(scalar_or_schedule: Any) -> Schedule:
    """A schedule as it is, a number as :func:`constant`; else ``TypeError``."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# --- utilities --------------------------------------------------------------------------


def l2_norm(tree: Any) -> Any:
    """The l2 norm of all the leaves of a pytree together: ``sqrt(sum_leaves
    vdot(x, x))`` (a 0-d array)."""
    leaves, _ = tree_flatten(tree)
    total = 0.0
    for x in leaves:
        total = total + jnp.vdot(x, x)
    return jnp.sqrt(total)


def clip_grads(grad_tree: Any, max_norm: Any) -> Any:
    """Scale a gradient pytree to l2 norm ``max_norm`` when its norm
    (:func:`l2_norm`) is ``max_norm`` or more; unchanged below."""
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


# --- serialization ------------------------------------------------------------------------


class JoinPoint:
    """Marks where a parameter pytree's leaf holds that leaf's optimizer state (a
    second pytree), in :func:`unpack_optimizer_state`'s result."""

    def __init__(self, subtree: Any) -> None:
        self.subtree = subtree

    def __iter__(self):  # (pickles and prints like a container of arrays)
        yield self.subtree

    def __repr__(self) -> str:
        return f"JoinPoint({self.subtree!r})"


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """An :class:`OptimizerState` as a pytree of the parameters' structure whose
    leaves are :class:`JoinPoint`\\ s holding each leaf's state (a picklable form;
    :func:`pack_optimizer_state` inverts it)."""
    states_flat, tree_def, subtree_defs = opt_state
    marks = [JoinPoint(tree_unflatten(d, s)) for s, d in zip(states_flat, subtree_defs)]
    return tree_unflatten(tree_def, marks)


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """The :class:`OptimizerState` that :func:`unpack_optimizer_state` gave
    ``marked_pytree``. A leaf that is not a :class:`JoinPoint` is a ``TypeError``."""
    marks, tree_def = tree_flatten(marked_pytree)
    states_flat = []
    subtree_defs = []
    for mark in marks:
        if not isinstance(mark, JoinPoint):
            raise TypeError(
                "pack_optimizer_state expects a pytree whose leaves are JoinPoints "
                f"(from unpack_optimizer_state), got a leaf of type {type(mark).__name__}"
            )
        leaves, d = tree_flatten(mark.subtree)
        states_flat.append(leaves)
        subtree_defs.append(d)
    return OptimizerState(tuple(states_flat), tree_def, tuple(subtree_defs))
