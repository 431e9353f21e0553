"""Static PRNG key-reuse check on normalized code.

JAX users' most common PRNG mistake is drawing twice from one key::

    x = random.normal(key, (3,))
    y = random.uniform(key, (3,))   # the same random bits as x

srcjax sees the whole function when it transforms it, so it finds such reuse
before anything runs: a walk over the normalized body (A-normal form, user
helpers inlined, lax loops lowered to Python loops) follows which *value* each
name holds and records every random call's consumption of its key. A key value
consumed twice -- two draws, a draw and a ``split``, two ``split``s, a
``fold_in`` with the same data twice -- is reuse. ``split``/``fold_in`` give new
values (so ``key, sub = random.split(key)`` moves on), items of a split or of a
list of keys are told apart by their constant index, ``random.clone(key)`` is a
new key (JAX's way of saying the reuse is meant), and the two branches of an
``if`` are alternatives. A loop body is walked twice, as two iterations: a key
from outside the loop consumed inside without being re-split there is reused
on every iteration, while ``fold_in(key, i)`` with the loop index is not.

The option ``srcjax.config.update("key_reuse_check", "warn" | "error" | "off")``
(default ``"warn"``) picks a :class:`KeyReuseWarning` (once per pair of
places), a :class:`KeyReuseError`, or nothing.

This follows the rule of JAX's dynamic checker (``jax_debug_key_reuse``,
https://docs.jax.dev/en/latest/jax.experimental.key_reuse.html): each key is
consumed at most once, except that fold_in with different data is allowed.
"""

from __future__ import annotations

import itertools
import os
import warnings
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Set, Tuple

import gast

from ..errors import Location, SrcjaxError
from .record import note_warning

__all__ = ["KeyReuseWarning", "KeyReuseError", "check"]


class KeyReuseWarning(UserWarning):
    """One PRNG key consumed by two random calls (see :mod:`srcjax.frontend.keyreuse`)."""


class KeyReuseError(SrcjaxError, ValueError):
    """One PRNG key consumed by two random calls, with ``key_reuse_check="error"``."""


#: random functions that do not consume their key: constructors, views, clone
_NOT_CONSUMING = {
    "random.PRNGKey",
    "random.key",
    "random.key_data",
    "random.wrap_key_data",
    "random.key_impl",
    "random.key_dtype",
    "random.clone",
}
#: results that are the same key as their argument (a change of representation)
_SAME_KEY = {"random.key_data", "random.wrap_key_data"}

_ids = itertools.count()


def _fresh() -> int:
    return next(_ids)


@dataclass
class _Use:
    loc: Optional[Location]
    what: str  # "normal", "split", ...
    fold: Any = None  # the data identity of a fold_in, else None
    stmt: Any = None  # (to tell one use seen in two passes of a loop)
    site: Any = None  # the user's call of srcjax code this use is inlined from


class _State:
    def __init__(self) -> None:
        self.env: Dict[str, Any] = {}  # name -> value id
        self.uses: Dict[Any, List[_Use]] = {}  # value id -> its consumptions
        self.packs: Dict[Any, List[Any]] = {}  # value id of a display -> its items' ids

    def copy(self) -> "_State":
        s = _State()
        s.env = dict(self.env)
        s.uses = {k: list(v) for k, v in self.uses.items()}
        s.packs = dict(self.packs)
        return s


@dataclass
class Finding:
    """A key consumed at ``second`` after ``first`` (``loop``: the same place, on
    two iterations of a loop)."""

    first: _Use
    second: _Use
    loop: bool

    def message(self) -> str:
        a, b = self.first, self.second
        if self.loop:
            return (
                f"PRNG key reused: random.{b.what} consumes a key from outside the loop "
                "on every iteration (it is not split inside the loop), so every "
                "iteration draws the same random numbers"
            )
        where = a.loc.short() if a.loc is not None else "an earlier line"
        return (
            f"PRNG key reused: random.{b.what} consumes the key that random.{a.what} "
            f"already consumed at {where}, so both draw from the same random bits"
        )

    hint = (
        "split the key first (key, sub = random.split(key)) and give each call its "
        "own key; random.clone(key) marks a reuse that is meant; "
        'srcjax.config.update("key_reuse_check", "off") turns this check off'
    )


class _Walker:
    def __init__(self) -> None:
        self.findings: List[Finding] = []
        self._seen: Set[Tuple[int, int]] = set()

    # ------------------------------------------------------------------ values
    def _value(self, st: _State, node: Any) -> Any:
        if isinstance(node, gast.Name):
            # a name not assigned yet is a parameter or a global: one value on
            # every path
            return st.env.get(node.id, ("free", node.id))
        return None

    def _assign(self, st: _State, target: Any, vid: Any) -> None:
        if isinstance(target, gast.Name):
            st.env[target.id] = _fresh() if vid is None else vid
        else:
            for n in gast.walk(target):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                    st.env[n.id] = _fresh()

    def _consume(self, st: _State, stmt: Any, vid: Any, use: _Use) -> None:
        prior = st.uses.setdefault(vid, [])
        for p in prior:
            if p.fold is not None and use.fold is not None and p.fold != use.fold:
                continue  # fold_in with other data: another key
            key = (id(p.stmt), id(stmt))
            if p.site is not None and p.site is use.site:
                # both inside one inlined piece of srcjax code (a grad's generated
                # code inside jit): checked where its source was written
                break
            if key not in self._seen:
                self._seen.add(key)
                self.findings.append(Finding(p, use, loop=p.stmt is stmt))
            break
        prior.append(use)

    # ------------------------------------------------------------------ statements
    def block(self, st: _State, body: List[Any]) -> _State:
        for s in body:
            st = self.stmt(st, s)
        return st

    def stmt(self, st: _State, s: Any) -> _State:
        if isinstance(s, gast.Assign):
            vid = self._rhs(st, s, s.value)
            for t in s.targets:
                self._assign(st, t, vid)
            return st
        if isinstance(s, gast.Expr):
            self._rhs(st, s, s.value)
            return st
        if isinstance(s, gast.If):
            a = self.block(st.copy(), s.body)
            b = self.block(st.copy(), s.orelse)
            return _merge(a, b)
        if isinstance(s, (gast.For, gast.While)):
            before = st.copy()
            for _ in range(2):  # two iterations
                if isinstance(s, gast.For):
                    self._assign(st, s.target, None)
                st = self.block(st, s.body)
            st = _merge(before, st)  # (it may run no iteration)
            return self.block(st, s.orelse)
        for field_name in ("body", "orelse", "finalbody"):
            inner = getattr(s, field_name, None)
            if isinstance(inner, list):
                st = self.block(st, inner)
        return st

    def _rhs(self, st: _State, stmt: Any, value: Any) -> Any:
        op = getattr(stmt, "sj_op", None)
        if op is None:
            return None
        if op.kind == "copy" and isinstance(value, gast.Name):
            return self._value(st, value)
        if op.kind == "pack":
            vid = _fresh()
            st.packs[vid] = [self._value(st, e) for e in op.elts]
            return vid
        if op.kind != "prim" or op.prim is None:
            return None
        public = op.prim.public
        if op.prim.part == "item":
            return self._item(st, op.bound.get("x"), op.bound.get("idx"))
        if public in _SAME_KEY:
            arg = op.bound.get("key_data" if public == "random.wrap_key_data" else "keys")
            return self._value(st, arg)
        if op.prim.kind != "random" or public in _NOT_CONSUMING:
            return None
        key = op.bound.get("key")
        vid = self._value(st, key)
        if vid is None:
            return None
        what = public.split(".", 1)[1]
        fold = None
        if public == "random.fold_in":
            data = op.bound.get("data")
            if isinstance(data, gast.Constant):
                fold = ("const", repr(data.value))
            else:
                dv = self._value(st, data)
                fold = ("value", dv if dv is not None else _fresh())
        loc = Location.of(stmt)
        site = getattr(stmt, "sj_user_call", None)
        if site is not None:  # inside srcjax's random.beta: the user's call of it
            loc = site[0]
            if site[1] is not None and site[1].startswith("random."):
                what = site[1].split(".", 1)[1]
        self._consume(st, stmt, vid, _Use(loc, what, fold, stmt, site))
        return None

    def _item(self, st: _State, base: Any, idx: Any) -> Any:
        bid = self._value(st, base)
        if bid is None or not isinstance(idx, gast.Constant) or not isinstance(idx.value, int):
            return None
        items = st.packs.get(bid)
        if items is not None and -len(items) <= idx.value < len(items):
            item = items[idx.value]
            return item if item is not None else None
        return ("item", bid, idx.value)


def _merge(a: _State, b: _State) -> _State:
    """The state after one of two paths ran: names that differ hold a new value;
    a key consumed on either path counts as consumed."""
    out = _State()
    for name in set(a.env) | set(b.env):
        va, vb = a.env.get(name), b.env.get(name)
        out.env[name] = va if va == vb else _fresh()
    for vid in set(a.uses) | set(b.uses):
        seen: List[_Use] = []
        for u in a.uses.get(vid, []) + b.uses.get(vid, []):
            if all(u.stmt is not v.stmt for v in seen):
                seen.append(u)
        out.uses[vid] = seen
    out.packs = {**a.packs, **b.packs}
    return out


def check(fdef: Any) -> List[Finding]:
    """The key reuses in normalized function ``fdef`` (a gast FunctionDef)."""
    w = _Walker()
    w.block(_State(), fdef.body)
    return w.findings


_REPORTED: Set[Tuple[str, str]] = set()


def report(fdef: Any) -> None:
    """Check ``fdef`` and act on the option ``key_reuse_check``: warn (once per pair
    of places), raise :class:`KeyReuseError`, or nothing for ``"off"``."""
    from ..config import config

    mode = config.read("key_reuse_check")
    if mode == "off":
        return
    try:
        found = check(fdef)
    except Exception:  # noqa: BLE001 - a construct the walk does not know: no verdict
        # (a lint must never stop a transform that would run; tests/test_keyreuse.py
        # covers the constructs normalized code has)
        return
    for f in found:
        if mode == "error":
            raise KeyReuseError(f.message(), f.second.loc, f.hint)
        loc = f.second.loc
        item = [
            f"{f.message()}\nhint: {f.hint}",
            None if loc is None else loc.filename,
            None if loc is None else loc.lineno,
            repr(f.first.loc),
        ]
        note_warning(item)  # kept with a disk-cache entry (a hit skips this check)
        warn(item)


def warn(item: list) -> None:
    """Issue one key-reuse warning ``[text, filename, lineno, first use]`` once per
    pair of places (also when a disk-cache hit gives it again)."""
    text, filename, lineno, first = item
    key = (first, f"{filename}:{lineno}")
    if key in _REPORTED:
        return
    _REPORTED.add(key)
    if filename is None:
        warnings.warn(text, KeyReuseWarning, stacklevel=3)
    else:
        # shown at the second use (Python prints its file:line and source line)
        module = os.path.splitext(os.path.basename(filename))[0]
        warnings.warn_explicit(text, KeyReuseWarning, filename, lineno, module)
