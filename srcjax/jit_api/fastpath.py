"""Straight-line code for jit's boundary, generated once per specialization.

A call of a jitted function walks its arguments (``signature._canon``: the key,
the canonical arguments, the memory owners of their arrays) and its results
(``outputs._unalias`` and the flat-result plan's unflattening). The walks are
generic: each node is dispatched on its type, each registered class's
attributes are matched to its children, the key (a nested tuple) is hashed.
For an Equinox-style model that is ~30 us a call (R5).

A specialization knows the structure its arguments had. From its key and the
canonical arguments of the call that found it, :func:`make_guard` writes a
function that reads the leaves of a call's arguments directly, checks on the way
that each node has the type, length, aux data, attribute layout and leaf shape
and dtype the key holds, and returns what the generic walk would (the canonical
arguments, rebuilt exactly where the walk rebuilds them, and the memory owners of
their arrays), or None at the first difference: the call then takes the generic
walk, which specializes again where the key differs. Only structures the guard
can check exactly are written (arrays, NumPy and Python scalars, None, lists,
tuples, named tuples, plain dicts, registered classes whose other attributes are
str/int/bool/None constants); anything else keeps the generic walk.

:func:`make_finish` writes the results' side for a specialization returning its
trees as their leaves (``flat_results``): each leaf fixed as ``_unalias`` fixes it
(copied when it is an input's memory, narrowed, made an Array), each tree built
by nested ``unflatten`` calls as its treedef's ``unflatten`` would.
"""

from __future__ import annotations

import importlib
from typing import Any, List, Optional

import numpy as np

from .. import dtypes
from .._array import Array
from .._array import wrap as _wrap
from ..pytree import _LIST, _NONE, _TUPLE, CLASS_KINDS, method_flatten
from .outputs import _NUMPY_SCALARS, _WIDE, _WIDE_SCALARS, _unalias

_cfg = importlib.import_module("srcjax.config")  # the module (srcjax.config is the object)

_ND = np.ndarray
_F32_T = np.float32
_EMPTY = frozenset()
#: a registered class's attribute values the key holds as constants (signature._CONST_TYPES)
_CONST_TYPES = (str, int, bool)


class _Unsupported(Exception):
    """A structure the guard does not write (the generic walk stays)."""


class _Writer:
    def __init__(self) -> None:
        self.lines: List[str] = []
        self.consts: dict = {}
        self.n = 0
        self.roots: List[str] = []

    def name(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def const(self, value: Any, prefix: str = "K") -> str:
        for k, v in self.consts.items():
            if v is value:
                return k
        k = self.name(prefix)
        self.consts[k] = value
        return k

    def emit(self, line: str) -> None:
        self.lines.append("    " + line)


def _leaf_array(w: _Writer, x: str, key: Any, unwrap: bool) -> str:
    """An array leaf keyed ``(shape, dtype)``: an ndarray of that shape and dtype
    (an Array's buffer), its owner a root. A 64-bit one the walk narrows fails
    the dtype test (the key holds the narrowed dtype)."""
    shape, dt = key
    v = w.name("v")
    w.emit(f"{v} = {x}")
    if unwrap:
        w.emit(f"if type({v}) is _Array:")
        w.emit(f"    {v} = {v}._buf")
    w.emit(f"if type({v}) is not _ND or {v}.shape != {w.const(shape, 'S')}:")
    w.emit("    return None")
    d = w.const(dt, "D")  # (an equal dtype may be another object: a Numba region's)
    w.emit(f"if {v}.dtype is not {d} and {v}.dtype != {d}:")
    w.emit("    return None")
    r = w.name("r")
    w.emit(f"{r} = {v}.base")
    w.emit(f"{r} = id({v} if {r} is None else {r})")
    w.roots.append(r)
    return v


def _node(w: _Writer, x: str, key: Any, value: Any, order: bool) -> tuple:
    """Code checking the argument in variable ``x`` against ``key`` (its key from
    ``_canon(value, x64, order, roots)``; ``value`` its canonical value at the
    specializing call): (the variable holding its canonical value, an
    expression true when that is not ``x`` itself)."""
    t = type(value)
    if key is None and value is None:
        w.emit(f"if {x} is not None:")
        w.emit("    return None")
        return x, "False"
    if t is _ND and type(key) is tuple and len(key) == 2 and type(key[0]) is tuple:
        if key[0] != value.shape or key[1] is not value.dtype:
            raise _Unsupported
        v = _leaf_array(w, x, key, True)
        return v, f"{v} is not {x}"
    if (
        t in _NUMPY_SCALARS
        and type(key) is tuple
        and len(key) == 2
        and key[0] == ()
        and key[1] is value.dtype
    ):
        if t in _WIDE_SCALARS:
            raise _Unsupported  # (narrowed at the call: a different object)
        v = w.name("v")
        w.emit(f"{v} = {x}._buf if type({x}) is _Array else {x}")
        w.emit(f"if type({v}) is not {w.const(t, 'T')}:")
        w.emit("    return None")
        return v, f"{v} is not {x}"
    if t is _F32_T and key == ("weak", "float"):  # a Python float, now a float32 scalar
        w.emit(f"if type({x}) is not float:")
        w.emit("    return None")
        v = w.name("v")
        w.emit(f"{v} = _F32({x})")
        return v, "True"
    if t is int and key == ("weak", "int") and not _cfg.x64_enabled:
        w.emit(f"if type({x}) is not int:")
        w.emit("    return None")
        w.emit(f"_int32_range({x})")
        return x, "False"
    if t is bool and key == ("weak", "bool"):
        w.emit(f"if type({x}) is not bool:")
        w.emit("    return None")
        return x, "False"
    if type(key) is not tuple or not key:
        raise _Unsupported
    tag = key[0]
    if tag == "seq" and len(key) == 3 and key[1] is t and t in (list, tuple):
        return _sequence(w, x, key, value, order)
    if tag == "tuple" and len(key) == 3 and key[1] is t and hasattr(t, "_fields"):
        return _sequence(w, x, key, value, order)
    if tag == "dict" and len(key) == 3 and key[1] is dict and t is dict:
        return _dict(w, x, key, value, order)
    if tag == "class" and len(key) in (5, 6) and key[1] is t and t in CLASS_KINDS:
        return _class(w, x, key, value)
    raise _Unsupported


def _items(w: _Writer, x: str, subs: Any, values: Any, order: bool) -> tuple:
    """Guard lines for each item ``x[i]`` of a sequence (keys ``subs``, this
    call's ``values``): the items' output expressions and their change flags."""
    outs = []
    changed = []
    for i, (k, v) in enumerate(zip(subs, values)):
        c = w.name("c")
        w.emit(f"{c} = {x}[{i}]")
        o, ch = _node(w, c, k, v, order)
        outs.append(o)
        if ch != "False":
            changed.append(ch)
    return outs, changed


def _sequence(w: _Writer, x: str, key: Any, value: Any, order: bool) -> tuple:
    t = type(value)
    subs = key[2]
    if len(subs) != len(value):
        raise _Unsupported
    w.emit(f"if type({x}) is not {w.const(t, 'T')} or len({x}) != {len(subs)}:")
    w.emit("    return None")
    outs, changed = _items(w, x, subs, value, order)
    items = ", ".join(outs) + ("," if len(outs) == 1 else "")
    v = w.name("v")
    if t is list:  # (the walk copies every list)
        w.emit(f"{v} = [{items}]")
        return v, "True"
    if t is tuple:
        if not changed:
            return x, "False"
        w.emit(f"{v} = ({items}) if {' or '.join(changed)} else {x}")
        return v, f"{v} is not {x}"
    w.emit(f"{v} = {w.const(t, 'T')}({items})")  # a named tuple: always rebuilt
    return v, "True"


def _dict(w: _Writer, x: str, key: Any, value: Any, order: bool) -> tuple:
    items = key[2]
    names = tuple(k for k, _ in items)
    if names != tuple(value):
        raise _Unsupported
    n = w.const(names, "N")
    if order and len(names) > 1:
        # the walk reads the items in JAX's (sorted) order, and hands on a dict
        # in that order: the same keys, in any insertion order, have this key
        w.emit(f"if type({x}) is not dict or len({x}) != {len(names)}:")
    else:  # (the insertion order is the key's)
        w.emit(f"if type({x}) is not dict or tuple({x}) != {n}:")
    w.emit("    return None")
    outs = []
    changed = []
    for name, k in items:
        c = w.name("c")
        w.emit(f"{c} = {x}[{w.const(name, 'N')}]")
        o, ch = _node(w, c, k, value[name], order)
        outs.append((name, o))
        if ch != "False":
            changed.append(ch)
    if order and len(names) > 1:
        changed.insert(0, f"tuple({x}) != {n}")
    if not changed:
        return x, "False"
    v = w.name("v")
    display = ", ".join(f"{w.const(k, 'N')}: {o}" for k, o in outs)
    w.emit(f"{v} = {{{display}}} if {' or '.join(changed)} else {x}")
    return v, f"{v} is not {x}"


def _class(w: _Writer, x: str, key: Any, value: Any) -> tuple:
    t = type(value)
    kind = CLASS_KINDS[t]
    aux, layout, subs = key[2], key[3], key[4]
    consts = ()
    if len(key) == 6:
        consts = key[5]
        if type(consts) is not tuple:
            raise _Unsupported  # (another attribute: keyed by its type tree)
    children, spec_aux = kind.flatten(value)
    children = tuple(children)
    if len(children) != len(subs):
        raise _Unsupported
    w.emit(f"if type({x}) is not {w.const(t, 'T')}:")
    w.emit("    return None")
    ch, ax = w.name("ch"), w.name("ax")
    if kind.flatten is method_flatten:  # (register_pytree_node_class: one call less)
        w.emit(f"{ch}, {ax} = {x}.tree_flatten()")
    else:
        w.emit(f"{ch}, {ax} = {w.const(kind.flatten, 'F')}({x})")
    w.emit(f"if type({ch}) is not tuple:")
    w.emit(f"    {ch} = tuple({ch})")
    w.emit(f"if len({ch}) != {len(subs)}:")
    w.emit("    return None")
    if aux is None:
        w.emit(f"if {ax} is not None:")
    else:
        w.emit(f"if not ({ax} == {w.const(aux, 'A')}):")
    w.emit("    return None")
    # the attributes: each child attribute is the first child it is (the walk's
    # layout), each other one a constant of the same type and value
    n_attrs = len(layout) + len(consts)
    if n_attrs == 0:
        w.emit(f"if getattr({x}, '__dict__', None):")
        w.emit("    return None")
    else:
        d = w.name("d")
        w.emit(f"{d} = {x}.__dict__")
        w.emit(f"if len({d}) != {n_attrs}:")
        w.emit("    return None")
        for name, j in layout:
            a = w.name("a")
            w.emit(f"{a} = {d}[{w.const(name, 'N')}]")
            tests = [f"{a} is not {ch}[{j}]"] + [f"{a} is {ch}[{i}]" for i in range(j)]
            w.emit(f"if {' or '.join(tests)}:")
            w.emit("    return None")
        for entry in consts:
            if type(entry) is not tuple or len(entry) != 3:
                raise _Unsupported
            name, ty, val = entry
            a = w.name("a")
            w.emit(f"{a} = {d}[{w.const(name, 'N')}]")
            if val is None:
                w.emit(f"if {a} is not None:")
            else:
                w.emit(f"if type({a}) is not {w.const(ty, 'T')} or {a} != {w.const(val, 'K')}:")
            w.emit("    return None")
            w.emit(f"for _c in {ch}:")  # (a child it is makes it part of the layout)
            w.emit(f"    if _c is {a}:")
            w.emit("        return None")
    outs, changed = _items(w, ch, subs, children, False)
    if not changed:
        return x, "False"
    v = w.name("v")
    items = ", ".join(outs) + ("," if len(outs) == 1 else "")
    unflatten = w.const(kind.unflatten, "U")
    w.emit(f"{v} = {unflatten}({ax}, ({items})) if {' or '.join(changed)} else {x}")
    return v, f"{v} is not {x}"


def _int32_range(x: int) -> None:
    dtypes.check_int32_range(x)


def make_guard(key: tuple, cargs: tuple) -> Optional[Any]:
    """The guard of the specialization of ``key`` (``_Jit._key``'s key of a call
    with positional arguments only), written from the canonical arguments
    ``cargs`` of a call that had that key; None where a structure is not
    supported. ``guard(args)`` is ``(canonical args, roots)`` or None."""
    written = write_guard(key, cargs)
    return None if written is None else _compiled_guard(*written)


class LazyGuard:
    """A guard written (from the call that had the key: the structure of its
    arguments) and compiled at its first use, the specialization's next call.
    The first call does not use it: compiling it was 0.5 ms of W4's first call
    from the disk cache. Once compiled, the guard replaces this object where
    ``table`` (the jit object's ``_fast`` list) holds it, and as
    ``fn.__srcjax_guard__``."""

    __slots__ = ("text", "namespace", "fn", "table")

    def __init__(self, text: str, namespace: dict, fn: Any, table: list) -> None:
        self.text, self.namespace, self.fn, self.table = text, namespace, fn, table

    def __call__(self, args: tuple) -> Any:
        guard = _compiled_guard(self.text, self.namespace)
        self.fn.__srcjax_guard__ = guard
        for i, (g, f) in enumerate(list(self.table)):
            if g is self:
                self.table[i] = (guard, f)
        return guard(args)


def lazy_guard(key: tuple, cargs: tuple, fn: Any, table: list) -> Optional[LazyGuard]:
    """:func:`make_guard`'s guard, compiled at its first use (:class:`LazyGuard`)."""
    written = write_guard(key, cargs)
    return None if written is None else LazyGuard(*written, fn, table)


def _compiled_guard(text: str, namespace: dict) -> Any:
    namespace = dict(namespace)
    exec(compile(text, "<srcjax jit guard>", "exec"), namespace)
    guard = namespace["guard"]
    guard.__srcjax_text__ = text
    return guard


def write_guard(key: tuple, cargs: tuple) -> Optional[tuple]:
    """``(text, namespace)`` of :func:`make_guard`'s guard, or None."""
    keys, kw_key, x64, _device = key
    if kw_key or x64 != _cfg.x64_enabled or len(keys) != len(cargs):
        return None
    w = _Writer()
    params = [f"a{i}" for i in range(len(keys))]
    w.emit(f"if len(args) != {len(keys)} or _cfg.x64_enabled != {bool(x64)}:")
    w.emit("    return None")
    if params:
        w.emit(f"{', '.join(params)}{',' if len(params) == 1 else ''} = args")
    outs = []
    try:
        for p, k, v in zip(params, keys, cargs):
            o, _ = _node(w, p, k, v, True)
            outs.append(o)
    except _Unsupported:
        return None
    items = ", ".join(outs) + ("," if len(outs) == 1 else "")
    roots = "{" + ", ".join(w.roots) + "}" if w.roots else "set()"
    w.emit(f"return ({items}), {roots}")
    text = "def guard(args):\n    try:\n" + "\n".join("    " + s for s in w.lines)
    text += "\n    except Exception:\n        return None\n"
    namespace = dict(w.consts)
    namespace.update(_Array=Array, _ND=_ND, _F32=np.float32, _int32_range=_int32_range, _cfg=_cfg)
    return text, namespace


# -- results ---------------------------------------------------------------------------


def _fix(x: Any, roots: Any) -> Any:
    """One result leaf (or item) as ``outputs._unalias`` fixes it."""
    t = type(x)
    if t is _ND:
        dt = x.dtype
        if dt in _WIDE and not _cfg.x64_enabled:
            x = dtypes.canonicalize_value(x)  # a new array: it shares nothing
        else:
            b = x.base
            if id(x if b is None else b) in roots:
                x = x.copy()
        return _wrap(x) if dt.fields is None else x
    if t in _NUMPY_SCALARS and (t not in _WIDE_SCALARS or _cfg.x64_enabled):
        return _wrap(x)
    return _unalias(x, (), {}, _EMPTY, roots)


#: the dtypes of the common result leaf: an ndarray of one of them is made an Array
#: in the finisher's own lines (no narrowing, no structured dtype: ``_fix``'s first branch)
_PLAIN = frozenset(
    np.dtype(c)
    for c in (
        "float32",
        "float16",
        "int32",
        "int16",
        "int8",
        "uint32",
        "uint16",
        "uint8",
        "bool",
        "complex64",
    )
)


def _leaf(w: _Writer, x: str) -> str:
    """Lines fixing the result leaf ``x`` (as :func:`_fix`): the variable holding it."""
    o = w.name("o")
    w.emit(f"{o} = {x}")
    w.emit(f"if type({o}) is _ND and {o}.dtype in _PLAIN:")
    w.emit(f"    _b = {o}.base")
    w.emit(f"    if id({o} if _b is None else _b) in roots:")
    w.emit(f"        {o} = {o}.copy()")
    w.emit("    _a = _new(_Array)")
    w.emit(f"    _a._buf = {o}")
    w.emit(f"    {o} = _a")
    w.emit("else:")
    w.emit(f"    {o} = _fix({o}, roots)")
    return o


def _tree(w: _Writer, td: Any, leaves: str, pos: List[int]) -> str:
    kind = td.kind
    if kind is None:
        i = pos[0]
        pos[0] += 1
        return _leaf(w, f"{leaves}[{i}]")
    kids = [_tree(w, c, leaves, pos) for c in td.children_defs]
    items = ", ".join(kids) + ("," if len(kids) == 1 else "")
    if kind is _LIST:
        return f"[{', '.join(kids)}]"
    if kind is _TUPLE:
        return f"({items})"
    if kind is _NONE:
        return "None"
    return f"{w.const(kind.unflatten, 'U')}({w.const(td.aux, 'A')}, ({items}))"


def make_finish(plan: tuple) -> Optional[Any]:
    """``finish(values, roots)``: the result of a specialization planned by
    ``outputs._plan_flat`` from what it returned, its leaves fixed as
    ``_unalias(values, ...)`` fixes them, then built as ``_built`` builds it;
    ``roots``: the arguments' memory owners (a set)."""
    template, treedefs = plan
    w = _Writer()
    sizes = {}

    def expr(node: list) -> str:
        tag = node[0]
        if tag == "tuple":
            parts = [expr(t) for t in node[1]]
            return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
        if tag == "leaf":
            return _leaf(w, f"values[{node[1]}]")
        td = treedefs[node[2]]
        sizes[node[1]] = td.num_leaves
        leaves = w.name("L")
        w.emit(f"{leaves} = values[{node[1]}]")
        return _tree(w, td, leaves, [0])

    try:
        body = expr(template)
    except Exception:  # noqa: BLE001 - an unexpected plan: the generic build stays
        return None
    text = "def finish(values, roots):\n"
    checks = " or ".join(f"len(values[{i}]) != {n}" for i, n in sizes.items())
    if checks:
        text += f"    if {checks}:\n        return _SLOW\n"
    text += "\n".join(w.lines) + f"\n    return {body}\n"
    namespace = dict(w.consts)
    namespace.update(
        _fix=_fix, _SLOW=SLOW, _ND=_ND, _PLAIN=_PLAIN, _new=object.__new__, _Array=Array
    )
    exec(compile(text, "<srcjax jit results>", "exec"), namespace)
    finish = namespace["finish"]
    finish.__srcjax_text__ = text
    return finish


#: what ``finish`` returns when the values do not have the planned leaf counts
SLOW = object()
