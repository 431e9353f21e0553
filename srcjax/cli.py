"""The ``srcjax`` command line.

``srcjax show path/to/file.py:func [--grad] [--argnums 0,1] [--vmap] [--in-axes 0,None] [--pmap]
[--jit] [--args 'f32[128,784]' ...]`` loads ``file.py`` as a module, takes
``func`` from it (a dotted path such as ``Model.loss`` reaches methods), applies
the requested transformations through the public API and prints the generated
source: the same text the library runs. Transformations compose in a fixed
order, innermost first: ``jit(vmap(grad(func)))``.

Output is syntax-highlighted with ``rich`` when stdout is a terminal and rich is
installed, plain otherwise. Errors print one message on stderr and exit with
status 2 (``--traceback`` shows the Python traceback instead).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
import traceback
from typing import Any

__all__ = ["main"]

EXIT_OK = 0
EXIT_ERROR = 2

_DTYPES = {
    "bool": "bool",
    "b1": "bool",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "f16": "float16",
    "f32": "float32",
    "f64": "float64",
    "c64": "complex64",
    "c128": "complex128",
}
# JAX's own spellings too (float32[3,2], as jax.ShapeDtypeStruct prints them)
_DTYPES.update({v: v for v in list(_DTYPES.values())})

_ABSTRACT_ARG = re.compile(r"^\s*([a-z]+[0-9]*)\s*(?:\[\s*([0-9,\s]*)\s*\])?\s*$")


class CliError(Exception):
    """A user-facing error: printed as one line on stderr, exit status 2.

    ``traceback_from`` keeps the exception that caused it, for ``--traceback``.
    """

    def __init__(self, message: str, traceback_from: BaseException | None = None):
        super().__init__(message)
        self.traceback_from = traceback_from


# ---------------------------------------------------------------------------
# Argument parsing
# ---------------------------------------------------------------------------


def _int_or_tuple(text: str, what: str) -> int | tuple[int, ...]:
    parts = [p.strip() for p in text.split(",") if p.strip()]
    try:
        values = tuple(int(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{what} must be an integer or a comma-separated list of integers, got {text!r}"
        ) from None
    if not values:
        raise argparse.ArgumentTypeError(f"{what} is empty")
    return values[0] if len(values) == 1 and "," not in text else values


_UNSET = object()  # --in-axes not given (None is a value of it)


def parse_argnums(text: str) -> int | tuple[int, ...]:
    """``"0"`` -> 0, ``"0,1"`` -> (0, 1)."""
    return _int_or_tuple(text, "--argnums")


def parse_in_axes(text: str) -> int | None | tuple[int | None, ...]:
    """``"0"`` -> 0, ``"None"`` -> None, ``"0,None"`` -> (0, None)."""
    items = []
    for part in text.split(","):
        part = part.strip()
        if part in ("None", "none"):
            items.append(None)
            continue
        try:
            items.append(int(part))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"--in-axes entries must be integers or None, got {part!r} in {text!r}"
            ) from None
    if len(items) == 1 and "," not in text:
        return items[0]
    return tuple(items)


def parse_abstract_arg(text: str) -> Any:
    """An example argument from a spec: ``f32[128,784]`` is a float32 array of
    that shape, ``f64[]`` or ``f64`` a float64 scalar array, ``i32[3]`` an int32
    array; a Python literal (``1.0``, ``None``, ``(1, 2)``) is passed as is."""
    import numpy as np

    m = _ABSTRACT_ARG.match(text)
    if m and m.group(1) in _DTYPES:
        dims = m.group(2)
        shape = tuple(int(d) for d in dims.split(",") if d.strip()) if dims else ()
        return np.ones(shape, dtype=_DTYPES[m.group(1)])
    import ast

    try:
        # (f32[] is a scalar: written without the empty brackets for Python's parser)
        spec = re.sub(r"\b(\w+)\[\s*\]", r"\1", text)
        return _spec_tree(ast.parse(spec, mode="eval").body)
    except (ValueError, SyntaxError):
        raise argparse.ArgumentTypeError(
            f"cannot read --args entry {text!r}: use a dtype and shape such as "
            f"'f32[128,784]' (dtypes: {', '.join(sorted(_DTYPES))}), a pytree of them "
            "('{\"w\": f32[50], \"b\": f32[]}', '[(f32[784,256], f32[256])]') or a "
            "Python literal"
        ) from None


def _spec_tree(node: Any) -> Any:
    """A pytree of example arguments from a parsed ``--args`` entry: dicts,
    lists and tuples of specs (``{"w": f32[50], "b": f32[]}``, ``[(f32[784,256],
    f32[256])]``) and Python literals. ValueError for anything else."""
    import ast

    import numpy as np

    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise ValueError("** in a dict spec")
        return {ast.literal_eval(k): _spec_tree(v) for k, v in zip(node.keys, node.values)}
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_spec_tree(e) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Name) and node.id in _DTYPES:  # f32: a scalar
        return np.ones((), dtype=_DTYPES[node.id])
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id in _DTYPES
    ):
        dims = node.slice
        items = dims.elts if isinstance(dims, ast.Tuple) else [dims]
        shape = tuple(int(ast.literal_eval(d)) for d in items)
        return np.ones(shape, dtype=_DTYPES[node.value.id])
    if isinstance(node, ast.List) or isinstance(node, ast.Subscript):
        raise ValueError("not a spec")
    return ast.literal_eval(node)


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="srcjax",
        description="srcjax: JAX's transformations by source-to-source transformation.",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    show = sub.add_parser(
        "show",
        help="print the generated source of a transformed function",
        description=(
            "Print the source srcjax generates for a transformed function. "
            "Transformations compose innermost first: jit(vmap(grad(func)))."
        ),
    )
    show.add_argument(
        "target",
        metavar="FILE.py:FUNC",
        help="a Python file and a function in it (dotted for methods: Class.method)",
    )
    show.add_argument("--grad", action="store_true", help="apply srcjax.grad")
    show.add_argument(
        "--argnums",
        type=parse_argnums,
        default=None,
        metavar="N[,N...]",
        help="argnums for --grad, --jacfwd, --jacrev or --hessian (default 0)",
    )
    show.add_argument(
        "--has-aux", action="store_true", help="the function returns (value, aux); for --grad"
    )
    show.add_argument("--jvp", action="store_true", help="show the forward-mode (jvp) code")
    show.add_argument("--vjp", action="store_true", help="show the reverse-mode (vjp) code")
    show.add_argument("--jacfwd", action="store_true", help="apply srcjax.jacfwd")
    show.add_argument("--jacrev", action="store_true", help="apply srcjax.jacrev")
    show.add_argument("--hessian", action="store_true", help="apply srcjax.hessian")
    show.add_argument("--vmap", action="store_true", help="apply srcjax.vmap")
    show.add_argument(
        "--in-axes",
        type=parse_in_axes,
        default=_UNSET,
        metavar="AXES",
        help="in_axes for --vmap, e.g. 0 or 0,None (default 0)",
    )
    show.add_argument("--jit", action="store_true", help="apply srcjax.jit")
    show.add_argument(
        "--target",
        dest="backend_target",
        choices=("cpu", "cuda"),
        default=None,
        help="with --jit: the backend to generate code for (cuda: host code and each "
        "kernel's CUDA C; no GPU needed)",
    )
    show.add_argument(
        "--pmap",
        action="store_true",
        help="apply srcjax.pmap and print the per-device program (--args are the mapped "
        "arguments, axis 0 over devices)",
    )
    show.add_argument(
        "--axis-name", default=None, help="axis_name for --pmap (the name collectives use)"
    )
    show.add_argument(
        "--args",
        nargs="+",
        type=parse_abstract_arg,
        default=None,
        metavar="SPEC",
        help="example arguments, e.g. 'f32[128,784]' 'f32[784,10]' or Python literals",
    )
    show.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="syntax highlighting (auto: when stdout is a terminal and rich is installed)",
    )
    show.add_argument("--traceback", action="store_true", help="show Python tracebacks on errors")
    return parser


# ---------------------------------------------------------------------------
# Loading the user's function
# ---------------------------------------------------------------------------


def split_target(target: str) -> tuple[str, str]:
    """``"dir/file.py:Class.method"`` -> (``"dir/file.py"``, ``"Class.method"``)."""
    path, sep, func = target.rpartition(":")
    if not sep or not path or not func:
        raise CliError(f"expected FILE.py:FUNC (for example model.py:loss), got {target!r}")
    if not all(part.isidentifier() for part in func.split(".")):
        raise CliError(f"{func!r} is not a function name (use FUNC or Class.method)")
    return path, func


def _module_name(path: str) -> str:
    stem = os.path.splitext(os.path.basename(path))[0]
    name = re.sub(r"\W", "_", stem) or "module"
    if name[0].isdigit():
        name = "_" + name
    if name in sys.modules:
        # Do not shadow an installed module of the same name.
        name = f"{name}__srcjax_show"
    return name


def load_module(path: str):
    """Import the file at ``path`` as a module (its directory goes first on sys.path)."""
    if not os.path.exists(path):
        raise CliError(f"no such file: {path}")
    if not os.path.isfile(path):
        raise CliError(f"not a file: {path}")
    path = os.path.abspath(path)
    name = _module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CliError(f"cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    directory = os.path.dirname(path)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise CliError(f"{e.filename}:{e.lineno}:{e.offset}: syntax error: {e.msg}") from e
    except SystemExit as e:
        raise CliError(f"importing {path} called sys.exit({e.code!r})") from e
    except BrokenPipeError:
        raise  # stdout closed while the module printed: handled in main()
    except Exception as e:
        raise CliError(f"importing {path} failed: {type(e).__name__}: {e}", traceback_from=e) from e
    return module


def get_function(module, dotted: str):
    obj = module
    for i, part in enumerate(dotted.split(".")):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            where = module.__file__ if i == 0 else ".".join(dotted.split(".")[:i])
            raise CliError(f"{where} has no attribute {part!r}") from None
    if not callable(obj):
        raise CliError(f"{dotted} in {module.__file__} is not callable ({type(obj).__name__})")
    return obj


# ---------------------------------------------------------------------------
# Transforming and printing
# ---------------------------------------------------------------------------


def _check_options(fn, args) -> None:
    """Options that would be silently ignored are errors: --argnums without a
    transform that takes it, --in-axes without --vmap or with one entry per
    parameter missing or extra."""
    if args.argnums is not None and not (args.grad or args.jacfwd or args.jacrev or args.hessian):
        raise CliError(
            "--argnums applies to --grad, --jacfwd, --jacrev or --hessian "
            "(--jvp and --vjp differentiate every argument)"
        )
    if args.in_axes is _UNSET:
        args.in_axes = 0
    elif not args.vmap:
        raise CliError("--in-axes applies to --vmap")
    elif isinstance(args.in_axes, tuple):
        import inspect

        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            return
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
            return
        n = sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
        if len(args.in_axes) != n:
            raise CliError(
                f"--in-axes has {len(args.in_axes)} entries but {getattr(fn, '__name__', 'the function')} "
                f"takes {n} positional parameters (one entry each, as vmap's in_axes tuple)"
            )
    if args.argnums is None:
        args.argnums = 0


def _transform(fn, args, srcjax):
    from srcjax.api_fwd import JvpView, VjpView

    if args.jvp:
        fn = JvpView(fn)
    if args.vjp:
        fn = VjpView(fn)
    for name in ("jacfwd", "jacrev", "hessian"):
        if getattr(args, name):
            fn = getattr(srcjax, name)(fn, argnums=args.argnums)
    if args.grad:
        grad = getattr(srcjax, "grad", None)
        if grad is None:
            raise CliError("--grad: srcjax.grad is not implemented yet")
        if args.has_aux:
            fn = grad(fn, argnums=args.argnums, has_aux=True)
        else:
            fn = grad(fn, argnums=args.argnums)
    if args.vmap:
        vmap = getattr(srcjax, "vmap", None)
        if vmap is None:
            raise CliError("--vmap: srcjax.vmap is not implemented yet")
        fn = vmap(fn, in_axes=args.in_axes)
    if args.jit:
        jit = getattr(srcjax, "jit", None)
        if jit is None:
            raise CliError("--jit: srcjax.jit is not implemented yet")
        fn = jit(fn)
    if args.pmap:
        if not args.args:
            raise CliError(
                "--pmap needs example arguments (--args 'f32[2,3]' ...): axis 0 is mapped"
            )
        fn = srcjax.pmap(fn, args.axis_name)
    return fn


def _use_color(mode: str) -> bool:
    if mode == "never":
        return False
    if mode == "auto":
        try:
            if not sys.stdout.isatty():
                return False
        except (AttributeError, ValueError):
            return False
        if os.environ.get("NO_COLOR"):
            return False
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def print_source(text: str, color: str = "auto") -> None:
    if _use_color(color):
        from rich.console import Console
        from rich.syntax import Syntax

        console = Console(force_terminal=True if color == "always" else None)
        syntax = Syntax(text.rstrip("\n"), "python", theme="monokai", background_color="default")
        console.print(syntax)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


def cmd_show(args) -> int:
    path, func_name = split_target(args.target)
    modes = ("grad", "jvp", "vjp", "jacfwd", "jacrev", "hessian", "vmap", "jit", "pmap")
    if not any(getattr(args, m) for m in modes):
        raise CliError(
            "nothing to show: pass at least one of " + ", ".join("--" + m for m in modes)
        )
    if not os.path.exists(path):
        raise CliError(f"no such file: {path}")
    # Import srcjax (and numpy) before the user's directory goes on sys.path, so a
    # file there named like a dependency cannot shadow it.
    import srcjax

    module = load_module(path)
    fn = get_function(module, func_name)

    _check_options(fn, args)
    transformed = _transform(fn, args, srcjax)
    example_args = args.args or ()
    wide = [a for a in example_args if getattr(getattr(a, "dtype", None), "itemsize", 0) == 8]
    if wide and not srcjax.config.jax_enable_x64:
        # as in JAX, 64-bit arguments become 32-bit unless x64 is on: say so
        # rather than show float32 code for an f64 spec without a word
        print(
            "srcjax: note: 64-bit --args are converted to 32 bits (JAX's default); "
            "call srcjax.config.update('jax_enable_x64', True) in the module for 64-bit code",
            file=sys.stderr,
        )
    source = getattr(srcjax, "source", None)
    if source is None:
        raise CliError("srcjax.source is not implemented yet")
    if args.backend_target is not None:
        if not args.jit:
            raise CliError("--target needs --jit (it picks the backend jit compiles for)")
        text = source(transformed, *example_args, target=args.backend_target)
    else:
        text = source(transformed, *example_args)
        if args.jacfwd or args.jacrev or args.hessian:
            text = _with_derivative_code(transformed, fn, text)
    print_source(text, args.color)
    return EXIT_OK


def _with_derivative_code(transformed: Any, fn: Any, text: str) -> str:
    """A Jacobian's wrapper (basis, one batched call, columns) followed by the
    derivative code it batches (the jvp or vjp of the function), which is what
    a reader of ``--hessian`` / ``--jacfwd`` / ``--jacrev`` wants to see."""
    import inspect
    import linecache

    try:
        nargs = len(inspect.signature(fn).parameters)
        made = transformed._generated(("leaf",) * nargs)
        inner = made.__globals__.get("inner")
        inner_text = "".join(linecache.getlines(inner.__code__.co_filename))
    except Exception:  # noqa: BLE001 - a wrapper without one: the wrapper alone
        return text
    if not inner_text or inner_text in text:
        return text
    return (
        text.rstrip("\n")
        + "\n\n\n# `batched` above is srcjax.vmap of this derivative code over the basis:\n"
        + inner_text
    )


def _report(exc: BaseException, show_traceback: bool) -> None:
    if show_traceback:
        cause = getattr(exc, "traceback_from", None) or exc
        traceback.print_exception(type(cause), cause, cause.__traceback__)
    if isinstance(exc, CliError):
        message = str(exc)
    else:
        message = f"{type(exc).__name__}: {exc}"
    print(f"srcjax: error: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.version:
        from importlib import metadata

        try:
            version = metadata.version("srcjax")
        except metadata.PackageNotFoundError:
            version = "unknown (not installed)"
        print(f"srcjax {version}")
        return EXIT_OK
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    try:
        return cmd_show(args)
    except BrokenPipeError:
        # `srcjax show ... | head`: the reader went away; not an error. Point
        # stdout at /dev/null so the interpreter's final flush stays quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # noqa: BLE001 - every error becomes a one-line message
        _report(e, args.traceback)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
