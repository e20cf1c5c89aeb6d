"""Verify and measure the GPU path and 16 cores on a device machine: one command, with a time limit of its own.

    python3 benchmarks/device_check.py OUT [--limit 480] [--wheels .whl]    # on the device machine
    python3 benchmarks/device_check.py OUT --cpu-only                       # anywhere: the steps but the device's
    python3 benchmarks/device_check.py --prepare-wheels .whl                # here, with PyPI: the wheels to carry

Every figure goes to OUT/device_check.json as soon as it is measured (and a line to OUT/device_check.log), so a run
stopped from outside keeps what it measured. In order (a step that fails is recorded and the next one runs):

0. setup: what the project needs (pyproject's dependencies, pytest and hypothesis for the device tests, and the
   `gpu` extra's CuPy for the CUDA version nvidia-smi reports when no CuPy imports) and the machine lacks is
   installed from the wheels in --wheels (made by --prepare-wheels); one warm-up run compiles the kernels.
1. environment: GPU model, driver, CUDA and CuPy versions, device memory; CPU model, cores, memory.
2. device tests: `pytest -m gpu`; S_2 through stem 90 (every s) with NASSAU_GPU_VERIFY=1 against NASSAU_GPU=0, and
   with NASSAU_GPU=1 on worker processes; the large row reductions (8192, 16384) on the device against M4RI.
3. GPU against CPU: S_2 through stem 120, s <= 152, on 16 threads, NASSAU_GPU=1 against NASSAU_GPU=0: the charts'
   bytes, wall, kernel and transfer seconds (NASSAU_GPU_DEBUG=1), the device pool's peak.
4. cores: S_2 through stem 110, every s, on 1 thread and on 16, 8 and 4 processes and threads, the speed-ups beside
   the model's predictions (bench_scaling: a traced 16-thread run, with the interpreter lock's documented share).
5. GPU against CPU through stem 130, if time is left.

Time: each step may use its weight's share of what is left (unused time flows to the next); a run that cannot
start is recorded as not run and why, one that outlasts its step is killed and recorded as cut. --limit is at most
9 minutes. --cpu-only runs every step but the device ones at small sizes (the default suite runs it).
"""
from __future__ import annotations

import argparse
import datetime
import importlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

DEFAULT_LIMIT, MAX_LIMIT = 480.0, 540.0
#: The interpreter lock's share of a one-thread run through stem 120 (docs/speed.md): py-spy is not on the device.
DOCUMENTED_G = 0.135
#: What the device image's Python lacks of the project's needs (docs/gpu.md lists what it has).
WHEELS = ("galois",)
#: The device tests' own needs, from the `test` extra.
TEST_NEEDS = ("pytest", "hypothesis")
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
             "manylinux1_x86_64")
MiB = 1 << 20


@dataclass(frozen=True)
class Sizes:
    warm_stem: int
    verify_stem: int  # step 2, every s
    rref: tuple[int, ...]
    charts: tuple[int, int]  # step 3's stem, then step 5's
    chart_max_s: int
    workers: int
    cores_stem: int  # step 4, every s
    cores: tuple[int, ...]
    min_run: float  # seconds below which a run is not started


DEVICE = Sizes(warm_stem=40, verify_stem=90, rref=(8192, 16384), charts=(120, 130), chart_max_s=152, workers=16,
               cores_stem=110, cores=(1, 4, 8, 16), min_run=10.0)
CPU_ONLY = Sizes(warm_stem=10, verify_stem=20, rref=(), charts=(20, 24), chart_max_s=20, workers=2, cores_stem=30,
                 cores=(1, 2), min_run=1.0)


def every_s(stem: int) -> int:
    """The max s that holds every class through `stem` (bench_scaling's choice)."""
    return stem // 2 + 3


# -- what the project needs and how it gets it ------------------------------------------------------------
def dist_name(requirement: str) -> str:
    """The normalized distribution name of a requirement ("dask[distributed]>=2024.1" -> "dask")."""
    return re.split(r"[\s\[<>=!~;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def cupy_for(cuda_major: int | None) -> str:
    """The `gpu` extra's CuPy, for the CUDA major version found (cupy-cuda13x; cupy-cuda12x on CUDA 12)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extra = dist_name(project["optional-dependencies"]["gpu"][0])
    return extra if cuda_major is None else re.sub(r"cuda\d+x", f"cuda{cuda_major}x", extra)


def needs() -> list[str]:
    """The distributions a device check needs: the project's dependencies and the device tests'."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [dist_name(r) for r in project["dependencies"]] + list(TEST_NEEDS)


def missing(names: list[str]) -> list[str]:
    out = []
    for name in names:
        try:
            importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            out.append(name)
    return out


def wheel_for(directory: Path | None, name: str) -> Path | None:
    """The wheel of distribution `name` in `directory` (wheel file names spell it with underscores)."""
    if directory is None or not directory.is_dir():
        return None
    found = [w for w in sorted(directory.glob("*.whl")) if dist_name(w.name.split("-")[0]) == name]
    return found[-1] if found else None


def pip_install(wheels: list[Path], target: Path) -> list[str]:
    """Install the wheels, offline, into `target` (the device's Python is not ours to change)."""
    return [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
            "--no-cache-dir", "--upgrade", "--target", str(target), *map(str, wheels)]


def pip_download(directory: Path, names: tuple[str, ...]) -> list[str]:
    """Download the wheels of `names` for the device's Python 3.12 on x86-64, at the versions installed here."""
    pinned = [f"{n}=={importlib.metadata.version(n)}" for n in names]
    platforms = [arg for p in PLATFORMS for arg in ("--platform", p)]
    return [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version", "3.12",
            "--implementation", "cp", *platforms, "-d", str(directory), *pinned]


def nvidia_smi() -> dict:
    """The GPU as nvidia-smi reports it ({} without nvidia-smi)."""
    if shutil.which("nvidia-smi") is None:
        return {}
    out = {}
    try:
        query = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,compute_cap",
                                "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        fields = [f.strip() for f in query.stdout.splitlines()[0].split(",")] if query.stdout.strip() else []
        out.update(zip(("name", "driver", "memory", "compute_capability"), fields))
        header = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=30).stdout
        cuda = re.search(r"CUDA Version:\s*([\d.]+)", header)
        out["cuda"] = cuda.group(1) if cuda else None
    except (OSError, subprocess.SubprocessError, IndexError) as exc:
        out["error"] = f"{exc.__class__.__name__}: {exc}"
    return out


# -- the record ---------------------------------------------------------------------------------------------
class Check:
    """The run's clock, its record (written whole after every figure) and its log."""

    def __init__(self, out: Path, limit: float, cpu_only: bool, wheels: Path | None) -> None:
        self.t0 = time.monotonic()
        self.limit, self.cpu_only, self.wheels = limit, cpu_only, wheels
        self.sizes = CPU_ONLY if cpu_only else DEVICE
        self.out = out
        self.out.mkdir(parents=True, exist_ok=True)
        self.json_path, self.log_path = out / "device_check.json", out / "device_check.log"
        self.log_path.write_text("")
        self.work = Path(tempfile.mkdtemp(prefix="device-check-"))
        self.device: str | None = None  # the GPU's name once step 1 found one
        self.device_reason = "not looked for yet"
        self._lock = threading.RLock()  # a signal's handler saves too
        self.data: dict = {"check": "nassau device check", "format": 1, "argv": sys.argv[1:],
                           "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                           "limit_s": limit, "cpu_only": cpu_only, "status": "running", "steps": {}}
        self.save()

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def left(self, deadline: float | None = None) -> float:
        end = self.t0 + self.limit if deadline is None else min(deadline, self.t0 + self.limit)
        return end - time.monotonic()

    def save(self) -> None:
        with self._lock:
            self.data["elapsed_s"] = round(self.elapsed(), 2)
            tmp = self.json_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.data, indent=1, default=str))
            os.replace(tmp, self.json_path)

    def log(self, message: str) -> None:
        line = f"[{self.elapsed():7.1f} s] {message}"
        print(line, flush=True)
        with self._lock, self.log_path.open("a") as fh:
            fh.write(line + "\n")

    def skip(self, runs: list, label: str, reason: str, status: str = "not run") -> None:
        runs.append({"label": label, "status": status, "reason": reason})
        self.log(f"  {label}: {status} ({reason})")
        self.save()

    def room(self, runs: list, label: str, deadline: float, need: float = 0.0) -> float | None:
        """The seconds a run may take before `deadline`, or None (recorded as not run) when fewer than it needs."""
        left = self.left(deadline)
        if left < max(need, self.sizes.min_run):
            why = f"about {need:.0f} s needed" if need > self.sizes.min_run else "too little time"
            self.skip(runs, label, f"{why}, {max(left, 0):.0f} s left")
            return None
        return left

    def device_off(self) -> str | None:
        """Why the device steps do not run (None when they do)."""
        if self.cpu_only:
            return "--cpu-only"
        return None if self.device else f"no device: {self.device_reason}"

    # -- runs -------------------------------------------------------------------------------------------------
    def chart(self, runs: list, label: str, stem: int, max_s: int, gpu: bool, deadline: float,
              extra: tuple[str, ...] = (), env: dict[str, str] | None = None, need: float = 0.0):
        """One `nassau resolve S_2` run (bench_gpu.run_chart), recorded; the Run, or None when not run."""
        from bench_gpu import run_chart

        timeout = self.room(runs, label, deadline, need)
        if timeout is None:
            return None
        workdir = self.work / f"run{len(runs)}-{label.replace(' ', '_')}"
        workdir.mkdir()
        run = run_chart(stem, max_s, gpu, timeout, workdir, extra, env)
        s = run.summary
        row = {"label": label, "stem": stem, "max_s": max_s, "gpu": gpu, "options": list(extra), "env": env or {},
               "status": "ok" if run.rc == 0 else "cut" if run.note == "timed out" else "failed",
               "wall_s": round(run.wall, 2), "rss_mib": round(run.rss_mb, 1), "rc": run.rc, "note": run.note,
               "summary": s}
        if s:
            row.update(kernel_s=s.get("kernel_ns", 0) / 1e9, upload_s=s.get("upload_ns", 0) / 1e9,
                       download_s=s.get("download_ns", 0) / 1e9, device_peak_mib=s.get("peak_pool_bytes", 0) / MiB,
                       launches=s.get("launches"))
        runs.append(row)
        self.log(f"  {label}: {row['status']}, {run.wall:.1f} s wall, {run.rss_mb:.0f} MiB {run.note}".rstrip())
        self.save()
        return run

    def compare(self, runs: list, cpu, gpu) -> None:
        """Record whether a GPU run gave the CPU run's bytes (on the GPU run's row)."""
        from bench_gpu import identical

        if cpu is None or gpu is None:
            return
        same = identical(cpu, gpu)
        runs[-1]["identical"] = same
        if same is False:
            runs[-1]["status"] = "failed"
        if same is not None:
            runs[-1]["speed_up"] = round(cpu.wall / gpu.wall, 3)
        self.log(f"  charts byte-identical: {same}")
        self.save()

    def child(self, label: str, cmd: list[str], deadline: float, log_name: str | None = None,
              env: dict[str, str] | None = None) -> dict:
        """A subprocess killed at `deadline`: {label, status, rc, wall_s, tail}; its output in OUT/log_name."""
        timeout = self.left(deadline)
        if timeout < self.sizes.min_run:
            return {"label": label, "status": "not run", "reason": f"too little time, {max(timeout, 0):.0f} s left"}
        start = time.perf_counter()
        try:
            done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                                  env={**os.environ, **(env or {})})
            rc, out, status = done.returncode, done.stdout + done.stderr, "ok" if done.returncode == 0 else "failed"
        except subprocess.TimeoutExpired as exc:
            rc, status = None, "cut"
            out = "".join(x.decode(errors="replace") if isinstance(x, bytes) else (x or "")
                          for x in (exc.stdout, exc.stderr))
        if log_name:
            (self.out / log_name).write_text(out)
        row = {"label": label, "status": status, "rc": rc, "wall_s": round(time.perf_counter() - start, 2),
               "tail": out.strip().splitlines()[-3:]}
        self.log(f"  {label}: {status}, {row['wall_s']:.1f} s" + (f", exit {rc}" if rc else ""))
        return row


def settle(rec: dict) -> None:
    """A step's status from its runs: failed if one failed, partial if one was cut or not run, else ok."""
    statuses = {r.get("status") for r in rec.get("runs", [])}
    if rec.get("status") != "running":
        return
    rec["status"] = "failed" if "failed" in statuses else "partial" if statuses & {"cut", "not run"} else "ok"


# -- the steps ------------------------------------------------------------------------------------------------
def step_setup(c: Check, rec: dict, deadline: float) -> None:
    rec["runs"] = runs = []
    lack = missing(needs())
    if not c.cpu_only and importlib.util.find_spec("cupy") is None:  # the device steps' CuPy, if a wheel came
        smi = nvidia_smi()
        lack.append(cupy_for(int(smi["cuda"].split(".")[0]) if smi.get("cuda") else None))
    rec["missing"] = lack
    if lack:
        wheels = {name: wheel_for(c.wheels, name) for name in lack}
        rec["wheels"] = {name: w.name if w else None for name, w in wheels.items()}
        found = [w for w in wheels.values() if w]
        if found:
            site = c.work / "site"
            runs.append(c.child("pip install (offline)", pip_install(found, site), deadline))
            sys.path.insert(0, str(site))
            os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
            importlib.invalidate_caches()
        rec["still_missing"] = missing(lack)
        c.log(f"setup: missing {lack}; wheels {rec['wheels']}; still missing {rec['still_missing']}")
        if set(rec["still_missing"]) & set(needs()):  # no CuPy only turns the device steps off
            runs.append({"label": "what the project needs", "status": "failed",
                         "reason": f"no wheel in {c.wheels} for {rec['still_missing']} (--prepare-wheels makes them)"})
    c.save()
    c.chart(runs, "warm-up (kernels compiled)", c.sizes.warm_stem, 20, False, deadline)


def step_environment(c: Check, rec: dict, deadline: float) -> None:
    from bench_gpu import open_device
    from bench_resolve import machine

    meminfo = Path("/proc/meminfo").read_text() if Path("/proc/meminfo").exists() else ""
    total = re.search(r"MemTotal:\s+(\d+)", meminfo)
    rec.update(cpu=machine(), cores=os.cpu_count(), usable_cores=len(os.sched_getaffinity(0)),
               memory_gib=round(int(total.group(1)) / MiB, 1) if total else None, python=platform.python_version(),
               host=platform.node(), nvidia_smi=nvidia_smi())
    for name in ("numpy", "numba", "galois"):
        rec[name] = importlib.metadata.version(name) if not missing([name]) else None
    try:
        rec["cupy"] = importlib.import_module("cupy").__version__
    except Exception as exc:  # a CuPy that cannot find its CUDA libraries raises more than ImportError
        rec["cupy"] = f"not importable ({exc.__class__.__name__}: {exc})"
    c.save()
    dev, reason = open_device()
    c.device, c.device_reason = (dev.name if dev is not None else None), reason
    rec.update(device=c.device, device_reason=reason or None)
    if dev is not None:
        cupy = dev.xp
        free, total_bytes = cupy.cuda.runtime.memGetInfo()
        rec.update(cuda_runtime=cupy.cuda.runtime.runtimeGetVersion(), cuda_driver=cupy.cuda.runtime.driverGetVersion(),
                   compute_capability=cupy.cuda.Device().compute_capability,
                   device_memory_gib=round(total_bytes / (1 << 30), 1), device_free_gib=round(free / (1 << 30), 1))
    c.log(f"environment: {rec['cpu']}; {rec['memory_gib']} GiB; GPU {c.device or reason}")


def step_device_tests(c: Check, rec: dict, deadline: float) -> None:
    rec["runs"] = runs = []
    off = c.device_off()
    if off:
        rec.update(status="skipped", reason=off)
        return
    share = time.monotonic() + 0.5 * c.left(deadline)  # pytest gets half, the comparisons the rest
    row = c.child("pytest -m gpu", [sys.executable, "-m", "pytest", "-q", "-m", "gpu", "-p", "no:cacheprovider",
                                    "--continue-on-collection-errors", "tests"], share, "pytest_gpu.log")
    if row["status"] == "ok" and not any(re.search(r"\d+ passed", line) for line in row["tail"]):
        row.update(status="failed", reason="no device test passed (skipped: see pytest_gpu.log)")
    runs.append(row)
    c.log(f"  pytest: {(row.get('tail') or ['-'])[-1]}")
    c.save()
    stem, threads = c.sizes.verify_stem, ("--threads", str(c.sizes.workers))
    cpu = c.chart(runs, f"stem {stem}, CPU", stem, every_s(stem), False, deadline, threads)
    verify = {"NASSAU_GPU_VERIFY": "1", "NASSAU_GPU_RREF_MIN": "1024"}  # the row reductions of 1024 and up too
    c.compare(runs, cpu, c.chart(runs, f"stem {stem}, GPU verified", stem, every_s(stem), True, deadline, threads,
                                 verify))
    rref = c.work / "rref.json"
    row = c.child("row reductions, device against M4RI",
                  [sys.executable, str(HERE / "bench_gpu.py"), "--stems", "--rref-sizes", *map(str, c.sizes.rref),
                   "--json", str(rref)], deadline, env={"NASSAU_GPU": "1"})
    if rref.exists():
        row["sizes"] = json.loads(rref.read_text())["rref"]
        if not all(r.get("identical") for r in row["sizes"]):
            row.update(status="failed", reason="a size without a device result the same as M4RI's")
    runs.append(row)
    c.save()
    c.compare(runs, cpu, c.chart(runs, f"stem {stem}, GPU on worker processes", stem, every_s(stem), True, deadline,
                                 (*threads, "--processes")))


def gpu_against_cpu(c: Check, rec: dict, deadline: float, stem: int, need: float = 0.0) -> None:
    rec["runs"] = runs = []
    threads = ("--threads", str(c.sizes.workers))
    cpu = c.chart(runs, f"stem {stem}, CPU", stem, c.sizes.chart_max_s, False, deadline, threads, need=need)
    off = c.device_off()
    if off:
        c.skip(runs, f"stem {stem}, GPU", off, "skipped")
        return
    c.compare(runs, cpu, c.chart(runs, f"stem {stem}, GPU", stem, c.sizes.chart_max_s, True, deadline, threads,
                                 need=need / 2))


def step_gpu_vs_cpu(c: Check, rec: dict, deadline: float) -> None:
    gpu_against_cpu(c, rec, deadline, c.sizes.charts[0])


def step_gpu_vs_cpu_larger(c: Check, rec: dict, deadline: float) -> None:
    before = [r["wall_s"] for r in c.data["steps"].get("gpu_vs_cpu", {}).get("runs", []) if r.get("wall_s")]
    gpu_against_cpu(c, rec, deadline, c.sizes.charts[1], need=1.5 * max(before, default=0.0))


def step_cores(c: Check, rec: dict, deadline: float) -> None:
    from bench_workers import RunFailed, run

    rec["runs"] = runs = []
    stem, sizes = c.sizes.cores_stem, c.sizes
    base = [sys.executable, "-m", "nassau", "resolve", "S_2", "--stem", str(stem), "--max-s", str(every_s(stem)),
            "--quiet"]
    walls: dict[str, float] = {}
    chart = None

    def way(label: str, flags: list[str], need: float) -> None:
        nonlocal chart
        timeout = c.room(runs, label, deadline, need)
        if timeout is None:
            return
        try:
            wall, peak, cpu, out = run(base + flags, timeout=timeout, env={**os.environ, "NASSAU_GPU": "0"})
        except RunFailed as exc:
            runs.append({"label": label, "status": "cut" if "timed out" in str(exc) else "failed", "reason": str(exc)})
            c.log(f"  {label}: {exc}")
            c.save()
            return
        same = chart is None or out == chart
        chart = chart or out
        walls[label] = wall
        runs.append({"label": label, "status": "ok" if same else "failed", "wall_s": round(wall, 2),
                     "peak_mib": round(peak), "cpu_s": round(cpu, 2), "same_chart": same})
        c.log(f"  {label}: {wall:.1f} s wall, {cpu:.1f} s CPU, {peak:.0f} MiB" + ("" if same else ", ANOTHER CHART"))
        c.save()

    way("1 thread", ["--threads", "1"], 0.0)
    one = walls.get("1 thread", 0.0)
    model = c.work / "scaling.json"
    for k in sorted((k for k in sizes.cores if k > 1), reverse=True):
        need = one * min(1.0, 4 / k)  # a pessimistic speed-up of k / 4
        way(f"{k} processes", ["--threads", str(k), "--processes"], need)
        way(f"{k} threads", ["--threads", str(k)], need)
        if k == max(sizes.cores):
            if c.room(runs, "model (bench_scaling, traced)", deadline, one / 3) is None:
                continue
            row = c.child("model (bench_scaling, traced)",
                          [sys.executable, str(HERE / "bench_scaling.py"), "--stems", str(stem), "--threads", str(k),
                           "--cores", *map(str, sizes.cores), "--gil-share", str(DOCUMENTED_G), "--json", str(model)],
                          deadline, "bench_scaling.log", env={"NASSAU_GPU": "0"})
            runs.append(row)
            c.save()
    predicted = json.loads(model.read_text())["stems"][0] if model.exists() else None
    if predicted:
        rec["model"] = {key: predicted[key] for key in ("W", "D", "D_split", "g", "g_source", "wall", "threads",
                                                        "D_relay", "R", "A") if key in predicted}
    table = []
    for k in sizes.cores:
        row: dict = {"workers": k}
        for kind in ("threads", "processes"):
            label = "1 thread" if k == 1 else f"{k} {kind}"
            if label in walls:
                row[f"{kind}_s"] = round(walls[label], 2)
                if one:
                    row[f"{kind}_x"] = round(one / walls[label], 2)
            p = predicted["predictions"].get(str(k)) if predicted else None
            if p and kind in p:
                row[f"{kind}_predicted_x"] = round(predicted["W"] / p[kind], 2)
        table.append(row)
    rec["speed_ups"] = table
    c.log("  speed-ups over 1 thread (measured / predicted): " + "; ".join(
        f"{r['workers']}: threads {r.get('threads_x', '-')} / {r.get('threads_predicted_x', '-')}, processes "
        f"{r.get('processes_x', '-')} / {r.get('processes_predicted_x', '-')}" for r in table))


@dataclass(frozen=True)
class Step:
    name: str
    run: Callable[[Check, dict, float], None]
    weight: float  # its share of what is left, against the steps after it
    at_least: float = 0.0  # or this fraction of what is left, if more


STEPS = (Step("setup", step_setup, 10, at_least=0.5), Step("environment", step_environment, 1),
         Step("device_tests", step_device_tests, 30), Step("gpu_vs_cpu", step_gpu_vs_cpu, 18),
         Step("cores", step_cores, 40), Step("gpu_vs_cpu_larger", step_gpu_vs_cpu_larger, 6))


def check(c: Check) -> int:
    for k, step in enumerate(STEPS):
        left = c.left()
        rec = c.data["steps"][step.name] = {"status": "running", "started_s": round(c.elapsed(), 2)}
        if left < c.sizes.min_run:
            rec.update(status="not run", reason=f"no time left ({max(left, 0):.0f} s)")
            c.log(f"{step.name}: not run ({rec['reason']})")
            c.save()
            continue
        share = max(step.weight / sum(s.weight for s in STEPS[k:]), step.at_least)
        deadline = time.monotonic() + share * left
        c.log(f"{step.name}: up to {share * left:.0f} s")
        c.save()
        try:
            step.run(c, rec, deadline)
            settle(rec)
        except Exception as exc:  # record it and go on: the next step may still measure something
            rec.update(status="failed", error=f"{exc.__class__.__name__}: {exc}")
            c.log(f"{step.name}: FAILED {rec['error']}\n{traceback.format_exc()}")
        rec["wall_s"] = round(c.elapsed() - rec["started_s"], 2)
        c.save()
    statuses = [r["status"] for r in c.data["steps"].values()]
    runs = [r.get("status") for step in c.data["steps"].values() for r in step.get("runs", [])]
    short = "not run" in statuses + runs or "cut" in runs
    c.data["status"] = "stopped at the time limit" if short else "done"
    c.save()
    c.log(c.data["status"] + ": " + ", ".join(f"{n} {r['status']}" for n, r in c.data["steps"].items()))
    return 1 if "failed" in statuses else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", type=Path, help="directory for device_check.json and the logs")
    ap.add_argument("--limit", type=float, help=f"seconds for the whole check (default {DEFAULT_LIMIT:.0f}, at "
                    f"most {MAX_LIMIT:.0f}; 60 with --cpu-only)")
    ap.add_argument("--cpu-only", action="store_true", help="every step but the device ones, at small sizes")
    ap.add_argument("--wheels", type=Path, default=ROOT / ".whl", help="wheels to install missing needs from")
    ap.add_argument("--prepare-wheels", type=Path, metavar="DIR", help="download the wheels to carry, and stop")
    args = ap.parse_args(argv)
    sys.path[:0] = [str(HERE), str(ROOT)]  # the benchmarks it reuses, and the project
    if args.prepare_wheels:
        return subprocess.run(pip_download(args.prepare_wheels, WHEELS)).returncode
    if args.out is None:
        ap.error("give the directory to write the figures to")
    limit = args.limit if args.limit is not None else 60.0 if args.cpu_only else DEFAULT_LIMIT
    if not 0 < limit <= MAX_LIMIT:
        ap.error(f"--limit must be above 0 and at most {MAX_LIMIT:.0f} s (9 minutes), got {limit:g}")
    c = Check(args.out, limit, args.cpu_only, args.wheels)

    def stop(why: str, code: int) -> None:
        c.data["status"] = why
        c.save()
        c.log(why)
        os._exit(code)

    signal.signal(signal.SIGTERM, lambda *_: stop("terminated (SIGTERM)", 3))
    watchdog = threading.Timer(limit + 15, stop, ("stopped by the watchdog at the time limit", 3))
    watchdog.daemon = True
    watchdog.start()
    try:
        return check(c)
    finally:
        watchdog.cancel()
        shutil.rmtree(c.work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
