"""A list or dict changed in place through a name that holds an item of another
container (:func:`item_mutation`): ``h = p[0]; h.append(x)`` and ``p`` read
later, ``ys = [params]; h = ys[0]; h.append(x)`` and ``params`` read later,
``lst, _ = t; lst.append(v)`` and ``t`` read later (or in a later trip of a
loop around the change, or ``t`` a parameter: the caller reads it), unless the
changed list is stored back first (``p[0] = h``: the value reaches ``p``).

srcjax treats lists and dicts as values (the normalizer rewrites ``l.insert(i,
v)`` into ``l = ad.insert(l, i, v)``, and reverse mode follows each name's
value), so such a change would not reach the container: jit would read the old
list's items or length and grad would lose the change's derivative. Refused with
the user's line instead (:func:`.analyses._shared_mutation` refuses the changes
through a plain copy, ``b = acc``)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set

import gast


def item_mutation(fnode: Any, mutators: Set[str]) -> Optional[tuple]:
    """``(node, message, hint)`` for the first in-place change (a call of a method
    in ``mutators``, ``l += [...]``, ``del l[i]``) of a name that may hold the same
    list as an item of a container, or a name held in one, read on a later line;
    None if there is none."""
    items: Dict[str, Set[str]] = {}  # container name -> the names of its items
    since: Dict[tuple, int] = {}  # (container, item) -> the line that made it so
    loads: Dict[str, List[int]] = {}
    changes: List[tuple] = []  # (name, node)
    backs: Dict[tuple, List[int]] = {}  # (container, name) -> lines of `c[k] = name`

    def item_of(container: str, name: str, line: int) -> None:
        items.setdefault(container, set()).add(name)
        since.setdefault((container, name), line)

    loops = [
        (n.lineno, getattr(n, "end_lineno", None) or n.lineno)
        for n in _walk(fnode.body)
        if isinstance(n, (gast.For, gast.While))
    ]
    params = {a.id for a in fnode.args.args + fnode.args.kwonlyargs}
    for node in _walk(fnode.body):
        line = getattr(node, "lineno", 0) or 0
        if isinstance(node, gast.Assign) and len(node.targets) == 1:
            t, v = node.targets[0], node.value
            if isinstance(t, gast.Name) and _item_read(v):
                item_of(v.value.id, t.id, line)  # h = p[0]
            elif isinstance(t, gast.Name) and isinstance(v, (gast.List, gast.Tuple)):
                for e in v.elts:  # ys = [params]
                    if isinstance(e, gast.Name):
                        item_of(t.id, e.id, line)
            elif isinstance(t, gast.Name) and isinstance(v, gast.Dict):
                for e in v.values:
                    if isinstance(e, gast.Name):
                        item_of(t.id, e.id, line)
            elif isinstance(t, (gast.Tuple, gast.List)) and isinstance(v, gast.Name):
                for e in t.elts:  # lst, _ = t
                    if isinstance(e, gast.Name):
                        item_of(v.id, e.id, line)
            elif (
                isinstance(t, gast.Subscript)
                and isinstance(t.value, gast.Name)
                and isinstance(v, gast.Name)
            ):
                backs.setdefault((t.value.id, v.id), []).append(line)  # p[0] = h
        if (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Attribute)
            and node.func.attr in mutators
            and isinstance(node.func.value, gast.Name)
        ):
            changes.append((node.func.value.id, node))
        elif (
            isinstance(node, gast.AugAssign)
            and isinstance(node.target, gast.Name)
            and isinstance(node.value, (gast.List, gast.ListComp))
        ):
            changes.append((node.target.id, node))
        elif isinstance(node, gast.Delete):
            for t in node.targets:
                if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                    changes.append((t.value.id, node))
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            loads.setdefault(node.id, []).append(line)
    for name, node in changes:
        line = getattr(node, "lineno", 0) or 0
        # (read on a later line, in a later trip of a loop around the change, or
        # by the caller: a parameter's list)
        around = [lp for lp in loops if lp[0] <= line <= lp[1]]
        for other, via in _reaching(name, items, since, line, around):
            back = backs.get((other, name), ())

            if (other in params and not back) or any(
                _stale(ln, line, back, around) for ln in loads.get(other, ())
            ):
                return (
                    node,
                    f"`{name}` is changed in place while `{other}` holds the same "
                    f"list/dict ({via}) and is read later; srcjax treats lists and "
                    f"dicts as values, so the change would not reach `{other}`",
                    f"store the changed list back where it came from (`{via}` the other "
                    "way round) before reading it, or build a new list instead of "
                    "changing it in place",
                )
    return None


def _stale(ln: int, line: int, back, around: List[tuple]) -> bool:
    """Whether a read on line ``ln`` of a container may see it before the change
    on ``line`` is stored back into it (on the lines ``back``): a later line with
    no store back in between, or a line of a loop around the change (its next
    trip) with no store back after the change in that loop."""
    if ln > line:
        return not any(line < b <= ln for b in back)
    loop = [(a, b) for a, b in around if a <= ln <= b]
    return bool(loop) and not any(line < b <= loop[-1][1] for b in back)


def _reaching(name: str, items, since, line: int, around: List[tuple]):
    """``(other name, how)`` for the names whose value may change with ``name``'s
    at ``line``: the containers it is an item of, the other items of those
    containers it may be (``ys = [params]; h = ys[0]``), and so on (where the
    item was taken before ``line``, or in a loop ``around`` it)."""

    def before(c, n):
        ln = since[(c, n)]
        return ln < line or any(a <= ln <= b for a, b in around)

    seen = {name}
    todo = [name]
    while todo:
        n = todo.pop()
        for c, members in items.items():
            if n not in members or not before(c, n):
                continue
            found = [(c, f"`{n}` is an item of `{c}`")]
            found += [(m, f"`{n}` and `{m}` are items of `{c}`") for m in members if before(c, m)]
            for other, how in found:
                if other not in seen:
                    seen.add(other)
                    todo.append(other)
                    yield other, how


def _item_read(v: Any) -> bool:
    return (
        isinstance(v, gast.Subscript)
        and isinstance(v.ctx, gast.Load)
        and isinstance(v.value, gast.Name)
        and not isinstance(v.slice, gast.Slice)
    )


def _walk(stmts: List[Any]):
    """Every node of ``stmts``, not inside nested functions or lambdas."""
    todo = list(reversed(stmts))
    while todo:
        node = todo.pop()
        if isinstance(node, (gast.FunctionDef, gast.Lambda)):
            continue
        yield node
        todo.extend(reversed(list(gast.iter_child_nodes(node))))
