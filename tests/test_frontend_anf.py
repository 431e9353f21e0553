"""srcjax/frontend/normalize/anf.py: the normalized language's Namer and Op."""

from srcjax.frontend import nodes as N
from srcjax.frontend.normalize.anf import Namer, Op, UserGlobal
from srcjax.primitives.registry import by_public


def test_fresh_names_never_collide():
    namer = Namer({"x", "t", "t1"})
    assert namer.fresh("x") == "x1"
    assert namer.fresh("t") == "t2"
    assert namer.fresh("y") == "y"
    assert namer.fresh("y") == "y1"
    assert namer.made == {"x1", "t2", "y", "y1"}


def test_fresh_names_are_identifiers_that_shadow_nothing():
    namer = Namer(set())
    assert namer.fresh("lambda") == "lambda_"  # a keyword
    assert namer.fresh("len") == "len_"  # a builtin generated code calls
    assert namer.fresh("jnp") == "jnp_"  # a namespace of generated code
    assert namer.fresh("0x") == "v0x"
    assert namer.fresh("__") == "t"


def test_operand_names():
    sin = by_public("jnp.sin")
    op = Op("prim", prim=sin, bound={"x": N.name("a")})
    assert op.operand_names() == ["a"]
    pack = Op("pack", elts=[N.name("a"), N.name("b"), N.name("a")])
    assert pack.operand_names() == ["a", "b"]
    assert Op("inactive").operand_names() == []


def test_user_global():
    assert repr(UserGlobal("ad")) == "UserGlobal('ad')"
