"""The `nassau` command line: parse, check every input before the long run, compute, write, report.

Every user error ends in one line on stderr and exit status 2; Ctrl-C ends with status 130 and keeps
what the save directory already holds. Outputs are written atomically, so a file that exists is whole.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from algebra.module_loader import load_module, module_from_spec
from algebra.module_writer import fd_json
from algebra.module_json import ModuleError, read_spec
from charts.atomic import write_text_atomic
from charts.json_export import write_json
from charts.model import Chart
from charts.seqsee import to_seqsee
from charts.svg import to_svg
from charts.text import graded_dimension_string, text_chart
from gpu import device as gpu_device
from gpu import trace
from gpu.errors import GpuUnavailableError
from nassau import cli_products
from nassau.chart_data import build_chart
from nassau.engine import ALGORITHMS, EngineError, choose_algorithm, resolve, resolved_module
from nassau.ext_mn import chart_min_degree, ext_dims, resolution_region
from nassau.filtration_one import filtration_one_text
from nassau.progress import Reporter
from nassau.region import Region
from nassau.resolution import Resolution
from nassau.scheduler import JobFailed
from nassau.store import SaveDir, StoreError, module_from_manifest

DEFAULT_MAX_S = 15
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class UserError(Exception):
    """A problem with the request; printed as one line."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nassau",
        description="Compute Ext over the mod-2 Steenrod algebra (the Adams E2 page) for finite modules.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    res = sub.add_parser("resolve", help="resolve a module and print its Ext chart",
                         description="Resolve MODULE through a stem (or up to an internal degree t) and print the "
                                     "chart of dim Ext^{s,t}: one row per s, top row first, one column per stem.")
    _computation_args(res)
    res.add_argument("--json", metavar="FILE", help="also write the chart as JSON (see README)")
    res.add_argument("--svg", metavar="FILE", help="also draw the chart with h0..h3 product lines as SVG")
    res.add_argument("--seqsee", metavar="FILE", help="also write SeqSee's input JSON")
    cli_products.add_chart_products_arg(res)
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
    ext.add_argument("--threads", type=int, default=_cores(), metavar="K", help="worker threads for resolving M")
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
    chart = sub.add_parser("chart", help="draw a chart from a save directory without recomputing",
                           description="Read the resolution stored in SAVE_DIR (made by resolve --save-dir) and "
                                       "print or write its chart. Nothing is recomputed.")
    chart.add_argument("save_dir", metavar="SAVE_DIR")
    chart.add_argument("--json", metavar="FILE")
    chart.add_argument("--svg", metavar="FILE")
    chart.add_argument("--seqsee", metavar="FILE")
    chart.add_argument("--quiet", action="store_true", help="do not print the text chart")
    cli_products.add_chart_products_arg(chart)
    return parser


def _cores() -> int:
    """The cores this process may run on (not every core of the host, under affinity limits)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _computation_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("module", metavar="MODULE",
                   help="S_2, C2, Joker, tmf2, ... (bundled), NAME[shift], NAME@adem, A^B (tensor product), or a "
                        "path to a module JSON file")
    _region_args(p)
    p.add_argument("--algorithm", choices=ALGORITHMS, default="auto",
                   help="auto (default): the change of rings for A//A(n), else Nassau's algorithm where it applies, "
                        "else the standard one")
    p.add_argument("--threads", type=int, default=_cores(), metavar="K",
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
    try:
        if args.command == "chart":
            return _chart(args)
        if args.command == "tensor":
            return _tensor(args)
        if args.command == "ext":
            return _ext(args)
        if args.command in cli_products.COMMANDS:
            return cli_products.run(args)
        return _compute(args)
    except KeyboardInterrupt:
        print("nassau: interrupted" + _saved_note(args), file=sys.stderr)
        return EXIT_INTERRUPTED
    except (UserError, ModuleError, EngineError, StoreError) as exc:
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


def _compute(args: argparse.Namespace) -> int:
    if args.threads < 1:
        raise UserError(f"--threads must be at least 1 (got {args.threads})")
    for path in (getattr(args, "json", None), getattr(args, "svg", None), getattr(args, "seqsee", None)):
        _check_output(path)
    _check_gpu()
    if args.trace:
        trace.enable()
    spec = read_spec(args.module)
    module = module_from_spec(spec)
    algorithm = choose_algorithm(module, args.algorithm)
    try:
        region = Region(max_s=args.max_s, min_degree=module.min_degree, max_stem=args.stem, max_t=args.max_t)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    store = None
    if args.save_dir:
        store = SaveDir(Path(args.save_dir), spec, module, algorithm)
        store.open(region)
    reporter = Reporter(len(region.bidegrees()), f"{spec.display} ({algorithm})", args.quiet)
    try:
        res = resolve(module, region, algorithm, args.threads, store, on_done=reporter.advance)
    except BaseException:
        reporter.abort()
        if store is not None:
            store.close()
        raise
    if args.command == "products":
        _stdout(filtration_one_text(res, region))
        reporter.finish(f"{spec.display}: products through {_span(region)}")
        return 0
    wants_products = bool(args.svg or args.json or args.seqsee)
    chart = build_chart(res, region, spec.display, algorithm, products=wants_products,
                        **(cli_products.chart_products(args, res, algorithm) if wants_products else {}))
    _write_outputs(chart, args)
    _stdout(text_chart(chart))
    total = sum(chart.dims.values())
    resumed = f", {store.loaded} bidegrees loaded from {store.path}" if store is not None else ""
    reporter.finish(f"{spec.display}: {total} generators through {_span(region)} ({algorithm}, "
                    f"{args.threads} thread{'s' if args.threads > 1 else ''}{resumed})")
    return 0


def _tensor(args: argparse.Namespace) -> int:
    _check_output(args.output)
    text = fd_json(load_module(f"{args.module}^{args.target}")) + "\n"
    if args.output:
        write_text_atomic(args.output, text)
    else:
        _stdout(text)
    return 0


def _ext(args: argparse.Namespace) -> int:
    if args.threads < 1:
        raise UserError(f"--threads must be at least 1 (got {args.threads})")
    for path in (args.json, args.svg, args.seqsee):
        _check_output(path)
    source, target = load_module(args.module), load_module(args.target)
    try:
        region = Region(max_s=args.max_s, min_degree=chart_min_degree(source, target), max_stem=args.stem,
                        max_t=args.max_t)
        needed = resolution_region(source, target, region)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    algorithm = choose_algorithm(source, "auto")
    reporter = Reporter(len(needed.bidegrees()), f"{source.name} for Ext(M, {target.name})", args.quiet)
    try:
        res = resolve(source, needed, algorithm, args.threads, on_done=reporter.advance)
    except BaseException:
        reporter.abort()
        raise
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
    for path in (args.json, args.svg, args.seqsee):
        _check_output(path)
    save = Path(args.save_dir)
    spec, module, manifest = module_from_manifest(save)
    r = manifest.get("region") or {}
    try:
        region = Region(max_s=int(r["max_s"]), min_degree=module.min_degree, max_stem=r.get("max_stem"),
                        max_t=r.get("max_t"))
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreError(f"{save}: the manifest's region is unusable ({exc})") from None
    algorithm = manifest.get("algorithm", "standard")
    store = SaveDir(save, spec, module, algorithm)
    res = Resolution(resolved_module(module, algorithm))
    res.algebra.extend(region.t_limit - module.min_degree + 1)
    store.load_into(res)
    missing = [b for b in region.bidegrees() if not res.is_done(*b)]
    if missing:
        s, t = missing[0]
        raise StoreError(f"{save} holds an unfinished run ({len(missing)} bidegrees missing, first (n={t - s}, "
                         f"s={s})); finish it with: nassau resolve {spec.display} {_region_flags(region)} "
                         f"--algorithm {algorithm} --save-dir {save}")
    chart = build_chart(res, region, spec.display, algorithm, products=True,
                        **cli_products.chart_products(args, res, algorithm))
    _write_outputs(chart, args)
    if not args.quiet:
        _stdout(text_chart(chart))
    return 0


def _region_flags(region: Region) -> str:
    edge = f"--stem {region.max_stem}" if region.max_stem is not None else f"--max-t {region.max_t}"
    return f"{edge} --max-s {region.max_s}"


def _write_outputs(chart: Chart, args: argparse.Namespace) -> None:
    if args.json:
        write_json(chart, args.json)
    if args.svg:
        write_text_atomic(args.svg, to_svg(chart))
    if args.seqsee:
        write_text_atomic(args.seqsee, json.dumps(to_seqsee(chart), indent=1) + "\n")


def _stdout(text: str) -> None:
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.flush()
