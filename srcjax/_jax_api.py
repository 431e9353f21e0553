"""JAX API names that srcjax maps onto what it does: ``make_jaxpr``,
``disable_jit``, ``clear_caches``, ``custom_gradient``, ``closure_convert``,
``linear_transpose``, ``checkpoint_policies`` / ``checkpoint_name``,
``named_scope`` (the stages of ``jit(f).lower(...)`` are in ``_stages.py``).

srcjax does not trace: where JAX hands back a jaxpr or HLO text, srcjax hands
back the *generated Python source*, which is the program that runs. Each name's
docstring says how it maps (JAX 0.10.2's API,
https://docs.jax.dev/en/latest/jax.html).
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

_cfg = importlib.import_module("srcjax.config")  # the module (srcjax.config is the object)

__all__ = [
    "checkpoint_name",
    "checkpoint_policies",
    "clear_caches",
    "closure_convert",
    "custom_gradient",
    "disable_jit",
    "linear_transpose",
    "make_jaxpr",
    "named_scope",
    "default_matmul_precision",
]


# --- inspecting the program -------------------------------------------------------------


def make_jaxpr(
    fun: Callable,
    static_argnums: int | Sequence[int] = (),
    axis_env: Any = None,
    return_shape: bool = False,
    abstracted_axes: Any = None,
) -> Callable[..., Any]:
    """``jax.make_jaxpr``: a function that, given example arguments, returns
    the inspectable program for them.

    srcjax has no jaxpr: the program is the **generated source** of
    ``jit(fun, static_argnums=...)`` specialized on the arguments' shapes and
    dtypes (a :class:`GeneratedProgram`; ``print(make_jaxpr(f)(x))`` prints it).
    It is the code that runs, with your variable names and a ``# file.py:LINE``
    comment per statement. With ``return_shape=True`` the result is ``(program,
    out_shape)``, ``out_shape`` a pytree of :class:`srcjax.ShapeDtypeStruct`.

    ``axis_env`` and ``abstracted_axes`` (JAX's tracing options) must be None:
    anything else raises ``NotImplementedError``.
    """
    if axis_env is not None or abstracted_axes is not None:
        raise NotImplementedError(
            "make_jaxpr: axis_env and abstracted_axes are tracing options; srcjax "
            "shows the source of the function under jit (vmap(f, axis_name=...) for "
            "collectives)"
        )
    from .jit_api import jit

    jitted = jit(fun, static_argnums=static_argnums)

    def make(*args: Any, **kwargs: Any) -> Any:
        program = jitted.trace(*args, **kwargs).jaxpr
        if return_shape:
            return program, program.out_shape
        return program

    make.__name__ = f"make_jaxpr({getattr(fun, '__name__', 'fun')})"
    return make


# --- jit switches and caches ----------------------------------------------------------


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """``jax.disable_jit``: inside the ``with`` block, ``srcjax.jit``-ted
    functions run their Python function as written (no generated code), so a
    debugger steps through your own lines. The same switch as
    ``config.update("jax_disable_jit", True)``. Other transforms (grad, vmap)
    still generate code."""
    old = _cfg.config.read("jax_disable_jit")
    _cfg.config.update("jax_disable_jit", bool(disable))
    try:
        yield
    finally:
        _cfg.config.update("jax_disable_jit", old)


def clear_caches() -> None:
    """``jax.clear_caches``: forget every generated specialization, so the next
    call of each transformed function transforms its source again."""
    from .api import TRANSFORMED, fastcall

    for t in list(TRANSFORMED):
        for name in ("_cache", "_specs", "_sources"):
            cache = getattr(t, name, None)
            if isinstance(cache, dict):
                cache.clear()
        fast = getattr(t, "_fast", None)  # (jit's guard of its last specialization)
        if isinstance(fast, list):
            fast.clear()
    fastcall.clear()


_LOOPS_MODE: list = [None]  # the numba_loops value the cached code was made for


def _loops_changed(name: str, value: Any) -> None:
    """A change of ``numba_loops`` changes the code jit generates for loops (a
    tiered region, a compiled one, or NumPy's loop): the specializations made
    before it are forgotten, as :func:`clear_caches` does (the disk cache keys on
    the option already)."""
    if name == "numba_loops" and value != _LOOPS_MODE[0]:
        if _LOOPS_MODE[0] is not None:
            clear_caches()
        _LOOPS_MODE[0] = value


_loops_changed("numba_loops", _cfg.config.read("numba_loops"))
_cfg.on_change(_loops_changed)


# --- derivatives -------------------------------------------------------------------------


def _fixed_arity_functions(fun: Callable, names: list) -> dict:
    """``call``, ``fwd``, ``bwd`` for :func:`custom_gradient` with ``fun``'s
    positional parameters (custom_vjp needs them named; the text is registered
    with linecache, so transforms can read it)."""
    import linecache

    args = ", ".join(names)
    text = (
        f"def call({args}):\n    return _fun({args})[0]\n\n\n"
        f"def fwd({args}):\n    value, vjp = _fun({args})\n    return value, vjp\n\n\n"
        "def bwd(vjp, g):\n    return _cotangents(vjp(g))\n"
    )
    filename = f"<srcjax custom_gradient of {getattr(fun, '__name__', 'fun')} {id(fun):x}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    n = len(names)

    def cotangents(cts):
        if not isinstance(cts, (tuple, list)):
            cts = (cts,)
        if len(cts) != n:
            raise TypeError(
                f"custom_gradient: the vjp function returned {len(cts)} cotangents for "
                f"{n} arguments"
            )
        return tuple(cts)

    ns: dict = {"_fun": fun, "_cotangents": cotangents}
    exec(compile(text, filename, "exec"), ns)
    return ns


def custom_gradient(fun: Callable) -> Callable:
    """``jax.custom_gradient``: ``fun(*args)`` returns ``(value, vjp)``, ``vjp(g)``
    the cotangents of the arguments (a tuple, one per argument; a single value for
    a one-argument function is accepted; another count is a TypeError). Built on
    :func:`srcjax.custom_vjp`, so ``grad``/``vjp`` call your ``vjp``; first-order
    reverse mode only, as JAX's (``jvp`` of it raises). ``fun`` takes positional
    parameters only."""
    import inspect

    from .custom import custom_vjp

    names = []
    for p in inspect.signature(fun).parameters.values():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            raise TypeError(
                f"custom_gradient needs a function with positional parameters only; "
                f"{getattr(fun, '__name__', fun)} has {p.kind.description} parameter {p.name!r}"
            )
        names.append(p.name)
    made = _fixed_arity_functions(fun, names)
    # the residual is a function: code that transforms the rules' calls again
    # (jit of grad) calls them as they are instead of inlining them
    made["fwd"].__srcjax_inactive__ = True
    made["bwd"].__srcjax_inactive__ = True
    call = made["call"]
    call.__name__ = getattr(fun, "__name__", "custom_gradient")
    wrapped = custom_vjp(call)
    wrapped.defvjp(made["fwd"], made["bwd"])
    wrapped.__doc__ = fun.__doc__
    return wrapped


def closure_convert(fun: Callable, *example_args: Any) -> tuple:
    """``jax.closure_convert``: ``(converted, consts)`` with ``converted(*args,
    *consts)`` equal to ``fun(*args)``.

    JAX hoists the traced values ``fun`` closes over into ``consts`` so that a
    ``custom_vjp`` can differentiate them. srcjax does not trace: the values a
    function closes over are differentiated where they are read, so ``consts``
    is empty and ``converted`` calls ``fun`` with the leading arguments."""
    n = len(example_args)

    def converted(*args):
        return fun(*args[:n])

    converted.__name__ = getattr(fun, "__name__", "converted")
    return converted, []


def linear_transpose(fun: Callable, *primals: Any, reduce_axes: Sequence = ()) -> Callable:
    """``jax.linear_transpose``: the transpose of the linear function ``fun`` at
    arguments shaped like ``primals`` (arrays or :class:`srcjax.ShapeDtypeStruct`).
    ``transpose(ct)`` returns a tuple, one cotangent per primal. It is the vjp
    of ``fun`` (a linear function's vjp is its transpose at every point); ``fun``
    is not checked for linearity (an affine ``fun`` gives the transpose of its
    linear part)."""
    import numpy as np

    from .api_fwd import vjp
    from .tree_util import tree_map

    if reduce_axes:
        raise NotImplementedError("linear_transpose: reduce_axes is not supported (nor in JAX)")

    def zeros(p):
        if hasattr(p, "shape") and hasattr(p, "dtype"):
            return np.zeros(p.shape, p.dtype)
        return np.zeros(np.shape(p), np.asarray(p).dtype)

    points = tree_map(zeros, primals)
    _, pullback = vjp(fun, *points)

    def transpose(ct):
        return tuple(pullback(ct))

    return transpose


def checkpoint_name(x: Any, name: str) -> Any:
    """``jax.ad_checkpoint.checkpoint_name``: ``x`` itself (names a value for the
    checkpoint policies, which srcjax accepts and does not need)."""
    return x


class _Policies:
    """``jax.checkpoint_policies``: every policy JAX defines, accepted by
    ``srcjax.checkpoint(policy=...)`` and without effect (srcjax's reverse mode
    stores only what the backward sweep reads)."""

    @staticmethod
    def _policy(name: str) -> Callable:
        def policy(*args: Any, **kwargs: Any) -> bool:
            return True

        policy.__name__ = name
        return policy

    def __init__(self) -> None:
        for name in (
            "everything_saveable",
            "nothing_saveable",
            "dots_saveable",
            "checkpoint_dots",
            "dots_with_no_batch_dims_saveable",
            "checkpoint_dots_with_no_batch_dims",
        ):
            setattr(self, name, self._policy(name))

    def _names_policy(self, kind: str) -> Callable:
        def make(*names: str, **kwargs: Any) -> Callable:
            return self._policy(f"{kind}({', '.join(map(repr, names))})")

        return make

    @property
    def save_only_these_names(self) -> Callable:
        return self._names_policy("save_only_these_names")

    @property
    def save_any_names_but_these(self) -> Callable:
        return self._names_policy("save_any_names_but_these")

    @property
    def save_anything_except_these_names(self) -> Callable:
        return self._names_policy("save_anything_except_these_names")

    @property
    def offload_dot_with_no_batch_dims(self) -> Callable:
        return self._names_policy("offload_dot_with_no_batch_dims")

    @property
    def save_and_offload_only_these_names(self) -> Callable:
        return self._names_policy("save_and_offload_only_these_names")

    @staticmethod
    def save_from_both_policies(a: Callable, b: Callable) -> Callable:
        return _Policies._policy("save_from_both_policies")


checkpoint_policies = _Policies()


# --- names -------------------------------------------------------------------------------


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """``jax.named_scope``: JAX prefixes the names of the operations staged in
    the block (for profiles); srcjax runs the block as it is (the generated source
    keeps your line numbers instead). ``name`` must be a string (TypeError)."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    yield


@contextlib.contextmanager
def default_matmul_precision(precision: Any) -> Iterator[None]:
    """``jax.default_matmul_precision``: the precision of matmuls and
    convolutions in the block. srcjax computes them in the arrays' own dtype
    (NumPy, full precision) whatever it says, so the block runs as it is (a
    config change would drop the fast call paths of every jitted function)."""
    if precision is not None and not isinstance(precision, str):
        raise TypeError(f"the precision must be a string or None, not {type(precision).__name__}")
    yield


# (the normalizer runs `with named_scope(...):` and `with default_matmul_precision(
# ...):` blocks it finds by this mark as their bodies: neither changes a value)
named_scope.__srcjax_named_scope__ = True  # type: ignore[attr-defined]
default_matmul_precision.__srcjax_named_scope__ = True  # type: ignore[attr-defined]
