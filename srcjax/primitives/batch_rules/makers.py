"""Rule makers for vmap's runtime helpers: one call gives a family of helpers
their derivative rules (see :mod:`srcjax.primitives.makers`, whose makers these
follow; a maker's rules inline as templates like hand-written ones, their
closure cells resolved as globals, so the generated code is the same).

The helpers here are per-example products of batched code, ``product(a, b, ab,
bb)`` (``ad.bmatmul``, ``ad.bdot``), with flags ``ab`` / ``bb`` saying which
operand carries the batch axis, and their cotangent helpers ``left(g, a, b, ab,
bb)`` (``a``'s cotangent for the output cotangent ``g``) and ``right(g, a, b,
ab, bb)`` (``b``'s).
"""

from __future__ import annotations

from typing import Any

from ..ad.sums import broadcast_to
from ..creation import shape as shape_

__all__ = ["def_flagged_bilinear", "def_flagged_bilinear_cotangents"]


def def_flagged_bilinear(product: Any, left: Any, right: Any) -> None:
    """The rules of a bilinear ``product(a, b, ab, bb)`` whose cotangents are
    ``left(g, a, b, ab, bb)`` (for ``a``) and ``right(g, a, b, ab, bb)`` (for
    ``b``): the jvps are ``product(t, b, ...)`` and ``product(a, t, ...)``."""

    def vjp_a(g, ans, a, b, ab, bb):
        return left(g, a, b, ab, bb)

    def vjp_b(g, ans, a, b, ab, bb):
        return right(g, a, b, ab, bb)

    def jvp_a(t, ans, b, ab, bb):
        return product(t, b, ab, bb)

    def jvp_b(t, ans, a, ab, bb):
        return product(a, t, ab, bb)

    product.def_vjp(vjp_a, vjp_b)
    product.def_jvp(jvp_a, jvp_b)


def def_flagged_bilinear_cotangents(product: Any, left: Any, right: Any) -> None:
    """The rules of the cotangent helpers ``left`` and ``right`` of the bilinear
    ``product`` (jacfwd(jacrev(f)) and jacrev(jacrev(f)) of batched code with a
    product differentiate them).

    ``left(g, a, b)`` is per example ``g @ b.T`` (summed over the examples unless
    ``a`` is batched): bilinear in ``(g, b)``, ``a`` only gives the shape. So its
    jvps are ``left(t, a, b)`` and ``left(g, a, t)``, its vjps
    ``product(h, b)`` (broadcast to ``g``'s shape) and ``right(g, h, b)``.
    ``right(g, a, b)`` (per example ``a.T @ g``) is the mirror image, in
    ``(g, a)``."""

    def left_jvp_g(t, ans, a, b, ab, bb):
        return left(t, a, b, ab, bb)

    def left_jvp_b(t, ans, g, a, ab, bb):
        return left(g, a, t, ab, bb)

    def left_vjp_g(h, ans, g, b, ab, bb):
        return broadcast_to(product(h, b, ab, bb), shape_(g))

    def left_vjp_b(h, ans, g, b, ab, bb):
        return right(g, h, b, ab, bb)

    def right_jvp_g(t, ans, a, b, ab, bb):
        return right(t, a, b, ab, bb)

    def right_jvp_a(t, ans, g, b, ab, bb):
        return right(g, t, b, ab, bb)

    def right_vjp_g(h, ans, g, a, ab, bb):
        return broadcast_to(product(a, h, ab, bb), shape_(g))

    def right_vjp_a(h, ans, g, a, ab, bb):
        return left(g, a, h, ab, bb)

    left.def_jvp(g=left_jvp_g, b=left_jvp_b)
    left.def_vjp(g=left_vjp_g, b=left_vjp_b)
    right.def_jvp(g=right_jvp_g, a=right_jvp_a)
    right.def_vjp(g=right_vjp_g, a=right_vjp_a)
