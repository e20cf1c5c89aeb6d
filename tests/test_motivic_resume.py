"""A motivic run interrupted (Ctrl-C) partway and resumed from its save directory prints what a fresh run prints,
byte for byte, text and --json: at several stopping points, a random one among them, each leaving kept kernels
(`cycles/`) for the resumed run to read back (docs/motivic.md, nassau/store/motivic_save.py)."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from nassau.api.motivic import motivic_request, motivic_size, resolved_region
from nassau.engine.motivic import FactoredCycles, kernel_cycles, resolve_motivic
from nassau.engine.region import Region
from nassau.store import motivic_save
from tests.helpers import run_cli

STEM, MAX_S = 12, 6
ARGS = ("resolve", "S_2", "--motivic", "--stem", str(STEM), "--max-s", str(MAX_S), "--threads", "1")


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    path = tmp_path_factory.mktemp("fresh") / "fresh.json"
    out = run_cli(*ARGS, "--quiet", "--json", str(path))
    assert out.returncode == 0, out.stderr.decode()
    return out.stdout, path.read_bytes()


def interrupted_after(monkeypatch: pytest.MonkeyPatch, count: int) -> None:
    """Ctrl-C as the run starts saving its bidegree number count + 1 (after count whole bidegrees are saved)."""
    real = motivic_save.MotivicSave.save
    saved = [0]

    def save(self, *args, **kwargs):
        if saved[0] == count:
            raise KeyboardInterrupt
        saved[0] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(motivic_save.MotivicSave, "save", save)


#: With one thread the run goes column by column (t), s upwards, and keeps ker d_s in degree t until (s + 1, t) is
#: saved: these stops leave one kernel each in cycles/. Read back in any order but F_s's own, those after 17 and 74
#: bidegrees resume to a wrong chart, those after 39 and 56 fail (not a cocycle in this weight).
KEPT = {17: "1_5", 39: "2_8", 56: "3_10", 74: "5_12"}


def stops(rng: np.random.Generator) -> list[int]:
    """Those above and one at random among the others (one of those again would find its save directory finished)."""
    others = sorted(set(range(1, motivic_size(STEM, None, MAX_S, "S_2"))) - set(KEPT))
    return [*KEPT, int(rng.choice(others))]


def test_an_interrupted_run_resumes_to_a_fresh_runs_output(tmp_path: Path, fresh: tuple[bytes, bytes],
                                                           rng: np.random.Generator,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # What is read back is what was written; that it survives a crash is test_store's. Without the syncs the five
    # interrupted and resumed runs take about a third of the time (most of it waiting on the disk).
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    text, data = fresh
    for count in stops(rng):
        save, out_json = tmp_path / f"save-{count}", tmp_path / f"resumed-{count}.json"
        with pytest.MonkeyPatch.context() as patch:
            interrupted_after(patch, count)
            stopped = run_cli(*ARGS, "--quiet", "--save-dir", str(save), "--json", str(out_json))
        assert stopped.returncode == 130 and b"interrupted" in stopped.stderr, (count, stopped.stderr.decode())
        assert not out_json.exists()
        assert len(list((save / "bidegrees").glob("*.bin"))) == count
        if count in KEPT:
            assert [p.stem for p in (save / "cycles").iterdir()] == [KEPT[count]]
        resumed = run_cli(*ARGS, "--save-dir", str(save), "--json", str(out_json))
        assert resumed.returncode == 0, (count, resumed.stderr.decode())
        assert f"{count} bidegrees loaded" in resumed.stderr.decode()
        assert resumed.stdout == text, count
        assert out_json.read_bytes() == data, count


def test_kernels_are_saved_factored_and_an_older_directory_of_their_vectors_still_resumes(
        tmp_path: Path, fresh: tuple[bytes, bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept kernel is saved as the step found it (its coordinates, blocks and solvers: `cycle_blocks/`), not as
    its vectors, which would cost the elimination the factored kernel spares; a directory saved before then holds
    the vectors (no `cycle_blocks/`) and resumes to the same output, reading them."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    save = tmp_path / "save"
    with pytest.MonkeyPatch.context() as patch:
        interrupted_after(patch, 17)  # its kernel, computed again from the generators, has another basis
        assert run_cli(*ARGS, "--quiet", "--save-dir", str(save)).returncode == 130
    assert [p.stem for p in (save / "cycle_blocks").iterdir()] == [KEPT[17]]
    s, t = (int(x) for x in KEPT[17].split("_"))
    req = motivic_request("S_2", STEM, max_s=MAX_S)
    store = motivic_save.MotivicSave(save, "S_2", req.mod, req.whole)
    res = resolve_motivic(req.mod, resolved_region(Region(max_s=s - 1, min_degree=0, max_t=t)), store=store)
    kept = store._cycles(res, s, t)
    assert isinstance(kept, FactoredCycles)
    every = np.arange(len(kept.weights))
    vectors = kept.natural(every, res.field)
    store.store.save_map_rows("cycles", s, t, vectors, res.free(s).dimension(t), 0)
    (save / "cycle_blocks" / f"{s}_{t}.bin").unlink()
    older = store._cycles(res, s, t)
    assert np.array_equal(older.natural(every, res.field), vectors)  # read, not computed again:
    again = kernel_cycles(res, s, t)
    assert not np.array_equal(again.natural(every, res.field), vectors)  # that has another basis here
    store.close()
    resumed = run_cli(*ARGS, "--save-dir", str(save))
    assert resumed.returncode == 0 and resumed.stdout == fresh[0]
