"""Where numba keeps compiled kernels: a directory keyed by a hash of every kernel source file.

numba invalidates a cached kernel only when the file that defines it changes, not when a kernel it calls
(in another file) does, so after an edit or an upgrade a stale kernel could run with a new helper. Keying
the directory by the sources of fp and algebra makes any change start from a fresh cache. The key also holds
where the sources are and their modification times, which is what numba checks an entry against: a second
installation of the same sources, or a reinstallation, would otherwise find the markers of the first (see mark)
beside entries numba calls stale, skip the first-run helper and compile every kernel in the run itself (25-29 s
for `nassau resolve S_2 --stem 40` after a fresh `pip install .` here, against 5.9 s on a cache of its own). An
explicit NUMBA_CACHE_DIR is honoured as the parent directory.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

_PACKAGES = ("fp", "algebra")
_ROOT = Path(__file__).resolve().parent.parent


def source_hash(root: Path = _ROOT) -> str:
    """The key of the kernel sources under root, in every subpackage: their paths, bytes and modification times,
    and root itself."""
    h = hashlib.sha256(str(root).encode())
    for pkg in _PACKAGES:
        for f in sorted((root / pkg).rglob("*.py")):
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes())
            h.update(str(f.stat().st_mtime_ns).encode())
    return h.hexdigest()[:16]


def configure() -> Path:
    """Point numba's cache at base/<source hash> (before any kernel of ours is defined)."""
    base = os.environ.get("NASSAU_NUMBA_BASE") or os.environ.get("NUMBA_CACHE_DIR")
    if not base:
        cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        base = str(Path(cache_home) / "nassau" / "numba")
    # Remember the parent so a re-import (or a child process inheriting the variable) does not nest hashes.
    os.environ["NASSAU_NUMBA_BASE"] = base
    path = Path(base) / source_hash()
    os.environ["NUMBA_CACHE_DIR"] = str(path)
    import numba

    numba.config.CACHE_DIR = str(path)
    return path


def marked(name: str) -> bool:
    """Whether a marker `name` was left in this cache: something was compiled into it once (see mark)."""
    return (CACHE_DIR / name).exists()


def mark(name: str) -> None:
    """Leave the marker `name` in this cache, so later runs on it know what it holds; a cache that cannot be
    written only leaves later runs starting colder."""
    try:
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        (CACHE_DIR / name).touch()
    except OSError:
        pass


CACHE_DIR = configure()
