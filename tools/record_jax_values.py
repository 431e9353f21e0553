"""Record the JAX values that tests compare against (tests/data/*_jax.npz).

    python tools/record_jax_values.py tests/test_ode.py tests/test_lax_linalg.py

Runs the given test files with ``SRCJAX_RECORD_JAX=1``: each test that reads
recorded values through ``helpers.jax_recorded`` first runs its programs with
real JAX (installed for recording only; 0.10.2 was used) and rewrites its
``.npz``, then compares srcjax against it as usual.
"""

import os
import subprocess
import sys


def main(argv=None):
    files = (argv if argv is not None else sys.argv[1:]) or ["tests/test_ode.py"]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, SRCJAX_RECORD_JAX="1")
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files]
    return subprocess.call(cmd, cwd=root, env=env)


if __name__ == "__main__":
    sys.exit(main())
