"""The ``srcjax show`` command line, driven in subprocesses (plain output)."""

import os
import subprocess
import sys
import textwrap

import pytest

import srcjax
from srcjax import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MODEL = textwrap.dedent(
    """\
    import srcjax.numpy as jnp


    def loss(w, x, y):
        h = jnp.tanh(x * w)
        err = h - y
        return jnp.mean(err ** 2)


    def clipped(x):
        if x > 1.0:
            y = x * x
        else:
            y = 2.0 * x
        while y < 10.0:
            y = y * 1.5
        return y


    class Model:
        def energy(self, x):
            return x * x * x


    NOT_A_FUNCTION = 3

    if __name__ == "__main__":
        raise SystemExit("the CLI must not run the __main__ block")
    """
)


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    return path


def run_cli(*args):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("FORCE_COLOR", None)
    cmd = [sys.executable, "-m", "srcjax", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)


# -- the happy path (needs srcjax.grad and srcjax.source) -------------------------


def test_show_grad(model_file):
    r = run_cli("show", f"{model_file}:loss", "--grad")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "def " in out
    assert "w_bar" in out  # adjoint of the differentiated argument
    assert "\x1b[" not in out  # plain text when stdout is not a terminal
    compile(out, "<generated>", "exec")  # the printed source is valid Python
    assert "model.py:" in out  # origin comments point at the user's file


def test_show_grad_argnums(model_file):
    r = run_cli("show", f"{model_file}:loss", "--grad", "--argnums", "0,1")
    assert r.returncode == 0, r.stderr
    assert "w_bar" in r.stdout and "x_bar" in r.stdout


def test_show_grad_with_control_flow(model_file):
    r = run_cli("show", f"{model_file}:clipped", "--grad")
    assert r.returncode == 0, r.stderr
    assert "x_bar" in r.stdout
    compile(r.stdout, "<generated>", "exec")


def test_show_with_example_args(model_file):
    r = run_cli("show", f"{model_file}:loss", "--grad", "--args", "f32[]", "f32[8]", "f32[8]")
    assert r.returncode == 0, r.stderr
    assert "w_bar" in r.stdout


def test_show_method(model_file):
    r = run_cli("show", f"{model_file}:Model.energy", "--grad", "--argnums", "1")
    assert r.returncode == 0, r.stderr
    assert "x_bar" in r.stdout


def test_show_matches_library_source(model_file, tmp_path):
    """The CLI prints exactly what srcjax.source returns."""
    script = textwrap.dedent(
        f"""\
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import srcjax, model
        sys.stdout.write(srcjax.source(srcjax.grad(model.loss)))
        """
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    lib = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert lib.returncode == 0, lib.stderr
    r = run_cli("show", f"{model_file}:loss", "--grad")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == lib.stdout.strip()


def test_console_script_entry_point_is_main():
    assert callable(cli.main)


# -- transforms that may not exist yet ------------------------------------------


@pytest.mark.parametrize("flag,name", [("--vmap", "vmap"), ("--jit", "jit")])
def test_vmap_jit_flags(model_file, flag, name):
    extra = ["--args", "f32[]", "f32[3]", "f32[3]"] if flag == "--jit" else []
    r = run_cli("show", f"{model_file}:loss", flag, *extra)
    assert hasattr(srcjax, name)
    assert r.returncode == 0, r.stderr
    assert "def " in r.stdout


def test_jit_without_example_args_is_a_clear_error(model_file):
    r = run_cli("show", f"{model_file}:loss", "--jit")
    assert r.returncode == 2
    assert "example" in r.stderr and "Traceback" not in r.stderr


# -- errors: one line on stderr, exit status 2, no traceback --------------------


def _assert_clean_error(r, *needles):
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    assert r.stdout == ""
    for needle in needles:
        assert needle in r.stderr, r.stderr


def test_missing_file(tmp_path):
    r = run_cli("show", f"{tmp_path}/nope.py:loss", "--grad")
    _assert_clean_error(r, "no such file", "nope.py")


def test_missing_function(model_file):
    r = run_cli("show", f"{model_file}:nope", "--grad")
    _assert_clean_error(r, "'nope'")


def test_missing_method(model_file):
    r = run_cli("show", f"{model_file}:Model.nope", "--grad")
    _assert_clean_error(r, "'nope'")


def test_not_callable(model_file):
    r = run_cli("show", f"{model_file}:NOT_A_FUNCTION", "--grad")
    _assert_clean_error(r, "not callable")


def test_target_without_function(model_file):
    r = run_cli("show", str(model_file), "--grad")
    _assert_clean_error(r, "FILE.py:FUNC")


def test_no_transform_requested(model_file):
    r = run_cli("show", f"{model_file}:loss")
    _assert_clean_error(r, "--grad")


def test_syntax_error_in_file(tmp_path):
    bad = tmp_path / "broken.py"
    bad.write_text("def f(x):\n    return x +\n")
    r = run_cli("show", f"{bad}:f", "--grad")
    _assert_clean_error(r, "broken.py:2", "syntax error")


def test_import_error_in_file(tmp_path):
    bad = tmp_path / "raises.py"
    bad.write_text("raise RuntimeError('boom at import')\n\ndef f(x):\n    return x\n")
    r = run_cli("show", f"{bad}:f", "--grad")
    _assert_clean_error(r, "boom at import")


def test_sys_exit_in_file(tmp_path):
    bad = tmp_path / "exits.py"
    bad.write_text("import sys\nsys.exit(3)\n")
    r = run_cli("show", f"{bad}:f", "--grad")
    _assert_clean_error(r, "sys.exit(3)")


def test_directory_is_not_a_file(tmp_path):
    r = run_cli("show", f"{tmp_path}:f", "--grad")
    _assert_clean_error(r, "not a file")


def test_srcjax_error_is_reported_cleanly(tmp_path):
    bad = tmp_path / "unsupported.py"
    bad.write_text(
        textwrap.dedent(
            """\
            def f(x):
                try:
                    y = x * x
                except ValueError:
                    y = x
                return y
            """
        )
    )
    r = run_cli("show", f"{bad}:f", "--grad")
    _assert_clean_error(r, "unsupported.py")


def test_bad_args_spec(model_file):
    r = run_cli("show", f"{model_file}:loss", "--grad", "--args", "q32[3]")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and "q32[3]" in r.stderr


def test_no_command_prints_help():
    r = run_cli()
    assert r.returncode == 2
    assert "show" in r.stderr


# -- argument parsing, in process -----------------------------------------------


def test_parse_argnums():
    assert cli.parse_argnums("0") == 0
    assert cli.parse_argnums("0,1") == (0, 1)
    assert cli.parse_argnums("2,") == (2,)


def test_parse_in_axes():
    assert cli.parse_in_axes("0") == 0
    assert cli.parse_in_axes("None") is None
    assert cli.parse_in_axes("0,None") == (0, None)
    assert cli.parse_in_axes("1, 0") == (1, 0)


def test_parse_abstract_args():
    import numpy as np

    a = cli.parse_abstract_arg("f32[128,784]")
    assert a.shape == (128, 784) and a.dtype == np.float32
    s = cli.parse_abstract_arg("f64[]")
    assert s.shape == () and s.dtype == np.float64
    assert cli.parse_abstract_arg("i32").dtype == np.int32
    assert cli.parse_abstract_arg("1.5") == 1.5
    assert cli.parse_abstract_arg("None") is None


def test_split_target():
    assert cli.split_target("a/b.py:f") == ("a/b.py", "f")
    assert cli.split_target("C:/dir/b.py:Model.loss") == ("C:/dir/b.py", "Model.loss")
    with pytest.raises(cli.CliError):
        cli.split_target("a/b.py")
    with pytest.raises(cli.CliError):
        cli.split_target("a/b.py:1f")


def test_show_forward_mode_and_hessian(tmp_path):
    import subprocess
    import sys

    f = tmp_path / "fm.py"
    f.write_text(
        "import srcjax.numpy as jnp\n\n\ndef f(x):\n    h = jnp.sin(x) * x\n    return jnp.sum(h)\n"
    )
    out = subprocess.run(
        [sys.executable, "-m", "srcjax", "show", f"{f}:f", "--jvp"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "def f_jvp(x, x_dot):" in out and "h_dot" in out and "fm.py:5" in out
    out = subprocess.run(
        [sys.executable, "-m", "srcjax", "show", f"{f}:f", "--hessian"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "jacfwd" in out and "ad.basis" in out


def test_show_says_when_64_bit_args_become_32_bit(model_file):
    # `--args f64[8]` used to show float32 code without a word
    r = run_cli("show", f"{model_file}:loss", "--jit", "--args", "f64[]", "f64[8]", "f64[8]")
    assert r.returncode == 0, r.stderr
    assert "float32[8]" in r.stdout
    assert "jax_enable_x64" in r.stderr
    r = run_cli("show", f"{model_file}:loss", "--jit", "--args", "f32[]", "f32[8]", "f32[8]")
    assert "jax_enable_x64" not in r.stderr


def test_nn_and_scipy_are_attributes_after_import_srcjax():
    # `srcjax.nn.softmax` inside a transform failed unless something imported srcjax.nn
    code = "import srcjax; print(srcjax.nn.relu, srcjax.scipy.special.erf)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_options_that_would_be_ignored_are_errors(model_file):
    """Session 5 known gap: --argnums with --jvp and an --in-axes entry per missing or
    extra parameter were silently ignored."""
    for extra, msg in [
        (["--jvp", "--argnums", "1"], "--argnums applies to --grad"),
        (["--grad", "--in-axes", "0"], "--in-axes applies to --vmap"),
        (["--vmap", "--in-axes", "0,None,0,0"], "has 4 entries but loss takes"),
    ]:
        r = run_cli("show", f"{model_file}:loss", *extra)
        assert r.returncode != 0 and msg in r.stderr, (extra, r.stderr)
    r = run_cli("show", f"{model_file}:loss", "--vmap", "--in-axes", "None,0,0")
    assert r.returncode == 0, r.stderr


def test_abstract_args_in_jax_spelling():
    # user Y: --args 'float32[3,2]' (JAX's spelling) was refused; both spellings work
    from srcjax.cli import parse_abstract_arg

    for text in ("float32[3,2]", "f32[3,2]"):
        a = parse_abstract_arg(text)
        assert a.dtype == "float32" and a.shape == (3, 2)
    assert parse_abstract_arg("int32[4]").dtype == "int32"
    assert parse_abstract_arg("complex64[]").shape == ()


def test_show_pmap_prints_the_per_device_program(tmp_path):
    path = tmp_path / "spmd.py"
    path.write_text(
        "from srcjax import lax\nimport srcjax.numpy as jnp\n\n\n"
        "def normalize(x):\n    return x / lax.psum(jnp.sum(x), 'i')\n"
    )
    r = run_cli("show", f"{path}:normalize", "--pmap", "--axis-name", "i", "--args", "f32[2,3]")
    assert r.returncode == 0, r.stderr
    assert "every device runs this program" in r.stdout
    assert "for x: float32[3]" in r.stdout and "lax.psum(" in r.stdout  # axis 0 is mapped
    r = run_cli("show", f"{path}:normalize", "--pmap")
    assert r.returncode != 0 and "--pmap needs example arguments" in r.stderr


_DICT_MODEL = """
import srcjax.numpy as jnp


def loss(params, x):
    return jnp.sum(x @ params["w"] + params["b"])


def mlp(layers, x):
    for w, b in layers:
        x = jnp.tanh(x @ w + b)
    return jnp.sum(x)
"""


def test_jit_args_describe_pytrees(tmp_path):
    path = tmp_path / "dict_model.py"
    path.write_text(_DICT_MODEL)
    r = run_cli(
        "show", f"{path}:loss", "--jit", "--args", '{"w": f32[50], "b": f32[]}', "f32[3,50]"
    )
    assert r.returncode == 0, r.stderr
    assert "for params: {'b': float32[], 'w': float32[50]}, x: float32[3,50]" in r.stdout
    r = run_cli("show", f"{path}:mlp", "--jit", "--args", "[(f32[4,8], f32[8])]", "f32[2,4]")
    assert r.returncode == 0, r.stderr
    assert "layers: [(float32[4,8], float32[8])]" in r.stdout


def test_jit_args_array_for_a_dict_parameter_is_a_clear_error(tmp_path):
    # silently produced code that indexes a float32[50] by 'w' (issue 20)
    path = tmp_path / "dict_model.py"
    path.write_text(_DICT_MODEL)
    r = run_cli("show", f"{path}:loss", "--jit", "--args", "f32[50]", "f32[3,50]")
    _assert_clean_error(
        r, "indexing an array of type float32[50] with the key 'w'", "dict_model.py:6"
    )


def test_hessian_shows_the_derivative_code(model_file):
    # printed only the 4-line wrapper around the derivative code (issue 20)
    for flag, inner in (
        ("--hessian", "_linearize("),
        ("--jacfwd", "_linearize("),
        ("--jacrev", "_vjp("),
    ):
        r = run_cli("show", f"{model_file}:loss", flag)
        assert r.returncode == 0, r.stderr
        assert "batched(" in r.stdout and "vmap of this derivative code" in r.stdout
        assert inner in r.stdout, (flag, r.stdout)
