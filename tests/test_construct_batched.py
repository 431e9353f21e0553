"""Constructing a registered dataclass, a NamedTuple or a pytree class inside a
function that jacfwd, jacrev or vmap-of-jvp/vjp differentiates (fresh-user bug
30: jacfwd gave 0.0 and jacrev a false "the constructor computes a field from
it" when the fields were scalars: broadcasting a scalar made new memory, and the
constructor's derivative finds an argument's fields by identity).

Oracles: values recorded from jax 0.10.2 (``f = a * e**2``: df/de = 2 a e) and
float64 central differences.
"""

import dataclasses
from typing import NamedTuple

import numpy as np
from helpers import assert_close

import srcjax
import srcjax.numpy as jnp
from srcjax import tree_util as tu


@dataclasses.dataclass
class _Params:
    a: object
    e: object


tu.register_dataclass(_Params, data_fields=["a", "e"], meta_fields=[])


class _NT(NamedTuple):
    a: object
    e: object


@tu.register_pytree_node_class
class _Pair:
    def __init__(self, a, e):
        self.a, self.e = a, e

    def tree_flatten(self):
        return (self.a, self.e), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def _f(p):
    return p.a * p.e**2


_P = _Params(jnp.array(2.0), jnp.array(3.0))


def _g_dataclass(e):
    return _f(_Params(_P.a, e))


def _g_namedtuple(e):
    return _f(_NT(_P.a, e))


def _g_class(e):
    return _f(_Pair(_P.a, e))


def _g_float_field(e):
    return _f(_Params(2.0, e))


_GS = (_g_dataclass, _g_namedtuple, _g_class, _g_float_field)


def test_jacfwd_and_jacrev_through_a_constructor_of_scalars():
    """JAX 0.10.2: jacfwd, jacrev, jvp, grad all 12.0 (srcjax: jacfwd 0.0, jacrev
    NonDifferentiableError)."""
    for g in _GS:
        for jac in (srcjax.jacfwd, srcjax.jacrev, srcjax.grad):
            assert_close(jac(g)(_P.e), 12.0, rtol=1e-6)
            assert_close(srcjax.jit(jac(g))(_P.e), 12.0, rtol=1e-6)
        assert_close(srcjax.jvp(g, (_P.e,), (jnp.array(1.0),))[1], 12.0, rtol=1e-6)


def test_vmap_of_jvp_and_vjp_with_the_instance_unbatched():
    """Only the tangent (cotangent) is batched: JAX [12, 24]."""
    ts = jnp.array([1.0, 2.0])
    for g in _GS:
        jv = srcjax.vmap(lambda t, g=g: srcjax.jvp(g, (_P.e,), (t,))[1])(ts)
        assert_close(jv, [12.0, 24.0], rtol=1e-6)
        vj = srcjax.vmap(lambda c, g=g: srcjax.grad(lambda e: c * g(e))(_P.e))(ts)
        assert_close(vj, [12.0, 24.0], rtol=1e-6)


_E0 = jnp.array(3.0)


def _per_a(a):
    """The instance is batched (over ``a``), the differentiated field ``e`` is
    not (a global): JAX [6, 12, 18] for a = 1, 2, 3."""
    return srcjax.jvp(lambda e: _f(_Params(a, e)), (_E0,), (jnp.array(1.0),))[1]


def _per_a_grad(a):
    return srcjax.grad(lambda e: _f(_NT(a, e)))(_E0)


def test_vmap_over_one_field_differentiating_another():
    a = jnp.array([1.0, 2.0, 3.0])
    for fn in (_per_a, _per_a_grad):
        assert_close(srcjax.vmap(fn)(a), [6.0, 12.0, 18.0], rtol=1e-6)


def test_nested_jacobian_matches_differences(x64):
    """hessian through the constructor (vmap of jvp of grad): float64 central
    differences of the gradient."""
    h = srcjax.hessian(_g_dataclass)(np.float64(3.0))
    gr = srcjax.grad(_g_dataclass)
    fd = (gr(np.float64(3.0 + 1e-6)) - gr(np.float64(3.0 - 1e-6))) / 2e-6
    assert_close(h, fd, rtol=1e-6)
    assert_close(h, 4.0, rtol=1e-6)
