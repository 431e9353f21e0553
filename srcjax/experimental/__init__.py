"""``srcjax.experimental``: the parts of ``jax.experimental`` srcjax provides.

- :mod:`srcjax.experimental.ode`: ``odeint``, JAX's adaptive Dormand-Prince
  solver with reverse-mode derivatives by the adjoint ODE.
"""

from . import ode

__all__ = ["ode"]
