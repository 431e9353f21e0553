"""User-defined derivative rules: ``custom_jvp`` and ``custom_vjp`` (JAX's API).

A decorated function becomes a primitive of the registry (public name
``custom.<name>``) whose rules are small generated functions that call the
user's rule functions; so the generated code of any transform shows the call
to the user's rule, e.g. ``y_dot = log1pexp_jvp((x,), (x_dot,))[1]``.

- ``custom_jvp``: forward mode calls the user's jvp rule; reverse mode uses its
  transpose, computed by srcjax's own reverse mode applied to the (linear)
  tangent map of the rule.
- ``custom_vjp``: reverse mode calls ``fwd`` then ``bwd`` (the residuals are
  recomputed in the backward sweep); forward mode of a ``custom_vjp`` function
  raises, as in JAX.

Semantics follow https://docs.jax.dev/en/latest/notebooks/Custom_derivative_rules_for_Python_code.html
"""

from __future__ import annotations

import functools
import inspect
import itertools
import linecache
from typing import Any, Callable, Dict, Sequence

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


def _synthetic_module(text: str, label: str, env: Dict[str, Any]) -> Dict[str, Any]:
    """Execute ``text`` as a module whose source is readable (linecache), so the
    functions it defines can be inlined as rule templates."""
    from .codegen.emit import namespaces

    filename = f"<srcjax {label} #{next(_COUNTER)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    ns = dict(namespaces())
    ns.update(env)
    exec(compile(text, filename, "exec"), ns)
    return ns


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
        self.prim = register(Primitive(public, fun, kind="custom"), self)
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
        lines = []
        for p in diff:
            tangents = ", ".join("t" if q == p else f"ad.zeros_like({q})" for q in diff)
            primals = ", ".join(diff)
            lead = "".join(f"{q}, " for q in nondiff)
            lines.append(
                f"def _jvp_{p}(t, ans, {args}):\n"
                f"    return rule({lead}({primals},), ({tangents},))[1]\n"
            )
            lines.append(
                f"def _tangent_map_{p}({args}, t):\n"
                f"    return rule({lead}({primals},), ({tangents},))[1]\n"
            )
            lines.append(
                f"def _vjp_{p}(g, ans, {args}):\n"
                f"    return ad.custom_transpose(_tangent_map_{p}, g, {params.index(p)}, {args})\n"
            )
        ns = _synthetic_module(
            "\n\n".join(lines), f"custom_jvp rules of {self.fun.__name__}", {"rule": rule}
        )
        self.prim.jvps.clear()
        self.prim.vjps.clear()
        for p in diff:
            self.prim.jvps[p] = ns[f"_jvp_{p}"]
            self.prim.vjps[p] = ns[f"_vjp_{p}"]
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
                continue
            env[f"rule_{p}"] = r
            lines.append(
                f"def _tangent_map_{p}({args}, t):\n    return rule_{p}(t, fun({args}), {args})\n"
            )
            lines.append(
                f"def _vjp_{p}(g, ans, {args}):\n"
                f"    return ad.custom_transpose(_tangent_map_{p}, g, {params.index(p)}, {args})\n"
            )
        env["fun"] = self.fun
        ns = _synthetic_module("\n\n".join(lines), f"custom_jvp rules of {self.fun.__name__}", env)
        self.prim.jvps.clear()
        self.prim.vjps.clear()
        for p, r in zip(diff, rules):
            if r is not None:
                self.prim.jvps[p] = r
                self.prim.vjps[p] = ns[f"_vjp_{p}"]


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
        lines = []
        for i, p in enumerate(diff):
            lines.append(
                f"def _vjp_{p}(g, ans, {args}):\n"
                f"    ct = ad.check_bwd(bwd({lead}fwd({args})[1], g), {len(diff)}, "
                f"{self.fun.__name__!r})\n"
                f"    return ct[{i}]\n"
            )
        ns = _synthetic_module(
            "\n\n".join(lines), f"custom_vjp rules of {self.fun.__name__}", {"fwd": fwd, "bwd": bwd}
        )
        self.prim.vjps.clear()
        for p in diff:
            self.prim.vjps[p] = ns[f"_vjp_{p}"]
