"""The one transform driver: source -> normalize -> pass -> finish.

Every public transform (``grad``/``value_and_grad``, ``jvp``/``vjp``/``linearize``
and their primal code, ``vmap``, ``jit``) turns a user function into generated
code the same way, through :func:`transform`:

1. **source**: :func:`srcjax.frontend.source.get_source` reads the function
   (keyword-only parameters made positional first, when the pass asks);
2. **normalize**: :func:`srcjax.frontend.normalize.normalize` gives the ANF IR
   (errors in the user's code are raised here, at the user's line);
3. **pass**: the transform's own function, ``run_pass(stage) ->``
   :class:`Generated`, given the :class:`Stage` (source, normalized IR) (reverse
   mode, forward mode, batching, or jit's optimization and backend lowering);
4. **finish**: the keyword-only parameters restored, and the function rendered
   with its header (``# srcjax: grad of f (file.py:3) ...``) and loaded as a
   live function (:func:`finish`, or the transform's own ``finish``: jit's).

A new transform writes only its pass (``transforms/<name>.py``) and its
public entry, which calls :func:`transform`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple

import gast

from .codegen import emit
from .codegen.cache import gc_paused
from .frontend import nodes as N
from .frontend.normalize import normalize
from .frontend.source import get_source, kwonly_as_positional, restore_kwonly

__all__ = [
    "Stage",
    "Generated",
    "transform",
    "header",
    "finish",
    "user_names",
    "user_none_names",
    "renamed_params",
]


@dataclass
class Stage:
    """What a pass starts from: the user's function source ``src`` (keyword-only
    parameters made positional when the driver was asked to: ``n_kwonly`` of
    them), and ``norm``, its normalized IR
    (:class:`srcjax.frontend.normalize.Normalized`)."""

    src: Any
    norm: Any
    n_kwonly: int = 0


@dataclass
class Generated:
    """What a transform's pass produced: the generated function definition and
    the words of its header (``what`` the transform is, ``"grad of"``; the
    ``detail`` after the function's name, ``"with respect to x"``)."""

    fdef: Any
    what: str
    detail: str = ""


def transform(
    target: Callable,
    kinds: Tuple[Any, ...],
    run_pass: Callable[[Stage], Generated],
    *,
    kwonly: bool = False,
    defaults: bool = True,
    finish_with: Optional[Callable[..., Any]] = None,
) -> Any:
    """``target`` transformed: source -> normalize -> ``run_pass`` -> finish.

    Args:
        target: the user's Python function (already unwrapped from partials,
            bound methods and srcjax wrappers).
        kinds: one entry per parameter for the normalizer (``"leaf"``,
            ``"tree"``, a ``ClassKind``, ...).
        run_pass: ``run_pass(stage) -> Generated``: the transform itself.
        kwonly: make keyword-only parameters positional for the pass and
            restore them after it (grad, jit).
        defaults: the generated function takes ``target``'s default values.
        finish_with: ``finish_with(src, norm, generated, defaults)`` instead of
            :func:`finish` (jit renders and loads its own way).

    Returns what the finish step returns: the live generated function.
    Raises the errors of :func:`get_source`, :func:`normalize` and the pass.
    """
    with gc_paused():  # (see there: full collections were half of a first grad)
        src = get_source(target)
        n_kwonly = 0
        if kwonly:
            src, n_kwonly = kwonly_as_positional(src)
        norm = normalize(src, kinds)  # first: a bad construct is an error at the user's line
        out = run_pass(Stage(src, norm, n_kwonly))
        if n_kwonly:
            restore_kwonly(out.fdef, n_kwonly)  # back to keyword-only parameters
        if finish_with is not None:
            return finish_with(src, norm, out, defaults)
        return finish(src, norm, out.fdef, out.what, out.detail, defaults)


def _is_half(node: Any) -> bool:
    """``a ** 0.5`` (a constant exponent 0.5)."""
    r = node.right
    return isinstance(node.op, gast.Pow) and isinstance(r, gast.Constant) and r.value == 0.5


def _constant_exponent(node: Any) -> bool:
    """A constant exponent NumPy's ``**`` takes as JAX does: a float or a
    non-negative int (``x ** 2``)."""
    if not isinstance(node, gast.Constant) or isinstance(node.value, bool):
        return False
    return isinstance(node.value, float) or (isinstance(node.value, int) and node.value >= 0)


def _floordiv_as_calls(fdef: Any) -> None:
    """Operators whose NumPy meaning differs from JAX's, as calls in generated code.

    ``a // b`` -> ``ad.floordiv(a, b)``: JAX's integer division by zero
    (``-1``/``-2``) where an operand is an array, which NumPy's operator makes 0
    (jit and vmap call ``jnp.floor_divide`` already); Python numbers keep
    Python's ``//``. A nonzero constant divisor (``n // 2``) keeps the operator:
    the two agree there.

    ``a ** 0.5`` -> ``ad.pow_half(a)``: IEEE ``pow`` (+0 at -0, +inf at -inf, as
    JAX), where NumPy's ``**`` takes ``sqrt`` (-0 and NaN).

    ``a ** b`` -> ``ad.pow(a, b)`` for an exponent that is not a constant: JAX's
    0 for integers to negative integer array powers, where NumPy's operator
    raises (``2 ** jnp.array([-1, 2])`` under grad; jit's promote calls
    ``jnp.power``). A constant exponent (``x ** 2``) keeps the operator."""

    class _Calls(gast.NodeTransformer):
        def visit_BinOp(self, node):
            self.generic_visit(node)
            if _is_half(node):
                return gast.copy_location(N.call("ad.pow_half", [node.left]), node)
            if isinstance(node.op, gast.Pow) and not _constant_exponent(node.right):
                return gast.copy_location(N.call("ad.pow", [node.left, node.right]), node)
            if not isinstance(node.op, gast.FloorDiv):
                return node
            r = node.right
            if isinstance(r, gast.UnaryOp) and isinstance(r.op, (gast.USub, gast.UAdd)):
                r = r.operand
            if isinstance(r, gast.Constant) and isinstance(r.value, (int, float)) and r.value:
                return node
            return gast.copy_location(N.call("ad.floordiv", [node.left, node.right]), node)

    _Calls().visit(fdef)


def header(src: Any, what: str, detail: str = "") -> str:
    """The first line of generated code: ``srcjax: grad of f (file.py:3) with
    respect to x`` (``what`` the transform, ``detail`` after the location)."""
    return (
        f"srcjax: {what} {src.name} ({emit.where(src.filename, src.node.lineno)}) {detail}".rstrip()
    )


def finish(src, norm, fdef, what: str, detail: str, defaults: bool = True):
    """Render a generated FunctionDef with its header and load it as a live function."""
    _floordiv_as_calls(fdef)
    user_file = src.filename
    text = emit.render(fdef, header(src, what, detail), user_file)
    fn = emit.load(
        text,
        fdef.name,
        src.globals,
        src.closure,
        norm.bindings,
        fdef.name,
        src.fn.__defaults__ if defaults else None,
    )
    fn.__srcjax_deps__ = tuple(norm.deps)
    fn.__srcjax_renamed__ = renamed_params(src, norm)
    fn.__srcjax_user_names__ = user_names(src, norm)
    fn.__srcjax_user_none__ = user_none_names(src, fn.__srcjax_user_names__) | _none_in_branches(
        src, norm
    )
    kwd = getattr(src.fn, "__kwdefaults__", None)
    if kwd and fdef.args.kwonlyargs:  # keyword-only defaults, by generated names
        fn.__kwdefaults__ = {fn.__srcjax_renamed__.get(k, k): v for k, v in kwd.items()}
    return fn


def user_names(src, norm) -> frozenset:
    """The variables of the user's own code among those the generated code binds
    (the primal variables of a grad's forward pass): vmap of the generated code
    checks their per-example structure as it does a user function's (see
    batching.BatchSpec.user_names). Inherited through generated code."""
    inner = getattr(src.fn, "__srcjax_user_names__", None)
    bound = set(N.assigned_names(norm.node.body)) | {a.id for a in norm.node.args.args}
    if inner is not None:  # generated code transformed again
        return frozenset(n for n in bound if n in inner)
    return frozenset(n for n in bound if n not in norm.namer.made) | _none_in_branches(src, norm)


def _none_in_branches(src, norm) -> frozenset:
    """Names the user's normalized code sets to None inside a branch (the
    temporary of ``y = x if c else None``): user values, for vmap's check.
    Inherited through generated code."""
    inner = getattr(src.fn, "__srcjax_user_none__", None)
    if inner is not None:
        return frozenset()
    out = set()
    for node in N.walk(norm.node):
        if isinstance(node, gast.If):
            for st in N.walk(gast.Module(body=node.body + node.orelse, type_ignores=[])):
                if (
                    isinstance(st, gast.Assign)
                    and isinstance(st.targets[0], gast.Name)
                    and isinstance(st.value, gast.Constant)
                    and st.value.value is None
                ):
                    out.add(st.targets[0].id)
    return frozenset(out)


def user_none_names(src, names: frozenset) -> frozenset:
    """Of the user's variables ``names``, those the user's code itself sets to
    ``None`` (``y = None``): in generated code other Nones are unset paths."""
    inner = getattr(src.fn, "__srcjax_user_none__", None)
    if inner is not None:
        return frozenset(n for n in names if n in inner)
    return frozenset(
        t.id
        for st in N.walk(src.node)
        if isinstance(st, gast.Assign)
        and isinstance(st.value, gast.Constant)
        and st.value.value is None
        for t in st.targets
        if isinstance(t, gast.Name) and t.id in names
    )


def renamed_params(src, norm) -> Dict[str, str]:
    """The parameters generated code names otherwise than the user (``ad`` ->
    ``ad_``: see normalize._GENERATED_NAMES), for keyword arguments."""
    sa, na = src.node.args, norm.node.args
    pairs = zip(
        (a.id for a in list(sa.args) + list(sa.kwonlyargs)),
        (a.id for a in list(na.args) + list(na.kwonlyargs)),
    )
    return {user: gen for user, gen in pairs if user != gen}
