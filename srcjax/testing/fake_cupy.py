"""A test double for the part of CuPy's API srcjax's CUDA backend calls.

Arrays (:class:`FakeArray`: a NumPy buffer and a device id, refusing implicit
conversion to NumPy as ``cupy.ndarray`` does), transfers, the three kernel
classes and the library calls (``matmul``, ``einsum``, ``linalg.solve``,
``fft``: NumPy on the buffers). The kernels run the exact source CuPy 14.2.0
would compile for their arguments, built by CuPy's private code builders and
compiled for the CPU by :mod:`srcjax.backends.cupy_cuda.offline` (g++, the CUDA
shim, ctypes). Install it with ``srcjax.backends.cupy_cuda.use_cupy(use_fake())``.
"""

from __future__ import annotations

import ctypes
import hashlib
import threading
from typing import Any, Dict, List, Optional

import numpy as np

from ..backends.cupy_cuda.offline import (
    _CTYPES,
    CUPY_VERSION,
    _contiguous,
    carray,
    cindexer,
    cpu_kernels,
    elementwise_source,
    reduced_view,
    reduction_source,
)

__all__ = ["FakeArray", "FakeCupy", "use_fake", "FAKE"]


# -- 3. the test double for CuPy -------------------------------------------------------------
class FakeArray:
    """A device array of the double: a NumPy buffer and a device id. Like
    ``cupy.ndarray`` it refuses implicit conversion to NumPy (``np.asarray``
    raises TypeError), so a host detour in the CUDA path is an error in tests;
    NumPy functions and ufuncs dispatch to "device" code (NEP 13/18), as CuPy's
    do, and return FakeArrays."""

    __array_priority__ = 100
    __srcjax_device_array__ = True  # (srcjax.devices.is_device_array)

    def __init__(self, data: np.ndarray, device: int = 0) -> None:
        self._data = data
        self.device_id = device

    # what srcjax reads
    shape = property(lambda self: self._data.shape)
    dtype = property(lambda self: self._data.dtype)
    ndim = property(lambda self: self._data.ndim)
    size = property(lambda self: self._data.size)
    strides = property(lambda self: self._data.strides)
    itemsize = property(lambda self: self._data.itemsize)
    nbytes = property(lambda self: self._data.nbytes)
    T = property(lambda self: FakeArray(self._data.T, self.device_id))

    @property
    def device(self) -> Any:
        return _FakeDevice(self.device_id)

    def get(self) -> np.ndarray:
        return np.array(self._data)

    def __array__(self, *a: Any, **k: Any) -> Any:
        raise TypeError(
            "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to "
            "construct a NumPy array explicitly."
        )

    def __repr__(self) -> str:
        return f"FakeArray({self._data!r}, device={self.device_id})"

    def __len__(self) -> int:
        return len(self._data)

    def __bool__(self) -> bool:
        return bool(self._data)

    def __float__(self) -> float:
        return float(self._data)

    def __int__(self) -> int:
        return int(self._data)

    def __index__(self) -> int:
        return self._data.__index__()

    def item(self) -> Any:
        return self._data.item()

    def _wrap(self, r: Any) -> Any:
        return _wrap(r, self.device_id)

    def __getitem__(self, idx: Any) -> Any:
        return self._wrap(self._data[_cupy_index(self._data.shape, _unwrap(idx))])

    def __setitem__(self, idx: Any, v: Any) -> None:
        self._data[_cupy_index(self._data.shape, _unwrap(idx))] = _unwrap(v)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        attr = getattr(self._data, name)
        if callable(attr):
            return lambda *a, **k: self._wrap(attr(*_unwrap(a), **_unwrap(k)))
        return self._wrap(attr)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kw: Any) -> Any:
        _check_devices(inputs)
        dev = _device_of(inputs)
        inputs = _unwrap(inputs)
        if method == "at":  # (CuPy's scatter wraps an index array out of bounds)
            a, i, *rest = inputs
            inputs = (a, _cupy_index(np.shape(a), i), *rest)
        return _wrap(getattr(ufunc, method)(*inputs, **_unwrap(kw)), dev)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        _check_devices(args)
        dev = _device_of(args)
        args, kwargs = _unwrap(args), _unwrap(kwargs)
        if func in _WRAPPING:  # CuPy's take/take_along_axis: out of bounds wraps around
            args, kwargs = _WRAPPING[func](*args, **kwargs)
        return _wrap(func(*args, **kwargs), dev)


def _binop(name: str) -> Any:
    def op(self: FakeArray, other: Any) -> Any:
        _check_devices((self, other))
        return self._wrap(getattr(self._data, name)(_unwrap(other)))

    op.__name__ = name
    return op


for _n in (
    "add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv mod rmod pow rpow matmul "
    "rmatmul and rand or ror xor rxor lshift rlshift rshift rrshift lt le gt ge eq ne"
).split():
    setattr(FakeArray, f"__{_n}__", _binop(f"__{_n}__"))
for _n in ("neg", "pos", "abs", "invert"):
    setattr(
        FakeArray, f"__{_n}__", lambda self, _n=_n: self._wrap(getattr(self._data, f"__{_n}__")())
    )
FakeArray.__hash__ = None  # type: ignore[assignment]


def _cupy_index(shape: tuple, idx: Any) -> Any:
    """``idx`` as CuPy reads it: an integer index *array* out of bounds wraps
    around (``i mod n``; CuPy's fancy indexing, scatters and ``take`` do not
    raise), a Python integer out of bounds is NumPy's IndexError."""
    from ..primitives.ad import oob  # noqa: PLC0415

    if isinstance(idx, list):
        idx = np.asarray(idx)
    items = list(idx) if isinstance(idx, tuple) else [idx]
    new = []
    for it, axis in oob.index_axes(shape, idx):
        if axis is not None and isinstance(it, np.ndarray) and it.ndim > 0 and shape[axis] > 0:
            it = np.mod(it, shape[axis])
        new.append(it)
    assert len(new) == len(items)
    return tuple(new) if isinstance(idx, tuple) else new[0]


def _wrap_along(a: Any, indices: Any, axis: Any = None, *rest: Any, **kw: Any) -> tuple:
    n = np.size(a) if axis is None else np.shape(a)[axis]
    if isinstance(indices, (np.ndarray, list)) and n > 0:
        indices = np.mod(indices, n)
    return (a, indices, axis, *rest), kw


def _wrap_take_along(arr: Any, indices: Any, axis: Any = -1, **kw: Any) -> tuple:
    n = np.size(arr) if axis is None else np.shape(arr)[axis]
    return (arr, np.mod(indices, n) if n > 0 else indices, axis), kw


_WRAPPING = {np.take: _wrap_along, np.take_along_axis: _wrap_take_along}


def _unwrap(x: Any) -> Any:
    if isinstance(x, FakeArray):
        return x._data
    if isinstance(x, (list, tuple)):
        return type(x)(_unwrap(v) for v in x)
    if isinstance(x, dict):
        return {k: _unwrap(v) for k, v in x.items()}
    return x


def _wrap(x: Any, device: int) -> Any:
    if isinstance(x, np.ndarray):
        return FakeArray(x, device)
    if isinstance(x, np.generic):
        return FakeArray(np.asarray(x), device)  # CuPy returns 0-d arrays
    if isinstance(x, tuple):
        return tuple(_wrap(v, device) for v in x)
    if isinstance(x, list):
        return [_wrap(v, device) for v in x]
    return x


def _device_of(args: Any) -> int:
    for a in _leaves(args):
        if isinstance(a, FakeArray):
            return a.device_id
    return 0


def _leaves(x: Any) -> List[Any]:
    if isinstance(x, (list, tuple)):
        return [v for e in x for v in _leaves(e)]
    if isinstance(x, dict):
        return [v for e in x.values() for v in _leaves(e)]
    return [x]


def _check_devices(args: Any) -> None:
    devs = {a.device_id for a in _leaves(args) if isinstance(a, FakeArray)}
    if len(devs) > 1:
        raise ValueError(f"arrays on different devices: {sorted(devs)}")
    if any(isinstance(a, np.ndarray) and a.ndim > 0 for a in _leaves(args)) and devs:
        raise TypeError("Unsupported type <class 'numpy.ndarray'>")  # CuPy's refusal


class _FakeDevice:
    def __init__(self, i: int) -> None:
        self.id = i

    def __enter__(self) -> "_FakeDevice":
        _current().append(self.id)
        return self

    def __exit__(self, *exc: Any) -> None:
        _current().pop()

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, _FakeDevice) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id}>"

    compute_capability = "90"


_TLS = threading.local()


def _current() -> List[int]:
    """This thread's stack of current devices (CUDA's current device is per
    host thread, as CuPy's ``Device`` context is)."""
    stack = getattr(_TLS, "devices", None)
    if stack is None:
        stack = _TLS.devices = [0]
    return stack


class FakeStream:
    """``cupy.cuda.Stream`` stand-in: made on the current device; as a context
    it is the thread's current stream; ``synchronize`` is counted (the double
    runs every kernel at once, so there is nothing to wait for)."""

    null: "FakeStream"

    def __init__(self, null: bool = False, non_blocking: bool = False, ptds: bool = False) -> None:
        self.device_id = _current()[-1]
        self.non_blocking = non_blocking
        self.synchronized = 0
        if not null:
            FAKE.stats.streams.append(self)

    def synchronize(self) -> None:
        self.synchronized += 1

    def __enter__(self) -> "FakeStream":
        if self.device_id != _current()[-1]:  # (CuPy refuses a stream of another device)
            raise RuntimeError("the stream's device is not the current device")
        stack = getattr(_TLS, "streams", None)
        if stack is None:
            stack = _TLS.streams = []
        stack.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _TLS.streams.pop()


FakeStream.null = FakeStream(null=True)


def _current_stream() -> FakeStream:
    stack = getattr(_TLS, "streams", None)
    return stack[-1] if stack else FakeStream.null


class _Stats:
    """What the double did: kernels built (by source hash), launches, transfers."""

    def __init__(self) -> None:
        self.sources: Dict[str, str] = {}  # hash -> source
        self.compiles = 0
        self.launches = 0
        self.to_device = 0
        self.to_host = 0
        #: the streams made (``cupy.cuda.Stream(...)``), in order
        self.streams: List[Any] = []


class FakeElementwiseKernel:
    """``cupy.ElementwiseKernel``: on a call, the exact source CuPy would build
    for these arguments (:func:`elementwise_source`), compiled with g++ and the
    shim (once per source), run on the arrays' buffers."""

    def __init__(
        self, in_params: str, out_params: str, operation: str, name: str = "kernel",
        reduce_dims: bool = True, preamble: str = "", **kw: Any,
    ) -> None:  # fmt: skip
        from cupy._core import _kernel  # noqa: PLC0415

        self.in_params, self.out_params = in_params, out_params
        self.operation, self.name, self.preamble = operation, name, preamble
        self._ins = _kernel._get_param_info(in_params, True)
        self._outs = _kernel._get_param_info(out_params, False)
        self.nin = len(self._ins)
        self.cached_codes: Dict[tuple, str] = {}
        self._cupy = FAKE

    @property
    def cached_code(self) -> str:
        return next(iter(self.cached_codes.values()))

    def __call__(self, *args: Any, size: int = -1, block_size: int = 128) -> Any:
        if len(args) != self.nin:
            raise TypeError(f"{self.name}: takes {self.nin} arguments, got {len(args)}")
        _check_devices(args)
        dev = _device_of(args)
        arrays = [a for a in args if isinstance(a, FakeArray)]
        shape = np.broadcast_shapes(*[a.shape for a in arrays]) if arrays else ()
        scalars = [not isinstance(a, FakeArray) for a in args]
        in_dtypes = [a.dtype if isinstance(a, FakeArray) else np.asarray(a).dtype for a in args]
        from cupy._core import _kernel  # noqa: PLC0415

        in_types, out_types, _ = _kernel._decide_params_type(
            self._ins, self._outs, tuple(None if sc else d for d, sc in zip(in_dtypes, scalars)), ()
        )
        outs = [np.empty(shape, t) for t in out_types]
        views = [np.broadcast_to(a._data, shape) for a in arrays] + outs
        rshape, rstrides = reduced_view(shape, views)
        contiguous = [_contiguous(rshape, st, v.itemsize) for st, v in zip(rstrides, views)]
        src = elementwise_source(
            self.in_params, self.out_params, self.operation, self.name, in_dtypes,
            len(rshape), self.preamble, scalars, contiguous=contiguous,
        )  # fmt: skip
        self.cached_codes.setdefault(tuple(np.dtype(t) for t in in_types), src)
        if int(np.prod(shape, dtype=np.int64)) == 0:
            return _result([FakeArray(o, dev) for o in outs])
        lib = _library(self.name, src)
        cargs: List[Any] = []
        views_it = iter(zip(views, rstrides))
        for a, t in zip(args, in_types):
            if isinstance(a, FakeArray):
                v, st = next(views_it)
                cargs.append(carray(v, rshape, st))
            else:
                cargs.append(_CTYPES[np.dtype(t).name](np.asarray(a, t).item()))
        for _ in outs:
            v, st = next(views_it)
            cargs.append(carray(v, rshape, st))
        cargs.append(cindexer(rshape))
        _launch(lib, self.name, 1, cargs)
        return _result([FakeArray(o, dev) for o in outs])


def _result(outs: List[Any]) -> Any:
    return outs[0] if len(outs) == 1 else tuple(outs)


def _library(name: str, src: str) -> Any:
    key = hashlib.sha256(src.encode()).hexdigest()
    stats = FAKE.stats
    if key not in stats.sources:
        stats.sources[key] = src
        stats.compiles += 1
    return cpu_kernels([(name, src)])


def _launch(lib: Any, name: str, threads: int, cargs: List[Any]) -> None:
    fn = getattr(lib, f"sj_launch_{name}")
    fn.restype = None
    fn.argtypes = [ctypes.c_int] + [type(c) for c in cargs]
    fn(threads, *cargs)
    FAKE.stats.launches += 1


class FakeReductionKernel:
    """``cupy.ReductionKernel``: CuPy's source (:func:`reduction_source`) run
    as one block of 512 OpenMP threads, CuPy's shared-memory tree included; a
    full reduction (``axis=None``, or every axis) or one over some axes."""

    def __init__(
        self, in_params: str, out_params: str, map_expr: str, reduce_expr: str,
        post_map_expr: str, identity: Optional[str], name: str = "reduce_kernel",
        reduce_type: Optional[str] = None, reduce_dims: bool = True, preamble: str = "",
        options: tuple = (),
    ) -> None:  # fmt: skip
        from cupy._core import _kernel  # noqa: PLC0415

        self.in_params, self.out_params = in_params, out_params
        self.map_expr, self.reduce_expr, self.post_map_expr = map_expr, reduce_expr, post_map_expr
        self.identity, self.name, self.reduce_type = identity, name, reduce_type
        self.preamble = preamble
        self._ins = _kernel._get_param_info(in_params, True)
        self._outs = _kernel._get_param_info(out_params, False)
        self.cached_codes: Dict[tuple, str] = {}

    @property
    def cached_code(self) -> str:
        return next(iter(self.cached_codes.values()))

    def __call__(self, *args: Any, axis: Any = None, keepdims: bool = False) -> Any:
        _check_devices(args)
        dev = _device_of(args)
        from cupy._core import _kernel, _reduction  # noqa: PLC0415

        in_dtypes = tuple(a.dtype for a in args)
        _, out_types, _ = _kernel._decide_params_type(self._ins, self._outs, in_dtypes, ())
        shape = np.broadcast_shapes(*[a.shape for a in args])
        if axis is not None:
            axes = sorted({int(k) % len(shape) for k in np.atleast_1d(axis)})
            if len(axes) < len(shape):
                return self._over_axes(args, shape, axes, in_dtypes, out_types, dev, keepdims)
        views = [np.ascontiguousarray(np.broadcast_to(a._data, shape)).reshape(-1) for a in args]
        n = views[0].size if views else 1
        block_size, block_stride, _ = _reduction._get_block_specs(n, 1, 1, -1)
        src = reduction_source(
            self.in_params, self.out_params, self.map_expr, self.reduce_expr,
            self.post_map_expr, self.identity, self.name, self.reduce_type, in_dtypes,
            1, 0, self.preamble, block_size,
        )  # fmt: skip
        self.cached_codes.setdefault(in_dtypes, src)
        outs = [np.empty((), t) for t in out_types]
        lib = _library(self.name, src)
        cargs = [carray(v, (n,), (v.itemsize,)) for v in views]
        cargs += [carray(o, (), ()) for o in outs]
        cargs += [cindexer((n,)), cindexer(()), ctypes.c_int(block_stride)]
        _launch(lib, self.name, block_size, cargs)
        res = [FakeArray(o.reshape((1,) * len(shape)) if keepdims else o, dev) for o in outs]
        return _result(res)

    def _over_axes(self, args, shape, axes, in_dtypes, out_types, dev, keepdims):
        """A reduction over ``axes`` only, laid out as CuPy's kernel reads it:
        the reduced axes first, the kept ones last (the thread's output index is
        the fastest-varying part of the input index), as a contiguous
        ``(reduced, kept)`` copy: CuPy's source for 2-d inputs and 1-d outputs,
        one block of OpenMP threads looping over the outputs."""
        from cupy._core import _reduction  # noqa: PLC0415

        kept = [k for k in range(len(shape)) if k not in axes]
        red = int(np.prod([shape[k] for k in axes], dtype=np.int64))
        out = int(np.prod([shape[k] for k in kept], dtype=np.int64))
        views = [
            np.ascontiguousarray(np.broadcast_to(a._data, shape).transpose(axes + kept)).reshape(
                red, out
            )
            for a in args
        ]
        block_size, block_stride, _ = _reduction._get_block_specs(red * out, out, 1, -1)
        src = reduction_source(
            self.in_params, self.out_params, self.map_expr, self.reduce_expr,
            self.post_map_expr, self.identity, self.name, self.reduce_type, in_dtypes,
            2, 1, self.preamble, block_size,
        )  # fmt: skip
        self.cached_codes.setdefault((in_dtypes, 2), src)
        outs = [np.empty((out,), t) for t in out_types]
        if red and out:
            lib = _library(self.name, src)
            cargs = [carray(v, (red, out), (out * v.itemsize, v.itemsize)) for v in views]
            cargs += [carray(o, (out,), (o.itemsize,)) for o in outs]
            cargs += [cindexer((red, out)), cindexer((out,)), ctypes.c_int(block_stride)]
            _launch(lib, self.name, block_size, cargs)
        final = [shape[k] if k in kept else 1 for k in range(len(shape))]
        if not keepdims:
            final = [shape[k] for k in kept]
        return _result([FakeArray(o.reshape(final), dev) for o in outs])


class FakeRawKernel:
    """``cupy.RawKernel(code, name)`` for srcjax's own kernels, which loop over
    their work with grid-stride loops: run as one block of ``block[0]`` OpenMP
    threads (the shim's grid is one block)."""

    def __init__(self, code: str, name: str, options: tuple = (), **kw: Any) -> None:
        self.code, self.name = code, name

    def __call__(self, grid: tuple, block: tuple, args: tuple, shared_mem: int = 0) -> None:
        lib = _library(self.name, self.code)
        cargs = []
        for a in args:
            if isinstance(a, FakeArray):
                cargs.append(ctypes.c_void_p(a._data.ctypes.data))
            else:
                cargs.append(_CTYPES[np.asarray(a).dtype.name](np.asarray(a).item()))
        _launch(lib, self.name, int(block[0]), cargs)


class FakeCupy:
    """The part of ``cupy``'s API srcjax's CUDA backend calls, on the CPU:
    arrays (:class:`FakeArray`, ``ndevices`` fake GPUs), transfers, the three
    kernel classes, and the library calls (``matmul``, ``einsum``,
    ``linalg.solve``, ``fft``: NumPy on the buffers). ``stats`` counts
    compilations, launches and transfers."""

    __version__ = CUPY_VERSION
    ndarray = FakeArray
    ElementwiseKernel = FakeElementwiseKernel
    ReductionKernel = FakeReductionKernel
    RawKernel = FakeRawKernel

    def __init__(self, ndevices: int = 1) -> None:
        import types  # noqa: PLC0415

        self.ndevices = ndevices
        self.stats = _Stats()
        self.cuda = types.SimpleNamespace(
            is_available=lambda: self.ndevices > 0,
            Device=_FakeDevice,
            runtime=types.SimpleNamespace(getDeviceCount=lambda: self.ndevices),
            get_device_id=lambda: _current()[-1],
            Stream=FakeStream,
            get_current_stream=_current_stream,
        )
        self.linalg = types.SimpleNamespace(
            solve=self._lib(np.linalg.solve), inv=self._lib(np.linalg.inv),
            cholesky=self._lib(np.linalg.cholesky),
        )  # fmt: skip
        self.fft = types.SimpleNamespace(
            **{n: self._lib(getattr(np.fft, n)) for n in ("fft", "ifft", "fftn", "ifftn",
                                                          "rfft", "irfft", "rfftn", "irfftn")}
        )  # fmt: skip

    def _lib(self, fn: Any) -> Any:
        def call(*args: Any, **kw: Any) -> Any:
            _check_devices(args)
            return _wrap(fn(*_unwrap(args), **_unwrap(kw)), _device_of(args))

        call.__name__ = getattr(fn, "__name__", "call")
        return call

    def __getattr__(self, name: str) -> Any:
        fn = getattr(np, name)  # matmul, einsum, reshape, sum, ...: NumPy on the buffers
        return self._lib(fn) if callable(fn) else fn

    def asarray(self, x: Any, dtype: Any = None) -> FakeArray:
        if isinstance(x, FakeArray):
            return x if dtype is None else FakeArray(x._data.astype(dtype), x.device_id)
        self.stats.to_device += 1
        return FakeArray(np.array(x, dtype=dtype), _current()[-1])

    def asnumpy(self, x: Any) -> np.ndarray:
        if isinstance(x, FakeArray):
            self.stats.to_host += 1
            return np.array(x._data)
        return np.asarray(x)

    def empty(self, shape: Any, dtype: Any = float) -> FakeArray:
        return FakeArray(np.empty(shape, dtype), _current()[-1])

    def get_array_module(self, *args: Any) -> Any:
        return self if any(isinstance(a, FakeArray) for a in args) else np


#: the double in use (its ``stats`` are what the fake kernels record into)
FAKE = FakeCupy()


def use_fake(ndevices: int = 1) -> FakeCupy:
    """A fresh double with ``ndevices`` fake GPUs, made the one kernels record into."""
    global FAKE
    FAKE = FakeCupy(ndevices)
    return FAKE
