"""The CLI's `secondary` command: the Adams d2 from the secondary Steenrod algebra, and products and Massey products
in Mod_{C lambda^2} (REFERENCE-SECONDARY 4-6).

Resolves MODULE over the region (standard or Nassau; the change of rings is not used, since d2 lives over the
whole algebra) and lifts the secondary homotopies. Without options it prints the reference's `d_2 x_(n, s, j) = [v]`
lines: one per generator of every nonzero source whose target (n - 1, s + 2) is nonzero and computed, zero lines
included. With --product it prints the reference's secondary_product lines for each class, with --massey its
secondary_massey lines. Those lambda parts depend on the quasi-inverses, so there `auto` means the standard
resolution (whose RREF quasi-inverses are the reference's); the unit k, when MODULE is not k, is resolved by the
same algorithm over the region the reference gives it.
"""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from algebra.module.loader import load_module
from charts.json_export import dumps
from nassau.api.progress import Reporter
from nassau.api.resolved import Resolved, unit_beside
from nassau.cli.common import check_request, computation_args, resolve_module, stdout, stdout_lines, write_file
from nassau.engine.errors import RegionError
from nassau.engine.preimages import LiftError
from nassau.engine.region import Region
from nassau.engine.resolution import Resolution
from nassau.products.ext_algebra import is_unit_module
from nassau.products.ext_class import parse_named_class
from nassau.secondary.homotopy import SecondaryHomotopy, check_secondary, d2_entries, d2_lines, secondary_homotopy
from nassau.secondary.lift import SecondaryError
from nassau.store.save_dir import SaveDir

if TYPE_CHECKING:
    from nassau.secondary.massey import LambdaClass
    from nassau.secondary.product import SecondaryExt

COMMANDS = ("secondary",)
ERRORS = (SecondaryError, LiftError)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("secondary", help="the Adams d2 differentials (secondary Steenrod algebra, p = 2), and "
                                         "products and Massey products in Mod_{Cλ²}",
                       description="Resolve MODULE, lift the secondary resolution and print d_2 x_(n, s, j) = [v] "
                                   "for every class whose target (n - 1, s + 2) is nonzero and in the region, as "
                                   "the reference's secondary does; or, with --product or --massey, the lines of "
                                   "its secondary_product or secondary_massey.")
    computation_args(p)
    what = p.add_mutually_exclusive_group()
    what.add_argument("--product", action="append", metavar="NAME=n,s,[v]",
                      help="[x] [y] = [x y] + λ w for a d2-cycle x of Ext(MODULE) and every class y of Ext(S_2) "
                           "(repeat for several)")
    what.add_argument("--massey", nargs=2, metavar=("A", "B"),
                      help="<A, B, c> in Mod_{Cλ²} for every c of Ext(S_2) with B c = 0; A (over MODULE) and B "
                           "(over S_2) are NAME=n,s,[v], NAME=n,s,[v]+λNAME2=[w] or λNAME2=n,s,[w] (w at (n, s+1))")
    p.add_argument("--json", metavar="FILE", help="also write the result as JSON (layout: docs/secondary.md)")


def run(args: argparse.Namespace) -> int:
    from nassau.secondary.massey import parse_lambda_class  # here, as the Mod_{C lambda^2} parts: other commands

    check_request(args, (args.json,), gpu=True)
    products = [parse_named_class(text) for text in args.product or []]
    massey = [parse_lambda_class(text) for text in args.massey or []]
    check_secondary(load_module(args.module))
    if (products or massey) and args.algorithm == "auto":
        args.algorithm = "standard"
    with resolve_module(args) as mod:
        h = _lifted(args, mod.resolution, mod.region, mod.label, mod.store)
        if products:
            result = _products(args, mod, h, products)
        elif massey:
            result = _massey(args, mod, h, *massey)
        else:
            stdout(d2_lines(h, mod.region))
            result = {"d2": [{"source": [n, s, j], "target": [n - 1, s + 2], "vector": row}
                             for (n, s, j), row in d2_entries(h, mod.region)]}
        if args.json:
            region = mod.region
            head = {"module": mod.label, "algorithm": mod.algorithm,
                    "region": {"max_s": region.max_s, "max_stem": region.max_stem, "max_t": region.max_t}}
            write_file(args.json, dumps(head | result))
        return 0


def _secondary_ext(args: argparse.Namespace, mod: Resolved, h: SecondaryHomotopy,
                   reach: tuple[int, int]) -> SecondaryExt:
    """M's lift beside the unit's: M's own when M is k, else S_2 resolved through (stem, s) of M's region less
    `reach` (as the reference resolves its unit) and lifted."""
    from nassau.secondary.product import SecondaryExt

    region = mod.region
    if is_unit_module(mod.module):
        return SecondaryExt(h, region, h, region, args.threads)
    try:
        unit_region = Region(max_s=region.max_s - reach[1], min_degree=0, max_stem=region.row_end(0) - reach[0])
    except RegionError as exc:
        raise SecondaryError(f"the unit S_2 would be resolved over nothing: {exc}") from None
    unit = unit_beside(mod, unit_region, args.algorithm, args.quiet)
    hk = _lifted(args, unit.resolution, unit_region, unit.label)
    return SecondaryExt(h, region, hk, unit_region, args.threads)


def _lifted(args: argparse.Namespace, res: Resolution, region: Region, label: str,
            store: SaveDir | None = None) -> SecondaryHomotopy:
    """The secondary homotopies of a resolution lifted over the region, with a bar of their own."""
    with Reporter(None, f"{label}: d2, the secondary lift", args.quiet):
        return secondary_homotopy(res, region, args.threads, store)


def _products(args: argparse.Namespace, mod: Resolved, h: SecondaryHomotopy, named: list) -> dict[str, Any]:
    from nassau.secondary.product import secondary_products

    ext = _secondary_ext(args, mod, h, (min(c.n for _, c in named), min(c.s for _, c in named)))
    text, found = [], []
    with Reporter(None, f"{mod.label}: products in Mod_{{Cλ²}}", args.quiet):
        by_name = [(name, x, secondary_products(ext, x, name)) for name, x in named]
    for name, x, rows in by_name:
        text.extend(row.text(name) for row in rows)
        found.append({"name": name, "class": {"n": x.n, "s": x.s, "vector": list(x.vector)},
                      "rows": [{"y": {"n": r.b[0], "s": r.b[1], "vector": list(r.y)}, "lambda_y": r.lam is None,
                                "product": list(r.ext), "lambda": None if r.lam is None else list(r.lam)}
                               for r in rows]})
    stdout_lines(text)
    return {"products": found}


def _massey(args: argparse.Namespace, mod: Resolved, h: SecondaryHomotopy, a: LambdaClass,
            b: LambdaClass) -> dict[str, Any]:
    from nassau.secondary.massey import secondary_massey

    ext = _secondary_ext(args, mod, h, (a.n, a.s))
    with Reporter(None, f"{mod.label}: Massey products in Mod_{{Cλ²}}", args.quiet):
        rows = secondary_massey(ext, a, b)
    stdout_lines(row.text(a.display, b.display) for row in rows)
    shift = (a.n + b.n + 1, a.s + b.s - 1)

    def part(x: LambdaClass) -> dict[str, Any]:
        return {"n": x.n, "s": x.s, "ext_name": x.ext_name, "ext": list(x.ext), "lambda_name": x.lam_name,
                "lambda": list(x.lam)}

    return {"massey": {"a": part(a), "b": part(b), "rows": [
        {"c": {"n": r.c[0], "s": r.c[1], "ext": list(r.c_ext), "lambda": list(r.c_lam)},
         "bidegree": [r.c[0] + shift[0], r.c[1] + shift[1]], "ext": list(r.ext), "lambda": list(r.lam)}
        for r in rows]}}
