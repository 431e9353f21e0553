"""The JAX article's pmap example, on 2 CPU devices (each a thread).

    python examples/seed_pmap.py             # prints [1.2110119 1.2357731]
    python examples/seed_pmap.py --legacy    # the article's stream: [1.1566513 1.1805046]

1. split PRNGKey(0) into one key per device;
2. pmap: each device draws a 5000x6000 normal matrix,
3. computes x @ x.T,
4. and its mean; the per-device means are printed.

With JAX 0.10.2's default configuration (the partitionable threefry scheme)
this prints ``[1.2110119 1.2357731]``; srcjax draws the same bits and prints
the same to float32 matmul rounding.

The article prints ``[1.1566595 1.1805978]``. Those are the first two of the
eight means of the 2019 JAX README (an 8-core TPU run): the *legacy* threefry
scheme (JAX's default up to 0.4.38, ``jax_threefry_partitionable=False``), where
``split(key, 8)[:2]`` are other keys than ``split(key, 2)`` (the counters are laid
out in two halves, so every key depends on the count), and matrices rounded to
bfloat16 by the TPU's matmul. ``--legacy`` draws that stream (8 keys, the first
two used) and prints ``[1.1566513 1.1805046]`` in float32, within 1e-4 of the
article; rounding the samples to bfloat16 first would give 1.1566666 1.1805956
(see shared/prng/FINDINGS.md).
"""

import argparse
import time

import srcjax
import srcjax.numpy as jnp
from srcjax import random


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--legacy", action="store_true", help="the article's key stream (see above)")
    ap.add_argument("--shape", type=int, nargs=2, default=(5000, 6000), help="matrix shape")
    args = ap.parse_args()

    # two CPU devices, as XLA_FLAGS=--xla_force_host_platform_device_count=2 in JAX
    srcjax.config.update("jax_num_cpu_devices", 2)
    if args.legacy:
        srcjax.config.update("jax_threefry_partitionable", False)
        keys = random.split(random.PRNGKey(0), 8)[:2]
    else:
        keys = random.split(random.PRNGKey(0), 2)

    shape = tuple(args.shape)
    start = time.perf_counter()
    mats = srcjax.pmap(lambda key: random.normal(key, shape))(keys)
    result = srcjax.pmap(lambda x: jnp.dot(x, x.T))(mats)
    print(srcjax.pmap(jnp.mean)(result))
    print(f"({time.perf_counter() - start:.2f} s on {srcjax.device_count()} CPU devices)")


if __name__ == "__main__":
    main()
