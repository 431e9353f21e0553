"""srcjax.transforms.aux (split_aux): has_aux for reverse and forward mode, the
(value, aux) pair split in generated code; values against closed forms."""

import numpy as np
import pytest
from helpers import assert_close

import srcjax
import srcjax.numpy as jnp
from srcjax.frontend.normalize import normalize
from srcjax.frontend.source import get_source
from srcjax.transforms.aux import split_aux

pytestmark = pytest.mark.usefixtures("x64")


def with_aux(x):
    y = jnp.sin(x) * x
    return y, {"y": y, "twice": 2.0 * x}


def test_split_aux_appends_the_check_and_two_reads():
    norm = normalize(get_source(with_aux))
    body = list(norm.node.body)
    ret = body.pop()
    n = len(body)
    value, aux = split_aux(body, ret.value, norm.namer, origin=ret)
    assert value != aux and len(body) == n + 3
    assert body[n].sj_op.kind == "inactive"
    reads = body[n + 1 :]
    assert [s.targets[0].id for s in reads] == [value, aux]
    assert [s.sj_op.bound["idx"].value for s in reads] == [0, 1]
    assert all(s.sj_op.prim.part == "item" for s in reads)


def test_grad_and_jvp_with_aux():
    x = 0.8
    g, aux = srcjax.grad(with_aux, has_aux=True)(x)
    assert_close(g, np.cos(x) * x + np.sin(x))
    assert_close(aux["twice"], 1.6)
    assert_close(aux["y"], np.sin(x) * x)
    jac, aux2 = srcjax.jacfwd(with_aux, has_aux=True)(x)
    assert_close(jac, np.cos(x) * x + np.sin(x))
    assert_close(aux2["twice"], 1.6)


def not_a_pair(x):
    return x * 2.0


def test_has_aux_of_a_function_returning_no_pair_raises():
    with pytest.raises(Exception, match="(?i)aux|pair|tuple"):
        srcjax.grad(not_a_pair, has_aux=True)(1.0)
