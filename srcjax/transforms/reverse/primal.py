"""Reverse mode's primal (forward) sweep: the user's statements, with the saves
the adjoint sweep needs (a copy before an overwrite outside loops, a tape push
inside them) and the restores that pair with them."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set

import gast

from ...frontend import nodes as N
from ...frontend.normalize import Op
from ..rules import (
    primal_by_rule,
)
from .prune import _has_code, _pops, _Restore


class _PrimalSweep:
    """The forward sweep and its saves and restores (a mixin of :class:`~.generate.Reverse`)."""

    # ------------------------------------------------------------------ forward sweep
    def prepare_forward(self, stmts: List[Any], in_loop: bool) -> None:
        """Add trip counters to while loops; mark loop nesting."""
        for s in stmts:
            if isinstance(s, gast.If):
                self.prepare_forward(s.body, in_loop)
                self.prepare_forward(s.orelse, in_loop)
            elif isinstance(s, (gast.While, gast.For)):
                s.sj_in_loop = in_loop
                if isinstance(s, gast.While):
                    s.sj_count = self.namer.fresh("n_iter")
                self.prepare_forward(s.body, True)

    def forward(self, stmts: List[Any], saves: Dict[int, str]) -> List[Any]:
        out: List[Any] = []
        for s in stmts:
            if isinstance(s, gast.Assign):
                key = id(s)
                if key in saves:
                    out.append(self._save_stmt(s.targets[0].id, saves[key], s))
                out.append(self._primal_by_fwd(s))
            elif isinstance(s, gast.If):
                s.body = self.forward(s.body, saves) or [gast.Pass()]
                s.orelse = self.forward(s.orelse, saves)
                out.append(s)
            elif isinstance(s, gast.While):
                key = id(s)
                if key in saves:
                    out.append(self._save_stmt(s.sj_count, saves[key], s))
                out.append(self._at(N.assign(s.sj_count, N.const(0)), s))
                s.body = self.forward(s.body, saves) + [
                    N.assign(
                        s.sj_count,
                        gast.BinOp(left=N.name(s.sj_count), op=gast.Add(), right=N.const(1)),
                    )
                ]
                out.append(s)
            elif isinstance(s, gast.For):
                key = id(s)
                if key in saves:
                    out.append(self._save_stmt(s.target.id, saves[key], s))
                s.body = self.forward(s.body, saves) or [gast.Pass()]
                out.append(s)
            else:
                out.append(s)
        return out

    def _primal_by_fwd(self, s: Any) -> Any:
        """``y = f(x)`` for a custom_vjp/custom_jvp ``f`` on a differentiated path:
        ``y`` by the user's rule (see :func:`rules.primal_by_rule`)."""
        op: Optional[Op] = getattr(s, "sj_op", None)
        if op is not None and s.targets[0].id in self.active:
            primal_by_rule(s, op, self.namer, self.bindings)
        return s

    def _save_stmt(self, name: str, how: str, origin) -> Any:
        if how == "tape":
            st = N.expr_stmt(N.call(N.attr(N.name(self.tape), "append"), [N.name(name)]))
        else:
            st = N.assign(how, N.name(name))
        return self._at(st, origin)

    def resolve_restores(
        self, stmts: List[Any], saves: Dict[int, str], preinit: Set[str]
    ) -> List[Any]:
        out: List[Any] = []
        for s in stmts:
            if isinstance(s, _Restore):
                if s.name in self.reads and (s.in_loop or s.defined_before):
                    if s.in_loop:
                        if self.tape is None:
                            self.tape = self.namer.fresh("tape")
                        saves[id(s.site)] = "tape"
                        if s.name not in self.params:
                            preinit.add(s.name)
                        pop = N.call(N.attr(N.name(self.tape), "pop"), [])
                        out.append(self._at(N.assign(s.name, pop), s.site))
                    else:
                        prev = self.namer.fresh(s.name + "_prev")
                        saves[id(s.site)] = prev
                        sure = self.must_at.get(id(s.site))
                        if sure is not None and s.name not in sure and s.name not in self.params:
                            # defined before on some paths only (in one branch of
                            # an earlier if): the save must not read an unbound name
                            preinit.add(s.name)
                        out.append(self._at(N.assign(s.name, N.name(prev)), s.site))
                continue
            if isinstance(s, gast.If):
                s.body = self.resolve_restores(s.body, saves, preinit) or [gast.Pass()]
                s.orelse = self.resolve_restores(s.orelse, saves, preinit)
                if not _has_code(s.body) and not s.orelse:
                    continue
                if (
                    self.tape is not None
                    and _pops(s.body, self.tape)
                    and _pops(s.orelse, self.tape)
                ):
                    # both branches pop the tape: under vmap both run, the forward
                    # one in order then/else, so the adjoint must pop else's first
                    s.test = gast.UnaryOp(op=gast.Not(), operand=s.test)
                    s.body, s.orelse = s.orelse or [gast.Pass()], s.body
            elif isinstance(s, gast.For):
                s.body = self.resolve_restores(s.body, saves, preinit) or [gast.Pass()]
            out.append(s)
        return out
