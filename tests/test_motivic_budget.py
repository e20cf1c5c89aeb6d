"""A motivic run knows its cost and holds a memory budget, as a classical one does (nassau.cost.motivic,
nassau.api.motivic.MotivicRequest): refused up front in one line naming the largest stem that fits, `--estimate`
(`--json`) without computing, stopped cleanly under `--memory` with what it finished saved, resumed to the same
output."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from algebra.module.motivic import load_motivic
from nassau.api.motivic import motivic_request
from nassau.cost import calibration
from nassau.cost.motivic import probe
from nassau.engine.tau_quotient import resolve_quotient
from nassau.engine.region import Region
from nassau.store.motivic_save import motivic_spec
from tests.helpers import assert_one_line_error, cli, fake_cost_cache, run_cli

@pytest.fixture
def cost_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cost cache of the test's own, with fake constants for both motivic engines (no calibration run)."""
    where = tmp_path / "cost"
    monkeypatch.setenv("NASSAU_COST_DIR", str(where))
    return fake_cost_cache(where, [calibration.kind(2, algorithm) for algorithm in calibration.MOTIVIC_KINDS])


def test_the_probe_counts_the_motivic_resolutions_generators(cost_dir: Path) -> None:
    """The sphere's resolution over A^C has, in every (s, t), the generators of F_2's over A^C/tau, which the probe
    counts (a tau-quotient run): compared in the probe's region with a run over A^C itself."""
    mod = load_motivic("S_2")
    model = probe(mod, motivic_spec("S_2", mod))
    run = motivic_request("S_2", max_t=24, max_s=12, threads=1).run()
    for (s, t), k in run.resolution.dims().items():
        if t - s <= model.probe_stem and s <= model.probe_s:
            assert model.exact[s, t - s] == k, (s, t)
    quotient = resolve_quotient(load_motivic("Ctau"), Region(max_s=13, min_degree=0, max_t=24))  # the run's extra row
    assert quotient.dims() == run.resolution.dims()


@pytest.mark.parametrize("module", ["S_2", "Ctau"])
def test_estimate_prints_without_computing(cost_dir: Path, tmp_path: Path, module: str) -> None:
    """`--estimate` prints one line, `--estimate --json` one JSON object with the figures; nothing is resolved or
    saved."""
    args = ("resolve", module, "--motivic", "--stem", "70", "--max-s", "38", "--save-dir", str(tmp_path / "s"))
    line = run_cli(*args, "--estimate")
    assert line.returncode == 0, line.stderr
    text = line.stdout.decode()
    assert text.startswith(f"{module} (C-motivic) through stem 70, s <= 38 (") and "peak" in text
    out = run_cli(*args, "--estimate", "--json")
    data = json.loads(out.stdout)
    assert data["wall_s"] > 0 and data["peak_bytes"] > 150e6 and data["save_bytes"] > 0
    assert not (tmp_path / "s").exists()


def test_too_large_a_run_is_refused_up_front(cost_dir: Path, tmp_path: Path) -> None:
    """S_2 through stem 400 over A^C is refused before any work, in one line with its estimate and the largest stem
    that fits, the second time (the probe kept) within 5 s; in a process of its own, ended after 60 s, since a run
    not refused would go on for days. With --memory the line names that budget."""
    for _ in range(2):
        started = time.perf_counter()
        out = cli("resolve", "S_2", "--motivic", "--stem", "400", "--max-s", "100", "--save-dir", str(tmp_path / "s"),
                  timeout=60)
        took = time.perf_counter() - started
        assert_one_line_error(out, "S_2 (C-motivic) through stem 400, s <= 100 needs about")
        assert "the largest stem that fits is" in out.stderr.decode()
    assert took < 5, took
    assert not (tmp_path / "s").exists()
    named = cli("resolve", "S_2", "--motivic", "--stem", "60", "--max-s", "33", "--memory", "100M", timeout=60)
    assert_one_line_error(named, "over 80% of the --memory budget of 100.0 MiB")


def test_a_forced_run_stops_within_its_budget_and_resumes(cost_dir: Path, tmp_path: Path) -> None:
    """Under a budget it cannot finish in (forced past the refusal), the run stops in one line, status 2, with what
    it finished saved (in a process of its own: past the last threshold it ends its process); resumed without the
    budget it prints what a run that never stopped prints."""
    save = tmp_path / "s"
    args = ("resolve", "S_2", "--motivic", "--stem", "44", "--max-s", "25", "--threads", "1", "--quiet")
    stopped = cli(*args, "--save-dir", str(save), "--memory", "110M", "--force")
    assert_one_line_error(stopped, "stopped within the memory budget of 110.0 MiB")
    assert f"finished bidegrees are kept in {save}" in stopped.stderr.decode()
    kept = len(list((save / "bidegrees").glob("*.bin")))
    resumed = run_cli(*args, "--save-dir", str(save))
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == run_cli(*args).stdout
    assert len(list((save / "bidegrees").glob("*.bin"))) > kept


def test_a_small_run_is_held_without_an_estimate(cost_dir: Path) -> None:
    """Within the probe's stems a run makes no estimate (a second of work) but is held all the same."""
    req = motivic_request("S_2", 20, max_s=8, memory="available")
    assert req.small and req.plan() is None and req.budget is not None
    assert req.run().text() == motivic_request("S_2", 20, max_s=8).run().text()
