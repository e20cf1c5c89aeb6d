"""C-motivic Ext from a script or the command line: `nassau.resolve("S_2", stem=40, motivic=True)` and
`nassau resolve S_2 --motivic --stem 40` (docs/motivic.md).

A run resolves M^C over A^C (nassau.engine.motivic) through one filtration more than asked, so that the top row's
tau-torsion is known (with M_2/tau coefficients, F_2 over A^C/tau on the stem-shaped region instead:
nassau.engine.tau_quotient), and reads Ext as an F_2[tau]-module (nassau.products.motivic_ext): each generator with its
(stem, s, weight) and tau-torsion order, and its products by h0..h3. The weights need no bound: each internal
degree's elimination finds every weight there is at once. (They lie between the module's least weight and t / 2
above its largest: w(P(R)) <= deg(R) / 2, and a new generator's weight is that of its cycle's highest term.) So
`max_weight` only leaves out the generators above it.
"""
from __future__ import annotations

import json
import os
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from algebra.module.motivic import MotivicModule, load_motivic
from algebra.module.spec import ModuleError
from charts.html import notebook_frame
from charts.model import Chart
from charts.motivic_page import to_motivic_html
from charts.motivic_svg import LINE_OPS, MotivicChart, MotivicDot, to_motivic_svg, torsion_name
from charts.text import graded_dimension_string
from fp.threads import cores
from nassau.api.progress import Reporter, cluster_phrase, workers_phrase
from nassau.cost.budget import HeldRun, budget_of, fits, largest_stem, refusal
from nassau.cost.estimate import Estimate
from nassau.cost.motivic import PROBE_STEM, motivic_estimate
from nassau.engine.errors import EngineError
from nassau.engine.motivic import MotivicResolution, motivic_region, resolve_motivic, started
from nassau.engine.region import Region
from nassau.engine.resolve import dependencies
from nassau.engine.resolve import resolve as resolve_classical
from nassau.engine.tau_quotient import ALGORITHM as QUOTIENT
from nassau.engine.tau_quotient import resolve_quotient
from nassau.products.motivic_ext import MotivicClass, MotivicExt
from nassau.store.cluster import Cluster, check_cluster
from nassau.store.motivic_save import ALGORITHM as MOTIVIC
from nassau.store.motivic_save import MotivicSave, motivic_spec

OPS = ("h0", "h1", "h2", "h3")
#: A run of fewer bidegrees than this takes one thread when its caller names none, else the cores: on 2 cores (AMD
#: EPYC, AVX2) one thread was as fast or faster for the sphere through stem 40 (1300 bidegrees: 1.70 s against 1.83 s)
#: and C(tau) through stem 60 (2135: 3.49 s against 3.60 s); two threads win further out (C(tau) through stem 90,
#: 7875 bidegrees: 39 s against 68 s), as for classical runs (nassau.cost.choices).
SMALL_RUN_BIDEGREES = 1500


def label(c: MotivicClass) -> str:
    """(stem, s, weight)[index]: the generator's name in every output (docs/motivic.md)."""
    return f"({c.stem}, {c.s}, {c.weight})[{c.index}]"


@dataclass
class MotivicRun:
    """Ext_{A^C}(M^C, M_2) (or with M_2/tau coefficients) over a region: the generators and their products."""

    module: MotivicModule
    region: Region
    resolution: MotivicResolution
    max_weight: int | None = None
    #: Bidegrees loaded from a save directory.
    loaded: int = 0
    #: The workers it ran on, and whether they were worker processes (else threads); or a cluster's, as named.
    threads: int = 1
    processes: bool = False
    cluster_workers: str | None = None

    def way(self) -> str:
        """The workers, as the summary line names them."""
        return self.cluster_workers or workers_phrase(self.threads, self.processes)

    @cached_property
    def ext(self) -> MotivicExt:
        done = self.resolution.dims()
        return MotivicExt(self.resolution, self.region.max_s + 1, max((t for _, t in done), default=0))

    def _shown(self, c: MotivicClass) -> bool:
        return (c.s <= self.region.max_s and self.region.contains(c.s, c.t)
                and (self.max_weight is None or c.weight <= self.max_weight))

    @cached_property
    def generators(self) -> list[MotivicClass]:
        """Every generator of the region (weight <= max_weight), by stem, s, decreasing weight, index."""
        return [c for c in self.ext.classes if self._shown(c)]

    def generator(self, stem: int, s: int, weight: int, index: int = 0) -> MotivicClass:
        """The generator (stem, s, weight)[index]; EngineError (one line) where the region has none such."""
        found = [c for c in self.generators if (c.stem, c.s, c.weight, c.index) == (stem, s, weight, index)]
        if not found:
            raise EngineError(f"no generator ({stem}, {s}, {weight})[{index}] in this run")
        return found[0]

    def product(self, op: str, c: MotivicClass) -> list[tuple[MotivicClass, int]] | None:
        """h_i c as (generator, power of tau) terms, or None where the target lies outside the region."""
        i = int(op[1:])
        target = (c.s + 1, c.t + (1 << i))
        if not self.region.contains(*target):
            return None
        return self.ext.h_product(i, c)

    @cached_property
    def tau_free_dims(self) -> dict[tuple[int, int], int]:
        """(stem, s) -> the number of tau-free generators: Ext_A's dimension once tau is inverted."""
        free = self.ext.tau_free_dims()
        return {(t - s, s): k for (s, t), k in free.items() if self.region.contains(s, t)}

    def chart(self) -> Chart:
        """The tau-free generators as a chart (one dot per tau-tower): the classical chart, by the theorem. With
        M_2/tau coefficients, where nothing is tau-free, every class (summed over the weights)."""
        r = self.region
        if self.module.tau_quotient:
            dims: dict[tuple[int, int], int] = {}
            for c in self.ext.classes:
                if self.region.contains(c.s, c.t):
                    dims[(c.stem, c.s)] = dims.get((c.stem, c.s), 0) + 1
        else:
            dims = {b: k for b, k in self.tau_free_dims.items() if k}
        return Chart(module=f"{self.module.name} (C-motivic)", prime=2, algorithm="motivic",
                     max_stem=r.chart_max_stem, max_s=r.max_s, min_degree=r.min_degree, rows=r.chart_rows(),
                     dims=dims)

    def tau_inverted_mismatches(self) -> list[tuple[int, int, int, int]]:
        """(stem, s, tau-free count, classical dim) wherever they differ, against a classical run of the same
        region (empty: inverting tau gives the classical chart, as it must)."""
        if self.module.tau_quotient:
            raise EngineError(f"{self.module.name} has M_2/tau coefficients: inverting tau gives zero, not the "
                              "classical chart (--tau-inverted checks a module with M_2 coefficients)")
        classical = resolve_classical(self.module.module, self.region, "standard").dims()
        free = self.tau_free_dims
        return [(t - s, s, free.get((t - s, s), 0), k) for (s, t), k in sorted(classical.items())
                if free.get((t - s, s), 0) != k]

    def torsion_name(self, c: MotivicClass) -> str:
        return torsion_name(c.torsion)

    def product_text(self, terms: list[tuple[MotivicClass, int]] | None) -> str:
        if terms is None:
            return "?"
        if not terms:
            return "0"
        return " + ".join(("" if k == 0 else "tau " if k == 1 else f"tau^{k} ") + label(y) for y, k in terms)

    def text(self) -> str:
        """The tau-free chart, then one line per generator: (stem, s, weight), its torsion, h0..h3 times it."""
        what = ("every class, summed over the weights (M_2/tau coefficients: tau acts as zero)"
                if self.module.tau_quotient else "tau-free generators (inverting tau gives the classical chart)")
        lines = [f"{self.module.name} over A^C (C-motivic), {self.region.describe()}: {what}",
                 graded_dimension_string(self.chart()).rstrip("\n"), "",
                 "generators (stem, s, weight)[index]; h_i x as sums of tau^k y; ? outside the region"]
        for c in self.generators:
            prods = "  ".join(f"{op} {self.product_text(self.product(op, c))}" for op in OPS)
            lines.append(f"{label(c):<17} {self.torsion_name(c):<16} {prods}")
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict:
        def terms(t):
            return None if t is None else [[y.stem, y.s, y.weight, y.index, k] for y, k in t]

        return {"module": self.module.name, "motivic": "C", "tau_quotient": self.module.tau_quotient,
                "region": {"max_s": self.region.max_s, "max_stem": self.region.max_stem,
                           "max_t": self.region.max_t},
                "max_weight": self.max_weight,
                "generators": [{"stem": c.stem, "s": c.s, "weight": c.weight, "index": c.index, "torsion": c.torsion,
                                "products": {op: terms(self.product(op, c)) for op in OPS}}
                               for c in self.generators],
                "tau_free": [[n, s, k] for (n, s), k in sorted(self.tau_free_dims.items()) if k]}

    def motivic_chart(self) -> MotivicChart:
        """The generators and their h0, h1, h2 lines as charts.motivic_svg draws them."""
        index = {c: k for k, c in enumerate(self.generators)}
        lines = []
        for c in self.generators:
            for op in LINE_OPS:
                for y, k in self.product(op, c) or []:
                    if y in index:
                        lines.append((op, index[c], index[y], k))
        r = self.region
        rows = r.chart_rows()
        return MotivicChart(self.module.name, r.chart_max_stem, r.max_s, r.min_degree,
                            [MotivicDot(c.stem, c.s, c.weight, c.index, c.torsion) for c in self.generators], lines,
                            [rows[s] for s in range(r.max_s + 1)])

    def svg(self) -> str:
        return to_motivic_svg(self.motivic_chart())

    def html(self) -> str:
        """The interactive page --html writes (charts.motivic_page)."""
        return to_motivic_html(self.motivic_chart())

    def _repr_html_(self) -> str:
        """In Jupyter: the interactive page in a frame."""
        return notebook_frame(self.html())

    def json_text(self) -> str:
        return json.dumps(self.to_json(), indent=1) + "\n"


@dataclass
class MotivicRequest:
    """A checked motivic run, nothing computed yet: the module, the region asked and what the run resolves
    (`whole`), its workers, and the memory budget it is held to (None: not held; named: given, else the memory
    available), as nassau.api.request.Request is for a classical run."""

    name: str
    mod: MotivicModule
    region: Region
    whole: Region
    threads: int
    processes: bool
    save_dir: str | os.PathLike[str] | None
    budget: int | None = None
    budget_named: bool = False
    force: bool = False
    hard_stop: bool = False
    #: A Dask scheduler's address, or a number of local Dask worker processes, to run the jobs on (with a save
    #: directory): nassau.store.cluster.
    cluster: str | None = None
    workers: int | None = None
    #: plan()'s estimate, made once (the command line plans before its progress bar, the run again).
    _planned: Estimate | None = field(default=None, repr=False)

    @property
    def algorithm(self) -> str:
        return QUOTIENT if self.mod.tau_quotient else MOTIVIC

    @property
    def label(self) -> str:
        return f"{self.name} (C-motivic)"

    @property
    def small(self) -> bool:
        """Whether the run reaches no stem beyond its probe's (a second or so): it gets no estimate of its own."""
        top = self.region.max_stem if self.region.max_stem is not None else self.region.t_limit
        return top - self.region.min_degree <= PROBE_STEM

    def estimate(self, timed: bool = True, whole: Region | None = None) -> Estimate:
        """What the run (or one over `whole`) will cost (nassau.cost.motivic). timed: with the wall time
        (calibrating the engine on this machine once, a few seconds, if it never was)."""
        return motivic_estimate(self.mod, motivic_spec(self.name, self.mod), whole or self.whole, self.algorithm,
                                self.threads, self.processes, timed, saving=self.save_dir is not None)

    def plan(self) -> Estimate | None:
        """Check the run against its memory budget before any work: EngineError (one line, naming the estimate and
        the largest stem that fits) when the estimate exceeds it, unless forced. Returns the estimate the run
        shows as it starts (None for a small run, or one not held to a budget)."""
        if self.budget is None or self.small:
            return None
        if self._planned is not None:
            return self._planned
        est = self.estimate(timed=False)
        if fits(est, self.budget) or self.force:
            self._planned = est
            return est
        largest = largest_stem(self.region, lambda part: fits(self.estimate(False, resolved_whole(self.mod, part)),
                                                              self.budget))
        raise EngineError(refusal(self.label, self.region, est, self.budget, largest, self.budget_named))

    def run(self, max_weight: int | None = None, reporter: Reporter | None = None) -> MotivicRun:
        """Resolve (resuming from the save directory), held to the budget: the guard shrinks the product tables,
        then stops the run cleanly (MemoryBudgetExceeded, one line; what is finished is saved)."""
        est = self.plan()
        held = None
        if self.budget is not None:
            held = HeldRun(self.mod.module, self.algorithm, self.whole, self.budget, est, None,
                           None if self.save_dir is None else str(self.save_dir), self.processes, self.hard_stop)
        if reporter is not None and est is not None:
            reporter.expect(est)

        def done(s: int, t: int) -> None:
            if reporter is not None:
                reporter.advance(s, t)
            if held is not None:
                held.done(s, t)

        store = None if self.save_dir is None else MotivicSave(Path(self.save_dir), self.name, self.mod, self.whole,
                                                               QUOTIENT if self.mod.tau_quotient else None)
        if self.cluster is not None or self.workers is not None:
            assert store is not None, "motivic_request gives a cluster run a save directory"
            return self._run_on_cluster(store, max_weight, reporter, done)
        try:
            with held if held is not None else nullcontext():
                if self.mod.tau_quotient:
                    res = resolve_quotient(self.mod, self.whole, threads=self.threads, on_done=done, store=store,
                                           processes=self.processes)
                else:
                    res = resolve_motivic(self.mod, resolved_region(self.region), threads=self.threads,
                                          on_done=done, store=store, processes=self.processes)
        finally:
            if store is not None:
                store.close()
        return MotivicRun(self.mod, self.region, res, max_weight, store.store.loaded if store is not None else 0,
                          self.threads, self.processes)

    def _run_on_cluster(self, store: MotivicSave, max_weight: int | None, reporter: Reporter | None,
                        done) -> MotivicRun:
        """The jobs on Dask workers over the save directory (nassau.store.cluster), held by this client while they
        run; the resolution then loaded from it. No memory budget: the workers are other processes, or machines."""
        try:
            with Cluster(self.cluster, self.workers, None if reporter is None else reporter.status) as cluster:
                store.store.lock()
                res, jobs = started(self.mod, self.whole, store)
                if jobs:
                    cluster.run(jobs, dependencies("standard"), self.whole, self.algorithm, store.store, done)
                    store.load_into(res, self.whole)
                loaded = cluster.resumed or 0
        finally:
            store.close()
        return MotivicRun(self.mod, self.region, res, max_weight, loaded, self.threads, False,
                          cluster_phrase(self.cluster, self.workers))


def motivic_request(module: str, stem: int | None = None, *, max_t: int | None = None, max_s: int = 15,
                    max_weight: int | None = None, threads: int | None = None,
                    save_dir: str | os.PathLike[str] | None = None, processes: bool = False,
                    memory: int | str | None = None, force: bool = False, hard_stop: bool = False,
                    cluster: str | None = None, workers: int | None = None) -> MotivicRequest:
    """Check a motivic run (see run_motivic) without running it; ModuleError, RegionError or EngineError (one line
    each) on bad input. memory: hold the run to this budget (bytes, a size such as "4G", or "available": the memory
    available, less a margin), refusing it up front when its estimate exceeds the budget unless force. hard_stop: the
    run owns its process (the command line), which may be ended at once past the budget's last threshold. cluster (a
    Dask scheduler's address) or workers (local Dask worker processes): the jobs run there, over the save directory,
    which they need; such a run is held to no budget."""
    for name, value in (("stem", stem), ("max_t", max_t), ("max_s", max_s), ("max_weight", max_weight),
                        ("threads", threads)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise EngineError(f"{name} must be an integer (got {value!r})")
    if threads is not None and threads < 1:
        raise EngineError(f"threads must be at least 1 (got {threads})")
    check_cluster(cluster, workers, save_dir)
    elsewhere = cluster is not None or workers is not None
    if processes and elsewhere:
        raise EngineError("processes run the jobs on this machine; a cluster runs them on its own workers: not both")
    mod = load_motivic(module)
    region = Region(max_s=max_s, min_degree=mod.module.min_degree, max_stem=stem, max_t=max_t)
    whole = resolved_whole(mod, region)
    threads = default_threads(whole) if threads is None else threads
    return MotivicRequest(module, mod, region, whole, threads, processes, save_dir,
                          None if elsewhere else budget_of(memory), memory not in (None, "available"), force,
                          hard_stop, cluster, workers)


def run_motivic(module: str, stem: int | None = None, *, max_t: int | None = None, max_s: int = 15,
                max_weight: int | None = None, threads: int | None = None, reporter: Reporter | None = None,
                save_dir: str | os.PathLike[str] | None = None, processes: bool = False,
                memory: int | str | None = None, force: bool = False, hard_stop: bool = False,
                cluster: str | None = None, workers: int | None = None) -> MotivicRun:
    """Resolve M^C over resolved_region(region) (one filtration more, the region's internal degrees) and the
    rectangle around it that nassau.engine.motivic.motivic_region says a motivic run needs, or with M_2/tau
    coefficients F_2 over A^C/tau on the region and one filtration more (quotient_region); ModuleError, RegionError
    or EngineError (one line each) on bad input. processes: all but one of the threads' workers are forked worker
    processes (the same output). threads=None: the cores, one for a run of fewer than SMALL_RUN_BIDEGREES
    bidegrees. memory, force, hard_stop, cluster, workers: motivic_request."""
    return motivic_request(module, stem, max_t=max_t, max_s=max_s, max_weight=max_weight, threads=threads,
                           save_dir=save_dir, processes=processes, memory=memory, force=force,
                           hard_stop=hard_stop, cluster=cluster, workers=workers).run(max_weight, reporter)


def resolved_whole(mod: MotivicModule, region: Region) -> Region:
    """Every bidegree a run of the region resolves: over A^C/tau (M_2/tau coefficients) quotient_region, else the
    rectangle motivic_region puts around resolved_region."""
    return quotient_region(region) if mod.tau_quotient else motivic_region(resolved_region(region))


def default_threads(whole: Region) -> int:
    """The threads a run over `whole` (what it resolves) takes when its caller names none: one below
    SMALL_RUN_BIDEGREES, else the cores."""
    return 1 if len(whole.bidegrees()) < SMALL_RUN_BIDEGREES else cores()


def resolved_region(region: Region) -> Region:
    """What a run resolves to list the region's generators: one filtration more (the top row's classes are the
    cocycles there, which needs row max_s + 1), in the region's internal degrees, t <= T. A class at (s, t) is read
    from the complex in degree t alone, which at s = max_s + 1 reaches stem T - max_s - 1 only: the run needs no
    generator of degree above T (through stem N that spares the column t = N + max_s + 1). motivic_region then
    makes it the rectangle the engine must resolve."""
    return Region(max_s=region.max_s + 1, min_degree=region.min_degree, max_t=region.t_limit)


def quotient_region(region: Region) -> Region:
    """What a run with M_2/tau coefficients resolves over A^C/tau: the region and one filtration more (as
    resolved_region; over a connected algebra the stem-shaped region needs nothing beyond it)."""
    return Region(max_s=region.max_s + 1, min_degree=region.min_degree, max_stem=region.max_stem,
                  max_t=region.max_t)


def motivic_size(stem: int | None, max_t: int | None, max_s: int, module: str) -> int:
    """Bidegrees a run of `module` computes (its progress bar's length; a module with M_2/tau coefficients resolves
    fewer); 0 where the region or the module is bad (the run says why)."""
    try:
        return len(resolved_whole(load_motivic(module), Region(max_s=max_s, min_degree=0, max_stem=stem,
                                                                max_t=max_t)).bidegrees())
    except (EngineError, ModuleError):
        return 0
