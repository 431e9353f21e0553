"""Evaluating an einsum: :func:`contract`, the one place srcjax calls
``np.einsum`` (the ``jnp.einsum`` primitive, its rules, batching rules and the
linear algebra that sums products over labels all go through it). NumPy's
plain loop for small, elementwise, outer and integer contractions; for large
float ones a greedy contraction path through BLAS, planned once per
(subscripts, shapes, dtypes), its BLAS threads chosen by the work
(:mod:`._blas_threads`). Also the subscript helpers the einsum rules share
(``_split_spec``, ``_explicit_ellipsis``, ``_label_sizes``). Imports no
primitive, so any primitive module may evaluate an einsum."""

from __future__ import annotations

import string

import numpy as np

from ._blas_threads import call_small

#: below this many multiply-adds (the product of every label's size) the plain
#: loop beats the optimized call's Python overhead (~8 us; measured with NumPy
#: 2.4: 32x32 matmul plain 7.6 us, path 8.8 us; a 3x3 one 1.3 us vs 7.6 us)
_PLAIN_BELOW = 1 << 15

#: from this many multiply-adds up to ``_PLAIN_BELOW``, a contraction that is a
#: (batched) matrix product is one ``np.matmul`` (:class:`_AsMatmul`); below it the
#: plain loop is as fast (3x3 @ 3x3: 4.4 us vs 4.1 us; 8x8x8 batched: 5.1 vs 10.8)
_MATMUL_FROM = 256

#: paths of up to this much work run on one BLAS thread (docs/blas-threads.md):
#: on the loaded 2-core machine, with JAX's threads in the process, a threaded
#: 128x64x64 GEMM step stalled the fresh user's einsum attention (p11,
#: jit(value_and_grad) 155 ms, 1.1 ms on one thread); 2**24 multiply-adds take
#: about 2 ms on one thread, where two threads could save at most half
_ONE_THREAD_UPTO = 1 << 24

#: (subscripts, shape, dtype number, shape, ...) -> ``_plan``'s (spec, path or False, work);
#: bounded (cleared when full) so that shape-varying callers cannot grow it
_PLANS = {}
_PLANS_MAX = 4096


def contract(subscripts, *operands):
    """``np.einsum(subscripts, *operands)``, the one place srcjax evaluates an
    einsum. Float32/64 and complex contractions of at least ``_PLAIN_BELOW``
    multiply-adds whose greedy path has a pairwise step summing a shared label
    (a GEMM, batched or not) run that path, computed once per (subscripts,
    shapes, dtypes) and cached: NumPy then calls matmul (attention's
    ``bhtk,bhsk->bhts`` at 4x8x32x8: 185 us plain, 26 us). Other cases (one
    operand, elementwise and outer products, traces, tiny sizes, integer, bool,
    float16 and object operands) keep the plain loop; three or more operands
    always follow a path, as before. Float results differ from the plain loop only
    in summation order; integer ones are exact either way."""
    if not isinstance(subscripts, str):  # the interleaved form: NumPy's own
        return np.einsum(subscripts, *operands)
    key = [subscripts]  # (a loop, not comprehensions: 0.5 us less on a 3x3 einsum)
    for o in operands:
        if type(o) is not np.ndarray:  # scalars, lists, subclasses
            return contract(subscripts, *[np.asarray(x) for x in operands])
        key.append(o.shape)
        key.append(o.dtype.num)
    key = tuple(key)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _plan(subscripts, operands)
        if len(_PLANS) >= _PLANS_MAX:
            _PLANS.clear()
        _PLANS[key] = plan
    spec, path, work = plan
    if path is False:
        return np.einsum(spec, *operands)
    if type(path) is _AsMatmul:
        return path.run(*operands)
    return call_small(
        "numpy", work, np.einsum, spec, *operands, optimize=path, small=_ONE_THREAD_UPTO
    )


def _plan(subscripts, ops):
    """(spec with ``...`` spelled out, path or False, the work that decides the
    BLAS threads: the path's optimized FLOP count, or for two operands the
    product of every label's size)."""
    spec = _explicit_ellipsis(subscripts, [o.shape for o in ops])
    _check_label_sizes(spec, ops)
    if len(ops) > 2:
        return (spec, *_greedy_path(spec, ops))
    if len(ops) < 2 or np.result_type(*ops).char not in "fdFD":
        return spec, False, 0
    sizes = {}
    for term, o in zip(_split_spec(spec, 2)[0], ops):
        sizes.update(_label_sizes(term, o.shape))
    work = 1
    for n in sizes.values():
        work *= n
    if not _sums_shared_label(spec):
        return spec, False, work
    if work < _PLAIN_BELOW:
        return spec, work >= _MATMUL_FROM and _AsMatmul.of(spec, ops) or False, work
    return spec, _greedy_path(spec, ops)[0], work


class _AsMatmul:
    """A small two-operand contraction that is a (batched) matrix product, as one
    ``np.matmul``: each operand's axes put in (shared kept labels, own labels,
    summed labels) order and reshaped to a stack of matrices, the product's axes
    put in the output's order. NumPy's plain einsum loop takes 4x as long as the
    matmul on attention's ``zhtd,zhsd->zhts`` at 4x4x8x4 (33 us vs 8 us: user8
    p01); the result differs from it in summation order only."""

    __slots__ = ("perm_a", "perm_b", "shape_a", "shape_b", "shape_r", "perm_r")

    @classmethod
    def of(cls, spec, ops):
        """The plan for ``spec`` (explicit output, no ``...``) on float or complex
        operands, or None where a label repeats in a term, is summed within one
        operand, or has a size of 1 broadcast against another."""
        if "->" not in spec or "..." in spec or any(o.dtype.char not in "fdFD" for o in ops):
            return None
        (ta, tb), out = _split_spec(spec, 2)
        if any(len(set(t)) != len(t) for t in (ta, tb, out)) or len(out) > 32:
            return None
        sa, sb = _label_sizes(ta, ops[0].shape), _label_sizes(tb, ops[1].shape)
        if any(sa[c] != sb[c] for c in set(ta) & set(tb)) or set(out) - set(ta) - set(tb):
            return None
        batch = [c for c in out if c in sa and c in sb]
        own_a = [c for c in out if c in sa and c not in sb]
        own_b = [c for c in out if c in sb and c not in sa]
        summed = [c for c in ta if c in sb and c not in out]
        if len(batch) + len(own_a) + len(summed) != len(ta) or len(batch) + len(own_b) + len(
            summed
        ) != len(tb):
            return None  # (a label summed within one operand)
        plan = cls()
        bshape = tuple(sa[c] for c in batch)
        fa, fb, k = (
            int(np.prod([d[c] for c in ls])) for d, ls in ((sa, own_a), (sb, own_b), (sa, summed))
        )
        plan.perm_a = tuple(ta.index(c) for c in batch + own_a + summed)
        plan.perm_b = tuple(tb.index(c) for c in batch + summed + own_b)
        plan.shape_a, plan.shape_b = bshape + (fa, k), bshape + (k, fb)
        plan.shape_r = bshape + tuple(sa[c] for c in own_a) + tuple(sb[c] for c in own_b)
        order = batch + own_a + own_b
        plan.perm_r = tuple(order.index(c) for c in out)
        return plan

    def run(self, a, b):
        r = np.matmul(
            a.transpose(self.perm_a).reshape(self.shape_a),
            b.transpose(self.perm_b).reshape(self.shape_b),
        )
        return r.reshape(self.shape_r).transpose(self.perm_r)


def _greedy_path(spec, ops):
    """NumPy's greedy path, its intermediates allowed up to 16 times the largest
    operand (at least 2**20 elements): with NumPy's default limit (the largest
    operand) ``bti,ijc,btj->btc`` at 4x32x64, 64x64x3 gets no pairwise step and
    runs as one three-operand loop, 3.2 ms; with the 4x32x64x3 intermediate, 75 us."""
    limit = max(1 << 20, 16 * max(o.size for o in ops))
    path, text = np.einsum_path(spec, *ops, optimize=("greedy", limit))
    flops = next(ln for ln in text.splitlines() if "Optimized FLOP count" in ln)
    return path, int(float(flops.split(":")[1]))


def _sums_shared_label(spec):
    """Whether the two-operand ``spec`` sums a label both operands carry (a
    matmul step); outer and elementwise products gain nothing from the path."""
    ins, out = spec.replace(" ", "").split("->") if "->" in spec else (spec, None)
    a, b = ins.split(",")
    shared = (set(a) & set(b)) - {"."}
    if out is None:
        return bool(shared)
    return bool(shared - set(out))


def _split_spec(subscripts, nops):
    s = subscripts.replace(" ", "")
    if "->" in s:
        ins, out = s.split("->")
        terms = ins.split(",")
    else:
        terms = s.split(",")
        letters = [c for t in terms for c in t.replace("...", "")]
        single = sorted(c for c in set(letters) if letters.count(c) == 1)
        out = ("..." if any("..." in t for t in terms) else "") + "".join(single)
    if len(terms) != nops:
        raise ValueError(f"einsum: {len(terms)} subscripts for {nops} operands")
    return terms, out


def _explicit_ellipsis(subscripts, shapes):
    """``subscripts`` with each ``...`` spelled as labels when the explicit
    output has none (``"...d,...d->"``, ``"...ij->j"``: JAX sums those axes,
    NumPy's einsum refuses them): the broadcast axes of each operand, aligned
    from the right, get fresh labels that the output leaves out."""
    if "..." not in subscripts or "->" not in subscripts:
        return subscripts
    s = subscripts.replace(" ", "")
    ins, out = s.split("->")
    if "..." in out:
        return subscripts
    terms = ins.split(",")
    ranks = [len(sh) - (len(t) - 3) if "..." in t else 0 for t, sh in zip(terms, shapes)]
    k = max(ranks + [0])
    fresh = [c for c in string.ascii_letters if c not in s][:k]
    terms = [
        t.replace("...", "".join(fresh[k - r :])) if "..." in t else t for t, r in zip(terms, ranks)
    ]
    return ",".join(terms) + "->" + out


def _label_sizes(term, shape):
    sizes = {}
    if "..." in term:
        head, tail = term.split("...")
        for c, n in zip(head, shape[: len(head)]):
            sizes[c] = n
        for c, n in zip(tail, shape[len(shape) - len(tail) :] if tail else ()):
            sizes[c] = n
    else:
        for c, n in zip(term, shape):
            sizes[c] = n
    return sizes


def _check_label_sizes(spec, ops):
    """JAX's error for a label whose sizes differ between operands (NumPy's says
    "operands could not be broadcast together with remapped shapes"); a size of
    1 broadcasts, as in NumPy. Once per plan (shapes), not per call."""
    terms = _split_spec(spec, len(ops))[0]
    seen = {}
    for k, (term, o) in enumerate(zip(terms, ops)):
        if len(term.replace("...", "")) > o.ndim:
            raise ValueError(
                f"einsum: operand {k} has {o.ndim} dimensions, subscripts '{term}' name"
                f" {len(term.replace('...', ''))}"
            )
        for c, n in _label_sizes(term, o.shape).items():
            prev = seen.get(c)
            if prev is not None and n != prev and 1 not in (n, prev):
                raise ValueError(
                    f"Size of label '{c}' for operand {k} ({n}) does not match previous"
                    f" terms ({prev})."
                )
            if prev is None or prev == 1:
                seen[c] = n
