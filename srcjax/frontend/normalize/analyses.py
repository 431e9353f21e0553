"""Analyses of a user function's AST that the normalizer consults: the
functions a body defines or binds per branch, which locals are lists,
tuples or dicts (:func:`_container_kinds`), which parameters are mutated and
which mutations are shared through an alias, store counts and own locals.
They read the tree and return their findings; they never rewrite it.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Set

import gast

from .. import nodes as N


def _function_names(stmts: List[Any]) -> Set[str]:
    """Names a function body binds with a nested ``def`` or to a lambda (not
    looking into nested functions' own bodies)."""
    names: Set[str] = set()

    def visit(body: List[Any]) -> None:
        for n in body:
            if isinstance(n, gast.FunctionDef):
                names.add(n.name)
            elif isinstance(n, gast.Assign) and isinstance(n.value, (gast.Lambda, gast.IfExp)):
                v = n.value
                lam = isinstance(v, gast.Lambda) or any(
                    isinstance(b, gast.Lambda) for b in (v.body, v.orelse)
                )
                if lam:
                    names.update(t.id for t in n.targets if isinstance(t, gast.Name))
            for attr in ("body", "orelse", "finalbody"):
                sub = getattr(n, attr, None)
                if isinstance(sub, list) and not isinstance(n, gast.FunctionDef):
                    visit(sub)

    visit(stmts)
    return names


def _branch_bound_functions(
    s: Any, is_local_fn: Callable[[str], bool], is_fn_call: Callable[[Any], bool] = None
) -> List[str]:
    """Source names that the branches of the ``if`` statement ``s`` bind to a local
    function (a nested ``def``, a lambda, another local function's name, or a
    conditional expression of those), in order of first binding; ``is_local_fn(n)``
    tells whether ``n`` names a local function (or is a name functions are bound
    to, whatever the binding's value)."""
    found: List[str] = []

    def is_fn_value(v: Any) -> bool:
        if isinstance(v, gast.Lambda):
            return True
        if isinstance(v, gast.Name):
            return is_local_fn(v.id) or v.id in found or v.id in defined
        if isinstance(v, gast.IfExp):
            return is_fn_value(v.body) or is_fn_value(v.orelse)
        if isinstance(v, (gast.Call, gast.Attribute, gast.Name)) and is_fn_call is not None:
            return is_fn_call(v)  # make(2.0) (a factory), jnp.sin (a known function)
        return False

    defined: Set[str] = set()

    def visit(stmts: List[Any]) -> None:
        for n in stmts:
            if isinstance(n, gast.FunctionDef):  # (its own body is its scope)
                defined.add(n.name)
                if n.name not in found:
                    found.append(n.name)
            elif isinstance(n, gast.Assign) and len(n.targets) == 1:
                t = n.targets[0]
                if (
                    isinstance(t, gast.Name)
                    and (is_fn_value(n.value) or is_local_fn(t.id))
                    and t.id not in found
                ):
                    found.append(t.id)
            elif isinstance(n, (gast.If, gast.For, gast.While)):
                visit(n.body)
                visit(n.orelse)
            elif isinstance(n, (gast.With, gast.Try)):
                visit(n.body)

    visit(s.body)
    visit(s.orelse)
    return found


#: in-place list/dict methods the normalizer rewrites -> numbers of positional args
_CONTAINER_METHODS = {
    "append": (1,),
    "extend": (1,),
    "insert": (2,),
    "pop": (0, 1, 2),
    "remove": (1,),
    "reverse": (0,),
    "sort": (0,),
    "clear": (0,),
    "update": (0, 1),
    "setdefault": (1, 2),
    "popitem": (0,),
}
_KINDS = ("list", "tuple", "dict", "seq")  # seq: a list or a tuple (a container argument)
#: (kind, method) pairs with no such method: they run as written (AttributeError)
_NOT_A_METHOD = {("tuple", m) for m in _CONTAINER_METHODS} | {
    (kind, m)
    for kind, methods in (
        ("dict", ("append", "extend", "insert", "remove", "reverse", "sort")),
        ("list", ("update", "setdefault", "popitem")),
    )
    for m in methods
}
_ANY = "?"  # not decided yet (the analysis starts optimistic)
_SEQ = gast.Constant(value="a container argument", kind=None)  # its kind is "seq"


_EVERYTHING = frozenset({"*"})  # (a path that does not go on: it binds everything)


def _surely_bound(stmts: List[Any]) -> Set[str]:
    """Source names every path through ``stmts`` that goes on past them binds
    (by assignment or ``def``); a path ending in ``return``/``raise``/``break``/
    ``continue`` does not go on. Loops may run no iteration: they bind nothing
    for sure. The result holds ``"*"`` when no path goes on."""
    bound: Set[str] = set()
    for n in stmts:
        if isinstance(n, (gast.Return, gast.Raise, gast.Break, gast.Continue)):
            return set(_EVERYTHING)
        if isinstance(n, gast.FunctionDef):
            bound.add(n.name)
        elif isinstance(n, (gast.Assign, gast.AnnAssign, gast.AugAssign)):
            targets = n.targets if isinstance(n, gast.Assign) else [n.target]
            for t in targets:
                bound.update(
                    m.id
                    for m in N.walk(t)
                    if isinstance(m, gast.Name) and isinstance(m.ctx, gast.Store)
                )
        elif isinstance(n, gast.If):
            a, b = _surely_bound(n.body), _surely_bound(n.orelse)
            if "*" in a and "*" in b:
                return set(_EVERYTHING)
            bound |= b if "*" in a else a if "*" in b else a & b
    return bound


def _value_kind(e: Any, known: Dict[str, str], builtin_of: Any) -> Any:
    """The kind ("list" / "tuple" / "dict") source expression ``e`` surely
    evaluates to, ``_ANY`` when that rests on names not decided yet, else None."""
    if isinstance(e, (gast.List, gast.ListComp)):
        return "list"
    if isinstance(e, gast.Tuple):
        return "tuple"
    if isinstance(e, (gast.Dict, gast.DictComp)):
        return "dict"
    if e is _SEQ:
        return "seq"
    if isinstance(e, gast.Name):
        return known.get(e.id)
    if isinstance(e, gast.Call):
        b = builtin_of(e.func)
        if b is list or (b is dict and not e.args):
            return b.__name__
        if b is tuple and len(e.args) == 1:
            inner = _value_kind(e.args[0], known, builtin_of)
            if inner in ("list", "tuple", "seq"):
                return "tuple"
            return _ANY if inner == _ANY else None
        return None
    if isinstance(e, gast.BinOp) and isinstance(e.op, (gast.Add, gast.Mult)):
        sides = [_value_kind(e.left, known, builtin_of), _value_kind(e.right, known, builtin_of)]
        for k in sides:
            if k in ("list", "tuple", "seq"):
                return k
        return _ANY if _ANY in sides else None
    if isinstance(e, gast.IfExp):
        a = _value_kind(e.body, known, builtin_of)
        b = _value_kind(e.orelse, known, builtin_of)
        if a == b or b == _ANY:
            return a
        return b if a == _ANY else None
    return None


def _container_kinds(
    fnode: Any, params: List[str], builtin_of: Any, seq_params: frozenset = frozenset()
) -> Dict[str, str]:
    """Locals of ``fnode`` that are surely a list / tuple / dict wherever they are
    defined: every assignment to them (``l = [...]``, ``l = list(...)``, ``l += [v]``,
    ``l = l * 2``, ...) makes one; parameters are unknown, except ``seq_params``
    (container arguments: "seq", a list or a tuple), loop variables too.
    A greatest fixpoint, so that ``l *= 2`` keeps the kind ``l = [a]`` gave."""
    values: Dict[str, List[Any]] = {p: [_SEQ if p in seq_params else None] for p in params}
    direct: Dict[int, Any] = {}

    def visit(node):
        if isinstance(node, (gast.FunctionDef, gast.Lambda)):
            return
        if isinstance(node, (gast.Assign, gast.AnnAssign)) and node.value is not None:
            for t in node.targets if isinstance(node, gast.Assign) else [node.target]:
                if isinstance(t, gast.Name):
                    direct[id(t)] = node.value
        if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            load = gast.Name(id=node.target.id, ctx=gast.Load(), annotation=None, type_comment=None)
            direct[id(node.target)] = gast.BinOp(left=load, op=node.op, right=node.value)
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            values.setdefault(node.id, []).append(direct.get(id(node)))
        for child in gast.iter_child_nodes(node):
            visit(child)

    for st in fnode.body:
        visit(st)
    known = {name: _ANY for name in values}
    changed = True
    while changed:
        changed = False
        for name, vals in values.items():
            kinds = {_value_kind(v, known, builtin_of) if v is not None else None for v in vals}
            decided = kinds - {_ANY}
            if not decided:
                new = _ANY
            elif len(decided) == 1 and None not in decided:
                new = next(iter(decided))
            elif decided <= {"list", "tuple", "seq"}:
                new = "seq"
            else:
                new = None
            if new != known[name]:
                known[name] = new
                changed = True
    return {k: v for k, v in known.items() if v in _KINDS}


_MUTATORS = set(_CONTAINER_METHODS)


def _mutated_params(fnode: Any) -> Set[str]:
    """Parameters of ``fnode`` it mutates in place (``p.append(v)``, ``p[k] = v``)
    and never rebinds (``p = ...``); nested functions are not looked into."""
    params = {a.id for a in fnode.args.args}
    extended = {  # (p += [v] extends p in place: not a rebinding)
        id(n.target)
        for n in _walk_own(fnode.body)
        if isinstance(n, gast.AugAssign)
        and isinstance(n.target, gast.Name)
        and isinstance(n.value, (gast.List, gast.ListComp))
    }
    rebound = {
        n.id
        for n in _walk_own(fnode.body)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and id(n) not in extended
    }
    return (changed_in_place(fnode) & params) - rebound


def changed_in_place(fnode: Any) -> Set[str]:
    """Names ``fnode``'s body changes in place (``l.append(v)``, ``l += [v]``,
    ``l[k] = v``, ``del l[k]``), rebound or not; nested functions not looked into."""
    out: Set[str] = set()
    for node in _walk_own(fnode.body):
        if (
            isinstance(node, gast.AugAssign)
            and isinstance(node.target, gast.Name)
            and isinstance(node.value, (gast.List, gast.ListComp))
        ):
            out.add(node.target.id)
        elif (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Attribute)
            and node.func.attr in _MUTATORS
            and isinstance(node.func.value, gast.Name)
        ):
            out.add(node.func.value.id)
        elif (
            isinstance(node, gast.Subscript)
            and isinstance(node.ctx, (gast.Store, gast.Del))
            and isinstance(node.value, gast.Name)
        ):
            out.add(node.value.id)
    return out


def parents_unless_captured(fnode: Any, p: str) -> Optional[Dict[int, Any]]:
    """The parent of each node of ``fnode``'s own body (by ``id``), or None when
    a nested function, lambda or generator there refers to ``p`` (a closure or a
    suspended frame may read ``p`` after the call)."""
    parents: Dict[int, Any] = {}
    for node in _walk_own(fnode.body):
        if isinstance(node, (gast.Yield, gast.YieldFrom)):
            return None
        if isinstance(node, (gast.FunctionDef, gast.Lambda)):
            if any(isinstance(n, gast.Name) and n.id == p for n in N.walk(node)):
                return None
            continue
        for child in gast.iter_child_nodes(node):
            parents[id(child)] = node
    return parents


def only_read_in_place(fnode: Any, p: str) -> bool:
    """Whether ``fnode`` uses its parameter ``p`` only where the value cannot
    outlive the call: iterated by a ``for`` (also through ``zip``/``enumerate``),
    indexed (``p[i]``), or measured (``len(p)``); never rebound."""
    parents = parents_unless_captured(fnode, p)
    if parents is None:
        return False
    for node in _walk_own(fnode.body):
        if not (isinstance(node, gast.Name) and node.id == p):
            continue
        if not isinstance(node.ctx, gast.Load):
            return False
        up = parents.get(id(node))
        if isinstance(up, gast.For) and up.iter is node:
            continue
        if isinstance(up, gast.Subscript) and up.value is node and isinstance(up.ctx, gast.Load):
            continue
        if isinstance(up, gast.Call) and node in up.args and isinstance(up.func, gast.Name):
            if up.func.id == "len" and len(up.args) == 1:
                continue
            if up.func.id in ("zip", "enumerate") and isinstance(parents.get(id(up)), gast.For):
                if parents[id(up)].iter is up:
                    continue
        return False
    return True


def _walk_own(stmts: List[Any]):
    """Every node of ``stmts``, not looking into nested functions and lambdas."""
    todo = list(stmts)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (gast.FunctionDef, gast.Lambda)):
            todo.extend(gast.iter_child_nodes(node))


def _shared_mutation(fnode: Any) -> Optional[tuple]:
    """A mutation srcjax would not see through: a list/dict changed in place
    through a second name (``b = acc; b.append(v)`` and ``acc`` read later) or
    inside another container (``state["h"].append(v)``). srcjax treats lists and
    dicts as values, so these would give wrong derivatives: (node, message, hint)."""
    own = _own_locals(fnode.body) | {a.id for a in fnode.args.args}
    aliases: Dict[str, List[tuple]] = {}  # name -> [(other name, line, loops)]
    mutations: List[tuple] = []  # (name, node, loops)
    nested: List[tuple] = []  # (receiver, call node)
    loads: Dict[str, List[int]] = {}
    stores: Dict[str, List[int]] = {}  # lines that rebind a name
    loops: List[tuple] = []  # (first line, last line) of the loops around the visit

    def visit(node):
        if isinstance(node, (gast.FunctionDef, gast.Lambda)):
            return
        if isinstance(node, (gast.For, gast.While)):
            loops.append((node.lineno, getattr(node, "end_lineno", None) or node.lineno))
            for child in gast.iter_child_nodes(node):
                visit(child)
            loops.pop()
            return
        if (
            isinstance(node, gast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], gast.Name)
            and isinstance(node.value, gast.Name)
            and node.value.id in own
        ):
            a, b = node.targets[0].id, node.value.id
            where = (node.lineno, tuple(loops))
            aliases.setdefault(a, []).append((b,) + where)
            aliases.setdefault(b, []).append((a,) + where)
        elif isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            stores.setdefault(node.id, []).append(getattr(node, "lineno", 0) or 0)
        if (
            isinstance(node, gast.AugAssign)
            and isinstance(node.target, gast.Name)
            and isinstance(node.value, (gast.List, gast.ListComp))
        ):
            mutations.append((node.target.id, node, tuple(loops)))  # l += [v] extends l
        if (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Attribute)
            and node.func.attr in _MUTATORS
        ):
            recv = node.func.value
            if isinstance(recv, gast.Name):
                mutations.append((recv.id, node, tuple(loops)))
            elif (
                isinstance(recv, gast.Subscript)
                and isinstance(recv.value, gast.Name)
                and recv.value.id in own
                and node.func.attr != "pop"
            ):
                nested.append((recv, node))
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, (gast.Store, gast.Del)):
            if isinstance(node.value, gast.Name):
                mutations.append((node.value.id, node, tuple(loops)))
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            loads.setdefault(node.id, []).append(getattr(node, "lineno", 0) or 0)
        for child in gast.iter_child_nodes(node):
            visit(child)

    for st in fnode.body:
        visit(st)
    if nested:
        recv, node = nested[0]
        r = gast.unparse(recv).strip()
        return (
            node,
            f"`.{node.func.attr}` on a list inside another container is not supported in "
            "transformed functions (its derivative would be lost)",
            f"give the inner list a name and store it back: `h = {r}`, "
            f"`h.{node.func.attr}(...)`, `{r} = h`",
        )

    def rebound(names, lo, hi):  # a name rebound on a line in (lo, hi)
        return any(lo < ln < hi for n in names for ln in stores.get(n, ()))

    def shared(name, other, alias_line, alias_loops, line, loops_here):
        """Whether ``name`` and ``other`` may name one list at ``line``: the alias
        ran before it (textually, or in an earlier trip of a loop around both) and
        neither name was rebound in between (``l_prev = l; l = f(l); l.append(v)``
        in generated code is no alias)."""
        if alias_line < line:
            return not rebound((name, other), alias_line, line)
        common = [lp for lp in alias_loops if lp in loops_here]
        if not common:
            return False
        first, last = common[-1]
        return not (
            rebound((name, other), alias_line, last + 1) or rebound((name, other), first - 1, line)
        )

    for name, node, loops_here in mutations:
        line = getattr(node, "lineno", 0) or 0
        for other, alias_line, alias_loops in sorted(aliases.get(name, ())):
            if not shared(name, other, alias_line, alias_loops, line, loops_here):
                continue
            if any(ln > line for ln in loads.get(other, ())):
                return (
                    node,
                    f"`{name}` is changed in place while `{other}` names the same "
                    "list/dict and is read later; srcjax treats lists and dicts as "
                    f"values, so the change would not reach `{other}`",
                    f"use one name for it, or copy it first: `{name} = list({other})` / "
                    f"`{name} = dict({other})`",
                )
    return None


def _store_counts(stmts: List[Any]) -> Dict[str, int]:
    """How many times a function body binds each name (not looking inside nested
    functions/lambdas; loop targets and augmented assignments count)."""
    counts: Dict[str, int] = {}

    def visit(node):
        if isinstance(node, (gast.FunctionDef, gast.Lambda)):
            return
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            counts[node.id] = counts.get(node.id, 0) + 1
        for child in gast.iter_child_nodes(node):
            visit(child)

    for s in stmts:
        visit(s)
    return counts


def _own_locals(stmts: List[Any]) -> Set[str]:
    """Names a function body assigns, not looking inside nested functions/lambdas."""
    out: Set[str] = set()

    def visit(node):
        if isinstance(node, gast.FunctionDef):
            out.add(node.name)
            return
        if isinstance(node, gast.Lambda):
            return
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            out.add(node.id)
        for child in gast.iter_child_nodes(node):
            visit(child)

    for s in stmts:
        visit(s)
    return out
