"""``srcjax.random``'s functions as registered primitives (``random.<name>`` in
generated code): the makers (``_prim`` for public functions, ``_internal`` for
vmap's batched versions, ``_float_sampler``), the batching rule that sends a
batch of keys to the batched version (``_batch_rule``), and the primitives of
:mod:`._base` and :mod:`._samplers`. The distributions (:mod:`._dists`,
:mod:`._compose`, :mod:`._discrete`) use the same makers."""

from __future__ import annotations

import numpy as np

from .._prng_key import PRNGKeyArray
from ..primitives.registry import Primitive, register
from ._base import (
    _bits,
    _bits_b,
    _fold_in,
    _fold_in_b,
    _impl_name,
    _key_data,
    _key_fn,
    _normal,
    _normal_b,
    _prng_key,
    _seed_words,
    _split,
    _split_b,
    _uniform,
    _uniform_b,
    _wrap_key_data,
)
from ._samplers import (
    _bernoulli,
    _bernoulli_b,
    _categorical,
    _categorical_b,
    _choice,
    _choice_b,
    _exponential,
    _exponential_b,
    _gumbel,
    _gumbel_b,
    _laplace,
    _laplace_b,
    _logistic,
    _logistic_b,
    _permutation,
    _permutation_b,
    _rademacher,
    _rademacher_b,
    _randint,
    _randint_b,
)


# =========================================================================== registration
def _batch_rule(internal: Primitive, key_param: str = "key", materialize=()):
    """vmap rule: a batch of keys (and nothing else batched, except the
    ``materialize`` parameters) runs as one call of the vectorised ``internal``
    primitive; anything else batched falls back to a loop over the examples."""

    def rule(c):
        from ..transforms.batching import build_call

        bound = dict(c.bound)
        for p in bound:
            if p != key_param and p not in materialize and c.batched(p):
                return None
        if materialize:
            for p in (key_param,) + tuple(materialize):
                if p in bound:
                    bound[p] = c.materialize(bound[p])
        return build_call(internal, bound, True)

    return rule


def _key_samples(rng):
    return [np.array(rng.integers(0, 2**32, 2), np.uint32) for _ in range(2)]


def _prim(public, impl, samples, **kw):
    kw.setdefault("differentiable", False)
    p = register(Primitive(public, impl, kind="random", **kw))
    p.samples = samples
    return p


def _internal(public, impl, samples):
    p = register(Primitive(public, impl, kind="internal", differentiable=False))
    p.samples = samples
    return p


def _ks(rng):
    return np.stack(_key_samples(rng))


def _float_sampler(name, impl, impl_b):
    """``random.<name>(key, shape, dtype)`` and its batched-keys helper
    ``ad.random_<name>_b``, registered with the samplers' standard samples."""
    prim = _prim(
        f"random.{name}",
        impl,
        lambda rng: [((k, (4,)), {"dtype": "float32"}) for k in _key_samples(rng)],
    )
    helper = _internal(
        f"ad.random_{name}_b", impl_b, lambda rng: [((_ks(rng), (3,), "float32"), {})]
    )
    return prim, helper


PRNGKey = _prim(
    "random.PRNGKey",
    _prng_key,
    lambda rng: [((0,), {}), ((42,), {}), ((np.int32(-7),), {})],
)
key = _prim("random.key", _key_fn, lambda rng: [((3,), {})])
key_data = _prim("random.key_data", _key_data, lambda rng: [((k,), {}) for k in _key_samples(rng)])
wrap_key_data = _prim(
    "random.wrap_key_data", _wrap_key_data, lambda rng: [((k,), {}) for k in _key_samples(rng)]
)


def _seed_batch(seed):
    """vmap's ``PRNGKey``: integer seeds of any shape -> keys ``seed.shape + (2,)``
    (internal)."""
    return _seed_words(seed, "PRNGKey")


def _key_batch(seed, impl=None):
    """vmap's ``key``: integer seeds of any shape -> typed keys of that shape
    (internal)."""
    return PRNGKeyArray(_seed_words(seed, "key"), _impl_name(impl, "key"))


_seed_b = _internal(
    "ad.random_seed_b",
    _seed_batch,
    lambda rng: [((np.arange(3, dtype=np.int32),), {})],
)
_key_b = _internal(
    "ad.random_key_b",
    _key_batch,
    lambda rng: [((np.arange(3, dtype=np.int32),), {})],
)
split = _prim(
    "random.split", _split, lambda rng: [((k, n), {}) for k, n in zip(_key_samples(rng), (2, 3))]
)
_split_bp = _internal("ad.random_split_b", _split_b, lambda rng: [((_ks(rng), 3), {})])
fold_in = _prim("random.fold_in", _fold_in, lambda rng: [((k, 7), {}) for k in _key_samples(rng)])
_fold_in_bp = _internal(
    "ad.random_fold_in_b",
    _fold_in_b,
    lambda rng: [((_ks(rng), np.arange(2, dtype=np.int32)), {})],
)
bits = _prim(
    "random.bits",
    _bits,
    lambda rng: [((k, s), {"dtype": "uint32"}) for k, s in zip(_key_samples(rng), ((), (5,)))],
)
_bits_bp = _internal("ad.random_bits_b", _bits_b, lambda rng: [((_ks(rng), (3,), "uint32"), {})])
uniform = _prim(
    "random.uniform",
    _uniform,
    lambda rng: [
        ((_key_samples(rng)[0], (3,)), {"dtype": "float32"}),
        ((_key_samples(rng)[1], (2, 3), "float32", rng.normal(size=3)), {}),
    ],
    differentiable=True,
)
uniform.missing_rule_hint = (
    "srcjax.random.uniform is not differentiable in minval/maxval (JAX is); "
    "compute minval + (maxval - minval) * uniform(key, shape) instead"
)
_uniform_bp = _internal(
    "ad.random_uniform_b", _uniform_b, lambda rng: [((_ks(rng), (3,), "float32"), {})]
)
normal = _prim(
    "random.normal",
    _normal,
    lambda rng: [((k, s), {"dtype": "float32"}) for k, s in zip(_key_samples(rng), ((), (2, 3)))],
)
_normal_bp = _internal(
    "ad.random_normal_b", _normal_b, lambda rng: [((_ks(rng), (3,), "float32"), {})]
)

bernoulli = _prim(
    "random.bernoulli",
    _bernoulli,
    lambda rng: [((k, np.float32(0.3), (5,)), {}) for k in _key_samples(rng)],
)
_bernoulli_bp = _internal(
    "ad.random_bernoulli_b", _bernoulli_b, lambda rng: [((_ks(rng), np.float32(0.3), (3,)), {})]
)
exponential, _exponential_bp = _float_sampler("exponential", _exponential, _exponential_b)
gumbel, _gumbel_bp = _float_sampler("gumbel", _gumbel, _gumbel_b)

randint = _prim(
    "random.randint",
    _randint,
    lambda rng: [
        ((k, s, lo, hi), {})
        for k, s, lo, hi in zip(_key_samples(rng), ((5,), (2, 3)), (0, -3), (7, 4))
    ],
)
_randint_bp = _internal(
    "ad.random_randint_b", _randint_b, lambda rng: [((_ks(rng), (3,), 0, 10), {})]
)
rademacher = _prim(
    "random.rademacher",
    _rademacher,
    lambda rng: [((k, (4,)), {}) for k in _key_samples(rng)],
)
_rademacher_bp = _internal(
    "ad.random_rademacher_b", _rademacher_b, lambda rng: [((_ks(rng), (3,)), {})]
)
permutation = _prim(
    "random.permutation",
    _permutation,
    lambda rng: [
        ((_key_samples(rng)[0], 6), {}),
        ((_key_samples(rng)[1], rng.normal(size=(4, 3))), {}),
        ((_key_samples(rng)[0], rng.normal(size=(2, 5))), {"axis": 1, "independent": True}),
    ],
    differentiable=True,
)
permutation.missing_rule_hint = (
    "srcjax.random.permutation is not differentiable in x (JAX is); permute indices "
    "instead: x[random.permutation(key, x.shape[0])]"
)
_permutation_bp = _internal(
    "ad.random_permutation_b",
    _permutation_b,
    lambda rng: [((_ks(rng), 5), {}), ((_ks(rng), rng.normal(size=(3, 2))), {})],
)
choice = _prim(
    "random.choice",
    _choice,
    lambda rng: [
        ((_key_samples(rng)[0], 5, (3,)), {}),
        ((_key_samples(rng)[1], rng.normal(size=(4, 2)), (2,)), {"replace": False}),
        # p passed positionally: the registry-driven vmap test batches positional floats
        ((_key_samples(rng)[0], 4, (3,), True, np.array([0.1, 0.2, 0.3, 0.4], np.float32)), {}),
        ((_key_samples(rng)[1], 4, (2,), False, np.array([0.1, 0.2, 0.3, 0.4], np.float32)), {}),
    ],
    differentiable=True,
)
choice.missing_rule_hint = (
    "srcjax.random.choice is not differentiable in a (JAX is); choose indices "
    "instead: a[random.choice(key, a.shape[0], shape)]"
)
_choice_bp = _internal("ad.random_choice_b", _choice_b, lambda rng: [((_ks(rng), 5, (3,)), {})])
categorical = _prim(
    "random.categorical",
    _categorical,
    lambda rng: [
        ((k, rng.normal(size=s).astype(np.float32)), {})
        for k, s in zip(_key_samples(rng), ((4,), (2, 3)))
    ],
)
_categorical_bp = _internal(
    "ad.random_categorical_b",
    _categorical_b,
    lambda rng: [((_ks(rng), rng.normal(size=(2, 3)).astype(np.float32)), {})],
)
laplace, _laplace_bp = _float_sampler("laplace", _laplace, _laplace_b)
logistic, _logistic_bp = _float_sampler("logistic", _logistic, _logistic_b)

for _pub, _int in (
    (randint, _randint_bp),
    (rademacher, _rademacher_bp),
    (permutation, _permutation_bp),
    (choice, _choice_bp),
    (categorical, _categorical_bp),
    (laplace, _laplace_bp),
    (logistic, _logistic_bp),
    (split, _split_bp),
    (bits, _bits_bp),
    (uniform, _uniform_bp),
    (normal, _normal_bp),
    (bernoulli, _bernoulli_bp),
    (exponential, _exponential_bp),
    (gumbel, _gumbel_bp),
):
    _pub.def_batch(_batch_rule(_int))
    _int.def_batch(_batch_rule(_int))
PRNGKey.def_batch(_batch_rule(_seed_b, "seed"))
key.def_batch(_batch_rule(_key_b, "seed"))
_key_b.def_batch(_batch_rule(_key_b, "seed"))
_seed_b.def_batch(_batch_rule(_seed_b, "seed"))
fold_in.def_batch(_batch_rule(_fold_in_bp, "key", materialize=("data",)))
_fold_in_bp.def_batch(_batch_rule(_fold_in_bp, materialize=("data",)))
for _p in (key_data, wrap_key_data):
    _p.def_batch(lambda c: c.rebuild())
