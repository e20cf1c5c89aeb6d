"""benchmarks/device_check.py, the one command for a device machine, on this CPU: --cpu-only end to end (every step
but the device ones, its figures in the JSON), its time limit, and the offline install of what a bare machine
lacks, from a wheel."""
from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "device_check.py"
STEPS = ["setup", "environment", "device_tests", "gpu_vs_cpu", "cores", "gpu_vs_cpu_larger"]


def load_script():
    """The script as a module (registered first: its dataclasses look their module up)."""
    if "device_check" not in sys.modules:
        spec = importlib.util.spec_from_file_location("device_check", SCRIPT)
        sys.modules["device_check"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules["device_check"])
    return sys.modules["device_check"]


def run_check(out: Path, *options: str) -> tuple[subprocess.CompletedProcess, dict]:
    done = subprocess.run([sys.executable, str(SCRIPT), str(out), "--cpu-only", *options], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    return done, json.loads((out / "device_check.json").read_text())


def test_cpu_only_runs_every_step_but_the_device_ones_and_records_their_figures(tmp_path):
    # A limit above the default 60 s, so that a loaded machine does not cut it: what is checked is the record.
    done, data = run_check(tmp_path, "--limit", "180")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert data["status"] == "done" and data["cpu_only"] is True
    steps = data["steps"]
    assert list(steps) == STEPS
    assert {name: s["status"] for name, s in steps.items()} == {
        "setup": "ok", "environment": "ok", "device_tests": "skipped", "gpu_vs_cpu": "ok", "cores": "ok",
        "gpu_vs_cpu_larger": "ok"}
    assert steps["device_tests"]["reason"] == "--cpu-only"
    env = steps["environment"]
    assert env["cores"] >= 1 and env["memory_gib"] > 0 and "cores" in env["cpu"] and "nvidia_smi" in env
    for name in ("setup", "gpu_vs_cpu", "gpu_vs_cpu_larger"):
        cpu = steps[name]["runs"][-2 if name != "setup" else -1]
        assert cpu["status"] == "ok" and cpu["wall_s"] > 0 and cpu["rss_mib"] > 0, (name, cpu)
    assert steps["gpu_vs_cpu"]["runs"][-1] == {"label": "stem 20, GPU", "status": "skipped", "reason": "--cpu-only"}
    cores = steps["cores"]
    assert [r["label"] for r in cores["runs"]] == ["1 thread", "2 processes", "2 threads",
                                                   "model (bench_scaling, traced)"]
    assert all(r.get("same_chart", True) for r in cores["runs"])
    assert cores["model"]["W"] > 0 and cores["model"]["g"] == pytest.approx(0.135)
    two = cores["speed_ups"][1]
    assert two["workers"] == 2 and two["threads_x"] > 0 and two["processes_x"] > 0
    assert two["threads_predicted_x"] > 0 and two["processes_predicted_x"] > 0
    log = (tmp_path / "device_check.log").read_text()
    assert "speed-ups over 1 thread" in log and log.rstrip().splitlines()[-1].split("]", 1)[1].startswith(" done")


def test_the_time_limit_stops_it_cleanly_keeping_what_it_measured(tmp_path):
    done, data = run_check(tmp_path, "--limit", "6")
    assert done.returncode == 0, done.stderr[-2000:]
    assert data["status"] == "stopped at the time limit"
    steps = data["steps"]
    assert list(steps) == STEPS  # every step is there, run or not
    assert steps["setup"]["runs"][-1]["status"] in ("ok", "cut", "not run")  # the warm-up, given half the limit
    assert steps["environment"]["status"] == "ok" and steps["environment"]["cores"] >= 1  # measured, and kept
    # How far a 6 s limit reaches depends on the machine's load; the last step finishes only if its run fits before
    # the limit (a quick one, where the steps before it ended early), a step reached with less than a run's minimum
    # (1 s in --cpu-only) left is not started, and one that did not start says why.
    larger = steps["gpu_vs_cpu_larger"]
    assert larger["status"] in ("not run", "partial") or (
        larger["status"] == "ok" and larger["started_s"] + sum(r.get("wall_s", 0) for r in larger["runs"]) < 6 + 1)
    for step in steps.values():
        if step["started_s"] > 6 - 1:
            assert step["status"] == "not run" and step["reason"].startswith("no time left"), step
    # Runs are killed at the limit; what follows it is bookkeeping (and the in-process environment step).
    assert data["elapsed_s"] < 6 + 10


def test_a_limit_over_nine_minutes_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        load_script().main([str(tmp_path), "--limit", "600"])
    assert exit_.value.code == 2
    assert "at most 540 s (9 minutes)" in capsys.readouterr().err
    assert not (tmp_path / "device_check.json").exists()


def test_the_gpu_extra_is_picked_for_the_cuda_version_found():
    check = load_script()
    assert (check.cupy_for(12), check.cupy_for(13), check.cupy_for(None)) == ("cupy-cuda12x", "cupy-cuda13x",
                                                                               "cupy-cuda13x")
    assert check.dist_name("dask[distributed]>=2024.1") == "dask" and check.dist_name("Typing_Extensions") == \
        "typing-extensions"
    assert {"numpy", "numba", "galois", "rich", "pytest", "hypothesis"} <= set(check.needs())


def test_the_wheels_to_carry_are_this_machines_versions_for_python_3_12(tmp_path):
    cmd = load_script().pip_download(tmp_path, ("galois",))
    assert cmd[cmd.index("--python-version") + 1] == "3.12" and "--only-binary=:all:" in cmd and "--no-deps" in cmd
    assert cmd[-1] == f"galois=={importlib.metadata.version('galois')}"


def fake_wheel(directory: Path, name: str) -> Path:
    """A minimal pure-Python wheel of distribution `name` holding the module of that name."""
    wheel = directory / f"{name}-1.0-py3-none-any.whl"
    info = f"{name}-1.0.dist-info"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(f"{name}/__init__.py", "VALUE = 46\n")
        z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")
    return wheel


def test_what_is_missing_is_installed_offline_from_its_wheel(tmp_path):
    check = load_script()
    name = "nassau_device_probe"
    assert check.missing([name.replace("_", "-"), "numpy"]) == [name.replace("_", "-")]
    wheel = fake_wheel(tmp_path, name)
    assert check.wheel_for(tmp_path, name.replace("_", "-")) == wheel and check.wheel_for(tmp_path, "galois") is None
    target = tmp_path / "site"
    subprocess.run(check.pip_install([wheel], target), check=True, capture_output=True, timeout=120)
    probe = subprocess.run([sys.executable, "-c", f"import {name}; print({name}.VALUE)"],
                           env={"PYTHONPATH": str(target)}, capture_output=True, text=True, timeout=60)
    assert probe.stdout.strip() == "46"
