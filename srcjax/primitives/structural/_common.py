"""Registration helpers shared by the structural modules (``kind="structural"``
primitives and internal ones) and their sample inputs.
"""

from __future__ import annotations

from srcjax.primitives.registry import Primitive, register


def _structural(public, impl, *aliases, differentiable=True):
    return register(
        Primitive(public, impl, kind="structural", differentiable=differentiable), *aliases
    )


def _internal(public, impl, differentiable=True):
    return register(Primitive(public, impl, kind="internal", differentiable=differentiable))


def _rand(rng, *shape):
    return rng.normal(size=shape)
