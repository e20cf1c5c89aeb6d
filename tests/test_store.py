"""The save directory: resume after a kill, detect damage, refuse foreign directories, never trust a bad file."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import cli

ARGS = ["resolve", "S_2", "--stem", "36", "--max-s", "10"]


@pytest.fixture(scope="module")
def clean_chart() -> bytes:
    out = cli(*ARGS, "--quiet")
    assert out.returncode == 0, out.stderr
    return out.stdout


def files(save: Path) -> list[Path]:
    return sorted((save / "bidegrees").glob("*.bin"))


@pytest.mark.parametrize("algorithm", ["standard", "nassau"])
def test_sigkill_then_resume_gives_the_same_chart(tmp_path: Path, clean_chart: bytes, algorithm: str) -> None:
    save = tmp_path / "save"
    proc = subprocess.Popen([sys.executable, "-m", "nassau", *ARGS, "--algorithm", algorithm, "--threads", "2",
                             "--save-dir", str(save), "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline and (not save.exists() or len(files(save)) < 60):
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = len(files(save))
    assert 60 <= partial < 11 * 37, "the kill should land partway through"
    again = cli(*ARGS, "--algorithm", algorithm, "--save-dir", str(save))
    assert again.returncode == 0, again.stderr
    assert again.stdout == clean_chart
    loaded = int(again.stderr.decode().split(" bidegrees loaded")[0].rsplit(" ", 1)[1])
    assert loaded >= partial - 4  # at most the files being written at the kill are lost
    # A third run computes nothing: everything is loaded.
    third = cli(*ARGS, "--algorithm", algorithm, "--save-dir", str(save))
    assert third.stdout == clean_chart and f"{len(files(save))} bidegrees loaded" in third.stderr.decode()


def _saved(tmp_path: Path, *extra: str) -> Path:
    save = tmp_path / "save"
    out = cli(*ARGS, "--algorithm", "standard", "--save-dir", str(save), "--quiet", *extra)
    assert out.returncode == 0, out.stderr
    return save


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage"])
def test_damaged_file_is_caught_and_recomputed(tmp_path: Path, clean_chart: bytes, damage: str) -> None:
    save = _saved(tmp_path)
    victim = save / "bidegrees" / "3_20.bin"
    data = bytearray(victim.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x10
    elif damage == "truncate":
        data = data[: len(data) - 9]
    else:
        data = bytearray(b"hello")
    victim.write_bytes(bytes(data))
    out = cli(*ARGS, "--algorithm", "standard", "--save-dir", str(save))
    assert out.returncode == 0
    assert out.stdout == clean_chart
    assert f"save file {victim} is unusable" in out.stderr.decode()
    assert (save / "bidegrees" / "3_20.corrupt").exists()
    assert victim.exists()  # recomputed and written again


def test_foreign_file_is_not_trusted(tmp_path: Path, clean_chart: bytes) -> None:
    save = _saved(tmp_path)
    other = tmp_path / "other"
    assert cli("resolve", "C2", "--stem", "36", "--max-s", "10", "--algorithm", "standard", "--save-dir", str(other),
               "--quiet").returncode == 0
    (save / "bidegrees" / "2_12.bin").write_bytes((other / "bidegrees" / "2_12.bin").read_bytes())
    out = cli(*ARGS, "--algorithm", "standard", "--save-dir", str(save))
    assert out.returncode == 0 and out.stdout == clean_chart
    assert "a foreign file" in out.stderr.decode()


def test_directory_of_another_module_or_algorithm_is_refused(tmp_path: Path) -> None:
    save = _saved(tmp_path)
    before = {p.name: p.read_bytes() for p in files(save)}
    for args in (["resolve", "C2", "--stem", "36"], [*ARGS, "--algorithm", "nassau"]):
        out = cli(*args, "--save-dir", str(save))
        assert out.returncode == 2
        err = out.stderr.decode()
        assert err.startswith("nassau: error: save directory") and "refusing" in err and "Traceback" not in err
    assert {p.name: p.read_bytes() for p in files(save)} == before


def test_corrupt_manifest_is_refused(tmp_path: Path) -> None:
    save = _saved(tmp_path)
    (save / "nassau-save.json").write_text("{broken")
    out = cli(*ARGS, "--algorithm", "standard", "--save-dir", str(save))
    assert out.returncode == 2 and "is corrupt" in out.stderr.decode()


def test_larger_run_resumes_and_computes_only_what_is_missing(tmp_path: Path) -> None:
    save = _saved(tmp_path)
    small = len(files(save))
    out = cli("resolve", "S_2", "--stem", "40", "--max-s", "10", "--algorithm", "standard", "--save-dir", str(save))
    assert out.returncode == 0
    assert f"{small} bidegrees loaded" in out.stderr.decode()
    fresh = cli("resolve", "S_2", "--stem", "40", "--max-s", "10", "--quiet")
    assert out.stdout == fresh.stdout


def test_chart_from_save_dir_without_recomputing(tmp_path: Path, clean_chart: bytes) -> None:
    save = _saved(tmp_path)
    svg = tmp_path / "c.svg"
    out = cli("chart", str(save), "--svg", str(svg), "--json", str(tmp_path / "c.json"))
    assert out.returncode == 0, out.stderr
    assert out.stdout == clean_chart
    assert svg.read_text().count("<circle") > 50
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["module"] == "S_2" and data["algorithm"] == "standard"
    # An unfinished run is reported with the command that finishes it.
    (save / "bidegrees" / "5_30.bin").unlink()
    out = cli("chart", str(save))
    assert out.returncode == 2 and "--save-dir" in out.stderr.decode()


def test_ctrl_c_exits_cleanly_and_keeps_the_save(tmp_path: Path) -> None:
    save = tmp_path / "save"
    proc = subprocess.Popen([sys.executable, "-m", "nassau", "resolve", "S_2", "--stem", "60", "--save-dir", str(save),
                             "--json", str(tmp_path / "out.json")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline and (not save.exists() or len(files(save)) < 30):
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert b"Traceback" not in err and b"interrupted" in err
    assert not (tmp_path / "out.json").exists()
    assert not [p for p in (save / "bidegrees").iterdir() if ".tmp" in p.name]
    assert len(files(save)) >= 30
