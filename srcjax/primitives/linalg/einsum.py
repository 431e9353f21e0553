"""``jnp.einsum`` and its transposed specifications: each operand's adjoint is an
einsum of the transposed specification (``ad.einsum_vjp_spec``). Evaluating one
is :func:`.contraction.contract`.
"""

from __future__ import annotations

import functools
import string

import numpy as np

from srcjax.primitives.ad import (
    unbroadcast,
)

from ._common import _internal, _linalg, _pet, _rand
from .contraction import _explicit_ellipsis, _label_sizes, _split_spec, contract

__all__ = ["einsum"]

# ---------------------------------------------------------------------------
# einsum and its transposed specifications


@functools.lru_cache(maxsize=256)
def _einsum_vjp_parts(subscripts, argnum, shapes, dtype):
    """(spec, constants) of operand ``argnum``'s cotangent einsum for operands
    of ``shapes`` (a tuple of tuples; cached: generated code asks every call).
    The constants are read-only (shared by every call)."""
    subscripts = _explicit_ellipsis(subscripts, shapes)
    terms, out = _split_spec(subscripts, len(shapes))
    k_term = terms[argnum]
    others = terms[:argnum] + terms[argnum + 1 :]
    used = set(c for t in terms + [out] for c in t if c.isalpha())
    fresh = iter(c for c in string.ascii_letters if c not in used)
    avail = set(c for t in [out] + others for c in t)
    sizes = _label_sizes(k_term, shapes[argnum])
    extra_terms, consts, seen = [], [], set()
    k_out = ""
    i = 0
    while i < len(k_term):
        if k_term.startswith("...", i):
            k_out += "..."
            i += 3
            continue
        c = k_term[i]
        i += 1
        if c in seen:
            f = next(fresh)
            extra_terms.append(c + f)
            consts.append(np.eye(sizes[c], dtype=dtype))
            k_out += f
            continue
        seen.add(c)
        if c not in avail:
            extra_terms.append(c)
            consts.append(np.ones(sizes[c], dtype=dtype))
        k_out += c
    ins = [out] + others + extra_terms
    if "..." not in k_out and any("..." in t for t in ins):
        k_out = "..." + k_out
    for c in consts:
        c.setflags(write=False)
    return ",".join(ins) + "->" + k_out, tuple(consts)


def _einsum_vjp_spec(subscripts, argnum, *operands):
    """Static: the einsum spec giving the cotangent of operand ``argnum`` from
    ``(g, *other operands, *ad.einsum_vjp_consts(...))``."""
    shapes = tuple(np.shape(o) for o in operands)
    return _einsum_vjp_parts(subscripts, argnum, shapes, np.dtype(np.float32))[0]


def _einsum_vjp_consts(subscripts, argnum, *operands):
    """Static: constant operands (identity matrices for repeated labels, ones for
    labels summed only in operand ``argnum``) of the cotangent einsum."""
    shapes = tuple(np.shape(o) for o in operands)
    dtype = np.result_type(operands[argnum])
    return _einsum_vjp_parts(subscripts, argnum, shapes, dtype)[1]


# (from the operands' shapes and dtype: jit decides the spec and the constants' shapes)
einsum_vjp_spec = _internal("ad.einsum_vjp_spec", _einsum_vjp_spec).facts(
    pure=True, from_shapes=True
)
einsum_vjp_consts = _internal("ad.einsum_vjp_consts", _einsum_vjp_consts).facts(pure=True)


def _einsum(subscripts, *operands, optimize="auto", precision=None, preferred_element_type=None):
    """Einstein summation (jax.numpy.einsum): string subscripts with optional
    ``->`` and ``...``; any number of operands."""

    def product(*ops):
        return contract(subscripts, *ops)

    return _pet(product, preferred_element_type, *operands)


einsum = _linalg("jnp.einsum", _einsum, np.einsum)


def _einsum_vjp(g, ans, subscripts, *operands, argnum):
    return unbroadcast(
        einsum_with_consts(
            einsum_vjp_spec(subscripts, argnum, *operands),
            einsum_vjp_consts(subscripts, argnum, *operands),
            g,
            *operands[:argnum],
            *operands[argnum + 1 :],
        ),
        operands[argnum],
    )


def _einsum_with_consts(subscripts, consts, *operands):
    """``einsum(subscripts, *operands, *consts)``: the cotangent einsum, with the
    constant operands (identities, ones) as one tuple, so that the generated code
    names every operand and can be transformed again."""
    return contract(subscripts, *operands, *consts)


einsum_with_consts = _linalg("ad.einsum_with_consts", _einsum_with_consts)


def _einsum_with_consts_jvp(t, ans, subscripts, consts, *operands, argnum):
    return einsum_with_consts(subscripts, consts, *operands[:argnum], t, *operands[argnum + 1 :])


def _einsum_with_consts_vjp(h, ans, subscripts, consts, *operands, argnum):
    # the constants are operands of the adjoint einsum too (reverse over reverse)
    return unbroadcast(
        einsum_with_consts(
            einsum_vjp_spec(subscripts, argnum, *operands, *consts),
            einsum_vjp_consts(subscripts, argnum, *operands, *consts),
            h,
            *operands[:argnum],
            *operands[argnum + 1 :],
            *consts,
        ),
        operands[argnum],
    )


einsum_with_consts.def_jvp(operands=_einsum_with_consts_jvp)
einsum_with_consts.def_vjp(operands=_einsum_with_consts_vjp)
einsum_with_consts.samples = lambda rng: [
    (("ij,jk,k->i", (np.ones(4),), _rand(rng, 2, 3), _rand(rng, 3, 4)), {}),
]


def _einsum_jvp(t, ans, subscripts, *operands, argnum, preferred_element_type=None):
    return einsum(
        subscripts,
        *operands[:argnum],
        t,
        *operands[argnum + 1 :],
        preferred_element_type=preferred_element_type,
    )


einsum.def_vjp(operands=_einsum_vjp)
einsum.def_jvp(operands=_einsum_jvp)
einsum.samples = lambda rng: [
    (("ij,jk->ik", _rand(rng, 2, 3), _rand(rng, 3, 4)), {}),
    (("bij,bjk->bik", _rand(rng, 2, 2, 3), _rand(rng, 2, 3, 4)), {}),
    (("ii->", _rand(rng, 3, 3)), {}),
    (("ii->i", _rand(rng, 3, 3)), {}),
    (("i,j->ij", _rand(rng, 3), _rand(rng, 2)), {}),
    (("ij->", _rand(rng, 2, 3)), {}),
    (("ij,j", _rand(rng, 2, 3), _rand(rng, 3)), {}),
    (("...ij,...jk->...ik", _rand(rng, 2, 2, 3), _rand(rng, 3, 4)), {}),
    (("...d,...d->", _rand(rng, 2, 3, 4), _rand(rng, 2, 3, 4)), {}),
    (("...ij->j", _rand(rng, 2, 3, 4)), {}),
    (("ij,jk,kl->il", _rand(rng, 2, 3), _rand(rng, 3, 2), _rand(rng, 2, 2)), {}),
    (("iij,k->jk", _rand(rng, 2, 2, 3), _rand(rng, 2)), {}),
]
