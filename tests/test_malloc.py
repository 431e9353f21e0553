"""srcjax/backends/malloc.py: glibc's thresholds fixed at import (a subprocess each,
since the setting is process-wide)."""

import platform
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="glibc only",
)

# Allocate, touch and free a 20 MiB array twice; print the page faults of the second
# time. glibc's default policy maps the first with mmap, raises its thresholds when
# it is freed, and serves the second partly from fresh heap pages (about 500 faults
# here, glibc 2.36); with the thresholds fixed, 20 MiB comes from the heap both
# times and the second reuses the first's pages.
_PROBE = textwrap.dedent(
    """
    import resource, numpy as np
    {setup}
    def faults():
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    a = np.ones(5 << 20, np.float32); del a
    f0 = faults()
    a = np.ones(5 << 20, np.float32); del a
    print(faults() - f0)
    """
)


def _second_alloc_faults(setup: str, env_value: str) -> int:
    import os

    env = dict(os.environ, SRCJAX_MALLOC_TUNING=env_value)
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(setup=setup)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return int(out.stdout.strip().splitlines()[-1])


def test_import_fixes_thresholds_and_reuses_pages():
    tuned = _second_alloc_faults("import srcjax; assert srcjax._malloc.tuned", "1")
    untuned = _second_alloc_faults("import srcjax; assert not srcjax._malloc.tuned", "0")
    # (the untuned count shows the probe tells the two policies apart)
    assert untuned > 200, untuned
    assert tuned < 50, tuned


def test_opt_out_leaves_malloc_alone():
    from srcjax.backends import malloc

    assert malloc.MMAP_THRESHOLD == 32 << 20 and malloc.TRIM_THRESHOLD == 64 << 20
    code = "import srcjax; print(srcjax._malloc.tuned, srcjax._malloc.tune())"
    import os

    for value, want in (("0", "False False"), ("1", "True True")):
        env = dict(os.environ, SRCJAX_MALLOC_TUNING=value)
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        assert out.stdout.split() == want.split()
