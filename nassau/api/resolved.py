"""The one resolved-module object that the API and every command work from, and the one way to make it.

A `Resolved` is a module resolved over a region: the module and the name it was asked by, the region, the algorithm,
the resolution (which owns its preimages), the save directory it resumed from and saved to (open until `close`), the
threads it ran on and how many bidegrees came from the save directory. `resolve_over` makes one with progress on
stderr and closes the save directory if the run fails; `unit_beside` gives the unit k's beside a module's, which
products by classes of the sphere lift into.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from algebra.module.interface import Module
from algebra.module.spec import ModuleSpec
from nassau.api.progress import Reporter
from nassau.cost.budget import HeldRun
from nassau.cost.estimate import Estimate
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.engine.resolve import algorithm_over_module, resolve
from nassau.products.ext_algebra import is_unit_module, unit_module
from nassau.store.save_dir import SaveDir


class Progress(Protocol):
    """What a run reports to: a bar on a terminal or in a notebook (nassau.api.progress, notebook_progress)."""

    def advance(self, s: int, t: int) -> None: ...
    def status(self, note: str) -> None: ...
    def expect(self, est: Estimate) -> None: ...
    def resumed(self, bidegrees: list[tuple[int, int]]) -> None: ...
    def finish(self, summary: str) -> None: ...
    def abort(self) -> None: ...


@dataclass
class Resolved:
    """A module resolved over a region: what products, maps, d2, the charts and the dumps read."""

    module: Module
    region: Region
    algorithm: str
    resolution: Resolution
    #: The name it was asked by (`C2^Ceta`, `ko[-2]`), as summaries and charts print it.
    label: str
    spec: ModuleSpec | None = None
    #: The save directory it resumed from and saved to; lifts that keep data (d2) save beside it.
    store: SaveDir | None = None
    threads: int = 1
    #: Bidegrees read from the save directory instead of computed.
    loaded: int = 0

    def close(self) -> None:
        """Release the save directory (its lock); the resolution stays readable."""
        if self.store is not None:
            self.store.close()

    def __enter__(self) -> Resolved:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def reporting(bar: Progress | None, label: str, region: Region, algorithm: str, quiet: bool) -> Iterator[Progress]:
    """The bar a run reports to: `bar` when one is given (its caller finishes it), else one of this block's own that
    is stopped if the block raises and otherwise ends in one line, `NAME: resolved through stem N, s <= S
    (ALGORITHM)` (nothing when quiet)."""
    if bar is not None:
        yield bar
        return
    own = Reporter(len(region.bidegrees()), f"{label} ({algorithm})", quiet)
    try:
        yield own
    except BaseException:
        own.abort()
        raise
    own.finish(f"{label}: resolved through {region.describe()} ({algorithm})")


def resolve_over(module: Module, region: Region, algorithm: str, *, threads: int = 1, store: SaveDir | None = None,
                 spec: ModuleSpec | None = None, bar: Progress | None = None, quiet: bool = True,
                 processes: bool = False, held: HeldRun | None = None, res: Resolution | None = None) -> Resolved:
    """Resolve `module` over `region` by `algorithm` (chosen already), resuming from and saving to `store`, with
    progress as `reporting` gives it; held: the run is held to a memory budget (nassau.cost.budget), its estimate
    shown to the bar; res: go on from this resolution. A run that fails or is interrupted closes the store, keeping
    what it saved."""
    label = spec.display if spec is not None else module.name
    with reporting(bar, label, region, algorithm, quiet) as progress:
        on_done = progress.advance
        if held is not None:
            if held.est is not None:
                progress.expect(held.est)
            if res is not None:  # an earlier part's: what it holds is not this run's to name as left
                held.done_before = res.is_done

            def on_done(s: int, t: int) -> None:
                progress.advance(s, t)
                held.done(s, t)

        def on_loaded(loaded: Resolution) -> None:
            progress.resumed([b for b in region.bidegrees() if loaded.is_done(*b)])
            if held is not None:  # so that its stop names the first bidegree neither loaded nor finished
                held.done_before = loaded.is_done

        try:
            if held is None:
                res = resolve(module, region, algorithm, threads, store, on_done=on_done, processes=processes, res=res,
                              on_loaded=on_loaded)
            else:
                with held:
                    res = resolve(module, region, algorithm, threads, store, on_done=on_done, processes=processes,
                                  res=res, on_loaded=on_loaded)
        except BaseException:
            if store is not None:
                store.close()
            raise
    return Resolved(module, region, algorithm, res, label, spec, store, threads,
                    store.loaded if store is not None else 0)


def resolve_beside(module: Module, region: Region, requested: str = "auto", threads: int = 1,
                   quiet: bool = True) -> Resolved:
    """A second module resolved beside the one a command is about (the unit, a map's target): by the standard
    algorithm when the first run asked for it by name, else by the best that applies to this one."""
    algorithm = algorithm_over_module(module, "standard" if requested == "standard" else "auto")
    return resolve_over(module, region, algorithm, threads=threads, quiet=quiet)


def unit_beside(mod: Resolved, region: Region, requested: str = "auto", quiet: bool = True) -> Resolved:
    """The unit k resolved over `region` beside `mod` (the module's own resolution when it is k): what products by
    classes of the sphere lift into."""
    if is_unit_module(mod.module):
        return mod
    return resolve_beside(unit_module(mod.module), region, requested, mod.threads, quiet)
