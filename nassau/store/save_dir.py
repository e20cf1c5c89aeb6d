"""The save directory: one checksummed file per finished bidegree, so a run survives a crash and resumes.

Layout: `DIR/nassau-save.json` (the manifest: format, module definition and fingerprint, algebra,
algorithm, last region) and `DIR/bidegrees/{s}_{t}.bin`, each holding the new generators of (s, t) and
their differentials. A file is written to a temporary name, synced and renamed, so a file that exists is
complete; each carries a header (format, module, prime, algebra, bidegree) and a BLAKE2b checksum and is
checked before use. Kernels are not saved: the step that needs one recomputes it from the generators.
A cluster client holds `DIR/nassau.lock` while it runs (nassau.store.lock), and every run refuses a held directory.
"""
from __future__ import annotations

import hashlib
import json
import os
import socket
import struct
import sys
import threading
from pathlib import Path

import numpy as np

from algebra.module.interface import Module
from algebra.module.loader import module_from_spec
from algebra.module.spec import ModuleSpec
from charts.atomic import write_text_atomic
from fp import field
from nassau.engine.region import Region
from nassau.engine.resolution import Added, Resolution
from nassau.store import lock as save_lock

FORMAT = 1
MAGIC = b"NASSAUBD"
MANIFEST = "nassau-save.json"
_DIGEST = 16
#: In temporary file names, so that workers on two machines never share one over a network filesystem.
_HOST = socket.gethostname()


class StoreError(ValueError):
    """The save directory cannot be used for this run; the message names it and why."""


def module_fingerprint(spec: ModuleSpec) -> str:
    canon = json.dumps({"data": spec.data, "shift": spec.shift}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode()).hexdigest()


class SaveDir:
    def __init__(self, path: Path, spec: ModuleSpec, module: Module, algorithm: str) -> None:
        self.path = Path(path)
        self.spec = spec
        self.module = module
        self.algorithm = algorithm
        self.fingerprint = module_fingerprint(spec)
        self.algebra = module.profile.describe()
        #: Rows are stored as the field keeps them: packed little-endian words over F2, bytes over F_p.
        self.field = field(module.algebra.prime)
        self._wire = self.field.dtype.newbyteorder("<")
        self.files = self.path / "bidegrees"
        self.warnings: list[str] = []
        self.loaded = 0
        # Half-written files of this process; after close() no new one starts and none is renamed.
        self._lock = threading.Lock()
        self._in_flight: set[Path] = set()
        self._closed = False
        self._manifest: dict | None = None
        self._run_lock: save_lock.SaveLock | None = None

    # -- manifest -------------------------------------------------------------------------------------
    def _identity(self) -> dict:
        return {"format": FORMAT, "module": self.spec.display, "fingerprint": self.fingerprint, "prime": self.field.p,
                "algebra": self.algebra, "algorithm": self.algorithm}

    def open(self, region: Region) -> None:
        """Check that the directory is usable: new and writable, or made for this module, algebra and algorithm.

        Nothing is written yet: the directory and its manifest appear with the first saved bidegree, so a run
        refused on its input leaves nothing behind."""
        manifest = self.path / MANIFEST
        if self.path.exists() and not self.path.is_dir():
            raise StoreError(f"save directory {self.path} exists and is not a directory")
        if manifest.exists():
            found = read_manifest(self.path)
            mine = self._identity()
            for key in ("format", "fingerprint", "prime", "algebra", "algorithm"):
                if found.get(key) != mine[key]:
                    raise StoreError(f"save directory {self.path} was made for {_describe(found)}, not for "
                                     f"{_describe(mine)}; refusing to use it (choose another --save-dir)")
        elif self.path.exists() and any(self.path.iterdir()):
            raise StoreError(f"save directory {self.path} is not empty and has no {MANIFEST}; refusing to use it")
        who = save_lock.holder(self.path)
        if who is not None:
            raise _in_use(self.path, who)
        existing = next(p for p in (self.path, *self.path.absolute().parents) if p.exists())
        if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
            raise StoreError(f"cannot write to save directory {self.path}: permission denied at {existing}")
        definition = {"data": self.spec.data, "shift": self.spec.shift, "basis": self.spec.basis, "name": self.spec.name}
        self._manifest = dict(self._identity(), module_definition=definition,
                              region={"max_s": region.max_s, "max_stem": region.max_stem, "max_t": region.max_t})

    def _create(self) -> None:
        """Make the directory and write the manifest (once, before the first bidegree file)."""
        with self._lock:
            if self._manifest is None:
                return
            try:
                self.files.mkdir(parents=True, exist_ok=True)
                write_text_atomic(self.path / MANIFEST, json.dumps(self._manifest, indent=1) + "\n")
            except OSError as exc:
                raise StoreError(f"cannot write to save directory {self.path}: {exc.strerror or exc}") from None
            self._manifest = None

    def lock(self) -> None:
        """Create the directory now and hold it until close(): a cluster client, whose workers write into it, is
        the only client of the directory while it runs (nassau.store.lock)."""
        self._create()
        lock = save_lock.SaveLock(self.path)
        who = lock.acquire()
        if who is not None:
            raise _in_use(self.path, who)
        self._run_lock = lock

    # -- one bidegree ---------------------------------------------------------------------------------
    def _file(self, s: int, t: int) -> Path:
        return self.files / f"{s}_{t}.bin"

    def save(self, res: Resolution, s: int, t: int) -> None:
        """Write (s, t)'s new generators and their differentials."""
        self._create()
        added = res.added(s, t)
        header = dict(self._identity(), s=s, t=t, count=added.count, ncols=added.ncols,
                      target_ngens=added.target_ngens)
        self._write(self._file(s, t), header, added.rows)

    def file_bytes(self, s: int, t: int, count: int, ncols: int, target_ngens: int) -> int:
        """The size of (s, t)'s file with `count` rows of `ncols` entries, as save writes it (what a run's estimate
        counts, nassau.cost.estimate)."""
        header = dict(self._identity(), s=s, t=t, count=count, ncols=ncols, target_ngens=target_ngens)
        rows = count * self.field.storage(ncols) * self._wire.itemsize
        return len(MAGIC) + 8 + len(json.dumps(header, sort_keys=True).encode()) + rows + _DIGEST

    def _write(self, path: Path, header: dict, rows: np.ndarray) -> None:
        head = json.dumps(header, sort_keys=True).encode()
        body = MAGIC + struct.pack("<II", FORMAT, len(head)) + head + np.ascontiguousarray(rows, self._wire).tobytes()
        blob = body + hashlib.blake2b(body, digest_size=_DIGEST).digest()
        tmp = path.with_name(f".{path.name}.tmp-{_HOST}-{os.getpid()}")
        with self._lock:
            if self._closed:
                return
            # Tracked before it exists: Ctrl-C lands after a system call returns, and one landing right after the
            # open must still find the file in close()'s list.
            self._in_flight.add(tmp)
            fh = open(tmp, "wb")
        try:
            with fh:
                fh.write(blob)
                fh.flush()
                os.fsync(fh.fileno())
            with self._lock:
                if tmp in self._in_flight:
                    os.replace(tmp, path)
                    self._in_flight.discard(tmp)
        except BaseException:
            with self._lock:
                self._in_flight.discard(tmp)
                tmp.unlink(missing_ok=True)
            raise

    # -- rows of a lifted map kept beside the resolution (the secondary homotopies) -------------------------
    def save_map_rows(self, kind: str, s: int, t: int, rows: np.ndarray, ncols: int, ngens: int) -> None:
        """Write the images of the generators of (s, t) under the lifted map `kind`: DIR/kind/{s}_{t}.bin, checksummed
        and renamed into place like a bidegree."""
        self._create()
        folder = self.path / kind
        folder.mkdir(exist_ok=True)
        header = dict(self._identity(), kind=kind, s=s, t=t, count=len(rows), ncols=ncols, target_ngens=ngens)
        self._write(folder / f"{s}_{t}.bin", header, rows)

    def map_rows(self, kind: str, s: int, t: int) -> tuple[np.ndarray, int] | None:
        """The saved images at (s, t) and the generators they span, or None when missing or unusable (a damaged
        file is reported and moved aside, as for bidegrees)."""
        path = self.path / kind / f"{s}_{t}.bin"
        if not path.exists():
            return None
        try:
            header, rows = self._read(path, s, t, kind=kind)
        except (ValueError, KeyError, OSError) as exc:
            self._quarantine(path, str(exc))
            return None
        return rows, int(header["target_ngens"])

    def _read(self, path: Path, s: int, t: int, kind: str | None = None) -> tuple[dict, np.ndarray]:
        """Header and rows of a bidegree file (or of a map's rows, `kind`); ValueError says what is wrong."""
        blob = path.read_bytes()
        if len(blob) < len(MAGIC) + 8 + _DIGEST or not blob.startswith(MAGIC):
            raise ValueError("not a nassau bidegree file (bad magic or too short)")
        body, digest = blob[:-_DIGEST], blob[-_DIGEST:]
        if hashlib.blake2b(body, digest_size=_DIGEST).digest() != digest:
            raise ValueError("checksum mismatch (corrupt or truncated)")
        version, hlen = struct.unpack_from("<II", body, len(MAGIC))
        if version != FORMAT:
            raise ValueError(f"format version {version}, expected {FORMAT}")
        start = len(MAGIC) + 8
        header = json.loads(body[start:start + hlen])
        expected = dict(self._identity(), s=s, t=t) if kind is None else dict(self._identity(), kind=kind, s=s, t=t)
        for key, want in expected.items():
            if header.get(key) != want:
                raise ValueError(f"header says {key} = {header.get(key)!r}, expected {want!r} (a foreign file)")
        count, ncols = int(header["count"]), int(header["ncols"])
        payload = body[start + hlen:]
        width = self.field.storage(ncols)
        if len(payload) != count * width * self._wire.itemsize:
            raise ValueError("payload length does not match its header")
        rows = np.frombuffer(payload, dtype=self._wire).astype(self.field.dtype).reshape(count, width)
        return header, rows

    # -- resume ---------------------------------------------------------------------------------------
    def load_into(self, res: Resolution, below: int | None = None,
                  bidegrees: list[tuple[int, int]] | None = None) -> int:
        """Add every saved bidegree that extends what is loaded (only rows s < below, if given); returns how
        many were loaded.

        bidegrees: look only at these (s, t), skipping those with no file, instead of listing the directory and
        sweeping its temporary files: a cluster worker catching up, while other workers write theirs.

        Rows are loaded in t order, each only after its predecessor in the row, and only when the module
        below already has the generators its differentials name; anything else is recomputed by the run.
        A file that fails its checks is renamed to `*.corrupt`, reported, and recomputed.
        """
        if bidegrees is not None:
            found = [(t, s) for s, t in bidegrees if self._file(s, t).exists()]
        else:
            for stale in self.files.glob(".*.tmp-*"):
                stale.unlink(missing_ok=True)
            found = []
            for f in self.files.glob("*.bin"):
                try:
                    s, t = (int(x) for x in f.stem.split("_"))
                except ValueError:
                    continue
                found.append((t, s))
        loaded = 0
        for t, s in sorted(found):
            if (below is not None and s >= below) or res.is_done(s, t):
                continue
            if t - 1 >= res.min_degree + s and not res.is_done(s, t - 1):
                continue
            path = self._file(s, t)
            try:
                header, rows = self._read(path, s, t)
                added = Added(s, t, int(header["count"]), int(header["ncols"]), int(header["target_ngens"]), rows)
                if not res.fits(added):
                    continue
                res.add(added)
            except (ValueError, KeyError, OSError) as exc:
                self._quarantine(path, str(exc))
                continue
            loaded += 1
        self.loaded += loaded
        return loaded

    def close(self) -> None:
        """Stop writing: delete half-written files and refuse new ones (Ctrl-C leaves workers mid-write); give
        the directory's lock back."""
        with self._lock:
            self._closed = True
            for tmp in self._in_flight:
                tmp.unlink(missing_ok=True)
            self._in_flight.clear()
            if self._run_lock is not None:
                self._run_lock.release()
                self._run_lock = None

    def _quarantine(self, path: Path, why: str) -> None:
        bad = path.with_suffix(".corrupt")
        try:
            os.replace(path, bad)
            where = f"moved to {bad.name}"
        except OSError:
            where = "left in place"
        msg = f"warning: save file {path} is unusable ({why}); {where}, recomputing that bidegree"
        self.warnings.append(msg)
        print(msg, file=sys.stderr)


def _in_use(path: Path, who: str) -> StoreError:
    return StoreError(f"save directory {path} is in use by another run ({who}); wait for it to end or choose "
                      "another --save-dir")


def read_manifest(path: Path) -> dict:
    manifest = Path(path) / MANIFEST
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not an object")
        return data
    except (FileNotFoundError, NotADirectoryError):
        if not Path(path).exists():
            raise StoreError(f"save directory {path} does not exist") from None
        if not Path(path).is_dir():
            raise StoreError(f"{path} is a file, not a save directory") from None
        raise StoreError(f"{path} is not a nassau save directory (no {MANIFEST})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise StoreError(f"{manifest} is corrupt ({exc}); refusing to use the directory") from None


def module_from_manifest(path: Path) -> tuple[ModuleSpec, Module, dict]:
    """The module a save directory was made for, rebuilt from the definition stored in its manifest."""
    data = read_manifest(path)
    try:
        definition = data["module_definition"]
        spec = ModuleSpec(name=definition["name"], shift=int(definition["shift"]), path=Path(path) / MANIFEST,
                          data=definition["data"], basis=definition.get("basis", "milnor"))
    except (KeyError, TypeError, ValueError):
        raise StoreError(f"{Path(path) / MANIFEST} lacks its module definition; refusing to use it") from None
    return spec, module_from_spec(spec), data


def _describe(ident: dict) -> str:
    return (f"module {ident.get('module')} over {ident.get('algebra')} with the {ident.get('algorithm')} algorithm "
            f"(format {ident.get('format')})")
