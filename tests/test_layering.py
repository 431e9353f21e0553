"""srcjax's layering: its import graph has no cycle, no import points upward,
and no module is over 800 lines.

The graph counts every import, also those inside functions (a lazy import is
still a dependency) and ``importlib.import_module("srcjax....")`` with a
constant name. ``from PKG import name`` depends on the submodule ``PKG.name``
when there is one, else on ``PKG`` itself; the implicit import of a module's
parent packages is not counted (``from .. import dtypes`` depends on
``srcjax.dtypes``, not on ``srcjax/__init__.py``), but ``import srcjax`` or
``from srcjax import grad`` is a dependency on the top package.

Layers, lowest first (a module may import its own layer and those below; the
order follows issue 15's target map)::

    core        config, dtypes, errors, typing, _dict_order, _prng_key, _spmd, _traceback, _fp_warnings
    ir          the IR: frontend/nodes.py (the future ir/ package)
    pytree      tree_util, tree: pytrees, no primitives
    primitives  the registry and every primitive family with its rules
    frontend    source, normalize: Python source -> normalized IR
    analysis    analyses over the IR: srcjax/analysis/ (activity, liveness)
    transforms  reverse, forward, batching, optimize, fusion: IR -> IR passes
    codegen     emit, cache: IR -> text -> a live function
    backends    the backend protocol and its implementations (numpy_cpu, ...),
                distributed (the processes of an MPI job)
    api         the public transforms (grad, jit, vmap, pmap, custom_*, ...),
                JAX's API names mapped onto them (_jax_api, _stages)
    public      numpy, lax, nn, random, scipy, ops, example_libraries, experimental: user-facing modules,
                compositions of primitives and transforms
    package     srcjax/__init__.py (it imports everything), the command line,
                srcjax.testing (programs for the tests and the fuzzer)

It is a ratchet: the allowlists below hold today's violations. They may only
shrink: the test fails on a violation not listed *and* on a listed one that is
gone (remove it from the list, so the list stays tight). Issue 15 ends with all
three lists empty. Run ``python tests/test_layering.py`` for the full report.
"""

from __future__ import annotations

import ast
import functools
import os
import sys
from typing import Dict, List, Set, Tuple

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "srcjax")
MAX_LINES = 800

#: layer name -> module prefixes (longest prefix wins), lowest layer first
LAYERS: List[Tuple[str, Tuple[str, ...]]] = [
    (
        "core",
        (
            "srcjax.config",
            "srcjax.dtypes",
            "srcjax.errors",
            "srcjax.typing",
            "srcjax._dict_order",
            "srcjax._prng_key",
            "srcjax._spmd",
            "srcjax._traceback",
            "srcjax._fp_warnings",
            "srcjax._debug_nans",
            "srcjax._array",
            "srcjax._array_ops",
            "srcjax._sharding",
        ),
    ),
    ("ir", ("srcjax.ir", "srcjax.frontend.nodes")),
    ("pytree", ("srcjax.pytree", "srcjax.tree_util", "srcjax.tree")),
    ("primitives", ("srcjax.primitives",)),
    ("frontend", ("srcjax.frontend",)),
    ("analysis", ("srcjax.analysis",)),
    ("transforms", ("srcjax.transforms",)),
    ("codegen", ("srcjax.codegen",)),
    # (distributed: the MPI communicator the CPU devices and pmap's groups use)
    ("backends", ("srcjax.backends", "srcjax.distributed")),
    (
        "api",
        (
            "srcjax.api",
            "srcjax.api_fwd",
            "srcjax.api_jac",
            "srcjax.driver",
            "srcjax.jit_api",
            "srcjax.vmap_api",
            "srcjax.pmap_api",
            "srcjax.custom",
            "srcjax._callback",
            "srcjax.debug",
            "srcjax.extras",
            "srcjax.devices",
            "srcjax.flatten_util",
            "srcjax._cotangent_check",
            "srcjax._jax_api",
            "srcjax._stages",
        ),
    ),
    (
        "public",
        (
            "srcjax.numpy",
            "srcjax.lax",
            "srcjax.nn",
            "srcjax._nn_initializers",
            "srcjax.random",
            "srcjax.scipy",
            "srcjax.ops",
            "srcjax.image",
            "srcjax.example_libraries",
            "srcjax.experimental",
            "srcjax.sharding",
        ),
    ),
    # the package itself, its command line and its test programs
    ("package", ("=srcjax", "=srcjax.cli", "=srcjax.__main__", "srcjax.testing")),
]

# ------------------------------------------------------------------ the ratchet
#: (importer, imported) edges that point upward today
UPWARD_ALLOWED: Set[Tuple[str, str]] = set()

#: modules in an import cycle today
CYCLE_ALLOWED: Set[str] = set()

#: modules over MAX_LINES lines today
SIZE_ALLOWED: Set[str] = set()


# ------------------------------------------------------------------ the graph
def modules(root: str = ROOT) -> Dict[str, str]:
    """Dotted module name -> path, for every ``.py`` file under ``root``."""
    out = {}
    base = os.path.dirname(root)
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(d, f)
                name = os.path.relpath(path, base)[:-3].replace(os.sep, ".")
                if name.endswith(".__init__"):
                    name = name[: -len(".__init__")]
                out[name] = path
    return out


def _known(name: str, mods: Dict[str, str]) -> str:
    """The longest prefix of ``name`` that is a module ('' if none)."""
    while name and name not in mods:
        name = name.rsplit(".", 1)[0] if "." in name else ""
    return name


def _package_of(mod: str, mods: Dict[str, str]) -> str:
    return mod if mods[mod].endswith("__init__.py") else mod.rsplit(".", 1)[0]


def imports_of(mod: str, tree: ast.AST, mods: Dict[str, str]) -> Dict[str, int]:
    """Modules ``mod`` imports -> line of the first such import."""
    found: Dict[str, int] = {}

    def add(name: str, line: int) -> None:
        target = _known(name, mods)
        if target and target != mod:
            found.setdefault(target, line)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                add(a.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = _package_of(mod, mods)
                for _ in range(node.level - 1):
                    pkg = pkg.rsplit(".", 1)[0]
                base = pkg + ("." + base if base else "")
            for a in node.names:
                full = f"{base}.{a.name}"
                add(full if full in mods else base, node.lineno)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            add(node.args[0].value, node.lineno)
    return found


def layer_of(mod: str) -> int:
    best, best_len = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if p.startswith("="):  # this module only
                if mod == p[1:]:
                    return i
            elif (mod == p or mod.startswith(p + ".")) and len(p) > best_len:
                best, best_len = i, len(p)
    return best


def graph(root: str = ROOT) -> Tuple[Dict[str, Dict[str, int]], Dict[str, int]]:
    """(module -> {imported module: line}, module -> line count)."""
    mods = modules(root)
    g, lines = {}, {}
    for m, path in mods.items():
        with open(path, encoding="utf-8") as fh:
            src = fh.read()
        lines[m] = src.count("\n")
        g[m] = imports_of(m, ast.parse(src, path), mods)
    return g, lines


def cycles(g: Dict[str, Dict[str, int]]) -> List[List[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    out: List[List[str]] = []
    counter = 0
    for start in sorted(g):
        if start in index:
            continue
        work = [(start, iter(sorted(g[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    u = work[-1][0]
                    low[u] = min(low[u], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


@functools.lru_cache(maxsize=None)
def violations(root: str = ROOT):
    """(upward edges {(a, b): line}, modules in cycles, modules over MAX_LINES)."""
    g, lines = graph(root)
    upward = {}
    for a, deps in g.items():
        for b, line in deps.items():
            if layer_of(b) > layer_of(a):
                upward[(a, b)] = line
    in_cycles = {m for comp in cycles(g) for m in comp}
    big = {m for m, n in lines.items() if n > MAX_LINES}
    return upward, in_cycles, big, g, lines


# ------------------------------------------------------------------ the tests
def test_every_module_has_a_layer():
    g, _ = graph()
    assert [m for m in g if layer_of(m) < 0] == []


def test_graph_reads_imports_inside_functions_and_by_name(tmp_path):
    pkg = tmp_path / "srcjax"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "dtypes.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "a.py").write_text(
        "from .. import dtypes\n"
        "def f():\n"
        "    from . import b\n"
        "    import importlib\n"
        "    importlib.import_module('srcjax.sub.c')\n"
        "    from srcjax import grad\n"
    )
    (pkg / "sub" / "b.py").write_text("from .a import f\n")
    (pkg / "sub" / "c.py").write_text("")
    g, lines = graph(str(pkg))
    assert g["srcjax.sub.a"] == {
        "srcjax.dtypes": 1,
        "srcjax.sub.b": 3,
        "srcjax.sub.c": 5,
        "srcjax": 6,
    }
    assert cycles(g) == [["srcjax.sub.a", "srcjax.sub.b"]]
    assert lines["srcjax.sub.a"] == 6


def _report(found: Set, allowed: Set, what: str) -> List[str]:
    new = sorted(found - allowed)
    gone = sorted(allowed - found)
    out = []
    if new:
        out.append(f"{len(new)} new {what} (fix them; the allowlist only shrinks):")
        out.extend(f"    {x!r}," for x in new)
    if gone:
        out.append(f"{len(gone)} {what} fixed: remove them from the allowlist:")
        out.extend(f"    {x!r}," for x in gone)
    return out


def test_no_upward_import():
    upward, _, _, _, _ = violations()
    msg = _report(set(upward), UPWARD_ALLOWED, "upward imports")
    where = [
        f"  {a} -> {b} (line {upward[(a, b)]})" for a, b in sorted(set(upward) - UPWARD_ALLOWED)
    ]
    assert not msg, "\n".join(msg + where)


def test_no_import_cycle():
    _, in_cycles, _, _, _ = violations()
    msg = _report(in_cycles, CYCLE_ALLOWED, "modules in import cycles")
    assert not msg, "\n".join(msg)


def test_no_module_over_800_lines():
    _, _, big, _, _ = violations()
    msg = _report(big, SIZE_ALLOWED, f"modules over {MAX_LINES} lines")
    assert not msg, "\n".join(msg)


def main() -> None:
    upward, in_cycles, big, g, lines = violations()
    comps = cycles(g)
    for comp in comps:
        print(f"cycle of {len(comp)}: {', '.join(comp)}")
    for (a, b), line in sorted(upward.items()):
        print(f"upward: {a}:{line} -> {b} ({LAYERS[layer_of(a)][0]} -> {LAYERS[layer_of(b)][0]})")
    for m in sorted(big, key=lambda m: -lines[m]):
        print(f"size: {m} {lines[m]} lines")
    print(
        f"{len(g)} modules; {len(in_cycles)} in {len(comps)} cycles, {len(upward)} upward "
        f"imports, {len(big)} over {MAX_LINES} lines; allowlists: {len(UPWARD_ALLOWED)} "
        f"upward, {len(CYCLE_ALLOWED)} cyclic, {len(SIZE_ALLOWED)} large"
    )
    if "--allowlist" in sys.argv:
        print("UPWARD_ALLOWED =", sorted(upward))
        print("CYCLE_ALLOWED =", sorted(in_cycles))
        print("SIZE_ALLOWED =", sorted(big))


if __name__ == "__main__":
    main()
