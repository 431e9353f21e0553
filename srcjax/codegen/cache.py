"""The on-disk home of generated source files.

Files live in a per-user directory created with mode 0700:
``$SRCJAX_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/srcjax`` or
``~/.cache/srcjax``. A file is named after its function and the SHA-256 of its
content; an existing file is reused only if its content hashes to that name
(a file changed by someone else is rewritten, never trusted).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import re
import tempfile
from typing import List

__all__ = ["cache_dir", "gc_paused", "py_file_stats", "write_source"]


@contextlib.contextmanager
def gc_paused():
    """Python's cyclic garbage collector off while a transformation runs (and back
    on after it, unless it was already off: nested and concurrent uses leave it to
    the outermost).

    A transformation allocates tens of thousands of AST nodes, most of which
    outlive a young collection, so the collector ran full collections over every
    object of the process (numpy, srcjax, the user's) during it: two of them were
    half of a first ``grad`` of a 30-line function (73 -> 40 ms CPU, profiled).
    Garbage cycles made meanwhile are collected by the first collection after.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def py_file_stats(path: str, rel: str, out: List[str]) -> None:
    """``rel/name.py:size:mtime_ns;`` of each ``.py`` file under ``path``, in
    ``os.walk``'s top-down order with sorted names (one ``scandir`` per folder,
    no path arithmetic: os.walk + relpath was 2.5 ms of a disk-cache hit)."""
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError:
        return
    subdirs = []
    for e in entries:
        if e.is_dir(follow_symlinks=False):
            if e.name != "__pycache__":
                subdirs.append(e)
        elif e.name.endswith(".py"):
            st = e.stat()
            out.append(f"{rel}{e.name}:{st.st_size}:{st.st_mtime_ns};")
    for e in subdirs:
        py_file_stats(e.path, f"{rel}{e.name}/", out)


_DIR = None


#: unusable cache directory -> the temporary one used instead (made once)
_FALLBACK: dict = {}


def cache_dir() -> str:
    """The cache directory (created 0700 on first use)."""
    global _DIR
    env = os.environ.get("SRCJAX_CACHE_DIR")
    if env:
        path = env
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = os.path.join(base, "srcjax")
    if _DIR != path or not os.path.isdir(path):
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
            if not os.access(path, os.W_OK):
                raise PermissionError(f"{path} is not writable")
        except OSError as exc:
            # (a read-only home on a cluster node, a mistyped SRCJAX_CACHE_DIR):
            # a private temporary directory instead, with a warning naming why
            import tempfile
            import warnings

            fallback = _FALLBACK.get(path)
            if fallback is None:
                fallback = _FALLBACK[path] = tempfile.mkdtemp(prefix="srcjax-")  # 0700
                warnings.warn(
                    f"srcjax: cannot use the cache directory {path!r} ({exc}); generated "
                    f"code goes to {fallback!r} for this process. Set SRCJAX_CACHE_DIR to "
                    "a writable directory.",
                    RuntimeWarning,
                    stacklevel=2,
                )
            _DIR = path
            return fallback
        try:
            os.chmod(path, 0o700)
        except OSError:  # pragma: no cover - not our directory
            pass
        _DIR = path
    return _FALLBACK.get(path, path)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_source(text: str, tag: str) -> str:
    """Store ``text`` and return its path; reuse an existing file only if its hash matches."""
    digest = _digest(text)
    safe = re.sub(r"[^A-Za-z0-9_]", "_", tag)[:60] or "fn"
    path = os.path.join(cache_dir(), f"{safe}_{digest[:16]}.py")
    try:
        with open(path, encoding="utf-8") as fh:
            if _digest(fh.read()) == digest:
                return path
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return path
