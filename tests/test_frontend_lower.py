"""srcjax/frontend/normalize/lower.py alone: break, continue and early return
lowered to flags. The lowered function is plain Python; it must return what the
original returns, for every input, and contain no jump but one final return."""

import ast
import inspect
import textwrap

import gast
import pytest

from srcjax.frontend import nodes as N
from srcjax.frontend.normalize.anf import Namer
from srcjax.frontend.normalize.lower import _Lowerer


def early_return(n):
    s = 0
    for i in range(n):
        if i * i > 10:
            return s - 1
        s += i
    return s


def break_and_continue(n):
    s = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        if s > 12:
            break
        s += i
    return s


def nested_loops(n):
    total = 0
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            if (i + j) % 2:
                continue
            total += i * j
        if total > 40:
            return -total
    return total


def while_with_break(n):
    k = 0
    while True:
        k += 1
        if k >= n:
            break
    return k


def return_in_branches(n):
    if n < 2:
        return 0
    elif n < 5:
        if n == 3:
            return 30
        n = n * 2
    else:
        return n + 100
    return n


def loop_else_free_search(n):
    found = -1
    for i in range(n):
        if i * 7 % 5 == 3:
            found = i
            break
    return found


SUBJECTS = [
    early_return,
    break_and_continue,
    nested_loops,
    while_with_break,
    return_in_branches,
    loop_else_free_search,
]


def lowered(f):
    """``f`` with its body lowered by _Lowerer alone, as a live function."""
    fdef = gast.parse(textwrap.dedent(inspect.getsource(f))).body[0]
    namer = Namer(set(N.names_in(fdef)))
    lowerer = _Lowerer(namer)
    fdef.body = lowerer.lower_function(fdef.body)
    for node in gast.walk(fdef):  # (fields the lowering leaves unset: the normalizer sets them)
        for field in node._fields:
            if not hasattr(node, field):
                setattr(node, field, None)
    tree = ast.fix_missing_locations(gast.gast_to_ast(gast.Module(body=[fdef], type_ignores=[])))
    text = ast.unparse(tree)
    ns = {}
    exec(compile(text, f"<lowered {f.__name__}>", "exec"), ns)
    return ns[f.__name__], fdef, lowerer


@pytest.mark.parametrize("f", SUBJECTS, ids=lambda f: f.__name__)
def test_lowered_function_returns_what_python_returns(f):
    g, _, _ = lowered(f)
    for n in range(0, 12):
        assert g(n) == f(n), n


@pytest.mark.parametrize("f", SUBJECTS, ids=lambda f: f.__name__)
def test_no_jump_is_left_and_one_return_ends_the_body(f):
    _, fdef, _ = lowered(f)
    jumps = [n for n in gast.walk(fdef) if isinstance(n, (gast.Break, gast.Continue))]
    returns = [n for n in gast.walk(fdef) if isinstance(n, gast.Return)]
    assert jumps == []
    assert len(returns) == 1 and fdef.body[-1] is returns[0]


def test_flags_are_fresh_names():
    _, fdef, lowerer = lowered(break_and_continue)
    user_names = set(N.names_in(gast.parse(inspect.getsource(break_and_continue))))
    assert lowerer.flags and not lowerer.flags & user_names
