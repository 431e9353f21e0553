"""The reverse-mode pass: :class:`Reverse` (its sweeps, one mixin each) and
:func:`reverse`, which builds the vjp function from a normalized function."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

import gast

from ...frontend import nodes as N
from ...frontend.normalize import Normalized, Op
from ..aux import split_aux
from .adjoint import _AdjointSweep
from .control_flow import _ControlFlow
from .cotangents import _Cotangents
from .deferred import _DeferredSums
from .hoist import forward_tuple_items, hoist_invariant_reads
from .lasttrip import skip_last_trip_cotangents
from .primal import _PrimalSweep


class Reverse(_Cotangents, _AdjointSweep, _ControlFlow, _DeferredSums, _PrimalSweep):
    """Reverse mode over one normalized function: the state the sweeps share."""

    def __init__(self, norm: Normalized, wrt: List[str], param_kinds: Dict[str, str]):
        self.norm = norm
        self.fdef = norm.node
        self.src = norm.src
        self.namer = norm.namer
        self.bindings = norm.bindings
        self.wrt = wrt
        self.params = [a.id for a in self.fdef.args.args]
        self.param_kinds = param_kinds
        self.active: Set[str] = set(wrt)
        self.containers: Set[str] = {p for p, k in param_kinds.items() if k == "tree"}
        # names that may hold a container though nothing proves it (a parameter of
        # a nested transform, whose argument types are unknown; the result of a
        # call we know nothing about, like ``dict(params)``): their cotangents
        # are summed with ``ad.tree_add``, which also adds arrays
        self.maybe: Set[str] = {p for p, k in param_kinds.items() if k == "any"}
        self.reads: Set[str] = set()  # primal names the adjoint sweep reads
        self.materialized: Set[str] = set()
        self.tape: Optional[str] = None
        self.shape_class: Dict[str, Any] = {}
        self.must_at: Dict[int, Set[str]] = {}
        self.emit_code = True
        self.bars: Dict[str, str] = {}
        # row reads of loops (see row_reads): statement id -> (array, start, order),
        # the name of the list of their cotangents, and those that pushed one
        self.row_sites: Dict[int, Tuple[str, Any, bool]] = {}
        self.rows_names: Dict[int, str] = {}
        self.rows_used: Set[int] = set()
        self.assign_sites: Dict[str, List[Any]] = {}


def reverse(
    norm: Normalized,
    wrt: List[str],
    param_kinds: Dict[str, str],
    *,
    has_aux: bool = False,
    with_value: bool = False,
    name: Optional[str] = None,
    cotangent: Optional[str] = None,
    holomorphic: bool = False,
) -> Any:
    """Build the gradient function of a normalized function.

    With ``cotangent`` (a parameter name), the output's cotangent is that extra
    parameter instead of the scalar seed 1 (``vjp``), and the function returns
    ``(value, grads)``.

    Args:
        norm: output of :func:`srcjax.frontend.normalize.normalize`.
        wrt: parameter names to differentiate with respect to, in argnums order.
        param_kinds: parameter name -> ``"leaf"`` (array or scalar) or ``"tree"``.
        has_aux: the function returns ``(value, aux)``.
        with_value: return ``(value, grads)`` as ``value_and_grad``.
        name: the generated function's name.

    Returns:
        A gast ``FunctionDef`` taking the original parameters and returning the
        gradient (a tuple of them when ``len(wrt) > 1``... as decided by the
        caller via ``wrt``), with the aux/value layout of JAX's ``grad`` /
        ``value_and_grad``.
    """
    fdef = norm.node
    body = list(fdef.body)
    assert body and isinstance(body[-1], gast.Return)
    ret = body.pop()
    rv = ret.value
    aux = None
    if has_aux:
        value_name, aux = split_aux(body, rv, norm.namer, origin=ret)
        out_name = value_name
    elif isinstance(rv, gast.Name):
        out_name = rv.id
    else:
        out_name = norm.namer.fresh("out")
        st = N.assign(out_name, rv)
        st.sj_op = Op("copy", elts=[rv])
        body.append(st)

    rv_ = Reverse(norm, wrt, param_kinds)
    forward_tuple_items(body)
    rv_.prepare_forward(body, False)
    rv_.analyze(body)
    hoist_invariant_reads(body, rv_.containers)
    rv_.shape_classes(body)
    rv_.must_defined(body, set(rv_.params))
    rv_.index_assigns(body)

    nz: Set[str] = set()
    seed = []
    seed_name = "ad.seed_holomorphic" if holomorphic else "ad.seed"
    if cotangent is not None:
        # checked against the output as jax.vjp's pullback checks it
        check = N.call("ad.check_cotangent", [N.name(cotangent), N.name(out_name)])
        if out_name in rv_.active:
            seed = [N.assign(rv_.bar(out_name), check)]
            nz.add(out_name)
        else:
            seed = [N.expr_stmt(check)]
    elif out_name in rv_.active:
        seed = [N.assign(rv_.bar(out_name), N.call(seed_name, [N.name(out_name)]))]
        nz.add(out_name)
    else:
        seed = [N.expr_stmt(N.call(seed_name, [N.name(out_name)]))]
    bwd = rv_.rev_block(body, nz, set(rv_.params), False)
    # what the code after the sweep reads: the gradients' final forms and the
    # returned value (and aux), all computed from primal names
    tail = set(rv_.params) | {out_name} | ({aux} if aux else set())
    rv_.prune_list_restores(bwd, tail)
    saves: Dict[int, str] = {}
    preinit: Set[str] = set()
    bwd = rv_.resolve_restores(bwd, saves, preinit)
    fwd = rv_.forward(body, saves)
    if with_value and out_name in N.assigned_names(bwd):
        # the sweep restores the output's name to older values (`x = sin(x)`
        # twice): the value returned is kept aside first
        kept = norm.namer.fresh(out_name + "_out")
        fwd.append(N.copy_origin(N.assign(kept, N.name(out_name)), ret))
        out_name = kept

    # a parameter the body rebinds (`y *= x`, `y = y * x`) holds its entry value
    # after the sweep only where the sweep restores it (it reads it); else its
    # entry value is kept aside, so its gradient has its own shape and dtype, not
    # those of the rebinding (issue 21)
    rebound = set(N.assigned_names(body))
    entry: Dict[str, str] = {}
    for p in wrt:
        if p in rebound and p not in rv_.reads:
            entry[p] = norm.namer.fresh(p + "_in")
    results = []
    fix = []
    for p in wrt:
        primal = N.name(entry.get(p, p))
        if p in nz:
            # a real input's gradient is the real part of its cotangent (JAX's
            # convention when complex values are on the path; free otherwise)
            real = N.call("ad.project_real", [N.name(rv_.bar(p)), primal])
            if p in rv_.materialized or p in rv_.containers or p in rv_.maybe:
                # (a parameter of unknown kind, "any": a grad inlined in other
                # transformed code, may be a container: holes filled with zeros and
                # its container types kept, as for a "tree" argument)
                fix.append(
                    N.assign(rv_.bar(p), N.call("ad.cotangent_like", [real, N.clone(primal)]))
                )
                results.append(N.name(rv_.bar(p)))
            else:
                results.append(real)
        else:
            results.append(N.call("ad.zeros_like", [primal]))
    grads = (
        results[0]
        if len(results) == 1 and not getattr(norm, "tuple_wrt", False)
        else (gast.Tuple(elts=results, ctx=gast.Load()))
    )
    if with_value:
        value = N.name(out_name)
        if has_aux:
            value = gast.Tuple(elts=[N.name(out_name), N.name(aux)], ctx=gast.Load())
        retval = gast.Tuple(elts=[value, grads], ctx=gast.Load())
    elif has_aux:
        retval = gast.Tuple(elts=[grads, N.name(aux)], ctx=gast.Load())
    else:
        retval = grads

    after = set(N.names_in(gast.Module(body=fix + [gast.Return(value=retval)], type_ignores=[])))
    skip_last_trip_cotangents(bwd, set(rv_.bars.values()), after | tail)
    head = [N.assign(kept, N.name(p)) for p, kept in entry.items()]
    for n in sorted(preinit):
        head.append(N.assign(n, N.const(None)))
    if rv_.tape is not None:
        head.append(N.assign(rv_.tape, gast.List(elts=[], ctx=gast.Load())))
    new_body = head + fwd
    for st in new_body:
        st.sj_section = getattr(st, "sj_section", None)
    new_body[0:0] = [_Marker("forward")] if new_body else []
    new_body += [_Marker("backward")] + seed + bwd + fix + [gast.Return(value=retval)]
    args = fdef.args
    if cotangent is not None:
        args = N.arguments(list(fdef.args.args) + [cotangent])
    new = N.function_def(name or f"{fdef.name}_grad", args, new_body)
    new.sj_origin = getattr(fdef, "sj_origin", None)
    return new


class _Marker(gast.Pass):
    """A section comment (``# forward`` / ``# backward``) for the emitter."""

    def __init__(self, text: str):
        super().__init__()
        self.sj_comment = text
