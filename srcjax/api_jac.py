"""JAX's Jacobians: ``jacfwd``, ``jacrev`` and ``hessian``.

Built on :mod:`srcjax.api_fwd`'s generated jvp/vjp code: Jacobians are built
column by column (``jacfwd``: one jvp per input element) or row by row
(``jacrev``: one vjp per output element), as one vmap over the stacked one-hot
basis when a single array argument is differentiated, else in a generated
Python loop.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Sequence, Union

import numpy as np

from ._array import unwrap_args, unwrap_kwargs, wrap_tree
from .api import _TRANSFORM_CACHE, Transformed, _canon_leaf, _unsupported_options
from .api_fwd import (
    _LOCK,
    _call_primal,
    _check_inexact,
    _first_output,
    _jvp_function,
    _kinds,
    _primal_function,
    _target,
    _vjp_function,
    bound_of,
)
from .codegen import emit
from .errors import TransformTypeError, runtime_error
from .frontend.normalize import param_names
from .frontend.source import get_source
from .primitives.registry import Primitive, register
from .tree_util import _jax_dict_order

_cfg = importlib.import_module("srcjax.config")  # the module (srcjax.config is the object)

__all__ = ["jacfwd", "jacrev", "hessian"]


def _jacrev_real_outputs(out: Any) -> Any:
    """``out`` itself after JAX's check of jacrev's outputs: every leaf must be a
    real floating array; a complex or integer/boolean leaf raises
    NonDifferentiableError (a TypeError), as ``jax.jacrev`` raises TypeError
    (the cotangent basis of a complex output would silently drop its imaginary
    part)."""
    from .errors import NonDifferentiableError
    from .tree_util import tree_leaves

    for leaf in tree_leaves(out):
        dt = np.result_type(leaf)
        if dt.kind == "f":
            continue
        if dt.kind == "c":
            how = "For holomorphic differentiation, pass holomorphic=True."
        else:
            how = "For integer or boolean outputs, use srcjax.vjp directly."
        raise NonDifferentiableError(
            "jacrev requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {dt.name}. {how}"
        )
    return out


def _jacrev_real_outputs_batch(c: Any) -> Any:
    # a dtype check: the output keeps its batch axis (or stays unbatched)
    return c.rebuild() if c.batched("out") else (c.rebuild(), False)


_real_outputs = register(
    Primitive("ad.jacrev_real_outputs", _jacrev_real_outputs, kind="internal", differentiable=False)
)
_real_outputs.def_batch(_jacrev_real_outputs_batch)
_real_outputs.samples = lambda rng: []


def _complex_leaves(tree: Any, mode: str, what: str) -> None:
    """JAX's TypeError of ``holomorphic=True`` unless every leaf of ``tree`` (the
    differentiated inputs, or the outputs) is complex."""
    from .tree_util import tree_leaves

    for leaf in tree_leaves(tree):
        dt = np.result_type(leaf)
        if dt.kind != "c":
            raise TypeError(
                f"{mode} with holomorphic=True requires {what} with complex dtype, but got "
                f"{dt.name}."
            )


def _jacrev_complex_outputs(out: Any) -> Any:
    """``out`` itself after JAX's check of ``jacrev(holomorphic=True)``'s outputs
    (complex leaves only); their one-hot cotangents are complex, and the
    pullback of each a row of the complex Jacobian (JAX's vjp: no conjugate)."""
    _complex_leaves(out, "jacrev", "outputs")
    return out


_complex_outputs = register(
    Primitive(
        "ad.jacrev_complex_outputs", _jacrev_complex_outputs, kind="internal", differentiable=False
    )
)
_complex_outputs.def_batch(_jacrev_real_outputs_batch)
_complex_outputs.samples = lambda rng: []

_JAC_TEMPLATE = {
    "jacfwd": """\
def {name}({params}):
    cols = []
    for tangent in ad.basis({x}):
        col = {inner}({params_before}{tangents})
        cols.append(col)
    return ad.jac_columns(cols, {x}, {fun}({params}))
""",
    "jacrev": """\
def {name}({params}):
    out = ad.jacrev_real_outputs({fun}({params}))
    rows = []
    for cotangent in ad.basis(out):
        row = {inner}({params}, cotangent)
        rows.append(row)
    return ad.jac_rows(rows, {x}, out)
""",
}


_JAC_BATCHED = {
    "jacfwd": """\
def {name}({params}):
    tangents = ad.basis_stack({x})
    cols = batched({params}, {tangent_args})
    return ad.jac_from_columns(cols, {x})
""",
    "jacrev": """\
def {name}({params}):
    out = ad.jacrev_real_outputs(fun({params}))
    cotangents = ad.cobasis_stack(out)
    rows = batched({params}, cotangents)
    return ad.jac_from_rows(rows[{argnum}], out)
""",
}


def _batched_axes(mode, n, argnum):
    return (None,) * n + (0,)  # primals fixed, the stacked basis mapped


def _batched_jacobian_text(mode, name, params, argnum):
    """Generated source of a Jacobian as one vmap over the stacked one-hot basis
    (one array argument differentiated)."""
    x = params[argnum]
    n = len(params)
    if mode == "jacfwd":
        axes = ", ".join(["None"] * n + ["0" if i == argnum else "None" for i in range(n)])
        tangent_args = "tangents"
        return _JAC_BATCHED["jacfwd"].format(
            name=name, params=", ".join(params), x=x, axes=axes, tangent_args=tangent_args
        )
    axes = ", ".join(["None"] * n + ["0"])
    return _JAC_BATCHED["jacrev"].format(
        name=name, params=", ".join(params), axes=axes, argnum=argnum
    )


class _KeywordCalls:
    """jacfwd/jacrev/hessian objects: called with keyword arguments as JAX allows
    (bound to positions by the function's signature), and the function whose
    defaults a jit caller fills in (``_pyfn``)."""

    @property
    def _pyfn(self):
        return self.aux_fun if self.aux_fun is not None else self.fun

    def _positional(self, args: tuple, kwargs: dict) -> tuple:
        return _as_positional(self._pyfn, args, kwargs) if kwargs else args


class _Jacobian(_KeywordCalls, Transformed):
    """``jacfwd``/``jacrev`` of ``fun`` for one argument position (or a tuple)."""

    def __init__(self, fun, argnums, has_aux, mode, batched=True, holomorphic=False):
        super().__init__(fun)
        self.batched = batched
        self.holomorphic = holomorphic
        self.aux_fun = None
        if has_aux:
            # differentiate the first output; the second is returned as it is
            self.aux_fun = fun
            fun = self.fun = _first_output(fun)
        self.argnums = argnums
        self.mode = mode
        self.kind = mode

    def _build(self, kinds):
        target, bound = _target(self.fun, kinds)
        src = get_source(target)
        params = param_names(src)  # bound (partial) ones first; as generated code has them
        nb = len(bound)
        argnums = self.argnums
        single = isinstance(argnums, int)
        nums = (argnums,) if single else tuple(argnums)
        nums = tuple(nb + a % (len(params) - nb) for a in nums)
        key = (self.mode, nums, single, kinds, self.batched, self.holomorphic)
        per = _TRANSFORM_CACHE.get(target)
        if per is not None and key in per:
            return per[key]
        if self.mode == "jacfwd":
            inner, _ = _jvp_function(target, kinds, False, True, positions=nums)
        else:
            # cotangents of the differentiated arguments only (not of a bound self)
            inner, _ = _vjp_function(target, kinds, False, argnums=nums)
        wrt = [params[a] for a in nums]
        x = wrt[0] if single else "(" + ", ".join(wrt) + ",)"
        batched = self.batched and single and all(k == "leaf" for k in kinds)
        if batched:
            text = _batched_jacobian_text(self.mode, f"{src.name}_{self.mode}", params, nums[0])
            if self.mode == "jacrev":
                text = text.replace(f"rows[{nums[0]}]", "rows[0]")
        elif self.mode == "jacfwd":
            # one-hot tangents for the differentiated arguments, zeros for the others
            tangents = ["tangent"] if single else [f"tangent[{k}]" for k in range(len(nums))]
            text = _JAC_TEMPLATE["jacfwd"].format(
                name=f"{src.name}_jacfwd",
                params=", ".join(params),
                x=x,
                inner="inner",
                params_before=", ".join(params) + ", ",
                tangents=", ".join(tangents),
                fun="fun",
            )
        else:
            picks = wrt[0] if single else ", ".join(wrt)
            idx = 0 if single else None
            text = _JAC_TEMPLATE["jacrev"].format(
                name=f"{src.name}_jacrev",
                params=", ".join(params),
                x=x,
                inner="inner",
                fun="fun",
            )
            if single:
                text = text.replace("row = inner(", "row = inner(").replace(
                    "rows.append(row)", f"rows.append(row[{idx}])"
                )
            else:
                sel = ", ".join(f"row[{k}]" for k in range(len(nums)))
                text = text.replace("rows.append(row)", f"rows.append(({sel},))")
            del picks
        fname = f"{src.name}_{self.mode}"
        header = (
            f"# srcjax: {self.mode} of {src.name} "
            f"({emit.where(src.filename, src.node.lineno)}) with respect to "
            f"{', '.join(wrt)}\n"
        )
        text = header + text
        if self.holomorphic:  # (complex outputs: their complex one-hot cotangents)
            text = text.replace("ad.jacrev_real_outputs(", "ad.jacrev_complex_outputs(")
        from .vmap_api import vmap

        # the output (for the cotangent basis) from generated code, never user code
        env = {"inner": inner, "fun": _primal_function(self.fun, kinds)[0]}
        if batched:
            env["batched"] = vmap(inner, in_axes=_batched_axes(self.mode, len(params), nums[0]))
        fn = emit.load(text, fname, {}, {}, env, fname)
        fn.__srcjax_deps__ = ()
        # the same parameters as `target`: its defaults (a jit caller leaves them out)
        fn.__defaults__ = getattr(target, "__defaults__", None)
        with _LOCK:
            _TRANSFORM_CACHE.setdefault(target, {})[key] = fn
        return fn

    def _check_jit_args(self, args: tuple, kwargs: dict) -> None:
        args = self._positional(args, kwargs)
        nums = (self.argnums,) if isinstance(self.argnums, int) else tuple(self.argnums)
        self._check_inputs([args[a] for a in nums if -len(args) <= a < len(args)])

    def _check_inputs(self, wrt: list) -> None:
        """JAX's checks of the differentiated arguments (complex ones only with
        ``holomorphic``)."""
        if self.holomorphic:
            _complex_leaves(wrt, self.mode, "inputs")
        _check_inexact(wrt, self.mode)

    def __call__(self, *args, **kwargs):
        try:
            return self._call(args, kwargs)
        except Exception as e:
            # an error of the generated code at the user's line, a call that does
            # not bind naming the user's function (errors.runtime_error)
            located = runtime_error(e, self._pyfn)
            if located is e:
                raise
            raise located from None

    def _call(self, args, kwargs):
        from .api import _map_leaves

        args = self._positional(unwrap_args(args), unwrap_kwargs(kwargs))
        nums = (self.argnums,) if isinstance(self.argnums, int) else tuple(self.argnums)
        args = tuple(_map_leaves(lambda v: _canon_leaf(v, False), a) for a in args)
        self._check_inputs([args[a] for a in nums if -len(args) <= a < len(args)])
        # parameters left to their defaults are passed explicitly (not differentiated)
        if all(a >= 0 for a in nums):
            args = args + self._default_values(len(args))
        fn = self._generated(_kinds(bound_of(self.fun) + args))
        jac = wrap_tree(_jax_dict_order(fn(*bound_of(self.fun), *args)))
        if self.holomorphic and self.mode == "jacfwd":  # (its columns: the outputs' dtypes)
            _complex_leaves(jac, "jacfwd", "outputs")
        if _cfg.checks_enabled and self.mode == "rev":
            from . import tree_util
            from ._cotangent_check import check_jacobian

            check_jacobian(
                tree_util, jac, [args[a] for a in nums if -len(args) <= a < len(args)], "jacrev"
            )
        if self.aux_fun is not None:
            from .primitives.control import _check_aux

            res = _call_primal(self.aux_fun, args)
            _check_aux(res)
            return jac, res[1]
        return jac


def _as_positional(fun: Callable, args: tuple, kwargs: dict) -> tuple:
    """``args`` and ``kwargs`` of a call of ``fun`` as positional arguments only
    (keyword arguments and the defaults before them placed by ``fun``'s signature),
    as JAX's jacfwd/jacrev/hessian accept keywords for undifferentiated arguments.

    Raises TypeError as Python does for a call ``fun`` does not accept."""
    import inspect

    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        raise TransformTypeError(f"cannot read the parameters of {fun!r}") from None
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:  # (naming the function, as Python's call would)
        raise TypeError(f"{getattr(fun, '__name__', 'function')}() {e}") from None
    bound.apply_defaults()
    if bound.kwargs:
        raise TransformTypeError(
            f"keyword-only arguments {sorted(bound.kwargs)} are not supported by "
            "jacfwd/jacrev/hessian; make them positional parameters"
        )
    return tuple(bound.args)


def jacfwd(
    fun: Callable,
    argnums: Union[int, Sequence[int]] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
):
    """Jacobian by forward mode (``jax.jacfwd``): one jvp per input element.

    The result has the structure outer = output pytree, inner = input pytree
    (a tuple over ``argnums`` when it is a tuple); each leaf has shape
    ``out_leaf.shape + in_leaf.shape``. ``holomorphic=True``: complex inputs
    and outputs (TypeError otherwise, as JAX), the complex Jacobian of a
    holomorphic ``fun`` (complex one-hot tangents). ``allow_int`` is accepted at
    JAX's default (True raises NotImplementedError).
    """
    _unsupported_options("jacfwd", False, allow_int)
    return _Jacobian(fun, argnums, has_aux, "jacfwd", holomorphic=holomorphic)


def jacrev(
    fun: Callable,
    argnums: Union[int, Sequence[int]] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
):
    """Jacobian by reverse mode (``jax.jacrev``): one vjp per output element; same
    result structure as :func:`jacfwd`; ``holomorphic=True`` as there (complex
    one-hot cotangents: JAX's vjp takes no conjugate)."""
    _unsupported_options("jacrev", False, allow_int)
    return _Jacobian(fun, argnums, has_aux, "jacrev", holomorphic=holomorphic)


def hessian(
    fun: Callable,
    argnums: Union[int, Sequence[int]] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
):
    """Hessian of a scalar function, forward-over-reverse (``jax.hessian``):
    ``jacfwd(jacrev(fun, argnums), argnums)`` (``holomorphic``: of both)."""
    _unsupported_options("hessian", False, allow_int)
    return _Hessian(fun, argnums, has_aux, holomorphic)


class _Hessian(_KeywordCalls, Transformed):
    """``jacfwd(grad(f))`` (one vmap of the jvp of the gradient code) for scalar
    functions, which is what Hessians are used for; ``jacfwd(jacrev(f))`` when
    ``f``'s output is not a scalar."""

    kind = "hessian"

    def __init__(self, fun, argnums, has_aux, holomorphic=False):
        super().__init__(fun)
        from .api import grad

        self.aux_fun = fun if has_aux else None
        if has_aux:
            fun = _first_output(fun)
        self.argnums = argnums
        h = holomorphic
        self.scalar = jacfwd(grad(fun, argnums, holomorphic=h), argnums, holomorphic=h)
        rev = _Jacobian(fun, argnums, False, "jacrev", batched=False, holomorphic=h)
        self.general = jacfwd(rev, argnums, holomorphic=h)

    def _check_jit_args(self, args: tuple, kwargs: dict) -> None:
        self.scalar._check_jit_args(args, kwargs)

    def _build(self, kinds):
        return self.scalar._generated(kinds)

    def __call__(self, *args, **kwargs):
        from .errors import NonDifferentiableError

        args = self._positional(args, kwargs)
        try:
            h = self.scalar(*args)
        except NonDifferentiableError as exc:
            if "scalar-output" not in str(exc):
                raise
            h = self.general(*args)
        if self.aux_fun is not None:
            from .primitives.control import _check_aux

            res = _call_primal(self.aux_fun, args)
            _check_aux(res)
            return h, res[1]
        return h


for _f in (jacfwd, jacrev, hessian):
    _f.__srcjax_factory__ = True
