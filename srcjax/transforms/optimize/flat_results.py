"""Results of a known structure returned as their leaves (issue 17, R5).

A jitted train step returns pytrees jit knows the structure of: ``model =
ad.unflatten_upto(treedef1, mapped5, None)`` with ``treedef1 =
ad.tree_def(model, None)`` of a parameter (``optimize/pytrees.py`` wrote them).
Generated code would build each instance, and jit's boundary would then walk
it again to wrap its leaves into Arrays and build it a second time. Here the
``return`` gives the leaf lists instead, and a template says how the boundary
builds the result once, from the wrapped leaves, with the parameter's treedef
(the key fixes the structure and the aux data, compared with ``==``: the
treedef of the call that specialized, as ``jax.jit`` keeps the output tree of
its trace). The template is JSON (it is kept in the disk cache's entry):

- ``["tuple", [sub, ...]]``: a tuple display of the subtemplates;
- ``["leaf", k]``: item ``k`` of the returned tuple, as it is;
- ``["tree", k, i]``: item ``k`` is the list of leaves of positional parameter
  ``i``'s structure.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import gast

from ...frontend import nodes as N

#: the comment on the rewritten return
NOTE = "leaves: jit's boundary builds the trees from the arguments' structure"


def flat_results(fdef: Any, positional: List[str]) -> Optional[list]:
    """Rewrite the final ``return`` of ``fdef`` (its only one, at the top
    level) so every returned name built by ``ad.unflatten_upto`` of a treedef of
    a parameter in ``positional`` (the parameters passed by position, in order)
    is returned as its leaf list; the statements left unread are dropped.
    Returns the template (see the module), or None when nothing changed."""
    body = fdef.body
    if not body or not isinstance(body[-1], gast.Return) or body[-1].value is None:
        return None
    if not any(_op_of(s) == "ad.unflatten_upto" for s in body):
        return None  # (the common case, before any walk of the function)
    if sum(isinstance(n, gast.Return) for n in gast.walk(fdef)) != 1:
        return None
    if any(isinstance(n, (gast.Yield, gast.YieldFrom)) for n in gast.walk(fdef)):
        return None
    stores: Dict[str, int] = {}
    for n in gast.walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            stores[n.id] = stores.get(n.id, 0) + 1
    # name -> (index, op) of its last top-level assignment, when no statement
    # after it stores the name (straight-line code: the value the return reads)
    where: Dict[str, tuple] = {}
    later: set = set()
    for i in range(len(body) - 1, -1, -1):
        s = body[i]
        op = getattr(s, "sj_op", None)
        if (
            op is not None
            and op.kind in ("prim", "pack")
            and isinstance(s, gast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)
        ):
            name = s.targets[0].id
            if name not in later and name not in where:
                where[name] = (i, op)
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
                later.add(n.id)

    def tree_of(name: str) -> Optional[tuple]:
        """(leaves name, parameter index) of ``name = ad.unflatten_upto(td,
        leaves, None)`` with ``td = ad.tree_def(param, None)`` read before any
        store of ``param``; else None."""
        got = where.get(name)
        if got is None or got[1].kind != "prim" or got[1].prim.public != "ad.unflatten_upto":
            return None
        b = got[1].bound
        like, leaves, is_leaf = b.get("like"), b.get("leaves"), b.get("is_leaf")
        if not (isinstance(like, gast.Name) and isinstance(leaves, gast.Name)):
            return None
        if not (isinstance(is_leaf, gast.Constant) and is_leaf.value is None):
            return None
        # (the list returned as it is: nothing after the unflatten may touch it)
        if any(N.mentions(s, leaves.id) for s in body[got[0] + 1 : -1]):
            return None
        td = where.get(like.id)
        if td is None or td[1].kind != "prim" or td[1].prim.public != "ad.tree_def":
            return None
        if stores.get(like.id) != 1:
            return None
        tree, tl = td[1].bound.get("tree"), td[1].bound.get("is_leaf")
        if not isinstance(tree, gast.Name) or tree.id not in positional:
            return None
        if not (isinstance(tl, gast.Constant) and tl.value is None):
            return None
        # (the parameter as passed: no store of its name before the treedef's)
        if _stored_before(body, td[0], tree.id):
            return None
        return leaves.id, positional.index(tree.id)

    reads = _reads(fdef)
    items: List[Any] = []
    found = [False]

    def template(node: Any) -> Optional[list]:
        if isinstance(node, gast.Tuple):
            subs = [template(e) for e in node.elts]
            return None if any(s is None for s in subs) else ["tuple", subs]
        if isinstance(node, gast.Starred):
            return None
        if isinstance(node, gast.Name) and reads.get(node.id) == 1:
            got = where.get(node.id)  # (a tuple display of ANF: `t = (m, v, c)`)
            if got is not None and got[1].kind == "pack":
                value = body[got[0]].value
                if isinstance(value, gast.Tuple) and not _stored_after(body[got[0] + 1 :], value):
                    return template(value)
        k = len(items)
        tree = tree_of(node.id) if isinstance(node, gast.Name) else None
        if tree is None:
            items.append(node)
            return ["leaf", k]
        items.append(N.name(tree[0]))
        found[0] = True
        return ["tree", k, tree[1]]

    ret = body[-1]
    tpl = template(ret.value)
    if tpl is None or not found[0]:
        return None
    ret.value = gast.Tuple(elts=items, ctx=gast.Load())
    ret.sj_note = NOTE
    _drop_unread(fdef)
    return tpl


def _stored_after(stmts: list, value: Any) -> bool:
    """Whether a name ``value`` reads is stored again in ``stmts``."""
    names = {n.id for n in gast.walk(value) if isinstance(n, gast.Name)}
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and n.id in names and not isinstance(n.ctx, gast.Load):
                return True
    return False


def _op_of(stmt: Any) -> Optional[str]:
    op = getattr(stmt, "sj_op", None)
    return op.prim.public if op is not None and op.kind == "prim" else None


def _stored_before(body: list, index: int, name: str) -> bool:
    for s in body[:index]:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Load):
                return True
    return False


def _reads(fdef: Any) -> Dict[str, int]:
    reads: Dict[str, int] = {}
    for n in gast.walk(fdef):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            reads[n.id] = reads.get(n.id, 0) + 1
    return reads


def _drop_unread(fdef: Any) -> None:
    """Drop top-level ``ad.unflatten_upto`` / ``ad.tree_def`` assignments and
    tuple displays whose value no later statement reads (each round may free
    the next)."""
    while True:
        body = fdef.body
        keep = []
        for i, s in enumerate(body):
            op = getattr(s, "sj_op", None)
            if (
                op is not None
                and (
                    (op.kind == "prim" and op.prim.public in ("ad.unflatten_upto", "ad.tree_def"))
                    or (op.kind == "pack" and isinstance(getattr(s, "value", None), gast.Tuple))
                )
                and isinstance(s, gast.Assign)
                and isinstance(s.targets[0], gast.Name)
                and not _read_later(body, i, s.targets[0].id)
            ):
                continue
            keep.append(s)
        if len(keep) == len(body):
            return
        fdef.body = keep


def _read_later(body: list, index: int, name: str) -> bool:
    """Whether a statement after ``body[index]`` reads the value it stores in
    ``name`` (before another store of the name)."""
    for s in body[index + 1 :]:
        stored = False
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and n.id == name:
                if isinstance(n.ctx, gast.Load):
                    return True
                stored = True
        if stored:
            return False
    return False


def build(template: list, values: tuple, treedefs: Dict[int, Any]) -> Any:
    """The result ``template`` describes, from the returned ``values`` (their
    leaves already as the boundary hands them out) and the parameters'
    treedefs."""
    tag = template[0]
    if tag == "tuple":
        return tuple([build(t, values, treedefs) for t in template[1]])
    if tag == "leaf":
        return values[template[1]]
    return treedefs[template[2]].unflatten(values[template[1]])


def parameters(template: list) -> set:
    """The positional parameters whose treedefs ``template`` reads."""
    if template[0] == "tuple":
        out: set = set()
        for t in template[1]:
            out |= parameters(t)
        return out
    return {template[2]} if template[0] == "tree" else set()
