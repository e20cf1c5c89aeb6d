"""The CLI's remaining tools of the reference: text dumps, Bruner's format and Mahowald invariants.

- `differentials MODULE`, `sizes MODULE`: the reference's differentials, num_gens and resolution_size lines of a
  resolution (any algorithm; `--unstable` for the unstable one); `algebra-dim`: its algebra_dim table.
- `bruner DIR --stem N`: read Bruner's hDiff.s files, resolve F2 ourselves and print how the two Ext bases
  correspond (the reference's bruner); `save-bruner MODULE --stem N --output DIR` writes ours in his format.
- `mahowald-invariant --max-k K`: algebraic Mahowald invariants through RP_{-k}^inf, k <= K.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from algebra.module.loader import load_module
from nassau.api.progress import Reporter
from nassau.api.resolved import Resolved, resolve_over
from nassau.cli.common import (
    UserError,
    check_request,
    quiet_arg,
    region_args,
    region_of,
    resolve_module,
    stdout,
    threads_arg,
)
from nassau.engine.region import Region
from nassau.engine.resolve import ALGORITHMS, CHANGE_OF_RINGS
from nassau.tools.bruner import BrunerError, check_reach, check_writable, compare_text, read_bruner, write_bruner
from nassau.tools.mahowald import mahowald_lines, sphere_region
from nassau.tools.resolution_text import algebra_dim_text, differentials_text, num_gens_text, resolution_size_text

COMMANDS = ("differentials", "sizes", "algebra-dim", "bruner", "save-bruner", "mahowald-invariant")
#: What these commands raise for bad input; the CLI prints it as one line with status 2.
ERRORS = (BrunerError,)
TABLES = {"num-gens": num_gens_text, "resolution-size": resolution_size_text}


def add_parsers(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("differentials", help="print d x for every generator of the resolution",
                       description="Resolve MODULE and print d x_(n,s,i) = P(...) x_(...) + ... for every generator, "
                                   "in stem order, as the reference's differentials does (the Milnor basis, terms "
                                   "in basis order).")
    _resolution_args(d)
    z = sub.add_parser("sizes", help="the number of generators per bidegree, or the dimensions of the free modules",
                       description="Resolve MODULE and print the reference's num_gens lines (n,s,count for every "
                                   "bidegree) or, with --table resolution-size, its resolution_size lines (dim F_s(t) "
                                   "for each t, one row per s from the top).")
    _resolution_args(z)
    z.add_argument("--table", choices=tuple(TABLES), default="num-gens", help="which table (default num-gens)")
    a = sub.add_parser("algebra-dim", help="the dimension of the Steenrod algebra in each degree",
                       description="Print dim A_n = d for n = 0..D (the reference's algebra_dim).")
    a.add_argument("--max-degree", type=int, default=125, metavar="D", help="the last degree (default 125)")
    a.add_argument("--prime", type=int, default=2, metavar="P", help="the prime (default 2)")

    b = sub.add_parser("bruner", help="compare Bruner's resolution of F2 (hDiff.s files) with ours",
                       description="Read DIR/hDiff.0, hDiff.1, ... (Bruner's format; every file checked), resolve F2 "
                                   "through the same filtrations and stem N, lift the identity of F2 to a chain map "
                                   "from his resolution to ours and print, for each of our generators, its "
                                   "coefficients on his (the reference's bruner).")
    b.add_argument("directory", metavar="DIR", help="the directory holding hDiff.0, hDiff.1, ...")
    b.add_argument("--stem", type=int, default=20, metavar="N", help="the largest stem (default 20)")
    b.add_argument("--max-s", type=int, metavar="S",
                   help="compare filtrations s <= S (default: every filtration his files hold)")
    _run_args(b)
    w = sub.add_parser("save-bruner", help="write a resolution of F2 in Bruner's format (hDiff.s files)",
                       description="Resolve MODULE (F2: S_2) and write DIR/hDiff.0 .. hDiff.S in Bruner's format, "
                                   "each filtration through the last degree of the region.")
    w.add_argument("module", metavar="MODULE", help="S_2 (Bruner's format holds resolutions of F2)")
    region_args(w)
    w.add_argument("--output", "-o", required=True, metavar="DIR", help="the directory to write the files into")
    _run_args(w)
    m = sub.add_parser("mahowald-invariant", help="algebraic Mahowald invariants through RP_-k_inf, k <= K",
                       description="Print M(x) for every class x of Ext(F2) whose invariant is found through "
                                   "M_k = H*(RP_-k_inf), k <= K, with its indeterminacy (the reference's "
                                   "mahowald_invariant). F2 is resolved through stem 2K - 2, s <= K/2 + 1.")
    m.add_argument("--max-k", type=int, default=25, metavar="K", help="the largest k (default 25)")
    threads_arg(m)
    quiet_arg(m)


def _run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--algorithm", choices=ALGORITHMS, default="auto", help="how F2 is resolved (default auto)")
    threads_arg(p)
    quiet_arg(p)


def _resolution_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("module", metavar="MODULE", help="as for resolve")
    region_args(p)
    _run_args(p)
    p.add_argument("--save-dir", metavar="DIR", help="save each finished bidegree here and resume from it")
    p.add_argument("--unstable", action="store_true", help="the resolution over the unstable algebra instead")


def run(args: argparse.Namespace) -> int:
    check_request(args)
    {"differentials": _dump, "sizes": _dump, "algebra-dim": _algebra_dim, "bruner": _bruner,
     "save-bruner": _save_bruner, "mahowald-invariant": _mahowald}[args.command](args)
    return 0


def _dump(args: argparse.Namespace) -> None:
    text = differentials_text if args.command == "differentials" else TABLES[args.table]
    # auto never takes the change of rings here: its resolution is of F2 over a subalgebra, not of MODULE
    with resolve_module(args, unstable=args.unstable, over_module=args.algorithm == "auto") as mod:
        stdout(text(mod.resolution, mod.region))


def _algebra_dim(args: argparse.Namespace) -> None:
    p = args.prime
    if not 2 <= p <= 251 or any(p % k == 0 for k in range(2, int(p**0.5) + 1)):
        raise UserError(f"--prime {p} is not a prime below 256")
    if not 0 <= args.max_degree <= 2045:
        raise UserError(f"--max-degree {args.max_degree} is out of range (0..2045)")
    stdout(algebra_dim_text(args.max_degree, args.prime))


def _sphere(args: argparse.Namespace, name: str, region: Region) -> Resolved:
    """F2 (the module `name`) resolved over the region by --algorithm (auto: Nassau's)."""
    algorithm = "nassau" if args.algorithm == "auto" else args.algorithm
    if algorithm == CHANGE_OF_RINGS:
        raise UserError("the change of rings does not apply to F2; use --algorithm standard or nassau")
    return resolve_over(load_module(name), region, algorithm, threads=args.threads, quiet=args.quiet)


def _bruner(args: argparse.Namespace) -> None:
    theirs, reach = read_bruner(args.directory, load_module("S_2"))
    region = Region(max_s=max(reach) if args.max_s is None else args.max_s, min_degree=0, max_stem=args.stem)
    check_reach(reach, region)
    ours = _sphere(args, "S_2", region)
    with Reporter(None, "S_2: Bruner's resolution mapped to ours", args.quiet):
        text = compare_text(theirs, ours.resolution, region, args.threads)
    stdout(text)


def _save_bruner(args: argparse.Namespace) -> None:
    module = load_module(args.module)
    check_writable(module)
    region = region_of(args, module.min_degree)
    out = Path(args.output)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot write to {out}: {exc.strerror or exc}") from None
    write_bruner(_sphere(args, args.module, region).resolution, region, out)


def _mahowald(args: argparse.Namespace) -> None:
    try:
        sphere_region(args.max_k)
    except ValueError as exc:
        raise UserError(f"--max-k {args.max_k}: {exc}") from None
    if args.max_k < 1:
        raise UserError(f"--max-k must be at least 1 (got {args.max_k})")
    reporter = Reporter(len(sphere_region(args.max_k).bidegrees()), "S_2 (standard)", args.quiet)

    def begin(k: int) -> None:
        if k == 1:
            reporter.phase(f"Mahowald invariants through RP_-{args.max_k}_inf", args.max_k, "k")
        else:
            reporter.step(f"k = {k}")

    with reporter:
        for line in mahowald_lines(args.max_k, args.threads, reporter.advance, begin):
            with reporter.hidden():
                stdout(line + "\n")
    reporter.finish(f"Mahowald invariants through k = {args.max_k}")
