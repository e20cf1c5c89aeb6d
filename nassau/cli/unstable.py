"""The CLI's families of unstable charts: Ext over the unstable Steenrod algebra of every suspension of a module
(REFERENCE-UNSTABLE 1). `resolve-unstable`, one module's chart, is `resolve`'s (nassau.cli.resolve).

- `unstable-chart MODULE --stem N`: Sigma^k M for k = 0..N - bottom + 2, each through stem N + k, printed as the
  reference's unstable_chart prints them (one TikZ figure each); `--svg-dir` also draws each as SVG.
- `unstable-suspension MODULE --stem N`: the same family and the suspension maps between their Ext, in the
  reference's unstable_suspension lines.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from algebra.module.loader import module_from_spec
from algebra.module.spec import read_spec
from charts.svg import to_svg
from charts.tikz import to_tikz
from nassau.api.chart_data import build_chart
from nassau.api.progress import Reporter
from nassau.api.request import DEFAULT_MAX_S
from nassau.cli.common import UserError, check_request, quiet_arg, stdout, threads_arg, write_file
from nassau.engine.region import Region
from nassau.engine.resolve import UNSTABLE
from nassau.tools.suspension import resolve_suspensions, suspension_count, suspension_lines

COMMANDS = ("unstable-chart", "unstable-suspension")
ERRORS = ()


def add_parsers(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("unstable-chart", help="unstable charts of every suspension of a module, as TikZ figures",
                       description="For k = 0 .. N - bottom + 2 resolve Sigma^k MODULE over the unstable algebra "
                                   "through stem N + k and print its chart with h0..h3 lines as a LaTeX figure, as "
                                   "the reference's unstable_chart does.")
    _family_args(c)
    c.add_argument("--title", metavar="TEMPLATE",
                   help="each figure's title, %% replaced by k (default: $\\Sigma^{%%}$ and the module's name)")
    c.add_argument("--svg-dir", metavar="DIR", help="also draw each suspension as DIR/NAME[k].svg")

    s = sub.add_parser("unstable-suspension", help="the suspension maps Ext_U(Sigma^(k-1) M) -> Ext_U(Sigma^k M)",
                       description="Resolve Sigma^k MODULE over the unstable algebra for k = 0 .. N - bottom + 2 "
                                   "and print `n s k: dim` with the matrix of the suspension map into it where that "
                                   "is not the identity, as the reference's unstable_suspension does.")
    _family_args(s)


def _family_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("module", metavar="MODULE", help="an unstable module: S_2[7], RP_inf, C2[1], a JSON file, ...")
    p.add_argument("--stem", type=int, required=True, metavar="N",
                   help="the largest stem of MODULE itself; Sigma^k MODULE is computed through N + k")
    p.add_argument("--max-s", type=int, default=DEFAULT_MAX_S, metavar="S",
                   help=f"compute Adams filtrations s <= S (default {DEFAULT_MAX_S})")
    threads_arg(p)
    p.add_argument("--save-dir", metavar="DIR", help="save each finished bidegree here and resume from it (a family: "
                                                     "one subdirectory suspension{k} per suspension)")
    quiet_arg(p)


def run(args: argparse.Namespace) -> int:
    check_request(args)
    spec = read_spec(args.module)
    module = module_from_spec(spec)
    if args.command == "unstable-suspension" and module.algebra.prime != 2:
        raise UserError(f"{spec.display}: the suspension maps are chain maps, which are lifted at p = 2 only")
    last_k = suspension_count(module, args.stem)
    regions = [Region(max_s=args.max_s, min_degree=module.min_degree + k, max_stem=args.stem + k)
               for k in range(last_k + 1)]
    reporter = Reporter(sum(len(r.bidegrees()) for r in regions), f"{spec.display}: Sigma^k for k <= {last_k} "
                        f"({UNSTABLE})", args.quiet)
    family = resolve_suspensions(spec, args.stem, args.max_s, last_k, args.threads, args.save_dir,
                                 on_done=lambda k: reporter.advance)
    with reporter:  # the family resolves lazily, inside the block
        if args.command == "unstable-suspension":
            for line in suspension_lines(family, args.stem, args.max_s, args.threads):
                with reporter.hidden():
                    stdout(line + "\n")
        else:
            _charts(family, args, spec.display, reporter)
    reporter.finish(f"{spec.display}: Sigma^k for k = 0..{last_k} through stem {args.stem} + k, s <= {args.max_s}")
    return 0


def _charts(family, args: argparse.Namespace, display: str, reporter: Reporter) -> None:
    """One figure per suspension, printed as soon as it is resolved."""
    template = args.title if args.title is not None else f"$\\Sigma^{{%}}$ {display}"
    if args.svg_dir is not None:
        try:
            Path(args.svg_dir).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"cannot write to {args.svg_dir}: {exc.strerror or exc}") from None
    for susp in family:
        chart = build_chart(susp.res, susp.region, susp.spec.display, UNSTABLE)
        header = f"\\node [right] at (1, {susp.region.max_s - 1}) {{{template.replace('%', str(susp.k))}}};\n"
        with reporter.hidden():
            stdout("\\begin{figure}[p]\\centering\n" + to_tikz(chart, header) + "\\end{figure}\n")
        if args.svg_dir is not None:
            write_file(Path(args.svg_dir) / f"{susp.spec.display}.svg", to_svg(chart))
