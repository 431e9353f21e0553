"""Descriptions of the objects generated code names, for the disk cache
(:mod:`.diskcache`).

:func:`describe` gives a JSON description of an object that :func:`resolve`
turns back into it in another process (a literal, a module, a primitive or
its implementation, a dtype, a NumPy scalar or ufunc, a function or class by
its module and qualified name, with its file's text hash for a user's);
:func:`fingerprint` also describes what no other process can look up by name
(a local function by its code, file, closure and defaults; an array by shape
and dtype), equal only for an equivalent object. Scopes (a module's globals, a
closure cell) where the normalizer looked a name up are described and read
again (``_scope_desc``, ``_scope``, ``_read``). An object with no description
raises :class:`Uncacheable`.
"""

from __future__ import annotations

import builtins
import hashlib
import math
import os
import sys
import types
from typing import Any, Dict, Optional

from ..frontend.record import MISSING as _MISSING


def _emit() -> Any:
    # (loaded modules read at run time, not imported here: emit and the registry
    # sit in the import cycle of the transforms, which import this module)
    return sys.modules["srcjax.codegen.emit"]


def _registry() -> Any:
    return sys.modules["srcjax.primitives.registry"]


class Uncacheable(Exception):
    """The transformation depends on something with no description across processes."""


_FILE_SHA: Dict[str, tuple] = {}


def _file_text_sha(filename: str) -> str:
    """SHA-256 of the file's text as the transforms read it (linecache). The
    digest is kept with linecache's list of lines it was computed from: while
    linecache holds that same list (``checkcache`` replaces it when the file's
    size or time changes), the text is the same, and is not joined and hashed
    again (0.1-0.3 ms for a 70 KB file, several times per disk-cache hit)."""
    import linecache

    linecache.checkcache(filename)
    lines = linecache.getlines(filename)
    if not lines:
        raise Uncacheable(f"no source text for {filename}")
    known = _FILE_SHA.get(filename)
    if known is not None and known[2] is lines and known[3] == len(lines):
        return known[1]
    text = "".join(lines)
    key = (len(text), hash(text))
    if known is not None and known[0] == key:
        digest = known[1]
    else:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    _FILE_SHA[filename] = (key, digest, lines, len(lines))
    return digest


_LITERALS = (bool, int, float, str, type(None), complex, bytes)


def _literal(v: Any) -> list:
    t = type(v)
    if t is float and not math.isfinite(v):
        return ["v", "float", repr(v)]
    return ["v", t.__name__, repr(v)]


def _from_literal(desc: list) -> Any:
    import ast

    kind, text = desc[1], desc[2]
    if kind == "float":
        return float(text)
    if kind == "complex":
        return complex(text)
    return ast.literal_eval(text)


def _resolve_path(modname: str, qualname: str) -> Any:
    mod = sys.modules.get(modname)
    if mod is None:
        return _MISSING
    obj: Any = mod
    for part in qualname.split("."):
        obj = getattr(obj, part, _MISSING)
        if obj is _MISSING:
            return _MISSING
    return obj


def _is_library_file(path: str) -> bool:
    import sysconfig

    p = os.path.abspath(path)
    roots = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return any(r and p.startswith(os.path.abspath(r) + os.sep) for r in roots)


def _code_place(obj: Any) -> list:
    """A function's first line and a hash of its bytecode and names: two functions
    of one qualified name in one file (``global f`` then ``def f`` inside a
    function: a redefinition) differ here."""
    code = getattr(obj, "__code__", None)
    if code is None:
        return []
    h = hashlib.sha256(code.co_code)
    h.update(repr((code.co_names, code.co_varnames, code.co_freevars)).encode())
    consts = [c for c in code.co_consts if type(c) in _LITERALS]
    h.update(repr(consts).encode())
    # columns: two lambdas on one line (`f, g = lambda x: ..., lambda x: ...`)
    cols = None
    if hasattr(code, "co_positions"):
        cols = next((p[2:] for p in code.co_positions() if p[2] is not None), None)
    return [code.co_firstlineno, h.hexdigest()[:16], list(cols) if cols else None]


def describe(obj: Any) -> list:
    """A JSON description of ``obj`` that :func:`resolve` turns back into it in
    another process (also its fingerprint: equal descriptions, same meaning).
    Raises :class:`Uncacheable`."""
    registry, emit = _registry(), _emit()

    t = type(obj)
    if t in _LITERALS:
        return _literal(obj)
    if t is tuple:
        return ["t", [describe(v) for v in obj]]
    if isinstance(obj, emit.UserGlobal):
        return ["U", obj.name]
    if isinstance(obj, emit._RegistryNamespace):
        return ["ns", obj.__name__]
    if isinstance(obj, types.ModuleType):
        if sys.modules.get(obj.__name__) is not obj:
            raise Uncacheable(f"module {obj.__name__} is not in sys.modules")
        return ["m", obj.__name__]
    prim = registry.lookup_callable(obj) if callable(obj) else None
    if prim is not None:
        if obj is prim:
            return ["p", prim.public, "prim"]
        if obj is prim.impl:
            return ["p", prim.public, "impl"]
    import numpy as np

    if isinstance(obj, np.dtype):
        return ["dtype", obj.str, str(obj)]
    if isinstance(obj, np.generic) and obj.dtype.kind in "biufc":
        return ["np", obj.dtype.str, repr(obj.item())]
    if isinstance(obj, np.ufunc):
        if getattr(np, obj.__name__, None) is obj:
            return ["ufunc", obj.__name__]
        raise Uncacheable(f"ufunc {obj!r}")
    modname = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if (
        isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, type))
        and isinstance(modname, str)
        and isinstance(qualname, str)
        and "<" not in qualname
        and _resolve_path(modname, qualname) is obj
    ):
        if modname == "srcjax" or modname.startswith("srcjax."):
            return ["s", modname, qualname]
        if isinstance(obj, types.BuiltinFunctionType):
            return ["x", modname, qualname, ""]
        filename = getattr(getattr(obj, "__code__", None), "co_filename", None)
        if filename is None:
            filename = getattr(sys.modules.get(modname), "__file__", None) or ""
        if not filename or _is_library_file(filename):
            top = sys.modules.get(modname.split(".")[0])
            return ["x", modname, qualname, str(getattr(top, "__version__", ""))]
        return ["f", modname, qualname, _file_text_sha(filename), _code_place(obj)]
    if isinstance(obj, types.BuiltinFunctionType) and getattr(builtins, obj.__name__, None) is obj:
        return ["x", "builtins", obj.__name__, ""]
    raise Uncacheable(f"no description for {t.__name__}")


def fingerprint(obj: Any, covered: Optional[set] = None) -> list:
    """What :func:`describe` says, and for objects no other process can look up
    by name a description that is equal only for an equivalent object: a local
    function by its code's place, its file's text and the fingerprints of its
    closure and defaults (the ids of those cells go to ``covered``); an array by
    shape and dtype (generated code reads arrays live, never their values)."""
    try:
        return describe(obj)
    except Uncacheable:
        pass
    import numpy as np

    if isinstance(obj, types.FunctionType):
        code = obj.__code__
        filename = code.co_filename
        mod = getattr(obj, "__module__", "") or ""
        sha = "srcjax" if mod.startswith("srcjax") else _file_text_sha(filename)
        closure = []
        for fv, cell in zip(code.co_freevars, obj.__closure__ or ()):
            try:
                contents = cell.cell_contents
            except ValueError:
                contents = _MISSING
            if covered is not None:
                covered.add(id(cell))
            if contents is obj:
                closure.append([fv, ["self"]])
            else:
                closure.append([fv, _fp(contents, covered)])
        defaults = [fingerprint(d, covered) for d in obj.__defaults__ or ()]
        return ["fn", filename, obj.__qualname__, _code_place(obj), sha, closure, defaults]
    if isinstance(obj, np.ndarray):
        return ["arr", list(obj.shape), obj.dtype.str]
    if type(obj) is tuple:
        return ["t", [fingerprint(v, covered) for v in obj]]
    raise Uncacheable(f"no description for {type(obj).__name__}")


def resolve(desc: list) -> Any:
    """The object ``desc`` describes here and now, or ``_MISSING``."""
    registry, emit = _registry(), _emit()

    kind = desc[0]
    if kind == "v":
        return _from_literal(desc)
    if kind == "t":
        items = [resolve(d) for d in desc[1]]
        return _MISSING if any(i is _MISSING for i in items) else tuple(items)
    if kind == "U":
        return emit.UserGlobal(desc[1])
    if kind == "ns":
        parts = desc[1].split(".")
        if parts[:2] != ["srcjax", "generated"] or len(parts) < 3:
            return _MISSING
        obj: Any = emit.namespaces().get(parts[2], _MISSING)
        for p in parts[3:]:
            obj = getattr(obj, p, _MISSING)
        return obj
    if kind == "m":
        name = desc[1]
        mod = sys.modules.get(name)
        if mod is None and (name == "srcjax" or name.startswith("srcjax.")):
            import importlib  # (one of srcjax's own modules, not loaded yet here)

            try:
                mod = importlib.import_module(name)
            except ImportError:
                return _MISSING
        return _MISSING if mod is None else mod
    if kind == "p":
        prim = registry.REGISTRY.get(desc[1])
        if prim is None:
            return _MISSING
        return prim if desc[2] == "prim" else prim.impl
    if kind == "dtype":
        import numpy as np

        return np.dtype(desc[1])
    if kind == "np":
        import numpy as np

        return np.dtype(desc[1]).type(_from_literal(["v", "", desc[2]]))
    if kind == "ufunc":
        import numpy as np

        return getattr(np, desc[1], _MISSING)
    if kind in ("s", "x", "f"):
        obj = _resolve_path(desc[1], desc[2])
        if obj is _MISSING:
            return _MISSING
        try:
            same = describe(obj) == desc
        except Uncacheable:
            same = False
        return obj if same else _MISSING
    return _MISSING


def _same(obj: Any, desc: list) -> bool:
    try:
        return fingerprint(obj) == desc
    except Uncacheable:
        return False


# scopes: where a name was looked up
def _scope_desc(scope: Any, target: Any) -> list:
    if isinstance(scope, dict):
        if scope is target.__globals__:
            return ["root"]
        if scope is getattr(target.__globals__, "user_globals", None):
            return ["user"]  # generated code transformed again: the user's module
        name = scope.get("__name__")
        mod = sys.modules.get(name) if isinstance(name, str) else None
        if mod is not None and vars(mod) is scope:
            return ["mod", name]
        raise Uncacheable("a dict that is no module's globals")
    if isinstance(scope, types.CellType):
        code = target.__code__
        for fv, cell in zip(code.co_freevars, target.__closure__ or ()):
            if cell is scope:
                return ["cell", fv]
        # generated code transformed again: the user function's cells it reads
        for fv, cell in getattr(target.__globals__, "cells", {}).items():
            if cell is scope:
                return ["gcell", fv]
        raise Uncacheable("a closure cell of another function")
    if isinstance(scope, (types.ModuleType, type)):
        return ["obj", describe(scope)]
    raise Uncacheable(f"scope {type(scope).__name__}")


def _scope(desc: list, target: Any) -> Any:
    kind = desc[0]
    if kind == "root":
        return target.__globals__
    if kind == "user":
        return getattr(target.__globals__, "user_globals", _MISSING)
    if kind == "mod":
        mod = sys.modules.get(desc[1])
        return _MISSING if mod is None else vars(mod)
    if kind == "cell":
        code = target.__code__
        for fv, cell in zip(code.co_freevars, target.__closure__ or ()):
            if fv == desc[1]:
                return cell
        return _MISSING
    if kind == "gcell":
        cell = getattr(target.__globals__, "cells", {}).get(desc[1])
        return _MISSING if cell is None else cell
    if kind == "obj":
        return resolve(desc[1])
    return _MISSING


def _read(scope: Any, name: Any, builtin_fallback: bool) -> Any:
    if isinstance(scope, types.CellType):
        try:
            return scope.cell_contents
        except ValueError:
            return _MISSING
    if isinstance(scope, dict):
        try:
            return scope[name]
        except KeyError:
            pass
        if builtin_fallback:
            return getattr(builtins, name, _MISSING)
        return _MISSING
    return getattr(scope, name, _MISSING)


def _fp(obj: Any, covered: Optional[set] = None) -> list:
    return ["missing"] if obj is _MISSING else fingerprint(obj, covered)
