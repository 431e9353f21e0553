"""Control-flow lowering: ``break``, ``continue`` and early ``return`` become
flags and guarded blocks, so a normalized body has one ``return`` at its end
and loops without jumps (:class:`_Lowerer`, run once per function by
:meth:`Normalizer.run`).
"""

from __future__ import annotations

from typing import Any, List, Optional, Set

import gast

from .. import nodes as N
from ..source import FunctionSource
from .anf import Namer
from .common import _unsupported


class _Lowerer:
    """Removes break/continue/early return by introducing flags."""

    def __init__(self, namer: Namer, src: Optional[FunctionSource] = None):
        self.namer = namer
        self.src = src  # for error locations
        self.ret_flag: Optional[str] = None
        self.ret_val: Optional[str] = None
        self.flags: Set[str] = set()  # the break/continue flags made

    # -- return restructuring ------------------------------------------------
    @staticmethod
    def _always_returns(stmts) -> bool:
        if not stmts:
            return False
        last = stmts[-1]
        if isinstance(last, gast.Return):
            return True
        if isinstance(last, gast.If):
            return _Lowerer._always_returns(last.body) and _Lowerer._always_returns(last.orelse)
        return False

    def restructure(self, stmts: List[Any]) -> List[Any]:
        """Move code after `if c: return` into the else branch (returns at tails only)."""
        out: List[Any] = []
        for i, s in enumerate(stmts):
            if isinstance(s, gast.If):
                s.body = self.restructure(s.body)
                s.orelse = self.restructure(s.orelse)
                rest = stmts[i + 1 :]
                if rest:
                    if self._always_returns(s.body):
                        s.orelse = self.restructure(s.orelse + rest)
                        out.append(s)
                        return out
                    if self._always_returns(s.orelse):
                        s.body = self.restructure(s.body + rest)
                        out.append(s)
                        return out
            elif isinstance(s, (gast.While, gast.For)):
                s.body = self.restructure(s.body)
            out.append(s)
            if isinstance(s, gast.Return):
                return out  # dead code after return
        return out

    @staticmethod
    def _has(stmts, kinds, into_loops: bool) -> bool:
        for s in stmts:
            if isinstance(s, kinds):
                return True
            if isinstance(s, gast.If):
                if _Lowerer._has(s.body, kinds, into_loops) or _Lowerer._has(
                    s.orelse, kinds, into_loops
                ):
                    return True
            if into_loops and isinstance(s, (gast.While, gast.For)):
                if _Lowerer._has(s.body, kinds, into_loops):
                    return True
        return False

    # -- flags -----------------------------------------------------------------
    def lower_function(self, body: List[Any]) -> List[Any]:
        body = self.restructure(body)
        loop_returns = any(
            isinstance(s, (gast.While, gast.For)) and self._has(s.body, gast.Return, True)
            for s in N.walk(gast.Module(body=body, type_ignores=[]))
        )
        tail_if_returns = not (body and isinstance(body[-1], gast.Return)) or any(
            isinstance(s, gast.If) and self._has([s], gast.Return, False) for s in body
        )
        if loop_returns or tail_if_returns:
            self.ret_val = self.namer.fresh("result")
            if loop_returns or self._nontail_return(body, True):
                # a `return` that code after it must not overwrite (`if a: if b:
                # return u` then `return v`): the flag guards that code
                self.ret_flag = self.namer.fresh("returned")
        new = self.lower_block(body, loop=None)
        if self.ret_val is not None:
            pre = [N.assign(self.ret_val, N.const(None))]
            if self.ret_flag:
                pre.append(N.assign(self.ret_flag, N.const(False)))
            new = pre + new + [gast.Return(value=N.name(self.ret_val))]
        return new

    @staticmethod
    def _nontail_return(stmts, tail: bool) -> bool:
        """Whether a ``return`` in ``stmts`` (restructured) is followed by code that
        may run after it: one not last in its block, or in a branch of an ``if``
        that is not itself last (in a block that is last, up to the function)."""
        for i, s in enumerate(stmts):
            last = tail and i == len(stmts) - 1
            if isinstance(s, gast.Return) and not last:
                return True
            if isinstance(s, gast.If) and (
                _Lowerer._nontail_return(s.body, last) or _Lowerer._nontail_return(s.orelse, last)
            ):
                return True
        return False

    def _guard(self, flags: List[str]) -> Any:
        if len(flags) == 1:
            return gast.UnaryOp(op=gast.Not(), operand=N.name(flags[0]))
        return gast.UnaryOp(
            op=gast.Not(), operand=gast.BoolOp(op=gast.Or(), values=[N.name(f) for f in flags])
        )

    def lower_block(self, stmts: List[Any], loop: Optional[dict]) -> List[Any]:
        out: List[Any] = []
        for i, s in enumerate(stmts):
            if isinstance(s, gast.Break):
                out.append(N.copy_origin(N.assign(loop["brk"], N.const(True)), s))
                loop["used_brk"] = True
                return out
            if isinstance(s, gast.Continue):
                out.append(N.copy_origin(N.assign(loop["cont"], N.const(True)), s))
                loop["used_cont"] = True
                return out
            if isinstance(s, gast.Return):
                if self.ret_val is None:
                    out.append(s)
                    return out
                val = s.value if s.value is not None else N.const(None)
                out.append(N.copy_origin(N.assign(self.ret_val, val), s))
                if self.ret_flag:
                    out.append(N.copy_origin(N.assign(self.ret_flag, N.const(True)), s))
                return out
            if isinstance(s, gast.If):
                s.body = self.lower_block(s.body, loop)
                s.orelse = self.lower_block(s.orelse, loop)
                out.append(s)
                flags = self._flags_set([s], loop)
                rest = stmts[i + 1 :]
                if flags and rest:
                    lowered_rest = self.lower_block(rest, loop)
                    if lowered_rest:
                        guard = gast.If(test=self._guard(flags), body=lowered_rest, orelse=[])
                        N.copy_origin(guard, rest[0])
                        out.append(guard)
                    return out
                continue
            if isinstance(s, (gast.While, gast.For)):
                if s.orelse:
                    raise _unsupported(
                        s,
                        "`else` on a loop",
                        "set a flag before `break` and test it after the loop",
                        src=self.src,
                    )
                info = {
                    "brk": self.namer.fresh("broke"),
                    "cont": self.namer.fresh("skip"),
                    "used_brk": False,
                    "used_cont": False,
                }
                self.flags.update((info["brk"], info["cont"]))
                has_ret = self.ret_flag is not None and self._has(s.body, gast.Return, True)
                body = self.lower_block(s.body, info)
                stops = []
                if info["used_brk"]:
                    stops.append(info["brk"])
                if has_ret:
                    stops.append(self.ret_flag)
                pre = []
                if info["used_cont"]:
                    body = [N.assign(info["cont"], N.const(False))] + body
                if info["used_brk"] and isinstance(s, gast.For):
                    # the loop keeps counting after `break` (the flag skips its
                    # body), so the target is bound in the body: read after the
                    # loop, it holds the value of the iteration that broke
                    it = self.namer.fresh("it")
                    bind = N.copy_origin(gast.Assign(targets=[s.target], value=N.name(it)), s)
                    s.target = N.copy_origin(N.name(it, store=True), s)
                    body = [bind] + body
                if info["used_brk"]:
                    pre.append(N.copy_origin(N.assign(info["brk"], N.const(False)), s))
                if stops:
                    if isinstance(s, gast.While):
                        s.test = gast.BoolOp(op=gast.And(), values=[self._guard(stops), s.test])
                    else:
                        body = [gast.If(test=self._guard(stops), body=body, orelse=[])]
                s.body = body
                out.extend(pre)
                out.append(s)
                rest = stmts[i + 1 :]
                if has_ret:
                    # code after a loop that may `return` runs only if it did not
                    lowered_rest = self.lower_block(rest, loop)
                    if lowered_rest:
                        out.append(
                            gast.If(test=self._guard([self.ret_flag]), body=lowered_rest, orelse=[])
                        )
                    return out
                continue
            out.append(s)
        return out

    def _flags_set(self, stmts, loop) -> List[str]:
        flags = []
        for n in N.walk(gast.Module(body=stmts, type_ignores=[])):
            if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
                t = n.targets[0].id
                if loop is not None and t in (loop["brk"], loop["cont"]) and t not in flags:
                    flags.append(t)
                if self.ret_val is not None and t == self.ret_val:
                    f = self.ret_flag or self.ret_val
                    if f not in flags and self.ret_flag:
                        flags.append(f)
        return flags
