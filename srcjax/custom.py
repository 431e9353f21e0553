"""User-defined derivative rules: ``custom_jvp`` and ``custom_vjp`` (JAX's API).

A decorated function becomes a primitive of the registry (public name
``custom.<name>``) whose rules are small generated functions that call the
user's rule functions; so the generated code of any transform shows the call
to the user's rule, e.g. ``y_dot = log1pexp_jvp((x,), (x_dot,))[1]``.

- ``custom_jvp``: forward mode calls the user's jvp rule; reverse mode uses its
  transpose, computed by srcjax's own reverse mode applied to the (linear)
  tangent map of the rule (``_LinearTranspose``, a transformed function: code
  that transforms generated code again inlines it, so higher derivatives
  differentiate the user's jvp rule, as in JAX).
- ``custom_vjp``: reverse mode computes the output by ``fwd`` in the forward
  sweep and calls ``fwd`` then ``bwd`` in the backward sweep (the residuals
  are recomputed); generated code calls them as plain user functions, so a
  further transform (grad, jacfwd, vmap, jit) differentiates or batches their
  code, as in JAX. Forward mode of a ``custom_vjp`` function itself raises, as
  in JAX.

Semantics follow https://docs.jax.dev/en/latest/notebooks/Custom_derivative_rules_for_Python_code.html
"""

from __future__ import annotations

import builtins
import functools
import inspect
import itertools
import os
import types
from typing import Any, Callable, Dict, Optional, Sequence

from ._array import on_buffers
from .api import Transformed
from .codegen.emit import synthetic_module
from .primitives.ad import zeros_like as _zeros_like
from .primitives.registry import Primitive, register

__all__ = ["custom_jvp", "custom_vjp"]

_COUNTER = itertools.count()


def _positional_names(fun: Callable) -> list:
    sig = inspect.signature(fun)
    names = []
    for p in sig.parameters.values():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            raise TypeError(
                f"custom derivative rules need a function with positional parameters only; "
                f"{fun.__name__} has {p.kind.description} parameter {p.name!r}"
            )
        names.append(p.name)
    return names


def _synthetic_module(
    text: str, label: str, env: Dict[str, Any], transposes: Dict[str, str] = None
) -> Dict[str, Any]:
    """:func:`srcjax.codegen.emit.synthetic_module` (``text`` run as a module
    whose source is readable), then the ``_LinearTranspose`` objects
    ``transposes`` names bound: global name -> tangent map's name."""
    ns = synthetic_module(text, label, env)
    for name, tangent_map in (transposes or {}).items():
        ns[name] = _LinearTranspose(ns[tangent_map])
    return ns


def _transpose_rule(p: str, args: str) -> str:
    """The reverse-mode rule of a custom_jvp function for argument ``p``: the
    transpose of its (linear) tangent map, ``_tangent_map_p(*args, t)``."""
    return (
        f"def _vjp_{p}(g, ans, {args}):\n"
        f"    return _transpose_{p}({args}, ad.zeros_like({p}), g)[0]\n"
    )


def _transposes(names) -> Dict[str, str]:
    return {f"_transpose_{p}": f"_tangent_map_{p}" for p in names}


def _static_target(node: Any, env: Dict[str, Any]) -> Any:
    """What the callee ``node`` of a call names, when that is known from ``env``
    (a name, or attributes of a module or class: ``jax.vjp``); else ``None``."""
    import gast

    if isinstance(node, gast.Name):
        if node.id in env:
            return env[node.id]
        return getattr(builtins, node.id, None)
    if isinstance(node, gast.Attribute):
        base = _static_target(node.value, env)
        if isinstance(base, (types.ModuleType, type)):
            return getattr(base, node.attr, None)
    return None


def _calls_outside_only(fn: Any, seen: Optional[set] = None, depth: int = 0) -> Any:
    """The callee (``jax.vjp``, ``jax.linearize`` ...) that srcjax refuses inside
    transformed code when ``fn``'s source, or a user function it calls (three
    levels deep), calls one; else ``None``."""
    import gast

    from .frontend.source import get_source

    seen = set() if seen is None else seen
    fn = getattr(fn, "__func__", fn)
    if not isinstance(fn, types.FunctionType) or fn in seen:
        return None
    seen.add(fn)
    try:
        node = get_source(fn).node
    except Exception:  # noqa: BLE001 - no source: nothing srcjax would inline
        return None
    env = dict(fn.__globals__)
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            env[name] = cell.cell_contents
        except ValueError:  # (an empty cell)
            pass
    for call in gast.walk(node):
        if not isinstance(call, gast.Call):
            continue
        obj = _static_target(call.func, env)
        if getattr(obj, "__srcjax_not_inside__", False):
            return obj
        if depth < 3 and isinstance(obj, types.FunctionType):
            found = _calls_outside_only(obj, seen, depth + 1)
            if found is not None:
                return found
    return None


class _LinearTranspose(Transformed):
    """``T(*args, t, ct) -> (J^T ct,)`` for the linear map ``t -> tangent_map(*args,
    t)``: srcjax's reverse mode of ``tangent_map`` with respect to ``t``.

    A transformed function like ``grad(f)``: called at run time it builds and runs
    the generated vjp code; met in code that is transformed again (``grad(grad(f))``,
    ``jacfwd(grad(f))``, ``jit(grad(f))``, ``vmap(grad(f))``), the normalizer inlines
    that generated code like any user function, so the user's jvp rule is
    differentiated, not treated as a constant (as JAX does).
    """

    kind = "custom_transpose"

    def __init__(self, tangent_map: Callable) -> None:
        super().__init__(tangent_map)
        self.nargs = len(inspect.signature(tangent_map).parameters)

    def _build(self, kinds):
        from .api_fwd import _vjp_function

        fn, _ = _vjp_function(
            self.fun, tuple(kinds[: self.nargs]), False, argnums=(self.nargs - 1,)
        )
        return fn

    def __call__(self, *args: Any) -> Any:
        from .api import _kind

        return self._generated(tuple(_kind(a) for a in args))(*args)


class _Custom:
    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun, updated=())
        self.fun = fun
        self.params = _positional_names(fun)
        self.nondiff_argnums = tuple(nondiff_argnums)
        from .primitives.registry import REGISTRY

        public = f"custom.{fun.__name__}"
        if public in REGISTRY:  # redefinition (notebooks) or a name clash
            public = f"custom.{fun.__name__}_{next(_COUNTER)}"
        if not public.split(".", 1)[1].isidentifier():  # a lambda
            public = f"custom.fn_{next(_COUNTER)}"
        # generated code calls the function on buffers; what it returns (its jnp
        # calls give Arrays) is made buffers again (srcjax/_array.py)
        self.prim = register(
            Primitive(public, on_buffers(fun), kind="custom", signature=inspect.signature(fun)),
            self,
            fun,
        )
        self.prim.samples = lambda rng: []  # user rules are checked by the user's tests
        self.prim.missing_rule_hint = (
            f"`{fun.__name__}` is a {type(self).__name__} with no rule yet: call "
            f"`{fun.__name__}.{'defjvp' if isinstance(self, custom_jvp) else 'defvjp'}(...)`"
        )

    def __call__(self, *args: Any) -> Any:
        return self.fun(*args)

    def _diff_params(self):
        return [p for i, p in enumerate(self.params) if i not in self.nondiff_argnums]


class custom_jvp(_Custom):
    """Give ``fun`` a custom jvp rule (``jax.custom_jvp``).

    Use ``@f.defjvp`` with ``rule(primals, tangents) -> (primal_out, tangent_out)``,
    or ``f.defjvps(rule_0, rule_1, ...)`` with one ``rule_i(x_i_dot, primal_out,
    *primals)`` per argument. ``nondiff_argnums`` arguments get no tangent (they
    are passed to the rule first, as in JAX).
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        super().__init__(fun, nondiff_argnums)
        self.jvp_rule = None

    def defjvp(self, rule: Callable) -> Callable:
        self.jvp_rule = rule
        params = self.params
        diff = self._diff_params()
        nondiff = [params[i] for i in self.nondiff_argnums]
        args = ", ".join(params)
        # the primal of f(x) in derivative code is the rule's primal output, as in
        # JAX: a second differentiation (grad(grad(f)), hessian) then goes through
        # the rule's own computation, not through the rule again
        primals_all = ", ".join(diff)
        zeros_all = ", ".join(f"ad.zeros_like({q})" for q in diff)
        lead_all = "".join(f"{q}, " for q in nondiff)
        code = getattr(rule, "__code__", None)
        rule_name = getattr(rule, "__name__", "rule") + (
            f" ({os.path.basename(code.co_filename)}:{code.co_firstlineno})" if code else ""
        )
        lines = [
            f"def _primal(g, ans, {args}):\n"
            f"    return rule({lead_all}({primals_all},), ({zeros_all},))[0]\n"
        ]
        for p in diff:
            tangents = ", ".join("t" if q == p else f"ad.zeros_like({q})" for q in diff)
            primals = ", ".join(diff)
            lead = "".join(f"{q}, " for q in nondiff)
            # (ad.check_jvp_out: JAX's TypeError for an integer tangent of a
            # floating primal, user bug 06)
            for head in (f"_jvp_{p}(t, ans, {args})", f"_tangent_map_{p}({args}, t)"):
                lines.append(
                    f"def {head}:\n"
                    f"    out = rule({lead}({primals},), ({tangents},))\n"
                    f"    ad.check_jvp_out(out, {rule_name!r}, {self.fun.__name__!r})\n"
                    f"    return out[1]\n"
                )
            lines.append(_transpose_rule(p, args))
        env = {"rule": rule}
        ns = _synthetic_module(
            "\n\n".join(lines), f"custom_jvp rules of {self.fun.__name__}", env, _transposes(diff)
        )
        self.prim.jvps.clear()
        self.prim.vjps.clear()
        for p in diff:
            self.prim.jvps[p] = ns[f"_jvp_{p}"]
            self.prim.vjps[p] = ns[f"_vjp_{p}"]
        self.prim.primal_rule = ns["_primal"]
        return rule

    def defjvps(self, *rules: Callable) -> None:
        """One tangent rule per argument: ``rule_i(x_i_dot, primal_out, *primals)``."""
        diff = self._diff_params()
        if len(rules) != len(diff):
            raise TypeError(f"defjvps needs {len(diff)} rules, got {len(rules)}")
        params = self.params
        args = ", ".join(params)
        lines = []
        env = {}
        for p, r in zip(diff, rules):
            if r is None:
                # None: a zero tangent for this argument (JAX), not a missing rule
                lines.append(f"def _zero_jvp_{p}(t, ans, {args}):\n    return zeros_like(ans)\n")
                lines.append(f"def _zero_vjp_{p}(g, ans, {args}):\n    return zeros_like({p})\n")
                continue
            env[f"rule_{p}"] = r
            lines.append(
                f"def _tangent_map_{p}({args}, t):\n    return rule_{p}(t, fun({args}), {args})\n"
            )
            lines.append(_transpose_rule(p, args))
        env["fun"] = self.fun
        env["zeros_like"] = _zeros_like
        ns = _synthetic_module(
            "\n\n".join(lines),
            f"custom_jvp rules of {self.fun.__name__}",
            env,
            _transposes([p for p, r in zip(diff, rules) if r is not None]),
        )
        self.prim.jvps.clear()
        self.prim.vjps.clear()
        for p, r in zip(diff, rules):
            if r is not None:
                self.prim.jvps[p] = r
                self.prim.vjps[p] = ns[f"_vjp_{p}"]
            else:
                self.prim.jvps[p] = ns[f"_zero_jvp_{p}"]
                self.prim.vjps[p] = ns[f"_zero_vjp_{p}"]


class custom_vjp(_Custom):
    """Give ``fun`` a custom vjp (``jax.custom_vjp``): ``f.defvjp(fwd, bwd)`` with
    ``fwd(*args) -> (out, residuals)`` and ``bwd(*nondiff_args, residuals, g) ->
    tuple of cotangents`` (one per differentiable argument)."""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        super().__init__(fun, nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        self.fwd, self.bwd = fwd, bwd
        # reverse mode only, as in JAX: say so to forward mode (jvp, jacfwd, hessian)
        self.prim.missing_rule_hint = (
            f"`{self.fun.__name__}` is a custom_vjp: forward mode (jvp, jacfwd, hessian) "
            "cannot differentiate it, as in JAX; use grad/vjp/jacrev, or a custom_jvp"
        )
        params = self.params
        diff = self._diff_params()
        nondiff = [params[i] for i in self.nondiff_argnums]
        args = ", ".join(params)
        lead = "".join(f"{q}, " for q in nondiff)
        # the value of ``f(x)`` in the forward sweep of reverse mode, as JAX
        # computes it: by ``fwd``, so that a derivative of grad(f)'s code
        # (jacfwd(grad(f)), hessian) differentiates the user's fwd
        lines = [f"def _primal(g, ans, {args}):\n    return fwd({args})[0]\n"]
        prims = "".join(f"{q}, " for q in diff)  # (a tuple display)
        for i, p in enumerate(diff):
            # the check is a statement of its own, so that ``ct`` stays the bwd
            # rule's (differentiable) output: a second differentiation goes
            # through the user's fwd and bwd like through any user code
            # the user's bwd gets zeros (of each output's shape and dtype) for the
            # cotangent of an output nothing used, as in JAX, never a hole (None)
            lines.append(
                f"def _vjp_{p}(g, ans, {args}):\n"
                f"    ct = bwd({lead}fwd({args})[1], ad.fill_holes(g, ans))\n"
                f"    ad.check_bwd(ct, {len(diff)}, {self.fun.__name__!r}, ({prims}))\n"
                f"    return ad.fill_holes(ct[{i}], {p})\n"
            )
        ns = _synthetic_module(
            "\n\n".join(lines),
            f"custom_vjp rules of {self.fun.__name__}",
            {"fwd": fwd, "bwd": self._bwd_callee(bwd, nondiff)},
        )
        self.prim.vjps.clear()
        for p in diff:
            self.prim.vjps[p] = ns[f"_vjp_{p}"]
        self.prim.primal_rule = ns["_primal"]

    def _bwd_callee(self, bwd: Callable, nondiff: list) -> Callable:
        """What the derivative code calls as ``bwd``: the user's function, which a
        later transform (jit, vmap, grad of grad) inlines like any user code; or,
        when ``bwd`` calls ``jax.vjp``/``jax.linearize`` (which srcjax runs only
        outside transformed code), a primitive that runs ``bwd`` as it is: under
        jit as an opaque call, under vmap once per example. Such a ``bwd`` cannot
        be differentiated again (grad of grad): NoDerivativeRuleError."""
        outside = _calls_outside_only(bwd)
        if outside is None:
            return bwd
        from .primitives.registry import REGISTRY

        name = f"{self.prim.public.split('.', 1)[1]}_bwd"
        while f"custom.{name}" in REGISTRY:
            name = f"{name}_{next(_COUNTER)}"
        params = ", ".join([*nondiff, "res", "g"])
        ns = _synthetic_module(
            f"def {name}({params}):\n    return bwd({params})\n",
            f"bwd caller of {self.fun.__name__}",
            {"bwd": bwd},
        )
        prim = register(Primitive(f"custom.{name}", on_buffers(ns[name]), kind="custom"))
        prim.samples = lambda rng: []  # (the user's rule; checked by the user's tests)
        callee = getattr(outside, "__name__", "vjp")
        prim.missing_rule_hint = (
            f"the bwd rule of custom_vjp `{self.fun.__name__}` calls `{callee}`, which srcjax "
            "runs only outside transformed code: jit and vmap run that bwd as it is, but "
            "a second derivative through it (grad of grad, hessian) is not supported; "
            "write the bwd with srcjax.grad / srcjax.jvp, or with explicit formulas"
        )
        return prim.impl
