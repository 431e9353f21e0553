"""The normalizer: :class:`Normalizer` (its state, the statement emitter and
the per-function driver :meth:`Normalizer.run`), assembled from one mixin
per job (see the package docstring), and :func:`normalize`, the
frontend's entry point.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Dict, List, Optional, Set

import gast

from ...errors import (
    UnsupportedSyntaxError,
)
from .. import nodes as N
from ..source import FunctionSource
from .analyses import (
    _MUTATORS,
    _container_kinds,
    _function_names,
    _own_locals,
    _shared_mutation,
    _store_counts,
)
from .anf import _GENERATED_NAMES, Namer, Normalized, Op
from .calls import CallsMixin
from .common import _FnChoice, _ops_table, _unsupported
from .comprehensions import ComprehensionsMixin
from .containers import ContainersMixin
from .copies import Calls, other_copies, plain_copies
from .expressions import ExpressionsMixin
from .functions import FunctionsMixin
from .inline import _PACKAGE, InlineMixin
from .lax_calls import LaxCallsMixin
from .loops import LoopsMixin
from .lower import _Lowerer
from .nested import NestedMixin
from .reached import item_mutation
from .resolve import ResolveMixin
from .scope import ScopeMixin
from .starargs import star_arg_nodes
from .statements import StatementsMixin
from .trees import TreesMixin
from .typed import TypedMixin
from .typetree import ClassKind

_UNSUPPORTED = {
    gast.Try: "`try` blocks",
    gast.With: "`with` blocks (other than `named_scope`, `default_matmul_precision`)",
    gast.AsyncWith: "`async with`",
    gast.AsyncFor: "`async for`",
    gast.AsyncFunctionDef: "`async def`",
    gast.ClassDef: "class definitions",
    gast.Global: "`global` statements",
    gast.Nonlocal: "`nonlocal` statements",
    gast.Import: "`import` inside the function",
    gast.ImportFrom: "`import` inside the function",
}


_DICT_MUTATORS = frozenset({"pop", "popitem", "update", "setdefault", "clear"})


def _in_package(filename: Any) -> bool:
    """Whether ``filename`` is one of srcjax's files (not generated code, whose
    lines keep the user's lines they come from)."""
    return bool(filename) and os.path.abspath(filename).startswith(_PACKAGE)


def _at_location(stmt: Any, loc: Any) -> None:
    """``stmt`` of srcjax's own code (a file of the package) inlined at the
    user's call ``loc``: placed at that call (its origin comment, and so an
    error it raises at run time, names the user's line: ``lax.add(f32, i32)``
    inside ``jit``, not srcjax's ``lax/_ops/elementwise.py``)."""
    stmt.lineno = stmt.end_lineno = stmt.sj_origin = loc.lineno
    stmt.col_offset = loc.col
    stmt.end_col_offset = loc.end_col
    stmt.sj_file = loc.filename


def _forwards_kwargs(fnode: Any, value: Any) -> bool:
    """``**value`` in a call of ``fnode``'s body passes on ``fnode``'s own
    ``**kwargs`` parameter, which the body never rebinds or changes (so the
    keywords it holds are the ones the inlined call bound)."""
    kwarg = fnode.args.kwarg
    if kwarg is None or not isinstance(value, gast.Name) or value.id != kwarg.id:
        return False
    if kwarg.id in set(N.assigned_names(fnode.body)):
        return False
    for n in N.walk(gast.Module(body=fnode.body, type_ignores=[])):
        if (
            isinstance(n, gast.Attribute)
            and isinstance(n.value, gast.Name)
            and n.value.id == kwarg.id
            and n.attr in _DICT_MUTATORS
        ):
            return False
        if (
            isinstance(n, gast.Subscript)
            and isinstance(n.value, gast.Name)
            and n.value.id == kwarg.id
            and not isinstance(n.ctx, gast.Load)
        ):
            return False
    return True


def _root_renames(namer: Namer, names: Set[str]) -> Dict[str, str]:
    """New names for the variables of a transformed function that generated code
    would confuse with its own (``ad`` -> ``ad_``, see ``_GENERATED_NAMES``)."""
    return {n: namer.fresh(n) for n in sorted(names & _GENERATED_NAMES)}


def param_names(src: FunctionSource) -> List[str]:
    """The parameter names of ``src`` as its normalized (generated) code has them:
    the user's, except those renamed by :func:`_root_renames`."""
    node = src.node
    params = [a.id for a in node.args.args]
    own = set(params) | _own_locals(node.body)
    renames = _root_renames(Namer(own | set(N.names_in(node))), own)
    return [renames.get(p, p) for p in params]


def _is_docstring(s) -> bool:
    return (
        isinstance(s, gast.Expr)
        and isinstance(s.value, gast.Constant)
        and isinstance(s.value.value, str)
    )


def normalize(src: FunctionSource, kinds: Optional[tuple] = None) -> Normalized:
    """Normalize ``src`` (see module docstring). Raises srcjax errors with locations.

    ``kinds``: the argument kinds the code is specialized on (``api._kind``), one
    per parameter; a :class:`ClassKind` tells the class (and the classes inside)
    of an argument, whose method calls are then inlined."""
    types: Dict[str, Any] = {}
    fns: Dict[str, Any] = {}  # parameters holding a function (api._kind's ("fn", f))
    seq_params = set()  # lists, tuples (dicts): `l * 2` repeats, `l + m` joins
    if kinds:
        for a, k in zip(src.node.args.args, kinds):
            if isinstance(k, ClassKind) and isinstance(k.types, tuple) and k.types[:1] == ("fn",):
                fns[a.id] = k.types[1]
            elif isinstance(k, ClassKind):
                types[a.id] = k.types
            elif k == "tree":
                seq_params.add(a.id)
    norm = Normalizer(src, types=types, seq_params=frozenset(seq_params))
    reassigned = set(N.assigned_names(src.node.body))
    norm.static_params.update({p: f for p, f in fns.items() if p not in reassigned})
    fdef = norm.run()
    if _is_user_code(src):
        from ..keyreuse import report

        report(fdef)
    return Normalized(fdef, src, norm.namer, norm.bindings, norm.deps)


def _is_user_code(src: FunctionSource) -> bool:
    """Not code srcjax generated (a transform's output read by the next one, or a
    fixed-arity wrapper): the key-reuse check looks at what the user wrote."""
    return not hasattr(src.fn, "__srcjax_deps__") and not src.filename.startswith("<srcjax")


_MISSING = object()


def current_value(where: Any, key: Any) -> Any:
    """What a module global (``where`` its dict, ``key`` its name) or a closure
    cell (``where``, ``key`` None) holds now; ``_MISSING`` when unbound."""
    if isinstance(where, dict):
        return where.get(key, _MISSING)
    try:
        return where.cell_contents
    except (ValueError, AttributeError):
        return _MISSING


def aval_holds(where: Any, key: Any, obj: tuple) -> bool:
    """Whether the variable still holds an array of the type, shape and dtype
    ``obj`` (a jit specialization's guard on a global array it reads live,
    see :mod:`srcjax.jit_api.global_facts`)."""
    t, shape, dtype = obj
    cur = current_value(where, key)
    return type(cur) is t and cur.shape == shape and cur.dtype == dtype


def aval_guard_desc(obj: tuple) -> list:
    """The JSON form of the guard :func:`aval_holds` checks (the disk cache's)."""
    t, shape, dtype = obj
    return [f"{t.__module__}.{t.__qualname__}", list(shape), dtype.str]


def dependencies_valid(deps: List[tuple]) -> bool:
    """True when every inlined callee is still bound where it was found (and
    every global array a specialization knows the shape of still has it)."""
    for kind, where, key, obj in deps:
        if kind == "aval":
            if not aval_holds(where, key, obj):
                return False
            continue
        if kind == "items":  # a list read when transforming (lax.switch's branches)
            if len(where) != len(obj) or any(a is not b for a, b in zip(where, obj)):
                return False
            continue
        if kind == "dict":
            try:
                cur = where[key]
            except KeyError:
                cur = _MISSING
        elif kind == "cell":
            try:
                cur = where.cell_contents
            except ValueError:
                cur = _MISSING
        else:
            cur = getattr(where, key, _MISSING)
        if cur is not obj:
            return False
    return True


class Normalizer(
    ScopeMixin,
    StatementsMixin,
    ExpressionsMixin,
    ContainersMixin,
    ComprehensionsMixin,
    LoopsMixin,
    ResolveMixin,
    CallsMixin,
    TypedMixin,
    FunctionsMixin,
    InlineMixin,
    TreesMixin,
    NestedMixin,
    LaxCallsMixin,
):
    """ANF conversion and call resolution for one function (and what it inlines)."""

    def __init__(
        self,
        src: FunctionSource,
        namer: Optional[Namer] = None,
        stack: tuple = (),
        bindings: Optional[Dict[str, Any]] = None,
        prefix: str = "",
        root_globals: Optional[dict] = None,
        deps: Optional[List[tuple]] = None,
        outer: Optional["Normalizer"] = None,
        types: Optional[Dict[str, Any]] = None,
        root_closure: Optional[dict] = None,
        seq_params: frozenset = frozenset(),
    ) -> None:
        self.src = src
        #: variable -> type tree (see :func:`type_tree`) of the values known to be
        #: registered pytree class instances (or containers of them): their method
        #: calls are inlined. Shared with inlined callees (names are unique).
        self.types: Dict[str, Any] = types if types is not None else {}
        self.stack = stack + (src.fn,)
        self.prefix = prefix
        self.bindings = bindings if bindings is not None else {}
        self.deps: List[tuple] = deps if deps is not None else []
        self.root_globals = root_globals if root_globals is not None else src.globals
        #: the closure cells the generated module reads live (the root function's)
        self.root_closure = root_closure if root_closure is not None else src.closure
        node = src.node
        params = [a.id for a in node.args.args]
        self.params = params
        kwonly = {a.id for a in node.args.kwonlyargs}  # (bound when inlined)
        if node.args.vararg is not None:  # `*xs` (bound to a tuple when inlined)
            kwonly.add(node.args.vararg.id)
        if node.args.kwarg is not None:  # `**kwargs` (a dict, bound when inlined)
            kwonly.add(node.args.kwarg.id)
        self.locals: Set[str] = set(params) | kwonly | _own_locals(node.body)
        self.local_fns: Dict[str, Any] = {}  # renamed name -> nested FunctionDef
        #: renamed name -> the _FnChoice that binding sites inside the ``if`` being
        #: normalized add to (see :meth:`bind_local_fn`)
        self.fn_choices: Dict[str, _FnChoice] = {}
        #: source names this function binds to local functions somewhere; other
        #: bindings of such a name to a known callable (``act = jnp.tanh``) are
        #: alternatives too
        self.fn_names: Set[str] = _function_names(node.body)
        #: renamed name -> the functions a list display bound to it holds (a
        #: name only iterated over by `for`: the loop is unrolled)
        self.fn_lists: Dict[str, List[Any]] = dict(outer.fn_lists) if outer is not None else {}
        #: the break/continue flags of the lowering (see _Lowerer), and the values
        #: known while transforming of those set in straight-line code (a pass of
        #: an unrolled loop: `if layer is None: continue` sets `skip = True`, and
        #: the rest of the pass, guarded by `if not skip:`, is not transformed)
        self.flag_names: Set[str] = set(outer.flag_names) if outer is not None else set()
        self.known_flags: Dict[str, bool] = {}
        #: while one of our local functions is inlined for a callee: the callee's
        #: local functions among its arguments (see call_local)
        self.lent_fns: Dict[str, Any] = {}
        #: the local function this (inlined) function returns, for its caller
        self.returned_fn: Any = None
        #: the local function the last inlined call returned (see assign_target)
        self.pending_fn: Any = None
        #: locals bound once, to a host value (see :meth:`_is_host`)
        self.host_names: Set[str] = set()
        self.store_counts: Dict[str, int] = _store_counts(node.body)
        #: inlined into another function: its call binds keyword-only parameters
        self.inlined = False
        #: (user's Location, public name or None) of the call that inlined srcjax's
        #: own code here (inline.py), else None
        self.user_call = None
        #: the `**kwargs` parameter of this inlined function -> the keywords it holds
        self.kwarg_keys: Dict[str, List[str]] = {}
        #: parameters (source names) an inlining call binds to known functions
        self.static_params: Dict[str, Any] = {}
        if outer is not None:
            # a nested function: the enclosing function's locals are visible
            self.locals |= outer.locals
            self.local_fns.update(outer.local_fns)
        taken = set(self.locals) | set(N.names_in(node))
        self.rename: Dict[str, str] = dict(outer.rename) if outer is not None else {}
        if namer is None:
            # the function being transformed: its variables named like what
            # generated code uses (`ad`, `np`, `min` ...) get other names (inlined
            # callees are renamed anyway)
            namer = Namer(taken)
            self.rename.update(_root_renames(namer, self.locals))
            for old, new in self.rename.items():
                if old in self.types:
                    self.types[new] = self.types.pop(old)
        self.namer = namer
        # the globals this function reads are never handed out as temporaries (a
        # temporary is local: one named `flip` would hide the function `flip`)
        namer.taken |= set(N.names_in(node)) - self.locals
        self.ops = _ops_table()
        #: renamed name -> the display or comprehension of lax.switch branches it
        #: is bound to (see :meth:`function_list_binding`)
        self.function_lists: Dict[str, Any] = {}
        self.out: List[Any] = []
        self.origin: Any = None
        #: normalized name -> the length of the tuple/list display it holds, where
        #: every assignment of it seen so far holds a display of that length (-1
        #: where two disagree); shared with inlined callees (see _inline_into), so
        #: `hvp(f, primals, tangents)` knows how many primals its caller passed
        self.seq_lens: Dict[str, int] = {}
        #: source name -> "list" / "tuple" / "dict" for the locals every assignment
        #: of which makes that container (decides `l * 3`, `l + m`, `l += m`)
        # (an enclosing function's kinds, except for names this function binds
        # itself: `lambda p, m: p - 0.01 * m` inside a function whose `m` is a dict)
        own = set(params) | kwonly | _own_locals(node.body)
        self.ckinds: Dict[str, str] = (
            {k: v for k, v in outer.ckinds.items() if k not in own} if outer is not None else {}
        )
        self.ckinds.update(_container_kinds(node, params, self._builtin_of, seq_params))
        if outer is not None:
            # the enclosing function's parameters bound to known functions (a lax
            # loop body lambda calling the integrator's `f`: user R)
            self.static_params.update(
                {k: v for k, v in outer.static_params.items() if k not in own}
            )

    # -- entry ---------------------------------------------------------------
    def run(self) -> Any:
        node = self.src.node
        self._drop_named_scopes(node)
        self._check(node)
        a = node.args
        if (a.vararg or a.kwonlyargs or a.kwarg) and not self.inlined or a.posonlyargs:
            what = (
                "`**kwargs` parameters"
                if a.kwarg
                else "positional-only parameters"
                if a.posonlyargs
                else "`*args` parameters"
                if a.vararg
                else "keyword-only parameters here"
            )
            raise _unsupported(node, what, src=self.src)
        body = [s for s in node.body if not _is_docstring(s)]
        lowerer = _Lowerer(self.namer, self.src)
        body = lowerer.lower_function(body)
        self.flag_names |= lowerer.flags
        # (`return lambda ...` in a branch became `result = lambda ...`)
        self.fn_names |= _function_names(body)
        new_body = self.block(body)
        args = node.args
        if any(p.id in self.rename for p in args.args):
            args = N.clone(args)
            for p in args.args:
                p.id = self.var(p.id)
        fdef = N.function_def(node.name, args, new_body)
        N.copy_origin(fdef, node)
        fdef.sj_origin = node.lineno
        return fdef

    def _drop_named_scopes(self, fnode: Any) -> None:
        """``with srcjax.named_scope("name"):`` blocks become their bodies (the
        scope only names operations in JAX's profiles); other ``with`` blocks stay
        for :meth:`_check` to refuse."""

        def is_scope(item: Any) -> bool:
            e = item.context_expr
            if item.optional_vars is not None or not isinstance(e, gast.Call):
                return False
            try:
                status, obj = self.resolve(e.func)
            except Exception:  # noqa: BLE001 - not resolvable: not a named scope
                return False
            return status == "found" and getattr(obj, "__srcjax_named_scope__", False) is True

        def rewrite(body: list) -> list:
            out = []
            for stmt in body:
                if isinstance(stmt, gast.With) and all(is_scope(i) for i in stmt.items):
                    out.extend(rewrite(stmt.body))
                    continue
                for part in ("body", "orelse", "finalbody"):
                    inner = getattr(stmt, part, None)
                    if isinstance(inner, list) and not isinstance(stmt, gast.FunctionDef):
                        setattr(stmt, part, rewrite(inner))
                out.append(stmt)
            return out

        if any(isinstance(n, gast.With) for n in N.walk(fnode)):
            fnode.body = rewrite(fnode.body)

    def _check(self, fnode: Any) -> None:
        bad = _shared_mutation(fnode) or item_mutation(fnode, _MUTATORS)
        if bad is None:
            calls = Calls(self)
            bad = other_copies(fnode, self.ckinds, calls)
            if bad is None:
                snapshots, bad = plain_copies(fnode, self.ckinds, calls)
                for node in snapshots:
                    node.sj_snapshot = True  # (statements.py binds a copy: Python's value)
        if bad is not None:
            node, message, hint = bad
            raise UnsupportedSyntaxError(message, self.src.location(node), hint)
        call_stars = star_arg_nodes(gast.Module(body=fnode.body, type_ignores=[]))
        for n in N.walk(gast.Module(body=fnode.body, type_ignores=[])):
            for cls, what in _UNSUPPORTED.items():
                if isinstance(n, cls):
                    hint = None
                    if cls is gast.With:
                        self._refuse_suppress(n)
                    if cls is gast.FunctionDef:
                        hint = "define the helper at module level and call it"
                    elif cls in (gast.Global, gast.Nonlocal):
                        hint = "pass the value in as an argument and return the new value"
                    verb = "are" if what.split(" (")[0].endswith("s") else "is"
                    raise UnsupportedSyntaxError(
                        f"{what} {verb} not supported in transformed functions",
                        self.src.location(n),
                        hint or "move this code outside the transformed function",
                    )
            if isinstance(n, (gast.Yield, gast.YieldFrom, gast.Await)):
                raise UnsupportedSyntaxError(
                    "generators (`yield`) and `await` are not supported in transformed functions",
                    self.src.location(n),
                    "return a list or an array instead",
                )
            if isinstance(n, gast.Starred):
                if isinstance(n.ctx, gast.Store):
                    continue  # `*hidden, last = layers` (see assign_target)
                if id(n) in call_stars:
                    continue  # `f(*xs)`: expanded where the length is known (starargs.py)
                raise UnsupportedSyntaxError(
                    "star-arguments (`*args`) are not supported in transformed functions",
                    self.src.location(n),
                    "pass the arguments explicitly, or pass a tuple and index it",
                )
            if isinstance(n, gast.Call) and any(
                k.arg is None and not _forwards_kwargs(fnode, k.value) for k in n.keywords
            ):
                raise UnsupportedSyntaxError(
                    "`**kwargs` in calls is not supported in transformed functions",
                    self.src.location(n),
                    "pass the keyword arguments explicitly",
                )

    def _refuse_suppress(self, node: Any) -> None:
        """``with contextlib.suppress(KeyError):``: refused by name, with what to do
        instead. Generated code has no try/except (``try`` is refused too): a block
        left half-way by a swallowed exception would need every transform (grad's
        tape pushes and pops, vmap's examples, jit's dataflow passes) to model
        that exit."""
        for item in node.items:
            e = item.context_expr
            if not isinstance(e, gast.Call):
                continue
            try:
                status, obj = self.resolve(e.func)
            except Exception:  # noqa: BLE001 - not resolvable: the generic message
                continue
            if status == "found" and obj is contextlib.suppress:
                raise UnsupportedSyntaxError(
                    f"`with {N.to_source(e)}` is not supported in transformed functions "
                    "(srcjax's generated code has no try/except)",
                    self.src.location(node),
                    "test the condition instead (`if key in d:`, `if n != 0:`), or "
                    "move the block outside the transformed function",
                )

    # -- helpers ---------------------------------------------------------------
    def loc(self, node):
        return self.src.location(node)

    def emit(self, stmt: Any, op: Optional[Op] = None) -> Any:
        if self.origin is not None:
            N.copy_origin(stmt, self.origin)
            stmt.sj_origin = getattr(self.origin, "lineno", None)
            stmt.sj_file = self.src.filename
        if self.user_call is not None:
            stmt.sj_user_call = self.user_call  # (see inline.py: srcjax code inlined)
            if self.origin is not None and _in_package(self.src.filename):
                _at_location(stmt, self.user_call[0])  # (its errors: the user's call)
        if op is not None:
            stmt.sj_op = op
        if (
            (self.types or getattr(op, "construct_class", None) is not None)
            and isinstance(stmt, gast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
        ):
            self._type_assign(stmt.targets[0].id, op, stmt.value)
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
            if isinstance(stmt.targets[0], gast.Name):
                self._track_seq_len(stmt.targets[0].id, op, stmt.value)
        self.out.append(stmt)
        return stmt

    def temp(self, base: str) -> str:
        """A fresh local name; it is local when read back, even if the function's
        module has a global of that name (a helper module's `select`)."""
        t = self.namer.fresh(base)
        self.locals.add(t)
        return t

    def var(self, id_: str) -> str:
        return self.rename.get(id_, id_)

    # -- statements ----------------------------------------------------------
    def block(self, stmts: List[Any]) -> List[Any]:
        saved = self.out
        self.out = []
        for s in stmts:
            self.stmt(s)
        res, self.out = self.out, saved
        return res

    def forget_flags(self, stmts: List[Any]) -> None:
        """Forget the known values of the lowering's flags that ``stmts`` (a loop
        body, a branch decided at run time) may set."""
        for node in N.walk(gast.Module(body=list(stmts), type_ignores=[])):
            # (a length known before a loop or a branch decided at run time may
            # not hold inside it or after it)
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                self.seq_lens.pop(self.var(node.id), None)
        if not self.known_flags:
            return
        for node in N.walk(gast.Module(body=list(stmts), type_ignores=[])):
            if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
                self.known_flags.pop(node.targets[0].id, None)
