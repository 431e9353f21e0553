"""The one registry of primitives.

A :class:`Primitive` is one operation that transforms know how to rewrite. It
carries, in one place:

- ``impl``: the NumPy implementation, a plain Python callable whose signature is
  the public signature (``sum(x, axis=None, keepdims=False)``). Calling the
  primitive calls ``impl``.
- ``public``: the dotted name generated code uses for it (``"jnp.sin"``,
  ``"jnp.linalg.inv"``, ``"nn.relu"``, ``"ad.unbroadcast"``). The namespaces
  ``jnp``, ``nn``, ``special``, ``lax`` and ``ad`` are bound in every generated
  module (see :mod:`srcjax.codegen.emit`).
- ``op``: for Python operators, the operator source (``"+"``, ``"@"``,
  ``"unary -"``), so generated code keeps ``a + b`` instead of a call.
- ``vjps``: one adjoint rule per differentiable parameter, keyed by parameter
  name. A rule is a Python function ``rule(g, ans, <impl parameters>)`` that
  returns the contribution of the output cotangent ``g`` to that parameter's
  cotangent, *before* un-broadcasting (the transform reduces it back to the
  parameter's shape when ``broadcasting`` is set).
- ``jvps``: one tangent rule per differentiable parameter: ``rule(t, ans,
  <impl parameters>)`` returns the contribution of that parameter's tangent
  ``t`` to the output tangent (broadcasting happens by itself).
- ``batch``: the batching rule (vmap); elementwise primitives need none.
- ``c_expr``: the C expression for fused CUDA kernels, e.g. ``"sin({x})"``.

Rules are written as ordinary Python over other primitives (``cos(x)``, not
``jnp.cos(x)``: this package never imports :mod:`srcjax.numpy`). Their source
is read and inlined as a template into generated code, where every primitive
is written by its ``public`` name; so generated derivative code is itself
ordinary srcjax input, and higher derivatives need nothing special.

A rule whose body is a single ``return <expr>`` inlines as an expression; a
longer body inlines as statements with its locals renamed.

Varargs parameters (``*arrays``) take one rule that also receives ``argnum``
(the operand's index among the varargs) as a keyword constant.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, Optional

__all__ = ["Primitive", "REGISTRY", "by_public", "register", "lookup_callable"]

#: public name -> Primitive, in registration order (deterministic test order).
REGISTRY: Dict[str, "Primitive"] = {}

#: id(python callable) -> Primitive: numpy functions, math functions, builtins
#: that resolve to a primitive when user code calls them.
_ALIASES: Dict[int, "Primitive"] = {}
_ALIAS_KEEP: list = []  # keep alias objects alive so ids stay unique


class Primitive:
    """One registered operation with its rules.

    Args:
        public: dotted name used in generated code, e.g. ``"jnp.sin"``.
        impl: NumPy implementation; its signature is the primitive's signature.
        op: operator spelling for Python operators (``"+"``), else ``None``.
        kind: ``"elementwise"``, ``"reduction"``, ``"linalg"``, ``"structural"``,
            ``"creation"``, ``"control"``, ``"random"`` or ``"internal"``.
        broadcasting: outputs broadcast the array operands (adjoints are summed
            back to each operand's shape).
        differentiable: ``False`` for primitives whose output is integer or
            boolean (comparisons, argmax, shape queries): never active.
        c_expr: C expression template for CUDA fusion, or ``None``.
        test_domain: ``(lo, hi)`` of inputs for the generated numerical tests.
        signature: override for ``inspect.signature(impl)`` (ufuncs).
    """

    def __init__(
        self,
        public: str,
        impl: Callable[..., Any],
        *,
        op: Optional[str] = None,
        kind: str = "elementwise",
        broadcasting: bool = False,
        differentiable: bool = True,
        c_expr: Optional[str] = None,
        test_domain: tuple = (-2.0, 2.0),
        signature: Optional[inspect.Signature] = None,
    ) -> None:
        self.public = public
        self.name = public.rsplit(".", 1)[-1]
        self.__name__ = self.__qualname__ = self.name  # as a function has (jnp.tanh.__name__)
        self.impl = impl
        self.op = op
        self.kind = kind
        self.broadcasting = broadcasting
        self.differentiable = differentiable
        self.c_expr = c_expr
        self.test_domain = test_domain
        self.signature = signature if signature is not None else inspect.signature(impl)
        self.vjps: Dict[str, Callable] = {}
        self.jvps: Dict[str, Callable] = {}
        self.batch: Optional[Callable] = None
        #: ``samples(rng) -> [(args, kwargs), ...]`` float64 example inputs for
        #: the registry-driven tests; ``None`` = derive from ``test_domain``.
        self.samples: Optional[Callable] = None
        #: the output is a Python container of arrays (``split``, ``slogdet``):
        #: its cotangent is a container too.
        self.returns_tree = False
        #: what to tell the user when a derivative is needed and there is no rule
        self.missing_rule_hint: Optional[str] = None
        self.__doc__ = getattr(impl, "__doc__", None)
        self.__wrapped__ = impl

    def __deepcopy__(self, memo: dict) -> "Primitive":
        return self  # primitives are singletons: AST copies share them

    def __copy__(self) -> "Primitive":
        return self

    # -- calling -----------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.impl(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<srcjax primitive {self.public}>"

    # -- rule registration -------------------------------------------------
    def _param_names(self):
        return [
            p.name
            for p in self.signature.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
        ]

    def _assign(self, table: Dict[str, Callable], rules, named) -> None:
        names = self._param_names()
        if len(rules) > len(names):
            raise TypeError(f"{self.public}: {len(rules)} rules for parameters {names}")
        for pname, rule in zip(names, rules):
            if rule is not None:
                table[pname] = rule
        for pname, rule in named.items():
            if pname not in self.signature.parameters:
                raise TypeError(f"{self.public}: no parameter {pname!r}")
            table[pname] = rule

    def def_vjp(self, *rules: Optional[Callable], **named: Callable) -> "Primitive":
        """Register adjoint rules, positionally (``None`` skips) or by name."""
        self._assign(self.vjps, rules, named)
        return self

    def def_jvp(self, *rules: Optional[Callable], **named: Callable) -> "Primitive":
        """Register tangent rules, positionally (``None`` skips) or by name."""
        self._assign(self.jvps, rules, named)
        return self

    def def_batch(self, rule: Callable) -> Callable:
        self.batch = rule
        return rule

    def diff_params(self) -> list:
        """Names of the parameters that have an adjoint rule."""
        return [n for n in self.signature.parameters if n in self.vjps]


def register(prim: Primitive, *aliases: Any) -> Primitive:
    """Add ``prim`` to the registry; ``aliases`` are other callables (``np.sin``,
    ``math.sin``) that resolve to it when user code calls them."""
    if prim.public in REGISTRY:
        raise ValueError(f"primitive {prim.public} registered twice")
    REGISTRY[prim.public] = prim
    _ALIAS_KEEP.append(prim.impl)
    _ALIASES[id(prim.impl)] = prim  # generated code calls impls directly
    for a in aliases:
        _ALIAS_KEEP.append(a)
        _ALIASES[id(a)] = prim
    return prim


def alias(prim: Primitive, *aliases: Any) -> None:
    """Make more callables resolve to an already registered ``prim``."""
    for a in aliases:
        _ALIAS_KEEP.append(a)
        _ALIASES[id(a)] = prim


def by_public(public: str) -> Primitive:
    return REGISTRY[public]


def lookup_callable(obj: Any) -> Optional[Primitive]:
    """The primitive a callable resolves to, or ``None``."""
    if isinstance(obj, Primitive):
        return obj
    return _ALIASES.get(id(obj))
