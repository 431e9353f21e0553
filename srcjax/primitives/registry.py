"""The one registry of primitives.

A :class:`Primitive` is one operation that transforms know how to rewrite. It
carries, in one place:

- ``impls``: the implementations, keyed by backend name (see
  :mod:`srcjax.backends.base`). ``impls["cpu"]``, also read as ``impl``, is the
  NumPy implementation, a plain Python callable whose signature is the public
  signature (``sum(x, axis=None, keepdims=False)``); calling the primitive calls
  it. Another backend registers its own with :meth:`Primitive.def_impl` and
  reads it with :meth:`Primitive.impl_for`.
- ``public``: the dotted name generated code uses for it (``"jnp.sin"``,
  ``"jnp.linalg.inv"``, ``"nn.relu"``, ``"ad.unbroadcast"``). The namespaces
  ``jnp``, ``nn``, ``special``, ``lax``, ``random`` and ``ad`` are bound in every generated
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
- ``c_expr``: the C expression for fused kernels, e.g. ``"sin({x})"``, or a dict
  keyed by the kinds of the dtype it computes in (``{"f": "fabs({x})", "i":
  ...}``; a plain string covers ``"fiub"``, never complex). Read by the C
  renderer, :mod:`srcjax.codegen.c_render`.
- facts the transforms read instead of lists of names (set with
  :meth:`Primitive.facts`, next to the primitive's definition):
  ``static_params``, ``array_result``, ``tree_valued``, ``returns_tree``,
  ``same_structure``, ``shape_changing``, ``shape_query``, ``static_result``,
  ``static_for_constants``, ``effectful``, ``calls_back``, ``shape_only`` (see
  :class:`Primitive`).

Rules are written as ordinary Python over other primitives (``cos(x)``, not
``jnp.cos(x)``: this package never imports :mod:`srcjax.numpy`). Their source
is read and inlined as a template into generated code, where every primitive
is written by its ``public`` name; so generated derivative code is itself
ordinary srcjax input, and higher derivatives need nothing special.

A rule whose body is a single ``return <expr>`` inlines as an expression; a
longer body inlines as statements with its locals renamed.

Varargs parameters (``*arrays``) take one rule that also receives ``argnum``
(the operand's index among the varargs) as a keyword constant.

JAX's dtypes of a call (weak types of eager calls, the result dtypes of the
non-elementwise kinds) are :mod:`.call_dtypes`.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, Optional

import numpy as np

from .. import (
    _array,
    _array_ops,  # noqa: F401  (attaches Array's operators and methods)
)
from .._array import _WRAP_TYPES as _HOST_SCALARS
from .._array import Array as _Array
from .._array import _WeakArray
from .._array import owned as _owned_tree
from .._array import unwrap_args as _unwrap_args
from .._array import unwrap_args_seen as _unwrap_args_seen
from .._array import unwrap_kwargs as _unwrap_kwargs
from .._array import wrap as _wrap
from .._array import wrap_tree as _wrap_tree
from .._debug_nans import _cfg, check_eager
from ..errors import string_argument_message
from .call_dtypes import (
    _ABOVE_WEAK,
    _DTYPE_CHECKED_KINDS,
    _WEAK_SCALARS,
    _jax_dtypes,
    _weak,
    _weak_call,
    _weak_items_call,
)

__all__ = ["Primitive", "REGISTRY", "CPU", "by_public", "register", "lookup_callable"]

#: the backend name of the NumPy implementations (``Primitive.impls[CPU]``)
CPU = "cpu"

#: Primitive.weak_operands' values (KEPT_WEAK: equal to WEAK_SCALARS_AND_ARRAYS,
#: told apart by identity: the keeps_weak primitives)
WEAK_SCALARS_AND_ARRAYS = _WEAK_SCALARS | {_WeakArray}
KEPT_WEAK = frozenset(WEAK_SCALARS_AND_ARRAYS)


#: parameter names that hold options, dtypes, shapes, axes or indices, never a
#: differentiable value: a primitive's ``static_params`` are those of its
#: parameters (unless it sets its own). Without a rule they carry no activity (a
#: dtype computed from a differentiated value, ``asarray(a, dtype=dt)``, must not
#: make ``a``'s conversion active); other rule-less parameters do, and a float
#: there is a run-time error (see ``transforms.rules.no_rule_checks``)
STATIC_PARAM_NAMES = frozenset(
    """dtype shape axis axes keepdims order precision preferred_element_type copy ndmin
    mode method kind side size ddof equal_nan where indexing sparse UPLO upper lower
    full_matrices compute_uv hermitian symmetrize_input num endpoint retstep norm s n k
    axis1 axis2 axisa axisb axisc source destination indices_or_sections repeats
    total_repeat_length pad_width optimize start_indices slice_sizes shift
    interpolation overwrite_input sorted return_sign trans unit_diagonal overwrite_b
    debug check_finite approximate tiled idx indices index perm reps offset
    select_max window_strides padding lhs_dilation rhs_dilation dimension_numbers
    feature_group_count batch_group_count window_dimensions base_dilation
    window_dilation axis_name axis_index_groups subscripts name bins range density
    stable descending unique_indices indices_are_sorted sorter right promote_integers""".split()
)

#: public name -> Primitive, in registration order (deterministic test order).
REGISTRY: Dict[str, "Primitive"] = {}

#: id(python callable) -> Primitive: numpy functions, math functions, builtins
#: that resolve to a primitive when user code calls them.
_ALIASES: Dict[int, "Primitive"] = {}
_ALIAS_KEEP: list = []  # keep alias objects alive so ids stay unique


#: GPU array types (filled by the CUDA backend when it first meets them; empty:
#: every call is a host call, at the cost of one truth test); the set of
#: ``_array`` (an Array holding one of these is on a GPU)
DEVICE_TYPES: set = _array.DEVICE_TYPES
#: ``[call(prim, args, kwargs)]``: how a call with GPU arrays runs (the CUDA backend's)
DEVICE_CALL: list = [None]


def _on_device(args: tuple, kwargs: dict) -> bool:
    for a in args:
        t = type(a)
        if t in DEVICE_TYPES:
            return True
        if t is list or t is tuple:
            if any(type(v) in DEVICE_TYPES for v in a):
                return True
    return any(type(v) in DEVICE_TYPES for v in kwargs.values()) if kwargs else False


class Primitive:
    """One registered operation with its rules.

    Args:
        public: dotted name used in generated code, e.g. ``"jnp.sin"``.
        impl: NumPy implementation (``impls["cpu"]``); its signature is the
            primitive's signature.
        op: operator spelling for Python operators (``"+"``), else ``None``.
        kind: ``"elementwise"``, ``"reduction"``, ``"linalg"``, ``"structural"``,
            ``"creation"``, ``"control"``, ``"random"`` or ``"internal"``.
        broadcasting: outputs broadcast the array operands (adjoints are summed
            back to each operand's shape).
        differentiable: ``False`` for primitives whose output is integer or
            boolean (comparisons, argmax, shape queries): never active.
        c_expr: C expression template (or dict of templates by dtype kind) for
            fused kernels, or ``None`` (see :mod:`srcjax.codegen.c_render`).
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
        c_expr: Optional[Any] = None,
        test_domain: tuple = (-2.0, 2.0),
        signature: Optional[inspect.Signature] = None,
    ) -> None:
        self.public = public
        self.name = public.rsplit(".", 1)[-1]
        self.__name__ = self.__qualname__ = self.name  # as a function has (jnp.tanh.__name__)
        #: backend name -> implementation; ``impls[CPU]`` is the NumPy one (``impl``)
        self.impls: Dict[str, Callable[..., Any]] = {CPU: impl}
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
        #: vmap runs the batching rule even when no operand is batched (the
        #: collectives: ``psum`` of an unbatched value still involves the axis)
        self.batch_unbatched = False
        #: what to tell the user when a derivative is needed and there is no rule
        self.missing_rule_hint: Optional[str] = None
        #: the differentiable parameters are operands that JAX promotes to one
        #: dtype before computing (``dot``, ``concatenate``): see :func:`register`
        self.promote_operands = False
        #: a pure function of static metadata (shapes, options): given static
        #: operands its result is static too, a Python value under vmap, never
        #: per-example data (the conv plans; see analysis/static_names.py)
        self.static_result = False
        #: the result is always an array, whatever the operands (a helper of
        #: generated code that does not pass containers through: ad.unbroadcast)
        self.array_result = False
        #: the value (hence its tangent) may be a Python container (ad.tree_add)
        self.tree_valued = False
        #: names of operands whose container structure the result has when that
        #: operand is a container (vmap's ad.batch_broadcast(params, n))
        self.same_structure: tuple = ()
        #: names of operands whose leaves' weak types the result's leaves take
        #: (weak where the leaf is weak in every one of them): vmap's
        #: ad.batch_broadcast(0, n) of a weak Python int, ad.select of two weak
        #: values (JAX's select_n is weak when all its cases are)
        self.weak_leaves_from: tuple = ()
        #: an elementwise-kind primitive whose output shape is not its operands'
        self.shape_changing = False
        #: ``shape_query(aval)``: the static result from the first operand's
        #: abstract value (``jnp.ndim``: ``len(aval.shape)``), or None
        self.shape_query: Optional[Callable[[Any], Any]] = None
        #: given constant operands its result is static metadata (under vmap, the
        #: same for every example: ad.axis_or_zero)
        self.static_for_constants = False
        #: it has an effect (prints, calls back, checks and raises): never run on
        #: stand-ins to infer its result, never removed
        self.effectful = False
        #: an ``ad.*`` helper that computes its result from its operands only (no
        #: effect, nothing changed in place, no check of values that raises), as
        #: the public array kinds do: jit may drop it when unread, merge repeats
        #: and hoist it out of loops (ad.expand_to_rank, ad.bmatmul)
        self.pure = False
        #: the operand whose value the result is whenever the result's abstract
        #: value is that operand's (ad.expand_to_rank's ``x``: no unit axes to insert;
        #: ad.unbroadcast's ``g``: nothing to sum): jit copies it instead
        self.identity_operand: Optional[str] = None
        #: jit's form of a call whose operands' abstract values decide its path:
        #: ``direct(avals)`` (parameter -> ``Aval`` or None) gives ``(public name,
        #: parameters)``, the primitive (an operator's: written as the operator) to
        #: call on those operands instead, or None (optimize/direct.py)
        self.direct: Optional[Callable[[dict], Optional[tuple]]] = None
        #: a Python number or tuple result depends on the operands' shapes, dtypes
        #: and options only, never on their values (ad.mean_scale's ``1 / n``):
        #: jit computes it from abstract values
        self.from_shapes = False
        #: ``rule(avals) -> (shape, dtype[, weak])`` or None: the result's abstract value
        #: from the operands' (a dict by parameter name), where running on stand-ins
        #: cannot tell (ad.jac_columns of an appended list of columns)
        self.result_shape: Optional[Callable] = None
        #: the result is a part of operand ``x`` (what the normalizer's type
        #: tracking and result names follow): ``"attr"`` (``x.name``, a pytree
        #: field: ad.getattr), ``"static_attr"`` (a static attribute of a
        #: registered class: ad.static_attr) or ``"item"`` (``x[idx]``: ad.getitem)
        self.part: Optional[str] = None
        #: the list operand ``lst`` is used as a stack: ``"push"`` appends to it
        #: (ad.push), ``"pop"`` takes its last entry (ad.pop, ad.pop_like)
        self.stack: Optional[str] = None
        # -- facts about a few structural helpers, read by the transforms (which
        #    would otherwise compare names)
        #: operands (tried in order, the first bound one) that make the result a
        #: Python container when they are one (ad.setitem's x, ad.tree_add's a)
        self.container_from: tuple = ()
        #: ``(array, index)`` parameter names when the result is row ``index`` of
        #: ``array`` (``xs[k]``: ad.getitem, ad.tree_slice), else ``()``
        self.row_operands: tuple = ()
        #: parameters read only for their shape and dtype, never their values
        #: (ad.expand_reduced's ``x``, ad.row_stand_in's ``x``): where jit knows
        #: their abstract value it reads a stand-in of it, and the work that
        #: computed the operand can go (optimize/shape_only.py)
        self.shape_only: tuple = ()
        #: the result is a loop's trip count fixed before it runs (the length of
        #: a scanned sequence: ad.scan_length, ad.seq_len)
        self.trip_count = False
        #: vmap's print of a call per running example (ad.print_examples)
        self.prints_per_example = False
        #: checks a loop carry's type against JAX's rule (ad.check_carry), which
        #: jit drops where abstract values decide it
        self.carry_check = False
        #: the parameter naming the result dtype of a cast keeping operand x's
        #: shape (ad.astype: "dtype"), or None
        self.cast_dtype_param: Optional[str] = None
        #: the cast's result is weakly typed (ad.astype_weak: jit's conversion of
        #: an operand to a promoted type that is weak, as JAX converts it)
        self.cast_weak = False
        #: for two 2-d operands the result is (a.shape[0], b.shape[1]) (jnp.matmul,
        #: jnp.dot)
        self.matrix_product = False
        #: the output shape depends on operand values unless ``size`` is given
        #: (jnp.nonzero, jnp.unique): never inferred on stand-ins
        self.value_shaped = False
        #: a reduction that may end a fused region, as the backends name it
        #: ("sum", "mean", "max", "min"), or None
        self.fused_reduction: Optional[str] = None
        #: parameters that may all carry one new leading axis (the same trip count
        #: K), the others unchanged, with the result then the sum over that axis
        #: of the per-trip results (ad.matmul_right: ("g", "a"), ad.unbroadcast:
        #: ("g",)): reverse mode adds a loop-invariant operand's cotangents of a
        #: lax loop in one call after the reverse loop. Optionally two more
        #: items: (parameter, constant) pairs the call must pass, and how the
        #: trips' operands are joined, "stack" (default) or "concatenate" (along
        #: the examples' axis: ad.bmatmul_right(g, a, w, True, False)); see
        #: stack_sum_form
        self.stack_sum: tuple = ()
        #: a reduction's ``initial=`` (jnp.sum: "add", jnp.prod: "multiply"), which
        #: transformed code applies after the reduction without it
        #: (``ad.plus_initial``/``ad.times_initial``), or None
        self.initial_op: Optional[str] = None
        #: a host callback: its first parameter is a function called with the
        #: call's ``*args`` (jax.pure_callback, jax.debug.callback), so a lambda
        #: written there that reads locals of the transformed function is lifted
        #: with those locals as trailing parameters, passed after ``*args``
        self.calls_back = False
        self._static_params: Optional[frozenset] = None
        self._weak_options: Optional[tuple] = None  # (see _options)
        #: eager calls return Arrays (the public namespaces); ``ad.*`` helpers
        #: return Arrays when an argument is one (a composition called eagerly:
        #: ``ops.segment_sum``, ``jnp.bincount`` end in ``ad.take_adjoint``) and
        #: their buffers as they are when given buffers (see _internal_result)
        self.returns_arrays = not public.startswith("ad.")
        #: eager calls give a weakly typed result where JAX's rule says so
        #: (:func:`srcjax.dtypes.weak_promotion`: ``2.5 * int32_array``,
        #: ``jnp.sin(1.0)``, ``jnp.asarray(1.0)``; srcjax/_array.py, ``_WeakArray``)
        self.weak_result = kind == "elementwise"
        #: the operand types that make an eager call apply JAX's weak rule
        #: (``_weak_call``), or None: ``WEAK_SCALARS_AND_ARRAYS`` (elementwise: a
        #: Python number or a weak Array; weak Arrays are converted to the promoted
        #: dtype, ``(2.5 * int32_array) * float16_array`` is float16, also where
        #: ``weak_result`` is False), ``KEPT_WEAK`` (functions that move or copy
        #: elements, ``jnp.reshape``, ``jnp.zeros_like``: a weak operand, Array or
        #: Python number, gives a weak result, as in JAX; set with
        #: ``.facts(keeps_weak=True)``)
        self.weak_operands: Optional[frozenset] = (
            WEAK_SCALARS_AND_ARRAYS if kind == "elementwise" else None
        )
        #: the one parameter whose weak type the result takes (unless a ``dtype``
        #: is given), where the others are no operands of the rule: ``jnp.full``'s
        #: ``fill_value``, ``jnp.zeros_like``/``full_like``'s ``a`` (JAX's
        #: ``lax.full``/``full_like``: ``full_like(float16_x, 0.5)`` is strong,
        #: ``full_like(3, 1.5)`` weak int32); None: every non-static operand
        self.weak_from: Optional[str] = None
        #: the sequence parameter whose items take the weak rule together, as
        #: elementwise operands do (``jnp.stack``/``concatenate``'s ``arrays``:
        #: ``jnp.stack([1.0, 2.0])`` is weak float32, with a float16 item float16)
        self.weak_items: Optional[str] = None
        #: JAX converts the operand to a strong dtype here (lax.pow's JVP:
        #: ``ad.pow_base``), so a cotangent computed from the result is strong even
        #: where its primal is weak (see optimize/weak_returns.py)
        self.strong_cast = False
        #: its result has its operand's weak type again (JAX's transpose of that
        #: conversion: ``ad.cast_back``, in pow_base's own derivative)
        self.strong_reset = False
        self.__doc__ = getattr(impl, "__doc__", None)
        self.__wrapped__ = impl

    @property
    def impl(self) -> Callable[..., Any]:
        """The NumPy implementation: ``impls["cpu"]``."""
        return self.impls[CPU]

    @impl.setter
    def impl(self, fn: Callable[..., Any]) -> None:
        self.impls[CPU] = fn

    def def_impl(self, backend: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register ``fn`` as the implementation on ``backend`` (same signature as
        ``impl``); returns ``fn``."""
        self.impls[backend] = fn
        return fn

    def impl_for(self, backend: str) -> Callable[..., Any]:
        """The implementation on ``backend``. Raises NotImplementedError naming
        the primitive and the backend when there is none."""
        fn = self.impls.get(backend)
        if fn is None:
            raise NotImplementedError(
                f"{self.public} has no implementation on the {backend!r} backend"
                f" (it has: {', '.join(sorted(self.impls))})"
            )
        return fn

    @property
    def namespace(self) -> str:
        """The namespace of the public name: ``"jnp"``, ``"nn"``, ``"lax"``, ...;
        ``"ad"`` for the internal helpers of generated code."""
        return self.public.split(".", 1)[0]

    @property
    def static_params(self) -> frozenset:
        """Parameters holding options, never a differentiable value (default:
        those named in :data:`STATIC_PARAM_NAMES`)."""
        if self._static_params is None:
            self._static_params = frozenset(self.signature.parameters) & STATIC_PARAM_NAMES
        return self._static_params

    @static_params.setter
    def static_params(self, names: Any) -> None:
        names = frozenset(names)
        unknown = names - set(self.signature.parameters)
        if unknown:
            raise TypeError(f"{self.public}: no parameters {sorted(unknown)}")
        self._static_params = names

    #: the facts :meth:`facts` sets
    FACTS = frozenset(
        {
            "array_result",
            "calls_back",
            "tree_valued",
            "returns_tree",
            "same_structure",
            "weak_leaves_from",
            "shape_changing",
            "shape_query",
            "static_result",
            "static_for_constants",
            "effectful",
            "pure",
            "identity_operand",
            "direct",
            "from_shapes",
            "result_shape",
            "static_params",
            "batch_unbatched",
            "promote_operands",
            "missing_rule_hint",
            "part",
            "stack",
            "container_from",
            "row_operands",
            "shape_only",
            "trip_count",
            "prints_per_example",
            "carry_check",
            "cast_dtype_param",
            "cast_weak",
            "weak_result",
            "keeps_weak",
            "weak_from",
            "weak_items",
            "strong_cast",
            "strong_reset",
            "matrix_product",
            "value_shaped",
            "fused_reduction",
            "stack_sum",
            "initial_op",
        }
    )

    @property
    def keeps_weak(self) -> bool:
        """A weak Array operand gives a weak result (JAX's functions that move or
        copy elements: ``jnp.reshape(w, ...)``, ``w[1:]``, ``jnp.zeros_like(w)``,
        ``jnp.broadcast_to(2.0, (3,))``); jit's abstract values read it too
        (optimize/interp.py)."""
        return self.weak_operands is KEPT_WEAK

    @keeps_weak.setter
    def keeps_weak(self, on: bool) -> None:
        self.weak_operands = KEPT_WEAK if on else None
        self.weak_result = bool(on)

    def facts(self, **facts: Any) -> "Primitive":
        """Set facts the transforms read (``prim.facts(array_result=True)``).
        Raises TypeError for a name that is not one of :data:`FACTS`."""
        unknown = set(facts) - self.FACTS
        if unknown:
            raise TypeError(f"{self.public}: unknown primitive facts {sorted(unknown)}")
        for k, v in facts.items():
            setattr(self, k, v)
        return self

    def __deepcopy__(self, memo: dict) -> "Primitive":
        return self  # primitives are singletons: AST copies share them

    def __copy__(self) -> "Primitive":
        return self

    # -- calling -----------------------------------------------------------
    def _string_operand(self, args: tuple, kwargs: dict) -> Optional[str]:
        """The parameter of an elementwise call given a string operand, or None."""
        if self.kind != "elementwise":
            return None
        try:
            bound = self.signature.bind(*args, **kwargs).arguments
        except TypeError:
            return None
        for k, v in bound.items():
            if type(v) is str and k not in self.static_params:
                return k
        return None

    def _check_weak_ints(self, args: tuple, kwargs: dict) -> None:
        """JAX's OverflowError for a Python int operand beyond int32 (x64 off) of an
        eager elementwise call (``jnp.add(x, 2**31)``; not a power's exponent)."""
        from ..dtypes import check_int32_range

        bound = self.signature.bind_partial(*args, **kwargs).arguments
        for k, v in bound.items():
            if type(v) is int and k not in self.static_params:
                if not (self.op == "**" and k == "y"):
                    check_int32_range(v)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # the boundary of eager code: Arrays in, Arrays out (srcjax/_array.py);
        # generated code calls the implementation on plain buffers
        if len(args) == 1 and not kwargs and type(args[0]) is _Array:
            # the common call (jnp.sin(x), x.sum()): one strong Array on the host
            b = args[0]._buf
            if (type(b) is np.ndarray or type(b) in _HOST_SCALARS) and not _cfg.debug_nonfinite:
                try:
                    r = self.impls[CPU](b)
                except TypeError:
                    pass  # (the general path names the public function)
                else:
                    t = type(r)
                    if t is np.ndarray and r.dtype.fields is None and self.returns_arrays:
                        return _wrap(r)  # (a view of b is fine: Array buffers are never written)
                    if t in _HOST_SCALARS and self.returns_arrays:
                        return _wrap(r)
                    return _wrap_tree(r)  # (an ad.* helper given an Array too)
        given = args
        weak = False
        trigger = self.weak_operands
        if trigger is None:
            if self.weak_items is not None:  # (jnp.stack([1.0, 2.0]): weak)
                call = _weak_items_call(self, args, kwargs)
                if call is not None:
                    weak, args, kwargs = call
            args = _unwrap_args(args)
            if kwargs:
                kwargs = _unwrap_kwargs(kwargs)
        else:
            # one pass: the buffers, and whether a weak operand is there (the
            # common call has none: it costs what unwrapping costs)
            args, seen = _unwrap_args_seen(args, trigger)
            for v in kwargs.values():
                t = type(v)
                if t is _WeakArray:
                    seen = 2
                elif t in trigger and not seen:
                    seen = 1
            if seen == 1:
                if self.kind == "elementwise":
                    self._check_weak_ints(given, kwargs)
                a0 = given[0] if given else None
                if type(a0) is _Array and a0._buf.dtype in _ABOVE_WEAK:
                    # a Python number with a strong float first: a strong result
                    # needing nothing converted (jnp.clip(x, 0, 1), jnp.multiply(x, 2.0))
                    seen = 0
            if seen:
                call = _weak_call(self, given, kwargs)
                if call is not None:
                    weak, args, kwargs = call
                    weak = weak and self.weak_result
                    args = _unwrap_args(args)
                else:
                    args = _unwrap_args(given)
            if kwargs:
                kwargs = _unwrap_kwargs(kwargs)
        if DEVICE_TYPES and _on_device(args, kwargs):
            # a GPU array among the arguments: run where it lives (the CUDA
            # backend installs DEVICE_CALL and the array types): an Array
            # holding the device buffer, as a host call's result
            r = DEVICE_CALL[0](self, args, kwargs)
            return _wrap_tree(r) if self.returns_arrays else _internal_result(r, given, kwargs)
        try:
            r = self.impls[CPU](*args, **kwargs)
        except TypeError as e:
            # a call that does not bind: name the public function, not the impl
            head = f"{getattr(self.impl, '__name__', '')}() "
            text = str(e)
            if not text.startswith(head) or "argument" not in text:
                path = self._string_operand(args, kwargs)
                if path is not None:  # (jnp.add(x, "a"): JAX's message, not NumPy's)
                    raise TypeError(string_argument_message(self.public, path)) from None
                raise
            more = " (not supported by srcjax yet)" if "unexpected keyword" in text else ""
            raise TypeError(f"{self.public}() {text[len(head) :]}{more}") from None
        if _cfg.debug_nonfinite:  # jax_debug_nans / jax_debug_infs
            check_eager(self.public, r)
        if not self.returns_arrays:
            return _internal_result(r, given, kwargs)
        t = type(r)
        if t is np.ndarray:
            if r.base is not None or _one_of(r, given):
                r = _owned_tree(r, given)  # (jnp.reshape(a, ...): a view of a)
        elif t is list or t is tuple:
            r = _owned_tree(r, given)  # (jnp.split(a, 2): views of a)
        elif isinstance(r, np.ndarray):  # a subclass (np.reshape of a np.memmap)
            r = _owned_tree(np.asarray(r), given)
        if weak:
            return _weak(r)
        return _wrap_tree(r)

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


def _internal_result(r: Any, given: tuple, kwargs: dict) -> Any:
    """An ``ad.*`` helper's eager result: Arrays when an argument is an Array (a
    composition such as ``ops.segment_sum`` called by the user ends in one, and
    must not hand out a NumPy array: no ``.at``, ``+=`` writing in place), else
    the buffers as they are (internal callers on buffers)."""
    if _holds_array(given) or (kwargs and _holds_array(kwargs.values())):
        return _wrap_tree(_owned_tree(r, given))
    return r


def _holds_array(args: Any) -> bool:
    """Whether an Array is among ``args`` or in a list, tuple or dict among
    them (``ad.ravel_tree(spec, {"a": x})``)."""
    for a in args:
        if isinstance(a, _Array):
            return True
        t = type(a)
        if t is list or t is tuple:
            for v in a:
                if isinstance(v, _Array):
                    return True
        elif t is dict:
            for v in a.values():
                if isinstance(v, _Array):
                    return True
    return False


def _one_of(r: Any, given: tuple) -> bool:
    """Whether ``r`` is one of ``given`` (by identity)."""
    for a in given:
        if r is a:
            return True
    return False


def register(prim: Primitive, *aliases: Any) -> Primitive:
    """Add ``prim`` to the registry; ``aliases`` are other callables (``np.sin``,
    ``math.sin``) that resolve to it when user code calls them.

    Implementations of the non-elementwise kinds (reductions, linear algebra,
    structural, creation, ``nn``) are wrapped by :func:`_jax_dtypes`, so every
    one returns JAX's canonical dtypes the way the elementwise ones do."""
    if prim.public in REGISTRY:
        raise ValueError(f"primitive {prim.public} registered twice")
    if prim.kind in _DTYPE_CHECKED_KINDS:
        prim.impl = _jax_dtypes(prim, prim.impl)
    REGISTRY[prim.public] = prim
    _ALIAS_KEEP.append(prim.impl)
    _ALIASES[id(prim.impl)] = prim  # generated code calls impls directly
    for a in aliases:
        _ALIAS_KEEP.append(a)
        _ALIASES[id(a)] = prim
    return prim


_array.HOOKS["impl"] = lambda public: REGISTRY[public].impl  # (Array's operators)
_array.HOOKS["primitive"] = REGISTRY.__getitem__  # (the same on GPU buffers)


def alias(prim: Primitive, *aliases: Any) -> None:
    """Make more callables resolve to an already registered ``prim``."""
    for a in aliases:
        _ALIAS_KEEP.append(a)
        _ALIASES[id(a)] = prim


def by_public(public: str) -> Primitive:
    """The primitive whose public name is ``public``. Raises KeyError naming it
    when there is none (a rule attached to a misspelled name fails at import)."""
    try:
        return REGISTRY[public]
    except KeyError:
        raise KeyError(f"no primitive {public!r} is registered") from None


def lookup_callable(obj: Any) -> Optional[Primitive]:
    """The primitive a callable resolves to, or ``None``."""
    if isinstance(obj, Primitive):
        return obj
    return _ALIASES.get(id(obj))


def stack_sum_form(prim: Any) -> Optional[tuple]:
    """``(stacked, target, flags, given, join)`` of ``prim``'s ``stack_sum``
    fact (``given``: ``(parameter, constant)`` pairs the call must pass;
    ``join``: ``"stack"`` or ``"concatenate"``), or None without one."""
    form = tuple(getattr(prim, "stack_sum", ()))
    if not form:
        return None
    return (form + ((), "stack"))[:5]
