"""The chart commands: `resolve` (and `resolve-unstable`), `products`, `chart`, `ext`, `tensor`.

`resolve` checks every input, resolves with a live bar (or one summary line), prints the chart on stdout and writes
the files asked for; `products` prints the filtration-one products instead; `chart` draws a save directory again
without computing; `ext` prints the chart of Ext(M, N); `tensor` writes M (x) N as a module file.
"""
from __future__ import annotations

import argparse
import json

from algebra.module.loader import load_module
from algebra.module.writer import fd_json
from charts.model import Chart
from charts.text import graded_dimension_string
from gpu import trace
from nassau.api.ext import Ext
from nassau.api.progress import Reporter, cluster_phrase, workers_phrase
from nassau.api.request import Request, load, request
from nassau.api.resolved import resolve_over
from nassau.cli.common import (
    UserError,
    axes_arg,
    chart_products_arg,
    chart_text,
    check_output,
    check_request,
    computation_args,
    output_paths,
    quiet_arg,
    region_args,
    region_of,
    stdout,
    threads_arg,
    write_file,
    write_outputs,
)
from nassau.engine.resolve import choose_algorithm
from nassau.products.filtration_one import filtration_one_text
from nassau.tools.ext_mn import chart_min_degree, check_compatible, ext_dims, resolution_region

COMMANDS = ("resolve", "resolve-unstable", "products", "chart", "ext", "tensor")
ERRORS = ()


def add_parsers(sub: argparse._SubParsersAction) -> None:
    res = sub.add_parser("resolve", help="resolve a module and print its Ext chart",
                         description="Resolve MODULE through a stem (or up to an internal degree t) and print the "
                                     "chart of dim Ext^{s,t}: one row per s, top row first, one column per stem.")
    computation_args(res, threads_by_estimate=True)
    where = res.add_mutually_exclusive_group()
    where.add_argument("--cluster", metavar="ADDRESS",
                       help="run the jobs on the Dask scheduler at ADDRESS (e.g. tcp://host:8786) instead of threads; "
                            "needs --save-dir on a directory every worker shares (pip install 'nassau[distributed]')")
    where.add_argument("--workers", type=int, metavar="WORKERS",
                       help="run the jobs on a local Dask cluster of WORKERS processes instead of threads; needs "
                            "--save-dir")
    where.add_argument("--processes", action=argparse.BooleanOptionalAction, default=None,
                       help="run all but one of the THREADS workers of --threads as forked processes of this machine, "
                            "each with a copy of the resolution and product tables they share (no shared "
                            "interpreter lock); --no-processes: threads only (default: whichever the estimate says "
                            "is faster here, docs/estimate.md; with --motivic: threads unless --processes)")
    _chart_files(res, estimate=True)
    chart_products_arg(res)
    _page_args(res)
    axes_arg(res)
    _cost_args(res)
    _motivic_args(res)
    prod = sub.add_parser("products", help="print the filtration-one products h_i (every h_i that fits)",
                          description="Resolve MODULE and print h_i x_(n, s, j) = [v] for every generator, in the "
                                      "reference's filtration_one format.")
    computation_args(prod, threads_by_estimate=True)
    _unstable_parser(sub)
    ext = sub.add_parser("ext", help="print the chart of Ext(M, N) for a bounded module N",
                         description="Resolve M and print the chart of dim Ext_A^{s,t}(M, N) from the cohomology of "
                                     "Hom_A(F, N), as the reference's ext_m_n does (one column per stem n = t - s "
                                     "from min M - max N).")
    ext.add_argument("module", metavar="M", help="the module to resolve (as for resolve)")
    ext.add_argument("target", metavar="N", help="a bounded module over the same algebra")
    region_args(ext)
    threads_arg(ext)
    _chart_files(ext)
    quiet_arg(ext)
    axes_arg(ext)
    tensor = sub.add_parser("tensor", help="write M (x) N as a finite dimensional module file",
                            description="Print (or write with -o) the tensor product of two bounded modules as a "
                                        "finite dimensional module file, as the reference's tensor example does. "
                                        "Anywhere a module is accepted, A^B names the tensor product directly.")
    tensor.add_argument("module", metavar="M")
    tensor.add_argument("target", metavar="N")
    tensor.add_argument("-o", "--output", metavar="FILE", help="write the module file here instead of stdout")
    chart = sub.add_parser("chart", help="draw a chart from a save directory without recomputing",
                           description="Read the resolution stored in SAVE_DIR (made by resolve --save-dir) and "
                                       "print or write its chart, or with --stem/--max-t/--max-s the chart of a part "
                                       "of it. Nothing is resolved again.")
    chart.add_argument("save_dir", metavar="SAVE_DIR")
    region_args(chart, saved=True)
    _chart_files(chart)
    chart.add_argument("--quiet", action="store_true", help="no progress on stderr, and no text chart")
    chart_products_arg(chart)
    _page_args(chart)
    axes_arg(chart)


def _chart_files(p: argparse.ArgumentParser, estimate: bool = False) -> None:
    if estimate:  # with --estimate, --json alone prints the estimate as JSON
        p.add_argument("--json", metavar="FILE", nargs="?", const="",
                       help="also write the chart as JSON (layout: docs/charts.md); with --estimate and no FILE, "
                            "print the estimate as one JSON object")
    else:
        p.add_argument("--json", metavar="FILE", help="also write the chart as JSON (layout: docs/charts.md)")
    p.add_argument("--svg", metavar="FILE", help="also draw the chart (with its product lines) as SVG")
    p.add_argument("--seqsee", metavar="FILE", help="also write SeqSee's input JSON")
    p.add_argument("--html", metavar="FILE", help="also write the interactive chart page (one self-contained file)")


def _cost_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--estimate", action="store_true",
                   help="print the run's predicted wall time, peak memory and save directory size (each with its "
                        "uncertainty) without computing it (docs/estimate.md)")
    p.add_argument("--memory", metavar="SIZE",
                   help="hold the run to this much memory, e.g. 4G or 512M (default: the memory available, less a "
                        "margin): a run whose estimate exceeds it is refused, one that outgrows it stops cleanly")
    p.add_argument("--force", action="store_true",
                   help="run even when the estimate exceeds the memory budget (still stopping within it)")


def _motivic_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--motivic", action="store_true",
                   help="Ext over the C-motivic Steenrod algebra A^C instead: generators (stem, s, weight), "
                        "tau-torsion, h0..h3 products (docs/motivic.md)")
    p.add_argument("--max-weight", type=int, metavar="W",
                   help="with --motivic: list the generators of weight <= W only")
    p.add_argument("--tau-inverted", action="store_true",
                   help="with --motivic: check that inverting tau gives our classical chart of the same region")


def _unstable_parser(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("resolve-unstable", help="resolve an unstable module over the unstable algebra (Ext_U chart)",
                       description="Resolve MODULE by free unstable modules through a stem (absolute, as for "
                                   "resolve) and print the chart of dim Ext_U^{s,t}: the E2 page of the unstable "
                                   "Adams spectral sequence, e.g. for S_2[7] = H*(S^7).")
    r.add_argument("module", metavar="MODULE", help="an unstable module: S_2[7], RP_inf, C2[1], a JSON file, ...")
    region_args(r)
    threads_arg(r)
    r.add_argument("--save-dir", metavar="DIR", help="save each finished bidegree here and resume from it")
    quiet_arg(r)
    _chart_files(r)
    axes_arg(r)
    r.set_defaults(algorithm="auto", trace=False, unstable=True)


def _page_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--d2", action="store_true",
                   help="compute the Adams d2 (secondary Steenrod algebra, p = 2) and draw it (blue) on the charts")
    p.add_argument("--page", type=int, choices=(2, 3), default=2,
                   help="2: the E2 page (default); 3: the E3 page, ker d2 / im d2 (computes d2)")


def run(args: argparse.Namespace) -> int:
    return {"chart": _chart, "tensor": _tensor, "ext": _ext}.get(args.command, _compute)(args)


def _compute(args: argparse.Namespace) -> int:
    if getattr(args, "motivic", False):
        return _motivic(args)
    if getattr(args, "max_weight", None) is not None or getattr(args, "tau_inverted", False):
        raise UserError("--max-weight and --tau-inverted go with --motivic")
    estimating = getattr(args, "estimate", False)
    if getattr(args, "json", None) == "" and not estimating:
        raise UserError("--json needs a FILE (without one it goes with --estimate)")
    check_request(args, [] if estimating else output_paths(args), gpu=True)
    if args.trace:
        trace.enable()
    held = hasattr(args, "memory")  # resolve's own runs are held to a memory budget
    req = request(args.module, args.stem, max_t=args.max_t, max_s=args.max_s, algorithm=args.algorithm,
                  threads=args.threads, products=getattr(args, "products", None),
                  save_dir=args.save_dir,  # opened only (checked, nothing written): an estimate counts its files
                  unstable=getattr(args, "unstable", False), d2=getattr(args, "d2", False),
                  page=getattr(args, "page", 2), cluster=getattr(args, "cluster", None),
                  workers=getattr(args, "workers", None), processes=getattr(args, "processes", False),
                  memory=(args.memory or "available") if held else None, force=getattr(args, "force", False),
                  hard_stop=held)
    if estimating:
        est = req.estimate()
        way = _executor(args, req)
        stdout(json.dumps(est.as_json()) + "\n" if args.json == "" else
               f"{req.spec.display} through {req.region.describe()} ({req.algorithm}, {way}): {est.line()}\n")
        return 0
    req.plan()  # refused here, before any work, when the estimate exceeds the memory budget
    lines_only = args.command == "products"  # the filtration-one lines instead of the chart
    with Reporter(req.size, req.label, args.quiet) as reporter:  # the bar is down before the chart is printed
        ext = req.run(reporter)
        with ext.resolved:  # the save directory stays open while d2's homotopies may be saved into it
            if lines_only:
                reporter.phase(f"{req.spec.display}: the products by h_i")
                text = filtration_one_text(ext.resolution, ext.region)
            else:
                _chart_phase(reporter, ext, any(output_paths(args)))
                write_outputs(ext, args)
                text = chart_text(ext.text(), ext.region.min_degree, args, ext.page)
    stdout(text)
    if lines_only:
        reporter.finish(f"{req.spec.display}: products through {ext.region.describe()}")
        return 0
    resumed = f", {ext.loaded} bidegrees loaded from {args.save_dir}" if args.save_dir else ""
    reporter.finish(f"{req.spec.display}: {ext.counted()} through {ext.region.describe()} "
                    f"({ext.algorithm}, {_executor(args, req)}{resumed})")
    return 0


#: resolve's options a motivic run does not take (yet), with the flag that names each.
_NOT_MOTIVIC = {"algorithm": "--algorithm", "products": "--products", "d2": "--d2", "seqsee": "--seqsee",
                "trace": "--trace"}


def _motivic(args: argparse.Namespace) -> int:
    from nassau.api.motivic import motivic_request  # here: classical runs never load the motivic engine

    for name, flag in _NOT_MOTIVIC.items():
        value = getattr(args, name, None)
        if value and not (name == "algorithm" and value == "auto"):
            raise UserError(f"{flag} does not go with --motivic (a motivic run takes --stem/--max-t, --max-s, "
                            "--max-weight, --threads, --processes, --workers, --cluster, --save-dir, --json, "
                            "--svg, --html, --tau-inverted, --estimate, --memory, --force)")
    if args.page != 2:
        raise UserError("--page does not go with --motivic")
    estimating = getattr(args, "estimate", False)
    if getattr(args, "json", None) == "" and not estimating:
        raise UserError("--json needs a FILE (without one it goes with --estimate)")
    check_request(args, [] if estimating else [args.json, args.svg, args.html])
    held = hasattr(args, "memory")  # resolve's own runs are held to a memory budget
    req = motivic_request(args.module, args.stem, max_t=args.max_t, max_s=args.max_s, max_weight=args.max_weight,
                          threads=args.threads, save_dir=args.save_dir,
                          processes=bool(getattr(args, "processes", False)),
                          memory=(args.memory or "available") if held else None,
                          force=getattr(args, "force", False), hard_stop=held,
                          cluster=getattr(args, "cluster", None), workers=getattr(args, "workers", None))
    if estimating:
        est = req.estimate()
        stdout(json.dumps(est.as_json()) + "\n" if args.json == "" else
               f"{req.label} through {req.region.describe()} ({workers_phrase(req.threads, req.processes)}): "
               f"{est.line()}\n")
        return 0
    req.plan()  # refused here, before any work, when the estimate exceeds the memory budget
    size = len(req.whole.bidegrees())
    with Reporter(size, req.label, args.quiet) as reporter:
        run = req.run(args.max_weight, reporter)
        reporter.phase(f"{run.module.name}: Ext over F_2[tau]")
        text = run.text()
        if args.json:
            write_file(args.json, run.json_text())
        if args.svg:
            write_file(args.svg, run.svg())
        if args.html:
            write_file(args.html, run.html())
        wrong = run.tau_inverted_mismatches() if args.tau_inverted else []
    stdout(text)
    if args.tau_inverted:
        for n, s, free, classical in wrong:
            stdout(f"tau inverted differs at (stem {n}, s {s}): {free} tau-free generators, classical dim "
                   f"{classical}\n")
        if wrong:
            return 1
        stdout(f"tau inverted: the classical chart, in all {len(run.region.bidegrees())} bidegrees\n")
    resumed = f", {run.loaded} bidegrees loaded from {args.save_dir}" if args.save_dir else ""
    reporter.finish(f"{run.module.name} (C-motivic): {len(run.generators)} generators through "
                    f"{run.region.describe()} ({run.way()}){resumed}")
    return 0


def _chart_phase(reporter: Reporter, ext: Ext, files: bool) -> None:
    """Name the phase that draws the chart when it lifts anything: the product lines (for the files) and d2 (for
    them or for the E3 page)."""
    if files or ext.page == 3:
        reporter.phase(f"{ext.module}: product lines" + (" and d2" if ext.with_d2 else ""))


def _executor(args: argparse.Namespace, req: Request) -> str:
    if getattr(args, "cluster", None) or getattr(args, "workers", None):
        return cluster_phrase(getattr(args, "cluster", None), getattr(args, "workers", None))
    return workers_phrase(req.threads, req.processes)


def _tensor(args: argparse.Namespace) -> int:
    check_output(args.output)
    text = fd_json(load_module(f"{args.module}^{args.target}")) + "\n"
    if args.output:
        write_file(args.output, text)
    else:
        stdout(text)
    return 0


def _ext(args: argparse.Namespace) -> int:
    check_request(args, (args.json, args.svg, args.seqsee))
    source, target = load_module(args.module), load_module(args.target)
    check_compatible(source, target)
    region = region_of(args, chart_min_degree(source, target))
    needed = resolution_region(source, target, region)
    algorithm = choose_algorithm(source, "auto")
    reporter = Reporter(len(needed.bidegrees()), f"{source.name} for Ext(M, {target.name})", args.quiet)
    with reporter:
        res = resolve_over(source, needed, algorithm, threads=args.threads, bar=reporter).resolution
        reporter.phase(f"Ext({source.name}, {target.name}): the cohomology of Hom_A(F, N)")
        dims = {(t - s, s): k for (s, t), k in ext_dims(res, target, region).items() if k}
    chart = Chart(module=f"Ext({source.name}, {target.name})", prime=2, algorithm=algorithm,
                  max_stem=region.chart_max_stem, max_s=region.max_s, min_degree=region.min_degree,
                  rows=region.chart_rows(), dims=dims)
    write_outputs(chart, args)
    stdout(chart_text(graded_dimension_string(chart), chart.min_degree, args))
    reporter.finish(f"Ext({source.name}, {target.name}): {sum(dims.values())} classes through {region.describe()}")
    return 0


def _chart(args: argparse.Namespace) -> int:
    for path in output_paths(args):
        check_output(path)
    with Reporter(None, f"{args.save_dir}: reading the saved run", args.quiet) as reporter:
        ext = load(args.save_dir, products=args.products, d2=args.d2, page=args.page, stem=args.stem,
                   max_t=args.max_t, max_s=args.max_s)
        _chart_phase(reporter, ext, any(output_paths(args)))
        write_outputs(ext, args)
        text = chart_text(ext.text(), ext.region.min_degree, args, ext.page)
    if not args.quiet:
        stdout(text)
    return 0
