"""The types of lax loop carries (fori_loop, while_loop, scan) against JAX 0.10.2.

JAX's rule (jax/_src/lax/control_flow/loops.py, ``_promote_weak_typed_input``):
the body is traced with the initial carry's types; where an initial leaf is
weakly typed (a Python scalar) and the body returns another dtype, that leaf is
converted to the promoted dtype (a strong value) and the body traced again. A
carry that differs from the body's output in its weak type only keeps the
initial weak type inside the body (a scan's ``ys = c`` from a ``0.0`` carry are
weak); the loop's result has the body's output type.

Each case: JAX's leaves as (dtype, weak_type, values), recorded from JAX 0.10.2
on CPU with the same code (``jax``/``jax.lax`` in place of ``srcjax``)."""

import warnings

import numpy as np
import pytest

import srcjax
import srcjax.lax as lax

_F32 = np.ones(3, np.float32)
_X16 = np.ones(3, np.float16) * np.float16(0.3)


def _while_mul(x):
    return lax.while_loop(lambda c: c < 10, lambda c: c * 1.5, x)


def _while_mul_long(x):
    return lax.while_loop(lambda c: c < 1000, lambda c: c * 1.1, x)


def _fori_mul(x):
    return lax.fori_loop(0, 30, lambda i, c: c * 1.1, x)


def _fori_lit_plus(x):
    return lax.fori_loop(0, 30, lambda i, c: (c + x) * 1.1, 1)  # (no FMA in XLA)


def _while_pair(x):
    return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.1), (0, x))


def _scan_half(x):
    return lax.scan(lambda c, v: (c * 0.5 + v, c), 0.0, x)


def _scan_weak_only(x):
    return lax.scan(lambda c, v: (c + 1.0, c), 0.0, x)


def _scan_f16(x):
    return lax.scan(lambda c, v: (c * 1.1 + v, c), 0.0, x)


def _scan_int(x):
    return lax.scan(lambda c, v: (c * 1.1 + v, c * 2), 1, x)


def _scan_pair(x):
    return lax.scan(lambda c, v: ((c[0] + v, c[1] * 2.0), c[0]), (0.0, 1), x)


def _fori_pair(x):
    return lax.fori_loop(0, 30, lambda i, c: (c[0] * 1.1, c[1] + x), (1, 0.0))


def _fori_plus(x):
    return lax.fori_loop(0, 3, lambda i, c: c + x, 0.0)


def _fori_plus_i(x):
    return lax.fori_loop(0, 3, lambda i, c: c + i, x)


#: name: (function, arguments, JAX 0.10.2's leaves under jit)
CASES = {
    # a weak int carry the body makes float: converted to a strong float32 first,
    # so every trip computes in float32 (srcjax computed in Python floats)
    "while int*1.5": (_while_mul, (1,), [("float32", False, [11.390625])]),
    "while int*1.1": (_while_mul_long, (1,), [("float32", False, [1051.154541015625])]),
    "fori int*1.1": (_fori_mul, (1,), [("float32", False, [17.44940948486328])]),
    "fori literal int carry": (
        _fori_lit_plus,
        (np.float32(0.5),),
        [("float32", False, [107.9211654663086])],
    ),
    "fori literal int carry, weak x": (
        _fori_lit_plus,
        (0.5,),
        [("float32", False, [107.9211654663086])],
    ),
    "while float carry stays weak": (
        _while_mul_long,
        (1.0,),
        [("float32", True, [1051.154541015625])],
    ),
    "fori float carry stays weak": (_fori_mul, (1.0,), [("float32", True, [17.44940948486328])]),
    "fori float + i": (_fori_plus_i, (0.5,), [("float32", True, [3.5])]),
    "fori int + i": (_fori_plus_i, (1,), [("int32", True, [4])]),
    # a 0.0 carry: weak inside the body (ys), the result has the body's type
    "scan 0.0, c * 0.5 + v": (
        _scan_half,
        (_F32,),
        [("float32", False, [1.75]), ("float32", True, [0.0, 1.0, 1.5])],
    ),
    "scan 0.0, c + 1.0": (
        _scan_weak_only,
        (_F32,),
        [("float32", True, [3.0]), ("float32", True, [0.0, 1.0, 2.0])],
    ),
    # a 0.0 carry with float16 operands: a float16 carry
    "scan 0.0 float16": (
        _scan_f16,
        (_X16,),
        [("float16", False, [0.9921875]), ("float16", False, [0.0, 0.300048828125, 0.6298828125])],
    ),
    "fori 0.0 + float16": (_fori_plus, (np.float16(0.3),), [("float16", False, [0.900390625])]),
    "fori 0.0 + float32": (
        _fori_plus,
        (np.float32(0.3),),
        [("float32", False, [0.9000000357627869])],
    ),
    # a weak int carry made float32: ys (c * 2) float32 in every trip (eager: the
    # first trip's int32 row made them float64)
    "scan int carry": (
        _scan_int,
        (_F32,),
        [
            ("float32", False, [4.640999794006348]),
            ("float32", False, [2.0, 4.199999809265137, 6.619999885559082]),
        ],
    ),
    # a tuple carry: its weak int item the body makes float is converted
    "while (0, int)": (
        _while_pair,
        (1,),
        [("int32", True, [5]), ("float32", False, [1.6105101108551025])],
    ),
    # a tuple display of Python numbers: its float item weak, its int item made
    # float32 (the int item computed in Python floats under jit)
    "scan (0.0, int)": (
        _scan_pair,
        (_F32,),
        [("float32", False, [3.0]), ("float32", False, [8.0]), ("float32", True, [0.0, 1.0, 2.0])],
    ),
    "fori (int, 0.0) * 1.1": (
        _fori_pair,
        (np.float32(0.25),),
        [("float32", False, [17.44940948486328]), ("float32", False, [7.5])],
    ),
}


def _leaves(r):
    return [
        (
            np.asarray(x).dtype.name,
            bool(getattr(x, "weak_type", False)),
            np.asarray(x).ravel().tolist(),
        )
        for x in srcjax.tree_util.tree_leaves(r)
    ]


@pytest.mark.parametrize("name", sorted(CASES))
def test_jit_loop_carry_types(name):
    fn, args, want = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _leaves(srcjax.jit(fn)(*args))
    assert got == want


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_loop_carry_types(name):
    """The same loops without jit: the first trip runs with JAX's types (a Python
    scalar carry leaf as a weak Array; converted where the body promotes it)."""
    fn, args, want = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _leaves(fn(*args))
    assert got == want


def test_eager_promotion_runs_the_first_trip_again():
    """As JAX traces the body again with the converted carry: a value the body
    computes from its carry has the converted type (c + 1.5 of a float16 carry
    is float16; of the weak int 1 it would be float32). Recorded with JAX 0.10.2."""
    x16 = np.float16(0.5)
    body = lambda c, v: (c * x16, c + 1.5)  # noqa: E731
    carry, ys = lax.scan(body, 1, None, length=2)
    assert _leaves(carry) == [("float16", False, [0.25])]
    assert _leaves(ys) == [("float16", False, [2.5, 2.0])]


def test_vmap_of_scan_from_a_python_float_carry():
    """Round 6 item 10: vmap(scan) ys from a 0.0 carry (JAX: weak, the carry strong).
    Was a strict xfail: the abstract values did not know vmap's scan helpers
    (ad.bscan_length, ad.batch_broadcast of the ys list, ad.btree_slice/stack)
    and missed the batched loop's carry check (``unused = ad.check_carry(...)``),
    so the carry merged as a plain loop's (unknown) and the ys came back strong."""
    x = np.ones((2, 3), np.float32)
    want = [("float32", False, [1.75, 1.75]), ("float32", True, [0.0, 1.0, 1.5] * 2)]
    assert _leaves(srcjax.vmap(_scan_half)(x)) == want
    assert _leaves(srcjax.jit(srcjax.vmap(_scan_half))(x)) == want
