"""Common-subexpression elimination of pure primitive calls (:func:`cse`)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Dict, List, Optional

import gast

from ...frontend import nodes as N
from ...frontend.normalize import Op
from .avals import Aval
from .common import _assigned, _is_assign, _Subst


# ---------------------------------------------------------------------------- CSE
def _cse_key(s: Any) -> Optional[tuple]:
    op = s.sj_op
    if op.kind != "prim":
        return None
    if op.prim.kind not in ("elementwise", "reduction", "linalg", "structural") and not (
        # (a dict or tuple is a value in generated code; a list may be appended to)
        op.prim.pure and isinstance(getattr(s, "sj_aval", None), (Aval, dict, tuple))
    ):
        return None
    value = s.value
    if (
        isinstance(value, gast.BinOp)
        and isinstance(value.op, (gast.Add, gast.Mult))
        and op.prim.op in ("+", "*")
        and _arrays(s, value.left, value.right)
    ):
        # a + b and b + a (a * b, b * a) on arrays are one value: IEEE addition
        # and multiplication commute, and the result dtype is symmetric
        sides = sorted((gast.dump(value.left), gast.dump(value.right)))
        return (op.prim.public, type(value.op).__name__, *sides)
    return (op.prim.public, gast.dump(value))


def _arrays(s: Any, *nodes: Any) -> bool:
    """Whether the operands are names of numbers and the result a (strong)
    numeric array or NumPy scalar: no object with operators of its own. (An
    operand's abstract value may be stale after propagation renamed it; one that
    is known and no array refuses.)"""
    res = getattr(s, "sj_aval", None)
    if not isinstance(res, Aval) or res.weak or res.dtype.kind not in "biufc":
        return False
    ins = getattr(s, "sj_avals_in", None) or {}
    for n in nodes:
        if not isinstance(n, gast.Name):
            return False
        a = ins.get(n.id, res)
        if not isinstance(a, Aval):
            return False
    return True


def cse(fdef: Any) -> int:
    """Replace a repeated pure primitive call by a copy of the first result;
    returns how many were replaced. A name made a copy reads as the name it
    copies for the rest of the pass, so a chain of repeats (R6's gradient tail,
    computed twice by forward-over-reverse: seven links) merges in one pass, not
    one link per pass."""
    return _cse_block(fdef.body, {}, {})


def _canonical(s: Any, alias: Dict[str, str]) -> Any:
    """``s`` itself, or a stand-in for it whose value reads each merged name as
    the name it copies (for the key only)."""
    if not alias or not (set(N.names_in(s.value)) & alias.keys()):
        return s
    value = _Subst({k: N.name(v) for k, v in alias.items()}).visit(N.clone(s.value))
    return SimpleNamespace(
        sj_op=s.sj_op,
        value=value,
        sj_aval=getattr(s, "sj_aval", None),
        sj_avals_in=getattr(s, "sj_avals_in", None),
    )


def _cse_block(stmts: List[Any], table: Dict[tuple, tuple], alias: Dict[str, str]) -> int:
    merged = 0

    def kill(names: set) -> None:
        for k in list(table):
            tname, used = table[k]
            if tname in names or used & names:
                del table[k]
        for k in list(alias):
            if k in names or alias[k] in names:
                del alias[k]

    for s in stmts:
        if isinstance(s, gast.If):
            merged += _cse_block(s.body, dict(table), dict(alias))
            merged += _cse_block(s.orelse, dict(table), dict(alias))
            kill(_assigned(s))
        elif isinstance(s, (gast.While, gast.For)):
            kill(_assigned(s))
            merged += _cse_block(s.body, dict(table), dict(alias))
            kill(_assigned(s))
        elif _is_assign(s):
            # the names the key reads: the statement's own and, before `kill` below
            # forgets them, those its merged names stand for (`sin = v1` merged, then
            # `v1 = sin * x`: the key reads v1, which this statement rebinds)
            used = set(N.names_in(s.value))
            used |= {alias[n] for n in used if n in alias}
            key = _cse_key(_canonical(s, alias))
            t = s.targets[0].id
            if key is not None and key in table:
                src = table[key][0]
                node = N.name(src)
                s.value = node
                s.sj_op = Op("copy", elts=[node])
                s.sj_note = "common subexpression"
                merged += 1
                kill({t})
                if src != t:
                    alias[t] = src
                continue
            kill({t})
            if key is None and s.sj_op.kind not in ("prim", "copy", "pack"):
                # `v = l.pop()`, a call that may change its arguments in place
                kill(set(N.names_in(s.value)))
            if key is not None:
                if t not in used:
                    table[key] = (t, used)
        else:
            # `l.append(v)` and other statements may change the lists and dicts
            # they name: `l[-1]` read before is not `l[-1]` after
            kill(_assigned(s) | set(N.names_in(s)))
    return merged


def repeats_a_call(fdef: Any) -> bool:
    """Whether two assignments call the same function of a primitives'
    namespace (``jnp``, ``lax``, ``nn``, ``special``) on the same names (``exp =
    jnp.exp(x)`` twice): a linear test, much cheaper than :func:`cse`, for code
    that is not optimized otherwise (eager ``grad``, whose first transformation
    should not pay for a pass that finds nothing). False positives (a name
    reassigned in between) only cost the pass."""
    return _repeats(fdef.body, set())


_PRIMITIVE_NAMESPACES = frozenset({"jnp", "lax", "nn", "special"})


def _repeats(stmts: List[Any], seen: set) -> bool:
    for s in stmts:
        if isinstance(s, gast.Assign):
            v = s.value
            if isinstance(v, gast.Call) and v.args and not v.keywords:
                f = v.func
                if (
                    isinstance(f, gast.Attribute)
                    and isinstance(f.value, gast.Name)
                    and f.value.id in _PRIMITIVE_NAMESPACES
                ):
                    key = [f.value.id, f.attr]
                    for a in v.args:
                        if not isinstance(a, gast.Name):
                            break
                        key.append(a.id)
                    else:
                        k = tuple(key)
                        if k in seen:
                            return True
                        seen.add(k)
        for block in (getattr(s, "body", None), getattr(s, "orelse", None)):
            if block and _repeats(block, seen):
                return True
    return False
