"""Golden files: the generated source of a few functions is pinned, byte for byte.

Output must be deterministic (no ids, no hashes, no absolute paths). To accept a
deliberate change, run ``SRCJAX_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py``
and review the diff of tests/golden/.
"""

import os

import golden_models as m
import numpy as np
import pytest

import srcjax

HERE = os.path.join(os.path.dirname(__file__), "golden")

CASES = {
    "loss_grad": (lambda: srcjax.grad(m.loss), ()),
    "loss_grad_argnums01": (lambda: srcjax.grad(m.loss, argnums=(0, 1)), ()),
    "grow_grad": (lambda: srcjax.grad(m.grow), ()),
    "branch_grad": (lambda: srcjax.grad(m.branch), ()),
    "rnn_grad": (lambda: srcjax.grad(m.rnn, argnums=2), ()),
    "walrus_branch_grad": (lambda: srcjax.grad(m.walrus_branch), ()),
    "loop_else_break_grad": (lambda: srcjax.grad(m.loop_else_break), ()),
    "match_kind_grad": (lambda: srcjax.grad(m.match_kind), ()),
    "params_loss_value_and_grad": (
        lambda: srcjax.value_and_grad(m.params_loss),
        ({"w": np.ones((2, 2)), "b": np.ones(2)}, np.ones((3, 2))),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_source_is_pinned(name):
    make, example = CASES[name]
    text = srcjax.source(make(), *example)
    again = srcjax.source(make(), *example)
    assert text == again  # deterministic within a process
    path = os.path.join(HERE, name + ".py.txt")
    if os.environ.get("SRCJAX_UPDATE_GOLDEN") or not os.path.exists(path):
        with open(path, "w") as fh:
            fh.write(text)
    with open(path) as fh:
        assert text == fh.read(), f"generated source of {name} changed; see {path}"
