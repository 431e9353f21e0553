"""Random differentiable programs with Python control flow, for property tests.

A program is a list of :class:`Stmt` trees rendered to the source of a function
``f(x)`` of a float64 vector. The same generator serves the hypothesis test
(``tests/test_property.py``) and ``tools/fuzz.py``, which also shrinks a failing
program to a minimal reproducer by deleting statements.

Every generated program terminates (loops are bounded by a counter) and is
smooth almost everywhere; branch conditions compare a reduction with a
threshold, so a finite-difference step crosses a branch boundary with
negligible probability.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from dataclasses import dataclass, field
from typing import List, Optional

import numpy as np

__all__ = [
    "Stmt",
    "Program",
    "generate",
    "render",
    "load",
    "shrink",
    "check_program",
    "check_jit",
    "check_vmap",
]

UNARY = [
    "jnp.sin({a})",
    "jnp.cos({a})",
    "jnp.tanh({a})",
    "jnp.exp(0.3 * jnp.tanh({a}))",
    "jnp.sqrt({a} * {a} + 1.0)",
    "jnp.log1p({a} * {a})",
    "{a} * {a}",
    "-{a}",
    "jnp.square(jnp.sin({a}))",
    "nn.sigmoid({a})",
    "nn.softplus({a})",
    "jnp.arctan({a})",
    "{a} ** 3",
    "jnp.cumsum({a}) * 0.3",
    "jnp.flip({a}) * 1.0",  # (a copy: eager NumPy's flip is a view, `+=` would write through)
    "{a}[::-1] * 0.5",
    "jnp.roll({a}, 1)",
    # negative constants under **, attribute access and a method (issue 21), and
    # unary minus next to **
    "(-0.5) ** 2 * {a} - (-0.3) ** 3",
    "{a} * (-1.5).real + (-2.0) ** 2",
    "(-{a}) ** 2 - -{a} ** 2 * 0.5",
    "{a} * (-0.25).conjugate()",
]
BINARY = [
    "{a} + {b}",
    "{a} - {b}",
    "{a} * {b}",
    "{a} / (1.5 + jnp.cos({b}))",
    "jnp.sin({a}) * {b}",
    "jnp.sum({a}) * {b}",
    "jnp.mean({a} * {b}) + {b}",
    "jnp.logaddexp({a}, {b})",
    "jnp.dot({a}, {b}) * {a}",
    "jnp.where({a} > {b}, {a}, {b} * 0.5)",
]


@dataclass
class Stmt:
    """One statement: ``kind`` is assign / if / for / while / break_if."""

    kind: str
    text: str = ""
    body: List["Stmt"] = field(default_factory=list)
    orelse: List["Stmt"] = field(default_factory=list)


@dataclass
class Program:
    stmts: List[Stmt]
    nvars: int
    result: str

    def size(self) -> int:
        def count(ss):
            return sum(1 + count(s.body) + count(s.orelse) for s in ss)

        return count(self.stmts)


#: functional updates for ``generate(updates=True)``: ``{t}`` the target, ``{a}``
#: and ``{b}`` variables, ``{k}`` an index
UPDATES = [
    "{t} = {a}.at[{k}].add(jnp.sum({b}) * 0.5)",
    "{t} = {a}.at[{k}].set(jnp.mean({b}))",
    "{t} = {a}.at[{k}].multiply(jnp.tanh({b})[{k}])",
    "{t} = {a}.at[1:].subtract({b}[:2] * 0.25)",
    "{t} = {a}.at[{k}].get() * {b}",
]


def generate(
    rng: np.random.Generator, max_stmts: int = 8, nvars: int = 3, updates: bool = False
) -> Program:
    """A random program over variables ``v0..v{nvars-1}`` (all defined up front).
    ``updates``: also ``.at[...]`` updates and augmented assignments, to the
    variables and to the argument ``x`` (which the caller's array must survive)."""
    budget = [max_stmts]

    def expr():
        a = f"v{rng.integers(nvars)}"
        if rng.random() < 0.5:
            return UNARY[rng.integers(len(UNARY))].format(a=a)
        b = f"v{rng.integers(nvars)}"
        return BINARY[rng.integers(len(BINARY))].format(a=a, b=b)

    def block(depth, in_loop):
        out = []
        n = int(rng.integers(1, 4))
        for _ in range(n):
            if budget[0] <= 0:
                break
            budget[0] -= 1
            r = rng.random()
            if depth < 2 and r < 0.15:
                c = round(float(rng.normal()), 2)
                a = f"v{rng.integers(nvars)}"
                test = f"jnp.sum({a}) > {c}"
                if rng.random() < 0.3:  # a short-circuit condition
                    b = f"v{rng.integers(nvars)}"
                    d = round(float(rng.normal()), 2)
                    op = "and" if rng.random() < 0.5 else "or"
                    test = f"{test} {op} jnp.max({b}) < {d}"
                out.append(
                    Stmt(
                        "if",
                        test,
                        block(depth + 1, in_loop),
                        block(depth + 1, in_loop) if rng.random() < 0.6 else [],
                    )
                )
            elif depth < 2 and r < 0.27:
                k = int(rng.integers(1, 4))
                out.append(Stmt("for", str(k), block(depth + 1, True)))
            elif depth < 2 and r < 0.37:
                k = int(rng.integers(1, 4))
                c = round(float(rng.uniform(1.0, 20.0)), 2)
                a = f"v{rng.integers(nvars)}"
                out.append(Stmt("while", f"{k}|jnp.sum({a} * {a}) < {c}", block(depth + 1, True)))
            elif in_loop and r < 0.42:
                c = round(float(rng.uniform(0.0, 5.0)), 2)
                a = f"v{rng.integers(nvars)}"
                out.append(Stmt("break_if", f"jnp.sum({a} * {a}) > {c}"))
            elif r < 0.5:
                # augmented assignment, and the parameter rebound to another
                # shape that the result does not read (issue 21; outside branches
                # and loops, whose passes vmap needs to give one shape)
                t = f"v{rng.integers(nvars)}"
                if depth == 0 and not in_loop and rng.random() < 0.3:
                    out.append(Stmt("assign", "x = jnp.sum(x) * 0.5"))
                else:
                    op = "+=" if rng.random() < 0.5 else "-="
                    out.append(Stmt("assign", f"{t} {op} {expr()}"))
            elif updates and r < 0.6:
                t, a, b = (f"v{rng.integers(nvars)}" for _ in range(3))
                if rng.random() < 0.6:
                    form = UPDATES[rng.integers(len(UPDATES))]
                    out.append(Stmt("assign", form.format(t=t, a=a, b=b, k=rng.integers(3))))
                else:  # augmented assignment, to a variable or to the argument
                    op = ("+=", "-=", "*=")[rng.integers(3)]
                    dest = "x" if rng.random() < 0.5 else t
                    out.append(Stmt("assign", f"{dest} {op} {b} * 0.5"))
                    if dest == "x":
                        out.append(Stmt("assign", f"{t} = {t} + x"))
            else:
                t = f"v{rng.integers(nvars)}"
                out.append(Stmt("assign", f"{t} = {expr()}"))
        return out

    stmts = block(0, False)
    result = f"jnp.sum(v{rng.integers(nvars)} * v{rng.integers(nvars)})"
    return Program(stmts, nvars, result)


def render(prog: Program, name: str = "f") -> str:
    lines = [f"def {name}(x):"]
    inits = ["x", "jnp.sin(x)", "x * 0.5 + 0.1", "jnp.cos(x)", "x * x"]
    for i in range(prog.nvars):
        lines.append(f"    v{i} = {inits[i % len(inits)]}")
    counter = [0]

    def emit(ss, ind):
        if not ss:
            lines.append("    " * ind + "pass")
        for s in ss:
            pad = "    " * ind
            if s.kind == "assign":
                lines.append(pad + s.text)
            elif s.kind == "if":
                lines.append(pad + f"if {s.text}:")
                emit(s.body, ind + 1)
                if s.orelse:
                    lines.append(pad + "else:")
                    emit(s.orelse, ind + 1)
            elif s.kind == "for":
                counter[0] += 1
                lines.append(pad + f"for i{counter[0]} in range({s.text}):")
                emit(s.body, ind + 1)
            elif s.kind == "while":
                k, cond = s.text.split("|", 1)
                counter[0] += 1
                c = f"n{counter[0]}"
                lines.append(pad + f"{c} = 0")
                lines.append(pad + f"while {c} < {k} and {cond}:")
                emit(s.body, ind + 1)
                lines.append(pad + f"    {c} = {c} + 1")
            elif s.kind == "break_if":
                lines.append(pad + f"if {s.text}:")
                lines.append(pad + "    break")

    emit(prog.stmts, 1)
    lines.append(f"    return {prog.result}")
    return "\n".join(lines) + "\n"


_HEADER = "import srcjax.numpy as jnp\nimport srcjax.nn as nn\n\n\n"


def load(source: str, directory: Optional[str] = None):
    """Write the program to a real file (so its source is readable) and import it."""
    directory = directory or tempfile.mkdtemp(prefix="srcjax_prog_")
    path = os.path.join(directory, f"prog_{abs(hash(source)) % 10**12}.py")
    with open(path, "w") as fh:
        fh.write(_HEADER + source)
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.f


def check_program(
    prog: Program,
    x: np.ndarray,
    directory: Optional[str] = None,
    rtol: float = 1e-5,
    atol: float = 1e-7,
) -> Optional[str]:
    """None when grad matches float64 central differences, else a description.

    Requires ``jax_enable_x64``.
    """
    import srcjax
    import srcjax.numpy as jnp

    from .fd import fd_grad

    src = render(prog)
    f = load(src, directory)
    try:
        g = np.asarray(srcjax.grad(f)(x))
    except Exception as exc:  # noqa: BLE001 - report every failure as a finding
        return f"{type(exc).__name__}: {exc}\n{src}"
    if g.shape != np.shape(x):  # (allclose below would broadcast it)
        return f"grad shape {g.shape}, the argument's {np.shape(x)}\n{src}"
    fn = f
    f = lambda v: fn(jnp.asarray(v))  # noqa: E731 (called on Arrays, as JAX code is)
    value = float(f(x))
    if not np.isfinite(value) or abs(value) > 1e8:
        return None  # overflowing program: finite differences are not a usable oracle
    ref = fd_grad(f, x)
    if not np.all(np.isfinite(ref)):
        return None
    # finite differences lose absolute accuracy in proportion to the function's
    # scale: every component is compared at the scale of the largest one
    atol = atol * max(1.0, float(np.max(np.abs(ref))), abs(value))
    if not np.allclose(g, ref, rtol=rtol, atol=atol):
        # a strongly curved program: use Richardson extrapolation (4th order)
        h = 1e-4
        rich = (4 * fd_grad(f, x, h / 2) - fd_grad(f, x, h)) / 3
        if not np.allclose(g, rich, rtol=rtol, atol=atol):
            return f"grad mismatch: got {g}, finite differences {ref} / {rich}\n{src}"
    return None


def shrink(prog: Program, x: np.ndarray, directory: Optional[str] = None) -> Program:
    """Delete statements while the program still fails (greedy delta debugging)."""

    def lists(ss):
        yield ss
        for s in ss:
            yield from lists(s.body)
            yield from lists(s.orelse)

    changed = True
    while changed:
        changed = False
        for lst in list(lists(prog.stmts)):
            for i in range(len(lst)):
                removed = lst.pop(i)
                if check_program(prog, x, directory) is not None:
                    changed = True
                    break
                lst.insert(i, removed)
            if changed:
                break
    return prog


def check_jit(prog: Program, x: np.ndarray, directory: Optional[str] = None) -> Optional[str]:
    """None when ``jit(f)(x)`` and ``jit(grad(f))(x)`` equal eager ``f(x)`` and
    ``grad(f)(x)`` (to rounding), else a description."""
    import srcjax

    src = render(prog)
    f = load(src, directory)
    try:
        want = np.asarray(f(x.copy()))
        got = np.asarray(srcjax.jit(f)(x))
        gwant = np.asarray(srcjax.grad(f)(x))
        ggot = np.asarray(srcjax.jit(srcjax.grad(f))(x))
    except Exception as exc:  # noqa: BLE001 - every failure is a finding
        return f"{type(exc).__name__}: {exc}\n{src}"
    if not np.all(np.isfinite(want)) or abs(float(want)) > 1e8:
        return None
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-9, atol=1e-12):
        return f"jit value mismatch: got {got}, eager {want}\n{src}"
    if ggot.shape != gwant.shape or not np.allclose(ggot, gwant, rtol=1e-9, atol=1e-12):
        return f"jit(grad) mismatch: got {ggot}, eager {gwant}\n{src}"
    return None


def check_eager(prog: Program, x: np.ndarray, directory: Optional[str] = None) -> Optional[str]:
    """None when the program called directly on an ``srcjax.Array`` gives what
    ``jit(f)`` and ``value_and_grad(f)`` give (to rounding), ``grad(f)`` equals
    ``jit(grad(f))``, and the argument is unchanged after every call (JAX's
    arrays are immutable: ``x += ...`` inside ``f`` rebinds); else a description."""
    import srcjax
    import srcjax.numpy as jnp

    src = render(prog)
    f = load(src, directory)
    xa = jnp.asarray(x)
    keep = np.array(xa)
    try:
        want = np.asarray(f(xa))
        got = np.asarray(srcjax.jit(f)(xa))
        value, g = srcjax.value_and_grad(f)(xa)
        ggot = np.asarray(srcjax.jit(srcjax.grad(f))(xa))
    except Exception as exc:  # noqa: BLE001 - every failure is a finding
        return f"{type(exc).__name__}: {exc}\n{src}"
    if not np.array_equal(np.asarray(xa), keep):
        return f"the argument changed: {keep} -> {np.asarray(xa)}\n{src}"
    if not np.all(np.isfinite(want)) or abs(float(want)) > 1e8:
        return None
    for what, v in (("jit", got), ("value_and_grad's value", value)):
        if not np.allclose(np.asarray(v), want, rtol=1e-9, atol=1e-12):
            return f"{what} mismatch: got {np.asarray(v)}, eager {want}\n{src}"
    if not np.allclose(ggot, np.asarray(g), rtol=1e-9, atol=1e-12):
        return f"jit(grad) mismatch: got {ggot}, grad {np.asarray(g)}\n{src}"
    return None


def check_vmap(prog: Program, xs: np.ndarray, directory: Optional[str] = None) -> Optional[str]:
    """None when ``vmap(f)(xs)`` and ``vmap(grad(f))(xs)`` equal a Python loop over
    the rows of ``xs`` (to rounding), else a description. Conditions on batched
    values make examples take different branches and trip counts."""
    import srcjax

    src = render(prog)
    f = load(src, directory)
    try:
        want = np.array([np.asarray(f(x.copy())) for x in xs])
        if not np.all(np.isfinite(want)) or np.max(np.abs(want)) > 1e8:
            return None
        gwant = np.array([np.asarray(srcjax.grad(f)(x)) for x in xs])
        got = np.asarray(srcjax.vmap(f)(xs))
        ggot = np.asarray(srcjax.vmap(srcjax.grad(f))(xs))
    except Exception as exc:  # noqa: BLE001 - every failure is a finding
        return f"{type(exc).__name__}: {exc}\n{src}"
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-9, atol=1e-12):
        return f"vmap value mismatch: got {got}, loop {want}\n{src}"
    scale = max(1.0, float(np.max(np.abs(gwant))))
    if ggot.shape != gwant.shape or not np.allclose(ggot, gwant, rtol=1e-9, atol=1e-12 * scale):
        return f"vmap(grad) mismatch: got {ggot}, loop {gwant}\n{src}"
    return None


def _directional_grad(f, v):
    """``x -> <grad(f)(x), v>``: a scalar whose grad is the Hessian-vector product."""
    import srcjax
    import srcjax.numpy as jnp

    gf = srcjax.grad(f)

    def h(x):
        return jnp.sum(gf(x) * v)

    return h


def check_vmap_hvp(
    prog: Program, xs: np.ndarray, v: np.ndarray, directory: Optional[str] = None
) -> Optional[str]:
    """None when ``vmap(grad(h))(xs)``, ``h = <grad(f), v>`` (reverse over reverse
    under vmap: tapes pushed in one masked loop and popped in another), equals
    ``grad(h)`` in a Python loop over the rows of ``xs``, else a description."""
    import srcjax

    src = render(prog)
    f = load(src, directory)
    h = _directional_grad(f, v)
    try:
        want = np.array([np.asarray(f(x.copy())) for x in xs])
        if not np.all(np.isfinite(want)) or np.max(np.abs(want)) > 1e8:
            return None
        hwant = np.array([np.asarray(srcjax.grad(h)(x)) for x in xs])
        if not np.all(np.isfinite(hwant)):
            return None
        hgot = np.asarray(srcjax.vmap(srcjax.grad(h))(xs))
    except Exception as exc:  # noqa: BLE001 - every failure is a finding
        return f"{type(exc).__name__}: {exc}\n{src}"
    scale = max(1.0, float(np.max(np.abs(hwant))))
    if hgot.shape != hwant.shape or not np.allclose(hgot, hwant, rtol=1e-9, atol=1e-12 * scale):
        return f"vmap(grad(grad)) mismatch: got {hgot}, loop {hwant}\n{src}"
    return None
