"""Weak-type cases of tests/test_weak_creation.py: array creation from Python
scalars (``jnp.full``, ``*_like``, ``broadcast_to``, ``lax.full``), gradients
through ``**`` (JAX's pow derivative casts to the promoted dtype, so it is
strong), ``jit`` of a callable instance and of ``sum`` over a container, loops
under ``vmap``/``jvp``, and ``vmap(out_axes=None)`` of a Python number.

The module names ``jax``, ``jnp`` and ``lax`` are set by whoever imports it
(srcjax in the test, JAX 0.10.2 in tools/record_weak_creation.py). Each
function ``c_*``/``g_*``/``t_*``/``l_*``/``v_*`` takes no argument and returns
the value whose leaves' dtype and weak type are compared.
"""

import numpy as np

jax = jnp = lax = None  # set by the importer

F16 = np.ones(3, np.float16)
F32 = np.ones(3, np.float32)
I8 = np.ones(3, np.int8)


def weak_arr():
    return jnp.asarray(2.0) * jnp.ones(3, jnp.int32)


# creation, eager
def c_full_float():
    return jnp.full(3, 2.0)


def c_full_int():
    return jnp.full(3, 2)


def c_full_bool():
    return jnp.full(3, True)


def c_full_dtype():
    return jnp.full(3, 2.0, dtype=jnp.float32)


def c_full_np32():
    return jnp.full(3, np.float32(2.0))


def c_full_weak0d():
    return jnp.full(3, jnp.asarray(2.0))


def c_full_strong0d():
    return jnp.full(3, jnp.float32(2.0))


def c_full_shape0():
    return jnp.full((), 2.0)


def c_full_weakarr():
    return jnp.full((2, 3), weak_arr())


def c_full_plus_f16():
    return jnp.full(3, 2.0) + jnp.asarray(F16)


def c_full_plus_i8():
    return jnp.full(3, 2) + jnp.asarray(I8)


def c_full_like_f16():
    return jnp.full_like(jnp.asarray(F16), 0.5)


def c_full_like_scalar():
    return jnp.full_like(3.0, 1)


def c_full_like_int_scalar():
    return jnp.full_like(3, 1.5)


def c_full_like_weakarr():
    return jnp.full_like(weak_arr(), 1.0)


def c_full_like_f32():
    return jnp.full_like(jnp.asarray(F32), 1.0)


def c_full_like_dtype():
    return jnp.full_like(3.0, 1, dtype=jnp.float32)


def c_zeros_like_float():
    return jnp.zeros_like(3.0)


def c_zeros_like_int():
    return jnp.zeros_like(3)


def c_zeros_like_bool():
    return jnp.zeros_like(True)


def c_ones_like_float():
    return jnp.ones_like(3.0)


def c_empty_like_float():
    return jnp.empty_like(3.0)


def c_zeros_like_weakarr():
    return jnp.zeros_like(weak_arr())


def c_zeros_like_weak0d():
    return jnp.zeros_like(jnp.asarray(3.0))


def c_zeros_like_dtype():
    return jnp.zeros_like(3.0, dtype=jnp.float32)


def c_zeros_like_plus_f16():
    return jnp.zeros_like(3.0) + jnp.asarray(F16)


def c_array_float():
    return jnp.array(3.0)


def c_asarray_int():
    return jnp.asarray(3)


def c_array_bool():
    return jnp.array(True)


def c_array_list():
    return jnp.array([1.0, 2.0])


def c_asarray_dtype():
    return jnp.asarray(3.0, dtype=jnp.float32)


def c_zeros():
    return jnp.zeros(3)


def c_arange_int():
    return jnp.arange(3)


def c_arange_float():
    return jnp.arange(3.0)


def c_linspace():
    return jnp.linspace(0.0, 1.0, 3)


def c_eye():
    return jnp.eye(2)


def c_broadcast_to_float():
    return jnp.broadcast_to(2.0, (3,))


def c_broadcast_to_weakarr():
    return jnp.broadcast_to(weak_arr(), (2, 3))


def c_where_scalars():
    return jnp.where(jnp.asarray([True, False]), 1.0, 2.0)


def c_where_scalar_f16():
    return jnp.where(jnp.asarray([True, False, True]), 1.0, jnp.asarray(F16))


def c_lax_full():
    return lax.full((3,), 2.0)


def c_lax_full_like_scalar():
    return lax.full_like(3.0, 1)


def c_reshape_float():
    return jnp.reshape(2.0, (1,))


def c_tile_float():
    return jnp.tile(2.0, 3)


def c_broadcast_to_int():
    return jnp.broadcast_to(2, (3,))


def c_broadcast_to_bool():
    return jnp.broadcast_to(True, (3,))


def c_full_complex():
    return jnp.full(3, 2 + 1j)


def c_zeros_like_complex():
    return jnp.zeros_like(1j)


def c_full_like_shape():
    return jnp.full_like(3.0, 1, shape=(2,))


def c_full_like_weak_strong_fill():
    return jnp.full_like(weak_arr(), np.float32(1.0))


def c_jit_full_like_weak_strong_fill():
    return jax.jit(lambda x: jnp.full_like(x, np.float32(1.0)))(2.0)


# joining: the weak rule over the items (jnp.stack([1.0, 2.0]) is weak)
def c_stack_floats():
    return jnp.stack([1.0, 2.0])


def c_stack_ints():
    return jnp.stack([1, 2])


def c_stack_int_float():
    return jnp.stack([1, 2.0])


def c_stack_bools():
    return jnp.stack([True, False])


def c_stack_weakarr():
    return jnp.stack([weak_arr(), weak_arr()])


def c_stack_weak_strong():
    return jnp.stack([weak_arr(), jnp.asarray(F32)])


def c_stack_weak_f16():
    return jnp.stack([weak_arr(), jnp.asarray(F16)])


def c_stack_dtype():
    return jnp.stack([1.0, 2.0], dtype=jnp.float32)


def c_stack_plus_f16():
    return jnp.stack([1.0, 2.0, 3.0]) + jnp.asarray(F16)


def c_concatenate_weakarr():
    return jnp.concatenate([weak_arr(), weak_arr()])


def c_concatenate_weak_strong():
    return jnp.concatenate([weak_arr(), jnp.asarray(F32)])


def c_hstack_floats():
    return jnp.hstack([1.0, 2.0])


def c_vstack_weakarr():
    return jnp.vstack([weak_arr(), weak_arr()])


def c_jit_stack_args():
    return jax.jit(lambda a, b: jnp.stack([a, b]))(1.0, 2.0)


def c_jit_stack_const():
    return jax.jit(lambda x: jnp.stack([1.0, 2.0, 3.0]) + x)(jnp.asarray(F16))


def c_jit_concatenate_weakarr():
    return jax.jit(lambda a: jnp.concatenate([a, a]))(weak_arr())


def c_jit_stack_weak_strong():
    return jax.jit(lambda a, b: jnp.stack([a, b]))(weak_arr(), jnp.asarray(F32))


# creation under transforms
def c_jit_full_const():
    return jax.jit(lambda: jnp.full(3, 2.0))()


def c_jit_full_arg():
    return jax.jit(lambda x: jnp.full(3, x))(2.0)


def c_jit_full_int_arg():
    return jax.jit(lambda x: jnp.full(3, x))(2)


def c_jit_zeros_like_arg():
    return jax.jit(lambda x: jnp.zeros_like(x))(2.0)


def c_jit_ones_like_const():
    return jax.jit(lambda x: jnp.ones_like(3.0) * x)(jnp.asarray(F16))


def c_jit_full_plus_f16():
    return jax.jit(lambda h: jnp.full(3, 2.0) + h)(jnp.asarray(F16))


def c_jit_full_plus_i8():
    return jax.jit(lambda h: jnp.full(3, 2) + h)(jnp.asarray(I8))


def c_jit_broadcast_to():
    return jax.jit(lambda x: jnp.broadcast_to(x, (3,)))(2.0)


def c_jit_where():
    return jax.jit(lambda c: jnp.where(c, 1.0, 2.0))(jnp.asarray([True, False]))


def c_jit_array():
    return jax.jit(lambda x: jnp.array(x))(2.0)


def c_jit_asarray_const():
    return jax.jit(lambda: jnp.asarray(2.0))()


def c_vmap_full():
    return jax.vmap(lambda x: jnp.full(3, x))(jnp.asarray(F32))


def c_vmap_full_const():
    return jax.vmap(lambda x: jnp.full(3, 2.0) + x)(jnp.asarray(F16))


def c_vmap_zeros_like_scalar():
    return jax.vmap(lambda x: jnp.zeros_like(2.0) + x)(jnp.asarray(F16))


def c_grad_full():
    return jax.grad(lambda x: (jnp.full(3, x) * 2.0).sum())(2.0)


def c_grad_full_const():
    return jax.grad(lambda x: (jnp.full(3, 2.0) * x).sum())(jnp.float16(2.0))


def c_jvp_full():
    return jax.jvp(lambda x: jnp.full(3, x), (2.0,), (1.0,))


# gradients through pow (JAX's pow JVP casts to the promoted dtype: strong)
def g_pow_float():
    return jax.grad(lambda x: x**2.0)(3.0)


def g_pow_int():
    return jax.grad(lambda x: x**2)(3.0)


def g_pow_kw():
    return jax.grad(lambda x, p=2.0: x**p)(2.0, 3.0)


def g_pow_x_x():
    return jax.grad(lambda x: x**x)(3.0)


def g_rpow():
    return jax.grad(lambda x: 2.0**x)(3.0)


def g_lax_pow():
    return jax.grad(lambda x: lax.pow(x, 2.0))(3.0)


def g_pow_sum():
    return jax.grad(lambda x: x * 3.0 + x**2.0)(3.0)


def g_pow_weak_arr():
    return jax.grad(lambda x: x**2.0)(jnp.asarray(3.0))


def g_scale():
    return jax.grad(lambda x: x * 2.0)(3.0)


def g_sin():
    return jax.grad(jnp.sin)(3.0)


def g_jit_pow():
    return jax.jit(jax.grad(lambda x: x**2.0))(3.0)


# a gradient step inside jit at a weak point (user 9's r_weak_type_min.py):
# weak as JAX's, the pow of a float exponent strong
def _step(g):
    return lambda p: p - 0.1 * jax.grad(g)(p)


def g_jit_step_arr():
    return jax.jit(_step(lambda a: a**2))(jnp.array(0.5))


def g_jit_step_float():
    return jax.jit(_step(lambda a: a**2))(0.5)


def g_jit_step_sin():
    return jax.jit(_step(jnp.sin))(jnp.array(0.5))


def g_jit_step_f16():
    h = jnp.ones(2, jnp.float16)
    return jax.jit(lambda p: _step(lambda a: a**2)(p) * h)(jnp.array(0.5))


def g_jit_step_pow_float():
    return jax.jit(_step(lambda a: a**2.0))(jnp.array(0.5))


def g_jit_step_vag():
    return jax.jit(lambda p: p - jax.value_and_grad(lambda a: a * a)(p)[1])(jnp.array(0.5))


def g_jit_step_tree():
    t = {"amp": jnp.array(0.5), "ls": jnp.ones(2)}

    def f(t):
        return t["amp"] ** 2 + jnp.sum(t["ls"] ** 2)

    return jax.jit(lambda t: jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, t, jax.grad(f)(t)))(t)


def g_vag_pow():
    return jax.value_and_grad(lambda x: x**2.0)(3.0)


def g_jvp_pow():
    return jax.jvp(lambda x: x**2.0, (3.0,), (1.0,))


def g_pow_plus_f16():
    return jax.grad(lambda x: x**2.0)(3.0) + jnp.asarray(F16)


def g_sin_pow():
    return jax.grad(lambda x: jnp.sin(x) ** 2.0)(3.0)


def g_power_fn():
    return jax.grad(lambda x: jnp.power(x, 3.0))(3.0)


def g_pow_half():
    return jax.grad(lambda x: x**0.5)(3.0)


def g_grad_grad_pow():
    return jax.grad(jax.grad(lambda x: x**2.0))(3.0)


def g_strong_base_pow():
    return jax.grad(lambda x: (x * jnp.ones(())) ** 2.0)(3.0)


def g_pow_strong_exponent():
    return jax.grad(lambda x: x ** jnp.float32(2.0))(3.0)


def g_pow_times_strong():
    return jax.grad(lambda x: x**2.0 * jnp.ones(()))(3.0)


def g_pow_int_and_float():
    return jax.grad(lambda x: x**2 + x**2.0)(3.0)


def g_jit_vag_pow():
    return jax.jit(jax.value_and_grad(lambda x: x**2.0))(3.0)


def g_vmap_grad_pow():
    return jax.vmap(jax.grad(lambda x: x**2.0))(jnp.full(3, 2.0))


def g_pow_int_var():
    return jax.grad(lambda x, y: x**y)(3.0, 2)


def g_vag_pow_kw():
    return jax.value_and_grad(lambda x, p=2.0: x**p)(2.0, 3.0)


def g_float_power():
    return jax.grad(lambda x: jnp.float_power(x, 2.0))(3.0)


def g_hessian_pow():
    return jax.hessian(lambda x: x**2.0)(3.0)


# jit of a callable instance, dict sums
class Net:
    def __init__(self, s):
        self.s = s

    def __call__(self, x):
        return jnp.sin(x) * self.s


def t_jit_instance():
    return jax.jit(Net(2.0))(0.5)


def t_jit_instance_plus_f16():
    return jax.jit(Net(2.0))(0.5) + jnp.asarray(F16)


def t_jit_instance_strong_attr():
    return jax.jit(Net(np.float32(2.0)))(0.5)


def t_jit_dict_sum():
    return jax.jit(lambda d: sum(d.values()))({"a": 1.0, "b": 2.0})


def t_jit_dict_sum_arr():
    return jax.jit(lambda d: sum(d.values()))({"a": jnp.asarray(F32), "b": 2.0})


def t_jit_list_sum():
    return jax.jit(lambda xs: sum(xs))([1.0, 2.0])


def t_jit_list_sum_f16():
    return jax.jit(lambda xs: sum(xs))([jnp.asarray(F16), 1.0])


def t_jit_list_sum_int():
    return jax.jit(lambda xs: sum(xs))((1, 2))


def t_jit_tuple_sum_f32():
    return jax.jit(lambda xs: sum(xs))((jnp.asarray(F32), 2.0))


# loops
def _wl(x):
    return lax.while_loop(lambda s: s[0] < 10.0, lambda s: (s[0] * 2.0, s[1] + 1), (x, 0))


def l_while():
    return _wl(1.0)


def l_jit_while():
    return jax.jit(_wl)(1.0)


def l_vmap_while():
    return jax.vmap(_wl)(jnp.asarray([1.0, 5.0, 20.0]))


def l_vmap_while_plus_i8():
    return jax.vmap(_wl)(jnp.asarray([1.0, 5.0, 20.0]))[1] + jnp.asarray(I8)


def l_jvp_while():
    return jax.jvp(lambda x: _wl(x)[0], (1.0,), (1.0,))


def _sc(x):
    return lax.scan(lambda c, t: (c * 2.0 + t, c), x, jnp.arange(3.0))


def l_scan():
    return _sc(1.0)


def l_jit_scan():
    return jax.jit(_sc)(1.0)


def l_jvp_scan():
    return jax.jvp(lambda x: _sc(x)[0], (1.0,), (1.0,))


def l_jvp_scan_ys():
    return jax.jvp(lambda x: _sc(x)[1], (1.0,), (1.0,))


def l_vmap_scan():
    return jax.vmap(_sc)(jnp.asarray([1.0, 2.0]))


def l_fori():
    return lax.fori_loop(0, 3, lambda i, c: c * 2.0, 1.0)


def l_jvp_fori():
    return jax.jvp(lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2.0, x), (1.0,), (1.0,))


# vmap with out_axes=None
def v_out_none_float():
    return jax.vmap(lambda x: 2.0, out_axes=None)(jnp.asarray(F32))


def v_out_none_int():
    return jax.vmap(lambda x: 2, out_axes=None)(jnp.asarray(F32))


def v_out_none_tuple():
    return jax.vmap(lambda x: (x, 1.5), out_axes=(0, None))(jnp.asarray(F32))


def v_out_none_bool():
    return jax.vmap(lambda x: True, out_axes=None)(jnp.asarray(F32))


def v_out_none_neg():
    return jax.vmap(lambda x: -2.0, out_axes=None)(jnp.asarray(F32))


def v_out_none_pair():
    return jax.vmap(lambda x: (1.5, 2), out_axes=None)(jnp.asarray(F32))


def v_out_none_mapped_float():
    # (computed from the mapped argument: an Array, as JAX's)
    return jax.vmap(lambda x: x * 0.0 + 2.0, out_axes=0)(jnp.asarray(F32))
