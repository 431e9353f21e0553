"""Forward mode (jvp) as an AST -> AST pass over normalized code.

Each statement ``t = prim(a, b)`` is followed (or preceded) by its tangent
statement ``t_dot = <jvp rule for a>(a_dot) + <jvp rule for b>(b_dot)``, the
rules inlined as templates (:mod:`srcjax.transforms.rules`), so tangents are
interleaved with their primal statements and control flow needs nothing
special: an ``if`` or a loop simply carries its tangent statements along, and no
tape is recorded.

Activity (:mod:`srcjax.analysis.activity`) is a flow-insensitive fixpoint: a
variable is active when some assignment can give it a nonzero tangent. Every
assignment to an active variable defines its tangent (``ad.zeros_like`` when that assignment's value is
constant), so the tangent of a variable is defined wherever the variable is.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set

import gast

from ..analysis.activity import analyze_activity
from ..errors import CustomVjpForwardError, NoDerivativeRuleError
from ..frontend import nodes as N
from ..frontend.normalize import Normalized, Op
from .aux import split_aux
from .rules import (
    ITERATOR_HINT,
    active_operands,
    inline_rule,
    no_rule_checks,
    primal_by_rule,
)

__all__ = ["forward"]


class Forward:
    def __init__(self, norm: Normalized, wrt: List[str]):
        self.norm = norm
        self.src = norm.src
        self.namer = norm.namer
        self.bindings = norm.bindings
        self.wrt = list(wrt)
        self.params = [a.id for a in norm.node.args.args]
        self.active: Set[str] = set(wrt)
        self.dots: Dict[str, str] = {}
        #: (tangent name, error): tangents of calls with no jvp rule; the error is
        #: raised if generated code reads that tangent
        self.deferred: List[tuple] = []

    def dot(self, name: str) -> str:
        d = self.dots.get(name)
        if d is None:
            d = self.namer.fresh(f"{name}_dot")
            self.dots[name] = d
        return d

    # ---------------------------------------------------------------- activity
    def analyze(self, stmts: List[Any]) -> None:
        """The active names (:func:`srcjax.analysis.activity.analyze_activity`)."""
        self.active = analyze_activity(stmts, self.active, src=self.src).active

    # ---------------------------------------------------------------- helpers
    def _at(self, stmt: Any, origin: Any) -> Any:
        for a in ("sj_origin", "sj_file", "lineno", "col_offset"):
            if hasattr(origin, a):
                setattr(stmt, a, getattr(origin, a))
        return stmt

    def _tangent_of(self, node: Any) -> Any:
        """The tangent of an operand atom (zeros for constants and inactive names)."""
        if isinstance(node, gast.Name) and node.id in self.active:
            return N.name(self.dot(node.id))
        return N.call("ad.zeros_like", [N.clone(node)])

    def _no_rule(self, s: Any, what: str, hint: Optional[str] = None) -> Exception:
        return NoDerivativeRuleError(
            f"no derivative rule for `{what}` on a path from a differentiated input",
            self.src.location(s) if hasattr(s, "lineno") else None,
            hint
            or "use a srcjax.numpy function that has a rule, wrap the value in "
            "srcjax.lax.stop_gradient, or register a rule with @srcjax.custom_jvp",
        )

    # ---------------------------------------------------------------- statements
    def block(self, stmts: List[Any]) -> List[Any]:
        out: List[Any] = []
        for s in stmts:
            out.extend(self.stmt(s))
        return out

    def stmt(self, s: Any) -> List[Any]:
        op: Optional[Op] = getattr(s, "sj_op", None)
        if isinstance(s, gast.Assign):
            t = s.targets[0].id
            if t not in self.active:
                return [s]
            return self.assign(s, op, t)
        if isinstance(s, gast.Expr) and op is not None and op.kind == "pop":
            if op.target in self.active:
                pop = N.expr_stmt(N.call("ad.pop", [N.name(self.dot(op.target))]))
                return [s, self._at(pop, s)]
            return [s]
        if isinstance(s, gast.Expr):
            if op is not None and op.kind == "append" and op.target in self.active:
                v = op.elts[0]
                push = N.expr_stmt(
                    N.call(N.attr(N.name(self.dot(op.target)), "append"), [self._tangent_of(v)])
                )
                return [s, self._at(push, s)]
            return [s]
        if isinstance(s, gast.If):
            s.body = self.block(s.body) or [gast.Pass()]
            s.orelse = self.block(s.orelse)
            return [s]
        if isinstance(s, (gast.While, gast.For)):
            s.body = self.block(s.body) or [gast.Pass()]
            if isinstance(s, gast.For) and s.target.id in self.active:
                # `for x in range(3)` rebinds a differentiable x to ints: no tangent
                t = s.target.id
                zero = N.assign(self.dot(t), N.call("ad.zeros_like", [N.name(t)]))
                s.body.insert(0, self._at(zero, s))
            return [s]
        return [s]

    def assign(self, s: Any, op: Optional[Op], t: str) -> List[Any]:
        tdot = self.dot(t)
        zero = self._at(N.assign(tdot, N.call("ad.zeros_like", [N.name(t)])), s)
        if op is not None and op.keeps and any(n in self.active for n in op.operand_names()):
            raise self._no_rule(s, op.what or N.to_source(s.value), ITERATOR_HINT)
        if op is None or op.kind == "inactive":
            return [s, zero]
        if op.kind == "copy":
            return [s, self._at(N.assign(tdot, self._tangent_of(op.elts[0])), s)]
        if op.kind == "pack":
            value = s.value
            if isinstance(value, gast.Dict):
                tan = gast.Dict(
                    keys=[N.clone(k) for k in value.keys],
                    values=[self._tangent_of(v) for v in value.values],
                )
            else:
                cls = gast.List if isinstance(value, gast.List) else gast.Tuple
                tan = cls(elts=[self._tangent_of(v) for v in op.elts], ctx=gast.Load())
            return [s, self._at(N.assign(tdot, tan), s)]
        if op.kind == "pop":
            pop = N.call("ad.pop_like", [N.name(self.dot(op.target)), N.name(t)])
            return [s, self._at(N.assign(tdot, pop), s)]
        if op.kind == "append":  # lst = ad.push(lst, v), in generated adjoint code
            push = N.call("ad.push", [N.name(self.dot(op.target)), self._tangent_of(op.elts[0])])
            return [s, self._at(N.assign(tdot, push), s)]
        if op.kind == "unknown":
            if any(n in self.active for n in op.operand_names()):
                raise self._no_rule(s, op.what or N.to_source(s.value), op.hint)
            return [s, zero]
        # a primitive
        prim = op.prim
        if not prim.differentiable:
            return [s, zero]
        if prim.kind == "custom":
            primal_by_rule(s, op, self.namer, self.bindings)  # JAX's primal: the rule's
        operands = op.operand_names()
        ans = self.namer.fresh(f"{t}_new") if t in operands else t
        pre: List[Any] = []
        terms: List[Any] = []
        for pname, p, arg, active_items in active_operands(prim, op.bound, self.active):
            rule = prim.jvps.get(pname)
            if rule is None:
                if not prim.jvps:
                    hint = prim.missing_rule_hint
                    err = self._no_rule(s, prim.public, hint)
                    if prim.kind == "custom" and prim.vjps:
                        # JAX's TypeError: "can't apply forward-mode autodiff (jvp)
                        # to a custom_vjp function."
                        err = CustomVjpForwardError(
                            f"can't apply forward-mode autodiff (jvp) to a custom_vjp "
                            f"function (`{prim.public}`)",
                            self.src.location(s) if hasattr(s, "lineno") else None,
                            hint
                            or "forward mode (jvp, jacfwd, hessian) cannot differentiate "
                            "a custom_vjp, as in JAX; use grad/vjp/jacrev, or a custom_jvp",
                        )
                    # raised only if the tangent is read: a value whose tangent
                    # nothing needs (only its shape is used) needs no rule
                    self.deferred.append((tdot, err))
                    return [s, zero]
                err = self._no_rule(s, f"{prim.public}` with respect to `{pname}")
                pre.extend(no_rule_checks(prim, pname, active_items, err))
                continue  # not differentiable in this argument (a float there: error)
            if p.kind == p.VAR_POSITIONAL:
                for i, a in active_items:
                    stmts, expr = inline_rule(
                        rule,
                        N.name(self.dot(a.id)),
                        N.name(ans),
                        prim,
                        op.bound,
                        self.namer,
                        self.bindings,
                        {"argnum": i},
                    )
                    pre.extend(stmts)
                    terms.append(expr)
                continue
            if isinstance(arg, gast.Name):
                tan = N.name(self.dot(arg.id))
            else:  # a list operand (concatenate): the full list of tangents
                tan = gast.List(elts=[self._tangent_of(a) for a in arg], ctx=gast.Load())
            stmts, expr = inline_rule(
                rule, tan, N.name(ans), prim, op.bound, self.namer, self.bindings
            )
            pre.extend(stmts)
            terms.append(expr)
        if not terms:
            return [self._at(st, s) for st in pre] + [s, zero]  # (the no-rule checks)
        total = terms[0]
        for e in terms[1:]:
            if prim.tree_valued or prim.returns_tree:
                total = N.call("ad.tree_add", [total, e])
            else:
                total = gast.BinOp(left=total, op=gast.Add(), right=e)
        if prim.broadcasting and _may_broadcast(op):
            total = N.call("ad.broadcast_like", [total, N.name(ans)])
        tan_stmts = [self._at(st, s) for st in pre] + [self._at(N.assign(tdot, total), s)]
        reads_ans = any(ans in N.names_in(st) for st in tan_stmts)
        if not reads_ans:
            return tan_stmts + [s]  # operands still hold their old values
        if ans != t:
            # t = f(t): the rule reads the old t (operand) and the new one (ans)
            primal = self._at(N.assign(ans, s.value), s)
            return [primal] + tan_stmts + [self._at(N.assign(t, N.name(ans)), s)]
        return [s] + tan_stmts


def _may_broadcast(op: Op) -> bool:
    """Whether the output may be larger than an operand (two or more named operands)."""
    names = 0
    for v in op.bound.values():
        for it in v if isinstance(v, list) else [v]:
            if isinstance(it, gast.Name):
                names += 1
    return names > 1


def forward(
    norm: Normalized,
    wrt: List[str],
    *,
    has_aux: bool = False,
    name: Optional[str] = None,
) -> Any:
    """Build ``f_jvp(*params, *tangents) -> (out, out_dot)`` (``(out, out_dot, aux)``
    with ``has_aux``) from a normalized function; tangent parameters are named
    ``<param>_dot`` for each name in ``wrt``."""
    fdef = norm.node
    body = list(fdef.body)
    ret = body.pop()
    assert isinstance(ret, gast.Return)
    rv = ret.value
    fw = Forward(norm, wrt)
    aux = None
    if has_aux:
        value_name, aux = split_aux(body, rv, norm.namer)
        rv = N.name(value_name)
    fw.analyze(body)
    head: List[Any] = []
    for p in fw.params:
        if p in fw.active and p not in wrt:
            head.append(N.assign(fw.dot(p), N.call("ad.zeros_like", [N.name(p)])))
    tangent_params = [fw.dot(p) for p in wrt]
    new_body = head + fw.block(body)
    out_dot = fw._tangent_of(rv)
    results = [N.clone(rv), out_dot]
    if has_aux:
        results.append(N.name(aux))
    new_body.append(gast.Return(value=gast.Tuple(elts=results, ctx=gast.Load())))
    if fw.deferred:
        reads = {
            n.id
            for n in gast.walk(gast.Module(body=new_body, type_ignores=[]))
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
        }
        for tdot, err in fw.deferred:
            if tdot in reads:
                raise err
    args = N.arguments(list(fdef.args.args) + list(tangent_params))
    new = N.function_def(name or f"{fdef.name}_jvp", args, new_body)
    new.sj_origin = getattr(fdef, "sj_origin", None)
    return new
