"""srcjax.analysis.tapes: which lists are tapes or stacks (pushed to and popped
from only), checked against sets worked out by hand for a function written as
generated adjoint code writes them, and vmap of it against a Python loop."""

import numpy as np
from helpers import assert_close

import srcjax
from srcjax.analysis.tapes import appended_lists, pure_tape_lists, stack_lists, tape_lists
from srcjax.frontend.normalize import normalize
from srcjax.frontend.source import get_source
from srcjax.primitives.control import cotangents as C


def pushes(x, c):
    lst = None  # a cotangent tape started empty
    lst = C.push(lst, c)
    lst = C.push(lst, x)
    a = C.pop_like(lst, x)  # x
    vals = [x]  # a list that holds values
    vals = vals + [c]
    return a + vals[1]


def user_lists(x):
    tape = []
    seen = []
    for i in range(3):
        tape.append(x * i)
        seen.append(i)
    last = tape.pop()
    return last + len(seen)


def _body(fn):
    return list(normalize(get_source(fn)).node.body)


def test_stacks_of_generated_code_by_hand():
    body = _body(pushes)
    # lst: bound three times, by its None start and two pushes, read only by the
    # pushes and the pop; vals is bound by a display and a concatenation
    assert tape_lists(body) == {"lst"}
    assert stack_lists(body) == {"lst"}
    assert "lst" in pure_tape_lists(body)
    assert appended_lists(body) == {"lst"}


def test_user_lists_by_hand():
    body = _body(user_lists)
    assert tape_lists(body) == {"tape", "seen"}
    assert appended_lists(body) == {"tape", "seen"}
    # seen is read by len(seen): a value, not a pure tape; tape only by its
    # append and pop; neither is a stack (bound by `= []`, pushed by .append)
    assert pure_tape_lists(body) & tape_lists(body) == {"tape"}
    assert stack_lists(body) == set()


def test_vmap_matches_a_python_loop():
    xs = np.array([0.5, -1.0, 2.0])
    cs = np.array([1.0, 2.0, 3.0])
    assert_close(np.asarray(srcjax.vmap(pushes)(xs, cs)), xs + cs)
    assert_close(np.asarray(srcjax.vmap(user_lists)(xs)), np.array([user_lists(x) for x in xs]))
