"""Helpers of generated derivative code: ``x // y`` (``ad.floordiv``), and
``jnp.array``'s adjoint differentiated again (it needs ``ad.cotangent_like``).
"""

from __future__ import annotations

import numpy as np

from ..registry import Primitive, register
from .cotangents import cotangent_like


# -- ``x // y`` in generated derivative code ------------------------------------------
def _floordiv(x, y):
    """``x // y`` as the user's code means it inside a JAX transform: Python
    numbers (and other objects) as Python computes them (``7 // 0`` raises
    ZeroDivisionError), and where an operand is an array or NumPy scalar,
    ``jnp.floor_divide`` (JAX's promotion, and XLA's integer division by zero:
    ``-1``/``-2`` signed, the maximum unsigned, where NumPy's ``//`` gives 0).
    grad/jvp/vjp/linearize code spells the user's ``//`` so (``driver.finish``), as
    jit and vmap already call ``jnp.floor_divide``."""
    arrays = (np.ndarray, np.generic)
    numbers = arrays + (int, float, bool)
    if (isinstance(x, arrays) or isinstance(y, arrays)) and (
        isinstance(x, numbers) and isinstance(y, numbers)
    ):
        from ..elementwise import floor_divide as _fd

        return _fd.impl(x, y)
    return x // y


floordiv = register(Primitive("ad.floordiv", _floordiv, kind="internal", differentiable=False))
# (Python numbers known now: a shape computation, `D // nh`, that jit folds)
floordiv.facts(static_for_constants=True)
floordiv.samples = lambda rng: [
    ((np.array([7, -7, 0, 5, -5], np.int32), np.array([0, 0, 0, 2, 2], np.int32)), {}),
    ((np.array([[7], [0]], np.uint8), np.array([0, 3], np.uint8)), {}),
    ((rng.normal(size=(2, 3)), 0.75), {}),
    ((np.int32(7), np.int32(0)), {}),
    ((9, 4), {}),
]


def _floordiv_batch(c):
    """Elementwise with broadcasting: the per-example ranks aligned, as for
    ``jnp.floor_divide`` (``batch_rules.elementwise_rule``)."""
    from ..batch_rules.elementwise import elementwise_rule

    return elementwise_rule(c)


floordiv.def_batch(_floordiv_batch)


# ---------------------------------------------------------------------------
# jnp.array's adjoint, differentiated again (defined here: it needs cotangent_like)

from ..creation import array as _array_p  # noqa: E402
from ..creation import array_adjoint as _array_adjoint_p  # noqa: E402


def _array_adjoint_vjp_g(h, ans, g, like):
    """``h``, the cotangent of a list like ``like``, is sparse: an entry that got
    none (the constant of ``jnp.array([x, 2.0])``) is a hole, zeros here
    (``grad(grad(f))`` raised ``float * None``)."""
    return _array_p(cotangent_like(h, ans))


_array_adjoint_p.def_vjp(_array_adjoint_vjp_g)
