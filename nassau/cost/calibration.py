"""The measured half of the cost model, kept in a cache: a module's generators from a probe (a small exact run of
the same module and algorithm) and this machine's constants (seconds per unit of each feature of a job, the
interpreter's floor of memory, start-up), from a calibration run of the sphere measured once.

Both live in `$XDG_CACHE_HOME/nassau/cost` (default `~/.cache/nassau/cost`; `NASSAU_COST_DIR` names another), as
small JSON files keyed by what they depend on: the probe by the module's definition, the algorithm and the probe's
region; the machine's constants by the prime's kind and the algorithm's, and by the kernels' sources (a change of
the code may change its speed). Delete the directory to measure again.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from algebra.milnor.warmup import helper_compiling
from algebra.module.interface import Module
from algebra.module.loader import module_from_spec
from algebra.module.motivic import CTAU, load_motivic
from algebra.module.spec import ModuleSpec, read_spec
from charts.atomic import write_text_atomic
from fp.kernel_cache import source_hash
from nassau.cost.generators import SPHERES, GeneratorModel, Sphere
from nassau.cost.jobs import job_features
from nassau.cost.memory import process_rss
from nassau.cost.sizes import algebra_dims
from nassau.engine.motivic import resolve_motivic
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.engine.resolve import resolve, resolved_module
from nassau.engine.tau_quotient import ALGORITHM as QUOTIENT
from nassau.engine.tau_quotient import resolve_quotient
from nassau.store.motivic_save import ALGORITHM as MOTIVIC
from nassau.store.save_dir import SaveDir, module_fingerprint

#: The probe's stems above the module's bottom, by prime: about half a second of work for the sphere.
PROBE_STEMS = {2: 40}
ODD_PROBE_STEM = 90
#: The calibration runs, by (prime kind, algorithm kind): the sphere through a stem, s <= S (a few seconds each).
#: Nassau's step at p = 2 is measured through stem 80: its cost per (F_s(t) x F_{s-1}(t)) entry shows only in the
#: larger jobs past stem 60, and fitted through stem 60 the model put S_2 through stem 100 at two thirds of its time.
#: At odd primes both are measured on S_3 through stem 150, s <= 40, so that --algorithm auto compares like with
#: like: fitted through stem 100 the standard step's S_3 through stem 200 came out at 11 s of its 25 s (Nassau's,
#: from stem 130, at 21 s of 14 s), which ranked the two the wrong way round there.
#: Motivic runs are measured on their own engines: the sphere over A^C on the rectangle t <= 78, s <= 28 (what a run
#: through stem 50, s <= 27 resolves: 4 s; on the rectangle t <= 50 the matrices' entries got no weight, and the
#: sphere through stem 60, every s came out at 0.65 of its time), C(tau) over A^C/tau through stem 60, s <= 31.
CALIBRATIONS = {("2", "nassau"): ("S_2", 80, 43), ("2", "standard"): ("S_2", 45, 25),
                ("odd", "nassau"): ("S_3", 150, 40), ("odd", "standard"): ("S_3", 150, 40),
                ("2", "motivic"): ("S_2", 50, 28), ("2", "tau-quotient"): ("Ctau", 60, 31)}
#: The motivic engines' algorithm names (as their save directories carry them) and their calibrations' kinds.
MOTIVIC_KINDS = {MOTIVIC: "motivic", QUOTIENT: "tau-quotient"}


def cache_dir() -> Path:
    base = os.environ.get("NASSAU_COST_DIR")
    if base:
        return Path(base)
    home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(home) / "nassau" / "cost"


def _read(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _write(path: Path, data: dict) -> None:
    """Keep a measurement; a cache that cannot be written only means measuring again next time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(str(path), json.dumps(data) + "\n")
    except OSError:
        pass


def _top_stem(module: Module, region: Region) -> int:
    """The region's top stem above the module's bottom."""
    return (region.t_limit if region.max_stem is None else region.max_stem) - module.min_degree


def within_probe(module: Module, region: Region) -> bool:
    """Whether the region reaches no stem beyond its module's probe: a run of a fraction of a second, which gets no
    estimate of its own unless asked (the probe would be the run itself)."""
    return _top_stem(module, region) <= PROBE_STEMS.get(module.algebra.prime, ODD_PROBE_STEM)


def probe_region(module: Module, region: Region) -> Region:
    """The probe's region: through the probe's stem (or the request's own top stem where that is lower), every row
    up to the vanishing line, so that the rows' profile is the whole of each stem's."""
    p = module.algebra.prime
    stems = PROBE_STEMS.get(p, ODD_PROBE_STEM)
    stems = min(stems, max(_top_stem(module, region), 0))
    rows = stems // (2 * p - 2) + 3  # every row below the vanishing line, whatever the request's
    return Region(max_s=rows, min_degree=module.min_degree, max_stem=module.min_degree + stems)


def probe_key(spec: ModuleSpec, algorithm: str, probe: Region) -> str:
    text = f"{module_fingerprint(spec)}/{algorithm}/{probe.max_stem - probe.min_degree}/{probe.max_s}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def reference(module: Module, algorithm: str) -> Sphere | None:
    """The known growth curve of the generators of the module's resolution: the sphere's over the whole algebra at
    p = 2 and p = 3 (not over the subalgebra a change of rings resolves over, nor at the other primes)."""
    over = resolved_module(module, algorithm)
    return SPHERES.get(over.algebra.prime) if over.profile.is_full else None


def probe(module: Module, spec: ModuleSpec, algorithm: str, region: Region) -> GeneratorModel:
    """The generator model of this module from its probe, run now (one thread, a few tenths of a second) unless
    kept from an earlier estimate."""
    where = probe_region(module, region)
    return kept_probe(spec, algorithm, where, lambda: resolve(module, where, algorithm, threads=1),
                      reference(module, algorithm))


def kept_probe(spec: ModuleSpec, algorithm: str, where: Region, compute: Callable[[], Resolution],
               curve: Sphere | None) -> GeneratorModel:
    """A probe's generator model over `where`: its counts kept in the cache, else compute() (a resolution whose
    generators are the probe's over that region) run now and its counts kept."""
    path = cache_dir() / "probes" / f"{probe_key(spec, algorithm, where)}.json"
    data = _read(path)
    if data is None:
        data = {"counts": [[s, t - s - where.min_degree, k] for (s, t), k in compute().dims().items() if k]}
        _write(path, data)
    return _model(data, where, curve)


def _model(data: dict, probe: Region, curve: Sphere | None) -> GeneratorModel:
    counts = {(int(s), int(n)): int(k) for s, n, k in data["counts"]}
    return GeneratorModel(counts, probe.max_stem - probe.min_degree, probe.max_s, curve)


def kind(prime: int, algorithm: str) -> tuple[str, str]:
    """Which calibration a run's time is measured by: the prime's (2 or odd) and the step's (Nassau's, the motivic
    engines', or the standard one, which the change of rings and the unstable algebra take too)."""
    step = MOTIVIC_KINDS.get(algorithm) or ("nassau" if algorithm == "nassau" else "standard")
    return ("2" if prime == 2 else "odd", step)


def cached_machine(prime: int, algorithm: str) -> dict | None:
    return _read(_machine_path(*kind(prime, algorithm)))


#: The calibration's own version, in its cache key beside the kernels' sources: a change of what it measures or
#: how (its region, wall or CPU seconds) measures again.
VERSION = 4


def _machine_path(prime_kind: str, step: str) -> Path:
    return cache_dir() / f"machine-{prime_kind}-{step}-v{VERSION}-{source_hash()}.json"


def machine(prime: int, algorithm: str) -> dict:
    """This machine's constants for the kind of run (cached; else a calibration run of a few seconds now)."""
    found = cached_machine(prime, algorithm)
    if found is not None:
        return found
    prime_kind, step = kind(prime, algorithm)
    name, stem, max_s = CALIBRATIONS[(prime_kind, step)]
    data = calibrate(name, stem, max_s, step)
    _write(_machine_path(prime_kind, step), data)
    return data


def calibrate(name: str, stem: int, max_s: int, algorithm: str) -> dict:
    """Resolve `name` through `stem`, s <= max_s (by the engine of the kind `algorithm`, over its region: _timed_run),
    on one thread after a small warm-up run (which loads the kernels), timing each job; fit seconds per unit of each
    job feature (non-negative least squares). Jobs are timed in CPU seconds, which a machine shared with other work
    does not inflate as it does wall time: the estimate is of a run with the cores to itself, and the ETA of a
    running one corrects for what it gets."""
    startup, floor = _small_run(name, () if algorithm in CLASSICAL else ("--motivic",))
    spec = read_spec("S_2" if name == CTAU else name)
    module = module_from_spec(spec)
    _timed_run(name, module, algorithm, min(max_s, 8), 20, None)  # the warm-up: the kernels loaded
    tables_ready()
    times: dict[tuple[int, int], float] = {}
    last = [time.process_time()]

    def done(s: int, t: int) -> None:
        now = time.process_time()
        times[(s, t)] = now - last[0]
        last[0] = now

    res, region = _timed_run(name, module, algorithm, max_s, stem, done)
    gens = np.zeros((max_s + 1, region.t_limit + 1))
    for (s, t), k in res.dims().items():
        gens[s, t] = k
    over = resolved_module(module, algorithm)
    dims = algebra_dims(over.algebra.prime, over.profile, region.t_limit)
    jobs = sorted(times)
    features = job_features(gens, dims, module, region, jobs)
    seconds = np.array([times[j] for j in jobs])
    coef = nnls(features, seconds)
    # a job far above what its sizes cost is a one-time event (a kernel compiled on its first call, 10.8 s once at
    # (1, 67)), not the machine's speed: fitted with it, one calibration came out as 3.2e-6 s per entry and nothing
    # else (residual 0.78), which put S_2 through stem 160 at a fifth of its time
    usual = seconds <= OUTLIER * (features @ coef) + 0.05
    coef = nnls(features[usual], seconds[usual])
    residual = float(np.abs(features[usual] @ coef - seconds[usual]).sum() / max(seconds[usual].sum(), 1e-9))
    return {"coefficients": coef.tolist(), "startup_s": startup, "floor_bytes": floor, "left_out": int((~usual).sum()),
            "save_s_per_bidegree": _save_seconds(res, spec, module, algorithm, jobs),
            "calibrated_on": f"{name} through stem {stem}, s <= {max_s}, {algorithm}", "seconds": float(seconds.sum()),
            "residual": residual, "load_average": os.getloadavg()[0], "date": time.strftime("%Y-%m-%d %H:%M UTC",
                                                                                          time.gmtime())}


CLASSICAL = ("nassau", "standard")

#: Seconds a calibration waits at most for a first run's compile helper (about 12 s on the 2-core EPYC).
HELPER_WAIT = 120.0


def tables_ready(limit: float = HELPER_WAIT) -> bool:
    """Wait, at most `limit` seconds, for the compile helper of a first run on an empty kernel cache
    (algebra.milnor.warmup): until it is done no product tables are made and every product is enumerated, so a
    calibration timed meanwhile measured that (S_2 over A^C through stem 50: 14-16 s of jobs against 3.0 s, a
    degenerate fit that put stem 90 on 2 threads at 1.9 min against about 10), and its cache kept it. True once the
    tables can be made."""
    end = time.monotonic() + limit
    while helper_compiling():
        if time.monotonic() >= end:
            return False
        time.sleep(0.2)
    return True


def _timed_run(name: str, module: Module, algorithm: str, max_s: int, stem: int, done) -> tuple[Resolution, Region]:
    """One thread of the calibration's engine through `stem`, s <= max_s, done(s, t) after each job; the resolution
    and the region its jobs covered: the stem's for the classical steps and C(tau), the rectangle t <= stem + max_s
    for the sphere over A^C (what a run through the stem resolves, nassau.engine.motivic.motivic_region)."""
    if algorithm in CLASSICAL:
        region = Region(max_s=max_s, min_degree=0, max_stem=stem)
        return resolve(module, region, algorithm, threads=1, on_done=done), region
    if algorithm == "tau-quotient":
        region = Region(max_s=max_s, min_degree=0, max_stem=stem)
        return resolve_quotient(load_motivic(CTAU), region, on_done=done), region
    region = Region(max_s=max_s, min_degree=0, max_t=stem + max_s)
    return resolve_motivic(load_motivic(name), region, on_done=done), region


#: A calibration job taking more than this many times what the first fit gives its sizes is left out of the fit.
OUTLIER = 4.0


def nnls(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Non-negative least squares by dropping the columns that come out negative until none does (the features are
    few and all of them costs)."""
    active = list(range(x.shape[1]))
    while active:
        coef, *_ = np.linalg.lstsq(x[:, active], y, rcond=None)
        if (coef >= 0).all():
            out = np.zeros(x.shape[1])
            out[active] = coef
            return out
        active = [a for a, c in zip(active, coef) if c > 0]
    return np.zeros(x.shape[1])


#: The small run whose cost every run pays: the interpreter, the imports, loading the kernels and a few jobs (a
#: region too small for an estimate of its own).
SMALL_RUN = ("--stem", "20", "--max-s", "8", "--quiet", "--threads", "1")
#: Measures a command in a process of its own: its CPU seconds and peak resident bytes.
_MEASURE = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], capture_output=True, timeout=300); "
            "r = resource.getrusage(resource.RUSAGE_CHILDREN); print(r.ru_utime + r.ru_stime, r.ru_maxrss * 1024)")


def _small_run(name: str, extra: tuple[str, ...] = ()) -> tuple[float, int]:
    """CPU seconds and peak resident bytes of `nassau resolve NAME --stem 20 --max-s 8` (and `extra`) in a fresh
    process: the start-up and the memory floor of any run."""
    try:
        out = subprocess.run([sys.executable, "-c", _MEASURE, sys.executable, "-m", "nassau", "resolve", name,
                              *SMALL_RUN, *extra], capture_output=True, text=True, timeout=320, check=True)
        cpu, peak = out.stdout.split()
        return float(cpu), int(peak)
    except (OSError, subprocess.SubprocessError, ValueError):
        return 0.0, process_rss()


def _save_seconds(res, spec: ModuleSpec, module: Module, algorithm: str, jobs: list[tuple[int, int]]) -> float:
    """Seconds a save directory spends on one bidegree's file (written, synced and renamed), over up to 300 of the
    calibration's own: wall seconds, since the sync waits on the disk (5 ms a file on this machine's disk against
    0.3 ms of CPU, which made a saved tmf2 through stem 80 take twice its estimate)."""
    some = jobs[:: max(1, len(jobs) // 300)]
    with tempfile.TemporaryDirectory() as tmp:
        store = SaveDir(Path(tmp) / "save", spec, module, algorithm)
        store.open(Region(max_s=0, min_degree=0, max_stem=0))
        started = time.perf_counter()
        for s, t in some:
            store.save(res, s, t)
        spent = time.perf_counter() - started
        store.close()
    return spent / max(len(some), 1)
