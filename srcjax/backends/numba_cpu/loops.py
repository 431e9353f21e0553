"""Loops over scalars compiled with Numba, inside jit's CPU code.

A jitted ``for``/``while`` loop (``lax.fori_loop``, ``lax.while_loop`` and
``scan``/``for`` bodies arrive as Python loops) whose every value is a scalar
(shape ``()``, float32/float64/int32/int64/bool, abstract values from jit's
inference) and whose every statement is an arithmetic operator, a comparison,
an ``if`` or a loop of the same kind, or a call of an elementwise function in
:data:`.exprs._CALLS`, becomes a *region*: a kernel function, written to the cache
directory and compiled with :func:`srcjax.backends.numba_cpu.njit` for the
argument types the abstract values give, replaces the loop in the generated
code. Anything else (arrays, BLAS/LAPACK/FFT calls, containers, helpers of the
transforms) keeps NumPy; so does a loop Numba cannot compile (decided once per
kernel: a failure is remembered, never retried).

JAX's dtype semantics are kept: every operand is converted to the dtype of the
operation's result as jit inferred it (a weak Python scalar is the default
float or int dtype, as in JAX), and every result is converted to its own dtype
(Numba computes int32 arithmetic in int64: the conversion wraps as XLA does).
float32 stays float32: no operation sees a float64 operand unless its result
is float64.

With ``numba_loops="auto"`` (the default) a region is *tiered* (:mod:`.tiers`):
the NumPy loop runs, timed, until the region is hot, and the kernel is compiled
then; both tiers give the same numbers to the bit (:mod:`.ufuncs`).

The generated code names the kernel (``_nbr.region("nbloop_<digest>")``) and
shows its source in comments; ``srcjax.source(jitted, *args)`` therefore shows
which loops were compiled and which kept NumPy (with Numba's reason).

This module is imported for a function with a loop (numpy_cpu's ``prepare``)
or by generated code reading a compiled region (``_nbr.region``); the kernel
translator (:mod:`.planner`, :mod:`.kernel`, :mod:`.exprs`, :mod:`.tapes`) by
the functions that plan a loop. Generated code with Numba maps only
(:mod:`.maps`, tiered: ``_nbr.tiered``) imports neither, so its first ``jit``
call does not pay for importing them (~50 ms of W4's first call where Python
writes no ``.pyc``; :mod:`.nbr` imports this module when a tier compiles).
"""

from __future__ import annotations

import hashlib
from typing import Any, Dict, List, Optional

import gast

from ...frontend import nodes as N
from . import gufuncs, numba, tiers, ufuncs
from .notes import SHOWN as _SHOWN
from .notes import comment as _comment
from .tiers import clock, tiered
from .trees import Refuse

__all__ = ["lower_loops", "region", "tiered", "clock"]


# ---------------------------------------------------------------------------- regions
class Region:
    """A compiled kernel (``fn``), or its failure (``error``: then ``fn`` is None)."""

    def __init__(self, key: str, fn: Any, error: str, source: str) -> None:
        self.key = key
        self.fn = fn
        self.error = error
        self.source = source
        self.python: Any = None
        self.box: Any = None
        #: a forward kernel's ``relist(tape)`` (the NumPy tape list, :mod:`.tapes`)
        self.relist: Any = None
        #: a reverse kernel: an argument None (a forward declaration) runs NumPy
        self.none_check = False
        #: trailing arguments: the addresses of the NumPy loops it calls (ufuncs.py)
        self.extra: tuple = ()

    def __call__(self, *args: Any) -> Any:
        """The kernel's results, or None: then the generated code runs the loop in
        NumPy (the kernel failed: Numba could not type these arguments, e.g. a
        0-d array where a scalar was expected; remembered, never retried)."""
        fn = self.fn
        if fn is None:
            return None
        if self.none_check and any(a is None for a in args):
            return None
        try:
            r = fn(*args, *self.extra)
        except Exception as exc:  # noqa: BLE001 - kernels are pure: NumPy reruns the loop
            r = self._again(exc, args)
            if r is None:
                return None
        return r if self.box is None else self.box(r)

    def _again(self, exc: Exception, args: Any) -> Any:
        if self.python is not None and isinstance(exc, ModuleNotFoundError):
            # a lazily compiled kernel whose on-disk Numba cache entry does not load back
            # (one written by another srcjax): compile it afresh, without that cache, once
            from . import njit

            try:
                self.fn = njit(self.python, cache=False)
                return self.fn(*args, *self.extra)
            except Exception as again:  # noqa: BLE001
                exc = again
        self.fn = None
        self.error = f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0][:120]}"
        return None


_REGIONS: Dict[str, Region] = {}


def _numba_types(nb: Any, spec: Any) -> Any:
    """The Numba type of an argument type spec of :func:`planner.plan`."""
    if isinstance(spec, tuple) and spec[0] == "tuple":
        return nb.types.Tuple(tuple(_numba_types(nb, c) for c in spec[1]))
    if isinstance(spec, tuple) and spec[0] == "array":
        return nb.types.Array(_numba_types(nb, spec[1]), spec[2], "C")
    return nb.boolean if spec == "bool" else getattr(nb, spec)


def _compile(key: str, source: str, sig: Optional[List[Any]]) -> Region:
    """Compile ``source``'s ``kernel`` (for the argument type specs ``sig``; None:
    on its first call), once per process; a failure is remembered."""
    from ...codegen import cache
    from . import njit, numba

    done = _REGIONS.get(key)
    if done is not None:
        return done
    import sys
    import types

    path = cache.write_source(source, key)
    # a real module in sys.modules: Numba's on-disk cache refers to the kernel's
    # module by name (an exec namespace is "<dynamic>", which does not load back)
    mod = types.ModuleType(f"srcjax_numba_{key}")
    mod.__file__ = path
    sys.modules[mod.__name__] = mod
    ns = mod.__dict__
    try:
        exec(compile(source, path, "exec"), ns)
        nb = numba()
        extra = tuple(ufuncs.loop_pointer(n, dt) for n, dt in ns.get("UFUNCS", ()))
        extra += tuple(gufuncs.loop_pointer(n, dt) for n, dt in ns.get("GUFUNCS", ()))
        types_ = None
        if sig is not None:
            types_ = tuple(_numba_types(nb, t) for t in list(sig) + ["intp"] * len(extra))
        try:
            fn = njit(ns["kernel"])
            if types_ is not None:
                fn.compile(types_)
        except nb.core.errors.TypingError:
            raise
        except Exception:  # noqa: BLE001 - an unreadable on-disk cache entry: compile afresh
            fn = njit(ns["kernel"], cache=False)
            if types_ is not None:
                fn.compile(types_)
        reg = Region(key, fn, "", source)
        reg.extra = extra
        tiers.started()
    except Exception as exc:  # noqa: BLE001 - Numba cannot type or compile it: NumPy
        reason = f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0][:120]}"
        reg = Region(key, None, reason, source)
    reg.python = ns.get("kernel")
    reg.box = ns.get("box")
    reg.relist = ns.get("relist")
    reg.none_check = bool(ns.get("NONE_CHECK"))
    _REGIONS[key] = reg
    return reg


def region(key: str) -> Region:
    """The compiled region ``key``, which a generated module reads on each call.
    In another process (a generated module from the disk cache) the kernel is
    read back from its file in the cache directory, hash-checked, and compiled
    on its first call."""
    r = _REGIONS.get(key)
    if r is not None:
        return r
    return _compile(key, tiers.kernel_text(key), None)


tiers.COMPILE = _compile
tiers.NUMBA = numba


def _kernel(src: str, inputs: List[Any], tier: bool, partner: str = "", what: str = "") -> str:
    """The key of kernel ``src``: compiled now (raises :class:`Refuse` when Numba
    cannot), or with ``tier`` written to the cache directory for :mod:`.tiers`."""
    key = "nbloop_" + hashlib.sha256(src.encode()).hexdigest()[:16]
    if tier:
        from ...codegen import cache

        cache.write_source(src, key)
        tiers.make(key, src, [t for _, t in inputs], partner)
        return key
    reg = _compile(key, src, [t for _, t in inputs])
    if reg.fn is None:
        raise Refuse(f"Numba could not compile this {what}: {reg.error}")
    return key


def _pairs(fdef: Any, x64: bool, tier: bool) -> Dict[int, Any]:
    """Forward/reverse loop pairs of grad (:mod:`.tapes`) planned and compiled
    together: statement index -> ``(role, tape, key, inputs, outputs, partner key)``,
    or ``("refused", reason)`` for both loops of a pair that keeps NumPy."""
    from . import tapes
    from .planner import plan

    body = fdef.body
    out: Dict[int, Any] = {}
    for f, r, name in tapes.find_pairs(body):
        try:
            sites = tapes.sites(body[f], body[r], name, body[r + 1 :])
            if isinstance(sites, str):
                raise Refuse(sites)
            tape = tapes.Tape(name, sites)
            plans = []
            for i, role in ((f, "push"), (r, "pop")):
                src, inputs, outputs = plan(
                    fdef, body[i], body[:i] + body[i + 1 :], x64, body[i + 1 :], tape, role
                )
                if role == "pop":
                    src = src.replace(
                        "import numpy as np\n", "import numpy as np\n\nNONE_CHECK = True\n", 1
                    )
                key = _kernel(src, inputs, tier, plans[0][2] if plans else "", f"{role} loop")
                plans.append((i, role, key, src, inputs, outputs))
        except Refuse as why:
            out[f] = out[r] = ("refused", f"{why}")
            continue
        except Exception as exc:  # noqa: BLE001 - something this translation does not know
            out[f] = out[r] = ("refused", f"{type(exc).__name__}: {exc}"[:120])
            continue
        (fi, _, fkey, *_), (ri, _, rkey, *_) = plans
        for i, role, key, src, inputs, outputs in plans:
            out[i] = (role, name, key, src, inputs, outputs, fkey, rkey)
    return out


def lower_loops(fdef: Any, filename: str, x64: bool, tier: bool = False) -> int:
    """Replace each top-level loop of ``fdef`` that is a region by a call of its
    compiled kernel (comments show the kernel, or why the loop kept NumPy); with
    ``tier`` (``numba_loops="auto"``) by a call of its :mod:`.tiers` region, which
    runs the NumPy loop, timed, until the region is hot. Returns the number of
    regions."""

    count = 0
    body = fdef.body
    pairs = _pairs(fdef, x64, tier)
    out: List[Any] = []
    for i, s in enumerate(body):
        if not isinstance(s, (gast.For, gast.While)):
            out.append(s)
            continue
        pair = pairs.get(i)
        if pair is not None and pair[0] == "refused":
            out.append(
                _comment(f"Numba: this loop and grad's other loop keep NumPy ({pair[1]})", s)
            )
            out.append(s)
            continue
        if pair is not None:
            role, tape, key, src, inputs, outputs, fkey, rkey = pair
        else:
            role, fkey, rkey = "", "", ""
            outside = body[:i] + body[i + 1 :]
            try:
                src, inputs, outputs = _plan_either(fdef, s, outside, x64, body[i + 1 :])
                key = _kernel(src, inputs, tier, what="loop")
            except Refuse as why:
                out.append(_comment(_kept(why), s))
                out.append(s)
                count += _inside(fdef, [(None, body[:i], body[i + 1 :])], s, x64, tier)
                continue
            except Exception:  # noqa: BLE001 - something this translation does not know
                out.append(s)
                continue
        count += 1
        out.extend(_comment(ln, s) for ln in _shown(key, src, role, tape if role else "", tier))
        out.extend(_call(s, key, inputs, outputs, role, tape if role else "", fkey, rkey, tier))
    fdef.body = out
    return count


def _plan_either(
    fdef: Any, loop: Any, outside: List[Any], x64: bool, after: Any = None, entry: Any = None
) -> tuple:
    """:func:`.planner.plan` of a scalarized kernel, else :func:`.arrays.plan_arrays`
    of a kernel over whole arrays; :class:`Refuse` with both reasons."""
    from .arrays import plan_arrays
    from .planner import plan

    try:
        return plan(fdef, loop, outside, x64, after, entry=entry)
    except Refuse as why:
        try:
            return plan_arrays(fdef, loop, outside, x64, after, entry=entry)
        except Refuse as also:
            why.arrays = f"{also}"
            raise why from None


def _kept(why: Refuse) -> str:
    """The comment over a loop that keeps NumPy: why (and why not in array mode)."""
    also = getattr(why, "arrays", "")
    return f"Numba: this loop keeps NumPy ({why})" + (f" (array mode: {also})" if also else "")


def _inside(fdef: Any, frames: List[Any], outer: Any, x64: bool, tier: bool) -> int:
    """The loops directly in the body of ``outer``, a loop that keeps NumPy, made
    regions where they can be (HMC's leapfrog ``fori_loop`` inside a ``scan`` over
    keys); those that keep NumPy too are looked into in turn. ``frames``: from the
    function's body in, ``(loop, statements before, statements after)`` around
    ``outer`` in each body. Returns the number of regions."""
    if _jumps(outer):
        return 0  # (a break or return: the paths below are not the only ones)

    count = 0
    body = outer.body
    out: List[Any] = []
    for j, s in enumerate(body):
        if not isinstance(s, (gast.For, gast.While)):
            out.append(s)
            continue
        chain = frames + [(outer, body[:j], body[j + 1 :])]
        try:
            bindings, live, none = _context(chain, s)
            src, inputs, outputs = _plan_either(fdef, s, bindings, x64, entry=(live, none))
            key = _kernel(src, inputs, tier, what="loop")
        except Refuse as why:
            out.append(_comment(_kept(why), s))
            out.append(s)
            count += _inside(fdef, chain, s, x64, tier)
            continue
        except Exception:  # noqa: BLE001 - something this translation does not know
            out.append(s)
            continue
        count += 1
        out.extend(_comment(ln, s) for ln in _shown(key, src, "", "", tier))
        out.extend(_call(s, key, inputs, outputs, "", "", "", "", tier))
    outer.body = out
    return count


def _jumps(loop: Any) -> bool:
    """``loop``'s body may leave a trip other than at its end."""
    return any(isinstance(n, (gast.Break, gast.Continue, gast.Return)) for n in gast.walk(loop))


def _loads(names: Any) -> Any:
    """A statement that reads ``names`` (for :func:`.planner._live_after`)."""
    elts = [gast.Name(n, gast.Load(), None, None) for n in sorted(names)]
    return gast.Expr(value=gast.Tuple(elts=elts, ctx=gast.Load()))


def _context(chain: List[Any], loop: Any) -> tuple:
    """For ``loop`` inside the loops of ``chain`` (frames as in :func:`_inside`,
    the function's body first): the statements whose bindings may reach it (the
    function's before the outermost loop, every enclosing body whole but the
    loops on the way in), the names live after it, and those maybe None at its
    entry (in its first trip, or after a trip of any enclosing loop)."""
    from .planner import _live_after, _live_in, _none_at_entry

    bindings = list(chain[0][1])
    for _, pre, post in chain[1:]:
        bindings += list(post) + list(pre)
    # (the first entry; then each enclosing loop's next trip, from its own body's end)
    none = _none_at_entry([st for _, pre, _ in chain for st in pre])
    for lvl in range(1, len(chain)):
        again = list(chain[lvl][2]) + [st for _, pre, _ in chain[lvl:] for st in pre]
        none |= _none_at_entry(again)
    # names read after it, level by level from the function's body in: after the
    # loop X of a level come the rest of that body, the enclosing loop's test,
    # then its next trip (the body up to X, X) or what follows the enclosing loop;
    # X passes on what it does not read (a fixed point, from nothing up)
    live = _live_after(list(chain[0][2]))
    for lvl in range(1, len(chain)):
        enclosing, pre, post = chain[lvl]
        x = chain[lvl + 1][0] if lvl + 1 < len(chain) else loop
        reads = _live_in(x) if x is loop else _names_loaded(x)
        head = _names_loaded(enclosing.test) if isinstance(enclosing, gast.While) else set()
        after_x: set = set()
        while True:
            again = _live_after(list(pre) + [_loads(reads | after_x)])
            new = _live_after(list(post) + [_loads(head | again | live)])
            if new == after_x:
                break
            after_x = new
        live = after_x
    return bindings, live, none


def _names_loaded(node: Any) -> set:
    return {
        n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    }


def _shown(key: str, src: str, role: str, tape: str, tier: bool) -> List[str]:
    """The comment lines over a region: its tier and its kernel's first lines."""
    what = {"push": "grad's forward loop", "pop": "grad's reverse loop"}.get(role, "this loop")
    how = "tiered: NumPy until hot, then compiled, nogil" if tier else "compiled, nogil"
    if role:
        what += f", its tape {tape} as typed stacks"
    if "\nARRAY_MODE = True\n" in src:
        what += " over whole arrays (array mode)"
    lines = [f"Numba region {key} ({how}): {what}, as"]
    text = src.splitlines()
    start = next((k for k, ln in enumerate(text) if ln.startswith("def kernel")), 3)
    shown = [ln for ln in text[start + 1 :] if ln.strip()]
    lines += ["  " + ln for ln in shown[:_SHOWN]]
    if len(shown) > _SHOWN:
        lines.append(
            f"  ... ({len(shown) - _SHOWN} more lines in {key}_{key[7:]}.py, srcjax's cache directory)"
        )
    return lines


def _call(
    s: Any,
    key: str,
    inputs: List[Any],
    outputs: List[str],
    role: str,
    tape: str,
    fkey: str,
    rkey: str,
    tier: bool,
) -> List[Any]:
    """The statements that call region ``key`` and keep the loop ``s`` for when
    it returns None (NumPy; with ``tier`` timed for :mod:`.tiers`)."""
    if tier:
        partner = {"push": rkey, "pop": fkey}.get(role, "")
        get = f"_nbr.tiered({key!r}{f', {partner!r}' if partner else ''})"
        relist = f"_nbr.tiered({fkey!r}).relist"
    else:
        get = f"_nbr.region({key!r})"
        relist = f"_nbr.region({fkey!r}).relist"
    stacks = f"_nbt_{fkey[-8:]}" if role else ""
    args = ", ".join(stacks if n == "nbtape" else n for n, _ in inputs)
    res = f"_nb_{key[-8:]}"
    targets = list(outputs)
    if role == "push":
        targets.append(stacks)
        text = f"{stacks} = None\n{res} = {get}({args})\nif {res} is None or not {res}[-1][0]:\n    pass\n"
    elif role == "pop":
        text = (
            f"{res} = {get}({args}) if {stacks} is not None else None\n"
            f"if {res} is None:\n    if {stacks} is not None:\n"
            f"        {tape}.extend({relist}({stacks}))\n"
        )
    else:
        text = f"{res} = {get}({args})\nif {res} is None:\n    pass\n"
    if targets:
        text += f"else:\n    {', '.join(targets)}{',' if len(targets) == 1 else ''} = {res}\n"
    stmts = N.parse_stmts(text)
    test = stmts[-1]
    # (the kernel failed on these arguments, or the region is cold: NumPy, as without Numba)
    loop = [s]
    if tier:
        clk = f"_nbc_{key[-8:]}"
        loop = N.parse_stmts(f"{clk} = _nbr.clock()") + [s]
        loop += N.parse_stmts(f"_nbr.tiered({key!r}).spent({clk})")
    if role == "pop":
        test.body.extend(loop)
    else:
        test.body = loop
    for node in list(stmts) + list(test.orelse) + loop:
        if node is s:
            continue
        gast.copy_location(node, s)
        node.sj_origin = getattr(s, "sj_origin", None)
        node.sj_file = getattr(s, "sj_file", None)
    return stmts
