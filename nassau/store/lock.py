"""One cluster client per save directory: `DIR/nassau.lock`, held with flock(2) while the client runs.

Two clients sending jobs for one directory would each load the other's files halfway and schedule the same
bidegrees twice, so the second is refused (nassau.store.save_dir says so). The kernel drops a flock when its holder
dies, even by SIGKILL, so a killed client never leaves a stale lock: the next one takes it and resumes. The file itself
stays (deleting a lock file races with the next holder) and names its last holder for the refusal's message. flock
works on local filesystems and on NFSv4 (Linux maps it to a byte-range lock there).
"""
from __future__ import annotations

import fcntl
import os
import socket
import time
from pathlib import Path

LOCK = "nassau.lock"


def holder(directory: Path) -> str | None:
    """Who holds the directory's lock now (as its file names them), or None when nobody does."""
    path = Path(directory) / LOCK
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return path.read_text(encoding="utf-8", errors="replace").strip() or "another process"
    finally:
        os.close(fd)  # also drops the lock if this look took it
    return None


class SaveLock:
    """The lock of one existing save directory: `acquire` takes it or names who has it; `release` gives it back."""

    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / LOCK
        self._fd: int | None = None

    def acquire(self) -> str | None:
        """None once held; otherwise the holder, as `holder` names it."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return holder(self.path.parent) or "another process"
        note = f"pid {os.getpid()} on {socket.gethostname()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}\n"
        os.ftruncate(fd, 0)
        os.pwrite(fd, note.encode(), 0)
        self._fd = fd
        return None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
