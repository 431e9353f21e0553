"""Shardings: how an Array's values are laid out over devices (``jax.sharding``).

Every :class:`srcjax.Array` has a ``.sharding``. An ordinary Array lives on one
device (:class:`SingleDeviceSharding`). ``pmap``'s results are the devices'
values stacked along the mapped axis, with a :class:`NamedSharding` over a
one-axis :class:`Mesh` of those devices, as JAX 0.10.2 makes them
(``NamedSharding(mesh=Mesh('_internal_pmap_axis_name': 2), spec=P('_internal_pmap_axis_name',))``):
``x.addressable_shards[i]`` is device ``i``'s entry (a :class:`Shard` whose
``index`` keeps the mapped axis as a length-1 slice, its ``data`` an Array of
that shape), ``x.devices()`` the set of devices, ``x.device`` the sharding
(JAX's answer for an array on several devices). On the CPU the devices share
the host's memory, so the stacked buffer holds every shard: indexing,
``np.asarray(x)`` and every jnp function read it directly; their results are
ordinary Arrays (JAX would keep some of them sharded; srcjax has nothing to
gain from it).

Semantics: https://docs.jax.dev/en/latest/jax.sharding.html
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

__all__ = ["PartitionSpec", "Mesh", "NamedSharding", "SingleDeviceSharding", "Shard"]

#: the mesh axis name JAX gives pmap's results
PMAP_AXIS = "_internal_pmap_axis_name"


class PartitionSpec(tuple):
    """Which mesh axis (or None) each array axis is split over (``jax.sharding.PartitionSpec``,
    ``P``); trailing axes not named are not split."""

    def __new__(cls, *parts: Any) -> "PartitionSpec":
        return tuple.__new__(cls, parts)

    def __repr__(self) -> str:
        return "P(" + "".join(f"{p!r}, " for p in self)[:-2] + ("," if len(self) == 1 else "") + ")"


class Mesh:
    """Devices arranged along named axes (``jax.sharding.Mesh``); srcjax makes
    one-axis meshes (pmap's devices)."""

    def __init__(self, devices: Sequence[Any], axis_names: Sequence[str]) -> None:
        self._devices = list(devices)
        self.axis_names = tuple(axis_names)
        if len(self.axis_names) != 1:
            raise NotImplementedError("srcjax meshes have one axis (pmap's devices)")

    @property
    def devices(self) -> Any:
        """The mesh's devices as a NumPy object array of shape ``(size,)``."""
        import numpy as np

        out = np.empty(len(self._devices), dtype=object)
        out[:] = self._devices
        return out

    @property
    def shape(self) -> Dict[str, int]:
        """``{axis name: number of devices}``, as ``jax.sharding.Mesh.shape``."""
        return {self.axis_names[0]: len(self._devices)}

    @property
    def size(self) -> int:
        """The number of devices in the mesh."""
        return len(self._devices)

    def __repr__(self) -> str:
        return f"Mesh({self.axis_names[0]!r}: {len(self._devices)}, axis_types=(Auto,))"

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, Mesh)
            and other.axis_names == self.axis_names
            and other._devices == self._devices
        )

    def __hash__(self) -> int:
        return hash((self.axis_names, tuple(self._devices)))


class _Sharding:
    """What every sharding answers (``jax.sharding.Sharding``)."""

    memory_kind = "device"

    def _device_list(self) -> List[Any]:
        raise NotImplementedError

    @property
    def device_set(self) -> set:
        """The set of devices holding some part of the array."""
        return set(self._device_list())

    @property
    def addressable_devices(self) -> set:
        """The devices this process can address: all of them (one process's pmap;
        across MPI processes each process holds its own Arrays)."""
        return self.device_set

    @property
    def num_devices(self) -> int:
        """``len(device_set)``."""
        return len(self._device_list())

    @property
    def is_fully_addressable(self) -> bool:
        """True: every device of a srcjax sharding belongs to this process."""
        return True

    def devices_indices_map(self, shape: Tuple[int, ...]) -> Dict[Any, tuple]:
        """``{device: index}``: the part of an array of ``shape`` each device holds."""
        return dict(zip(self._device_list(), self._indices(tuple(shape))))

    def addressable_devices_indices_map(self, shape: Tuple[int, ...]) -> Dict[Any, tuple]:
        """:meth:`devices_indices_map` (every device is addressable)."""
        return self.devices_indices_map(shape)

    def shard_shape(self, shape: Tuple[int, ...]) -> Tuple[int, ...]:
        """The shape of one device's part of an array of ``shape``."""
        idx = self._indices(tuple(shape))[0]
        return tuple(len(range(*s.indices(n))) for s, n in zip(idx, shape))

    def _indices(self, shape: Tuple[int, ...]) -> List[tuple]:
        raise NotImplementedError


class SingleDeviceSharding(_Sharding):
    """All of an array on one device (``jax.sharding.SingleDeviceSharding``)."""

    is_fully_replicated = True

    def __init__(self, device: Any) -> None:
        self._device = device

    def _device_list(self) -> List[Any]:
        return [self._device]

    def _indices(self, shape: Tuple[int, ...]) -> List[tuple]:
        return [(slice(None),) * len(shape)]

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind=device)"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self) -> int:
        return hash(("single", self._device))


class NamedSharding(_Sharding):
    """An array split over a mesh's axes as ``spec`` says (``jax.sharding.NamedSharding``).
    With ``spec`` naming no axis, every device holds all of it (replicated)."""

    #: each device's own shard buffer (a pmap result on GPUs), or None: views of the whole
    shard_buffers: Optional[List[Any]] = None

    def __init__(self, mesh: Mesh, spec: PartitionSpec) -> None:
        self.mesh = mesh
        self.spec = spec if isinstance(spec, PartitionSpec) else PartitionSpec(*spec)

    def _device_list(self) -> List[Any]:
        return list(self.mesh._devices)

    @property
    def is_fully_replicated(self) -> bool:
        """True when every device holds the whole array: one device, or a spec
        naming no mesh axis."""
        return self.mesh.size == 1 or all(p is None for p in self.spec)

    def _indices(self, shape: Tuple[int, ...]) -> List[tuple]:
        name = self.mesh.axis_names[0]
        n = self.mesh.size
        split: Optional[int] = next((i for i, p in enumerate(self.spec) if p == name), None)
        out = []
        for d in range(n):
            idx = [slice(None)] * len(shape)
            if split is not None:
                size = shape[split] // n
                idx[split] = slice(d * size, (d + 1) * size)
            out.append(tuple(idx))
        return out

    def __repr__(self) -> str:
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r}, memory_kind=device)"

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, NamedSharding)
            and other.mesh == self.mesh
            and tuple(other.spec) == tuple(self.spec)
        )

    def __hash__(self) -> int:
        return hash((self.mesh, tuple(self.spec)))


def pmap_sharding(
    devices: Sequence[Any], axis: Optional[int], buffers: Optional[List[Any]] = None
) -> NamedSharding:
    """The sharding of a pmap result over ``devices`` mapped at ``axis`` (None:
    ``out_axes=None``, the same value on every device). ``buffers``: each
    device's own buffer of its shard, when the devices do not share memory
    (GPUs: ``addressable_shards`` hold these, not views of the whole)."""
    mesh = Mesh(devices, (PMAP_AXIS,))
    spec = PartitionSpec() if axis is None else PartitionSpec(*([None] * axis + [PMAP_AXIS]))
    sh = NamedSharding(mesh, spec)
    sh.shard_buffers = None if buffers is None else list(buffers)
    return sh


class Shard:
    """One device's part of an Array (``jax.Shard``): ``device``, ``index`` (the
    slices of the whole it holds), ``replica_id`` and ``data`` (an Array)."""

    __slots__ = ("device", "index", "replica_id", "data")

    def __init__(self, device: Any, index: tuple, replica_id: int, data: Any) -> None:
        self.device = device
        self.index = index
        self.replica_id = replica_id
        self.data = data

    def __repr__(self) -> str:
        return (
            f"Shard(device={self.device!r}, index={self.index}, "
            f"replica_id={self.replica_id}, data={self.data})"
        )
