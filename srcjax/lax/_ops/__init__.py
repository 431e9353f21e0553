"""JAX's basic ``lax`` operations (``jax.lax.add``, ``lax.rsqrt``, ``lax.pad`` ...).

An operation that is a ``jnp`` primitive (``lax.exp`` is ``jnp.exp``) is that
very :class:`~srcjax.primitives.registry.Primitive`, so transforms resolve it
by identity. The others are compositions of primitives (plain Python that
transformed code inlines like a user function, so their derivatives and
batching come from the primitives they call) or, where NumPy has no matching
operation (``div``'s truncating integer division, ``rem``, the shifts), new
primitives.

Dtype rules follow ``jax.lax`` (JAX 0.10.2): the binary operations do not
promote: their operands must have one dtype after canonicalization (a Python
``int`` is int32, a ``float`` float32, a float64 NumPy value float32 unless
x64), else JAX's TypeError; ``lax.add(x, 2)`` is fine for an int32 ``x`` and a
TypeError for a float32 one, as in JAX. The unary operations bound to ``jnp``
primitives promote integer inputs to float where JAX raises TypeError.
"""

from __future__ import annotations

from ...primitives.creation import full_like
from ...primitives.elementwise import (
    abs,  # noqa: A004
    bitwise_not,
    cbrt,
    ceil,
    cos,
    cosh,
    exp,
    exp2,
    expm1,
    floor,
    log,
    log1p,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    tan,
    tanh,
)
from ...primitives.elementwise import arccos as acos
from ...primitives.elementwise import arcsin as asin
from ...primitives.elementwise import arctan as atan
from ...primitives.elementwise import isfinite as is_finite
from ...primitives.elementwise import negative as neg
from ...primitives.nn import sigmoid as logistic
from ...primitives.special import digamma, erf
from ...primitives.special import erfinv as erf_inv
from ...primitives.special import gammaln as lgamma

__all__ = [
    "RoundingMethod",
    "abs",
    "acos",
    "add",
    "argmax",
    "argmin",
    "asin",
    "atan",
    "atan2",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "broadcast",
    "broadcast_in_dim",
    "cbrt",
    "ceil",
    "clamp",
    "concatenate",
    "convert_element_type",
    "cos",
    "cosh",
    "cumprod",
    "cumsum",
    "digamma",
    "div",
    "dot",
    "dot_general",
    "eq",
    "erf",
    "erf_inv",
    "exp",
    "exp2",
    "expand_dims",
    "expm1",
    "floor",
    "full",
    "full_like",
    "ge",
    "gt",
    "index_in_dim",
    "integer_pow",
    "iota",
    "is_finite",
    "le",
    "lgamma",
    "log",
    "log1p",
    "logistic",
    "lt",
    "max",
    "min",
    "mul",
    "ne",
    "neg",
    "pad",
    "pow",
    "rem",
    "reshape",
    "rev",
    "round",
    "rsqrt",
    "shift_left",
    "shift_right_arithmetic",
    "shift_right_logical",
    "sign",
    "sin",
    "sinh",
    "slice",
    "slice_in_dim",
    "sort",
    "sqrt",
    "square",
    "squeeze",
    "sub",
    "tan",
    "tanh",
    "transpose",
]


from ._static import (  # noqa: F401
    _static,
)
from .elementwise import (  # noqa: F401
    RoundingMethod,
    add,
    atan2,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    clamp,
    convert_element_type,
    div,
    eq,
    ge,
    gt,
    integer_pow,
    le,
    lt,
    max,
    min,
    mul,
    ne,
    pow,
    rem,
    round,
    rsqrt,
    shift_left,
    shift_right_arithmetic,
    shift_right_logical,
    sub,
)
from .structural import (  # noqa: F401
    argmax,
    argmin,
    broadcast,
    broadcast_in_dim,
    concatenate,
    cumprod,
    cumsum,
    dot,
    dot_general,
    expand_dims,
    full,
    index_in_dim,
    iota,
    pad,
    reshape,
    rev,
    slice,
    slice_in_dim,
    sort,
    squeeze,
    transpose,
)
