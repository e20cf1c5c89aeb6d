"""The CLI's unstable commands: Ext over the unstable Steenrod algebra (REFERENCE-UNSTABLE 1).

- `resolve-unstable MODULE`: `resolve`'s chart (and files, save directory) for Ext_U(M): the reference's
  resolve_unstable. The module must be unstable through the region (else one line, status 2).
- `unstable-chart MODULE --stem N`: Sigma^k M for k = 0..N - bottom + 2, each through stem N + k, printed as the
  reference's unstable_chart prints them (one TikZ figure each); `--svg-dir` also draws each as SVG.
- `unstable-suspension MODULE --stem N`: the same family and the suspension maps between their Ext, in the
  reference's unstable_suspension lines.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from algebra.module.spec import read_spec
from algebra.module.loader import module_from_spec
from charts.atomic import write_text_atomic
from charts.svg import to_svg
from charts.tikz import to_tikz
from nassau.api import request as api
from nassau.api.chart_data import build_chart
from nassau.engine.resolve import UNSTABLE
from nassau.api.progress import Reporter
from nassau.engine.region import Region
from nassau.tools.suspension import resolve_suspensions, suspension_count, suspension_lines

COMMANDS = ("resolve-unstable", "unstable-chart", "unstable-suspension")


def add_parsers(sub: argparse._SubParsersAction, region_args: Callable[[argparse.ArgumentParser], None]) -> None:
    r = sub.add_parser("resolve-unstable", help="resolve an unstable module over the unstable algebra (Ext_U chart)",
                       description="Resolve MODULE by free unstable modules through a stem (absolute, as for "
                                   "resolve) and print the chart of dim Ext_U^{s,t}: the E2 page of the unstable "
                                   "Adams spectral sequence, e.g. for S_2[7] = H*(S^7).")
    _module_arg(r)
    region_args(r)
    _run_args(r)
    r.add_argument("--json", metavar="FILE", help="also write the chart as JSON (see README)")
    r.add_argument("--svg", metavar="FILE", help="also draw the chart with its h0..h3 lines as SVG")
    r.add_argument("--seqsee", metavar="FILE", help="also write SeqSee's input JSON")
    r.add_argument("--html", metavar="FILE", help="also write the interactive chart page")
    r.set_defaults(algorithm="auto", trace=False, unstable=True)

    c = sub.add_parser("unstable-chart", help="unstable charts of every suspension of a module, as TikZ figures",
                       description="For k = 0 .. N - bottom + 2 resolve Sigma^k MODULE over the unstable algebra "
                                   "through stem N + k and print its chart with h0..h3 lines as a LaTeX figure, as "
                                   "the reference's unstable_chart does.")
    _family_args(c)
    c.add_argument("--name", metavar="TEMPLATE",
                   help="each figure's title, % replaced by k (default: $\\Sigma^{%}$ and the module's name)")
    c.add_argument("--svg-dir", metavar="DIR", help="also draw each suspension as DIR/NAME[k].svg")

    s = sub.add_parser("unstable-suspension", help="the suspension maps Ext_U(Sigma^(k-1) M) -> Ext_U(Sigma^k M)",
                       description="Resolve Sigma^k MODULE over the unstable algebra for k = 0 .. N - bottom + 2 "
                                   "and print `n s k: dim` with the matrix of the suspension map into it where that "
                                   "is not the identity, as the reference's unstable_suspension does.")
    _family_args(s)


def _module_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("module", metavar="MODULE", help="an unstable module: S_2[7], RP_inf, C2[1], a JSON file, ...")


def _run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--threads", type=int, default=api.cores(), metavar="K",
                   help="worker threads (default: the machine's cores)")
    p.add_argument("--save-dir", metavar="DIR", help="save each finished bidegree here and resume from it (a family: "
                                                     "one subdirectory suspension{k} per suspension)")
    p.add_argument("--quiet", action="store_true", help="no progress or summary on stderr")


def _family_args(p: argparse.ArgumentParser) -> None:
    _module_arg(p)
    p.add_argument("--stem", type=int, required=True, metavar="N",
                   help="the largest stem of MODULE itself; Sigma^k MODULE is computed through N + k")
    p.add_argument("--max-s", type=int, default=api.DEFAULT_MAX_S, metavar="S",
                   help=f"compute Adams filtrations s <= S (default {api.DEFAULT_MAX_S})")
    _run_args(p)


def run(args: argparse.Namespace) -> int:
    from nassau.cli import main as base

    base.check_request(args)
    if args.command == "resolve-unstable":
        return base._compute(args)
    spec = read_spec(args.module)
    module = module_from_spec(spec)
    if args.command == "unstable-suspension" and module.algebra.prime != 2:
        raise base.UserError(f"{spec.display}: the suspension maps are chain maps, which are lifted at p = 2 only")
    last_k = suspension_count(module, args.stem)
    try:
        regions = [Region(max_s=args.max_s, min_degree=module.min_degree + k, max_stem=args.stem + k)
                   for k in range(last_k + 1)]
    except ValueError as exc:
        raise base.UserError(str(exc)) from None
    reporter = Reporter(sum(len(r.bidegrees()) for r in regions), f"{spec.display}: Sigma^k for k <= {last_k} "
                        f"({UNSTABLE})", args.quiet)
    family = resolve_suspensions(spec, args.stem, args.max_s, last_k, args.threads, args.save_dir,
                                 on_done=lambda k: reporter.advance)
    with reporter:  # the family resolves lazily, inside the block
        if args.command == "unstable-suspension":
            for line in suspension_lines(family, args.stem, args.max_s, args.threads):
                base._stdout(line + "\n")
        else:
            _charts(family, args, spec.display, base)
    reporter.finish(f"{spec.display}: Sigma^k for k = 0..{last_k} through stem {args.stem} + k, s <= {args.max_s}")
    return 0


def _charts(family, args: argparse.Namespace, display: str, base) -> None:
    """One figure per suspension, printed as soon as it is resolved."""
    template = args.name if args.name is not None else f"$\\Sigma^{{%}}$ {display}"
    if args.svg_dir is not None:
        try:
            Path(args.svg_dir).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise base.UserError(f"cannot write to {args.svg_dir}: {exc.strerror or exc}") from None
    for susp in family:
        chart = build_chart(susp.res, susp.region, susp.spec.display, UNSTABLE)
        header = f"\\node [right] at (1, {susp.region.max_s - 1}) {{{template.replace('%', str(susp.k))}}};\n"
        base._stdout("\\begin{figure}[p]\\centering\n" + to_tikz(chart, header) + "\\end{figure}\n")
        if args.svg_dir is not None:
            write_text_atomic(Path(args.svg_dir) / f"{susp.spec.display}.svg", to_svg(chart))
