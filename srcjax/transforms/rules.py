"""Inlining derivative rules as templates.

A rule is a Python function over primitives (see
:mod:`srcjax.primitives.registry`). To inline it, its source is parsed once,
its parameters are replaced by the argument expressions of the call site, and
every global it names (or closure cell, for rules a maker built) is resolved:
primitives become their public dotted
name (``cos`` -> ``jnp.cos``), modules and other objects are bound in the
generated module's namespace. Shared by every transform that inlines rules
(reverse mode, forward mode).
"""

from __future__ import annotations

import builtins
import inspect
import types
from typing import Any, Dict, List, Tuple

import gast

from ..frontend import nodes as N
from ..frontend.source import get_source
from ..primitives import registry

__all__ = ["call_rule", "inline_rule", "takes_operands"]

_PARSED: Dict[Any, Any] = {}

#: the hint of AD's error for an iterator object (``iter(xs)``, ``zip(a, b)``,
#: ``enumerate(xs)`` kept as a value) holding a differentiated value
ITERATOR_HINT = (
    "AD cannot follow values through an iterator object: consume it where it is made "
    "(sum(xs), list(zip(a, b)), a for loop or a comprehension over it), index the "
    "sequence (next(iter(xs)) is xs[0]), or wrap the value in srcjax.lax.stop_gradient"
)


def _rule_ast(rule) -> Any:
    node = _PARSED.get(rule)
    if node is None:
        node = get_source(rule).node
        _PARSED[rule] = node
    return node


def call_rule(rule, prim, g: Any, ans: Any, *args: Any, argnum: Any = None, **kwargs: Any) -> Any:
    """Run the jvp/vjp ``rule`` of ``prim`` on values (what its inlined template
    computes): ``args``/``kwargs`` are bound to the primitive's signature (its
    defaults filled in) and each parameter the rule declares gets its value by
    name; ``argnum`` (which item of a varargs operand) goes to a rule that
    declares it. The calling convention of every rule: ``rule(g, ans, <the
    primitive's parameters it reads, in the primitive's order>)``, so a rule
    declares only what it uses. Parameters before a rule's ``*args`` are passed
    by position, the others by keyword. A linear-map maker's ``rule(g, ans,
    *operands)`` (:func:`takes_operands`) gets every argument in order."""
    bound = prim.signature.bind(*args, **kwargs)
    bound.apply_defaults()
    if takes_operands(rule, prim):  # every operand in order, defaults filled in
        return rule(g, ans, *bound.args)
    values = dict(bound.arguments)
    if argnum is not None:
        values["argnum"] = argnum
    rparams = list(inspect.signature(rule).parameters.values())[2:]
    star = next((i for i, q in enumerate(rparams) if q.kind == q.VAR_POSITIONAL), None)
    pos, kw = [g, ans], {}
    for i, q in enumerate(rparams):
        if q.kind == q.VAR_POSITIONAL:  # the primitive's varargs, whatever their name
            star_p = [n for n, v in prim.signature.parameters.items() if v.kind == v.VAR_POSITIONAL]
            pos.extend(values[star_p[0]] if star_p else ())
        elif q.name not in values:
            continue  # the rule's own default
        elif star is not None and i < star:
            pos.append(values[q.name])
        else:
            kw[q.name] = values[q.name]
    return rule(*pos, **kw)


def _literal(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return N.const(value)
    if isinstance(value, tuple) and all(
        v is None or isinstance(v, (bool, int, float, str)) for v in value
    ):
        return N.const(value)
    return None


def _resolve_global(rule, path: List[str]) -> Tuple[str, Any]:
    """``("found", obj)`` for the object a rule's free name ``path`` (dotted)
    names: a closure cell of the rule (a rule made by a maker,
    :mod:`srcjax.primitives.makers`), else its module global; ``("builtin",
    obj)`` or ``("missing", None)``."""
    g = rule.__globals__
    free = rule.__code__.co_freevars
    if path[0] in free:
        obj = rule.__closure__[free.index(path[0])].cell_contents
    elif path[0] in g:
        obj = g[path[0]]
    elif hasattr(builtins, path[0]):
        return "builtin", getattr(builtins, path[0])
    else:
        return "missing", None
    for p in path[1:]:
        try:
            obj = getattr(obj, p)
        except AttributeError:
            return "missing", None
    return "found", obj


def _dotted_path(node) -> List[str]:
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, gast.Name):
        parts.append(node.id)
        return parts[::-1]
    return []


def active_operands(prim: Any, bound: Dict[str, Any], active: Any):
    """``(pname, param, arg, [(i, item), ...])`` for each parameter of ``prim``
    bound to at least one active name (``active``: names whose derivative
    flows); ``arg`` is the bound node or list of nodes (``concatenate``), the
    items those of its entries that are active. Shared by both AD modes, which
    then look up their own rule for ``pname``."""
    for pname, p in prim.signature.parameters.items():
        arg = bound.get(pname)
        if arg is None:
            continue
        items = arg if isinstance(arg, list) else [arg]
        hits = [(i, a) for i, a in enumerate(items) if isinstance(a, gast.Name) and a.id in active]
        if hits:
            yield pname, p, arg, hits


def no_rule_checks(prim: Any, pname: str, items: List[Tuple[int, Any]], err: Exception):
    """Statements for an active operand of a parameter ``prim`` has no rule for
    (another parameter has one): ``ad.require_constant(x, message)``, raising
    ``err``'s message at run time when the value is floating or complex, as the
    derivative with respect to it would otherwise be a silent zero
    (``nn.leaky_relu(x, slope)`` with a learned slope). Integer and boolean
    values (shifts, indices, masks, which are active only by data flow) pass.
    Internal ``ad.*`` helpers skip it: their rule-less operands are shape or
    structure references by construction."""
    if prim.namespace == "ad":
        return []
    out = []
    for _, a in items:
        call = N.call("ad.require_constant", [N.name(a.id), N.const(pname), N.const(str(err))])
        out.append(gast.Expr(value=call))
    return out


def _has_star(sig: Any) -> bool:
    return any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values())


def takes_operands(rule, prim) -> bool:
    """Whether ``rule`` is a linear-map maker's ``rule(g, ans, *operands)`` for
    ``prim``, a primitive without a ``*`` parameter
    (:mod:`srcjax.primitives.ad.linear`): it gets every argument, in order."""
    star = inspect.Parameter.VAR_POSITIONAL
    kinds = [q.kind for q in inspect.signature(rule).parameters.values()]
    return star in kinds and not _has_star(prim.signature)


def inline_rule(
    rule,
    g: Any,
    ans: Any,
    prim,
    bound: Dict[str, Any],
    namer,
    bindings: Dict[str, Any],
    extra: Dict[str, Any] = None,
) -> Tuple[List[Any], Any]:
    """Instantiate ``rule`` at a call site.

    Args:
        rule: the rule function ``rule(g, ans, <params>)``: after the cotangent
            (tangent) and the primal output, the parameters of ``prim`` that it
            reads, by their names, in the primitive's order (see
            :func:`call_rule`); only those are bound.
        g, ans: expression nodes for the cotangent/tangent and the primal output.
        prim: the primitive (for parameter defaults).
        bound: parameter name -> argument node (lists for varargs).
        namer: fresh-name source for a multi-statement rule's locals.
        bindings: the generated module's extra bindings, added to when the rule
            refers to non-primitive globals (``np``).
        extra: more parameter values (``argnum`` for varargs rules).

    Returns:
        (statements, expression): statements to emit first (empty for
        single-``return`` rules) and the expression of the contribution.
    """
    fdef = _rule_ast(rule)
    params = [a.id for a in fdef.args.args]
    mapping: Dict[str, Any] = {}
    mapping[params[0]] = g
    if len(params) > 1:
        mapping[params[1]] = ans
    sig = prim.signature
    operands = fdef.args.vararg is not None and not _has_star(sig)
    # the primitive's parameters the rule declares (it declares only those it
    # reads), or all of them for ``rule(g, ans, *operands)``
    declared = set(params[2:]) | {a.id for a in fdef.args.kwonlyargs}
    values: Dict[str, Any] = {}
    for pname, p in sig.parameters.items():
        if pname not in declared and not operands:
            continue
        if pname in bound:
            v = bound[pname]
            if isinstance(v, list):
                v = gast.Tuple(elts=[N.clone(x) for x in v], ctx=gast.Load())
            values[pname] = N.index_value(v)
        elif p.default is not p.empty:
            lit = _literal(p.default)
            if lit is None:
                nm = namer.fresh(pname)
                bindings[nm] = p.default
                lit = N.name(nm)
            values[pname] = lit
    if operands:
        # a maker's rule over any signature, ``rule(g, ans, *operands)``
        # (:mod:`srcjax.primitives.ad.linear`): ``operands`` is every argument in
        # order, and the primitive's parameter names stay unbound in the rule
        mapping[fdef.args.vararg.id] = gast.Tuple(
            elts=[values[pname] for pname in sig.parameters], ctx=gast.Load()
        )
    else:
        mapping.update(values)
    if fdef.args.vararg is not None:
        vname = fdef.args.vararg.id
        for pname, p in sig.parameters.items():
            if p.kind == p.VAR_POSITIONAL and pname in bound:
                mapping[vname] = gast.Tuple(
                    elts=[N.clone(x) for x in bound[pname]], ctx=gast.Load()
                )
    for a in fdef.args.kwonlyargs:
        if extra and a.id in extra:
            mapping[a.id] = N.const(extra[a.id])
    for k, v in (extra or {}).items():
        mapping.setdefault(k, N.const(v))
    # defaults of the rule's own parameters not otherwise given
    defaults = fdef.args.defaults
    first_default = len(params) - len(defaults)
    for i, pname in enumerate(params):
        if pname not in mapping and i >= first_default:
            mapping[pname] = N.clone(defaults[i - first_default])

    body = [
        s
        for s in fdef.body
        if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant))
    ]
    assigned = set(N.assigned_names(body))
    local_names = assigned - set(mapping)
    renames = {n: namer.fresh(n) for n in sorted(local_names)}
    # a parameter the rule rebinds (``t = 0.5 * (t + t.T)``) becomes a fresh local
    # holding its argument: substituted, the store would bind the parameter's own
    # name in the generated code while later reads still saw the argument
    prologue = []
    for pname in sorted(assigned & set(mapping)):
        renames[pname] = namer.fresh(pname)
        prologue.append(N.assign(N.name(renames[pname], store=True), mapping.pop(pname)))

    def subst(node):
        node = N.clone(node)
        return _fold(_Subst(mapping, renames, rule, bindings, namer).visit(node))

    last = body[-1]
    if not isinstance(last, gast.Return):
        raise TypeError(f"rule {rule.__qualname__} must end with `return`")
    if any(isinstance(n, gast.Return) for s in body[:-1] for n in gast.walk(s)):
        # inlined, an early `return` would leave the generated function
        raise TypeError(f"rule {rule.__qualname__} may `return` only at its end")
    stmts = prologue + [subst(s) for s in body[:-1]]
    return stmts, subst(last.value)


_FOLDABLE = {
    gast.Add: lambda a, b: a + b,
    gast.Sub: lambda a, b: a - b,
    gast.Mult: lambda a, b: a * b,
}


def _small_number(node: Any) -> bool:
    return (
        isinstance(node, gast.Constant)
        and type(node.value) in (int, float, bool)
        and abs(node.value) < 2**31
    )


def _starred_items(node: Any):
    """The items of ``*(a, b)`` or ``*(a, b)[i:j]`` (constant bounds, ``None``
    included: a maker's closure constants), else None."""
    if not isinstance(node, gast.Starred):
        return None
    v = node.value
    if isinstance(v, (gast.Tuple, gast.List)):
        return list(v.elts)
    if (
        isinstance(v, gast.Subscript)
        and isinstance(v.value, (gast.Tuple, gast.List))
        and isinstance(v.slice, gast.Slice)
        and v.slice.step is None
    ):
        bounds = []
        for b in (v.slice.lower, v.slice.upper):
            if b is None or (isinstance(b, gast.Constant) and b.value is None):
                bounds.append(None)
            elif isinstance(b, gast.Constant) and type(b.value) is int:
                bounds.append(b.value)
            elif (
                isinstance(b, gast.UnaryOp)
                and isinstance(b.op, gast.USub)
                and isinstance(b.operand, gast.Constant)
                and type(b.operand.value) is int
            ):
                bounds.append(-b.operand.value)
            else:
                return None
        return list(v.value.elts[bounds[0] : bounds[1]])
    return None


class _Fold(gast.NodeTransformer):
    """Fold arithmetic on Python number literals that substitution produced
    (``x ** (2 - 1 + (2 == 0))`` becomes ``x ** 1``) and spell out star-arguments
    over tuple displays (``f(*(a, b)[:1], t)`` becomes ``f(a, t)``): the generated
    code computes exactly the same at run time, it only reads better, and can be
    transformed again (the frontend takes no star-arguments)."""

    def visit_Call(self, n):
        self.generic_visit(n)
        f = n.func
        if (
            isinstance(f, gast.Attribute)
            and f.attr == "int_exponent"
            and isinstance(f.value, gast.Name)
            and f.value.id == "ad"
            and len(n.args) == 1
            and not n.keywords
            and isinstance(n.args[0], gast.Constant)
            and type(n.args[0].value) in (bool, int, float)
        ):
            # power's static dtype test on a literal exponent (see elementwise._pow_x)
            return N.const(0 if type(n.args[0].value) is float else 1)
        args = []
        for a in n.args:
            items = _starred_items(a)
            args.extend([a] if items is None else items)
        n.args = args
        return n

    def visit_IfExp(self, n):
        self.generic_visit(n)
        if isinstance(n.test, gast.Constant) and type(n.test.value) in (bool, int):
            return n.body if n.test.value else n.orelse  # (power's rule, a literal exponent)
        return n

    def visit_BinOp(self, n):
        self.generic_visit(n)
        f = _FOLDABLE.get(type(n.op))
        if f is not None and _small_number(n.left) and _small_number(n.right):
            return N.const(f(n.left.value, n.right.value))
        return n

    def visit_Compare(self, n):
        self.generic_visit(n)
        if (
            len(n.ops) == 1
            and isinstance(n.ops[0], gast.Eq)
            and _small_number(n.left)
            and _small_number(n.comparators[0])
        ):
            return N.const(n.left.value == n.comparators[0].value)
        return n


def _fold(node: Any) -> Any:
    return _Fold().visit(node)


class _Subst(gast.NodeTransformer):
    def __init__(self, mapping, renames, rule, bindings, namer):
        self.mapping = mapping
        self.renames = renames
        self.rule = rule
        self.bindings = bindings
        self.namer = namer

    def visit_Name(self, node):
        if node.id in self.mapping and isinstance(node.ctx, gast.Load):
            return N.clone(self.mapping[node.id])
        if node.id in self.renames:
            node.id = self.renames[node.id]
            return node
        if isinstance(node.ctx, gast.Load):
            return self._global([node.id], node)
        return node

    def visit_Attribute(self, node):
        path = _dotted_path(node)
        if path and path[0] not in self.mapping and path[0] not in self.renames:
            return self._global(path, node)
        self.generic_visit(node)
        return node

    def _global(self, path, node):
        status, obj = _resolve_global(self.rule, path)
        if status == "builtin":
            return node
        if status == "missing":
            raise NameError(f"rule {self.rule.__qualname__}: cannot resolve {'.'.join(path)}")
        if len(path) == 1 and path[0] in self.rule.__code__.co_freevars:
            lit = _literal(obj)  # a maker's constant (percentile's scale 100.0):
            if lit is not None:  # written as the literal, as in a rule written by hand
                return lit
        prim = registry.lookup_callable(obj)
        if prim is not None:
            return N.dotted(prim.public)
        root = path[0]
        status0, obj0 = _resolve_global(self.rule, [root])
        if isinstance(obj0, types.ModuleType):
            if root in self.bindings and self.bindings[root] is not obj0:
                new = self.namer.fresh(root)
                self.bindings[new] = obj0
                return N.dotted(".".join([new] + path[1:]))
            self.bindings[root] = obj0
            return node
        new = self.namer.fresh(path[-1])
        self.bindings[new] = obj
        return N.name(new)


def primal_by_rule(s: Any, op: Any, namer, bindings: Dict[str, Any]) -> bool:
    """Rewrite ``y = f(x)`` (``s``, its ``op``) for a custom_vjp / custom_jvp ``f``
    in derivative code to compute ``y`` by the user's rule (``fwd(x)[0]``, or
    the jvp rule's primal output), as JAX does: a transform of the generated
    code (``hessian``, ``jacfwd(grad(f))``, ``jacfwd(jacfwd(f))``) then
    differentiates the rule's own computation instead of meeting ``f`` again.
    Returns whether ``s`` was rewritten."""
    rule = getattr(getattr(op, "prim", None), "primal_rule", None)
    if rule is None or op.kind != "prim":
        return False
    pre, expr = inline_rule(
        rule, N.const(None), N.name(s.targets[0].id), op.prim, op.bound, namer, bindings
    )
    if pre:
        return False
    s.value = expr
    return True
