"""The batching pass's state (:class:`Batcher`: which names are batched, the
containers and their skeletons, the examples running) and its walk over
blocks and statements; the rewriting of each kind of statement is in the
mixins it is assembled from."""

from __future__ import annotations

import collections
from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple

import gast

from ...analysis.activity import object_method_error
from ...analysis.ranks import scalar_names
from ...analysis.static_names import constant_values, static_names
from ...analysis.tapes import pure_tape_lists, tape_lists
from ...errors import Location, TransformValueError
from ...frontend import nodes as N
from ...frontend.normalize import Namer, Normalized, Op
from .branches import _Branches
from .helpers import _copy_bindings
from .loops import _Loops
from .prints import _Prints
from .spec import BatchSpec
from .statements import _Statements


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


class Batcher(_Statements, _Prints, _Branches, _Loops):
    """vmap over one normalized function (see :mod:`srcjax.transforms.batching`)."""

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
        #: names bound only to static metadata anywhere in the function (see static_names)
        self.static = static_names(self.fdef.body)
        #: names holding a batch of a user's class instances (ad.stack_objects)
        self.object_batches: Set[str] = set()
        #: lists pushed to or popped from anywhere in the function: only these can be
        #: a tape started as `tape_bar = None` (the cotangent of a tuple rebound in a
        #: branch, `t_bar = None`, is a value: user E F16)
        self.tapes = tape_lists(self.fdef.body)
        self._loads: Optional[collections.Counter] = None  # name -> reads (see _read_outside)
        #: names a per-example `if` made for its branches (`v_then`): copies of the
        #: code read them where _read_outside cannot see (its counts are the
        #: function's as it came in)
        self.renamed: Set[str] = set()
        #: lists only ever appended to and popped from (grad's tapes): in-place
        #: changes of these under a batched `if` are the tapes' own business
        self.pure_tapes = pure_tape_lists(self.fdef.body)
        #: names every binding of which is the same constant (a string, number,
        #: or a tuple of them): static arguments to rules (see BatchCall.static)
        self.constant_values = constant_values(self.fdef.body)
        #: names holding a 0-d value per example wherever bound (jnp.sum(x), 2.0 *
        #: that): aligning ranks with them needs no ad.expand_to_rank (calls.lift)
        self.scalars = scalar_names(self.fdef)
        # name -> the name every binding of it copies (`cond = flag`), else None
        self._copies = _copy_bindings(self.fdef)
        from ...primitives import batch_rules  # noqa: F401  (registers rules and helpers)

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
