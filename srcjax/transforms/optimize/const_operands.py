"""Number operands of float array arithmetic as 0-d arrays made once per call
(:func:`const_operands`).

NumPy converts a Python number operand of ``0.9 * m`` to the array's dtype on
every call, ~1 us more than a 0-d array operand of that dtype costs (a (128,)
float32 array: 2.3 against 1.0 us). A hand-written Adam step (R5) has six such
operations per parameter. Where one number meets float arrays of one dtype at
least twice in the function's top-level statements, jit writes ``c =
ad.const_array(0.9, "float32")`` at the top (~0.3 us per call) and the
operations read ``c``. NumPy converts the number to that dtype either way: the
results are bit for bit the same.

Only where the type cannot change: ``* + - /`` of a float32/float64 array (not
weak, at least one axis) and an int or float constant, the result of the
array's abstract value, the number finite and exact enough (an int of at most
2**24 in magnitude, a float within the dtype's range). Not inside loops or
branches (a loop may become a Numba kernel, which takes its literals as they
are).
"""

from __future__ import annotations

import math
from typing import Any, Dict, List

import gast
import numpy as np

from ...frontend import nodes as N
from ...frontend.normalize import Op
from ...primitives import registry
from .avals import Aval
from .common import _is_assign, _new_assign

_OPS = ("*", "+", "-", "/")
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
#: how many operations one number must meet before a 0-d array of it pays off
MIN_USES = 2


def _candidate(s: Any):
    """``(side, number, dtype)`` of a statement ``t = number op a`` (or ``a op
    number``) of the kind above; else None."""
    if not _is_assign(s) or s.sj_op.kind != "prim" or s.sj_op.prim.op not in _OPS:
        return None
    e = s.value
    if not isinstance(e, gast.BinOp) or set(s.sj_op.bound) != {"x", "y"}:
        return None
    res = getattr(s, "sj_aval", None)
    ins = getattr(s, "sj_avals_in", {})
    for side, c, a in (("left", e.left, e.right), ("right", e.right, e.left)):
        if not (isinstance(c, gast.Constant) and isinstance(a, gast.Name)):
            continue
        v = c.value
        if type(v) not in (int, float):
            continue
        aa = ins.get(a.id)
        if not (isinstance(aa, Aval) and isinstance(res, Aval)) or aa != res:
            continue
        if aa.weak or aa.wt or aa.dtype not in _DTYPES or not aa.shape:
            continue
        if type(v) is int and abs(v) > 2**24:
            continue
        if type(v) is float and not (math.isfinite(v) and abs(v) <= float(np.finfo(aa.dtype).max)):
            continue
        return side, v, aa.dtype
    return None


def const_operands(fdef: Any, namer: Any) -> int:
    """Rewrite the operands (see the module); returns how many (run
    :func:`infer_avals` after)."""
    if namer is None:
        return 0
    found: Dict[tuple, List[tuple]] = {}
    for s in fdef.body:
        got = _candidate(s)
        if got is not None:
            side, v, dt = got
            found.setdefault((type(v), v, dt.name), []).append((s, side))
    prim = registry.by_public("ad.const_array")
    made: List[Any] = []
    done = 0
    for (_, v, dt), uses in found.items():
        if len(uses) < MIN_USES:
            continue
        name = namer.fresh("c_" + dt.replace("float", "f"))
        call = N.call(prim.public, [N.const(v), N.const(dt)])
        st = _new_assign(
            name,
            call,
            Op("prim", prim=prim, bound={"value": call.args[0], "dtype": call.args[1]}),
            uses[0][0],
        )
        st.sj_aval = Aval((), np.dtype(dt))
        made.append(st)
        for s, side in uses:
            setattr(s.value, side, N.name(name))
            s.sj_op.bound["x" if side == "left" else "y"] = N.name(name)
            s.sj_avals_in[name] = st.sj_aval
            done += 1
    fdef.body[:0] = made
    return done
