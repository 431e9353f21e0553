"""The language the normalizer writes: :class:`Op` (what one ANF statement
computes), :class:`Normalized` (the result of :func:`normalize`) and
:class:`Namer` (fresh names that never clash with the user's or generated
code's), and :class:`UserGlobal` (a binding read live from the user's module).
"""

from __future__ import annotations

import builtins
import keyword
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set

from .. import nodes as N
from ..source import FunctionSource

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
        #: (user global, id of its module's dict, id of its closure's) -> (the name
        #: generated code reads it by, when its own name is one generated code uses
        #: (``ad`` -> ``ad_``), those two dicts: kept, so their ids stay theirs)
        self.user_globals: Dict[tuple, tuple] = {}
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


class UserGlobal:
    """A binding of generated code that reads the user's global (or closure)
    variable ``name`` live. Generated code names it otherwise (``ad_`` for the
    user's ``ad``, which would hide srcjax's ``ad`` namespace); the normalizer
    makes these bindings (:meth:`Normalizer._shadowing_global`) and
    ``codegen.emit.GeneratedGlobals`` reads them."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"UserGlobal({self.name!r})"


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
    #: an ``inactive`` call whose result holds its arguments (``iter(xs)``,
    #: ``zip(a, b)``, ``enumerate(xs)`` kept as Python objects): a differentiated
    #: argument makes the result active, and AD refuses it (no rule) rather than
    #: give it a zero derivative (fresh-user round 7, item 09)
    keeps: bool = False

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
        elif self.kind in ("copy", "pack", "append", "unknown") or self.keeps:
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
