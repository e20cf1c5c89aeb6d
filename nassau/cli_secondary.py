"""The CLI's `secondary` command: the Adams d2 from the secondary Steenrod algebra (REFERENCE-SECONDARY 6).

Resolves MODULE over the region (standard or Nassau; the change of rings is not used, since d2 lives over the
whole algebra), lifts the secondary homotopies and prints the reference's `d_2 x_(n, s, j) = [v]` lines: one per
generator of every nonzero source whose target (n - 1, s + 2) is nonzero and computed, zero lines included.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from algebra.module_loader import load_module
from charts.atomic import write_text_atomic
from charts.json_export import dumps
from nassau import cli_products
from nassau.quasi_inverses import LiftError
from nassau.secondary import SecondaryError, check_secondary, d2_entries, d2_lines, secondary_homotopy

COMMANDS = ("secondary",)
ERRORS = (SecondaryError,)


def add_parsers(sub: argparse._SubParsersAction, computation_args: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser("secondary", help="the Adams d2 differentials (secondary Steenrod algebra, p = 2)",
                       description="Resolve MODULE, lift the secondary resolution and print d_2 x_(n, s, j) = [v] "
                                   "for every class whose target (n - 1, s + 2) is nonzero and in the region, as "
                                   "the reference's secondary does.")
    computation_args(p)
    p.add_argument("--json", metavar="FILE", help="also write the d2 matrices as JSON (see README)")


def run(args: argparse.Namespace) -> int:
    from nassau import cli as base

    if args.threads < 1:
        raise base.UserError(f"--threads must be at least 1 (got {args.threads})")
    base._check_output(args.json)
    base._check_gpu()
    check_secondary(load_module(args.module))
    resolved = cli_products._resolve_named(args.module, args, base, save_dir=args.save_dir)
    try:
        h = secondary_homotopy(resolved.res, resolved.region, resolved.preimages(), args.threads)
    except (SecondaryError, LiftError) as exc:
        raise base.UserError(str(exc)) from None
    base._stdout(d2_lines(h, resolved.region))
    if args.json:
        write_text_atomic(args.json, dumps(_json(resolved, h)))
    return 0


def _json(resolved: Any, h: Any) -> dict[str, Any]:
    region = resolved.region
    return {"module": resolved.label, "algorithm": resolved.algorithm,
            "region": {"max_s": region.max_s, "max_stem": region.max_stem, "max_t": region.max_t},
            "d2": [{"source": [n, s, j], "target": [n - 1, s + 2], "vector": row}
                   for (n, s, j), row in d2_entries(h, region)]}
