import os
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("SRCJAX_CACHE_DIR", os.path.join(tempfile.gettempdir(), "srcjax-test-cache"))
# srcjax's internal invariant checks (off in users' runs, see srcjax.config): every
# generated module must read back as the tree it was rendered from, every
# cotangent must have its primal's shape and dtype
os.environ.setdefault("JAX_ENABLE_CHECKS", "1")


@pytest.fixture
def x64():
    """Run a test with 64-bit floats (finite-difference oracles need them)."""
    import srcjax

    old = srcjax.config.jax_enable_x64
    srcjax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        srcjax.config.update("jax_enable_x64", old)


@pytest.fixture
def numba_loops_off():
    """The NumPy backend's own code, also under SRCJAX_NUMBA_LOOPS=1 (which
    compiles jitted loops with Numba and shows them in generated code)."""
    import srcjax

    old = srcjax.config.read("numba_loops")
    srcjax.config.update("numba_loops", False)
    try:
        yield
    finally:
        srcjax.config.update("numba_loops", old)
