"""planner._dead_lists: the lists a function only builds (bound to [] and only
appended to), whose appends a Numba kernel may drop. Rewritten as one walk
(it was 22% of a first jit(grad) of associative_scan under cProfile); the
sets here are read off the code by hand."""

import textwrap

import gast
import pytest

pytest.importorskip("numba")

from srcjax.backends.numba_cpu.planner import _dead_lists  # noqa: E402


def _fdef(src):
    return gast.parse(textwrap.dedent(src)).body[0]


def test_only_built_lists_are_dead():
    fdef = _fdef(
        """
        def f(x):
            ys = []
            zs = []
            ws = []
            for k in range(3):
                ys.append(None)
                zs.append(x)
                if k:
                    ws.append(k)
            ws = []
            return zs
        """
    )
    assert _dead_lists(fdef) == {"ys", "ws"}


def test_a_list_read_anywhere_or_bound_otherwise_is_live():
    fdef = _fdef(
        """
        def f(x):
            a = []
            b = [x]
            c = []
            a.append(x)
            b.append(x)
            c.append(x)
            c.extend([x])
            t = len(a) if x else 0
            return t
        """
    )
    assert _dead_lists(fdef) == set()
