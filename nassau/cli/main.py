"""The `nassau` command line: parse, check every input before the long run, compute, write, report.

Every user error ends in one line on stderr and exit status 2; Ctrl-C ends with status 130 and keeps
what the save directory already holds. Outputs are written atomically, so a file that exists is whole.
"""
from __future__ import annotations

import gc

_COLLECTING = gc.isenabled()
gc.disable()  # while the imports below run: see the end of the imports

import argparse
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from algebra.module.loader import load_module
from algebra.module.writer import fd_json
from algebra.module.spec import ModuleError
from charts.atomic import write_text_atomic
from charts.html import to_html
from charts.json_export import write_json
from charts.model import Chart
from charts.seqsee import to_seqsee
from charts.svg import to_svg
from charts.text import graded_dimension_string
from gpu import device as gpu_device
from gpu import trace
from gpu.errors import GpuUnavailableError
from nassau.api import request as api
from nassau.cli import products as cli_products
from nassau.cli import secondary as cli_secondary
from nassau.cli import tools as cli_tools
from nassau.cli import unstable as cli_unstable
from nassau.engine import warmup
from nassau.engine.resolve import ALGORITHMS, EngineError, choose_algorithm, resolve
from nassau.tools.ext_mn import chart_min_degree, check_compatible, ext_dims, resolution_region
from nassau.products.filtration_one import filtration_one_text
from nassau.api.progress import Reporter
from nassau.engine.region import Region
from nassau.engine.scheduler import JobFailed
from nassau.store.save_dir import StoreError

# The imports above build over 100,000 objects the cyclic collector tracks (numba's above all), alive as long as the
# process. The collector walked them over and over while they were built, and again in every full collection after:
# with no collection during the imports and what they built frozen (never examined again), a warm
# `nassau resolve S_2 --stem 40` takes 0.67 s instead of 0.84 s.
gc.freeze()
if _COLLECTING:
    gc.enable()

DEFAULT_MAX_S = api.DEFAULT_MAX_S
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class UserError(Exception):
    """A problem with the request; printed as one line."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nassau",
        description="Compute Ext over the mod-p Steenrod algebra (the Adams E2 page): minimal resolutions, charts, "
                    "products.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    res = sub.add_parser("resolve", help="resolve a module and print its Ext chart",
                         description="Resolve MODULE through a stem (or up to an internal degree t) and print the "
                                     "chart of dim Ext^{s,t}: one row per s, top row first, one column per stem.")
    _computation_args(res)
    where = res.add_mutually_exclusive_group()
    where.add_argument("--cluster", metavar="ADDRESS",
                       help="run the jobs on the Dask scheduler at ADDRESS (e.g. tcp://host:8786) instead of threads; "
                            "needs --save-dir on a directory every worker shares (pip install 'nassau[distributed]')")
    where.add_argument("--workers", type=int, metavar="N",
                       help="run the jobs on a local Dask cluster of N worker processes instead of threads; needs "
                            "--save-dir")
    res.add_argument("--json", metavar="FILE", help="also write the chart as JSON (see README)")
    res.add_argument("--svg", metavar="FILE", help="also draw the chart with h0..h3 product lines as SVG")
    res.add_argument("--seqsee", metavar="FILE", help="also write SeqSee's input JSON")
    res.add_argument("--html", metavar="FILE", help="also write the interactive chart page (one self-contained file)")
    cli_products.add_chart_products_arg(res)
    _page_args(res)
    prod = sub.add_parser("products", help="print the filtration-one products h_i (every h_i that fits)",
                          description="Resolve MODULE and print h_i x_(n, s, j) = [v] for every generator, in the "
                                      "reference's filtration_one format.")
    _computation_args(prod)
    ext = sub.add_parser("ext", help="print the chart of Ext(M, N) for a bounded module N",
                         description="Resolve M and print the chart of dim Ext_A^{s,t}(M, N) from the cohomology of "
                                     "Hom_A(F, N), as the reference's ext_m_n does (one column per stem n = t - s "
                                     "from min M - max N).")
    ext.add_argument("module", metavar="M", help="the module to resolve (as for resolve)")
    ext.add_argument("target", metavar="N", help="a bounded module over the same algebra")
    _region_args(ext)
    ext.add_argument("--threads", type=int, default=api.cores(), metavar="K", help="worker threads for resolving M")
    ext.add_argument("--json", metavar="FILE", help="also write the chart as JSON (products empty)")
    ext.add_argument("--svg", metavar="FILE", help="also draw the chart as SVG")
    ext.add_argument("--seqsee", metavar="FILE", help="also write SeqSee's input JSON")
    ext.add_argument("--quiet", action="store_true", help="no progress or summary on stderr")
    tensor = sub.add_parser("tensor", help="write M (x) N as a finite dimensional module file",
                            description="Print (or write with -o) the tensor product of two bounded modules as a "
                                        "finite dimensional module file, as the reference's tensor example does. "
                                        "Anywhere a module is accepted, A^B names the tensor product directly.")
    tensor.add_argument("module", metavar="M")
    tensor.add_argument("target", metavar="N")
    tensor.add_argument("-o", "--output", metavar="FILE", help="write the module file here instead of stdout")
    cli_products.add_parsers(sub, _computation_args)
    cli_secondary.add_parsers(sub, _computation_args)
    cli_unstable.add_parsers(sub, _region_args)
    cli_tools.add_parsers(sub, _region_args)
    chart = sub.add_parser("chart", help="draw a chart from a save directory without recomputing",
                           description="Read the resolution stored in SAVE_DIR (made by resolve --save-dir) and "
                                       "print or write its chart. Nothing is recomputed.")
    chart.add_argument("save_dir", metavar="SAVE_DIR")
    chart.add_argument("--json", metavar="FILE")
    chart.add_argument("--svg", metavar="FILE")
    chart.add_argument("--seqsee", metavar="FILE")
    chart.add_argument("--html", metavar="FILE", help="the interactive chart page")
    chart.add_argument("--quiet", action="store_true", help="do not print the text chart")
    cli_products.add_chart_products_arg(chart)
    _page_args(chart)
    return parser


def _page_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--d2", action="store_true",
                   help="compute the Adams d2 (secondary Steenrod algebra, p = 2) and draw it (blue) on the charts")
    p.add_argument("--page", type=int, choices=(2, 3), default=2,
                   help="2: the E2 page (default); 3: the E3 page, ker d2 / im d2 (computes d2)")


def _computation_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("module", metavar="MODULE",
                   help="S_2, C2, Joker, tmf2, ... (bundled), NAME[shift], NAME@adem, A^B (tensor product), or a "
                        "path to a module JSON file")
    _region_args(p)
    p.add_argument("--algorithm", choices=ALGORITHMS, default="auto",
                   help="auto (default): the change of rings for A//A(n), else Nassau's algorithm where it applies, "
                        "else the standard one")
    p.add_argument("--threads", type=int, default=api.cores(), metavar="K",
                   help="worker threads (default: the machine's cores)")
    p.add_argument("--save-dir", metavar="DIR", help="save each finished bidegree here and resume from it")
    p.add_argument("--quiet", action="store_true", help="no progress or summary on stderr")
    p.add_argument("--trace", action="store_true", help="log one line per large row reduction on stderr")


def _region_args(p: argparse.ArgumentParser) -> None:
    span = p.add_mutually_exclusive_group(required=True)
    span.add_argument("--stem", type=int, metavar="N", help="compute every stem n <= N")
    span.add_argument("--max-t", type=int, metavar="T", help="compute every internal degree t <= T instead")
    p.add_argument("--max-s", type=int, default=DEFAULT_MAX_S, metavar="S",
                   help=f"compute Adams filtrations s <= S (default {DEFAULT_MAX_S})")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    warmup.start()  # on an empty kernel cache only: compiles on the second core while this run starts
    try:
        if args.command == "chart":
            return _chart(args)
        if args.command == "tensor":
            return _tensor(args)
        if args.command == "ext":
            return _ext(args)
        if args.command in cli_products.COMMANDS:
            return cli_products.run(args)
        if args.command in cli_secondary.COMMANDS:
            return cli_secondary.run(args)
        if args.command in cli_unstable.COMMANDS:
            return cli_unstable.run(args)
        if args.command in cli_tools.COMMANDS:
            return cli_tools.run(args)
        return _compute(args)
    except KeyboardInterrupt:
        print("nassau: interrupted" + _saved_note(args), file=sys.stderr)
        return EXIT_INTERRUPTED
    except (UserError, ModuleError, EngineError, StoreError, *cli_products.ERRORS, *cli_secondary.ERRORS) as exc:
        print(f"nassau: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except JobFailed as exc:
        cause = exc.__cause__
        if isinstance(cause, (ModuleError, EngineError, StoreError, OSError)):
            print(f"nassau: error: {cause}", file=sys.stderr)
            return EXIT_USAGE
        raise


def _saved_note(args: argparse.Namespace) -> str:
    save = getattr(args, "save_dir", None)
    return f"; finished bidegrees are kept in {save}" if save else ""


def _check_output(path: str | None) -> None:
    """Refuse before computing if an output file cannot be written."""
    if path is None:
        return
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise UserError(f"cannot write {path}: it is a directory")
    if not parent.is_dir():
        raise UserError(f"cannot write {path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise UserError(f"cannot write {path}: permission denied")


def _check_gpu() -> None:
    """NASSAU_GPU and its knobs are checked before any work: =1 without a device is an error now, not later."""
    try:
        gpu_device.current()
    except GpuUnavailableError as exc:
        raise UserError(str(exc)) from None
    except ValueError as exc:
        raise UserError(f"bad GPU setting: {exc}") from None


def check_request(args: argparse.Namespace, outputs: Iterable[str | None] = (), gpu: bool = False) -> None:
    """What every computing command checks before any work: --threads, the budgets of the product tables and of the
    kept Z/4 products, that each output can be written, and (when the command can use the device) the GPU settings."""
    from algebra.milnor.product_tables import budget_bytes

    if getattr(args, "threads", 1) < 1:
        raise UserError(f"--threads must be at least 1 (got {args.threads})")
    try:
        budget_bytes()
        budget_bytes("NASSAU_Z4_MEMO_MB")
    except ValueError as exc:
        raise UserError(str(exc)) from None
    for path in outputs:
        _check_output(path)
    if gpu:
        _check_gpu()


def _compute(args: argparse.Namespace) -> int:
    check_request(args, _output_paths(args), gpu=True)
    if args.trace:
        trace.enable()
    req = api.request(args.module, args.stem, max_t=args.max_t, max_s=args.max_s, algorithm=args.algorithm,
                      threads=args.threads, products=getattr(args, "products", None), save_dir=args.save_dir,
                      unstable=getattr(args, "unstable", False), d2=getattr(args, "d2", False),
                      page=getattr(args, "page", 2), cluster=getattr(args, "cluster", None),
                      workers=getattr(args, "workers", None))
    with Reporter(req.size, req.label, args.quiet) as reporter:
        ext = req.run(on_done=reporter.advance, on_status=reporter.status)
    if args.command == "products":
        _stdout(filtration_one_text(ext.resolution, ext.region))
        reporter.finish(f"{req.spec.display}: products through {_span(ext.region)}")
        return 0
    _write_outputs(ext, args)
    _stdout(ext.text())
    resumed = f", {ext.loaded} bidegrees loaded from {args.save_dir}" if args.save_dir else ""
    reporter.finish(f"{req.spec.display}: {len(ext.generators)} generators through {_span(ext.region)} "
                    f"({ext.algorithm}, {_executor(args)}{resumed})")
    return 0


def _executor(args: argparse.Namespace) -> str:
    if getattr(args, "cluster", None):
        return f"the Dask cluster at {args.cluster}"
    if getattr(args, "workers", None):
        return f"{args.workers} worker process{'es' if args.workers > 1 else ''}"
    return f"{args.threads} thread{'s' if args.threads > 1 else ''}"


def _tensor(args: argparse.Namespace) -> int:
    _check_output(args.output)
    text = fd_json(load_module(f"{args.module}^{args.target}")) + "\n"
    if args.output:
        write_text_atomic(args.output, text)
    else:
        _stdout(text)
    return 0


def _ext(args: argparse.Namespace) -> int:
    check_request(args, (args.json, args.svg, args.seqsee))
    source, target = load_module(args.module), load_module(args.target)
    check_compatible(source, target)
    try:
        region = Region(max_s=args.max_s, min_degree=chart_min_degree(source, target), max_stem=args.stem,
                        max_t=args.max_t)
        needed = resolution_region(source, target, region)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    algorithm = choose_algorithm(source, "auto")
    with Reporter(len(needed.bidegrees()), f"{source.name} for Ext(M, {target.name})", args.quiet) as reporter:
        res = resolve(source, needed, algorithm, args.threads, on_done=reporter.advance)
    dims = {(t - s, s): k for (s, t), k in ext_dims(res, target, region).items() if k}
    chart = Chart(module=f"Ext({source.name}, {target.name})", prime=2, algorithm=algorithm,
                  max_stem=region.chart_max_stem, max_s=region.max_s, min_degree=region.min_degree,
                  rows=region.chart_rows(), dims=dims)
    _write_outputs(chart, args)
    _stdout(graded_dimension_string(chart))
    reporter.finish(f"Ext({source.name}, {target.name}): {sum(dims.values())} classes through {_span(region)}")
    return 0


def _span(region: Region) -> str:
    edge = f"stem {region.max_stem}" if region.max_stem is not None else f"t = {region.max_t}"
    return f"{edge}, s <= {region.max_s}"


def _chart(args: argparse.Namespace) -> int:
    for path in _output_paths(args):
        _check_output(path)
    ext = api.load(args.save_dir, products=args.products, d2=args.d2, page=args.page)
    _write_outputs(ext, args)
    if not args.quiet:
        _stdout(ext.text())
    return 0


def _output_paths(args: argparse.Namespace) -> list[str | None]:
    return [getattr(args, name, None) for name in ("json", "svg", "seqsee", "html")]


def _write_outputs(ext: api.Ext | Chart, args: argparse.Namespace) -> None:
    """Write the files asked for; the chart (and its product lines) is built only when one is asked."""
    if not any(_output_paths(args)):
        return
    chart = ext.chart if isinstance(ext, api.Ext) else ext
    if args.json:
        write_json(chart, args.json)
    if args.svg:
        write_text_atomic(args.svg, to_svg(chart))
    if args.seqsee:
        write_text_atomic(args.seqsee, json.dumps(to_seqsee(chart), indent=1) + "\n")
    if getattr(args, "html", None):
        write_text_atomic(args.html, to_html(chart))


def _stdout(text: str) -> None:
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.flush()
