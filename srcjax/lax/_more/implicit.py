"""Implicit differentiation: ``jax.lax.custom_root`` and
``custom_linear_solve``, with the ``ad.implicit_*`` primitives that give
their derivatives (or refuse the ones JAX refuses)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from ...primitives.control import stop_gradient as _stop_gradient
from ...primitives.elementwise import defderiv as _defderiv
from ...primitives.registry import Primitive, register

# implicit differentiation


def _first_order(x):
    """Identity; its derivative rules go through ``ad.implicit_once``, whose own
    rules raise: a second derivative of ``custom_root``/``custom_linear_solve``
    is refused rather than silently wrong."""
    return x


def _implicit_once(x):
    """Identity; differentiating it raises NotImplementedError."""
    return x


def _implicit_refused(x):
    """Raises: srcjax computes only first derivatives of custom_root and
    custom_linear_solve (reached only by a second derivative)."""
    raise NotImplementedError(
        "srcjax: lax.custom_root / lax.custom_linear_solve support first derivatives only"
        " (JAX supports higher ones)"
    )


_first = register(Primitive("ad.implicit_first", _first_order, kind="internal"))
_once = register(Primitive("ad.implicit_once", _implicit_once, kind="internal"))
_refused = register(
    Primitive("ad.implicit_refused", _implicit_refused, kind="internal", differentiable=False)
)
_refused.samples = lambda rng: []
_once.samples = lambda rng: []  # its rules raise by design


def _first_x(g, ans):
    return _once(g)


def _once_x(g, ans, x):
    return g * _refused(x)


_defderiv(_first, _first_x)
_defderiv(_once, _once_x)
_first.def_batch(lambda c: c.rebuild())
_once.def_batch(lambda c: c.rebuild())


def _implicit_value(x0, delta):
    """``x0`` in value; derivatives those of ``delta`` (first order only)."""
    d = _first(delta)
    return x0 + (d - _stop_gradient(d))


def custom_root(
    f: Callable, initial_guess: Any, solve: Callable, tangent_solve: Callable, has_aux: bool = False
) -> Any:
    """A root of ``f`` found by ``solve`` (jax.lax.custom_root).

    The value is ``solve(f, initial_guess)`` (with ``has_aux``: ``(root,
    aux)``), under jit and vmap too. Derivatives are NOT implemented yet: JAX
    differentiates the root implicitly (``dx = -J^{-1} df/dtheta``, solved by
    ``tangent_solve``); srcjax cannot yet transform the user's ``f`` inside
    this function, so a derivative through the root raises
    NotImplementedError at run time rather than differentiating ``solve``'s
    iterations (which would be silently wrong for bisection and the like).

    Args:
        f: ``f(x)`` of an array ``x`` giving an array of its shape.
        initial_guess: array.
        solve: ``solve(f, initial_guess)`` giving the root (and aux).
        tangent_solve: ``tangent_solve(g, y)`` solving ``g(x) = y``; not called.
        has_aux: whether ``solve`` returns ``(root, aux)``.

    Returns:
        The root (``initial_guess``' shape and dtype), or ``(root, aux)``.

    Under a transform, ``solve`` must be a module-level function (see
    :func:`custom_linear_solve`).
    """
    out = solve(f, initial_guess)
    if has_aux:
        sol = out[0]
    else:
        sol = out
    # f at the root ties the result to what f closes over, so that a derivative
    # in those reaches the refusing rule (a bisection's result has no
    # differentiable path to them at all)
    root = _no_root_derivative(sol, f(_stop_gradient(sol)))
    if has_aux:
        result = (root, _stop_gradient(out[1]))
    else:
        result = root
    return result


def _no_root_derivative_impl(x, residual):
    """``x``; its derivative rules raise (see ``custom_root``)."""
    return x


def _root_refused(x):
    """Raises: derivatives of lax.custom_root are not implemented."""
    raise NotImplementedError(
        "srcjax: derivatives of lax.custom_root are not implemented yet (JAX differentiates"
        " the root implicitly); wrap the root in lax.stop_gradient or differentiate a"
        " solver written with srcjax operations directly"
    )


_no_root_derivative = register(
    Primitive("ad.custom_root_value", _no_root_derivative_impl, kind="internal")
)
_root_refused_p = register(
    Primitive("ad.custom_root_refused", _root_refused, kind="internal", differentiable=False)
)
_root_refused_p.samples = lambda rng: []
_no_root_derivative.samples = lambda rng: []  # its rules raise by design


def _no_root_derivative_x(g, ans, x):
    return g * _root_refused_p(x)


def _no_root_derivative_r(g, ans, residual):
    return _root_refused_p(residual) * 0


_no_root_derivative.def_vjp(_no_root_derivative_x, _no_root_derivative_r)
_no_root_derivative.def_jvp(_no_root_derivative_x, _no_root_derivative_r)
_no_root_derivative.def_batch(lambda c: c.rebuild() if c.batched("x") else None)


def custom_linear_solve(
    matvec: Callable,
    b: Any,
    solve: Callable,
    transpose_solve: Optional[Callable] = None,
    symmetric: bool = False,
    has_aux: bool = False,
) -> Any:
    """The solution ``x`` of ``matvec(x) = b`` by ``solve``, differentiated
    implicitly (jax.lax.custom_linear_solve).

    The value is ``solve(matvec, b)`` (with ``has_aux``: its first element;
    ``aux`` is returned with the derivative stopped). Its derivative, in ``b``
    and in what ``matvec`` closes over, is ``dx = solve(matvec, db - dA x)``:
    computed as the derivative of ``solve(matvec, b - matvec(x))`` through its
    right-hand side, which is exact when ``solve`` is linear in it (a direct
    solve; JAX's requirement ``solve(matvec, matvec(x)) == x``). srcjax
    differentiates ``solve`` in reverse mode too, so ``transpose_solve`` and
    ``symmetric`` are accepted and not used. First derivatives only (grad, jvp,
    vmap and jit of them); a second derivative raises NotImplementedError.
    Under a transform, ``solve`` must be a module-level function (or a
    srcjax/jnp one): a ``solve`` defined inside the calling function cannot
    yet be handed ``matvec`` (srcjax does not pass one local function to
    another; the transform then fails with a no-derivative-rule or NameError).

    Args:
        matvec: the linear map ``x -> A x`` on arrays of ``b``'s shape.
        b: array (a pytree of arrays is not supported).
        solve: ``solve(matvec, b)`` giving ``x`` (and aux).
        transpose_solve: accepted, unused.
        symmetric: accepted, unused.
        has_aux: whether ``solve`` returns ``(x, aux)``.

    Returns:
        ``x`` (``b``'s shape), or ``(x, aux)``.
    """
    out = solve(matvec, b)
    if has_aux:
        sol = out[0]
    else:
        sol = out
    x0 = _stop_gradient(sol)
    r = b - matvec(x0)
    if has_aux:
        delta = solve(matvec, r)[0]
    else:
        delta = solve(matvec, r)
    x = _implicit_value(x0, delta)
    if has_aux:
        result = (x, _stop_gradient(out[1]))
    else:
        result = x
    return result
