"""Batching rules of products and linear algebra: matmul, einsum, dot, inner,
vdot, outer, tensordot, solve, norm, cross, pinv, solve_triangular and the
adjoint helpers of matmul and dot."""

from __future__ import annotations

import gast

from ...frontend import nodes as N
from ..linalg.bilinear import cross, dot_left, dot_right, matmul_left, matmul_right
from ..linalg.einsum import einsum, einsum_vjp_consts, einsum_vjp_spec, einsum_with_consts
from ..linalg.norm import norm
from ..linalg.products import dot, inner, matmul, outer, tensordot, vdot
from ..linalg.solve import solve
from ..linalg.svd import (
    block_upper,
    diag_blocks_sum,
    matrix_power,
    pinv,
    qr,
    svd,
    svd_embed,
    svd_select,
    upper_right,
)
from ..linalg.triangular import solve_triangular, tri_rhs, tri_unrhs
from ._base import _def, _example, _flat_rows, _helper_materialized, _same
from .runtime_index import _batch_einsum_spec
from .runtime_products import rhs_column, rhs_uncolumn


def _product_operands(c):
    """``a`` and ``b``, cast to ``preferred_element_type`` when one is given (JAX
    computes the product in that type)."""
    a, b = c.arg("a"), c.arg("b")
    ok, pet = c.static("preferred_element_type")
    if ok and pet is None:
        return a, b
    pet = c.arg("preferred_element_type")
    return N.call("ad.astype", [a, pet]), N.call("ad.astype", [b, N.clone(pet)])


def _pet_kw(c):
    """``{"preferred_element_type": ...}`` for a product's ``einsum`` when given."""
    ok, pet = c.static("preferred_element_type")
    return {} if ok and pet is None else {"preferred_element_type": c.arg("preferred_element_type")}


def _matmul(c):
    a, b = _product_operands(c)
    return N.call("ad.bmatmul", [a, b, N.const(c.batched("a")), N.const(c.batched("b"))])


_def([matmul], _matmul)


def _cotangent_rule(helper, operand):
    """The batching rule of a product's cotangent helper (``ad.matmul_left(g, a,
    b)`` ...): the per-example call of ``helper`` (``ad.bmatmul_left`` ...) with
    ``g`` and ``operand`` (the operand whose cotangent it is, ``"a"`` or ``"b"``)
    made batched. The cotangent is per example whatever is batched, and the
    batched helpers sum over the examples where that operand is unbatched."""

    def rule(c):
        g = c.materialize(c.arg("g"))
        a, b = c.arg("a"), c.arg("b")
        if operand == "a":
            a = c.materialize(a)
        else:
            b = c.materialize(b)
        a_flag = operand == "a" or c.batched("a")
        b_flag = operand == "b" or c.batched("b")
        return N.call(helper, [g, a, b, N.const(a_flag), N.const(b_flag)])

    return rule


_def([matmul_left], _cotangent_rule("ad.bmatmul_left", "a"))
_def([matmul_right], _cotangent_rule("ad.bmatmul_right", "b"))


def _einsum(c):
    ops = c.bound["operands"]
    flags = tuple(c.bp.is_batched(o) for o in ops)
    ok, spec = c.static("subscripts")
    if c.batched("subscripts"):
        return None
    if ok and isinstance(spec, str):
        new = N.const(_batch_einsum_spec(spec, flags))
    else:
        new = N.call("ad.batch_einsum_spec", [c.arg("subscripts"), N.const(flags)])
    return c.rebuild(subscripts=new)


_def([einsum], _einsum)


def _einsum_with_consts(c):
    # the constants follow the operands and are never batched: only the operands'
    # terms get the batch label (``ad.batch_einsum_spec`` leaves the terms past its
    # flags as they are)
    if c.batched("subscripts") or c.batched("consts"):
        return None
    flags = tuple(c.bp.is_batched(o) for o in c.bound["operands"])
    new = N.call("ad.batch_einsum_spec", [c.arg("subscripts"), N.const(flags)])
    return c.rebuild(subscripts=new)


def _einsum_vjp_static(c):
    """``ad.einsum_vjp_spec`` / ``ad.einsum_vjp_consts``: functions of the
    operands' per-example shapes and dtype, the same for every example."""
    if c.batched("subscripts") or c.batched("argnum"):
        return None
    return c.rebuild(operands=[_example(c, o) for o in c.bound["operands"]]), False


_def([einsum_with_consts], _einsum_with_consts)
_def([einsum_vjp_spec, einsum_vjp_consts], _einsum_vjp_static)


def _bilinear(kind):
    def rule(c):
        a, b = c.arg("a"), c.arg("b")
        spec = N.call(
            "ad.batch_einsum_spec",
            [
                N.call("ad.bilinear_spec", [N.const(kind), _example(c, a), _example(c, b)]),
                N.const((c.batched("a"), c.batched("b"))),
            ],
        )
        return N.call("jnp.einsum", [spec, a, b], _pet_kw(c))

    return rule


def _dot(c):
    # dot on per-example ranks <= 2 is matmul
    a, b = _product_operands(c)
    return N.call("ad.bdot", [a, b, N.const(c.batched("a")), N.const(c.batched("b"))])


_def([dot], _dot)
_def([inner], _bilinear("inner"))


def _vdot(c):
    a = c.let("a_flat", N.call("jnp.reshape", [c.arg("a"), _flat_shape(c, "a")]))
    b = c.let("b_flat", N.call("jnp.reshape", [c.arg("b"), _flat_shape(c, "b")]))
    spec = {(True, True): "bi,bi->b", (True, False): "bi,i->b", (False, True): "i,bi->b"}[
        (c.batched("a"), c.batched("b"))
    ]
    # vdot conjugates its first operand
    return N.call("jnp.einsum", [N.const(spec), N.call("jnp.conj", [a]), b], _pet_kw(c))


def _flat_shape(c, name):
    if c.batched(name):
        return gast.Tuple(elts=[c.size, N.const(-1)], ctx=gast.Load())
    return N.const((-1,))


_def([vdot], _vdot)


def _outer(c):
    a = c.let("a_flat", N.call("jnp.reshape", [c.arg("a"), _flat_shape(c, "a")]))
    b = c.let("b_flat", N.call("jnp.reshape", [c.arg("b"), _flat_shape(c, "b")]))
    spec = {(True, True): "bi,bj->bij", (True, False): "bi,j->bij", (False, True): "i,bj->bij"}[
        (c.batched("a"), c.batched("b"))
    ]
    return N.call("jnp.einsum", [N.const(spec), a, b])


_def([outer], _outer)


def _tensordot(c):
    ok, axes = c.static("axes")
    if c.batched("axes"):
        return None
    # axes not written as a literal (a constant list or array): passed to the spec
    # helper at run time
    axes_node = N.const(axes) if ok else c.arg("axes")
    a, b = c.arg("a"), c.arg("b")
    spec = N.call(
        "ad.batch_einsum_spec",
        [
            N.call(
                "ad.bilinear_spec",
                [N.const("tensordot"), _example(c, a), _example(c, b), axes_node],
            ),
            N.const((c.batched("a"), c.batched("b"))),
        ],
    )
    return N.call("jnp.einsum", [spec, a, b], _pet_kw(c))


_def([tensordot], _tensordot)


def _solve(c):
    # numpy's solve treats a stacked right-hand side as matrices: with a batched
    # (materialized) `a`, a per-example vector `b` becomes a column first, so the
    # batched call is jnp.linalg.solve itself, with all its derivative rules
    # (per-example batch dimensions of a and of the right-hand side broadcast: both
    # are lifted to the same per-example rank first)
    a = c.materialize(c.arg("a"))
    b = c.materialize(c.arg("b"))
    col = c.let("rhs", N.call("ad.rhs_column", [b, a]))

    def per_example_rank(x):
        return gast.BinOp(left=N.call("jnp.ndim", [x]), op=gast.Sub(), right=N.const(1))

    a_l = c.let("a_lifted", N.call("ad.expand_to_rank", [a, per_example_rank(col)]))
    col_l = c.let("rhs_lifted", N.call("ad.expand_to_rank", [col, per_example_rank(a)]))
    x = c.let("solved", N.call("jnp.linalg.solve", [a_l, col_l]))
    return N.call("ad.rhs_uncolumn", [x, b, a])


_def([solve], _solve)


def _norm(c):
    x = c.arg("x")
    ok, axis = c.static("axis")
    okord, ord_ = c.static("ord")
    if not ok or not okord:
        return None
    if axis is None and ord_ is None:
        flat = _flat_rows(c, x)
        return c.rebuild(x=flat, axis=N.const(1))
    return c.rebuild(axis=c.shift_axis("axis", x))


_def([norm], _norm)
_def([rhs_column], _helper_materialized("b", "a"))
_def([rhs_uncolumn], _helper_materialized("x", "b", "a"))


def _cross_rule(c):
    for p in ("axisa", "axisb", "axisc", "axis"):
        ok, v = c.static(p)
        if not ok or (v is not None and v >= 0):
            return None  # non-negative vector axes: a loop over the examples
    changes = {}
    for p, other in (("a", "b"), ("b", "a")):
        if c.batched(p):
            changes[p] = c.lift(c.arg(p), c.arg(other))
    return c.rebuild(**changes)


_def([cross], _cross_rule)


def _pinv_rule(c):
    if c.batched("rtol") or c.batched("rcond"):
        return None
    return c.rebuild()


_def([pinv], _pinv_rule)
_def(
    [
        qr,
        svd,
        matrix_power,
        upper_right,
        diag_blocks_sum,
    ],
    _same,
)
_def([block_upper], _helper_materialized("a", "t"))
_def([svd_embed], _helper_materialized("g", "usv"))
_def([svd_select], _helper_materialized("h", "usv"))


def _solve_triangular_rule(c):
    # a vector right-hand side is told apart by ndim(a) == ndim(b) + 1: batch both
    # so that the relation holds for the batched operands too; a factor with
    # fewer batch axes than a matrix right-hand side (shared by a batch of
    # them: vmap of multivariate_normal.logpdf) gets unit axes after the vmapped
    # one, so that the batch axes broadcast as they do per example
    b = c.arg("b")
    return c.rebuild(a=c.lift(c.materialize(c.arg("a")), b), b=c.materialize(b))


_def([solve_triangular], _solve_triangular_rule)
_def([tri_rhs, tri_unrhs], _helper_materialized("y", "a", "b"))


_def([dot_left], _cotangent_rule("ad.bdot_left", "a"))
_def([dot_right], _cotangent_rule("ad.bdot_right", "b"))
