"""The backend protocol: what a backend provides so that ``jit`` can run on it.

A *backend* turns the optimized IR of one specialization into code for one
kind of device, and supplies what that code reads when it runs. ``jit``
(:mod:`srcjax.jit_api`) reaches a backend only through this protocol:
:func:`srcjax.backends.get` returns the :class:`Backend` for a name, and jit
calls :meth:`Backend.lower`, :meth:`Backend.namespaces` and the array hooks.

What a backend implements (``backends/<name>/`` or ``backends/<name>.py``,
registered in :data:`srcjax.backends.KNOWN`):

``name``
    The backend's name (``"cpu"``). It is also the key of the primitives'
    implementations: ``prim.impls[name]``, registered with
    ``prim.def_impl(name, fn)`` and read with ``prim.impl_for(name)``
    (:mod:`srcjax.primitives.registry`).

``platform``
    The device platform it computes on (``"cpu"``, ``"gpu"``), as
    ``jax.Device.platform`` spells it.

``namespaces() -> dict``
    Names the generated module of this backend binds besides the common ones of
    :func:`srcjax.codegen.emit.namespaces` (``jnp``, ``np``, ``ad``, ``nn`` ...):
    the runtime module as ``_rt`` (chunked loops, buffer pools, kernel
    launches), and any namespace it overrides (a GPU backend binds ``jnp`` to
    its own implementations).

``can_fuse(prim, operands, operand_values, result) -> bool``
    Whether the backend computes elementwise primitive ``prim`` inside a fused
    region, given its operands (AST nodes: names or scalar constants), scalar
    stand-ins of their dtypes, and the result's abstract value
    (:class:`srcjax.transforms.optimize.Aval`). The region analysis
    (:func:`srcjax.transforms.fusion.find_regions`) asks it for every candidate
    statement; the default, :func:`srcjax.transforms.fusion.jax_dtype_matches`,
    accepts any elementwise primitive whose result dtype is JAX's.

``lower_region(region, namer, filename) -> list of statements``
    The code computing one fused region (:class:`srcjax.transforms.fusion.Region`),
    in place of the region's statements. A region is backend-neutral data:
    ``region.plan`` is a list of :class:`srcjax.transforms.fusion.Step`
    ``(prim, operands, target, aval)`` in program order, ``region.inputs`` maps
    each external operand to its abstract value (shape, dtype, weak type),
    ``region.outputs`` names the values read after the region (to be
    materialized), ``region.shape`` / ``region.mode`` give the iteration space,
    and ``region.reduction`` / ``reduce_kind`` / ``reduce_operand`` an optional
    terminating full reduction. A C-based backend renders each step from
    ``step.prim.c_expr`` (``"sin({x})"``) and the dtypes from the avals.
    ``namer.fresh(hint)`` gives a fresh identifier; statements are gast nodes
    (:func:`srcjax.frontend.nodes.parse_stmts` parses source text).

``prepare(fdef, filename) -> None``
    Rewrites ``fdef`` in place before its fused regions are found (the CPU
    backend compiles loops over scalars with Numba there); the default does
    nothing.

``min_region_size() -> (min_size, min_size_cheap)``
    The element counts below which regions are not formed (plain per-operation
    code is faster there), ``min_size_cheap`` for regions of cheap operations
    only (see :data:`srcjax.transforms.fusion.CHEAP`).

``entry(fn, device) -> callable``
    The loaded generated function as jit calls it for ``device``: the CPU
    backend returns ``fn`` itself; a GPU backend moves host arguments to the
    device first.

Array hooks (creation and transfer)
    ``asarray(x, dtype=None)`` makes a device array from host data or a device
    array, ``to_host(x)`` returns a NumPy array, ``empty(shape, dtype)`` allocates
    an uninitialized device array, and ``is_array(x)`` tells the backend's arrays
    from other values. For the CPU backend, device arrays are NumPy arrays.

:meth:`Backend.lower`, the walk over a function's blocks that finds the regions
and splices in their lowered code, is shared: a backend normally implements
only ``can_fuse``, ``lower_region``, ``namespaces`` and the array hooks.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import gast
import numpy as np

from ..frontend import nodes as N
from ..transforms import fusion

__all__ = ["Backend"]


class Backend:
    """Base class of backends (see the module docstring for the protocol).

    Subclasses set :attr:`name` and :attr:`platform` and implement
    :meth:`lower_region`; the other methods have CPU-style defaults."""

    #: key of ``Primitive.impls`` and of :func:`srcjax.backends.get`
    name: str = ""
    #: ``jax.Device.platform`` of the devices it computes on
    platform: str = ""
    #: whether a fused region may end in a reduction over some axes only
    #: (``Region.reduce_axis``); else only full reductions end regions
    axis_reductions: bool = False

    # -- what generated code reads -------------------------------------------
    def namespaces(self) -> Dict[str, Any]:
        """Names bound in this backend's generated modules, besides the common
        namespaces of :func:`srcjax.codegen.emit.namespaces`."""
        return {}

    def impl(self, prim: Any) -> Any:
        """``prim``'s implementation on this backend (``prim.impl_for(name)``)."""
        return prim.impl_for(self.name)

    # -- fusion ---------------------------------------------------------------
    def can_fuse(self, prim: Any, operands: List[Any], values: List[Any], res: Any) -> bool:
        """Whether ``prim`` may be a step of a fused region on this backend."""
        return fusion.jax_dtype_matches(prim, operands, values, res)

    def min_region_size(self) -> Tuple[int, Optional[int]]:
        """``(min_size, min_size_cheap)`` in elements (see the module docstring)."""
        return 1, None

    def lower_region(self, region: fusion.Region, namer: Any, filename: str) -> List[Any]:
        """Statements computing ``region`` (see the module docstring)."""
        raise NotImplementedError(f"backend {self.name!r} does not lower fused regions")

    def prepare(self, fdef: Any, filename: str) -> None:
        """Rewrite ``fdef`` before :meth:`lower` finds its regions (see the module
        docstring); nothing here."""

    def lower(
        self,
        fdef: Any,
        namer: Any,
        filename: str,
        donatable: Tuple[str, ...] = (),
        min_size: Optional[int] = None,
        min_size_cheap: Optional[int] = None,
    ) -> Tuple[Any, int]:
        """Replace every fused region of ``fdef`` (optimized, abstract values
        annotated) by :meth:`lower_region`'s code. ``donatable`` names the
        parameters whose buffers outputs may reuse. Thresholds default to
        :meth:`min_region_size`. Returns ``(fdef, number of regions)``.
        :meth:`prepare` runs first."""
        self.prepare(fdef, filename)
        if min_size is None:
            min_size, default_cheap = self.min_region_size()
            if min_size_cheap is None:
                min_size_cheap = default_cheap
        reads = fusion.read_counts(fdef.body)
        count = [0]
        assigned = set(N.assigned_names(fdef.body))
        donatable = tuple(p for p in donatable if p not in assigned)

        def block(stmts: List[Any], top: bool) -> List[Any]:
            for s in stmts:
                if isinstance(s, gast.If):
                    s.body = block(s.body, top)
                    s.orelse = block(s.orelse, top)
                elif isinstance(s, (gast.While, gast.For)):
                    s.body = block(s.body, False)
            regions = fusion.find_regions(
                stmts, reads, min_size, donatable, top, min_size_cheap, self.can_fuse,
                self.axis_reductions,
            )  # fmt: skip
            if not regions:
                return stmts
            out: List[Any] = []
            pos = 0
            for start, end, reg in regions:
                out.extend(stmts[pos:start])
                out.extend(self.lower_region(reg, namer, filename))
                count[0] += 1
                pos = end
            out.extend(stmts[pos:])
            return out

        fdef.body = block(fdef.body, True)
        return fdef, count[0]

    def entry(self, fn: Any, device: Any) -> Any:
        """``fn`` (a loaded generated function) as jit calls it on ``device``."""
        return fn

    # -- arrays: creation and transfer ---------------------------------------
    def is_array(self, x: Any) -> bool:
        """Whether ``x`` is an array of this backend."""
        return isinstance(x, np.ndarray)

    def asarray(self, x: Any, dtype: Any = None) -> Any:
        """``x`` (host data or an array of this backend) as an array of this backend."""
        return np.asarray(x, dtype=dtype)

    def to_host(self, x: Any) -> np.ndarray:
        """``x`` as a NumPy array in host memory."""
        return np.asarray(x)

    def empty(self, shape: Tuple[int, ...], dtype: Any) -> Any:
        """An uninitialized array of this backend."""
        return np.empty(shape, dtype)

    def __repr__(self) -> str:
        return f"<srcjax backend {self.name}>"
