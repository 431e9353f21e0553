"""Run a user function's normalized code by itself (for tests/test_frontend_*.py).

``run_normalized(f, *args)`` normalizes ``f`` (srcjax.frontend.normalize), renders
the normalized body to source, executes it with the namespaces generated code
binds and the normalizer's bindings, and calls it: no transform, no codegen
cache. The oracle of a converter is then Python itself: the normalized function
returns what ``f`` returns.
"""

import ast
import copy
from typing import Any, Callable, Optional

import numpy as np

from srcjax.frontend import hooks
from srcjax.frontend import nodes as N
from srcjax.frontend.normalize import Normalized, normalize
from srcjax.frontend.normalize.anf import UserGlobal
from srcjax.frontend.source import get_source


def normalized(f: Callable, kinds: Optional[tuple] = None) -> Normalized:
    """``normalize`` of ``f``'s source."""
    return normalize(get_source(f), kinds)


def _text(node: Any) -> str:
    """``node`` as source; locations the normalizer leaves unset (emit's renderer
    sets them) are filled in first."""
    node = N.clone(node)
    ast.fix_missing_locations(node)
    return N.to_source(node)


def normalized_text(f: Callable, kinds: Optional[tuple] = None) -> str:
    return _text(normalized(f, kinds).node)


def compiled(f: Callable, kinds: Optional[tuple] = None) -> Callable:
    """The normalized ``f`` as a live function."""
    norm = normalized(f, kinds)
    text = _text(norm.node)
    ns = dict(f.__globals__)
    ns.update(hooks.namespaces())
    for name, value in norm.bindings.items():
        # (a UserGlobal reads the user's variable: codegen's GeneratedGlobals does it live)
        ns[name] = f.__globals__[value.name] if isinstance(value, UserGlobal) else value
    exec(compile(text, f"<normalized {f.__name__}>", "exec"), ns)
    return ns[norm.node.name]


def run_normalized(f: Callable, *args: Any, kinds: Optional[tuple] = None) -> Any:
    return compiled(f, kinds)(*args)


def assert_same(f: Callable, *args: Any, kinds: Optional[tuple] = None) -> None:
    """The normalized ``f`` returns what ``f`` returns (values, to float64 rounding)."""
    want = f(*copy.deepcopy(args))  # (NumPy's in-place += must not reach the other run)
    got = run_normalized(f, *copy.deepcopy(args), kinds=kinds)
    _same(got, want)


def _same(got: Any, want: Any) -> None:
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            _same(g, w)
    elif isinstance(want, dict):
        assert sorted(got) == sorted(want), (got, want)
        for k in want:
            _same(got[k], want[k])
    elif want is None or isinstance(want, (str, bool)):
        assert got == want, (got, want)
    else:
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12, atol=1e-12)
