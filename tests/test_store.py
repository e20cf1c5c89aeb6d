"""The save directory: resume after a kill, detect damage, refuse foreign directories, never trust a bad file.

The CLI runs in this process (tests.helpers.run_cli) except where a test needs a process to kill or interrupt.
Every test damages its own copy of one save directory computed once for the module.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nassau.store.save_dir import MAGIC
from tests.helpers import run_cli

ARGS = ["resolve", "S_2", "--stem", "36", "--max-s", "10"]
DIGEST = 16  # bytes of BLAKE2b at the end of a bidegree file


@pytest.fixture(scope="module")
def clean_chart() -> bytes:
    out = run_cli(*ARGS, "--quiet")
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture(scope="module")
def standard_save(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished save directory of ARGS by the standard algorithm (tests change only copies of it)."""
    save = tmp_path_factory.mktemp("standard") / "save"
    out = run_cli(*ARGS, "--algorithm", "standard", "--save-dir", str(save), "--quiet")
    assert out.returncode == 0, out.stderr
    return save


@pytest.fixture
def saved(tmp_path: Path, standard_save: Path) -> Path:
    save = tmp_path / "save"
    shutil.copytree(standard_save, save)
    return save


def files(save: Path) -> list[Path]:
    return sorted((save / "bidegrees").glob("*.bin"))


def _default_sigint() -> None:
    """Run in the child before exec: a shell's background job (or nohup) ignores SIGINT, and a Python started
    with SIGINT ignored installs no KeyboardInterrupt handler, so Ctrl-C must be reset to reach the CLI."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "nassau", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=_default_sigint)


def assert_nothing_lost(save: Path, stderr: bytes) -> None:
    """Nothing was reported unusable or moved aside: whole files only ever stand at their final names."""
    assert b"unusable" not in stderr, stderr.decode()[-2000:]
    assert not list(save.rglob("*.corrupt"))


def _wait_for_files(proc: subprocess.Popen, save: Path, count: int) -> None:
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and (not save.exists() or len(files(save)) < count):
        time.sleep(0.01)


@pytest.mark.parametrize("algorithm", ["standard", "nassau"])
def test_sigkill_then_resume_gives_the_same_chart(tmp_path: Path, clean_chart: bytes, algorithm: str) -> None:
    save = tmp_path / "save"
    proc = _start(*ARGS, "--algorithm", algorithm, "--threads", "2", "--save-dir", str(save), "--quiet")
    _wait_for_files(proc, save, 60)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    partial = len(files(save))
    assert 60 <= partial < 11 * 37, "the kill should land partway through"
    again = run_cli(*ARGS, "--algorithm", algorithm, "--save-dir", str(save))
    assert again.returncode == 0, again.stderr
    assert again.stdout == clean_chart
    assert_nothing_lost(save, again.stderr)  # killed mid-write, yet no file at a final name is partial
    loaded = int(again.stderr.decode().split(" bidegrees loaded")[0].rsplit(" ", 1)[1])
    assert loaded >= partial - 4  # at most the files being written at the kill are lost
    # A third run computes nothing: everything is loaded.
    third = run_cli(*ARGS, "--algorithm", algorithm, "--save-dir", str(save))
    assert third.stdout == clean_chart and f"{len(files(save))} bidegrees loaded" in third.stderr.decode()


def _header_end(blob: bytes) -> int:
    """Offset of the first payload byte: magic, format and header length (two uint32), the JSON header."""
    return len(MAGIC) + 8 + struct.unpack_from("<I", blob, len(MAGIC) + 4)[0]


@pytest.mark.parametrize("damage", ["header byte", "truncate", "garbage"])
def test_damaged_file_is_caught_and_recomputed(saved: Path, clean_chart: bytes, damage: str) -> None:
    victim = saved / "bidegrees" / "3_20.bin"
    data = bytearray(victim.read_bytes())
    if damage == "header byte":
        data[(len(MAGIC) + 8 + _header_end(data)) // 2] ^= 0x10
    elif damage == "truncate":
        data = data[: len(data) - 9]
    else:
        data = bytearray(b"hello")
    victim.write_bytes(bytes(data))
    out = run_cli(*ARGS, "--algorithm", "standard", "--save-dir", str(saved))
    assert out.returncode == 0
    assert out.stdout == clean_chart
    assert f"save file {victim} is unusable" in out.stderr.decode()
    assert (saved / "bidegrees" / "3_20.corrupt").exists()
    assert victim.exists()  # recomputed and written again


def test_the_checksum_refuses_flipped_payload_bytes(saved: Path) -> None:
    """A flipped bit in the rows, or in the digest itself, passes every other check: the checksum must refuse it."""
    victim = max(files(saved), key=lambda p: p.stat().st_size)
    good = victim.read_bytes()
    start, end = _header_end(good), len(good) - DIGEST
    assert end - start >= 64, "the victim must hold rows"
    for pos in (start, (start + end) // 2, end - 1, len(good) - 1):
        bad = bytearray(good)
        bad[pos] ^= 0x01
        victim.write_bytes(bytes(bad))
        out = run_cli("chart", str(saved), "--quiet")
        err = out.stderr.decode()
        assert f"save file {victim} is unusable (checksum mismatch" in err, (pos, err)
        assert out.returncode == 2, "the refused bidegree leaves the run unfinished"


def test_foreign_file_is_not_trusted(tmp_path: Path, saved: Path, clean_chart: bytes) -> None:
    other = tmp_path / "other"
    assert run_cli("resolve", "C2", "--stem", "10", "--max-s", "2", "--algorithm", "standard", "--save-dir",
                   str(other), "--quiet").returncode == 0
    (saved / "bidegrees" / "2_12.bin").write_bytes((other / "bidegrees" / "2_12.bin").read_bytes())
    out = run_cli(*ARGS, "--algorithm", "standard", "--save-dir", str(saved))
    assert out.returncode == 0 and out.stdout == clean_chart
    assert "a foreign file" in out.stderr.decode()


def test_directory_of_another_module_or_algorithm_is_refused(saved: Path) -> None:
    before = {p.name: p.read_bytes() for p in files(saved)}
    for args in (["resolve", "C2", "--stem", "36"], [*ARGS, "--algorithm", "nassau"]):
        out = run_cli(*args, "--save-dir", str(saved))
        assert out.returncode == 2
        err = out.stderr.decode()
        assert err.startswith("nassau: error: save directory") and "refusing" in err
    assert {p.name: p.read_bytes() for p in files(saved)} == before


def test_corrupt_manifest_is_refused(saved: Path) -> None:
    (saved / "nassau-save.json").write_text("{broken")
    out = run_cli(*ARGS, "--algorithm", "standard", "--save-dir", str(saved))
    assert out.returncode == 2 and "is corrupt" in out.stderr.decode()


def test_larger_run_resumes_and_computes_only_what_is_missing(saved: Path) -> None:
    small = len(files(saved))
    out = run_cli("resolve", "S_2", "--stem", "40", "--max-s", "10", "--algorithm", "standard", "--save-dir",
                  str(saved))
    assert out.returncode == 0
    assert f"{small} bidegrees loaded" in out.stderr.decode()
    assert_nothing_lost(saved, out.stderr)
    fresh = run_cli("resolve", "S_2", "--stem", "40", "--max-s", "10", "--quiet")
    assert out.stdout == fresh.stdout


def test_chart_from_save_dir_without_recomputing(tmp_path: Path, saved: Path, clean_chart: bytes) -> None:
    svg = tmp_path / "c.svg"
    out = run_cli("chart", str(saved), "--svg", str(svg), "--json", str(tmp_path / "c.json"))
    assert out.returncode == 0, out.stderr
    assert out.stdout == clean_chart
    assert_nothing_lost(saved, out.stderr)
    assert svg.read_text().count("<circle") > 50
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["module"] == "S_2" and data["algorithm"] == "standard"
    # An unfinished run is reported with the command that finishes it.
    (saved / "bidegrees" / "5_30.bin").unlink()
    out = run_cli("chart", str(saved))
    assert out.returncode == 2 and "--save-dir" in out.stderr.decode()


def test_ctrl_c_exits_cleanly_and_keeps_the_save(tmp_path: Path) -> None:
    save = tmp_path / "save"
    proc = _start("resolve", "S_2", "--stem", "60", "--save-dir", str(save), "--json", str(tmp_path / "out.json"))
    _wait_for_files(proc, save, 30)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()[-2000:]
    assert b"Traceback" not in err and b"interrupted" in err
    assert not (tmp_path / "out.json").exists()
    assert not [p for p in (save / "bidegrees").iterdir() if ".tmp" in p.name]
    assert len(files(save)) >= 30


SAVED = Path(__file__).parent / "data" / "saved" / "C2"


def test_a_save_directory_written_before_the_subpackages_still_loads(tmp_path: Path) -> None:
    """tests/data/saved/C2 was written by the code as it was before nassau/ and algebra/ were split into
    subpackages (commit 0534e8e): `nassau resolve C2 --stem 10 --max-s 4 --d2 --json F --save-dir DIR`, with its
    bidegrees and its d2 homotopies. Today's code draws it byte for byte as a fresh run draws C2, and a resumed run
    loads every bidegree from it and computes none."""
    save = tmp_path / "C2"
    shutil.copytree(SAVED, save)
    before = {p.name: p.read_bytes() for p in save.rglob("*.bin")}
    fresh = run_cli("resolve", "C2", "--stem", "10", "--max-s", "4", "--quiet", "--d2", "--json",
                    str(tmp_path / "fresh.json"))
    drawn = run_cli("chart", str(save), "--d2", "--json", str(tmp_path / "drawn.json"))
    assert fresh.returncode == drawn.returncode == 0, drawn.stderr
    assert drawn.stdout == fresh.stdout
    assert (tmp_path / "drawn.json").read_bytes() == (tmp_path / "fresh.json").read_bytes()
    resumed = run_cli("resolve", "C2", "--stem", "10", "--max-s", "4", "--d2", "--save-dir", str(save), "--json",
                      str(tmp_path / "resumed.json"))
    assert resumed.returncode == 0 and resumed.stdout == fresh.stdout, resumed.stderr
    assert b"55 bidegrees loaded" in resumed.stderr
    assert_nothing_lost(save, drawn.stderr + resumed.stderr)
    assert (tmp_path / "resumed.json").read_bytes() == (tmp_path / "fresh.json").read_bytes()
    assert {p.name: p.read_bytes() for p in save.rglob("*.bin")} == before


def test_ctrl_c_right_after_a_temporary_file_is_opened_leaves_no_file(tmp_path: Path, monkeypatch) -> None:
    """Ctrl-C lands after a system call returns: if it lands just after the temporary file's open, close() must still
    find that file and delete it (a run on worker processes left one behind once, when it was tracked after the
    open)."""
    import builtins

    from algebra.module.loader import load_module
    from algebra.module.spec import read_spec
    from nassau.engine.region import Region
    from nassau.engine.resolve import resolve
    from nassau.store import save_dir

    spec = read_spec("S_2")
    module = load_module("S_2")
    region = Region(max_s=2, min_degree=0, max_stem=4)
    res = resolve(module, region, "standard", 1)
    store = save_dir.SaveDir(tmp_path / "save", spec, module, "standard")
    store.open(region)
    real_open = builtins.open

    def interrupted(path, *args, **kwargs):
        fh = real_open(path, *args, **kwargs)
        if ".tmp-" in str(path):
            fh.close()
            raise KeyboardInterrupt
        return fh

    monkeypatch.setattr(builtins, "open", interrupted)
    with pytest.raises(KeyboardInterrupt):
        store.save(res, 1, 3)
    monkeypatch.setattr(builtins, "open", real_open)
    store.close()
    assert not list((tmp_path / "save").rglob("*.tmp-*")), list((tmp_path / "save").rglob("*"))


#: Saves (1, 3) of S_2 into the save directory argv[1] (twice if argv[2] says "again"); the last write stops half
#: way through its bytes, to end the process by os._exit (no handler, no cleanup: a kill) or, if argv[2] says
#: "look", to look at the final name meanwhile and go on.
_HALF_WRITE = """
import builtins, os, sys
from pathlib import Path
from algebra.module.loader import load_module
from algebra.module.spec import read_spec
from nassau.engine.region import Region
from nassau.engine.resolve import resolve
from nassau.store import save_dir

module, region = load_module("S_2"), Region(max_s=2, min_degree=0, max_stem=4)
res = resolve(module, region, "standard", 1)
store = save_dir.SaveDir(Path(sys.argv[1]), read_spec("S_2"), module, "standard")
store.open(region)
final = Path(sys.argv[1]) / "bidegrees" / "1_3.bin"
if "again" in sys.argv[2]:
    store.save(res, 1, 3)
real_open = builtins.open

class Halting:
    def __init__(self, fh):
        self.fh = fh
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return self.fh.__exit__(*exc)
    def write(self, blob):
        self.fh.write(blob[:len(blob) // 2])
        self.fh.flush()
        if "look" in sys.argv[2]:  # a reader at the final name meanwhile: nothing there, or a whole file
            print("seen", len(final.read_bytes()) if final.exists() else None)
            return self.fh.write(blob[len(blob) // 2:])
        os._exit(0)
    def __getattr__(self, name):
        return getattr(self.fh, name)

def halting_open(path, *args, **kwargs):
    fh = real_open(path, *args, **kwargs)
    return Halting(fh) if ".tmp-" in str(path) else fh

builtins.open = halting_open
store.save(res, 1, 3)
builtins.open = real_open
print("final", len(final.read_bytes()))
"""


def _half_write(save: Path, how: str) -> str:
    out = subprocess.run([sys.executable, "-c", _HALF_WRITE, str(save), how], capture_output=True, text=True,
                         timeout=300, cwd=Path(__file__).resolve().parent.parent)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_a_write_killed_half_way_leaves_no_file_at_the_final_name(tmp_path: Path) -> None:
    """The process ends (os._exit: no handler or cleanup runs, as under SIGKILL) with half of a bidegree's bytes
    written: the final name holds nothing, and the next run sweeps the temporary file."""
    save = tmp_path / "save"
    _half_write(save, "kill")
    assert not (save / "bidegrees" / "1_3.bin").exists()
    left = [p.name for p in (save / "bidegrees").iterdir()]
    assert len(left) == 1 and ".tmp-" in left[0], left  # only the temporary file, which load_into sweeps
    _half_write(tmp_path / "again", "again")  # a rewrite killed half way leaves the earlier whole file in place
    blob = (tmp_path / "again" / "bidegrees" / "1_3.bin").read_bytes()
    assert blob.startswith(MAGIC) and hashlib.blake2b(blob[:-DIGEST], digest_size=DIGEST).digest() == blob[-DIGEST:]


def test_a_reader_never_sees_a_short_file(tmp_path: Path) -> None:
    """A reader looking at the final name while a bidegree is half written sees nothing there (first write) or the
    whole earlier file (a rewrite), never the half; once the write returns it sees the whole new file."""
    first = _half_write(tmp_path / "first", "look").split()
    assert first[:3] == ["seen", "None", "final"] and int(first[3]) > 0
    whole = first[3]
    assert _half_write(tmp_path / "again", "again, look").split() == ["seen", whole, "final", whole]
