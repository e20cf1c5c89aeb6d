"""What every command of the CLI shares: the arguments they have in common, the checks made before any work, the
one way a command resolves its module, and writing to stdout and to files.

A command module (resolve, products, secondary, unstable, tools, modules) imports this and the API, never another
command module. Every user error is raised as an exception that nassau.cli.main prints as one line with status 2.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from charts.atomic import write_text_atomic
from charts.html import to_html
from charts.json_export import dumps as json_dumps
from charts.json_export import to_json
from charts.model import Chart
from charts.seqsee import to_seqsee
from charts.svg import to_svg
from charts.text import with_axes
from fp.threads import cores
from gpu import device as gpu_device
from gpu.errors import GpuUnavailableError
from nassau.api.ext import Ext
from nassau.api.request import DEFAULT_MAX_S, request
from nassau.api.resolved import Resolved
from nassau.engine.region import Region
from nassau.engine.resolve import ALGORITHMS

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class UserError(Exception):
    """A problem with the request; printed as one line."""


# -- arguments ---------------------------------------------------------------------------------------------------
def region_args(p: argparse.ArgumentParser, saved: bool = False) -> None:
    """--stem N or --max-t T, and --max-s S. saved: the part of a saved run to draw, by default all of it."""
    verb = "draw" if saved else "compute"
    span = p.add_mutually_exclusive_group(required=not saved)
    span.add_argument("--stem", type=int, metavar="N", help=f"{verb} every stem n <= N")
    span.add_argument("--max-t", type=int, metavar="T", help=f"{verb} every internal degree t <= T instead")
    default = "the saved run's" if saved else DEFAULT_MAX_S
    p.add_argument("--max-s", type=int, default=None if saved else DEFAULT_MAX_S, metavar="S",
                   help=f"{verb} Adams filtrations s <= S (default {default})")


def threads_arg(p: argparse.ArgumentParser, default: int | None = None, by_estimate: bool = False) -> None:
    """--threads; by_estimate: left None for the request to choose (one thread for a run of a few seconds)."""
    about = ("the machine's cores, one for a run the estimate puts under 5 s of work" if by_estimate else
             "the machine's cores" if default is None else str(default))
    p.add_argument("--threads", type=int, default=None if by_estimate else cores() if default is None else default,
                   metavar="THREADS", help=f"worker threads (default: {about})")


def quiet_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quiet", action="store_true", help="no progress or summary on stderr")


def computation_args(p: argparse.ArgumentParser, name: str = "MODULE", about: str = "",
                     threads_by_estimate: bool = False) -> None:
    p.add_argument("module", metavar=name,
                   help=about + "S_2, C2, Joker, tmf2, ... (bundled: `nassau modules` lists all 46), NAME[shift], "
                                "NAME@adem, A^B (tensor product), or a path to a module JSON file")
    region_args(p)
    p.add_argument("--algorithm", choices=ALGORITHMS, default="auto",
                   help="auto (default): the change of rings for A//A(n), else Nassau's algorithm where it applies "
                        "unless the estimate says the standard one is faster, else the standard one")
    threads_arg(p, by_estimate=threads_by_estimate)
    p.add_argument("--save-dir", metavar="DIR", help="save each finished bidegree here and resume from it")
    quiet_arg(p)
    p.add_argument("--trace", action="store_true", help="log one line per large row reduction on stderr")


def chart_products_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--products", nargs="+", metavar="OP",
                   help="the product lines the SVG, page, JSON and SeqSee charts carry, in place of the default h0 h1 "
                        "h2 h3 (name those too to keep them: --products h0 h1 h2 h3 c0): h_i, c0, Ph1, Ph2, d0, e0, "
                        "c1, g, or NAME=n,s,[v] for any class of the sphere's Ext")


def axes_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--axes", choices=("auto", "always", "never"), default="auto",
                   help="print s beside the text chart's rows and the stem under every tenth column: auto (default) "
                        "on a terminal only, so that piped output stays the reference's, byte for byte")


# -- checks before any work -----------------------------------------------------------------------------------------
def check_output(path: str | None) -> None:
    """Refuse before computing if an output file cannot be written."""
    if path is None:
        return
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise UserError(f"cannot write {path}: it is a directory")
    if not parent.is_dir():
        raise UserError(f"cannot write {path}: directory {parent} does not exist")
    if p.exists() and not os.access(p, os.W_OK):
        raise UserError(f"cannot write {path}: permission denied")
    try:  # as the file will be written (charts.atomic): a new file beside it, where root too may be refused (/proc)
        fd, probe = tempfile.mkstemp(dir=parent, prefix=f".{p.name}.", suffix=".probe")
    except OSError as exc:
        raise UserError(f"cannot write {path}: no file can be made in {parent} ({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(probe)


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

    if getattr(args, "threads", None) is not None and args.threads < 1:
        raise UserError(f"--threads must be at least 1 (got {args.threads})")
    try:
        budget_bytes()
        budget_bytes("NASSAU_Z4_MEMO_MB")
    except ValueError as exc:
        raise UserError(str(exc)) from None
    for path in outputs:
        check_output(path)
    if gpu:
        _check_gpu()


# -- regions and resolving -------------------------------------------------------------------------------------------
def region_of(args: argparse.Namespace, min_degree: int) -> Region:
    """The region --stem/--max-t and --max-s name, from a module's bottom degree (a bad one raises RegionError, which
    is printed as one line)."""
    return Region(max_s=args.max_s, min_degree=min_degree, max_stem=args.stem, max_t=args.max_t)


def resolve_module(args: argparse.Namespace, unstable: bool = False, over_module: bool = True) -> Resolved:
    """MODULE resolved over the command's region by --algorithm, saved to and resumed from --save-dir, with
    progress unless --quiet. over_module: a resolution of the module itself, where the change of rings gives way to
    the standard algorithm (products and d2 lift into it); unstable: over the unstable algebra (whose one
    algorithm is the standard one)."""
    req = request(args.module, args.stem, max_t=args.max_t, max_s=args.max_s,
                  algorithm="auto" if unstable else args.algorithm, threads=args.threads,
                  save_dir=getattr(args, "save_dir", None), unstable=unstable, over_module=over_module)
    return req.resolve(quiet=args.quiet)


# -- output ---------------------------------------------------------------------------------------------------------
def stdout(text: str) -> None:
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.flush()


def chart_text(text: str, min_degree: int, args: argparse.Namespace, page: int = 2) -> str:
    """The text chart as --axes asks: with its axes (charts.text.with_axes) when always, or auto and stdout is a
    terminal, and a page other than E2 named above it; else the reference's bytes (E3's rows alone). On a
    terminal the chart is cut into panels of stems that fit its width (S_2 through stem 40 is 85 columns wide)."""
    terminal = sys.stdout.isatty()
    if args.axes == "always" or (args.axes == "auto" and terminal):
        return (f"E{page} = ker d2 / im d2\n" if page == 3 else "") + with_axes(
            text, min_degree, shutil.get_terminal_size().columns if terminal else None)
    return text


def write_file(path: str | os.PathLike[str], text: str) -> None:
    """Write an output file atomically (charts.atomic); a write that fails even so (the disk full, the directory
    gone since check_output) is a one-line error, not a traceback."""
    try:
        write_text_atomic(path, text)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None


def stdout_lines(lines: Iterable[str]) -> None:
    stdout("".join(line + "\n" for line in lines))


def output_paths(args: argparse.Namespace) -> list[str | None]:
    return [getattr(args, name, None) for name in ("json", "svg", "seqsee", "html")]


def write_outputs(ext: Ext | Chart, args: argparse.Namespace) -> None:
    """Write the chart files asked for; the chart (and its product lines) is built only when one is asked."""
    if not any(output_paths(args)):
        return
    chart = ext.chart if isinstance(ext, Ext) else ext
    if args.json:
        write_file(args.json, json_dumps(to_json(chart)))
    if args.svg:
        write_file(args.svg, to_svg(chart))
    if args.seqsee:
        write_file(args.seqsee, json.dumps(to_seqsee(chart), indent=1) + "\n")
    if getattr(args, "html", None):
        write_file(args.html, ext.html() if isinstance(ext, Ext) else to_html(chart))
