"""``jnp.vectorize``: NumPy-style vectorization built on ``srcjax.vmap``.

``vectorize(pyfunc, excluded=..., signature=...)`` returns an ordinary Python
function whose source srcjax generates (registered in :mod:`linecache`), so
``grad``/``jit``/``vmap`` of it, and calls of it inside transformed code, are
transformed like any user function. Its body broadcasts the vectorized
arguments over their loop (non-core) dimensions, flattens those into one axis,
calls ``srcjax.vmap(pyfunc, in_axes=...)`` once (excluded arguments with
``in_axes=None``) and reshapes the results back: rank-generic code, so one
generated function serves every argument shape. Shape bookkeeping (loop shape,
core dimension sizes, JAX's errors) is done by the static helpers
``ad.vectorize_plan`` and ``ad.vectorize_out_shape``.
"""

from __future__ import annotations

import inspect
import itertools
import linecache
import re
from typing import Any, Callable, Collection, Dict, List, Optional, Tuple

import numpy as _np

from .. import _array
from ..primitives.registry import Primitive, register

__all__ = ["vectorize"]

_DIM = r"\w+"
_CORE = r"(?:{0}(?:,{0})*)?".format(_DIM)
_ARG = r"\({}\)".format(_CORE)
_ARGS = r"{0}(?:,{0})*".format(_ARG)
_SIGNATURE = r"^{0}->{0}$".format(_ARGS)


def _parse_signature(signature: str) -> Tuple[List[Tuple[str, ...]], List[Tuple[str, ...]]]:
    """Input and output core dimension names of a gufunc signature such as
    ``"(m,n),(n)->(m)"``; ValueError for anything else (as JAX)."""
    if not isinstance(signature, str) or not re.match(_SIGNATURE, signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = (
        [tuple(re.findall(_DIM, a)) for a in re.findall(_ARG, part)]
        for part in signature.split("->")
    )
    return ins, outs


def _static(public: str, impl: Callable) -> Primitive:
    p = register(Primitive(public, impl, kind="internal", differentiable=False))
    p.def_batch(lambda c: (c.rebuild(), False))  # shapes in, shapes out: unbatched
    p.samples = lambda rng: []  # static shape bookkeeping: tested through vectorize
    return p


def _plan_impl(shapes, core_dims, context):
    """Static: for the vectorized arguments' ``shapes`` and their core dimension
    names, ``(loop_shape, broadcast shapes, flat shapes, dim_sizes)``: each
    argument is broadcast to ``loop_shape + its core shape`` and reshaped to
    ``(prod(loop_shape),) + core shape``. JAX's ValueErrors for too few
    dimensions, inconsistent core sizes and loop shapes that do not broadcast."""
    sizes: Dict[str, int] = {}
    loops = []
    cores = []
    for shape, core in zip(shapes, core_dims):
        shape = tuple(int(d) for d in shape)
        k = len(core)
        if len(shape) < k:
            raise ValueError(
                f"input with shape {shape!r} does not have enough dimensions for all core "
                f"dimensions {core!r} {context}"
            )
        cshape = shape[len(shape) - k :]
        for name, size in zip(core, cshape):
            if sizes.setdefault(name, size) != size:
                raise ValueError(
                    f"inconsistent size for core dimension {name!r}: {size!r} vs "
                    f"{sizes[name]!r} {context}"
                )
        loops.append(shape[: len(shape) - k])
        cores.append(cshape)
    try:
        loop = tuple(int(d) for d in _np.broadcast_shapes(*loops)) if loops else ()
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={loops}") from None
    n = int(_np.prod(loop, dtype=_np.int64))
    full = tuple(loop + c for c in cores)
    flat = tuple((n,) + c for c in cores)
    return loop, full, flat, tuple(sorted(sizes.items()))


def _out_shape_impl(loop, shape, core, sizes, context, checked=None):
    """Static: the shape of one result, ``loop + shape``, after checking the
    per-call ``shape`` against the signature's output core dimensions ``core``
    (``None``: no signature, any shape). ``checked`` only orders this after
    another check (``ad.vectorize_nout``)."""
    shape = tuple(int(d) for d in shape)
    if core is not None:
        if len(shape) != len(core):
            raise ValueError(
                f"output shape {shape!r} does not match core dimensions {core!r} {context}"
            )
        known = dict(sizes)
        for name, size in zip(core, shape):
            if known.setdefault(name, size) != size:
                raise ValueError(
                    f"inconsistent size for core dimension {name!r}: {size!r} vs "
                    f"{known[name]!r} {context}"
                )
    return tuple(loop) + shape


def _nout_impl(is_tuple, n, expected, context):
    """Static: JAX's TypeErrors when a function with several outputs in its
    signature does not return a tuple of that many."""
    if not is_tuple:
        raise TypeError(f"output must be a tuple when multiple outputs are expected {context}")
    if n != expected:
        raise TypeError(
            f"wrong number of output arguments: expected {expected!r}, got {n!r} {context}"
        )
    return expected


vectorize_plan = _static("ad.vectorize_plan", _plan_impl)
vectorize_out_shape = _static("ad.vectorize_out_shape", _out_shape_impl)
vectorize_nout = _static("ad.vectorize_nout", _nout_impl)

_COUNTER = itertools.count()


def _params(pyfunc: Callable) -> Optional[List[inspect.Parameter]]:
    """The positional parameters of ``pyfunc`` (None when it takes ``*args`` or
    has no inspectable signature)."""
    try:
        sig = inspect.signature(pyfunc)
    except (TypeError, ValueError):
        return None
    out = []
    for p in sig.parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            return None
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            out.append(p)
    return out


def vectorize(
    pyfunc: Callable[..., Any],
    *,
    excluded: Collection[Any] = frozenset(),
    signature: Optional[str] = None,
) -> Callable[..., Any]:
    """A vectorized version of ``pyfunc`` with NumPy broadcasting
    (jax.numpy.vectorize; https://docs.jax.dev/en/latest/_autosummary/jax.numpy.vectorize.html).

    Built on ``srcjax.vmap``: ``pyfunc`` is called (once, batched) on the
    elements of its arguments' loop dimensions. Without ``signature`` every
    argument is vectorized elementwise (``pyfunc`` sees scalars; its outputs
    may have any shape, appended after the broadcast shape). With a gufunc
    ``signature`` such as ``"(n),(n)->()"`` or ``"(m,n),(n)->(m)"`` the
    trailing core dimensions of each argument are passed whole, their sizes are
    checked, and the leading dimensions broadcast; several outputs
    (``"->(),()"``) make the result a tuple. Works as a decorator (also through
    ``functools.partial(jnp.vectorize, signature=...)``); the result is a plain
    function that srcjax transforms like user code, so ``grad``, ``jit`` and
    ``vmap`` of it, and calls of it inside transformed functions, work.

    Args:
        pyfunc: the function to vectorize; its positional parameters (no
            ``*args``) become the vectorized function's, with their defaults.
        excluded: positions (ints) or names (strs) of the parameters passed to
            ``pyfunc`` unchanged (not vectorized: strings, options, functions).
            A parameter whose default is ``None`` is excluded too.
        signature: optional gufunc signature; its number of inputs is the
            number of non-excluded parameters the result takes.

    Returns:
        A function of the same positional parameters; results have the
        broadcast loop shape followed by ``pyfunc``'s output shape, in
        ``pyfunc``'s dtypes.

    Raises:
        TypeError: ``excluded`` holds something other than ints and strs, or
            names no parameter; a multi-output signature whose function does
            not return a tuple of that many arrays.
        ValueError: negative ``excluded`` entries, an invalid signature,
            arguments with too few dimensions for their core dimensions,
            inconsistent core sizes, or outputs that do not match the signature.
        NotImplementedError: ``pyfunc`` takes ``*args`` (or has no inspectable
            signature) and no ``signature`` fixes the number of inputs.
    """
    excluded = frozenset(excluded)
    if any(not isinstance(e, (str, int)) or isinstance(e, bool) for e in excluded):
        raise TypeError(
            "jax.numpy.vectorize can only exclude integer or string arguments, "
            f"but excluded={excluded!r}"
        )
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")
    ins = outs = None
    if signature is not None:
        ins, outs = _parse_signature(signature)
    params = _params(pyfunc)
    if params is None:
        if ins is None:
            raise NotImplementedError(
                "srcjax jnp.vectorize: the function takes *args (or its parameters cannot "
                "be inspected); give a signature (its inputs fix the number of arguments)"
            )
        count = len(ins) + sum(1 for e in excluded if isinstance(e, int))
        names = [f"arg{i}" for i in range(count)]
        defaults: Dict[str, Any] = {}
    else:
        names = [p.name for p in params]
        defaults = {p.name: p.default for p in params if p.default is not p.empty}
    for e in excluded:
        if isinstance(e, str) and e not in names:
            if params is not None and e in inspect.signature(pyfunc).parameters:
                continue  # a keyword-only parameter: always passed as it is
            raise TypeError(f"jnp.vectorize: excluded names no parameter of the function: {e!r}")
    static = {i for i, nm in enumerate(names) if i in excluded or nm in excluded}
    static |= {i for i, nm in enumerate(names) if nm in defaults and defaults[nm] is None}
    if ins is not None:
        # only as many parameters as the signature has inputs (the rest keep
        # pyfunc's own defaults)
        kept, count = [], 0
        for i in range(len(names)):
            if i in static:
                kept.append(i)
            elif count < len(ins):
                kept.append(i)
                count += 1
        if count != len(ins):
            raise TypeError(
                f"wrong number of positional arguments: the signature {signature!r} has "
                f"{len(ins)} inputs but the function takes {count} vectorized parameters"
            )
        last = max(kept) + 1 if kept else 0
        names = names[:last]
        static = {i for i in static if i < last}
    vec = [i for i in range(len(names)) if i not in static]
    core = tuple(ins) if ins is not None else tuple(() for _ in vec)
    return _build(pyfunc, names, defaults, static, vec, core, outs, excluded, signature)


def _build(pyfunc, names, defaults, static, vec, core, outs, excluded, signature):
    """The generated vectorized function (see the module docstring)."""
    fname = getattr(pyfunc, "__name__", "function")
    fname = re.sub(r"\W", "_", fname)
    if not fname.isidentifier() or fname.startswith("_"):
        fname = "function"
    context = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
    ns: Dict[str, Any] = {}
    from ..tree_util import tree_map
    from ..vmap_api import vmap

    # the parameter names are the user's (keyword calls); every name srcjax's
    # code adds ends in a suffix none of them has
    sfx, k = "_v", 0
    while any(n.endswith(sfx) for n in names):
        k += 1
        sfx = f"_v{k}"

    def v(name):
        return f"{name}{sfx}"

    ns.update(
        {
            v("jnp"): _array.HOOKS["numpy"],  # srcjax.numpy (it sets the hook at import)
            v("vmap"): vmap,
            v("tree_map"): tree_map,
            v("plan_of"): vectorize_plan,
            v("out_shape"): vectorize_out_shape,
            v("nout"): vectorize_nout,
            v("pyfunc"): pyfunc,
        }
    )
    jnp = v("jnp")
    sig_parts = []
    for n in names:
        if n in defaults:
            ns[v(f"default_{n}")] = defaults[n]
            sig_parts.append(f"{n}={v(f'default_{n}')}")
        else:
            sig_parts.append(n)
    plan, loop, out = v("plan"), v("loop"), v("out")
    lines = [f"def vectorized_{fname}({', '.join(sig_parts)}):"]
    shapes = ", ".join(f"{jnp}.shape({names[i]})" for i in vec)
    lines.append(
        f"    {plan} = {v('plan_of')}(({shapes}{',' if len(vec) == 1 else ''}), "
        f"{core!r}, {context!r})"
    )
    lines.append(f"    {loop} = {plan}[0]")
    for k, i in enumerate(vec):
        n = names[i]
        lines.append(
            f"    {v(f'arg{i}')} = {jnp}.reshape({jnp}.broadcast_to({jnp}.asarray({n}), "
            f"{plan}[1][{k}]), {plan}[2][{k}])"
        )
    args = ", ".join(names[i] if i in static else v(f"arg{i}") for i in range(len(names)))
    axes = ", ".join("None" if i in static else "0" for i in range(len(names)))
    if len(names) == 1:
        axes += ","
    lines.append(f"    {out} = {v('vmap')}({v('pyfunc')}, in_axes=({axes}))({args})")
    o = v("o")
    if outs is None:
        lines.append(
            f"    return {v('tree_map')}(lambda {o}: {jnp}.reshape({o}, {v('out_shape')}("
            f"{loop}, {jnp}.shape({o})[1:], None, {plan}[3], {context!r})), {out})"
        )
    elif len(outs) == 1:
        lines.append(
            f"    return {jnp}.reshape({out}, {v('out_shape')}({loop}, {jnp}.shape({out})[1:], "
            f"{outs[0]!r}, {plan}[3], {context!r}))"
        )
    else:
        nout = v("n")
        lines.append(
            f"    {nout} = {v('nout')}(isinstance({out}, tuple), len({out}), {len(outs)}, "
            f"{context!r})"
        )
        results = []
        for k, oc in enumerate(outs):
            ok, rk = v(f"o{k}"), v(f"r{k}")
            lines.append(f"    {ok} = {out}[{k}]")
            lines.append(
                f"    {rk} = {jnp}.reshape({ok}, {v('out_shape')}({loop}, "
                f"{jnp}.shape({ok})[1:], {oc!r}, {plan}[3], {context!r}, {nout}))"
            )
            results.append(rk)
        lines.append(f"    return ({', '.join(results)},)")
    text = "\n".join(lines) + "\n"
    filename = f"<srcjax vectorize {fname} #{next(_COUNTER)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    exec(compile(text, filename, "exec"), ns)
    fn = ns[f"vectorized_{fname}"]
    fn.__doc__ = getattr(pyfunc, "__doc__", None)
    fn.__qualname__ = fn.__name__ = getattr(pyfunc, "__name__", fn.__name__)
    fn.__srcjax_vectorized__ = (pyfunc, excluded, signature)
    return fn


# jnp.vectorize(f, ...)(x) inside transformed code: the normalizer calls it with
# the function known then and inlines the generated function it returns
vectorize.__srcjax_factory__ = True
# bound to a name inside transformed code (`f = jnp.vectorize(g)`): a clear error
vectorize.__srcjax_not_inside__ = (
    "call it where it is made (jnp.vectorize(f, signature=...)(x)), or vectorize the "
    "function at module level (also as a decorator) and call that"
)
