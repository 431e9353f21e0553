"""``pmap``: JAX's SPMD map, one program per device, the devices in parallel.

``pmap(f)(xs)`` splits the mapped axis of its arguments over devices: device
``i`` runs the per-device program -- ``jit(f)``, whose collectives (``psum``,
``pmean``, ``all_gather``, ``ppermute`` ...) exchange values with the other
devices -- on entry ``i``. The CPU devices are threads
(:mod:`srcjax._spmd`): ``srcjax.devices()`` lists as many as
``jax_num_cpu_devices`` / ``SRCJAX_CPU_DEVICES`` /
``XLA_FLAGS=--xla_force_host_platform_device_count=N`` say (default 1, as
JAX), and a mapped axis longer than that is JAX's ``ValueError``. Results are
the devices' results stacked along ``out_axes``: srcjax Arrays whose
``.sharding`` is JAX's ``NamedSharding`` over the devices, with
``addressable_shards`` (one per device), ``devices()``; they index and convert
(``np.asarray``) as any Array (:mod:`srcjax._sharding`). Each device's fused
regions use its share of the cores (``NUM_THREADS // device count``).

``pmap(f)`` called inside transformed code (``grad`` of a function that calls
``pmap``) is that code's ``vmap``, as is a ``pmap`` nested inside a device's
program: the same numbers, on the enclosing device.

Semantics: https://docs.jax.dev/en/latest/_autosummary/jax.pmap.html
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _spmd as spmd
from . import tree_util
from ._array import Array, wrap_sharded
from ._array import buffer as _buffer
from ._prng_key import PRNGKeyArray
from ._sharding import pmap_sharding
from .errors import TransformValueError
from .jit_api import jit
from .vmap_api import vmap

__all__ = ["pmap"]


def _as_tuple(x: Union[int, Sequence[int], None]) -> tuple:
    if x is None:
        return ()
    if isinstance(x, int):
        return (x,)
    return tuple(x)


def _is_axis(spec: Any) -> bool:
    return spec is None or (isinstance(spec, (int, np.integer)) and not isinstance(spec, bool))


def _leaves_with_axes(x: Any, spec: Any, where: str) -> List[Tuple[Any, int, str]]:
    """``(leaf, axis, where)`` of every mapped leaf of ``x`` under the axes prefix
    ``spec`` (JAX's in_axes pytree prefix)."""
    if spec is None:
        return []
    if _is_axis(spec):
        leaves = tree_util.tree_leaves(x)
        return [(leaf, int(spec), where) for leaf in leaves]
    if isinstance(spec, dict) and isinstance(x, dict):
        if set(spec) != set(x):
            raise ValueError(f"pmap in_axes for {where}: dict keys {sorted(spec)} do not match")
        return [a for k in x for a in _leaves_with_axes(x[k], spec[k], f"{where}[{k!r}]")]
    if isinstance(spec, (list, tuple)) and isinstance(x, (list, tuple)) and len(spec) == len(x):
        return [
            a
            for i, (v, s) in enumerate(zip(x, spec))
            for a in _leaves_with_axes(v, s, f"{where}[{i}]")
        ]
    raise ValueError(
        f"pmap in_axes specification must be a tree prefix of the corresponding value, got "
        f"specification {spec!r} for value tree {tree_util.tree_structure(x)} ({where})"
    )


def _map_axes(x: Any, spec: Any, fn: Callable[[Any, int], Any]) -> Any:
    """``x`` with ``fn(leaf, axis)`` applied to each leaf the prefix ``spec`` maps."""
    if spec is None:
        return x
    if _is_axis(spec):
        return tree_util.tree_map(lambda leaf: fn(leaf, int(spec)), x)
    if isinstance(spec, dict):
        return type(x)({k: _map_axes(x[k], spec[k], fn) for k in x})
    items = [_map_axes(v, s, fn) for v, s in zip(x, spec)]
    return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)


def _take(leaf: Any, axis: int, i: int) -> Any:
    """Entry ``i`` of ``leaf`` along ``axis``: a view (the per-device program never
    writes its inputs), so splitting copies nothing."""
    if not isinstance(leaf, PRNGKeyArray):
        leaf = np.asarray(leaf)
    return leaf[(slice(None),) * (axis % max(leaf.ndim, 1)) + (i,)]


def _stack(per_device: List[Any], spec: Any, devices: List[Any]) -> Any:
    """The devices' outputs joined along the out_axes prefix ``spec``: Arrays
    sharded over ``devices`` (:mod:`srcjax._sharding`; typed keys stay key arrays)."""
    if spec is None:

        def replicated(leaf: Any) -> Any:
            if isinstance(leaf, PRNGKeyArray):
                return leaf
            return wrap_sharded(np.asarray(leaf), pmap_sharding(devices, None))

        return tree_util.tree_map(replicated, per_device[0])
    if _is_axis(spec):

        def join(*leaves: Any) -> Any:
            if isinstance(leaves[0], PRNGKeyArray):
                return np.stack(list(leaves), axis=int(spec))
            arrays = [np.asarray(v) for v in leaves]
            ax = int(spec) if int(spec) >= 0 else int(spec) + arrays[0].ndim + 1
            # (one device: a view of its result, no copy)
            joined = np.expand_dims(arrays[0], ax) if len(arrays) == 1 else np.stack(arrays, ax)
            return wrap_sharded(joined, pmap_sharding(devices, ax))

        return tree_util.tree_map(join, *per_device)
    first = per_device[0]
    if isinstance(spec, dict):
        return type(first)({k: _stack([d[k] for d in per_device], spec[k], devices) for k in first})
    items = [_stack([d[j] for d in per_device], s, devices) for j, s in enumerate(spec)]
    return type(first)(*items) if hasattr(first, "_fields") else type(first)(items)


def _stack_on(per_device: List[Any], spec: Any, devices: List[Any], stack: Callable) -> Any:
    """The devices' outputs joined along the out_axes prefix ``spec`` by
    ``stack(leaves, axis or None, devices)`` (GPUs: shards stay on their devices)."""
    if spec is None or _is_axis(spec):
        ax = None if spec is None else int(spec)
        return tree_util.tree_map(lambda *leaves: stack(list(leaves), ax, devices), *per_device)
    first = per_device[0]
    if isinstance(spec, dict):
        return type(first)(
            {k: _stack_on([d[k] for d in per_device], spec[k], devices, stack) for k in first}
        )
    items = [_stack_on([d[j] for d in per_device], s, devices, stack) for j, s in enumerate(spec)]
    return type(first)(*items) if hasattr(first, "_fields") else type(first)(items)


class _Collector:
    """The devices' results stacked along an int ``out_axes`` by the devices
    themselves (:func:`srcjax._spmd.run`'s ``collect``), for outputs of at least
    ``MIN_BYTES`` per device; else ``_stack`` joins them afterwards.

    The stacked outputs come from the runtime's buffer pool. With ``out_axes=0``
    and the outputs' shapes known from the last call with these argument shapes
    (``plan``), they are made before the devices run and each device's row is
    offered to its output allocation (:func:`srcjax._spmd.take_place`), so
    usually nothing is copied; each device copies whatever did not land in
    place, side by side."""

    MIN_BYTES = 1 << 20

    def __init__(self, spec: Any, n: int, plan: Optional[List[Tuple[tuple, Any]]]) -> None:
        self.spec = spec
        self.n = n
        self.out: Optional[Tuple[Any, List[np.ndarray], int]] = None
        #: the outputs' (shape, dtype) per device learned from this call
        self.learned: Optional[List[Tuple[tuple, Any]]] = None
        self.ready: Optional[List[np.ndarray]] = None
        if plan is not None and spec == 0 and n > 1:
            from .backends.runtime import empty

            self.ready = [empty((n,) + shape, dt) for shape, dt in plan]

    def places(self) -> Optional[List[list]]:
        """Per device, its rows of the stacked outputs made in advance (or None)."""
        if self.ready is None:
            return None
        return [[(o.shape[1:], o.dtype, o[i]) for o in self.ready] for i in range(self.n)]

    def __call__(self, results: List[Any]) -> Optional[Callable[[int, Any], None]]:
        from .backends.runtime import empty

        if not _is_axis(self.spec) or self.spec is None or len(results) == 1:
            return None  # (one device: _stack's view of its result)
        flat = [tree_util.tree_flatten(r) for r in results]
        treedef = flat[0][1]
        if any(f[1] != treedef for f in flat):
            return None
        columns = list(zip(*[f[0] for f in flat]))
        firsts = []
        for col in columns:
            if not all(type(v) in (Array, np.ndarray) for v in col):
                return None
            first = _buffer(col[0])
            if any(_buffer(v).shape != first.shape or _buffer(v).dtype != first.dtype for v in col):
                return None
            firsts.append(first)
        if sum(b.nbytes for b in firsts) < self.MIN_BYTES:
            return None
        self.learned = [(b.shape, b.dtype) for b in firsts]
        ax = int(self.spec)
        n = len(results)
        if self.ready is not None and [(o.shape[1:], o.dtype) for o in self.ready] == self.learned:
            outs = self.ready
        else:
            outs = []
            for b in firsts:
                a = ax if ax >= 0 else ax + b.ndim + 1
                outs.append(empty(b.shape[:a] + (n,) + b.shape[a:], b.dtype))
        self.out = (treedef, outs, ax)

        def put(i: int, result: Any) -> None:
            bufs = [_buffer(leaf) for leaf in tree_util.tree_leaves(result)]
            rows = []
            for o, b in zip(outs, bufs):
                a = ax if ax >= 0 else ax + b.ndim + 1
                rows.append(o[(slice(None),) * a + (i,)])
            moves = []
            for b, row in zip(bufs, rows):
                if _same_memory(b, row):
                    continue  # (computed in place)
                if any(np.shares_memory(b, r) for r in rows):
                    b = b.copy()  # (a row lent to an intermediate that another output is)
                moves.append((b, row))
            for b, row in moves:
                row[...] = b

        return put

    def stacked(self, devices: List[Any]) -> Any:
        treedef, outs, ax = self.out  # type: ignore[misc]
        arrays = [
            wrap_sharded(o, pmap_sharding(devices, ax if ax >= 0 else ax + o.ndim)) for o in outs
        ]
        return tree_util.tree_unflatten(treedef, arrays)


def _same_memory(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a`` and ``b`` are the same elements (same start, shape, strides)."""
    return (
        a.shape == b.shape
        and a.strides == b.strides
        and a.dtype == b.dtype
        and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    )


def _shapes_key(args: tuple) -> Any:
    """The shapes and dtypes of a device's arguments (other leaves by value where
    hashable): the key of :class:`_Collector`'s plans."""
    key = []
    for leaf in tree_util.tree_leaves(args):
        if isinstance(leaf, (np.ndarray, Array, PRNGKeyArray)):
            key.append((tuple(leaf.shape), str(leaf.dtype)))
        else:
            try:
                hash(leaf)
                key.append((type(leaf), leaf))
            except TypeError:
                key.append((type(leaf), id(leaf)))
    return (tree_util.tree_structure(args), tuple(key))


def _threads() -> int:
    """Worker threads of one CPU device's fused regions: the process's share of
    the cores divided among its configured CPU devices (at least one), so the
    devices of a pmap compute side by side instead of contending for one pool."""
    from .backends._devices import cpu_device_count
    from .backends.runtime import NUM_THREADS

    return max(1, NUM_THREADS // cpu_device_count())


class _PMapped:
    """The function ``pmap`` returns (see :func:`pmap`)."""

    def __init__(
        self,
        fun: Callable,
        axis_name: Any,
        in_axes: Any,
        out_axes: Any,
        static: tuple,
        devices: Optional[Sequence[Any]],
        axis_size: Optional[int],
        donate: tuple,
    ) -> None:
        self.fun = fun
        self.axis_name = axis_name
        self.in_axes = in_axes
        self.out_axes = out_axes
        self.static = static
        self.devices = None if devices is None else list(devices)
        self.axis_size = axis_size
        self.donate = donate
        self._programs: Dict[int, Callable] = {}
        self._emulated: Dict[int, Callable] = {}
        #: argument shapes -> the large outputs' (shape, dtype) per device (_Collector)
        self._plans: Dict[Any, List[Tuple[tuple, Any]]] = {}
        functools.update_wrapper(self, fun, updated=())  # (not fun.__dict__: a transform's state)

    # ------------------------------------------------------------------ pieces
    def _axes(self, n: int) -> tuple:
        """Per-argument in_axes (None at static positions), for ``n`` arguments."""
        pos = {i + n if i < 0 else i for i in self.static}
        if isinstance(self.in_axes, (list, tuple)):
            axes = list(self.in_axes)
            if len(axes) == n - len(pos) and pos:  # in_axes lists the non-static ones
                it = iter(axes)
                axes = [None if i in pos else next(it) for i in range(n)]
            if len(axes) != n:
                raise ValueError(
                    f"pmap in_axes must be an int, None, or a tuple of entries corresponding "
                    f"to the positional arguments passed to the function, but got "
                    f"len(in_axes)={len(axes)}, len(args)={n}"
                )
        else:
            axes = [self.in_axes] * n
        return tuple(None if i in pos else a for i, a in enumerate(axes))

    def _program(self, n: int) -> Callable:
        """The per-device program for ``n`` arguments: ``jit(fun)``."""
        prog = self._programs.get(n)
        if prog is None:
            pos = tuple(sorted({i + n if i < 0 else i for i in self.static}))
            prog = self._programs[n] = jit(self.fun, static_argnums=pos)
        return prog

    def _emulation(self, n: int) -> Callable:
        """``jit(vmap(fun))``: all entries at once on the current device (for a
        pmap nested in a device's program)."""
        fn = self._emulated.get(n)
        if fn is None:
            axes = self._axes(n)
            mapped = vmap(self.fun, in_axes=axes, out_axes=self.out_axes, axis_name=self.axis_name)
            pos = tuple(sorted({i + n if i < 0 else i for i in self.static}))
            fn = self._emulated[n] = jit(mapped, static_argnums=pos)
        return fn

    def _size(self, args: tuple, axes: tuple) -> int:
        found: List[Tuple[Any, int, str]] = []
        for i, (a, spec) in enumerate(zip(args, axes)):
            found += _leaves_with_axes(a, spec, f"argument {i}")
        sizes = []
        for leaf, ax, where in found:
            shape = np.shape(leaf)
            if not -len(shape) <= ax < len(shape):
                raise ValueError(
                    f"pmap was requested to map its argument along axis {ax}, which implies "
                    f"that its rank should be at least {max(ax, -ax - 1) + 1}, but is only "
                    f"{len(shape)} (its shape is {shape}; {where})"
                )
            sizes.append((shape[ax], where))
        if not sizes:
            if self.axis_size is None:
                raise ValueError("pmap requires at least one argument with a mapped axis")
            return int(self.axis_size)
        if len({s for s, _ in sizes}) > 1:
            lines = "\n".join(f"  * one axis had size {s}: {w}" for s, w in sizes)
            raise ValueError(f"pmap got inconsistent sizes for array axes to be mapped:\n{lines}")
        return sizes[0][0]

    def _devices_for(self, n: int) -> list:
        from .backends._devices import cpus, gpus

        if self.devices is not None:
            if len(self.devices) != n:
                raise ValueError(
                    f"Leading axis size of input to pmapped function must equal the number of "
                    f"local devices passed to pmap. Got axis_size={n}, "
                    f"num_local_devices={len(self.devices)}."
                )
            return self.devices
        # (the GPUs when they are the default platform, else the CPU devices: threads)
        avail = gpus() or cpus()
        if n > len(avail):
            raise ValueError(
                f"compiling computation that requires {n} logical devices, but only "
                f"{len(avail)} XLA devices are available (num_replicas={n}); set "
                f'srcjax.config.update("jax_num_cpu_devices", {n}), SRCJAX_CPU_DEVICES={n} '
                f"or XLA_FLAGS=--xla_force_host_platform_device_count={n}"
            )
        return avail[:n]

    @property
    def _generated(self) -> Callable:
        """For ``pmap(f)(x)`` inside transformed code (the normalizer inlines it):
        the generated code of ``vmap(f)``, the same numbers on the enclosing
        device. Static arguments have no such form (AttributeError)."""
        if self.static:
            raise AttributeError("_generated")
        vm = vmap(self.fun, in_axes=self.in_axes, out_axes=self.out_axes, axis_name=self.axis_name)
        return vm._generated

    # ------------------------------------------------------------------ calling
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:  # keyword arguments are mapped over axis 0 (JAX)
            args = args + tuple(kwargs.values())
            names = tuple(kwargs)
        else:
            names = ()
        n = len(args)
        axes = self._axes(n - len(names)) + (0,) * len(names)
        if spmd.inside():  # a pmap inside a device's program: vmap on this device
            return self._emulation(n)(*args)
        size = self._size(args, axes)
        devices = self._devices_for(size)
        program = self._program(n)
        shards = [
            tuple(
                _map_axes(a, ax, lambda leaf, axis, i=i: _take(leaf, axis, i))
                for a, ax in zip(args, axes)
            )
            for i in range(size)
        ]
        if names:
            k = len(names)

            def run(*a: Any) -> Any:
                return program(*a[:-k], **dict(zip(names, a[-k:])))

        else:
            run = program
        if any(getattr(d, "platform", "cpu") == "gpu" for d in devices):
            return self._on_gpus(run, shards, devices, axes, len(names))
        from . import distributed

        remote = distributed.remote()
        key = _shapes_key(shards[0])
        collector = _Collector(self.out_axes, size, self._plans.get(key))
        results = spmd.run(
            run,
            shards,
            self.axis_name,
            remote=remote,
            cores=_threads(),
            collect=collector,
            places=collector.places(),
        )
        if collector.learned is not None:
            self._plans[key] = collector.learned
        if collector.out is not None:
            return collector.stacked(devices)
        return _stack(results, self.out_axes, devices)

    def _on_gpus(
        self, run: Callable, shards: List[tuple], devices: list, axes: tuple, nkw: int
    ) -> Any:
        """The devices' programs on their GPUs (:mod:`srcjax.backends.cupy_cuda.spmd`):
        each device's arguments put on its GPU, its program run there with a
        stream of its own, the results sharded Arrays whose shards stay on
        their GPUs. Not across processes yet."""
        from . import distributed
        from .backends.cupy_cuda import is_device_array
        from .backends.cupy_cuda import spmd as gpu
        from .devices import device_put

        def put(leaf: Any, device: Any) -> Any:  # (array leaves; scalars, keys as they are)
            if isinstance(leaf, (np.ndarray, np.generic, Array)) or is_device_array(leaf):
                return device_put(leaf, device)
            return leaf

        if distributed.remote() is not None:
            raise NotImplementedError("pmap over GPUs across processes is not implemented")
        if any(getattr(d, "platform", "cpu") != "gpu" for d in devices):
            raise ValueError(f"pmap over GPUs and CPU devices together: {devices}")
        static = {i + len(axes) - nkw if i < 0 else i for i in self.static}
        placed = [
            tuple(
                a if j in static else tree_util.tree_map(lambda v, d=d: put(v, d), a)
                for j, a in enumerate(shard)
            )
            for shard, d in zip(shards, devices)
        ]
        results = spmd.run(
            run, placed, self.axis_name, enter=lambda i: gpu.on_device(devices[i].id)
        )
        return _stack_on(results, self.out_axes, devices, gpu.stack)

    def _pmap_source_for(self, *example_args: Any) -> str:
        """The per-device program's source for arguments like ``example_args``
        (their mapped axes removed): what each device runs."""
        n = len(example_args)
        axes = self._axes(n)
        shard = tuple(
            _map_axes(a, ax, lambda leaf, axis: _take(leaf, axis, 0))
            for a, ax in zip(example_args, axes)
        )
        head = f"# srcjax: pmap (axis_name={self.axis_name!r}): every device runs this program\n"
        return head + self._program(n)._source_for(*shard)


def pmap(
    fun: Optional[Callable] = None,
    axis_name: Optional[Any] = None,
    *,
    in_axes: Any = 0,
    out_axes: Any = 0,
    static_broadcasted_argnums: Union[int, Sequence[int]] = (),
    devices: Optional[Sequence[Any]] = None,
    backend: Optional[str] = None,
    axis_size: Optional[int] = None,
    donate_argnums: Union[int, Sequence[int]] = (),
    global_arg_shapes: Any = None,
) -> Callable:
    """Parallel map over a leading axis on devices (``jax.pmap``).

    ``pmap(f)(xs)`` equals ``stack([f(x) for x in xs])`` where each call runs on
    its own device, all at once; collectives named ``axis_name`` inside ``f``
    (``lax.psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``all_to_all``,
    ``psum_scatter``, ``axis_index``, ``ppermute``, ``pshuffle``, with
    ``axis_index_groups``) combine the devices' values as in JAX. Usable as a
    decorator, with or without arguments.

    Args:
        fun: the per-device function (its source must be available).
        axis_name: the name collectives use for the mapped axis.
        in_axes, out_axes: an int, None or a pytree prefix per argument/output,
            as JAX's (keyword arguments are mapped over axis 0).
        static_broadcasted_argnums: positional arguments passed unmapped and
            static (hashable; a new value specializes again), as in JAX.
        devices: the devices to run on (as many as the mapped axis is long);
            default the first of ``srcjax.local_devices()``.
        axis_size: the mapped size when no argument is mapped.
        backend, global_arg_shapes: accepted for compatibility.
        donate_argnums: accepted (devices' inputs are slices of the arguments).

    Returns:
        The mapped function: srcjax Arrays with the mapped axis at ``out_axes``
        (``.sharding`` a ``NamedSharding`` over the devices, ``.addressable_shards``
        one entry per device, as JAX 0.10.2's), dtypes as ``f`` gives them;
        typed key arrays stay key arrays.

    Raises:
        ValueError: a mapped axis longer than the number of devices (JAX's
            message, with how to configure more CPU devices); inconsistent
            mapped sizes; ``devices`` of another length than the mapped axis.
        NameError: a collective names an axis that no enclosing
            ``pmap``/``vmap`` maps.
    """
    if fun is None or not callable(fun):
        if fun is not None:  # pmap("i") is not JAX's form either
            raise TransformValueError("pmap expects a function as its first argument")
        return functools.partial(
            pmap,
            axis_name=axis_name,
            in_axes=in_axes,
            out_axes=out_axes,
            static_broadcasted_argnums=static_broadcasted_argnums,
            devices=devices,
            backend=backend,
            axis_size=axis_size,
            donate_argnums=donate_argnums,
            global_arg_shapes=global_arg_shapes,
        )
    del backend, global_arg_shapes
    return _PMapped(
        fun,
        axis_name,
        in_axes,
        out_axes,
        _as_tuple(static_broadcasted_argnums),
        devices,
        axis_size,
        _as_tuple(donate_argnums),
    )


pmap.__srcjax_factory__ = True  # pmap(f)(x) inside transformed code: inlined as vmap
