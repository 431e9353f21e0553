"""The real-program benchmark rows (tools/real_programs, R1-R8) run under srcjax
by changing only their imports (and the users' rows U1-U5), and give JAX's numbers: each step's outputs
against values recorded from jax 0.10.2 (``SRCJAX_RECORD_JAX=1`` re-records
them; see helpers.jax_recorded). Timings are in tools/bench.py, never here."""

import os
import sys

import numpy as np
import pytest
from helpers import jax_recorded

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "real_programs"))
import load  # noqa: E402  (tools/real_programs/load.py)

sys.path.pop(0)

RECORDED = os.path.join(os.path.dirname(__file__), "data", "real_programs_jax.npz")
ROWS = sorted(load.FILES)
#: the fresh users' scan programs (tools/bench.py --users), recorded apart
USERS_RECORDED = os.path.join(os.path.dirname(__file__), "data", "user_programs_jax.npz")
USER_ROWS = sorted(load.USER_FILES)


def _leaves(tree):
    if isinstance(tree, dict):
        return [x for k in sorted(tree) for x in _leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [x for t in tree for x in _leaves(t)]
    if hasattr(tree, "tree_flatten"):  # a class registered as a pytree
        return _leaves(list(tree.tree_flatten()[0]))
    return [tree]


def _summary(key, out):
    """A step's outputs in a few numbers per leaf: small leaves whole, larger ones
    as their sum, sum of absolute values and first eight elements (float64)."""
    d = {}
    for i, leaf in enumerate(_leaves(out)):
        a = np.asarray(leaf)
        d[f"{key}/{i}/dtype"] = np.array(str(a.dtype))
        d[f"{key}/{i}/shape"] = np.array(a.shape, dtype=np.int64)
        flat = a.astype(np.float64).ravel()
        if flat.size <= 64:
            d[f"{key}/{i}/values"] = flat
        else:
            d[f"{key}/{i}/values"] = np.concatenate([[flat.sum(), np.abs(flat).sum()], flat[:8]])
    return d


def _run(key, lib, tmpdir):
    mod = load.load(key, lib, str(tmpdir))
    args = mod.make_inputs(np.random.default_rng(0))
    return mod.step(*args)


def _record(tmpdir, rows=ROWS):
    import jax

    d = {}
    for key in rows:
        d.update(_summary(key, jax.device_get(_run(key, "jax", tmpdir))))
    return d


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    return jax_recorded(RECORDED, lambda: _record(tmp_path_factory.mktemp("jax")))


@pytest.fixture(scope="module")
def users_recorded(tmp_path_factory):
    return jax_recorded(USERS_RECORDED, lambda: _record(tmp_path_factory.mktemp("jax"), USER_ROWS))


def test_only_the_import_lines_change():
    text = "import jax\nimport jax.numpy as jnp\nfrom jax import grad, lax\nfrom jax.tree_util import tree_map\n"
    text += "x = jax.nn.relu  # import jax stays in a comment\n"
    got = load.to_srcjax_imports(text)
    assert got.splitlines() == [
        "import srcjax as jax",
        "import srcjax.numpy as jnp",
        "from srcjax import grad, lax",
        "from srcjax.tree_util import tree_map",
        "x = jax.nn.relu  # import jax stays in a comment",
    ]


def _check(key, recorded, tmp_path):
    ours = _summary(key, _run(key, "srcjax", tmp_path))
    want = {k: v for k, v in recorded.items() if k.startswith(key + "/")}
    assert sorted(ours) == sorted(want)
    for k, v in want.items():
        if k.endswith("/values"):
            # float32 programs: sums of up to 200k terms in another order
            np.testing.assert_allclose(ours[k], v, rtol=2e-4, atol=1e-6, err_msg=k)
        else:
            np.testing.assert_array_equal(ours[k], v, err_msg=k)


@pytest.mark.parametrize("key", ROWS)
def test_real_program_matches_jax(key, recorded, tmp_path):
    _check(key, recorded, tmp_path)


@pytest.mark.parametrize("key", USER_ROWS)
def test_user_program_matches_jax(key, users_recorded, tmp_path):
    # (U2's reverse scan reads its outputs as ys[::-1], typed since session 17;
    # U3's carry is a pytree of a dict holding a list of layer dicts)
    _check(key, users_recorded, tmp_path)


#: XLA's buffers for R1's jitted SGD step (temporaries 267,264 + outputs 1,077,336
#: bytes), recorded from jax 0.10.2's ``step.lower(*args).compile().memory_analysis()``
JAX_R1_STEP_PEAK_BYTES = 1_344_600


def test_r1_step_peak_memory(tmp_path):
    """R1's step (grad + SGD over a list of (w, b)) allocates at most 1.5x what
    XLA's buffers take (the issue's goal; tracemalloc of one call after a warm-up;
    deterministic). 2.22x before the reverse loop's last values were released and
    ``w - lr * dw`` stopped allocating its product beside the result; 1.64x
    while the whole gradient was alive as the new parameters were built; 1.04x
    since the update loop takes each gradient leaf and computes the new parameter
    in its buffer (``take_dead_items``: ``ad.take_item``, ``ad.scaled_item``)."""
    import tracemalloc

    mod = load.load("R1", "srcjax", str(tmp_path))
    args = mod.make_inputs(np.random.default_rng(0))
    mod.step(*args)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = mod.step(*args)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    del out
    assert peak <= 1.5 * JAX_R1_STEP_PEAK_BYTES, peak / JAX_R1_STEP_PEAK_BYTES
