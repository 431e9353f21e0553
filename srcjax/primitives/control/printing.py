"""Printing under vmap (``ad.print_examples``): ``srcjax.debug.print`` prints one
line per running example, ``print`` the batch once with masked rows.
"""

from __future__ import annotations

import numpy as np

from .. import hooks
from ..registry import Primitive, register
from ._trees import dict_like


# ============================================================== printing under vmap
def _print_examples(fn, masks, polarities, batched, args, kwargs):
    """``fn(*args, **kwargs)`` (``print`` or ``srcjax.debug.print``) as vmap runs
    it: ``batched[i]`` says whether the ``i``-th of ``args`` then ``kwargs``
    (in order) carries the batch axis; ``masks`` are the per-example flags of the
    per-example ``if``/masked loops around the call (``polarities``: True for
    a then branch or a loop body, False for an else branch), so an example
    that does not run the call is not shown.

    ``srcjax.debug.print`` prints one line per running example (as
    ``jax.debug.print`` under ``vmap``, in example order). ``print`` prints the
    whole batch once; inside a per-example branch or masked loop its batched
    arrays are masked arrays whose entries of the examples not running show as
    ``--`` (rather than the stand-in values those examples compute there)."""
    import builtins

    nargs = len(args)
    values = list(args) + list(kwargs.values())
    active = None
    for m, pol in zip(masks, polarities):
        m = np.asarray(m, dtype=bool)
        m = m if pol else ~m
        active = m if active is None else active & m
    if active is not None and active.ndim == 0:  # (a row of an outer vmap's mask)
        if not active:
            return None
        active = None
    if fn in hooks.PER_EXAMPLE_PRINTS:
        from ..batch_rules.runtime_trees import _tree_row

        size = None
        for v, b in zip(values, batched):
            if b:
                size = _batch_size(v)
                break
        if size is None and active is not None:
            size = active.shape[0]
        if size is None:  # nothing batched: once, as outside vmap
            return fn(*args, **kwargs)
        for row in range(size):
            if active is not None and not active[row]:
                continue
            vals = [_tree_row(v, row) if b else v for v, b in zip(values, batched)]
            fn(*vals[:nargs], **dict(zip(kwargs, vals[nargs:])))
        return None
    if fn is builtins.print and active is not None and not active.all():
        values = [_masked(v, active) if b else v for v, b in zip(values, batched)]
        return fn(*values[:nargs], **dict(zip(kwargs, values[nargs:])))
    return fn(*args, **kwargs)


def _batch_size(v):
    if isinstance(v, dict):
        v = next(iter(v.values()), None)
    elif isinstance(v, (list, tuple)):
        v = v[0] if len(v) else None
        return _batch_size(v) if isinstance(v, (list, tuple, dict)) else np.shape(v)[0]
    return np.shape(v)[0]


def _masked(v, active):
    """``v`` with the rows of the examples not running masked (``--``)."""
    if isinstance(v, dict):
        return dict_like(v, ((k, _masked(x, active)) for k, x in v.items()))
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return type(v)(_masked(x, active) for x in v)
    a = np.asarray(v)
    if a.ndim == 0 or a.shape[0] != active.shape[0]:
        return v
    mask = np.broadcast_to(~active.reshape(active.shape + (1,) * (a.ndim - 1)), a.shape)
    return np.ma.masked_array(a, mask=mask)


print_examples = register(
    Primitive("ad.print_examples", _print_examples, kind="internal", differentiable=False)
).facts(effectful=True, prints_per_example=True)
print_examples.samples = lambda rng: []
