"""``diff``: a linear map, whose adjoint pads and differences in the other direction."""

from __future__ import annotations

import builtins

import numpy as np

from srcjax import dtypes as _dt

from ..ad.linear import def_transpose_pair
from ._common import _internal, _rand, _structural

__all__ = ["diff"]

# ---------------------------------------------------------------------------
# diff (a linear map: its adjoint pads and differences in the other direction)


def _diff_parts(a, axis, prepend, append):
    """``(dtype, [prepend, a, append])``: the pieces ``diff`` concatenates along
    ``axis``, each in the result dtype (JAX's promotion, weak Python scalars),
    a scalar ``prepend`` / ``append`` broadcast to one slice of ``a``."""
    a = np.asarray(a)
    if a.ndim == 0:
        raise ValueError("jnp.diff requires input that is at least one dimensional")
    dt = _dt.result_type(*[v for v in (a, prepend, append) if v is not None])
    ax = axis % a.ndim
    one = a.shape[:ax] + (1,) + a.shape[ax + 1 :]
    parts = []
    for v in (prepend, a, append):
        if v is None:
            parts.append(None)
            continue
        v = np.asarray(v, dtype=dt)
        parts.append(np.broadcast_to(v, one) if v.ndim == 0 else v)
    return dt, parts


def _diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis`` (jax.numpy.diff):
    ``a[1:] - a[:-1]`` applied ``n`` times, after joining ``prepend`` and
    ``append`` (scalars, or arrays of ``a``'s rank) before and after ``a``.

    Shape: ``a``'s with ``axis`` shortened by ``n`` (lengthened by the joined
    slices). Dtype: JAX's promotion of the operands (bool differences are
    ``!=``). Differentiable in ``a``, ``prepend`` and ``append``. Raises
    ``ValueError`` for a 0-d ``a`` or a negative ``n``."""
    if int(n) != n or n < 0:
        raise ValueError(f"jnp.diff: order must be a non-negative integer, got {n!r}")
    _, parts = _diff_parts(a, axis, prepend, append)
    joined = np.concatenate([p for p in parts if p is not None], axis=axis)
    return np.diff(joined, n=int(n), axis=axis)


diff = _structural("jnp.diff", _diff, np.diff)


def _diff_adjoint(g, a, n=1, axis=-1, prepend=None, append=None, part="a"):
    """Cotangent of operand ``part`` (``"a"``, ``"prepend"`` or ``"append"``) of
    ``diff(a, n, axis, prepend, append)`` for the output cotangent ``g``."""
    dt, parts = _diff_parts(a, axis, prepend, append)
    g = np.asarray(g)
    dt = np.result_type(g.dtype, dt)
    for _ in range(int(n)):  # adjoint of x[1:] - x[:-1]: [0, g] - [g, 0]
        shape = list(g.shape)
        shape[axis] = 1
        z = np.zeros(shape, dtype=dt)
        g = np.concatenate([z, g], axis=axis) - np.concatenate([g, z], axis=axis)
    sizes = [0 if p is None else p.shape[axis] for p in parts]
    k = ("prepend", "a", "append").index(part)
    start = builtins.sum(sizes[:k])
    out = np.take(g, np.arange(start, start + sizes[k]), axis=axis)
    like = (prepend, a, append)[k]
    if np.ndim(like) == 0:
        return np.sum(out).astype(dt)
    return out.astype(dt, copy=False)


def _diff_embed(h, a, n=1, axis=-1, prepend=None, append=None, part="a"):
    """``diff`` of the joined operands with ``h`` in place of operand ``part`` and
    zeros for the others: the tangent of ``diff`` for a tangent ``h`` of ``part``
    (the transpose of :func:`_diff_adjoint`)."""
    ops = {"a": a, "prepend": prepend, "append": append}
    ops = {
        k: (None if v is None else np.zeros(np.shape(v), dtype=np.result_type(h)))
        for k, v in ops.items()
    }
    ops[part] = h
    return _diff(ops["a"], n, axis, ops["prepend"], ops["append"])


diff_adjoint = _internal("ad.diff_adjoint", _diff_adjoint)
diff_embed = _internal("ad.diff_embed", _diff_embed)


def _def_diff_rules(part):
    """The rules of ``diff`` for operand ``part`` (``"a"``, ``"prepend"`` or
    ``"append"``: a literal in the inlined rule): ``diff`` is linear in each, its
    vjp is ``diff_adjoint`` and its jvp ``diff_embed`` of that part."""

    def vjp(g, ans, a, n=1, axis=-1, prepend=None, append=None):
        return diff_adjoint(g, a, n, axis, prepend, append, part)

    def jvp(t, ans, a, n=1, axis=-1, prepend=None, append=None):
        return diff_embed(t, a, n, axis, prepend, append, part)

    diff.def_vjp(**{part: vjp})
    diff.def_jvp(**{part: jvp})


for _part in ("a", "prepend", "append"):
    _def_diff_rules(_part)


def_transpose_pair(diff_adjoint, diff_embed)


def _diff_samples(rng):
    return [
        ((_rand(rng, 5),), {}),
        ((_rand(rng, 3, 4),), {"axis": 0}),
        ((_rand(rng, 3, 5), 2), {}),
        ((_rand(rng, 2, 3, 4), 3, 1), {}),
        ((_rand(rng, 3, 4),), {"prepend": _rand(rng, 3, 2), "append": _rand(rng, 3, 1)}),
        ((_rand(rng, 4), 2), {"prepend": 0.5}),
    ]


diff.samples = _diff_samples


def _diff_helper_samples(rng):
    out = []
    for args, kw in _diff_samples(rng):
        full = dict(zip(("n", "axis"), args[1:]), **kw)
        ans = _diff(args[0], **full)
        for part in ("a", "prepend", "append"):
            if part == "a" or full.get(part) is not None:
                out.append(((_rand(rng, *ans.shape), args[0]), dict(full, part=part)))
    return out


def _diff_embed_samples(rng):
    out = []
    for (_g, a), kw in _diff_helper_samples(rng):
        like = a if kw["part"] == "a" else kw[kw["part"]]
        out.append(((_rand(rng, *np.shape(like)), a), kw))
    return out


diff_adjoint.samples = _diff_helper_samples
diff_embed.samples = _diff_embed_samples
