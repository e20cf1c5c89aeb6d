"""`nassau modules`: the bundled modules, one line each (name, prime, kind, the algebra they are over, cells or
generators, what each is), read from their files without building any (algebra.module.catalog)."""
from __future__ import annotations

import argparse

from nassau.cli.common import stdout_lines

COMMANDS = ("modules",)
ERRORS = ()


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("modules", help="list the bundled modules (any of them is a MODULE for every command)",
                       description="List every bundled module: its name (what MODULE takes), prime, kind (finite, "
                                   "presented, RP, or the cofiber of a class x_(n,s,idx)), the algebra it is over "
                                   "(A, A(n), or a sub-Hopf algebra its profile names), its cells or generators and "
                                   "relations, and what it is.")
    p.add_argument("--prime", type=int, metavar="P", help="only the modules at p = P")


def run(args: argparse.Namespace) -> int:
    from algebra.module.catalog import bundled, table  # here: no other command reads the catalog

    stdout_lines(table([e for e in bundled() if args.prime is None or e.prime == args.prime]))
    return 0
