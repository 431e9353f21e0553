"""srcjax/frontend/normalize/analyses.py: the analyses the normalizer consults,
each run alone on a parsed function. Oracles: Python's own symbol table
(symtable) for the names a body binds; hand-counted stores and kinds for the
small bodies below."""

import inspect
import symtable
import textwrap

import gast
import pytest

from srcjax.frontend.normalize.analyses import (
    _container_kinds,
    _function_names,
    _mutated_params,
    _own_locals,
    _shared_mutation,
    _store_counts,
    _surely_bound,
)


def body(x, p, q):
    a = [x]
    b, c = (1, 2)
    for i in range(3):
        a.append(i)
    d = {"k": x}
    t = (x, x)
    a += [x]
    p.append(x)
    q = [x]
    q.append(1)

    def inner(v):
        hidden = v
        return hidden

    g = lambda u: u  # noqa: E731
    return a, b, c, d, t, inner, g


def aliased(acc, x):
    b = acc
    b.append(x)
    return acc


def not_aliased(acc, x):
    acc.append(x)
    return acc


def _fdef(f):
    return gast.parse(textwrap.dedent(inspect.getsource(f))).body[0]


def _assigned_by_python(f):
    table = symtable.symtable(textwrap.dedent(inspect.getsource(f)), "<f>", "exec")
    fn = table.get_children()[0]
    return {s.get_name() for s in fn.get_symbols() if s.is_assigned() and not s.is_parameter()}


@pytest.mark.parametrize("f", [body, aliased, not_aliased])
def test_own_locals_are_the_names_python_assigns(f):
    fnode = _fdef(f)
    params = {a.id for a in fnode.args.args}
    assert _own_locals(fnode.body) - params == _assigned_by_python(f)


def test_store_counts():
    counts = _store_counts(_fdef(body).body)
    assert counts["a"] == 2 and counts["i"] == 1 and counts["q"] == 1 and counts["g"] == 1
    assert "hidden" not in counts  # (not inside nested functions)


def test_function_names():
    assert _function_names(_fdef(body).body) >= {"inner"}


def test_container_kinds():
    fnode = _fdef(body)
    kinds = _container_kinds(fnode, ["x", "p", "q"], lambda func: None)
    assert kinds["a"] == "list" and kinds["d"] == "dict" and kinds["t"] == "tuple"
    assert "x" not in kinds and "p" not in kinds  # parameters are unknown


def test_mutated_params():
    # p is mutated and never rebound; q is rebound before its mutation
    assert _mutated_params(_fdef(body)) == {"p"}
    assert _mutated_params(_fdef(not_aliased)) == {"acc"}


def test_shared_mutation_through_an_alias_is_found():
    found = _shared_mutation(_fdef(aliased))
    assert found is not None and "`b` is changed in place while `acc`" in found[1]
    assert _shared_mutation(_fdef(not_aliased)) is None


def _paths(c1, c2):
    if c1:
        a = 1
        b = 2
        if c2:
            return None
        d = 0  # noqa: F841
    else:
        a = 3
        for k in range(0):  # noqa: B007 (may run no iteration)
            e = 5  # noqa: F841
        if c2:
            b = 4
        else:
            raise ValueError
    return sorted(n for n in locals() if n not in ("c1", "c2"))


def test_surely_bound_names_are_those_every_going_on_path_binds():
    """Oracle: Python, run on every combination of the conditions: the names
    bound on all runs that reach the end (bug 38 needs to know whether the
    binding before an ``if`` survives it)."""
    runs = []
    for c1 in (False, True):
        for c2 in (False, True):
            try:
                got = _paths(c1, c2)
            except ValueError:
                continue
            if got is not None:
                runs.append(set(got))
    want = set.intersection(*runs)
    fdef = gast.parse(textwrap.dedent(inspect.getsource(_paths))).body[0]
    assert _surely_bound(fdef.body[:1]) == want == {"a", "b"}
    assert "*" in _surely_bound([fdef.body[-1]])  # a return: no path goes on
