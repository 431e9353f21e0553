"""Normalization: user function -> structured A-normal form with resolved calls.

The output is a gast ``FunctionDef`` in a small language every transform reads:

- ``x = <op>`` where ``<op>`` is one primitive applied to atoms (names and
  constants; index expressions and static keyword values may be small trees), a
  copy of an atom, or a container display of atoms. Each such statement
  carries ``stmt.sj_op`` (an :class:`Op`) and ``stmt.sj_origin`` (user line).
- ``lst.append(x)`` and other expression statements (``print``), also with
  ``sj_op``.
- ``if cond:`` on a name, ``while <test>:`` and ``for i in range(...)``, with no
  ``break``/``continue`` (lowered to flags) and one ``return`` at the end.

Calls to user functions are inlined (their locals renamed), so the transforms
see one flat body. Every call is resolved statically: to a primitive of the
registry, a user function, a Python builtin that runs as-is, or "unknown"
(allowed only off the differentiated path).
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import inspect
import keyword
import math
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Set

import gast
import numpy as np

from .._array import buffer, unwrap_tree
from ..errors import (
    RecursionUnsupportedError,
    UnsupportedSyntaxError,
)
from ..primitives import registry
from . import nodes as N
from . import record as _record
from .source import FunctionSource, get_source

_config = importlib.import_module("srcjax.config")  # the module (srcjax.config is the object)

__all__ = ["Op", "Normalized", "normalize", "Namer"]

#: the namespaces generated code reads (codegen.emit binds them)
_NAMESPACES = {"np", "jnp", "ad", "nn", "special", "lax", "random", "math", "custom"}
_BUILTIN_SHADOWS = set(dir(builtins)) | _NAMESPACES
#: names generated code uses for srcjax's namespaces and for the builtins it calls
#: (range, len, min ... and whatever a rule template inlines): a user variable
#: with one of these names is renamed (`ad` -> `ad_`)
_GENERATED_NAMES = {n for n in dir(builtins) if not n.startswith("_")} | _NAMESPACES | {"_rt"}


class Namer:
    """Hands out fresh, readable names that collide with nothing in the function."""

    def __init__(self, taken: Set[str]) -> None:
        self.taken = set(taken)
        #: every name handed out: locals of generated code, never a user global
        self.made: Set[str] = set()
        #: (user global, its module, its closure) -> the name generated code reads
        #: it by, when its own name is one generated code uses (``ad`` -> ``ad_``)
        self.user_globals: Dict[tuple, str] = {}
        #: the lists comprehensions and generator expressions build (for messages)
        self.comprehension_results: Set[str] = set()

    def fresh(self, base: str) -> str:
        base = base.strip("_") or "t"
        if base[0].isdigit():
            base = "v" + base
        if base in _BUILTIN_SHADOWS or keyword.iskeyword(base):
            base = base + "_"
        if base not in self.taken:
            self.taken.add(base)
            self.made.add(base)
            return base
        i = 1
        while f"{base}{i}" in self.taken:
            i += 1
        out = f"{base}{i}"
        self.taken.add(out)
        self.made.add(out)
        return out

    def reserve(self, name: str) -> None:
        self.taken.add(name)


@dataclass
class Op:
    """What one normalized statement computes.

    kind:
      ``prim``    primitive call; ``bound`` maps parameter names to argument nodes
                  (a list of nodes for ``*varargs``)
      ``copy``    ``x = y``
      ``pack``    ``x = [a, b]`` / ``(a, b)`` / ``{"k": a}``; ``elts`` in order
      ``append``  ``lst.append(v)``
      ``inactive`` anything with no derivative that just runs (``len``, ``print``)
      ``unknown`` a call with no rule: allowed only when no argument is active
    """

    kind: str
    prim: Any = None
    bound: Dict[str, Any] = field(default_factory=dict)
    elts: List[Any] = field(default_factory=list)
    target: Optional[str] = None  # the list for ``append``
    what: str = ""  # description for error messages
    hint: Optional[str] = None  # what to do instead, for the error of an ``unknown``
    #: an ``unknown`` call whose result may keep its arguments: ``"method"`` for a
    #: method of an object (``acc.add(v)``, the object is ``elts[0]``),
    #: ``"construct"`` for an instance of a user class that is no pytree
    #: (``State(x, v)``); a differentiated or batched argument is an error even where
    #: the result is not used (see :func:`srcjax.transforms.rules.object_method_error`)
    effect: Any = False

    def __post_init__(self) -> None:
        if self.kind == "prim":
            unknown = set(self.bound) - set(self.prim.signature.parameters)
            if unknown:  # a wrong name here would silently zero a derivative
                raise AssertionError(f"{self.prim.public}: no parameters {sorted(unknown)}")

    def operand_names(self) -> List[str]:
        """Names that may carry derivatives into this op."""
        out: List[str] = []

        def add(node):
            for n in N.names_in(node):
                if n not in out:
                    out.append(n)

        if self.kind == "prim":
            # with no rules at all, every argument may carry a derivative (so that a
            # missing rule is an error, never a silent zero); a public primitive's
            # arguments without a rule too (a float there is a run-time error, see
            # transforms.rules.no_rule_checks); internal ad.* helpers' rule-less
            # arguments are shape references
            params = self.prim.signature.parameters
            if self.prim.vjps and self.prim.namespace == "ad":
                params = self.prim.vjps
            elif self.prim.vjps:  # options and structure never carry a derivative
                static = self.prim.static_params
                params = [q for q in params if q in self.prim.vjps or q not in static]
            for pname in params:
                v = self.bound.get(pname)
                if v is None:
                    continue
                for item in v if isinstance(v, list) else [v]:
                    add(item)
        elif self.kind in ("copy", "pack", "append", "unknown"):
            for e in self.elts:
                add(e)
        return out


@dataclass
class Normalized:
    node: Any  # gast.FunctionDef
    src: FunctionSource
    namer: Namer
    bindings: Dict[str, Any]  # extra names the generated module must bind
    deps: List[tuple] = field(default_factory=list)  # inlined callees, see dependencies_valid


_BINOPS = {
    gast.Add: "+",
    gast.Sub: "-",
    gast.Mult: "*",
    gast.Div: "/",
    gast.FloorDiv: "//",
    gast.Mod: "%",
    gast.Pow: "**",
    gast.MatMult: "@",
    gast.BitAnd: "&",
    gast.BitOr: "|",
    gast.BitXor: "^",
    gast.LShift: "<<",
    gast.RShift: ">>",
}
_UNARY = {gast.USub: "unary -", gast.UAdd: "unary +", gast.Invert: "unary ~", gast.Not: "unary not"}
_CMPOPS = {
    gast.Lt: "<",
    gast.LtE: "<=",
    gast.Gt: ">",
    gast.GtE: ">=",
    gast.Eq: "==",
    gast.NotEq: "!=",
}

_REGISTER_HINT = (
    "srcjax transforms the classes it knows as pytrees: register {name} "
    "(srcjax.tree_util.register_dataclass, register_pytree_node_class or "
    "register_pytree_node), or use a NamedTuple or a dict"
)


def plain_object(x: Any) -> bool:
    """An instance of a user-defined class that is no pytree (not an array,
    number, string, container, class, module or function): JAX cannot trace it,
    so the transforms know it while transforming, as a closure constant."""
    if x is None or isinstance(x, (np.ndarray, np.generic, int, float, complex, str, bytes)):
        return False
    if isinstance(x, (tuple, list, dict, type, types.ModuleType, types.FunctionType)):
        return False
    if isinstance(x, types.MethodType) or type(x) in _tree_registry():
        return False
    return hasattr(x, "__dict__") and _is_user_class(type(x))


def _is_user_class(cls: type) -> bool:
    """A class defined outside the standard library, NumPy and srcjax (its
    instances may hold the arguments it was built from)."""
    top = (getattr(cls, "__module__", "") or "").split(".")[0]
    return top not in sys.stdlib_module_names and top not in ("numpy", "srcjax", "")


_INACTIVE_BUILTINS = {
    id(f)
    for f in (
        len,
        range,
        print,
        isinstance,
        bool,
        str,
        repr,
        type,
        enumerate,
        zip,
        reversed,
        hasattr,
        format,
        hash,
        id,
        iter,
        any,
        all,
        breakpoint,
        callable,
        issubclass,
        slice,
        np.shape,
        np.ndim,
        np.size,
        np.dtype,
        np.random.default_rng,
    )
}  # results carry no derivative: shapes, flags, strings, printing

#: numpy scalar types used as casts: ``np.float32(x)`` is ``x.astype(float32)``
# numpy scalar types called as functions: a cast (ad.astype); to an integer or
# bool type it has a zero derivative, as in JAX
_CAST_TYPES = (
    np.float16,
    np.float32,
    np.float64,
    np.complex64,
    np.complex128,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.bool_,
)

_UNSUPPORTED = {
    gast.Try: "`try` blocks",
    gast.With: "`with` blocks",
    gast.AsyncWith: "`async with`",
    gast.AsyncFor: "`async for`",
    gast.AsyncFunctionDef: "`async def`",
    gast.ClassDef: "class definitions",
    gast.Global: "`global` statements",
    gast.Nonlocal: "`nonlocal` statements",
    gast.Import: "`import` inside the function",
    gast.ImportFrom: "`import` inside the function",
}


def _ops_table() -> Dict[str, Any]:
    table = {}
    for p in registry.REGISTRY.values():
        if p.op and p.op not in table:
            table[p.op] = p
    return table


class _Lowerer:
    """Removes break/continue/early return by introducing flags."""

    def __init__(self, namer: Namer, src: Optional[FunctionSource] = None):
        self.namer = namer
        self.src = src  # for error locations
        self.ret_flag: Optional[str] = None
        self.ret_val: Optional[str] = None
        self.flags: Set[str] = set()  # the break/continue flags made

    # -- return restructuring ------------------------------------------------
    @staticmethod
    def _always_returns(stmts) -> bool:
        if not stmts:
            return False
        last = stmts[-1]
        if isinstance(last, gast.Return):
            return True
        if isinstance(last, gast.If):
            return _Lowerer._always_returns(last.body) and _Lowerer._always_returns(last.orelse)
        return False

    def restructure(self, stmts: List[Any]) -> List[Any]:
        """Move code after `if c: return` into the else branch (returns at tails only)."""
        out: List[Any] = []
        for i, s in enumerate(stmts):
            if isinstance(s, gast.If):
                s.body = self.restructure(s.body)
                s.orelse = self.restructure(s.orelse)
                rest = stmts[i + 1 :]
                if rest:
                    if self._always_returns(s.body):
                        s.orelse = self.restructure(s.orelse + rest)
                        out.append(s)
                        return out
                    if self._always_returns(s.orelse):
                        s.body = self.restructure(s.body + rest)
                        out.append(s)
                        return out
            elif isinstance(s, (gast.While, gast.For)):
                s.body = self.restructure(s.body)
            out.append(s)
            if isinstance(s, gast.Return):
                return out  # dead code after return
        return out

    @staticmethod
    def _has(stmts, kinds, into_loops: bool) -> bool:
        for s in stmts:
            if isinstance(s, kinds):
                return True
            if isinstance(s, gast.If):
                if _Lowerer._has(s.body, kinds, into_loops) or _Lowerer._has(
                    s.orelse, kinds, into_loops
                ):
                    return True
            if into_loops and isinstance(s, (gast.While, gast.For)):
                if _Lowerer._has(s.body, kinds, into_loops):
                    return True
        return False

    # -- flags -----------------------------------------------------------------
    def lower_function(self, body: List[Any]) -> List[Any]:
        body = self.restructure(body)
        loop_returns = any(
            isinstance(s, (gast.While, gast.For)) and self._has(s.body, gast.Return, True)
            for s in gast.walk(gast.Module(body=body, type_ignores=[]))
        )
        tail_if_returns = not (body and isinstance(body[-1], gast.Return)) or any(
            isinstance(s, gast.If) and self._has([s], gast.Return, False) for s in body
        )
        if loop_returns or tail_if_returns:
            self.ret_val = self.namer.fresh("result")
            if loop_returns or self._nontail_return(body, True):
                # a `return` that code after it must not overwrite (`if a: if b:
                # return u` then `return v`): the flag guards that code
                self.ret_flag = self.namer.fresh("returned")
        new = self.lower_block(body, loop=None)
        if self.ret_val is not None:
            pre = [N.assign(self.ret_val, N.const(None))]
            if self.ret_flag:
                pre.append(N.assign(self.ret_flag, N.const(False)))
            new = pre + new + [gast.Return(value=N.name(self.ret_val))]
        return new

    @staticmethod
    def _nontail_return(stmts, tail: bool) -> bool:
        """Whether a ``return`` in ``stmts`` (restructured) is followed by code that
        may run after it: one not last in its block, or in a branch of an ``if``
        that is not itself last (in a block that is last, up to the function)."""
        for i, s in enumerate(stmts):
            last = tail and i == len(stmts) - 1
            if isinstance(s, gast.Return) and not last:
                return True
            if isinstance(s, gast.If) and (
                _Lowerer._nontail_return(s.body, last) or _Lowerer._nontail_return(s.orelse, last)
            ):
                return True
        return False

    def _guard(self, flags: List[str]) -> Any:
        if len(flags) == 1:
            return gast.UnaryOp(op=gast.Not(), operand=N.name(flags[0]))
        return gast.UnaryOp(
            op=gast.Not(), operand=gast.BoolOp(op=gast.Or(), values=[N.name(f) for f in flags])
        )

    def lower_block(self, stmts: List[Any], loop: Optional[dict]) -> List[Any]:
        out: List[Any] = []
        for i, s in enumerate(stmts):
            if isinstance(s, gast.Break):
                out.append(N.copy_origin(N.assign(loop["brk"], N.const(True)), s))
                loop["used_brk"] = True
                return out
            if isinstance(s, gast.Continue):
                out.append(N.copy_origin(N.assign(loop["cont"], N.const(True)), s))
                loop["used_cont"] = True
                return out
            if isinstance(s, gast.Return):
                if self.ret_val is None:
                    out.append(s)
                    return out
                val = s.value if s.value is not None else N.const(None)
                out.append(N.copy_origin(N.assign(self.ret_val, val), s))
                if self.ret_flag:
                    out.append(N.copy_origin(N.assign(self.ret_flag, N.const(True)), s))
                return out
            if isinstance(s, gast.If):
                s.body = self.lower_block(s.body, loop)
                s.orelse = self.lower_block(s.orelse, loop)
                out.append(s)
                flags = self._flags_set([s], loop)
                rest = stmts[i + 1 :]
                if flags and rest:
                    lowered_rest = self.lower_block(rest, loop)
                    if lowered_rest:
                        guard = gast.If(test=self._guard(flags), body=lowered_rest, orelse=[])
                        N.copy_origin(guard, rest[0])
                        out.append(guard)
                    return out
                continue
            if isinstance(s, (gast.While, gast.For)):
                if s.orelse:
                    raise _unsupported(
                        s,
                        "`else` on loops",
                        "set a flag before `break` and test it after the loop",
                        src=self.src,
                    )
                info = {
                    "brk": self.namer.fresh("broke"),
                    "cont": self.namer.fresh("skip"),
                    "used_brk": False,
                    "used_cont": False,
                }
                self.flags.update((info["brk"], info["cont"]))
                has_ret = self.ret_flag is not None and self._has(s.body, gast.Return, True)
                body = self.lower_block(s.body, info)
                stops = []
                if info["used_brk"]:
                    stops.append(info["brk"])
                if has_ret:
                    stops.append(self.ret_flag)
                pre = []
                if info["used_cont"]:
                    body = [N.assign(info["cont"], N.const(False))] + body
                if info["used_brk"] and isinstance(s, gast.For):
                    # the loop keeps counting after `break` (the flag skips its
                    # body), so the target is bound in the body: read after the
                    # loop, it holds the value of the iteration that broke
                    it = self.namer.fresh("it")
                    bind = N.copy_origin(gast.Assign(targets=[s.target], value=N.name(it)), s)
                    s.target = N.copy_origin(N.name(it, store=True), s)
                    body = [bind] + body
                if info["used_brk"]:
                    pre.append(N.copy_origin(N.assign(info["brk"], N.const(False)), s))
                if stops:
                    if isinstance(s, gast.While):
                        s.test = gast.BoolOp(op=gast.And(), values=[self._guard(stops), s.test])
                    else:
                        body = [gast.If(test=self._guard(stops), body=body, orelse=[])]
                s.body = body
                out.extend(pre)
                out.append(s)
                rest = stmts[i + 1 :]
                if has_ret:
                    # code after a loop that may `return` runs only if it did not
                    lowered_rest = self.lower_block(rest, loop)
                    if lowered_rest:
                        out.append(
                            gast.If(test=self._guard([self.ret_flag]), body=lowered_rest, orelse=[])
                        )
                    return out
                continue
            out.append(s)
        return out

    def _flags_set(self, stmts, loop) -> List[str]:
        flags = []
        for n in gast.walk(gast.Module(body=stmts, type_ignores=[])):
            if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
                t = n.targets[0].id
                if loop is not None and t in (loop["brk"], loop["cont"]) and t not in flags:
                    flags.append(t)
                if self.ret_val is not None and t == self.ret_val:
                    f = self.ret_flag or self.ret_val
                    if f not in flags and self.ret_flag:
                        flags.append(f)
        return flags


def _lambda_of(params: List[str], call: Any, origin: Any) -> Any:
    """``lambda <params>: <call>`` located at ``origin`` (see Normalizer.fn_expr)."""
    lam = gast.Lambda(args=N.arguments(params), body=N.copy_origin(call, origin))
    return N.copy_origin(lam, origin)


#: the methods a binary operator calls on a registered class instance (see
#: Normalizer.dunder_call): (left operand's, right operand's reflected one)
_DUNDERS = {
    gast.Add: ("__add__", "__radd__"),
    gast.Sub: ("__sub__", "__rsub__"),
    gast.Mult: ("__mul__", "__rmul__"),
    gast.Div: ("__truediv__", "__rtruediv__"),
    gast.MatMult: ("__matmul__", "__rmatmul__"),
    gast.Pow: ("__pow__", "__rpow__"),
}


#: top-level packages whose Python functions are called as they are, never
#: inlined: their source is not user code (np.triu_indices has keyword-only
#: parameters; an inlined library would also name its own files in errors).
#: Such a call on a differentiated path is "no derivative rule", at the user's line.
_LIBRARY_PACKAGES = frozenset({"numpy", "scipy", "math", "functools", "itertools", "operator"})


def _is_library_function(fn: Any) -> bool:
    """A NumPy/SciPy/standard-library function (or a partial of one)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    fn = getattr(fn, "__func__", fn)
    module = getattr(fn, "__module__", None) or ""
    return module.split(".")[0] in _LIBRARY_PACKAGES


_DICT_MUTATORS = frozenset({"pop", "popitem", "update", "setdefault", "clear"})


def _forwards_kwargs(fnode: Any, value: Any) -> bool:
    """``**value`` in a call of ``fnode``'s body passes on ``fnode``'s own
    ``**kwargs`` parameter, which the body never rebinds or changes (so the
    keywords it holds are the ones the inlined call bound)."""
    kwarg = fnode.args.kwarg
    if kwarg is None or not isinstance(value, gast.Name) or value.id != kwarg.id:
        return False
    if kwarg.id in set(N.assigned_names(fnode.body)):
        return False
    for n in gast.walk(gast.Module(body=fnode.body, type_ignores=[])):
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


def _unsupported(node: Any, what: str, hint: str = "", src: Optional[FunctionSource] = None):
    loc = src.location(node) if src is not None else None
    plural = what.endswith("s")
    return UnsupportedSyntaxError(
        f"{what} {'are' if plural else 'is'} not supported in transformed functions",
        loc,
        hint or "move this code outside the transformed function",
    )


class _FnChoice:
    """A local name that branches bind to different local functions (``if c: def
    act ...`` / ``else: def act ...``, ``g = f1 if c else f2``): ``tag``, a
    source-level name, holds at run time the index in ``fdefs`` of the function
    bound, and a call dispatches on it with an ``if`` chain, which the transforms
    handle like any branch (per example under vmap)."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.fdefs: List[Any] = []


class _GlobalFn:
    """An alternative of a :class:`_FnChoice` that is a module-level function (or
    another known callable), named by ``node`` (a Name or Attribute chain)."""

    def __init__(self, node: Any) -> None:
        self.node = node


def _reads_a_name(node: Any) -> bool:
    """Whether an expression reads a variable (a default's value then depends on when the
    definition ran, not on the call)."""
    return any(isinstance(n, gast.Name) for n in gast.walk(node))


def _is_static_callable(obj: Any) -> bool:
    """A function whose identity is known when transforming (a Python function, a
    partial, a srcjax transform or primitive, a NumPy ufunc)."""
    from ..primitives.registry import Primitive, lookup_callable

    if isinstance(obj, (types.FunctionType, functools.partial, Primitive, np.ufunc)):
        return True
    if getattr(obj, "__srcjax_transform__", None) is not None:
        return True
    try:  # a callable the registry knows (operator.mul is jnp.multiply, math.exp ...)
        return lookup_callable(obj) is not None
    except TypeError:  # (unhashable or odd objects)
        return False


class _ForeignFn:
    """A local function of ``owner`` (an enclosing normalizer) passed as an
    argument to an inlined callee; calls of it are inlined by ``owner``."""

    def __init__(self, owner: Any, fdef: Any) -> None:
        self.owner = owner
        self.fdef = fdef


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


class Normalizer:
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

        if any(isinstance(n, gast.With) for n in gast.walk(fnode)):
            fnode.body = rewrite(fnode.body)

    def _check(self, fnode: Any) -> None:
        bad = _shared_mutation(fnode)
        if bad is not None:
            node, message, hint = bad
            raise UnsupportedSyntaxError(message, self.src.location(node), hint)
        for n in gast.walk(gast.Module(body=fnode.body, type_ignores=[])):
            for cls, what in _UNSUPPORTED.items():
                if isinstance(n, cls):
                    hint = None
                    if cls is gast.FunctionDef:
                        hint = "define the helper at module level and call it"
                    elif cls in (gast.Global, gast.Nonlocal):
                        hint = "pass the value in as an argument and return the new value"
                    verb = "are" if what.endswith("s") else "is"
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

    # -- helpers ---------------------------------------------------------------
    def loc(self, node):
        return self.src.location(node)

    def emit(self, stmt: Any, op: Optional[Op] = None) -> Any:
        if self.origin is not None:
            N.copy_origin(stmt, self.origin)
            stmt.sj_origin = getattr(self.origin, "lineno", None)
            stmt.sj_file = self.src.filename
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

    def _track_seq_len(self, t: str, op: Optional[Op], value: Any) -> None:
        """Record the static length of a display assigned to ``t`` (or copied from
        a name whose length is known); see ``seq_lens``."""
        n = None
        if op is None or op.kind not in ("pack", "copy"):
            pass
        elif isinstance(value, (gast.Tuple, gast.List)):
            if not any(isinstance(v, gast.Starred) for v in value.elts):
                n = len(value.elts)
        elif op.kind == "copy" and isinstance(value, gast.Name):
            n = self.seq_lens.get(value.id)
            n = None if n == -1 else n
        if n is None:
            if t in self.seq_lens:
                self.seq_lens[t] = -1
        elif self.seq_lens.setdefault(t, n) != n:
            self.seq_lens[t] = -1

    def static_seq_len(self, node: Any) -> Optional[int]:
        """The length of the tuple/list ``node`` (a display, or a local name that
        holds displays of one length wherever it is assigned), or None."""
        if isinstance(node, (gast.Tuple, gast.List)):
            if any(isinstance(v, gast.Starred) for v in node.elts):
                return None
            return len(node.elts)
        if isinstance(node, gast.Name):
            n = self.seq_lens.get(self.var(node.id))
            return None if n is None or n < 0 else n
        return None

    def _type_assign(self, t: str, op: Optional[Op], value: Any = None) -> None:
        """Track the type tree of ``t`` through copies, attribute reads, indexing
        of typed values and tuple displays holding them (an ``enumerate`` item
        ``(i, layer)``); any other assignment forgets it."""
        ty = None
        if op is not None and op.kind == "pack" and isinstance(value, (gast.Tuple, gast.List)):
            items = tuple(self.type_of(e) for e in op.elts)
            if any(i is not None for i in items):
                ty = ("items", items)
        elif op is not None and op.kind == "copy" and op.elts:
            ty = self.type_of(op.elts[0])
        elif op is not None and op.kind == "prim" and op.prim.public == "ad.getattr":
            ty = _attr_type(self.type_of(op.bound.get("x")), op.bound.get("name"))
        elif op is not None and op.kind == "prim" and op.prim.public == "ad.getitem":
            ty = _item_type(self.type_of(op.bound.get("x")), op.bound.get("idx"))
        elif getattr(op, "construct_class", None) is not None:
            # an instance built here: its class is known, its fields only at run time
            ty = ("class", op.construct_class, (), (), (), ())
        if ty is None:
            self.types.pop(t, None)
        else:
            self.types[t] = ty

    def type_of(self, node: Any) -> Any:
        if isinstance(node, gast.Name):
            return self.types.get(node.id)
        return None

    def class_of(self, node: Any) -> Any:
        """The registered pytree class of the value of atom ``node``, if known."""
        ty = self.type_of(node)
        return ty[1] if ty is not None and ty[0] == "class" else None

    def temp(self, base: str) -> str:
        """A fresh local name; it is local when read back, even if the function's
        module has a global of that name (a helper module's `select`)."""
        t = self.namer.fresh(base)
        self.locals.add(t)
        return t

    def var(self, id_: str) -> str:
        return self.rename.get(id_, id_)

    # -- resolution ----------------------------------------------------------
    def lookup_global(self, id_: str) -> tuple:
        """('found', obj) or ('missing', None) for a non-local name."""
        if id_ in self.src.closure:
            cell = self.src.closure[id_]
            try:
                obj = cell.cell_contents
            except ValueError:
                _record.note_lookup(cell, id_, _record.MISSING)
                return "missing", None
            _record.note_lookup(cell, id_, obj)
            return "found", unwrap_tree(obj)
        try:
            obj = self.src.globals[id_]
        except KeyError:
            pass
        else:
            _record.note_lookup(self.src.globals, id_, obj)
            return "found", unwrap_tree(obj)
        if hasattr(builtins, id_):
            obj = getattr(builtins, id_)
            _record.note_lookup(self.src.globals, id_, obj)
            return "found", obj
        _record.note_lookup(self.src.globals, id_, _record.MISSING)
        return "missing", None

    def resolve(self, expr: Any) -> tuple:
        """Statically evaluate a name/attribute chain: ('local', root) / ('found', obj) /
        ('missing', None) / ('dynamic', None)."""
        if isinstance(expr, gast.Name):
            if expr.id in self.static_params:
                # a parameter of an inlined function bound to a known function
                # (hvp(f, x, v) calling grad(f)): resolved like that function
                return "found", self.static_params[expr.id]
            if expr.id in self.locals:
                return "local", expr.id
            return self.lookup_global(expr.id)
        if isinstance(expr, gast.Attribute):
            status, obj = self.resolve(expr.value)
            if status == "found":
                try:
                    return "found", buffer(getattr(obj, expr.attr))
                except AttributeError:
                    return "missing", None
            if status == "local":
                return "local", obj
            return status, None
        if isinstance(expr, gast.Subscript):
            # ACTIVATIONS["tanh"](x), ACTIVATIONS[self.act](x): a function table that
            # is a module constant, read with a key known while transforming
            known, key = self.static_key(expr.slice)
            if not known or not isinstance(key, (str, int)):
                return "dynamic", None
            status, obj = self.resolve(expr.value)
            if status == "found" and isinstance(obj, (dict, list, tuple)):
                try:
                    item = obj[key]
                except (KeyError, IndexError, TypeError):
                    return "dynamic", None
                if callable(item) and not isinstance(item, type):
                    if isinstance(obj, dict):  # rebinding the entry invalidates the code
                        self.deps.append(("dict", obj, key, item))
                    return "found", item
            if status == "local":
                return "local", obj
        if (
            isinstance(expr, gast.Call)
            and len(expr.args) == 2
            and not expr.keywords
            and self.resolve(expr.func) == ("found", getattr)
        ):
            # getattr(jax.nn, self.act)(x): an attribute of a module constant named
            # by a key known while transforming
            known, key = self.static_key(expr.args[1])
            status, obj = self.resolve(expr.args[0])
            if known and isinstance(key, str) and status == "found":
                try:
                    return "found", getattr(obj, key)
                except AttributeError:
                    return "missing", None
        return "dynamic", None

    def static_key(self, e: Any) -> tuple:
        """``(True, value)`` for an expression whose value is known while
        transforming: a constant, or a static str/int/bool/None attribute of a
        registered class instance (``self.act``: aux data, part of the key, see
        :func:`type_tree`); else ``(False, None)``."""
        if isinstance(e, gast.Constant):
            return True, e.value
        if isinstance(e, gast.Attribute):
            ty = self.expr_type(e.value)
            if ty is not None and ty[0] == "class":
                consts = dict(ty[5])
                if e.attr in consts:
                    return True, consts[e.attr]
        return False, None

    def global_ref(self, node: Any) -> Any:
        """A reference to a global/closure name inside inlined code from another
        module, or to one named like a namespace of generated code (``ad``)."""
        if isinstance(node, gast.Name) and node.id in _GENERATED_NAMES:
            renamed = self._shadowing_global(node.id)
            if renamed is not None:
                return N.name(renamed)
        if (
            isinstance(node, gast.Name)
            and node.id in self.src.closure
            and self.src.closure is not self.root_closure
            and node.id not in self.root_closure
        ):
            # a closure cell of an inlined function that the transformed function
            # does not close over itself (upd's `idx` in `def loss: upd(x)`): its
            # value, read now, as other names of inlined code are
            status, obj = self.lookup_global(node.id)
            if status == "found":
                new = self.namer.fresh(node.id)
                self.bindings[new] = obj
                return N.name(new)
        if not isinstance(node, gast.Name):
            return node
        if self.src.globals is self.root_globals:
            if self.inlined:
                alias = self._inlined_global(node.id)
                if alias is not None:
                    return N.name(alias)
            return node
        status, obj = self.lookup_global(node.id)
        if status != "found":
            return node
        if isinstance(obj, types.ModuleType) or obj is getattr(builtins, node.id, object()):
            if self.root_globals.get(node.id, obj) is obj:
                self.bindings.setdefault(node.id, obj)
                return node
        new = self.namer.fresh(node.id)
        self.bindings[new] = obj
        return N.name(new)

    def _inlined_global(self, name: str) -> Optional[str]:
        """For a module-level variable ``name`` (data, not a function, class or
        module) that inlined code of the transformed function's own module reads:
        the fresh name generated code reads it by, bound to the user's variable
        itself, live. Read by its own name, it would be captured by a local of
        the caller (``lr`` of ``sgd`` inlined where the caller has ``lr = 100.``)
        or by a name of generated code (a scan's loop counter ``k``): user X's
        silently wrong gradients. None for names that need no protection."""
        if name in self.src.closure:
            return None  # (closure cells: see global_ref)
        status, obj = self.lookup_global(name)
        if status != "found" or name not in self.src.globals:
            return None  # missing, or a builtin
        if callable(obj) or isinstance(obj, (types.ModuleType, type)):
            return None  # calls and attribute chains resolve these by name
        return self._shadowing_global(name)

    def _shadowing_global(self, name: str) -> Optional[str]:
        """For a user global/closure variable ``name`` that generated code would
        take for its own (``ad = 3.0`` vs the ``ad`` namespace, a global ``min``):
        the name generated code reads it by (``ad_``), bound to the user's
        variable itself, live, in the root function's module; None when ``name``
        means what generated code means by it (numpy as ``np``, a builtin)."""
        from ..codegen import emit

        status, obj = self.lookup_global(name)
        if status != "found" or emit.means_the_same(name, obj):
            return None
        key = (name, id(self.src.globals), id(self.src.closure))
        known = self.namer.user_globals.get(key)
        if known is not None:
            return known
        new = self.namer.fresh(name)
        own_cell = name in self.src.closure and self.src.closure is self.root_closure
        global_ = name not in self.src.closure and name not in self.root_closure
        # read live where generated code's globals resolve the alias to this very
        # variable: the root's own cell, or a global no cell of the root hides
        live = self.src.globals is self.root_globals and (own_cell or global_)
        # (a variable of another module, or a closure cell of an inlined function,
        # is read at transformation time, as other names of inlined code are)
        self.bindings[new] = emit.UserGlobal(name) if live else obj
        self.namer.user_globals[key] = new
        return new

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
        for node in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
            # (a length known before a loop or a branch decided at run time may
            # not hold inside it or after it)
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                self.seq_lens.pop(self.var(node.id), None)
        if not self.known_flags:
            return
        for node in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
            if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
                self.known_flags.pop(node.targets[0].id, None)

    def stmt(self, s: Any) -> None:
        prev_origin = self.origin
        if hasattr(s, "lineno"):
            self.origin = s
        try:
            self._stmt(s)
        finally:
            self.origin = prev_origin

    def _stmt(self, s: Any) -> None:
        if isinstance(s, gast.Assign):
            if len(s.targets) > 1:
                v = self.atom(s.value)
                for t in s.targets:
                    self.assign_target(t, v)
                return
            if self.function_list_binding(s.targets[0], s.value):
                return  # lax.switch's branch list, resolved where the switch is
            t = s.targets[0]
            if isinstance(t, gast.Name) and t.id in self.flag_names:
                if isinstance(s.value, gast.Constant) and isinstance(s.value.value, bool):
                    self.known_flags[t.id] = s.value.value
                else:
                    self.known_flags.pop(t.id, None)
            self.assign_target(s.targets[0], s.value)
        elif isinstance(s, gast.AnnAssign):
            if s.value is not None:
                self.assign_target(s.target, s.value)
        elif isinstance(s, gast.AugAssign):
            if (
                isinstance(s.target, gast.Name)
                and isinstance(s.op, gast.Add)
                and "list" in (self.seq_kind(s.target), self.seq_kind(s.value))
            ):
                # l += xs extends the list in place (any iterable xs, as l.extend)
                self.extend(self.var(s.target.id), s.value)
                return
            op = gast.BinOp(left=_as_load(N.clone(s.target)), op=s.op, right=s.value)
            N.copy_origin(op, s)
            self.assign_target(s.target, op)
        elif isinstance(s, gast.Expr):
            if isinstance(s.value, gast.Constant):
                return
            self.expr_statement(s.value)
        elif isinstance(s, gast.If):
            known = self._static_truth(s.test)
            if known is not None:
                # `if USE_FAST_PATH:` on a module constant: only the branch taken
                # is transformed (the other may call what srcjax cannot read)
                for st in s.body if known else s.orelse:
                    self.stmt(st)
                return
            chosen = _branch_bound_functions(s, self._is_local_fn, self._returns_function)
            outer = {}
            for n in chosen:
                # a local function bound in a branch: its name becomes a choice
                v = self.var(n)
                outer[v] = self.fn_choices.pop(v, None)
                choice = _FnChoice(self._source_alias(None, f"{n}_which"))
                self.fn_choices[v] = choice
                if v in self.local_fns:  # the function bound before the `if`
                    self.bind_local_fn(v, self.local_fns[v])
            test = self.condition(s.test)
            self.forget_flags([s])
            flags = dict(self.known_flags)
            body = self.block(s.body)
            self.known_flags = flags
            orelse = self.block(s.orelse)
            self.forget_flags([s])
            node = gast.If(test=test, body=body or [gast.Pass()], orelse=orelse)
            self.emit(node)
            for v, prev in outer.items():
                choice = self.fn_choices.pop(v)
                if prev is not None:
                    self.fn_choices[v] = prev
                self.bind_local_fn(v, choice)
        elif isinstance(s, gast.While):
            self.forget_flags([s])
            self.while_loop(s)
            self.forget_flags([s])
        elif isinstance(s, gast.For):
            self.for_loop(s)
        elif isinstance(s, gast.Return):
            fn = self._returned_function(s.value)
            if fn is not None:
                # an inlined factory (`def make(k): return lambda t: t * k`): the
                # caller binds the function; nothing is returned at run time
                self.returned_fn = fn
                self.emit(gast.Return(value=N.const(None)))
                return
            val = N.const(None) if s.value is None else self.atom(s.value, base="out")
            self.emit(gast.Return(value=val))
        elif isinstance(s, gast.FunctionDef):
            if s.decorator_list:
                raise _unsupported(s, "decorated nested functions", src=self.src)
            self.bind_local_fn(self.var(s.name), self.snapshot_defaults(s))
        elif isinstance(s, gast.Pass):
            return
        elif isinstance(s, (gast.Assert, gast.Raise)):
            self.emit(self.rename_all(s), Op("inactive", what="assert"))
        elif isinstance(s, gast.Delete):
            for t in s.targets:
                self.delete(t)
        else:
            raise UnsupportedSyntaxError(
                f"`{type(s).__name__}` statements are not supported in transformed functions",
                self.loc(s),
                "move this code outside the transformed function",
            )

    def snapshot_defaults(self, fdef: Any) -> Any:
        """``fdef`` with its default values computed now, as Python evaluates them
        when the ``def`` runs (``def g(t, k=k)`` then ``k = ...``: g keeps the old
        k). Each becomes an atom of this scope, marked so that inlining a call
        does not rename it again."""
        if not any(not isinstance(d, gast.Constant) for d in fdef.args.defaults):
            return fdef
        fdef = N.clone(fdef)
        fixed = []
        for d in fdef.args.defaults:
            if not isinstance(d, gast.Constant):
                value = self.atom(d, base=f"{fdef.name}_default")
                if isinstance(value, gast.Name):
                    # a copy: the name itself may be rebound before the call
                    t = self.temp(f"{fdef.name}_default")
                    self.emit(N.assign(t, value), Op("copy", elts=[value]))
                    value = N.name(t)
                    value.sj_resolved = True
                d = value
            fixed.append(d)
        fdef.args.defaults = fixed
        return fdef

    def rename_all(self, node: Any) -> Any:
        node = N.clone(node)
        for n in gast.walk(node):
            if isinstance(n, gast.Name):
                if getattr(n, "sj_resolved", False):
                    continue  # already a name of the normalized code
                if n.id in self.locals:
                    n.id = self.var(n.id)
                elif isinstance(n.ctx, gast.Load):
                    new = self.global_ref(n)
                    n.id = new.id
        return node

    def assign_target(self, target: Any, value: Any, as_value: bool = False) -> None:
        if isinstance(target, gast.Name) and not as_value:
            lam = self.fn_expr(value) if isinstance(value, gast.Call) else value
            if lam is value and isinstance(value, gast.Call):
                lam = self._transform_as_lambda(value) or value
            if isinstance(lam, gast.Lambda):
                # f = partial(model, params), f = checkpoint(layer): a local function,
                # so transforms and calls of f inline it; a partial of a module
                # function is also a value at run time (returned, stored)
                from .source import _lambda_to_def

                partial = isinstance(value, gast.Call) and self.resolve(value.func) == (
                    "found",
                    functools.partial,
                )
                if partial and not (
                    isinstance(value.args[0], gast.Name) and value.args[0].id in self.locals
                ):
                    self.assign_target(target, value, as_value=True)
                fdef = _lambda_to_def(lam)
                fdef.name = target.id
                self.bind_local_fn(self.var(target.id), fdef)
                return
        if isinstance(target, gast.Name) and self._jit_of_local(value):
            # j = jit(inner) with a local def or lambda: jit is an identity for the
            # transforms, so j names the same local function
            value = value.args[0]
            if isinstance(value, gast.Name):
                self.bind_local_fn(self.var(target.id), self.local_fns[self.var(value.id)])
                return
        if isinstance(target, gast.Name) and isinstance(value, gast.Lambda):
            from .source import _lambda_to_def

            fdef = _lambda_to_def(value)
            fdef.name = target.id
            self.bind_local_fn(self.var(target.id), fdef)
            return
        if (
            isinstance(target, gast.Name)
            and isinstance(value, gast.Name)
            and value.id in self.locals
            and self.var(value.id) in self.local_fns
        ):
            # h = g, g a local function: h names the function g names now
            self.bind_local_fn(self.var(target.id), self.local_fns[self.var(value.id)])
            return
        if (
            isinstance(target, gast.Name)
            and (target.id in self.fn_names or self.var(target.id) in self.fn_choices)
            and isinstance(value, (gast.Name, gast.Attribute))
        ):
            status, obj = self.resolve(value)
            if status == "found" and callable(obj):
                # act = jnp.tanh, where act is elsewhere a nested def or lambda
                self.bind_local_fn(self.var(target.id), _GlobalFn(value))
                return
        if isinstance(target, gast.Name) and isinstance(value, gast.IfExp):
            as_if = N.copy_origin(
                gast.If(
                    test=value.test,
                    body=[N.copy_origin(gast.Assign(targets=[target], value=value.body), value)],
                    orelse=[
                        N.copy_origin(gast.Assign(targets=[target], value=value.orelse), value)
                    ],
                ),
                value,
            )
            if _branch_bound_functions(as_if, self._is_local_fn, self._returns_function):
                # g = (lambda t: ...) if c else (lambda t: ...): a choice of functions
                self._stmt(as_if)
                return
        if (
            isinstance(target, gast.Name)
            and isinstance(value, (gast.List, gast.Tuple))
            and self._only_iterated(target.id)
        ):
            fns = self._function_list(value)
            if fns is not None:  # acts = [jnp.tanh, lambda t: t * 2]; for a in acts:
                self.fn_lists[self.var(target.id)] = fns
                return
        if isinstance(target, gast.Name):
            tname = self.var(target.id)
            self.pending_fn = None
            if self.store_counts.get(target.id, 0) == 1 and self._is_host(value):
                self.host_names.add(tname)
            self.compute_into(tname, value)
            if self.pending_fn is not None:
                fn, self.pending_fn = self.pending_fn, None
                self.bind_local_fn(tname, fn)
        elif isinstance(target, (gast.Tuple, gast.List)):
            if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts):
                atoms = [self.atom(e) for e in value.elts]
                tnames = {self.var(n) for n in N.assigned_names([gast.Expr(value=target)])}
                fixed = []
                for a in atoms:
                    if isinstance(a, gast.Name) and a.id in tnames:
                        t = self.temp(a.id + "_old")
                        self.emit(N.assign(t, a), Op("copy", elts=[a]))
                        a = N.name(t)
                    fixed.append(a)
                for t, a in zip(target.elts, fixed):
                    self.assign_target(t, a)
                return
            whole = self.atom(value, base="packed")
            stars = [i for i, t in enumerate(target.elts) if isinstance(t, gast.Starred)]
            if len(stars) > 1:
                raise _unsupported(target.elts[stars[1]], "two starred targets", src=self.src)
            n = len(target.elts)
            for i, t in enumerate(target.elts):
                if stars and i == stars[0]:
                    # `*hidden, last = layers`: the middle items, as a list
                    after = n - i - 1
                    sl = gast.Slice(
                        lower=N.const(i), upper=N.const(-after) if after else None, step=None
                    )
                    part = gast.Subscript(value=N.clone(whole), slice=sl, ctx=gast.Load())
                    self.assign_target(
                        t.value, gast.Call(func=N.name("list"), args=[part], keywords=[])
                    )
                    continue
                j = i if not stars or i < stars[0] else i - n  # from the end after a star
                item = gast.Subscript(value=N.clone(whole), slice=N.const(j), ctx=gast.Load())
                self.assign_target(t, item)
        elif isinstance(target, gast.Subscript):
            # d[k] = v  ->  d = ad.setitem(d, k, v)  (functional; arrays raise as JAX does)
            base = target.value
            root = base
            while isinstance(root, gast.Subscript):
                root = root.value
            if isinstance(root, gast.Name) and root.id not in self.locals:
                # a module-level (or closed-over) container: rebinding it would make
                # the name local to the generated function (an internal
                # UnboundLocalError, user Y's METRICS["loss"] = l)
                raise UnsupportedSyntaxError(
                    f"assigning to an item of `{root.id}`, which is not a variable of the "
                    "transformed function, is not supported",
                    self.loc(target),
                    "return the value instead (has_aux=True for grad), or copy the "
                    f"container into a local first: `mine = dict({root.id})`",
                )
            if isinstance(target.slice, gast.Slice):
                # (emitted as a call argument, `0:1` was invalid Python)
                raise _unsupported(
                    target,
                    "assigning to a slice (`x[i:j] = v`)",
                    "build a new list instead (`xs = xs[:i] + v + xs[j:]`); for an array, "
                    "`x = x.at[i:j].set(v)`",
                    self.src,
                )
            if not isinstance(base, gast.Name):
                inner = self.atom(_as_load(N.clone(base)))
            else:
                inner = N.name(self.var(base.id))
            idx = self.index(target.slice)
            val = self.atom(value)
            prim = registry.by_public("ad.setitem")
            bound = {"x": inner, "idx": idx, "v": val}
            expr = N.call(prim.public, [N.clone(inner), idx, val])
            dest = base
            while isinstance(dest, gast.Subscript):
                dest = dest.value
            if isinstance(dest, gast.Attribute):
                # self.metrics["k"] = v: the container lives in an object
                raise _unsupported(
                    target,
                    f"assigning to an item of `{N.to_source(dest).strip()}` (an attribute)",
                    "keep the container in a local variable, or return the value "
                    "(has_aux=True for grad)",
                    src=self.src,
                )
            if not isinstance(base, gast.Name):
                # nested container update: x[a][b] = v -> t = x[a]; t = setitem(t, b, v);
                # x = setitem(x, a, t)
                tmp = inner.id
                self.emit(N.assign(tmp, expr), Op("prim", prim=prim, bound=bound))
                self.assign_target(_as_store(N.clone(base)), N.name(tmp))
                return
            self.emit(N.assign(self.var(base.id), expr), Op("prim", prim=prim, bound=bound))
        elif isinstance(target, gast.Attribute):
            raise _unsupported(
                target,
                "assigning to an attribute",
                "build a new object, or keep the value in a local variable",
                src=self.src,
            )
        else:
            raise _unsupported(target, f"assignment to {type(target).__name__}", src=self.src)

    def fn_expr(self, node: Any, objects: bool = True) -> Any:
        """An expression naming a function, as one the transforms take (a lambda,
        a local function's name, a module function): ``jit(f)`` and
        ``checkpoint(f)`` without options are ``f`` (identities here);
        ``functools.partial(...)`` and a callable registered-class instance
        (``vmap(model)``, Equinox's idiom) become lambdas (see
        :meth:`partial_as_lambda`; not with ``objects=False``: a helper's
        argument); other nodes come back unchanged."""
        if (
            isinstance(node, gast.Call)
            and len(node.args) == 1
            and not node.keywords
            and getattr(self.resolve(node.func)[1], "__srcjax_jit__", False)
        ):
            inner = self.fn_expr(node.args[0])
            if isinstance(inner, gast.Lambda) or (
                isinstance(inner, gast.Name) and self.var(inner.id) in self.local_fns
            ):
                return inner
            status, obj = self.resolve(inner)
            if status == "found" and isinstance(obj, types.FunctionType):
                lam = self._call_lambda(inner, [], [], node)
                if lam is not None:
                    return lam
            return node
        lam = self.partial_as_lambda(node)
        if lam is not None:
            return lam
        named = isinstance(node, (gast.Name, gast.Attribute))
        ty = self.expr_type(node) if objects and named else None
        if ty is not None and ty[0] == "class" and _plain_method(ty[1], "__call__"):
            lam = self._call_lambda(node, [], [], node)
            if lam is not None:
                return lam
        return node

    def _transform_as_lambda(self, node: Any) -> Optional[Any]:
        """``g = grad(h)`` (vmap, jacfwd, ... of a function known here, options
        constant): ``lambda x, ...: grad(h)(x, ...)``, with ``h``'s positional
        parameters, so a call ``g(x)`` is the transform's call inlined (user L
        r29: 'no derivative rule for g'); else None."""
        if not (
            node.args
            and not any(isinstance(a, gast.Starred) for a in node.args)
            and getattr(self.resolve(node.func)[1], "__srcjax_factory__", False)
        ):
            return None
        fn = node.args[0]
        while (  # vmap(grad(h)): h's parameters
            isinstance(fn, gast.Call)
            and fn.args
            and getattr(self.resolve(fn.func)[1], "__srcjax_factory__", False)
        ):
            fn = fn.args[0]
        if isinstance(fn, gast.Lambda):
            if fn.args.vararg or fn.args.kwonlyargs or fn.args.defaults:
                return None
            names = [a.id for a in fn.args.args]
        else:
            params = self._positional_params(self.fn_expr(fn))
            if params is None:
                return None
            names = [n for n, d in params if d is inspect.Parameter.empty]
        call = gast.Call(func=N.clone(node), args=[N.name(n) for n in names], keywords=[])
        return _lambda_of(names, call, node)

    def partial_as_lambda(self, node: Any) -> Optional[Any]:
        """``functools.partial(fn, a, k=v)`` of a function known here (a module
        function, a local def or lambda) as the lambda ``lambda x, ...: fn(a', x,
        ..., k=v')``, where ``a'``/``v'`` are copies of the bound values made now
        (partial binds values, not names); else None. So the transforms and calls
        that take lambdas take partials (``vmap(partial(model, params))(xs)``).
        The lambda's parameters are ``fn``'s positional ones left over up to the
        first with a default (those take ``fn``'s defaults)."""
        if not (
            isinstance(node, gast.Call)
            and node.args
            and all(k.arg is not None for k in node.keywords)
            and not any(isinstance(a, gast.Starred) for a in node.args)
            and self.resolve(node.func) == ("found", functools.partial)
        ):
            return None
        return self._call_lambda(node.args[0], node.args[1:], node.keywords, node)

    def _call_lambda(self, fn: Any, bound: list, keywords: list, node: Any) -> Optional[Any]:
        """``lambda x, ...: fn(a', x, ..., k=v')`` (see :meth:`partial_as_lambda`)."""
        params = self._positional_params(fn)
        if params is None:
            return None
        taken = {k.arg for k in keywords}
        rest = []
        for name, default in params[len(bound) :]:
            if default is not inspect.Parameter.empty:
                break  # (left to fn's own default)
            if name not in taken:
                rest.append(name)
        values = [self.atom(a, base="bound", force_name=True) for a in bound]
        kws = [
            gast.keyword(arg=k.arg, value=self.atom(k.value, base=k.arg, force_name=True))
            for k in keywords
        ]
        call = gast.Call(func=N.clone(fn), args=values + [N.name(n) for n in rest], keywords=kws)
        return _lambda_of(rest, call, node)

    def _positional_params(self, fn: Any) -> Optional[List[tuple]]:
        """``[(name, default or Parameter.empty), ...]``: the positional parameters
        of a function known here (see :meth:`partial_as_lambda`), else None."""
        ty = self.expr_type(fn) if isinstance(fn, (gast.Name, gast.Attribute)) else None
        if ty is not None and ty[0] == "class":
            method = _plain_method(ty[1], "__call__")  # model(x): __call__ less self
            params = self._signature_params(method) if method is not None else None
            return params[1:] if params else None
        if isinstance(fn, gast.Name) and fn.id in self.locals:
            fdef = self.local_fns.get(self.var(fn.id))
            if isinstance(fdef, _ForeignFn):
                fdef = fdef.fdef
            if not isinstance(fdef, gast.FunctionDef) or fdef.args.vararg:
                return None
            names = [a.id for a in fdef.args.args]
            n_plain = len(names) - len(fdef.args.defaults)
            return [
                (n, inspect.Parameter.empty if i < n_plain else None) for i, n in enumerate(names)
            ]
        status, obj = self.resolve(fn)
        if status != "found" or not callable(obj) or isinstance(obj, type):
            return None
        return self._signature_params(obj)

    @staticmethod
    def _signature_params(obj: Any) -> Optional[List[tuple]]:
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            return None
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        if any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in sig.parameters.values()):
            return None
        return [(p.name, p.default) for p in sig.parameters.values() if p.kind in kinds]

    def _jit_of_local(self, value: Any) -> bool:
        """Whether ``value`` is ``jit(f, ...)`` of a local def or a lambda."""
        if not (isinstance(value, gast.Call) and value.args):
            return False
        st, factory = self.resolve(value.func)
        if st != "found" or not getattr(factory, "__srcjax_jit__", False):
            return False
        f = value.args[0]
        if isinstance(f, gast.Lambda):
            return True
        return isinstance(f, gast.Name) and self.var(f.id) in self.local_fns

    def compute_into(self, tname: str, value: Any) -> None:
        """Emit statements computing ``value`` with the final result stored in ``tname``."""
        node, op = self.simple(value, tname)
        if node is None:
            return
        if isinstance(node, gast.Name) and node.id == tname:
            return
        self.emit(N.assign(tname, node), op)

    def expr_statement(self, value: Any) -> None:
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute):
            done = self.container_method(value, None, discard=True)
            if done is not None:
                node, op = done
                if not isinstance(node, gast.Constant):
                    self.emit(N.expr_stmt(node), op)
                return
            status, root = self.resolve(value.func.value)
            if (
                status == "local"
                and value.func.attr == "append"
                and isinstance(value.func.value, gast.Name)
            ):
                lst = self.var(value.func.value.id)
                if len(value.args) != 1:
                    raise _unsupported(value, "append with several arguments", src=self.src)
                v = self.atom(value.args[0])
                call = N.call(N.attr(N.name(lst), "append"), [v])
                self.emit(N.expr_stmt(call), Op("append", elts=[v], target=lst))
                return
        node, op = self.simple(value, None)
        if node is not None:
            self.emit(N.expr_stmt(node), op)

    # -- lists and dicts changed in place ------------------------------------------
    def seq_kind(self, e: Any) -> Optional[str]:
        """The kind of source expression ``e`` when it surely is a "list", "tuple"
        or "dict"; else None."""
        k = _value_kind(e, self.ckinds, self._builtin_of)
        return k if k in _KINDS else None

    def _builtin_of(self, func: Any) -> Any:
        """The builtin ``list``/``tuple``/``dict`` that call target ``func`` names."""
        if isinstance(func, gast.Name) and func.id not in self.locals:
            status, obj = self.lookup_global(func.id)
            if status == "found" and obj in (list, tuple, dict):
                return obj
        return None

    def _seq_operand(self, e: Any) -> bool:
        """Whether ``e`` is a list or tuple whose `+` / `*` must be the sequence
        operation: a list, or a tuple holding values (``x.shape + (1,)`` and
        ``(1,) * n`` stay as they are: static metadata)."""
        kind = self.seq_kind(e)
        if kind == "tuple" and isinstance(e, gast.Tuple):
            return any(_fold_constant(x) is None for x in e.elts)
        return kind in ("list", "tuple", "seq")

    def sequence_binop(self, e: Any) -> Optional[tuple]:
        """``l + m`` (``ad.concat``) and ``l * n`` / ``n * l`` (``ad.repeat``) of a
        list or tuple known statically; None for any other operator."""
        if isinstance(e.op, gast.Add):
            if not (self._seq_operand(e.left) or self._seq_operand(e.right)):
                return None
            a, b = self.atom(e.left), self.atom(e.right)
            return self._prim_node("ad.concat", a, b)
        if not isinstance(e.op, gast.Mult):
            return None
        if self._seq_operand(e.left) and self.seq_kind(e.right) is None:
            a, b = self.atom(e.left), self.atom(e.right)
            return self._prim_node("ad.repeat", a, b)
        if self._seq_operand(e.right) and self.seq_kind(e.left) is None:
            a, b = self.atom(e.left), self.atom(e.right)
            return self._prim_node("ad.repeat", b, a)
        return None

    def _prim_node(self, public: str, *args: Any) -> tuple:
        prim = registry.by_public(public)
        node = _prim_expr(prim, [N.clone(a) for a in args], {})
        return node, Op("prim", prim=prim, bound=_bind(prim, *args))

    def _prim_into(self, t: str, public: str, *args: Any) -> Any:
        """Emit ``t = <public>(*args)`` (args are atoms); returns the name ``t``."""
        node, op = self._prim_node(public, *args)
        self.emit(N.assign(t, node), op)
        return N.name(t)

    def _append(self, lst: str, v: Any) -> None:
        call = N.call(N.attr(N.name(lst), "append"), [v])
        self.emit(N.expr_stmt(call), Op("append", elts=[v], target=lst))

    def extend(self, lst: str, xs: Any) -> None:
        """``lst.extend(xs)`` / ``lst += xs``: the items appended one by one, by a
        loop over ``xs`` unless it is a display."""
        if isinstance(xs, (gast.List, gast.Tuple)):
            for v in [self.atom(x) for x in xs.elts]:
                self._append(lst, v)
            return
        seq = self.atom(xs, base="items")
        if isinstance(seq, gast.Name) and seq.id == lst:  # l.extend(l): the items before
            seq = self._prim_into(self.temp("items"), "ad.as_list", seq)
        i = self.temp("i")
        n = self._emit_len(("seq", seq))
        saved = self.out
        self.out = []
        item = gast.Subscript(value=N.clone(seq), slice=N.name(i), ctx=gast.Load())
        self._append(lst, self.atom(item, base="item"))
        body, self.out = self.out, saved
        rng = N.call(N.name("range"), [N.name(n)])
        loop = gast.For(target=N.name(i, store=True), iter=rng, body=body, orelse=[])
        loop.type_comment = None
        self.emit(loop)

    def _position(self, x: str, i: Any, insert: bool = False, read: bool = False) -> Any:
        """The nonnegative list position (or dict key) that ``x.pop(i)`` / ``del
        x[i]`` / ``x.insert(i, v)`` acts on: ``i`` itself when it is a constant
        that needs no check (``insert(0, v)``; ``pop(i)``, ``i >= 0``, whose
        ``read`` of the item checks it), else ``ad.seq_pos``."""
        if isinstance(i, gast.Constant) and type(i.value) is int:
            if (i.value == 0 and insert) or (i.value >= 0 and read):
                return i
        return self._prim_into(self.temp("pos"), "ad.seq_pos", N.name(x), i, N.const(insert))

    def delete(self, t: Any) -> None:
        """``del x[i]`` of a local list or dict: ``x = ad.delitem(x, pos)``."""
        if (
            isinstance(t, gast.Subscript)
            and isinstance(t.value, gast.Name)
            and t.value.id in self.locals
            and not isinstance(t.slice, (gast.Slice, gast.Tuple))
        ):
            x = self.var(t.value.id)
            pos = self._position(x, self.index(t.slice))
            self._prim_into(x, "ad.delitem", N.name(x), pos)
            return
        if isinstance(t, gast.Name):
            what, hint = "`del` of a variable", "stop using the variable, or rebind it"
        elif isinstance(t, gast.Subscript) and isinstance(t.slice, (gast.Slice, gast.Tuple)):
            what, hint = "`del` of a slice", "build the shorter list: `l = l[:i] + l[j:]`"
        else:
            what = "`del` of this item"
            hint = "give the container a name, delete from it (`del c[k]`) and store it back"
        raise _unsupported(t, what, hint, src=self.src)

    def container_method(self, e: Any, target: Optional[str], discard: bool = False):
        """In-place methods of a local list or dict (``l.insert(i, v)``,
        ``d.update(m)`` ...) as rebindings of its name, which every transform
        follows: (node, Op) of the call's value, or None for any other call."""
        func = e.func
        name = func.attr if isinstance(func, gast.Attribute) else None
        if (
            name not in _CONTAINER_METHODS
            or not isinstance(func.value, gast.Name)
            or func.value.id not in self.locals
            or func.value.id in self.static_params  # an object known here (t.update)
            or self.expr_type(func.value) is not None  # a registered class's method
            or (self.seq_kind(func.value), name) in _NOT_A_METHOD
        ):
            return None  # it runs as written (AttributeError for a tuple's .append)
        x = self.var(func.value.id)
        args = list(e.args)
        kws = {k.arg: k.value for k in e.keywords}
        none = (N.const(None), Op("copy", elts=[N.const(None)]))
        nargs = _CONTAINER_METHODS[name]
        if not (len(args) in nargs and (not kws or name in ("update", "sort"))):
            raise _unsupported(e, f"`.{name}` with these arguments", src=self.src)
        if name == "append":
            v = self.atom(args[0])
            if isinstance(v, gast.Name) and v.id in self.local_fns:
                raise UnsupportedSyntaxError(
                    f"a function defined inside the transformed function (`{v.id}`) cannot "
                    "be stored in a list (it is inlined where it is called, never made a value)",
                    self.loc(e),
                    "define it at module level, or call it directly",
                )
            self._append(x, v)
            return none
        if name == "extend":
            self.extend(x, args[0])
            return none
        if name == "insert":
            i, v = self.atom(args[0]), self.atom(args[1])
            self._prim_into(x, "ad.insert", N.name(x), self._position(x, i, True), v)
            return none
        if name == "pop" and not args and self._only_pushed_and_popped(func.value.id):
            # a stack (grad's tapes, any list of generated code): popped in place
            return N.call(N.attr(N.name(x), "pop"), []), Op("pop", elts=[N.name(x)], target=x)
        if name == "pop" and len(args) <= 1:
            # l.pop(i) as l = ad.delitem(l, i) after reading the item: a new list, so
            # reads of l before the pop keep the old one (user L: `sum(l) + l.pop()`
            # was wrong under jit, and grad's backward sweep saw the shorter list)
            pos = self._position(x, self.atom(args[0]) if args else N.const(-1), read=True)
            t = target if target is not None and target != x else self.temp("popped")
            self._prim_into(t, "ad.getitem", N.name(x), pos)
            self._prim_into(x, "ad.delitem", N.name(x), pos)
            return N.name(t), Op("copy", elts=[N.name(t)])
        if name == "pop":  # d.pop(key, default)
            k, default = self.atom(args[0]), self.atom(args[1])
            t = target if target is not None and target != x else self.temp("popped")
            has = self._test(k, gast.In(), x, "has")
            saved = self.out
            self.out = []
            self._prim_into(t, "ad.getitem", N.name(x), k)
            self._prim_into(x, "ad.delitem", N.name(x), k)
            body, self.out = self.out, []
            self.emit(N.assign(t, default), Op("copy", elts=[default]))
            orelse, self.out = self.out, saved
            self.emit(gast.If(test=has, body=body, orelse=orelse))
            return N.name(t), Op("copy", elts=[N.name(t)])
        if name == "remove":
            v = self.atom(args[0])
            pos = self._prim_into(self.temp("pos"), "ad.seq_index", N.name(x), v)
            self._prim_into(x, "ad.delitem", N.name(x), pos)
            return none
        if name == "reverse":
            flip = gast.Slice(lower=None, upper=None, step=N.const(-1))
            self._prim_into(x, "ad.getitem", N.name(x), flip)
            return none
        if name == "sort" and not discard:
            return None  # its value is used: an array's x.sort(), the sorted copy (jnp.sort)
        if name == "sort":
            raise UnsupportedSyntaxError(
                "`.sort()` (sorting a list in place) is not supported in transformed functions",
                self.loc(e),
                "sort an array instead: `x = jnp.sort(jnp.stack(l))` (for an array, "
                "`x.sort()` returns the sorted copy: `x = x.sort()`)",
            )
        if name == "clear":
            kind = self.seq_kind(func.value)
            if kind == "list":
                self.emit(N.assign(x, gast.List(elts=[], ctx=gast.Load())), Op("pack", elts=[]))
            elif kind == "dict":
                self.emit(N.assign(x, gast.Dict(keys=[], values=[])), Op("pack", elts=[]))
            else:
                self._prim_into(x, "ad.emptied", N.name(x))
            return none
        if name == "update":
            self.update(x, args[0] if args else None, kws)
            return none
        if name == "setdefault":
            k = self.atom(args[0])
            v = self.atom(args[1]) if len(args) > 1 else N.const(None)
            missing = self._test(k, gast.NotIn(), x, "missing")
            saved = self.out
            self.out = []
            self._prim_into(x, "ad.setitem", N.name(x), k, v)
            body, self.out = self.out, saved
            self.emit(gast.If(test=missing, body=body, orelse=[]))
            if discard:
                return none
            return self._prim_node("ad.getitem", N.name(x), k)
        # popitem
        keys = self._prim_into(self.temp("keys"), "ad.keys", N.name(x))
        k = self._prim_into(self.temp("key"), "ad.getitem", keys, N.const(-1))
        v = self._prim_into(self.temp("value"), "ad.getitem", N.name(x), k)
        self._prim_into(x, "ad.delitem", N.name(x), k)
        pair = gast.Tuple(elts=[k, v], ctx=gast.Load())
        return pair, Op("pack", elts=[k, v])

    def dict_copy(self, src: Any, kws: Optional[Dict[str, Any]] = None) -> Any:
        """Emit a new dict with the items of source expression ``src`` (a dict,
        ``zip(keys, values)``, ``d.items()``, a list of pairs), then ``kws``; its
        name. Built as the comprehension ``{k: v for k, v in ...}``, so every value
        stays differentiable (``dict(d)``, ``d.copy()``, ``d | e``: user L, whose
        gradients were silently zero when dict(d) was taken for a class's
        construction)."""
        it = src
        pairs = (
            isinstance(src, gast.Call)
            and (
                self.resolve(src.func) == ("found", zip)
                or (isinstance(src.func, gast.Attribute) and src.func.attr == "items")
            )
        ) or self.seq_kind(src) in ("list", "tuple")
        if not pairs:
            it = gast.Call(func=N.attr(N.clone(src), "items"), args=[], keywords=[])
        k, v = self.namer.fresh("key"), self.namer.fresh("value")
        comp = gast.DictComp(
            key=N.name(k),
            value=N.name(v),
            generators=[
                gast.comprehension(
                    target=gast.Tuple(
                        elts=[N.name(k, store=True), N.name(v, store=True)], ctx=gast.Store()
                    ),
                    iter=it,
                    ifs=[],
                    is_async=0,
                )
            ],
        )
        for node in gast.walk(comp):
            if not hasattr(node, "lineno"):
                gast.copy_location(node, src)
        t = self.atom(comp, base="copied", force_name=True)
        if kws:
            self.update(t.id, None, kws)
        return t

    def _test(self, k: Any, op: Any, x: str, base: str) -> Any:
        """Emit ``c = k in x`` (or ``not in``): a condition with no derivative."""
        c = self.temp(base)
        test = gast.Compare(left=N.clone(k), ops=[op], comparators=[N.name(x)])
        self.emit(N.assign(c, test), Op("inactive", what="comparison"))
        return N.name(c)

    def update(self, d: str, other: Any, kws: Dict[str, Any]) -> None:
        """``d.update(other, **kws)``: item assignments (``ad.dict_update`` for an
        ``other`` that is no dict display)."""
        items = []
        if isinstance(other, gast.Dict) and all(k is not None for k in other.keys):
            items = [(self.atom(k), self.atom(v)) for k, v in zip(other.keys, other.values)]
        elif other is not None:
            self._prim_into(d, "ad.dict_update", N.name(d), self.atom(other, base="other"))
        items += [(N.const(key), self.atom(v)) for key, v in kws.items()]
        for k, v in items:
            self._prim_into(d, "ad.setitem", N.name(d), k, v)

    def while_loop(self, s: Any) -> None:
        saved = self.out
        self.out = []
        test = self.condition(s.test, force_name=False)
        test_stmts, self.out = self.out, saved
        body = self.block(s.body)
        if (
            len(test_stmts) == 1
            and isinstance(test_stmts[0], gast.Assign)
            and getattr(test_stmts[0], "sj_op", None) is not None
            and test_stmts[0].sj_op.kind == "inactive"
            and isinstance(test, gast.Name)
            and test_stmts[0].targets[0].id == test.id
        ):
            test = test_stmts[0].value  # a plain comparison stays in the loop header
            test_stmts = []
        if not test_stmts:
            self.emit(gast.While(test=test, body=body or [gast.Pass()], orelse=[]))
            return
        # the test needs statements: evaluate it before the loop and at the end of the body
        self.out.extend(test_stmts)
        # (a short-circuit test holds `if` statements: their inner statements keep
        # their Ops too)
        again = _clone_sharing_ops(test_stmts)
        self.emit(gast.While(test=test, body=body + again, orelse=[]))

    def for_loop(self, s: Any) -> None:
        it = s.iter
        target = s.target
        if self._unroll_over_functions(s):
            return
        fns = self._function_list(it) if isinstance(target, gast.Name) else None
        if fns is not None:
            # a loop over functions (`for act in (jnp.tanh, lambda t: t * 2)`): its
            # passes are unrolled, each with the loop variable naming one function
            for fn in fns:
                self.bind_local_fn(self.var(target.id), fn)
                for st in s.body:
                    self.stmt(N.clone(st))
            return
        # for x in range(...)
        rev = False
        if (
            isinstance(it, gast.Call)
            and len(it.args) == 1
            and not it.keywords
            and isinstance(it.args[0], gast.Call)
            and self.resolve(it.func) == ("found", reversed)
            and self.resolve(it.args[0].func) == ("found", range)
        ):
            it, rev = it.args[0], True  # for i in reversed(range(...)): kept as written
        if isinstance(it, gast.Call):
            status, obj = self.resolve(it.func)
            if status == "found" and obj is range and not it.keywords:
                args = [self.atom(a) for a in it.args]
                if not isinstance(target, gast.Name):
                    raise _unsupported(target, "unpacking a range loop variable", src=self.src)
                tname = self.var(target.id)
                # (the body is still source: compare source names, not the renamed
                # one, which may be another source name of an inlined function)
                # (a body that never reads the variable may rebind it: nested
                # `for _ in range(...)` loops, as JAX users write them)
                if target.id in N.assigned_names(s.body) and any(
                    target.id in N.names_in(st) for st in s.body
                ):
                    raise UnsupportedSyntaxError(
                        f"assigning to the loop variable `{target.id}` inside its `for` loop "
                        "is not supported in transformed functions",
                        self.loc(s),
                        "use another name inside the loop body",
                    )
                self.forget_flags(s.body)
                body = self.block(s.body)
                self.forget_flags(s.body)
                rng = N.call(N.name("range"), args)
                loop = gast.For(
                    target=N.name(tname, store=True),
                    iter=N.call(N.name("reversed"), [rng]) if rev else rng,
                    body=body or [gast.Pass()],
                    orelse=[],
                    type_comment=None,
                )
                self.emit(loop)
                return
        if self._unroll_over_classes(s):
            return
        spec = self._iter_spec(it)
        self._index_loop(s, spec)

    def _unroll_over_classes(self, s: Any) -> bool:
        """``for layer in self.layers: x = layer(x)`` over a list whose items hold
        instances of different registered classes (type tree ``("items", ...)``: a
        Sequential built from a config): the loop's passes are unrolled, each with
        the loop variable bound to one item, so each item's methods are inlined
        (user J). Only without break/continue in the body; a loop over one class
        stays a loop."""
        target, it = s.target, s.iter
        body = list(s.body)
        count, start, pair = None, N.const(0), None
        if (
            isinstance(it, gast.Call)
            and 1 <= len(it.args) + len(it.keywords) <= 2
            and all(k.arg == "start" for k in it.keywords)
            and self.resolve(it.func) == ("found", enumerate)
        ):
            # for i, layer in enumerate(self.layers): i is each pass's constant (a
            # loop with `break` binds the pair to one name: `for it in ...`)
            if len(it.args) == 2 or it.keywords:
                start = it.args[1] if len(it.args) == 2 else it.keywords[0].value
            it = it.args[0]
            if isinstance(target, gast.Name):
                pair = target.id
            elif (
                isinstance(target, gast.Tuple)
                and len(target.elts) == 2
                and isinstance(target.elts[0], gast.Name)
            ):
                count, target = target.elts[0].id, target.elts[1]
            else:
                return False
        if isinstance(target, gast.Name):
            names, seqs = [target.id], [it]
        elif (
            isinstance(target, gast.Tuple)
            and all(isinstance(e, gast.Name) for e in target.elts)
            and isinstance(it, gast.Call)
            and not it.keywords
            and len(it.args) == len(target.elts)
            and self.resolve(it.func) == ("found", zip)
        ):
            # for layer, spec in zip(self.layers, self.specs)
            names, seqs = [e.id for e in target.elts], list(it.args)
        else:
            return False
        if any(isinstance(q, gast.Call) for q in seqs):
            return False
        n = None
        for q in seqs:
            ty = self.expr_type(q)
            if ty is not None and ty[0] == "items" and ty[1]:
                if any(t is not None and t[0] == "class" for t in ty[1]):
                    n = len(ty[1])
        if n is None:
            return False
        for node in gast.walk(gast.Module(body=body, type_ignores=[])):
            if isinstance(node, gast.Break):
                return False
        has_continue = any(
            isinstance(node, gast.Continue)
            for node in gast.walk(gast.Module(body=body, type_ignores=[]))
        )
        for k in range(n):
            binds = [
                N.copy_origin(
                    N.assign(
                        name, gast.Subscript(value=N.clone(q), slice=N.const(k), ctx=gast.Load())
                    ),
                    s,
                )
                for name, q in zip(names, seqs)
            ]
            i = gast.BinOp(left=N.const(k), op=gast.Add(), right=N.clone(start))
            if count is not None:
                binds.insert(0, N.copy_origin(N.assign(count, i), s))
            if pair is not None:
                item = binds[0].value
                binds = [N.copy_origin(N.assign(pair, gast.Tuple([i, item], gast.Load())), s)]
            body_k = binds + [N.clone(st) for st in body]
            if has_continue:
                # a pass of one trip: `continue` ends this item's pass, as in the loop
                once = gast.For(
                    target=N.name(self.namer.fresh("_once"), store=True),
                    iter=N.call(N.name("range"), [N.const(1)]),
                    body=body_k,
                    orelse=[],
                    type_comment=None,
                )
                self.stmt(N.copy_origin(once, s))
            else:
                for st in body_k:
                    self.stmt(st)
        return True

    def _iter_spec(self, it: Any) -> tuple:
        """("enumerate", inner) | ("zip", [specs]) | ("seq", atom) for a loop iterable."""
        if isinstance(it, gast.Call) and it.keywords and len(it.args) == 1:
            status, obj = self.resolve(it.func)
            kws = {k.arg: k.value for k in it.keywords}
            if status == "found" and obj is enumerate and set(kws) == {"start"}:
                # enumerate(xs, start=1): the index plus start
                start = self.atom(kws["start"], base="start")
                return ("enumerate_from", (self._iter_spec(it.args[0]), start))
        if isinstance(it, gast.Call) and not it.keywords:
            status, obj = self.resolve(it.func)
            if status == "found" and obj is enumerate and len(it.args) == 1:
                return ("enumerate", self._iter_spec(it.args[0]))
            if status == "found" and obj is enumerate and len(it.args) == 2:
                start = self.atom(it.args[1], base="start")
                return ("enumerate_from", (self._iter_spec(it.args[0]), start))
            if status == "found" and obj is zip and it.args:
                return ("zip", [self._iter_spec(a) for a in it.args])
            if status == "found" and obj is reversed and len(it.args) == 1:
                inner = self._iter_spec(it.args[0])
                return ("reversed", (inner, self._emit_len(inner)))
        if (
            isinstance(it, gast.Call)
            and isinstance(it.func, gast.Attribute)
            and it.func.attr in ("keys", "values", "items")
            and not it.args
            and not it.keywords
        ):
            # for k, v in d.items(): the keys are listed once (they carry no
            # derivative), the values are read as d[k] (differentiable)
            d = self.atom(it.func.value, base="d")
            ks = self.temp("keys")
            prim = registry.by_public("ad.keys")
            self.emit(
                N.assign(ks, N.call("ad.keys", [N.clone(d)])),
                Op("prim", prim=prim, bound=_bind(prim, d)),
            )
            return ("dict", (it.func.attr, d, ks))
        return ("seq", self.atom(it, base="seq"))

    def _emit_len(self, spec) -> str:
        """Emit the trip count of a loop over ``spec``; returns its name. Each
        sequence's length is its own statement (``n = ad.seq_len(xs)``), so vmap
        sees every one: ``zip(u, v)`` of batched arrays runs per-example lengths."""
        kind, val = spec
        if kind == "enumerate":
            return self._emit_len(val)
        if kind == "enumerate_from":
            return self._emit_len(val[0])
        if kind == "reversed":
            return val[1]
        n = self.temp("n")
        if kind == "seq":  # xs may be a dict: refused at run time (ad.seq_len)
            prim = registry.by_public("ad.seq_len")
            xs = N.clone(val)
            op = Op("prim", prim=prim, bound=_bind(prim, xs))
            self.emit(N.assign(n, N.call("ad.seq_len", [xs])), op)
        elif kind == "dict":
            length = N.call(N.name("len"), [N.name(val[2])])
            self.emit(N.assign(n, length), Op("inactive", what="len"))
        else:  # zip
            parts = [N.name(self._emit_len(v)) for v in val]
            self.emit(N.assign(n, N.call(N.name("min"), parts)), Op("inactive", what="len"))
        return n

    def _spec_item(self, spec, idx: str) -> Any:
        kind, val = spec
        if kind == "seq":
            return gast.Subscript(value=N.clone(val), slice=N.name(idx), ctx=gast.Load())
        if kind == "enumerate":
            return gast.Tuple(elts=[N.name(idx), self._spec_item(val, idx)], ctx=gast.Load())
        if kind == "enumerate_from":
            inner, start = val
            count = gast.BinOp(left=N.name(idx), op=gast.Add(), right=N.clone(start))
            return gast.Tuple(elts=[count, self._spec_item(inner, idx)], ctx=gast.Load())
        if kind == "reversed":
            inner, n = val
            j = self.temp("j")
            self.emit(N.assign(j, N.parse_expr(f"{n} - 1 - {idx}")), Op("inactive", what="index"))
            return self._spec_item(inner, j)
        if kind == "dict":
            how, d, ks = val
            key = gast.Subscript(value=N.name(ks), slice=N.name(idx), ctx=gast.Load())
            value = gast.Subscript(value=N.clone(d), slice=N.clone(key), ctx=gast.Load())
            if how == "keys":
                return key
            if how == "values":
                return value
            return gast.Tuple(elts=[key, value], ctx=gast.Load())
        return gast.Tuple(elts=[self._spec_item(v, idx) for v in val], ctx=gast.Load())

    def _index_loop(self, s, spec):
        if spec[0] == "seq" and self.type_of(spec[1]) == ("items", ()):
            return  # `for layer in self.layers` with no layers
        idx = self.temp("i")
        n = self._emit_len(spec)
        saved = self.out
        self.out = []
        self.assign_target(s.target, self._spec_item(spec, idx))
        head, self.out = self.out, saved
        self.forget_flags(s.body)
        body = head + self.block(s.body)
        self.forget_flags(s.body)
        loop = gast.For(
            target=N.name(idx, store=True),
            iter=N.call(N.name("range"), [N.name(n)]),
            body=body,
            orelse=[],
            type_comment=None,
        )
        self.emit(loop)

    # -- expressions -----------------------------------------------------------
    def atom(self, e: Any, base: Optional[str] = None, force_name: bool = False) -> Any:
        """Normalize ``e`` and return a Name or Constant holding its value."""
        if isinstance(e, gast.Constant) and not force_name:
            return e
        if isinstance(e, gast.Name) and not force_name:
            if e.id in self.locals:
                return N.name(self.var(e.id))
            ref = self.global_ref(N.name(e.id))
            ty = _constant_type(*self.lookup_global(e.id)) if isinstance(ref, gast.Name) else None
            if ty is not None:
                self.types[ref.id] = ty
            return ref
        folded = _fold_constant(e)
        if folded is not None and not force_name:
            return folded
        node, op = self.simple(e, None)
        if isinstance(node, gast.Name) and not force_name:
            return node
        if isinstance(node, gast.Constant) and not force_name:
            return node
        t = self.temp(base or _base_name(op, e))
        stmt = self.emit(N.assign(t, node), op)
        if getattr(e, "lineno", None) == getattr(stmt, "lineno", None) and hasattr(e, "col_offset"):
            stmt.col_offset = e.col_offset  # errors point at the sub-expression
            stmt.end_col_offset = getattr(e, "end_col_offset", None)
        return N.name(t)

    def condition(self, e: Any, base: str = "cond", force_name: bool = True) -> Any:
        """Normalize the test of an ``if``, ``while`` or conditional expression and
        return the atom holding its value, evaluated as Python does: ``a and b``
        evaluates ``b`` only when ``a`` is true, ``a or b`` only when it is false
        (``l = a`` then ``if l: t = b else: t = l``), and a chained comparison
        ``a < b < c`` evaluates ``b`` once and ``b < c`` only when ``a < b``; so
        ``i < n and v[i] > 0`` never reads ``v[n]``. ``not`` of such a test
        negates its short-circuit value. Under vmap the ``if`` is the per-example
        one (the right operand runs on safe inputs for the examples that do not
        need it); grad's tape replays it like any ``if``."""
        if isinstance(e, gast.BoolOp) and len(e.values) > 1:
            left = self.condition(e.values[0], base)
            rest = (
                e.values[1]
                if len(e.values) == 2
                else N.copy_origin(gast.BoolOp(op=e.op, values=e.values[1:]), e)
            )
            return self._short_circuit(
                left, isinstance(e.op, gast.And), lambda: self.condition(rest, base), base
            )
        if isinstance(e, gast.Compare) and len(e.ops) > 1:
            return self._compare_chain(self.atom(e.left), e.ops, e.comparators, base)
        if (
            isinstance(e, gast.UnaryOp)
            and isinstance(e.op, gast.Not)
            and self._short_circuits(e.operand)
        ):
            inner = self.condition(e.operand, base)
            return self.atom(gast.UnaryOp(op=gast.Not(), operand=inner), base, force_name=True)
        return self.atom(e, base=base, force_name=force_name)

    @staticmethod
    def _short_circuits(e: Any) -> bool:
        while isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.Not):
            e = e.operand
        return (isinstance(e, gast.BoolOp) and len(e.values) > 1) or (
            isinstance(e, gast.Compare) and len(e.ops) > 1
        )

    def _short_circuit(
        self,
        left: Any,
        is_and: bool,
        right: Callable[[], Any],
        base: str,
        what: Optional[str] = None,
    ) -> Any:
        """``t = right() if left else left`` (``and``) or ``t = left if left else
        right()`` (``or``), with ``right``'s statements only in its branch. With
        ``what``, the assignments of ``t`` are ``unknown`` operations (no
        derivative flows through them)."""

        def op(v: Any) -> Op:
            if what is None:
                return Op("copy", elts=[v])
            return Op("unknown", elts=[v] if isinstance(v, gast.Name) else [], what=what)

        t = self.temp(base)
        saved = self.out
        self.out = []
        value = right()
        self.emit(N.assign(t, value), op(value))
        evaluated, self.out = self.out, saved
        decided = [self.emit_detached(N.assign(t, N.clone(left)), op(left))]
        body, orelse = (evaluated, decided) if is_and else (decided, evaluated)
        self.emit(gast.If(test=N.clone(left), body=body, orelse=orelse))
        return N.name(t)

    def emit_detached(self, stmt: Any, op: Optional[Op]) -> Any:
        """``stmt`` annotated as :meth:`emit` does, without adding it to the output."""
        saved = self.out
        self.out = []
        try:
            self.emit(stmt, op)
        finally:
            self.out = saved
        return stmt

    def _compare_chain(self, left: Any, ops: List[Any], comps: List[Any], base: str) -> Any:
        """``left op0 c0 op1 c1 ...`` as Python evaluates it: each comparator once,
        and the comparisons after the first false one not at all."""
        right = self.atom(comps[0])
        first = self.atom(
            gast.Compare(left=left, ops=[ops[0]], comparators=[right]), base, force_name=True
        )
        if len(ops) == 1:
            return first
        return self._short_circuit(
            first, True, lambda: self._compare_chain(right, ops[1:], comps[1:], base), base
        )

    def index(self, sl: Any) -> Any:
        """Normalize an index expression: slices and tuples stay, parts become atoms."""
        if isinstance(sl, gast.Slice):
            return gast.Slice(
                lower=None if sl.lower is None else self.atom(sl.lower),
                upper=None if sl.upper is None else self.atom(sl.upper),
                step=None if sl.step is None else self.atom(sl.step),
            )
        if isinstance(sl, gast.Tuple):
            return gast.Tuple(elts=[self.index(e) for e in sl.elts], ctx=gast.Load())
        if isinstance(sl, gast.Constant):
            return sl
        folded = _fold_constant(sl)
        if folded is not None:
            return folded
        return self.atom(sl, base="idx")

    def simple(self, e: Any, target: Optional[str]) -> tuple:
        """Return (node, Op) where node is a one-op expression over atoms."""
        if isinstance(e, (gast.Name, gast.Constant)):
            a = self.atom(e)
            return a, Op("copy", elts=[a])
        folded = _fold_constant(e)
        if folded is not None:
            return folded, Op("copy", elts=[folded])
        if isinstance(e, gast.BinOp):
            names = _DUNDERS.get(type(e.op))
            if names is not None:
                done = self.dunder_call(names[0], e.left, [e.right], e) or self.dunder_call(
                    names[1], e.right, [e.left], e
                )
                if done is not None:
                    return done
            seq = self.sequence_binop(e)
            if seq is not None:
                return seq
            kinds = (self.seq_kind(e.left), self.seq_kind(e.right))
            if isinstance(e.op, gast.BitOr) and ("dict" in kinds or kinds == ("seq", "seq")):
                # d | e: a copy of d updated with e (differentiable in both values)
                t = self.dict_copy(e.left)
                self.update(t.id, e.right, {})
                return t, Op("copy", elts=[t])
            sym = _BINOPS[type(e.op)]
            left = self.atom(e.left)
            right = self.atom(e.right)
            if names is not None and (self.class_of(left) or self.class_of(right)):
                done = self.dunder_call(names[0], left, [right], e) or self.dunder_call(
                    names[1], right, [left], e
                )
                if done is not None:
                    return done
            prim = self.ops[sym]
            names = list(prim.signature.parameters)
            node = gast.BinOp(left=left, op=e.op, right=right)
            return node, Op("prim", prim=prim, bound={names[0]: left, names[1]: right})
        if isinstance(e, gast.UnaryOp):
            sym = _UNARY[type(e.op)]
            operand = self.atom(e.operand)
            prim = self.ops.get(sym)
            node = gast.UnaryOp(op=e.op, operand=operand)
            if prim is None:
                return node, Op("inactive", what=sym)
            names = list(prim.signature.parameters)
            return node, Op("prim", prim=prim, bound={names[0]: operand})
        if isinstance(e, gast.Compare):
            if len(e.ops) == 1:
                left = self.atom(e.left)
                right = self.atom(e.comparators[0])
                node = gast.Compare(left=left, ops=e.ops, comparators=[right])
                return node, Op("inactive", what="comparison")
            parts = []
            prev = e.left
            for op, comp in zip(e.ops, e.comparators):
                parts.append(gast.Compare(left=prev, ops=[op], comparators=[comp]))
                prev = comp
            # `a < b < c` evaluates b once and `b < c` only when `a < b`
            t = self._compare_chain(self.atom(e.left), e.ops, e.comparators, "cond")
            return t, Op("copy", elts=[t])
        if isinstance(e, gast.BoolOp):
            # short-circuit as in Python (`ok = i < n and v[i] > 0` never reads
            # v[n]); the value of `x < 0 or 2 * x` is one of its operands: on a
            # differentiated path it is an error (JAX's too), never a silent zero
            # derivative, so its assignments are `unknown` operations
            left = self.atom(e.values[0], force_name=True)
            rest = (
                e.values[1]
                if len(e.values) == 2
                else N.copy_origin(gast.BoolOp(op=e.op, values=e.values[1:]), e)
            )
            t = self._short_circuit(
                left, isinstance(e.op, gast.And), lambda: self.atom(rest), "value", "and/or"
            )
            return t, Op("copy", elts=[t])
        if isinstance(e, gast.IfExp):
            t = target or self.temp("select")
            test = self.condition(e.test)
            body = self.block([N.copy_origin(N.assign(t, e.body), e)])
            orelse = self.block([N.copy_origin(N.assign(t, e.orelse), e)])
            self.emit(gast.If(test=test, body=body, orelse=orelse))
            return N.name(t), Op("copy", elts=[N.name(t)])
        if isinstance(e, (gast.List, gast.Tuple)):
            elts = [self.atom(x) for x in e.elts]
            cls = gast.List if isinstance(e, gast.List) else gast.Tuple
            return cls(elts=elts, ctx=gast.Load()), Op("pack", elts=elts)
        if isinstance(e, gast.Dict):
            if any(k is None for k in e.keys):
                # {**d, "c": v}: an empty dict updated in order (differentiable)
                t = N.name(self.temp("merged"))
                self.emit(N.assign(t.id, gast.Dict(keys=[], values=[])), Op("pack", elts=[]))
                for k, v in zip(e.keys, e.values):
                    if k is None:
                        self.update(t.id, v, {})
                    else:
                        self._prim_into(t.id, "ad.setitem", t, self.atom(k), self.atom(v))
                return t, Op("copy", elts=[t])
            keys = [self.atom(k) for k in e.keys]
            vals = [self.atom(v) for v in e.values]
            return gast.Dict(keys=keys, values=vals), Op("pack", elts=vals)
        if isinstance(e, gast.Subscript):
            return self.subscript(e)
        if isinstance(e, gast.Attribute):
            return self.attribute(e)
        if isinstance(e, gast.Call):
            return self.call(e, target)
        if isinstance(e, (gast.ListComp, gast.GeneratorExp, gast.DictComp)):
            return self.comprehension(e)
        if isinstance(e, gast.JoinedStr):
            # each formatted value its own statement, so transforms see what it reads
            # (under vmap, f"{x.shape}" is one example's shape: user Y)
            e = N.clone(e)
            for part in e.values:
                if isinstance(part, gast.FormattedValue):
                    part.value = self.atom(part.value)
                    part.value.sj_resolved = True  # (a name of normalized code already)
            return self.rename_all(e), Op("inactive", what="f-string")
        if isinstance(e, gast.Lambda):
            raise UnsupportedSyntaxError(
                "a lambda used as a value here is not supported (a lambda can be called, "
                "assigned to a name, or passed to a srcjax transform or srcjax.lax)",
                self.loc(e),
                "define the function with `def` and call it",
            )
        raise UnsupportedSyntaxError(
            f"`{type(e).__name__}` expressions are not supported in transformed functions",
            self.loc(e),
            "move this code outside the transformed function",
        )

    def comprehension(self, e):
        if len(e.generators) != 1 or e.generators[0].is_async:
            raise _unsupported(e, "comprehensions with several `for`", src=self.src)
        gen = e.generators[0]
        # a fresh result name: `xs = [2 * x for x in xs]` must read the old xs
        t = self.temp("items")
        self.namer.comprehension_results.add(t)
        # the loop variables are the comprehension's own (Python 3 scoping):
        # fresh names, so `[x * 2 for x in xs]` leaves an outer `x` alone
        fresh = {}
        for node in gast.walk(gen.target):
            if isinstance(node, gast.Name):
                fresh[node.id] = self.temp(node.id)

        def own(node):
            node = N.clone(node)
            for n in gast.walk(node):
                if isinstance(n, gast.Name) and n.id in fresh:
                    n.id = fresh[n.id]
            return node

        e = N.clone(e)
        e.generators = [
            gast.comprehension(
                target=own(gen.target),
                iter=gen.iter,
                ifs=[own(c) for c in gen.ifs],
                is_async=gen.is_async,
            )
        ]
        if isinstance(e, gast.DictComp):
            e.key, e.value = own(e.key), own(e.value)
        else:
            e.elt = own(e.elt)
        gen = e.generators[0]
        if isinstance(e, gast.DictComp):
            # {k: v for ...} is a loop of d[k] = v into an empty dict
            self.emit(N.assign(t, gast.Dict(keys=[], values=[])), Op("pack", elts=[]))
            key = gast.Subscript(value=N.name(t), slice=e.key, ctx=gast.Store())
            app = gast.Assign(targets=[key], value=e.value, type_comment=None)
        else:
            self.emit(N.assign(t, gast.List(elts=[], ctx=gast.Load())), Op("pack", elts=[]))
            app = N.expr_stmt(N.call(N.attr(N.name(t), "append"), [e.elt]))
        N.copy_origin(app, e)
        body = [app]
        for cond in reversed(gen.ifs):
            body = [gast.If(test=cond, body=body, orelse=[])]
        loop = gast.For(target=gen.target, iter=gen.iter, body=body, orelse=[], type_comment=None)
        N.copy_origin(loop, e)
        for n in N.assigned_names([loop]):
            self.locals.add(n)
        self.locals.add(t)
        self.stmt(loop)
        return N.name(t), Op("copy", elts=[N.name(t)])

    def dunder_call(self, method: str, receiver: Any, others: list, e: Any) -> Optional[tuple]:
        """``receiver.method(*others)`` inlined when ``receiver`` is a registered
        class instance known here whose class defines ``method`` in Python
        (``v[1]`` is ``V.__getitem__``, ``s * x`` ``S.__mul__``, ``s @ x``
        ``S.__matmul__``); None otherwise. Without it such an object reached
        array primitives (helper Q: grad hung in np.shape of an object with
        ``__len__`` and ``__getitem__``)."""
        if isinstance(receiver, gast.Call):  # (V(x, y) * 3.0)[1]: a construction
            st, cls = self.resolve(receiver.func)
            if st != "found" or not isinstance(cls, type) or cls not in _tree_registry():
                return None  # (a plain class's objects: per example under vmap)
            ty = ("class", cls, (), (), (), ())
        elif isinstance(receiver, (gast.Name, gast.Attribute, gast.Subscript)):
            ty = self.type_of(receiver) or self.expr_type(receiver)
        else:
            return None
        if ty is None or ty[0] != "class":
            return None
        fn = _plain_method(ty[1], method)
        if fn is None:
            return None
        call = N.copy_origin(gast.Call(func=e, args=list(others), keywords=[]), e)
        return self.inline_method(fn, [self.typed_atom(receiver, ty)], call)

    def subscript(self, e: Any) -> tuple:
        # x.at[i] only appears under .set/.add: handled in call()
        done = self.dunder_call("__getitem__", e.value, [e.slice], e)
        if done is not None:
            return done
        value = self.atom(e.value)
        if self.class_of(value) is not None:  # ((v * 3.0)[1]: a typed temporary)
            done = self.dunder_call("__getitem__", value, [e.slice], e)
            if done is not None:
                return done
        idx = self.index(e.slice)
        prim = registry.by_public("ad.getitem")
        node = gast.Subscript(value=value, slice=idx, ctx=gast.Load())
        return node, Op("prim", prim=prim, bound=_bind(prim, value, idx))

    def attribute(self, e: Any) -> tuple:
        status, obj = self.resolve(e)
        if status == "local" or (status == "dynamic"):
            if e.attr in ("shape", "ndim", "dtype", "size"):
                base = self.atom(e.value)
                return N.attr(base, e.attr), Op("inactive", what="." + e.attr)
            if e.attr in ("T", "mT"):
                base = self.atom(e.value)
                attrs = _attributes()
                prim = attrs.get(e.attr) or registry.by_public("jnp.transpose")
                return N.call(prim.public, [base]), Op("prim", prim=prim, bound=_bind(prim, base))
            if e.attr in ("real", "imag"):
                # x.real / x.imag: jnp.real / jnp.imag, differentiable (helper S)
                base = self.atom(e.value)
                prim = registry.by_public(f"jnp.{e.attr}")
                return N.call(prim.public, [base]), Op("prim", prim=prim, bound=_bind(prim, base))
            # a field of a pytree node (namedtuple, registered class): differentiable,
            # unless the class is known and the attribute is static (aux data)
            base = self.atom(e.value)
            ty = self.type_of(base)
            if ty is not None and ty[0] == "class" and e.attr in ty[3]:
                prim = registry.by_public("ad.static_attr")
                return N.attr(base, e.attr), Op(
                    "prim", prim=prim, bound={"x": base, "name": N.const(e.attr)}
                )
            prim = registry.by_public("ad.getattr")
            return N.attr(base, e.attr), Op(
                "prim", prim=prim, bound={"x": base, "name": N.const(e.attr)}
            )
        if status == "found":
            # a module constant like jnp.pi or np.float32: keep as written
            node = self.rename_all(e)
            return node, Op("inactive", what="constant")
        raise _resolution_error(self, e)

    # -- calls -----------------------------------------------------------------
    def call(self, e: Any, target: Optional[str]) -> tuple:
        if any(k.arg is None for k in e.keywords):
            e = self._expand_kwargs(e)
        func = e.func
        if isinstance(func, gast.Call) and self._inlined_factory(func.func):
            # make(2.0)(x), make a function that returns a local function
            saved, self.pending_fn = self.pending_fn, None
            inner = self.atom(func)
            fn, self.pending_fn = self.pending_fn, saved
            if fn is not None:
                args = [self.atom(a) for a in e.args]
                kws = {k.arg: self.atom(k.value) for k in e.keywords}
                return self.call_local(fn, args, kws, e)
            e = N.copy_origin(gast.Call(func=inner, args=e.args, keywords=e.keywords), e)
            func = e.func
        # x.at[idx].set(v)
        if (
            isinstance(func, gast.Attribute)
            and isinstance(func.value, gast.Subscript)
            and isinstance(func.value.value, gast.Attribute)
            and func.value.value.attr == "at"
        ):
            status, base_obj = self.resolve(func.value.value.value)
            if status == "found" and isinstance(base_obj, (np.ndarray, np.generic)):
                status = "dynamic"  # a module-level array (user R: base.at[i].set(v))
            if status in ("local", "dynamic") and func.attr == "subtract" and len(e.args) == 1:
                # x.at[idx].subtract(v) is x.at[idx].add(-v), JAX's definition
                neg = gast.UnaryOp(op=gast.USub(), operand=e.args[0])
                gast.copy_location(neg, e.args[0])
                add = gast.Attribute(value=func.value, attr="add", ctx=gast.Load())
                gast.copy_location(add, func)
                call = gast.Call(func=add, args=[neg], keywords=e.keywords)
                return self.call(N.copy_origin(call, e), target)
            if status in ("local", "dynamic") and func.attr == "get" and not e.args:
                # x.at[idx].get() is x[idx] (JAX's out-of-bounds modes are not supported)
                if e.keywords:
                    raise _unsupported(e, "`.at[...].get` with keyword arguments", src=self.src)
                sub = gast.Subscript(
                    value=func.value.value.value, slice=func.value.slice, ctx=gast.Load()
                )
                gast.copy_location(sub, e)
                return self.simple(sub, target)
            if status in ("local", "dynamic"):
                mode = func.attr
                try:
                    prim = registry.by_public(f"ad.at_{mode}")
                except KeyError:
                    raise UnsupportedSyntaxError(
                        f"`.at[...].{mode}` is not supported",
                        self.loc(e),
                        "use .set, .add, .subtract, .multiply, .min or .max",
                    ) from None
                x = self.atom(func.value.value.value)
                idx = self.index(func.value.slice)
                if len(e.args) != 1:
                    raise _unsupported(e, f"`.at[...].{mode}` with these arguments", src=self.src)
                if e.keywords:  # mode=, indices_are_sorted= ...: never silently ignored
                    raise UnsupportedSyntaxError(
                        f"`.at[...].{mode}` with keyword arguments "
                        f"({', '.join(str(k.arg) for k in e.keywords)}) is not supported",
                        self.loc(e),
                        "srcjax updates in bounds only (an index out of bounds raises "
                        "IndexError); clip or mask the indices yourself (jnp.clip, jnp.where)",
                    )
                v = self.atom(e.args[0])
                idx = N.index_value(idx)  # slices as slice(...) objects in a call
                node = N.call(prim.public, [x, idx, v])
                return node, Op("prim", prim=prim, bound=_bind(prim, x, idx, v))
        if (
            isinstance(func, gast.Name)
            and self.var(func.id) in self.local_fns
            and (func.id in self.locals)
        ):
            args = [self.atom(a) for a in e.args]
            kws = {k.arg: self.atom(k.value) for k in e.keywords}
            return self.call_local(self.local_fns[self.var(func.id)], args, kws, e)
        if isinstance(func, gast.Lambda):  # (lambda y: ...)(x)
            from .source import _lambda_to_def

            args = [self.atom(a) for a in e.args]
            kws = {k.arg: self.atom(k.value) for k in e.keywords}
            return self.inline_local(_lambda_to_def(func), args, kws, e)
        if isinstance(func, gast.Call):
            st, factory = self.resolve(func.func)
            if st == "found" and getattr(factory, "__srcjax_jit__", False) and func.args:
                # jit(f, ...)(x) inside transformed code: jit is an identity here
                call = gast.Call(func=func.args[0], args=list(e.args), keywords=e.keywords)
                N.copy_origin(call, e)
                return self.call(call, target)
            if st == "found" and getattr(factory, "__srcjax_factory__", False):
                return self.transform_call(factory, func, e, target)
            if st == "found" and isinstance(factory, type) and factory in _tree_registry():
                # Linear(w, b)(x): build the instance, then inline its __call__
                fn = _plain_method(factory, "__call__")
                if fn is not None:
                    obj = self.atom(func, base=factory.__name__.lower())
                    return self.inline_method(fn, [obj], e)
        if (
            isinstance(func, gast.Attribute)
            and func.attr == "_replace"
            and isinstance(func.value, gast.Name)
            and not e.args
        ):
            replaced = self.namedtuple_replace(e)
            if replaced is not None:
                return replaced
        if self.types or not isinstance(func, gast.Name):
            typed = self.typed_call(e, target)
            if typed is not None:
                return typed
        status, obj = self.resolve(func)
        if status == "found":
            lax_kind = getattr(obj, "__srcjax_lax__", None)
            if lax_kind is not None:
                return self.lax_call(lax_kind, e, target)
            if getattr(obj, "__srcjax_jvp__", False):
                return self.jvp_call(e, target)
            if getattr(obj, "__srcjax_tree_map__", False):
                return self.tree_map_call(e, target)
            tree_fn = self.tree_function_call(obj, e)
            if tree_fn is not None:
                return tree_fn
            not_inside = getattr(obj, "__srcjax_not_inside__", False)
            if not_inside:
                raise UnsupportedSyntaxError(
                    f"`{N.to_source(func)}` inside a transformed function is not supported",
                    self.loc(e),
                    not_inside
                    if isinstance(not_inside, str)
                    else "use srcjax.grad or srcjax.jvp inside; call vjp/linearize outside",
                )
        if status == "local" and isinstance(func, gast.Attribute):
            return self.method_call(e, target)
        if status == "dynamic" and isinstance(func, gast.Attribute):
            return self.method_call(e, target)
        if status in ("local", "dynamic"):
            # a callable computed at run time: it just runs (an error if on the
            # differentiated path, since srcjax cannot see its source)
            fvar = self.atom(func, base="fn")
            args = [self.atom(a) for a in e.args]
            kws = {k.arg: self.atom(k.value) for k in e.keywords}
            # the callable is an operand too: calling a differentiated model object
            # (`model(x)`) must not count as a constant
            return N.call(fvar, args, kws), Op(
                "unknown",
                elts=[fvar] + args + list(kws.values()),
                what=N.to_source(func),
                hint="this function is a value computed at run time (a call's result, a "
                "list item, a parameter), whose source srcjax cannot see: call the function "
                "by its name, or through a module-level table (TABLE['name'](x)), or wrap "
                "it with srcjax.custom_vjp",
            )
        if status == "missing":
            raise _resolution_error(self, func)
        if _is_numpy_function(obj) and self._is_host(e):
            # np.prod(x.shape), np.exp(100.0): NumPy on host values, as in JAX
            fname = self.namer.fresh(f"np_{getattr(obj, '__name__', 'fn')}")
            self.bindings[fname] = _HostCall(obj)
            args = [self.atom(a) for a in e.args]
            kws = {k.arg: self.atom(k.value) for k in e.keywords}
            return N.call(N.name(fname), args, kws), Op(
                "inactive", what=f"np.{getattr(obj, '__name__', 'function')}"
            )
        prim = registry.lookup_callable(obj)
        if prim is not None:
            return self.prim_call(prim, e.args, e.keywords, e)
        special = self.builtin_call(obj, e, target)
        if special is not None:
            return special
        if obj is dict and len(e.args) <= 1 and all(k.arg is not None for k in e.keywords):
            # dict(d), dict(zip(keys, values)), dict(a=x): a new dict, values kept
            # differentiable (not a registered class's construction)
            kws = {k.arg: k.value for k in e.keywords}
            if not e.args:
                t = N.name(self.temp("made"))
                self.emit(N.assign(t.id, gast.Dict(keys=[], values=[])), Op("pack", elts=[]))
                self.update(t.id, None, kws)
            else:
                t = self.dict_copy(e.args[0], kws)
            return t, Op("copy", elts=[t])
        if isinstance(obj, type) and (obj in _tree_registry() or _is_namedtuple_class(obj)):
            # Linear(w, b) of a registered pytree class (or a namedtuple's
            # State(pos, vel)): a primitive whose
            # derivative maps the instance's children back to the arguments
            pos = _positional_construct_args(obj, e)
            if pos is not None:
                prim = registry.by_public("ad.construct")
                node, op = self.prim_call(prim, [func] + pos, [], e)
                op.construct_class = obj  # its methods are inlined (see track_type)
                return node, op
        # (srcjax.debug.print: runs as it is, no derivative)
        obj_inactive = bool(getattr(obj, "__srcjax_inactive__", False))
        if id(obj) in _INACTIVE_BUILTINS or obj_inactive or isinstance(obj, type):
            args = [self.atom(a) for a in e.args]
            kws = {k.arg: self.atom(k.value) for k in e.keywords}
            fnode = self.rename_all(func)
            kind = "inactive" if id(obj) in _INACTIVE_BUILTINS or obj_inactive else "unknown"
            user_class = kind == "unknown" and _is_user_class(obj)
            return N.call(fnode, args, kws), Op(
                kind,
                elts=args + list(kws.values()),
                what=N.to_source(func),
                effect="construct" if user_class else False,
                hint=_REGISTER_HINT.format(name=obj.__name__) if user_class else None,
            )
        bound_obj = obj  # (what the name is bound to: the dependency recorded)
        if getattr(obj, "__srcjax_transform__", None) == "jit" and hasattr(
            obj, "__srcjax_wrapped__"
        ):
            obj = obj.__srcjax_wrapped__  # jit is an identity for other transforms
        if getattr(obj, "__srcjax_transform__", None) is not None and hasattr(obj, "_generated"):
            # a transformed function (grad(f), vmap(f) ...) called here: inline its
            # generated code, specialized for array arguments
            if not e.keywords:
                return self.inline(obj._generated(("any",) * len(e.args)), e, target)
        if getattr(obj, "__srcjax_transform__", None) is not None:
            fnode = self.rename_all(func)
            args = [self.atom(a) for a in e.args]
            kws = {k.arg: self.atom(k.value) for k in e.keywords}
            return N.call(fnode, args, kws), Op(
                "unknown", elts=args + list(kws.values()), what=N.to_source(func)
            )
        fn = obj
        from .source import _is_callable_object

        if (
            isinstance(fn, (types.FunctionType, functools.partial, types.MethodType))
            or _is_callable_object(fn)
        ) and not _is_library_function(fn):
            self._record_dependency(func, bound_obj)
            return self.inline(fn, e, target)
        args = [self.atom(a) for a in e.args]
        kws = {k.arg: self.atom(k.value) for k in e.keywords}
        fnode = self.rename_all(func)
        return N.call(fnode, args, kws), Op(
            "unknown", elts=args + list(kws.values()), what=N.to_source(func)
        )

    def builtin_call(self, obj: Any, e: Any, target: Optional[str]) -> Optional[tuple]:
        """Builtins with derivatives: ``max``/``min`` (a choice), ``list``/``tuple``
        (copies), ``dict(k=v)`` (a display), numpy scalar casts; else None."""
        nargs = len(e.args)
        if obj is reversed and not e.keywords and nargs == 1:
            # reversed(xs) as xs[::-1]: a list for a list, the rows reversed for an
            # array (a sequence, not an iterator: list(), indexing and loops alike)
            sub = gast.Subscript(
                value=e.args[0],
                slice=gast.Slice(lower=None, upper=None, step=N.const(-1)),
                ctx=gast.Load(),
            )
            gast.copy_location(sub, e)
            return self.simple(sub, target)
        if obj is map and not e.keywords and nargs >= 2:
            # map(f, xs, ys): the list [f(x, y) for x, y in zip(xs, ys)], so that
            # transforms see the calls (a list, not an iterator: sum, list, for
            # loops and jnp.stack consume both alike)
            items = [self.namer.fresh("map_item") for _ in e.args[1:]]
            if len(items) == 1:
                target_node, it = N.name(items[0], store=True), e.args[1]
            else:
                target_node = gast.Tuple(
                    elts=[N.name(n, store=True) for n in items], ctx=gast.Store()
                )
                it = gast.Call(func=N.name("zip"), args=list(e.args[1:]), keywords=[])
                gast.copy_location(it, e)
            elt = gast.Call(func=e.args[0], args=[N.name(n) for n in items], keywords=[])
            comp = gast.ListComp(
                elt=elt,
                generators=[gast.comprehension(target=target_node, iter=it, ifs=[], is_async=0)],
            )
            for node in (elt, comp):
                gast.copy_location(node, e)
            gast.fix_missing_locations(comp)
            return self.comprehension(comp)
        if obj in (max, min) and not e.keywords and nargs >= 1:
            items = e.args
            if nargs == 1:
                if not isinstance(e.args[0], (gast.List, gast.Tuple)):
                    return None
                items = e.args[0].elts
            atoms = [self.atom(a) for a in items]
            t = target or self.temp("max_" if obj is max else "min_")
            self.emit(N.assign(t, atoms[0]), Op("copy", elts=[atoms[0]]))
            cmp = gast.Gt() if obj is max else gast.Lt()
            for a in atoms[1:]:  # Python keeps the first of equal items
                c = self.temp("cond")
                test = gast.Compare(left=N.clone(a), ops=[cmp], comparators=[N.name(t)])
                self.emit(N.assign(c, test), Op("inactive", what="comparison"))
                body = [N.assign(t, N.clone(a))]
                body[0].sj_op = Op("copy", elts=[a])
                self.emit(gast.If(test=N.name(c), body=body, orelse=[]))
            return N.name(t), Op("copy", elts=[N.name(t)])
        if obj in (list, tuple) and nargs == 1 and not e.keywords:
            arg = e.args[0]
            if isinstance(arg, (gast.ListComp, gast.GeneratorExp)):
                made = self.comprehension(arg)
                if obj is list:
                    return made
                # tuple(d for d in ...): a tuple (an axis tuple; a list was refused)
                lst = self.atom(made[0]) if not isinstance(made[0], gast.Name) else made[0]
                prim = registry.by_public("ad.as_tuple")
                return N.call(prim.public, [lst]), Op("prim", prim=prim, bound=_bind(prim, lst))
            if (
                obj is list
                and isinstance(arg, gast.Call)
                and isinstance(arg.func, gast.Attribute)
                and arg.func.attr == "keys"
                and not arg.args
                and not arg.keywords
            ):
                d = self.atom(arg.func.value, base="d")
                prim = registry.by_public("ad.keys")
                return N.call("ad.keys", [d]), Op("prim", prim=prim, bound=_bind(prim, d))
            kind = self.seq_kind(arg)
            if isinstance(arg, gast.Attribute) and arg.attr == "shape":
                kind = "tuple"
            a = self.atom(arg)
            if (obj is list and kind in ("list", "tuple", "seq")) or (
                obj is tuple and kind in ("list", "seq")
            ):
                # a new list of the items (a tuple's too): `m = list(l); m.append(v)`
                # leaves l alone (an array, or a value of unknown kind, stays as it is)
                prim = registry.by_public("ad.as_list" if obj is list else "ad.as_tuple")
                return N.call(prim.public, [a]), Op("prim", prim=prim, bound=_bind(prim, a))
            return a, Op("copy", elts=[a])
        if obj is dict and nargs == 0 and all(k.arg for k in e.keywords):
            keys = [N.const(k.arg) for k in e.keywords]
            vals = [self.atom(k.value) for k in e.keywords]
            return gast.Dict(keys=keys, values=vals), Op("pack", elts=vals)
        if obj in _CAST_TYPES and nargs == 1 and not e.keywords:
            prim = registry.by_public("ad.astype")
            x = self.atom(e.args[0])
            dname = self.namer.fresh(np.dtype(obj).name)
            self.bindings[dname] = np.dtype(obj)
            node = N.call(prim.public, [x, N.name(dname)])
            return node, Op("prim", prim=prim, bound=_bind(prim, x, N.name(dname)))
        return None

    def _static_truth(self, test: Any) -> Optional[bool]:
        """The truth of an ``if`` test that is a module-level or closed-over flag
        (a bool or None, possibly under ``not``), else None. The flag is recorded
        as a dependency: rebinding it transforms the function again."""
        negate = False
        while isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
            negate, test = not negate, test.operand
        if (
            isinstance(test, gast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], (gast.Is, gast.IsNot))
            and isinstance(test.comparators[0], gast.Constant)
            and test.comparators[0].value is None
        ):
            # `if layer is None: continue` over a layer list with None slots
            ty = self.expr_type(test.left)
            if ty is None:
                return None
            is_none = ty == ("none",)
            return is_none != (negate != isinstance(test.ops[0], gast.IsNot))
        if isinstance(test, gast.BoolOp):
            # the lowering's guards: `not (broke or skip)`
            parts = [self._static_truth(v) for v in test.values]
            stop = isinstance(test.op, gast.Or)  # the value that decides
            if stop in parts:
                return stop != negate
            if None in parts:
                return None
            return (not stop) != negate
        if isinstance(test, gast.Name) and test.id in self.flag_names:
            known = self.known_flags.get(test.id)
            return None if known is None else known != negate
        if isinstance(test, gast.Attribute):
            known, value = self.static_key(test)
            if known:  # `if self.use_bias:`, a static attribute (part of the key)
                return bool(value) != negate
        if not isinstance(test, (gast.Name, gast.Attribute)):
            return None
        status, obj = self.resolve(test)
        if status != "found" or not (obj is None or isinstance(obj, bool)):
            return None
        self._record_dependency(test, obj)
        return bool(obj) != negate

    def _record_dependency(self, func: Any, obj: Any) -> None:
        """Remember where an inlined callee came from, so a redefinition (the usual
        notebook workflow) invalidates the generated code."""
        if isinstance(func, gast.Name):
            if func.id in self.locals or func.id in self.static_params:
                # a parameter bound to a function (rk4_step(f, ...) called with f=lotka):
                # not looked up in the globals, where `f` may name something else
                # (a global `f = jax.jit(...)` made every call rebuild: user J)
                return
            cell = self.src.closure.get(func.id)
            if cell is not None:
                self.deps.append(("cell", cell, None, obj))
            else:
                self.deps.append(("dict", self.src.globals, func.id, obj))
        elif isinstance(func, gast.Attribute):
            status, base = self.resolve(func.value)
            if status == "found":
                self.deps.append(("attr", base, func.attr, obj))
        elif isinstance(func, gast.Subscript) and isinstance(func.slice, gast.Constant):
            status, table = self.resolve(func.value)
            if status == "found" and isinstance(table, dict):
                self.deps.append(("dict", table, func.slice.value, obj))

    def method_call(self, e: Any, target: Optional[str]) -> tuple:
        done = self.container_method(e, target)
        if done is not None:
            return done
        if e.func.attr == "copy" and not e.args and not e.keywords:
            kind = self.seq_kind(e.func.value)
            if kind == "dict":
                t = self.dict_copy(e.func.value)  # d.copy(): a new dict, differentiable
                return t, Op("copy", elts=[t])
            if kind == "list":  # l.copy(): list(l)
                return self._prim_node("ad.as_list", self.atom(e.func.value))
            if kind == "seq":  # a container argument: a dict or a list (user L)
                return self._prim_node("ad.shallow_copy", self.atom(e.func.value))
        func = e.func
        methods = _methods()
        mname = func.attr
        if mname in ("values", "items") and not e.args and not e.keywords:
            # d.values() / d.items() as a value (sum(d.values())): the list a loop
            # over it builds, so its items stay differentiable
            v = self.temp("v")
            k = self.temp("k")
            if mname == "values":
                elt, target = N.name(v), N.name(v, store=True)
            else:
                elt = gast.Tuple(elts=[N.name(k), N.name(v)], ctx=gast.Load())
                target = gast.Tuple(
                    elts=[N.name(k, store=True), N.name(v, store=True)], ctx=gast.Store()
                )
            comp = gast.ListComp(
                elt=elt,
                generators=[gast.comprehension(target=target, iter=e, ifs=[], is_async=0)],
            )
            N.copy_origin(comp, e)
            return self.simple(comp, target=None)
        recv = self.atom(func.value)
        if mname == "pop" and not e.args and not e.keywords and isinstance(recv, gast.Name):
            node = N.call(N.attr(recv, "pop"), [])
            return node, Op("pop", elts=[recv], target=recv.id)
        prim = methods.get(mname)
        if prim is None:
            args = [self.atom(a) for a in e.args]
            kws = {k.arg: self.atom(k.value) for k in e.keywords}
            node = N.call(N.attr(recv, mname), args, kws)
            elts = [recv] + args + list(kws.values())
            return node, Op("unknown", elts=elts, what="." + mname, effect="method")
        params = [
            p
            for p in prim.signature.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        args = list(e.args)
        # x.reshape(3, 4) / x.transpose(1, 0): pack varargs shape into a tuple
        if mname in ("reshape", "transpose") and len(args) > 1:
            args = [gast.Tuple(elts=args, ctx=gast.Load())]
        del params
        return self.prim_call(prim, [recv] + args, e.keywords, e, pre_atomized=1)

    def prim_call(self, prim, args, keywords, e, pre_atomized: int = 0) -> tuple:
        sig = prim.signature
        atoms = []
        for i, a in enumerate(args):
            if i < pre_atomized:
                atoms.append(a)
            elif isinstance(a, gast.Tuple) and all(
                _fold_constant(x) is not None or isinstance(x, gast.Constant) for x in a.elts
            ):
                atoms.append(_fold_constant(a) or a)
            else:
                atoms.append(self.atom(a))
        kws = {}
        for k in keywords:
            v = k.value
            folded = _fold_constant(v)
            kws[k.arg] = folded if folded is not None else self.atom(v)
        for a in list(atoms) + list(kws.values()):
            if isinstance(a, gast.Name) and a.id in self.local_fns:
                # a nested def / lambda is inlined where it is called, never made
                # into a value: passing it on would be a NameError at run time
                raise UnsupportedSyntaxError(
                    f"a function defined inside the transformed function (`{a.id}`) "
                    f"cannot be passed as a value to `{N.to_source(e.func) if isinstance(e, gast.Call) else prim.public}`",
                    self.loc(e),
                    "define it at module level (a custom_vjp's nondiff_argnums function "
                    "too), or call it here instead of passing it",
                )
        try:
            ba = sig.bind(*atoms, **kws)
        except TypeError as exc:
            raise UnsupportedSyntaxError(
                f"bad arguments for `{prim.public}`: {exc}", self.loc(e), "check the signature"
            ) from None
        bound = {}
        for pname, val in ba.arguments.items():
            p = sig.parameters[pname]
            bound[pname] = list(val) if p.kind == p.VAR_POSITIONAL else val
        if isinstance(e, gast.Call) and prim.op and prim.op != "unary not":
            # jnp.divide(a, b) as written, not `a / b`: the function follows JAX's
            # promotion everywhere (the operator follows NumPy's outside jit)
            node = N.call(prim.public, atoms, kws)
        else:
            node = _prim_expr(prim, atoms, kws)
        # the list operations of generated adjoint code (third derivatives and up)
        if prim.public == "ad.push" and isinstance(bound.get("lst"), gast.Name):
            return node, Op("append", elts=[bound["v"]], target=bound["lst"].id)
        if prim.public in ("ad.pop", "ad.pop_like") and isinstance(bound.get("lst"), gast.Name):
            return node, Op("pop", elts=[bound["lst"]], target=bound["lst"].id)
        return node, Op("prim", prim=prim, bound=bound)

    def inline(self, fn, e, target) -> tuple:
        from .source import unwrap_callable

        pyfn, pre_args, pre_kwargs = unwrap_callable(fn)
        if pyfn in self.stack:
            raise RecursionUnsupportedError(
                f"`{pyfn.__name__}` calls itself (recursion) under a transformation",
                self.loc(e),
                "rewrite the recursion as a loop (or srcjax.lax.while_loop)",
            )
        src = get_source(pyfn)
        # bound partial/method args are constants captured at transform time
        args = []
        for pv in pre_args:
            tmp = self.namer.fresh("bound")
            self.bindings[tmp] = pv
            ty = _constant_type("found", pv)
            if ty is not None:  # model(x), model a constant: its methods inline too
                self.types[tmp] = ty
            args.append(N.name(tmp))
        args += [self.function_atom(a) for a in e.args]
        kws = {k.arg: self.atom(k.value) for k in e.keywords}
        for k, v in pre_kwargs.items():
            tmp = self.namer.fresh(k)
            self.bindings[tmp] = v
            kws.setdefault(k, N.name(tmp))
        sub = Normalizer(
            src,
            namer=self.namer,
            stack=self.stack,
            bindings=self.bindings,
            deps=self.deps,
            prefix=pyfn.__name__,
            root_globals=self.root_globals,
            root_closure=self.root_closure,
            types=self.types,
        )
        return self._inline_into(sub, src.node, pyfn.__name__, args, kws, e)

    def inline_method(self, fn: Any, lead: list, e: Any) -> tuple:
        """Inline ``fn`` (a method of a registered pytree class) called on a value
        whose class is known statically, with ``lead`` (the receiver) first."""
        if fn in self.stack:
            raise RecursionUnsupportedError(
                f"`{fn.__name__}` calls itself (recursion) under a transformation",
                self.loc(e),
                "rewrite the recursion as a loop (or srcjax.lax.while_loop)",
            )
        src = get_source(fn)
        args = list(lead) + [self.atom(a) for a in e.args]
        kws = {k.arg: self.atom(k.value) for k in e.keywords}
        name = fn.__name__.strip("_") or "method"  # __call__'s locals: call_x
        sub = Normalizer(
            src,
            namer=self.namer,
            stack=self.stack,
            bindings=self.bindings,
            deps=self.deps,
            prefix=name,
            root_globals=self.root_globals,
            root_closure=self.root_closure,
            types=self.types,
        )
        return self._inline_into(sub, src.node, name, args, kws, e)

    def expr_type(self, e: Any) -> Any:
        """The type tree of expression ``e`` (a local name, its attributes and
        items), decided without emitting anything; ``None`` when unknown."""
        if isinstance(e, gast.Name):
            if e.id in self.locals:
                return self.types.get(self.var(e.id))
            return _constant_type(*self.lookup_global(e.id))
        if isinstance(e, gast.Attribute):
            return _attr_type(self.expr_type(e.value), N.const(e.attr))
        if isinstance(e, gast.Subscript):
            idx = _fold_constant(e.slice) if not isinstance(e.slice, gast.Constant) else e.slice
            ty = self.expr_type(e.value)
            if ty is not None and ty[0] == "seq" and not isinstance(e.slice, gast.Slice):
                return ty[1]
            return _item_type(ty, idx) if idx is not None else None
        return None

    def namedtuple_replace(self, e: Any) -> Optional[tuple]:
        """``s._replace(vel=v)`` on a namedtuple whose class is known here: the
        construction ``State(s.pos, v)``, differentiable in every field."""
        recv = self.atom(e.func.value)
        cls = self.class_of(recv)
        kws = {k.arg: k.value for k in e.keywords}
        if cls is None and kws and None not in kws:
            # the class is known only at run time (a namedtuple argument): one
            # ad.nt_replace per field, differentiable in the tuple and the values
            prim = registry.by_public("ad.nt_replace")
            node, op = None, None
            cur = recv
            for name, value in kws.items():
                v = self.atom(value)
                node, op = self.prim_call(prim, [cur, N.const(name), v], [], e, pre_atomized=3)
                if name != list(kws)[-1]:
                    t = self.temp("replaced")
                    self.emit(N.assign(t, node), op)
                    cur = N.name(t)
            return node, op
        if cls is None or not _is_namedtuple_class(cls):
            return None
        if None in kws or any(k not in cls._fields for k in kws):
            return None  # (Python raises the error when the call runs)
        values = []
        for f in cls._fields:
            src = kws.get(f) or gast.Attribute(value=e.func.value, attr=f, ctx=gast.Load())
            N.copy_origin(src, e)
            values.append(self.atom(src))
        cname = self.namer.fresh(cls.__name__)
        self.bindings[cname] = cls
        prim = registry.by_public("ad.construct")
        node, op = self.prim_call(
            prim, [N.name(cname)] + values, [], e, pre_atomized=1 + len(values)
        )
        op.construct_class = cls
        return node, op

    def typed_call(self, e: Any, target: Optional[str] = None) -> Optional[tuple]:
        """``obj(x)`` / ``obj.method(x)`` where ``obj`` is known to be a registered
        pytree class instance (``model(x)``, ``self.layers[0](h)``, ``m.apply(x)``):
        the method's source is inlined with ``obj`` as ``self``, so its ``self.w``
        reads are differentiable attribute reads."""
        func = e.func
        ty = self.expr_type(func)
        if ty is not None and ty[0] == "class":
            fn = _plain_method(ty[1], "__call__")
            if fn is not None:
                return self.inline_method(fn, [self.typed_atom(func, ty, _callee_base(func))], e)
            return None
        if not isinstance(func, gast.Attribute):
            return None
        ty = self.expr_type(func.value)
        if ty is None or ty[0] != "class":
            return None
        fn = _plain_method(ty[1], func.attr)
        if fn is not None:
            return self.inline_method(fn, [self.typed_atom(func.value, ty)], e)
        static = _static_method(ty[1], func.attr)
        if static is not None:
            return self.inline_method(static, [], e)
        fns = dict(ty[4])
        if func.attr in fns:  # self.act(y), act static (aux data): known here
            fn = fns[func.attr]
            prim = registry.lookup_callable(fn)
            if prim is not None:
                return self.prim_call(prim, e.args, e.keywords, e)
            if isinstance(fn, (types.FunctionType, functools.partial)) and not (
                _is_library_function(fn)
            ):
                return self.inline(fn, e, target)
        return None

    def typed_atom(self, e: Any, ty: Any, base: Optional[str] = None) -> Any:
        """``atom(e)``, with type tree ``ty`` known for it (a constant receiver,
        ``m.layers[0]`` of a closed-over ``m``, is an untyped constant otherwise)."""
        a = self.atom(e, base=base)
        if self.type_of(a) is None and isinstance(a, gast.Name):
            t = self.temp(base or "self")
            self.emit(N.assign(t, N.clone(a)), Op("copy", elts=[a]))
            self.types[t] = ty
            return N.name(t)
        return a

    def _returned_function(self, value: Any) -> Any:
        """The local function a ``return`` of an inlined function gives (a lambda or
        a local function's name), else None."""
        if not self.inlined or value is None:
            return None
        if isinstance(value, gast.Lambda):
            from .source import _lambda_to_def

            return _lambda_to_def(value)
        if isinstance(value, gast.Name):
            return self.local_fns.get(self.var(value.id))
        return None

    def _function_list(self, it: Any) -> Optional[List[Any]]:
        """The functions a loop iterates over: a list/tuple display of lambdas,
        local functions or known module-level functions, or a local bound to one
        (see :meth:`assign_target`); else None."""
        if isinstance(it, gast.Name) and it.id in self.locals:
            return self.fn_lists.get(self.var(it.id))
        if not isinstance(it, (gast.List, gast.Tuple)) or not it.elts:
            return None
        from .source import _lambda_to_def

        fns: List[Any] = []
        for e in it.elts:
            if isinstance(e, gast.Lambda):
                fns.append(_lambda_to_def(e))
            elif (
                isinstance(e, gast.Name)
                and e.id in self.locals
                and self.var(e.id) in self.local_fns
            ):
                fns.append(self.local_fns[self.var(e.id)])
            elif isinstance(e, (gast.Name, gast.Attribute)):
                status, obj = self.resolve(e)
                if status != "found" or not _is_static_callable(obj):
                    return None
                fns.append(_GlobalFn(e))
            else:
                return None
        return fns

    def _static_objects(self, e: Any) -> Optional[List[Any]]:
        """The items of a module-level or closed-over tuple/list of objects that
        are neither arrays nor numbers (an optax-style chain's transformations,
        namedtuples of functions), for a loop unrolled over them with the loop
        variable bound to each (its attributes and methods resolve); else None."""
        if not isinstance(e, gast.Name) or e.id in self.locals:
            return None
        status, seq = self.resolve(e)
        if status != "found" or type(seq) not in (tuple, list) or not seq:
            return None
        for v in seq:
            if isinstance(v, (np.ndarray, np.generic, int, float, complex, str, bool)):
                return None
            if v is None or type(v) in (tuple, list, dict) or type(v) in _tree_registry():
                return None
            if not (hasattr(v, "_fields") or hasattr(v, "__dict__")):
                return None
        self._record_dependency(e, seq)
        return list(seq)

    def _is_host(self, e: Any) -> bool:
        """Whether expression ``e`` is a host value in JAX's sense (never traced): a
        constant, a shape query (``x.shape``, ``x.ndim``), a module-level number or
        NumPy array, a local bound once to one, a display, index or arithmetic of
        those, or a NumPy function of those."""
        if isinstance(e, gast.Constant):
            return True
        if isinstance(e, (gast.Tuple, gast.List)):
            return all(self._is_host(x) for x in e.elts)
        if isinstance(e, gast.Attribute) and e.attr in ("shape", "ndim", "size", "dtype"):
            return True
        if isinstance(e, gast.Name):
            if e.id in self.locals:
                return self.var(e.id) in self.host_names
            status, obj = self.resolve(e)
            return status == "found" and isinstance(
                obj, (bool, int, float, complex, np.ndarray, np.generic)
            )
        if isinstance(e, gast.Attribute):  # np.pi, a module constant
            status, obj = self.resolve(e)
            return status == "found" and isinstance(obj, (bool, int, float, complex, np.generic))
        if isinstance(e, gast.Subscript):
            return self._is_host(e.value) and self._is_host(e.slice)
        if isinstance(e, gast.Slice):
            return all(x is None or self._is_host(x) for x in (e.lower, e.upper, e.step))
        if isinstance(e, gast.UnaryOp):
            return self._is_host(e.operand)
        if isinstance(e, gast.BinOp):
            return self._is_host(e.left) and self._is_host(e.right)
        if isinstance(e, gast.Call) and not any(isinstance(a, gast.Starred) for a in e.args):
            status, obj = self.resolve(e.func)
            host_fn = status == "found" and (
                _is_numpy_function(obj) or obj in (int, float, len, abs, min, max, round)
            )
            return (
                host_fn
                and all(self._is_host(a) for a in e.args)
                and all(self._is_host(k.value) for k in e.keywords)
            )
        return False

    def _returns_function(self, call: Any) -> bool:
        """Whether ``call`` calls a user function (local or module-level) whose
        ``return`` gives a lambda or a function it defines (a factory)."""
        if isinstance(call, (gast.Name, gast.Attribute)):
            if isinstance(call, gast.Name) and call.id in self.locals:
                return False
            status, obj = self.resolve(call)
            return status == "found" and _is_static_callable(obj)
        f = call.func
        fdef = None
        if isinstance(f, gast.Name) and f.id in self.locals:
            fdef = self.local_fns.get(self.var(f.id))
            if not isinstance(fdef, gast.FunctionDef):
                return False
        elif self._inlined_factory(f):
            try:
                fdef = get_source(self.resolve(f)[1]).node
            except Exception:  # noqa: BLE001 - then it is no factory we can see
                return False
        if fdef is None:
            return False
        defined = _function_names(fdef.body)
        for n in gast.walk(gast.Module(body=fdef.body, type_ignores=[])):
            if isinstance(n, gast.Return) and (
                isinstance(n.value, gast.Lambda)
                or (isinstance(n.value, gast.Name) and n.value.id in defined)
            ):
                return True
        return False

    def _inlined_factory(self, f: Any) -> bool:
        """Whether calling ``f`` inlines user code (a local function, or a Python
        function of the user's): its call may return a local function."""
        if isinstance(f, gast.Name) and f.id in self.locals:
            return self.var(f.id) in self.local_fns
        status, obj = self.resolve(f)
        return (
            status == "found"
            and isinstance(obj, types.FunctionType)
            and not _is_library_function(obj)
            # (srcjax's own functions: grad(f)(x) is a transform call, not a factory)
            and not (getattr(obj, "__module__", None) or "").split(".")[0] == "srcjax"
        )

    def _unroll_over_functions(self, s: Any) -> bool:
        """``for i, f in enumerate(fs)`` / ``for f, w in zip(fs, ws)`` with ``fs`` a
        list of functions known now: the passes are unrolled (each binds ``f`` to
        one function, ``i`` to its index, ``w`` to ``ws[j]``). False when the loop
        is not of that form."""
        it, target = s.iter, s.target
        if not (isinstance(it, gast.Call) and isinstance(target, gast.Tuple)):
            return False
        status, obj = self.resolve(it.func)
        if status != "found" or obj not in (enumerate, zip) or not it.args:
            return False
        if not all(isinstance(t, gast.Name) for t in target.elts):
            return False
        if obj is enumerate:
            fns = self._function_list(it.args[0])
            start = 0
            for k in it.keywords:
                if k.arg == "start" and isinstance(k.value, gast.Constant):
                    start = k.value.value
                else:
                    return False
            if fns is None or len(target.elts) != 2 or len(it.args) != 1:
                return False
            for j, fn in enumerate(fns):
                self.assign_target(target.elts[0], N.const(j + start))
                self.bind_local_fn(self.var(target.elts[1].id), fn)
                for st in s.body:
                    self.stmt(N.clone(st))
            return True
        if it.keywords or len(target.elts) != len(it.args):
            return False
        lists = [self._function_list(a) for a in it.args]
        objs = [self._static_objects(a) if fl is None else None for a, fl in zip(it.args, lists)]
        known = [fl for fl in lists if fl is not None] + [o for o in objs if o is not None]
        if not known:
            return False
        n = min(len(fl) for fl in known)
        for j in range(n):
            for t, a, fl, ob in zip(target.elts, it.args, lists, objs):
                if fl is not None:
                    self.bind_local_fn(self.var(t.id), fl[j])
                elif ob is not None:
                    self.static_params[t.id] = ob[j]  # t.update(u, s) resolves to it
                else:
                    item = gast.Subscript(value=N.clone(a), slice=N.const(j), ctx=gast.Load())
                    self.assign_target(t, N.copy_origin(item, s))
            for st in s.body:
                self.stmt(N.clone(st))
        return True

    def _only_pushed_and_popped(self, name: str) -> bool:
        """Whether every read of the source name ``name`` in this function is the
        receiver of ``.append(v)`` or ``.pop()`` (a stack: popping it in place
        changes no value read before), or this function is srcjax's own generated
        code (whose tapes the transforms of it follow as stacks)."""
        if hasattr(getattr(self.src, "fn", None), "__srcjax_deps__"):
            return True
        for n in gast.walk(self.src.node):
            if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load):
                if id(n) not in self._stack_receivers():
                    return False
        return True

    def _stack_receivers(self) -> Set[int]:
        got = getattr(self, "_receivers", None)
        if got is None:
            got = set()
            for n in gast.walk(self.src.node):
                if (
                    isinstance(n, gast.Call)
                    and isinstance(n.func, gast.Attribute)
                    and isinstance(n.func.value, gast.Name)
                    and (n.func.attr, len(n.args)) in (("append", 1), ("pop", 0))
                    and not n.keywords
                ):
                    got.add(id(n.func.value))
            self._receivers = got
        return got

    def _only_iterated(self, name: str) -> bool:
        """Whether every read of the source name ``name`` in this function is the
        iterable of a ``for`` loop."""
        loads = iters = 0
        for n in gast.walk(self.src.node):
            if isinstance(n, (gast.For, gast.comprehension)):
                its = [n.iter]
                if isinstance(n.iter, gast.Call):  # enumerate(fs), zip(fs, ws)
                    its += list(n.iter.args)
                iters += sum(1 for x in its if isinstance(x, gast.Name) and x.id == name)
            if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load):
                loads += 1
        return loads == iters

    def _is_local_fn(self, n: str) -> bool:
        return n in self.fn_names or (n in self.locals and self.var(n) in self.local_fns)

    def bind_local_fn(self, var: str, fdef: Any) -> None:
        """Bind the local name ``var`` (renamed) to a local function (a FunctionDef
        or a :class:`_FnChoice`); inside an ``if`` whose branches bind it, the
        binding becomes one alternative of the name's choice, selected by an
        assignment of its index to the choice's tag here."""
        choice = self.fn_choices.get(var)
        if choice is None:
            self.local_fns[var] = fdef
            return
        k = len(choice.fdefs)
        choice.fdefs.append(fdef)
        self._stmt(N.assign(choice.tag, N.const(k)))

    def call_local(self, fn: Any, args: list, kws: dict, e: Any) -> tuple:
        """Call a local function: inlined, or for a :class:`_FnChoice` an ``if``
        chain on its tag with each alternative inlined in its branch."""
        if isinstance(fn, _ForeignFn):
            # inlined by the function that defined it, into our current block
            owner = fn.owner
            saved = owner.out, owner.origin, owner.lent_fns
            # our local functions among the arguments (apply(call, sq, x) calling
            # `call(sq, x)`): lent to the owner, as ours, for this call
            lent = dict(owner.lent_fns)
            for a in list(args) + list(kws.values()):
                if isinstance(a, gast.Name) and a.id in self.local_fns:
                    f = self.local_fns[a.id]
                    lent[a.id] = f if isinstance(f, _ForeignFn) else _ForeignFn(self, f)
            owner.out, owner.origin, owner.lent_fns = self.out, self.origin, lent
            try:
                return owner.call_local(fn.fdef, args, kws, e)
            finally:
                owner.out, owner.origin, owner.lent_fns = saved
        if isinstance(fn, _GlobalFn):
            call = gast.Call(func=N.clone(fn.node), args=list(args), keywords=[])
            call.keywords = [gast.keyword(arg=k, value=v) for k, v in kws.items()]
            return self.simple(N.copy_origin(call, e), None)
        if not isinstance(fn, _FnChoice):
            return self.inline_local(fn, args, kws, e)
        if len(fn.fdefs) == 1:
            return self.call_local(fn.fdefs[0], args, kws, e)

        def src_of(a: Any) -> Any:
            if isinstance(a, gast.Name):
                alias = self._source_alias(a.id, a.id)
                return N.name(alias)
            return a

        sargs = [src_of(a) for a in args]
        skws = [gast.keyword(arg=k, value=src_of(v)) for k, v in kws.items()]
        result = self._source_alias(None, "chosen")
        chain: List[Any] = []
        for k in reversed(range(len(fn.fdefs))):
            name = self._source_alias(None, f"choice{k}")
            self.local_fns[self.var(name)] = fn.fdefs[k]
            call = gast.Call(func=N.name(name), args=list(sargs), keywords=list(skws))
            assign = N.copy_origin(gast.Assign(targets=[N.name(result, store=True)], value=call), e)
            if k == len(fn.fdefs) - 1:
                chain = [assign]
            else:
                test = gast.Compare(left=N.name(fn.tag), ops=[gast.Eq()], comparators=[N.const(k)])
                chain = [N.copy_origin(gast.If(test=test, body=[assign], orelse=chain), e)]
        self._stmt(chain[0])
        out = N.name(self.var(result))
        return out, Op("copy", elts=[out])

    def inline_local(self, fdef: Any, args: list, kws: dict, e: Any) -> tuple:
        """Inline a function defined inside this one (a nested ``def`` or a lambda):
        it sees this function's variables, as a closure does."""
        key = ("local", id(fdef))
        if key in self.stack:
            raise RecursionUnsupportedError(
                f"`{fdef.name}` calls itself (recursion) under a transformation",
                self.loc(e),
                "rewrite the recursion as a loop (or srcjax.lax.while_loop)",
            )
        # normalizing rewrites the tree in place (early returns lowered): each call
        # inlines its own copy, or a second call would see the first one's names
        fdef = N.clone(fdef)
        src = FunctionSource(
            self.src.fn, fdef, self.src.filename, self.src.globals, self.src.closure
        )
        sub = Normalizer(
            src,
            namer=self.namer,
            stack=self.stack + (key,),
            bindings=self.bindings,
            deps=self.deps,
            prefix=fdef.name,
            root_globals=self.root_globals,
            root_closure=self.root_closure,
            outer=self,
            types=self.types,
        )
        sub.nested_def = True
        return self._inline_into(sub, fdef, fdef.name, args, kws, e)

    def _expand_kwargs(self, e: Any) -> Any:
        """``f(x, **kwargs)`` with ``kwargs`` this inlined function's ``**kwargs``
        parameter (which ``_forwards_kwargs`` checked is never changed): the
        call with the keywords it was bound to, ``f(x, rng=kwargs["rng"])``."""
        keywords = []
        for k in e.keywords:
            if k.arg is not None:
                keywords.append(k)
                continue
            keys = self.kwarg_keys.get(k.value.id) if isinstance(k.value, gast.Name) else None
            if keys is None:  # (_check lets only the parameter through)
                raise _unsupported(k.value, "`**kwargs` in calls", src=self.src)
            for key in keys:
                item = gast.Subscript(value=N.clone(k.value), slice=N.const(key), ctx=gast.Load())
                keywords.append(gast.keyword(arg=key, value=N.copy_origin(item, k.value)))
        return N.copy_origin(gast.Call(func=e.func, args=e.args, keywords=keywords), e)

    def _inline_into(self, sub, fnode, fname, args, kws, e) -> tuple:
        if not fname.isidentifier():
            fname = "lambda"
        sub.inlined = True  # this call binds its keyword-only parameters
        sub.seq_lens = self.seq_lens  # (names are unique across inlined callees)
        kwonly = [a.id for a in fnode.args.kwonlyargs]
        vararg = fnode.args.vararg.id if fnode.args.vararg is not None else None
        kwarg = fnode.args.kwarg.id if fnode.args.kwarg is not None else None
        own = {a.id for a in fnode.args.args} | set(kwonly) | _own_locals(fnode.body)
        own |= {vararg} if vararg is not None else set()
        own |= {kwarg} if kwarg is not None else set()
        # default values belong to the scope the function was defined in, not to
        # its own (`def term(x, i=i)` in a loop): resolve them before renaming
        defaults = [
            sub.rename_all(d) if not isinstance(d, gast.Constant) else d
            for d in fnode.args.defaults
        ]
        fn_defaults = getattr(sub.src.fn, "__defaults__", None) or ()
        if getattr(sub, "nested_def", False):  # sub.src.fn is the enclosing function
            fn_defaults = ()
        if defaults and len(fn_defaults) == len(defaults):
            # a default that reads a name (`s=S`, `k=k`, `act=jnp.tanh`) is the value the
            # definition evaluated, as in Python: a number becomes its literal, anything
            # else (a function: calls of the parameter are then static) is bound as such
            for i, v in enumerate(fn_defaults):
                d = fnode.args.defaults[i]
                if isinstance(d, gast.Constant) or not _reads_a_name(d):
                    continue
                if isinstance(v, (bool, int, float, complex, str)) or v is None:
                    defaults[i] = N.const(v)
                    continue
                tmp = self.namer.fresh("default")
                self.bindings[tmp] = v
                d = N.name(tmp)
                d.sj_resolved = True
                defaults[i] = d
        if not defaults and fn_defaults and len(fn_defaults) <= len(fnode.args.args):
            # generated code (vmap(f) inlined): the defaults are the function
            # object's, not in its source; bound as the values they are
            for v in fn_defaults:
                tmp = self.namer.fresh("default")
                self.bindings[tmp] = v
                d = N.name(tmp)
                d.sj_resolved = True
                defaults.append(d)
        kw_defaults = {
            k: (sub.rename_all(d) if not isinstance(d, gast.Constant) else d)
            for k, d in zip(kwonly, fnode.args.kw_defaults)
            if d is not None
        }
        # rename the callee's own locals to fresh names in our namespace
        for local in sorted(own):
            sub.rename[local] = self.namer.fresh(
                f"{fname}_{local}" if local in self.namer.taken else local
            )
        params = [a.id for a in fnode.args.args]
        values: Dict[str, Any] = {}
        if len(args) > len(params) and vararg is None:
            raise UnsupportedSyntaxError(
                f"`{fname}` takes {len(params)} arguments, {len(args)} given", self.loc(e)
            )
        for p, a in zip(params, args):
            values[p] = a
        extra_kws: Dict[str, Any] = {}
        for k, v in kws.items():
            if k not in params and k not in kwonly:
                if kwarg is not None:  # `def apply(params, x, **kwargs)`: a dict of these
                    extra_kws[k] = v
                    continue
                raise UnsupportedSyntaxError(f"`{fname}` has no parameter `{k}`", self.loc(e))
            values[k] = v
        first_default = len(params) - len(defaults)
        for i, p in enumerate(params):
            if p not in values:
                if i >= first_default:
                    values[p] = defaults[i - first_default]
                else:
                    raise UnsupportedSyntaxError(
                        f"missing argument `{p}` in call to `{fname}`", self.loc(e)
                    )
        for k in kwonly:  # keyword-only parameters: bound like the others
            if k not in values:
                if k not in kw_defaults:
                    raise UnsupportedSyntaxError(
                        f"missing keyword argument `{k}` in call to `{fname}`", self.loc(e)
                    )
                values[k] = kw_defaults[k]
        params = params + kwonly
        if vararg is not None:  # `def f(*xs)`: the extra positional arguments, a tuple
            extra = list(args[len(fnode.args.args) :])
            self.origin, saved_origin = e, self.origin
            self.emit(
                N.assign(sub.var(vararg), gast.Tuple(elts=extra, ctx=gast.Load())),
                Op("pack", elts=extra),
            )
            self.origin = saved_origin
            sub.ckinds[vararg] = "tuple"
        if kwarg is not None:  # `**kwargs`: a dict display of the other keywords
            keys = [N.const(k) for k in extra_kws]
            self.origin, saved_origin = e, self.origin
            self.emit(
                N.assign(sub.var(kwarg), gast.Dict(keys=keys, values=list(extra_kws.values()))),
                Op("pack", elts=list(extra_kws.values())),
            )
            self.origin = saved_origin
            sub.kwarg_keys[kwarg] = list(extra_kws)
        reassigned = set(N.assigned_names(fnode.body))
        passed_fns = set()
        for p in params:
            fn = self._known_function(values[p])
            v = values[p]
            if fn is None and p not in reassigned:
                fn = self._known_object(v)  # s.force(x) with a module-level s: self is s
            if fn is not None and p not in reassigned:
                sub.static_params[p] = fn
            elif isinstance(v, gast.Name) and v.id in self.local_fns and p not in reassigned:
                # a nested def / lambda of ours passed on (rk4_step(rhs, y, dt)): the
                # callee's calls of it inline it here, where its free names mean ours
                sub.local_fns[sub.var(p)] = _ForeignFn(self, self.local_fns[v.id])
                passed_fns.add(p)
            elif isinstance(v, gast.Name) and v.id in self.lent_fns and p not in reassigned:
                # a local function of the function calling ours (see call_local)
                sub.local_fns[sub.var(p)] = self.lent_fns[v.id]
                passed_fns.add(p)
        saved_origin = self.origin
        for p in params:
            if p in passed_fns:
                continue  # (not a value at run time)
            self.origin = e
            self.emit(N.assign(sub.var(p), values[p]), Op("copy", elts=[values[p]]))
        self.origin = saved_origin
        sub_fdef = sub.run()
        if sub.returned_fn is not None:
            self.pending_fn = _ForeignFn(sub, sub.returned_fn)
        body = sub_fdef.body
        ret = None
        if body and isinstance(body[-1], gast.Return):
            ret = body[-1].value
            body = body[:-1]
        self.out.extend(body)
        # a callee that mutates a list/dict argument (`lst.append(v)`, `d[k] = v`)
        # mutates the caller's: the caller's name takes the callee's final value,
        # so the derivative passes see the change (and functional setitem lands)
        mutated = _mutated_params(fnode)
        for p in sorted(mutated):
            arg = values.get(p)
            if isinstance(arg, gast.Name) and (
                arg.id in self.locals or arg.id in self.rename.values()
            ):
                self.origin = e
                final = N.name(sub.var(p))
                self.emit(N.assign(arg.id, final), Op("copy", elts=[N.name(sub.var(p))]))
                self.origin = saved_origin
        if ret is None:
            return N.const(None), Op("copy", elts=[N.const(None)])
        return ret, Op("copy", elts=[ret])

    def _source_alias(self, normalized: Optional[str], base: str) -> str:
        """A fresh source-level name standing for ``normalized`` (or for a fresh
        normalized name): lets synthesized source statements refer to values the
        normalizer already computed."""
        src_name = self.namer.fresh(f"_{base}")
        self.locals.add(src_name)
        self.rename[src_name] = normalized or self.namer.fresh(base)
        return src_name

    def tree_map_call(self, e: Any, target: Optional[str]) -> tuple:
        """``tree_map(f, tree, *rest)`` inside transformed code: the leaves as lists
        (``ad.tree_leaves``), a loop calling ``f`` on each (so transforms see its
        body), and the results put back in ``tree``'s structure
        (``ad.tree_unflatten_like``)."""
        is_leaf, args = self.is_leaf_option(e, None)
        if len(args) < 2:
            raise _unsupported(
                e,
                "`tree_map` without a tree inside a transformed function",
                "pass the tree (tree_map(f, tree, *rest))",
                src=self.src,
            )
        from ..primitives import tree_is_leaf  # noqa: F401  (registers ad.leaves_upto)

        trees = [self.atom(t) for t in args[1:]]
        leaves = []
        for k, t in enumerate(trees):
            if is_leaf is None and k == 0:
                nm = self._prim_into(self.temp("leaves"), "ad.tree_leaves", t)
            else:
                # JAX: the first tree's structure (is_leaf subtrees whole); the
                # others are flattened up to it, a ValueError where they differ
                # (user K: a misspelt key paired leaves by position)
                p = N.const(None) if is_leaf is None else N.clone(is_leaf)
                nm = self._prim_into(self.temp("leaves"), "ad.leaves_upto", t, trees[0], p)
            leaves.append(self._source_alias(nm.id, "leaves"))
        out = self._source_alias(None, "mapped")
        i = self._source_alias(None, "i")
        items = [
            gast.Subscript(value=N.name(lv), slice=N.name(i), ctx=gast.Load()) for lv in leaves
        ]
        call = gast.Call(func=e.args[0], args=items, keywords=[])
        loop = gast.For(
            target=N.name(i, store=True),
            iter=N.call(N.name("range"), [N.call(N.name("len"), [N.name(leaves[0])])]),
            body=[N.expr_stmt(N.call(N.attr(N.name(out), "append"), [call]))],
            orelse=[],
            type_comment=None,
        )
        init = N.assign(out, gast.List(elts=[], ctx=gast.Load()))
        for st in (init, loop):
            for node in gast.walk(st):
                if not hasattr(node, "lineno"):
                    gast.copy_location(node, e)
            self.stmt(st)
        mapped = N.name(self.var(out))
        if is_leaf is not None:
            return self._prim_node("ad.unflatten_upto", trees[0], mapped, is_leaf)
        prim = registry.by_public("ad.tree_unflatten_like")
        node = N.call(prim.public, [N.clone(trees[0]), mapped])
        return node, Op("prim", prim=prim, bound=_bind(prim, trees[0], mapped))

    def is_leaf_option(self, e: Any, position: Optional[int]) -> tuple:
        """``(is_leaf, args)`` of a tree_map/tree_leaves/tree_flatten call:
        ``is_leaf`` (keyword, or positional at ``position``) as a name bound to
        the function, or None when absent or ``None``; ``args`` the positional
        arguments before it. A lambda / nested def must read no local variable
        (it becomes a constant of the generated code and runs on the actual
        subtrees at run time); another value (a parameter) is passed as it is."""
        node = None
        for k in e.keywords:
            if k.arg != "is_leaf":
                raise _unsupported(
                    e,
                    f"`{k.arg}=` of a pytree function inside a transformed function",
                    "call it outside the transformed function",
                    src=self.src,
                )
            node = k.value
        args = list(e.args)
        if position is not None and len(args) > position:
            node = args[position]
            args = args[:position]
        if node is None or (isinstance(node, gast.Constant) and node.value is None):
            return None, args
        from ..primitives import tree_is_leaf  # noqa: F401  (registers ad.leaves_upto ...)

        lifted = self._lift(node)
        if lifted is not None:
            fobj, free = lifted
            if free:
                raise UnsupportedSyntaxError(
                    f"`is_leaf` reads local variables ({', '.join(free)}) inside a "
                    "transformed function",
                    self.loc(node),
                    "make is_leaf depend only on the node it is given (or on globals)",
                )
        else:
            status, fobj = self.resolve(node)
            if status != "found" or not callable(fobj):
                # a value (tree_reduce's own `is_leaf` parameter, None unless given):
                # passed as it is, called at run time
                atom = self.atom(node)
                if isinstance(atom, gast.Constant) and atom.value is None:
                    return None, args
                atom.sj_runtime_is_leaf = True
                return atom, args
        tmp = self.namer.fresh("is_leaf")
        self.bindings[tmp] = fobj
        return N.name(tmp), args

    def tree_function_call(self, obj: Any, e: Any) -> Optional[tuple]:
        """``tree_leaves(t, is_leaf)``, ``tree_flatten``, ``tree_structure`` and
        ``tree_unflatten`` inside transformed code (see
        :mod:`srcjax.primitives.tree_is_leaf`); None for other functions, and for
        ``tree_leaves`` without ``is_leaf`` (the primitive ``ad.tree_leaves``)."""
        from .. import tree_util

        if obj is tree_util.tree_unflatten:
            if e.keywords or len(e.args) != 2:
                return None
            from ..primitives import tree_is_leaf  # noqa: F401

            td, leaves = (self.atom(a) for a in e.args)
            return self._prim_node("ad.unflatten_upto", td, leaves, N.const(None))
        which = {
            id(tree_util.tree_leaves): "leaves",
            id(tree_util.tree_flatten): "flatten",
            id(tree_util.tree_structure): "structure",
        }.get(id(obj))
        if which is None:
            return None
        is_leaf, args = self.is_leaf_option(e, 1)
        if len(args) != 1:
            raise _unsupported(e, f"`tree_{which}` without a tree", src=self.src)
        if which == "leaves" and (is_leaf is None or getattr(is_leaf, "sj_runtime_is_leaf", 0)):
            return None  # the primitive ad.tree_leaves(tree, is_leaf)
        from ..primitives import tree_is_leaf  # noqa: F401

        t = self.atom(args[0])
        il = is_leaf if is_leaf is not None else N.const(None)
        if which == "structure":
            return self._prim_node("ad.tree_def", t, il)
        if is_leaf is None:
            leaves = self._prim_into(self.temp("leaves"), "ad.tree_leaves", t)
        else:
            leaves = self._prim_into(self.temp("leaves"), "ad.leaves_upto", t, t, N.clone(il))
        if which == "leaves":
            return leaves, Op("copy", elts=[leaves])
        td = self._prim_into(self.temp("treedef"), "ad.tree_def", t, N.clone(il))
        elts = [leaves, td]
        return gast.Tuple(elts=elts, ctx=gast.Load()), Op("pack", elts=elts)

    def function_atom(self, a: Any) -> Any:
        """An argument atom; a library function named by an attribute (``jnp.sin``
        passed to a helper) is bound as the object, so the callee knows it; a
        lambda (``lax.associative_scan(lambda a, b: a + b, xs)``) is bound to a
        fresh local name first, as ``fn = lambda ...`` would be."""
        a = self.fn_expr(a, objects=False)  # helper(partial(f, w), x): a lambda
        if isinstance(a, gast.Lambda):
            tmp = self.namer.fresh("fn")
            self.stmt(N.assign(tmp, a))
            return N.name(tmp)
        if isinstance(a, gast.Attribute):
            status, obj = self.resolve(a)
            if status == "found" and _is_static_callable(obj):
                tmp = self.namer.fresh(a.attr)
                self.bindings[tmp] = obj
                return N.name(tmp)
        return self.atom(a)

    def _known_function(self, atom: Any) -> Any:
        """The function an argument atom statically is (a global or bound
        function, a srcjax transform of one), else None."""
        if not isinstance(atom, gast.Name) or atom.id in self.rename.values():
            return None
        if atom.id in self.static_params:
            return self.static_params[atom.id]
        if atom.id in self.locals or (atom.id in self.namer.made and atom.id not in self.bindings):
            return None  # (a value computed here, e.g. an inlined call's result `out`)
        if atom.id in self.bindings:
            obj = self.bindings[atom.id]
        else:
            status, obj = self.lookup_global(atom.id)
            if status != "found":
                return None
        if isinstance(obj, types.ModuleType):  # helper(jnp, x): N.sum is jnp.sum
            return obj
        return obj if _is_static_callable(obj) else None

    def _known_object(self, atom: Any) -> Any:
        """The plain object (an instance of a user class that is no pytree) a
        module-level name passed as an argument is, else None: a method inlined
        with it as ``self`` resolves ``self.energy`` (``grad(self.energy)``) and
        reads ``self.k`` from it (user X: ``jit(s.force)``, ``grad`` of a function
        calling ``s.force``)."""
        if not isinstance(atom, gast.Name) or atom.id in self.locals:
            return None
        if atom.id in self.bindings:  # (a bound method's self, bound while inlining)
            obj = self.bindings[atom.id]
        elif atom.id in self.rename.values() or atom.id in self.namer.made:
            return None
        else:
            status, obj = self.lookup_global(atom.id)
            if status != "found":
                return None
        return obj if plain_object(obj) and not callable(obj) else None

    # -- srcjax transforms called inside transformed code ---------------------------
    def _static_function(self, node: Any) -> Any:
        if isinstance(node, gast.Call) and node.args:
            # jvp(grad(f), ...): a transform of a known function is known too
            st, factory = self.resolve(node.func)
            if st == "found" and (
                getattr(factory, "__srcjax_factory__", False)
                or getattr(factory, "__srcjax_jit__", False)
            ):
                inner = self._static_function(node.args[0])
                extra = [self._static_value(a) for a in node.args[1:]]
                kws = {k.arg: self._static_value(k.value) for k in node.keywords}
                return factory(inner, *extra, **kws)
        status, obj = self.resolve(node)
        if status != "found" or not callable(obj):
            raise UnsupportedSyntaxError(
                f"a transform inside a transformed function needs a function known before "
                f"the call; `{N.to_source(node)}` is computed at run time",
                self.loc(node),
                "pass a module-level function (or define it outside)",
            )
        return obj

    def _static_value(self, node: Any) -> Any:
        c = _fold_constant(node)
        if isinstance(c, gast.Constant):
            return c.value
        if isinstance(c, gast.Tuple):
            return tuple(x.value for x in c.elts)
        try:  # nested displays of constants: in_axes=({"w": None, "b": 0}, 1)
            return ast.literal_eval(N.to_source(node).strip())
        except (ValueError, SyntaxError, TypeError):
            pass
        if isinstance(node, (gast.Name, gast.Attribute)):
            status, obj = self.resolve(node)  # a module-level constant: AXES = (0, None)
            if status == "found" and _is_plain_data(obj):
                return obj
        raise UnsupportedSyntaxError(
            "options of a transform used inside a transformed function must be constants",
            self.loc(node),
        )

    def transform_call(self, factory: Any, make: Any, e: Any, target: Optional[str]) -> tuple:
        """``srcjax.grad(f, argnums=1)(x, y)`` inside transformed code: inline the
        generated code of the inner transform (arguments are taken to be arrays)."""
        if not make.args:
            raise _unsupported(make, "a transform without a function", src=self.src)
        extra = [self._static_value(a) for a in make.args[1:]]
        kws = {k.arg: self._static_value(k.value) for k in make.keywords}
        lam = self.fn_expr(make.args[0])
        if lam is not make.args[0]:  # vmap(partial(model, params))(xs), vmap(model)(xs)
            make = gast.Call(func=make.func, args=[lam] + list(make.args[1:]), keywords=[])
            N.copy_origin(make, lam)
        lifted = self._lift(make.args[0]) or self._lift_transformed(make.args[0], len(e.args))
        if lifted is None:
            fobj = self._static_function(make.args[0])
            call = e
        else:
            # a lambda / nested def closing over our locals: they become leading
            # arguments that the transform does not touch
            fobj, free = lifted
            _shift_options(factory, extra, kws, len(free), len(e.args))
            call = gast.Call(
                func=e.func,
                args=[N.name(self.var(f)) for f in free] + list(e.args),
                keywords=e.keywords,
            )
            N.copy_origin(call, e)
        tobj = factory(fobj, *extra, **kws)
        if getattr(tobj, "__srcjax_vectorized__", None) is not None:
            # jnp.vectorize(f, ...)(x): a generated plain function, inlined as one
            return self.inline(tobj, call, target)
        if not hasattr(tobj, "_generated"):  # pmap with static_broadcasted_argnums
            raise _unsupported(
                make,
                f"`{N.to_source(make)}` (with static arguments) inside a transformed function",
                src=self.src,
            )
        bound = tuple(getattr(tobj, "_bound", None) or ())
        if bound:
            # grad(self.loss) of a method bound to an object known here (a static
            # argument): the generated code takes the object first (user K r3)
            names = []
            for b in bound:
                nm = self.namer.fresh("bound_self")
                self.bindings[nm] = b
                names.append(N.name(nm))
            call = N.copy_origin(
                gast.Call(func=call.func, args=names + list(call.args), keywords=call.keywords),
                call,
            )
        # arguments known here to hold registered classes keep their type trees
        # (grad(loss)(model, x) inside a jitted train step inlines model's methods)
        kinds = []
        for a in call.args:
            ty = self.expr_type(a)
            if ty is not None:
                kinds.append(ClassKind(ty))
            elif _value_kind(a, self.ckinds, self._builtin_of) in ("list", "tuple", "dict", "seq"):
                # a container (a dict of params): the inner transform's code treats
                # it as one (sparse cotangents its own derivative rules expect)
                kinds.append("tree")
            else:
                kinds.append("any")
        gen = tobj._generated(tuple(kinds))
        return self.inline(gen, call, target)

    def _lift_transformed(self, node: Any, nargs: int) -> Optional[tuple]:
        """``grad(lambda q: loss(q, x))`` (a srcjax transform of a lambda or nested
        def closing over our locals) as ``(transformed function, free names)``: the
        free names lead its parameters, which the transform leaves alone (argnums
        and in_axes shifted), as :meth:`transform_call` does for a call. jvp of it
        (a Hessian-vector product) then gives them no tangents. None otherwise."""
        if not (isinstance(node, gast.Call) and node.args):
            return None
        st, factory = self.resolve(node.func)
        if st != "found" or not getattr(factory, "__srcjax_factory__", False):
            return None
        inner = self._lift(node.args[0]) or self._lift_transformed(node.args[0], nargs)
        if inner is None:
            return None
        fobj, free = inner
        extra = [self._static_value(a) for a in node.args[1:]]
        kws = {k.arg: self._static_value(k.value) for k in node.keywords}
        _shift_options(factory, extra, kws, len(free), nargs)
        return factory(fobj, *extra, **kws), free

    def _lift(self, fn_node: Any) -> Optional[tuple]:
        """A lambda or nested def as a real function whose free local variables are
        leading parameters: ``(function, free names)``; None for other callees."""
        from .source import _lambda_to_def

        if isinstance(fn_node, gast.Lambda):
            fdef = _lambda_to_def(N.clone(fn_node))
            fdef.name = "lifted"
        elif (
            isinstance(fn_node, gast.Name)
            and fn_node.id in self.locals
            and self.var(fn_node.id) in self.local_fns
        ):
            fdef = self.local_fns[self.var(fn_node.id)]
            if isinstance(fdef, _FnChoice):
                raise UnsupportedSyntaxError(
                    f"`{fn_node.id}` names a function chosen by a branch; it cannot be "
                    "passed to a transformation",
                    self.loc(fn_node),
                    "call the transformation inside each branch instead",
                )
            if isinstance(fdef, _ForeignFn):
                # a local function of the caller (newton(f, x0) doing grad(f)): its
                # free variables are the caller's, in the same generated function;
                # they become leading parameters under fresh names that mean them
                # here (user R: a Newton solver differentiating its argument)
                return self._lift_foreign(fdef, fn_node)
            fdef = N.clone(fdef)
        else:
            return None
        return self._lift_fdef(fdef, fn_node)

    def _lift_foreign(self, foreign: Any, fn_node: Any) -> tuple:
        owner, fdef = foreign.owner, N.clone(foreign.fdef)
        while isinstance(fdef, _ForeignFn):
            owner, fdef = fdef.owner, N.clone(fdef.fdef)
        if not isinstance(fdef, gast.FunctionDef):
            raise UnsupportedSyntaxError(
                f"`{N.to_source(fn_node)}` names a function chosen by a branch; it cannot "
                "be passed to a transformation",
                self.loc(fn_node),
                "call the transformation inside each branch instead",
            )
        own = {a.id for a in fdef.args.args} | _own_locals(fdef.body)
        names = sorted(
            n
            for n in N.names_in(gast.Module(body=fdef.body, type_ignores=[]))
            if n in owner.locals and n not in own
        )
        aliases = {}
        for n in names:
            self._refuse_local_fn(owner, n, fn_node)
            a = self.namer.fresh(f"{n}_outer")
            aliases[n] = a
            self.rename[a] = owner.var(n)  # (self.var(a): the caller's variable)
            self.locals.add(a)
        for node in gast.walk(fdef):
            if isinstance(node, gast.Name) and node.id in aliases:
                node.id = aliases[node.id]
        return self._lift_fdef(fdef, fn_node, known_free=sorted(aliases.values()))

    def _refuse_local_fn(self, scope: Any, n: str, fn_node: Any) -> None:
        """A lifted function cannot read a local function of ``scope`` (it would be
        a run-time value of generated code, where local functions are inlined)."""
        if scope.var(n) in scope.local_fns:
            raise UnsupportedSyntaxError(
                f"`{n}`, a local function, is used inside a function passed to a transform",
                self.loc(fn_node),
                "define it at module level",
            )

    def _lift_fdef(self, fdef: Any, fn_node: Any, known_free: Optional[list] = None) -> tuple:
        params = {a.id for a in fdef.args.args}
        own = params | _own_locals(fdef.body)
        free = (
            known_free
            if known_free is not None
            else sorted(
                n
                for n in N.names_in(gast.Module(body=fdef.body, type_ignores=[]))
                if n in self.locals and n not in own
            )
        )
        for n in free:
            self._refuse_local_fn(self, n, fn_node)
        # parameters bound to objects known here (a jitted method's static `self`):
        # globals of the lifted function, so `self.loss` stays resolvable (user K r3)
        known = {n: self.static_params[n] for n in free if n in self.static_params}
        free = [n for n in free if n not in known]
        fdef.args.args = [
            gast.Name(id=n, ctx=gast.Param(), annotation=None, type_comment=None) for n in free
        ] + list(fdef.args.args)
        fdef.decorator_list = []
        text = N.to_source(fdef) + "\n"
        if _config.checks_enabled:
            from ..codegen.emit import check_reparse

            check_reparse(fdef, text, rendered=False)
        import linecache

        filename = (
            f"<srcjax lifted {fdef.name} from {self.src.filename}:{getattr(fn_node, 'lineno', 0)}>"
        )
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        ns: Dict[str, Any] = {}
        code = compile(text, filename, "exec")
        import types as _types

        fcode = next(c for c in code.co_consts if isinstance(c, _types.CodeType))
        scope = self.src.globals
        if known:
            scope = dict(scope)
            scope.update(known)
        fobj = _types.FunctionType(fcode, scope, fdef.name)
        del ns
        return fobj, free

    def jvp_call(self, e: Any, target: Optional[str]) -> tuple:
        """``srcjax.jvp(f, (x,), (v,))`` inside transformed code."""
        from ..api_fwd import _jvp_function

        lens = [self.static_seq_len(a) for a in e.args[1:]] if len(e.args) == 3 else []
        if len(e.args) != 3 or None in lens:
            raise UnsupportedSyntaxError(
                "jvp inside a transformed function needs primals and tangents whose number "
                "is known when transforming: tuple displays, or local names (arguments of "
                "an inlined function included) bound to tuple displays",
                self.loc(e),
                "write jvp(f, (x,), (v,)) (or (x, y), (vx, vy)), or pass such tuples on",
            )
        primals, tangents = [self._seq_items(a, n) for a, n in zip(e.args[1:], lens)]
        lam = self.fn_expr(e.args[0])
        if lam is not e.args[0]:  # jvp(partial(f, w), (x,), (v,)): as a lambda
            e = gast.Call(func=e.func, args=[lam] + list(e.args[1:]), keywords=e.keywords)
            N.copy_origin(e, lam)
        lifted = self._lift(e.args[0]) or self._lift_transformed(e.args[0], len(primals))
        positions = None
        if lifted is None:
            fobj = self._static_function(e.args[0])
        else:
            # a lambda / nested def closing over our locals: they become leading
            # primals without tangents
            fobj, free = lifted
            positions = tuple(range(len(free), len(free) + len(primals)))
            primals = [N.name(self.var(f)) for f in free] + primals
        has_aux = False
        for k in e.keywords:
            if k.arg == "has_aux":
                has_aux = bool(self._static_value(k.value))
        kinds = ("leaf",) * len(primals)
        gen, bound = _jvp_function(fobj, kinds, has_aux, False, positions=positions)
        if bound:
            raise _unsupported(e, "jvp of a partial inside a transformed function", src=self.src)
        fake = gast.Call(func=e.args[0], args=primals + tangents, keywords=[])
        N.copy_origin(fake, e)
        return self.inline(gen, fake, target)

    def _seq_items(self, node: Any, n: int) -> List[Any]:
        """The items of a display, or ``node[0]``, ..., ``node[n - 1]`` for a name
        holding a display of length ``n`` (read at run time: always current)."""
        if isinstance(node, (gast.Tuple, gast.List)):
            return list(node.elts)
        items = []
        for i in range(n):
            item = gast.Subscript(value=N.clone(node), slice=N.const(i), ctx=gast.Load())
            items.append(N.copy_origin(item, node))
        return items

    # -- lax: structured control flow becomes Python control flow ------------------
    def call_value(self, fn_node: Any, args: list, e: Any) -> Any:
        """Call a function given as an expression (lambda, local, global, a
        functools.partial of one); return an atom."""
        fn_node = self.fn_expr(fn_node)
        if isinstance(fn_node, gast.Lambda):
            from .source import _lambda_to_def

            node, op = self.inline_local(_lambda_to_def(fn_node), args, {}, e)
        elif (
            isinstance(fn_node, gast.Name)
            and fn_node.id in self.locals
            and self.var(fn_node.id) in self.local_fns
        ):
            node, op = self.call_local(self.local_fns[self.var(fn_node.id)], args, {}, e)
        else:
            status, obj = self.resolve(fn_node)
            if status != "found":
                raise UnsupportedSyntaxError(
                    f"cannot tell statically which function `{N.to_source(fn_node)}` is",
                    self.loc(fn_node),
                    "pass a lambda, a nested def or a module-level function",
                )
            fake = gast.Call(func=fn_node, args=list(args), keywords=[])
            N.copy_origin(fake, e)
            node, op = self.call(fake, None)
        if isinstance(node, (gast.Name, gast.Constant)):
            return node
        t = self.temp("r")
        self.emit(N.assign(t, node), op)
        return N.name(t)

    def lax_call(self, kind: str, e: Any, target: Optional[str]) -> tuple:
        a = list(e.args)
        kw = {k.arg: k.value for k in e.keywords}
        t = target or self.temp(kind + "_out" if kind != "map" else "mapped")
        if kind == "cond":
            if len(a) < 3:
                raise _unsupported(e, "lax.cond with fewer than 3 arguments", src=self.src)
            pred = self.atom(a[0], base="pred", force_name=not isinstance(a[0], gast.Name))
            ops = [self.atom(o) for o in a[3:]]
            branches = []
            for fn_node in (a[1], a[2]):
                saved, self.out = self.out, []
                r = self.call_value(fn_node, ops, e)
                self.emit(N.assign(t, r), Op("copy", elts=[r]))
                branches.append(self.out)
                self.out = saved
            node = gast.If(test=N.clone(pred), body=branches[0], orelse=branches[1])
            # the output type check of the branches (JAX's TypeError): jit's
            # abstract values, vmap's mixed batches (optimize.py, batching.py)
            node.sj_lax_branches = ("cond", t, ("true_fun", "false_fun"))
            self.emit(node)
            return N.name(t), Op("copy", elts=[N.name(t)])
        if kind == "switch":
            fns = self.switch_branches(a[1]) if len(a) >= 2 else None
            if not fns:
                raise _unsupported(
                    e,
                    "lax.switch with branches that cannot be resolved when transforming "
                    "(a list display, a local bound once to one or to a list comprehension, "
                    "or a module-level list/tuple of functions)",
                    src=self.src,
                )
            idx = self.atom(a[0], base="index")
            ops = [self.atom(o) for o in a[2:]]
            k = self.temp("branch")
            # jnp.clip, not int(): under vmap the index is a batched array, and the
            # chain of `if branch == j` below then selects per example
            clip = registry.by_public("jnp.clip")
            lo, hi = N.const(0), N.const(len(fns) - 1)
            self.emit(
                N.assign(k, N.call("jnp.clip", [N.clone(idx), lo, hi])),
                Op("prim", prim=clip, bound=_bind(clip, idx, lo, hi)),
            )
            chain: List[Any] = []
            for j in range(len(fns) - 1, -1, -1):
                saved, self.out = self.out, []
                r = self.call_value(fns[j], ops, e)
                self.emit(N.assign(t, r), Op("copy", elts=[r]))
                body, self.out = self.out, saved
                if j == len(fns) - 1:
                    chain = body
                    continue
                c = self.temp("cond")
                test_stmt = N.assign(c, N.parse_expr(f"{k} == {j}"))
                test_stmt.sj_op = Op("inactive", what="comparison")
                node = gast.If(test=N.name(c), body=body, orelse=chain)
                # branch j against the rest (checked already: branch j + 1's type)
                node.sj_lax_branches = ("switch", t, (f"branch {j}", f"branch {j + 1}"))
                chain = [test_stmt, node]
            self.out.extend(chain)
            return N.name(t), Op("copy", elts=[N.name(t)])
        if kind == "fori_loop":
            lo, hi = self.atom(a[0]), self.atom(a[1])
            val = self.temp("val")
            init = self.atom(a[3])
            self._start_carry(val, init)
            i = self.temp("i")
            saved, self.out = self.out, []
            r = self.call_value(a[2], [N.name(i), N.name(val)], e)
            self.emit(N.assign(val, r), Op("copy", elts=[r]))
            self.check_carry("fori_loop body", init, val)
            body, self.out = self.out, saved
            loop = gast.For(
                target=N.name(i, store=True),
                iter=N.call(N.name("range"), [lo, hi]),
                body=body,
                orelse=[],
                type_comment=None,
            )
            self.emit(loop)
            return N.name(val), Op("copy", elts=[N.name(val)])
        if kind == "while_loop":
            val = self.temp("val")
            init = self.atom(a[2])
            self._start_carry(val, init)
            c = self.temp("cond")

            def test_code():
                saved, self.out = self.out, []
                r = self.call_value(a[0], [N.name(val)], e)
                self.emit(N.assign(c, r), Op("copy", elts=[r]))
                code, self.out = self.out, saved
                return code

            self.out.extend(test_code())
            saved, self.out = self.out, []
            r = self.call_value(a[1], [N.name(val)], e)
            self.emit(N.assign(val, r), Op("copy", elts=[r]))
            self.check_carry("while_loop body", init, val)
            body, self.out = self.out, saved
            body += test_code()
            self.emit(gast.While(test=N.name(c), body=body, orelse=[]))
            return N.name(val), Op("copy", elts=[N.name(val)])
        if kind in ("scan", "map"):
            return self._scan(kind, a, kw, e, t)
        raise _unsupported(e, f"lax.{kind}", src=self.src)

    def _start_carry(self, name: str, init: Any) -> None:
        """``name = init`` for a lax loop's carry, with a Python float in it made
        float32 (``ad.carry_canon``: JAX's weak float computes in float32; user
        R) where ``init`` may hold one: a constant, or a name bound to a host
        value. The loop's carry check compares with ``init`` itself (weak types
        may be promoted, as in JAX)."""
        host = isinstance(init, gast.Constant) and isinstance(init.value, (float, complex))
        host = host or (isinstance(init, gast.Name) and init.id in self.host_names)
        host = host or isinstance(init, (gast.Tuple, gast.List))
        if host:
            self._prim_into(name, "ad.carry_canon", init)
        else:
            self.emit(N.assign(name, init), Op("copy", elts=[init]))

    def check_carry(self, what: str, init: Any, carry: str) -> None:
        """JAX's TypeError when a lax loop body changes its carry's structure,
        shapes or dtypes (``ad.check_carry``, run on every pass: a while_loop whose
        body breaks the carry's type may never reach its bound)."""
        chk = registry.by_public("ad.check_carry")
        args = [N.const(what), N.clone(init), N.name(carry)]
        self.emit(
            N.expr_stmt(N.call(chk.public, args)),
            Op("prim", prim=chk, bound=_bind(chk, *[N.clone(x) for x in args])),
        )

    def switch_branches(self, node: Any) -> Optional[List[Any]]:
        """The branch functions of ``lax.switch(i, node, ...)`` as expressions
        (``call_value`` calls each), resolved now; None when they cannot be.

        ``node`` is a list/tuple display, a list comprehension over static items,
        a local bound once to either (see :meth:`function_list_binding`), or a
        global/closed-over list or tuple of functions, read now: its binding and
        (for a list) its items are dependencies, so changing them transforms the
        function again."""
        if isinstance(node, (gast.List, gast.Tuple)):
            return list(node.elts)
        if isinstance(node, gast.ListComp):
            return self._unrolled_comprehension(node)
        if isinstance(node, gast.Name) and node.id in self.locals:
            held = self.function_lists.get(self.var(node.id))
            return None if held is None else self.switch_branches(held)
        items = self._static_items(node)
        if items is None or not all(callable(f) for f in self._static_seq(node) or ()):
            return None
        return items

    def _static_seq(self, node: Any) -> Optional[Any]:
        """The list or tuple a global/closed-over ``node`` names now, else None."""
        if not isinstance(node, (gast.Name, gast.Attribute, gast.Subscript)):
            return None
        status, obj = self.resolve(node)
        return obj if status == "found" and isinstance(obj, (list, tuple)) else None

    def _static_items(self, node: Any) -> Optional[List[Any]]:
        """Expressions for the items of a sequence known now: a display's items,
        ``range`` of constants, or ``SEQ[j]`` for a global list/tuple ``SEQ``
        (recorded as a dependency, its items too for a list)."""
        if isinstance(node, (gast.List, gast.Tuple)):
            return list(node.elts)
        if (
            isinstance(node, gast.Call)
            and self.resolve(node.func) == ("found", range)
            and not node.keywords
        ):
            try:
                bounds = [self._static_value(b) for b in node.args]
                return [N.const(v) for v in range(*bounds)]
            except (UnsupportedSyntaxError, TypeError, ValueError):
                return None
        seq = self._static_seq(node)
        if seq is None:
            return None
        self._record_dependency(node, seq)
        if isinstance(seq, list):  # changed in place: the items are compared
            self.deps.append(("items", seq, None, tuple(seq)))
        out = []
        for j in range(len(seq)):
            item = gast.Subscript(value=N.clone(node), slice=N.const(j), ctx=gast.Load())
            out.append(gast.copy_location(item, node))
        return out

    def _unrolled_comprehension(self, comp: Any) -> Optional[List[Any]]:
        """``[elt for k in items]`` over items known now: ``elt`` once per item,
        with ``k`` replaced by the item's expression (a lambda's parameter named
        ``k`` keeps its own binding; its default ``k=k`` reads the item)."""
        if len(comp.generators) != 1:
            return None
        gen = comp.generators[0]
        if gen.ifs or gen.is_async or not isinstance(gen.target, gast.Name):
            return None
        items = self._static_items(gen.iter)
        if items is None:
            return None
        name = gen.target.id
        return [_substitute_name(N.clone(comp.elt), name, item) for item in items]

    def function_list_binding(self, target: Any, value: Any) -> bool:
        """``branches = [lambda v: ..., f]`` (or a list comprehension) where the
        name is bound nowhere else and passed as ``lax.switch``'s branches:
        remembered for the switch. True when the name is used only there (no
        run-time value then: the lambdas are inlined at the switch); else it is
        also bound as usual."""
        if not (
            isinstance(target, gast.Name)
            and isinstance(value, (gast.List, gast.Tuple, gast.ListComp))
            and target.id in self.locals
        ):
            return False
        stores = loads = switches = 0
        for n in gast.walk(self.src.node):
            if isinstance(n, gast.Name) and n.id == target.id:
                if isinstance(n.ctx, gast.Store):
                    stores += 1
                elif isinstance(n.ctx, gast.Load):
                    loads += 1
            elif (
                isinstance(n, gast.Call)
                and len(n.args) >= 2
                and isinstance(n.args[1], gast.Name)
                and n.args[1].id == target.id
                and isinstance(n.func, (gast.Name, gast.Attribute))
                and self.resolve(n.func) == ("found", _lax_switch())
            ):
                switches += 1
        if stores != 1 or switches == 0:
            return False
        self.function_lists[self.var(target.id)] = value
        if loads == switches:
            return True
        # used otherwise too (br[0](x)): bound as usual as well, which works for a
        # display of named functions (lambdas as values stay an error)
        return False

    def _scan(self, kind, a, kw, e, t) -> tuple:
        if kind == "scan":
            f = a[0] if a else kw.get("f")
            init = a[1] if len(a) > 1 else kw.get("init")
            xs = a[2] if len(a) > 2 else kw.get("xs", N.const(None))
            length = a[3] if len(a) > 3 else kw.get("length", N.const(None))
            rev = a[4] if len(a) > 4 else kw.get("reverse", N.const(False))
        else:
            f, xs = a[0], a[1]
            init, length, rev = None, N.const(None), N.const(False)
        rev_c = _fold_constant(rev)
        if not isinstance(rev_c, gast.Constant):
            raise _unsupported(e, "a non-constant `reverse=` in lax.scan", src=self.src)
        reverse = bool(rev_c.value)
        xs_a = self.atom(xs, base="xs")
        n = self.temp("n")
        length_a = self.atom(length)
        scan_len = registry.by_public("ad.scan_length")
        self.emit(
            N.assign(n, N.call(scan_len.public, [N.clone(xs_a), length_a])),
            Op("prim", prim=scan_len, bound=_bind(scan_len, N.clone(xs_a), length_a)),
        )
        carry = None
        if kind == "scan":
            carry = self.temp("carry")
            init_a = self.atom(init)
            self._start_carry(carry, init_a)
        ys = self.temp("ys")
        self.emit(N.assign(ys, gast.List(elts=[], ctx=gast.Load())), Op("pack", elts=[]))
        k = self.temp("k")
        saved, self.out = self.out, []
        i = k
        if reverse:
            i = self.temp("i")
            self.emit(N.assign(i, N.parse_expr(f"{n} - 1 - {k}")), Op("inactive", what="index"))
        x = self.temp("x")
        if isinstance(xs_a, gast.Constant) and xs_a.value is None:
            self.emit(N.assign(x, N.const(None)), Op("copy", elts=[N.const(None)]))
        else:
            sl = registry.by_public("ad.tree_slice")
            self.emit(
                N.assign(x, N.call(sl.public, [N.clone(xs_a), N.name(i)])),
                Op("prim", prim=sl, bound=_bind(sl, N.clone(xs_a), N.name(i))),
            )
        if kind == "scan":
            r = self.call_value(f, [N.name(carry), N.name(x)], e)
            getitem = registry.by_public("ad.getitem")
            y = self.temp("y")
            for nm, j in ((carry, 0), (y, 1)):
                node = gast.Subscript(value=N.clone(r), slice=N.const(j), ctx=gast.Load())
                self.emit(
                    N.assign(nm, node),
                    Op("prim", prim=getitem, bound=_bind(getitem, N.clone(r), N.const(j))),
                )
            self.check_carry("scan body", init_a, carry)
            y_atom = N.name(y)
        else:
            y_atom = self.call_value(f, [N.name(x)], e)
        self.emit(
            N.expr_stmt(N.call(N.attr(N.name(ys), "append"), [y_atom])),
            Op("append", elts=[y_atom], target=ys),
        )
        body, self.out = self.out, saved
        loop = gast.For(
            target=N.name(k, store=True),
            iter=N.call(N.name("range"), [N.name(n)]),
            body=body,
            orelse=[],
            type_comment=None,
        )
        self.emit(loop)
        if reverse:
            getitem = registry.by_public("ad.getitem")
            rv = self.temp("ys")
            idx = gast.Slice(lower=None, upper=None, step=N.const(-1))
            self.emit(
                N.assign(rv, gast.Subscript(value=N.name(ys), slice=idx, ctx=gast.Load())),
                Op("prim", prim=getitem, bound=_bind(getitem, N.name(ys), idx)),
            )
            ys = rv
        st = registry.by_public("ad.tree_stack")
        stacked = self.temp("stacked")
        self.emit(
            N.assign(stacked, N.call(st.public, [N.name(ys)])),
            Op("prim", prim=st, bound=_bind(st, N.name(ys))),
        )
        if kind == "map":
            return N.name(stacked), Op("copy", elts=[N.name(stacked)])
        elts = [N.name(carry), N.name(stacked)]
        return gast.Tuple(elts=elts, ctx=gast.Load()), Op("pack", elts=elts)


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


def _shift_options(factory: Any, extra: list, kws: dict, k: int, nparams: int) -> None:
    """The options of transform ``factory`` (positional ``extra``, keyword ``kws``,
    edited in place) for a function given ``k`` new leading parameters (the free
    variables of a lifted lambda), which it must not touch: argnums shifted by
    ``k``, in_axes ``None`` for them (``nparams``: the original parameters)."""
    name = getattr(factory, "__name__", "")
    if name in ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian"):
        if extra:
            extra[0] = _shift_argnums(extra[0], k)
        else:
            kws["argnums"] = _shift_argnums(kws.get("argnums", 0), k)
    elif name == "vectorize":
        # jnp.vectorize: the new leading parameters are excluded (passed as they are)
        ex = kws.get("excluded", ())
        kws["excluded"] = frozenset(range(k)) | {e + k if isinstance(e, int) else e for e in ex}
    elif name in ("vmap", "pmap"):
        if name == "pmap":
            extra = []  # (pmap's second positional parameter is axis_name; in_axes a keyword)
        axes = extra[0] if extra else kws.get("in_axes", 0)
        if isinstance(axes, (list, tuple)):
            axes = (None,) * k + tuple(axes)
        else:
            axes = (None,) * k + (axes,) * nparams
        if extra:
            extra[0] = axes
        else:
            kws["in_axes"] = axes


def _shift_argnums(argnums: Any, k: int) -> Any:
    if isinstance(argnums, (tuple, list)):
        return tuple(a + k if a >= 0 else a for a in argnums)
    return argnums + k if argnums >= 0 else argnums


_MUTATORS = set(_CONTAINER_METHODS)


def _mutated_params(fnode: Any) -> Set[str]:
    """Parameters of ``fnode`` it mutates in place (``p.append(v)``, ``p[k] = v``)
    and never rebinds (``p = ...``); nested functions are not looked into."""
    params = {a.id for a in fnode.args.args}
    mutated: Set[str] = set()
    rebound: Set[str] = set()

    def visit(node):
        if isinstance(node, (gast.FunctionDef, gast.Lambda)):
            return
        if (
            isinstance(node, gast.AugAssign)
            and isinstance(node.target, gast.Name)
            and isinstance(node.value, (gast.List, gast.ListComp))
        ):
            mutated.add(node.target.id)  # p += [v] extends p in place
            visit(node.value)
            return
        if (
            isinstance(node, gast.Call)
            and isinstance(node.func, gast.Attribute)
            and node.func.attr in _MUTATORS
            and isinstance(node.func.value, gast.Name)
        ):
            mutated.add(node.func.value.id)
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, (gast.Store, gast.Del)):
            if isinstance(node.value, gast.Name):
                mutated.add(node.value.id)
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            rebound.add(node.id)
        for child in gast.iter_child_nodes(node):
            visit(child)

    for st in fnode.body:
        visit(st)
    return (mutated & params) - rebound


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


def _lax_switch() -> Any:
    from .. import lax as _lax

    return _lax.switch


def _substitute_name(node: Any, name: str, item: Any) -> Any:
    """``node`` with the loads of ``name`` replaced by copies of ``item``, except
    inside a lambda or def that binds ``name`` itself (its defaults are outside).
    A lambda's capture idiom ``lambda v, k=k: ...`` loses the parameter ``k``:
    its body reads the item (lax.switch passes the operands only)."""

    def is_capture(a, d):
        return a.id == name and isinstance(d, gast.Name) and d.id == name

    class Sub(gast.NodeTransformer):
        def visit_Name(self, n):
            if n.id == name and isinstance(n.ctx, gast.Load):
                return gast.copy_location(N.clone(item), n)
            return n

        def visit_Lambda(self, n):
            args = n.args
            first = len(args.args) - len(args.defaults)
            for k, (a, d) in enumerate(zip(args.args[first:], args.defaults)):
                if is_capture(a, d):
                    del args.args[first + k], args.defaults[k]
                    break
            n.args = self.visit(args)
            if name not in {a.id for a in n.args.args + n.args.kwonlyargs}:
                n.body = self.visit(n.body)
            return n

        def visit_FunctionDef(self, n):
            return n  # (a def in a comprehension is not an expression)

    return Sub().visit(node)


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


def _is_numpy_function(obj: Any) -> bool:
    """A function of NumPy itself (``np.prod``, ``np.exp``), not srcjax's."""
    if isinstance(obj, np.ufunc):
        return True
    module = getattr(obj, "__module__", None) or ""
    return callable(obj) and module.split(".")[0] == "numpy" and not isinstance(obj, type)


class _HostCall:
    """A NumPy function called on host values only (constants, shapes, module-level
    arrays) inside transformed code: it runs in NumPy, as in JAX (where such
    values are not traced), and a 0-d result is a Python scalar (weakly typed:
    ``x * np.sqrt(2.0)`` keeps ``x``'s dtype)."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "numpy_function")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        r = self.fn(*args, **kwargs)
        if isinstance(r, np.generic) or (isinstance(r, np.ndarray) and r.ndim == 0):
            return r.item()
        return r


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


def _tree_registry() -> Dict[Any, Any]:
    from .. import tree_util

    return tree_util._REGISTRY


def _is_namedtuple_class(cls: Any) -> bool:
    return issubclass(cls, tuple) and hasattr(cls, "_fields")


def _positional_construct_args(cls: Any, e: Any) -> Optional[List[Any]]:
    """The argument nodes of the call ``cls(...)`` in positional order (keywords
    placed by ``cls``'s signature), or None when that is not possible."""
    if not e.keywords:
        return list(e.args)
    try:
        params = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        return None
    names = [p.name for p in params if p.kind == p.POSITIONAL_OR_KEYWORD]
    kws = {k.arg: k.value for k in e.keywords}
    if None in kws or any(k not in names for k in kws):
        return None
    out = list(e.args)
    for name in names[len(out) :]:
        if name in kws:
            out.append(kws.pop(name))
        else:
            break
    return out if not kws else None


def _bind(prim: Any, *args: Any) -> Dict[str, Any]:
    """Bind argument nodes to ``prim``'s positional parameters, by its signature."""
    names = [
        p.name
        for p in prim.signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if len(args) > len(names):
        raise TypeError(f"{prim.public} takes {len(names)} positional arguments")
    return dict(zip(names, args))


def _resolution_error(norm: Normalizer, node: Any):
    from ..errors import ResolutionError

    hint = "is it defined (or imported) before the function is transformed?"
    if isinstance(node, gast.Attribute):
        # a missing function of one of our modules (jnp.linalg.svd): say so
        status, base = norm.resolve(node.value)
        mod = getattr(base, "__name__", "") if status == "found" else ""
        if isinstance(base, types.ModuleType) and mod.split(".")[0] == "srcjax":
            hint = f"{mod} does not provide `{node.attr}` (yet)"
    return ResolutionError(f"cannot resolve `{N.to_source(node)}`", norm.loc(node), hint)


def _prim_expr(prim, atoms, kws) -> Any:
    op = prim.op
    if op and op.startswith("unary ") and op != "unary not" and len(atoms) == 1 and not kws:
        cls = {v: k for k, v in _UNARY.items()}[op]
        return gast.UnaryOp(op=cls(), operand=atoms[0])
    if op and op in _BINOPS.values() and len(atoms) == 2 and not kws:
        cls = {v: k for k, v in _BINOPS.items()}[op]
        return gast.BinOp(left=atoms[0], op=cls(), right=atoms[1])
    if prim.public == "ad.getitem" and len(atoms) == 2 and not kws:
        return gast.Subscript(value=atoms[0], slice=atoms[1], ctx=gast.Load())
    return N.call(prim.public, atoms, kws)


def _attributes() -> Dict[str, Any]:
    try:
        from ..primitives.methods import ATTRIBUTES  # type: ignore
    except ImportError:  # pragma: no cover
        ATTRIBUTES = {}
    return ATTRIBUTES


def _methods() -> Dict[str, Any]:
    try:
        from ..primitives.methods import METHODS  # type: ignore
    except ImportError:
        try:
            from ..primitives.structural import METHODS  # type: ignore
        except ImportError:
            METHODS = {}
    return METHODS


def _is_plain_data(x: Any) -> bool:
    """Numbers, strings, None and tuples/lists/dicts of them (transform options)."""
    if x is None or isinstance(x, (bool, int, float, str)):
        return True
    if isinstance(x, (tuple, list)):
        return all(_is_plain_data(v) for v in x)
    if isinstance(x, dict):
        return all(_is_plain_data(k) and _is_plain_data(v) for k, v in x.items())
    return False


def _fold_constant(e: Any) -> Any:
    """Fold ``-1``, ``(0, -1)``, ``1e-3`` etc. into constants; None if not constant."""
    if isinstance(e, gast.Constant):
        return e
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, (gast.USub, gast.UAdd)):
        inner = _fold_constant(e.operand)
        if isinstance(inner, gast.Constant) and isinstance(inner.value, (int, float)):
            v = -inner.value if isinstance(e.op, gast.USub) else inner.value
            return N.const(v)
    if isinstance(e, gast.Tuple):
        parts = [_fold_constant(x) for x in e.elts]
        if all(isinstance(p, gast.Constant) for p in parts):
            return gast.Tuple(elts=parts, ctx=gast.Load())
    return None


def _base_name(op: Optional[Op], e: Any) -> str:
    if op is not None and op.kind == "prim":
        short = {
            "+": "add",
            "-": "sub",
            "*": "mul",
            "/": "div",
            "**": "pow",
            "@": "matmul",
            "unary -": "neg",
            "//": "floordiv",
            "%": "mod",
        }
        if op.prim.op in short:
            return short[op.prim.op]
        if op.prim.public in ("ad.getattr", "ad.static_attr"):
            return op.bound["name"].value  # p.w -> w
        if op.prim.public == "ad.getitem":
            v = op.bound.get("x")
            idx = op.bound.get("idx")
            if (
                isinstance(idx, gast.Constant)
                and isinstance(idx.value, str)
                and idx.value.isidentifier()
            ):
                return idx.value  # params["w"] -> w
            if isinstance(v, gast.Name):
                return v.id + "_i"
            return "item"
        return op.prim.name
    if isinstance(e, gast.Call):
        f = e.func
        if isinstance(f, gast.Attribute):
            return f.attr
        if isinstance(f, gast.Name):
            return f.id
    if op is not None and op.kind == "pack":
        return "packed"
    return "t"


def _as_load(node):
    for n in gast.walk(node):
        if hasattr(n, "ctx"):
            n.ctx = gast.Load()
    return node


def _as_store(node):
    node.ctx = gast.Store()
    return node


def _clone_sharing_ops(stmts: List[Any]) -> List[Any]:
    """Deep copies of ``stmts`` whose nodes (nested ones too) share the originals'
    Ops (a Primitive is never copied)."""
    memo: Dict[int, Any] = {}
    for s in stmts:
        for n in gast.walk(s):
            op = getattr(n, "sj_op", None)
            if op is not None:
                memo[id(op)] = op
    return [N.clone(s, memo) for s in stmts]


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
        from .keyreuse import report

        report(fdef)
    return Normalized(fdef, src, norm.namer, norm.bindings, norm.deps)


def _is_user_code(src: FunctionSource) -> bool:
    """Not code srcjax generated (a transform's output read by the next one, or a
    fixed-arity wrapper): the key-reuse check looks at what the user wrote."""
    return not hasattr(src.fn, "__srcjax_deps__") and not src.filename.startswith("<srcjax")


class ClassKind(str):
    """The kind ``"tree"`` of an argument that is an instance of a registered
    pytree class (or a container holding some), carrying its type tree: equal to
    ``"tree"`` for code that only asks that, but a different cache key per type
    tree, since the normalized code inlines those classes' methods."""

    types: Any

    def __new__(cls, types: Any) -> "ClassKind":
        obj = super().__new__(cls, "tree")
        obj.types = types
        return obj

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, ClassKind):
            return self.types == other.types
        return str.__eq__(self, other)

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(("tree", self.types))

    def __repr__(self) -> str:
        return f"ClassKind({self.types!r})"


def type_tree(x: Any) -> Any:
    """What the normalizer needs to know statically about an argument: the
    registered pytree classes in it, and where. ``("class", cls, ((attr, tree),
    ...), static_attribute_names, fns)``, ``("seq", tree)`` (every item alike), ``("items", trees)``,
    ``("dict", ((key, tree), ...))``; ``None`` when there is no class inside.
    A class's ``fns`` are its static callable attributes ``((name, fn), ...)``:
    calls of them are resolved to ``fn``, so ``fn`` is part of the key; its
    ``consts`` are its static str/int/bool/None attributes ``((name, value),
    ...)``, known while transforming (a table's key, an ``if`` test). A layer
    list's None slots are ``("none",)``, so ``layer is None`` is known too."""
    if isinstance(x, dict):
        subs = tuple((k, type_tree(v)) for k, v in x.items())
        return ("dict", subs) if any(t is not None for _, t in subs) else None
    if isinstance(x, (list, tuple)):
        items = tuple(type_tree(v) for v in x)
        if not any(t is not None for t in items):
            return None
        items = tuple(("none",) if v is None else t for v, t in zip(x, items))
        if hasattr(x, "_fields"):  # a namedtuple: state.model reads an item
            return ("items", items, tuple(x._fields))
        if all(t == items[0] for t in items):
            return ("seq", items[0])
        return ("items", items)
    from ..tree_util import _REGISTRY

    if x is None or type(x) not in _REGISTRY:
        return None
    attrs = getattr(x, "__dict__", None) or {}
    subs = []
    for a in sorted(attrs):
        t = type_tree(attrs[a])
        if t is None and isinstance(attrs[a], (list, tuple)) and not attrs[a]:
            t = ("items", ())  # an empty layer list: a loop over it does nothing
        if t is not None:
            subs.append((a, t))
    from ..primitives.control import static_attrs

    static = static_attrs(x)
    fns = tuple((a, attrs[a]) for a in static if _static_callable(attrs[a]))
    consts = tuple((a, attrs[a]) for a in static if _static_constant(attrs[a]))
    return ("class", type(x), tuple(subs), static, fns, consts)


def _static_constant(v: Any) -> bool:
    """A static attribute whose value the normalizer may use (``ACTS[self.act]``,
    ``if self.use_bias:``): a str, int, bool or None, so part of the key."""
    return v is None or type(v) in (str, int, bool)


def _static_callable(v: Any) -> bool:
    """A static attribute whose calls (``self.act(y)``) are resolved statically:
    a function or a primitive (hashable, so it can be part of the key)."""
    if isinstance(v, type) or not callable(v):
        return False
    try:
        hash(v)
    except TypeError:
        return False
    return True


def _constant_type(status: str, obj: Any) -> Any:
    """The type tree of a closed-over or global value (read at transform time)."""
    from ..tree_util import _REGISTRY

    if status != "found" or not (type(obj) in _REGISTRY or isinstance(obj, (list, tuple, dict))):
        return None
    return type_tree(obj)


def _attr_type(ty: Any, name: Any) -> Any:
    if ty is None or not isinstance(name, gast.Constant):
        return None
    if ty[0] == "items" and len(ty) > 2 and name.value in ty[2]:
        return ty[1][ty[2].index(name.value)]  # a namedtuple's field
    if ty[0] != "class":
        return None
    return dict(ty[2]).get(name.value)


def _item_type(ty: Any, idx: Any) -> Any:
    if ty is None:
        return None
    sl = N.static_slice(idx)
    if ty[0] == "seq":
        if sl is not None:
            return ty  # a slice of layers is layers (`for layer in self.layers[:-1]`)
        return None if isinstance(idx, gast.Slice) else ty[1]
    if ty[0] == "items" and sl is not None:
        items = ty[1][sl]
        return ("items", items) if items else None
    if not isinstance(idx, gast.Constant):
        return None
    if ty[0] == "items" and isinstance(idx.value, int):
        try:
            return ty[1][idx.value]
        except IndexError:
            return None
    if ty[0] == "dict":
        try:
            return dict(ty[1]).get(idx.value)
        except TypeError:
            return None
    return None


def _callee_base(func: Any) -> str:
    if isinstance(func, gast.Attribute):
        return func.attr
    if isinstance(func, gast.Subscript) and isinstance(func.value, gast.Name):
        return func.value.id + "_i"
    return "module"


def _plain_method(cls: type, name: str) -> Any:
    """``cls.name`` when it is a plain Python function defined in user code."""
    import inspect

    try:
        fn = inspect.getattr_static(cls, name)
    except AttributeError:
        return None
    if isinstance(fn, types.FunctionType) and not _is_library_function(fn):
        return fn
    return None


def _static_method(cls: type, name: str) -> Any:
    import inspect

    try:
        fn = inspect.getattr_static(cls, name)
    except AttributeError:
        return None
    if isinstance(fn, staticmethod) and isinstance(fn.__func__, types.FunctionType):
        return fn.__func__
    return None


def _unused():  # keep imports used for static analysis tools
    return math


_MISSING = object()


def dependencies_valid(deps: List[tuple]) -> bool:
    """True when every inlined callee is still bound where it was found."""
    for kind, where, key, obj in deps:
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
