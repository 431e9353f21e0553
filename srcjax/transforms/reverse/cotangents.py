"""Reverse mode's bookkeeping of cotangents: their names (``x_bar``), symbolic
zeros and materialized ones, sums of contributions (``ad.tree_add`` where a
cotangent may be a container or a hole), and the activity analysis it starts
from (:mod:`srcjax.analysis.activity`)."""

from __future__ import annotations

from typing import Any, List, Optional, Set

import gast

from ...analysis.activity import analyze_activity
from ...errors import NoDerivativeRuleError
from ...frontend import nodes as N
from ...frontend.normalize import Op


class _Cotangents:
    """Cotangent names, zeros and sums (a mixin of :class:`~.generate.Reverse`)."""

    def bar(self, name: str) -> str:
        """The adjoint's name: ``x_bar``, unless that name is taken by a primal
        (as in the generated code of a first derivative, differentiated again)."""
        b = self.bars.get(name)
        if b is None:
            b = self.namer.fresh(f"{name}_bar")
            self.bars[name] = b
        return b

    # ------------------------------------------------------------------ analysis
    def analyze(self, stmts: List[Any]) -> None:
        """The active names, and those holding (maybe holding) containers
        (:func:`srcjax.analysis.activity.analyze_activity`)."""
        act = analyze_activity(
            stmts,
            self.active,
            src=self.src,
            containers=self.containers,
            maybe=self.maybe,
            loop_passes=2,
        )
        self.active, self.containers, self.maybe = act.active, act.containers, act.maybe

    # ------------------------------------------------------------------ helpers
    def zero_for(self, name: str, defined: bool = False) -> Any:
        """A materialized zero cotangent: zeros like the primal where it is surely
        defined, else a scalar 0.0 (fixed up by ``ad.cotangent_like``)."""
        if name in self.containers:
            return N.const(None)  # a hole: container cotangents are sparse
        if defined:
            return N.call("ad.zeros_like", [N.name(name)])
        return N.const(0.0)

    def may_be_sparse(self, name: str) -> bool:
        """Whether ``name``'s cotangent may be a container or a hole (``None``)."""
        return name in self.containers or name in self.maybe

    def add_cotangents(self, name: str, a: Any, b: Any) -> Any:
        """``a + b`` for two contributions to ``name``'s cotangent: ``ad.tree_add``
        (``None`` is zero, containers add leafwise) where either may be sparse."""
        if self.may_be_sparse(name):
            return N.call("ad.tree_add", [a, b])
        return gast.BinOp(left=a, op=gast.Add(), right=b)

    def dense(self, g: Any, like: str) -> Any:
        """Cotangent ``g``, which may be a hole (``None``), where an array's is
        needed: a hole becomes zeros like the primal ``like``."""
        return N.call("ad.densify", [g, N.name(like)])

    @staticmethod
    def _tree_valued(op: Op) -> bool:
        """Whether the primitive call ``op`` may return a container (helpers of
        generated adjoint code pass their operands' kind through)."""
        prim = op.prim
        return prim.returns_tree or (prim.namespace == "ad" and not prim.array_result)

    def accumulate(self, out: List[Any], name: str, expr: Any, nz: Set[str], origin) -> None:
        bar = self.bar(name)
        if name in nz:
            value = self.add_cotangents(name, N.name(bar), expr)
        else:
            value = expr
            nz.add(name)
        out.append(self._at(N.assign(bar, value), origin))

    def _at(self, stmt: Any, origin: Any) -> Any:
        if origin is not None:
            if hasattr(origin, "sj_origin"):
                stmt.sj_origin = origin.sj_origin
            if hasattr(origin, "sj_file"):
                stmt.sj_file = origin.sj_file
            stmt.sj_note = getattr(origin, "sj_note", None)
        return stmt

    def _collect_reads(self, nodes_: List[Any]) -> None:
        self._bar_names = set(self.bars.values())
        for n in nodes_:
            for nm in N.names_in(n):
                if nm not in self._bar_names:
                    self.reads.add(nm)

    def _no_rule(self, s: Any, op: Op, what: str, hint: Optional[str] = None) -> Exception:
        loc = self.src.location(s) if hasattr(s, "lineno") else None
        return NoDerivativeRuleError(
            f"no derivative rule for `{what}` on a path from a differentiated input to the output",
            loc,
            hint
            or "use a srcjax.numpy function that has a rule, wrap the value in "
            "srcjax.lax.stop_gradient if it should not be differentiated, or register "
            "a rule with @srcjax.custom_vjp",
        )
