"""The Python API: resolve a module, or load a saved run, and look at its Ext from a script or a notebook.

    import nassau
    ext = nassau.resolve("S_2", stem=40)      # a progress bar in a notebook, a summary line on stderr elsewhere
    ext.dims[(7, 1)]                           # 1: h3
    ext                                        # in Jupyter: the interactive chart (the SVG where scripts are off)

`nassau resolve` is `request(...)` then `Request.run`, with the CLI's own progress bar; `nassau chart` is `load`;
the other commands resolve through `Request.resolve` (nassau.api.resolved). `cluster=` or `workers=` runs the jobs on
Dask worker processes instead of threads (nassau.store.cluster).
Bad input raises the exceptions the CLI turns into one line: ModuleError, EngineError, StoreError, ClassError.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from algebra.module.interface import Module
from algebra.module.loader import module_from_spec
from algebra.module.spec import ModuleSpec, read_spec
from fp.threads import cores
from nassau.api.ext import Ext
from nassau.api.notebook_progress import NotebookBar, in_notebook
from nassau.api.progress import Reporter
from nassau.api.resolved import Progress, Resolved, reporting, resolve_over
from nassau.cost import calibration
from nassau.cost.budget import HeldRun, budget_of, fits, fitted, largest_stem, refusal
from nassau.cost.choices import Estimates, default_threads, fastest_algorithm, fastest_way
from nassau.cost.estimate import Estimate
from nassau.cost.memory import available_bytes
from nassau.engine.errors import EngineError
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.engine.resolve import UNSTABLE, algorithm_over_module, check_executor, choose_algorithm, resolved_module
from nassau.engine.resolve import resolve as run_engine
from nassau.secondary.homotopy import check_secondary
from nassau.store.cluster import Cluster, check_cluster
from nassau.store.save_dir import SaveDir, StoreError, module_from_manifest, read_manifest

if TYPE_CHECKING:
    from nassau.api.motivic import MotivicRun

DEFAULT_MAX_S = 15


@dataclass
class Request:
    """A checked computation, nothing computed yet: the module, its region, the algorithm and the save directory
    (opened: a directory made for something else, or in use by a cluster run, is refused here, before any work);
    the jobs run on `threads` threads (or processes, nassau.engine.processes), or on the Dask scheduler at
    `cluster`, or on a local cluster of `workers` processes."""

    spec: ModuleSpec
    module: Module
    region: Region
    algorithm: str
    threads: int
    store: SaveDir | None
    operations: list[str] | None
    d2: bool = False
    page: int = 2
    cluster: str | None = None
    workers: int | None = None
    processes: bool = False
    #: The memory budget in bytes the run is held to (None: not held), whether it was named (else the memory
    #: available), whether a run whose estimate exceeds it goes ahead anyway, and whether the run owns its process
    #: (the command line), so that past the last threshold it may end it at once rather than only stop.
    memory: int | None = None
    memory_named: bool = False
    force: bool = False
    hard_stop: bool = False
    #: plan()'s answer: the estimate and the product tables' budget, and for a forced run over its budget the part
    #: that fits (its region, estimate and tables' budget), run first so that what it finishes is kept.
    _plan: tuple | None = None

    @property
    def small(self) -> bool:
        """Whether the run reaches no stem beyond its module's probe (calibration.within_probe)."""
        return calibration.within_probe(self.module, self.region)

    def estimate(self, timed: bool = True) -> Estimate:
        """What the run will cost (nassau.cost.estimate), with its product tables sized for the memory budget when
        it has one. timed: with the wall time (calibrating this machine once, a few seconds, if it never was)."""
        est, _ = fitted(self.module, self.spec, self.region, self.algorithm, self.threads, self.processes,
                        self.memory if self.memory is not None else available_bytes(), timed=timed,
                        saving=self.store is not None)
        return est

    def plan(self) -> Estimate | None:
        """Check the run against its memory budget before any work: EngineError (one line, naming the estimate and
        the largest stem that fits) when the estimate exceeds it, unless forced. Returns the estimate shown at the
        start of the run (None for a small run, or one that is not held to a budget)."""
        if self._plan is not None:
            return self._plan[0]
        if self.memory is None or self.small or self.cluster is not None or self.workers is not None:
            self._plan = (None, None, None)
            return None
        gm = calibration.probe(self.module, self.spec, self.algorithm, self.region)
        est, tables = fitted(self.module, self.spec, self.region, self.algorithm, self.threads, self.processes,
                             self.memory, gm, saving=self.store is not None)
        part = None
        if not fits(est, self.memory):
            def fits_through(part: Region) -> bool:
                est, _ = fitted(self.module, self.spec, part, self.algorithm, self.threads, self.processes,
                                self.memory, gm)
                return fits(est, self.memory)

            largest = largest_stem(self.region, fits_through)
            if not self.force:
                raise EngineError(refusal(self.spec.display, self.region, est, self.memory, largest,
                                          self.memory_named))
            if largest is not None:
                first = Region(max_s=self.region.max_s, min_degree=self.region.min_degree, max_stem=largest)
                part = (first, *fitted(self.module, self.spec, first, self.algorithm, self.threads, self.processes,
                                       self.memory, gm))
        self._plan = (est, tables, part)
        return est

    def _held(self, region: Region, est: Estimate | None, tables: int | None) -> HeldRun:
        return HeldRun(self.module, self.algorithm, region, self.memory, est, tables,
                       None if self.store is None else str(self.store.path), self.processes, self.hard_stop)

    @property
    def label(self) -> str:
        return f"{self.spec.display} ({self.algorithm})"

    @property
    def size(self) -> int:
        """Bidegrees in the region: the length of a progress bar."""
        return len(self.region.bidegrees())

    def resolve(self, bar: Progress | None = None, quiet: bool = True) -> Resolved:
        """Resolve (resuming from the save directory), reporting to `bar`, or to a bar of its own that prints one
        summary line unless quiet. A cluster run also reports its workers to the bar, holds the save directory
        while it runs and releases it at the end; a threaded run keeps it open until `Resolved.close`."""
        if self.cluster is None and self.workers is None:
            if self.memory is None:
                return resolve_over(self.module, self.region, self.algorithm, threads=self.threads, store=self.store,
                                    spec=self.spec, bar=bar, quiet=quiet, processes=self.processes)
            est = self.plan()
            _, tables, part = self._plan
            res = None
            if part is not None:  # forced over its budget: first what fits, kept, then on until the budget stops it
                first, part_est, part_tables = part
                res = resolve_over(self.module, first, self.algorithm, threads=self.threads, store=self.store,
                                   spec=self.spec, bar=bar, quiet=quiet, processes=self.processes,
                                   held=self._held(first, part_est, part_tables)).resolution
                # then a stem at a time, so that what a stem needs (the Milnor basis through its degrees above all,
                # made at a run's start) comes as it goes and the budget stops the run at the first that outgrows it
                for stem in range(first.chart_max_stem + 1, self.region.chart_max_stem):
                    step = Region(max_s=self.region.max_s, min_degree=self.region.min_degree, max_stem=stem)
                    res = resolve_over(self.module, step, self.algorithm, threads=self.threads, store=self.store,
                                       spec=self.spec, bar=bar, quiet=quiet, processes=self.processes,
                                       held=self._held(step, est, tables), res=res).resolution
            return resolve_over(self.module, self.region, self.algorithm, threads=self.threads, store=self.store,
                                spec=self.spec, bar=bar, quiet=quiet, processes=self.processes,
                                held=self._held(self.region, est, tables), res=res)
        assert self.store is not None, "request() gives a cluster run a save directory"
        with reporting(bar, self.spec.display, self.region, self.algorithm, quiet) as progress:
            try:
                with Cluster(self.cluster, self.workers, progress.status) as cluster:
                    self.store.lock()
                    res = run_engine(self.module, self.region, self.algorithm, store=self.store,
                                     on_done=progress.advance, executor=cluster)
                    loaded = cluster.resumed
            finally:
                self.store.close()
        return Resolved(self.module, self.region, self.algorithm, res, self.spec.display, self.spec, None,
                        self.threads, loaded or 0)

    def run(self, bar: Progress | None = None) -> Ext:
        """Resolve as `resolve` does, and Ext with the chart options of the request."""
        return Ext(self.resolve(bar), self.operations, d2=self.d2, page=self.page)


def request(module: str, stem: int | None = None, *, max_t: int | None = None, max_s: int = DEFAULT_MAX_S,
            algorithm: str = "auto", threads: int | None = None, products: list[str] | None = None,
            save_dir: str | os.PathLike[str] | None = None, unstable: bool = False, d2: bool = False,
            page: int = 2, cluster: str | None = None, workers: int | None = None,
            over_module: bool = False, processes: bool | None = False, memory: int | str | None = None,
            force: bool = False, hard_stop: bool = False) -> Request:
    """Check a computation (see `resolve`) without running it. over_module: the resolution must be of the module
    itself (products and d2 lift into it), so the change of rings gives way to the standard algorithm. memory: hold
    the run to this budget (bytes, or a size such as "4G"; "available": the memory available, less a margin),
    refusing it up front when its estimate exceeds the budget unless force (nassau.cost.budget). hard_stop: the run
    owns its process (the command line), which may be ended at once past the budget's last threshold; a run inside a
    caller's process (a notebook, a test) only stops. processes=None: worker processes or threads, whichever the
    estimate says is faster here (nassau.cost.choices; the command line's default). threads=None: the cores, one
    for a run too small to share them (nassau.cost.choices.default_threads)."""
    _check_arguments({"stem", "max_t", "threads", "workers", "products", "save_dir", "cluster"}, module=module,
                     stem=stem, max_t=max_t, max_s=max_s, threads=threads, page=page, workers=workers,
                     products=products, save_dir=save_dir, cluster=cluster)
    named_threads = threads is not None
    threads = cores() if threads is None else threads
    if threads < 1:
        raise EngineError(f"threads must be at least 1 (got {threads})")
    check_cluster(cluster, workers, save_dir)
    if processes and (cluster is not None or workers is not None):
        raise EngineError("processes run the jobs on this machine; a cluster runs them on its own workers: not both")
    spec = read_spec(module)
    mod = module_from_spec(spec)
    if unstable and (algorithm != "auto" or products):
        raise EngineError("an unstable resolution takes no algorithm (it is the standard one) and draws products "
                          "by h0..h3 only")
    over_module = over_module or d2 or page == 3  # d2 lives over the whole algebra, not over the subalgebra B
    chosen = UNSTABLE if unstable else (algorithm_over_module if over_module else choose_algorithm)(mod, algorithm)
    if d2 or page == 3:
        if unstable:
            raise EngineError("d2 is computed for stable Ext only")
        check_secondary(mod)
    if page not in (2, 3):
        raise EngineError(f"page {page} is not drawn (2: E2, 3: E3 after d2)")
    region = Region(max_s=max_s, min_degree=mod.min_degree, max_stem=stem, max_t=max_t)
    budget = budget_of(memory)
    room = available_bytes() if budget is None else budget
    estimates = Estimates(mod, spec, region, room)
    if algorithm == "auto":
        chosen = fastest_algorithm(estimates, chosen, threads, _saved_algorithm(save_dir))
    if cluster is not None or workers is not None:
        check_executor(mod, region, chosen)
    store = None
    if save_dir is not None:
        store = SaveDir(Path(save_dir), spec, mod, chosen)
        store.open(region)
    if not named_threads and processes is not True and cluster is None and workers is None:
        threads = default_threads(estimates, chosen, threads, store is not None)
    if processes is None:
        processes = cluster is None and workers is None and fastest_way(estimates, chosen, threads, store is not None)
    return Request(spec, mod, region, chosen, threads, store, list(products) if products else None, d2, page,
                   cluster, workers, processes, budget, memory not in (None, "available"), force, hard_stop)


def _saved_algorithm(save_dir: str | os.PathLike[str] | None) -> str | None:
    """The algorithm a save directory was made with (None: no save directory yet), which a resumed auto run keeps."""
    if save_dir is None:
        return None
    try:
        return read_manifest(Path(save_dir)).get("algorithm")
    except (StoreError, OSError):
        return None


#: What each argument of `request` and `load` must be, and how an error says it.
_KINDS = {"module": (str, "a module name or the path of a module file, as a string"), "stem": (int, "an integer"),
          "max_t": (int, "an integer"), "max_s": (int, "an integer"), "threads": (int, "an integer"),
          "page": (int, "an integer"), "workers": (int, "an integer"), "save_dir": ((str, os.PathLike), "a path"),
          "cluster": (str, "an address"), "products": ((list, tuple), "a list of names")}


def _check_arguments(optional: set[str], **values: object) -> None:
    """The types of the API's arguments, checked before any is used: a bad one raises EngineError (the one line the
    CLI prints), not a TypeError from deep inside. The `optional` ones may be None."""
    for name, value in values.items():
        kind, wanted = _KINDS[name]
        if value is None and name in optional:
            continue
        if not isinstance(value, kind) or isinstance(value, bool) or (
                name == "products" and not all(isinstance(p, str) for p in value)):
            raise EngineError(f"{name} must be {wanted}{' or None' if name in optional else ''} (got {value!r})")


def _part(save: Path, saved: Region, stem: int | None, max_t: int | None, max_s: int | None) -> Region:
    """The part of a saved run's region that stem (or max_t) and max_s name, each edge not given the run's own; one
    reaching beyond the run is refused."""
    if stem is None and max_t is None:
        stem, max_t = saved.max_stem, saved.max_t
    part = Region(max_s=saved.max_s if max_s is None else max_s, min_degree=saved.min_degree, max_stem=stem,
                  max_t=max_t)
    if not all(saved.contains(s, t) for s, t in part.bidegrees()):
        raise StoreError(f"{save} holds a run through {saved.describe()}; {part.describe()} reaches beyond it")
    return part


def resolve(module: str, stem: int | None = None, *, max_t: int | None = None, max_s: int = DEFAULT_MAX_S,
            algorithm: str = "auto", threads: int | None = None, products: list[str] | None = None,
            save_dir: str | os.PathLike[str] | None = None, progress: bool = True, unstable: bool = False,
            d2: bool = False, page: int = 2, cluster: str | None = None, workers: int | None = None,
            processes: bool = False, motivic: bool = False, max_weight: int | None = None) -> Ext | MotivicRun:
    """Ext of `module` (a bundled name, NAME[k], A^B, or a module file) through `stem` (or t <= max_t), s <= max_s.

    algorithm: auto, standard, nassau or change-of-rings; threads: default all cores, one for a run of a few
    seconds; products: the classes the chart's lines multiply by (default h0 h1 h2 h3; c0, Ph1, g, NAME=n,s,[v] as
    for --products); save_dir: save and resume as --save-dir does; progress: a bar (in a notebook or on a terminal)
    or a summary line on stderr; unstable: Ext over the unstable algebra instead (an unstable module, e.g. S_2[7];
    h0..h3 lines only); d2: the chart carries the Adams d2 (secondary Steenrod algebra, p = 2); page=3 draws E3 =
    ker d2 / im d2; processes: all but one of the `threads` workers are processes of this machine, each with a copy
    of the resolution (Linux: they are forks) and the product tables in memory they share, which the interpreter
    lock does not serialise (the one left is a thread here); cluster: the address of a Dask scheduler to run the
    jobs on, or workers: a number of local Dask worker processes (either needs save_dir, on a filesystem the client
    and every worker share). motivic: Ext over the C-motivic Steenrod algebra instead (a MotivicRun: generators with
    (stem, s, weight), tau-torsion, h0..h3 products; docs/motivic.md), listing weights <= max_weight.
    """
    if motivic:
        return _resolve_motivic(module, stem, max_t, max_s, threads, max_weight, progress, save_dir,
                                algorithm=algorithm != "auto", products=products,
                                unstable=unstable, d2=d2, page=page != 2, cluster=cluster, workers=workers,
                                processes=processes)
    if max_weight is not None:
        raise EngineError("max_weight goes with motivic=True")
    req = request(module, stem, max_t=max_t, max_s=max_s, algorithm=algorithm, threads=threads, products=products,
                  save_dir=save_dir, unstable=unstable, d2=d2, page=page, cluster=cluster, workers=workers,
                  processes=processes)
    bar = NotebookBar(req.size, req.label) if progress and in_notebook() else Reporter(req.size, req.label,
                                                                                       not progress)
    with bar:
        ext = req.run(bar)
    bar.finish(f"{req.spec.display}: {ext.counted()}")
    return ext


def _resolve_motivic(module: str, stem: int | None, max_t: int | None, max_s: int, threads: int | None,
                     max_weight: int | None, progress: bool, save_dir: str | os.PathLike[str] | None,
                     processes: bool | None = False, cluster: str | None = None, workers: int | None = None,
                     **unsupported: object) -> MotivicRun:
    from nassau.api.motivic import motivic_size, run_motivic  # here: classical runs never load the motivic engine

    given = [name for name, value in unsupported.items() if value not in (None, False)]
    if given:
        raise EngineError(f"a motivic run does not take {', '.join(given)} (it takes stem or max_t, max_s, "
                          "max_weight, threads, save_dir, processes, cluster or workers)")
    _check_arguments({"stem", "max_t", "threads", "save_dir", "workers", "cluster"}, module=module, stem=stem,
                     max_t=max_t, max_s=max_s, threads=threads, save_dir=save_dir, workers=workers, cluster=cluster)
    label = f"{module} (C-motivic)"
    with Reporter(motivic_size(stem, max_t, max_s, module), label, not progress) as bar:
        run = run_motivic(module, stem, max_t=max_t, max_s=max_s, max_weight=max_weight,
                          threads=threads, reporter=bar, save_dir=save_dir,
                          processes=bool(processes), cluster=cluster, workers=workers)
    bar.finish(f"{label}: {len(run.generators)} generators")
    return run


def load(save_dir: str | os.PathLike[str], products: list[str] | None = None, d2: bool = False,
         page: int = 2, stem: int | None = None, *, max_t: int | None = None, max_s: int | None = None) -> Ext:
    """Ext of a finished run saved in `save_dir` (by `resolve(..., save_dir=...)` or --save-dir), without
    recomputing it: what `nassau chart SAVE_DIR` draws. stem (or max_t) and max_s draw a part of it: each edge not
    given is the run's own."""
    _check_arguments({"products", "stem", "max_t", "max_s"}, save_dir=save_dir, products=products, page=page,
                     stem=stem, max_t=max_t, max_s=max_s)
    save = Path(save_dir)
    spec, module, manifest = module_from_manifest(save)
    r = manifest.get("region") or {}
    try:
        region = Region(max_s=int(r["max_s"]), min_degree=module.min_degree, max_stem=r.get("max_stem"),
                        max_t=r.get("max_t"))
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreError(f"{save}: the manifest's region is unusable ({exc})") from None
    algorithm = manifest.get("algorithm", "standard")
    store = SaveDir(save, spec, module, algorithm)
    res = Resolution(resolved_module(module, algorithm), algorithm)
    res.algebra.extend(region.t_limit - module.min_degree + 1)
    store.load_into(res)
    missing = [b for b in region.bidegrees() if not res.is_done(*b)]
    if missing:
        s, t = missing[0]
        edge = f"--stem {region.max_stem}" if region.max_stem is not None else f"--max-t {region.max_t}"
        raise StoreError(f"{save} holds an unfinished run ({len(missing)} bidegrees missing, first (n={t - s}, "
                         f"s={s})); finish it with: nassau resolve {spec.display} {edge} --max-s {region.max_s} "
                         f"--algorithm {algorithm} --save-dir {save}")
    if (stem, max_t, max_s) != (None, None, None):
        region = _part(save, region, stem, max_t, max_s)
    resolved = Resolved(module, region, algorithm, res, spec.display, spec, store, cores(), store.loaded)
    return Ext(resolved, list(products) if products else None, d2=d2, page=page)
