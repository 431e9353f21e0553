"""``jax.lax``'s precision names: :class:`Precision` (with JAX's string
aliases), :class:`DotAlgorithmPreset` and :func:`canonicalize_precision`. srcjax
computes in the operands' dtype on NumPy, so they are accepted and checked,
not acted on."""

from __future__ import annotations

import enum
from typing import Any, Optional, Tuple, Union

# ---------------------------------------------------------------------------
# precision


class Precision(enum.Enum):
    """Precision of matrix products on accelerators (jax.lax.Precision).

    ``DEFAULT`` (aliases ``'default'``, ``'fastest'``, ``'bfloat16'``), ``HIGH``
    (``'high'``, ``'bfloat16_3x'``, ``'tensorfloat32'``) and ``HIGHEST``
    (``'highest'``, ``'float32'``); ``Precision('highest')`` looks an alias up.
    srcjax runs on the CPU, where JAX ignores it too: every srcjax product is
    computed in its dtype at full precision (``HIGHEST``). Unknown strings raise
    ValueError, as in JAX."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> Optional["Precision"]:
        return _PRECISION_STRINGS.get(value)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"Precision.{self.name}"

    def __str__(self) -> str:
        return self.name


_PRECISION_STRINGS = {
    "highest": Precision.HIGHEST,
    "float32": Precision.HIGHEST,
    "high": Precision.HIGH,
    "bfloat16_3x": Precision.HIGH,
    "tensorfloat32": Precision.HIGH,
    "default": Precision.DEFAULT,
    "bfloat16": Precision.DEFAULT,
    "fastest": Precision.DEFAULT,
    None: Precision.DEFAULT,
}


class DotAlgorithmPreset(enum.Enum):
    """Named dot-product algorithms (jax.lax.DotAlgorithmPreset), accepted as
    ``precision=`` and ignored: srcjax computes every product in its operands'
    (promoted) dtype."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"DotAlgorithmPreset.{self.name}"

    def __str__(self) -> str:
        return self.name


PrecisionLike = Union[
    None, str, Precision, Tuple[str, str], Tuple[Precision, Precision], DotAlgorithmPreset
]


def canonicalize_precision(precision: PrecisionLike) -> Any:
    """``precision`` as JAX canonicalizes it: None, a pair of :class:`Precision`
    or a :class:`DotAlgorithmPreset` (a preset's name as a string too). Raises
    ValueError, as JAX, for anything else."""
    if precision is None:
        return None
    if isinstance(precision, str):
        if precision in _PRECISION_STRINGS:
            p = Precision(precision)
            return p, p
        if precision in DotAlgorithmPreset.__members__:
            return DotAlgorithmPreset[precision]
    elif isinstance(precision, Precision):
        return precision, precision
    elif isinstance(precision, DotAlgorithmPreset):
        return precision
    elif isinstance(precision, (list, tuple)) and len(precision) == 2:
        if all(isinstance(p, Precision) for p in precision):
            return tuple(precision)
        if all(isinstance(p, str) and p in _PRECISION_STRINGS for p in precision):
            return Precision(precision[0]), Precision(precision[1])
    raise ValueError(
        "Precision argument must be one of: None, a string in "
        f"{[k for k in _PRECISION_STRINGS if k is not None]}, a lax.Precision value, a "
        f"pair of those, or a lax.DotAlgorithmPreset; got {precision!r}."
    )
