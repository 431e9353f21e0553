"""Batching (vmap) as an AST -> AST pass over normalized code.

The generated function takes the user's parameters (batched ones with their
mapped axis where the caller put it), moves every mapped axis to the front,
and runs the user's code rewritten so that each value either *carries the
batch axis at axis 0* ("batched") or is exactly the unbatched value every
example shares. Design:

- **Batched-ness analysis.** A forward, flow-sensitive analysis over the IR:
  a statement's result is batched when one of its operands is. At the joins
  of control flow (after an ``if``, at a loop head) a name batched on one
  path is made batched on the others with ``ad.batch_broadcast(v, batch)``
  (a read-only broadcast view), so each name has one batched-ness at each
  program point. Unbatched values are never broadcast otherwise.
- **Containers.** A batched list / tuple / dict has *every* leaf batched: a
  container display with some batched items broadcasts the others. So
  ``params["w"]`` of a batched container is batched, and ``len(lst)`` stays
  the number of items.
- **Primitives.** Each statement with batched operands is rewritten by its
  primitive's batching rule (:mod:`srcjax.primitives.batch_rules`; rule
  convention there). Elementwise primitives need none: operands only get
  their per-example ranks aligned (``ad.lift`` inserts unit axes after the
  batch axis where a batched operand has a lower per-example rank than
  another operand), so NumPy's broadcasting lines them up. A call without a
  rule on batched operands (or a call srcjax cannot see into) becomes a
  Python loop over the examples in the generated code, with a ``# no batching
  rule`` note: correct, readable, slow.
- **Per-example metadata.** ``x.shape``, ``x.ndim``, ``x.size`` and
  ``len(x)`` of a batched array read the per-example values.
- **Control flow.** An ``if`` on an unbatched condition stays an ``if``. An
  ``if`` on a batched condition runs the then-branch alone when every example
  takes it, the else-branch alone when none does, and otherwise both, each on
  *safe inputs* (``ad.branch_input``: rows that do not take the branch see
  the inputs of a row that does, with no gradient path) and selects the
  results with ``ad.select``; so gradients through the converted ``if`` never
  pick up NaN/inf from the branch not taken (the "double where" done for the
  user). Side effects in the branches run once for the whole batch, and in
  the mixed case for both branches; ``print`` and ``debug.print`` become
  ``ad.print_examples``, which shows only the examples that run them (one line
  per example for ``debug.print``). A ``while`` with a batched
  test runs until no example continues; its body is a batched ``if`` on the
  per-example "still running" flags, so finished examples keep their values.
- **Generated code is ordinary srcjax input**: every helper is a registered
  primitive with derivative rules where it can carry a derivative, so
  ``grad(vmap(f))`` and ``vmap(vmap(f))`` transform this pass's output.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import dataclasses
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Set, Tuple

import gast

from ..analysis.activity import object_method_error
from ..errors import Location, TransformValueError
from ..frontend import nodes as N
from ..frontend.normalize import Namer, Normalized, Op
from ..primitives import registry
from ..primitives.hooks import PER_EXAMPLE_PRINTS

__all__ = ["batch", "BatchCall", "BatchSpec"]


class BatchSpec:
    """How the generated function receives its parameters and returns its result.

    Attributes:
        in_axes: parameter name -> ``None`` (unbatched), an int (the mapped
            axis of an array), or a pytree prefix of ints/None (for a container).
        param_kinds: parameter name -> ``"leaf"`` or ``"tree"``.
        out_axes: ``None``, an int, or a pytree prefix for the output.
        axis_size: static batch size (``vmap(axis_size=...)``), or None.
        bound: leading parameter name -> binding name (``functools.partial``
            arguments, unbatched constants captured at transform time).
        axis_name: the name collectives (``lax.psum(x, name)``) use for the
            mapped axis, or None.
    """

    def __init__(
        self,
        in_axes,
        param_kinds,
        out_axes=0,
        axis_size=None,
        bound=None,
        skeletons=None,
        axis_name=None,
        user_names=frozenset(),
        user_none=frozenset(),
    ):
        #: the user's variables the user's code itself sets to None
        self.user_none = user_none or frozenset()
        #: the variables whose per-example branch values are checked (see
        #: ad.check_branch_values): None for a user function (every variable not
        #: made by srcjax), else the user's variables of generated code
        self.user_names = user_names
        self.axis_name = axis_name
        self.skeletons = skeletons or {}
        self.in_axes = in_axes
        self.param_kinds = param_kinds
        self.out_axes = out_axes
        self.axis_size = axis_size
        self.bound = bound or {}


def _leaf_axes(spec) -> List[Any]:
    if isinstance(spec, dict):
        return [a for v in spec.values() for a in _leaf_axes(v)]
    if isinstance(spec, (list, tuple)):
        return [a for v in spec for a in _leaf_axes(v)]
    return [spec]


# --------------------------------------------------------------------------- rule context
class BatchCall:
    """What a batching rule sees: one primitive call with some batched operands.

    A rule is ``rule(c: BatchCall)`` returning the expression of the batched
    result (batched along axis 0), or ``(expression, False)`` when the result
    is the same for every example, or ``None`` to fall back to a loop over the
    examples. Rules may emit statements first with :meth:`let`.
    """

    def __init__(self, bp: "Batcher", prim, bound: Dict[str, Any], out: List[Any], origin):
        self.bp = bp
        self.prim = prim
        self.bound = bound
        self.out = out
        self.origin = origin

    # -- inspection ------------------------------------------------------------
    def batched(self, pname: str) -> bool:
        v = self.bound.get(pname)
        if v is None:
            return False
        items = v if isinstance(v, list) else [v]
        return any(self.bp.is_batched(it) for it in items)

    def arg(self, pname: str) -> Any:
        v = self.bound.get(pname)
        if v is None:
            return None
        if isinstance(v, list):
            return [N.clone(x) for x in v]
        return N.clone(v)

    def default(self, pname: str) -> Any:
        p = self.prim.signature.parameters[pname]
        return p.default

    def static(self, pname: str) -> Tuple[bool, Any]:
        """(True, value) when the argument is a compile-time constant (or absent:
        the parameter's default)."""
        v = self.bound.get(pname)
        if v is None:
            d = self.default(pname)
            return True, None if d is self.prim.signature.parameters[pname].empty else d
        if isinstance(v, gast.Name) and v.id in self.bp.constant_values:
            # a helper's parameter bound to a constant (psum(x, name), name = "i")
            return True, self.bp.constant_values[v.id]
        return _const_value(v)

    def is_container(self, node: Any) -> bool:
        return isinstance(node, gast.Name) and node.id in self.bp.containers

    @property
    def size(self) -> Any:
        return N.name(self.bp.size_name)

    def error(self, message: str, hint: Optional[str] = None) -> TransformValueError:
        """An error about this call, located at its line (the user's, or the line
        of the generated file it comes from, which names the user's)."""
        return TransformValueError(message, Location.of(self.origin), hint)

    # -- building --------------------------------------------------------------
    def let(self, base: str, expr: Any) -> Any:
        name = self.bp.namer.fresh(base)
        self.out.append(self.bp.at(N.assign(name, expr), self.origin))
        return N.name(name)

    def materialize(self, node: Any) -> Any:
        """``node`` made batched (broadcast along a new leading axis) if it is not."""
        if node is None or self.bp.is_batched(node):
            return node
        if isinstance(node, gast.Constant) and node.value is None:
            return node
        return N.call("ad.batch_broadcast", [N.clone(node), self.size])

    def lift(self, x: Any, other: Any) -> Any:
        """Batched ``x`` with unit axes inserted after the batch axis so that its
        per-example rank is at least that of ``other``."""
        if isinstance(other, gast.Constant):
            return x
        rank = N.call("jnp.ndim", [N.clone(other)])
        if self.bp.is_batched(other):
            rank = gast.BinOp(left=rank, op=gast.Sub(), right=N.const(1))
        base = x.id + "_al" if isinstance(x, gast.Name) else "lifted"
        return self.let(base, N.call("ad.lift", [N.clone(x), rank]))

    def ndim(self, x: Any) -> Any:
        return N.call("jnp.ndim", [N.clone(x)])

    def call(self, public: str, args=(), kws: Optional[dict] = None) -> Any:
        return N.call(public, list(args), kws)

    def rebuild(self, **changes: Any) -> Any:
        """The primitive's call with some arguments replaced (``None`` removes),
        written as the original statement writes it (operator or function call:
        ``jnp.divide`` follows JAX's promotion, ``/`` NumPy's)."""
        bound = dict(self.bound)
        for k, v in changes.items():
            if v is None:
                bound.pop(k, None)
            else:
                bound[k] = v
        value = getattr(self.origin, "value", None)
        as_call = (
            isinstance(value, gast.Call) and N.to_source(value.func).strip() == self.prim.public
        )
        return build_call(self.prim, bound, as_call)

    def shift_axis(self, pname: str, x: Any, none: str = "all") -> Any:
        """The argument ``pname`` (an axis, tuple of axes or None) for the batched
        operand ``x``: non-negative axes move up by one; ``None`` becomes every
        per-example axis (``none="all"``)."""
        ok, val = self.static(pname)
        if ok:
            if val is None:
                if none == "all":
                    return N.call("ad.batch_axis", [N.const(None), self.ndim(x)])
                return N.const(None)
            if isinstance(val, (tuple, list)):
                return N.const(tuple(int(a) + 1 if a >= 0 else int(a) for a in val))
            if isinstance(val, int):
                return N.const(val + 1 if val >= 0 else val)
        return N.call("ad.batch_axis", [self.arg(pname), self.ndim(x)])


def _const_value(node: Any) -> Tuple[bool, Any]:
    if isinstance(node, gast.Constant):
        return True, node.value
    if isinstance(node, gast.Tuple):
        vals = []
        for e in node.elts:
            ok, v = _const_value(e)
            if not ok:
                return False, None
            vals.append(v)
        return True, tuple(vals)
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        ok, v = _const_value(node.operand)
        if ok and isinstance(v, (int, float)):
            return True, -v
    return False, None


_BINOP_CLS = {
    "+": gast.Add,
    "-": gast.Sub,
    "*": gast.Mult,
    "/": gast.Div,
    "//": gast.FloorDiv,
    "%": gast.Mod,
    "**": gast.Pow,
    "@": gast.MatMult,
    "&": gast.BitAnd,
    "|": gast.BitOr,
    "^": gast.BitXor,
    "<<": gast.LShift,
    ">>": gast.RShift,
}
_CMP_CLS = {
    "<": gast.Lt,
    "<=": gast.LtE,
    ">": gast.Gt,
    ">=": gast.GtE,
    "==": gast.Eq,
    "!=": gast.NotEq,
}
_UNARY_CLS = {"unary -": gast.USub, "unary +": gast.UAdd, "unary ~": gast.Invert}


def build_call(prim, bound: Dict[str, Any], as_call: bool = False) -> Any:
    """Expression calling ``prim`` with ``bound`` (operators stay operators unless
    ``as_call``)."""
    # ``//``: NumPy's integer division by zero gives 0, JAX's floor_divide -1/-2
    op = None if as_call or prim.op == "//" else prim.op
    if op in _BINOP_CLS and set(bound) <= set(list(prim.signature.parameters)[:2]):
        names = list(prim.signature.parameters)[:2]
        if all(n in bound for n in names):
            return gast.BinOp(
                left=N.clone(bound[names[0]]), op=_BINOP_CLS[op](), right=N.clone(bound[names[1]])
            )
    if op in _CMP_CLS and len(bound) == 2:
        names = list(prim.signature.parameters)[:2]
        if all(n in bound for n in names):
            return gast.Compare(
                left=N.clone(bound[names[0]]),
                ops=[_CMP_CLS[op]()],
                comparators=[N.clone(bound[names[1]])],
            )
    if op in _UNARY_CLS and len(bound) == 1:
        (v,) = bound.values()
        return gast.UnaryOp(op=_UNARY_CLS[op](), operand=N.clone(v))
    if prim.public == "ad.getitem" and set(bound) == {"x", "idx"}:
        return gast.Subscript(
            value=N.clone(bound["x"]), slice=_as_index(bound["idx"]), ctx=gast.Load()
        )
    args: List[Any] = []
    kws: Dict[str, Any] = {}
    positional = True
    for pname, p in prim.signature.parameters.items():
        if pname not in bound:
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY):
                positional = False
            continue
        v = bound[pname]
        if p.kind == p.VAR_POSITIONAL:
            args.extend(N.clone(x) for x in v)
        elif (
            positional
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            and (p.default is p.empty)
        ):
            args.append(N.index_value(v))
        else:
            positional = positional and p.default is p.empty
            kws[pname] = N.index_value(v)
    return N.call(prim.public, args, kws)


def _as_index(node: Any) -> Any:
    return N.clone(node)


# --------------------------------------------------------------------------- the pass
class _Recording(set):
    """The set of batched names, recording every name it ever holds in ``ever``
    (the names a tape pop may treat as unbatched must never be batched; see
    :func:`batch`)."""

    def __init__(self, items: Any, ever: Set[str]) -> None:
        super().__init__(items)
        self.ever = ever
        ever.update(self)

    def add(self, x: str) -> None:
        self.ever.add(x)
        super().add(x)

    def update(self, *others: Any) -> None:
        for o in others:
            o = set(o)
            self.ever.update(o)
            super().update(o)

    def __ior__(self, other: Any) -> "_Recording":
        self.update(other)
        return self


class Batcher:
    #: names every binding of which is unbatched in the whole function, popped from a
    #: tape: pushed as they are and popped unbatched (checked by :func:`batch`)
    tape_static: FrozenSet[str] = frozenset()

    @property
    def bat(self) -> Set[str]:
        return self._bat

    @bat.setter
    def bat(self, value: Any) -> None:
        self._bat = _Recording(value, self.ever_batched)

    def __init__(
        self,
        norm: Normalized,
        spec: BatchSpec,
        tape_static: FrozenSet[str] = frozenset(),
        batched_tapes: FrozenSet[str] = frozenset(),
    ):
        self.ever_batched: Set[str] = set()
        self.tape_static = tape_static
        #: pure tapes batched from where they start empty (see :func:`batch`)
        self.batched_tapes = batched_tapes
        self.norm = norm
        self.fdef = norm.node
        self.namer: Namer = norm.namer
        self.bindings = norm.bindings
        self.spec = spec
        self.params = [a.id for a in self.fdef.args.args]
        self.containers: Set[str] = {p for p, k in spec.param_kinds.items() if k == "tree"}
        #: name -> structure of a container ("leaf", ("seq", item), ("items", (...)),
        #: ("dict", ((key, item), ...))), where known
        self.skel: Dict[str, Any] = dict(spec.skeletons)
        self.bat: Set[str] = set()
        self.size_name = self.namer.fresh("batch")
        self.dry = False
        #: > 0 while batching code that only some examples run (a branch of an `if`
        #: whose condition differs per example, the body of a masked loop):
        #: collectives are refused there (their operands are not every example's)
        self.mixed_depth = 0
        #: the per-example flags (and polarity: False in an else branch) of the
        #: per-example ``if``/masked loops around the code being batched, for
        #: printing only the examples that run a ``print`` (ad.print_examples)
        self.example_masks: List[Tuple[Any, bool]] = []
        #: names bound only to static metadata anywhere in the function (see _static_names)
        self.static = _static_names(self.fdef.body)
        #: names holding a batch of a user's class instances (ad.stack_objects)
        self.object_batches: Set[str] = set()
        #: lists pushed to or popped from anywhere in the function: only these can be
        #: a tape started as `tape_bar = None` (the cotangent of a tuple rebound in a
        #: branch, `t_bar = None`, is a value: user E F16)
        self.tapes = _tape_names(self.fdef.body)
        self._loads: Optional[collections.Counter] = None  # name -> reads (see _read_outside)
        #: names a per-example `if` made for its branches (`v_then`): copies of the
        #: code read them where _read_outside cannot see (its counts are the
        #: function's as it came in)
        self.renamed: Set[str] = set()
        #: lists only ever appended to and popped from (grad's tapes): in-place
        #: changes of these under a batched `if` are the tapes' own business
        self.pure_tapes = _pure_tapes(self.fdef.body)
        #: names every binding of which is the same constant (a string, number,
        #: or a tuple of them): static arguments to rules (see BatchCall.static)
        self.constant_values = _constant_values(self.fdef.body)
        # name -> the name every binding of it copies (`cond = flag`), else None
        self._copies = _copy_bindings(self.fdef)
        from ..primitives import batch_rules  # noqa: F401  (registers rules and helpers)

    # ------------------------------------------------------------------ helpers
    def is_batched(self, node: Any) -> bool:
        if isinstance(node, gast.Name):
            return node.id in self.bat
        if node is None or isinstance(node, gast.Constant):
            return False
        return any(n in self.bat for n in N.names_in(node))

    def at(self, stmt: Any, origin: Any) -> Any:
        if origin is not None:
            for a in ("sj_origin", "sj_file", "lineno", "col_offset"):
                if hasattr(origin, a):
                    setattr(stmt, a, getattr(origin, a))
        return stmt

    def broadcast_stmt(self, name: str, origin=None) -> Any:
        st = N.assign(name, N.call("ad.batch_broadcast", [N.name(name), N.name(self.size_name)]))
        return self.at(st, origin)

    # ------------------------------------------------------------------ blocks
    def block(self, stmts: List[Any], defined: Set[str]) -> List[Any]:
        out: List[Any] = []
        for s in stmts:
            out.extend(self.stmt(s, defined))
            defined |= set(N.assigned_names([s]))
        return out

    def stmt(self, s: Any, defined: Set[str]) -> List[Any]:
        op: Optional[Op] = getattr(s, "sj_op", None)
        if op is not None and op.kind == "unknown" and op.effect == "method":
            # acc.add(v) of a plain object with a batched v: the examples would share
            # (and mix in) the object's state (constructing one per example is fine:
            # the examples' objects are kept apart, see loop_fallback)
            err = object_method_error(
                op, self.bat, Location.of(s), s, "a batched value", TransformValueError
            )
            if err is not None:
                raise err
        if isinstance(s, gast.Assign) and op is not None:
            return self.assign(s, op)
        if isinstance(s, gast.Assign):
            t = s.targets[0]
            if isinstance(t, gast.Name):
                if self.is_batched(s.value):
                    self.bat.add(t.id)
                else:
                    self.bat.discard(t.id)
            return [s]
        if isinstance(s, gast.Expr):
            return self.expr_stmt(s, op)
        if isinstance(s, gast.If):
            return self.if_stmt(s, defined)
        if isinstance(s, gast.While):
            return self.while_stmt(s, defined)
        if isinstance(s, gast.For):
            return self.for_stmt(s, defined)
        if isinstance(s, (gast.Assert, gast.Raise)):
            # their expressions are left as written by the normalizer: the shape
            # queries in them must see one example (`assert x.shape == (3,)`)
            for field in ("test", "msg", "exc", "cause"):
                e = getattr(s, field, None)
                if e is not None:
                    setattr(s, field, self._per_example_metadata(e))
        return [s]

    def _per_example_metadata(self, e: Any) -> Any:
        """``e`` with ``x.shape``, ``x.ndim``, ``x.size``, ``jnp.shape(x)`` and
        ``len(x)`` of a batched array ``x`` (a plain name) made per example."""

        def batched_array(node: Any) -> bool:
            return (
                isinstance(node, gast.Name)
                and node.id in self.bat
                and node.id not in self.containers
            )

        class Fix(gast.NodeTransformer):
            def visit_Attribute(inner, node):  # noqa: N805 - the transformer's self
                inner.generic_visit(node)
                if not batched_array(node.value) or not isinstance(node.ctx, gast.Load):
                    return node
                if node.attr == "shape":
                    return gast.Subscript(
                        value=node,
                        slice=gast.Slice(lower=N.const(1), upper=None, step=None),
                        ctx=gast.Load(),
                    )
                if node.attr == "ndim":
                    return gast.BinOp(left=node, op=gast.Sub(), right=N.const(1))
                if node.attr == "size":
                    return N.call("ad.example_size", [N.clone(node.value)])
                return node

            def visit_Call(inner, node):  # noqa: N805
                inner.generic_visit(node)
                f = node.func
                if len(node.args) != 1 or node.keywords or not batched_array(node.args[0]):
                    return node
                x = node.args[0]
                if isinstance(f, gast.Name) and f.id == "len":
                    return N.call("ad.example_len", [N.clone(x)])
                name = N.to_source(f).strip()
                if name in ("jnp.shape", "np.shape"):
                    return gast.Subscript(
                        value=gast.Attribute(value=N.clone(x), attr="shape", ctx=gast.Load()),
                        slice=gast.Slice(lower=N.const(1), upper=None, step=None),
                        ctx=gast.Load(),
                    )
                if name in ("jnp.ndim", "np.ndim"):
                    x_ndim = gast.Attribute(value=N.clone(x), attr="ndim", ctx=gast.Load())
                    return gast.BinOp(left=x_ndim, op=gast.Sub(), right=N.const(1))
                return node

        return Fix().visit(e)

    # ------------------------------------------------------------------ statements
    def assign(self, s: Any, op: Op) -> List[Any]:
        t = s.targets[0].id
        out: List[Any] = []
        kind = op.kind
        if kind == "copy":
            v = op.elts[0] if op.elts else s.value
            self.skel.pop(t, None)
            if isinstance(v, gast.Name) and v.id in self.containers:
                self.containers.add(t)
                if v.id in self.skel:
                    self.skel[t] = self.skel[v.id]
            elif isinstance(v, (gast.Tuple, gast.List)):
                # a folded constant display, as the initial carry `(0.0, 1.0)` of a loop
                self.containers.add(t)
                self.skel[t] = ("items", tuple("leaf" for _ in v.elts))
            else:
                self.containers.discard(t)
            if isinstance(v, gast.Name) and v.id in self.object_batches:
                self.object_batches.add(t)  # (step(s): the callee's parameter s)
            self._set(t, self.is_batched(v))
            return [s]
        if kind == "pack":
            self.containers.add(t)
            self.skel.pop(t, None)
            value = s.value
            if t in self.batched_tapes and isinstance(value, gast.List) and not value.elts:
                # a tape batched somewhere: batched (empty) from its start, so that
                # its entries are each pushed in their final form and never
                # broadcast later with the static ones among them
                self._set(t, True)
                return [s]
            skel = self._display_skeleton(value)
            if skel is not None:
                self.skel[t] = skel
            if any(self.is_batched(e) for e in op.elts):
                s.value = self._materialize_display(value)
                self._set(t, True)
            else:
                self._set(t, False)
            return [s]
        if kind == "pop":
            return self.pop_assign(s, op, t)
        if kind == "prim":
            return self.prim_assign(s, op, t)
        if kind in ("inactive", "unknown"):
            return self.inactive_assign(s, op, t)
        self._set(t, self.is_batched(s.value))
        out.append(s)
        return out

    def pop_assign(self, s: Any, op: Op, t: str) -> List[Any]:
        """``t = lst.pop()`` / ``t = ad.pop(lst)`` / ``t = ad.pop_like(lst, like)``.

        Entries of a batched list are batched (pushes materialize them). A hole
        (``None``) in a cotangent tape pops as zeros like ``like``, so for a batched
        list ``like`` is materialized too; for an unbatched list and a batched
        ``like`` an entry is unbatched but a hole is batched, so zeros like ``like``
        are added to make every result batched."""
        lst_b = op.target in self.bat
        v = s.value
        like = None
        if (
            isinstance(v, gast.Call)
            and len(v.args) == 2
            and not v.keywords
            and N.to_source(v.func).strip() == "ad.pop_like"
        ):
            like = v.args[1]
        if like is None and (t in self.static or t in self.tape_static):
            self._set(t, False)  # restores static metadata pushed as it was
            return [s]
        if like is None or lst_b == self.is_batched(like):
            self._set(t, lst_b or (like is not None and self.is_batched(like)))
            return [s]
        value = N.clone(v)
        if lst_b:
            value.args[1] = N.call("ad.batch_broadcast", [value.args[1], N.name(self.size_name)])
        else:
            value = N.call("ad.tree_add", [value, N.call("ad.zeros_like", [N.clone(like)])])
        new = self.at(N.assign(t, value), s)
        new.sj_op = None
        self._set(t, True)
        return [new]

    def _value_skeleton(self, e: Any) -> Any:
        """The structure of one item of a display or of an appended value:
        ``"leaf"`` unless it is a container (its skeleton, or ``_SOME_TREE`` when
        its items are unknown)."""
        if isinstance(e, gast.Name) and e.id in self.containers:
            return self.skel.get(e.id) or _SOME_TREE
        if isinstance(e, (gast.List, gast.Tuple, gast.Dict)):
            return self._display_skeleton(e) or _SOME_TREE
        return "leaf"

    def _display_skeleton(self, value: Any) -> Any:
        """The structure of a list/tuple/dict display (which items are containers),
        so that ``rows[i]`` of ``rows = [[a, b], [c, d]]`` is known to be a list."""
        if isinstance(value, (gast.List, gast.Tuple)):
            items = tuple(self._value_skeleton(e) for e in value.elts)
            if items and all(i == items[0] for i in items):
                return ("seq", items[0])
            return ("items", items)
        if isinstance(value, gast.Dict):
            keys = []
            for k in value.keys:
                ok, key = _const_value(k) if k is not None else (False, None)
                if not ok:
                    return None
                keys.append(key)
            return ("dict", tuple((k, self._value_skeleton(v)) for k, v in zip(keys, value.values)))
        return None

    def _appended_skeleton(self, lst: str, v: Any) -> None:
        """Keep the structure of ``lst`` known across ``lst.append(v)``: a list
        started empty (a comprehension) of items of one structure is a ``seq``."""
        item = self._value_skeleton(v)
        old = self.skel.get(lst)
        if old == ("items", ()) or old == ("seq", item):
            self.skel[lst] = ("seq", item)
        elif old is not None:
            # items of different structures: a container whose items are unknown
            self.skel[lst] = _SOME_TREE

    def _set(self, name: str, batched: bool) -> None:
        if batched:
            self.bat.add(name)
        else:
            self.bat.discard(name)

    def _materialize_display(self, value: Any) -> Any:
        def fix(e):
            if self.is_batched(e):
                return e
            if isinstance(e, gast.Constant) and (e.value is None or isinstance(e.value, str)):
                return e
            return N.call("ad.batch_broadcast", [e, N.name(self.size_name)])

        if isinstance(value, gast.Dict):
            value.values = [fix(v) for v in value.values]
        elif isinstance(value, (gast.List, gast.Tuple)):
            value.elts = [fix(v) for v in value.elts]
        return value

    def prim_assign(self, s: Any, op: Op, t: str) -> List[Any]:
        prim = op.prim
        any_b = False
        for v in op.bound.values():
            items = v if isinstance(v, list) else [v]
            if any(self.is_batched(it) for it in items):
                any_b = True
        operands = [v for v in op.bound.values() if isinstance(v, gast.Name)]
        if (
            prim.public == "jnp.add"
            and isinstance(s.value, gast.BinOp)
            and any(v.id in self.containers for v in operands)
        ):
            # `+` of tuples/lists joins them: no lifting; every item batched
            self.skel.pop(t, None)
            self.containers.add(t)
            if not any_b:
                self._set(t, False)
                return [s]
            value = N.clone(s.value)
            for field in ("left", "right"):
                side = getattr(value, field)
                if not self.is_batched(side):
                    bcast = N.call("ad.batch_broadcast", [side, N.name(self.size_name)])
                    setattr(value, field, bcast)
            new = self.at(N.assign(t, value), s)
            new.sj_op = None
            self._set(t, True)
            return [new]
        if not any_b and not prim.batch_unbatched:
            self._track_container(prim, op, t)
            self._set(t, False)
            return [s]
        out: List[Any] = []
        c = BatchCall(self, prim, op.bound, out, s)
        rule = prim.batch
        if rule is None and prim.kind == "elementwise":
            from ..primitives.batch_rules import elementwise_rule

            rule = elementwise_rule
        res = rule(c) if rule is not None else None
        self._track_container(prim, op, t)
        if res is None:
            out = self.loop_fallback(s, op, t, prim.public)
            self._set(t, True)
            return out
        batched = True
        if isinstance(res, tuple):
            res, batched = res
        new = self.at(N.assign(t, res), s)
        new.sj_op = None
        out.append(new)
        self._set(t, batched)
        return out

    def _track_container(self, prim, op: Op, t: str) -> None:
        self.skel.pop(t, None)
        if prim.public in ("ad.getitem", "ad.getattr"):
            x = op.bound.get("x")
            if isinstance(x, gast.Name) and x.id in self.containers:
                item = _item_skeleton(
                    self.skel.get(x.id), op.bound.get("idx", op.bound.get("name"))
                )
                if item is not None and item != "leaf":
                    self.containers.add(t)
                    self.skel[t] = item
                elif N.static_slice(op.bound.get("idx")) is not None:
                    self.containers.add(t)  # a slice of a list is a list
                else:
                    self.containers.discard(t)
                return
        if prim.returns_tree:
            self.containers.add(t)
        if prim.public in ("ad.getitem", "ad.setitem", "ad.getattr", "ad.tree_add", "ad.part"):
            x = op.bound.get("x") if "x" in op.bound else op.bound.get("a")
            if isinstance(x, gast.Name) and x.id in self.containers:
                if prim.public != "ad.getitem" or _nested_container(self, op):
                    self.containers.add(t)
        if prim.public == "ad.tree_index_adjoint":
            x = op.bound.get("x")
            if isinstance(x, gast.Name) and x.id in self.containers:
                self.containers.add(t)
        if prim.public == "ad.cotangent_like":
            x = op.bound.get("x")
            if isinstance(x, gast.Name) and x.id in self.containers:
                self.containers.add(t)
        for pname in prim.same_structure:
            # helpers whose result has the structure of this operand (an inner
            # vmap's `ad.batch_broadcast(params, n)` of a list of (W, b) under an
            # outer vmap: a list, which ad.cotangent_like's rule must see)
            x = op.bound.get(pname)
            if isinstance(x, gast.Name) and x.id in self.containers:
                self.containers.add(t)
                if x.id in self.skel:
                    self.skel[t] = self.skel[x.id]
                break

    def inactive_assign(self, s: Any, op: Op, t: str) -> List[Any]:
        value = s.value
        names = N.names_in(value)
        if not any(n in self.bat for n in names):
            self._set(t, False)
            return [s]
        # attributes: per-example metadata
        if isinstance(value, gast.Attribute) and isinstance(value.value, gast.Name):
            base = value.value
            if base.id not in self.containers:
                if value.attr == "shape":
                    s.value = gast.Subscript(
                        value=value,
                        slice=gast.Slice(lower=N.const(1), upper=None, step=None),
                        ctx=gast.Load(),
                    )
                    self._set(t, False)
                    return [s]
                if value.attr == "ndim":
                    s.value = gast.BinOp(left=value, op=gast.Sub(), right=N.const(1))
                    self._set(t, False)
                    return [s]
                if value.attr == "size":
                    s.value = N.call("ad.example_size", [N.clone(base)])
                    self._set(t, False)
                    return [s]
                if value.attr == "dtype":
                    self._set(t, False)
                    return [s]
            self._set(t, True)
            return [s]
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Name):
            fname = value.func.id
            if fname == "len" and len(value.args) == 1:
                a = value.args[0]
                if isinstance(a, gast.Name) and a.id not in self.containers:
                    s.value = N.call("ad.example_len", [N.clone(a)])
                self._set(t, False)
                return [s]
            if fname in ("isinstance", "type", "hasattr", "callable", "id", "repr", "str"):
                self._set(t, False)
                return [s]
        if (
            isinstance(value, gast.Compare)
            and len(value.ops) == 1
            and isinstance(value.ops[0], (gast.In, gast.NotIn))
            and isinstance(value.comparators[0], gast.Name)
            and value.comparators[0].id in self.containers
            and not self.is_batched(value.left)
        ):
            # `k in d`: a batched dict has the same keys in every example
            self._set(t, False)
            return [s]
        if (
            isinstance(value, gast.Compare)
            and len(value.ops) == 1
            and isinstance(value.ops[0], (gast.Is, gast.IsNot))
            and any(
                isinstance(v, gast.Constant) and v.value is None
                for v in (value.left, value.comparators[0])
            )
        ):
            # `w is None`: a batched value is one object, None in no example
            # (histogram's optional weights)
            self._set(t, False)
            return [s]
        if isinstance(value, gast.Compare) and len(value.ops) == 1:
            prim = _compare_prim(value.ops[0])
            if prim is not None:
                bound = {"x": value.left, "y": value.comparators[0]}
                return self.prim_assign(s, Op("prim", prim=prim, bound=bound), t)
        if isinstance(value, gast.BoolOp):
            return self.boolop(s, value, t)
        if isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.Not):
            prim = registry.by_public("jnp.logical_not")
            return self.prim_assign(s, Op("prim", prim=prim, bound={"x": value.operand}), t)
        if (
            isinstance(value, gast.Call)
            and op.kind == "unknown"
            or (isinstance(value, gast.Call) and _is_builtin_conversion(value))
        ):
            out = self.loop_fallback(s, op, t, N.to_source(value.func))
            self._set(t, True)
            return out
        self._set(t, True)
        return [s]

    def boolop(self, s: Any, value: Any, t: str) -> List[Any]:
        """``a and b`` / ``a or b`` per example: ``where(a, b, a)`` / ``where(a, a, b)``."""
        where = registry.by_public("jnp.where")
        vals = list(value.values)
        out: List[Any] = []
        acc = vals[0]
        for i, v in enumerate(vals[1:]):
            last = i == len(vals) - 2
            name = t if last else self.namer.fresh(t + "_part")
            if isinstance(value.op, gast.And):
                bound = {"condition": acc, "x": v, "y": acc}
            else:
                bound = {"condition": acc, "x": acc, "y": v}
            st = self.at(N.assign(name, N.const(None)), s)
            out.extend(self.prim_assign(st, Op("prim", prim=where, bound=bound), name))
            acc = N.name(name)
        return out

    def expr_stmt(self, s: Any, op: Optional[Op]) -> List[Any]:
        printed = self.print_stmt(s, op)
        if printed is not None:
            return printed
        if op is not None and op.kind == "append":
            v = op.elts[0]
            lst = op.target
            self.containers.add(lst)
            self._appended_skeleton(lst, v)
            if self.is_batched(v) and lst not in self.bat:
                self.bat.add(lst)
                return [self.broadcast_stmt(lst, s), s]
            static = isinstance(v, gast.Name) and (v.id in self.static or v.id in self.tape_static)
            if lst in self.bat and not self.is_batched(v) and not static:
                # (static metadata is pushed as it is and popped unbatched)
                s.value.args = [N.call("ad.batch_broadcast", [N.clone(v), N.name(self.size_name)])]
            return [s]
        if (
            op is not None
            and op.kind == "prim"
            and any(
                self.is_batched(n)
                for v in op.bound.values()
                for n in (v if isinstance(v, list) else [v])  # (*args operands too)
            )
        ):
            tmp = self.namer.fresh("_unused")
            st = self.at(N.assign(tmp, s.value), s)
            return self.prim_assign(st, op, tmp)
        return [s]

    def _callee(self, func: Any) -> Any:
        """The object a call's ``func`` (a name or a dotted attribute) names, or None."""
        import builtins

        parts = []
        while isinstance(func, gast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, gast.Name):
            return None
        src = self.norm.src
        name = func.id
        if name in self.bindings:
            obj = self.bindings[name]
        elif name in src.closure:
            try:
                obj = src.closure[name].cell_contents
            except ValueError:
                return None
        elif name in src.globals:
            obj = src.globals[name]
        else:
            obj = getattr(builtins, name, None)
        for a in reversed(parts):
            obj = getattr(obj, a, None)
        return obj

    def print_stmt(self, s: Any, op: Optional[Op]) -> Optional[List[Any]]:
        """``print(...)`` / ``srcjax.debug.print(...)`` on batched values (or inside
        a per-example branch): ``ad.print_examples``, which prints one line per
        running example for ``debug.print`` (as JAX) and masks the examples not
        running in ``print``'s arrays."""
        import builtins

        value = s.value
        if (
            op is not None
            and op.kind == "prim"
            and op.prim.public == "ad.print_examples"
            and isinstance(value, gast.Call)
        ):
            return self.print_rows(s, value)
        if op is None or op.kind != "inactive" or not isinstance(value, gast.Call):
            return None
        if any(isinstance(a, gast.Starred) for a in value.args) or any(
            k.arg is None for k in value.keywords
        ):
            return None
        fn = self._callee(value.func)
        per_example = any(fn is p for p in PER_EXAMPLE_PRINTS)  # (fn: any object)
        if fn is not builtins.print and not per_example:
            return None
        operands = list(value.args) + [k.value for k in value.keywords]
        batched = [self.is_batched(a) for a in operands]
        if not any(batched) and not (per_example and self.example_masks):
            return None
        masks = gast.Tuple(elts=[N.clone(m) for m, _ in self.example_masks], ctx=gast.Load())
        pols = gast.Tuple(elts=[N.const(p) for _, p in self.example_masks], ctx=gast.Load())
        flags = gast.Tuple(elts=[N.const(b) for b in batched], ctx=gast.Load())
        args = gast.Tuple(elts=list(value.args), ctx=gast.Load())
        kws = gast.Dict(
            keys=[N.const(k.arg) for k in value.keywords],
            values=[k.value for k in value.keywords],
        )
        call = N.call("ad.print_examples", [value.func, masks, pols, flags, args, kws])
        return [self.at(gast.Expr(value=call), s)]

    def print_rows(self, s: Any, value: Any) -> Optional[List[Any]]:
        """``ad.print_examples(...)`` of an inner vmap, batched again: a loop over
        this pass's examples, each printing its own rows, skipping the examples
        that do not run the call here (this pass's per-example branches)."""
        batched_names = sorted(n for n in N.names_in(value) if n in self.bat)
        mask_names = [n for m, _ in self.example_masks for n in N.names_in(m)]
        if not batched_names and not self.example_masks:
            return None
        i = self.namer.fresh("row")
        names = set(batched_names) | {n for n in mask_names if n in self.bat}
        body, renamed = self._example_rows(names, i)
        call = gast.Expr(value=renamed(value))
        tests = []
        for m, pol in self.example_masks:
            m = renamed(m)
            tests.append(m if pol else gast.UnaryOp(op=gast.Not(), operand=m))
        if tests:
            test = tests[0] if len(tests) == 1 else gast.BoolOp(op=gast.And(), values=tests)
            body.append(gast.If(test=test, body=[call], orelse=[]))
        else:
            body.append(call)
        return [self._example_loop(i, body, s, "printing: one pass per example")]

    def _example_rows(self, names: Any, i: str) -> Tuple[List[Any], Callable[[Any], Any]]:
        """For a loop over the examples with index ``i``: statements binding each
        batched name in ``names`` to its row (``ad.tree_row``, which also takes
        containers), and a function renaming those names in a copy of a node."""
        renames: Dict[str, str] = {}
        body: List[Any] = []
        for n in sorted(names):
            r = self.namer.fresh(n + "_row")
            renames[n] = r
            body.append(N.assign(r, N.call("ad.tree_row", [N.name(n), N.name(i)])))

        def renamed(node: Any) -> Any:
            node = N.clone(node)
            for sub in gast.walk(node):
                if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Load):
                    sub.id = renames.get(sub.id, sub.id)
            return node

        return body, renamed

    def _example_loop(self, i: str, body: List[Any], s: Any, note: str) -> Any:
        """``for i in range(batch): body``, at ``s``'s origin, with ``note``."""
        loop = gast.For(
            target=N.name(i, store=True),
            iter=N.call(N.name("range"), [N.name(self.size_name)]),
            body=body,
            orelse=[],
            type_comment=None,
        )
        self.at(loop, s)
        loop.sj_note = note
        return loop

    # ------------------------------------------------------------------ fallback
    def loop_fallback(self, s: Any, op: Op, t: str, what: str) -> List[Any]:
        """``t = f(args)`` on batched args as a Python loop over the examples."""
        value = s.value
        parts = self.namer.fresh(t + "_rows")
        i = self.namer.fresh("row")
        # (ad.tree_row, not n[i]: n may be a container, or a dict key popped from a
        # batched tape, a str the same in every row)
        body, renamed = self._example_rows({n for n in N.names_in(value) if n in self.bat}, i)
        body.append(N.expr_stmt(N.call(N.attr(N.name(parts), "append"), [renamed(value)])))
        loop = self._example_loop(
            i, body, s, f"no batching rule for {what}: loop over the examples"
        )
        # ad.tree_stack stacks arrays as jnp.stack does, and containers leafwise
        # (a sparse cotangent need not be known as a container here)
        stack = "ad.tree_stack" if t in self.containers or self._may_be_tree(op) else "jnp.stack"
        if isinstance(s.value, gast.Call) and _user_class(self._callee(s.value.func)):
            # an instance of the user's class per example: kept as objects when
            # they are no arrays (ad.bgetitem and operators then act per object)
            stack = "ad.stack_objects"
            self.object_batches.add(t)
        return [
            self.at(N.assign(parts, gast.List(elts=[], ctx=gast.Load())), s),
            loop,
            self.at(N.assign(t, N.call(stack, [N.name(parts)])), s),
        ]

    @staticmethod
    def _may_be_tree(op: Op) -> bool:
        """Whether ``op`` may return a container: helpers of generated adjoint code
        (``ad.forget``, ``ad.tree_add`` ...) pass their argument's kind through."""
        if op is None or op.kind != "prim":
            return op is not None and op.kind == "unknown"
        # custom_jvp/custom_vjp functions may return tuples too
        return op.prim.returns_tree or op.prim.public.startswith("ad.") or op.prim.kind == "custom"

    # ------------------------------------------------------------------ joins
    def _dry(self, fn, *args):
        """Run ``fn`` on copies for the analysis only: (batched set after, containers)."""
        saved = (self.bat, self.containers, self.namer, self.bindings, self.dry)
        self.bat = set(self.bat)
        self.containers = set(self.containers)
        self.namer = Namer(set(self.namer.taken))
        self.namer.comprehension_results = saved[2].comprehension_results
        self.bindings = dict(self.bindings)
        self.dry = True
        try:
            args = N.clone(args)
            fn(*args)
            res = (self.bat, self.containers)
        finally:
            self.bat, self.containers, self.namer, self.bindings, self.dry = saved
        return res

    def if_stmt(self, s: Any, defined: Set[str]) -> List[Any]:
        cond = s.test
        known, value = self._constant_test(cond)
        if known:
            # `a if False else b`, `if DEBUG:` on a constant: the dead branch never
            # runs, so it is not batched (its batching may be impossible: a slice
            # with a per-example bound)
            if value:
                s.body = self.block(s.body, set(defined)) or [gast.Pass()]
                s.orelse = []
            else:
                s.body = [gast.Pass()]
                s.orelse = self.block(s.orelse, set(defined))
            return [s]
        if not self.is_batched(cond):
            entry = set(self.bat)
            body = self.block(s.body, set(defined))
            bat_then = self.bat
            self.bat = set(entry)
            orelse = self.block(s.orelse, set(defined))
            bat_else = self.bat
            joined = bat_then | bat_else
            for names, blk, stmts in ((bat_then, body, s.body), (bat_else, orelse, s.orelse)):
                reach = defined | set(N.assigned_names(stmts))
                for n in sorted(joined - names):
                    if n in reach:
                        blk.append(self.broadcast_stmt(n, s))
            s.body = body or [gast.Pass()]
            s.orelse = orelse
            self.bat = joined
            return [s]
        check: List[Any] = []
        if isinstance(cond, gast.Name):
            # one bool per example, or the ambiguity error (ad.batched_pred)
            check = [self.at(N.assign(cond.id, self._pred_check(N.name(cond.id), s)), s)]
        return check + self.batched_if(s, cond, defined)

    @staticmethod
    def _pred_check(cond: Any, s: Any) -> Any:
        """``ad.batched_pred(cond, 1, "file:line:col")``: one bool per example, or
        the ambiguity error located at the user's ``if``/``while``."""
        loc = Location.of(s)
        where = f"{loc.filename}:{loc.lineno}:{loc.col + 1}" if loc is not None else ""
        return N.call("ad.batched_pred", [cond, N.const(1), N.const(where)])

    def _constant_test(self, test: Any) -> Tuple[bool, Any]:
        """(True, value) when an ``if``'s test is a constant: a literal, or a name
        every binding of which is the same literal (the normalizer's ``cond =
        False`` for a conditional expression)."""
        if isinstance(test, gast.Constant) and isinstance(test.value, (bool, int, str)):
            return True, test.value
        seen = set()
        while (
            isinstance(test, gast.Name)
            and test.id not in self.bat
            and test.id not in self.params
            and test.id not in seen
        ):
            if isinstance(self.constant_values.get(test.id), (bool, int, str)):
                return True, self.constant_values[test.id]
            seen.add(test.id)
            test = self._copy_of(test.id)  # `cond = use_slice`: follow the copy
        return False, None

    def _copy_of(self, name: str) -> Any:
        """The name that every binding of ``name`` copies (``cond = flag``), or None."""
        src = self._copies.get(name)
        return (
            gast.Name(id=src, ctx=gast.Load(), annotation=None, type_comment=None) if src else None
        )

    def batched_if(self, s: Any, cond: Any, defined: Set[str]) -> List[Any]:
        take = cond
        assigned = [n for n in N.assigned_names(s.body + s.orelse)]
        entry = set(self.bat)
        # fast paths: every example takes the same branch
        all_then = self.block(N.clone(s.body), set(defined))
        bat1 = self.bat
        self.bat = set(entry)
        none_then = self.block(N.clone(s.orelse), set(defined))
        bat2 = self.bat
        self.bat = set(entry)
        static = self.static & set(assigned)
        mixed, bat3 = self.mixed_if(s, take, defined, assigned, static)
        # a name either branch assigns differs between the examples, unless both
        # bind it to static metadata (an axis, a shape): that stays unbatched
        joined = bat1 | bat2 | bat3 | (set(assigned) - static)
        for names, blk, stmts in ((bat1, all_then, s.body), (bat2, none_then, s.orelse)):
            reach = defined | set(N.assigned_names(stmts))
            for n in sorted(joined - names):
                if n in reach:
                    blk.append(self.broadcast_stmt(n, s))
        self.bat = joined
        all_test = N.call("jnp.all", [N.clone(take)])
        none_test = gast.UnaryOp(op=gast.Not(), operand=N.call("jnp.any", [N.clone(take)]))
        inner = gast.If(test=none_test, body=none_then or [gast.Pass()], orelse=mixed)
        self.at(inner, s)
        if not s.orelse:
            # no else branch: when no example takes the branch, nothing happens
            inner = gast.If(test=N.call("jnp.any", [N.clone(take)]), body=mixed, orelse=[])
            self.at(inner, s)
        node = gast.If(test=all_test, body=all_then or [gast.Pass()], orelse=[inner])
        self.at(node, s)
        node.sj_note = "batched condition"
        return [node]

    def _read_outside(self, n: str, s: Any) -> bool:
        """Whether the function reads ``n`` outside statement ``s`` (a name bound
        in one branch only and never read after it needs no per-example value)."""
        if self._loads is None:
            self._loads = collections.Counter(
                x.id
                for x in gast.walk(self.fdef)
                if isinstance(x, gast.Name) and isinstance(x.ctx, gast.Load)
            )
        inside = sum(
            1
            for x in gast.walk(s)
            if isinstance(x, gast.Name) and isinstance(x.ctx, gast.Load) and x.id == n
        )
        return self._loads[n] > inside

    def _check_in_place(self, s: Any) -> None:
        """A list changed in place (``append``/``pop``) in a branch of a batched ``if``
        or the body of a masked loop, that the branch did not create: both branches
        (every pass of the loop) run for every example on the same list object, so
        it would hold the items of the other branch (of the examples that finished):
        other examples' values (user E F15/F17). No per-example answer exists in
        one array (the lengths differ per example); JAX refuses too."""
        stmts = s.body + s.orelse
        local = set(N.assigned_names(stmts))
        for node in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
            if not isinstance(node, (gast.Expr, gast.Assign)):
                continue
            op = getattr(node, "sj_op", None)
            target, what = None, None
            if op is not None and op.kind in ("append", "pop") and op.target:
                target, what = op.target, op.kind
            elif (
                isinstance(node.value, gast.Call)
                and isinstance(node.value.func, gast.Attribute)
                and isinstance(node.value.func.value, gast.Name)
                and node.value.func.attr in _IN_PLACE
                and node.value.func.value.id in self.containers
            ):
                target, what = node.value.func.value.id, node.value.func.attr
            if target is None:
                continue
            if target in local or target in self.pure_tapes:
                continue
            if isinstance(node, gast.Assign) and [
                t.id for t in node.targets if isinstance(t, gast.Name)
            ] == [target]:
                continue  # `lst = ad.push(lst, v)`: a stack of generated adjoint code
            loc = Location.of(node)
            if target in self.namer.comprehension_results:
                raise TransformValueError(
                    "under vmap, the filter (`if`) of this comprehension or generator "
                    "keeps different items per example: the number of items would differ "
                    "per example",
                    loc,
                    hint="keep every item and mask the ones filtered out, e.g. "
                    "sum(jnp.where(e > 0, e * e, 0.0) for e in v)",
                )
            raise TransformValueError(
                f"under vmap, the branches of this `if` (or the passes of this loop) differ "
                f"per example and change the list `{target}` in place ({what}): for a "
                "mixed batch both branches run (every pass runs for every example) on the "
                "same list, so each example would also get the other branch's items (the "
                "other examples' passes)",
                loc,
                hint="keep one length for every example: build the values with jnp.where "
                "(or a fixed number of appends outside the per-example `if`/loop), or "
                "rebind a new list in both branches",
            )

    @contextlib.contextmanager
    def _some_examples(self):
        """While batching code that only some examples run (a per-example branch,
        a masked loop): collectives there are refused (``mixed_depth``)."""
        self.mixed_depth += 1
        try:
            yield
        finally:
            self.mixed_depth -= 1

    def mixed_if(
        self, s, take, defined, assigned, static: Set[str] = frozenset()
    ) -> Tuple[List[Any], Set[str]]:
        with self._some_examples():
            return self._mixed_if(s, take, defined, assigned, static)

    def _mixed_if(
        self, s, take, defined, assigned, static: Set[str] = frozenset()
    ) -> Tuple[List[Any], Set[str]]:
        out: List[Any] = []
        entry = set(self.bat)
        results = {}
        shared: Set[str] = set()  # lists both branches mutate in place (tapes)
        # stacks of generated adjoint code (`lst = ad.push(lst, v)`, popped by
        # `ad.pop_like(lst, like)`) are pushed and popped on every pass, as tapes
        # are, so that a masked loop that pushes and the masked loop that pops stay
        # in step: never masked (ad.branch_input copies a list) nor selected
        stacks = _stacks(s.body + s.orelse, self.tapes)
        self._check_in_place(s)
        for which, stmts, flag in (("then", s.body, True), ("else", s.orelse, False)):
            # both branches run one after the other on the same list objects: a list
            # the then branch made batched is batched when the else branch starts
            self.bat = set(entry) | shared
            stmts = N.clone(stmts)
            if not flag:
                # the then branch ran first on the same stacks: a stack it started
                # (`tape_bar = None`) holds its pushes, which the else branch must
                # not drop by starting it again
                started = set(N.assigned_names(s.body)) & stacks
                stmts = [
                    st for st in stmts if not (_is_none_init(st) and st.targets[0].id in started)
                ]
            local_assigned = [n for n in N.assigned_names(stmts) if n not in stacks]
            reads = [n for n in _reads_before_write(stmts) if n not in stacks]
            renames: Dict[str, str] = {}
            pre: List[Any] = []
            mask_args = [N.clone(take)] if flag else [N.clone(take), N.const(False)]
            for n in sorted(set(local_assigned) | set(reads)):
                needs_mask = (
                    n in reads and n in self.bat and n not in self.containers and n in defined
                )
                if n in local_assigned or needs_mask:
                    r = self.namer.fresh(f"{n}_{which}")
                    renames[n] = r
                    self.renamed.add(r)
                    if n in self.static:
                        self.static.add(r)
                    if needs_mask:
                        pre.append(
                            self.at(
                                N.assign(
                                    r,
                                    N.call(
                                        "ad.branch_input", [mask_args[0], N.name(n)] + mask_args[1:]
                                    ),
                                ),
                                s,
                            )
                        )
                        self.bat.add(r)
                    elif n in defined:
                        pre.append(self.at(N.assign(r, N.name(n)), s))
                        if n in self.bat:
                            self.bat.add(r)
                        if n in self.containers:
                            self.containers.add(r)
            _rename(stmts, renames)
            pre_defined = {renames[n] for n in renames if n in defined}
            self.example_masks.append((take, flag))
            try:
                body = self.block(stmts, set(defined) | pre_defined)
            finally:
                self.example_masks.pop()
            out.extend(pre)
            out.extend(body)
            results[which] = (renames, set(self.bat))
            shared = {n for n in self.bat if n in self.containers and n not in renames}
            shared |= {n for n in stacks if n in self.bat}
        # select
        r_then, bat_t = results["then"]
        r_else, bat_e = results["else"]
        self.bat = bat_t | bat_e
        take_id = take.id if isinstance(take, gast.Name) else None
        # the condition itself is selected last: the other selects read its old value
        order = sorted(set(assigned) - stacks, key=lambda n: (n == take_id, n))
        none_in_branches = {
            st.targets[0].id
            for st in gast.walk(gast.Module(body=list(s.body) + list(s.orelse), type_ignores=[]))
            if isinstance(st, gast.Assign)
            and isinstance(st.targets[0], gast.Name)
            and isinstance(st.value, gast.Constant)
            and st.value.value is None
        }
        for n in order:
            a = r_then.get(n, n if n in defined else None)
            b = r_else.get(n, n if n in defined else None)
            if a is None and b is None:
                continue
            if a is None or b is None:
                out.append(self.at(N.assign(n, N.name(a or b)), s))
                self._set(n, (a or b) in self.bat)
                continue
            lax_branches = getattr(s, "sj_lax_branches", None)
            if lax_branches is not None and lax_branches[1] == n:
                # lax.cond / lax.switch: JAX's output type check of the branches,
                # which both ran (for one branch taken by every example, only one
                # runs and nothing is checked)
                what, _, (name_a, name_b) = lax_branches
                check = N.call(
                    "ad.check_cond_types",
                    [
                        N.clone(take),
                        N.name(a),
                        N.name(b),
                        N.const(a in self.bat),
                        N.const(b in self.bat),
                        N.const(what),
                        N.const(name_a),
                        N.const(name_b),
                    ],
                )
                out.append(self.at(N.expr_stmt(check), s))
            if n in static and a not in self.bat and b not in self.bat:
                join = N.call("ad.static_join", [N.name(a), N.name(b)])
                out.append(self.at(N.assign(n, join), s))
                self._set(n, False)
                continue
            user = self.spec.user_names
            # (in a user's function, a name a branch sets to None itself is the
            # user's None: `y = x if c else None` lowers to such a temporary)
            set_none = user is None and n in none_in_branches
            if (
                (n in user if user is not None else True)
                and (n not in self.namer.made or set_none)
                and n not in self.tapes
                and self._read_outside(n, s)
            ):
                # a variable of the user's: both branches must give it one structure
                check = N.call(
                    "ad.check_branch_values",
                    [
                        N.clone(take),
                        N.name(a),
                        N.name(b),
                        N.const(a in self.bat),
                        N.const(b in self.bat),
                        N.const(n),
                        # None on a path that left the name unset (the batcher's and
                        # generated code's forward declarations): not checked; only
                        # the user's own `= None` is a value (a name read later only
                        # where it was set is valid Python)
                        N.const(n in self.spec.user_none or set_none),
                    ],
                )
                out.append(self.at(N.expr_stmt(check), s))
            av = (
                N.name(a)
                if a in self.bat
                else N.call("ad.batch_broadcast", [N.name(a), N.name(self.size_name)])
            )
            bv = (
                N.name(b)
                if b in self.bat
                else N.call("ad.batch_broadcast", [N.name(b), N.name(self.size_name)])
            )
            st = self.at(N.assign(n, N.call("ad.select", [N.clone(take), av, bv])), s)
            out.append(st)
            self.bat.add(n)
            if a in self.containers or b in self.containers:
                self.containers.add(n)
        return out, set(self.bat)

    # ------------------------------------------------------------------ loops
    def _loop_head(self, s: Any, defined: Set[str], body_fn) -> Set[str]:
        head = set(self.bat)
        for _ in range(20):
            saved = self.bat
            self.bat = set(head)
            end, _ = self._dry(body_fn, s, set(defined))
            self.bat = saved
            new = head | end
            if new == head:
                break
            head = new
        return head

    def _loop_temporaries(self, s: Any, body: List[Any], test: Any) -> Set[str]:
        """Names a loop body assigns that are temporaries of one pass: every read
        in the body follows a write in the same pass, the test does not read
        them, and nothing outside the loop does. A masked loop needs no
        per-example value for them (an example that stopped never reads its
        stale one), so they stay as the body computes them: a Python loop index
        over a Butcher tableau, the list of stage values it builds (batched only
        when their data is)."""
        live = _live_in(body) | set(N.names_in(test) if test is not None else ())
        # a name a tape pop restores is the value of an earlier pass (grad's
        # reverse loops), never a temporary
        popped = {
            st.targets[0].id
            for st in gast.walk(gast.Module(body=list(body), type_ignores=[]))
            if isinstance(st, gast.Assign)
            and isinstance(st.targets[0], gast.Name)
            and getattr(getattr(st, "sj_op", None), "kind", None) == "pop"
        }
        return {
            n
            for n in N.assigned_names(body)
            if n not in live
            and n not in self.tapes
            and n not in popped
            and n not in self.renamed
            and not self._read_outside(n, s)
        }

    def while_stmt(self, s: Any, defined: Set[str]) -> List[Any]:
        temps = self._loop_temporaries(s, s.body, s.test)

        def trial(loop, defs):
            if self.is_batched(loop.test):
                self.bat |= set(N.assigned_names(loop.body)) - temps
                self.bat |= set(n for n in N.names_in(loop.test))
            self.block(loop.body, defs)

        head = self._loop_head(s, defined, trial)
        if not any(n in head for n in N.names_in(s.test)):
            return self._plain_loop(s, defined, head)
        return self.batched_while(s, defined, head)

    def _plain_loop(self, s: Any, defined: Set[str], head: Set[str]) -> List[Any]:
        pre: List[Any] = []
        reach = set(defined)
        for n in sorted(head - self.bat):
            if n in reach:
                pre.append(self.broadcast_stmt(n, s))
        self.bat = set(head)
        inner_defined = set(defined) | set(N.assigned_names(s.body))
        if isinstance(s, gast.For):
            inner_defined.add(s.target.id)
        body = self.block(s.body, inner_defined)
        for n in sorted(head - self.bat):
            body.append(self.broadcast_stmt(n, s))
        self.bat = head | self.bat
        s.body = body or [gast.Pass()]
        return pre + [s]

    def batched_while(self, s: Any, defined: Set[str], head: Set[str]) -> List[Any]:
        with self._some_examples():
            return self._batched_while(s, defined, head)

    def _batched_while(self, s: Any, defined: Set[str], head: Set[str]) -> List[Any]:
        out: List[Any] = []
        test = s.test
        body = list(s.body)
        if isinstance(test, gast.Name):
            cond = test.id
        else:
            cond = self.namer.fresh("running")
            st = N.assign(cond, N.clone(test))
            st.sj_op = Op("inactive", what="loop test")
            self.at(st, s)
            body = body + [N.clone(st)]
            for b in body[-1:]:
                b.sj_op = Op("inactive", what="loop test")
            self.bat = set(self.bat)
            out.extend(self.stmt(st, defined))
        # loop-carried values all become batched (a pass's temporaries stay as the
        # body makes them)
        temps = self._loop_temporaries(s, body, s.test) - {cond}
        assigned = (set(N.assigned_names(body)) | {cond}) - temps
        # values first assigned in the body start as None (ad.select keeps the other
        # operand of a None), so every example keeps its own last value
        for n in sorted(assigned - set(defined) - {cond}):
            out.append(self.at(N.assign(n, N.const(None)), s))
        static = self.static & assigned  # stay Python values (see batched_if)
        # lists the body appends to (tapes) are made batched once, before the loop:
        # in the body, a batch_broadcast would re-broadcast them every iteration
        lists = _appended_lists(body) & set(defined)
        for n in sorted(((assigned & set(defined)) | lists) - self.bat - static):
            out.append(self.broadcast_stmt(n, s))
            self.bat.add(n)
        if cond not in self.bat:
            out.append(self.broadcast_stmt(cond, s))
            self.bat.add(cond)
        self.bat |= head & set(defined)
        inner = gast.If(test=N.name(cond), body=body, orelse=[])
        self.at(inner, s)
        inner_defined = set(defined) | assigned | temps
        mixed, bat_m = self.mixed_if(inner, N.name(cond), inner_defined, sorted(assigned), static)
        self.bat = set(bat_m) | (assigned - static)
        check = self.at(N.assign(cond, self._pred_check(N.name(cond), s)), s)
        loop = gast.While(test=N.call("jnp.any", [N.name(cond)]), body=[check] + mixed, orelse=[])
        self.at(loop, s)
        loop.sj_note = "batched loop: runs until every example is done"
        out.append(loop)
        return out

    def batched_for(self, s: Any, defined: Set[str]) -> List[Any]:
        with self._some_examples():
            return self._batched_for(s, defined)

    def _batched_for(self, s: Any, defined: Set[str]) -> List[Any]:
        """``for i in range(n)`` with a per-example ``n``: run to the largest trip
        count; the body is a batched ``if`` on ``start <= i < n``."""
        args = _range_args(s.iter)
        if args is None:
            raise TransformValueError(
                "vmap: a `for` loop over a per-example range with a step (or over "
                "`reversed`) is not supported",
                hint="use a `while` loop with a batched condition",
            )
        start, stop = (N.const(0), args[0]) if len(args) == 1 else (args[0], args[1])
        out: List[Any] = []
        lo = N.call("jnp.min", [N.clone(start)]) if self.is_batched(start) else N.clone(start)
        hi = N.call("jnp.max", [N.clone(stop)]) if self.is_batched(stop) else N.clone(stop)
        i = s.target.id
        active = self.namer.fresh("active")
        st = self.at(N.assign(active, N.const(None)), s)
        less = registry.by_public("jnp.less")
        body_pre = self.prim_assign(
            st, Op("prim", prim=less, bound={"x": N.name(i), "y": N.clone(stop)}), active
        )
        if self.is_batched(start):
            low = self.namer.fresh("started")
            st2 = self.at(N.assign(low, N.const(None)), s)
            ge = registry.by_public("jnp.greater_equal")
            body_pre += self.prim_assign(
                st2, Op("prim", prim=ge, bound={"x": N.name(i), "y": N.clone(start)}), low
            )
            both = N.call("jnp.logical_and", [N.name(active), N.name(low)])
            body_pre.append(self.at(N.assign(active, both), s))
        self.bat.add(active)
        temps = self._loop_temporaries(s, s.body, None) - {i}
        assigned = set(N.assigned_names(s.body)) - temps
        # values first assigned in the body start as None (see batched_while)
        for n in sorted(assigned - set(defined)):
            out.append(self.at(N.assign(n, N.const(None)), s))
        static = self.static & assigned  # stay Python values (see batched_if)
        lists = _appended_lists(s.body) & set(defined)  # (see batched_while)
        for n in sorted(((assigned & set(defined)) | lists) - self.bat - static):
            out.append(self.broadcast_stmt(n, s))
            self.bat.add(n)
        inner = gast.If(test=N.name(active), body=list(s.body), orelse=[])
        self.at(inner, s)
        inner_defined = set(defined) | assigned | temps | {i, active}
        mixed, bat_m = self.mixed_if(inner, N.name(active), inner_defined, sorted(assigned), static)
        self.bat = set(bat_m) | (assigned - static)
        descending = isinstance(s.iter, gast.Call) and getattr(s.iter.func, "id", "") == "reversed"
        rng = N.call(N.name("range"), [lo, hi])
        loop = gast.For(
            target=N.name(i, store=True),
            iter=N.call(N.name("reversed"), [rng]) if descending else rng,
            body=body_pre + mixed,
            orelse=[],
            type_comment=None,
        )
        self.at(loop, s)
        loop.sj_note = "batched trip count: runs to the longest example"
        out.append(loop)
        return out

    def for_stmt(self, s: Any, defined: Set[str]) -> List[Any]:
        if self.is_batched(s.iter):
            return self.batched_for(s, defined)

        def trial(loop, defs):
            self.block(loop.body, defs | {loop.target.id})

        head = self._loop_head(s, defined, trial)
        return self._plain_loop(s, defined, head)


def _copy_bindings(fdef: Any) -> Dict[str, Optional[str]]:
    """``name -> other`` for names every binding of which is ``name = other``
    (a plain name), else ``name -> None``."""
    binds: Dict[str, Optional[str]] = {}
    targets = set()
    for node in gast.walk(fdef):
        if (
            isinstance(node, gast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], gast.Name)
        ):
            t, v = node.targets[0].id, node.value
            src = v.id if isinstance(v, gast.Name) else None
            if binds.get(t, src) != src:
                src = None
            binds[t] = src
            targets.add(id(node.targets[0]))
    for node in gast.walk(fdef):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            if id(node) not in targets:
                binds[node.id] = None  # a loop target, a tuple unpacking ...
    return binds


def _user_class(obj: Any) -> bool:
    """Whether ``obj`` is a class of the user's (not a builtin, NumPy or srcjax
    type, nor a class registered as a pytree, whose leaves are batched)."""
    if not isinstance(obj, type):
        return False
    from ..tree_util import _REGISTRY

    module = getattr(obj, "__module__", "") or ""
    if module == "builtins" or module.split(".")[0] in ("numpy", "srcjax"):
        return False
    return obj not in _REGISTRY


def _range_args(it: Any) -> Optional[List[Any]]:
    if (
        isinstance(it, gast.Call)
        and isinstance(it.func, gast.Name)
        and it.func.id == "reversed"
        and len(it.args) == 1
    ):
        return _range_args(it.args[0])
    if (
        isinstance(it, gast.Call)
        and isinstance(it.func, gast.Name)
        and it.func.id == "range"
        and 1 <= len(it.args) <= 2
        and not it.keywords
    ):
        return list(it.args)
    return None


#: the skeleton of a container whose items' structure is unknown (they are
#: taken for leaves, as for any container of unknown structure)
_SOME_TREE = ("tree", None)


def _item_skeleton(skel: Any, idx: Any) -> Any:
    """The structure of ``x[idx]`` for a container of structure ``skel``."""
    if not isinstance(skel, tuple):
        return None
    kind = skel[0]
    sl = N.static_slice(idx)
    if kind == "seq":
        if isinstance(idx, gast.Slice) or sl is not None:
            return skel
        return skel[1]
    if kind == "items" and sl is not None:  # l[1:3] of a list display: its items
        return ("items", tuple(skel[1][sl]))
    ok, val = _const_value(idx) if idx is not None else (False, None)
    if kind == "items" and ok and isinstance(val, int):
        try:
            return skel[1][val]
        except IndexError:
            return None
    if kind == "items" and not isinstance(idx, gast.Slice) and skel[1]:
        # an index known only at run time (a loop's): the items' common structure
        first = skel[1][0]
        if all(i == first for i in skel[1]):
            return first
    if kind in ("dict", "class") and ok:
        return dict(skel[1]).get(val)
    return None


def _nested_container(bp: Batcher, op: Op) -> bool:
    """Whether ``x[idx]`` of a container is itself a container: unknown statically
    (a list of arrays or a list of lists); assume an item is a leaf unless the
    container came from a parameter marked as a tree of trees."""
    return False


def _compare_prim(op: Any):
    table = {
        gast.Lt: "jnp.less",
        gast.LtE: "jnp.less_equal",
        gast.Gt: "jnp.greater",
        gast.GtE: "jnp.greater_equal",
        gast.Eq: "jnp.equal",
        gast.NotEq: "jnp.not_equal",
    }
    name = table.get(type(op))
    return registry.by_public(name) if name else None


def _is_builtin_conversion(call: Any) -> bool:
    return isinstance(call.func, gast.Name) and call.func.id in ("float", "int", "bool", "complex")


def _tape_names(stmts: List[Any]) -> Set[str]:
    """Names of the lists anything in ``stmts`` pushes to or pops from."""
    out: Set[str] = set()
    for node in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
        op = getattr(node, "sj_op", None)
        if op is not None and op.kind in ("append", "pop") and op.target:
            out.add(op.target)
    return out


#: methods that change a list or dict in place
_IN_PLACE = {"append", "pop", "extend", "insert", "remove", "clear", "popitem", "update"}


def _pure_tapes(stmts: List[Any]) -> Set[str]:
    """Lists that are read nowhere but as the list an append/pop works on."""
    loads: Dict[str, int] = {}
    tape_uses: Dict[str, int] = {}
    for node in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            loads[node.id] = loads.get(node.id, 0) + 1
        if (
            isinstance(node, gast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], gast.Name)
        ):
            # `tape = tape + [v]`: higher-order adjoint code replaying pops
            n = node.targets[0].id
            if isinstance(node.value, gast.Name):
                # `tape_then = tape`: a copy made by an earlier vmap's branches
                m = node.value.id
                tape_uses[m] = tape_uses.get(m, 0) + 1
                continue
            uses = [s for s in gast.walk(node.value) if isinstance(s, gast.Name) and s.id == n]
            if uses:
                tape_uses[n] = tape_uses.get(n, 0) + len(uses)
                continue
        op = getattr(node, "sj_op", None)
        if (
            op is not None
            and op.kind in ("append", "pop")
            and op.target
            and isinstance(node, (gast.Expr, gast.Assign))
        ):
            for sub in gast.walk(node.value):
                if isinstance(sub, gast.Name) and sub.id == op.target:
                    tape_uses[op.target] = tape_uses.get(op.target, 0) + 1
    return {n for n, k in tape_uses.items() if loads.get(n, 0) == k}


def _stacks(stmts: List[Any], tapes: Optional[Set[str]] = None) -> Set[str]:
    """Lists a block only pushes to (``lst = ad.push(lst, v)``) and pops from
    (``ad.pop_like(lst, like)``, ``lst.pop()``): the tapes and cotangent tapes
    of generated adjoint code. A name also bound otherwise is a value, not a
    stack."""
    pushed: Dict[str, int] = {}
    stores: Dict[str, int] = {}
    for node in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
        op = getattr(node, "sj_op", None)
        if _is_none_init(node) and (tapes is None or node.targets[0].id in tapes):
            # `tape_bar = None`: a cotangent tape started empty
            pushed[node.targets[0].id] = pushed.get(node.targets[0].id, 0) + 1
        elif (
            isinstance(node, gast.Assign)
            and op is not None
            and op.kind == "append"
            and [t.id for t in node.targets if isinstance(t, gast.Name)] == [op.target]
        ):
            pushed[op.target] = pushed.get(op.target, 0) + 1
        elif op is not None and op.kind == "pop" and isinstance(node, (gast.Assign, gast.Expr)):
            pushed.setdefault(op.target, 0)
    return {n for n, k in pushed.items() if stores.get(n, 0) == k}


def _is_static_expr(e: Any) -> bool:
    """A slice of constants, or a tuple of them and constants (an index a branch
    of generated adjoint code binds: ``slice(None, None, -1)``). Plain
    constants are not: ``k = 1`` / ``k = 2`` in two branches is per-example data."""
    if isinstance(e, gast.Tuple):
        return any(_is_static_expr(x) for x in e.elts) and all(
            _is_static_expr(x) or _is_constant(x) for x in e.elts
        )
    if isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and e.func.id == "slice":
        return not e.keywords and all(_is_constant(a) for a in e.args)
    return False


def _is_constant(e: Any) -> bool:
    if isinstance(e, gast.Constant):
        return True
    return (
        isinstance(e, gast.UnaryOp)
        and isinstance(e.op, gast.USub)
        and isinstance(e.operand, gast.Constant)
    )


def _static_names(stmts: List[Any]) -> Set[str]:
    """Names every binding of which in ``stmts`` (the whole function) is static
    metadata: a shape or rank query, an axis from constants
    (``ad.axis_or_zero(None)``), a constant slice. Generated adjoint code binds
    such values in the branches of an ``if``; under a batched condition they
    must stay Python values (joined by ``ad.static_join``), not become
    per-example arrays selected like data."""
    found: Set[str] = set()
    constants = _constant_names(stmts)
    while True:  # static metadata computed from static metadata: to a fixed point
        more = _static_names_given(stmts, found, constants)
        if more <= found:
            return found
        found |= more


def _literal_bindings(stmts: List[Any]) -> Dict[str, Optional[list]]:
    """``name -> [value of each binding]`` when every binding of the name in
    ``stmts`` is a literal display (a constant, or a tuple/list of them), else
    ``name -> None``."""
    import ast

    out: Dict[str, Optional[list]] = {}
    seen: Set[int] = set()  # target nodes of the assignments looked at
    for node in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(node, gast.Assign) and len(node.targets) == 1:
            tgt = node.targets[0]
            if isinstance(tgt, gast.Name):
                seen.add(id(tgt))
                vals = out.setdefault(tgt.id, [])
                try:
                    val = ast.literal_eval(N.to_source(node.value).strip())
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    out[tgt.id] = None
                    continue
                if vals is not None:
                    vals.append(val)
                continue
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            if id(node) not in seen:
                out[node.id] = None
    return out


def _constant_values(stmts: List[Any]) -> Dict[str, Any]:
    """``name -> value`` for names every binding of which in ``stmts`` is one and
    the same constant (a string, number, bool or tuple of them)."""
    return {
        n: vals[0]
        for n, vals in _literal_bindings(stmts).items()
        if vals
        and isinstance(vals[0], (str, int, float, bool, tuple))
        and all(type(v) is type(vals[0]) and v == vals[0] for v in vals)
    }


def _constant_names(stmts: List[Any]) -> Set[str]:
    """Names every binding of which is a constant or a tuple/list display of them
    (an option a composition passes on: ``window_dimensions = (1, 2, 2)``)."""
    return {n for n, vals in _literal_bindings(stmts).items() if vals}


def _static_names_given(stmts: List[Any], known: Set[str], constants: Set[str]) -> Set[str]:
    """One round of :func:`_static_names`, taking the names ``known`` as static:
    a ``static_result`` primitive (the conv plans) or an index into a tuple is
    static when its operands are (static names, constants, or names bound only
    to constant displays)."""

    def operand_ok(v: Any) -> bool:
        if isinstance(v, gast.Name):
            return v.id in known or v.id in constants
        return v is None or _is_constant(v) or _is_static_expr(v)

    plain: Set[int] = set()  # Name nodes bound by a static assignment
    neutral: Set[int] = set()  # ... by `x = None` (pre-initialized) or a tape pop
    for node in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
        if not isinstance(node, gast.Assign) or len(node.targets) != 1:
            continue
        tgt = node.targets[0]
        if not isinstance(tgt, gast.Name):
            continue
        op = getattr(node, "sj_op", None)
        if (isinstance(node.value, gast.Constant) and node.value.value is None) or (
            op is not None and op.kind == "pop"
        ):
            # a pop restores what the same name pushed (the tape's restore
            # pattern), so it is static when every other binding is
            neutral.add(id(tgt))
            continue
        ok = _is_static_expr(node.value)
        if not ok and op is not None and op.kind == "prim":
            public = op.prim.public
            # the shape queries are static whatever their operands are; others
            # when their operands are constants
            ok = op.prim.shape_query is not None or (
                op.prim.static_for_constants
                and all(
                    _is_constant(v)
                    for v in op.bound.values()
                    for v in (v if isinstance(v, list) else [v])
                )
            )
            if not ok and (op.prim.static_result or (known and public == "ad.getitem")):
                ok = all(
                    operand_ok(v)
                    for v in op.bound.values()
                    for v in (v if isinstance(v, list) else [v])
                )
        elif not ok and op is not None and op.kind == "copy" and known:
            ok = isinstance(node.value, gast.Name) and node.value.id in known
        if ok:
            plain.add(id(tgt))
    good: Dict[str, bool] = {}
    seen: Set[str] = set()
    for node in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            if id(node) in neutral:
                good.setdefault(node.id, True)
                continue
            good[node.id] = good.get(node.id, True) and id(node) in plain
            seen.add(node.id)
    return {n for n, ok in good.items() if ok and n in seen}


def _appended_lists(stmts: List[Any]) -> Set[str]:
    """Names of the lists ``stmts`` append to (``lst.append(v)``)."""
    out: Set[str] = set()
    for node in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
        op = getattr(node, "sj_op", None)
        if op is not None and op.kind == "append" and op.target:
            out.add(op.target)
    return out


def _is_none_init(node: Any) -> bool:
    return (
        isinstance(node, gast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], gast.Name)
        and isinstance(node.value, gast.Constant)
        and node.value.value is None
    )


def _reads_before_write(stmts: List[Any]) -> List[str]:
    """Names a block reads before (possibly) writing them."""
    written: Set[str] = set()
    out: List[str] = []

    def visit(block):
        for st in block:
            if isinstance(st, gast.If):
                for n in N.names_in(st.test):
                    if n not in written and n not in out:
                        out.append(n)
                visit(st.body)
                visit(st.orelse)
                continue
            if isinstance(st, (gast.While, gast.For)):
                for n in N.names_in(st.test if isinstance(st, gast.While) else st.iter):
                    if n not in written and n not in out:
                        out.append(n)
                for n in N.names_in(gast.Module(body=st.body, type_ignores=[])):
                    if n not in written and n not in out:
                        out.append(n)
                written.update(N.assigned_names([st]))
                continue
            value = st.value if isinstance(st, (gast.Assign, gast.Expr)) else st
            for n in N.names_in(value):
                if n not in written and n not in out:
                    out.append(n)
            written.update(N.assigned_names([st]))

    visit(stmts)
    return out


def _live_in(stmts: List[Any]) -> Set[str]:
    """Names a block may read before writing them in the same pass (its live-in
    set). More precise than :func:`_reads_before_write` in nested loops: a
    ``for`` target is written before its body runs, and a name the nested body
    writes before reading it is not live there; a loop's or a branch's writes
    count after it only where every path makes them (both branches of an
    ``if``; never for a loop, which may run zero times)."""
    live: Set[str] = set()

    def read(names, written):
        for n in names:
            if n not in written:
                live.add(n)

    def visit(block, written: Set[str]) -> Set[str]:
        written = set(written)
        for st in block:
            if isinstance(st, gast.If):
                read(N.names_in(st.test), written)
                a = visit(st.body, written)
                b = visit(st.orelse, written)
                written |= a & b
                continue
            if isinstance(st, gast.For):
                read(N.names_in(st.iter), written)
                inner = set(written) | {
                    x.id for x in gast.walk(st.target) if isinstance(x, gast.Name)
                }
                # a name the body reads before writing it is carried between its
                # passes: live here unless written before the loop
                visit(st.body, inner)
                continue
            if isinstance(st, gast.While):
                read(N.names_in(st.test), written)
                visit(st.body, written)
                continue
            if isinstance(st, gast.Assign):
                read(N.names_in(st.value), written)
                for t in st.targets:
                    if not isinstance(t, gast.Name):
                        read(N.names_in(t), written)
                written |= set(N.assigned_names([st]))
                continue
            read(N.names_in(st), written)
            written |= set(N.assigned_names([st]))
        return written

    visit(stmts, set())
    return live


def _rename(stmts: List[Any], renames: Dict[str, str]) -> None:
    if not renames:
        return
    for st in stmts:
        for node in gast.walk(st):
            if isinstance(node, gast.Name) and node.id in renames:
                node.id = renames[node.id]
            op = getattr(node, "sj_op", None)
            if op is not None:
                _rename_op(op, renames)
            lax_branches = getattr(node, "sj_lax_branches", None)
            if lax_branches is not None and lax_branches[1] in renames:
                what, t, names = lax_branches
                node.sj_lax_branches = (what, renames[t], names)


def _rename_op(op: Op, renames: Dict[str, str]) -> None:
    def fix(v):
        if isinstance(v, list):
            return [fix(x) for x in v]
        if v is None:
            return v
        for node in gast.walk(v):
            if isinstance(node, gast.Name) and node.id in renames:
                node.id = renames[node.id]
        return v

    op.bound = {k: fix(v) for k, v in op.bound.items()}
    op.elts = [fix(e) for e in op.elts]
    if op.target in renames:
        op.target = renames[op.target]


# --------------------------------------------------------------------------- entry
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
    tapes = _pure_tapes(stmts)
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
