"""The CUDA backend: fused CuPy kernels for jit (``srcjax.backends.get("cuda")``).

Under ``jit`` on a GPU (``jit(f, device=srcjax.devices("gpu")[0])``, or GPU
arrays as arguments) -- and so also for ``grad``'s backward pass and ``vmap``'s
batched code, which jit compiles like any code -- the optimized IR becomes host
Python that launches CuPy kernels::

    # fused region: 4 elementwise ops over float32[4096,4096]
    #   ElementwiseKernel sj_f_3f9a0c1e(float32 x, float32 b) -> (float32 y)
    y = _cuda.sj_f_3f9a0c1e(x, b)

- each fused elementwise region (:mod:`srcjax.transforms.fusion`) is one
  ``cupy.ElementwiseKernel``, its body rendered from the registry's C
  expressions by :mod:`srcjax.codegen.c_render`;
- a region ending in a full reduction is one ``cupy.ReductionKernel`` (or an
  ElementwiseKernel for the values read later plus a ReductionKernel);
- kernels are named and cached by the hash of their source
  (:mod:`.kernels`): CuPy compiles a kernel once per argument dtypes and number
  of dimensions, so a new batch size reuses the compiled kernel;
- every other call runs on the GPU through the namespaces this backend binds
  (:class:`DeviceNamespace`): a primitive's CUDA implementation
  (``prim.impls["cuda"]``: matmul, einsum, solve, FFTs through cuBLAS,
  cuSOLVER and cuFFT via CuPy), else a one-operation kernel for an elementwise
  primitive with a C expression, else its NumPy implementation on the device
  arrays (NumPy's dispatch to CuPy, NEP 18), and only when that refuses device
  arrays, on host copies (counted in :data:`HOST_CALLS`, so tests and
  ``srcjax.source`` can show it).

``srcjax.source(jitted, *args, target="cuda")`` shows the host code and each
kernel's CUDA C (:func:`kernel_sources`).

CuPy is imported on first use (:func:`cupy_module`); tests install the CPU
test double of :mod:`srcjax.backends.cupy_cuda.offline` with :func:`use_cupy`.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ... import _array
from ...codegen import c_render
from ...frontend import nodes as N
from ...transforms import fusion
from ..base import Backend
from . import indexing, raw, spmd, threefry
from . import kernels as K
from ._cupy import (
    _ON_CHANGE,
    cupy_module,
    is_device_array,
    on_types,
    to_device,
    to_host,
    use_cupy,
)

__all__ = [
    "BACKEND",
    "CudaBackend",
    "cupy_module",
    "use_cupy",
    "HOST_CALLS",
    "kernel_sources",
    "is_device_array",
]

#: primitive name -> number of calls that ran on host copies (no device path)
HOST_CALLS: Dict[str, int] = {}


class _KernelTable:
    """Kernel specs by name (their source hash), and the CuPy kernel objects
    built from them (one per spec and CuPy module). Generated code reads a
    kernel as an attribute: ``_cuda.sj_f_3f9a0c1e(x, b)``."""

    def __init__(self) -> None:
        self.specs: Dict[str, K.KernelSpec] = {}
        self._objects: Dict[Tuple[int, str], Any] = {}
        self._lock = threading.Lock()

    def add(self, spec: K.KernelSpec) -> str:
        self.specs.setdefault(spec.name, spec)
        return spec.name

    def get(self, name: str) -> Any:
        cp = cupy_module()
        key = (id(cp), name)
        k = self._objects.get(key)
        if k is None:
            with self._lock:
                k = self._objects.get(key)
                if k is None:
                    spec = self.specs[name]
                    k = _HostArgs(K.build(cp, spec), spec.kind == "reduction")
                    self._objects[key] = k
        return k

    def clear_objects(self) -> None:
        self._objects.clear()


class _HostArgs:
    """A kernel whose NumPy-array arguments (constants jit folded on the host)
    move to the device first; NumPy and Python scalars pass by value to an
    ElementwiseKernel, and as 0-d device arrays to a ReductionKernel (whose
    inputs are arrays it broadcasts)."""

    __slots__ = ("kernel", "moved")

    def __init__(self, kernel: Any, reduction: bool = False) -> None:
        self.kernel = kernel
        self.moved = (np.ndarray, np.generic) if reduction else (np.ndarray,)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for a in args:
            if isinstance(a, self.moved):
                args = tuple(to_device(v) if isinstance(v, self.moved) else v for v in args)
                break
        return self.kernel(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.kernel, name)


KERNELS = _KernelTable()
_ON_CHANGE.append(KERNELS.clear_objects)  # a new CuPy (double): kernel objects anew


class _Runtime:
    """What generated CUDA code reads as ``_cuda``: kernels by name (each kept
    as an attribute after its first lookup, until the CuPy module changes)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("sj_"):
            k = KERNELS.get(name)
            self.__dict__[name] = k
            return k
        raise AttributeError(name)


RUNTIME = _Runtime()
_ON_CHANGE.append(RUNTIME.__dict__.clear)


def kernel_sources(text: str) -> List[Tuple[str, str]]:
    """``[(kernel name, CUDA C), ...]`` of the kernels generated host code
    ``text`` launches: the full source CuPy compiles (with CuPy installed), else
    the kernel's parameters and body."""
    out = []
    if any(f"{p}(" in text for p in raw.ROW_SOFTMAX):
        for dt in ("float32", "float64"):
            out.append(raw.row_kernel_source(dt))
    if "random.bits(" in text or "random.uniform(" in text:
        out.append((threefry.NAME, threefry.SOURCE))
    for name, spec in KERNELS.specs.items():
        if f"_cuda.{name}(" not in text:
            continue
        src = K.source(spec)
        if src is None:
            body = spec.operation or f"map: {spec.map_expr}; reduce: {spec.reduce_expr}"
            src = f"// {spec.kind} kernel {spec.name}({spec.in_params}) -> ({spec.out_params})\n"
            src += body
        out.append((name, src))
    return out


# -- running everything else on the device ------------------------------------------------
_is_dev = is_device_array


#: argument types the CUDA entry passes as they are (GPU arrays: see _cupy)
_PLAIN = {int, float, bool, complex, np.float32, np.float64, np.int32, np.int64, type(None)}
on_types(_PLAIN.add)


def _is_host_array(x: Any) -> bool:
    return type(x) is np.ndarray


def _leaves_any(x: Any, pred: Any) -> bool:
    if isinstance(x, (list, tuple)):
        return any(_leaves_any(v, pred) for v in x)
    if isinstance(x, dict):
        return any(_leaves_any(v, pred) for v in x.values())
    return pred(x)


def _map(x: Any, fn: Any) -> Any:
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_map(v, fn) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_map(v, fn) for v in x)
    if isinstance(x, dict):
        return type(x)((k, _map(v, fn)) for k, v in x.items())
    return fn(x)


_IMPLICIT = ("Implicit conversion to a NumPy array is not allowed", "Unsupported type")


def _on_host(name: str, fn: Any, args: tuple, kwargs: dict) -> Any:
    cp = cupy_module()
    HOST_CALLS[name] = HOST_CALLS.get(name, 0) + 1
    hargs = _map(args, lambda v: cp.asnumpy(v) if _is_dev(v) else v)
    hkw = _map(kwargs, lambda v: cp.asnumpy(v) if _is_dev(v) else v)
    out = fn(*hargs, **hkw)
    # (a NumPy scalar too: a 0-d device array, as CuPy's reductions give)
    return _map(out, lambda v: cp.asarray(v) if isinstance(v, (np.ndarray, np.generic)) else v)


class _OneOp:
    """An elementwise primitive called outside a fused region: a
    one-operation ElementwiseKernel for the argument dtypes (JAX's result dtype
    from the NumPy implementation on stand-ins), cached by dtypes."""

    def __init__(self, prim: Any) -> None:
        self.prim = prim
        self.params = c_render._parameters(prim)
        self._specs: Dict[tuple, Optional[str]] = {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs or not any(_is_dev(a) for a in args):
            return None
        key = tuple(
            (np.dtype(a.dtype).name, True)
            if _is_dev(a)
            else (type(a).__name__, isinstance(a, (bool, int, float, complex, np.generic)))
            for a in args
        )
        if key not in self._specs:
            self._specs[key] = self._spec(args)
        name = self._specs[key]
        if name is None:
            return None
        return KERNELS.get(name)(*[a for a in args if _is_dev(a)])

    def _spec(self, args: tuple) -> Optional[str]:
        inputs: Dict[str, np.dtype] = {}
        operands = []
        proxies = []
        for p, a in zip(self.params, args):
            if _is_dev(a):
                inputs[p] = np.dtype(a.dtype)
                operands.append(("in", p))
                proxies.append(np.ones((1,), a.dtype))
            elif isinstance(a, (bool, int, float, np.generic)):
                operands.append(("const", a))
                proxies.append(a)
            else:
                return None
        try:
            with np.errstate(all="ignore"):
                res = np.asarray(self.prim.impl(*proxies)).dtype
            step = c_render.Step(self.prim, operands, "out", res)
            return KERNELS.add(K.elementwise_spec([step], inputs, ["out"], self.prim.name))
        except Exception:  # noqa: BLE001 (no C expression for these dtypes)
            return None


def device_call(obj: Any, name: str, prim: Any = None) -> Any:
    """``obj`` (a function of a namespace; ``prim`` its primitive, if it is
    one) as a call that runs on the device when its arguments are device
    arrays (see the module docstring)."""
    cuda_impl = prim.impls.get("cuda") if prim is not None else None
    creation = prim is not None and prim.kind == "creation"
    one = (
        _OneOp(prim)
        if prim is not None and prim.kind == "elementwise" and prim.c_expr is not None
        else None
    )

    def call(*args: Any, **kwargs: Any) -> Any:
        if not (_leaves_any(args, _is_dev) or _leaves_any(kwargs, _is_dev)):
            out = obj(*args, **kwargs)
            if creation:  # jnp.zeros, eye, arange ... in device code: on the device
                out = _map(out, lambda v: to_device(v) if _is_host_array(v) else v)
            return out
        if _leaves_any(args, _is_host_array) or _leaves_any(kwargs, _is_host_array):
            # host arrays next to device arrays (a seed, a constant): committed to
            # the device, as JAX does
            cp = cupy_module()
            args = _map(args, lambda v: cp.asarray(v) if _is_host_array(v) else v)
            kwargs = _map(kwargs, lambda v: cp.asarray(v) if _is_host_array(v) else v)
        if cuda_impl is not None:
            out = cuda_impl(*args, **kwargs)
            if out is not NotImplemented:  # (else the call does not fit it)
                return out
        if one is not None:
            out = one(*args, **kwargs)
            if out is not None:
                return out
        try:
            out = obj(*args, **kwargs)
            # NumPy's dispatch may compute on the device and still return a host
            # array (np.add.at into np.zeros): commit it to the device
            return _map(out, lambda v: to_device(v) if _is_host_array(v) else v)
        except (TypeError, ValueError) as e:
            if not any(m in str(e) for m in _IMPLICIT):
                raise
        return _on_host(name, obj, args, kwargs)

    call.__name__ = getattr(obj, "__name__", name)
    call.__wrapped__ = obj  # type: ignore[attr-defined]
    return call


class DeviceNamespace:
    """A namespace of generated code (``jnp``, ``nn``, ``ad`` ...) whose
    callables run on the device (:func:`device_call`); other attributes (dtypes,
    constants) and sub-namespaces (``jnp.linalg``) are the base namespace's."""

    def __init__(self, base: Any, prefix: str) -> None:
        self._base = base
        self._prefix = prefix

    def __getattr__(self, name: str) -> Any:
        import types  # noqa: PLC0415

        from ...primitives import registry  # noqa: PLC0415

        obj = getattr(self._base, name)
        public = f"{self._prefix}.{name}"
        if isinstance(obj, (types.ModuleType, types.SimpleNamespace)):
            out: Any = DeviceNamespace(obj, public)
        elif callable(obj) and not isinstance(obj, type):
            out = device_call(obj, public, registry.REGISTRY.get(public))
        else:
            out = obj
        object.__setattr__(self, name, out)
        return out


# -- the backend ---------------------------------------------------------------------------
class CudaBackend(Backend):
    """The CUDA backend (see the module docstring)."""

    name = "cuda"
    platform = "gpu"
    axis_reductions = True  # (a ReductionKernel takes the axes at its call)

    def namespaces(self) -> Dict[str, Any]:
        from ...codegen import emit  # noqa: PLC0415

        base = emit.namespaces()
        ns: Dict[str, Any] = {"_cuda": RUNTIME}
        for k in ("jnp", "nn", "special", "lax", "ad", "random", "custom"):
            if k in base:
                ns[k] = _device_namespace(k, base[k])
        return ns

    def can_fuse(self, prim: Any, operands: List[Any], values: List[Any], res: Any) -> bool:
        if prim.c_expr is None or not fusion.jax_dtype_matches(prim, operands, values, res):
            return False
        inputs: Dict[str, np.dtype] = {}
        ops = []
        for i, (o, v) in enumerate(zip(operands, values)):
            if hasattr(o, "id"):
                weak = isinstance(v, (bool, int, float))
                if weak:
                    ops.append(("const", v))
                else:
                    inputs[f"a{i}"] = np.asarray(v).dtype
                    ops.append(("in", f"a{i}"))
            else:
                ops.append(("const", getattr(o, "value", v)))
        try:
            c_render.render([c_render.Step(prim, ops, "out", res.dtype)], inputs, ["out"])
        except c_render.NotRenderable:
            return False
        return True

    def min_region_size(self) -> Tuple[int, Optional[int]]:
        return 1, None  # on a GPU every array operation is a launch: fuse all of them

    def lower_region(self, region: fusion.Region, namer: Any, filename: str) -> List[Any]:
        import gast  # noqa: PLC0415

        text, origin = _region_code(region, namer)
        out: List[Any] = []
        for line in text.splitlines():
            if line.startswith("#"):
                comment = gast.Pass()
                comment.sj_comment = line[1:].strip()
                out.append(comment)
            else:
                out.extend(_parse(line, origin, filename))
        return out

    def entry(self, fn: Any, device: Any) -> Any:
        """``fn`` (a jitted specialization) taking host arrays too: NumPy array
        arguments move to ``device``'s GPU first, as JAX commits them."""
        dev_id = int(getattr(device, "id", 0))

        def put(v: Any) -> Any:
            if isinstance(v, np.ndarray):
                return self.asarray(v, device=dev_id)
            return v

        def run(*args: Any, **kwargs: Any) -> Any:
            for a in args:
                if type(a) not in _PLAIN:  # (a host array or a container: map the leaves)
                    return fn(*_map(args, put), **_map(kwargs, put))
            if kwargs:
                kwargs = _map(kwargs, put)
            return fn(*args, **kwargs)

        def call(*args: Any, **kwargs: Any) -> Any:
            cp = cupy_module()
            if cp.cuda.get_device_id() == dev_id:
                return run(*args, **kwargs)
            with cp.cuda.Device(dev_id):  # (kernels launch, and arrays are made, there)
                return run(*args, **kwargs)

        call.__wrapped__ = fn  # type: ignore[attr-defined]
        return call

    # arrays
    def is_array(self, x: Any) -> bool:
        return _is_dev(x)

    def asarray(self, x: Any, dtype: Any = None, device: Optional[int] = None) -> Any:
        return to_device(x, dtype, device)

    def to_host(self, x: Any) -> np.ndarray:
        return to_host(x)

    def kernel_sources(self, text: str) -> List[Tuple[str, str]]:
        """See :func:`kernel_sources`."""
        return kernel_sources(text)

    def empty(self, shape: Tuple[int, ...], dtype: Any) -> Any:
        return cupy_module().empty(shape, dtype)


_NS_CACHE: Dict[Tuple[str, int], DeviceNamespace] = {}


def _device_namespace(name: str, base: Any) -> DeviceNamespace:
    key = (name, id(base))
    ns = _NS_CACHE.get(key)
    if ns is None:
        ns = _NS_CACHE[key] = DeviceNamespace(base, name)
    return ns


def _parse(text: str, origin: Any, fname: str) -> List[Any]:
    nodes = N.parse_stmts(text)
    for s in nodes:
        if origin is not None and getattr(origin, "sj_origin", None):
            s.sj_origin = origin.sj_origin
            s.sj_file = getattr(origin, "sj_file", None) or fname
    return nodes


def _inputs(region: fusion.Region) -> Tuple[Dict[str, np.dtype], List[str]]:
    dts = {n: np.dtype(a.dtype) for n, a in region.inputs.items()}
    weak = [n for n, a in region.inputs.items() if a.weak]
    return dts, weak


def _call(spec: K.KernelSpec, axis: Optional[Tuple[int, ...]] = None, keep: bool = False) -> str:
    KERNELS.add(spec)
    more = "" if axis is None else f", axis={axis!r}"
    more += ", keepdims=True" if keep else ""
    return f"_cuda.{spec.name}({', '.join(spec.inputs)}{more})"


def _region_code(region: fusion.Region, namer: Any) -> Tuple[str, Any]:
    """Host code for one region (see the module docstring) and its origin statement."""
    dts, weak = _inputs(region)
    steps = c_render.steps_of_region(region)
    stmts = list(region.stmts) + ([region.reduction] if region.reduction is not None else [])
    origin = stmts[0] if stmts else region.center
    fname = "f"
    lines = [f"# {fusion.describe(region).rsplit(',', 1)[0]}"]
    if region.center is not None:
        # m = mean(x) folded into the region by the CPU's analysis: its own kernel here
        m = region.center.targets[0].id
        x = region.center.sj_op.bound.get("x", region.center.sj_op.bound.get("a")).id
        mdt = region.center.sj_aval.dtype
        spec = K.reduction_spec([], {x: dts[x]}, x, "mean", mdt, fname)
        lines += [f"#   {d}" for d in K.describe(spec)]
        lines.append(f"{m} = {_call(spec)}")
        dts[m] = np.dtype(mdt)
    if region.reduction is None:
        spec = K.elementwise_spec(steps, dts, region.outputs, fname, weak)
        lines += [f"#   {d}" for d in K.describe(spec)]
        lines.append(f"{_targets(region.outputs)} = {_call(spec)}")
        return "\n".join(lines), origin
    r = region.reduction.targets[0].id
    rdt = region.reduction.sj_aval.dtype
    operand = region.reduce_operand
    if region.outputs and steps:
        # values read after the region: computed by an ElementwiseKernel, which
        # also writes the reduction's operand for a ReductionKernel
        # (an operand the region does not compute, one of its inputs, is read as it is)
        computed = operand in {s.target for s in steps}
        extra = [operand] if computed and operand not in region.outputs else []
        outs = list(region.outputs) + extra
        spec = K.elementwise_spec(steps, dts, outs, fname, weak)
        lines += [f"#   {d}" for d in K.describe(spec)]
        lines.append(f"{_targets(outs)} = {_call(spec)}")
        odt = next(s.dtype for s in steps if s.target == operand) if computed else dts[operand]
        spec = K.reduction_spec([], {operand: odt}, operand, region.reduce_kind, rdt, fname)
    else:
        spec = K.reduction_spec(steps, dts, operand, region.reduce_kind, rdt, fname, weak)
    lines += [f"#   {d}" for d in K.describe(spec)]
    lines.append(f"{r} = {_call(spec, region.reduce_axis, region.reduce_keepdims)}")
    return "\n".join(lines), origin


def _targets(names: List[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names)


def _register_impls() -> None:
    from ...primitives import registry  # noqa: PLC0415

    impls = {
        **raw.cuda_impls(cupy_module, is_device_array),
        **threefry.cuda_impls(cupy_module, is_device_array),
        **indexing.cuda_impls(cupy_module, is_device_array, _on_host),
        **spmd.cuda_impls(cupy_module, is_device_array),
    }
    for public, fn in impls.items():
        prim = registry.REGISTRY.get(public)
        if prim is None:
            raise RuntimeError(f"the CUDA backend implements {public}, which is not registered")
        prim.def_impl("cuda", fn)


_register_impls()

_EAGER: Dict[str, Any] = {}


def _eager_call(prim: Any, args: tuple, kwargs: dict) -> Any:
    """A primitive called outside jit with GPU arrays (``jnp.sin(x_gpu)``): on
    the device, as under jit (see :func:`device_call`)."""
    fn = _EAGER.get(prim.public)
    if fn is None:
        fn = _EAGER[prim.public] = device_call(prim.impl, prim.public, prim)
        try:
            fn.names = c_render._parameters(prim)  # type: ignore[attr-defined]
        except (TypeError, ValueError):  # (no signature)
            fn.names = []  # type: ignore[attr-defined]
    if len(args) + len(kwargs) > 1 or (args and isinstance(args[0], (list, tuple))):
        _same_device(prim.public, fn.names, args, kwargs)  # type: ignore[attr-defined]
    dev = _device_id(args, kwargs)
    cp = cupy_module()
    if dev is None or dev == cp.cuda.get_device_id():
        return fn(*args, **kwargs)
    with cp.cuda.Device(dev):  # the arguments' GPU: kernels and new arrays there
        return fn(*args, **kwargs)


def _device_id(args: tuple, kwargs: dict) -> Optional[int]:
    """The GPU id of the first GPU array among ``args``/``kwargs`` (one level of
    lists and tuples), or None."""
    for a in (*args, *kwargs.values()):
        if _is_dev(a):
            return int(a.device.id)
        if isinstance(a, (list, tuple)):
            for v in a:
                if _is_dev(v):
                    return int(v.device.id)
    return None


def _same_device(public: str, names: List[str], args: tuple, kwargs: dict) -> None:
    """JAX's error for arrays on two GPUs in one call: a ValueError naming both
    arguments and devices (host values are committed to the GPU, as JAX's
    uncommitted arrays are)."""
    named = []
    for i, a in enumerate(args):
        name = names[i] if i < len(names) else f"#{i}"
        if isinstance(a, (list, tuple)):
            named += [(f"{name}[{j}]", v) for j, v in enumerate(a)]
        else:
            named.append((name, a))
    named += list(kwargs.items())
    # backends._devices.check_same_device, through the hook it fills (it imports
    # this package's CuPy switch: a direct import would close a cycle)
    _array.HOOKS["check_same_device"](named, public)


def _install_eager() -> None:
    from ...primitives import registry  # noqa: PLC0415

    registry.DEVICE_CALL[0] = _eager_call
    on_types(registry.DEVICE_TYPES.add)


_install_eager()

#: the CUDA backend (``srcjax.backends.get("cuda")``)
BACKEND = CudaBackend()
