"""The multiplicative commands of the CLI: `product`, `map`, `massey`, `yoneda`, `steenrod`, `sq0`.

Each resolves what it needs (the module, and the unit or a second module beside it), lifts chain maps, prints the
reference's lines for the same request on stdout and, with --json FILE, writes the same result as JSON (layouts in
the README). Regions (--stem/--max-t, --max-s) are those of the module whose Ext the values live in, as in the
reference's prompts. Bad classes, maps or brackets end in one line on stderr and exit status 2, like every other
user error of the CLI.
"""
from __future__ import annotations

import argparse
from typing import Any

from algebra.module.homomorphism import ModuleMapError, parse_module_map
from algebra.module.loader import load_module, module_from_spec
from algebra.module.spec import read_spec
from charts.json_export import dumps
from nassau.api.progress import Reporter
from nassau.api.resolved import Resolved, resolve_beside, resolve_over, unit_beside
from nassau.cli.common import (
    UserError,
    check_request,
    computation_args,
    quiet_arg,
    resolve_module,
    stdout_lines,
    threads_arg,
    write_file,
)
from nassau.engine.preimages import LiftError
from nassau.engine.region import Region
from nassau.engine.resolve import algorithm_over_module
from nassau.lifting.chain_map import ChainMap, lift
from nassau.products.ext_algebra import ExtAlgebra, is_unit_module, unit_module
from nassau.products.ext_class import ClassError, ExtClass, parse_class, parse_named_class
from nassau.products.massey import MasseyError, massey_products, shift_of
from nassau.products.product_lines import Row, lines, map_rows, product_rows, shifted_region

COMMANDS = ("product", "map", "massey", "sq0", "yoneda", "steenrod")
#: The commands whose constructions are p = 2 only (Sq^0 and the squares; Yoneda's truncations read Sq^{2^j}).
P2_ONLY = ("sq0", "yoneda", "steenrod")
#: What these commands raise for bad input; the CLI prints it as one line with status 2.
ERRORS = (ClassError, ModuleMapError, LiftError, MasseyError)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("product", help="multiply every class of Ext(MODULE) by classes of the sphere's Ext",
                       description="Resolve MODULE and print NAME x_(n, s, j) = [v] for each --by class: its product "
                                   "with every generator of Ext(MODULE) whose product lies in the region (the "
                                   "reference's lift_hom lines): x_j b, as the reference's ExtAlgebra reads it (at odd p "
                                   "x b = (-1)^{s_x s_b + t_x t_b} b x). Classes are n,s,[v] in the sphere's Ext "
                                   "basis.")
    computation_args(p)
    p.add_argument("--by", action="append", required=True, metavar="NAME=n,s,[v]",
                   help="a class of the sphere's Ext to multiply by, e.g. g=20,4,[1], or b0=10,2,[1] at p = 3 "
                        "(entries 0..p-1; repeat for several)")
    p.add_argument("--json", metavar="FILE", help="also write the products as JSON (layout: docs/products.md)")

    m = sub.add_parser("map", help="the map on Ext induced by a module homomorphism SOURCE -> TARGET",
                       description="Resolve SOURCE over the region and TARGET over the region lowered by the map's "
                                   "degree, lift the homomorphism to a chain map and print NAME x_(n, s, j) = [v]: "
                                   "the image in Ext(SOURCE) of each generator of Ext(TARGET) (Ext is contravariant; "
                                   "the reference's lift_hom between modules).")
    computation_args(m, "SOURCE", "the module the homomorphism starts from: ")
    m.add_argument("target", metavar="TARGET", help="the module the homomorphism lands in (as SOURCE)")
    m.add_argument("--send", action="append", default=[], metavar="X=Y[+Z...]",
                   help="the image of a basis element of SOURCE (by name) as a sum of basis elements of TARGET, "
                        "or 0; unnamed elements go to 0 (repeat for several)")
    m.add_argument("--degree", type=int, default=0, metavar="D", help="the map raises degrees by D (default 0)")
    m.add_argument("--name", default="f", help="the name printed on each line (default f)")
    m.add_argument("--json", metavar="FILE", help="also write the map as JSON (layout: docs/products.md)")


    q = sub.add_parser("massey", help="Massey products <a, b, x> for every x of Ext(MODULE) with x b = 0",
                       description="Resolve MODULE (and the sphere beside it) and print <a, b, x_(n, s, [v])> = "
                                   "[offset] + {indeterminacy} for every x in the kernel of b whose bracket lies in "
                                   "the region and does not contain 0 (the reference's massey lines). a and b are "
                                   "classes n,s,[v] of the sphere's Ext with a b = 0.")
    computation_args(q)
    q.add_argument("--a", required=True, metavar="n,s,[v]", help="the first class, e.g. 7,1,[1] (h3)")
    q.add_argument("--b", required=True, metavar="n,s,[v]", help="the middle class, e.g. 0,4,[1] (h0^4)")
    q.add_argument("--json", metavar="FILE", help="also write the brackets as JSON (layout: docs/products.md)")


    z = sub.add_parser("sq0", help="the algebraic Steenrod operation Sq^0 on every class of Ext(S_2)",
                       description="Resolve S_2 and print Sq^0 x_(n, s, i) = [v] (Sq^0: Ext^{s,t} -> Ext^{s,2t}) for "
                                   "every generator whose image lies in the region (the reference's sq0 lines).")
    computation_args(z)
    z.add_argument("--json", metavar="FILE", help="also write the values as JSON (layout: docs/products.md)")


    y = sub.add_parser("yoneda", help="a Yoneda representative of a class: its modules' dimensions",
                       description="Resolve MODULE through the class's stem and filtration and build a finite complex "
                                   "of finite modules Y_0 <- ... <- Y_s representing the class n,s,[v]; print "
                                   "`Dimension of {s}th module is {D}` for each (the reference's yoneda lines). The "
                                   "representative depends on the resolution's differentials: the default standard "
                                   "algorithm's are the reference's.")
    _class_args(y, "standard")
    y.add_argument("--json", metavar="FILE", help="also write the dimensions as JSON (layout: docs/products.md)")
    q2 = sub.add_parser("steenrod", help="the algebraic Steenrod squares Sq^j of a class of Ext(S_2)",
                        description="Resolve S_2 over the rectangle through (2s, 2t), build the class's Yoneda "
                                    "representative Y and lift into Y (x) Y: print its dimensions and Sq^j x for "
                                    "j = s, ..., 0 (Sq^s x = x^2), as the reference's steenrod does.")
    _class_args(q2, "standard")
    q2.add_argument("--json", metavar="FILE", help="also write the squares as JSON (layout: docs/products.md)")


def _class_args(p: argparse.ArgumentParser, algorithm: str) -> None:
    """MODULE --class n,s,[v]: the module is resolved as far as the class needs, no region."""
    p.add_argument("module", metavar="MODULE", help="S_2, C2, ... (as for resolve)")
    p.add_argument("--class", dest="cls", required=True, metavar="n,s,[v]", help="the class, e.g. 20,4,[1] (g)")
    p.add_argument("--algorithm", choices=("standard", "nassau"), default=algorithm,
                   help=f"how to resolve (default {algorithm})")
    threads_arg(p, default=1)
    quiet_arg(p)


def run(args: argparse.Namespace) -> int:
    check_request(args, (args.json,), gpu=True)
    for name in (args.module, getattr(args, "target", None)):
        if args.command in P2_ONLY and name is not None and read_spec(name).data.get("p", 2) != 2:
            raise UserError(f"{name} is a module at p = {read_spec(name).data.get('p')}: `{args.command}` is "
                            "implemented at p = 2 only (`product`, `massey` and `map` work at every prime)")
    result = {"product": _product, "map": _map, "massey": _massey, "sq0": _sq0, "yoneda": _yoneda,
              "steenrod": _steenrod}[args.command](args)
    if args.json:
        write_file(args.json, dumps(result))
    return 0


def _class_json(c: ExtClass) -> dict[str, Any]:
    return {"n": c.n, "s": c.s, "vector": list(c.vector)}


def _head(command: str, mod: Resolved) -> dict[str, Any]:
    """What every command's JSON opens with: the command, the module, its algorithm and region."""
    return {"command": command, "module": mod.label, "algorithm": mod.algorithm, "region": _region_json(mod.region)}


def _region_json(region: Region) -> dict[str, Any]:
    return {"max_s": region.max_s, "max_stem": region.max_stem, "max_t": region.max_t}


def _rows_json(name: str, rows: list[Row], shift: tuple[int, int]) -> list[dict[str, Any]]:
    """Each row as {"name", "class": [n, s, j], "image": [n', s'], "vector": v}: the value on x_(n,s,j), in the
    basis at (n', s') = (n, s) + shift."""
    return [{"name": name, "class": [r.n, r.s, r.j], "image": [r.n + shift[0], r.s + shift[1]],
             "vector": list(r.vector)} for r in rows]


# -- product ----------------------------------------------------------------------------------------------------
def _product(args: argparse.Namespace) -> dict[str, Any]:
    named = [parse_named_class(text) for text in args.by]
    unit = _checked_unit(args, named)
    with resolve_module(args) as mod:
        if unit is None:  # the module is the unit: its own resolution is what the products lift into
            unit = mod
            for name, c in named:
                c.check_in(unit.resolution, f"the class {name}")
        alg = ExtAlgebra(mod.resolution, unit.resolution, args.threads)
        found, text = [], []
        with Reporter(None, f"{mod.label}: products by {', '.join(n for n, _ in named)}", args.quiet) as reporter:
            for name, c in named:
                rows = product_rows(alg, c, mod.region)
                text.extend(lines(name, rows))
                found.extend(_rows_json(name, rows, (c.n, c.s)))
        stdout_lines(text)
        reporter.finish(f"{mod.label}: products by {', '.join(n for n, _ in named)} through {mod.region.describe()}")
        return _head("product", mod) | {"by": {name: _class_json(c) for name, c in named}, "rows": found}


def _checked_unit(args: argparse.Namespace, named: list[tuple[str, ExtClass]]) -> Resolved | None:
    """Check the --by classes before the module's resolution, the long part: their entries against the prime, and
    their lengths against the unit's Ext, resolved through the classes alone (a few bidegrees). The unit resolved,
    or None when the module is the unit itself (the module's resolution serves then, and the classes are checked in
    it again)."""
    module = load_module(args.module)
    for name, c in named:
        c.check_entries(module.algebra.prime, f"the class {name}")
    reach = Region.through([(c.n, c.s) for _, c in named], 0)
    unit = resolve_beside(unit_module(module), reach, args.algorithm, args.threads, quiet=True)  # a check: no line
    for name, c in named:
        c.check_in(unit.resolution, f"the class {name}")
    return None if is_unit_module(module) else unit


# -- massey -----------------------------------------------------------------------------------------------------
def _massey(args: argparse.Namespace) -> dict[str, Any]:
    a, b = parse_class(args.a), parse_class(args.b)
    with resolve_module(args) as mod:
        sn, ss = shift_of(a, b)
        reach = [(a.n, a.s), (b.n, b.s), (a.n + b.n, a.s + b.s), (sn, ss)]
        unit = unit_beside(mod, Region.through(reach, 0), args.algorithm, args.quiet)
        alg = ExtAlgebra(mod.resolution, unit.resolution, args.threads)
        with Reporter(None, f"{mod.label}: Massey products <a, b, x>", args.quiet) as reporter:
            brackets = massey_products(alg, a, b, mod.region, args.threads)
        stdout_lines(x.line() for x in brackets)
        reporter.finish(f"{mod.label}: {len(brackets)} brackets <a, b, x> with nonzero offset through "
                        f"{mod.region.describe()}")
        return _head("massey", mod) | {
            "a": _class_json(a), "b": _class_json(b), "shift": [sn, ss],
            "brackets": [{"x": _class_json(x.c), "bidegree": [x.c.n + sn, x.c.s + ss], "offset": list(x.offset),
                          "indeterminacy": [list(r) for r in x.indeterminacy]} for x in brackets]}


# -- Sq^0 --------------------------------------------------------------------------------------------------------
def _sq0(args: argparse.Namespace) -> dict[str, Any]:
    from nassau.products.sq0 import sq0_rows  # here, as in _yoneda and _steenrod: the other commands need none

    with resolve_module(args) as mod:
        if not is_unit_module(mod.module):
            raise UserError(f"sq0 is defined here for the sphere S_2 only, not {mod.label}")
        with Reporter(None, f"{mod.label}: Sq^0", args.quiet) as reporter:
            rows = sq0_rows(mod.resolution, mod.region, args.threads)
        stdout_lines(lines("Sq^0", rows))
        reporter.finish(f"{mod.label}: Sq^0 on {len(rows)} classes through {mod.region.describe()}")
        return _head("sq0", mod) | {"rows": [{"name": "Sq^0", "class": [r.n, r.s, r.j], "image": [2 * r.n + r.s, r.s],
                                              "vector": list(r.vector)} for r in rows]}


# -- Yoneda ------------------------------------------------------------------------------------------------------
def _resolve_for_class(args: argparse.Namespace, region_of) -> tuple[Resolved, ExtClass]:
    """Resolve MODULE through the region the class needs (region_of(class) -> Region keywords), check the class."""
    x = parse_class(args.cls)
    spec = read_spec(args.module)
    module = module_from_spec(spec)
    if x.n < module.min_degree:
        raise ClassError(f"the class ({x}) lies below {spec.display}'s bottom")
    if not x.array.any():
        raise ClassError("the class is zero; give a nonzero class")
    region = Region(min_degree=module.min_degree, **region_of(x))
    mod = resolve_over(module, region, algorithm_over_module(module, args.algorithm), threads=args.threads,
                       spec=spec, quiet=args.quiet)
    x.check_in(mod.resolution, "the class")
    return mod, x


def _yoneda(args: argparse.Namespace) -> dict[str, Any]:
    from nassau.products.yoneda import Yoneda, yoneda_lines

    mod, x = _resolve_for_class(args, lambda c: {"max_s": c.s, "max_stem": c.n})
    with Reporter(None, f"{mod.label}: a Yoneda representative of {x}", args.quiet) as reporter:
        y = Yoneda(mod.resolution, x)
        text = yoneda_lines(y)
    stdout_lines(text)
    reporter.finish(f"{mod.label}: Yoneda representative of {x}")
    return {"command": "yoneda", "module": mod.label, "algorithm": mod.algorithm, "class": _class_json(x),
            "truncation": [y.truncation[s] for s in range(x.s + 1)],
            "dimensions": [y.dimension(s) for s in range(x.s + 1)]}


# -- Steenrod squares ---------------------------------------------------------------------------------------------
def _steenrod(args: argparse.Namespace) -> dict[str, Any]:
    from nassau.products.steenrod import squares, steenrod_lines

    if not is_unit_module(load_module(args.module)):
        raise UserError(f"steenrod is defined here for the sphere S_2 only, not {args.module}")
    mod, x = _resolve_for_class(args, lambda c: {"max_s": 2 * c.s, "max_t": 2 * c.t})
    with Reporter(None, f"{mod.label}: Sq^j of {x}", args.quiet) as reporter:
        y, values = squares(mod.resolution, x)
    stdout_lines(steenrod_lines(x, y, values))
    reporter.finish(f"{mod.label}: Sq^j of {x}")
    return {"command": "steenrod", "module": mod.label, "algorithm": mod.algorithm, "class": _class_json(x),
            "yoneda_dimensions": [y.dimension(s) for s in range(x.s + 1)],
            "squares": [{"j": j, "bidegree": [2 * x.n + x.s - j, x.s + j], "vector": list(v)} for j, v in values]}


# -- map --------------------------------------------------------------------------------------------------------
def _map(args: argparse.Namespace) -> dict[str, Any]:
    with resolve_module(args) as source:
        target_module = load_module(args.target)
        phi = parse_module_map(source.module, target_module, args.degree, args.send, source.region.t_limit)
        phi.check_linear(source.region.t_limit)
        t_region = shifted_region(source.region, 0, -args.degree, target_module.min_degree)
        target = resolve_beside(target_module, t_region, args.algorithm, args.threads, args.quiet)
        with Reporter(None, f"{source.label} -> {target.label}: lifting {args.name}", args.quiet) as reporter:
            f = ChainMap.from_module_map(source.resolution, target.resolution, args.degree, phi.matrix,
                                         source.region, args.name)
            lift([f], args.threads)
            rows = map_rows(f, t_region)
        stdout_lines(lines(args.name, rows))
        reporter.finish(f"{source.label} -> {target.label}: {len(rows)} classes mapped through "
                        f"{source.region.describe()}")
        return {"command": "map", "source": source.label, "target": target.label, "degree": args.degree,
                "name": args.name, "region": _region_json(source.region), "target_region": _region_json(t_region),
                "rows": _rows_json(args.name, rows, (-args.degree, 0))}
