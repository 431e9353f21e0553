"""Shared pieces of the batching rules: registering a runtime helper
(:func:`_reg`), attaching a rule to primitive objects (:func:`_def`), and
the small rule builders several families use (:func:`_same`,
:func:`_materialized`, :func:`_axis_rule`, ...)."""

from __future__ import annotations

import gast

from ...frontend import nodes as N
from ..registry import REGISTRY, Primitive, register


def _reg(public, impl, differentiable=True):
    if public in REGISTRY:
        return REGISTRY[public]
    return register(Primitive(public, impl, kind="internal", differentiable=differentiable))


def _is_name(node):
    return isinstance(node, gast.Name)


def _same(c):
    """The primitive applied to the batched operands as they are (it acts on
    trailing axes or elementwise, or broadcasts over leading axes)."""
    return c.rebuild()


def _materialized(c, *names):
    """Every operand ``names`` made batched, then the same call."""
    changes = {}
    for n in names:
        v = c.bound.get(n)
        if (
            v is not None
            and not isinstance(v, list)
            and not (isinstance(v, gast.Constant) and v.value is None)
        ):
            changes[n] = c.materialize(v)
    return c.rebuild(**changes)


def _def_rules(prim, operand, vjp, jvp):
    """The derivative rules of ``prim``'s differentiable ``operand``: its vjp
    and its jvp (a runtime helper's rules, attached next to its definition)."""
    prim.def_vjp(**{operand: vjp})
    prim.def_jvp(**{operand: jvp})


def _def(prims, rule):
    """Attach the batching rule ``rule`` to the primitives ``prims``, the
    :class:`Primitive` objects themselves (imported from their family modules,
    as JAX's ``primitive_batchers`` is keyed by primitive): never by name, so a
    misspelling is an ImportError and no rule is silently lost."""
    for p in prims:
        if not isinstance(p, Primitive):
            raise TypeError(f"batching rule {rule!r}: {p!r} is not a Primitive")
        p.def_batch(rule)


def _axis_rule(xname, axis="axis", others=()):
    def rule(c):
        changes = {}
        x = c.arg(xname)
        if not c.batched(xname):
            x = c.materialize(x)
            changes[xname] = x
        for o in others:
            v = c.bound.get(o)
            if v is not None and not isinstance(v, gast.Constant):
                changes[o] = c.lift(c.materialize(v), x) if c.batched(o) else c.materialize(v)
        changes[axis] = c.shift_axis(axis, x)
        return c.rebuild(**changes)

    return rule


def _example(c, x):
    """One example of ``x`` (for static shape queries)."""
    if c.bp.is_batched(x):
        return gast.Subscript(value=N.clone(x), slice=N.const(0), ctx=gast.Load())
    return N.clone(x)


def _helper_materialized(*names):
    def rule(c):
        return _materialized(c, *names)

    return rule


def _static_operand(c, name):
    """Whether operand ``name`` is absent or a literal (``prepend=0.0``)."""
    v = c.bound.get(name)
    return v is None or isinstance(v, gast.Constant)


def _unbatched_result(c):
    """The result does not depend on the batched operands' values (a static
    flag, or a shape check): the same for every example."""
    return c.rebuild(), False


def _lifted_to_shape(c, x, shape, base):
    """``name = ad.expand_to_rank(x, len(ad.as_shape(shape)))`` emitted first (``name`` from
    ``x``'s name, or ``base``): batched ``x`` with its per-example rank raised to
    that of a static ``shape`` (broadcast_to, tile, full)."""
    return c.let(
        (x.id if _is_name(x) else base) + "_al",
        N.call("ad.expand_to_rank", [x, N.call("len", [N.call("ad.as_shape", [shape])])]),
    )


def _shifted_static_rule(pname, default, unbatched):
    """The rule of a helper whose static ``pname`` counts leading (batch) axes
    (``ad.expand_to_rank``'s ``nb``, ``ad.batch_broadcast``'s ``axis``, ``ad.fold_axes``'s
    ``lead``): under an outer vmap one more (``None`` reads as ``default``). A
    loop over the examples where ``pname`` is not static or an operand named in
    ``unbatched`` is batched."""

    def rule(c):
        if any(c.batched(p) for p in unbatched if p in c.bound):
            return None
        ok, value = c.static(pname)
        if not ok:
            return None
        return c.rebuild(**{pname: N.const((default if value is None else value) + 1)})

    return rule


def _flat_rows(c, x, base="x"):
    """``name = reshape(x, (size, -1))`` emitted first (``name`` from ``x``'s
    name, or ``base``): batched ``x`` with every example flattened (the rules of
    ``axis=None``: take, norm, argmax, cumsum, roll, repeat ...)."""
    return c.let(
        (x.id if _is_name(x) else base) + "_flat",
        N.call(
            "jnp.reshape", [N.clone(x), gast.Tuple(elts=[c.size, N.const(-1)], ctx=gast.Load())]
        ),
    )
