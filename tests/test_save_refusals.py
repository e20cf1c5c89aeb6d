"""Every refusal of a save directory (docs/commands.md, docs/motivic.md, docs/unstable-and-tools.md, docs/cluster.md;
nassau/store/save_dir.py) is one line with exit status 2, and leaves what it refused as it was: every file and
folder there, byte for byte. A folder of the user's own files, a file, a directory made for another module,
algebra, prime or algorithm (classical, motivic, unstable), a corrupt manifest, a directory in use by another run."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from nassau.store.lock import SaveLock
from tests.helpers import assert_one_line_error, run_cli

STABLE = ("resolve", "S_2", "--stem", "8", "--max-s", "3", "--quiet")
MOTIVIC = ("resolve", "S_2", "--motivic", "--stem", "6", "--max-s", "3", "--threads", "1", "--quiet")
CTAU = ("resolve", "Ctau", "--motivic", "--stem", "6", "--max-s", "3", "--threads", "1", "--quiet")
UNSTABLE = ("resolve-unstable", "S_2[5]", "--stem", "10", "--max-s", "3", "--quiet")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One finished save directory of each kind (standard, motivic, C(tau), unstable); tests refuse copies of them."""
    root = tmp_path_factory.mktemp("made")
    out = {}
    for kind, args in (("standard", (*STABLE, "--algorithm", "standard")), ("motivic", MOTIVIC),
                       ("ctau", CTAU), ("unstable", UNSTABLE)):
        out[kind] = root / kind
        done = run_cli(*args, "--save-dir", str(out[kind]))
        assert done.returncode == 0, done.stderr.decode()
    return out


def snapshot(path: Path) -> dict[str, bytes | None]:
    """Everything at path: each file's bytes, each folder (None), by its path relative to path's parent."""
    if path.is_file():
        return {path.name: path.read_bytes()}
    return {str(p.relative_to(path.parent)): None if p.is_dir() else p.read_bytes()
            for p in sorted([path, *path.rglob("*")])}


def assert_refused_untouched(target: Path, args: tuple[str, ...], needle: str, save: Path | None = None) -> None:
    """`args --save-dir save` (save: target unless given) is refused in one line, and target is as it was."""
    before = snapshot(target)
    assert before, "nothing to keep"
    assert_one_line_error(run_cli(*args, "--save-dir", str(save or target)), needle)
    assert snapshot(target) == before


@pytest.mark.parametrize("args", [STABLE, MOTIVIC, UNSTABLE], ids=["stable", "motivic", "unstable"])
def test_a_folder_of_the_users_own_files_is_refused_and_left_alone(tmp_path: Path, rng: np.random.Generator,
                                                                 args: tuple[str, ...]) -> None:
    folder = tmp_path / "d"
    (folder / "drafts").mkdir(parents=True)
    (folder / "notes.txt").write_bytes(rng.integers(0, 256, int(rng.integers(1, 4000)), dtype=np.uint8).tobytes())
    (folder / "drafts" / "chart.svg").write_text("<svg/>\n")
    assert_refused_untouched(folder, args, "is not empty and has no nassau-save.json; refusing to use it")
    assert sorted(p.name for p in folder.iterdir()) == ["drafts", "notes.txt"]  # no bidegrees/, no manifest


def test_a_file_is_refused_and_left_alone(tmp_path: Path, rng: np.random.Generator) -> None:
    path = tmp_path / "d"
    path.write_bytes(rng.integers(0, 256, 100, dtype=np.uint8).tobytes())
    assert_refused_untouched(path, STABLE, "exists and is not a directory")


@pytest.mark.parametrize("kind, args, needle", [
    ("standard", ("resolve", "C2", "--stem", "8", "--max-s", "3", "--quiet"), "not for module C2 over A with"),
    ("standard", ("resolve", "tmf2", "--stem", "8", "--max-s", "3", "--quiet"), "not for module tmf2 over A(2)"),
    ("standard", ("resolve", "S_3", "--stem", "8", "--max-s", "3", "--quiet"), "not for module S_3"),
    ("standard", (*STABLE, "--algorithm", "nassau"),
     "standard algorithm (format 1), not for module S_2 over A with the nassau"),
    ("standard", MOTIVIC, "not for module S_2 over A with the motivic algorithm"),
    ("motivic", STABLE, "made for module S_2 over A with the motivic algorithm"),
    ("ctau", MOTIVIC, "made for module Ctau over A with the motivic-tau-quotient algorithm"),
    ("unstable", ("resolve", "S_2[5]", "--stem", "10", "--max-s", "3", "--quiet"),
     "made for module S_2[5] over A with the unstable algorithm"),
    ("standard", UNSTABLE, "not for module S_2[5] over A with the unstable algorithm"),
], ids=["module", "algebra", "prime", "algorithm", "motivic-on-classical", "classical-on-motivic",
        "sphere-on-ctau",
        "stable-on-unstable", "unstable-on-stable"])
def test_a_directory_made_for_another_run_is_refused_and_left_alone(tmp_path: Path, made: dict[str, Path],
                                                                    kind: str, args: tuple[str, ...],
                                                                    needle: str) -> None:
    save = tmp_path / "save"
    shutil.copytree(made[kind], save)
    assert_refused_untouched(save, args, needle)


def test_a_corrupt_manifest_is_refused_and_left_alone(tmp_path: Path, made: dict[str, Path]) -> None:
    save = tmp_path / "save"
    shutil.copytree(made["standard"], save)
    (save / "nassau-save.json").write_text('{"format": 1, "module": "S_2", ')
    assert_refused_untouched(save, STABLE, "nassau-save.json is corrupt")


@pytest.mark.parametrize("kind, args", [("standard", (*STABLE, "--algorithm", "standard")), ("motivic", MOTIVIC)],
                         ids=["standard", "motivic"])
def test_a_directory_in_use_is_refused_and_left_alone(tmp_path: Path, made: dict[str, Path], kind: str,
                                                      args: tuple[str, ...]) -> None:
    """Held by another run (a cluster client holds DIR/nassau.lock while it runs)."""
    save = tmp_path / "save"
    shutil.copytree(made[kind], save)
    lock = SaveLock(save)
    assert lock.acquire() is None
    try:
        assert_refused_untouched(save, args, f"is in use by another run (pid {os.getpid()}")
    finally:
        lock.release()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_place_is_refused_and_left_alone(tmp_path: Path) -> None:
    parent = tmp_path / "ro"
    parent.mkdir()
    (parent / "mine.txt").write_text("keep\n")
    parent.chmod(0o555)
    try:
        assert_refused_untouched(parent, STABLE, "permission denied", save=parent / "d")
    finally:
        parent.chmod(0o755)
