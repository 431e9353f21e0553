"""``srcjax.source``: the generated source of a transformed function, for example
arguments."""

from __future__ import annotations

import functools
from typing import Any, Callable, Optional

from .._array import unwrap_args as _unwrap_args
from ..errors import TransformTypeError
from ..frontend.source import get_source, unwrap_callable
from .args import _kind
from .gradient import grad, value_and_grad
from .transformed import Transformed


def source(fn: Callable, *example_args: Any, target: Optional[str] = None) -> str:
    """The generated Python source of a srcjax-transformed function.

    Args:
        fn: the result of ``srcjax.grad`` / ``value_and_grad`` / other transforms,
            or the function ``srcjax.vjp`` / ``linearize`` returned.
        example_args: arguments deciding the specialization (which arguments are
            pytrees); by default every argument is taken to be an array.
        target: for a jitted function, the backend to show the code of
            (``"cpu"``, ``"cuda"``); default: the one the example arguments run
            on. ``"cuda"`` shows the host code and, after it, each kernel's
            CUDA C (no GPU needed).

    Returns:
        The text of the generated module, exactly what runs.

    Raises:
        TransformTypeError: ``target`` given for a function that is not jitted.
    """
    if target is not None:
        for_target = getattr(fn, "_source_for_target", None)
        if for_target is None:
            raise TransformTypeError(
                f"srcjax.source(target={target!r}) needs a jitted function (srcjax.jit)"
            )
        return for_target(target, *example_args)
    inner = fn
    while isinstance(inner, functools.partial):  # (the Arrays boundary wraps a partial)
        inner = inner.func
    if inner is not fn and hasattr(inner, "__srcjax_source__"):
        return inner.__srcjax_source__  # the function vjp/linearize returned
    per_device = getattr(fn, "_pmap_source_for", None)
    if per_device is not None:  # pmap: the program each device runs
        return per_device(*example_args)
    if not isinstance(fn, Transformed):
        raise TransformTypeError(f"srcjax.source expects a transformed function, got {fn!r}")
    one_type = type(example_args[0]) if len(example_args) == 1 else None
    example_args = _unwrap_args(example_args)
    specialized = getattr(fn, "_source_for", None)  # jit: specialized on example args
    if specialized is not None:
        return specialized(*example_args)
    if example_args:
        bound = getattr(fn, "_bound", ())
        kinds = tuple(_kind(a) for a in bound + tuple(example_args))
    else:
        kinds = None
        if fn._cache:
            kinds = next(iter(fn._cache))
        else:
            target = fn._pyfn if hasattr(fn, "_pyfn") else fn.fun
            while isinstance(target, Transformed):
                target = target._pyfn if hasattr(target, "_pyfn") else target.fun
            pyfn, bound, _ = unwrap_callable(target)  # (partials, bound methods)
            nparams = len(get_source(pyfn).node.args.args) - len(bound)
            kinds = ("leaf",) * nparams
    code = fn._generated(kinds)
    if one_type is not None and hasattr(fn, "_float32_code"):
        # grad(f)(1.0)'s later calls run the code specialized to a float32 scalar
        code = fn._float32_code(one_type, code) or code
    return code.__srcjax_source__


grad.__srcjax_factory__ = True
value_and_grad.__srcjax_factory__ = True
