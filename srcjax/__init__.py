"""srcjax: JAX's function transformations by source-to-source transformation.

``grad``, ``value_and_grad`` (and, as they land, ``jit``, ``vmap``, ``jvp`` ...)
read a function's source, rewrite its AST and run the generated Python code,
which ``srcjax.source(fn)`` prints.
"""

from . import errors, numpy, tree_util  # noqa: F401  (numpy registers the primitives)
from .backends import malloc as _malloc
from . import lax  # noqa: F401,I001  (after numpy: it aliases primitives)
from . import nn, scipy  # noqa: F401,I001  (srcjax.nn works after `import srcjax`, as jax.nn)
from .lax import linalg as _lax_linalg  # noqa: F401,I001  (srcjax.lax.linalg, as jax.lax.linalg)
from . import tree  # noqa: F401,I001  (jax.tree.map)
from . import flatten_util  # noqa: F401,I001  (jax.flatten_util.ravel_pytree)
from . import debug  # noqa: F401,I001  (jax.debug.print)
from . import ops  # noqa: F401,I001  (jax.ops.segment_sum)
from . import image  # noqa: F401,I001  (jax.image.resize)
from . import random  # noqa: F401,I001  (jax.random: registers the random.* primitives)
from .api import grad, source, value_and_grad
from .api_fwd import jvp, linearize, vjp
from .api_jac import hessian, jacfwd, jacrev
from .config import config
from .custom import custom_jvp, custom_vjp
from .extras import (
    Array,
    Device,
    ShapeDtypeStruct,
    block_until_ready,
    checkpoint,
    eval_shape,
    remat,
)
from .devices import (
    CudaDevice,
    default_backend,
    device_count,
    device_get,
    device_put,
    devices,
    local_device_count,
    local_devices,
)
from . import typing  # noqa: F401,I001  (jax.typing.ArrayLike in annotations)
from .jit_api import jit
from .vmap_api import vmap
from ._callback import named_call, pure_callback  # noqa: I001  (jax.pure_callback)
from .pmap_api import pmap
from . import distributed  # noqa: I001  (jax.distributed: multi-process over MPI)
from . import sharding  # noqa: F401,I001  (jax.sharding: pmap results' NamedSharding)
from .distributed import process_count, process_index
from ._stages import Compiled, Lowered, Traced  # noqa: I001  (jit(f).lower(...) stages)
from ._jax_api import (  # noqa: I001  (JAX's API names, mapped onto srcjax)
    checkpoint_policies,
    clear_caches,
    closure_convert,
    custom_gradient,
    default_matmul_precision,
    disable_jit,
    linear_transpose,
    make_jaxpr,
    named_scope,
)
from . import example_libraries  # noqa: F401,I001  (jax.example_libraries)
from .primitives import control as _control
from .primitives import containers as _containers  # noqa: F401  (list/dict methods)
from .primitives import unflatten as _unflatten  # noqa: F401  (tree_unflatten, transformed)

from . import _traceback  # noqa: I001

_traceback.install()  # srcjax's frames left out of uncaught tracebacks (JAX's filtering)
from . import _fp_warnings  # noqa: E402,I001

_fp_warnings.install()  # no NumPy inf/nan RuntimeWarnings from srcjax's code (JAX: none)
_malloc.tune()  # steady allocation for repeated steps (srcjax/backends/malloc.py)

_control.mark_tree_outputs()

stop_gradient = _control.stop_gradient
jacobian = jacrev  # jax.jacobian is jacrev

__version__ = "0.1.0"

__all__ = [
    "grad",
    "value_and_grad",
    "source",
    "stop_gradient",
    "config",
    "tree_util",
    "debug",
    "numpy",
    "errors",
    "lax",
    "random",
    "jvp",
    "vjp",
    "linearize",
    "jacfwd",
    "jacrev",
    "hessian",
    "custom_jvp",
    "custom_vjp",
    "jit",
    "vmap",
    "tree",
    "block_until_ready",
    "device_put",
    "checkpoint",
    "remat",
    "Array",
    "Device",
    "ShapeDtypeStruct",
    "default_backend",
    "device_count",
    "device_get",
    "devices",
    "CudaDevice",
    "eval_shape",
    "local_device_count",
    "local_devices",
    "distributed",
    "process_index",
    "process_count",
    "typing",
    "ops",
    "pmap",
    "pure_callback",
    "named_call",
    "make_jaxpr",
    "disable_jit",
    "clear_caches",
    "custom_gradient",
    "closure_convert",
    "linear_transpose",
    "checkpoint_policies",
    "named_scope",
    "default_matmul_precision",
    "Lowered",
    "Compiled",
    "Traced",
    "example_libraries",
]
