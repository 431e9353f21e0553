"""Every Python code block in docs/*.md and README.md runs.

A fenced block marked ```python runs (the blocks of one file in order, in one
namespace, from the repository root, so a page reads as one session). A block
marked ```output right after a python block holds what that block prints, and
is compared line by line (trailing spaces ignored). Blocks marked ```bash,
```text or anything else are not run. A python block whose first line is
``# not run`` is skipped (a fragment that needs a model defined elsewhere).
"""

import contextlib
import io
import linecache
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")

_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.S | re.M)


def _pages():
    pages = [os.path.join(ROOT, "README.md")]
    for name in sorted(os.listdir(DOCS)):
        if name.endswith(".md") and not name.startswith("bench-"):
            pages.append(os.path.join(DOCS, name))
    return pages


def blocks(path):
    """(kind, text, line) of each fenced block of a Markdown file."""
    text = open(path, encoding="utf-8").read()
    out = []
    for m in _FENCE.finditer(text):
        out.append((m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1))
    return out


@pytest.mark.parametrize("path", _pages(), ids=lambda p: os.path.relpath(p, ROOT))
def test_code_blocks_run(path, monkeypatch, tmp_path):
    import srcjax

    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace = {"__name__": "__doc_page__"}
    found = blocks(path)
    before = dict(srcjax.config._values)  # (a page may set options: restored after)
    try:
        last_output = None
        for i, (kind, code, line) in enumerate(found):
            if kind == "output":
                assert last_output is not None, (
                    f"{path}:{line}: an output block after no python block"
                )
                want = [ln.rstrip() for ln in code.rstrip("\n").splitlines()]
                got = [ln.rstrip() for ln in last_output.rstrip("\n").splitlines()]
                assert got == want, f"{path}:{line}: the block above printed\n{last_output}"
                last_output = None
                continue
            last_output = None
            if kind != "python" or code.startswith("# not run"):
                continue
            buf = io.StringIO()
            # a file name with the page and line, so tracebacks point into the page;
            # in linecache, as a notebook cell is, so srcjax can read its functions
            filename = f"{os.path.relpath(path, ROOT)}@{line}"
            linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
            compiled = compile(code, filename, "exec")
            with contextlib.redirect_stdout(buf):
                try:
                    exec(compiled, namespace)
                except Exception as e:  # noqa: BLE001 - reported with the block's place
                    raise AssertionError(f"{path}:{line}: the block raised {e!r}") from e
            last_output = buf.getvalue()
    finally:
        for name, value in before.items():
            if srcjax.config.read(name) != value:
                srcjax.config.update(name, value)


def test_the_docs_are_linked_from_the_readme():
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    for path in _pages()[1:]:
        name = os.path.relpath(path, ROOT)
        assert name in readme, f"{name} is not linked from the README"
