"""``ndarray`` methods and attributes that resolve to primitives.

``METHODS[name]`` is the primitive that ``x.<name>(*args, **kwargs)`` calls as
``prim(x, *args, **kwargs)`` (``x.sum(axis=0)`` is ``jnp.sum(x, axis=0)``).
Methods whose primitive's second parameter is a shape (``reshape``) take it as
varargs too: ``x.reshape(3, 4)`` means ``reshape(x, (3, 4))`` (the resolver
packs the extra positional arguments). ``ATTRIBUTES[name]`` is the primitive
that the attribute ``x.<name>`` (no call) means: ``x.T`` is ``transpose(x)``.
"""

from __future__ import annotations

from srcjax.primitives import linalg as _la
from srcjax.primitives import reductions as _red
from srcjax.primitives import structural as _st
from srcjax.primitives.registry import REGISTRY

__all__ = [
    "METHODS",
    "ATTRIBUTES",
    "SHAPE_VARARGS",
    "FUNCTION_METHODS",
    "NOT_UNDER_TRANSFORMS",
    "METHOD_FUNCTIONS",
    "register_function_methods",
]

METHODS = {
    "sum": _red.sum,
    "mean": _red.mean,
    "prod": _red.prod,
    "max": _red.amax,
    "min": _red.amin,
    "argmax": _red.argmax,
    "argmin": _red.argmin,
    "std": _red.std,
    "var": _red.var,
    "cumsum": _red.cumsum,
    "cumprod": _red.cumprod,
    "all": _red.all,
    "any": _red.any,
    "reshape": _st.reshape,
    "ravel": _st.ravel,
    "flatten": _st.ravel,
    "transpose": _st.transpose,
    "swapaxes": _st.swapaxes,
    "squeeze": _st.squeeze,
    "astype": _st.astype,
    "copy": _st.copy,
    "repeat": _st.repeat,
    "take": _st.take,
    "sort": _st.sort,
    "argsort": _st.argsort,
    "diagonal": _st.diagonal,
    "dot": _la.dot,
    "trace": _la.trace,
}

#: attribute access (no call) that means a primitive applied to the array
ATTRIBUTES = {
    "T": _st.transpose,
    "mT": _st.matrix_transpose,
}

#: methods whose extra positional arguments form one shape tuple
SHAPE_VARARGS = frozenset({"reshape", "transpose"})

for _name, _public in (("clip", "jnp.clip"), ("round", "jnp.round"), ("conj", "jnp.conj")):
    if _public in REGISTRY:
        METHODS[_name] = REGISTRY[_public]

# jax.Array methods that are primitives under another name or none at all
for _name, _public in (
    ("conjugate", "jnp.conj"),
    ("nonzero", "jnp.nonzero"),
    ("searchsorted", "jnp.searchsorted"),
):
    if _public in REGISTRY:
        METHODS[_name] = REGISTRY[_public]

#: jax.Array methods that are srcjax.numpy functions written in Python (not
#: primitives): ``x.ptp(axis=0)`` is ``srcjax.numpy.ptp(x, axis=0)``, inlined
#: as a call of it is (JAX's signatures; NumPy's methods differ or are missing)
#: (name -> where the array goes among the positional arguments: ``a.compress(c,
#: axis=1)`` is ``compress(c, a, axis=1)``)
FUNCTION_METHODS = {"ptp": 0, "compress": 1, "argpartition": 0, "choose": 0}
#: name -> the srcjax.numpy function, filled by srcjax.numpy at the end of its
#: import (:func:`register_function_methods`), so this layer imports none of it
METHOD_FUNCTIONS: dict = {}


def register_function_methods(module) -> None:
    """Record ``module``'s (srcjax.numpy's) functions for :data:`FUNCTION_METHODS`."""
    METHOD_FUNCTIONS.update((name, getattr(module, name)) for name in FUNCTION_METHODS)


#: jax.Array methods about devices and buffers, meaningless on a value being
#: transformed (JAX: a tracer has none of them): a located error, not NumPy's
#: AttributeError from the generated code
NOT_UNDER_TRANSFORMS = frozenset(
    {
        "addressable_data",
        "addressable_shards",
        "copy_to_host_async",
        "global_shards",
        "is_fully_addressable",
        "is_fully_replicated",
        "to_device",
        "block_until_ready",
        "delete",
        "is_deleted",
        "unsafe_buffer_pointer",
        "on_device_size_in_bytes",
    }
)
