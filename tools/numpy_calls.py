"""Count the operations one call of srcjax-generated code issues.

    python tools/bench.py --only R2 --count-calls

Tiny arrays (batch 256 x 50) are dominated by the cost per NumPy call, so the
number of operations a step issues is the quantity to drive down. For one
``call()`` this counts

- ``ops``: array operations the generated code issues itself: calls and
  operators (``CALL``, ``BINARY_OP``, ``BINARY_SUBSCR``, unary ops) executed in
  frames of generated modules (the files in srcjax's cache directory);
- ``helpers``: calls of srcjax's runtime helpers (the functions in the srcjax
  package that generated code calls, and what they call in turn);
- ``numpy_c``: calls of NumPy's builtin functions and ndarray methods anywhere
  (``np.zeros``, ``x.sum``, ...; ufuncs and operators are not C calls of this
  kind, they are in ``ops``).

:func:`jaxpr_primitives` gives the matching count for JAX: the equations of the
program's jaxpr (sub-jaxprs of ``scan``/``cond``/``pjit`` included, each once),
the primitives XLA sees before it fuses them. Counting runs the call under
``sys.settrace`` (slow); it is a diagnostic, never a timing.
"""

from __future__ import annotations

import os
import sys

_OPS = frozenset(
    {"CALL", "BINARY_OP", "BINARY_SUBSCR", "UNARY_NEGATIVE", "UNARY_INVERT", "COMPARE_OP"}
)


def count_numpy_calls(call) -> dict:
    """``{"ops": n, "helpers": n, "numpy_c": n}`` for one ``call()`` (see the
    module docstring for what each counts)."""
    import dis

    import numpy as np

    import srcjax
    from srcjax.codegen.cache import cache_dir

    generated_dir = os.path.realpath(cache_dir())
    package_dir = os.path.dirname(os.path.realpath(srcjax.__file__))
    kind_of_file: dict = {}
    counts = {"ops": 0, "helpers": 0, "numpy_c": 0}
    op_offsets: dict = {}

    def kind(code):
        k = kind_of_file.get(code.co_filename)
        if k is None:
            path = os.path.realpath(code.co_filename)
            if path.startswith(generated_dir + os.sep):
                k = "generated"
            elif path.startswith(package_dir + os.sep):
                k = "helper"
            else:
                k = "other"
            kind_of_file[code.co_filename] = k
        return k

    def offsets(code):
        s = op_offsets.get(code)
        if s is None:
            s = op_offsets[code] = frozenset(
                i.offset for i in dis.get_instructions(code) if i.opname in _OPS
            )
        return s

    def local_trace(frame, event, arg):
        if event == "opcode" and frame.f_lasti in offsets(frame.f_code):
            counts["ops"] += 1
        return local_trace

    def global_trace(frame, event, arg):
        k = kind(frame.f_code)
        if k == "generated":
            frame.f_trace_opcodes = True
            return local_trace
        if k == "helper":
            counts["helpers"] += 1
        return None

    def profile(frame, event, arg):
        if event == "c_call":
            owner = getattr(arg, "__self__", None)
            module = getattr(arg, "__module__", None) or ""
            if module.startswith("numpy") or isinstance(owner, np.ndarray) or owner is np:
                counts["numpy_c"] += 1

    sys.settrace(global_trace)
    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.settrace(None)
        sys.setprofile(None)
    return counts


def jaxpr_primitives(fn, *args) -> int:
    """Equations in ``jax.make_jaxpr(fn)(*args)``, sub-jaxprs included (each once)."""
    import jax

    def count(jaxpr) -> int:
        n = 0
        for eqn in jaxpr.eqns:
            subs = [v for v in eqn.params.values() if hasattr(v, "jaxpr") or hasattr(v, "eqns")]
            subs += [
                b
                for v in eqn.params.values()
                if isinstance(v, (tuple, list))
                for b in v
                if hasattr(b, "jaxpr") or hasattr(b, "eqns")
            ]
            if subs:
                n += sum(count(getattr(s, "jaxpr", s)) for s in subs)
            else:
                n += 1
        return n

    return count(jax.make_jaxpr(fn)(*args).jaxpr)


def format_counts(counts: dict, jax_primitives: int | None = None) -> str:
    text = (
        f"{counts['ops']} ops in generated code, {counts['helpers']} helper calls, "
        f"{counts['numpy_c']} NumPy C calls"
    )
    if jax_primitives is not None:
        text += f" (JAX's jaxpr: {jax_primitives} primitives)"
    return text
