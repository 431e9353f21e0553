"""srcjax/frontend/hooks.py: the frontend's hooks, filled by the layers above."""

import pytest

from srcjax.api_fwd import _jvp_function
from srcjax.codegen import emit
from srcjax.frontend import hooks


def test_the_higher_layers_fill_the_hooks_at_import():
    assert hooks.namespaces.fn is emit.namespaces
    assert hooks.means_the_same.fn is emit.means_the_same
    assert hooks.check_reparse.fn is emit.check_reparse
    assert hooks.jvp_function.fn is _jvp_function
    assert hooks.namespaces() is emit.namespaces() or hooks.namespaces() == emit.namespaces()


def test_an_unset_hook_names_its_provider():
    h = hooks.Hook("demo", "srcjax.somewhere")
    with pytest.raises(RuntimeError, match="srcjax.somewhere sets it"):
        h(1)
    assert h.set(lambda v: v + 1) is h.fn
    assert h(1) == 2
