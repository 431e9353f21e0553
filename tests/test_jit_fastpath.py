"""jit's straight-line boundary (srcjax/jit_api/fastpath.py): after a call, the
specialization's own guard checks the next call's arguments and hands the
generated code what the generic key walk would, and its results are built by
straight-line code. Oracles: the same call on a fresh jit object (whose first
call takes the generic walk: bit-identical results, same types and aux data),
and NumPy for the values. Every change of structure between calls (aux data,
a dict key, a None leaf, a named tuple, a shape, a dtype, an attribute) must
give the generic walk's answer."""

import collections

import numpy as np

import srcjax
import srcjax.numpy as jnp
from srcjax import tree_util as tu
from srcjax.jit_api import fastpath
from srcjax.jit_api.jitted import _Jit


@tu.register_pytree_node_class
class Scaled:
    """A registered class whose aux data (an int, also an attribute) enters the
    computation."""

    def __init__(self, w, scale):
        self.w = w
        self.scale = scale

    def tree_flatten(self):
        return (self.w,), self.scale

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0], aux)


@tu.register_pytree_node_class
class Named:
    """A registered class with a constant attribute that is no child (a name)."""

    def __init__(self, w, b, name="layer"):
        self.w = w
        self.b = b
        self.name = name

    def tree_flatten(self):
        return (self.w, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


Pair = collections.namedtuple("Pair", ["a", "b"])
Other = collections.namedtuple("Other", ["a", "b"])


def counting(jitted):
    """``jitted`` with its generic key walk counted (``calls[0]``)."""
    calls = [0]
    generic = jitted._key

    def key(*a, **k):
        calls[0] += 1
        return generic(*a, **k)

    jitted._key = key
    return calls


def same(a, b):
    """Bit-identical trees: the same structure (types, aux data) and leaves."""
    la, ta = tu.tree_flatten(a)
    lb, tb = tu.tree_flatten(b)
    assert ta == tb
    for u, w in zip(la, lb):
        assert type(u) is type(w)
        u, w = np.asarray(u), np.asarray(w)
        assert u.dtype == w.dtype and u.shape == w.shape
        assert u.tobytes() == w.tobytes()


def fresh(fun):
    """A jit object of its own (``srcjax.jit`` shares one per function)."""
    return _Jit(fun, (), (), (), None)


def check(fun, calls):
    """Each call of one long-lived jit object against a fresh jit's first call."""
    jitted = fresh(fun)
    walks = counting(jitted)
    outs = []
    for args in calls:
        got = jitted(*args)
        same(got, fresh(fun)(*args))
        outs.append(got)
    return jitted, walks, outs


def r():
    return np.random.default_rng(0)


def test_a_training_loop_on_a_class_model_takes_the_guard():
    from test_jit_pytree_structure import adam_step, inputs

    model, state, x, y = inputs((5, 7, 6, 3))
    jitted = fresh(adam_step)
    walks = counting(jitted)
    for _ in range(4):  # ndarray leaves first, then the Arrays the step returned
        got = jitted(model, state, x, y)
        same(got, fresh(adam_step)(model, state, x, y))
        model, state, _ = got
    assert walks[0] == 1  # the first call only (Array leaves come in as buffers)
    g = jitted._fast[0][0]
    assert ".tree_flatten()" in g.__srcjax_text__  # (the class's method, called directly)
    with srcjax.disable_jit():
        want = adam_step(model, state, x, y)
    got = jitted(model, state, x, y)
    for u, w in zip(tu.tree_leaves(got), tu.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(u), np.asarray(w), rtol=2e-5, atol=1e-6)


def test_an_equal_dtype_that_is_another_object_takes_the_guard():
    # (found by test order: arrays made by a Numba region carry a float32 dtype
    # equal to NumPy's but another object; the guard compared dtypes by identity,
    # so every call after the region compiled took the generic walk)
    import pickle

    other = pickle.loads(pickle.dumps(np.dtype(np.float32)))
    assert other == np.float32 and other is not np.dtype(np.float32)

    def step(w, b, x):
        return w * x + b, b - 1.0

    jitted = fresh(step)
    walks = counting(jitted)
    w, b = np.ones(3, np.float32), np.zeros(3, np.float32)
    x = np.arange(3, dtype=np.float32)
    for i in range(4):  # (the first call with NumPy's own dtype object)
        b = np.asarray(b).astype(other) if i else b
        got = jitted(w, b, x)
        same(got, fresh(step)(w, b, x))
        _, b = got
    assert walks[0] == 1
    np.testing.assert_array_equal(np.asarray(b), np.full(3, -4.0, np.float32))


def test_changed_aux_data_specializes_again():
    w = np.arange(4, dtype=np.float32)
    f = lambda s: s.w * s.scale  # noqa: E731
    calls = [(Scaled(w, 2),), (Scaled(w, 2),), (Scaled(w, 3),), (Scaled(w, 3),)]
    jitted, walks, outs = check(f, calls + [(Scaled(w, 2.0),), (Scaled(w, 2.0),)])
    np.testing.assert_array_equal(np.asarray(outs[1]), w * 2)
    np.testing.assert_array_equal(np.asarray(outs[2]), w * 3)
    np.testing.assert_array_equal(np.asarray(outs[5]), w * 2)
    # (a float attribute is keyed by the class's type tree: no guard for it)
    assert walks[0] == 4 and jitted._cache_size() == 3


def test_a_dict_with_a_new_key_or_another_order():
    a = np.arange(3, dtype=np.float32)
    f = lambda d: sum(d[k] * (i + 1) for i, k in enumerate(sorted(d)))  # noqa: E731
    calls = [({"a": a, "b": a},), ({"a": a, "b": a},), ({"a": a, "b": a, "c": a},)]
    calls += [({"b": a, "a": a * 2},), ({"b": a * 2, "a": a},), ({"a": a, "b": a},)]
    calls += [({"a": a, "B": a},)]
    jitted, walks, outs = check(f, calls)
    np.testing.assert_array_equal(np.asarray(outs[2]), a * 6)
    np.testing.assert_array_equal(np.asarray(outs[3]), a * 2 + a * 2)
    np.testing.assert_array_equal(np.asarray(outs[4]), a + a * 4)  # (sorted: "a" first)
    assert walks[0] == 4  # the second, fifth and sixth calls took a guard


def test_a_none_leaf_and_back():
    x = np.ones(3, np.float32)
    f = lambda t: t[0] * 2 if t[1] is None else t[0] * t[1]  # noqa: E731
    y = np.full(3, 5.0, np.float32)
    _, walks, outs = check(f, [((x, None),), ((x, None),), ((x, y),), ((x, None),)])
    np.testing.assert_array_equal(np.asarray(outs[1]), x * 2)
    np.testing.assert_array_equal(np.asarray(outs[2]), x * 5)
    np.testing.assert_array_equal(np.asarray(outs[3]), x * 2)
    assert walks[0] == 3


def test_named_tuples_keep_their_type():
    a = np.arange(3, dtype=np.float32)
    f = lambda p: type(p)(p.a * 2, p.b + 1)  # noqa: E731
    calls = [(Pair(a, a),), (Pair(a, a),), (Other(a, a),), ((a, a),), (Pair(a, a * 3),)]
    _, walks, outs = check(lambda p: (p, p[0] + p[1]), calls)
    assert type(outs[1][0]) is Pair and type(outs[2][0]) is Other and type(outs[3][0]) is tuple
    np.testing.assert_array_equal(np.asarray(outs[4][1]), a * 4)
    _, _, outs = check(f, calls[:3])
    assert type(outs[1]) is Pair and type(outs[2]) is Other


def test_shapes_dtypes_and_scalars_between_calls():
    f = lambda t: (t[0] * t[1], t[2] + 1)  # noqa: E731
    x = np.arange(4, dtype=np.float32)
    calls = [
        ((x, 2.0, np.float32(1)),),
        ((x, 2.0, np.float32(1)),),
        ((x, 3, np.float32(1)),),  # a Python int where a float was
        ((x.astype(np.float64), 2.0, np.float32(1)),),  # narrowed by the walk
        ((x[:3], 2.0, np.float32(1)),),
        ((x, 2.0, np.array(1, np.float32)),),  # a 0-d array where a scalar was
        ((jnp.asarray(x), 2.5, np.float32(2)),),
    ]
    _, walks, outs = check(f, calls)
    np.testing.assert_array_equal(np.asarray(outs[6][0]), x * 2.5)
    assert np.asarray(outs[3][0]).dtype == np.float32


def test_class_attributes_between_calls():
    w = np.ones((2, 2), np.float32)
    b = np.zeros(2, np.float32)
    f = lambda m: m.w @ m.w + m.b  # noqa: E731
    renamed = Named(w, b, "other")
    extra = Named(w, b)
    extra.cache = w  # an attribute that is no child
    reordered = Named.__new__(Named)  # the attributes set in another order
    reordered.name, reordered.b, reordered.w = "layer", b * 2, w
    aliased = Named(w, w)  # one object for both children
    calls = [(Named(w, b),), (Named(w, b),), (renamed,), (extra,), (aliased,), (Named(w, b),)]
    calls += [(reordered,), (Named(w, b),)]
    jitted, walks, outs = check(f, calls)
    np.testing.assert_array_equal(np.asarray(outs[6]), w @ w + b * 2)
    assert walks[0] == 5


def test_a_list_argument_is_not_the_callers_list():
    # the walk hands generated code a copy of every list: a list mutated inside
    # stays the caller's as it was, on the guard's path too
    def f(ps):
        ps.append(ps[0] * 2)
        return ps

    jitted = srcjax.jit(f)
    x = np.arange(3, dtype=np.float32)
    for _ in range(3):
        given = [x]
        out = jitted(given)
        assert len(given) == 1 and len(out) == 2
        assert not np.shares_memory(np.asarray(out[0]), x)


def test_returned_inputs_are_copies_on_the_guard_path():
    from test_jit_pytree_structure import make_model

    model = make_model((3, 4, 2))
    f = srcjax.jit(lambda m: (tu.tree_map(lambda a: a, m), m.layers[0].bias.sum()))
    for _ in range(3):
        out, _ = f(model)
        for leaf, given in zip(tu.tree_leaves(out), tu.tree_leaves(model)):
            np.testing.assert_array_equal(np.asarray(leaf), given)
            assert not np.shares_memory(np.asarray(leaf), given)
    assert f._fast and f._fast[0][1].__srcjax_finish__


def test_clear_caches_forgets_the_guard():
    f = srcjax.jit(lambda t: t[0] + t[1])
    x = np.ones(2, np.float32)
    f((x, x))
    assert f._fast
    srcjax.clear_caches()
    assert not f._fast
    np.testing.assert_array_equal(np.asarray(f((x, x))), x * 2)


def test_the_guard_is_compiled_at_its_first_use():
    """The guard is written at the first call and compiled at the next (the
    first use): then it replaces the written one in the jit's table; the second
    call takes it (no generic walk). Oracle: NumPy."""
    jitted = fresh(lambda t: t[0] * 2.0 + t[1])
    walks = counting(jitted)
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(jitted((x, x))), x * 3)
    ((lazy, fn),) = jitted._fast
    assert isinstance(lazy, fastpath.LazyGuard) and fn.__srcjax_guard__ is lazy
    np.testing.assert_array_equal(np.asarray(jitted((x, x + 1))), x * 3 + 1)
    ((guard, fn2),) = jitted._fast
    assert fn2 is fn and fn.__srcjax_guard__ is guard
    assert not isinstance(guard, fastpath.LazyGuard) and guard.__srcjax_text__ == lazy.text
    np.testing.assert_array_equal(np.asarray(jitted((x + 2, x))), x * 3 + 4)
    assert walks[0] == 1


def test_unsupported_structures_keep_the_generic_walk():
    # (a defaultdict, an OrderedDict: no guard written; the calls are as before)
    d = collections.OrderedDict(b=np.ones(2, np.float32), a=np.zeros(2, np.float32))
    f = lambda d: d["a"] - d["b"]  # noqa: E731
    jitted, walks, _ = check(f, [(d,), (d,)])
    assert not jitted._fast and walks[0] == 2
    assert fastpath.make_guard(((("static", int, 1),), (), False, None), (1,)) is None
