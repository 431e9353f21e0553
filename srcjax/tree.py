"""``srcjax.tree``: the short names of :mod:`srcjax.tree_util`, as ``jax.tree``
(https://docs.jax.dev/en/latest/jax.tree.html): ``srcjax.tree.map(f, params)``."""

from __future__ import annotations

from . import tree_util as _tu

all = _tu.tree_all  # noqa: A001 - JAX's name
flatten = _tu.tree_flatten
leaves = _tu.tree_leaves
map = _tu.tree_map  # noqa: A001 - JAX's name
reduce = _tu.tree_reduce
structure = _tu.tree_structure
transpose = _tu.tree_transpose
unflatten = _tu.tree_unflatten

__all__ = [
    "all",
    "flatten",
    "leaves",
    "map",
    "reduce",
    "structure",
    "transpose",
    "unflatten",
]
