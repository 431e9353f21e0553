"""How vmap's generated function receives its parameters and returns its
result (:class:`BatchSpec`: in_axes, out_axes, axis size and name)."""

from __future__ import annotations

from typing import Any, List


class BatchSpec:
    """How the generated function receives its parameters and returns its result.

    Attributes:
        in_axes: parameter name -> ``None`` (unbatched), an int (the mapped
            axis of an array), or a pytree prefix of ints/None (for a container).
        param_kinds: parameter name -> ``"leaf"`` or ``"tree"``.
        out_axes: ``None``, an int, or a pytree prefix for the output.
        axis_size: static batch size (``vmap(axis_size=...)``), or None.
        bound: leading parameter name -> binding name (``functools.partial``
            arguments, unbatched constants captured at transform time).
        axis_name: the name collectives (``lax.psum(x, name)``) use for the
            mapped axis, or None.
    """

    def __init__(
        self,
        in_axes,
        param_kinds,
        out_axes=0,
        axis_size=None,
        bound=None,
        skeletons=None,
        axis_name=None,
        user_names=frozenset(),
        user_none=frozenset(),
    ):
        #: the user's variables the user's code itself sets to None
        self.user_none = user_none or frozenset()
        #: the variables whose per-example branch values are checked (see
        #: ad.check_branch_values): None for a user function (every variable not
        #: made by srcjax), else the user's variables of generated code
        self.user_names = user_names
        self.axis_name = axis_name
        self.skeletons = skeletons or {}
        self.in_axes = in_axes
        self.param_kinds = param_kinds
        self.out_axes = out_axes
        self.axis_size = axis_size
        self.bound = bound or {}


def _leaf_axes(spec) -> List[Any]:
    if isinstance(spec, dict):
        return [a for v in spec.values() for a in _leaf_axes(v)]
    if isinstance(spec, (list, tuple)):
        return [a for v in spec for a in _leaf_axes(v)]
    return [spec]


# --------------------------------------------------------------------------- rule context
