"""IR -> source text -> a live Python function, backed by a real file.

- :func:`render` prints a gast ``FunctionDef`` with a trailing ``# file.py:LINE``
  comment on every statement that comes from user code, and section comments.
- :func:`load` writes the text to the per-user cache directory (see
  :mod:`srcjax.codegen.cache`), registers it with :mod:`linecache` so tracebacks,
  ``pdb`` and ``inspect.getsource`` see it, compiles it, and builds the function
  with globals that read the user's *live* module globals and closure cells
  (nothing is copied: a later rebinding of a global is seen) behind srcjax's own
  namespaces (``jnp``, ``ad``, ``nn``, ``special``, ``lax``, ``random``).
"""

from __future__ import annotations

import ast as _ast
import builtins
import importlib
import itertools
import linecache
import os
import re
import types
from typing import Any, Dict, List, Optional

import gast

from .._array import unwrap_tree
from ..errors import ORIGINS
from ..frontend import hooks as _frontend_hooks
from ..frontend import nodes as N
from ..frontend import record as _record
from ..frontend.normalize.anf import UserGlobal
from . import cache

_config = importlib.import_module("srcjax.config")  # the module (srcjax.config is the object)

__all__ = ["render", "load", "GeneratedGlobals", "namespaces", "where", "UserGlobal"]

_COMMENT_COL = 44
_BUILTINS = vars(builtins)


class GeneratedGlobals(dict):
    """Globals of a generated function: srcjax namespaces and bindings first, then
    the user's live closure cells and module globals (``aliases``: generated name
    -> the user's name, see :class:`UserGlobal`)."""

    __slots__ = ("user_globals", "cells", "aliases")

    def __init__(
        self,
        base: Dict[str, Any],
        user_globals: dict,
        cells: Dict[str, Any],
        aliases: Optional[Dict[str, str]] = None,
    ):
        super().__init__(base)
        self.user_globals = user_globals
        self.cells = cells
        self.aliases = aliases or {}

    def __contains__(self, key: object) -> bool:
        # ``name in fn.__globals__`` (the transforms' name resolution) sees what a
        # lookup finds, so a transform of generated code (vmap of a gradient)
        # resolves the user's globals as one of the user's code does
        if dict.__contains__(self, key):
            return True
        key = self.aliases.get(key, key)
        return key in self.cells or key in self.user_globals

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __missing__(self, key: str) -> Any:
        key = self.aliases.get(key, key)
        cell = self.cells.get(key)
        if cell is not None:
            try:
                return unwrap_tree(cell.cell_contents)
            except ValueError:
                pass
        # generated code computes on buffers: a user's Array (or a container of
        # them) is read as its buffer
        return unwrap_tree(self.user_globals[key])


_MISSING = object()


class _RegistryNamespace(types.ModuleType):
    """A namespace of generated code (``jnp``, ``ad`` ...): the public module's
    attributes, with every primitive replaced by its NumPy implementation, so a
    call in generated code costs what the NumPy call costs. (Resolution maps an
    implementation back to its primitive.)

    Filled on demand: a name is looked up at its first use (a primitive
    registered under ``<prefix><name>``, else a nested namespace when the
    registry has names below it, else the public module's attribute) and kept
    as a plain attribute, so later lookups are attribute hits. Building every
    namespace whole (~800 primitives) was 1.8 ms of a disk-cache hit's first call."""

    _prefix = ""
    #: the public module it mirrors (None for ``ad`` and ``custom``)
    _module: Any = None

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(f"{self.__name__} has no attribute {attr!r}")
        from ..primitives import registry

        full = self._prefix + attr
        prim = registry.REGISTRY.get(full)
        if prim is None and import_pending():
            prim = registry.REGISTRY.get(full)
        if prim is not None:
            value = prim.impl
        else:
            module = self._module
            value = _MISSING if module is None else getattr(module, attr, _MISSING)
            below = full + "."
            if any(k.startswith(below) for k in registry.REGISTRY):
                generated = isinstance(value, types.ModuleType) and value.__name__.startswith(
                    "srcjax.generated"
                )
                if not generated:
                    sub = value if isinstance(value, types.ModuleType) else None
                    value = _fast_namespace(full, sub)
            elif value is _MISSING:
                raise AttributeError(f"{self.__name__} has no attribute {attr!r}")
        setattr(self, attr, value)  # next lookups are plain attribute hits
        return value


def _fast_namespace(name: str, module: Any = None) -> types.ModuleType:
    """The namespace generated code sees as ``name`` (``jnp``, ``ad`` ...),
    mirroring public ``module`` (see :class:`_RegistryNamespace`)."""
    ns = _RegistryNamespace(f"srcjax.generated.{name}")
    ns._prefix = name + "."
    ns._module = module
    return ns


#: srcjax modules that register primitives a disk-cache entry's code may name,
#: not imported yet in this process (:func:`defer_imports`)
_PENDING: List[str] = []


def defer_imports(names: List[str]) -> None:
    """Import the srcjax modules ``names`` (that register primitives) when a
    name is first not found (:func:`import_pending`), not now: a disk-cache hit
    lists every registering module its build had loaded, and its code rarely
    names one of those not loaded here."""
    for n in names:
        if n not in _PENDING:
            _PENDING.append(n)


def import_pending() -> bool:
    """Import the modules :func:`defer_imports` left; whether there were any."""
    if not _PENDING:
        return False
    names = list(_PENDING)
    del _PENDING[:]
    for n in names:
        try:
            importlib.import_module(n)
        except ImportError:  # (then the name is not found, as without the import)
            pass
    return True


_NAMESPACES: Optional[Dict[str, Any]] = None

#: name -> the public module (srcjax.numpy as ``jnp`` ...) whose namespace
#: generated code binds under that name. The public modules fill it at the end of
#: their import (:func:`register_namespace`), so this layer imports none of them.
_PUBLIC: Dict[str, types.ModuleType] = {}
#: the order of the common namespaces in :func:`namespaces` (``np``, ``ad`` and
#: ``custom`` are codegen's own)
_ORDER = ("jnp", "np", "ad", "custom", "nn", "special", "random", "lax")
#: names a backend binds in its generated code to one fixed object (the CPU
#: runtime as ``_rt``), filled by that module at its import (:func:`register_bound_name`)
_BOUND: Dict[str, Any] = {}


def register_namespace(name: str, module: types.ModuleType) -> None:
    """Make generated code bind ``name`` (``"jnp"``, ``"lax"`` ...) to the fast
    namespace of public ``module`` (see :func:`_fast_namespace`). A public module
    calls it once its functions exist (the end of its import); namespaces built
    before are dropped, so the next :func:`namespaces` sees the module whole."""
    if name not in _ORDER:
        raise ValueError(f"generated code binds no namespace {name!r} (known: {_ORDER})")
    _PUBLIC[name] = module
    refresh_namespaces()


def register_bound_name(name: str, obj: Any) -> None:
    """Record that a backend's generated code binds ``name`` to ``obj`` (the
    runtime module as ``_rt``), so :func:`means_the_same` knows a user's global
    of that name holding ``obj`` means the same."""
    _BOUND[name] = obj


def namespaces() -> Dict[str, Any]:
    """The names every generated module binds: ``np``, ``ad``, ``custom`` and the
    registered public namespaces (``jnp``, ``nn``, ``special``, ``random``,
    ``lax``; ``lax`` falls back to ``stop_gradient`` alone while srcjax.lax is not
    imported yet)."""
    global _NAMESPACES
    if _NAMESPACES is None:
        import numpy as np

        own: Dict[str, Any] = {
            "np": np,
            "ad": _fast_namespace("ad"),
            "custom": _fast_namespace("custom"),
        }
        ns: Dict[str, Any] = {}
        for name in _ORDER:
            if name in own:
                ns[name] = own[name]
            elif name in _PUBLIC or name == "jnp":
                ns[name] = _fast_namespace(name, _PUBLIC.get(name))
            elif name == "lax":
                from ..primitives import control

                ns["lax"] = types.SimpleNamespace(stop_gradient=control.stop_gradient)
        _NAMESPACES = ns
    return _NAMESPACES


_SYNTHETIC = itertools.count()


def synthetic_module(text: str, label: str, env: Dict[str, Any]) -> Dict[str, Any]:
    """Execute ``text`` as a module whose source is readable (registered with
    :mod:`linecache` as ``<srcjax LABEL #N>``), so the functions it defines can
    be transformed or inlined as rule templates; its globals are generated
    code's :func:`namespaces` and ``env``. Returns those globals (custom rules:
    :mod:`srcjax.custom`; has_aux's value function: :mod:`srcjax.api_fwd`)."""
    filename = f"<srcjax {label} #{next(_SYNTHETIC)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    ns = dict(namespaces())
    ns.update(env)
    exec(compile(text, filename, "exec"), ns)
    return ns


def means_the_same(name: str, obj: Any) -> bool:
    """Whether the user's global ``name`` holding ``obj`` is what generated code
    means by ``name`` (numpy as ``np``, srcjax.numpy as ``jnp``, the builtin
    ``min``), so that generated code may keep reading it by that name."""
    import builtins
    import math

    import numpy as np

    ns = namespaces()
    if obj is ns.get(name, _NOTHING) or obj is getattr(builtins, name, _NOTHING):
        return True
    if name in ("np", "math"):
        return obj is (np if name == "np" else math)
    if name in _MODULES:
        return isinstance(obj, types.ModuleType) and obj.__name__ == _MODULES[name]
    return name in _BOUND and obj is _BOUND[name]


_NOTHING = object()
#: the srcjax modules whose namespaces generated code binds under these names
_MODULES = {
    "jnp": "srcjax.numpy",
    "nn": "srcjax.nn",
    "special": "srcjax.scipy.special",
    "lax": "srcjax.lax",
    "random": "srcjax.random",
}


def refresh_namespaces() -> None:
    global _NAMESPACES
    _NAMESPACES = None


# ---------------------------------------------------------------------------- rendering
# generated file -> {line: the user's "file.py:N" its origin comment names}, so a
# transform of generated code (jit of grad, hessian) names the user's line too
_ORIGINS: Dict[str, Dict[int, str]] = ORIGINS  # (the origin map, srcjax.errors.ORIGINS)
_ORIGIN_RE = re.compile(r"#\s(?:.*, )?([^\s,#]+\.py:\d+)$")


_HEADER_ORIGIN_RE = re.compile(r"^# srcjax: .*? \(([^()\s]+\.py:\d+)\)")


def where(path: str, line: int) -> str:
    """``file.py:LINE`` of a function for a header: the user's file and line,
    also when ``path`` is generated code being transformed again (``vmap`` of
    ``grad(f)`` names ``f``'s file, not the cache file)."""
    known = _ORIGINS.get(path)
    if known is not None:
        return known.get(line) or known.get(0) or f"{os.path.basename(path)}:{line}"
    return f"{os.path.basename(path)}:{line}"


def _origin_comment(stmt: Any, default_file: str) -> str:
    line = getattr(stmt, "sj_origin", None)
    if not line:
        return ""
    path = getattr(stmt, "sj_file", None) or default_file
    where = _ORIGINS.get(path, {}).get(line) or f"{os.path.basename(path)}:{line}"
    note = getattr(stmt, "sj_note", None)
    return f"{note}, {where}" if note else where


def _line(indent: int, text: str, comment: str) -> str:
    pad = "    " * indent
    out = pad + text
    if comment:
        width = max(_COMMENT_COL, len(out) + 2)
        out = out.ljust(width) + "# " + comment
    return out


def _render_block(stmts: List[Any], indent: int, fname: str, out: List[str]) -> None:
    if not stmts:
        out.append(_line(indent, "pass", ""))
        return
    for s in stmts:
        comment = _origin_comment(s, fname)
        if getattr(s, "sj_comment", None):
            out.append("    " * indent + "# " + s.sj_comment)
            continue
        if isinstance(s, gast.If):
            out.append(_line(indent, f"if {N.to_source(s.test)}:", comment))
            _render_block(s.body, indent + 1, fname, out)
            orelse = s.orelse
            while (
                len(orelse) == 1
                and isinstance(orelse[0], gast.If)
                and not getattr(orelse[0], "sj_comment", None)
            ):
                inner = orelse[0]
                out.append(
                    _line(
                        indent,
                        f"elif {N.to_source(inner.test)}:",
                        _origin_comment(inner, fname),
                    )
                )
                _render_block(inner.body, indent + 1, fname, out)
                orelse = inner.orelse
            if orelse:
                out.append(_line(indent, "else:", ""))
                _render_block(orelse, indent + 1, fname, out)
        elif isinstance(s, gast.While):
            out.append(_line(indent, f"while {N.to_source(s.test)}:", comment))
            _render_block(s.body, indent + 1, fname, out)
        elif isinstance(s, gast.For):
            head = f"for {N.to_source(s.target)} in {N.to_source(s.iter)}:"
            out.append(_line(indent, head, comment))
            _render_block(s.body, indent + 1, fname, out)
        elif isinstance(s, gast.FunctionDef):
            _render_function(s, indent, fname, out)
        else:
            text = N.to_source(s)
            lines = text.splitlines()
            for i, ln in enumerate(lines):
                out.append(_line(indent, ln, comment if i == len(lines) - 1 else ""))


def _render_function(fdef: Any, indent: int, fname: str, out: List[str]) -> None:
    args = N.to_source(fdef.args)
    out.append(_line(indent, f"def {fdef.name}({args}):", ""))
    _render_block(fdef.body, indent + 1, fname, out)


_SINGLETONS = (None, True, False, Ellipsis)


def _is_literal(node: Any) -> bool:
    """A literal Python gives a fresh or interned object (a number, string,
    bytes or tuple of those): ``x is <literal>`` is a SyntaxWarning."""
    if isinstance(node, gast.Constant):
        return not any(node.value is v for v in _SINGLETONS)
    if isinstance(node, gast.Tuple):
        return all(isinstance(e, gast.Constant) or _is_literal(e) for e in node.elts)
    return False


def _literal_value(node: Any) -> Any:
    return _ast.literal_eval(N.to_source(node))


class _NoLiteralIdentity(gast.NodeTransformer):
    """Decides each ``a is b`` / ``a is not b`` between two constants where one
    is a literal: constant propagation writes ``(0, 1) is None`` where the user
    wrote ``range is None``, which Python warns about. A literal is never
    ``None``/``True``/``False``/``...``; two literals are the same object when
    equal and of one type (CPython shares a code object's equal constants)."""

    def visit_Compare(self, node: Any) -> Any:
        self.generic_visit(node)
        if len(node.ops) != 1 or not isinstance(node.ops[0], (gast.Is, gast.IsNot)):
            return node
        a, b = node.left, node.comparators[0]
        consts = all(isinstance(v, gast.Constant) or _is_literal(v) for v in (a, b))
        if not consts or not (_is_literal(a) or _is_literal(b)):
            return node
        same = False
        if _is_literal(a) and _is_literal(b):
            va, vb = _literal_value(a), _literal_value(b)
            same = type(va) is type(vb) and va == vb
        return gast.copy_location(N.const(same != isinstance(node.ops[0], gast.IsNot)), node)


def render(fdef: Any, header: str, user_file: str) -> str:
    """Source text of ``fdef`` with a header comment and origin comments."""
    out: List[str] = [f"# {line}" for line in header.splitlines()]
    _NoLiteralIdentity().visit(fdef)
    for n in N.walk(fdef):
        if "lineno" in getattr(n, "_attributes", ()) and not hasattr(n, "lineno"):
            n.lineno = 1
            n.col_offset = 0
            n.end_lineno = 1
            n.end_col_offset = 0
    _render_function(fdef, 0, user_file, out)
    text = "\n".join(out) + "\n"
    if _config.checks_enabled:
        check_reparse(fdef, text)
    return text


# ---------------------------------------------------------------------------- self-check
_IGNORED_FIELDS = frozenset({"ctx", "kind", "type_comment", "type_params"})


def check_reparse(fdef: Any, text: str, rendered: bool = True) -> None:
    """``jax_enable_checks``: the generated ``text`` reads back as the tree
    ``fdef`` it was rendered from (by :func:`render`; ``rendered=False``: by
    :func:`srcjax.frontend.nodes.to_source`), or raise ``AssertionError`` naming
    the first statement that does not.

    Compared structurally, ignoring positions, ``ctx`` (the unparser does not
    print it), string ``kind``, and for :func:`render` comments (statements with
    ``sj_comment``) and a function's decorators and return annotation (it does
    not print them) and an empty block (it prints ``pass``); a number stands for the expression
    Python reads its literal as (:func:`srcjax.frontend.nodes.exact_literal`:
    ``-0.1`` is ``-(0.1)``), whose value must be the constant's, bit for bit.
    A precedence or rendering bug of any pass fails here, loudly, instead of
    computing another expression than the tree says."""
    import ast

    want = _bare_copy(fdef)
    want = _ExactValues().visit(_as_rendered(want) if rendered else want)
    try:
        got = ast.parse(text).body
    except SyntaxError as e:  # pragma: no cover - a failure of this check
        raise AssertionError(f"generated code does not parse: {e}\n{text}") from None
    want_ast = gast.gast_to_ast(gast.Module(body=[want], type_ignores=[]))
    _assert_same(want_ast.body, got, text)


def _bare_copy(node: Any) -> Any:
    """A copy of the tree ``node`` without srcjax's annotations (but comments)."""
    if isinstance(node, list):
        return [_bare_copy(x) for x in node]
    if not isinstance(node, gast.AST):
        return node
    if getattr(node, "sj_comment", None):
        new = gast.Pass()
        new.sj_comment = node.sj_comment
        return new
    return type(node)(**{f: _bare_copy(getattr(node, f, None)) for f in node._fields})


def _as_rendered(fdef: Any) -> Any:
    """``fdef`` as render prints it (see :func:`check_reparse`)."""
    fdef.decorator_list = []
    fdef.returns = None
    fdef.body = _as_rendered_block(fdef.body)
    return fdef


def _as_rendered_block(stmts: List[Any]) -> List[Any]:
    # follows _render_block: the statements it prints itself drop comments and
    # print an empty block as `pass`; the others are unparsed whole
    if not stmts:
        return [gast.Pass()]
    out = []
    for s in stmts:
        if getattr(s, "sj_comment", None):
            continue
        if isinstance(s, gast.If):
            s.body = _as_rendered_block(s.body)
            if s.orelse:
                s.orelse = _as_rendered_block(s.orelse)
        elif isinstance(s, (gast.For, gast.While)):
            s.body = _as_rendered_block(s.body)
        elif isinstance(s, gast.FunctionDef):
            s.decorator_list = []
            s.returns = None
            s.body = _as_rendered_block(s.body)
        out.append(s)
    return out


class _ExactValues(gast.NodeTransformer):
    def visit_Constant(self, node: Any) -> Any:
        new = N.exact_literal(node.value)
        if new is not node and not isinstance(new, gast.Constant):
            back = eval(N.to_source(new), {"complex": complex})  # noqa: S307 - numbers only
            if type(back) is not type(node.value) or repr(back) != repr(node.value):
                raise AssertionError(
                    f"the literal {N.to_source(new)} of a constant reads back as "
                    f"{back!r}, not {node.value!r}"
                )
        return new


def _assert_same(want: Any, got: Any, text: str, where: Any = None) -> None:
    import ast

    def fail() -> None:
        stmt = where if where is not None else want
        try:
            shown = ast.unparse(stmt)
        except Exception:  # pragma: no cover
            shown = ast.dump(stmt)
        raise AssertionError(
            "generated code does not read back as the tree it was rendered from "
            f"(a rendering or precedence bug):\n  tree:      {shown}\n"
            f"  tree node: {ast.dump(want) if isinstance(want, ast.AST) else want!r}\n"
            f"  read back: {ast.dump(got) if isinstance(got, ast.AST) else got!r}\n"
            f"in:\n{text}"
        )

    if isinstance(want, list):
        if not isinstance(got, list) or len(want) != len(got):
            fail()
        for a, b in zip(want, got):
            _assert_same(a, b, text, where)
        return
    if not isinstance(want, ast.AST):
        if type(want) is not type(got) or repr(want) != repr(got):
            fail()
        return
    if type(want) is not type(got):
        fail()
    if isinstance(want, ast.stmt):
        where = want
    for field in want._fields:
        if field in _IGNORED_FIELDS:
            continue
        _assert_same(getattr(want, field, None), getattr(got, field, None), text, where)


# ---------------------------------------------------------------------------- loading
def load(
    text: str,
    fn_name: str,
    user_globals: dict,
    cells: Dict[str, Any],
    bindings: Dict[str, Any],
    tag: str,
    defaults: Optional[tuple] = None,
    code: Optional[types.CodeType] = None,
) -> types.FunctionType:
    """Write ``text`` to the cache, register it with linecache, compile, and return
    the function named ``fn_name`` bound to live user globals. ``code``: the
    module code compiling ``text`` gave, kept by the disk cache (used when it was
    compiled for the file it is written to now)."""
    path = cache.write_source(text, tag)
    lines = text.splitlines(keepends=True)
    linecache.cache[path] = (len(text), None, lines, path)
    origins = {}
    for i, ln in enumerate(lines, 1):
        m = _ORIGIN_RE.search(ln.rstrip())
        if m:
            origins[i] = m.group(1)
    head = _HEADER_ORIGIN_RE.search(lines[0]) if lines else None
    if head:
        origins[0] = head.group(1)  # where the user's function is (for headers)
    _ORIGINS[path] = origins
    if code is None or code.co_filename != path:
        code = compile(text, path, "exec")
    fcode = None
    for c in code.co_consts:
        if isinstance(c, types.CodeType) and c.co_name == fn_name:
            fcode = c
    if fcode is None:  # pragma: no cover - render always produces one def
        raise RuntimeError(f"generated code has no function {fn_name}")
    base = dict(namespaces())
    aliases = {}
    for k, v in bindings.items():
        if isinstance(v, UserGlobal):
            aliases[k] = v.name
        else:
            base[k] = v
    base["__builtins__"] = __builtins__
    base["__name__"] = user_globals.get("__name__", "srcjax_generated")
    for k in fcode.co_names:
        # the builtins it calls (range, len ...) found at once, not after a
        # KeyError from the user's globals (which do not hold them: a user's
        # variable named so is renamed, see frontend.normalize.anf._GENERATED_NAMES)
        if k not in base and k in _BUILTINS and k not in user_globals and k not in cells:
            base[k] = _BUILTINS[k]
    g = GeneratedGlobals(base, user_globals, cells, aliases)
    fn = types.FunctionType(fcode, g, fn_name, defaults)
    fn.__srcjax_source__ = text
    fn.__srcjax_path__ = path
    _record.note_load(
        {
            "text": text,
            "fn_name": fn_name,
            "user_globals": user_globals,
            "cells": cells,
            "bindings": bindings,
            "tag": tag,
            "defaults": defaults,
            "code": code,
            "fn": fn,
        }
    )
    return fn


# the frontend's hooks into codegen (srcjax/frontend/hooks.py: the dependency points down)
_frontend_hooks.namespaces.set(namespaces)
_frontend_hooks.means_the_same.set(means_the_same)
_frontend_hooks.check_reparse.set(check_reparse)
