"""The batching pass's entry: :func:`batch` builds the vmapped function from a
normalized function and a :class:`~.spec.BatchSpec`."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, FrozenSet, List, Optional, Set, Tuple

import gast

from ...analysis.tapes import pure_tape_lists
from ...errors import TransformValueError
from ...frontend import nodes as N
from ...frontend.normalize import Normalized
from .batcher import Batcher
from .spec import BatchSpec, _leaf_axes


def batch(norm: Normalized, spec: BatchSpec, name: Optional[str] = None) -> Any:
    """Build the batched version of a normalized function.

    Args:
        norm: output of :func:`srcjax.frontend.normalize.normalize`.
        spec: in/out axes and parameter kinds (:class:`BatchSpec`).
        name: the generated function's name.

    Returns:
        A gast ``FunctionDef`` with the original parameters (minus those bound
        by ``functools.partial``) returning the batched result.
    """
    # names pushed on grad's tapes and popped back (the restore pattern) that stay
    # unbatched everywhere -- a loop target over a list of axes or strides, a slice
    # bound -- are pushed as they are and popped unbatched: a tape entry broadcast to
    # the batch would turn them into per-example arrays (an axis or a stride must be
    # a Python value). Optimistic: a name found batched anywhere in a try is dropped
    # from the set and the function batched again (a few tries at most)
    #
    # A tape holding such static entries must not be broadcast as a whole later (a
    # loop pushing batched values after a loop that pushed static ones: the static
    # entries would pop broadcast): a pure tape found batched in a try starts
    # batched where it is created (`tape = []`) in the next one
    tape_static = _tape_restored_names(norm.node.body)
    batched_tapes: Set[str] = set()
    while tape_static:
        trial = dataclasses.replace(
            norm,
            node=N.clone(norm.node),
            namer=copy.deepcopy(norm.namer),
            bindings=dict(norm.bindings),
        )
        new, bp = _batch(trial, spec, name, frozenset(tape_static), frozenset(batched_tapes))
        bad = tape_static & bp.ever_batched
        more = (bp.pure_tapes & bp.tapes & bp.ever_batched) - batched_tapes
        if not bad and not more:
            norm.node, norm.namer = trial.node, trial.namer  # (the names it made)
            norm.bindings.update(trial.bindings)
            return new
        tape_static -= bad
        batched_tapes |= more
    return _batch(norm, spec, name, frozenset())[0]


def _batch(
    norm: Normalized,
    spec: BatchSpec,
    name: Optional[str],
    tape_static,
    batched_tapes: FrozenSet[str] = frozenset(),
) -> Tuple[Any, "Batcher"]:
    fdef = norm.node
    bp = Batcher(norm, spec, tape_static, batched_tapes)
    body = list(fdef.body)
    assert body and isinstance(body[-1], gast.Return)
    ret = body.pop()
    head: List[Any] = []
    size = N.name(bp.size_name)
    # bound (partial) arguments: constants of the generated module
    params = list(fdef.args.args)
    kept = []
    for a in params:
        if a.id in spec.bound:
            head.append(N.assign(a.id, N.name(spec.bound[a.id])))
        else:
            kept.append(a)
    # an argument whose in_axes is a pytree of None leaves only is unmapped, as in
    # JAX (in_axes=({"w": None, "b": None}, 0))
    spec.in_axes = {
        p: None if ax is not None and all(a is None for a in _leaf_axes(ax)) else ax
        for p, ax in spec.in_axes.items()
    }
    # the batch size, then mapped axes moved to the front
    size_expr = None
    for p in bp.params:
        ax = spec.in_axes.get(p)
        if ax is None or p in spec.bound:
            continue
        if spec.param_kinds.get(p, "leaf") == "leaf" and isinstance(ax, int):
            size_expr = gast.Subscript(
                value=N.attr(N.name(p), "shape"), slice=N.const(ax), ctx=gast.Load()
            )
            break
        # a container, or an argument whose kind is not known ("any": a vmap
        # inlined in other transformed code, whose argument may be the list of
        # (W, b) gradients of an inner vmap(grad)): the size read from its first
        # mapped leaf (a static int under an outer vmap too: its batching rule)
        size_expr = N.call("ad.tree_axis_size", [N.name(p), N.parse_expr(repr(ax))])
        break
    if size_expr is None:
        if spec.axis_size is None:
            raise TransformValueError(
                "vmap must have at least one non-None value in in_axes", hint="or pass axis_size"
            )
        size_expr = N.const(int(spec.axis_size))
    head.append(N.assign(bp.size_name, size_expr))
    for p in bp.params:
        ax = spec.in_axes.get(p)
        if ax is None or p in spec.bound:
            continue
        if spec.param_kinds.get(p) == "tree" or not isinstance(ax, int):
            if _leaf_axes(ax) != [0] or not isinstance(ax, int):
                head.append(
                    N.assign(
                        p, N.call("ad.tree_batch_in", [N.name(p), N.parse_expr(repr(ax)), size])
                    )
                )
        elif ax != 0:
            head.append(N.assign(p, N.call("jnp.moveaxis", [N.name(p), N.const(ax), N.const(0)])))
        bp.bat.add(p)
    for st in head:
        st.sj_origin = getattr(fdef, "sj_origin", None)
    defined = set(bp.params)
    # names assigned inside a branch or a loop start as None: a per-example select
    # may read them before every example has assigned them (ad.select keeps the
    # other operand of a None)
    nested: Set[str] = set()
    for st in body:
        if isinstance(st, (gast.If, gast.While, gast.For)):
            nested |= set(N.assigned_names([st]))
    for n in sorted(nested - defined):
        head.append(N.assign(n, N.const(None)))
    defined |= nested
    new_body = head + bp.block(body, defined)
    # the result and out_axes
    rv = ret.value
    tail, retval = _output(bp, rv, spec.out_axes, body, ret)
    new_body += tail + [gast.Return(value=retval)]
    new = N.function_def(name or f"{fdef.name}_vmap", N.arguments(kept), new_body)
    new.sj_origin = getattr(fdef, "sj_origin", None)
    return new, bp


def _tape_restored_names(stmts: List[Any]) -> Set[str]:
    """Names ``t`` pushed on a pure tape (``tape.append(t)``) and popped back from
    one (``t = tape.pop()``): grad's restore pattern."""
    pushed: Set[str] = set()
    popped: Set[str] = set()
    tapes = pure_tape_lists(stmts)
    for node in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
        op = getattr(node, "sj_op", None)
        if op is None or op.target not in tapes:
            continue
        if op.kind == "append" and isinstance(node, gast.Expr):
            if op.elts and isinstance(op.elts[0], gast.Name):
                pushed.add(op.elts[0].id)
        elif op.kind == "pop" and isinstance(node, gast.Assign):
            v = node.value
            plain = isinstance(v, gast.Call) and isinstance(v.func, gast.Attribute)
            if plain and isinstance(node.targets[0], gast.Name):
                popped.add(node.targets[0].id)
    return pushed & popped


def _pack_of(body: List[Any], name: str) -> Optional[Any]:
    """The top-level container display last assigned to ``name``, if any."""
    found = None
    for st in body:
        if isinstance(st, gast.Assign) and isinstance(st.targets[0], gast.Name):
            if st.targets[0].id == name:
                op = getattr(st, "sj_op", None)
                found = st.value if op is not None and op.kind == "pack" else None
        elif name in N.assigned_names([st]):
            found = None
    return found


def _output(bp: Batcher, rv: Any, out_axes: Any, body: List[Any], ret) -> Tuple[List[Any], Any]:
    size = N.name(bp.size_name)
    tail: List[Any] = []

    def one(node, axes, path):
        batched = bp.is_batched(node)
        is_tree = isinstance(node, gast.Name) and node.id in bp.containers
        if axes is None:
            if batched:
                raise TransformValueError(
                    "vmap has mapped output but out_axes is None"
                    + (f" (output {path})" if path else ""),
                    hint="return a value that does not depend on the mapped inputs, or map it",
                )
            return N.clone(node)
        val = N.clone(node)
        if not batched:
            val = N.call("ad.batch_broadcast", [val, size])
        if is_tree or not isinstance(axes, int):
            if _leaf_axes(axes) == [0] and isinstance(axes, int):
                return val
            return N.call("ad.tree_batch_out", [val, N.parse_expr(repr(axes))])
        if axes != 0:
            return N.call("jnp.moveaxis", [val, N.const(0), N.const(axes)])
        return val

    if isinstance(rv, gast.Name) and isinstance(out_axes, (tuple, list)):
        pack = _pack_of(body, rv.id)
        if isinstance(pack, (gast.Tuple, gast.List)) and len(pack.elts) == len(out_axes):
            # per-item out_axes: read the items of the returned display directly
            items = []
            for i, (e, ax) in enumerate(zip(_original_items(bp, pack), out_axes)):
                items.append(one(e, ax, f"[{i}]"))
            cls = gast.Tuple if isinstance(pack, gast.Tuple) else gast.List
            return tail, cls(elts=items, ctx=gast.Load())
    return tail, one(rv, out_axes, "")


def _original_items(bp: Batcher, pack: Any) -> List[Any]:
    out = []
    for e in pack.elts:
        # a broadcast added by the pack's materialization: use the original item
        if (
            isinstance(e, gast.Call)
            and isinstance(e.func, gast.Attribute)
            and e.func.attr == "batch_broadcast"
        ):
            e = e.args[0]
        out.append(e)
    return out
