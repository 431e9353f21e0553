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
