"""``jax_debug_nans`` / ``jax_debug_infs``: ``FloatingPointError`` where a NaN
(an inf) appears, as JAX raises it (https://docs.jax.dev/en/latest/debugging/flags.html).

What is caught, with the flag on:

- an eager primitive (``jnp.log(-1.0)`` outside any transform) whose result holds
  a NaN (an inf): ``invalid value (nan) encountered in log``, also when the NaN
  came in with an operand (JAX checks every primitive's output);
- ``jit(f)``: as JAX, only the outputs are checked; when one holds a NaN the
  generated function runs again with NumPy's floating-point errors raising
  (``np.errstate(invalid="raise")``; ``divide``/``over`` for infs), which names
  the NumPy operation that made it (``log``, ``divide``: NumPy's names, not
  always lax's ``div``); when none does (a NaN argument) the message names
  ``jit(f)``. A NaN masked inside (``jnp.where(x > 0, jnp.log(x), 0)``) is
  not an error, as in JAX;
- ``grad``, ``value_and_grad``, ``vmap`` (which JAX runs op by op): the generated
  code runs with NumPy's errors raising, so a NaN made anywhere inside, also one
  masked afterwards or one only the forward pass saw (``grad(log)(-1.0)``), raises;
  the outputs are checked too.

Not caught: NaNs made by code that bypasses NumPy's ufuncs (Numba-compiled
loops, the CUDA backend's kernels) unless they reach the outputs.

Off (the default) this costs a read of :data:`srcjax.config.debug_nonfinite`
per eager primitive and per call of a transformed function.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Iterable, Optional

import numpy as np

_cfg = importlib.import_module("srcjax.config")  # the module (srcjax.config is the object)

#: calls of transformed functions under way that already check (a transformed
#: function called inside another one is checked by the outer one)
_active = [0]


def _errstate():
    kw = {}
    if _cfg.debug_nans:
        kw["invalid"] = "raise"
    if _cfg.debug_infs:
        kw["divide"] = kw["over"] = "raise"
    return np.errstate(**kw)


def nonfinite(leaves: Iterable[Any]) -> Optional[str]:
    """``"nan"`` or ``"inf"`` when a floating (complex) leaf holds one that the
    flags on ask for, else None. Containers (dict, list, tuple) are walked."""
    for x in leaves:
        if isinstance(x, dict):
            got = nonfinite(x.values())
        elif isinstance(x, (list, tuple)):
            got = nonfinite(x)
        else:
            dt = getattr(x, "dtype", None)
            if dt is None:
                if not isinstance(x, (float, complex)):
                    continue
            elif dt.kind not in "fc":
                continue
            got = None
            if _cfg.debug_nans and np.isnan(x).any():
                got = "nan"
            elif _cfg.debug_infs and np.isinf(x).any():
                got = "inf"
        if got is not None:
            return got
    return None


def check_eager(public: str, result: Any) -> None:
    """Raise JAX's ``FloatingPointError`` when the result of eager primitive
    ``public`` (``"jnp.log"``) holds a NaN (an inf) the flags ask for."""
    got = nonfinite([result])
    if got is not None:
        name = public.rsplit(".", 1)[-1]
        raise FloatingPointError(f"invalid value ({got}) encountered in {name}")


def _jax_error(e: FloatingPointError) -> FloatingPointError:
    # NumPy: "invalid value encountered in log", "divide by zero encountered in
    # divide", "overflow encountered in exp"; JAX: "invalid value (nan) ..."
    text = str(e)
    what = "nan" if text.startswith("invalid") else "inf"
    return FloatingPointError(f"invalid value ({what}) encountered in {text.rsplit(' in ', 1)[-1]}")


def call_checked(
    call: Callable, args: tuple, kwargs: dict, label: str, leaves: Callable, op_by_op: bool
) -> Any:
    """``call(*args, **kwargs)`` (a transformed function's own call) with the
    checks above; ``label`` (``"jit(f)"``) names it when no operation does,
    ``leaves`` flattens its result (tree_util.tree_leaves), ``op_by_op``: run
    with NumPy's errors raising from the start (grad, vmap) or only again after a
    NaN in the outputs (jit)."""
    _active[0] += 1
    try:
        try:
            if op_by_op:
                with _errstate():
                    out = call(*args, **kwargs)
            else:
                out = call(*args, **kwargs)
                if nonfinite(leaves(out)) is not None:
                    # as JAX: run again to name the operation that made it
                    with _errstate():
                        call(*args, **kwargs)
        except FloatingPointError as e:
            if str(e).startswith("invalid value ("):
                raise
            raise _jax_error(e) from None
    finally:
        _active[0] -= 1
    got = nonfinite(leaves(out))
    if got is not None:
        raise FloatingPointError(f"invalid value ({got}) encountered in {label}")
    return out


def active() -> bool:
    """Whether a transformed function's call that checks is under way."""
    return _active[0] > 0
