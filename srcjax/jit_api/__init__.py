"""``srcjax.jit``: specialize a function on its abstract signature, optimize its
source, fuse elementwise chains into chunked multi-threaded NumPy, and cache.

Pipeline for one signature (shapes, dtypes, weak types, static values, device)::

    source -> normalize (ANF, inlined calls) -> bind static arguments
           -> propagate / fold constants / infer abstract values / simplify
              (x**3 -> x*x*x ...) / CSE / DCE          (srcjax.transforms.optimize)
           -> fused regions -> backend code             (srcjax.transforms.fusion,
                                                         srcjax.backends: the protocol
                                                         in backends.base; on the CPU
                                                         chunked NumPy, numpy_cpu)
           -> render -> load                            (srcjax.codegen.emit)

Modules: :mod:`.signature` (the abstract signature and cache key of a call),
:mod:`.jitted` (the jitted function object: dispatch and the build of a
specialization), :mod:`.outputs` (copying outputs that alias inputs, scalar
outputs); :func:`jit` itself is here.

A cache hit costs a dictionary lookup keyed by the arguments' shapes and
dtypes (a few microseconds). ``srcjax.source(jitted, *example_args)`` prints
the code for the example arguments' signature.

Differences from ``jax.jit`` (documented, by design):

- There is no tracing: Python ``if``/``while``/``for`` on array values run
  natively in the generated code, at every call. ``print(...)`` prints values
  (not tracers) at every call, and ``breakpoint()`` stops in the generated
  file, which is a real file registered with ``linecache``.
- Global and closure *arrays* are read at every call. Global and closure
  Python scalars (ints, floats, bools, tuples of them) are constants of the
  specialization, as in JAX, but guarded: rebinding one specializes again
  (JAX keeps the old value); one rebound more than twice is read live.
- ``donate_argnums``: an output may be written into the donated argument's
  buffer (when shapes and dtypes match and it is C-contiguous); reading a
  donated array afterwards gives undefined contents, as in JAX (where it
  raises).
- Composition: ``jit(grad(f))`` transforms grad's generated source like any
  user function. Other transforms of a jitted function (``grad(jit(f))``, or a
  jitted function called inside a function being differentiated) *see through*
  jit to the original function: jit is an identity for them, and the result is
  not re-specialized (apply ``jit`` outermost for speed).
- Dtypes: the generated code computes what the eager primitives (JAX)
  compute. Operators are emitted as NumPy operators, and where NumPy's
  promotion differs from JAX's for the specialized abstract values
  (``int32 / 2``, ``int32 * 1.5``, ``int32 + float32``; a Python float argument,
  weakly typed) the operands are converted first
  (:func:`srcjax.transforms.optimize.promote`); elsewhere the code is plain.
- Outputs are never (views of) non-donated arguments: ``jit(lambda a: a)(x)``
  returns a copy of ``x``, as JAX arrays are immutable and NumPy arrays are
  not. Python scalar results become NumPy scalars of the default dtype.
- Outputs of large fused regions live in pooled buffers (see
  :mod:`srcjax.backends.runtime`): ``srcjax.backends.runtime.clear_pool()``
  returns idle memory to the system.
"""

from __future__ import annotations

import functools
import threading
import types
import weakref
from typing import Any, Callable, Optional, Sequence, Union

from ..api.args import positional_names
from .jitted import _Jit
from .outputs import _unalias  # noqa: F401  (callers of jit's output copying read it here)

__all__ = ["jit"]


def jit(
    fun: Optional[Callable] = None,
    static_argnums: Union[int, Sequence[int]] = (),
    static_argnames: Union[str, Sequence[str]] = (),
    donate_argnums: Union[int, Sequence[int]] = (),
    device: Any = None,
    *,
    donate_argnames: Union[str, Sequence[str]] = (),
    keep_unused: bool = False,
    inline: bool = False,
    in_shardings: Any = None,
    out_shardings: Any = None,
) -> Callable:
    """Compile ``fun`` by source transformation, specialized per abstract signature.

    Semantics follow ``jax.jit``: the function is specialized (and cached) on
    the shapes and dtypes of its array arguments, on whether scalars were Python
    scalars (weak types), on the values of static arguments and on the device;
    a call with a signature seen before dispatches to the cached code in a few
    microseconds; ``fn._cache_size()`` counts specializations. Unhashable static
    arguments raise ``ValueError``. Arguments are canonicalized as JAX does
    (float64 becomes float32 unless ``jax_enable_x64``).

    The CPU code is NumPy: constant folding, CSE, dead-code elimination and
    algebraic simplification (``x**3`` becomes ``x*x*x``) are applied to the
    source, and chains of elementwise operations on large arrays (optionally
    ending in a full ``sum``/``mean``/``max``/``min``) run fused, over
    cache-sized chunks, on a thread pool sized to the cores. Print it with
    ``srcjax.source(jitted, *example_args)``.

    Unlike JAX, Python control flow on array values works inside ``fun``, and
    ``print``/``breakpoint()`` run at every call (see the module docstring).

    Args:
        fun: a Python function (lambda, ``functools.partial``, bound method,
            object with a Python ``__call__``, or another srcjax transform)
            whose source is available; it may have keyword-only parameters.
            Without it, ``jit(static_argnums=...)`` returns a decorator.
        static_argnums: positional arguments treated as compile-time constants
            (one left out of a call takes its default).
        static_argnames: keyword arguments treated as compile-time constants;
            each must name a parameter (``ValueError`` otherwise, as in JAX).
        donate_argnums: arguments whose buffers an output may reuse.
        device: the device to run on (the CPU; recorded in the cache key).
        donate_argnames: ``donate_argnums`` by parameter name (JAX's); each must
            name a positional parameter of ``fun`` (``ValueError`` otherwise).
        keep_unused, inline: accepted for JAX's signature; they change nothing
            here (generated code keeps every argument; nested jit is inlined).
        in_shardings, out_shardings: ``None`` (one device, as JAX's default);
            anything else raises ``NotImplementedError`` (see ``pmap``).

    Returns:
        The jitted function, with ``fun``'s signature.
    """
    for name, value in (("in_shardings", in_shardings), ("out_shardings", out_shardings)):
        if value is not None:
            raise NotImplementedError(
                f"srcjax.jit({name}=...) is not supported: srcjax.jit runs on one device "
                "(use srcjax.pmap for several); pass None"
            )
    if fun is None:
        return functools.partial(
            jit,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            donate_argnums=donate_argnums,
            device=device,
            donate_argnames=donate_argnames,
        )
    if not callable(fun):
        raise TypeError(f"jit expects a callable, got {fun!r}")
    if donate_argnames:
        donate_argnums = _donated_positions(fun, donate_argnums, donate_argnames)
    if not isinstance(fun, types.FunctionType):
        return _Jit(fun, static_argnums, static_argnames, donate_argnums, device)
    # jit(f)(x) written in a loop: like JAX, which caches compiled code per function,
    # the same plain function with the same options shares one jitted object (and
    # its specializations) instead of transforming again on every call
    try:
        key = (
            _options_key(static_argnums),
            _options_key(static_argnames),
            _options_key(donate_argnums),
            None if device is None else str(device),
        )
        hash(key)
    except TypeError:
        return _Jit(fun, static_argnums, static_argnames, donate_argnums, device)
    with _JIT_LOCK:
        per_fun = _JIT_OBJECTS.get(fun)
        if per_fun is None:
            per_fun = _JIT_OBJECTS[fun] = {}
        jitted = per_fun.get(key)
        if jitted is None:
            jitted = per_fun[key] = _Jit(
                fun, static_argnums, static_argnames, donate_argnums, device
            )
    return jitted


def _donated_positions(fun: Callable, nums: Any, names: Any) -> tuple:
    """``donate_argnums`` with the positions of the parameters ``names`` added
    (JAX's ``donate_argnames``); ValueError for a name that is no positional
    parameter of ``fun``."""
    names = (names,) if isinstance(names, str) else tuple(names)
    nums = (nums,) if isinstance(nums, int) else tuple(nums)
    try:
        params = positional_names(fun)
    except (TypeError, ValueError):
        params = []
    for n in names:
        if n not in params:
            raise ValueError(
                f"jit: donate_argnames {n!r} is not a positional parameter of "
                f"{getattr(fun, '__name__', fun)!r} (its parameters: {params})"
            )
    return tuple(sorted(set(nums) | {params.index(n) for n in names}))


def _options_key(x: Any) -> Any:
    return tuple(x) if isinstance(x, (list, tuple)) else x


#: plain function -> {options: its jitted object}; see jit()
_JIT_OBJECTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_JIT_LOCK = threading.Lock()


jit.__srcjax_jit__ = True  # inside transformed code, jit(f)(x) is just f(x)
