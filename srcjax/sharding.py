"""``srcjax.sharding``: JAX's sharding classes, as far as srcjax's devices need them.

``pmap``'s results carry a :class:`NamedSharding` over a one-axis :class:`Mesh`
of their devices; every other Array a :class:`SingleDeviceSharding`. See
:mod:`srcjax._sharding` for what they answer.

Semantics: https://docs.jax.dev/en/latest/jax.sharding.html
"""

from ._sharding import Mesh, NamedSharding, PartitionSpec, Shard, SingleDeviceSharding

__all__ = ["Mesh", "NamedSharding", "PartitionSpec", "Shard", "SingleDeviceSharding"]
