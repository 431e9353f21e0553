"""Rule makers: one call gives a whole family of primitives its derivative
rules, where the rules would otherwise be written out again for each member.

A maker defines the rules as small functions over its arguments (primitives);
they inline as templates like any rule (:mod:`srcjax.transforms.rules`
resolves a rule's closure cells as it resolves module globals), so the
generated derivative code is the same as with rules written out by hand.
"""

from __future__ import annotations

from typing import Any

__all__ = ["def_bilinear", "def_bilinear_cotangents"]


def def_bilinear(product: Any, left: Any = None, right: Any = None) -> None:
    """Rules of a bilinear ``product(a, b, precision=None,
    preferred_element_type=None)``, JAX's signature of ``dot``, ``matmul``,
    ``inner`` and ``vdot``.

    The jvps are ``product(t, b)`` and ``product(a, t)`` (with the same
    ``preferred_element_type``). Given the cotangent helpers ``left(g, a, b)``
    and ``right(g, a, b)`` (``ad.matmul_left`` / ``ad.matmul_right``) the vjps are
    ``left(g, a, b)`` and ``right(g, a, b)``, and the helpers get their own rules
    (:func:`def_bilinear_cotangents`); without them the caller defines the vjps.
    """

    def jvp_a(t, ans, b, preferred_element_type=None):
        return product(t, b, preferred_element_type=preferred_element_type)

    def jvp_b(t, ans, a, preferred_element_type=None):
        return product(a, t, preferred_element_type=preferred_element_type)

    product.def_jvp(jvp_a, jvp_b)
    if left is None:
        return

    def vjp_a(g, ans, a, b):
        return left(g, a, b)

    def vjp_b(g, ans, a, b):
        return right(g, a, b)

    product.def_vjp(vjp_a, vjp_b)
    def_bilinear_cotangents(product, left, right)


def def_bilinear_cotangents(product: Any, left: Any, right: Any) -> None:
    """Rules of the cotangent helpers of a bilinear ``product(a, b)``
    (``matmul``, ``dot``): ``left(g, a, b)`` is ``a``'s cotangent for the output
    cotangent ``g``, ``right(g, a, b)`` is ``b``'s.

    Both helpers are linear in ``g`` and in the operand they keep, so (with
    ``h`` the cotangent and ``t`` the tangent of the helper's output):

    - ``left``: the vjp for ``g`` is ``product(h, b)``, for ``b`` it is
      ``right(g, h, b)``; the jvps are ``left(t, a, b)`` and ``left(g, a, t)``.
    - ``right``: the vjp for ``g`` is ``product(a, h)``, for ``a`` it is
      ``left(g, a, h)``; the jvps are ``right(t, a, b)`` and ``right(g, t, b)``.

    ``a`` in ``left`` (and ``b`` in ``right``) only gives the shape: no rule.
    """

    def left_vjp_g(h, ans, b):
        return product(h, b)

    def left_vjp_b(h, ans, g, b):
        return right(g, h, b)

    def left_jvp_g(t, ans, a, b):
        return left(t, a, b)

    def left_jvp_b(t, ans, g, a):
        return left(g, a, t)

    def right_vjp_g(h, ans, a):
        return product(a, h)

    def right_vjp_a(h, ans, g, a):
        return left(g, a, h)

    def right_jvp_g(t, ans, a, b):
        return right(t, a, b)

    def right_jvp_a(t, ans, g, b):
        return right(g, t, b)

    left.def_vjp(left_vjp_g, None, left_vjp_b)
    left.def_jvp(left_jvp_g, None, left_jvp_b)
    right.def_vjp(right_vjp_g, right_vjp_a)
    right.def_jvp(right_jvp_g, right_jvp_a)
