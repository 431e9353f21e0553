"""Generated modules kept on disk across processes.

A transformation (``grad``, ``value_and_grad``, ``vmap``, a ``jit``
specialization) ends in :func:`srcjax.codegen.emit.load` of a source text plus
the objects that text names (its *bindings*). This module stores both in the
cache directory (:func:`srcjax.codegen.cache.cache_dir`, mode 0700) so that a
second process calling the same function skips the transformation.

An entry is found by a key over everything the generated text is a function of:

- what was asked (the transform and its options: ``argnums``, ``in_axes``,
  the specialization's shapes, dtypes and static values, ...);
- the transformed function: its file's whole text (an edited import changes
  what its names mean), its qualified name and first line;
- srcjax itself (version and the size and time of each of its files), NumPy's
  and Python's versions, and the global facts the generators read
  (:data:`srcjax.config` options such as ``jax_enable_x64``, the CPU count;
  jit adds the backend's thresholds and the device to its options).

Stored with the entry are the *global facts the code depends on*: each global or
closure name the normalizer resolved (``lookup_global``) and each dependency it
recorded (inlined callees, module-level flags), with a fingerprint of what it
found: a value for numbers and strings, the module and qualified name plus the
defining file's text hash for functions and classes. A second process checks
every one before it uses the entry; one that differs (a redefined helper, an
edited file, a changed flag) is a miss and the function is transformed again.
Bindings are stored as descriptions (a module name, a primitive's public name,
a literal, a user global) and resolved again (:mod:`.descriptions`); an object
that has no such description makes the transformation uncacheable (it stays in
memory only).

An entry file is JSON (never pickle) holding the SHA-256 of its payload and of
the generated text; a file whose hashes do not match is rejected and rewritten.
The payload also holds the module code compiled from the text (``marshal``, as
Python's own ``.pyc`` files hold it: code objects and constants, no calls made
when read; read only after the hashes matched; the key holds Python's version),
so a hit does not compile the text again.
``SRCJAX_DISK_CACHE=0`` turns the disk cache off.
"""

from __future__ import annotations

import base64
import hashlib
import json
import marshal
import os
import sys
import tempfile
import types
from typing import Any, Callable, Dict, List, Optional

from ..frontend import keyreuse
from ..frontend.normalize.normalizer import aval_guard_desc as _array_desc
from ..frontend.record import MISSING as _MISSING
from ..frontend.record import Recorder, note_load, note_lookup, recording
from . import cache
from .descriptions import (
    Uncacheable,
    _code_place,
    _emit,
    _file_text_sha,
    _fp,
    _read,
    _same,
    _scope,
    _scope_desc,
    describe,
    fingerprint,
    resolve,
)

__all__ = [
    "enabled",
    "key_for",
    "load",
    "store",
    "cached",
    "recording",
    "note_lookup",
    "note_load",
    "STATS",
]

#: bump when the entry layout or its meaning changes
FORMAT = 3

#: counters for tests and ``srcjax.source`` users: hits, misses, stores, rejected
#: (bad hash or unreadable), stale (a recorded fact differs), uncacheable
STATS: Dict[str, int] = {
    "hits": 0,
    "misses": 0,
    "stores": 0,
    "rejected": 0,
    "stale": 0,
    "uncacheable": 0,
}

#: why the last transformation was not stored (for tests and debugging)
LAST_REASON: List[str] = [""]


def enabled() -> bool:
    """Whether generated modules are kept on disk (``SRCJAX_DISK_CACHE`` is not 0)."""
    return os.environ.get("SRCJAX_DISK_CACHE", "1").strip().lower() not in ("0", "false", "no")


# ---------------------------------------------------------------------------- facts
_SRCJAX_FP: Optional[str] = None


def _srcjax_fingerprint() -> str:
    """srcjax's version and the size and modification time of each of its files
    (a development checkout changes without a new version)."""
    global _SRCJAX_FP
    if _SRCJAX_FP is None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        version = getattr(sys.modules.get("srcjax"), "__version__", "")
        parts = [str(version)]
        cache.py_file_stats(root, "", parts)
        _SRCJAX_FP = hashlib.sha256("".join(parts).encode()).hexdigest()
    return _SRCJAX_FP


def _global_facts() -> list:
    import numpy as np

    cfg = sys.modules["srcjax.config"]
    values = object.__getattribute__(cfg.config, "_values")
    try:
        ncpu = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        ncpu = os.cpu_count()
    return [
        FORMAT,
        _srcjax_fingerprint(),
        np.__version__,
        sys.version,
        sorted((k, repr(v)) for k, v in values.items()),
        bool(cfg.x64_enabled),
        ncpu,
    ]


# ---------------------------------------------------------------------------- keys
def _canon(x: Any) -> Any:
    """A JSON form of an option or a jit key (tuples, dtypes, types, literals)."""
    import numpy as np

    t = type(x)
    if t in (bool, int, str, type(None)):
        return x
    if t is float:
        return ["float", repr(x)]
    if t in (tuple, list):
        return [t.__name__] + [_canon(v) for v in x]
    if t is frozenset:
        return ["frozenset"] + sorted(json.dumps(_canon(v)) for v in x)
    if isinstance(x, np.dtype):
        return ["dtype", x.str]
    if isinstance(x, type):
        return ["type", describe(x)]
    if t is dict:
        return ["dict"] + sorted([json.dumps(_canon(k)), _canon(v)] for k, v in x.items())
    return ["obj", describe(x)]


def key_for(what: Any, target: Any) -> Optional[str]:
    """The cache key of transforming ``target`` as ``what`` says (a tuple of
    options and argument kinds), or None when it cannot be cached."""
    if not enabled() or not isinstance(target, types.FunctionType):
        return None
    try:
        code = target.__code__
        parts = [
            _global_facts(),
            _canon(what),
            code.co_filename,
            getattr(code, "co_qualname", target.__qualname__),
            code.co_firstlineno,
            _code_place(target),
            _file_text_sha(code.co_filename),
        ]
        blob = json.dumps(parts, separators=(",", ":"))
    except (Uncacheable, TypeError, ValueError) as exc:
        STATS["uncacheable"] += 1
        LAST_REASON[0] = str(exc)
        return None
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _entry_path(key: str, tag: str) -> str:
    import re

    safe = re.sub(r"[^A-Za-z0-9_]", "_", tag)[:60] or "fn"
    return os.path.join(cache.cache_dir(), f"{safe}_{key[:32]}.entry.json")


def _payload_sha(payload: dict) -> str:
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------- attributes
_ATTRS = (
    "__srcjax_renamed__",
    "__srcjax_user_names__",
    "__srcjax_user_none__",
    "__srcjax_backend__",
    "__srcjax_flat_result__",
)
_KNOWN = {"__srcjax_source__", "__srcjax_path__", "__srcjax_deps__", *_ATTRS}


def _deps_desc(deps: tuple, target: Any, covered: set) -> list:
    out = []
    for kind, where, key, obj in deps:
        if kind not in ("dict", "cell", "attr", "aval"):
            raise Uncacheable(f"dependency kind {kind}")
        if kind == "dict" and not isinstance(key, str):
            raise Uncacheable("a table dependency")
        fp = _array_desc(obj) if kind == "aval" else fingerprint(obj, covered)
        out.append([kind, _scope_desc(where, target), key, fp])
    return out


def _deps_live(descs: list, target: Any) -> Optional[tuple]:
    out = []
    for kind, sdesc, key, odesc in descs:
        where = _scope(sdesc, target)
        if where is _MISSING:
            return None
        cur = _read(where, key, builtin_fallback=False)
        if kind == "aval" and hasattr(cur, "shape") and hasattr(cur, "dtype"):
            cur = (type(cur), tuple(cur.shape), cur.dtype)  # the guard, on the array now
            if _array_desc(cur) != odesc:
                return None
        elif cur is _MISSING or not _same(cur, odesc):
            return None
        out.append((kind, where, key, cur))
    return tuple(out)


# ---------------------------------------------------------------------------- store/load
def store(key: Optional[str], target: Any, tag: str, rec: Optional[Recorder], fn: Any) -> None:
    """Write the entry for ``key`` from what ``rec`` saw while building ``fn``."""
    if key is None or rec is None:
        return
    try:
        payload = _payload(target, rec, fn)
    except Uncacheable as exc:
        STATS["uncacheable"] += 1
        LAST_REASON[0] = str(exc)
        return
    entry = {"format": FORMAT, "key": key, "payload": payload, "sha256": _payload_sha(payload)}
    path = _entry_path(key, tag)
    try:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(entry, fh, separators=(",", ":"))
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
        STATS["stores"] += 1
    except OSError:  # pragma: no cover - a full disk: the entry is only a speed-up
        pass


def _payload(target: Any, rec: Recorder, fn: Any) -> dict:
    if len(rec.loads) != 1:
        raise Uncacheable(f"{len(rec.loads)} generated modules")
    info = rec.loads[0]
    if info["fn"] is not fn:
        raise Uncacheable("the result is not the generated function")
    if info["user_globals"] is not target.__globals__:
        raise Uncacheable("globals of another function")
    closure = dict(zip(target.__code__.co_freevars, target.__closure__ or ()))
    cells = info["cells"]
    if set(cells) != set(closure) or any(cells[k] is not closure[k] for k in cells):
        raise Uncacheable("closure of another function")
    # defaults: none, or the target's own (jit sets them after loading)
    if fn.__defaults__ is None:
        dmode = None
    elif fn.__defaults__ is target.__defaults__:
        dmode = "target"
    else:
        raise Uncacheable("defaults of another function")
    if fn.__kwdefaults__ is None:
        kwmode = None
    elif fn.__kwdefaults__ is target.__kwdefaults__:
        kwmode = "target"
    else:
        raise Uncacheable("keyword defaults renamed")
    extra = set(vars(fn)) - _KNOWN
    if extra:
        raise Uncacheable(f"attributes {sorted(extra)}")
    bindings = {k: describe(v) for k, v in info["bindings"].items()}
    # the names the normalizer resolved, with fingerprints of what it found; a
    # cell of a function whose fingerprint is recorded (a nested helper the root
    # closes over) is covered by that fingerprint
    covered: set = set()
    found = []
    for scope, name, obj in rec.lookups:
        found.append((scope, name, _fp(obj, covered)))
    deps = _deps_desc(tuple(getattr(fn, "__srcjax_deps__", ())), target, covered)
    root_cells = {id(c) for c in target.__closure__ or ()}
    root_cells |= {id(c) for c in getattr(target.__globals__, "cells", {}).values()}
    lookups = []
    seen = set()
    for scope, name, fp in found:
        if isinstance(scope, types.CellType) and id(scope) not in root_cells:
            if id(scope) in covered:
                continue
        sdesc = _scope_desc(scope, target)
        item = json.dumps([sdesc, name, fp])
        if item not in seen:
            seen.add(item)
            lookups.append([sdesc, name, fp])
    attrs: Dict[str, Any] = {}
    renamed = getattr(fn, "__srcjax_renamed__", None)
    if renamed is not None:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in renamed.items()):
            raise Uncacheable("renamed parameters")
        attrs["__srcjax_renamed__"] = dict(renamed)
    for a in ("__srcjax_user_names__", "__srcjax_user_none__"):
        v = getattr(fn, a, None)
        if v is not None:
            if not all(isinstance(n, str) for n in v):
                raise Uncacheable(a)
            attrs[a] = sorted(v)
    backend = getattr(fn, "__srcjax_backend__", None)
    if backend is not None:
        if backend != "cpu":
            raise Uncacheable(f"backend {backend}")
        attrs["__srcjax_backend__"] = backend
    flat = getattr(fn, "__srcjax_flat_result__", None)
    if flat is not None:  # (a JSON template: jit's boundary builds the results by it)
        attrs["__srcjax_flat_result__"] = flat
    text = info["text"]
    # the modules that register what the text calls (vmap's rules in
    # primitives/batch_rules are imported by the transform, which a hit skips)
    modules = sorted(
        m
        for m in sys.modules
        if m.startswith(_REGISTERING) and m not in _HEAVY and sys.modules[m] is not None
    )
    return {
        "modules": modules,
        # the module code compiled from the text (marshal, as a .pyc holds it; the
        # key holds Python's version), so a hit does not compile the text again
        "code": base64.b64encode(marshal.dumps(info["code"])).decode("ascii"),
        "tag": info["tag"],
        "fn_name": info["fn_name"],
        "text": text,
        "text_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "defaults": dmode,
        "kwdefaults": kwmode,
        "bindings": bindings,
        "lookups": lookups,
        "deps": deps,
        "attrs": attrs,
        "warnings": [list(w) for w in rec.warnings],
    }


def load(key: Optional[str], target: Any, tag: str) -> Any:
    """The function stored under ``key`` for ``target``, or None (no entry, a
    rejected file, a recorded fact that changed)."""
    if key is None:
        return None
    path = _entry_path(key, tag)
    try:
        with open(path, encoding="utf-8") as fh:
            entry = json.load(fh)
    except FileNotFoundError:
        STATS["misses"] += 1
        return None
    except (OSError, ValueError):
        STATS["rejected"] += 1
        return None
    try:
        payload = entry["payload"]
        ok = (
            entry.get("format") == FORMAT
            and entry.get("key") == key
            and _payload_sha(payload) == entry.get("sha256")
            and hashlib.sha256(payload["text"].encode("utf-8")).hexdigest()
            == payload["text_sha256"]
        )
    except (KeyError, TypeError, AttributeError):
        ok = False
    if not ok:
        STATS["rejected"] += 1
        return None
    try:
        fn = _revive(payload, target)
    except (KeyError, TypeError, ValueError, IndexError, SyntaxError, ImportError, EOFError):
        STATS["rejected"] += 1
        return None
    if fn is None:
        STATS["stale"] += 1
        return None
    STATS["hits"] += 1
    return fn


_REGISTERING = (
    "srcjax.primitives.",
    "srcjax.transforms.",
    "srcjax.random",
    "srcjax.scipy",
    "srcjax.nn",
    "srcjax.numpy",
    "srcjax.lax",
    "srcjax.ops",
)
_HEAVY = {"srcjax.random._numba"}  # (loaded when used: it compiles kernels)


def _revive(payload: dict, target: Any) -> Any:
    emit = _emit()
    # the registering modules its build had loaded and this process has not:
    # imported at the first name a namespace or a binding does not find
    emit.defer_imports(
        [m for m in payload["modules"] if m not in sys.modules and m.startswith(_REGISTERING)]
    )

    for sdesc, name, fp in payload["lookups"]:
        scope = _scope(sdesc, target)
        if scope is _MISSING:
            return None
        cur = _read(scope, name, builtin_fallback=True)
        if cur is _MISSING:
            if fp != ["missing"]:
                return None
        elif not _same(cur, fp):
            return None
    deps = _deps_live(payload["deps"], target)
    if deps is None:
        return None
    bindings = {}
    for k, d in payload["bindings"].items():
        v = resolve(d)
        if v is _MISSING and emit.import_pending():
            v = resolve(d)
        if v is _MISSING:
            return None
        bindings[k] = v
    cells = dict(zip(target.__code__.co_freevars, target.__closure__ or ()))
    defaults = target.__defaults__ if payload["defaults"] == "target" else None
    kwdefaults = target.__kwdefaults__ if payload["kwdefaults"] == "target" else None
    code = marshal.loads(base64.b64decode(payload["code"], validate=True))
    if not isinstance(code, types.CodeType):
        raise ValueError("the stored code is not a code object")
    with recording(active=False):
        fn = emit.load(
            payload["text"],
            payload["fn_name"],
            target.__globals__,
            cells,
            bindings,
            payload["tag"],
            defaults,
            code,
        )
    fn.__kwdefaults__ = kwdefaults
    fn.__srcjax_deps__ = deps
    attrs = payload["attrs"]
    if "__srcjax_renamed__" in attrs:
        fn.__srcjax_renamed__ = dict(attrs["__srcjax_renamed__"])
    for a in ("__srcjax_user_names__", "__srcjax_user_none__"):
        if a in attrs:
            setattr(fn, a, frozenset(attrs[a]))
    if "__srcjax_backend__" in attrs:
        fn.__srcjax_backend__ = attrs["__srcjax_backend__"]
    if "__srcjax_flat_result__" in attrs:
        fn.__srcjax_flat_result__ = attrs["__srcjax_flat_result__"]
    # the warnings its build gave (the key-reuse check runs while normalizing,
    # which a hit skips)
    for item in payload.get("warnings", ()):
        keyreuse.warn(item)
    return fn


def cached(what: Any, target: Any, tag: str, build: Callable[[], Any]) -> Any:
    """``build()``'s function for ``target``, from the disk cache when an entry
    for ``what`` is valid here, else built and stored."""
    with cache.gc_paused():
        key = key_for(what, target)
        if key is not None:
            fn = load(key, target, tag)
            if fn is not None:
                return fn
        with recording(active=key is not None) as rec:
            fn = build()
        store(key, target, tag, rec, fn)
        return fn
