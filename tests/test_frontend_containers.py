"""srcjax/frontend/normalize/containers.py: list and dict methods, item deletion,
dict copies and sequence operators in normalized code. Oracle: the normalized
function returns what Python's containers give."""

import numpy as np
import pytest
from frontend_run import assert_same

import srcjax.numpy as jnp


def list_methods(x):
    lst = [x]
    lst.append(2.0 * x)
    lst.extend([3.0 * x, 4.0 * x])
    lst.insert(1, -x)
    last = lst.pop()
    first = lst.pop(0)
    lst.reverse()
    return lst, last, first


def dict_methods(x):
    d = {"a": x}
    d.update(b=2.0 * x)
    d.setdefault("c", 3.0 * x)
    d.setdefault("a", 100.0 * x)
    v = d.pop("b")
    got = d.get("z", -x)
    return d, v, got, sorted(d.keys())


def dict_copy(x):
    d = {"a": x, "b": 2.0 * x}
    e = dict(d)
    e["a"] = -x
    f = d.copy()
    f["b"] = 0.5 * x
    return d, e, f


def sequence_operators(x):
    a = [x] + [2.0 * x]
    b = (x,) * 3
    c = a * 2
    return a, b, c, len(c)


def items_and_values(x):
    d = {"p": x, "q": 3.0 * x}
    s = 0.0 * x
    for k, v in d.items():
        s = s + v
    return s, list(d.values())


def stack(x):
    st = [x]
    for i in range(3):
        st.append(st[-1] * 2.0)
    total = 0.0 * x
    while st:
        total = total + st.pop()
    return total


X = jnp.asarray(np.array([0.5, -1.0]))


@pytest.mark.parametrize(
    "f", [list_methods, dict_methods, dict_copy, sequence_operators, items_and_values, stack]
)
def test_normalized_container_code_gives_pythons_values(f):
    assert_same(f, X)
